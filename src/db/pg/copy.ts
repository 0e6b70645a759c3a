// The copy of a SQLite catalogue into an empty PostgreSQL one (`reelhouse migrate-to-postgres`):
// every row of every table of schema.pg.ts, with its id, read from one SQLite read transaction
// and written in one PostgreSQL transaction, so that the target holds either the whole catalogue
// as it was at one moment or nothing at all.
//
// Values go through both schemas: drizzle's SQLite columns read them (0 and 1 become booleans,
// JSON text becomes its value, keys in their order) and drizzle's PostgreSQL columns write them
// (booleans as boolean, JSON as json, which keeps the keys' order as given). The tables are
// written parents first, in an order found from the foreign keys of schema.pg.ts, so a table
// added to the schema is copied without anyone listing it here.
//
// Ids are written as they are; an identity does not move on for a row written with its id, so
// each identity is then set past the highest id the SQLite table ever handed out: its highest
// id, or the number sqlite_sequence keeps for it when the rows with the last ids were deleted
// (SQLite's AUTOINCREMENT never hands an id out twice, and neither may PostgreSQL's identity).
//
// Search's documents, where PostgreSQL's search is installed, are derived: they are written once
// more after the copy (holdSearch, at the end of this file).
import type { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { getTableColumns, sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/bun-sql'
import { type PgColumn, PgTable, getTableConfig } from 'drizzle-orm/pg-core'
import { type SQLiteColumn, SQLiteTable, getTableConfig as getSqliteTableConfig } from 'drizzle-orm/sqlite-core'
import { openDb } from '../client.ts'
import { migrate } from '../migrate.ts'
import * as pgSchema from '../schema.pg.ts'
import * as sqliteSchema from '../schema.ts'
import { MIGRATION_LOCK_KEY } from './migrate.ts'

/** Rows per INSERT: a round trip per thousand rows, and well under PostgreSQL's 65,535 parameters a statement. */
export const BATCH_ROWS = 1000
/** A table with at least this many rows reports its progress every tenth of the way too. */
const BIG_TABLE_ROWS = 10_000
/** The table the migrations seed (drizzle/pg/0001): it is compared, never written. */
const SEEDED = 'content_types'

/** The target cannot take the copy: it holds rows already, or content types other than the source's. */
export class CopyRefusedError extends Error {}

/** A row the copy could not write (or read): the table, the row's key and the reason, on one line. */
export class RowRefusedError extends Error {
  constructor(
    readonly table: string,
    /** The row's key, as `id 17` or `user_id 1, codename "x"`; undefined when no single row could be named. */
    readonly row: string | undefined,
    readonly reason: string,
  ) {
    super(`copying ${table} failed${row ? ` at the row with ${row}` : ''}: ${reason}`)
  }
}

/** What the copy did: every table's rows (the seeded table's counted as found), and what became of search. */
export type CopyResult = { rows: number; tables: number; search: string }

/** One table to copy: the two schemas' sides and the columns they share by name. */
type Plan = {
  name: string
  pg: PgTable
  columns: { name: string; key: string; from: SQLiteColumn }[]
  /** The key columns' names, to name a refused row. */
  key: string[]
  /** The identity column's name, if the table has one. */
  identity: string | undefined
}

/** The tables of schema.pg.ts. */
const pgTables = (): PgTable[] =>
  (Object.values(pgSchema) as unknown[]).filter((v): v is PgTable => v instanceof PgTable)

/**
 * The tables of schema.pg.ts, each after every table its foreign keys name; where the keys leave
 * a choice, in the order of the schema's export names (a module's namespace lists its exports
 * sorted by name), so that the order is the same on every run. A reference of a table to itself
 * asks for no order among tables (none has one today; its rows go in rowid order, parents
 * usually first).
 */
export function copyOrder(): PgTable[] {
  const tables = pgTables()
  const parents = new Map(
    tables.map((t) => [
      t,
      new Set(
        getTableConfig(t)
          .foreignKeys.map((fk) => fk.reference().foreignTable)
          .filter((p) => p !== t),
      ),
    ]),
  )
  const placed: PgTable[] = []
  const left = [...tables]
  while (left.length) {
    const next = left.findIndex((t) => [...parents.get(t)!].every((p) => placed.includes(p)))
    if (next < 0)
      throw new Error(
        `the foreign keys of ${left.map((t) => getTableConfig(t).name).join(', ')} form a cycle: no order copies them`,
      )
    placed.push(...left.splice(next, 1))
  }
  return placed
}

/** Each table of copyOrder with the SQLite table of the same name; a column on one side only stops the copy before it starts. */
function plans(): Plan[] {
  const sqliteTables = new Map(
    (Object.values(sqliteSchema) as unknown[])
      .filter((v): v is SQLiteTable => v instanceof SQLiteTable)
      .map((t) => [getSqliteTableConfig(t).name, t]),
  )
  return copyOrder().map((pg) => {
    const config = getTableConfig(pg)
    const source = sqliteTables.get(config.name)
    if (!source) throw new Error(`schema.ts has no table ${config.name}, which schema.pg.ts has`)
    const from = new Map(Object.values(getTableColumns(source)).map((c) => [c.name, c]))
    const to = Object.entries(getTableColumns(pg)) as [string, PgColumn][]
    const columns = to.map(([key, column]) => {
      const found = from.get(column.name)
      if (!found) throw new Error(`schema.ts has no column ${config.name}.${column.name}, which schema.pg.ts has`)
      return { name: column.name, key, from: found }
    })
    const extra = [...from.keys()].filter((name) => !to.some(([, c]) => c.name === name))
    if (extra.length)
      throw new Error(
        `schema.pg.ts has no column ${extra.map((c) => `${config.name}.${c}`).join(', ')}: it would be lost`,
      )
    const key =
      config.primaryKeys[0]?.columns.map((c) => c.name) ?? to.filter(([, c]) => c.primary).map(([, c]) => c.name)
    const identity = to.find(([, c]) => c.generatedIdentity)?.[1].name
    return { name: config.name, pg, columns, key, identity }
  })
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/** The server's reason for refusing a statement, on one line: drizzle's error names the statement, its cause says why. */
export function reasonOf(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause
  const server = cause instanceof Error ? cause : error
  // The message only: the server's detail may quote the whole row ("Failing row contains ..."),
  // device passwords and key hashes among it, and the row is named by its key already.
  const message = server instanceof Error ? server.message : String(server)
  return message.replace(/\s*\n\s*/g, ' ')
}

/**
 * Copies the SQLite catalogue in `file` (migrated first, as every command does) into the
 * PostgreSQL catalogue at `url`, whose migrations must have been applied and whose tables must
 * be empty but for the content types the migrations seed, which must equal the source's.
 * `progress` gets a line per table as it is copied. Rejects with CopyRefusedError when the
 * target is not empty, RowRefusedError when a row cannot be written, or the server's error; the
 * target is left as it was in every case.
 *
 * The source is read in one read transaction: what it held when the copy began, whatever is
 * written to it meanwhile (and is then not copied).
 */
export async function copyToPostgres(file: string, url: string, progress: (line: string) => void): Promise<CopyResult> {
  const tables = plans()
  const catalogue = openDb(file)
  try {
    migrate(catalogue)
    return await copyFrom(catalogue.$client, tables, url, progress)
  } finally {
    catalogue.$client.close()
  }
}

async function copyFrom(
  source: Database,
  tables: Plan[],
  url: string,
  progress: (line: string) => void,
): Promise<CopyResult> {
  const client = new SQL({ url, max: 1 })
  const db = drizzle({ client, schema: pgSchema })
  // Deferred: a read transaction, whose snapshot the first read below fixes.
  source.run('BEGIN')
  try {
    const counts = new Map(
      tables.map((t) => [
        t.name,
        source.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${quote(t.name)}`).get()!.n,
      ]),
    )
    const used = highestIdsUsed(source, tables)
    const copied = await db.transaction(async (tx) => {
      // The lock migrations are applied under: no migration runs while the catalogue is filled,
      // and of two copies started at once the second waits, then finds the first's rows.
      await tx.execute(sql.raw(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`))
      await refuseUsedTarget(tx, source, tables)
      const search = await holdSearch(tx)
      let rows = 0
      for (const table of tables) {
        const total = counts.get(table.name)!
        rows += total
        if (table.name === SEEDED) {
          progress(`${table.name}: ${rowsText(total)} (seeded by the migrations, identical)`)
          continue
        }
        await copyTable(tx, source, table, total, progress)
        progress(`${table.name}: ${rowsText(total)}`)
      }
      // ALTER TABLE, not setval: it is undone with the transaction, setval is not.
      for (const table of tables) {
        const highest = used.get(table.name) ?? 0
        if (table.identity && highest > 0)
          await tx.execute(
            sql.raw(
              `ALTER TABLE ${quote(table.name)} ALTER COLUMN ${quote(table.identity)} RESTART WITH ${highest + 1}`,
            ),
          )
      }
      const searched = await search.rebuild()
      progress(`search: ${searched}`)
      return { rows, tables: tables.length, search: searched }
    })
    // The planner's statistics of the new rows, at once rather than when autovacuum comes round:
    // without them the first requests plan as for empty tables (ANALYZE cannot run in the copy's
    // transaction's place; it reads what that transaction committed).
    progress('analyze: the planner statistics of every table')
    await db.execute(sql.raw('ANALYZE'))
    return copied
  } finally {
    source.run('COMMIT')
    await client.close()
  }
}

type Tx = Parameters<Parameters<ReturnType<typeof drizzle<typeof pgSchema>>['transaction']>[0]>[0]

const rowsText = (n: number) => `${n} row${n === 1 ? '' : 's'}`

/**
 * The highest id each table with an identity ever handed out: its highest id, or what
 * sqlite_sequence keeps for it, whichever is higher. sqlite_sequence exists once any
 * AUTOINCREMENT table had a row.
 */
function highestIdsUsed(source: Database, tables: Plan[]): Map<string, number> {
  const kept = new Map<string, number>()
  const hasSequence = source
    .query<{ n: number }, []>(
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'",
    )
    .get()!.n
  if (hasSequence)
    for (const { name, seq } of source
      .query<{ name: string; seq: number }, []>('SELECT name, seq FROM sqlite_sequence')
      .all())
      kept.set(name, seq)
  const used = new Map<string, number>()
  for (const t of tables) {
    if (!t.identity) continue
    const max = source
      .query<{ n: number | null }, []>(`SELECT max(${quote(t.identity)}) AS n FROM ${quote(t.name)}`)
      .get()!.n
    used.set(t.name, Math.max(max ?? 0, kept.get(t.name) ?? 0))
  }
  return used
}

/**
 * Refuses a target that holds any row (a copy never merges into a catalogue in use), but for the
 * content types the migrations seed, which must be the source's, id for id and name for name:
 * the rows that name them are copied with their ids.
 */
async function refuseUsedTarget(tx: Tx, source: Database, tables: Plan[]) {
  const others = tables.filter((t) => t.name !== SEEDED)
  const holding = (await tx.execute(
    sql.raw(
      `${others
        .map((t, i) => `SELECT ${i} AS at, '${t.name}' AS name WHERE EXISTS (SELECT 1 FROM ${quote(t.name)})`)
        .join(' UNION ALL ')} ORDER BY at`,
    ),
  )) as unknown as { name: string }[]
  if (holding.length) {
    const names = holding.map((r) => r.name)
    const some = names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', ')
    throw new CopyRefusedError(
      `holds rows already (in ${some}); the copy goes into an empty catalogue only, never into one in use`,
    )
  }
  const show = (rows: { id: number | string; name: string }[]) => rows.map((r) => `${r.id} ${r.name}`).join(', ')
  const theirs = show(
    (await tx.execute(sql.raw(`SELECT id, name FROM ${quote(SEEDED)} ORDER BY id`))) as unknown as {
      id: string
      name: string
    }[],
  )
  const ours = show(source.query<{ id: number; name: string }, []>(`SELECT id, name FROM ${SEEDED} ORDER BY id`).all())
  if (theirs !== ours)
    throw new CopyRefusedError(
      `has other content types (${theirs || 'none'}) than the SQLite catalogue (${ours || 'none'})`,
    )
}

/** Copies one table, BATCH_ROWS rows per INSERT, in rowid order (ids ascending where the table has one). */
async function copyTable(tx: Tx, source: Database, table: Plan, total: number, progress: (line: string) => void) {
  // Never more parameters in one statement than PostgreSQL takes.
  const size = Math.min(BATCH_ROWS, Math.floor(65_535 / table.columns.length))
  const select = source.query<Record<string, unknown>, []>(
    `SELECT ${table.columns.map((c) => quote(c.name)).join(', ')} FROM ${quote(table.name)} ORDER BY rowid`,
  )
  let batch: Record<string, unknown>[] = []
  let done = 0
  let shown = 0
  const flush = async () => {
    await insertBatch(tx, table, batch)
    done += batch.length
    batch = []
    if (total < BIG_TABLE_ROWS) return
    const tenths = Math.floor((done * 10) / total)
    if (tenths > shown && done < total) {
      shown = tenths
      progress(`${table.name}: ${tenths * 10}% (${done} of ${total} rows)`)
    }
  }
  for (const raw of select.iterate()) {
    batch.push(readRow(table, raw))
    if (batch.length >= size) await flush()
  }
  if (batch.length) await flush()
}

/** A row of the SQLite table as drizzle's SQLite columns read it, keyed as schema.pg.ts names its columns. */
function readRow(table: Plan, raw: Record<string, unknown>): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  for (const c of table.columns) {
    const value = raw[c.name]
    try {
      row[c.key] = value === null || value === undefined ? null : c.from.mapFromDriverValue(value)
    } catch (error) {
      throw new RowRefusedError(table.name, keyOf(table, raw), `${c.name} cannot be read: ${reasonOf(error)}`)
    }
  }
  return row
}

/**
 * One INSERT for the batch, under a savepoint. When the server refuses it, the rows are written
 * again one by one, each under its own savepoint, to find the first the server refuses and name
 * it: whoever repairs the catalogue needs the row, not a batch of a thousand.
 */
async function insertBatch(tx: Tx, table: Plan, rows: Record<string, unknown>[]) {
  try {
    await tx.transaction(async (sp) => {
      await sp.insert(table.pg).values(rows)
    })
    return
  } catch (error) {
    for (const row of rows)
      try {
        await tx.transaction(async (sp) => {
          await sp.insert(table.pg).values(row)
        })
      } catch (rowError) {
        throw new RowRefusedError(table.name, keyOf(table, row, true), reasonOf(rowError))
      }
    throw new RowRefusedError(table.name, undefined, reasonOf(error))
  }
}

/** `id 17`, or `user_id 1, codename "editor"`: the key of a row, read raw or keyed as schema.pg.ts names its columns. */
function keyOf(table: Plan, row: Record<string, unknown>, keyed = false): string | undefined {
  if (!table.key.length) return undefined
  return table.key
    .map((name) => {
      const value = row[keyed ? table.columns.find((c) => c.name === name)!.key : name]
      return `${name} ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`
    })
    .join(', ')
}

// ---------------------------------------------------------------- search's documents

/**
 * Search's documents, written again once every table is copied. PostgreSQL's search (when its
 * migration is there) keeps them in search.docs, written by triggers as rows go in; but a
 * document is made of several tables (an asset's keywords and markers are copied after it), and
 * an asset listed in search_deferred, which is copied too, gets no document for its keyword
 * links and markers from the triggers. So each document is written once more from the copied
 * tables, through the functions the triggers themselves call: search.write_media and
 * search.write_project. Meanwhile those triggers (the ones whose function is in the schema
 * search) are off, on the tables this role owns (ALTER TABLE needs the owner): each would
 * write its documents again for every row, and made the copy of 20,000 media assets thirteen
 * times slower. Without those functions there is nothing to rebuild. All within the copy's
 * transaction: the triggers are on again before it commits, a rollback undoes their being
 * turned off, and a rebuild that fails leaves the target empty too.
 */
async function holdSearch(tx: Tx): Promise<{ rebuild(): Promise<string> }> {
  const rows = async <T>(statement: string) => (await tx.execute(sql.raw(statement))) as unknown as T[]
  const [found] = await rows<{ search: boolean }>(
    `SELECT to_regprocedure('search.write_media(bigint)') IS NOT NULL
        AND to_regprocedure('search.write_project(bigint)') IS NOT NULL AS search`,
  )
  if (!found?.search) return { rebuild: async () => 'no documents to rebuild (this catalogue has no search functions)' }
  const triggers = await rows<{ tbl: string; name: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS tbl, quote_ident(t.tgname) AS name
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_proc p ON p.oid = t.tgfoid
      WHERE NOT t.tgisinternal AND t.tgenabled = 'O' AND p.pronamespace = to_regnamespace('search')
        AND pg_has_role(c.relowner, 'USAGE')`,
  )
  for (const t of triggers) await rows(`ALTER TABLE ${t.tbl} DISABLE TRIGGER ${t.name}`)
  return {
    rebuild: async () => {
      for (const t of triggers) await rows(`ALTER TABLE ${t.tbl} ENABLE TRIGGER ${t.name}`)
      const count = async (statement: string) => Number((await rows<{ n: number | string }>(statement))[0]!.n)
      const media = await count(
        'SELECT count(*) AS n FROM (SELECT search.write_media(id) FROM media_assets) AS written',
      )
      const projects = await count(
        'SELECT count(*) AS n FROM (SELECT search.write_project(id) FROM project_assets) AS written',
      )
      return `documents rebuilt (${media} media assets, ${projects} projects)`
    },
  }
}
