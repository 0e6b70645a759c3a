// Lists (docs/api.md, Conventions): exact filters, id order, limit/offset, X-Total-Count, Link, and the
// unpaged list streamed. On SQLite it is streamed from an open statement, so that no list is ever
// held whole in memory; on PostgreSQL see postgresLists.
import { type Column, SQL, and, count as countAll, getTableColumns, getTableName, is, sql } from 'drizzle-orm'
import { type SQLiteColumn, SQLiteSyncDialect, type SQLiteTable } from 'drizzle-orm/sqlite-core'
import { t } from 'elysia'
import { type ListStatement, sqliteListReader } from '../db/lists.ts'
import { type Port, type Work, all, one } from '../db/port.ts'
import { DIGITS_PATTERN, invalidParameter } from './errors.ts'
import { pathOf } from './head.ts'
import { SEP, endsWithSep } from '../storage/paths.ts'

const digits = t.String({ pattern: DIGITS_PATTERN, description: 'A non-negative integer in decimal digits.' })

/** The query parameters every list takes; resources add their filters to it. */
export const Paging = {
  limit: t.Optional({ ...digits, description: 'Maximum number of records returned. Absent: all of them, streamed.' }),
  offset: t.Optional({ ...digits, description: 'Number of leading records skipped.' }),
}

export type PagingQuery = { limit?: string; offset?: string }

/** A filter naming a record by id: decimal digits, as limit and offset (anything else is a 400 at it). */
export const idFilter = (description: string) => t.Optional({ ...digits, description })

/** A folder path filter (a device path, a production's or project's root) that must end with a separator, as folders are recorded. */
export function slashPath(parameter: string, value: string | undefined): string | undefined {
  if (value !== undefined && !endsWithSep(value))
    throw invalidParameter(parameter, `${parameter} must end with ${SEP === '/' ? 'a slash' : 'a backslash'}.`)
  return value
}

type Row = Record<string, unknown>

export type ListSpec<T extends SQLiteTable> = {
  table: T
  /** The list's conditions for this query and user (filters, visibility), made when needed (see `route`). */
  where: () => (SQL | undefined)[]
  /**
   * The route and who asks. A list asked without filters (the first page an editing tool shows)
   * has conditions that depend on these two alone: its WHERE is made once per route and principal
   * and kept as SQL text (drizzle builds and renders it in about 3 µs, a tenth of such a request).
   * A principal is remade whenever what it may read changes (users/service.ts), so a kept WHERE
   * never outlives the visibility it was made for.
   */
  route: string
  user: object
  /** The record of a row; none: the row as read (its `columns`, decoded) is the record. */
  toApi?: (row: T['$inferSelect']) => unknown
  /**
   * The columns read, in this order; default all. Fewer columns: less to fetch and to decode. A
   * column answered under another name is given as [answer name, column] (media assets'
   * `status_approval`, the column `approval`).
   */
  columns?: readonly ListColumn[]
  /**
   * Completes each decoded row in place before it goes to JSON (the media asset lists' picture
   * fields, made of columns read for it: mediaassets/pictures.ts completeListRow).
   */
  complete?: (row: Row) => void
  /**
   * The records of rows read together, as port work, over toApi and complete: for records made of
   * more than their row (a project's linked media assets), read for many rows in a statement or
   * two where toApi would need some per row. Given a page's rows; of the unpaged list, on SQLite
   * each batch streamed (STREAM_BATCH rows), on PostgreSQL all the rows it read.
   */
  records?: (rows: T['$inferSelect'][]) => Work<unknown[]>
  /** Newest first (the history): ids descending; every other list is in id order. */
  descending?: boolean
  /**
   * An ORDER BY of the list's own columns (made by the module, never from the request), over
   * `descending`: SQL text valid on both engines, or drizzle SQL where a phrase differs between
   * them (db/dialect.ts noCase), which binds no value. Where a column ordered by may be NULL, the
   * order must say where NULLs go (`nulls last`, or the column's `IS NULL` first): SQLite puts
   * them first in ascending order, PostgreSQL last.
   */
  order?: string | SQL
}

/** A column of a list's record: its name, or [the name answered, the column read]. */
export type ListColumn = string | readonly [string, string]

const STREAM_BATCH = 256

/**
 * A page's LIMIT and OFFSET, bound. The LIMIT is written `+?`, not `?`: SQLite's planner reads a
 * LIMIT's bound value, so a plain `LIMIT ?` marks the statement to be compiled again each time a
 * value is bound to it (sqlite3_bind, via the statement's expmask): every page request compiled
 * its statement again, 21 µs for a 1-row first page of video assets here, of which the query itself
 * is 2.8 µs (docs/benchmarks.md). With the unary plus the planner does not see the value, and
 * the plan is the one it picks for any LIMIT of 10 or more: with a LIMIT of 1 bound, it had picked
 * a scan of another index and a sort for 18 of the 253 filtered lists (test/http/list-plans.test.ts
 * holds every list to one plan whatever its limit).
 */
export const PAGE = ' limit +? offset ?'

/**
 * From this offset on, a page's ids are picked in a sub-select before its rows are read (see
 * `keyed` below). The sub-select costs about 3 µs a page and saves about 9 ns per entry skipped
 * (50 video assets of 100,000, in-process; docs/benchmarks.md): the two meet near 300. Below it the plain
 * query runs, so the first page, the one users see most, pays nothing.
 */
export const KEYED_FROM = 300

type Compiled = { select: string; ids: string; count: string; decode: (raw: Row) => Row }
/**
 * A list's WHERE as SQL text and parameters, its COUNT and the key the count is kept under, and
 * its page statement. Kept for a list without filters (see ListSpec.route) with the statement
 * prepared: bun:sqlite's query() finds a prepared statement by its text in an LRU map, which cost
 * a text built, hashed and moved in the map on every request. A list with filters makes its
 * Where each time and goes through query().
 */
type Where = {
  sql: string
  params: unknown[]
  count: string
  countKey: string
  page: string
  order: string
  statement?: ListStatement
}
const NO_PARAMS: unknown[] = []

/**
 * A list route's answer: at once on SQLite, whose statements run in the same call, so that the
 * route answers in the turn it was asked (see ListAnswer); a promise of it on PostgreSQL.
 */
export type List = <T extends SQLiteTable>(
  spec: ListSpec<T>,
  paging: PagingQuery,
  request: Request,
) => ListAnswer | Promise<ListAnswer>

/**
 * The lists over the catalogue of `port`, in the form of its engine, chosen once. baseOf: the
 * base of absolute URLs for a request (serve --public-url, else the Host it was sent to), for a
 * page's Link header.
 */
export function createLists(port: Port, baseOf: (request: Request) => string): List {
  const headersOf = pageHeadersMaker(baseOf)
  return port.engine === 'sqlite' ? sqliteLists(port, headersOf) : postgresLists(port, headersOf)
}

/** A page's headers: its type, X-Total-Count and Link (see pageHeadersMaker). */
type PageHeaders = (request: Request, limit: number, offset: number, count: number) => Headers

/**
 * A page's headers (its type, X-Total-Count, Link) by URL and count, as a Headers the Response
 * copies: the same page asked again (a tool's first page) finds them made. pageLinks splits,
 * decodes and escapes the query (a few µs), and a Response made with its headers as an object
 * parses each name and value again (3.3 µs for these three, against 0.8 µs copied from a
 * Headers). The URL says the rest: the limit and offset read from its query, and the base of
 * the links (the public URL, or the URL's own host).
 */
function pageHeadersMaker(baseOf: (request: Request) => string): PageHeaders {
  const pageHeaders = new Map<string, { count: number; headers: Headers }>()
  return function pageHeadersOf(request, limit, offset, count) {
    const kept = pageHeaders.get(request.url)
    if (kept && kept.count === count) return kept.headers
    const headers = new Headers({ 'content-type': 'application/json', 'x-total-count': String(count) })
    const link = pageLinks(request, baseOf(request), { limit, offset, count })
    if (link) headers.set('link', link)
    if (pageHeaders.size > 1000) pageHeaders.clear()
    pageHeaders.set(request.url, { count, headers })
    return headers
  }
}

/** The headers of an answer without a page (limit 0, or the whole list). */
const listHeaders = (count: number) => ({ 'content-type': 'application/json', 'x-total-count': String(count) })

/**
 * The lists on SQLite: the statements as SQL text on bun:sqlite's own client (db/lists.ts says
 * why), the page and its count read in the same call, the count kept while the catalogue is
 * unchanged, and the unpaged list streamed from an open statement.
 */
function sqliteLists(port: Port, pageHeadersOf: PageHeaders): List {
  const db = port.db
  // SQLite's port answers a run's value in the same call (db/port.ts SqlitePort).
  const runNow = <R>(work: Work<R>) => port.run(work) as R
  const reader = sqliteListReader(db)
  // A dialect of our own rather than the database's (drizzle keeps that one internal): the
  // database is opened with no casing option (db/client.ts), so both render a WHERE alike.
  const dialect = new SQLiteSyncDialect()
  // Per table and column set: the SELECT head, the COUNT head and the decoder, built once.
  const compiled = new Map<SQLiteTable, Map<string, Compiled>>()

  // The same per columns array (a module's constant), found without making its key: the key's
  // text cost a map and a join of the columns on every request.
  const byColumns = new WeakMap<readonly ListColumn[], WeakMap<SQLiteTable, Compiled>>()

  function compiledFor(table: SQLiteTable, columns: readonly ListColumn[] | undefined): Compiled {
    if (!columns) return compile(table, columns)
    let byTable = byColumns.get(columns)
    if (!byTable) byColumns.set(columns, (byTable = new WeakMap()))
    let c = byTable.get(table)
    if (!c) byTable.set(table, (c = compile(table, columns)))
    return c
  }

  function compile(table: SQLiteTable, columns: readonly ListColumn[] | undefined): Compiled {
    const named = columns?.map((c): readonly [string, string] => (typeof c === 'string' ? [c, c] : c))
    const key = named ? named.map(([as, n]) => (as === n ? n : `${n} as ${as}`)).join(',') : '*'
    let byCols = compiled.get(table)
    if (!byCols) compiled.set(table, (byCols = new Map()))
    let c = byCols.get(key)
    if (c) return c
    const picked = pickedColumns(table, columns)
    const name = getTableName(table)
    const q = (id: string) => `"${id.replace(/"/g, '""')}"`
    // Booleans and JSON text decoded as drizzle's columns decode them (Number(v) === 1, JSON.parse),
    // written out here: a call of each column's mapFromDriverValue per row and column was a
    // measurable part of a 50-row page (test/http/list-records.test.ts compares).
    const booleans = picked.filter(({ col }) => col.columnType === 'SQLiteBoolean').map(({ as }) => as)
    const jsons = picked.filter(({ col }) => col.columnType === 'SQLiteTextJson').map(({ as }) => as)
    c = {
      select: `select ${picked.map(({ col, as }) => (as === col.name ? q(col.name) : `${q(col.name)} as ${q(as)}`)).join(', ')} from ${q(name)}`,
      ids: `select "id" from ${q(name)}`,
      count: `select count(*) from ${q(name)}`,
      decode: (raw) => {
        for (let i = 0; i < booleans.length; i++) {
          const name = booleans[i]!
          const v = raw[name]
          if (v !== null && v !== undefined) raw[name] = Number(v) === 1
        }
        for (let i = 0; i < jsons.length; i++) {
          const name = jsons[i]!
          const v = raw[name]
          if (v !== null && v !== undefined) raw[name] = JSON.parse(v as string)
        }
        return raw
      },
    }
    byCols.set(key, c)
    return c
  }

  /** An ORDER BY given as drizzle SQL, as text: it binds no value (a value would be bound out of place). */
  function orderText(order: SQL): string {
    const q = dialect.sqlToQuery(order)
    if (q.params.length) throw new Error(`a list's order binds no value: ${q.sql}`)
    return q.sql
  }

  // The WHEREs of lists without filters, per principal and route (see ListSpec.route).
  const unfiltered = new WeakMap<object, Map<string, Where>>()

  function whereOf(c: Compiled, spec: ListSpec<SQLiteTable>, query: Record<string, unknown>): Where {
    let filtered = false
    for (const name in query) if (name !== 'limit' && name !== 'offset') filtered = true
    let kept = filtered ? undefined : unfiltered.get(spec.user)
    const hit = kept?.get(spec.route)
    if (hit) return hit
    const where = and(...spec.where())
    const w = where ? dialect.sqlToQuery(where) : { sql: '', params: NO_PARAMS }
    const sql = w.sql ? ` where ${w.sql}` : ''
    const count = c.count + sql
    const order = spec.order
      ? ` order by ${typeof spec.order === 'string' ? spec.order : orderText(spec.order)}`
      : spec.descending
        ? ' order by "id" desc'
        : ' order by "id"'
    const page = c.select + sql + order + PAGE
    const made = {
      sql,
      params: w.params,
      count,
      countKey: w.params.length ? count + '\0' + JSON.stringify(w.params) : count,
      page,
      order,
    }
    // Only a principal that lasts is given one: the key cache's are frozen and kept until what they
    // may read changes; one made for a single request (a password checked by Basic) is not.
    if (!filtered && Object.isFrozen(spec.user)) {
      if (!kept) unfiltered.set(spec.user, (kept = new Map()))
      kept.set(spec.route, { ...made, statement: reader.keep(page) })
    }
    return made
  }

  /**
   * The list route's answer, for the route to make its Response of (see ListAnswer); `request`
   * is the one asking, whose query a page's Link keeps.
   */
  return function list<T extends SQLiteTable>(spec: ListSpec<T>, paging: PagingQuery, request: Request): ListAnswer {
    const c = compiledFor(spec.table, spec.columns)
    const w = whereOf(c, spec as unknown as ListSpec<SQLiteTable>, paging as Record<string, unknown>)
    const whereSql = w.sql
    // The number of rows the list's WHERE selects, kept while the catalogue is unchanged (db/lists.ts total).
    const count = reader.total(w.count, w.params, w.countKey)
    // Digits beyond SQLite's 64-bit integers are capped rather than bound as a float (a 500).
    const limit = paging.limit === undefined ? undefined : Math.min(Number(paging.limit), Number.MAX_SAFE_INTEGER)
    const offset = paging.offset === undefined ? 0 : Math.min(Number(paging.offset), Number.MAX_SAFE_INTEGER)
    if (limit === 0) return { body: '[]', headers: listHeaders(count) }

    const toRecord = recordMaker(spec, c.decode)
    const records = spec.records
    if (limit !== undefined) {
      const rows: unknown[] = reader.page(
        offset >= KEYED_FROM ? keyed(c, whereSql, w.order) : (w.statement ?? w.page),
        w.params,
        limit,
        offset,
      )
      // The records in place of the rows, then the page in one JSON.stringify: the same text as
      // one call per record joined with commas, made faster (a 50-row page).
      for (let i = 0; i < rows.length; i++) rows[i] = toRecord(rows[i] as Row)
      const page = records ? runNow(records(rows as T['$inferSelect'][])) : rows
      return { body: JSON.stringify(page), headers: pageHeadersOf(request, limit, offset, count) }
    }
    const base = c.select + whereSql + w.order
    const sql = offset ? base + ' limit -1 offset ?' : base
    const params = offset ? [...w.params, offset] : w.params
    const body = records
      ? streamRows(
          inBatches(reader.rows(sql, params), (batch) =>
            runNow(records(batch.map((raw) => toRecord(raw)) as T['$inferSelect'][])),
          ),
          JSON.stringify,
        )
      : streamRows(reader.rows(sql, params), (raw: Row) => JSON.stringify(toRecord(raw)))
    return { body, headers: listHeaders(count) }
  }
}

/** The columns a list reads, with the name each is answered under (ListSpec.columns; default all, by their names). */
function pickedColumns(table: SQLiteTable, columns: readonly ListColumn[] | undefined): { col: Column; as: string }[] {
  const all = getTableColumns(table)
  if (!columns) return Object.values(all).map((col) => ({ col, as: col.name }))
  return columns.map((c) => {
    const [as, n] = typeof c === 'string' ? [c, c] : c
    const col = all[n]
    if (!col) throw new Error(`no column ${n}`)
    return { col, as }
  })
}

/**
 * The record of a row as read: `decode` first (SQLite's booleans and JSON text; nothing on
 * PostgreSQL, whose rows drizzle decodes), then the spec's toApi or complete. With `records`, the
 * row decoded, for records to make the record of.
 */
function recordMaker<T extends SQLiteTable>(spec: ListSpec<T>, decode: (raw: Row) => Row): (raw: Row) => unknown {
  const toApi = spec.toApi
  const complete = spec.complete
  if (spec.records) return decode
  return toApi
    ? (raw: Row) => toApi(decode(raw) as T['$inferSelect'])
    : complete
      ? (raw: Row) => {
          const row = decode(raw)
          complete(row)
          return row
        }
      : decode
}

const asRead = (row: Row) => row

/**
 * The lists on PostgreSQL: the page and its count, two statements built by drizzle from the
 * spec's own WHERE and ORDER BY and run through the port at once, each on a session of the pool
 * (so a commit between the two can make them disagree by its rows, where SQLite reads both in one
 * snapshot). Every round trip costs more there than building the statement, so nothing is kept
 * as text.
 * The count is made on every request: the file version SQLite's count is kept against
 * (db/lists.ts total) has no counterpart, and no cheap question tells whether another session
 * committed since. A whole list (no limit) is read in one statement and sent as it is turned
 * into JSON: held in memory while it is sent, where SQLite steps an open statement, since a
 * cursor would hold one of the pool's sessions for as long as the client takes to read.
 * Deep pages read their rows with a plain OFFSET (SQLite's keyed sub-select is its planner's).
 */
function postgresLists(port: Port, pageHeadersOf: PageHeaders): List {
  const db = port.db
  // The fields of a select per columns array (a module's constant) and table.
  const byColumns = new WeakMap<readonly ListColumn[], WeakMap<SQLiteTable, Record<string, SQLiteColumn>>>()

  function fieldsOf(table: SQLiteTable, columns: readonly ListColumn[]): Record<string, SQLiteColumn> {
    let byTable = byColumns.get(columns)
    if (!byTable) byColumns.set(columns, (byTable = new WeakMap()))
    let fields = byTable.get(table)
    if (!fields) {
      fields = {}
      for (const { col, as } of pickedColumns(table, columns)) fields[as] = col as SQLiteColumn
      byTable.set(table, fields)
    }
    return fields
  }

  return async function list<T extends SQLiteTable>(
    spec: ListSpec<T>,
    paging: PagingQuery,
    request: Request,
  ): Promise<ListAnswer> {
    const table = spec.table as SQLiteTable
    const where = and(...spec.where())
    // Digits beyond PostgreSQL's 64-bit integers are capped, as on SQLite.
    const limit = paging.limit === undefined ? undefined : Math.min(Number(paging.limit), Number.MAX_SAFE_INTEGER)
    const offset = paging.offset === undefined ? 0 : Math.min(Number(paging.offset), Number.MAX_SAFE_INTEGER)
    const counting = port.run(one(db.select({ n: countAll() }).from(table).where(where)))
    if (limit === 0) return { body: '[]', headers: listHeaders((await counting)?.n ?? 0) }
    const order = spec.order
      ? is(spec.order, SQL)
        ? spec.order
        : sql.raw(spec.order)
      : sql.raw(spec.descending ? '"id" desc' : '"id"')
    const page = (spec.columns ? db.select(fieldsOf(table, spec.columns)) : db.select())
      .from(table)
      .where(where)
      .orderBy(order)
      .$dynamic()
    if (limit !== undefined) page.limit(limit)
    if (offset) page.offset(offset)
    const [rows, counted] = await Promise.all([port.run(all<Row>(page as never)), counting])
    const count = counted?.n ?? 0
    if (spec.records) {
      // Every row read is made a record at once, in the statements records needs for them all.
      const records = (await port.run(spec.records(rows as T['$inferSelect'][]))) as Row[]
      if (limit === undefined)
        return { body: streamRows(records.values(), JSON.stringify), headers: listHeaders(count) }
      return { body: JSON.stringify(records), headers: pageHeadersOf(request, limit, offset, count) }
    }
    const toRecord = recordMaker(spec, asRead)
    if (limit === undefined) {
      const toJson = (row: Row) => JSON.stringify(toRecord(row))
      return { body: streamRows(rows.values(), toJson), headers: listHeaders(count) }
    }
    const records: unknown[] = rows
    for (let i = 0; i < records.length; i++) records[i] = toRecord(records[i] as Row)
    return { body: JSON.stringify(records), headers: pageHeadersOf(request, limit, offset, count) }
  }
}

/**
 * The records of `rows` made STREAM_BATCH rows at a time by `make` (ListSpec.records), for the
 * unpaged list streamed: a batch is read from the open statement only as the stream is pulled,
 * so the list is never held whole. Closing this iterator (a cancelled stream) closes `rows`.
 */
function* inBatches(rows: IterableIterator<Row>, make: (batch: Row[]) => unknown[]): IterableIterator<Row> {
  let batch: Row[] = []
  for (const row of rows) {
    batch.push(row)
    if (batch.length < STREAM_BATCH) continue
    yield* make(batch) as Row[]
    batch = []
  }
  if (batch.length) yield* make(batch) as Row[]
}

/**
 * A deep page: its ids first, from the list's own WHERE ordered by id, then its rows by those ids.
 * SQLite's OFFSET steps over every skipped row; in the sub-select it steps over entries of an index
 * that holds the id and every filtered column (db/schema.ts), not over table rows, and reads the
 * rows of the page only. Same rows in the same order as the plain query; test/http/list-plans.test.ts
 * holds every list to that plan and to those pages.
 */
const keyed = (c: { select: string; ids: string }, whereSql: string, order: string) =>
  `${c.select} where "id" in (${c.ids}${whereSql}${order}${PAGE})${order}`

/**
 * The Link header of a page (RFC 8288), made with the page: the previous and the next page, as
 * absolute URLs on the API root's base (medialoopster clients follow them as they are), with the
 * request's own query kept as it was spelled, unknown parameters included, and only limit and
 * offset replaced. No prev on the first page, no next on the last. Made here and not in a global
 * after-handle hook, which added an await and a lookup to every request of every route.
 */
export function pageLinks(
  request: Request,
  base: string,
  { limit, offset, count }: { limit: number; offset: number; count: number },
): string | undefined {
  const hasPrev = offset > 0
  const hasNext = offset + limit < count
  if (!hasPrev && !hasNext) return undefined
  const url = request.url
  const pathEnd = url.indexOf('?')
  let kept = ''
  if (pathEnd >= 0)
    for (const pair of url.slice(pathEnd + 1).split('&')) if (pair && !PAGING.has(nameOf(pair))) kept += pair + '&'
  const at = (start: number, rel: string) =>
    `<${escapeTarget(`${base}${pathOf(url)}?${kept}limit=${limit}&offset=${start}`)}>; rel="${rel}"`
  const prev = hasPrev ? at(Math.max(0, Math.min(offset, count) - limit), 'prev') : undefined
  const next = hasNext ? at(offset + limit, 'next') : undefined
  return prev && next ? `${prev}, ${next}` : (prev ?? next)
}

const PAGING = new Set(['limit', 'offset'])

/** A query pair's name decoded as the router decodes it ("+" a space), so that "limi%74" is limit too. */
function nameOf(pair: string): string {
  const eq = pair.indexOf('=')
  const name = eq < 0 ? pair : pair.slice(0, eq)
  // Most names are plain (limit, offset, production): nothing to decode.
  if (!name.includes('%') && !name.includes('+')) return name
  try {
    return decodeURIComponent(name.replaceAll('+', ' '))
  } catch {
    return name.replaceAll('+', ' ')
  }
}

/** What may not stand between < and > in a Link header, percent-encoded (Bun passes a query's < > " through). */
const UNSAFE_IN_TARGET = /[<>"\s\\^`{|}]/
const UNSAFE_IN_TARGET_ALL = new RegExp(UNSAFE_IN_TARGET.source, 'g')
const escapeTarget = (target: string) =>
  UNSAFE_IN_TARGET.test(target) ? target.replace(UNSAFE_IN_TARGET_ALL, (c) => encodeURIComponent(c)) : target

/**
 * Bytes of an unpaged list after which the garbage collector is asked, without waiting, to run
 * (Bun.gc(false)). A list read at full speed makes its rows, their JSON and the encoded chunks
 * faster than JavaScriptCore collects them on its own: 100,000 video assets (29 MiB) took the
 * server from 92 MiB idle to a peak of 155 to 158 MiB; asked every 4 MiB, 126 MiB, and the read
 * took as long (bench/lists.ts, "Unpaged list").
 */
const COLLECT_EVERY = 4 * 2 ** 20

export function streamRows(rows: IterableIterator<Row>, toJson: (raw: Row) => string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let first = true
  let sinceCollect = 0
  return new ReadableStream({
    pull(controller) {
      let chunk = first ? '[' : ''
      for (let i = 0; i < STREAM_BATCH; i++) {
        const next = rows.next()
        if (next.done) {
          controller.enqueue(encoder.encode(chunk + ']'))
          controller.close()
          return
        }
        chunk += (first ? '' : ',') + toJson(next.value)
        first = false
      }
      const bytes = encoder.encode(chunk)
      controller.enqueue(bytes)
      sinceCollect += bytes.byteLength
      if (sinceCollect >= COLLECT_EVERY) {
        sinceCollect = 0
        Bun.gc(false)
      }
    },
    cancel() {
      rows.return?.()
    },
  })
}

/**
 * A list's body (a page's JSON text, or the whole list as a stream) and headers. The route makes
 * the Response itself, `return new Response(answer.body, answer)`: Elysia reads a handler's source
 * to decide whether to await it (compose.mjs isAsync), and awaits any that returns a call's result
 * (`=> f(...)`, `return f(...)`) but not `return new ...`. A list route that is not awaited, and has
 * no parse hook (context.ts parseBody), answers in the same turn it was asked, without a promise
 * (test/http/list-routes.test.ts). A page's headers are a Headers kept for the next request
 * of the same page: the Response copies them, and nothing else may change them.
 */
export type ListAnswer = { body: string | ReadableStream<Uint8Array>; headers: Record<string, string> | Headers }
