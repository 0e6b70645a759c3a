// Updates and removals of catalogue records (docs/api.md, Editing and removing records): PATCH and
// PUT of every resource (each writable field, read-only fields, validation, unique names,
// permissions, 404), DELETE (204, 409 naming what refers to the record, ids never reused), and a
// media asset's delete: record, links, keywords, shares and proxy gone, essence left on disk, and
// no orphaned row of any link table afterwards.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { system } from '../../src/modules/history/service.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { errorEntry, expectError, expectErrors } from '../helpers/envelope.ts'

let t: TestApp
let root: string
let device: { id: number; name: string; path: string }
let show: { id: number; name: string; storage_root: string; proxy_root: string }

beforeEach(async () => {
  t = testApp()
  ;({ root, device, production: show } = await seedProduction(t))
})
afterEach(() => {
  // Every test, whatever it deleted: no orphaned link, share, keyword or access row, no row naming a
  // record that is gone (test/http/edits.test.ts checks the database after each delete, issue 19).
  const left = orphans()
  t.cleanup()
  expect(left).toBe(0)
})

const file = (rel: string, text = 'essence') => {
  mkdirSync(join(root, rel, '..'), { recursive: true })
  writeFileSync(join(root, rel), text)
  return join(root, rel)
}
const patch = (path: string, body: unknown, key?: string) => t.request('PATCH', path, { body, key })
const put = (path: string, body: unknown, key?: string) => t.request('PUT', path, { body, key })
const del = (path: string, key?: string) => t.request('DELETE', path, { key })
const video = async (rel = 'Show/a.mov', extra: Record<string, unknown> = {}) => {
  const r = await t.post('/api/videoassets/', { name: 'clip', path_file: file(rel), production: show.id, ...extra })
  if (r.status !== 201) throw new Error(r.text)
  return r.json as { id: number; date_mod: string } & Record<string, unknown>
}
/** Rows of the link tables that name a media asset or project that does not exist. */
const orphans = () =>
  t.db.$client
    .query<{ n: number }, []>(`SELECT
    (SELECT count(*) FROM project_asset_links WHERE asset_id NOT IN (SELECT id FROM media_assets) OR project_id NOT IN (SELECT id FROM project_assets))
    + (SELECT count(*) FROM media_asset_keywords WHERE asset_id NOT IN (SELECT id FROM media_assets))
    + (SELECT count(*) FROM media_asset_shares WHERE asset_id NOT IN (SELECT id FROM media_assets) OR production_id NOT IN (SELECT id FROM productions))
    + (SELECT count(*) FROM production_access WHERE production_id NOT IN (SELECT id FROM productions) OR user_id NOT IN (SELECT id FROM users))
    + (SELECT count(*) FROM keywords WHERE category_id NOT IN (SELECT id FROM keyword_categories))
    + (SELECT count(*) FROM custom_metadata WHERE custom_metadata_set NOT IN (SELECT id FROM custom_metadata_sets))
    + (SELECT count(*) FROM pragma_foreign_key_check) AS n`)
    .get()!.n

describe('media assets: PATCH and PUT', () => {
  test('each writable field, as the medialoopster client sends it (one-member JSON bodies): 200 with the whole record', async () => {
    await t.post('/api/custommetadatasets/', { name: 'Camera', description: '', content_type: 4 })
    await t.post('/api/custommetadata/', { key: 'camera.model', value: 'Camera model', custom_metadata_set: 1 })
    await t.post('/api/custommetadata/', { key: 'camera.roll', value: 'Roll', custom_metadata_set: 1 })
    const a = await video()
    const path = `/api/videoassets/${a.id}/`
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ status_approval: 1 }, { status_approval: 1 }],
      [{ status_approval: 0 }, { status_approval: 0 }],
      [{ name: 'renamed' }, { name: 'renamed' }],
      [{ description: 'Night exterior' }, { description: 'Night exterior' }],
      [{ date_del: '2031-01-01' }, { date_del: '2031-01-01T00:00:00.000000Z' }],
      [{ date_add: '2030-05' }, { date_add: '2030-05-01T00:00:00.000000Z' }],
      [{ date_crt: '2025-01-14 21:40:05+01:00' }, { date_crt: '2025-01-14T20:40:05.000000Z' }],
      [{ date_crt: null }, { date_crt: null }],
      [{ is_archive: true }, { is_archive: true }],
      [
        { meta_field_store: { 'camera.model': 'ARRI', 'camera.roll': 'A012' } },
        { meta_field_store: { 'camera.model': 'ARRI', 'camera.roll': 'A012' } },
      ],
      // Merge: a key given is set, the others stay; null removes a key.
      [
        { meta_field_store: { 'camera.roll': 'A013' } },
        { meta_field_store: { 'camera.model': 'ARRI', 'camera.roll': 'A013' } },
      ],
      [{ meta_field_store: { 'camera.model': null } }, { meta_field_store: { 'camera.roll': 'A013' } }],
      [{ keywords: { Location: ['Harbour', 'Night'] } }, { keywords: { Location: ['Harbour', 'Night'] } }],
      [{ keywords: { Location: null, People: ['Ana'] } }, { keywords: { People: ['Ana'] } }],
    ]
    let dateMod = a.date_mod
    for (const [body, shown] of cases) {
      const r = await patch(path, body)
      expect({ body, status: r.status }).toEqual({ body, status: 200 })
      expect(r.json).toMatchObject({ id: a.id, ...shown, modified_by: 'admin' })
      // date_mod changes on every update.
      expect(r.json.date_mod > dateMod).toBe(true)
      dateMod = r.json.date_mod
      expect((await t.get(path)).json).toEqual(r.json)
    }
  })

  test('form data works as JSON does', async () => {
    const a = await video()
    const r = await t.request('PATCH', `/api/videoassets/${a.id}/`, {
      form: { status_approval: '1', name: 'from a form' },
    })
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({ status_approval: 1, name: 'from a form' })
    const fd = new FormData()
    fd.set('status_approval', '0')
    fd.set('date_del', '2031-01-01')
    fd.set('meta_field_store', '{}')
    const multipart = await t.request('PUT', `/api/videoassets/${a.id}/`, { raw: fd, headers: {} })
    expect(multipart.status).toBe(400) // PUT without name
    fd.set('name', 'from multipart')
    const whole = await t.request('PUT', `/api/videoassets/${a.id}/`, { raw: fd })
    expect(whole.status).toBe(200)
    expect(whole.json).toMatchObject({
      status_approval: 0,
      name: 'from multipart',
      date_del: '2031-01-01T00:00:00.000000Z',
    })
  })

  test('status_approval is in the list items of every kind (paged, streamed, filtered), as in the single record', async () => {
    for (const kind of ['audio', 'image', 'video'] as const) {
      const made: number[] = []
      for (let i = 0; i < 3; i++) {
        const r = await t.post(`/api/${kind}assets/`, {
          name: `${kind}${i}`,
          path_file: file(`Show/${kind}${i}.bin`),
          production: show.id,
        })
        made.push(r.json.id as number)
      }
      expect(
        (await t.request('PATCH', `/api/${kind}assets/${made[1]}/`, { body: { status_approval: 1 } })).status,
      ).toBe(200)
      for (const query of [
        '',
        '?limit=10',
        `?limit=10&production=${show.id}`,
        `?path_file=${encodeURIComponent(file(`Show/${kind}1.bin`))}`,
      ]) {
        const r = await t.get(`/api/${kind}assets/${query}`)
        expect(r.status).toBe(200)
        for (const item of r.json as { id: number; status_approval: number }[])
          expect({ id: item.id, status_approval: item.status_approval }).toEqual({
            id: item.id,
            status_approval: item.id === made[1] ? 1 : 0,
          })
        expect((r.json as unknown[]).length).toBeGreaterThan(0)
      }
      const single = (await t.get(`/api/${kind}assets/${made[1]}/`)).json
      const listed: unknown = ((await t.get(`/api/${kind}assets/`)).json as { id: number }[]).find(
        (x) => x.id === made[1],
      )
      expect(listed).toEqual({
        id: single.id,
        name: single.name,
        description: single.description,
        production: single.production,
        status_asset: single.status_asset,
        path_file: single.path_file,
        device: single.device,
        is_archive: single.is_archive,
        is_production: single.is_production,
        meta_field_store: single.meta_field_store,
        status_approval: 1,
      })
    }
  })

  test('PUT: the whole body, name required; meta_field_store is replaced, not merged', async () => {
    await t.post('/api/custommetadatasets/', { name: 'Camera', description: '', content_type: 4 })
    await t.post('/api/custommetadata/', { key: 'camera.model', value: 'm', custom_metadata_set: 1 })
    await t.post('/api/custommetadata/', { key: 'camera.roll', value: 'r', custom_metadata_set: 1 })
    const a = await video('Show/a.mov', { meta_field_store: { 'camera.model': 'ARRI' } })
    expectError(await put(`/api/videoassets/${a.id}/`, { description: 'x' }), 400, 'required', { pointer: '/name' })
    const r = await put(`/api/videoassets/${a.id}/`, { name: 'whole', meta_field_store: { 'camera.roll': 'B1' } })
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({ name: 'whole', meta_field_store: { 'camera.roll': 'B1' } })
    // The record as read, changed and sent back: read-only fields with their own values pass.
    const whole = (await t.get(`/api/videoassets/${a.id}/`)).json
    const again = await put(`/api/videoassets/${a.id}/`, { ...whole, name: 'round trip' })
    expect(again.status).toBe(200)
    expect(again.json.name).toBe('round trip')
  })

  test('read-only fields with another value: 400 invalid at each pointer; path_file says a new path is a move', async () => {
    const a = await video()
    const path = `/api/videoassets/${a.id}/`
    for (const field of [
      'id',
      'production',
      'status_asset',
      'device',
      'is_production',
      'date_mod',
      'technical',
      'path_proxy',
      'projects',
      'modified_by',
    ])
      expectError(
        await patch(path, { [field]: field === 'technical' ? { x: 1 } : field === 'projects' ? [9] : 12345 }),
        400,
        'invalid',
        { pointer: `/${field}` },
      )
    const moved = await patch(path, { path_file: join(root, 'Show', 'b.mov') })
    expectError(moved, 400, 'invalid', { pointer: '/path_file' })
    expect(moved.json.errors[0].detail).toContain('move')
    // Several at once: one entry each.
    expectErrors(await patch(path, { id: 99, date_mod: 'x' }), 400, [
      { code: 'invalid', where: { pointer: '/id' } },
      { code: 'invalid', where: { pointer: '/date_mod' } },
    ])
    expect((await t.get(path)).json.date_mod).toBe(a.date_mod)
  })

  test('validation: wrong types, bad dates, status_approval out of range, unknown metadata keys; nothing changes', async () => {
    const a = await video()
    const path = `/api/videoassets/${a.id}/`
    const cases: [unknown, string][] = [
      [{ status_approval: 2 }, '/status_approval'],
      [{ status_approval: 'yes' }, '/status_approval'],
      [{ name: '' }, '/name'],
      [{ name: 5 }, '/name'],
      [{ date_del: '2031-02-30' }, '/date_del'],
      [{ date_add: 'tomorrow' }, '/date_add'],
      [{ date_add: null }, '/date_add'],
      [{ meta_field_store: { 'no.such.field': 'x' } }, '/meta_field_store/no.such.field'],
      [{ meta_field_store: 'text' }, '/meta_field_store'],
      [{ keywords: { Location: 'Harbour' } }, '/keywords/Location'],
      [{ is_archive: 'maybe' }, '/is_archive'],
    ]
    for (const [body, pointer] of cases) expectError(await patch(path, body), 400, 'invalid', { pointer })
    expect((await t.get(path)).json).toMatchObject({ name: 'clip', status_approval: 0, date_mod: a.date_mod })
  })

  test('404 for a missing id, another kind, or an asset the user cannot read; 403 without the codename or write access', async () => {
    const a = await video()
    expectError(await patch('/api/videoassets/999/', { name: 'x' }), 404, 'not_found')
    expectError(await patch(`/api/audioassets/${a.id}/`, { name: 'x' }), 404, 'not_found')
    const stranger = t.makeUser('stranger', { perms: ['browser.change_videoasset'] })
    expectError(await patch(`/api/videoassets/${a.id}/`, { name: 'x' }, stranger), 404, 'not_found')
    const reader = t.makeUser('reader', { perms: ['browser.change_videoasset'], read: [show.id] })
    expectError(await patch(`/api/videoassets/${a.id}/`, { name: 'x' }, reader), 403, 'permission_denied')
    const writer = t.makeUser('writer', { write: [show.id] })
    const refused = await patch(`/api/videoassets/${a.id}/`, { name: 'x' }, writer)
    expectError(refused, 403, 'permission_denied')
    expect(refused.json.errors[0].detail).toContain('browser.change_videoasset')
    const editor = t.makeUser('editor', { perms: ['browser.change_videoasset'], write: [show.id] })
    const done = await patch(`/api/videoassets/${a.id}/`, { name: 'x' }, editor)
    expect(done.status).toBe(200)
    expect(done.json.modified_by).toBe('editor')
  })
})

describe("media assets: keywords within the import's limits", () => {
  /** A name of `length` characters (255: the longest) starting with `prefix`. */
  const long = (prefix: string, length = 255) => prefix + 'x'.repeat(length - prefix.length)
  const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => long(`${prefix}${i}-`))
  const categories = (n: number, list: (i: number) => unknown) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`c${i}`, list(i)]))

  test('more than 1,000 categories and keywords in all: 400 invalid at /keywords, by PATCH and PUT, nothing changed', async () => {
    const a = await video()
    const path = `/api/videoassets/${a.id}/`
    expect((await patch(path, { keywords: { Location: ['Harbour'] } })).status).toBe(200)
    const before = (await t.get(path)).json
    const over: [string, Record<string, unknown>][] = [
      ['one category of 1,000 keywords (1,001)', { Location: Array.from({ length: 1000 }, (_, i) => `k${i}`) }],
      ['999 categories of one keyword each (1,998)', categories(999, () => ['k'])],
      ['1,001 categories removed', categories(1001, () => null)],
      ['1,001 empty categories', categories(1001, () => [])],
    ]
    for (const [what, keywords] of over) {
      for (const reply of [await patch(path, { keywords }), await put(path, { name: 'clip', keywords })])
        expect({ what, status: reply.status, json: reply.json }).toEqual({
          what,
          status: 400,
          json: { errors: [errorEntry(400, 'invalid', { pointer: '/keywords' })] },
        })
    }
    // As form data (keywords as JSON text): counted the same.
    expectError(await t.request('PATCH', path, { form: { keywords: over[0]![1] } }), 400, 'invalid', {
      pointer: '/keywords',
    })
    expect((await t.get(path)).json).toEqual(before)
  })

  test('the count is asked first, before the body is cleaned and checked: a huge body with another bad field is told only that', async () => {
    const a = await video()
    const keywords = categories(40_000, () => [])
    expectError(await patch(`/api/videoassets/${a.id}/`, { name: 5, description: [], keywords }), 400, 'invalid', {
      pointer: '/keywords',
    })
  })

  test('a keyword or a category name of 256 characters: 400 invalid at /keywords/<category>', async () => {
    const a = await video()
    const path = `/api/videoassets/${a.id}/`
    expectError(await patch(path, { keywords: { Location: [long('k', 256)] } }), 400, 'invalid', {
      pointer: '/keywords/Location',
    })
    expectError(await put(path, { name: 'clip', keywords: { 'Place/Time': ['ok', long('k', 256)] } }), 400, 'invalid', {
      pointer: '/keywords/Place~1Time',
    })
    const category = long('c', 256)
    expectError(await patch(path, { keywords: { [category]: ['k'] } }), 400, 'invalid', {
      pointer: `/keywords/${category}`,
    })
    expect((await t.get(path)).json.keywords).toEqual({})
  })

  test('exactly 1,000, with names of 255 characters: 200, and the record shows them', async () => {
    const a = await video()
    const path = `/api/videoassets/${a.id}/`
    // One category of 999 keywords.
    const one = long('Location-')
    const many = names(999, 'k')
    const patched = await patch(path, { keywords: { [one]: many } })
    expect(patched.status).toBe(200)
    expect(patched.json.keywords).toEqual({ [one]: [...many].sort() })
    // 500 categories of one keyword each, replacing all (PUT).
    const wide = Object.fromEntries(names(500, 'c').map((c, i) => [c, [long(`k${i}-`)]]))
    const whole = await put(path, { name: 'clip', keywords: wide })
    expect(whole.status).toBe(200)
    expect(whole.json.keywords).toEqual(wide)
    // 1,000 categories removed: the 500 the asset has and 500 it does not.
    const removed = Object.fromEntries([...Object.keys(wide), ...names(500, 'other')].map((c) => [c, null]))
    const emptied = await patch(path, { keywords: removed })
    expect(emptied.status).toBe(200)
    expect(emptied.json.keywords).toEqual({})
    expect((await t.get(path)).json).toEqual(emptied.json)
  })

  test("keywords are listed in SQLite's order of text (code points), also past U+FFFF", async () => {
    const a = await video()
    const r = await patch(`/api/videoassets/${a.id}/`, {
      keywords: { Signs: ['\u{1F600}', '\uE000', 'b', 'a'], '\u{1F600}': ['x'], '\uE000': ['y'] },
    })
    expect(r.status).toBe(200)
    // UTF-16 units would put U+1F600 (D83D DE00) before U+E000.
    expect(Object.entries(r.json.keywords)).toEqual([
      ['Signs', ['a', 'b', '\uE000', '\u{1F600}']],
      ['\uE000', ['y']],
      ['\u{1F600}', ['x']],
    ])
  })
})

describe('media assets: DELETE', () => {
  test('204; links, keywords, shares and the proxy go; the essence stays; allow_partial=true is accepted; no orphaned rows', async () => {
    const other = await t.post('/api/productions/', { name: 'Other', storage_root: join(root, 'Other') })
    const a = await video('Show/a.mov')
    await patch(`/api/videoassets/${a.id}/`, { keywords: { Location: ['Harbour'] } })
    const bundle = join(root, 'Show', 'p1')
    const project = (await t.post('/api/projectassets/', { name: 'P1', bundle_root: bundle, production_id: show.id }))
      .json
    await t.post(`/api/projectassets/${project.id}/addasset/`, { asset_list: [{ asset_id: a.id, type: 'video' }] })
    t.db.$client.run('INSERT INTO media_asset_shares (asset_id, production_id) VALUES (?, ?)', [a.id, other.json.id])
    const proxy = join(show.proxy_root, 'video', 'a.mp4')
    mkdirSync(join(proxy, '..'), { recursive: true })
    writeFileSync(proxy, 'proxy')
    t.core.port.run(t.core.media.setProxy(a.id, proxy, system('import')))

    const r = await del(`/api/videoassets/${a.id}/?allow_partial=true`)
    expect(r.status).toBe(204)
    expect(r.text).toBe('')
    expectError(await t.get(`/api/videoassets/${a.id}/`), 404, 'not_found')
    expect(existsSync(join(root, 'Show', 'a.mov'))).toBe(true)
    expect(existsSync(proxy)).toBe(false)
    expect((await t.get(`/api/projectassets/${project.id}/`)).json.video_assets).toEqual([])
    const count = (table: string) =>
      t.db.$client.query<{ n: number }, [number]>(`SELECT count(*) AS n FROM ${table} WHERE asset_id = ?`).get(a.id)!.n
    expect({
      links: count('project_asset_links'),
      keywords: count('media_asset_keywords'),
      shares: count('media_asset_shares'),
    }).toEqual({ links: 0, keywords: 0, shares: 0 })
    expect(orphans()).toBe(0)
    // Ids are never reused.
    const b = await video('Show/b.mov')
    expect(b.id).toBeGreaterThan(a.id)
  })

  test("a proxy outside the production's proxy_root is left where it is", async () => {
    const a = await video()
    const outside = file('Show/elsewhere.mp4', 'not ours')
    t.core.port.run(t.core.media.setProxy(a.id, outside, system('import')))
    expect((await del(`/api/videoassets/${a.id}/`)).status).toBe(204)
    expect(existsSync(outside)).toBe(true)
    expect(orphans()).toBe(0)
  })

  test('404 missing or unreadable, 403 without browser.delete_videoasset or write access; the record stays', async () => {
    const a = await video()
    expectError(await del('/api/videoassets/999/'), 404, 'not_found')
    expectError(await del(`/api/imageassets/${a.id}/`), 404, 'not_found')
    expectError(
      await del(`/api/videoassets/${a.id}/`, t.makeUser('stranger', { perms: ['browser.delete_videoasset'] })),
      404,
      'not_found',
    )
    expectError(
      await del(`/api/videoassets/${a.id}/`, t.makeUser('writer', { write: [show.id] })),
      403,
      'permission_denied',
    )
    expectError(
      await del(
        `/api/videoassets/${a.id}/`,
        t.makeUser('reader', { read: [show.id], perms: ['browser.delete_videoasset'] }),
      ),
      403,
      'permission_denied',
    )
    expect((await t.get(`/api/videoassets/${a.id}/`)).status).toBe(200)
    const deleter = t.makeUser('deleter', { write: [show.id], perms: ['browser.delete_videoasset'] })
    expect((await del(`/api/videoassets/${a.id}/`, deleter)).status).toBe(204)
  })

  test('409 while an import task works on the asset', async () => {
    const path = file('Show/imported.mov')
    const r = await t.post('/api/asset/import/', {
      type: 'video',
      production: 'Show',
      asset: { asset_meta: { name: 'i', path_file: path } },
    })
    expect(r.status).toBe(201)
    const refused = await del(`/api/videoassets/${r.json.asset_import_id}/`)
    expectError(refused, 409, 'conflict')
    expect(refused.json.errors[0].detail).toContain('import task')
  })
})

describe('devices', () => {
  test('PATCH each field; a password is never answered; unique name and path; read-only id', async () => {
    const d = (await t.post('/api/devices/', { name: 'spare', path: join(root, 'spare') })).json
    const path = `/api/devices/${d.id}/`
    const body = {
      name: 'spare-2',
      display_name: 'Spare disk',
      path: join(root, 'spare2'),
      is_internal: true,
      is_archive: true,
      autoshot_detection: true,
      allow_direct_writing: false,
      recieve_xml_meta: true,
      protocol: 'smb',
      anonymous: true,
      server: 'nas',
      username: 'ed',
      password: 'secret',
      archive_connector: 'lto',
      passthrough_profiles: [],
      write_permission_groups: ['editors'],
    }
    const r = await patch(path, body)
    expect(r.status).toBe(200)
    expect(r.json).toEqual({
      ...body,
      id: d.id,
      path: `${body.path}/`,
      password: '********',
      transcoding_profile: null,
    })
    // "********" (as answered) keeps the password; null removes it.
    expect((await patch(path, { password: '********' })).json.password).toBe('********')
    expect(
      t.db.$client.query<{ password: string }, [number]>('SELECT password FROM devices WHERE id = ?').get(d.id)!
        .password,
    ).toBe('secret')
    expect((await patch(path, { password: null })).json.password).toBeNull()
    expectError(await patch(path, { name: device.name }), 400, 'unique', { pointer: '/name' })
    expectError(await patch(path, { path: device.path }), 400, 'unique', { pointer: '/path' })
    expectError(await patch(path, { id: 77 }), 400, 'invalid', { pointer: '/id' })
    expectError(await patch(path, { protocol: 'ftp' }), 400, 'invalid', { pointer: '/protocol' })
    expectError(await patch(path, { transcoding_profile: 99 }), 400, 'invalid', { pointer: '/transcoding_profile' })
    expectError(await patch(path, { path: 'relative/path' }), 400, 'invalid', { pointer: '/path' })
    expectError(await put(path, { name: 'only-name' }), 400, 'required', { pointer: '/path' })
    expectError(await patch('/api/devices/999/', { name: 'x' }), 404, 'not_found')
    expectError(await patch(path, { name: 'x' }, t.makeUser('nobody')), 403, 'permission_denied')
    expect(
      (await patch(path, { name: 'by-changer' }, t.makeUser('changer', { perms: ['browser.change_device'] }))).status,
    ).toBe(200)
  })

  test('a new path is refused while assets or projects lie on the device; a new name carries its hold durations along', async () => {
    await video()
    await t.post('/api/assetholddurations/', {
      asset_type: 'videoasset',
      context_type: 'device',
      context: device.name,
      duration: 30,
    })
    const refused = await patch(`/api/devices/${device.id}/`, { path: join(root, 'elsewhere') })
    expectError(refused, 409, 'conflict')
    expect(refused.json.errors[0].detail).toContain('1 video asset lies on this device')
    expect((await patch(`/api/devices/${device.id}/`, { name: 'renamed-disk' })).status).toBe(200)
    expect((await t.get('/api/assetholddurations/')).json[0].context).toBe('renamed-disk')
  })

  test('DELETE: 409 naming what refers to the device; 204 once nothing does; ids never reused', async () => {
    for (const rel of ['Show/a.mov', 'Show/b.mov']) await video(rel)
    const refused = await del(`/api/devices/${device.id}/`)
    expectError(refused, 409, 'conflict')
    expect(refused.json.errors[0].detail).toContain('2 video assets lie on this device')
    expect(refused.json.errors[0].detail).toContain(`production "${show.name}" uses this device`)
    const spare = (await t.post('/api/devices/', { name: 'spare', path: join(root, 'spare') })).json
    expectError(await del(`/api/devices/${spare.id}/`, t.makeUser('nobody')), 403, 'permission_denied')
    expect((await del(`/api/devices/${spare.id}/`)).status).toBe(204)
    expectError(await del(`/api/devices/${spare.id}/`), 404, 'not_found')
    const next = (await t.post('/api/devices/', { name: 'spare', path: join(root, 'spare') })).json
    expect(next.id).toBeGreaterThan(spare.id)
  })
})

describe('productions', () => {
  test('PATCH name, codename, company, proxy_url, devices; unique; write access needed; roots only while empty', async () => {
    const path = `/api/productions/${show.id}/`
    const r = await patch(path, {
      name: 'Night Shift',
      codename: 'night',
      company: 'Harbour',
      proxy_url: 'https://proxy.example/',
      upload_device: device.id,
    })
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({
      id: show.id,
      name: 'Night Shift',
      codename: 'night',
      company: 'Harbour',
      proxy_url: 'https://proxy.example/',
    })
    await t.post('/api/productions/', { name: 'Other', storage_root: join(root, 'Other') })
    expectError(await patch(path, { name: 'Other' }), 400, 'unique', { pointer: '/name' })
    expectError(await patch(path, { codename: 'other' }), 400, 'unique', { pointer: '/codename' })
    expectError(await patch(path, { codename: 'Not A Slug' }), 400, 'invalid', { pointer: '/codename' })
    expectError(await patch(path, { proxy_url: 'ftp://x' }), 400, 'invalid', { pointer: '/proxy_url' })
    expectError(await patch(path, { videoasset_device: 99 }), 400, 'invalid', { pointer: '/videoasset_device' })
    // The roots move while nothing belongs to the production, not after.
    const moved = await patch(path, { storage_root: join(root, 'Night') })
    expect(moved.status).toBe(200)
    expect(existsSync(join(root, 'Night'))).toBe(true)
    await t.post('/api/videoassets/', { name: 'c', path_file: file('Night/c.mov'), production: show.id })
    expectError(await patch(path, { storage_root: join(root, 'Show') }), 409, 'conflict')
    // Permissions: unreadable 404, readable without write 403.
    expectError(
      await patch(path, { company: 'x' }, t.makeUser('stranger', { perms: ['browser.change_production'] })),
      404,
      'not_found',
    )
    expectError(
      await patch(
        path,
        { company: 'x' },
        t.makeUser('reader', { perms: ['browser.change_production'], read: [show.id] }),
      ),
      403,
      'permission_denied',
    )
    expect(
      (
        await patch(
          path,
          { company: 'y' },
          t.makeUser('owner', { perms: ['browser.change_production'], write: [show.id] }),
        )
      ).status,
    ).toBe(200)
  })

  test('fields the service sets are read-only: 400 invalid at each pointer; their own values pass, so a GET-then-PUT works in both versions', async () => {
    const path = `/api/productions/${show.id}/`
    const member = t.makeUser('member', { read: [show.id] })
    expect(member).toBeString()
    const changed: Record<string, unknown> = {
      id: show.id + 1,
      can_write: false,
      can_delete_assets: false,
      members: [],
      san_mount: '/mnt/san',
      export_type: 'xml',
      default_approval_status: 1,
      direct_attached_site: 2,
      network_attached_site: [1],
      member_groups: [1],
      projectasset_device: device.id,
    }
    for (const [field, value] of Object.entries(changed)) {
      const r = await patch(path, { [field]: value })
      expectError(r, 400, 'invalid', { pointer: `/${field}` })
      expect(r.json.errors[0].detail).toContain(field)
    }
    // All at once: one entry each, and nothing changed.
    const all = await patch(path, { ...changed, company: 'not written' })
    expect(all.status).toBe(400)
    expect(all.json.errors.map((e: { source: { pointer: string } }) => e.source.pointer).sort()).toEqual(
      Object.keys(changed)
        .map((f) => `/${f}`)
        .sort(),
    )
    expect((await t.get(path)).json.company).toBe('')
    // The record as read, changed and sent back, in version 1 (devices as records) and in version 2 (ids).
    for (const accept of ['application/json; version=1', 'application/json; version=2']) {
      const read = await t.get(path, { headers: { accept } })
      const back = await t.request('PUT', path, { body: { ...read.json, company: accept }, headers: { accept } })
      expect(back.status).toBe(200)
      expect(back.json).toEqual({ ...read.json, company: accept })
    }
    // And as form data (every value text): the read-only fields' text spells the record's values.
    const v2 = (await t.get(path, { headers: { accept: 'application/json; version=2' } })).json
    const asForm = await t.request('PUT', path, {
      form: { ...v2, company: 'form' },
      headers: { accept: 'application/json; version=2' },
    })
    expect(asForm.status).toBe(200)
    expect(asForm.json).toEqual({ ...v2, company: 'form' })
    expectError(await t.request('PATCH', path, { form: { can_write: 'false' } }), 400, 'invalid', {
      pointer: '/can_write',
    })
    // A device record is taken by its id; anything else at a device field is a 400 that says what to send.
    // (The folder is not there: the create's answer carries a warning, the record does not.)
    const { warning: _, ...other } = (await t.post('/api/devices/', { name: 'other', path: join(root, 'elsewhere') }))
      .json
    const byRecord = await patch(path, { upload_device: other })
    expect(byRecord.status).toBe(200)
    expect(byRecord.json.upload_device).toEqual(other)
    for (const bad of ['x', { name: 'other' }, { id: 'x' }, 0, 1.5, null])
      expectError(await patch(path, { upload_device: bad }), 400, 'invalid', { pointer: '/upload_device' })
    expectError(await patch(path, { upload_device: { id: 999 } }), 400, 'invalid', { pointer: '/upload_device' })
  })

  test('DELETE: 409 while assets belong to it; 204 when empty, its access rows gone with it', async () => {
    await video()
    const refused = await del(`/api/productions/${show.id}/`)
    expectError(refused, 409, 'conflict')
    expect(refused.json.errors[0].detail).toContain('1 video asset belongs to this production')
    const empty = (await t.post('/api/productions/', { name: 'Empty', storage_root: join(root, 'Empty') })).json
    t.makeUser('member', { read: [empty.id] })
    await t.post('/api/assetholddurations/', {
      asset_type: 'videoasset',
      context_type: 'production',
      context: 'Empty',
      duration: 3,
    })
    expect((await del(`/api/productions/${empty.id}/`)).json.errors[0].detail).toContain(
      '1 asset hold duration names this production',
    )
    await del(`/api/assetholddurations/${(await t.get('/api/assetholddurations/')).json[0].id}/`)
    expect((await del(`/api/productions/${empty.id}/`)).status).toBe(204)
    expectError(await t.get(`/api/productions/${empty.id}/`), 404, 'not_found')
    expect(orphans()).toBe(0)
  })
})

describe('transcoding profiles, custom metadata, hold durations', () => {
  test('transcoding profile: PATCH fields, unique name, DELETE refused while a device uses it', async () => {
    const p = (await t.post('/api/transcodingprofiles/', { name: 'ProRes' })).json
    const r = await patch(`/api/transcodingprofiles/${p.id}/`, {
      width: 1920,
      height: 1080,
      progressive: true,
      codec_name: 'prores',
    })
    expect(r.json).toMatchObject({
      id: p.id,
      name: 'ProRes',
      width: 1920,
      height: 1080,
      progressive: true,
      codec_name: 'prores',
    })
    await t.post('/api/transcodingprofiles/', { name: 'H264' })
    expectError(await patch(`/api/transcodingprofiles/${p.id}/`, { name: 'H264' }), 400, 'unique', { pointer: '/name' })
    expectError(await patch(`/api/transcodingprofiles/${p.id}/`, { width: -1 }), 400, 'invalid', { pointer: '/width' })
    expectError(
      await patch(`/api/transcodingprofiles/${p.id}/`, { name: 'x' }, t.makeUser('nobody')),
      403,
      'permission_denied',
    )
    await patch(`/api/devices/${device.id}/`, { transcoding_profile: p.id })
    const refused = await del(`/api/transcodingprofiles/${p.id}/`)
    expectError(refused, 409, 'conflict')
    expect(refused.json.errors[0].detail).toContain('1 device uses this transcoding profile')
    await patch(`/api/devices/${device.id}/`, { transcoding_profile: null })
    expect((await del(`/api/transcodingprofiles/${p.id}/`)).status).toBe(204)
  })

  test('custom metadata field and set: PATCH, unique key, key change and DELETE refused while values are stored', async () => {
    const set = (await t.post('/api/custommetadatasets/', { name: 'Camera', description: '', content_type: 4 })).json
    const f = (
      await t.post('/api/custommetadata/', { key: 'camera.model', value: 'Model', custom_metadata_set: set.id })
    ).json
    await t.post('/api/custommetadata/', { key: 'camera.roll', value: 'Roll', custom_metadata_set: set.id })
    const r = await patch(`/api/custommetadata/${f.id}/`, {
      value: 'Camera model',
      order: 7,
      validation_rule: '^[A-Z]+$',
    })
    expect(r.json).toEqual({
      id: f.id,
      key: 'camera.model',
      value: 'Camera model',
      order: 7,
      custom_metadata_set: set.id,
      validation_rule: '^[A-Z]+$',
    })
    expectError(await patch(`/api/custommetadata/${f.id}/`, { key: 'camera.roll' }), 400, 'unique', { pointer: '/key' })
    expectError(await patch(`/api/custommetadata/${f.id}/`, { validation_rule: '(a)\\1' }), 400, 'invalid', {
      pointer: '/validation_rule',
    })
    expectError(await patch(`/api/custommetadata/${f.id}/`, { custom_metadata_set: 99 }), 400, 'invalid', {
      pointer: '/custom_metadata_set',
    })
    await video('Show/a.mov', { meta_field_store: { 'camera.model': 'ARRI' } })
    const renamed = await patch(`/api/custommetadata/${f.id}/`, { key: 'camera.body' })
    expectError(renamed, 409, 'conflict')
    expect(renamed.json.errors[0].detail).toContain('1 video asset holds a value')
    expect((await del(`/api/custommetadata/${f.id}/`)).json.errors[0].detail).toContain('1 video asset holds a value')
    expect(
      (await patch(`/api/custommetadatasets/${set.id}/`, { name: 'Camera report', description: 'From the set' })).json,
    ).toEqual({ id: set.id, name: 'Camera report', description: 'From the set', content_type: 4 })
    expectError(await patch(`/api/custommetadatasets/${set.id}/`, { content_type: 2 }), 409, 'conflict')
    const setRefused = await del(`/api/custommetadatasets/${set.id}/`)
    expectError(setRefused, 409, 'conflict')
    expect(setRefused.json.errors[0].detail).toContain('2 custom metadata fields belong to this set')
    const roll = (await t.get('/api/custommetadata/')).json.find((x: { key: string }) => x.key === 'camera.roll')
    expect((await del(`/api/custommetadata/${roll.id}/`)).status).toBe(204)
  })

  test('hold duration: PATCH, unique rule, context must exist; DELETE always possible', async () => {
    const h = (
      await t.post('/api/assetholddurations/', {
        asset_type: 'videoasset',
        context_type: 'device',
        context: device.name,
        duration: 30,
      })
    ).json
    await t.post('/api/assetholddurations/', {
      asset_type: 'audioasset',
      context_type: 'device',
      context: device.name,
      duration: 10,
    })
    expect((await patch(`/api/assetholddurations/${h.id}/`, { duration: 60 })).json).toEqual({ ...h, duration: 60 })
    expectError(await patch(`/api/assetholddurations/${h.id}/`, { asset_type: 'audioasset' }), 400, 'unique', {
      pointer: '/context',
    })
    expectError(await patch(`/api/assetholddurations/${h.id}/`, { context: 'nowhere' }), 400, 'invalid', {
      pointer: '/context',
    })
    expectError(await patch(`/api/assetholddurations/${h.id}/`, { duration: -1 }), 400, 'invalid', {
      pointer: '/duration',
    })
    expectErrors(
      await put(`/api/assetholddurations/${h.id}/`, { duration: 5 }),
      400,
      ['/asset_type', '/context_type', '/context'].map((pointer) => ({ code: 'required', where: { pointer } })),
    )
    expectError(await del(`/api/assetholddurations/${h.id}/`, t.makeUser('nobody')), 403, 'permission_denied')
    expect((await del(`/api/assetholddurations/${h.id}/`)).status).toBe(204)
    expectError(await del(`/api/assetholddurations/${h.id}/`), 404, 'not_found')
  })
})

describe('project assets: PATCH and PUT', () => {
  test('writable fields; bundle_root is a move; read-only fields; permissions; DELETE keeps its contract (202)', async () => {
    const bundle = join(root, 'Show', 'p1')
    const p = (await t.post('/api/projectassets/', { name: 'P1', bundle_root: bundle, production_id: show.id })).json
    const path = `/api/projectassets/${p.id}/`
    const body = {
      name: 'Reel 1',
      description: 'Rough cut',
      status_editing: 2,
      status_approval: 1,
      type: 'premiere',
      is_archive: true,
      name_editor: 'Ana',
      name_studio: 'Suite 3',
      locked_by: 'ana',
      path_file: join(bundle, 'reel.prproj'),
    }
    const r = await patch(path, { ...body, date_crt: '2025-01-14', date_del: '2031-01-01' })
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({
      ...body,
      date_crt: '2025-01-14T00:00:00.000000Z',
      date_del: '2031-01-01T00:00:00.000000Z',
      modified_by: 'admin',
    })
    expect(r.json.date_mod > p.date_mod).toBe(true)
    const moved = await patch(path, { bundle_root: join(root, 'Show', 'p2/') })
    expectError(moved, 400, 'invalid', { pointer: '/bundle_root' })
    expect(moved.json.errors[0].detail).toContain('move')
    expectError(await patch(path, { path_file: join(root, 'outside.prproj') }), 400, 'invalid', {
      pointer: '/path_file',
    })
    for (const field of ['status_asset', 'is_production', 'production', 'device'])
      expectError(await patch(path, { [field]: 99 }), 400, 'invalid', { pointer: `/${field}` })
    expectError(await put(path, { description: 'x' }), 400, 'required', { pointer: '/name' })
    expectError(await patch('/api/projectassets/999/', { name: 'x' }), 404, 'not_found')
    expectError(
      await patch(path, { name: 'x' }, t.makeUser('stranger', { perms: ['browser.change_projectasset'] })),
      404,
      'not_found',
    )
    expectError(await patch(path, { name: 'x' }, t.makeUser('writer', { write: [show.id] })), 403, 'permission_denied')
    const deleted = await del(path)
    expect(deleted.status).toBe(202)
  })
})

describe('404 codes of DELETE', () => {
  test('an id that cannot exist answers as one that does not: not_found, but does_not_exist for project assets (api.md 4.1)', async () => {
    for (const resource of [
      'devices',
      'productions',
      'transcodingprofiles',
      'custommetadata',
      'custommetadatasets',
      'assetholddurations',
      'audioassets',
      'imageassets',
      'videoassets',
    ])
      for (const id of ['abc', '-1', '1.5', '99999999999999999999', '999'])
        expectError(await del(`/api/${resource}/${id}/`), 404, 'not_found')
    for (const base of ['projectassets', 'project'])
      for (const id of ['abc', '-1', '999']) expectError(await del(`/api/${base}/${id}/`), 404, 'does_not_exist')
  })
})

describe('bad input on the new endpoints never reaches a 500', () => {
  test('odd bodies, ids and queries on every PATCH, PUT and DELETE', async () => {
    const a = await video()
    const p = (
      await t.post('/api/projectassets/', { name: 'P1', bundle_root: join(root, 'Show', 'p1'), production_id: show.id })
    ).json
    const paths = [
      `/api/videoassets/${a.id}/`,
      `/api/audioassets/1/`,
      `/api/imageassets/1/`,
      `/api/devices/${device.id}/`,
      `/api/productions/${show.id}/`,
      '/api/transcodingprofiles/1/',
      '/api/custommetadata/1/',
      '/api/custommetadatasets/1/',
      '/api/assetholddurations/1/',
      `/api/projectassets/${p.id}/`,
    ]
    const bodies: unknown[] = [
      null,
      [],
      'text',
      5,
      { name: null },
      { name: { a: 1 } },
      { meta_field_store: [1] },
      { keywords: { '': ['x'] } },
      { date_add: 12 },
      { path: '' },
      { storage_root: '../..' },
      { custom_metadata_set: 'x' },
      { duration: 1.5 },
      { password: 5 },
      { __proto__: { x: 1 } },
    ]
    for (const path of [...paths, '/api/videoassets/abc/', '/api/devices/-1/', '/api/devices/99999999999999999999/'])
      for (const method of ['PATCH', 'PUT']) {
        for (const body of bodies) {
          const r = await t.request(method, path, {
            raw: JSON.stringify(body),
            headers: { 'content-type': 'application/json' },
          })
          expect({ method, path, body, status: r.status < 500 }).toEqual({ method, path, body, status: true })
        }
        const form = await t.request(method, path, {
          raw: 'name=&status_approval=x&meta_field_store={',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
        expect({ method, path, status: form.status < 500 }).toEqual({ method, path, status: true })
      }
    for (const path of [...paths.slice(0, -1), '/api/videoassets/abc/', '/api/devices/0/'])
      for (const query of ['', '?allow_partial=true', '?allow_partial=maybe', '?allow_partial=1&allow_partial=0']) {
        const r = await del(path + query)
        expect({ path, query, status: r.status < 500 }).toEqual({ path, query, status: true })
      }
    expect(orphans()).toBe(0)
  })
})
