import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import * as schema from './schema.ts'

export type Db = ReturnType<typeof openDb>

/** Opens (creating if needed) the catalogue with the pragmas every connection needs. */
export function openDb(file: string) {
  mkdirSync(dirname(file), { recursive: true })
  const client = new Database(file, { create: true, strict: true })
  client.run('PRAGMA journal_mode = WAL')
  client.run('PRAGMA synchronous = NORMAL')
  client.run('PRAGMA foreign_keys = ON')
  client.run('PRAGMA busy_timeout = 5000')
  return drizzle({ client, schema })
}

/**
 * A number that changes whenever the database content may have changed: writes through this
 * connection (total_changes) or through any other connection, such as a CLI command
 * (data_version). Used to keep derived values (list counts) without serving stale ones.
 */
export function dataGeneration(db: Db): string {
  const row = db.$client
    .query<{ v: number; t: number }, []>('SELECT (SELECT data_version FROM pragma_data_version) AS v, total_changes() AS t')
    .get()!
  return `${row.v}:${row.t}`
}
