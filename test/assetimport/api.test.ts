// POST /api/asset/import/ through HTTP (api.md 4.10 and 7, service.md 4, 5 and 9): what a
// request is refused for (400 with no ImportLog, 406 with one, 401, 403), what a 201 writes,
// re-imports, form data, permissions and territory, and the import tasks list. The pure rules
// of the body are tested in rules.test.ts; here each case goes through app.handle.
//
// One app without a task runner serves most tests, so an asset reads exactly as the request
// left it; a second app with tasks runs the twenty identical requests to their end.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { errorEntry, expectError } from '../helpers/envelope.ts'
import {
  ARCHIVE,
  ARCHIVED_ONLY_VIDEO,
  IMPORT,
  emptyFfmpegDir,
  type Sender,
  allLogs,
  appWithFfmpegDir,
  assetOf,
  assetsAt,
  expectImported,
  importBody,
  importTasksOf,
  logRow,
  logsOf,
  placeClip,
  placeFile,
  removeScratch,
  scratchDir,
} from '../helpers/imports.ts'
import { hasFfmpeg, makeMedia } from '../helpers/media.ts'

const M = '/asset/asset_meta'
const A = '/asset/archive_details'
/** The two spellings of the route: the contract's, and without the final slash. */
const ROUTES = [IMPORT, '/api/asset/import']

let t: TestApp
let send: Sender
let root: string
let device: { id: number; name: string }
let show: { id: number; storage_root: string; codename: string }
let other: { id: number }
let outside: string
const keys: Record<'reader' | 'stranger' | 'alice' | 'bob' | 'carol' | 'otherReader', string> = {} as never

beforeAll(async () => {
  t = testApp(undefined, { tasks: false })
  send = t.request
  ;({ root, device, production: show } = await seedProduction(t))
  other = (await t.post('/api/productions/', { name: 'Other', storage_root: join(root, 'Other') })).json
  const set = await t.post('/api/custommetadatasets/', { name: 'video fields', description: '', content_type: 4 })
  expect(
    (await t.post('/api/custommetadata/', { key: 'video.scene', value: 'Scene', custom_metadata_set: set.json.id }))
      .status,
  ).toBe(200)
  outside = scratchDir('reelhouse-outside-')
  keys.reader = t.makeUser('reader', { read: [show.id] })
  keys.stranger = t.makeUser('stranger')
  keys.alice = t.makeUser('alice', { write: [show.id] })
  keys.bob = t.makeUser('bob', { write: [show.id, other.id] })
  keys.carol = t.makeUser('carol', { write: [show.id], read: [other.id] })
  keys.otherReader = t.makeUser('other-reader', { read: [other.id] })
})

afterAll(() => {
  t.cleanup()
  removeScratch()
})

let n = 0
/** A new existing file on the device, outside every production's folders. */
const fresh = (ext = 'mov') => placeFile(join(root, 'incoming', `f${++n}.${ext}`))

/** Counts of what a refused request must not write: ImportLogs, assets, tasks. */
async function written() {
  const count = async (path: string) => (await send('GET', `${path}?limit=1000`)).json.length as number
  return {
    logs: (await allLogs(send)).length,
    assets: (await count('/api/videoassets/')) + (await count('/api/audioassets/')),
    tasks: await count('/api/tasks/'),
  }
}

/** Posts a body that must be refused (400, 401, 403), and checks that nothing was written. */
async function refused(body: unknown, route = IMPORT, key?: string | null) {
  const before = await written()
  const reply = await send('POST', route, { body, key })
  expect(await written()).toEqual(before)
  return reply
}

/** The entries of a 400 envelope, each whole, in any order: `[code, pointer]`. */
function expectEntries(reply: { status: number; json: any; text: string }, entries: [string, string][]) {
  if (reply.status !== 400) throw new Error(`expected 400, got ${reply.status}: ${reply.text}`)
  const byPointer = (a: any, b: any) => (a.source.pointer < b.source.pointer ? -1 : 1)
  expect([...reply.json.errors].sort(byPointer)).toEqual(
    entries.map(([code, pointer]) => errorEntry(400, code, { pointer })).sort(byPointer),
  )
}

describe('validation: 400 envelope, no ImportLog', () => {
  test.each([
    ['/type', (b: any) => delete b.type],
    ['/production', (b: any) => delete b.production],
    ['/asset', (b: any) => delete b.asset],
    [`${M}`, (b: any) => delete b.asset.asset_meta],
    [`${M}/name`, (b: any) => delete b.asset.asset_meta.name],
    [`${M}/path_file`, (b: any) => delete b.asset.asset_meta.path_file],
  ])('%s missing: 400 required at that pointer, on both spellings of the route', async (pointer, remove) => {
    for (const route of ROUTES) {
      const body = importBody(fresh())
      remove(body)
      expectError(await refused(body, route), 400, 'required', { pointer })
    }
  })

  test('several members missing at once: one required entry each', async () => {
    expectEntries(await refused({ asset: { asset_meta: {} } }), [
      ['required', '/type'],
      ['required', '/production'],
      ['required', `${M}/name`],
      ['required', `${M}/path_file`],
    ])
    expectEntries(await refused({}), [
      ['required', '/type'],
      ['required', '/production'],
      ['required', '/asset'],
    ])
  })

  test('a required member sent as null is missing; an optional one sent as null is absent (201)', async () => {
    expectEntries(await refused(importBody(fresh(), { name: null }, {}, { production: null })), [
      ['required', '/production'],
      ['required', `${M}/name`],
    ])
    const body = importBody(
      fresh(),
      { description: null, date_crt: null, fps: null },
      { keywords: null },
      { asset_destination: null },
    )
    const id = expectImported(await send('POST', IMPORT, { body }), body, 'asset_creation_completed')
    expect((await assetOf(send, id)).description).toBe('')
  })

  test('values outside their lists: 400 invalid at type and at archive_type', async () => {
    expectError(await refused(importBody(fresh(), {}, {}, { type: 'film' })), 400, 'invalid', { pointer: '/type' })
    const archived = importBody(
      fresh(),
      { is_archive: true },
      { archive_details: { ...ARCHIVE, archive_type: 'archive_tape' } },
    )
    expectError(await refused(archived), 400, 'invalid', { pointer: `${A}/archive_type` })
  })

  test('bad formats of date_crt, fps and offset_string: one invalid entry each, all at once', async () => {
    expectError(await refused(importBody(fresh(), { date_crt: '2025-13-45' })), 400, 'invalid', {
      pointer: `${M}/date_crt`,
    })
    expectError(await refused(importBody(fresh(), { fps: 'abc' })), 400, 'invalid', { pointer: `${M}/fps` })
    expectError(await refused(importBody(fresh(), { offset_string: '1:00:00' })), 400, 'invalid', {
      pointer: `${M}/offset_string`,
    })
    expectEntries(await refused(importBody(fresh(), { date_crt: 'yesterday', fps: 'abc', offset_string: 'noon' })), [
      ['invalid', `${M}/date_crt`],
      ['invalid', `${M}/fps`],
      ['invalid', `${M}/offset_string`],
    ])
  })

  test('is_archive true and is_production true (rule 2): archive_handle, archive_type, original_path required', async () => {
    expectEntries(await refused(importBody(fresh(), { is_archive: true })), [
      ['required', `${A}/archive_handle`],
      ['required', `${A}/archive_type`],
      ['required', `${A}/original_path`],
    ])
    const awps = importBody(
      fresh(),
      { is_archive: true },
      { archive_details: { ...ARCHIVE, archive_type: 'archive_awps' } },
    )
    expectError(await refused(awps), 400, 'required', { pointer: `${A}/vendor_archive_index` })
  })

  test('archive only (rule 3): the archive members and duration, fps, height, width of a video required', async () => {
    expectEntries(await refused(importBody(fresh(), { is_archive: true, is_production: false })), [
      ['required', `${M}/duration`],
      ['required', `${M}/fps`],
      ['required', `${M}/height`],
      ['required', `${M}/width`],
      ['required', `${A}/archive_handle`],
      ['required', `${A}/archive_type`],
      ['required', `${A}/original_path`],
    ])
    expectEntries(
      await refused(
        importBody(fresh(), { is_archive: true, is_production: false, fps: '25' }, { archive_details: ARCHIVE }),
      ),
      [
        ['required', `${M}/duration`],
        ['required', `${M}/height`],
        ['required', `${M}/width`],
      ],
    )
  })

  test('a production that does not exist: 400 invalid /production', async () => {
    expectError(await refused(importBody(fresh(), {}, {}, { production: 'No Such Show' })), 400, 'invalid', {
      pointer: '/production',
    })
  })

  test('move_asset with an asset_destination that names no device: 400 invalid /asset_destination', async () => {
    const body = importBody(fresh(), {}, {}, { move_asset: true, asset_destination: 'no-such-disk' })
    expectError(await refused(body), 400, 'invalid', { pointer: '/asset_destination' })
  })

  test('a custom metadata value of more than 64 KiB (UTF-8 bytes): 400 invalid at its pointer; 64 KiB is taken', async () => {
    const store = (value: string) => importBody(fresh(), { meta_field_store: { 'video.scene': value } })
    expect((await send('POST', IMPORT, { body: store('x'.repeat(65_536)) })).status).toBe(201)
    for (const value of ['x'.repeat(65_537), 'é'.repeat(32_769), 'x'.repeat(900_000)])
      expectError(await refused(store(value)), 400, 'invalid', { pointer: `${M}/meta_field_store/video.scene` })
  })

  test('30,000 unknown meta_field_store keys: the first 100 entries and one saying how many more, nothing written', async () => {
    const keys = Array.from({ length: 30_000 }, (_, i) => `k${i}`)
    const reply = await refused(
      importBody(fresh(), { meta_field_store: Object.fromEntries(keys.map((k) => [k, 'x'])) }),
    )
    expect([reply.status, reply.json.errors.length]).toEqual([400, 101])
    expect(reply.json.errors.slice(0, 100)).toEqual(
      keys.slice(0, 100).map((k) => errorEntry(400, 'invalid', { pointer: `${M}/meta_field_store/${k}` })),
    )
    expect(reply.json.errors[100]).toEqual({
      ...errorEntry(400, 'too_many_errors'),
      detail: expect.stringContaining('29,900 more errors'),
    })
  })

  test('meta_field_store with a key that is no field of video assets: 400 invalid at its pointer (escaped)', async () => {
    expectError(
      await refused(importBody(fresh(), { meta_field_store: { 'video.scene': '1', nope: 'x' } })),
      400,
      'invalid',
      { pointer: `${M}/meta_field_store/nope` },
    )
    expectError(await refused(importBody(fresh(), { meta_field_store: { 'a/b~c': 'x' } })), 400, 'invalid', {
      pointer: `${M}/meta_field_store/a~1b~0c`,
    })
  })
})

describe('bad path_file: 406 {type, detail} and one ImportLog holding the detail', () => {
  const cases: [string, () => string][] = [
    ['a relative path', () => 'incoming/clip.mov'],
    ['a path on no device', () => placeFile(join(outside, 'clip.mov'))],
    ['a missing file', () => join(root, 'incoming', 'missing.mov')],
    [
      'a folder',
      () => {
        mkdirSync(join(root, 'incoming', 'folder.mov'), { recursive: true })
        return join(root, 'incoming', 'folder.mov')
      },
    ],
    [
      'a symbolic link to a file',
      () => {
        const target = fresh()
        symlinkSync(target, join(root, 'incoming', 'link.mov'))
        return join(root, 'incoming', 'link.mov')
      },
    ],
    [
      'a file reached through a symbolic link to a folder',
      () => {
        placeFile(join(root, 'real-folder', 'clip.mov'))
        symlinkSync(join(root, 'real-folder'), join(root, 'linked-folder'))
        return join(root, 'linked-folder', 'clip.mov')
      },
    ],
  ]

  test.each(cases)('%s', async (_, make) => {
    const path = make()
    const body = importBody(path)
    const reply = await send('POST', IMPORT, { body })
    expect([reply.status, reply.json]).toEqual([406, { type: 'path_file', detail: expect.stringMatching(/\S/) }])
    const detail = reply.json.detail
    expect(await logsOf(send, path)).toEqual([
      logRow({ asset_path: path, status: detail, error: detail, payload: JSON.stringify(body), asset_import_id: null }),
    ])
    expect(JSON.parse((await logsOf(send, path))[0]!.payload)).toEqual(body)
    expect(await assetsAt(send, path)).toEqual([])
    // The log is the production's: read where the production is read, unseen elsewhere.
    expect((await logsOf(send, path, keys.reader)).map((l) => l.status)).toEqual([detail])
    expect(await logsOf(send, path, keys.otherReader)).toEqual([])
  })

  test('archive only (is_archive true, is_production false): a missing file is taken, 201', async () => {
    const path = join(root, 'incoming', 'on-tape.mov')
    const body = importBody(
      path,
      { is_archive: true, is_production: false, ...ARCHIVED_ONLY_VIDEO },
      { archive_details: ARCHIVE },
    )
    const id = expectImported(await send('POST', IMPORT, { body }), body, 'asset_creation_completed')
    expect(await assetOf(send, id)).toMatchObject({
      path_file: path,
      is_archive: true,
      is_production: false,
      device: device.id,
    })
    expect(await logsOf(send, path)).toEqual([
      logRow({ asset_path: path, status: 'asset_creation_completed', asset_import_id: id }),
    ])
  })

  test('archive only, but on no device: still 406 with its ImportLog', async () => {
    const path = join(outside, 'on-tape.mov')
    const body = importBody(
      path,
      { is_archive: true, is_production: false, ...ARCHIVED_ONLY_VIDEO },
      { archive_details: ARCHIVE },
    )
    const reply = await send('POST', IMPORT, { body })
    expect([reply.status, reply.json]).toEqual([406, { type: 'path_file', detail: expect.stringMatching(/\S/) }])
    expect(await logsOf(send, path)).toEqual([
      logRow({ asset_path: path, status: reply.json.detail, error: reply.json.detail, asset_import_id: null }),
    ])
  })
})

describe('201: the asset and its ImportLog', () => {
  test('the answer has exactly the seven members and its task; the asset shows every member the request gave', async () => {
    const path = fresh()
    const body = importBody(
      path,
      {
        name: 'A012C003',
        description: 'Night exterior, take 3',
        date_crt: '2025-01-14',
        date_del: '2040-06',
        meta_field_store: { 'video.scene': '12A' },
        fps: '25',
        width: 1920,
        height: 1080,
        duration: 100,
        format: 'mov',
        display_aspect_ratio: '16:9',
        offset_string: '01:00:00:00',
        annotation_markers: [{ time: 10, text: 'Boom in shot', user: 'admin' }],
      },
      { keywords: { Location: ['Harbour', 'Night'] } },
    )
    const id = expectImported(await send('POST', IMPORT, { body }), body, 'asset_creation_completed')
    expect(await assetOf(send, id)).toEqual({
      id,
      name: 'A012C003',
      description: 'Night exterior, take 3',
      production: show.id,
      status_asset: 0,
      path_file: path,
      device: device.id,
      is_archive: false,
      is_production: true,
      meta_field_store: { 'video.scene': '12A' },
      date_crt: '2025-01-14T00:00:00.000000Z',
      date_add: expect.any(String),
      date_mod: expect.any(String),
      date_del: '2040-06-01T00:00:00.000000Z',
      keywords: { Location: ['Harbour', 'Night'] },
      technical: {
        fps: '25/1',
        width: 1920,
        height: 1080,
        duration: 100,
        format: 'mov',
        display_aspect_ratio: '16:9',
        offset_frames: 90_000,
        offset_string: '01:00:00:00',
        annotation_markers: [{ time: 10, text: 'Boom in shot', user: 'admin' }],
        // The timecode is the request's: later imports keep it (docs/media.md "Timecode").
        timecode_source: 'request',
      },
      path_proxy: '',
      projects: [],
      status_approval: 0,
      modified_by: 'admin',
      archive_details: {},
      // The task has not run: no proxy yet, so no pictures.
      poster_url: '',
      thumbnail_url: '',
      path_thumbnail: '',
      is_proxy_available: false,
      strip_url: '',
    })
    expect(await logsOf(send, path)).toEqual([
      logRow({
        asset_path: path,
        status: 'asset_creation_completed',
        payload: JSON.stringify(body),
        asset_import_id: id,
      }),
    ])
  })

  test('date_del comes from the hold duration of the production unless the request gives one', async () => {
    await t.post('/api/productions/', { name: 'Held', storage_root: join(root, 'Held') })
    expect(
      (
        await t.post('/api/assetholddurations/', {
          asset_type: 'videoasset',
          context_type: 'production',
          context: 'Held',
          duration: 30,
        })
      ).status,
    ).toBe(201)
    const held = importBody(placeFile(join(root, 'Held', 'a.mov')), {}, {}, { production: 'Held' })
    const asset = await assetOf(
      send,
      expectImported(await send('POST', IMPORT, { body: held }), held, 'asset_creation_completed'),
    )
    expect((Date.parse(asset.date_del) - Date.parse(asset.date_add)) / 86_400_000).toBe(30)
    const given = importBody(
      placeFile(join(root, 'Held', 'b.mov')),
      { date_del: '2031-02-03' },
      {},
      { production: 'Held' },
    )
    const kept = await assetOf(
      send,
      expectImported(await send('POST', IMPORT, { body: given }), given, 'asset_creation_completed'),
    )
    expect(kept.date_del).toBe('2031-02-03T00:00:00.000000Z')
  })

  test('the route without the final slash answers the same', async () => {
    const body = importBody(fresh())
    expectImported(await send('POST', '/api/asset/import', { body }), body, 'asset_creation_completed')
  })
})

describe('re-import', () => {
  test('the same path and kind: asset_update_completed, the same asset, a second ImportLog', async () => {
    const path = fresh()
    const first = importBody(path, { name: 'first' })
    const id = expectImported(await send('POST', IMPORT, { body: first }), first, 'asset_creation_completed')
    const second = importBody(path, { name: 'second' })
    expect(expectImported(await send('POST', IMPORT, { body: second }), second, 'asset_update_completed')).toBe(id)
    expect(await logsOf(send, path)).toEqual([
      logRow({
        asset_path: path,
        status: 'asset_creation_completed',
        payload: JSON.stringify(first),
        asset_import_id: id,
      }),
      logRow({
        asset_path: path,
        status: 'asset_update_completed',
        payload: JSON.stringify(second),
        asset_import_id: id,
      }),
    ])
    expect(await assetsAt(send, path)).toEqual([expect.objectContaining({ id, name: 'second' })])
  })

  test('the same path as another kind: a new asset of that kind', async () => {
    const path = fresh()
    const video = importBody(path)
    const videoId = expectImported(await send('POST', IMPORT, { body: video }), video, 'asset_creation_completed')
    const audio = importBody(path, {}, {}, { type: 'audio' })
    const audioId = expectImported(
      await send('POST', IMPORT, { body: audio }),
      audio,
      'asset_creation_completed',
      'audio',
    )
    expect(await assetsAt(send, path, 'audio')).toEqual([expect.objectContaining({ id: audioId, path_file: path })])
    expect(await assetsAt(send, path, 'video')).toEqual([expect.objectContaining({ id: videoId, path_file: path })])
    expect((await logsOf(send, path)).map((l) => [l.asset_type, l.status, l.asset_import_id])).toEqual([
      ['videoasset', 'asset_creation_completed', videoId],
      ['audioasset', 'asset_creation_completed', audioId],
    ])
  })

  test('the same file spelled another way (// and ./): the same asset; the ImportLog keeps the spelling the request named', async () => {
    const path = fresh()
    const first = importBody(path)
    const id = expectImported(await send('POST', IMPORT, { body: first }), first, 'asset_creation_completed')
    const spelled = path.replace(/\/([^/]+)$/, '//./$1')
    const second = importBody(spelled)
    expect(expectImported(await send('POST', IMPORT, { body: second }), second, 'asset_update_completed')).toBe(id)
    expect(await logsOf(send, spelled)).toEqual([
      logRow({ asset_path: spelled, status: 'asset_update_completed', asset_import_id: id }),
    ])
    expect(await assetsAt(send, path)).toEqual([expect.objectContaining({ id, path_file: path })])
  })

  test('asset_destination without move_asset is ignored, even naming no device: 201, the file stays', async () => {
    const path = fresh()
    const body = importBody(path, {}, {}, { asset_destination: 'no-such-disk' })
    const id = expectImported(await send('POST', IMPORT, { body }), body, 'asset_creation_completed')
    expect(await logsOf(send, path)).toEqual([
      logRow({
        asset_path: path,
        status: 'asset_creation_completed',
        asset_import_id: id,
        asset_config: { move_asset: false, rewrap_proxy: false },
      }),
    ])
  })
})

describe('form data', () => {
  const asset = (path: string) => ({
    asset_meta: { name: 'from a form', path_file: path, is_archive: false },
    keywords: { Form: ['yes'] },
  })

  test('urlencoded, asset as JSON text, booleans as true and 1: 201 as for JSON', async () => {
    const path = fresh()
    const reply = await send('POST', IMPORT, {
      form: { type: 'video', production: 'Show', rewrap_proxy: 'true', move_asset: '1', asset: asset(path) },
    })
    expect(reply.status).toBe(201)
    expect(reply.json).toEqual({
      asset_path: path,
      status: 'asset_creation_completed',
      warning: {},
      error: '',
      asset_import_id: expect.any(Number),
      payload: expect.any(String),
      asset_type: 'videoasset',
      task: { id: expect.any(Number), state: 'queued', url: `/api/tasks/${reply.json.task.id}/` },
    })
    expect(await assetOf(send, reply.json.asset_import_id)).toMatchObject({
      name: 'from a form',
      path_file: path,
      keywords: { Form: ['yes'] },
    })
    expect(await logsOf(send, path)).toEqual([
      logRow({
        asset_path: path,
        status: 'asset_creation_completed',
        asset_import_id: reply.json.asset_import_id,
        asset_config: { move_asset: true, rewrap_proxy: true, asset_destination: device.name },
      }),
    ])
  })

  test('multipart, booleans as false and 0: 201 as for JSON', async () => {
    const path = fresh()
    const form = new FormData()
    for (const [k, v] of Object.entries({
      type: 'video',
      production: 'Show',
      rewrap_proxy: 'false',
      move_asset: '0',
      asset: JSON.stringify(asset(path)),
    }))
      form.append(k, v)
    const reply = await send('POST', '/api/asset/import', { raw: form })
    expect(reply.status).toBe(201)
    expect(reply.json).toMatchObject({ asset_path: path, status: 'asset_creation_completed', asset_type: 'videoasset' })
    expect(await assetOf(send, reply.json.asset_import_id)).toMatchObject({
      name: 'from a form',
      path_file: path,
      keywords: { Form: ['yes'] },
    })
    expect((await logsOf(send, path))[0]!.asset_config).toEqual({ move_asset: false, rewrap_proxy: false })
  })

  test('a form boolean that is not true/false/1/0, or asset that is not JSON: 400 invalid, no ImportLog', async () => {
    const before = await written()
    const yes = await send('POST', IMPORT, {
      form: { type: 'video', production: 'Show', move_asset: 'yes', asset: asset(fresh()) },
    })
    expectError(yes, 400, 'invalid', { pointer: '/move_asset' })
    const notJson = await send('POST', IMPORT, {
      form: { type: 'video', production: 'Show', asset: '{"asset_meta": ' },
    })
    expect([notJson.status, notJson.json.errors[0].code]).toEqual([400, 'invalid'])
    expect(await written()).toEqual(before)
  })
})

describe('permissions and territory (service.md 5)', () => {
  test('no Authorization header: 401 not_authenticated', async () => {
    const reply = await refused(importBody(fresh()), IMPORT, null)
    expectError(reply, 401, 'not_authenticated')
  })

  test('read access to the production only: 403 permission_denied, nothing written', async () => {
    expectError(await refused(importBody(fresh()), IMPORT, keys.reader), 403, 'permission_denied')
  })

  test('no access to the production: 400 invalid /production, as if it did not exist', async () => {
    expectError(await refused(importBody(fresh()), IMPORT, keys.stranger), 400, 'invalid', { pointer: '/production' })
  })

  test("a file inside another production's storage_root, by a user who can write only their own: 403, nothing written", async () => {
    const path = placeFile(join(root, 'Other', 'theirs.mov'))
    const before = await written()
    expectError(await send('POST', IMPORT, { body: importBody(path), key: keys.alice }), 403, 'permission_denied')
    expect(await written()).toEqual(before)
    expect(await assetsAt(send, path)).toEqual([])
    expect(await logsOf(send, path)).toEqual([])
  })

  test("path_proxy passes the gate of path_file: off the devices 400 at its pointer; in another production's folders 403; nothing written", async () => {
    const outsideProxy = placeFile(join(scratchDir('reelhouse-off-device-'), 'secret.mp4'))
    expectError(await refused(importBody(fresh(), { path_proxy: outsideProxy }), IMPORT, keys.alice), 400, 'invalid', {
      pointer: '/asset/asset_meta/path_proxy',
    })
    const theirProxy = placeFile(join(root, 'Other', 'their-proxy.mp4'))
    expectError(
      await refused(importBody(fresh(), { path_proxy: theirProxy }), IMPORT, keys.alice),
      403,
      'permission_denied',
    )
  })

  test("whether a file exists in another production's folders is not told: missing or there, 403 alike, no ImportLog", async () => {
    const there = placeFile(join(root, 'Other', 'exists.mov'))
    const missing = join(root, 'Other', 'missing.mov')
    for (const path of [there, missing]) {
      expectError(await refused(importBody(path), IMPORT, keys.alice), 403, 'permission_denied')
      expect(await logsOf(send, path)).toEqual([])
    }
  })

  test('the same file by a user who can write both productions: 201', async () => {
    const path = placeFile(join(root, 'Other', 'shared.mov'))
    const body = importBody(path)
    const id = expectImported(await send('POST', IMPORT, { body, key: keys.bob }), body, 'asset_creation_completed')
    expect(await assetsAt(send, path)).toEqual([expect.objectContaining({ id, production: show.id })])
  })

  test('a re-import naming another production for a path catalogued in the first: 400 invalid /production', async () => {
    const path = fresh()
    const body = importBody(path)
    const id = expectImported(await send('POST', IMPORT, { body }), body, 'asset_creation_completed')
    expectError(await refused(importBody(path, {}, {}, { production: 'Other' })), 400, 'invalid', {
      pointer: '/production',
    })
    expect(await assetsAt(send, path)).toEqual([expect.objectContaining({ id, production: show.id })])
    expect(await logsOf(send, path)).toHaveLength(1)
  })
  test("a path spelled through '..' from the own storage root into another production's: still 403", async () => {
    placeFile(join(root, 'Other', 'dots.mov'))
    const path = `${root}/Show/../Other/dots.mov`
    expectError(await refused(importBody(path), IMPORT, keys.alice), 403, 'permission_denied')
    expect(await logsOf(send, path)).toEqual([])
  })

  test("move_asset into DEVICE/<codename>/video/ inside another production's storage_root: 403 for a user who cannot write there", async () => {
    const vault = scratchDir('reelhouse-vault-')
    expect((await send('POST', '/api/devices/', { body: { name: 'vault', path: vault } })).status).toBe(201)
    expect(
      (await send('POST', '/api/productions/', { body: { name: 'Keeper', storage_root: join(vault, 'show') } })).status,
    ).toBe(201)
    const path = fresh()
    expectError(
      await refused(importBody(path, {}, {}, { move_asset: true, asset_destination: 'vault' }), IMPORT, keys.alice),
      403,
      'permission_denied',
    )
    expect(await logsOf(send, path)).toEqual([])
  })

  test("move_asset onto the device holding the production's storage_root, by a user who can write only that production: 201 (the move goes into the own storage_root, not DEVICE/<codename>/, here another production's)", async () => {
    // DEVICE/<codename>/ is the storage_root of a production alice cannot write: the folder a move
    // put files in before (issue 20, point 4) would be refused; storage_root/video/ is hers.
    const beside = await send('POST', '/api/productions/', {
      body: { name: 'Beside', storage_root: join(root, show.codename) },
    })
    expect(beside.status).toBe(201)
    try {
      const r = await send('POST', IMPORT, { body: importBody(fresh(), {}, {}, { move_asset: true }), key: keys.alice })
      expect(r.status).toBe(201)
      // Onto another device the folder is still DEVICE/<codename>/: inside Keeper's storage_root on vault, 403 (the test above).
    } finally {
      expect((await send('DELETE', `/api/productions/${beside.json.id}/`)).status).toBeLessThan(300)
    }
  })

  test('a bad path_file from a user who may not import into the production: their refusal (403, 400), no ImportLog', async () => {
    expectError(await refused(importBody('relative/clip.mov'), IMPORT, keys.reader), 403, 'permission_denied')
    expectError(
      await refused(importBody(join(root, 'incoming', 'absent.mov')), IMPORT, keys.stranger),
      400,
      'invalid',
      { pointer: '/production' },
    )
    expect(await logsOf(send, 'relative/clip.mov')).toEqual([])
  })
})

describe("another production's file, whatever the kind (issue 25)", () => {
  /** A file outside every production's folders (a shared upload device), catalogued by Other as a video. */
  async function othersFile() {
    const path = placeFile(join(root, 'incoming', `shared-${++n}.mov`))
    const made = await send('POST', '/api/videoassets/', {
      body: { name: 'theirs', path_file: path, production: other.id },
    })
    expect(made.status).toBe(201)
    return { path, asset: made.json }
  }
  /** Other's asset as it was: in production, at the path, the file there. */
  async function untouched(theirs: { path: string; asset: any }) {
    expect(existsSync(theirs.path)).toBe(true)
    expect(await assetOf(send, theirs.asset.id)).toMatchObject({
      path_file: theirs.path,
      is_production: true,
      production: other.id,
    })
  }

  test("a user who cannot read it: 403, the same answer as for a file in that production's folders; any kind, moved or not; nothing written", async () => {
    const theirs = await othersFile()
    // What a file the user simply may not import answers: one inside Other's storage root.
    const territory = await refused(importBody(placeFile(join(root, 'Other', `plain-${++n}.mov`))), IMPORT, keys.alice)
    expectError(territory, 403, 'permission_denied')
    for (const top of [
      { type: 'audio', move_asset: true },
      { type: 'image' },
      { type: 'video' },
      { type: 'video', move_asset: true },
    ]) {
      const reply = await refused(importBody(theirs.path, {}, {}, top), IMPORT, keys.alice)
      expect([reply.status, reply.json]).toEqual([territory.status, territory.json])
    }
    expect(await logsOf(send, theirs.path)).toEqual([])
    expect(await assetsAt(send, theirs.path, 'audio')).toEqual([])
    await untouched(theirs)
  })

  test('a user who can read it but not write it: 403 naming the production; nothing written', async () => {
    const theirs = await othersFile()
    const reply = await refused(
      importBody(theirs.path, {}, {}, { type: 'audio', move_asset: true }),
      IMPORT,
      keys.carol,
    )
    expectError(reply, 403, 'permission_denied')
    expect(reply.json.errors[0].detail).toContain(`production ${other.id}`)
    await untouched(theirs)
  })

  test('a user who may write both, and a superuser: never moved (400 invalid at /move_asset, nothing written); without move_asset, 201', async () => {
    const theirs = await othersFile()
    for (const key of [keys.bob, undefined])
      expectError(
        await refused(importBody(theirs.path, {}, {}, { type: 'audio', move_asset: true }), IMPORT, key),
        400,
        'invalid',
        { pointer: '/move_asset' },
      )
    await untouched(theirs)
    const body = importBody(theirs.path, {}, {}, { type: 'audio' })
    const id = expectImported(
      await send('POST', IMPORT, { body, key: keys.bob }),
      body,
      'asset_creation_completed',
      'audio',
    )
    expect(await assetsAt(send, theirs.path, 'audio')).toEqual([expect.objectContaining({ id, production: show.id })])
    await untouched(theirs)
  })

  test('an asset of Other that is offline still names the path: the same 403', async () => {
    const theirs = await othersFile()
    t.db.$client.run('UPDATE media_assets SET is_production = 0 WHERE id = ?', [theirs.asset.id])
    expectError(
      await refused(importBody(theirs.path, {}, {}, { type: 'audio', move_asset: true }), IMPORT, keys.alice),
      403,
      'permission_denied',
    )
  })
})

describe("the service's own output is never input: 406 and its ImportLog, nothing catalogued", () => {
  /** Posts an import of `path` with move_asset that must be refused with 406; returns the detail. */
  async function refusedPath(path: string, key?: string) {
    const tasks = (await send('GET', '/api/tasks/?limit=1000')).json.length
    const body = importBody(path, {}, {}, { move_asset: true })
    const reply = await send('POST', IMPORT, { body, key })
    expect([reply.status, reply.json]).toEqual([406, { type: 'path_file', detail: expect.stringMatching(/\S/) }])
    expect(await logsOf(send, path)).toEqual([
      logRow({
        asset_path: path,
        status: reply.json.detail,
        error: reply.json.detail,
        payload: JSON.stringify(body),
        asset_import_id: null,
      }),
    ])
    expect(await assetsAt(send, path)).toEqual([])
    expect((await send('GET', '/api/tasks/?limit=1000')).json.length).toBe(tasks)
    expect(existsSync(path)).toBe(true)
    return reply.json.detail as string
  }

  test("a file in a production's proxy_root (another asset's proxy): refused, the proxy stays its asset's", async () => {
    const proxy = placeFile(join(root, 'Show', 'proxies', `${++n}.mp4`))
    const clip = importBody(fresh(), { path_proxy: proxy })
    const id = expectImported(await send('POST', IMPORT, { body: clip }), clip, 'asset_creation_completed')
    expect(await refusedPath(proxy)).toContain('proxy_root')
    expect((await assetOf(send, id)).path_proxy).toBe(proxy)
    // Also in another production's proxy_root, by a user who may write there.
    expect(await refusedPath(placeFile(join(root, 'Other', 'proxies', `${++n}.mp4`)), keys.bob)).toContain('proxy_root')
  })

  test("an asset's path_proxy outside every proxy_root: refused", async () => {
    const preview = placeFile(join(root, 'incoming', `preview-${++n}.mp4`))
    const clip = importBody(fresh(), { path_proxy: preview })
    expectImported(await send('POST', IMPORT, { body: clip }), clip, 'asset_creation_completed')
    expect(await refusedPath(preview)).toContain('path_proxy')
  })

  test('the temporary names of the service (.reelhouse-*): refused', async () => {
    await refusedPath(placeFile(join(root, 'incoming', '.reelhouse-proxy-0a1b2c.mp4')))
    await refusedPath(placeFile(join(root, 'incoming', '.reelhouse-move-0123456789abcdef')))
    await refusedPath(placeFile(join(root, 'incoming', '.reelhouse-copy-7', 'clip.mov')))
  })
})

describe('GET /api/tasks/?kind=import', () => {
  test('lists the import task of an asset; readable where its production is', async () => {
    const path = fresh()
    const body = importBody(path)
    const id = expectImported(await send('POST', IMPORT, { body }), body, 'asset_creation_completed')
    const expected = {
      id: expect.any(Number),
      kind: 'import',
      state: 'queued',
      target: { videoasset: id },
      step: '',
      percent: null,
      bytes_done: 0,
      bytes_total: 0,
      files_done: 0,
      files_total: 0,
      error: '',
      date_add: expect.any(String),
      date_start: null,
      date_end: null,
      result: {},
    }
    const [task] = await importTasksOf(send, id)
    expect(task).toEqual(expected)
    const readerTasks = await send('GET', '/api/tasks/?kind=import', { key: keys.reader })
    expect(readerTasks.json.filter((x: any) => x.id === task!.id)).toEqual([expected])
    expect((await send('GET', `/api/tasks/${task!.id}/`, { key: keys.reader })).json).toEqual(expected)
    const otherTasks = await send('GET', '/api/tasks/?kind=import', { key: keys.otherReader })
    expect([otherTasks.status, otherTasks.json]).toEqual([200, []])
    expectError(await send('GET', `/api/tasks/${task!.id}/`, { key: keys.otherReader }), 404, 'not_found')
  })

  test('kind=import lists only import tasks; another kind is 400 invalid', async () => {
    const all = await send('GET', '/api/tasks/?kind=import')
    expect(all.json.length).toBeGreaterThan(0)
    expect(new Set(all.json.map((x: any) => x.kind))).toEqual(new Set(['import']))
    expectError(await send('GET', '/api/tasks/?kind=ingest'), 400, 'invalid', { parameter: 'kind' })
  })
})

describe('twenty identical requests at once (tasks running)', () => {
  let base: TestApp
  let tt: ReturnType<typeof appWithFfmpegDir>
  let disk: string
  beforeAll(async () => {
    base = testApp(undefined, { tasks: false })
    disk = (await seedProduction(base)).root
    // Real ffmpeg where there is one; without it the import completes with warnings.
    tt = appWithFfmpegDir(base, hasFfmpeg ? undefined : emptyFfmpegDir())
  })
  afterAll(async () => {
    await tt.stop()
    base.cleanup()
  })

  test('one asset, twenty ImportLogs (1 created, 19 updated), all import_completed; one import task, or two if the first had begun', async () => {
    const media = await makeMedia(scratchDir('reelhouse-media-'), ['video'])
    const path = placeClip(media.video, join(disk, 'incoming', 'same.mov'))
    const body = importBody(path)
    const replies = await Promise.all(Array.from({ length: 20 }, () => tt.post(IMPORT, body)))
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(201))
    const ids = new Set(replies.map((r) => r.json.asset_import_id))
    expect(ids.size).toBe(1)
    const [id] = [...ids] as number[]
    expect(replies.map((r) => r.json.status).sort()).toEqual([
      'asset_creation_completed',
      ...Array(19).fill('asset_update_completed'),
    ])
    expect(await assetsAt(tt.request, path)).toEqual([expect.objectContaining({ id, path_file: path })])

    await tt.runner.idle()
    const warning = hasFfmpeg ? {} : { probe: expect.any(String), proxy: expect.any(String) }
    expect(await logsOf(tt.request, path)).toEqual(
      Array(20).fill(logRow({ asset_path: path, status: 'import_completed', asset_import_id: id!, warning })),
    )
    const tasks = await importTasksOf(tt.request, id!)
    expect(tasks.map((x) => x.state)).toEqual(tasks.length === 1 ? ['done'] : ['done', 'done'])
    expect((await assetOf(tt.request, id!)).status_asset).toBe(6)
  })
})

describe("the service's own data folder on a device", () => {
  test('importing the catalogue file with move_asset is refused with 406 and its ImportLog; nothing is catalogued or moved', async () => {
    const parent = scratchDir('reelhouse-data-parent-')
    const data = join(parent, 'data')
    mkdirSync(data)
    const d = testApp(data, { tasks: false })
    try {
      expect((await d.post('/api/devices/', { name: 'whole-disk', path: parent })).status).toBe(201)
      expect((await d.post('/api/productions/', { name: 'Show', storage_root: join(parent, 'Show') })).status).toBe(201)
      const catalogue = join(data, 'reelhouse.db')
      const reply = await d.post(IMPORT, importBody(catalogue, {}, {}, { move_asset: true }))
      expect([reply.status, reply.json]).toEqual([
        406,
        { type: 'path_file', detail: expect.stringContaining('data folder') },
      ])
      expect(await logsOf(d.request, catalogue)).toEqual([
        logRow({ asset_path: catalogue, status: reply.json.detail, error: reply.json.detail, asset_import_id: null }),
      ])
      expect(existsSync(catalogue)).toBe(true)
      expect(await assetsAt(d.request, catalogue)).toEqual([])
      expect((await d.get('/api/tasks/?kind=import')).json).toEqual([])
    } finally {
      await d.runner.stop()
      d.cleanup()
    }
  })
})
