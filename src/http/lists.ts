// Lists (service.md section 3): exact filters, id order, limit/offset, X-Total-Count, and the
// unpaged list streamed from an open statement so that no list is ever held whole in memory.
import { type SQL, and, asc, count } from 'drizzle-orm'
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

/** A path filter that must end with a slash. */
export function slashPath(parameter: string, value: string | undefined): string | undefined {
  if (value !== undefined && !value.endsWith('/')) throw invalidParameter(parameter, `${parameter} must end with a slash.`)
  return value
}

type Row = Record<string, unknown>

/** Turns raw SQLite values (0/1, JSON text) into the column types drizzle declares. */
function decoderFor(table: SQLiteTable): (raw: Row) => Row {
  const mapped = Object.values(getTableColumns(table)).filter(
    (c) => c.columnType === 'SQLiteBoolean' || c.columnType === 'SQLiteTextJson',
  )
  return (raw) => {
    for (const c of mapped) {
      const v = raw[c.name]
      if (v !== null && v !== undefined) raw[c.name] = c.mapFromDriverValue(v)
    }
    return raw
  }
}

export type ListSpec<T extends SQLiteTable> = {
  table: T
  where: (SQL | undefined)[]
  toApi: (row: T['$inferSelect']) => unknown
}

const STREAM_BATCH = 256

export function createLists(db: Db) {
  const decoders = new Map<SQLiteTable, (raw: Row) => Row>()
  const counts = new Map<string, { generation: string; n: number }>()

  function total(table: SQLiteTable, where: SQL | undefined): number {
    const { sql, params } = db.select({ n: count() }).from(table).where(where).toSQL()
    const key = sql + '\0' + JSON.stringify(params)
    const generation = dataGeneration(db)
    const hit = counts.get(key)
    if (hit && hit.generation === generation) return hit.n
    const n = Number(db.$client.query(sql).values(...(params as never[]))[0]![0])
    if (counts.size > 1000) counts.clear()
    counts.set(key, { generation, n })
    return n
  }

  return function list<T extends SQLiteTable>(spec: ListSpec<T>, paging: PagingQuery): Response {
    const where = and(...spec.where)
    const headers = { 'content-type': 'application/json', 'x-total-count': String(total(spec.table, where)) }
    // Digits beyond SQLite's 64-bit integers (limit=99999999999999999999) are capped rather than
    // passed on as a float, which SQLite refuses (that was a 500).
    const limit = paging.limit === undefined ? undefined : Math.min(Number(paging.limit), Number.MAX_SAFE_INTEGER)
    const offset = paging.offset === undefined ? 0 : Math.min(Number(paging.offset), Number.MAX_SAFE_INTEGER)
    if (limit === 0) return new Response('[]', { headers })

    let decode = decoders.get(spec.table)
    if (!decode) decoders.set(spec.table, (decode = decoderFor(spec.table)))
    const idColumn = getTableColumns(spec.table).id!
    const base = db.select().from(spec.table as SQLiteTable).where(where).orderBy(asc(idColumn))
    // SQLite wants a LIMIT before OFFSET and drizzle drops limit(-1): "no limit" is the largest one.
    const query = limit === undefined ? (offset ? base.limit(Number.MAX_SAFE_INTEGER).offset(offset) : base) : base.limit(limit).offset(offset)
    const { sql, params } = query.toSQL()
    const toJson = (raw: Row) => JSON.stringify(spec.toApi(decode(raw) as T['$inferSelect']))

    if (limit !== undefined) {
      const rows = db.$client.query(sql).all(...(params as never[])) as Row[]
      return new Response(`[${rows.map(toJson).join(',')}]`, { headers })
    }
    return new Response(streamRows(db.$client.prepare(sql).iterate(...(params as never[])) as IterableIterator<Row>, toJson), {
      headers,
    })
  }
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
