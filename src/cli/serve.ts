// reelhouse serve: open and migrate the catalogue, make the first admin, listen, and stop
// cleanly on SIGINT/SIGTERM.
import {
  chmodSync,
  closeSync,
  existsSync,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { createApp } from '../app.ts'
import { type Core, createCore } from '../core.ts'
import { type ServeConfig, UsageError, dbFile } from '../config.ts'
import { startCheckpointer } from '../db/checkpointer.ts'
import { closeDb, openDb, setDataFolder, tightenModes } from '../db/client.ts'
import { migrate } from '../db/migrate.ts'
import { type Port, type Work, sqlitePort, tx } from '../db/port.ts'
import type { PostgresCatalogue } from '../db/pg/open.ts'
import { composedHandlers } from '../http/composed.ts'
import { fromDatabase } from '../http/errors.ts'
import { HTTP_HEADER_LIMIT } from '../http/head.ts'
import { pageLoader } from '../http/pagebuild.ts'
import { UserError, createUsers } from '../modules/users/service.ts'
import { type Log, createLog } from '../util/log.ts'
import { VERSION } from '../version.ts'

/**
 * How long requests under way have to finish after SIGINT or SIGTERM before their connections are
 * closed (docs/operations.md, "Stopping").
 */
export const STOP_GRACE_MS = 10_000

/** Everything a serve does before it opens its catalogue, said and checked in this order. */
function begin(config: ServeConfig, log: Log): () => void {
  // The first line names the folder, so that whatever fails next (a taken port, a catalogue that
  // cannot be opened or migrated) is read beside it, as the other commands' data= line.
  log.info(`reelhouse ${VERSION} starting`, { data: config.dataDir })
  // A second start on the same folder (npm start twice) is told that, not sent to another port
  // where it would only meet the same owner: read before the port is tried, making nothing.
  refuseIfServed(config.dataDir)
  // Before anything is made: a serve that cannot listen leaves no data folder behind it.
  checkPortFree(config.host, config.port)
  return claimDataDir(config.dataDir)
}

const coreOptions = (config: ServeConfig, log: Log) => ({
  log,
  concurrency: config.taskConcurrency,
  ffmpegDir: config.ffmpegDir,
  settleMs: config.settle * 1000,
  watch: { poll: config.poll, pollIntervalMs: config.pollInterval * 1000, rescanMs: config.rescanInterval * 1000 },
})

/** serve on the SQLite catalogue in the data folder (the embedded default). */
export function serve(config: ServeConfig, log: Log = createLog(config.logFormat)) {
  const release = begin(config, log)
  const db = openDb(dbFile(config.dataDir))
  tightenModes(dbFile(config.dataDir), log)
  const applied = migrate(db)
  if (applied) log.info('database migrated', { migrations: applied })
  const port = sqlitePort(db)
  firstAdmin(port.run(firstAdminWork(port)), config.dataDir)
  const checkpointer = startCheckpointer(db, log)
  const core = createCore(db, coreOptions(config, log))
  return {
    db,
    ...listen(config, log, core, release, async () => {
      await checkpointer.stop()
      // Every statement finalized and the connection released now, the last one: SQLite copies
      // the WAL into the catalogue and removes it (close() would leave that to the collector).
      closeDb(db, true)
    }),
  }
}

/**
 * serve on the PostgreSQL catalogue of --database (or REELHOUSE_DATABASE): the same server, its
 * catalogue shared with other tools and kept by the facility's PostgreSQL (docs/operations.md,
 * "A facility catalogue on PostgreSQL"). The data folder still holds what this server writes
 * itself (proxies, pictures, the first key) and its serve.pid. There is no checkpointer and no
 * mmap reader: those are SQLite's. A server that cannot be reached or refuses the session is
 * one line naming where and why (exit 2), after which nothing is left claimed.
 */
export async function servePostgres(config: ServeConfig, log: Log = createLog(config.logFormat)) {
  const url = config.database!
  // Loaded here only: the PostgreSQL client and its migrations are no part of a SQLite serve's start.
  const pg = await import('../db/pg/migrate.ts')
  const { openPostgres } = await import('../db/pg/open.ts')
  const shown = pg.withoutPassword(url)
  if (!pg.isPostgresUrl(url))
    throw new UsageError(`--database must be a postgres:// or postgresql:// URL, not "${shown}"`)
  const release = begin(config, log)
  let catalogue: PostgresCatalogue
  try {
    catalogue = await openPostgres(url, log)
  } catch (error) {
    release()
    if (error instanceof pg.PostgresConnectError)
      throw new UsageError(`cannot connect to ${shown} (at ${error.where}): ${error.reason}`)
    throw error
  }
  try {
    log.info('database opened', { database: shown, migrations: catalogue.applied })
    setDataFolder(catalogue.port.db, config.dataDir)
    const { port } = catalogue
    const key = await Promise.resolve(port.run(firstAdminWork(port))).catch((error: unknown) => {
      // Another server on the same new catalogue made the admin between this one's count and its
      // insert (each saw no user under READ COMMITTED): the name is taken, so there is one now.
      if (fromDatabase(error)?.status === 400) return port.run(firstAdminWork(port))
      throw error
    })
    firstAdmin(key, config.dataDir)
  } catch (error) {
    await catalogue.close()
    release()
    throw error
  }
  const core = createCore(catalogue.port, coreOptions(config, log))
  return listen(config, log, core, release, () => catalogue.close())
}

/** Listens with the core on its catalogue; `close` closes the catalogue once everything else stopped. */
function listen(config: ServeConfig, log: Log, core: Core, release: () => void, close: () => Promise<void>) {
  // Bun's HTTP parser answers headers over its limit with a bare 431; up to it, checkHead answers
  // those over ours in the envelope (src/http/head.ts). Process-wide, hence here; Bun lets it be
  // set (Node's types call it read-only).
  ;(http as { maxHeaderSize: number }).maxHeaderSize = HTTP_HEADER_LIMIT
  // The web page: embedded in the executable, or built from src/ui when run from source.
  const page = pageLoader(log)
  const app = createApp(core, {
    quiet: config.quiet,
    publicUrl: config.publicUrl,
    allowOrigins: config.allowOrigins,
    host: config.host,
    allowHosts: config.allowHosts,
    defaultApiVersion: config.defaultApiVersion,
    pageFiles: page.page,
  }).listen({ hostname: config.host, port: config.port, reusePort: false })
  // A hidden diagnostic: the code Elysia composed for each route, written to that file as JSON,
  // for the test that compares the compiled executable's with the source run's (src/http/composed.ts).
  const dumpTo = process.env.REELHOUSE_DUMP_HANDLERS
  if (dumpTo) writeFileSync(dumpTo, JSON.stringify(composedHandlers(app), null, 1))
  core.start()
  const server = app.server!
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  const base = `http://${host}:${server.port}`

  let stopping = false
  // Settles once a stop has closed everything (the command line's run() waits for it).
  let markStopped = () => {}
  const stopped = new Promise<void>((resolve) => (markStopped = resolve))
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    // Held alive to the last step: while server.stop() waits for the connections of the streams
    // just ended to close, nothing else may hold the event loop, and the process would end there,
    // before the catalogue is closed.
    const alive = setInterval(() => {}, 60_000)
    try {
      await stopAll(signal)
    } finally {
      clearInterval(alive)
    }
  }
  const stopAll = async (signal: string) => {
    log.info('stopping', { signal })
    // No new work from the moment of the signal: the watcher and the runner stop taking any
    // (a start scan due as the watcher finishes its walk stays queued for the next start) while
    // the requests in flight finish; what they queue is resumed on the next start. The event
    // streams are ended first: each is a request that would otherwise hold server.stop() for ever.
    core.events.close()
    page.close()
    // Requests under way have STOP_GRACE_MS to finish (a request's own work takes a fraction of a
    // second); then the connections still open are closed, so that a client that keeps sending
    // or reading (a body sent a byte at a time) cannot hold the stop.
    const late = setTimeout(() => void server.stop(true), STOP_GRACE_MS)
    await Promise.all([server.stop().finally(() => clearTimeout(late)), core.stop()])
    // Elysia writes a request's line in a setImmediate queued as its answer went out: one more
    // turn, so that the lines of the last requests come before "stopped", not after it.
    await new Promise((resolve) => setImmediate(resolve))
    await close()
    release()
    log.info('stopped')
    // Nothing is left to keep the process alive (a task not waited for only finishes the file
    // it is in, without touching the closed catalogue), so it ends with this code.
    process.exitCode = 0
    markStopped()
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  // Only once the handlers are in place: whoever reads this line may send a signal at once.
  log.info(`reelhouse ${VERSION} serving`, {
    api: `${base}/api/`,
    docs: `${base}/api/docs`,
    page: `${base}/`,
    data: config.dataDir,
    // What clients are told (API root, Link) and who may call from a browser, when set.
    ...(config.publicUrl ? { public_url: config.publicUrl } : {}),
    ...(config.allowOrigins.length ? { allow_origin: config.allowOrigins.join(',') } : {}),
    ...(config.allowHosts.length ? { allow_host: config.allowHosts.join(',') } : {}),
    ...(config.defaultApiVersion !== 1 ? { default_api_version: config.defaultApiVersion } : {}),
  })
  // Imports probe and make proxies with ffmpeg when it is there; say once which it is.
  void core.ffmpeg().then((ff) => {
    if (stopping) return // a stop that came first has the last word in the log
    const missing = ff.missing()
    if (missing) log.warn('imports will make no proxies or probes', { reason: missing })
    else log.info('ffmpeg found', { ffmpeg: ff.paths.ffmpeg, ffprobe: ff.paths.ffprobe })
  })
  return { app, server, core, stop, stopped }
}

/**
 * On a catalogue with no users: the superuser admin and a key of it, in one transaction. Answers
 * the key, or undefined when there were users.
 */
function* firstAdminWork(port: Port): Work<string | undefined> {
  const users = createUsers(port)
  return yield* tx(function* () {
    if ((yield* users.count()) > 0) return undefined
    yield* users.add('admin', { superuser: true })
    return yield* users.createKey('admin')
  })
}

/** The first admin's key printed once and kept in admin.token; when there was one already, where it is. */
function firstAdmin(key: string | undefined, dataDir: string) {
  const tokenFile = join(dataDir, 'admin.token')
  if (key === undefined) {
    if (existsSync(tokenFile)) console.log(`The first admin key is in ${tokenFile}`)
    return
  }
  writeFileSync(tokenFile, key + '\n', { mode: 0o600 })
  chmodSync(tokenFile, 0o600)
  console.log(`Created the superuser "admin". Its key (shown once, also in ${tokenFile}):\n${key}`)
}

/**
 * Listens on the port for a moment and lets it go: taken ports and unusable addresses show here,
 * as one line saying what to do, before serve creates anything. Port 0 (any free port) always
 * works. Another program can still take the port in between; listen then fails with Bun's own
 * message, which also names the port.
 */
function checkPortFree(host: string, port: number) {
  if (port === 0) return
  const taken = (p: number) => {
    try {
      Bun.serve({ hostname: host, port: p, fetch: () => new Response(null) }).stop(true)
      return undefined
    } catch (error) {
      return error as NodeJS.ErrnoException
    }
  }
  const error = taken(port)
  if (!error) return
  if (error.code === 'EADDRINUSE') {
    // The next free port, looked for a little way up, so that the advice works when followed.
    const last = Math.min(port + 20, 65535)
    let next = port + 1
    while (next <= last && taken(next)) next++
    throw new UserError(`port ${port} is in use; try --port ${next <= last ? next : 0}`)
  }
  if (error.code === 'EADDRNOTAVAIL')
    throw new UserError(`cannot listen on ${host}: no network interface of this machine has that address; see --host`)
  if (error.code === 'EACCES')
    throw new UserError(`port ${port} needs privileges on this system; use a port above 1023`)
  throw new UserError(`cannot listen on ${host} port ${port}: ${error.message}`)
}

/**
 * Throws when a live serve owns this folder, named by its serve.pid. No folder, no file, or a file
 * left by a process that died (SIGKILL, power loss): no owner. Reads only, makes nothing.
 */
function refuseIfServed(dataDir: string) {
  const claim = readClaim(join(dataDir, 'serve.pid'))
  if (claim && live(claim.pid)) throw served(claim.pid, dataDir)
}

const served = (pid: number, dataDir: string) =>
  new UserError(`another reelhouse serve (pid ${pid}) is using ${dataDir}`)

/** Bounds the wait for another start's takeover of a stale claim, which takes a few calls. */
const TAKEOVER_ROUNDS = 200

/**
 * One server per data folder: two would both run the same tasks, write one catalogue and watch
 * the same disks. serve.pid names the owner, and only one of two serves started at the same
 * moment may make it: our pid is written whole under a name of our own, then link()ed to
 * serve.pid, which fails when the name exists (exclusive, as open's O_EXCL, but no one ever sees
 * the file empty). Links and renames work on Windows' NTFS too, where flock is not there.
 *
 * A file left by a process that died is replaced, but only under serve.pid.lock (made the same
 * way), and only if serve.pid is still the very file found dead: two starts that both found it
 * dead would otherwise both replace it, the second replacing the first's fresh claim. The lock
 * itself becomes the claim, renamed over serve.pid in one step, so serve.pid never goes missing
 * (a start that finds no file links without the lock). A lock left by a start that died within
 * those few calls is removed; only that crash, with two starts racing after it, escapes this.
 */
function claimDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const file = join(dataDir, 'serve.pid')
  const lock = `${file}.lock`
  const mine = `${file}.${process.pid}`
  // Fresh, never a file an earlier process of this pid left (it may be linked to serve.pid).
  rmSync(mine, { force: true })
  writeFileSync(mine, `${process.pid}\n`)
  try {
    for (let round = 0; ; round++) {
      if (link(mine, file)) break
      const found = readClaim(file)
      if (!found) continue // gone since (its serve stopped): link again
      if (live(found.pid)) throw served(found.pid, dataDir)
      if (link(mine, lock)) {
        const still = readClaim(file)
        if (still?.ino === found.ino && still.pid === found.pid) {
          renameSync(lock, file)
          break
        }
        rmSync(lock, { force: true })
        continue
      }
      const taker = readClaim(lock)
      if (!taker) continue // released since: look again
      if (!live(taker.pid)) rmSync(lock, { force: true })
      else if (round >= TAKEOVER_ROUNDS)
        throw new UserError(`another reelhouse serve (pid ${taker.pid}) is starting on ${dataDir}`)
      // Another start holds the lock for a few calls: wait for it, then look again.
      else Bun.sleepSync(5)
    }
  } finally {
    rmSync(mine, { force: true })
  }
  // Ours alone: a serve that found this one dead (it cannot while it runs) would own the file.
  return () => {
    if (readClaim(file)?.pid === process.pid) rmSync(file, { force: true })
  }
}

/** Links `name` to the file `from` unless `name` exists; true when this call made it. */
function link(from: string, name: string): boolean {
  try {
    linkSync(from, name)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

/**
 * The pid a claim file names and which file it is (its inode), read through one descriptor;
 * undefined when there is none. A file naming no pid (emptied, edited) is a claim of a process
 * that is not there: 0.
 */
function readClaim(file: string): { pid: number; ino: number } | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (error) {
    // ENOTDIR: the data folder is a file; the mkdir of claimDataDir says so, after the port check.
    if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code!)) return undefined
    throw error
  }
  try {
    const pid = Number(readFileSync(fd, 'utf8').trim())
    return { pid: Number.isSafeInteger(pid) && pid > 0 ? pid : 0, ino: fstatSync(fd).ino }
  } finally {
    closeSync(fd)
  }
}

/**
 * Whether the process a claim names runs. Our own pid there is a claim of an earlier process that
 * had it (pids are reused, after a restart of a container above all): not live.
 */
const live = (pid: number) => pid > 0 && pid !== process.pid && alive(pid)

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
