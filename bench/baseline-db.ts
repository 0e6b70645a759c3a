// The baselines' catalogue connection: bun:sqlite with the pragmas src/db/client.ts openDb sets,
// so that a baseline writes under the same durability and checks as the service.
import { Database } from 'bun:sqlite'

export function openBaselineDb(file: string) {
  const db = new Database(file, { strict: true })
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = NORMAL')
  db.run('PRAGMA foreign_keys = ON')
  db.run('PRAGMA busy_timeout = 5000')
  return db
}
