// Deep pages (issue 9): from KEYED_FROM on, a page's ids come from a sub-select that skips index
// entries, not table rows (http/lists.ts). For every list, each of its filters alone, every pair
// and all at once, as a superuser and as a reader of one production: the statement the request ran
// has that plan (EXPLAIN QUERY PLAN), gives the rows of the plain LIMIT/OFFSET query at the first,
// a middle, the last and a page beyond the end, and over HTTP the page is the slice of the whole list.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Statement } from 'bun:sqlite'
import { listNames } from '../../src/app.ts'
import { KEYED_FROM, PAGE } from '../../src/http/lists.ts'
import { type TestApp, testApp } from '../helpers/app.ts'

const N = 500
let t: TestApp
let readerKey: string
/** The catalogue's own prepare, for the statements the tests run themselves (not recorded). */
let prepare: (sql: string) => Statement
/** Every keyed statement a request prepared, with the values it was run with. */
const ran: { sql: string; params: unknown[] }[] = []
/** Every page statement (first or keyed) the lists prepared, with the values it was first run with. */
const pages = new Map<string, unknown[]>()
/** What tells a keyed page (http/lists.ts `keyed`) from a first page. */
const isKeyed = (sql: string) => sql.includes(' where "id" in (select "id" from ')

/** A value for each filter a list takes; a filter added without one here fails the first test. */
const SAMPLES: Record<string, string[]> = {
  path: ['/srv/d7/'],
  storage_root: ['/srv/d1/show-1/'],
  content_type_name: ['videoasset'],
  content_type_id: ['2'],
  path_file: ['/srv/media/9.bin'],
  production: ['1', '2'],
  is_archive: ['true', '0'],
  pictures: ['true', '0'],
  is_production: ['1', 'false'],
  asset_path: ['/srv/in/3.bin'],
  asset_import_id: ['3'],
  asset_type: ['videoasset'],
  context_type: ['device'],
  bundle_root: ['/srv/projects/12/'],
  state: ['done', 'queued'],
  kind: ['import', 'copy'],
  projectasset: ['5'],
  audioasset: ['7'],
  imageasset: ['8'],
  videoasset: ['9'],
  device: ['1'],
  status_approval: ['1', '0'],
  resource: ['videoasset', 'device'],
  id: ['3'],
  user: ['admin', 'system'],
  // Tasks take the first two, import logs the next two, media lists the rest and id (another
  // list's ordering is a 400, skipped).
  ordering: ['-date_end', 'id', '-failed', '-id', 'name', '-duration', 'timecode', '-date_add'],
  // The media lists' technical facets (mediaassets/facets.ts).
  codec: ['prores', 'h264'],
  width: ['1920'],
  height: ['1080', '2160'],
  resolution: ['1920x1080'],
  fps: ['25', '23.976'],
  duration_min: ['10'],
  duration_max: ['600.5'],
  timecode_from: ['10:00:00:00'],
  timecode_to: ['23:59:59;29'],
  audio_channels: ['2', '4'],
}

/** A media asset's technical, as a probe writes it (the facets read it), for the i-th asset of the seed. */
function technicalOf(i: number, kind: string): string {
  const codec = ['prores', 'h264', 'dnxhd'][i % 3]!
  const size = i % 4 ? { width: 1920, height: 1080 } : { width: 3840, height: 2160 }
  const streams = Array.from({ length: i % 3 }, (_, s) => ({ codec: 'pcm_s24le', channels: s + 1 }))
  const timecode = `${String(i % 24).padStart(2, '0')}:00:${String(i % 60).padStart(2, '0')}:00`
  if (kind === 'video')
    return JSON.stringify({
      video_codec: codec,
      fps: ['25/1', '24000/1001', '30000/1001'][i % 3],
      duration: (i % 50) * 250,
      ...size,
      offset_string: i % 5 ? timecode : undefined,
      audio_streams: streams,
    })
  if (kind === 'audio')
    return JSON.stringify({
      duration: String((i % 70) * 10.5),
      time_code: i % 5 ? timecode : undefined,
      audio_streams: streams,
    })
  return JSON.stringify({ ...size, format: ['jpeg', 'png'][i % 2] })
}

/** Tables of a few rows written by hand: their lists may read the table (a page of it is the table). */
const SMALL = new Set([
  'devices',
  'productions',
  'transcoding_profiles',
  'custom_metadata',
  'custom_metadata_sets',
  'content_types',
  'asset_hold_durations',
])

beforeAll(() => {
  t = testApp()
  const db = t.db.$client
  const now = '2026-01-01T00:00:00.000000Z'
  db.transaction(() => {
    for (let i = 1; i <= 12; i++)
      db.run('INSERT INTO devices (name, display_name, path, date_add) VALUES (?, ?, ?, ?)', [
        `d${i}`,
        `Disk ${i}`,
        `/srv/d${i}/`,
        now,
      ])
    for (let i = 1; i <= 6; i++)
      db.run(
        `INSERT INTO productions (name, codename, storage_root, proxy_root, upload_device, audioasset_device, imageasset_device,
        videoasset_device, date_add) VALUES (?, ?, ?, ?, 1, 1, 1, 1, ?)`,
        [`Show ${i}`, `show-${i}`, `/srv/d${(i % 2) + 1}/show-${i}/`, `/srv/p${i}/`, now],
      )
    for (let i = 1; i <= 9; i++) db.run('INSERT INTO transcoding_profiles (name) VALUES (?)', [`p${i}`])
    for (let i = 1; i <= 8; i++)
      db.run('INSERT INTO custom_metadata_sets (name, description, content_type) VALUES (?, ?, ?)', [
        `s${i}`,
        '',
        (i % 4) + 1,
      ])
    for (let i = 1; i <= 40; i++)
      db.run('INSERT INTO custom_metadata (key, value, "order", custom_metadata_set) VALUES (?, ?, ?, ?)', [
        `k${i}`,
        'v',
        i,
        (i % 8) + 1,
      ])
    for (let i = 1; i <= 20; i++)
      db.run('INSERT INTO asset_hold_durations (asset_type, context_type, context, duration) VALUES (?, ?, ?, ?)', [
        ['videoasset', 'audioasset'][i % 2]!,
        ['device', 'production'][i % 3 ? 0 : 1]!,
        `c${i}`,
        i,
      ])
    const kinds = ['audio', 'image', 'video']
    for (let i = 1; i <= 3 * N; i++)
      db.run(
        `INSERT INTO media_assets (kind, name, production, device, path_file, is_archive, is_production, approval, date_add, date_mod, technical)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          kinds[i % 3]!,
          // Names that sort otherwise than ids (and repeat: an order's ties go by id).
          `${['b', 'A', 'c'][i % 3]}${(i * 7) % 100}`,
          i % 5 ? 1 : 2,
          i % 11 ? 1 : 2,
          `/srv/media/${i}.bin`,
          i % 7 === 1 ? 1 : 0,
          i % 4 ? 1 : 0,
          i % 2,
          // Dates that sort otherwise than ids, with ties.
          `2026-01-${String(1 + ((i * 13) % 28)).padStart(2, '0')}T00:00:00.000000Z`,
          now,
          technicalOf(i, kinds[i % 3]!),
        ],
      )
    // Assets of production 2 shared with 1: the reader sees them through media_asset_shares.
    for (let i = 5; i <= 3 * N; i += 35)
      db.run('INSERT INTO media_asset_shares (asset_id, production_id) VALUES (?, 1)', [i])
    for (let i = 1; i <= N; i++)
      db.run(
        `INSERT INTO project_assets (name, bundle_root, production, device, is_archive, is_production, date_add, date_mod)
        VALUES (?, ?, ?, 1, ?, ?, ?, ?)`,
        [`p${i}`, `/srv/projects/${i}/`, i % 3 ? 1 : 2, i % 4 === 0 ? 1 : 0, i % 5 ? 1 : 0, now, now],
      )
    const targets = ['projectasset', 'audioasset', 'imageasset', 'videoasset', 'device']
    for (let i = 1; i <= N; i++)
      db.run('INSERT INTO tasks (kind, state, target, production, date_add) VALUES (?, ?, ?, ?, ?)', [
        ['import', 'copy', 'scan', 'delete'][i % 4]!,
        ['done', 'queued', 'failed', 'running'][i % 4 === 1 ? 1 : i % 3]!,
        JSON.stringify({ [targets[i % 5]!]: i % 10 }),
        i % 7 ? (i % 2) + 1 : null,
        now,
      ])
    for (let i = 1; i <= N; i++)
      db.run(
        `INSERT INTO import_logs (asset_type, asset_path, status, error, payload, asset_import_id, production, date_add, date_mod)
        VALUES ('videoasset', ?, 'done', ?, '{}', ?, ?, ?, ?)`,
        [
          `/srv/in/${i % 20}.bin`,
          i % 9 ? '' : 'it failed',
          i % 13 ? i % 7 : null,
          i % 6 ? (i % 2) + 1 : null,
          now,
          now,
        ],
      )
    const resources = ['videoasset', 'device', 'projectasset', 'production', 'audioasset']
    for (let i = 1; i <= N; i++) {
      const resource = resources[i % 5]!
      db.run(
        `INSERT INTO history (date, user_id, username, via, resource, resource_id, action, changes, production) VALUES (?, ?, ?, 'api', ?, ?, 'update', '{}', ?)`,
        [now, i % 3 ? 1 : null, i % 3 ? 'admin' : null, resource, i % 7, resource === 'device' ? null : (i % 2) + 1],
      )
    }
  })()
  readerKey = t.makeUser('reader', { read: [1] })
  // Every page statement the lists prepare, with what it runs with (db.query caches statements; a
  // list without filters prepares its own), the keyed ones in `ran`.
  const watch = (make: (sql: string) => Statement) => (sql: string) => {
    const statement = make(sql)
    if (!sql.startsWith('select ') || !sql.includes(PAGE)) return statement
    const keyed = isKeyed(sql)
    return new Proxy(statement, {
      get: (target, name) => {
        if (name === 'all')
          return (...params: unknown[]) => {
            if (keyed) ran.push({ sql, params })
            if (!pages.has(sql)) pages.set(sql, params)
            return target.all(...(params as never[]))
          }
        const value = Reflect.get(target, name)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  }
  prepare = db.prepare.bind(db) as typeof prepare
  db.query = watch(db.query.bind(db)) as typeof db.query
  db.prepare = watch(prepare) as typeof db.prepare
  // Thousands of rows, each written to a dozen indexes and two search indexes: more than the default 5 s on a busy machine.
}, 60_000)

afterAll(() => t.cleanup())

/** Each filter alone, every pair and all at once, with each sample value of the filter. */
function combinations(filters: string[]): Record<string, string>[] {
  const sets = [
    [],
    ...filters.map((f) => [f]),
    ...filters.flatMap((f, i) => filters.slice(i + 1).map((g) => [f, g])),
    ...(filters.length > 2 ? [filters] : []),
  ]
  return sets.flatMap((set) => {
    const values = Math.max(2, ...set.map((f) => SAMPLES[f]!.length))
    return Array.from({ length: values }, (_, v) =>
      Object.fromEntries(set.map((f) => [f, SAMPLES[f]![v % SAMPLES[f]!.length]!])),
    )
  })
}

const lists = () => {
  const names = listNames(t.app.routes as never)
  return names.map((name) => {
    const route = (
      t.app.routes as unknown as {
        method: string
        path: string
        hooks: { query?: { properties: Record<string, unknown> } }
      }[]
    ).find((r) => r.method === 'GET' && r.path === `/api/${name}/`)!
    return {
      name,
      filters: Object.keys(route.hooks.query?.properties ?? {}).filter((p) => p !== 'limit' && p !== 'offset'),
    }
  })
}

/** The naive query the keyed one stands for: the same head, WHERE and values, LIMIT/OFFSET on the rows. */
function naiveOf(sql: string): { table: string; naive: string } {
  // Newest first (the history, tasks) and the tasks' other orders page the same way, in their order.
  // The media lists' orders by duration and timecode are expressions (db/facets.ts), parentheses and all.
  const m =
    /^(select .+? from ("[^"]+")) where "id" in \(select "id" from \2(.*) order by (.+?) limit \+\? offset \?\) order by \4$/s.exec(
      sql,
    )
  if (!m) throw new Error(`not a keyed page: ${sql}`)
  return { table: m[2]!.slice(1, -1), naive: `${m[1]}${m[3]} order by ${m[4]}${PAGE}` }
}

/** The plan lines of the sub-select (under LIST SUBQUERY), correlated sub-queries included. */
function innerPlan(sql: string, params: unknown[]): string[] {
  const rows = t.db.$client.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as {
    id: number
    parent: number
    detail: string
  }[]
  const inner = new Set(rows.filter((r) => r.detail.startsWith('LIST SUBQUERY')).map((r) => r.id))
  const lines: string[] = []
  for (const r of rows) if (inner.has(r.parent)) inner.add(r.id), lines.push(r.detail)
  return lines
}

/**
 * A search by every column of a unique index: one table row read at most, nothing skipped. Also
 * an index whose columns a partial unique index holds too (media_assets_path_kind beside
 * media_assets_online_path): one row in production per key, and the few offline assets that were
 * last seen at that path.
 */
function oneRow(line: string): boolean {
  const m = /USING INDEX (\w+) \((.*)\)$/.exec(line)
  if (!m) return false
  const db = t.db.$client
  const table = line.split(' ')[1]!
  const columnsOf = (index: string) =>
    (db.query(`PRAGMA index_info("${index}")`).all() as { name: string }[]).map((c) => c.name).join(',')
  const indexes = db.query(`PRAGMA index_list("${table}")`).all() as { name: string; unique: number }[]
  const unique = indexes.some((i) => i.unique && (i.name === m[1] || columnsOf(i.name) === columnsOf(m[1]!)))
  const columns = db.query(`PRAGMA index_info("${m[1]}")`).all().length
  return unique && m[2]!.split(' AND ').filter((term) => term.endsWith('=?')).length === columns
}

describe('deep pages skip through an index', () => {
  test('every list filter has a sample value, and every list and filter set ran a keyed page', async () => {
    const all = lists()
    expect(all.flatMap((l) => l.filters).filter((f) => !SAMPLES[f])).toEqual([])
    for (const { name, filters } of all)
      for (const filter of combinations(filters))
        for (const key of [t.adminKey, readerKey]) {
          const before = ran.length
          const r = await t.get(
            `/api/${name}/?${new URLSearchParams({ ...filter, limit: '7', offset: String(KEYED_FROM) })}`,
            { key },
          )
          // custommetadata refuses both of its filters together (a 400, no query).
          if (r.status === 400) continue
          expect({ name, filter, status: r.status }).toEqual({ name, filter, status: 200 })
          expect({ name, filter, ran: ran.length > before }).toEqual({ name, filter, ran: true })
        }
  }, 60_000)

  test('the sub-select reads no rows of the table, only index entries (tables of a few rows excepted)', () => {
    const bad: { sql: string; plan: string[] }[] = []
    const seen = new Set<string>()
    for (const { sql, params } of ran) {
      if (seen.has(sql)) continue
      seen.add(sql)
      // A technical facet, or an order by one (db/facets.ts), is JSON in the row: an index holds
      // one facet's expression, and a second facet, an order or a facet the kind lacks is read from
      // the rows (test/search/facets.test.ts holds each facet alone to its index).
      if (sql.includes('json_extract(') || / and 0\b/.test(sql)) continue
      // A path names the few assets last seen there (one in production at most): in another order
      // than id, those rows are read and sorted.
      if (sql.includes('"path_file" = ?') && !/ order by "id"( desc)? limit/.test(sql)) continue
      const { table } = naiveOf(sql)
      const plan = innerPlan(sql, params)
      const own = plan.filter((line) => new RegExp(`^(SCAN|SEARCH) ${table}\\b`).test(line))
      const covered =
        own.length > 0 &&
        own.every(
          (line) => line.includes('USING COVERING INDEX') || line.includes('USING INTEGER PRIMARY KEY') || oneRow(line),
        )
      if (!covered && !SMALL.has(table)) bad.push({ sql, plan })
    }
    expect(seen.size).toBeGreaterThan(100)
    expect(bad).toEqual([])
  })

  test('the keyed page is the naive page at the first, a middle, the last and a page beyond the end', () => {
    const seen = new Set<string>()
    let compared = 0
    for (const { sql, params } of ran) {
      const where = params.slice(0, -2)
      const id = sql + JSON.stringify(where)
      if (seen.has(id)) continue
      seen.add(id)
      const { naive } = naiveOf(sql)
      const count = (
        t.db.$client
          .query(
            naive
              .replace(/^select .+? from /s, 'select count(*) as n from (select "id" from ')
              .replace(/ limit \+\? offset \?$/, ')'),
          )
          .get(...(where as never[])) as { n: number }
      ).n
      for (const [limit, offset] of [
        [10, 0],
        [10, Math.floor(count / 2)],
        [10, Math.max(0, count - 10)],
        [3, count - 1],
        [10, count],
        [10, count + 50],
      ] as const) {
        if (offset < 0) continue
        const keyedRows = prepare(sql).all(...(where as never[]), limit, offset)
        const naiveRows = prepare(naive).all(...(where as never[]), limit, offset)
        expect({ sql, offset, rows: keyedRows }).toEqual({ sql, offset, rows: naiveRows })
        compared++
      }
    }
    expect(compared).toBeGreaterThan(500)
  }, 120_000)

  test('over HTTP a deep page is the slice of the whole (streamed) list, with filters, for a reader too', async () => {
    const cases: [string, Record<string, string>][] = [
      ['videoassets', {}],
      ['audioassets', { production: '1' }],
      ['imageassets', { is_archive: '0', is_production: 'true' }],
      ['videoassets', { device: '1', is_production: 'false' }],
      ['audioassets', { status_approval: '1', production: '1' }],
      ['projectassets', {}],
      ['projectassets', { production: '1', is_production: '1' }],
      ['tasks', {}],
      ['tasks', { kind: 'import' }],
      ['tasks', { state: 'done' }],
      ['tasks', { videoasset: '3' }],
      ['tasks', { ordering: 'id' }],
      ['tasks', { ordering: '-date_end', kind: 'scan' }],
      ['importlogs', {}],
      ['importlogs', { ordering: '-failed' }],
      ['importlogs', { ordering: '-failed', asset_path: '/srv/in/9.bin' }],
      ['importlogs', { ordering: '-id' }],
      ['importlogs', { asset_import_id: '3' }],
      ['importlogs', { asset_import_id: '5', ordering: '-failed' }],
    ]
    expect(((await t.get('/api/videoassets/', { key: readerKey })).json as unknown[]).length).toBeGreaterThan(
      KEYED_FROM + 50,
    )
    for (const [name, filter] of cases)
      for (const key of [t.adminKey, readerKey]) {
        const whole = (await t.get(`/api/${name}/?${new URLSearchParams(filter)}`, { key })).json as { id: number }[]
        if (key === t.adminKey) expect(whole.length).toBeGreaterThan(5)
        for (const offset of [
          KEYED_FROM,
          Math.floor(whole.length / 2),
          Math.max(0, whole.length - 5),
          whole.length + 1,
        ]) {
          const page = await t.get(
            `/api/${name}/?${new URLSearchParams({ ...filter, limit: '10', offset: String(offset) })}`,
            { key },
          )
          expect({ name, filter, offset, page: page.json }).toEqual({
            name,
            filter,
            offset,
            page: whole.slice(offset, offset + 10),
          })
        }
      }
  })
})

describe("a page's plan does not depend on its limit", () => {
  // A LIMIT bound as `?` is read by SQLite's planner, which compiles the statement again each time
  // a value is bound (every request) and, with a LIMIT of 1, picked another index and a sort for
  // some filtered lists. PAGE (`limit +? offset ?`) hides the value: one plan for every limit.
  test('every list and filter set, first pages and deep ones: the plan of limit 1 is the plan of limit 1000 and of a written LIMIT 50', async () => {
    for (const { name, filters } of lists())
      for (const filter of combinations(filters))
        for (const key of [t.adminKey, readerKey]) {
          const r = await t.get(`/api/${name}/?${new URLSearchParams({ ...filter, limit: '1', offset: '0' })}`, { key })
          if (r.status !== 400) expect({ name, filter, status: r.status }).toEqual({ name, filter, status: 200 })
        }
    const plan = (sql: string, params: unknown[]) =>
      (t.db.$client.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as { detail: string }[]).map(
        (r) => r.detail,
      )
    const differ: { sql: string; one: string[]; many: string[]; written: string[] }[] = []
    let firstPages = 0
    for (const [sql, params] of pages) {
      const where = params.slice(0, -2)
      if (!isKeyed(sql)) firstPages++
      const one = plan(sql, [...where, 1, 0])
      const many = plan(sql, [...where, 1000, 0])
      const written = plan(sql.replace(PAGE, ' limit 50 offset ?'), [...where, 0])
      if (JSON.stringify(one) !== JSON.stringify(many) || JSON.stringify(one) !== JSON.stringify(written))
        differ.push({ sql, one, many, written })
    }
    expect(firstPages).toBeGreaterThan(200)
    expect(differ).toEqual([])
  }, 60_000)
})
