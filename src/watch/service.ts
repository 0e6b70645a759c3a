// The device watcher as the core runs it (service.md 10): chokidar per device (watcher.ts) feeds
// raw events into the pure aggregator, whose batches become `scan` tasks; a full scan of every
// device runs at start and every --rescan-interval; new devices are watched from their creation.
// Nothing here writes the catalogue: the scan task does, through the media service.
import type { Db } from '../db/client.ts'
import { devices as devicesTable } from '../db/schema.ts'
import type { Runner } from '../tasks/runner.ts'
import type { Log } from '../util/log.ts'
import { createAggregator } from './aggregator.ts'
import { createSettle, excluded } from './ingest.ts'
import { createWatcher } from './watcher.ts'

export type WatchOptions = {
  poll: boolean
  pollIntervalMs: number
  /** 0: no timed rescans. */
  rescanMs: number
  settleMs: number
}

/** How often due batches of events become scan tasks. */
const TICK_MS = 250

export function createWatch(db: Db, deps: { runner: Runner; log: Log }, options: WatchOptions) {
  const { runner, log } = deps
  const settle = createSettle(options.settleMs)
  /** Device roots by id: the watcher reports absolute paths; the aggregator folds below a root. */
  const roots = new Map<number, string>()
  // One second holds a rename's removal until its new name is scanned (inotify reports both at
  // once); a move seen later still keeps its asset, as reconcile matches offline rows by their
  // file's (dev, ino, birth time). Two seconds made every delete wait past the 1.5 s target.
  const aggregator = createAggregator({ moveWindowMs: 1000, parentAfter: 128, deviceAfter: 512, root: (id) => roots.get(id) })
  const watcher = createWatcher({
    onEvent: (event) => aggregator.add(event, Date.now()),
    // The watcher logs each kind of error once per device itself; the scans are the truth anyway.
    onError: () => {},
    exclude: excluded,
    poll: options.poll,
    pollIntervalMs: options.pollIntervalMs,
    log,
  })
  const timers = new Set<Timer>()
  let running = false

  /** One queued full scan per device (merged); path scans queue as they come. */
  function scan(device: number, paths: string[] | null) {
    if (!running) return
    runner.enqueue(db, { kind: 'scan', target: { device }, production: null, params: { device, paths }, key: paths === null ? `scan:${device}` : undefined })
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
      running = true
      for (const device of db.select().from(devicesTable).all()) {
        roots.set(device.id, device.path)
        watcher.watch(device)
        scan(device.id, null)
      }
      every(TICK_MS, () => {
        for (const batch of aggregator.due(Date.now())) scan(batch.device, batch.paths)
      })
      if (options.rescanMs > 0) every(options.rescanMs, () => {
        for (const device of db.select({ id: devicesTable.id }).from(devicesTable).all()) scan(device.id, null)
      })
    },

    /** A device created while running: watched from now on, and scanned. */
    added(device: { id: number; path: string; protocol: string }) {
      if (!running) return
      roots.set(device.id, device.path)
      watcher.watch(device)
      scan(device.id, null)
    },

    /** Another look at `paths` in `ms` (files still settling). */
    later(device: number, paths: string[], ms: number) {
      const timer = setTimeout(() => {
        timers.delete(timer)
        scan(device, paths)
      }, ms)
      timer.unref()
      timers.add(timer)
    },

    status: () => watcher.status(),

    /** Stops watching; queued scans stay queued for the next start. */
    async stop() {
      running = false
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      await watcher.close()
    },
  }
}

export type Watch = ReturnType<typeof createWatch>
