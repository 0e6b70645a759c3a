// The PostgreSQL catalogue opened for a process that works on it (`serve --database`, a command
// given --database): this process's tables made PostgreSQL's, the migrations applied under their
// lock, and a pool of sessions the port runs work on.
import { SQL } from 'bun'
import { drizzle } from 'drizzle-orm/bun-sql'
import type { Log } from '../../util/log.ts'
import { type Port, postgresPort } from '../port.ts'
import { useEngine } from '../tables.ts'
import { migratePostgres } from './migrate.ts'

/**
 * Sessions a serve keeps at most. A request holds one for a statement (or for its transaction),
 * a few milliseconds; the task runner, the watcher's scans and the event stream's listener take a
 * few more. Twenty leaves most of a default server's 100 connections to other nodes and to the
 * facility's own tools, and is far more than two cores' worth of requests can keep busy.
 */
export const POOL_SIZE = 20

export type PostgresCatalogue = {
  port: Port
  /** The pool itself, for what only Bun's client does (search's statements, LISTEN). */
  client: SQL
  /** Migrations this open applied (0 when the catalogue was up to date). */
  applied: number
  close(): Promise<void>
}

/**
 * Opens the catalogue at `url`: applies the migrations it lacks (rejects as migratePostgres does:
 * a PostgresConnectError when the server cannot be reached or refuses the session), makes this
 * process's tables PostgreSQL's (tables.ts; a process holds one engine), and opens the pool. A function queued to run after a commit that throws is logged, not thrown into the writer.
 */
export async function openPostgres(url: string, log: Log, poolSize = POOL_SIZE): Promise<PostgresCatalogue> {
  const applied = await migratePostgres(url)
  // Once the catalogue is there and current: a server that cannot be reached changes nothing in
  // this process. Throws where this process works on a SQLite catalogue already.
  useEngine('postgres')
  const client = new SQL({ url, max: poolSize })
  const port = postgresPort(drizzle({ client }) as never, (error) =>
    log.error('work after a commit failed', { error: error instanceof Error ? error.message : String(error) }),
  )
  return { port, client, applied, close: () => client.close() }
}
