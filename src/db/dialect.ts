// The few SQL phrases that differ between SQLite and PostgreSQL, written once here so that the
// code's statements stay the same text on both engines. Each answers the phrase for the engine of
// this process's tables (tables.ts), read when the statement is built.
//
// - A list of values travels as one JSON text parameter on both engines (one placeholder however
//   long the list, and a prepared statement takes any list): SQLite reads it with json_each,
//   PostgreSQL with json_array_elements_text, cast back to the column's type so that an index on
//   the column serves the comparison.
// - A JSON column's member: json_extract on SQLite (which answers numbers as numbers and booleans
//   as 1 or 0), the #>> operator on PostgreSQL (which answers text), cast where compared.
// - Case-insensitive order and matching: SQLite's NOCASE and LIKE fold ASCII letters only;
//   lower() under the "C" collation every PostgreSQL text column has does the same.
import { type SQL, type SQLWrapper, sql } from 'drizzle-orm'
import { engine } from './tables.ts'

const onPostgres = () => engine() === 'postgres'

/** The SQL type a list's JSON members are read back as on PostgreSQL. */
export type ListType = 'bigint' | 'text'

/**
 * `column IN (the members of the JSON array text `list`)`: `list` is a value (JSON.stringify of
 * an array) or a `sql.placeholder` bound to one.
 */
export function inJsonList(column: SQLWrapper, list: unknown, type: ListType = 'bigint'): SQL {
  if (!onPostgres()) return sql`${column} IN (SELECT value FROM json_each(${list}))`
  // ::text first: a parameter cast straight to json is serialized by the client as a JSON string.
  return sql`${column} IN (SELECT value::${sql.raw(type)} FROM json_array_elements_text(${list}::text::json))`
}

/** The JSON path `$.a.b` of SQLite, `{a,b}` of PostgreSQL, from its keys (names from the code, never a user's). */
function path(keys: string[]): { sqlite: SQL; pg: SQL } {
  for (const key of keys) if (!/^\w+$/.test(key)) throw new Error(`not a JSON member name: ${key}`)
  return { sqlite: sql.raw(`'$.${keys.join('.')}'`), pg: sql.raw(`'{${keys.join(',')}}'`) }
}

/** A member of a JSON column as a number (NULL when missing). */
export function jsonNumber(column: SQLWrapper, ...keys: string[]): SQL<number | null> {
  const p = path(keys)
  return onPostgres() ? sql`(${column} #>> ${p.pg})::numeric` : sql`json_extract(${column}, ${p.sqlite})`
}

/** A member of a JSON column as text (NULL when missing). */
export function jsonText(column: SQLWrapper, ...keys: string[]): SQL<string | null> {
  const p = path(keys)
  return onPostgres() ? sql`(${column} #>> ${p.pg})` : sql`json_extract(${column}, ${p.sqlite})`
}

/** True when a member of a JSON column is the JSON value true. */
export function jsonIsTrue(column: SQLWrapper, ...keys: string[]): SQL<boolean> {
  const p = path(keys)
  return onPostgres() ? sql`(${column} #>> ${p.pg}) = 'true'` : sql`json_extract(${column}, ${p.sqlite}) = 1`
}

/** True when the JSON object in `column` has the member `key` (a value or placeholder). */
export function jsonHasKey(column: SQLWrapper, key: unknown): SQL<boolean> {
  return onPostgres()
    ? sql`EXISTS (SELECT 1 FROM json_object_keys(${column}) k WHERE k = ${key})`
    : sql`EXISTS (SELECT 1 FROM json_each(${column}) WHERE key = ${key})`
}

/** True when the JSON array in `column` holds the number `value`. */
export function jsonArrayHas(column: SQLWrapper, value: number): SQL<boolean> {
  return onPostgres()
    ? sql`EXISTS (SELECT 1 FROM json_array_elements_text(${column}) e WHERE e = ${String(value)})`
    : sql`EXISTS (SELECT 1 FROM json_each(${column}) WHERE value = ${value})`
}

/** A text column folded for a case-insensitive order (ASCII letters, as SQLite's NOCASE). */
export function noCase(column: SQLWrapper): SQL {
  return onPostgres() ? sql`lower(${column})` : sql`${column} COLLATE NOCASE`
}

/**
 * One row's values as a JSON array (text on either engine): SQLite's json_array, PostgreSQL's
 * json_build_array. Inside jsonGroupArray it is one member, an array itself.
 */
export function jsonArray(...values: SQLWrapper[]): SQL {
  const list = sql.join(values, sql`, `)
  return onPostgres() ? sql`json_build_array(${list})` : sql`json_array(${list})`
}

/**
 * The JSON array text of `value` over the rows of a sub-select, '[]' when there is none, in the
 * order `order` gives where one is given. PostgreSQL's json_agg answers NULL for no row and json,
 * which the client would parse: cast to text, both engines answer the same text.
 */
export function jsonGroupArray(value: SQLWrapper, order?: SQLWrapper): SQL<string> {
  const by = order ? sql` ORDER BY ${order}` : sql``
  return onPostgres() ? sql`coalesce(json_agg(${value}${by}), '[]'::json)::text` : sql`json_group_array(${value}${by})`
}

/**
 * A JSON column as the text it holds, for comparing with text (a task's target with the targets
 * busy, as JSON texts). SQLite keeps JSON as text already. PostgreSQL's json type keeps the exact
 * text it was given and ::text answers it unchanged, so both engines answer the same text for the
 * same value written (the code writes every JSON value with JSON.stringify, on both).
 */
export function jsonAsText(column: SQLWrapper): SQL<string> {
  return onPostgres() ? sql`${column}::text` : sql`${column}`
}

/**
 * A value bound to a JSON column through a placeholder (which skips the column's own mapping):
 * its JSON text on SQLite, which keeps JSON as text; the value itself on PostgreSQL, whose client
 * serializes a value bound to a json parameter (given the text, it would store a JSON string).
 */
export function jsonValue(value: unknown): unknown {
  return onPostgres() ? value : JSON.stringify(value)
}
