// The PostgreSQL schema (src/db/schema.pg.ts) is the SQLite one (src/db/schema.ts) on the other
// engine: the same tables under the same export names, and per table the same columns in the same
// order with the same nullability, primary keys, defaults, unique columns, indexes (names, columns,
// uniqueness, partial conditions) and foreign keys (columns, referenced table and columns, ON
// DELETE and ON UPDATE), each column of a kind that holds what SQLite's holds. Where the engines
// must spell a thing differently (a boolean in a condition, case folding, a json column in an
// index), the spelling is listed in TRANSLATED below; any other difference fails.
//
// The rows both schemas read are of one TypeScript type per table, which tsc checks over this
// file (test/typecheck.test.ts, `tsc --noEmit -p .`): see SelectMismatch at the end.
import { describe, expect, test } from 'bun:test'
import { Column, type SQL, is } from 'drizzle-orm'
import { IndexedColumn, PgDialect, PgTable, getTableConfig as pgConfigOf } from 'drizzle-orm/pg-core'
import {
  SQLiteInteger,
  SQLiteSyncDialect,
  SQLiteTable,
  getTableConfig as sqliteConfigOf,
} from 'drizzle-orm/sqlite-core'
import * as pg from '../../src/db/schema.pg.ts'
import * as sqlite from '../../src/db/schema.ts'

const pgDialect = new PgDialect()
const sqliteDialect = new SQLiteSyncDialect()

/** The tables of each schema by export name. */
const sqliteTables = Object.fromEntries(Object.entries(sqlite).filter(([, v]) => is(v, SQLiteTable))) as Record<
  string,
  SQLiteTable
>
const pgTables = Object.fromEntries(Object.entries(pg).filter(([, v]) => is(v, PgTable))) as Record<string, PgTable>

/**
 * The spellings that differ by engine, SQLite's first. Index columns and conditions are compared
 * as rendered SQL after these are put in PostgreSQL's words; nothing else may differ.
 */
const TRANSLATED: [sqlite: string, pg: string][] = [
  // Case folded names: NOCASE folds ASCII letters; lower() does the same under COLLATE "C".
  ['"name" COLLATE NOCASE', 'lower("name")'],
  // json has no btree operator class: its text stands in an index.
  ['"target"', '("target"::text)'],
  // PostgreSQL takes an expression among an index's columns only in parentheses.
  [`"error" <> ''`, `("error" <> '')`],
  // Booleans are 0 and 1 on SQLite, true and false on PostgreSQL.
  ['is_production = 1', 'is_production = true'],
  [`path_proxy != ''`, `path_proxy <> ''`],
]
const translate = (text: string) => TRANSLATED.find(([from]) => from === text)?.[1] ?? text

/** The columns that must be 64 bits besides ids and the columns that hold one. */
const BIGINT: Record<string, string[]> = {
  media_assets: ['file_dev', 'file_ino', 'file_size'],
  dismissed_files: ['file_dev', 'file_ino'],
  project_assets: ['files_bytes'],
  tasks: ['bytes_done', 'bytes_total'],
  shots: ['start_ms', 'end_ms'],
  sequences: ['start_ms', 'end_ms'],
  markers: ['start_ms', 'end_ms'],
}

/** Columns that hold an id without a foreign key (history outlives what it names; ids of tasks' targets, logs'). */
const HOLDS_AN_ID: Record<string, string[]> = {
  dismissed_files: ['asset_id'],
  history: ['user_id', 'resource_id', 'production'],
  import_logs: ['asset_import_id'],
  project_assets: ['copy_of'],
  search_deferred: ['asset_id'],
  tasks: ['production'],
}

/** The PostgreSQL types (as drizzle-kit writes them) each SQLite column kind may become. */
const KINDS: Record<string, string[]> = {
  SQLiteInteger: ['integer', 'bigint'],
  SQLiteBoolean: ['boolean'],
  // Text of any kind compares byte by byte, as on SQLite (schema.pg.ts says why).
  SQLiteText: ['text COLLATE "C"'],
  // json, never jsonb: jsonb reorders keys.
  SQLiteTextJson: ['json'],
  // Double precision: SQLite's REAL is 8 bytes; PostgreSQL's real is 4.
  SQLiteReal: ['double precision'],
}

const render = (value: unknown, dialect: PgDialect | SQLiteSyncDialect): string =>
  value && typeof value === 'object' && 'queryChunks' in value
    ? dialect.sqlToQuery(value as SQL, 'indexes').sql
    : JSON.stringify(value)

type Described = ReturnType<typeof describeSqlite>

/** What is compared of a SQLite table, in PostgreSQL's spellings. */
function describeSqlite(table: SQLiteTable) {
  const c = sqliteConfigOf(table)
  return {
    name: c.name,
    columns: c.columns.map((col) => ({
      name: col.name,
      notNull: col.notNull,
      primary: col.primary,
      // An INTEGER PRIMARY KEY without AUTOINCREMENT (search_deferred's asset_id) is SQLite's rowid,
      // which SQLite fills when no value is given; drizzle counts that a default, though the
      // writers always give the value. Only AUTOINCREMENT ids are meant to be handed out.
      hasDefault: col.hasDefault && !(col.primary && is(col, SQLiteInteger) && !col.autoIncrement),
      default: col.default === undefined ? undefined : render(col.default, sqliteDialect),
      unique: col.isUnique ? col.uniqueName : undefined,
    })),
    primaryKeys: c.primaryKeys.map((k) => k.columns.map((col) => col.name)),
    uniqueConstraints: c.uniqueConstraints.map((u) => ({ name: u.name, columns: u.columns.map((col) => col.name) })),
    indexes: c.indexes
      .map((i) => ({
        name: i.config.name,
        unique: i.config.unique,
        columns: i.config.columns.map((col) =>
          translate(is(col, Column) ? `"${col.name}"` : render(col, sqliteDialect)),
        ),
        where: i.config.where ? translate(render(i.config.where, sqliteDialect)) : undefined,
      }))
      .toSorted((a, b) => a.name.localeCompare(b.name)),
    foreignKeys: c.foreignKeys
      .map((fk) => {
        const r = fk.reference()
        return {
          columns: r.columns.map((col) => col.name),
          table: sqliteConfigOf(r.foreignTable).name,
          foreignColumns: r.foreignColumns.map((col) => col.name),
          onDelete: fk.onDelete ?? 'no action',
          onUpdate: fk.onUpdate ?? 'no action',
        }
      })
      .toSorted((a, b) => a.columns.join().localeCompare(b.columns.join())),
    checks: c.checks.map((k) => k.name),
  }
}

/** The same of a PostgreSQL table. */
function describePg(table: PgTable): Described {
  const c = pgConfigOf(table)
  return {
    name: c.name,
    columns: c.columns.map((col) => ({
      name: col.name,
      notNull: col.notNull,
      primary: col.primary,
      hasDefault: col.hasDefault,
      default: col.default === undefined ? undefined : render(col.default, pgDialect),
      unique: col.isUnique ? col.uniqueName : undefined,
    })),
    primaryKeys: c.primaryKeys.map((k) => k.columns.map((col) => col.name)),
    uniqueConstraints: c.uniqueConstraints.map((u) => ({ name: u.name, columns: u.columns.map((col) => col.name) })),
    indexes: c.indexes
      .map((i) => ({
        name: i.config.name!,
        unique: i.config.unique,
        // An index's column (the opclass and its default order, ascending); a descending one would differ.
        columns: i.config.columns.map((col) =>
          is(col, IndexedColumn)
            ? `"${col.name}"${col.indexConfig?.order === 'desc' ? ' DESC' : ''}`
            : render(col, pgDialect),
        ),
        where: i.config.where ? render(i.config.where, pgDialect) : undefined,
      }))
      .toSorted((a, b) => a.name.localeCompare(b.name)),
    foreignKeys: c.foreignKeys
      .map((fk) => {
        const r = fk.reference()
        return {
          columns: r.columns.map((col) => col.name),
          table: pgConfigOf(r.foreignTable).name,
          foreignColumns: r.foreignColumns.map((col) => col.name),
          onDelete: fk.onDelete ?? 'no action',
          onUpdate: fk.onUpdate ?? 'no action',
        }
      })
      .toSorted((a, b) => a.columns.join().localeCompare(b.columns.join())),
    checks: c.checks.map((k) => k.name),
  }
}

test('the same tables, under the same export names: the 31 of the catalogue', () => {
  expect(Object.keys(pgTables).toSorted()).toEqual(Object.keys(sqliteTables).toSorted())
  const names = (tables: Record<string, SQLiteTable | PgTable>) =>
    Object.entries(tables)
      .map(([key, t]) => [key, is(t, PgTable) ? pgConfigOf(t).name : sqliteConfigOf(t as SQLiteTable).name])
      .toSorted()
  expect(names(pgTables)).toEqual(names(sqliteTables))
  expect(Object.keys(pgTables)).toHaveLength(31)
})

describe.each(Object.keys(sqliteTables).toSorted())('%s', (key) => {
  const lite = sqliteTables[key]!
  const post = pgTables[key]
  const both = () => {
    expect(post).toBeDefined()
    return { lite: describeSqlite(lite), post: describePg(post!) }
  }

  test('columns: names and order, nullability, primary keys, defaults, unique columns', () => {
    const { lite, post } = both()
    expect(post.columns).toEqual(lite.columns)
    expect(post.primaryKeys).toEqual(lite.primaryKeys)
    expect(post.uniqueConstraints).toEqual(lite.uniqueConstraints)
    expect(post.checks).toEqual(lite.checks)
  })

  test('indexes: names, uniqueness, columns and partial conditions', () => {
    const { lite, post } = both()
    expect(post.indexes).toEqual(lite.indexes)
  })

  test('foreign keys: columns, referenced table and columns, ON DELETE and ON UPDATE', () => {
    const { lite, post } = both()
    expect(post.foreignKeys).toEqual(lite.foreignKeys)
  })

  test('column kinds: booleans, 64-bit ids and sizes, json, text in byte order', () => {
    expect(post).toBeDefined()
    const pgColumns = new Map(pgConfigOf(post!).columns.map((c) => [c.name, c]))
    const liteConfig = sqliteConfigOf(lite)
    const referencing = new Set(liteConfig.foreignKeys.flatMap((fk) => fk.reference().columns.map((c) => c.name)))
    const name = liteConfig.name
    for (const column of liteConfig.columns) {
      const twin = pgColumns.get(column.name)
      expect({ column: column.name, found: twin !== undefined }).toEqual({ column: column.name, found: true })
      const type = twin!.getSQLType()
      const said = { column: column.name, sqlite: column.columnType, pg: type }
      expect({ ...said, allowed: KINDS[column.columnType]?.includes(type) }).toEqual({ ...said, allowed: true })
      const wide =
        column.primary ||
        referencing.has(column.name) ||
        (BIGINT[name] ?? []).includes(column.name) ||
        (HOLDS_AN_ID[name] ?? []).includes(column.name)
      // bigint as a JS number (mode 'number'), as SQLite's integers are read.
      if (column.columnType === 'SQLiteInteger')
        expect({ ...said, drizzle: twin!.columnType }).toEqual({
          ...said,
          pg: wide ? 'bigint' : 'integer',
          drizzle: wide ? 'PgBigInt53' : 'PgInteger',
        })
    }
  })
})

test('every integer id is an identity, and none is GENERATED ALWAYS: a row may be written with its id', () => {
  for (const table of Object.values(pgTables)) {
    const config = pgConfigOf(table)
    for (const column of config.columns.filter((c) => c.primary && c.columnType === 'PgBigInt53')) {
      const identity = column.generatedIdentity?.type
      const expected = config.name === 'search_deferred' ? undefined : 'byDefault'
      expect({ table: config.name, identity }).toEqual({ table: config.name, identity: expected })
    }
  }
})

test('the translations are all in use: an entry no longer needed is taken out', () => {
  const rendered = JSON.stringify(Object.values(pgTables).map((t) => describePg(t).indexes))
  for (const [, to] of TRANSLATED)
    expect({ to, used: rendered.includes(JSON.stringify(to).slice(1, -1)) }).toEqual({ to, used: true })
})

// ---------------------------------------------------------------- the row types, checked by tsc

/** true when A and B are assignable to each other (the brackets keep unions from distributing). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type SqliteSchema = typeof sqlite
type PgSchema = typeof pg
type PgTableKey = { [K in keyof PgSchema]: PgSchema[K] extends PgTable ? K : never }[keyof PgSchema]
type SqliteTableKey = { [K in keyof SqliteSchema]: SqliteSchema[K] extends SQLiteTable ? K : never }[keyof SqliteSchema]
/**
 * The tables whose rows differ in type between the engines (or that one schema lacks): never,
 * when all agree. Otherwise the line below fails to compile, naming them.
 */
type SelectMismatch = {
  [K in PgTableKey | SqliteTableKey]: K extends PgTableKey & SqliteTableKey
    ? Same<SqliteSchema[K]['$inferSelect'], PgSchema[K]['$inferSelect']> extends true
      ? never
      : K
    : K
}[PgTableKey | SqliteTableKey]
const rowsAgree: [SelectMismatch] extends [never] ? true : SelectMismatch = true

test('the row types agree (checked by tsc; here only its witness)', () => {
  expect(rowsAgree).toBe(true)
})
