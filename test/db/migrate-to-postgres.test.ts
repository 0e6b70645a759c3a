// `reelhouse migrate-to-postgres` (src/db/pg/copy.ts) on a real PostgreSQL, skipped where none is
// installed. A SQLite catalogue is built the way users build one, through the HTTP API and the
// command line (productions, devices, users, groups, keys, a session, imports with technical JSON
// whose key order matters, keywords, projects and their links, shots, sequences, markers, hold
// durations, custom metadata, tasks, history, and deleted last rows, so that sqlite_sequence runs
// ahead of the highest id), then copied, in this process and as `bun src/main.ts`. Every table of
// schema.pg.ts is then read on both sides through drizzle with its schema, and the rows must be
// the same, value for value and type for type, JSON keys in their order; where PostgreSQL's
// search is installed, its documents must be those its own views make of the copied tables. Then
// what the copy must refuse: a catalogue in use (a second run), a row PostgreSQL cannot take (the
// target stays empty), a live serve, and the mistakes of the invocation.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL, spawn } from 'bun'
import { asc, eq, getTableColumns } from 'drizzle-orm'
import { drizzle as drizzlePg } from 'drizzle-orm/bun-sql'
import { drizzle as drizzleSqlite } from 'drizzle-orm/bun-sqlite'
import { type PgColumn, PgTable, getTableConfig } from 'drizzle-orm/pg-core'
import { SQLiteTable, getTableConfig as getSqliteTableConfig } from 'drizzle-orm/sqlite-core'
import { copyOrder } from '../../src/db/pg/copy.ts'
import * as pgSchema from '../../src/db/schema.pg.ts'
import * as sqliteSchema from '../../src/db/schema.ts'
import { type TestApp, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { IMPORT, importBody } from '../helpers/imports.ts'
import { freshDatabase, hasPostgres } from '../helpers/pg.ts'
import { lines, runCli, runInProcess, SOURCE_CLI, TEST_TIMEOUT_MS } from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

const PG_TABLES = (Object.values(pgSchema) as unknown[]).filter((v): v is PgTable => v instanceof PgTable)
const SQLITE_TABLES = new Map(
  (Object.values(sqliteSchema) as unknown[])
    .filter((v): v is SQLiteTable => v instanceof SQLiteTable)
    .map((t) => [getSqliteTableConfig(t).name, t]),
)
const nameOf = (t: PgTable) => getTableConfig(t).name
/** The tables with an identity, and its column. */
const IDENTITIES = PG_TABLES.flatMap((t) => {
  const id = (Object.values(getTableColumns(t)) as PgColumn[]).find((c) => c.generatedIdentity)
  return id ? [{ table: nameOf(t), column: id.name }] : []
})

const clients: SQL[] = []
function connect(url: string): SQL {
  const sql = new SQL(url)
  clients.push(sql)
  return sql
}
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()))
})

/** The columns a table's rows are ordered by: its primary key, else every column. */
function orderColumns(table: PgTable): string[] {
  const config = getTableConfig(table)
  const key =
    config.primaryKeys[0]?.columns.map((c) => c.name) ?? config.columns.filter((c) => c.primary).map((c) => c.name)
  return key.length ? key : config.columns.map((c) => c.name)
}

/**
 * A row as text that tells every difference apart: its columns by name, each value as JSON, so
 * that 1 and "1", 1 and true, and {"a":1,"b":2} and {"b":2,"a":1} all differ.
 */
const rowText = (row: Record<string, unknown>) =>
  JSON.stringify(
    Object.keys(row)
      .sort()
      .map((k) => [k, row[k]]),
  )

/** Every table of schema.pg.ts, its rows in key order, read from the SQLite catalogue through drizzle and schema.ts. */
function sqliteRows(file: string): Record<string, string[]> {
  const client = new Database(file, { readonly: true })
  try {
    const db = drizzleSqlite({ client, schema: sqliteSchema })
    return Object.fromEntries(
      PG_TABLES.map((pg) => {
        const table = SQLITE_TABLES.get(nameOf(pg))!
        const columns = new Map(Object.values(getTableColumns(table)).map((c) => [c.name, c]))
        const rows = db
          .select()
          .from(table)
          .orderBy(...orderColumns(pg).map((name) => asc(columns.get(name)!)))
          .all() as Record<string, unknown>[]
        return [nameOf(pg), rows.map(rowText)]
      }),
    )
  } finally {
    client.close()
  }
}

/** The same, from the PostgreSQL catalogue through drizzle and schema.pg.ts. */
async function pgRows(url: string): Promise<Record<string, string[]>> {
  const db = drizzlePg({ client: connect(url), schema: pgSchema })
  const out: Record<string, string[]> = {}
  for (const pg of PG_TABLES) {
    const columns = new Map((Object.values(getTableColumns(pg)) as PgColumn[]).map((c) => [c.name, c]))
    const rows = (await db
      .select()
      .from(pg)
      .orderBy(...orderColumns(pg).map((name) => asc(columns.get(name)!)))) as Record<string, unknown>[]
    out[nameOf(pg)] = rows.map(rowText)
  }
  return out
}

/** Every json column of schema.pg.ts, with the columns its table's rows are ordered by. */
const JSON_COLUMNS = PG_TABLES.flatMap((t) =>
  getTableConfig(t)
    .columns.filter((c) => c.getSQLType() === 'json')
    .map((c) => ({
      table: nameOf(t),
      column: c.name,
      order: orderColumns(t)
        .map((o) => `"${o}"`)
        .join(', '),
    })),
)

/** The text of every json column on SQLite, as stored, by `table.column`, rows in key order. */
function sqliteJsonTexts(file: string): Record<string, string[]> {
  const client = new Database(file, { readonly: true })
  try {
    return Object.fromEntries(
      JSON_COLUMNS.map(({ table, column, order }) => [
        `${table}.${column}`,
        client
          .query<{ v: string }, []>(`SELECT "${column}" AS v FROM "${table}" ORDER BY ${order}`)
          .all()
          .map((r) => r.v),
      ]),
    )
  } finally {
    client.close()
  }
}

/** The same on PostgreSQL: the json values' text as the server keeps it. */
async function jsonTexts(url: string): Promise<Record<string, string[]>> {
  const sql = connect(url)
  const out: Record<string, string[]> = {}
  for (const { table, column, order } of JSON_COLUMNS)
    out[`${table}.${column}`] = (
      (await sql.unsafe(`SELECT "${column}"::text AS v FROM "${table}" ORDER BY ${order}`)) as { v: string }[]
    ).map((r) => r.v)
  return out
}

/**
 * Search's documents as the copy left them, and as search's own views make them of the copied
 * tables now; undefined when the catalogue has no search (its migration is not there).
 */
async function searchDocuments(url: string): Promise<{ stored: string[]; made: string[] } | undefined> {
  const sql = connect(url)
  const [has] = (await sql.unsafe(
    `SELECT to_regclass('search.docs') IS NOT NULL AND to_regclass('search.media_documents') IS NOT NULL
       AND to_regclass('search.project_documents') IS NOT NULL AS yes`,
  )) as { yes: boolean }[]
  if (!has!.yes) return undefined
  const columns = 'doc, production, online, shared::text AS shared, tsv::text AS tsv, tri_name, tri_path'
  const text = (rows: unknown[]) => rows.map((r) => JSON.stringify(r))
  return {
    stored: text(await sql.unsafe(`SELECT ${columns} FROM search.docs ORDER BY doc`)),
    made: text(
      await sql.unsafe(
        `SELECT ${columns} FROM (SELECT * FROM search.media_documents UNION ALL SELECT * FROM search.project_documents) AS d ORDER BY doc`,
      ),
    ),
  }
}

/** The catalogue's own triggers and whether each is on. */
const triggers = async (url: string) =>
  (await connect(url).unsafe(
    'SELECT tgrelid::regclass::text AS table, tgname AS name, tgenabled AS enabled FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2',
  )) as { table: string; name: string; enabled: string }[]

/** Rows per table in the PostgreSQL catalogue. */
async function pgCounts(url: string): Promise<Record<string, number>> {
  const sql = connect(url)
  const out: Record<string, number> = {}
  for (const t of PG_TABLES)
    out[nameOf(t)] = Number(((await sql.unsafe(`SELECT count(*) AS n FROM "${nameOf(t)}"`)) as { n: string }[])[0]!.n)
  return out
}

/** The highest id each table with an identity ever handed out on SQLite: its highest id or its sqlite_sequence entry. */
function highestIdsUsed(file: string): Record<string, number> {
  const client = new Database(file, { readonly: true })
  try {
    const seq = new Map(
      client
        .query<{ name: string; seq: number }, []>('SELECT name, seq FROM sqlite_sequence')
        .all()
        .map((r) => [r.name, r.seq]),
    )
    return Object.fromEntries(
      IDENTITIES.map(({ table, column }) => {
        const max = client.query<{ n: number | null }, []>(`SELECT max("${column}") AS n FROM "${table}"`).get()!.n ?? 0
        return [table, Math.max(max, seq.get(table) ?? 0)]
      }),
    )
  } finally {
    client.close()
  }
}

/** A copy of the catalogue of `from` in a new data folder (VACUUM INTO: one consistent file). */
function copyCatalogue(from: string): string {
  const dir = tempDir('reelhouse-topg-')
  const client = new Database(join(from, 'reelhouse.db'))
  try {
    client.run('VACUUM INTO ?', [join(dir, 'reelhouse.db')])
  } finally {
    client.close()
  }
  return dir
}

/** Runs `sql` on the catalogue of the data folder `dir` through a connection of its own. */
function writeSqlite(dir: string, sql: string) {
  const client = new Database(join(dir, 'reelhouse.db'))
  try {
    client.run(sql)
  } finally {
    client.close()
  }
}

const maxId = (dir: string, table: string) => {
  const client = new Database(join(dir, 'reelhouse.db'), { readonly: true })
  try {
    return client.query<{ n: number | null }, []>(`SELECT max(id) AS n FROM "${table}"`).get()!.n ?? 0
  } finally {
    client.close()
  }
}

const sqliteCount = (dir: string, table: string) => {
  const client = new Database(join(dir, 'reelhouse.db'), { readonly: true })
  try {
    return client.query<{ n: number }, []>(`SELECT count(*) AS n FROM "${table}"`).get()!.n
  } finally {
    client.close()
  }
}

/** The error line of a run, if it said one. */
const errorOf = (r: { stderr: string }) => lines(r.stderr).find((l) => l.startsWith('reelhouse: '))

/** Throws with the answer when a request did not end as expected. */
function ok<T extends { status: number; text: string; json: any }>(reply: T, status = [200, 201, 204]): T {
  if (!status.includes(reply.status)) throw new Error(`${reply.status}: ${reply.text}`)
  return reply
}

/** An audio import's technical details (api.md's members), deliberately not in alphabetical order. */
const TECHNICAL = {
  size: '460800',
  nb_Streams: 1,
  formate_name: 'wav',
  duration: '2.400000',
  bit_rate: '1536000',
  format_long_name: 'WAV / WAVE (Waveform Audio)',
}
const TRICKY_TEXT = 'Ünïcødé "quotes" \\ back\\slash, tab\tand emoji 🎬, 日本語'

/**
 * The catalogue the copy is tried on, made through the API and the command line as users make
 * one. media_asset_shares (made by a project copy across productions, which needs the task
 * runner and a second device tree) and search_deferred (emptied at each commit of the keyword
 * writer) are filled directly, so that every table holds rows.
 */
async function buildCatalogue(t: TestApp) {
  const cli = async (...args: string[]) => {
    const r = await runInProcess([...args, '--data', t.dataDir])
    if (r.code !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`)
    return r.stdout.trim()
  }
  const profile = ok(await t.post('/api/transcodingprofiles/', { name: 'proxy', codec_name: 'h264', width: 640 }))
  const { root, device, production } = await seedProduction(t, 'Show')
  const other = await seedProduction(t, 'Other')
  ok(await t.request('PATCH', `/api/devices/${device.id}/`, { body: { transcoding_profile: profile.json.id } }))
  ok(await t.request('PATCH', `/api/productions/${production.id}/`, { body: { company: TRICKY_TEXT } }))

  await cli('group', 'add', 'editor')
  await cli('user', 'add', 'ana', '--perm', 'browser.change_videoasset', '--group', 'editor')
  await cli('user', 'grant', 'ana', '--production', 'Show', '--write')
  await cli('user', 'add', 'bob')
  const anaKey = await cli('token', 'create', 'ana')
  await cli('token', 'create', 'bob')
  // The last key revoked: api_keys' sequence runs ahead of its highest id.
  const last = await cli('token', 'create', 'bob')
  await cli('token', 'revoke', last)
  ok(await t.post('/api/session/', { username: 'ana', password: anaKey }, { key: null }))

  const set = ok(await t.post('/api/custommetadatasets/', { name: 'Camera', description: 'roll', content_type: 4 }))
  ok(await t.post('/api/custommetadata/', { key: 'camera.roll', value: 'Roll', custom_metadata_set: set.json.id }))
  ok(
    await t.post('/api/assetholddurations/', {
      asset_type: 'videoasset',
      context_type: 'production',
      context: 'Show',
      duration: 30,
    }),
  )

  const folder = join(root, 'Show')
  mkdirSync(folder, { recursive: true })
  const file = (name: string) => {
    const path = join(folder, name)
    writeFileSync(path, `essence of ${name}`)
    return path
  }
  const video = ok(
    await t.post(
      IMPORT,
      importBody(
        file('a.mov'),
        { duration: 250, fps: '25', width: 1920, height: 1080, description: TRICKY_TEXT },
        { keywords: { Place: ['Harbour', 'Night'], Mood: ['calm'] } },
      ),
    ),
  ).json.asset_import_id as number
  const audio = ok(
    await t.post(
      IMPORT,
      importBody(
        file('b.wav'),
        {},
        { technical_details: TECHNICAL, keywords: { Place: ['Harbour'] } },
        { type: 'audio' },
      ),
    ),
  ).json.asset_import_id as number
  ok(await t.post(IMPORT, importBody(file('c.jpg'), {}, {}, { type: 'image' })))
  // Refused (the file is not there), with its import log all the same.
  ok(await t.post(IMPORT, importBody(join(folder, 'missing.mov'))), [406])
  ok(
    await t.post('/api/videoassets/', {
      name: 'plain',
      path_file: file('d.mov'),
      production: production.id,
      meta_field_store: { 'camera.roll': 'A001' },
    }),
  )

  const project = ok(
    await t.post('/api/projectassets/', {
      name: 'Cut',
      bundle_root: join(folder, 'cut') + '/',
      production_id: production.id,
    }),
  ).json
  ok(
    await t.post(`/api/projectassets/${project.id}/addasset/`, {
      asset_list: [
        { asset_id: video, type: 'video' },
        { asset_id: audio, type: 'audio' },
      ],
    }),
  )
  const shot = ok(
    await t.post(`/api/videoassets/${video}/shots/`, {
      name: 'wide',
      timecode_start: 0,
      timecode_end: 4000,
      keywords: ['b', 'a'],
    }),
  ).json
  ok(await t.post(`/api/videoassets/${video}/shots/`, { name: 'close', timecode_start: 4000, timecode_end: 8000 }))
  ok(await t.post(`/api/videoassets/${video}/sequences/`, { name: 'scene', shots: [shot.id] }))
  ok(await t.post(`/api/videoassets/${video}/markers/`, { start_ms: 1000, note: 'boom in frame', color: 'green' }))
  const marker = ok(await t.post(`/api/videoassets/${video}/markers/`, { start_ms: 2000, end_ms: 3000, note: 'gone' }))
  ok(await t.request('DELETE', `/api/videoassets/${video}/markers/${marker.json.id}/`))

  // The last media asset deleted: its file is dismissed, and the sequence keeps its id.
  const doomed = ok(
    await t.post('/api/videoassets/', { name: 'doomed', path_file: file('e.mov'), production: production.id }),
  )
  ok(await t.request('DELETE', `/api/videoassets/${doomed.json.id}/`))

  writeSqlite(
    t.dataDir,
    `INSERT INTO media_asset_shares (asset_id, production_id) VALUES (${video}, ${other.production.id})`,
  )
  writeSqlite(t.dataDir, `INSERT INTO search_deferred (asset_id) VALUES (${audio})`)
  return { video, audio, deleted: doomed.json.id as number }
}

describe.skipIf(!hasPostgres)('migrate-to-postgres on PostgreSQL', () => {
  let t: TestApp
  let file: string
  let built: Awaited<ReturnType<typeof buildCatalogue>>
  /** The target of the in-process run, kept for the later tests. */
  let target: string

  beforeAll(async () => {
    t = testApp()
    file = join(t.dataDir, 'reelhouse.db')
    built = await buildCatalogue(t)
  })
  afterAll(() => t?.cleanup())

  test('the copy order holds every table of schema.pg.ts once, each after the tables its foreign keys name', () => {
    const order = copyOrder().map(nameOf)
    expect(order.toSorted()).toEqual(PG_TABLES.map(nameOf).toSorted())
    for (const table of PG_TABLES)
      for (const fk of getTableConfig(table).foreignKeys) {
        const parent = nameOf(fk.reference().foreignTable as PgTable)
        if (parent !== nameOf(table))
          expect({ table: nameOf(table), after: order.indexOf(nameOf(table)) > order.indexOf(parent) }).toEqual({
            table: nameOf(table),
            after: true,
          })
      }
  })

  test('the SQLite catalogue holds rows in every table, and the last ids of several tables were deleted', () => {
    expect(PG_TABLES.map(nameOf).filter((name) => sqliteCount(t.dataDir, name) === 0)).toEqual([])
    const used = highestIdsUsed(file)
    const ahead = IDENTITIES.map(({ table }) => table).filter((table) => used[table]! > maxId(t.dataDir, table))
    expect(ahead.toSorted()).toEqual(['api_keys', 'markers', 'media_assets'])
    expect(used.media_assets).toBe(built.deleted)
  })

  test('in this process: every table row by row as on SQLite, JSON keys in order; the identities start above every id SQLite handed out', async () => {
    const { url } = await freshDatabase()
    target = url
    const started = performance.now()
    const r = await runInProcess(['migrate-to-postgres', '--data', t.dataDir, '--database', url])
    const seconds = (performance.now() - started) / 1000
    expect({ code: r.code, error: errorOf(r) }).toEqual({ code: 0, error: undefined })
    const expected = sqliteRows(file)
    const total = Object.values(expected).reduce((n, rows) => n + rows.length, 0)
    expect(r.stdout).toBe(`copied ${total} rows in ${PG_TABLES.length} tables to ${url}\n`)
    console.log(`migrate-to-postgres: ${total} rows in ${seconds.toFixed(2)} s (${Math.round(total / seconds)} rows/s)`)
    // data= and database=, a line per table in the copy's order, then what became of search, then
    // the planner's statistics made.
    const said = lines(r.stderr)
    expect(said.slice(0, 2)).toEqual([`data=${t.dataDir}`, `database=${url}`])
    expect(said.at(-1)).toBe('analyze: the planner statistics of every table')
    expect(said.slice(2, -2)).toEqual(
      copyOrder().map((table) => {
        const n = expected[nameOf(table)]!.length
        const seeded = nameOf(table) === 'content_types' ? ' (seeded by the migrations, identical)' : ''
        return `${nameOf(table)}: ${n} row${n === 1 ? '' : 's'}${seeded}`
      }),
    )
    // Search's documents, when the catalogue has search: every record's, made of every copied
    // table, also the audio asset's, which search_deferred lists (its keyword links' triggers
    // write nothing for it).
    const search = await searchDocuments(url)
    if (search) {
      const media = expected.media_assets!.length
      const projects = expected.project_assets!.length
      expect(said.at(-2)).toBe(`search: documents rebuilt (${media} media assets, ${projects} projects)`)
      expect(search.stored).toHaveLength(media + projects)
      expect(search.stored).toEqual(search.made)
    } else expect(said.at(-2)).toBe('search: no documents to rebuild (this catalogue has no search functions)')
    // The triggers the copy held off are on again, as the migrations left them.
    const fresh = await freshDatabase()
    expect((await runInProcess(['migrate', '--database', fresh.url])).code).toBe(0)
    expect(await triggers(url)).toEqual(await triggers(fresh.url))

    expect(await pgRows(url)).toEqual(expected)
    // The stored JSON text itself, column by column: the server keeps it as written (json, not
    // jsonb), keys in their order, as SQLite does. The audio import's keys are not in sorted order.
    expect(await jsonTexts(url)).toEqual(sqliteJsonTexts(file))
    const source = new Database(file, { readonly: true })
    const audioTechnical = source
      .query<{ t: string }, [number]>('SELECT technical AS t FROM media_assets WHERE id = ?')
      .get(built.audio)!.t
    source.close()
    expect(audioTechnical).toBe(JSON.stringify(TECHNICAL))
    expect(Object.keys(JSON.parse(audioTechnical))).not.toEqual(Object.keys(TECHNICAL).toSorted())

    // Each identity goes on after the highest id SQLite ever handed out, deleted ones included.
    const used = highestIdsUsed(file)
    const sql = connect(url)
    const next: Record<string, number> = {}
    for (const { table, column } of IDENTITIES) {
      const [row] = (await sql.unsafe(`SELECT nextval(pg_get_serial_sequence('"${table}"', '${column}')) AS n`)) as {
        n: string
      }[]
      next[table] = Number(row!.n)
    }
    expect(next).toEqual(Object.fromEntries(IDENTITIES.map(({ table }) => [table, used[table]! + 1])))
  })

  test('a second run refuses the catalogue in use, one line, exit 1, and changes nothing', async () => {
    const before = await pgRows(target)
    const r = await runInProcess(['migrate-to-postgres', '--data', t.dataDir, '--database', target])
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: '' })
    const holding = copyOrder()
      .map(nameOf)
      .filter((n) => n !== 'content_types' && before[n]!.length > 0)
    expect(lines(r.stderr)).toEqual([
      `reelhouse: the PostgreSQL catalogue at ${target} holds rows already (in ${holding.slice(0, 3).join(', ')} and ${holding.length - 3} more); the copy goes into an empty catalogue only, never into one in use`,
    ])
    expect(await pgRows(target)).toEqual(before)
  })

  test('as bun src/main.ts: the same rows; a new row takes an id above the deleted last one; the comparison tells a reordered JSON apart', async () => {
    const { url } = await freshDatabase()
    const r = await runCli(['migrate-to-postgres', '--data', t.dataDir, '--database', url], { cli: SOURCE_CLI })
    expect({ code: r.code, error: errorOf(r) }).toEqual({ code: 0, error: undefined })
    expect(r.stdout).toStartWith('copied ')
    const expected = sqliteRows(file)
    expect(await pgRows(url)).toEqual(expected)

    // A row added on PostgreSQL through drizzle: the id after the deleted one, never its id again.
    const db = drizzlePg({ client: connect(url), schema: pgSchema })
    const now = '2031-01-01T00:00:00.000000Z'
    const [asset] = await db
      .insert(pgSchema.mediaAssets)
      .values({
        kind: 'video',
        name: 'new',
        production: 1,
        device: 1,
        path_file: '/nowhere/new.mov',
        date_add: now,
        date_mod: now,
      })
      .returning()
    expect(asset!.id).toBe(built.deleted + 1)
    await db.delete(pgSchema.mediaAssets).where(eq(pgSchema.mediaAssets.id, asset!.id))

    // The comparison is strict: the same members in another order, or 1 for true, are a difference.
    const sql = connect(url)
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(TECHNICAL).reverse()))
    await sql.unsafe('UPDATE media_assets SET technical = CAST($1::text AS json) WHERE id = $2', [
      reordered,
      built.audio,
    ])
    expect(await pgRows(url)).not.toEqual(expected)
    await sql.unsafe('UPDATE media_assets SET technical = CAST($1::text AS json) WHERE id = $2', [
      JSON.stringify(TECHNICAL),
      built.audio,
    ])
    expect(await pgRows(url)).toEqual(expected)
    const flag = (await sql.unsafe('SELECT is_superuser FROM users ORDER BY id LIMIT 1')) as { is_superuser: boolean }[]
    await sql.unsafe('UPDATE users SET is_superuser = NOT is_superuser WHERE id = (SELECT min(id) FROM users)')
    expect(await pgRows(url)).not.toEqual(expected)
    await sql.unsafe('UPDATE users SET is_superuser = $1 WHERE id = (SELECT min(id) FROM users)', [
      flag[0]!.is_superuser,
    ])
    expect(await pgRows(url)).toEqual(expected)
  })

  test('a row PostgreSQL refuses (a NUL in a text): one line naming the table, the row and the reason, exit 1, the target left empty', async () => {
    const dir = copyCatalogue(t.dataDir)
    // The last row of the last table copied: every other table has been written when it fails.
    const last = 'user_permissions'
    expect(copyOrder().map(nameOf).at(-1)).toBe(last)
    const client = new Database(join(dir, 'reelhouse.db'))
    const row = client
      .query<{ user_id: number; codename: string }, []>(
        `UPDATE ${last} SET codename = codename || char(0) WHERE rowid = (SELECT max(rowid) FROM ${last}) RETURNING user_id, codename`,
      )
      .get()!
    client.close()
    expect(row.codename).toEndWith('\0')
    const { url } = await freshDatabase()
    const r = await runInProcess(['migrate-to-postgres', '--data', dir, '--database', url])
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: '' })
    expect(lines(r.stderr).at(-1)).toBe(
      `reelhouse: copying ${last} failed at the row with user_id ${row.user_id}, codename ${JSON.stringify(row.codename)}: invalid byte sequence for encoding "UTF8": 0x00; ${url} is left empty`,
    )
    expect(lines(r.stderr).filter((l) => l.startsWith('reelhouse: '))).toHaveLength(1)
    const counts = await pgCounts(url)
    expect(Object.entries(counts).filter(([table, n]) => n > 0)).toEqual([['content_types', 4]])
    // No identity was moved either: only the seeded content types' has been used.
    const used = (await connect(url).unsafe(
      "SELECT sequencename AS name FROM pg_sequences WHERE schemaname = 'public' AND last_value IS NOT NULL",
    )) as { name: string }[]
    expect(used.map((s) => s.name)).toEqual(['content_types_id_seq'])
  })

  test('refused while a serve uses the data folder (serve.pid names a live process): one line, exit 1, nothing done on PostgreSQL', async () => {
    const dir = copyCatalogue(t.dataDir)
    const sleeper = spawn(['sleep', '60'], { stdio: ['ignore', 'ignore', 'ignore'] })
    try {
      writeFileSync(join(dir, 'serve.pid'), `${sleeper.pid}\n`)
      const { url } = await freshDatabase()
      const r = await runInProcess(['migrate-to-postgres', '--data', dir, '--database', url])
      expect(r).toEqual({
        code: 1,
        stdout: '',
        stderr: `reelhouse: a reelhouse serve (pid ${sleeper.pid}) is using ${dir}; stop it first, or what it writes after the copy begins is not copied\n`,
      })
      const [found] = (await connect(url).unsafe("SELECT to_regclass('users') IS NULL AS none")) as { none: boolean }[]
      expect(found!.none).toBe(true)
    } finally {
      sleeper.kill()
      await sleeper.exited
    }
    // The same file once its process is gone: a serve that died, no owner.
    const { url } = await freshDatabase()
    const after = await runInProcess(['migrate-to-postgres', '--data', dir, '--database', url])
    expect({ code: after.code, error: errorOf(after) }).toEqual({ code: 0, error: undefined })
  })

  test('a big table reports every tenth of the way; REELHOUSE_DATABASE names the target when the flag is absent', async () => {
    const dir = copyCatalogue(t.dataDir)
    const extra = 25_000
    writeSqlite(
      dir,
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${extra})
       INSERT INTO history (date, user_id, username, via, resource, resource_id, action, changes, production)
       SELECT '2031-01-01T00:00:00.000000Z', NULL, 'bulk', 'cli', 'videoasset', i, 'update',
              json_object('name', json_object('old', 'a' || i, 'new', 'b' || i)), NULL FROM n`,
    )
    const rows = sqliteCount(dir, 'history')
    const { url } = await freshDatabase()
    const started = performance.now()
    const r = await runInProcess(['migrate-to-postgres', '--data', dir], { env: { REELHOUSE_DATABASE: url } })
    const seconds = (performance.now() - started) / 1000
    expect({ code: r.code, error: errorOf(r), stdout: r.stdout.replace(/\d+ rows/, 'N rows') }).toEqual({
      code: 0,
      error: undefined,
      stdout: `copied N rows in ${PG_TABLES.length} tables to ${url}\n`,
    })
    const total = Number(r.stdout.match(/copied (\d+) rows/)![1])
    console.log(`migrate-to-postgres: ${total} rows in ${seconds.toFixed(2)} s (${Math.round(total / seconds)} rows/s)`)
    const history = lines(r.stderr).filter((l) => l.startsWith('history: '))
    expect(history.map((l) => l.replace(/ \(\d+ of \d+ rows\)$/, ''))).toEqual([
      ...[10, 20, 30, 40, 50, 60, 70, 80, 90].map((p) => `history: ${p}%`),
      `history: ${rows} rows`,
    ])
    expect((await pgCounts(url)).history).toBe(rows)
    expect(await pgRows(url)).toEqual(sqliteRows(join(dir, 'reelhouse.db')))
  })
})

describe('the command line, with no server needed', () => {
  test.each([
    [
      'no --database',
      () => ['migrate-to-postgres'],
      2,
      /^reelhouse: migrate-to-postgres needs --database URL \(or REELHOUSE_DATABASE\); see reelhouse migrate-to-postgres --help$/,
    ],
    [
      'a URL of another kind',
      () => ['migrate-to-postgres', '--database', 'mysql://ana:s3cret@db/reelhouse'],
      2,
      /^reelhouse: --database must be a postgres:\/\/ or postgresql:\/\/ URL, not "mysql:\/\/ana@db\/reelhouse"$/,
    ],
    [
      'a socket folder with no server',
      () => [
        'migrate-to-postgres',
        '--database',
        `postgres://ana:s3cret@localhost:5432/reelhouse?host=${encodeURIComponent(tempDir())}`,
      ],
      2,
      /^reelhouse: cannot connect to postgres:\/\/ana@localhost:5432\/reelhouse\?host=\S+ \(at \S+\/\.s\.PGSQL\.5432\): .+$/,
    ],
  ] as const)('%s: one line on stderr, exit %d, no password', async (_, args, code, said) => {
    const data = tempDir()
    // A catalogue in the folder, so that what is refused is the URL.
    expect((await runInProcess(['migrate', '--data', data])).code).toBe(0)
    const r = await runInProcess([...args(), '--data', data])
    expect({ code: r.code, stdout: r.stdout, lines: lines(r.stderr).length }).toEqual({ code, stdout: '', lines: 1 })
    expect(r.stderr.trimEnd()).toMatch(said)
    expect(r.stderr).not.toContain('s3cret')
  })

  test('reelhouse --help lists it; its own --help names --database and REELHOUSE_DATABASE', async () => {
    const help = await runInProcess(['--help'])
    expect(help.stdout).toContain('  reelhouse migrate-to-postgres --database URL\n')
    const own = await runInProcess(['migrate-to-postgres', '--help'])
    expect({ code: own.code, stderr: own.stderr }).toEqual({ code: 0, stderr: '' })
    expect(own.stdout).toStartWith('Usage: reelhouse [--data DIR] migrate-to-postgres --database URL\n')
    for (const said of ['--database URL', 'REELHOUSE_DATABASE', '--data DIR', 'copied N rows in T tables to URL'])
      expect(own.stdout).toContain(said)
  })

  test('a folder without a catalogue: one line, exit 1, no catalogue made', async () => {
    const data = join(tempDir(), 'never-made')
    const r = await runInProcess(['migrate-to-postgres', '--data', data, '--database', 'postgres://localhost/x'])
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: `reelhouse: no catalogue in ${data}; pass --data DIR (serve prints its data= folder)\n`,
    })
    expect(existsSync(data)).toBe(false)
  })
})
