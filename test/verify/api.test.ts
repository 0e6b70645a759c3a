// POST /api/{kind}assets/{id}/verify/ (docs/api.md, Media assets and Project assets, "Verifying the
// files") on real folders, tasks run by the runner as in the service: a project copy (whose
// ascmhl/ history the copy wrote) verified as it is, then with a byte flipped, a file removed and
// one added; media assets checked against a card's history, an archive's, and the hash they keep
// in technical.hashes.xxh64; the permissions of the request and of the task's start; the route
// in the OpenAPI document. Expected hashes are Bun's own xxHash64 of each file read whole.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { system } from '../../src/modules/history/service.ts'
import { newGeneration } from '../../src/storage/mhl.ts'
import { type TestApp, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { errorEntry, expectError } from '../helpers/envelope.ts'
import { makeTree } from '../helpers/tree.ts'

type Json = Record<string, any>

let t: TestApp
let root: string
let production: { id: number }

beforeAll(async () => {
  t = testApp(undefined, { tasks: true })
  ;({ root, production } = await seedProduction(t))
})
afterAll(async () => {
  await t.stop()
  rmSync(t.dataDir, { recursive: true, force: true })
})

const folder = (...names: string[]) => join(root, 'Show', ...names)
/** xxHash64 (seed 0) of a whole file, as 16 lowercase hex digits: what ASC MHL records. */
const xxh64 = (path: string) => Bun.hash.xxHash64(readFileSync(path), 0n).toString(16).padStart(16, '0')

/** Changes one byte of the file at `at` (its length stays). */
function flipByte(path: string, at: number) {
  const bytes = readFileSync(path)
  bytes[at] = bytes[at]! ^ 0xff
  writeFileSync(path, bytes)
}

/** Asks for a verification and waits for its task: the answer and the task as GET /api/tasks/{id}/ shows it. */
async function verify(asset: string, key?: string) {
  const answer = await t.post(`${asset}verify/`, undefined, { key })
  if (answer.status !== 202) throw new Error(`verify: ${answer.status} ${answer.text}`)
  await t.runner.idle()
  return { answer, task: (await t.get(answer.json.task.url)).json as Json }
}

/** A video asset registered on `path` (written with `bytes` first), without the import pipeline. */
async function videoAt(path: string, bytes: string | Uint8Array) {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, bytes)
  const r = await t.post('/api/videoassets/', {
    name: path.split('/').at(-1),
    path_file: path,
    production: production.id,
  })
  if (r.status !== 201) throw new Error(r.text)
  return r.json.id as number
}

describe('a project copy, checked against the history the copy wrote', () => {
  let copy: Json
  const files = {
    'Cut.prproj': 'project file',
    'Media/A001C003.mov': 70_000,
    'Media/Cam B/ünïcødé 🎬.wav': 12_345,
    'Media/B001C001.mov': 5_000,
    'Media/.DS_Store': 'finder state',
  }

  beforeAll(async () => {
    makeTree(folder('Cut'), files)
    const source = await t.post('/api/projectassets/', {
      name: 'Cut',
      bundle_root: folder('Cut'),
      production_id: production.id,
      path_file: folder('Cut', 'Cut.prproj'),
    })
    expect(source.status).toBe(201)
    const r = await t.post('/api/projectassets/', {
      name: 'Cut-v2',
      bundle_root: folder('Cut-v2'),
      production_id: production.id,
      copy_of: source.json.id,
    })
    expect(r.status).toBe(201)
    await t.runner.idle()
    copy = (await t.get(`/api/projectassets/${r.json.id}/`)).json
    expect(copy.status_asset).toBe(6)
  })

  test("as copied: 202 with the task (Location), which ends done with every recorded file verified and the project file's hash", async () => {
    const { answer, task } = await verify(`/api/projectassets/${copy.id}/`)
    expect(answer.json).toEqual({
      task: { id: expect.any(Number), state: 'queued', url: `/api/tasks/${answer.json.task.id}/` },
    })
    expect(answer.headers.get('location')).toBe(answer.json.task.url)
    expect({ kind: task.kind, state: task.state, error: task.error, target: task.target, result: task.result }).toEqual(
      {
        kind: 'verify',
        state: 'done',
        error: '',
        target: { projectasset: copy.id },
        result: {
          verified: 4,
          failed: [],
          missing: [],
          new: [],
          history: join(folder('Cut-v2'), 'ascmhl'),
          xxh64: xxh64(folder('Cut-v2', 'Cut.prproj')),
        },
      },
    )
    expect(task.files_total).toBe(4)
    expect(task.files_done).toBe(4)
  })

  test('a byte flipped after the copy: failed, naming the file with the recorded and the found hash', async () => {
    const file = folder('Cut-v2', 'Media', 'A001C003.mov')
    const recorded = xxh64(file)
    flipByte(file, 12_345)
    const { task } = await verify(`/api/projectassets/${copy.id}/`)
    expect(task.state).toBe('done')
    expect(task.result).toMatchObject({
      verified: 3,
      failed: [{ path: 'Media/A001C003.mov', recorded, found: xxh64(file) }],
      missing: [],
      new: [],
    })
    expect(recorded).toBe(xxh64(folder('Cut', 'Media', 'A001C003.mov')))
    expect(xxh64(file)).not.toBe(recorded)
  })

  test('a file removed is missing, a file added is new (a .DS_Store is neither)', async () => {
    unlinkSync(folder('Cut-v2', 'Media', 'B001C001.mov'))
    writeFileSync(folder('Cut-v2', 'notes.txt'), 'added after the copy')
    writeFileSync(folder('Cut-v2', '.DS_Store'), 'finder state')
    const { task } = await verify(`/api/projectassets/${copy.id}/`)
    expect(task.result).toMatchObject({
      verified: 2,
      failed: [{ path: 'Media/A001C003.mov' }],
      missing: ['Media/B001C001.mov'],
      new: ['notes.txt'],
    })
  })

  test('a project whose folder has no history anywhere above it: the task fails saying so', async () => {
    makeTree(folder('Plain'), { 'edit.prproj': 'project' })
    const r = await t.post('/api/projectassets/', {
      name: 'Plain',
      bundle_root: folder('Plain'),
      production_id: production.id,
    })
    const { task } = await verify(`/api/projectassets/${r.json.id}/`)
    expect({ state: task.state, error: task.error }).toEqual({
      state: 'failed',
      error: expect.stringContaining('no ASC MHL history at'),
    })
  })

  test('permissions: read access is not enough (403 naming the codename, then write access); unreadable or unknown is 404', async () => {
    const reader = t.makeUser('reader', { read: [production.id] })
    const changer = t.makeUser('changer', { perms: ['browser.change_projectasset'], read: [production.id] })
    const stranger = t.makeUser('stranger', { perms: ['browser.change_projectasset'] })
    const path = `/api/projectassets/${copy.id}/verify/`
    const refused = await t.post(path, undefined, { key: reader })
    expectError(refused, 403, 'permission_denied')
    expect(refused.json.errors[0].detail).toContain('browser.change_projectasset')
    const readOnly = await t.post(path, undefined, { key: changer })
    expectError(readOnly, 403, 'permission_denied')
    expect(readOnly.json.errors[0].detail).toContain(`write access to production ${production.id}`)
    expectError(await t.post(path, undefined, { key: stranger }), 404, 'not_found')
    expectError(await t.post('/api/projectassets/999999/verify/', undefined), 404, 'not_found')
    // An id that cannot be one names no record (docs/api.md, Ids, timestamps, methods).
    expect((await t.post('/api/projectassets/abc/verify/', undefined)).status).toBe(404)
  })
})

describe('media assets', () => {
  test('a file on a card with its own history: verified against it, and the asset keeps the hash it did not keep yet', async () => {
    const card = folder('cards', 'A001')
    const path = join(card, 'CLIP', 'A001C001.mov')
    const id = await videoAt(path, 'camera bytes '.repeat(5000))
    makeTree(card, { 'CLIP/A001C002.mov': 'another clip' })
    const h = xxh64(path)
    newGeneration(
      card,
      ['CLIP/A001C001.mov', 'CLIP/A001C002.mov'].map((rel) => ({
        path: rel,
        size: readFileSync(join(card, rel)).length,
        lastModified: new Date(),
        xxh64: xxh64(join(card, rel)),
      })),
      { process: 'in-place' },
    )
    const { task } = await verify(`/api/videoassets/${id}/`)
    expect({ state: task.state, target: task.target, result: task.result }).toEqual({
      state: 'done',
      target: { videoasset: id },
      result: {
        verified: 1,
        failed: [],
        missing: [],
        new: [],
        history: join(card, 'ascmhl'),
        checked: [{ path, against: join(card, 'ascmhl') }],
        xxh64: h,
        kept: true,
      },
    })
    const asset = (await t.get(`/api/videoassets/${id}/`)).json
    expect(asset.technical.hashes).toEqual({ xxh64: h })
    expect(asset.modified_by).toBe('admin')

    // Damaged later: failed against the history; what it keeps is not replaced by the damage.
    flipByte(path, 10)
    const again = await verify(`/api/videoassets/${id}/`)
    expect(again.task.result).toMatchObject({ verified: 0, failed: [{ path, recorded: h, found: xxh64(path) }] })
    expect(again.task.result.kept).toBeUndefined()
    expect((await t.get(`/api/videoassets/${id}/`)).json.technical.hashes).toEqual({ xxh64: h })
  })

  test('a file no history records: checked against technical.hashes.xxh64 (as a move keeps it)', async () => {
    const path = folder('day2', 'B002C004.mov')
    const id = await videoAt(path, 'moved bytes '.repeat(3000))
    const h = xxh64(path)
    t.core.port.run(t.core.media.setTechnical(id, { codec: 'prores', hashes: { xxh64: h } }, system('task')))
    const ok = await verify(`/api/videoassets/${id}/`)
    expect(ok.task.result).toEqual({
      verified: 1,
      failed: [],
      missing: [],
      new: [],
      history: null,
      checked: [{ path, against: 'technical.hashes.xxh64' }],
      xxh64: h,
    })
    flipByte(path, 0)
    const bad = await verify(`/api/videoassets/${id}/`)
    expect(bad.task.result).toMatchObject({ verified: 0, failed: [{ path, recorded: h, found: xxh64(path) }] })
    unlinkSync(path)
    const gone = await verify(`/api/videoassets/${id}/`)
    expect(gone.task.result).toMatchObject({ verified: 0, failed: [], missing: [path], xxh64: null })
  })

  test('a file with neither a history nor a kept hash: the task fails saying there is nothing to verify against', async () => {
    const id = await videoAt(folder('day3', 'C003.mov'), 'no record of me')
    const { task } = await verify(`/api/videoassets/${id}/`)
    expect({ state: task.state, error: task.error }).toEqual({
      state: 'failed',
      error: expect.stringContaining('nothing to verify against'),
    })
    expect((await t.get(`/api/videoassets/${id}/`)).json.technical.hashes).toBeUndefined()
  })

  test('an archived, purged asset: its archive copy checked against the archive history', async () => {
    const archive = tempDir('reelhouse-vault-')
    t.owned.push(archive)
    expect((await t.post('/api/devices/', { name: 'vault', path: archive, is_archive: true })).status).toBe(201)
    const path = folder('day4', 'D004.mov')
    const id = await videoAt(path, 'to the vault '.repeat(2000))
    const h = xxh64(path)
    const types = (await t.get('/api/contenttypes/')).json as { id: number; name: string }[]
    const queued = await t.post('/api/archiveactivities/', [
      {
        content_type_id: types.find((c) => c.name === 'videoasset')!.id,
        asset_id: id,
        archive_type: 'archive_std',
        archive_connector: 'vault',
        purge: true,
      },
    ])
    expect(queued.status).toBe(202)
    await t.runner.idle()
    const asset = (await t.get(`/api/videoassets/${id}/`)).json
    expect({ is_production: asset.is_production, is_archive: asset.is_archive }).toEqual({
      is_production: false,
      is_archive: true,
    })
    const { codename } = (await t.get(`/api/productions/${production.id}/`)).json
    const { task } = await verify(`/api/videoassets/${id}/`)
    const history = join(archive, codename, 'ascmhl')
    expect(task.result).toMatchObject({
      verified: 1,
      failed: [],
      missing: [],
      history,
      checked: [{ path: expect.stringContaining(join(archive, codename)), against: history }],
      xxh64: h,
    })
  })

  test('permissions of a media asset: the change codename of its kind and write access; another kind or an unknown id is 404', async () => {
    const id = await videoAt(folder('day5', 'E005.mov'), 'bytes')
    const editor = t.makeUser('audio-editor', { perms: ['browser.change_audioasset'], write: [production.id] })
    const refused = await t.post(`/api/videoassets/${id}/verify/`, undefined, { key: editor })
    expectError(refused, 403, 'permission_denied')
    expect(refused.json.errors[0].detail).toContain('browser.change_videoasset')
    expect((await t.post(`/api/audioassets/${id}/verify/`, undefined)).json).toEqual({
      errors: [errorEntry(404, 'not_found')],
    })
    expectError(await t.post('/api/imageassets/999999/verify/', undefined), 404, 'not_found')
  })

  test('an asset offline and not archived has nothing to read: 409', async () => {
    const r = await t.post('/api/videoassets/', {
      name: 'F006.mov',
      path_file: folder('day6', 'F006.mov'),
      production: production.id,
      is_production: false,
    })
    expect(r.status).toBe(201)
    expectError(await t.post(`/api/videoassets/${r.json.id}/verify/`, undefined), 409, 'conflict')
  })
})

test('the task checks the permissions again when it starts: a user who lost the codename meanwhile', async () => {
  const paused = testApp(undefined, { tasks: false })
  try {
    const seeded = await seedProduction(paused)
    const path = join(seeded.root, 'Show', 'x', 'G007.mov')
    mkdirSync(join(path, '..'), { recursive: true })
    writeFileSync(path, 'bytes')
    const id = (
      await paused.post('/api/videoassets/', { name: 'G007.mov', path_file: path, production: seeded.production.id })
    ).json.id
    paused.core.port.run(paused.core.media.setTechnical(id, { hashes: { xxh64: xxh64(path) } }, system('task')))
    const key = paused.makeUser('ed', { perms: ['browser.change_videoasset'], write: [seeded.production.id] })
    const queued = await paused.post(`/api/videoassets/${id}/verify/`, undefined, { key })
    expect(queued.status).toBe(202)
    paused.users.removePerm('ed', 'browser.change_videoasset')
    paused.runner.start()
    await paused.runner.idle()
    const task = (await paused.get(queued.json.task.url)).json
    expect({ state: task.state, error: task.error }).toEqual({
      state: 'failed',
      error: 'the user who asked for the verification no longer has browser.change_videoasset',
    })
  } finally {
    await paused.stop()
    rmSync(paused.dataDir, { recursive: true, force: true })
  }
})

test('the OpenAPI document lists the route of every kind beside its neighbours: 202 with the task, x-permission, 403, 404, 409', async () => {
  const doc = (await t.get('/api/docs/json', { key: null })).json
  const routes = {
    '/api/audioassets/{id}/verify': ['AudioAsset', 'browser.change_audioasset'],
    '/api/imageassets/{id}/verify': ['ImageAsset', 'browser.change_imageasset'],
    '/api/videoassets/{id}/verify': ['VideoAsset', 'browser.change_videoasset'],
    '/api/projectassets/{id}/verify': ['ProjectAsset', 'browser.change_projectasset'],
  }
  for (const [path, [tag, codename]] of Object.entries(routes)) {
    const op = doc.paths[path]?.post
    expect({ path, tags: op?.tags, permission: op?.['x-permission'] }).toEqual({
      path,
      tags: [tag],
      permission: codename,
    })
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['202', '403', '404', '409']))
    expect(op.responses['202'].content['application/json'].example).toEqual({
      task: { id: 33, state: 'queued', url: '/api/tasks/33/' },
    })
    expect(op.responses['403'].content['application/json'].example.errors[0].detail).toContain(codename)
  }
  // The shots detection's neighbour, for comparison: the same shape of answer.
  expect(doc.paths['/api/videoassets/{id}/shots/detect'].post.responses['202']).toBeDefined()
})
