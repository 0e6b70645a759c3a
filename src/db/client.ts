import { Database } from 'bun:sqlite'
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import type { Log } from '../util/log.ts'
import * as schema from './schema.ts'

export type Db = ReturnType<typeof openDb>

/**
 * Opens (creating if needed) the catalogue with the pragmas every connection needs. The catalogue
 * holds device passwords and key hashes (service.md 5, secrets at rest): a new data folder is made
 * 0700 and a new catalogue 0600 before SQLite opens it, and SQLite gives its -wal and -shm files
 * the mode of the catalogue.
 */
export function openDb(file: string) {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  closeSync(openSync(file, 'a', 0o600))
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

/**
 * An install made before the catalogue was private: takes the group and other permissions off
 * the catalogue's files and off the data folder holding it, logging each change (serve and
 * migrate run this). Nothing else is touched; a change that fails (another owner) is logged and
 * the command goes on.
 */
export function tightenModes(file: string, log: Log) {
  for (const path of [dirname(file), file, `${file}-wal`, `${file}-shm`]) {
    if (!existsSync(path)) continue
    const mode = statSync(path).mode & 0o7777
    if ((mode & 0o077) === 0) continue
    const change = { path, from: octal(mode), to: octal(mode & ~0o077) }
    try {
      chmodSync(path, mode & ~0o077)
      log.warn('permissions tightened', change)
    } catch (error) {
      log.warn('permissions could not be tightened', { ...change, error: (error as Error).message })
    }
  }
}

const octal = (mode: number) => mode.toString(8).padStart(4, '0')

/** The data folder: the folder of the catalogue file, with a final slash. */
export const dataFolderOf = (db: Db) => dirname(db.$client.filename).replace(/\/?$/, '/')
