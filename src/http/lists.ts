// Lists (docs/api.md, Conventions): exact filters, id order, limit/offset, X-Total-Count, Link, and the
// unpaged list streamed from an open statement so that no list is ever held whole in memory.
import type { Statement } from 'bun:sqlite'
import { type SQL, and, getTableColumns, getTableName } from 'drizzle-orm'
import { SQLiteSyncDialect, type SQLiteTable } from 'drizzle-orm/sqlite-core'
import { t } from 'elysia'
import { type Db, dataVersionOf, fileVersion, readSnapshotOf } from '../db/client.ts'
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
  /** Newest first (the history): ids descending; every other list is in id order. */
  descending?: boolean
  /** An ORDER BY of the list's own columns (SQL text made by the module, never from the request), over `descending`. */
  order?: string
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
 * A list's WHERE as SQL text and parameters, the key of its count, and its page statement. Kept
 * for a list without filters (see ListSpec.route) with the statement prepared: bun:sqlite's
 * query() finds a prepared statement by its text in an LRU map, which cost a text built, hashed
 * and moved in the map on every request. A list with filters makes its Where each time and
 * goes through query().
 */
type Where = { sql: string; params: unknown[]; countKey: string; page: string; order: string; statement?: Statement }
const NO_PARAMS: unknown[] = []

/**
 * baseOf: the base of absolute URLs for a request (serve --public-url, else the Host it was sent
 * to), for a page's Link header.
 */
export function createLists(db: Db, baseOf: (request: Request) => string) {
  const counts = new Map<string, { version: number; n: number }>()
  const client = db.$client
  const dataVersion = dataVersionOf(db)
  const snapshot = readSnapshotOf(db)
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
    const all = getTableColumns(table)
    const picked = named
      ? named.map(([as, n]) => {
          const col = all[n]
          if (!col) throw new Error(`no column ${n}`)
          return { col, as }
        })
      : Object.values(all).map((col) => ({ col, as: col.name }))
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
    const order = spec.order ? ` order by ${spec.order}` : spec.descending ? ' order by "id" desc' : ' order by "id"'
    const page = c.select + sql + order + PAGE
    const made = {
      sql,
      params: w.params,
      countKey: w.params.length ? count + '\0' + JSON.stringify(w.params) : count,
      page,
      order,
    }
    // Only a principal that lasts is given one: the key cache's are frozen and kept until what they
    // may read changes; one made for a single request (a password checked by Basic) is not.
    if (!filtered && Object.isFrozen(spec.user)) {
      if (!kept) unfiltered.set(spec.user, (kept = new Map()))
      kept.set(spec.route, { ...made, statement: db.$client.prepare(page) })
    }
    return made
  }

  /**
   * The number of rows the list's WHERE selects: counted once, then kept while the catalogue's file
   * version (db/client.ts fileVersion) stands, which every commit changes, this connection's and
   * another's. In a GET's read transaction that version is the snapshot's, which the page reads
   * too: the check costs no statement of its own (the snapshot's first read, data_version, is
   * shared with the key check). Inside a transaction that writes, the count is made anew (its own
   * rows are not committed yet, and the version does not say they are there).
   */
  function total(c: Compiled, w: Where): number {
    if (!snapshot.active) {
      if (client.inTransaction) return count(c, w)
      // Outside a request's snapshot: a read of its own, so that the version is today's.
      dataVersion.refresh()
    }
    dataVersion.get()
    const version = fileVersion(client)
    const hit = counts.get(w.countKey)
    if (hit && hit.version === version) return hit.n
    const n = count(c, w)
    if (counts.size > 1000) counts.clear()
    // The version the count was read at (outside a snapshot, its statement may have begun a newer read).
    counts.set(w.countKey, { version: fileVersion(client), n })
    return n
  }

  // A page's headers (its type, X-Total-Count, Link) by URL and count, as a Headers the Response
  // copies: the same page asked again (a tool's first page) finds them made. pageLinks splits,
  // decodes and escapes the query (a few µs), and a Response made with its headers as an object
  // parses each name and value again (3.3 µs for these three, against 0.8 µs copied from a
  // Headers). The URL says the rest: the limit and offset read from its query, and the base of
  // the links (the public URL, or the URL's own host).
  const pageHeaders = new Map<string, { count: number; headers: Headers }>()
  function pageHeadersOf(request: Request, limit: number, offset: number, count: number): Headers {
    const kept = pageHeaders.get(request.url)
    if (kept && kept.count === count) return kept.headers
    const headers = new Headers({ 'content-type': 'application/json', 'x-total-count': String(count) })
    const link = pageLinks(request, baseOf(request), { limit, offset, count })
    if (link) headers.set('link', link)
    if (pageHeaders.size > 1000) pageHeaders.clear()
    pageHeaders.set(request.url, { count, headers })
    return headers
  }

  const count = (c: Compiled, w: Where) => Number(client.query(c.count + w.sql).values(...(w.params as never[]))[0]![0])

  /**
   * The list route's answer, for the route to make its Response of (see ListAnswer); `request`
   * is the one asking, whose query a page's Link keeps.
   */
  return function list<T extends SQLiteTable>(spec: ListSpec<T>, paging: PagingQuery, request: Request): ListAnswer {
    const c = compiledFor(spec.table, spec.columns)
    const w = whereOf(c, spec as unknown as ListSpec<SQLiteTable>, paging as Record<string, unknown>)
    const whereSql = w.sql
    const count = total(c, w)
    // Digits beyond SQLite's 64-bit integers are capped rather than bound as a float (a 500).
    const limit = paging.limit === undefined ? undefined : Math.min(Number(paging.limit), Number.MAX_SAFE_INTEGER)
    const offset = paging.offset === undefined ? 0 : Math.min(Number(paging.offset), Number.MAX_SAFE_INTEGER)
    const headers = () => ({ 'content-type': 'application/json', 'x-total-count': String(count) })
    if (limit === 0) return { body: '[]', headers: headers() }

    const toApi = spec.toApi
    const complete = spec.complete
    const toRecord = toApi
      ? (raw: Row) => toApi(c.decode(raw) as T['$inferSelect'])
      : complete
        ? (raw: Row) => {
            const row = c.decode(raw)
            complete(row)
            return row
          }
        : c.decode
    const toJson = (raw: Row) => JSON.stringify(toRecord(raw))
    if (limit !== undefined) {
      const statement =
        offset >= KEYED_FROM ? db.$client.query(keyed(c, whereSql, w.order)) : (w.statement ?? db.$client.query(w.page))
      const rows = statement.all(...(w.params as never[]), limit, offset) as unknown[]
      // The records in place of the rows, then the page in one JSON.stringify: the same text as
      // one call per record joined with commas, made faster (a 50-row page).
      for (let i = 0; i < rows.length; i++) rows[i] = toRecord(rows[i] as Row)
      return { body: JSON.stringify(rows), headers: pageHeadersOf(request, limit, offset, count) }
    }
    const base = c.select + whereSql + w.order
    const sql = offset ? base + ' limit -1 offset ?' : base
    const params = offset ? [...w.params, offset] : w.params
    return {
      body: streamRows(db.$client.prepare(sql).iterate(...(params as never[])) as IterableIterator<Row>, toJson),
      headers: headers(),
    }
  }
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

export type List = ReturnType<typeof createLists>

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
