// The list filters medialoopster clients send (docs/api.md, Media assets and Project assets):
// production (id), is_archive and is_production (true/false/1/0) on the three media asset lists
// and on the project asset list; with each other, with path_file or bundle_root, counted in
// X-Total-Count, visibility still applied, a bad value a 400 at its parameter. One app of its
// own, so every expected list is exact.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { type TestApp, testApp } from '../helpers/app.ts'
import { expectError, expectErrors, folders } from '../helpers/envelope.ts'

type Flags = { is_archive: boolean; is_production: boolean }
type Made = Flags & { id: number; production: number; path: string }

const dirs = folders()
let t: TestApp
let root: string
let show: { id: number }
let other: { id: number }
/** What each list holds: every record made, as its single record shows it. */
const made: Record<string, Made[]> = {}
/** A reader of Show only, who also sees one asset of Other shared with Show. */
let readerKey: string
const shared: Record<string, number> = {}

/** The mix of each production: every combination in Show, two in Other. */
const MIX: [production: 'show' | 'other', flags: Flags][] = [
  ['show', { is_archive: false, is_production: true }],
  ['show', { is_archive: true, is_production: true }],
  ['show', { is_archive: true, is_production: false }],
  ['show', { is_archive: false, is_production: false }],
  ['other', { is_archive: false, is_production: true }],
  ['other', { is_archive: true, is_production: false }],
]
const MEDIA = ['audio', 'image', 'video'] as const
const LISTS = [...MEDIA.map((k) => `${k}assets`), 'projectassets'] as const

beforeAll(async () => {
  t = testApp(dirs.make('reelhouse-data-'))
  root = dirs.make()
  expect((await t.post('/api/devices/', { name: 'filter-disk', path: root })).status).toBe(201)
  show = (await t.post('/api/productions/', { name: 'Show', storage_root: `${root}/Show` })).json
  other = (await t.post('/api/productions/', { name: 'Other', storage_root: `${root}/Other` })).json
  const ids = { show: show.id, other: other.id }
  for (const kind of MEDIA) {
    made[`${kind}assets`] = []
    for (const [i, [p, flags]] of MIX.entries()) {
      const path_file = `${root}/${p}/${kind}-${i}.bin`
      const r = await t.post(`/api/${kind}assets/`, { name: `${kind} ${i}`, path_file, production: ids[p], ...flags })
      expect(r.status).toBe(201)
      made[`${kind}assets`]!.push({
        id: r.json.id,
        production: r.json.production,
        path: r.json.path_file,
        is_archive: r.json.is_archive,
        is_production: r.json.is_production,
      })
    }
  }
  // A project is created online; one whose delete is pending shows is_production false (the
  // runner of this app is not started, so the delete stays pending).
  made.projectassets = []
  for (const [i, [p, flags]] of MIX.entries()) {
    const bundle_root = `${root}/${p}/project-${i}/`
    mkdirSync(bundle_root, { recursive: true })
    const r = await t.post('/api/projectassets/', {
      name: `project ${i}`,
      bundle_root,
      production_id: ids[p],
      is_archive: flags.is_archive,
    })
    expect(r.status).toBe(201)
    if (!flags.is_production) expect((await t.request('DELETE', `/api/projectassets/${r.json.id}/`)).status).toBe(202)
    const shown = (await t.get(`/api/projectassets/${r.json.id}/`)).json
    made.projectassets.push({
      id: shown.id,
      production: shown.production,
      path: shown.bundle_root,
      is_archive: shown.is_archive,
      is_production: shown.is_production,
    })
  }
  // The setup holds what the tests rely on: every record as sent.
  for (const list of LISTS)
    expect(
      made[list]!.map(({ production, is_archive, is_production }) => ({ production, is_archive, is_production })),
    ).toEqual(MIX.map(([p, flags]) => ({ production: ids[p], ...flags })))

  readerKey = t.makeUser('show-reader', { read: [show.id] })
  for (const kind of MEDIA) {
    // The last asset of Other (archived, offline), shared with Show.
    shared[`${kind}assets`] = made[`${kind}assets`]!.at(-1)!.id
    t.db.$client
      .query('INSERT INTO media_asset_shares (asset_id, production_id) VALUES (?, ?)')
      .run(shared[`${kind}assets`]!, show.id)
  }
})

afterAll(() => {
  t.cleanup()
  dirs.cleanup()
})

/** The ids a list answers, and its X-Total-Count. */
async function listed(path: string, key?: string) {
  const r = await t.get(path, key === undefined ? {} : { key })
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`)
  return { ids: (r.json as { id: number }[]).map((a) => a.id), total: r.headers.get('x-total-count') }
}

/** What a list with these filters must answer: the records made that match, in id order. */
function expected(list: string, match: (m: Made) => boolean, visible: (m: Made) => boolean = () => true) {
  const ids = made[list]!.filter((m) => visible(m) && match(m))
    .map((m) => m.id)
    .sort((a, b) => a - b)
  return { ids, total: String(ids.length) }
}

describe.each(LISTS)('/api/%s/', (list) => {
  const base = `/api/${list}/`
  const pathFilter = list === 'projectassets' ? 'bundle_root' : 'path_file'

  test('production: only that production, counted; a production with none answers [] and 0', async () => {
    for (const p of [show, other])
      expect(await listed(`${base}?production=${p.id}`)).toEqual(expected(list, (m) => m.production === p.id))
    expect(await listed(`${base}?production=999999`)).toEqual({ ids: [], total: '0' })
    expect(expected(list, (m) => m.production === show.id).ids).toHaveLength(4)
  })

  test.each(['is_archive', 'is_production'] as const)('%s: true and 1, false and 0, each exact', async (flag) => {
    for (const [text, value] of [
      ['true', true],
      ['1', true],
      ['false', false],
      ['0', false],
    ] as const) {
      const want = expected(list, (m) => m[flag] === value)
      expect(want.ids.length).toBeGreaterThan(0)
      expect([text, await listed(`${base}?${flag}=${text}`)]).toEqual([text, want])
    }
  })

  test('all three together, and with paging: X-Total-Count counts every match', async () => {
    for (const [archive, online] of [
      [true, false],
      [false, true],
      [true, true],
      [false, false],
    ] as const) {
      const query = `production=${show.id}&is_archive=${archive}&is_production=${online ? 1 : 0}`
      const want = expected(
        list,
        (m) => m.production === show.id && m.is_archive === archive && m.is_production === online,
      )
      expect(want.ids).toHaveLength(1)
      expect(await listed(`${base}?${query}`)).toEqual(want)
    }
    const offline = expected(list, (m) => !m.is_production)
    expect(offline.ids).toHaveLength(3)
    expect(await listed(`${base}?is_production=false&limit=1&offset=1`)).toEqual({ ids: [offline.ids[1]!], total: '3' })
  })

  test(`with ${pathFilter}: the record only when it matches the other filters too`, async () => {
    const target = made[list]!.find((m) => m.is_archive && !m.is_production && m.production === show.id)!
    const at = `${base}?${pathFilter}=${encodeURIComponent(target.path)}`
    expect(await listed(at)).toEqual({ ids: [target.id], total: '1' })
    expect(await listed(`${at}&is_archive=true&is_production=false&production=${show.id}`)).toEqual({
      ids: [target.id],
      total: '1',
    })
    for (const miss of ['is_archive=false', 'is_production=1', `production=${other.id}`])
      expect([miss, await listed(`${at}&${miss}`)]).toEqual([miss, { ids: [], total: '0' }])
  })

  test('a user sees only what they may read, filters or not', async () => {
    const media = list !== 'projectassets'
    /** Show's records, and for media the asset of Other shared with Show. */
    const visible = (m: Made) => m.production === show.id || (media && m.id === shared[list])
    expect(await listed(`${base}?is_archive=true`, readerKey)).toEqual(expected(list, (m) => m.is_archive, visible))
    expect(await listed(`${base}?is_production=0`, readerKey)).toEqual(expected(list, (m) => !m.is_production, visible))
    // production names the asset's own production: Other's shared asset is there, nothing else of Other.
    expect(await listed(`${base}?production=${other.id}`, readerKey)).toEqual(
      media ? { ids: [shared[list]!], total: '1' } : { ids: [], total: '0' },
    )
  })

  test('a bad value is 400 invalid naming the parameter; several bad ones, one entry each', async () => {
    for (const bad of ['abc', '-1', '1.5', '', '%201', '0x10'])
      expectError(await t.get(`${base}?production=${bad}`), 400, 'invalid', { parameter: 'production' })
    for (const flag of ['is_archive', 'is_production'])
      for (const bad of ['yes', 'TRUE', 'True', '2', '', 'on'])
        expectError(await t.get(`${base}?${flag}=${bad}`), 400, 'invalid', { parameter: flag })
    const r = await t.get(`${base}?production=x&is_archive=no&is_production=maybe`)
    expectErrors(
      r,
      400,
      ['production', 'is_archive', 'is_production'].map((parameter) => ({ code: 'invalid', where: { parameter } })),
    )
    expect(r.json.errors[0].detail).toBe('production must be a whole number (0 or more, in decimal digits).')
    expect(r.json.errors[1].detail).toBe('Must be one of: true, false, 1, 0.')
  })
})

describe.each(MEDIA)('/api/%sassets/: device and status_approval (the media lists only)', (kind) => {
  const base = `/api/${kind}assets/`
  test('device: the assets whose file lies there; with is_production=false, its offline ones; status_approval: approved or pending', async () => {
    const list = made[`${kind}assets`]!
    const second = dirs.make()
    const disk = await t.post('/api/devices/', { name: `second-${kind}`, path: second })
    expect(disk.status).toBe(201)
    // One asset of Show moved to the other device, another approved (straight in the catalogue).
    const [moved, approved] = [list[0]!, list[3]!]
    t.db.$client.run('UPDATE media_assets SET device = ? WHERE id = ?', [disk.json.id, moved.id])
    t.db.$client.run('UPDATE media_assets SET approval = 1 WHERE id = ?', [approved.id])
    try {
      const first = (await t.get(`${base}${list[1]!.id}/`)).json.device as number
      expect(await listed(`${base}?device=${disk.json.id}`)).toEqual({ ids: [moved.id], total: '1' })
      expect(await listed(`${base}?device=${first}`)).toEqual(expected(`${kind}assets`, (m) => m.id !== moved.id))
      expect(await listed(`${base}?device=${first}&is_production=false`)).toEqual(
        expected(`${kind}assets`, (m) => m.id !== moved.id && !m.is_production),
      )
      expect(await listed(`${base}?device=${disk.json.id}&path_file=${encodeURIComponent(moved.path)}`)).toEqual({
        ids: [moved.id],
        total: '1',
      })
      expect(await listed(`${base}?device=${first}&path_file=${encodeURIComponent(moved.path)}`)).toEqual({
        ids: [],
        total: '0',
      })
      expect(await listed(`${base}?status_approval=1`)).toEqual({ ids: [approved.id], total: '1' })
      expect(await listed(`${base}?status_approval=0&production=${show.id}`)).toEqual(
        expected(`${kind}assets`, (m) => m.id !== approved.id && m.production === show.id),
      )
      expect(await listed(`${base}?status_approval=1`, readerKey)).toEqual({ ids: [approved.id], total: '1' })
      expect(await listed(`${base}?device=${disk.json.id}&status_approval=1`)).toEqual({ ids: [], total: '0' })
      for (const bad of ['x', '-1', ''])
        expectError(await t.get(`${base}?device=${bad}`), 400, 'invalid', { parameter: 'device' })
      for (const bad of ['2', 'true', 'approved', ''])
        expectError(await t.get(`${base}?status_approval=${bad}`), 400, 'invalid', { parameter: 'status_approval' })
    } finally {
      t.db.$client.run('UPDATE media_assets SET device = ? WHERE id = ?', [
        (await t.get(`${base}${list[1]!.id}/`)).json.device,
        moved.id,
      ])
      t.db.$client.run('UPDATE media_assets SET approval = 0 WHERE id = ?', [approved.id])
    }
  })
})

test('the project list takes no device or status_approval filter (unknown parameters are ignored)', async () => {
  expect(await listed('/api/projectassets/?device=999999&status_approval=1')).toEqual(
    expected('projectassets', () => true),
  )
})

test('the version-0 path /api/project/ filters as /api/projectassets/ does', async () => {
  const want = expected('projectassets', (m) => m.production === show.id && !m.is_production)
  expect(await listed(`/api/project/?production=${show.id}&is_production=false`)).toEqual(want)
  expectError(await t.get('/api/project/?is_archive=maybe'), 400, 'invalid', { parameter: 'is_archive' })
})
