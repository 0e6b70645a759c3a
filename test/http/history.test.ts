// The change history (docs/api.md, History): a row for every create, update, delete and link
// change, through the API, an import, the command line and the tasks, written with the change;
// GET /api/history/ newest first, paged like every list, filtered, and limited to what the user
// can read. The watcher's rows: test/watch/dismissed.test.ts.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

let t: TestApp
let root: string
let device: { id: number; name: string }
let show: { id: number }

beforeEach(async () => {
  t = testApp(undefined, { tasks: true })
  ;({ root, device, production: show } = await seedProduction(t))
})
afterEach(async () => {
  await t.stop()
  t.cleanup()
})

const file = (rel: string) => {
  mkdirSync(join(root, rel, '..'), { recursive: true })
  writeFileSync(join(root, rel), 'essence')
  return join(root, rel)
}
const rows = async (query: string, key?: string) => {
  const r = await t.get(`/api/history/?${query}`, { key })
  if (r.status !== 200) throw new Error(r.text)
  return r.json as {
    id: number
    user: string
    via: string
    resource: string
    resource_id: number
    action: string
    changes: Record<string, { old: unknown; new: unknown }>
  }[]
}

describe('a row for each kind of write', () => {
  test('create, update (each changed field, old and new), delete of a media asset through the API', async () => {
    const a = (await t.post('/api/videoassets/', { name: 'clip', path_file: file('Show/a.mov'), production: show.id }))
      .json
    await t.request('PATCH', `/api/videoassets/${a.id}/`, { body: { name: 'renamed', status_approval: 1 } })
    await t.request('DELETE', `/api/videoassets/${a.id}/`)
    const [deleted, updated, created] = await rows(`resource=videoasset&id=${a.id}`)
    expect(created).toMatchObject({
      user: 'admin',
      via: 'api',
      resource: 'videoasset',
      resource_id: a.id,
      action: 'create',
      production: show.id,
    })
    expect(created!.changes.name).toEqual({ old: null, new: 'clip' })
    expect(updated).toMatchObject({ action: 'update', user: 'admin' })
    expect(updated!.changes).toEqual({
      name: { old: 'clip', new: 'renamed' },
      status_approval: { old: 0, new: 1 },
      date_mod: { old: a.date_mod, new: expect.any(String) },
    })
    expect(deleted).toMatchObject({ action: 'delete', user: 'admin' })
    expect(deleted!.changes.name).toEqual({ old: 'renamed', new: null })
  })

  test('a device password is never written: "********" or null in its place', async () => {
    await t.request('PATCH', `/api/devices/${device.id}/`, { body: { password: 'hunter2', username: 'ed' } })
    await t.request('PATCH', `/api/devices/${device.id}/`, { body: { password: 'other-secret' } })
    const all = await rows(`resource=device&id=${device.id}`)
    expect(all[1]!.changes).toEqual({ password: { old: null, new: '********' }, username: { old: null, new: 'ed' } })
    // One password for another: said, as masks.
    expect(all[0]!.changes).toEqual({ password: { old: '********', new: '********' } })
    const text = JSON.stringify(await rows('')) + JSON.stringify(t.db.$client.query('SELECT * FROM history').all())
    expect(text).not.toContain('hunter2')
    expect(text).not.toContain('other-secret')
  })

  test("links and unlinks of a project: each kind's ids before and after", async () => {
    const a = (await t.post('/api/videoassets/', { name: 'clip', path_file: file('Show/a.mov'), production: show.id }))
      .json
    const p = (
      await t.post('/api/projectassets/', { name: 'P', bundle_root: join(root, 'Show', 'p'), production_id: show.id })
    ).json
    await t.post(`/api/projectassets/${p.id}/addasset/`, { asset_list: [{ asset_id: a.id, type: 'video' }] })
    await t.post(`/api/projectassets/${p.id}/unlinkasset/`, { asset_list: [{ asset_id: a.id, type: 'video' }] })
    const [unlinked, linked, created] = await rows(`resource=projectasset&id=${p.id}`)
    expect(created!.action).toBe('create')
    expect(linked).toMatchObject({ action: 'link', changes: { video_assets: { old: [], new: [a.id] } } })
    expect(unlinked).toMatchObject({ action: 'unlink', changes: { video_assets: { old: [a.id], new: [] } } })
    // A link request that changes nothing writes no row.
    await t.post(`/api/projectassets/${p.id}/unlinkasset/`, { asset_list: [], silent_mode: true })
    expect((await rows(`resource=projectasset&id=${p.id}`)).length).toBe(3)
  })

  test('a media asset deleted while linked: each of its projects has an unlink row by the deleting user, and a new date_mod', async () => {
    const a = (await t.post('/api/videoassets/', { name: 'a', path_file: file('Show/a.mov'), production: show.id }))
      .json
    const b = (await t.post('/api/videoassets/', { name: 'b', path_file: file('Show/b.mov'), production: show.id }))
      .json
    const s = (await t.post('/api/audioassets/', { name: 's', path_file: file('Show/s.wav'), production: show.id }))
      .json
    const p = (
      await t.post('/api/projectassets/', { name: 'P', bundle_root: join(root, 'Show', 'p'), production_id: show.id })
    ).json
    const q = (
      await t.post('/api/projectassets/', { name: 'Q', bundle_root: join(root, 'Show', 'q'), production_id: show.id })
    ).json
    await t.post(`/api/projectassets/${p.id}/addasset/`, {
      asset_list: [
        { asset_id: a.id, type: 'video' },
        { asset_id: b.id, type: 'video' },
        { asset_id: s.id, type: 'audio' },
      ],
    })
    await t.post(`/api/projectassets/${q.id}/addasset/`, { asset_list: [{ asset_id: a.id, type: 'video' }] })
    const dated = (await t.get(`/api/projectassets/${p.id}/`)).json.date_mod
    expect((await t.request('DELETE', `/api/videoassets/${a.id}/`)).status).toBe(204)
    const [onP] = await rows(`resource=projectasset&id=${p.id}`)
    expect(onP).toMatchObject({
      user: 'admin',
      via: 'api',
      action: 'unlink',
      production: show.id,
      changes: { video_assets: { old: [a.id, b.id], new: [b.id] } },
    })
    expect(Object.keys(onP!.changes)).toEqual(['video_assets'])
    const [onQ] = await rows(`resource=projectasset&id=${q.id}`)
    expect(onQ).toMatchObject({ action: 'unlink', changes: { video_assets: { old: [a.id], new: [] } } })
    const after = (await t.get(`/api/projectassets/${p.id}/`)).json
    expect(after.date_mod > dated).toBe(true)
    expect(after.modified_by).toBe('admin')
  })

  test("an import and its task: the user's rows, via import", async () => {
    const path = file('Show/imported.mov')
    const r = await t.post('/api/asset/import/', {
      type: 'video',
      production: 'Show',
      asset: { asset_meta: { name: 'imp', path_file: path } },
    })
    await t.runner.idle()
    const all = await rows(`resource=videoasset&id=${r.json.asset_import_id}`)
    expect(all.at(-1)).toMatchObject({ action: 'create', user: 'admin', via: 'import' })
    // The task's end (6 done, or -1 where ffmpeg cannot read the test's file): the user's row too.
    expect(all[0]).toMatchObject({
      action: 'update',
      user: 'admin',
      via: 'import',
      changes: { status_asset: { old: 0, new: expect.any(Number) } },
    })
    expect((await t.get(`/api/videoassets/${r.json.asset_import_id}/`)).json.modified_by).toBe('admin')
    // Fields by the names the record shows: the import's approval is status_approval, in the create and in a re-import's update.
    expect(all.at(-1)!.changes.status_approval).toEqual({ old: null, new: 0 })
    expect(all.at(-1)!.changes).not.toHaveProperty('approval')
    await t.post('/api/asset/import/', {
      type: 'video',
      production: 'Show',
      asset: { asset_meta: { name: 'imp', path_file: path, approval: 1 } },
    })
    await t.runner.idle()
    const reimport = (await rows(`resource=videoasset&id=${r.json.asset_import_id}`)).find(
      (row) => row.changes.status_approval,
    )
    expect(reimport).toMatchObject({
      action: 'update',
      via: 'import',
      changes: { status_approval: { old: 0, new: 1 } },
    })
  })

  test("a project delete: the request's update, then the task's delete", async () => {
    const p = (
      await t.post('/api/projectassets/', { name: 'P', bundle_root: join(root, 'Show', 'p'), production_id: show.id })
    ).json
    expect((await t.request('DELETE', `/api/projectassets/${p.id}/`)).status).toBe(202)
    await t.runner.idle()
    const [deleted, marked] = await rows(`resource=projectasset&id=${p.id}`)
    expect(marked).toMatchObject({ action: 'update', changes: { is_production: { old: true, new: false } } })
    expect(deleted).toMatchObject({ action: 'delete', user: 'admin', via: 'task' })
  })

  test("the command line: a grant is in the production's history, a permission in the user's, both by system via cli", async () => {
    t.makeUser('ana')
    const before = (await rows('user=system')).length
    t.users.grant('ana', String(show.id), 'write')
    t.users.addPerm('ana', 'browser.change_videoasset')
    const [grant] = await rows(`resource=production&id=${show.id}`)
    expect(grant).toMatchObject({
      user: 'system',
      via: 'cli',
      action: 'update',
      changes: { 'access.ana': { old: null, new: 'write' } },
    })
    const [perm] = await rows('resource=user')
    expect(perm).toMatchObject({
      user: 'system',
      via: 'cli',
      changes: { 'perm.browser.change_videoasset': { old: false, new: true } },
    })
    expect((await rows('user=system')).length).toBe(before + 2)
    // user add, token create and revoke, passwords: test/cli/history.test.ts, through the commands themselves.
  })

  test('a production made by a user who is no superuser: its create row says the write access its creator got', async () => {
    const maker = t.makeUser('maker', { perms: ['browser.add_production'] })
    const made = await t.post('/api/productions/', { name: 'Made', storage_root: `${root}/Made` }, { key: maker })
    expect(made.status).toBe(201)
    const [created] = await rows(`resource=production&id=${made.json.id}`)
    expect(created).toMatchObject({
      user: 'maker',
      via: 'api',
      action: 'create',
      changes: { name: { old: null, new: 'Made' }, 'access.maker': { old: null, new: 'write' } },
    })
  })

  test('catalogue records: device, profile, custom metadata, set and hold duration creates and deletes', async () => {
    const profile = (await t.post('/api/transcodingprofiles/', { name: 'P' })).json
    const set = (await t.post('/api/custommetadatasets/', { name: 'S', description: '', content_type: 4 })).json
    const field = (await t.post('/api/custommetadata/', { key: 'k', value: 'K', custom_metadata_set: set.id })).json
    const hold = (
      await t.post('/api/assetholddurations/', {
        asset_type: 'videoasset',
        context_type: 'device',
        context: device.name,
        duration: 3,
      })
    ).json
    for (const [resource, id, path] of [
      ['assetholddurations', hold.id, 'assetholdduration'],
      ['custommetadata', field.id, 'custommetadata'],
      ['custommetadatasets', set.id, 'custommetadataset'],
      ['transcodingprofiles', profile.id, 'transcodingprofile'],
    ] as const) {
      expect((await t.request('DELETE', `/api/${resource}/${id}/`)).status).toBe(204)
      expect((await rows(`resource=${path}&id=${id}`)).map((r) => r.action)).toEqual(['delete', 'create'])
    }
    expect((await rows(`resource=device&id=${device.id}`)).map((r) => r.action)).toEqual(['create'])
  })
})

describe('GET /api/history/', () => {
  test('newest first, limit and offset, X-Total-Count and Link; filters by resource, id and user', async () => {
    for (let i = 0; i < 5; i++)
      await t.request('PATCH', `/api/devices/${device.id}/`, { body: { display_name: `Disk ${i}` } })
    const all = await rows(`resource=device&id=${device.id}`)
    expect(all.length).toBe(6)
    expect(all.map((r) => r.id)).toEqual([...all.map((r) => r.id)].sort((a, b) => b - a))
    const page = await t.get(`/api/history/?resource=device&id=${device.id}&limit=2&offset=2`)
    expect(page.headers.get('x-total-count')).toBe('6')
    expect(page.json.map((r: { id: number }) => r.id)).toEqual(all.slice(2, 4).map((r) => r.id))
    expect(page.headers.get('link')).toContain('rel="next"')
    expect(page.headers.get('link')).toContain('rel="prev"')
    expect((await rows('user=admin')).every((r) => r.user === 'admin')).toBe(true)
    expect(await rows('user=nobody')).toEqual([])
  })

  test('rows of records the user cannot read are left out; devices and the like are shown to all', async () => {
    const other = (await t.post('/api/productions/', { name: 'Other', storage_root: join(root, 'Other') })).json
    const mine = (await t.post('/api/videoassets/', { name: 'm', path_file: file('Show/m.mov'), production: show.id }))
      .json
    const theirs = (
      await t.post('/api/videoassets/', { name: 't', path_file: file('Other/t.mov'), production: other.id })
    ).json
    const reader = t.makeUser('reader', { read: [show.id] })
    const seen = await rows('', reader)
    const ids = (resource: string) => seen.filter((r) => r.resource === resource).map((r) => r.resource_id)
    expect(ids('videoasset')).toEqual([mine.id])
    expect(ids('production')).toEqual([show.id])
    expect(ids('device')).toEqual([device.id])
    expect(await rows(`resource=videoasset&id=${theirs.id}`, reader)).toEqual([])
    expect((await t.get('/api/history/', { key: reader })).headers.get('x-total-count')).toBe(String(seen.length))
  })

  test('bad filters and paging: 400 at the parameter, never a 500', async () => {
    for (const [query, parameter] of [
      ['limit=-1', 'limit'],
      ['offset=x', 'offset'],
      ['resource=nothing', 'resource'],
      ['id=abc', 'id'],
      ['user=', 'user'],
    ] as const)
      expectError(await t.get(`/api/history/?${query}`), 400, 'invalid', { parameter })
    for (const query of [
      'id=99999999999999999999',
      'user=%00',
      'resource=videoasset&id=1&limit=0',
      'limit=99999999999999999999&offset=99999999999999999999',
    ])
      expect((await t.get(`/api/history/?${query}`)).status).toBe(200)
    expectError(await t.get('/api/history/', { key: null }), 401, 'not_authenticated')
  })
})
