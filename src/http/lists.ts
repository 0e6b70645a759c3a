// Lists (service.md section 3): exact filters, id order, limit/offset, X-Total-Count, Link, and the
// unpaged list streamed from an open statement so that no list is ever held whole in memory.
import { type SQL, and } from 'drizzle-orm'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'
import { getTableColumns } from 'drizzle-orm'
import { t } from 'elysia'
import { type Db, dataGeneration } from '../db/client.ts'
import { invalidParameter } from './errors.ts'

const digits = t.String({ pattern: '^[0-9]+$', description: 'A non-negative integer in decimal digits.' })

/** The query parameters every list takes; resources add their filters to it. */
export const Paging = {
  limit: t.Optional({ ...digits, description: 'Maximum number of records returned. Absent: all of them, streamed.' }),
  offset: t.Optional({ ...digits, description: 'Number of leading records skipped.' }),
}

export type PagingQuery = { limit?: string; offset?: string }

/** A filter naming a record by id: decimal digits, as limit and offset (anything else is a 400 at it). */
export const idFilter = (description: string) => t.Optional({ ...digits, description })

/** A path filter that must end with a slash. */
export function slashPath(parameter: string, value: string | undefined): string | undefined {
  if (value !== undefined && !value.endsWith('/')) throw invalidParameter(parameter, `${parameter} must end with a slash.`)
  return value
}

type Row = Record<string, unknown>

export type ListSpec<T extends SQLiteTable> = {
  table: T
  where: (SQL | undefined)[]
  toApi: (row: T['$inferSelect']) => unknown
  /** The columns toApi reads; default all. Fewer columns: less to fetch and to decode. */
  columns?: readonly string[]
}

const STREAM_BATCH = 256

type Compiled = { select: string; count: string; decode: (raw: Row) => Row }

export function createLists(db: Db) {
  const counts = new Map<string, { generation: string; n: number }>()
  const dialect = (db as unknown as { dialect: { sqlToQuery(s: SQL): { sql: string; params: unknown[] } } }).dialect
  // Per table and column set: the SELECT head, the COUNT head and the decoder, built once.
  const compiled = new Map<SQLiteTable, Map<string, Compiled>>()

  function compile(table: SQLiteTable, columns: readonly string[] | undefined): Compiled {
    const key = columns ? columns.join(',') : '*'
    let byCols = compiled.get(table)
    if (!byCols) compiled.set(table, (byCols = new Map()))
    let c = byCols.get(key)
    if (c) return c
    const all = getTableColumns(table)
    const picked = columns ? columns.map((n) => { const col = all[n]; if (!col) throw new Error(`no column ${n}`); return col }) : Object.values(all)
    const name = (table as unknown as Record<symbol, string>)[Symbol.for('drizzle:Name')]!
    const q = (id: string) => `"${id.replace(/"/g, '""')}"`
    const mapped = picked.filter((col) => col.columnType === 'SQLiteBoolean' || col.columnType === 'SQLiteTextJson')
    c = {
      select: `select ${picked.map((col) => q(col.name)).join(', ')} from ${q(name)}`,
      count: `select count(*) from ${q(name)}`,
      decode: (raw) => {
        for (const col of mapped) {
          const v = raw[col.name]
          if (v !== null && v !== undefined) raw[col.name] = col.mapFromDriverValue(v)
        }
        return raw
      },
    }
    byCols.set(key, c)
    return c
  }

  function total(c: Compiled, whereSql: string, params: unknown[]): number {
    const sql = c.count + whereSql
    const key = params.length ? sql + '\0' + JSON.stringify(params) : sql
    const generation = dataGeneration(db)
    const hit = counts.get(key)
    if (hit && hit.generation === generation) return hit.n
    const n = Number(db.$client.query(sql).values(...(params as never[]))[0]![0])
    if (counts.size > 1000) counts.clear()
    counts.set(key, { generation, n })
    return n
  }

  return function list<T extends SQLiteTable>(spec: ListSpec<T>, paging: PagingQuery): Response {
    const c = compile(spec.table, spec.columns)
    const where = and(...spec.where)
    const w = where ? dialect.sqlToQuery(where) : { sql: '', params: [] }
    const whereSql = w.sql ? ` where ${w.sql}` : ''
    const count = total(c, whereSql, w.params)
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-total-count': String(count) }
    // Digits beyond SQLite's 64-bit integers are capped rather than bound as a float (a 500).
    const limit = paging.limit === undefined ? undefined : Math.min(Number(paging.limit), Number.MAX_SAFE_INTEGER)
    const offset = paging.offset === undefined ? 0 : Math.min(Number(paging.offset), Number.MAX_SAFE_INTEGER)
    if (limit === 0) return new Response('[]', { headers })
    if (limit !== undefined) headers.link = pageLinks(paging, limit, offset, count)

    const base = c.select + whereSql + ' order by "id"'
    const toJson = (raw: Row) => JSON.stringify(spec.toApi(c.decode(raw) as T['$inferSelect']))
    if (limit !== undefined) {
      const rows = db.$client.query(base + ' limit ? offset ?').all(...(w.params as never[]), limit, offset) as Row[]
      let body = '['
      for (let i = 0; i < rows.length; i++) body += (i ? ',' : '') + toJson(rows[i]!)
      return new Response(body + ']', { headers })
    }
    const sql = offset ? base + ' limit -1 offset ?' : base
    const params = offset ? [...w.params, offset] : w.params
    return new Response(streamRows(db.$client.prepare(sql).iterate(...(params as never[])) as IterableIterator<Row>, toJson), { headers })
  }
}

/**
 * The Link header of a page (RFC 8288): first, prev, next and last, each the same list with the
 * same filters at another offset. The targets are references relative to the request ("?..."
 * keeps its path), so they hold behind any proxy or prefix.
 */
function pageLinks(query: PagingQuery, limit: number, offset: number, count: number): string {
  const at = (start: number, rel: string) => {
    const q = new URLSearchParams()
    for (const [name, value] of Object.entries(query)) if (value !== undefined && name !== 'limit' && name !== 'offset') q.set(name, String(value))
    q.set('limit', String(limit))
    q.set('offset', String(start))
    return `<?${q}>; rel="${rel}"`
  }
  const last = count > 0 ? Math.floor((count - 1) / limit) * limit : 0
  const links = [at(0, 'first')]
  if (offset > 0) links.push(at(Math.max(0, Math.min(offset, count) - limit), 'prev'))
  if (offset + limit < count) links.push(at(offset + limit, 'next'))
  links.push(at(last, 'last'))
  return links.join(', ')
}

function streamRows(rows: IterableIterator<Row>, toJson: (raw: Row) => string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let first = true
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
      controller.enqueue(encoder.encode(chunk))
    },
    cancel() {
      rows.return?.()
    },
  })
}

export type List = ReturnType<typeof createLists>
