// The list routes' statements on SQLite (http/lists.ts), run on bun:sqlite's own client rather
// than through drizzle and the port. A list page is the hottest read of the API: its statement is
// prepared once and kept (or found by its text in bun:sqlite's statement cache), bound and stepped
// with no builder, no mapping of columns and no work driven in between, and its count is kept
// while the catalogue's file version stands. That is what makes a first page of 50 cost about what
// plain Bun.serve over bun:sqlite costs (bench/lists.ts); drizzle's builder and the port's steps
// each cost more than the page's query itself. On PostgreSQL the lists go through the port.
import type { Statement } from 'bun:sqlite'
import { type Db, dataVersionOf, fileVersion, readSnapshotOf } from './client.ts'

type Row = Record<string, unknown>

/** A page's statement, prepared for a caller that keeps it (a list without filters, per route and principal). */
export type ListStatement = Statement

export type SqliteListReader = {
  /** A statement of `sql` for the caller to keep and run with `page`. */
  keep(sql: string): ListStatement
  /**
   * The rows of a page: of a kept statement, or of bun:sqlite's cached statement of this text,
   * `params` then the LIMIT and the OFFSET bound.
   */
  page(statement: ListStatement | string, params: unknown[], limit: number, offset: number): Row[]
  /**
   * Every row of `sql`, stepped as they are read, on a statement of their own: a whole list is
   * read while it is sent, and another request could step the cached statement of that text
   * meanwhile.
   */
  rows(sql: string, params: unknown[]): IterableIterator<Row>
  /**
   * The number of rows the list's COUNT `sql` (with `params`) counts: counted once, then kept
   * under `key` while the catalogue's file version (client.ts fileVersion) stands, which every
   * commit changes, this connection's and another's. In a GET's read transaction that version is
   * the snapshot's, which the page reads too: the check costs no statement of its own (the
   * snapshot's first read, data_version, is shared with the key check). Inside a transaction that
   * writes, the count is made anew (its own rows are not committed yet, and the version does not
   * say they are there).
   */
  total(sql: string, params: unknown[], key: string): number
}

export function sqliteListReader(db: Db): SqliteListReader {
  // The client's methods are looked up at each call, not bound once: a test that watches every
  // statement of the connection (test/http/statements.test.ts) wraps them after the app is made.
  const client = db.$client
  const dataVersion = dataVersionOf(db)
  const snapshot = readSnapshotOf(db)
  const counts = new Map<string, { version: number; n: number }>()
  const count = (sql: string, params: unknown[]) => Number(client.query(sql).values(...(params as never[]))[0]![0])

  return {
    keep: (sql) => client.prepare(sql),
    page: (statement, params, limit, offset) =>
      (typeof statement === 'string' ? client.query(statement) : statement).all(
        ...(params as never[]),
        limit,
        offset,
      ) as Row[],
    rows: (sql, params) => client.prepare(sql).iterate(...(params as never[])) as IterableIterator<Row>,
    total(sql, params, key) {
      if (!snapshot.active) {
        if (client.inTransaction) return count(sql, params)
        // Outside a request's snapshot: a read of its own, so that the version is today's.
        dataVersion.refresh()
      }
      dataVersion.get()
      const version = fileVersion(client)
      const hit = counts.get(key)
      if (hit && hit.version === version) return hit.n
      const n = count(sql, params)
      if (counts.size > 1000) counts.clear()
      // The version the count was read at (outside a snapshot, its statement may have begun a newer read).
      counts.set(key, { version: fileVersion(client), n })
      return n
    },
  }
}
