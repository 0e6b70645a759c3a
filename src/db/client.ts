import { Database } from 'bun:sqlite'
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import type { Log } from '../util/log.ts'
import { restrictToUser } from '../util/winacl.ts'
import { asFolder } from '../storage/paths.ts'
import { settling } from './aftercommit.ts'
import * as schema from './schema.ts'

export type Db = ReturnType<typeof openDb>

/**
 * Opens (creating if needed) the catalogue with the pragmas every connection needs. The catalogue
 * holds device passwords and key hashes (docs/api.md, Permissions, secrets at rest): a new data folder is made
 * 0700 and a new catalogue 0600 before SQLite opens it, and SQLite gives its -wal and -shm files
 * the mode of the catalogue.
 */
export function openDb(file: string) {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  closeSync(openSync(file, 'a', 0o600))
  const client = new Database(file, { create: true, strict: true })
  // The wait for a lock first: even the journal-mode pragma may meet another process's lock (a
  // CLI command opening the catalogue while the server checkpoints).
  client.run('PRAGMA busy_timeout = 5000')
  client.run('PRAGMA journal_mode = WAL')
  client.run('PRAGMA synchronous = NORMAL')
  client.run('PRAGMA foreign_keys = ON')
  const db = drizzle({ client, schema })
  // Every transaction takes the write lock as it begins (BEGIN IMMEDIATE), not at its first write.
  // A deferred transaction that reads, then writes after another process (a CLI command beside
  // the server) committed, fails at once with SQLITE_BUSY: the busy timeout cannot help it, since
  // its snapshot is stale. An immediate one waits for the lock instead. The transactions on the
  // bare client (the task runner's, the import log's) call `.immediate` for the same reason.
  // Its end settles what was queued for after its commit (aftercommit.ts).
  const deferred = db.transaction.bind(db)
  db.transaction = ((run, config) =>
    settling(client, () => deferred(run, { behavior: 'immediate', ...config }))) as typeof db.transaction
  return db
}

/**
 * `PRAGMA data_version` of a connection: it changes when another connection (a CLI command in
 * another process) commits. Reading it takes a read transaction, about 2 µs, as much as the rest
 * of a key check. So it is read once and kept until `refresh()`, which the app calls as each
 * request starts (app.ts), and at most until the end of the event loop's turn, for any caller
 * outside a request. A request therefore sees every commit made before it started. Inside a GET's
 * read transaction (readSnapshotOf) the first read opens the snapshot that the request's other
 * statements share: it is the one statement a GET runs besides its own and the BEGIN and COMMIT.
 */
export type DataVersion = {
  get(): number
  refresh(): void
  /** The version as of this moment, read anew (for a poll outside any request). */
  now(): number
}

/** `held`: inside a GET's read transaction, which forgets the value as it ends (no timer per request). */
type KeptVersion = DataVersion & { held: boolean }

const dataVersions = new WeakMap<Database, KeptVersion>()

export function dataVersionOf(db: Db): DataVersion {
  return keptVersionOf(db)
}

function keptVersionOf(db: Db): KeptVersion {
  const client = db.$client
  let version = dataVersions.get(client)
  if (version) return version
  const statement = client.prepare<{ data_version: number }, []>('PRAGMA data_version')
  let kept: number | undefined
  const forget = () => {
    kept = undefined
  }
  const made: KeptVersion = {
    held: false,
    get() {
      if (kept === undefined) {
        kept = statement.get()!.data_version
        if (!made.held) setImmediate(forget)
      }
      return kept
    },
    refresh: forget,
    now() {
      forget()
      return made.get()
    },
  }
  dataVersions.set(client, made)
  return made
}

const SQLITE_FCNTL_DATA_VERSION = 35
const fileVersionBuffer = new Uint32Array(2)

/**
 * The version SQLite keeps of one of the connection's databases (sqlite3_file_control,
 * SQLITE_FCNTL_DATA_VERSION): it changes with every commit to it, this connection's as soon as
 * they commit, another's as of the next read transaction this connection begins (so read it once
 * a read has begun, as after `DataVersion.get()`). A rolled-back transaction leaves it as it was.
 * Unlike a statement (`PRAGMA data_version`, `total_changes()`, a read of a table) it is a C call
 * that takes no lock: about 0.2 µs, where each statement a request ran cost 0.4 to 1.5 µs. `'temp'`
 * is the connection's own temporary database: only this connection writes it (users/service.ts
 * keeps the count of its writes to the auth tables there).
 */
export function fileVersion(client: Database, schema: 'main' | 'temp' = 'main'): number {
  client.fileControl(schema, SQLITE_FCNTL_DATA_VERSION, fileVersionBuffer)
  return fileVersionBuffer[0]!
}

/**
 * One read transaction around a request that only reads (GET, HEAD; app.ts). Every statement
 * outside a transaction opens and closes its own, with the locks that takes (about 2 µs in WAL
 * mode here, more than a small page's query). Inside one, a list's statements share it, and the
 * count and the page come from the same snapshot. A page with a known key runs four statements:
 * BEGIN, `PRAGMA data_version` (the key's and the count's check, and the read that opens the
 * snapshot), the page, COMMIT; what the checks compare besides is read by fileVersion, without
 * a statement (test/http/statements.test.ts counts them). Only the synchronous part of the
 * request runs inside: the transaction ends before anything else can run on the connection (no
 * other request's write can join it).
 * A statement still being stepped (a streamed list) goes on after the COMMIT on its own.
 */
export type ReadSnapshot = { run<T>(fn: () => T): T; readonly active: boolean }

const snapshots = new WeakMap<Database, ReadSnapshot>()

export function readSnapshotOf(db: Db): ReadSnapshot {
  const client = db.$client
  let snapshot = snapshots.get(client)
  if (snapshot) return snapshot
  const begin = client.prepare('BEGIN')
  const commit = client.prepare('COMMIT')
  const rollback = client.prepare('ROLLBACK')
  const version = keptVersionOf(db)
  let active = false
  snapshot = {
    run(fn) {
      if (client.inTransaction) return fn()
      // Settles afterCommit's queue as the transactions that write do (a request that only reads
      // queues nothing, but whatever it did queue leaves after the COMMIT, never before).
      return settling(client, () => {
        begin.run()
        active = true
        // data_version as of this transaction's snapshot (a Basic key check may have read it just
        // before), so that a kept count is checked against what the page will read.
        version.refresh()
        version.held = true
        try {
          return fn()
        } finally {
          active = false
          version.held = false
          version.refresh()
          if (client.inTransaction) {
            try {
              commit.run()
            } catch (error) {
              // Never left open: every later request would run inside it and no write would land.
              rollback.run()
              throw error
            }
          }
        }
      })
    },
    get active() {
      return active
    },
  }
  snapshots.set(client, snapshot)
  return snapshot
}

/**
 * Keeps the catalogue private (serve and migrate run this at each start). On Linux and macOS, an
 * install made before the catalogue was private: takes the group and other permissions off the
 * catalogue's files and off the data folder holding it, logging each change. On Windows, where
 * files have no such modes (Bun reports 0666 and a chmod changes nothing), the data folder and its
 * secrets get an access list for the user and SYSTEM only (util/winacl.ts), logged when it is
 * written. Nothing else is touched; a change that fails (another owner) is logged and the command
 * goes on.
 */
export function tightenModes(file: string, log: Log, platform: string = process.platform) {
  if (platform === 'win32') return restrictOnWindows(file, log)
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

function restrictOnWindows(file: string, log: Log) {
  const folder = dirname(file)
  try {
    const result = restrictToUser(folder, [file, `${file}-wal`, `${file}-shm`, join(folder, 'admin.token')])
    if (result.state === 'restricted')
      log.info('data folder restricted to its user and SYSTEM', {
        path: folder,
        user: result.user,
        files: result.paths.length - 1,
      })
    else if (result.state === 'not kept' && result.wine)
      log.info('data folder access lists are not kept under Wine', { path: folder, wine: result.wine })
    else if (result.state === 'not kept')
      log.warn(
        'data folder could not be restricted to its user: its file system keeps no access lists (FAT, exFAT, some network shares); move the data folder to an NTFS disk',
        { path: folder },
      )
  } catch (error) {
    log.warn('data folder could not be restricted to its user', { path: folder, error: (error as Error).message })
  }
}

const octal = (mode: number) => mode.toString(8).padStart(4, '0')

/** Data folders named for a catalogue whose file does not say it (PostgreSQL's: setDataFolder). */
const dataFolders = new WeakMap<object, string>()

/**
 * The data folder of a catalogue kept elsewhere than in it (on PostgreSQL): where this server
 * writes its own files (proxies, pictures, the key file) and what imports may never take in.
 */
export function setDataFolder(db: Db, folder: string): void {
  dataFolders.set(db, asFolder(folder))
}

/** The data folder, with a final slash: the one set for `db`, else the folder of its SQLite file. */
export const dataFolderOf = (db: Db) => dataFolders.get(db) ?? asFolder(dirname(db.$client.filename))

/** A consistent copy of the SQLite catalogue into the empty file `target` (VACUUM INTO: one read snapshot; writers go on). */
export function vacuumInto(db: Db, target: string): void {
  db.$client.run('VACUUM INTO ?', [target])
}

/**
 * Closes the SQLite catalogue. `final`: the last connection of a stopping server, every statement
 * finalized: SQLite then copies the WAL into the catalogue and removes it (a plain close would
 * leave that to the collector).
 */
export function closeDb(db: Db, final = false): void {
  db.$client.close(final)
}

/**
 * A number that changes whenever any connection commits to the SQLite catalogue (its file
 * version, read by a C call, no statement): what a cache kept beside the catalogue compares.
 */
export function catalogueVersionOf(db: Db): () => number {
  const client = db.$client
  return () => fileVersion(client)
}
