// The composition root: every service of Reelhouse, built once over an open catalogue, with no
// HTTP in it. createApp (HTTP), `serve`, the tests and the benchmarks all build from here, so
// this file is the one place that says what runs. A plain function, not a container: follow
// a dependency by reading the imports.
//
// Order of life: createCore → start() (the task runner; the watcher will start here too) →
// stop() (the runner leaves running tasks resumable) → the caller closes the catalogue.
import { afterCommitLog } from './db/aftercommit.ts'
import type { Db } from './db/client.ts'
import { type Port, type SqlitePort, andThen, sqlitePort } from './db/port.ts'
import { useEngine } from './db/tables.ts'
import { type Ffmpeg, createFfmpeg } from './media/ffmpeg.ts'
import { importAbandon, importHandler, importSubject } from './modules/assetimport/import.task.ts'
import { createProxies, proxyHandler, proxySubject } from './modules/assetimport/proxy.task.ts'
import { archiveHandler, archiveSubject, createArchive, restoreHandler } from './modules/archive/service.ts'
import { proxyNameHandler, proxyNameSubject, queueProxyRenames } from './modules/assetimport/proxyname.task.ts'
import { createImports } from './modules/assetimport/service.ts'
import { createImportLogs } from './modules/importlogs/service.ts'
import { createHoldDurations } from './modules/assetholddurations/service.ts'
import { createCustomMetadata } from './modules/custommetadata/service.ts'
import { createDevices } from './modules/devices/service.ts'
import { createDeviceStatus } from './modules/devices/status.ts'
import { type EventsOptions, createEvents } from './modules/events/service.ts'
import { createMarkers } from './modules/markers/service.ts'
import { createMediaAssets } from './modules/mediaassets/service.ts'
import { createProductions } from './modules/productions/service.ts'
import { copyAbandon, copyHandler } from './modules/projectassets/copy.task.ts'
import { deleteHandler } from './modules/projectassets/delete.task.ts'
import { createProjectAssets } from './modules/projectassets/service.ts'
import { createSearch } from './db/search/sqlite.ts'
import { shotsHandler, shotsSubject } from './modules/shots/detect.task.ts'
import { createShots } from './modules/shots/service.ts'
import { createUsers } from './modules/users/service.ts'
import { createVerify, verifyHandler, verifySubject } from './modules/verify/service.ts'
import { namesForLog } from './tasks/names.ts'
import { createRunner } from './tasks/runner.ts'
import { createSettle } from './watch/ingest.ts'
import { createRecent } from './watch/recent.ts'
import { scanHandler } from './watch/scan.task.ts'
import { type Watch, type WatchOptions, createWatch } from './watch/service.ts'
import { type Log, silentLog } from './util/log.ts'
import { isoTimestamp } from './util/time.ts'

/**
 * Which finished tasks are pruned (docs/api.md, Tasks): scans that ended `done` more than a week
 * ago and changed nothing in the catalogue (each of these counts of their result 0 or absent).
 * Failed tasks, and every copy, delete and import, are kept. Pruned at start and once a day.
 */
export const SCAN_PRUNE = {
  keepMs: 7 * 86_400_000,
  unchanged: ['offline', 'online', 'moved', 'relinked', 'saved_anew', 'imported'],
  everyMs: 86_400_000,
} as const

export type CoreOptions = {
  log?: Log
  /** Tasks run at once (--task-concurrency). */
  concurrency?: number
  /** Where ffmpeg and ffprobe are (--ffmpeg DIR); default: PATH. */
  ffmpegDir?: string
  /** The device watcher (serve); without it, scans run only when queued (tests of other parts). */
  watch?: Omit<WatchOptions, 'settleMs'>
  /** How long a watch-folder file must stay unchanged before it is imported (--settle). */
  settleMs?: number
  /** The live events' ring and keep-alive (tests shorten them; serve keeps the defaults of src/events/bus.ts). */
  events?: EventsOptions
}

/**
 * A core on a SQLite catalogue by its handle (the embedded default; the tests' and benchmarks'
 * way), or on any catalogue by its port (serve --database: PostgreSQL's, db/pg/open.ts). Typed by
 * the port: on SQLite's, work answers its value itself.
 */
export function createCore(db: Db, options?: CoreOptions): CoreOn<SqlitePort>
export function createCore<P extends Port>(port: P, options?: CoreOptions): CoreOn<P>
export function createCore(catalogue: Db | Port, options: CoreOptions = {}) {
  const port = 'engine' in catalogue ? catalogue : sqlitePort(catalogue)
  // The tables statements are built from are this engine's from now on (tables.ts): a process that
  // made a core on one engine is refused the other's, rather than building statements for the wrong one.
  useEngine(port.engine)
  return coreOn(port, options)
}

function coreOn<P extends Port>(
  port: P,
  {
    log = silentLog,
    concurrency = 2,
    ffmpegDir,
    watch: watchOptions,
    settleMs = 2000,
    events: eventsOptions,
  }: CoreOptions,
) {
  // In the order of the dependencies: each part is built after every part it uses, so none
  // needs a getter or a variable filled in later. The task runner comes before the services that
  // queue through it, and is handed their handlers once they exist (runner.handle).
  // The one port every route runs its work through (db/port.ts): on SQLite it answers in the same call.
  const db = port.db
  if (port.engine === 'sqlite') afterCommitLog(db, log)
  /**
   * Runs what nobody waits for (a detection asked for after a proxy, a prune, the start's
   * requeue): its failure is logged as `what` on either engine (on SQLite it throws in the call,
   * on PostgreSQL it rejects).
   */
  const fire = (what: string, run: () => unknown) => {
    const failed = (error: unknown) =>
      log.error(`${what} failed`, { error: error instanceof Error ? error.message : String(error) })
    try {
      const done = run()
      if (done instanceof Promise) done.catch(failed)
    } catch (error) {
      failed(error)
    }
  }
  const users = createUsers(port)
  // Before every writer it listens to: the history (it hooks itself there), the import logs, the runner.
  const events = createEvents(db, { users, log, ...eventsOptions })
  const runner = createRunner(port, { concurrency, log, observe: events.taskChanged })
  // What the watcher saw lately (sightings, strangers): shared by the watcher and every scan.
  const recent = createRecent()
  const watch: Watch | undefined =
    watchOptions && createWatch(port, { runner, log, recent }, { ...watchOptions, settleMs })
  const settle = watch?.settle ?? createSettle(settleMs)
  const holds = createHoldDurations(db)
  // A device made, moved or removed is watched (or no more) from then on.
  const devices = createDevices(
    db,
    port,
    holds,
    watch && { created: watch.added, changed: watch.added, removed: watch.removed },
    log,
  )
  const metadata = createCustomMetadata(db)
  const media = createMediaAssets(port, holds, metadata)
  const markers = createMarkers(db)
  const logs = createImportLogs(db, { observe: events.importLogChanged })
  const productions = createProductions(db, devices, users, { holds, logs })
  const projects = createProjectAssets(port, { runner, holds, metadata, media })
  const imports = createImports(port, { media, devices, holds, metadata, logs, runner })
  const proxies = createProxies(port, { media, runner })
  const archive = createArchive(db, { media, runner })
  // Checks of an asset's files against their ASC MHL history or kept hash (docs/operations.md, Verified copies and ASC MHL histories).
  const verify = createVerify(db, { media, runner })
  const search = createSearch(db)
  const deviceStatus = createDeviceStatus(db, port, { devices, media, runner, watch: () => watch?.status() })
  // ffmpeg and ffprobe are looked for once, when the first import needs them.
  const found: { ffmpeg?: Promise<Ffmpeg> } = {}
  const findFfmpeg = () => (found.ffmpeg ??= createFfmpeg({ dir: ffmpegDir }))
  // Shots and sequences of video assets; a finished import or proxy remake asks it for a detection (autoshot_detection).
  const shots = createShots(db, { media, runner, log })
  const importDeps = {
    media,
    devices,
    logs,
    users,
    ffmpeg: findFfmpeg,
    proxied: (done: { id: number; kind: string }) =>
      fire('the shot detection after a proxy', () => port.run(shots.autoshot(done))),
  }
  const deviceOf = namesForLog<{ name: string; path: string } | undefined>(port)

  runner.handle({
    // What each task's log lines name: the project's folders, the asset's file, the device.
    subjects: {
      copy: (t) => ({ projectasset: t.target.projectasset, from: t.params.source, to: t.params.target }),
      delete: (t) => ({ projectasset: t.target.projectasset, folder: t.params.bundle_root }),
      import: importSubject(port, media),
      proxy: proxySubject(port, media),
      archive: archiveSubject(port, media),
      restore: archiveSubject(port, media),
      proxyname: proxyNameSubject,
      shots: shotsSubject(port, media),
      verify: verifySubject(port, media),
      scan: (t) => {
        const device = deviceOf(t.params.device, function* () {
          return (yield* devices.list()).find((d) => d.id === t.params.device)
        })?.value
        const paths = t.params.paths
        return {
          device: device?.name ?? t.params.device,
          path: device?.path ?? '(the device is gone)',
          ...(paths === null
            ? {}
            : paths.length === 1
              ? { paths: paths[0] }
              : { paths: `${paths.length} paths, first ${paths[0]}` }),
        }
      },
    },
    // What a queued task cancelled before it ran leaves undone (a scan: the device's next full scan does its work).
    abandon: {
      copy: copyAbandon(port, users),
      import: importAbandon(port, importDeps),
      scan: (t) => void watch?.scanned(t.params.device, t.params.paths === null),
    },
    handlers: {
      copy: copyHandler(port, users),
      delete: deleteHandler(port, users, media),
      import: importHandler(port, importDeps),
      proxy: proxyHandler(port, importDeps),
      archive: archiveHandler(port, { media, users }),
      restore: restoreHandler(port, { media, users }),
      proxyname: proxyNameHandler(port, { media, devices, openTasks: (target) => runner.openFor(target) }),
      shots: shotsHandler(port, { media, shots, devices, users, ffmpeg: findFfmpeg }),
      verify: verifyHandler(port, { media, users }),
      scan: scanHandler(port, {
        media,
        log,
        settleMs,
        logs,
        imports,
        projects,
        settle,
        recent,
        later: (device, paths, ms) => watch?.later(device, paths, ms),
        importsOpen: () => watch?.importsOpen() ?? true,
        scanned: (device, full) => watch?.scanned(device, full),
      }),
    },
  })

  /**
   * Prunes finished scans that changed nothing (SCAN_PRUNE), as of `now`; answers how many went
   * (on PostgreSQL a promise of it).
   */
  const pruneTasks = (now = new Date()) =>
    andThen(
      port.run(
        runner.prune({
          kind: 'scan',
          before: isoTimestamp(new Date(now.getTime() - SCAN_PRUNE.keepMs)),
          unchanged: SCAN_PRUNE.unchanged,
        }),
      ),
      (pruned) => {
        if (pruned)
          log.info('finished scans that changed nothing pruned', {
            count: pruned,
            older_than_days: SCAN_PRUNE.keepMs / 86_400_000,
          })
        return pruned
      },
    )
  const pruning: { timer?: Timer } = {}

  return {
    db,
    port,
    log,
    users,
    events,
    devices,
    deviceStatus,
    holds,
    metadata,
    media,
    markers,
    shots,
    productions,
    projects,
    imports,
    proxies,
    archive,
    verify,
    search,
    logs,
    runner,
    ffmpeg: findFfmpeg,
    watch,
    recent,
    pruneTasks,
    /** Starts the work that runs beside requests: queued and interrupted tasks, then the watcher and its start scans; prunes old scans now and daily. */
    start() {
      fire('pruning finished scans', pruneTasks)
      pruning.timer = setInterval(() => fire('pruning finished scans', pruneTasks), SCAN_PRUNE.everyMs)
      pruning.timer.unref()
      // Proxies named by their asset's id before proxies were named after their source: renamed by a task (docs/media.md, Proxy names).
      fire('queueing the proxy renames', () =>
        andThen(port.run(queueProxyRenames(db, media, runner)), (renames) => {
          if (renames) log.info('proxies named by asset id are renamed after their source', { productions: renames })
        }),
      )
      fire('starting the task runner', () => runner.start())
      watch?.start()
    },
    /**
     * Stops the watcher, then takes no more work and leaves running tasks resumable, then the live
     * events (their streams end; serve ends them first, events.close()) and the search's connection;
     * the caller closes the catalogue.
     */
    async stop() {
      clearInterval(pruning.timer)
      await watch?.stop()
      await runner.stop()
      events.stop()
      search.close()
    },
  }
}

export type CoreOn<P extends Port> = ReturnType<typeof coreOn<P>>
export type Core = CoreOn<Port>
