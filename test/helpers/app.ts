// A real app over a real, migrated SQLite file in a disposable folder, with an admin key and
// helpers to make users and send requests through app.handle.
import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type AppOptions, createApp } from '../../src/app.ts'
import { type CoreOptions, createCore } from '../../src/core.ts'
import { type Db, openDb } from '../../src/db/client.ts'
import { migrate } from '../../src/db/migrate.ts'
import { type Work, runSync, sqlitePort } from '../../src/db/port.ts'
import { createUsers } from '../../src/modules/users/service.ts'
import { silentLog } from '../../src/util/log.ts'
import { tempDir } from './temp.ts'

export { tempDir }

export type RequestOptions = {
  key?: string | null
  body?: unknown
  /** Sent as application/x-www-form-urlencoded; objects and arrays as JSON text. */
  form?: Record<string, unknown>
  raw?: string | Uint8Array | FormData | Blob
  headers?: Record<string, string>
}

/**
 * A catalogue file at `file`, migrated. A new one starts as a copy of the first one this process
 * migrated (the same bytes migrate() leaves; migrate() still runs on it and finds nothing to do):
 * the 22 migrations took 40 ms of CPU a catalogue, and the suite makes about 600. The migrations
 * themselves run for real once per process here, and on every catalogue a spawned serve makes.
 */
export function migratedDb(file: string) {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    writeFileSync(file, migratedImage(), { mode: 0o600 })
  }
  const db = openDb(file)
  migrate(db)
  return db
}

let image: Uint8Array | undefined
function migratedImage() {
  if (image) return image
  const dir = tempDir('reelhouse-template-')
  const db = openDb(join(dir, 'template.db'))
  migrate(db)
  // The whole catalogue in the main file (nothing left in the WAL), then its bytes.
  db.$client.run('PRAGMA wal_checkpoint(TRUNCATE)')
  image = db.$client.serialize()
  db.$client.close()
  rmSync(dir, { recursive: true, force: true })
  return image
}

/** A service as a test calls it: each method that answers work answers its value (RunAtOnce). */
export type RunAtOnce<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => Work<infer T>
    ? (...args: A) => T
    : S[K] extends (...args: never[]) => unknown
      ? S[K]
      : S[K] extends object
        ? RunAtOnce<S[K]>
        : S[K]
}

const isWork = (value: unknown): value is Work<unknown> =>
  Object.prototype.toString.call(value) === '[object Generator]'

/**
 * `service` with the work of its methods run at once on the SQLite catalogue `db`, as the command
 * line runs it (runSync): `users.add('ana')` adds her. Objects of methods in it (users.sessions)
 * likewise; what a method answers that is not work, as it is.
 */
export function runAtOnce<S extends object>(db: Db, service: S): RunAtOnce<S> {
  const out: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(service))
    out[name] =
      typeof member === 'function'
        ? (...args: unknown[]) => {
            const answer = member.apply(service, args)
            return isWork(answer) ? runSync(db, answer) : answer
          }
        : member !== null && typeof member === 'object' && Object.getPrototypeOf(member) === Object.prototype
          ? runAtOnce(db, member)
          : member
  return out as RunAtOnce<S>
}

/** The users service of the SQLite catalogue `db`, its work run at once (runAtOnce). */
export const usersOf = (db: Db, options?: Parameters<typeof createUsers>[1]) =>
  runAtOnce(db, createUsers(sqlitePort(db), options))

/**
 * A migrated catalogue in a temporary folder with one superuser and its key, for tests that
 * build the app themselves (with their own log or options); close() closes and removes it.
 */
export function catalogueWithUser(name: string) {
  const dir = tempDir()
  const db = migratedDb(join(dir, 'reelhouse.db'))
  const users = usersOf(db)
  users.add(name, { superuser: true })
  const key = users.createKey(name)
  const close = () => {
    db.$client.close()
    rmSync(dir, { recursive: true, force: true })
  }
  return { db, dir, key, close }
}

/**
 * With `tasks`, the task runner is started (copy and delete run); `runner.idle()` waits for them.
 * `app`: options of createApp (serve's flags), such as defaultApiVersion; `core`: of createCore,
 * such as the live events' keep-alive or a log (default: none).
 */
export function testApp(
  dataDir = tempDir(),
  options: { tasks?: boolean; concurrency?: number; app?: AppOptions; core?: CoreOptions } = {},
) {
  const db = migratedDb(join(dataDir, 'reelhouse.db'))
  // The test's own users service (beside the core's), its work run at once: t.users.add(...).
  const users = usersOf(db)
  if (users.count() === 0) users.add('admin', { superuser: true })
  const adminKey = users.createKey('admin')
  /** Folders made for this app (device roots of seedProduction), removed by cleanup/stop. */
  const owned: string[] = []
  const removeOwned = () => {
    for (const dir of owned.splice(0)) rmSync(dir, { recursive: true, force: true })
  }
  const core = createCore(db, { log: silentLog, concurrency: options.concurrency ?? 2, ...options.core })
  const { runner } = core
  const app = createApp(core, options.app)
  if (options.tasks) core.start()

  async function request(method: string, path: string, options: RequestOptions = {}) {
    const headers: Record<string, string> = { ...options.headers }
    const key = options.key === undefined ? adminKey : options.key
    if (key !== null && !('authorization' in headers)) headers.authorization = `Token ${key}`
    let body: string | Uint8Array | FormData | Blob | undefined = options.raw
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    } else if (options.form !== undefined) {
      body = new URLSearchParams(
        Object.entries(options.form).map(([k, v]): [string, string] => [
          k,
          typeof v === 'string' ? v : JSON.stringify(v),
        ]),
      ).toString()
      headers['content-type'] ??= 'application/x-www-form-urlencoded'
    }
    const response = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
    return readResponse(response)
  }

  /** A user with the given codenames and production access, and a key of theirs. */
  function makeUser(
    name: string,
    opts: { perms?: string[]; groups?: string[]; read?: number[]; write?: number[]; superuser?: boolean } = {},
  ) {
    users.add(name, { perms: opts.perms, groups: opts.groups, superuser: opts.superuser })
    for (const id of opts.read ?? []) users.grantById(users_id(name), id, 'read')
    for (const id of opts.write ?? []) users.grantById(users_id(name), id, 'write')
    return users.createKey(name)
  }
  const users_id = (name: string) =>
    db.$client.query<{ id: number }, [string]>('SELECT id FROM users WHERE username = ?').get(name)!.id

  return {
    dataDir,
    db,
    core,
    app,
    runner,
    users,
    adminKey,
    request,
    get: (path: string, o?: RequestOptions) => request('GET', path, o),
    post: (path: string, body: unknown, o?: RequestOptions) => request('POST', path, { ...o, body }),
    makeUser,
    owned,
    close() {
      db.$client.close()
    },
    /** For apps with tasks: stops the runner (tasks stay resumable), then closes. */
    async stop() {
      await runner.stop()
      db.$client.close()
      removeOwned()
    },
    cleanup() {
      db.$client.close()
      removeOwned()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

export type TestApp = ReturnType<typeof testApp>

/**
 * A statement run on the app's catalogue through a connection of its own, as another process (a
 * CLI command) would. busyTimeoutMs 0: it must not wait for a lock the app holds.
 */
export function writeElsewhere(t: TestApp, sql: string, busyTimeoutMs = 5000) {
  const other = new Database(join(t.dataDir, 'reelhouse.db'))
  try {
    other.run(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
    other.run(sql)
  } finally {
    other.close()
  }
}

/** A device on a real temporary folder and a production on it; returns their records. */
export async function seedProduction(t: TestApp, name = 'Show', root = tempDir('reelhouse-device-')) {
  t.owned.push(root)
  const device = await t.post('/api/devices/', { name: `${name}-disk`, path: root })
  if (device.status !== 201) throw new Error(`device: ${device.text}`)
  const production = await t.post('/api/productions/', { name, storage_root: `${root}/${name}` })
  if (production.status !== 201) throw new Error(`production: ${production.text}`)
  return { root, device: device.json, production: production.json }
}

/** Status, headers, text and (when it parses) JSON of a response. */
export async function readResponse(response: Response) {
  const text = await response.text()
  let json: any
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}
