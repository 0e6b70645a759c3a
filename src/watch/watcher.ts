// The device watcher (docs/watcher.md): one chokidar watcher per device root, whose events
// are hints for the caller (the aggregator queues scans; the scan is the truth). It never touches
// the database and never keeps the process alive.
//
// - Devices whose protocol is `file` or `copy` are watched by change events (inotify on Linux); any other
//   protocol (smb, nfs, afp: network mounts send no change events), or every device with
//   `poll`, is watched by polling every `pollIntervalMs`; on Windows also a device on a network
//   share (a UNC path, a drive letter mapped to a share: storage/windows/drives.ts).
// - Chokidar watches FOLDERS only (files are given to it as ignored): left to itself it puts an
//   inotify watch (or, polling, a stat timer) on every file as well, which for a share of 100,000
//   clips is 100,000 watches, 100,000 FSWatcher objects and about 600 MB, and reaches the
//   system's watch limit 100 times sooner. A folder's watch already reports what happens to the
//   names in it; chokidar passes those on as 'raw' events (the folder and the name), which are
//   turned into hints here: `add` when something is at the name now, `unlink` when nothing is,
//   `change` for a write. When polling, a folder's stat shows only that its list of names
//   changed: the hint is the folder (`addDir`), which the caller scans. A file growing in place
//   is not seen by polling; the caller's settle gate looks at such files again by itself.
// - When the system's inotify watch limit is reached (ENOSPC from fs.watch, which chokidar
//   reports as an 'error'), the device is watched by polling from then on, said once in the log.
//   The limit is reached by the number of folders in the tree.
// - Every `pollIntervalMs` the root is looked at: a root that is missing is 'unavailable'
//   (one `unlinkDir` for the root if it was watched); a root that appears, comes back or is
//   another folder than before (device and inode changed: replaced, mounted or unmounted) is
//   watched again, then announced by an `addDir` for the root so that the caller scans it.
//
// Event paths are absolute and spelled from the device's path: folders (`addDir`, `unlinkDir`)
// end with one separator (the platform's: `/`, or `\` on Windows), files do not. `exclude` gets
// the path relative to the device root (`a/b`, `a\b` on Windows, no leading or final separator);
// what it excludes is neither reported nor watched.
import { EventEmitter } from 'node:events'
import { onNetworkShare } from '../storage/windows/drives.ts'
import type { ChokidarReport, ChokidarRequest } from './chokidar.worker.ts'
import type { Stats } from 'node:fs'
import { lstatSync } from 'node:fs'
import { lstat, realpath, stat } from 'node:fs/promises'
import { SEP, asFolder, cleanDir, hasSep, joinBelow } from '../storage/paths.ts'
import type { Log } from '../util/log.ts'
import { createPacer } from '../util/pace.ts'
import { embeddedUrl } from '../util/embedded.ts'

/**
 * Chokidar runs in a thread of its own (chokidar.worker.ts), one for the process: it handles each
 * event of a burst synchronously (a drop of 20,000 files sends tens of thousands of events, which
 * arrive in batches of thousands per turn), and in the server's thread that held every request
 * for 100 to 370 ms at a time (bench/stall.ts). What it reports comes here as messages, in order,
 * and is worked through paced. In the thread, folders are left out by the service's name rules
 * (ingest.ts `excluded`); `exclude` filters what it reports here.
 */
// In the executable the thread's code is an entrypoint of its own (build.ts) under the
// executable's root (src/util/embedded.ts says where that is on each system).
const WORKER_URL = embeddedUrl('watch/chokidar.worker.js') ?? new URL('./chokidar.worker.ts', import.meta.url).href

/** What watcher.ts uses of a chokidar watcher, spoken to in the thread. */
class ThreadWatcher extends EventEmitter {
  #closed?: Promise<void>
  constructor(
    readonly id: number,
    private readonly send: (request: ChokidarRequest) => void,
    private readonly forget: (id: number) => Promise<void>,
  ) {
    super()
  }
  close(): Promise<void> {
    return (this.#closed ??= (this.send({ op: 'close', id: this.id }), this.forget(this.id)))
  }
}

let thread:
  | { worker: Worker; watchers: Map<number, { w: ThreadWatcher; closed?: () => void }>; next: number }
  | undefined
/** A chokidar watcher of `real` in the watcher's thread (started with the first one). */
function threadWatch(real: string, base: string, polling: boolean, intervalMs: number): ThreadWatcher {
  if (!thread) {
    const worker = new Worker(WORKER_URL)
    const t = { worker, watchers: new Map<number, { w: ThreadWatcher; closed?: () => void }>(), next: 1 }
    worker.onmessage = (event: MessageEvent<ChokidarReport>) => {
      const r = event.data
      const held = t.watchers.get(r.id)
      if (!held) return
      if (r.kind === 'closed') {
        t.watchers.delete(r.id)
        return held.closed?.()
      }
      if (r.kind === 'all') held.w.emit('all', r.name, r.path)
      else if (r.kind === 'raw')
        held.w.emit('raw', r.event, r.name, r.watchedPath === undefined ? undefined : { watchedPath: r.watchedPath })
      else if (r.kind === 'ready') held.w.emit('ready')
      else held.w.emit('error', Object.assign(new Error(r.message), r.code === undefined ? {} : { code: r.code }))
    }
    worker.onerror = (event) => {
      // Every watcher of the thread reports it: their devices say so (onError) and are looked at again.
      for (const { w } of t.watchers.values())
        w.emit('error', Object.assign(new Error(`the watcher thread failed: ${event.message}`), { code: 'EWORKER' }))
    }
    // The thread must not keep a stopping process alive.
    worker.unref()
    thread = t
  }
  const t = thread
  const id = t.next++
  const w = new ThreadWatcher(
    id,
    (request) => t.worker.postMessage(request),
    (id) =>
      new Promise<void>((resolve) => {
        const held = t.watchers.get(id)
        if (!held) return resolve()
        held.closed = resolve
      }),
  )
  t.watchers.set(id, { w })
  t.worker.postMessage({ op: 'open', id, real, base, polling, intervalMs } satisfies ChokidarRequest)
  return w
}

export type WatchEventType = 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir'
export type WatchEvent = { device: number; type: WatchEventType; path: string }
export type WatchMode = 'events' | 'polling' | 'unavailable'
/** `ready`: the watcher has walked the whole tree, so every change from now on is reported. */
export type WatchStatus = { device: number; mode: WatchMode; ready: boolean; reason?: string }
export type WatchedDevice = { id: number; path: string; protocol: string }

export type WatcherOptions = {
  onEvent(event: WatchEvent): void
  /**
   * Once per watch(): the device's folders are all watched (chokidar's first walk is done,
   * polling or not), or the device cannot be watched (missing, not a folder). A full scan that
   * starts from then on leaves no gap: a change after the scan read a folder was watched there.
   */
  onWatched?(device: number): void
  /** Errors the watcher does not handle itself (not ENOSPC, not a missing path). */
  onError?(device: number, error: Error): void
  /**
   * What a look at a name found (its stats), as the event for it is made: the identity seen at a
   * path at that moment, which a scan may no longer find there (saved anew, then renamed at once).
   */
  onSighting?(path: string, stats: Stats): void
  exclude(relPath: string): boolean
  /** Watch every device by polling (`--poll`). */
  poll: boolean
  /** The polling interval, and how often each device root is looked at. */
  pollIntervalMs: number
  log: Log
}

export type Watcher = {
  /** Starts watching a device (again, if its path or protocol changed). */
  watch(device: WatchedDevice): void
  unwatch(id: number): Promise<void>
  /** Stops everything; resolves when every file system handle is released. */
  close(): Promise<void>
  status(): WatchStatus[]
}

/** The protocols whose folders send change events (local folders); every other one is polled. */
const EVENT_PROTOCOLS = new Set(['file', 'copy'])

export const REASONS = {
  missing: 'the device folder does not exist',
  notFolder: 'the device path is not a folder',
  poll: 'polling was asked for (--poll)',
  protocol: (protocol: string) => `the ${protocol} protocol sends no change events`,
  share: 'a network share reports the changes other machines make only in part',
  limit: 'the system limit of inotify watches was reached (raise fs.inotify.max_user_watches)',
} as const

type Entry = {
  device: WatchedDevice
  /** The device path with one final separator: every event path starts with it. */
  root: string
  mode: WatchMode
  reason?: string
  ready: boolean
  /** ENOSPC was seen: this device is polled from now on. */
  limitReached: boolean
  chokidar?: ThreadWatcher
  /** The identity of the root the current chokidar watcher watches. */
  identity?: { dev: number; ino: number }
  /** The root has been looked at once (after that, a root that appears is announced). */
  checked: boolean
  stopped: boolean
  /** State changes run one after the other; a look at the root is skipped while one is pending. */
  queue: Promise<void>
  pending: boolean
  timer: ReturnType<typeof setInterval>
  /** Error codes already logged for this device (each is logged once). */
  logged: Set<string>
  /** onWatched was called for this watch(). */
  told: boolean
}

export function createWatcher(options: WatcherOptions): Watcher {
  const { log } = options
  const entries = new Map<number, Entry>()
  const closing = new Set<Promise<void>>()
  let closed = false
  /** The raw events of every device, worked through in turns when they come in bursts. */
  const pace = createPacer()

  const emit = (event: WatchEvent) => {
    try {
      options.onEvent(event)
    } catch (error) {
      log.error('The watcher event handler failed', {
        device: event.device,
        type: event.type,
        path: event.path,
        error: String(error),
      })
    }
  }

  const wantedPolling = (entry: Entry): string | undefined => {
    if (entry.limitReached) return REASONS.limit
    if (options.poll) return REASONS.poll
    if (!EVENT_PROTOCOLS.has(entry.device.protocol)) return REASONS.protocol(entry.device.protocol)
    // Windows: a UNC path or a drive letter mapped to a share, whatever its protocol says.
    if (onNetworkShare(entry.device.path)) return REASONS.share
    return undefined
  }

  const tell = (entry: Entry) => {
    if (entry.told || entry.stopped) return
    entry.told = true
    // Called from chokidar's events: a throw here would end the process, as onEvent's would.
    try {
      options.onWatched?.(entry.device.id)
    } catch (error) {
      log.error('The watcher ready handler failed', { device: entry.device.id, error: String(error) })
    }
  }

  /** Runs `step` after the entry's earlier steps, unless the entry was unwatched meanwhile. */
  const serial = (entry: Entry, step: () => Promise<void>) => {
    entry.queue = entry.queue
      .then(() => (entry.stopped ? undefined : step()))
      .catch((error) => {
        log.error('The device watcher failed', { device: entry.device.id, error: String(error) })
      })
    return entry.queue
  }

  /** Closes the entry's chokidar watcher; resolves when its handles are released. */
  const stopChokidar = async (entry: Entry) => {
    const w = entry.chokidar
    if (!w) return
    entry.chokidar = undefined
    entry.ready = false
    const done = w.close()
    // close() removes every listener; an error chokidar still emits from work in flight would
    // otherwise be thrown as an unhandled 'error' event.
    w.on('error', () => {})
    closing.add(done)
    try {
      await done
    } finally {
      closing.delete(done)
    }
  }

  /** Watches the root (whose stats are `stats`); with `announce`, an `addDir` for the root once ready. */
  const open = async (entry: Entry, stats: Stats, announce: boolean) => {
    let real: string
    try {
      // Chokidar is given the real path: with followSymlinks off it would take a root that is a
      // symbolic link for a file. Events are spelled from the device path again below.
      real = await realpath(entry.root)
    } catch {
      tell(entry)
      return // gone again: the next look at the root says so
    }
    if (entry.stopped) return
    const base = asFolder(real)
    const pollingReason = wantedPolling(entry)
    const id = entry.device.id
    entry.identity = { dev: stats.dev, ino: stats.ino }
    entry.mode = pollingReason ? 'polling' : 'events'
    entry.reason = pollingReason
    entry.ready = false
    const w = threadWatch(real, base, pollingReason !== undefined, options.pollIntervalMs)
    entry.chokidar = w
    w.on('all', (name, path) => {
      if (entry.chokidar !== w || !path.startsWith(base)) return // the root's own events are ours
      const type = name as WatchEventType // 'all' carries add, change, unlink, addDir and unlinkDir only
      const dir = type === 'addDir' || type === 'unlinkDir'
      emit({ device: id, type, path: entry.root + path.slice(base.length) + (dir ? SEP : '') })
    })
    // What happens to the names in a watched folder. Events: (event, name, { watchedPath });
    // polling: ('change', folder, { curr, prev }).
    w.on('raw', (event: string, name: string | null, details: unknown) => {
      if (entry.chokidar !== w) return
      const folder = (details as { watchedPath?: string } | undefined)?.watchedPath
      if (folder === undefined) {
        if (typeof name !== 'string' || (name !== real && !name.startsWith(base))) return
        const rel = name === real ? '' : name.slice(base.length)
        emit({ device: id, type: 'addDir', path: entry.root + (rel ? rel + SEP : '') })
        return
      }
      // One name, never a path (a separator in it: the platform's, or on Windows '/' too).
      if (typeof name !== 'string' || name === '' || hasSep(name)) return
      const full = joinBelow(folder, name)
      if (!full.startsWith(base) || options.exclude(full.slice(base.length))) return
      // Paced: a burst of thousands of events is worked through in turns (util/pace.ts).
      pace(() => {
        if (entry.chokidar !== w) return
        // What is at the name at this very moment, for the sightings: the look below resolves later
        // (a turn of the thread pool, behind chokidar's own work), when a quick save-then-rename
        // has already taken the name away again. Local folders only (events): one lstat, no wait.
        if (options.onSighting && event !== 'change') {
          let s: Stats | undefined
          try {
            s = lstatSync(full)
          } catch {
            s = undefined
          }
          if (s) sight(entry.root + full.slice(base.length), s)
        }
        look(full, entry.root + full.slice(base.length), folder, event === 'change')
      })
    })
    /**
     * What is at a name now says what happened to it: something there is an `add` (a folder:
     * `addDir`), or a `change` after a write; nothing there is an `unlink`. One look per name at
     * a time: events for a name being looked at ask for one more look after it (a file being
     * copied in sends one per write). When the watched folder itself is gone (its watch reports
     * that under the folder's own name), chokidar's unlinkDir for it covers what was in it.
     */
    const looking = new Map<string, { again: boolean; next: boolean }>()
    const sight = (path: string, s: Stats) => {
      try {
        options.onSighting?.(path, s)
      } catch (error) {
        log.error('The watcher sighting handler failed', { device: id, path, error: String(error) })
      }
    }
    const look = (full: string, path: string, folder: string, change: boolean) => {
      const busy = looking.get(full)
      if (busy) {
        // The look after this one reports a change only if every event since was a write.
        busy.next = busy.again ? busy.next && change : change
        busy.again = true
        return
      }
      const state = { again: false, next: false }
      looking.set(full, state)
      const done = () => {
        looking.delete(full)
        // (add and change are alike to the caller: something is at the name, look at it)
        if (state.again && entry.chokidar === w) look(full, path, folder, state.next)
      }
      // What the look found is handled paced too: the lstats of a burst complete together.
      lstat(full).then(
        (s) =>
          pace(() => {
            if (entry.chokidar === w) {
              sight(path, s)
              emit(
                s.isDirectory()
                  ? { device: id, type: 'addDir', path: path + SEP }
                  : { device: id, type: change ? 'change' : 'add', path },
              )
            }
            done()
          }),
        () =>
          lstat(folder)
            .then(
              () => entry.chokidar === w && emit({ device: id, type: 'unlink', path }),
              () => {},
            )
            .finally(done),
      )
    }
    w.on('error', (error: unknown) => {
      if (entry.chokidar === w) onChokidarError(entry, error instanceof Error ? error : new Error(String(error)))
    })
    w.once('ready', () => {
      if (entry.chokidar === w) tell(entry)
      const ready = () => {
        if (entry.chokidar !== w) return
        entry.ready = true
        if (announce) emit({ device: id, type: 'addDir', path: entry.root })
      }
      // A poller takes its first stat a little after chokidar's walk has set it up, and a
      // change made before that stat is never reported. One interval later every poller has
      // its first stat, so a scan announced from then on cannot fall between the two.
      if (pollingReason) setTimeout(ready, options.pollIntervalMs).unref()
      else ready()
    })
  }

  const onChokidarError = (entry: Entry, error: Error) => {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown'
    const id = entry.device.id
    if (code === 'ENOSPC' && entry.mode === 'events' && !entry.limitReached) {
      entry.limitReached = true
      log.warn(
        'The system limit of inotify watches is reached: this device is watched by polling from now on. ' +
          'Raise fs.inotify.max_user_watches (sysctl) and restart to watch it by events.',
        { device: id, path: entry.root },
      )
      // Folders past the limit were never watched: the polling watcher announces the root, so
      // the caller scans what may have changed unseen.
      void serial(entry, async () => {
        await stopChokidar(entry)
        let stats: Stats
        try {
          stats = await stat(entry.root)
        } catch {
          return // gone: the next look at the root says so
        }
        await open(entry, stats, true)
      })
      return
    }
    if (code === 'ENOSPC') return // the same limit, reported again for other paths before the switch
    options.onError?.(id, error)
    if (entry.logged.has(code)) return
    entry.logged.add(code)
    log.warn('The device watcher reported an error (said once per device and kind)', {
      device: id,
      code,
      error: error.message,
    })
  }

  /** Looks at the root: starts, stops or restarts the watching to match what is there. */
  const check = async (entry: Entry) => {
    let stats: Stats | undefined
    try {
      stats = await stat(entry.root)
    } catch {
      stats = undefined
    }
    if (entry.stopped) return
    const first = !entry.checked
    entry.checked = true
    const id = entry.device.id
    if (
      entry.identity &&
      (!stats?.isDirectory() || stats.dev !== entry.identity.dev || stats.ino !== entry.identity.ino)
    ) {
      // Removed, unmounted, replaced or mounted over: what was watched is gone.
      entry.identity = undefined
      await stopChokidar(entry)
      emit({ device: id, type: 'unlinkDir', path: entry.root })
    }
    if (!stats?.isDirectory()) {
      entry.mode = 'unavailable'
      entry.reason = stats ? REASONS.notFolder : REASONS.missing
      entry.ready = false
      tell(entry) // nothing to wait for: the caller's scan says the device is unavailable
      return
    }
    // At the first look the caller's start scan covers the root; after that it is announced.
    if (!entry.identity) await open(entry, stats, !first)
  }

  const lookAtRoot = (entry: Entry) => {
    if (entry.pending) return // a look (or a switch) is still running: a hung mount must not pile them up
    entry.pending = true
    void serial(entry, () => check(entry)).finally(() => {
      entry.pending = false
    })
  }

  const unwatch = async (id: number) => {
    const entry = entries.get(id)
    if (!entry) return
    entries.delete(id)
    entry.stopped = true
    clearInterval(entry.timer)
    await stopChokidar(entry)
  }

  return {
    watch(device) {
      if (closed) throw new Error('The watcher is closed.')
      const known = entries.get(device.id)
      if (known && known.device.path === device.path && known.device.protocol === device.protocol) return
      if (known) void unwatch(device.id)
      const entry: Entry = {
        device: { ...device },
        root: cleanDir(device.path),
        mode: 'unavailable',
        reason: 'the device folder has not been looked at yet',
        ready: false,
        limitReached: false,
        checked: false,
        stopped: false,
        queue: Promise.resolve(),
        pending: false,
        timer: setInterval(() => lookAtRoot(entry), options.pollIntervalMs),
        logged: new Set(),
        told: false,
      }
      entry.timer.unref()
      entries.set(device.id, entry)
      lookAtRoot(entry)
    },
    unwatch,
    async close() {
      closed = true
      await Promise.all([...entries.keys()].map(unwatch))
      await Promise.all([...closing])
    },
    status() {
      return [...entries.values()].map((e) => ({
        device: e.device.id,
        mode: e.mode,
        ready: e.ready,
        ...(e.reason === undefined ? {} : { reason: e.reason }),
      }))
    },
  }
}
