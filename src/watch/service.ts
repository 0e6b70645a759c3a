// The device watcher as the core runs it (docs/watcher.md): chokidar per device (watcher.ts) feeds
// raw events into the pure aggregator, whose batches become `scan` tasks; a full scan of every
// device runs at start and every --rescan-interval; new devices are watched from their creation.
// Nothing here writes the catalogue: the scan task does, through the media service.
import { type Port, type Work, all } from '../db/port.ts'
import { devices as devicesTable } from '../db/tables.ts'
import type { NewTask, Runner } from '../tasks/runner.ts'
import type { Log } from '../util/log.ts'
import { createAggregator, foldPaths } from './aggregator.ts'
import { createSettle, excluded } from './ingest.ts'
import type { Recent } from './recent.ts'
import { stampOf } from '../storage/paths.ts'
import { REFUSAL } from '../storage/platform.ts'
import { createWatcher } from './watcher.ts'

/**
 * The scan task of a device: of `paths` (folders or files looked at again), or of the whole device
 * (null), which merges with a full scan of it still queued (one per device). What the watcher
 * queues, and what a rescan asked for by a user queues (POST /api/devices/{id}/scan/).
 *
 * Paths merge too, given the device's `root`: into the one path scan of the device still queued,
 * folded as events are (a folder past 128 changed names, the device past 512). A drop keeps the
 * aggregator sending batches while a scan imports it; each batch queued apart became a walk of
 * the whole drop folder once that scan ended (40 walks of 20,000 files after a drop of 20,000:
 * bench/drop.ts). One scan of the union sees what each would have seen: a scan judges what is on
 * disk when it runs, and a move's two names in one scan are the better case for reconcile.
 */
export const scanTask = (device: number, paths: string[] | null, root?: string): NewTask<'scan'> =>
  paths === null || root === undefined
    ? {
        kind: 'scan',
        target: { device },
        production: null,
        params: { device, paths },
        key: paths === null ? `scan:${device}` : undefined,
      }
    : {
        kind: 'scan',
        target: { device },
        production: null,
        params: { device, paths },
        key: `scan-paths:${device}`,
        merge: (queued, added) => ({
          device,
          paths:
            queued.paths === null || added.paths === null
              ? null
              : foldPaths(root, [...new Set([...queued.paths, ...added.paths])]),
        }),
      }

export type WatchOptions = {
  poll: boolean
  pollIntervalMs: number
  /** 0: no timed rescans. */
  rescanMs: number
  settleMs: number
}

/** How often due batches of events become scan tasks. */
const TICK_MS = 250
/** The longest a device's start scan waits for the watcher's first walk (a slow network share). */
const WALK_WAIT_MS = 60_000

export function createWatch(port: Port, deps: { runner: Runner; log: Log; recent: Recent }, options: WatchOptions) {
  const { runner, log, recent } = deps
  const { db } = port
  /** Devices whose start scan has not run yet: watch folders import nothing until none is left. */
  const startPending = new Set<number>()
  /** The devices to start are being read (on PostgreSQL, a while): none is pending yet, and none may import. */
  let startReading = false
  const settle = createSettle(options.settleMs)
  /** Device roots by id: the watcher reports absolute paths; the aggregator folds below a root. */
  const roots = new Map<number, string>()
  // One second holds a rename's removal until its new name is scanned (inotify reports both at
  // once); a move seen later still keeps its asset, as reconcile matches offline rows by their
  // file's (dev, ino, birth time). Two seconds made every delete wait past the 1.5 s target.
  const aggregator = createAggregator({
    moveWindowMs: 1000,
    parentAfter: 128,
    deviceAfter: 512,
    root: (id) => roots.get(id),
  })
  const watcher = createWatcher({
    onEvent: (event) => aggregator.add(event, Date.now()),
    onWatched: (device) => startScan(device),
    onSighting: (path, s) => {
      if (s.isFile() || s.isDirectory())
        recent.saw(
          path,
          { kind: s.isDirectory() ? 'dir' : 'file', dev: s.dev, ino: s.ino, stamp: stampOf(s) },
          Date.now(),
        )
    },
    // The watcher logs each kind of error once per device itself; the scans are the truth anyway.
    onError: () => {},
    exclude: excluded,
    poll: options.poll,
    pollIntervalMs: options.pollIntervalMs,
    log,
  })
  const timers = new Set<Timer>()
  let running = false

  /** One queued full scan and one queued path scan per device (each merged, see scanTask). */
  function scan(device: number, paths: string[] | null) {
    if (!running) return
    const queued = port.run(runner.enqueue(scanTask(device, paths, roots.get(device))))
    // On PostgreSQL no caller waits for it: a failure is logged.
    if (queued instanceof Promise)
      queued.catch((error) => log.error('a scan could not be queued', { device, error: (error as Error).message }))
  }

  /**
   * A device's start scan (at start, or when it is created) is queued once the watcher has its
   * folders under watch, not beside the watcher's first walk: a file added to a folder after the
   * scan read it and before the walk reached it would otherwise be seen by neither until the next
   * rescan. The two walks no longer compete for the one thread, or add up in memory, either.
   */
  const awaiting = new Map<number, Timer>()
  function scanOnceWatched(device: number) {
    clearTimeout(awaiting.get(device))
    const timer = setTimeout(() => startScan(device), WALK_WAIT_MS)
    timer.unref()
    awaiting.set(device, timer)
  }
  function startScan(device: number) {
    const timer = awaiting.get(device)
    if (!timer) return // not waiting for it (a watcher reopened later announces itself instead)
    clearTimeout(timer)
    awaiting.delete(device)
    // The watcher's walk just left a Stats object and a promise per file behind (chokidar lstats
    // every name): about 75 MB for 100,000 files, which the collector would free only after the
    // scan's own walk had added as much again. Collected now, once per device and start, the
    // two walks peak apart (watch-profile: 205 MB peak for 105,500 files before, 150 after).
    Bun.gc(true)
    scan(device, null)
  }

  /**
   * `next` of what `work` reads: in the same call on SQLite, where the port answers at once; once
   * it comes on PostgreSQL, where a failed read is logged (no caller waits for a start or a timer).
   */
  function whenRead<T>(work: Work<T>, next: (value: T) => void) {
    const answer = port.run(work)
    if (!(answer instanceof Promise)) return next(answer)
    answer.then(next).catch((error) => log.error('the devices could not be read', { error: (error as Error).message }))
  }

  function every(ms: number, fn: () => void) {
    const timer = setInterval(fn, ms)
    timer.unref()
    timers.add(timer)
  }

  return {
    settle,
    settleMs: options.settleMs,

    /** Watches every device and queues a full scan of each (files changed while the service was stopped). */
    start() {
      // Where file work is refused (Windows), nothing is watched or scanned: one line says why,
      // and the catalogue goes on without its watcher (`added` and the timers stay off too).
      if (REFUSAL) {
        log.warn('devices are not watched or scanned', { reason: REFUSAL })
        return
      }
      running = true
      startReading = true
      whenRead(all(db.select().from(devicesTable)), (list) => {
        startReading = false
        if (!running) return // stopped while the devices were read (PostgreSQL)
        for (const device of list) {
          roots.set(device.id, device.path)
          startPending.add(device.id)
          scanOnceWatched(device.id)
          watcher.watch(device)
        }
      })
      every(TICK_MS, () => {
        for (const batch of aggregator.due(Date.now())) scan(batch.device, batch.paths)
      })
      if (options.rescanMs > 0)
        every(options.rescanMs, () =>
          whenRead(all(db.select({ id: devicesTable.id }).from(devicesTable)), (list) => {
            for (const device of list) scan(device.id, null)
          }),
        )
    },

    /** A device created while running: watched from now on, and scanned. */
    added(device: { id: number; path: string; protocol: string }) {
      if (!running) return
      roots.set(device.id, device.path)
      scanOnceWatched(device.id)
      watcher.watch(device)
    },

    /** A device deleted while running: no longer watched (a scan queued for it finds no device and ends). */
    removed(device: number) {
      if (!running) return
      roots.delete(device)
      startPending.delete(device)
      clearTimeout(awaiting.get(device))
      awaiting.delete(device)
      void watcher.unwatch(device)
    },

    /** Another look at `paths` in `ms` (files still settling). */
    later(device: number, paths: string[], ms: number) {
      const timer = setTimeout(() => {
        timers.delete(timer)
        // Folded as events are: the 20,000 files of a drop still settling are one look at their folder.
        const root = roots.get(device)
        scan(device, root === undefined ? paths : foldPaths(root, paths))
      }, ms)
      timer.unref()
      timers.add(timer)
    },

    status: () => watcher.status(),

    /** A scan of `device` ended (`full`: of the whole device). */
    scanned(device: number, full: boolean) {
      if (full) startPending.delete(device)
    },
    /**
     * Watch folders import once every device has had its start scan: a file that appeared while
     * the service was stopped may be an asset moved there from a device not scanned yet.
     */
    importsOpen: () => !startReading && startPending.size === 0,

    /** Stops watching; queued scans stay queued for the next start. */
    async stop() {
      running = false
      for (const timer of [...timers, ...awaiting.values()]) clearTimeout(timer)
      timers.clear()
      awaiting.clear() // a start scan not yet queued is done at the next start
      startPending.clear()
      startReading = false
      await watcher.close()
    },
  }
}

export type Watch = ReturnType<typeof createWatch>
