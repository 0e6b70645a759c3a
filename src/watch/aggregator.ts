// The stage between file events and scans (docs/watcher.md), after syncthing's
// lib/watchaggregator/aggregator.go, pure: events and the time go in, batches of paths to scan
// come out. The watcher feeds it; whoever calls `due` turns each batch into one scan task.
//
// - Adds and changes are due at the next `due` call.
// - Removals wait for the move window (2 s after the last removal at that path), so that a
//   rename's new name is scanned first: the scan then finds the file under its new name by
//   (dev, ino) while its row is still online, and moves the asset instead of taking it offline.
//   A removal still held is released with, and after, the adds of the call that releases it.
// - More than `parentAfter` changed children of one folder: the folder is scanned instead.
//   This cascades upward. The device root takes up to `deviceAfter` children, like syncthing.
// - More than `deviceAfter` paths on one device: the whole device (paths null).
// - A path under one already tracked is covered by it; a folder tracked absorbs the paths below.
// - Excluded names (ingest.ts: clutter, `.reelhouse-*`) never appear.
//
// Paths: with `root` (device id → its path, final separator), as the watcher gives them: absolute,
// spelled from the device path; without it, relative to the device root. Either way the folding
// works on the part below the root, so it never climbs above a device and the exclusion rule sees
// what it expects. The root itself means the whole device. In batches, folders (addDir,
// unlinkDir, and folders scanned for their children) end with the platform's separator ('/', or
// '\' on Windows, where '/' separates names as well), files do not.
//
// Choices where the contract is silent:
// - An add for a path whose removal is held cancels that removal (the file is back: one scan of
//   the add tells the whole story); a removal cancels an add not yet released.
// - A removal that keeps being refreshed (a big tree being deleted) is released anyway after
//   maxHoldMs (default 6 move windows, as syncthing's notifyTimeout is 6 delays), so a scan is
//   never put off forever.
// - One batch per device per `due` call, adds first: the scan task merges queued scans of a
//   device anyway, and one scan that sees both names of a rename is the simplest move of all.
import { type PathRules, SEP, WORK_FOLDER, lastSepIndex, sepPattern, trimSep } from '../storage/paths.ts'
import { nameRules } from './ingest.ts'

export type WatchEventType = 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir'
export type WatchEvent = { device: number; type: WatchEventType; path: string }
/** What to scan on one device: these paths (files or folders), or the whole device (null). */
export type Batch = { device: number; paths: string[] | null }

export type AggregatorOptions = {
  /**
   * The device's path (absolute, final slash), when events carry absolute paths (the watcher's
   * do). An event outside its device's path, or of a device without one, is dropped.
   */
  root?: (device: number) => string | undefined
  /** How long a removal is held so a rename's new name is seen first. Default 2000. */
  moveWindowMs?: number
  /** A folder with more changed children than this is scanned whole. Default 128. */
  parentAfter?: number
  /** A device with more changed paths than this is scanned whole. Default 512. */
  deviceAfter?: number
  /** The longest a removal is held while it keeps being refreshed. Default 6 × moveWindowMs. */
  maxHoldMs?: number
  /** How paths are written (their separator, the work names): this platform's by default; another's in its tests. */
  rules?: Spelling
}

/** What the aggregator needs of a platform's path rules. */
type Spelling = Pick<PathRules, 'sep' | 'workFolder'>
const PLATFORM: Spelling = { sep: SEP, workFolder: WORK_FOLDER }

export type Aggregator = {
  add(event: WatchEvent, now: number): void
  /** The batches due at `now`; what is released is forgotten. */
  due(now: number): Batch[]
  /** When `due` will next return something if no event comes, or undefined when nothing is held. */
  nextAt(): number | undefined
}

/** When a path changed first and last, and whether it is known to be a folder. */
type Times = { first: number; last: number; dir: boolean }
const merge = (a: Times, b: Times): Times => ({
  first: Math.min(a.first, b.first),
  last: Math.max(a.last, b.last),
  dir: a.dir || b.dir,
})

/**
 * Relative paths as `rules` write them: the folder above one ('' at the top), one normalized (no
 * empty names, no `.`; the names joined with the separator), and the exclusion rule.
 */
function spellingOf(rules: Spelling) {
  const { sep } = rules
  const separator = sep === '/' ? '/' : new RegExp(sepPattern(sep))
  return {
    sep,
    parentOf: (path: string) => path.slice(0, Math.max(0, lastSepIndex(path, path.length - 1, sep))),
    normalize: (path: string) =>
      path
        .split(separator)
        .filter((c) => c !== '' && c !== '.')
        .join(sep),
    excluded: nameRules(rules).excluded,
  }
}
type Names = ReturnType<typeof spellingOf>
const PLATFORM_NAMES = spellingOf(PLATFORM)
const namesOf = (rules?: Spelling) => (rules === undefined ? PLATFORM_NAMES : spellingOf(rules))

/** The paths of one device, folded as events arrive, so what is held stays bounded. */
function createTracked(parentAfter: number, deviceAfter: number, names: Names = PLATFORM_NAMES) {
  const { parentOf, sep } = names
  let whole: Times | undefined
  const paths = new Map<string, Times>()
  const children = new Map<string, number>() // tracked paths directly in a folder
  const below = new Map<string, number>() // tracked paths anywhere below a folder ('' not counted)

  const bump = (counts: Map<string, number>, k: string, by: number) => {
    const n = (counts.get(k) ?? 0) + by
    if (n === 0) counts.delete(k)
    else counts.set(k, n)
  }
  const put = (path: string, t: Times) => {
    paths.set(path, t)
    bump(children, parentOf(path), 1)
    for (let a = parentOf(path); a !== ''; a = parentOf(a)) bump(below, a, 1)
  }
  const drop = (path: string): Times | undefined => {
    const t = paths.get(path)
    if (!t) return undefined
    paths.delete(path)
    bump(children, parentOf(path), -1)
    for (let a = parentOf(path); a !== ''; a = parentOf(a)) bump(below, a, -1)
    return t
  }
  const setWhole = (t: Times) => {
    for (const u of paths.values()) t = merge(t, u)
    whole = whole ? merge(whole, t) : t
    paths.clear()
    children.clear()
    below.clear()
  }
  const insert = (path: string, t: Times): void => {
    if (whole) {
      whole = merge(whole, t)
      return
    }
    if (path === '') return setWhole(t)
    for (let a = parentOf(path); a !== ''; a = parentOf(a)) {
      const held = paths.get(a)
      if (held) {
        paths.set(a, merge(held, { ...t, dir: true }))
        return
      }
    }
    const same = paths.get(path)
    if (same) {
      paths.set(path, merge(same, t))
      return
    }
    if (below.has(path)) {
      const prefix = path + sep
      for (const q of [...paths.keys()]) if (q.startsWith(prefix)) t = merge(t, drop(q)!)
    }
    const parent = parentOf(path)
    if (parent !== '' && (children.get(parent) ?? 0) >= parentAfter) return insert(parent, { ...t, dir: true })
    if (paths.size >= deviceAfter) return setWhole(t)
    put(path, t)
  }
  return {
    insert,
    /** Forgets exactly this path (not a folder holding it). */
    cancel: (path: string) => void drop(path),
    /** Removes and returns the entries `ready` accepts, '' standing for the whole device. */
    take(ready: (t: Times) => boolean): [string, Times][] {
      if (whole) {
        if (!ready(whole)) return []
        const t = whole
        whole = undefined
        return [['', t]]
      }
      const out: [string, Times][] = []
      for (const [path, t] of paths) if (ready(t)) out.push([path, t])
      for (const [path] of out) drop(path)
      return out
    },
    times: (): Iterable<Times> => (whole ? [whole] : paths.values()),
    empty: () => !whole && paths.size === 0,
    /** The paths (folders with a final separator), or null for the whole device. */
    list: (prefix: string): string[] | null =>
      whole ? null : [...paths].map(([path, t]) => prefix + path + (t.dir ? sep : '')),
  }
}
type Tracked = ReturnType<typeof createTracked>

/**
 * Absolute paths on the device at `root` folded as a batch of events is: a folder for more than
 * `parentAfter` of its children, the whole device (null) for more than `deviceAfter` paths. For
 * looks asked for directly (files still settling after a drop of 20,000: one scan of their folder,
 * not 20,000 scopes).
 */
export function foldPaths(
  root: string,
  paths: readonly string[],
  parentAfter = 128,
  deviceAfter = 512,
  rules?: Spelling,
): string[] | null {
  const names = namesOf(rules)
  const tracked = createTracked(parentAfter, deviceAfter, names)
  for (const path of paths.length > deviceAfter ? foldCrowded(paths, parentAfter, names.sep) : paths) {
    if (!path.startsWith(root) && path + names.sep !== root) continue
    tracked.insert(names.normalize(path.slice(root.length)), {
      first: 0,
      last: 0,
      dir: trimSep(path, names.sep) !== path,
    })
  }
  return tracked.list(root)
}

/**
 * `paths` with those of each folder that holds more than `parentAfter` of them given as that folder
 * (with a final slash), as the folding would make them: found by one pass over the names, not by
 * folding each (the 20,000 files of a drop still settling: 37.5 ms in one go before, 9.5 now; at
 * 100,000, 118 and 73: medians in-process).
 */
function foldCrowded(paths: readonly string[], parentAfter: number, sep: PathRules['sep']): string[] {
  const unique = [...new Set(paths)]
  const folderOf = (path: string) => path.slice(0, lastSepIndex(path, path.length - 2, sep) + 1)
  const counts = new Map<string, number>()
  for (const path of unique) {
    const folder = folderOf(path)
    counts.set(folder, (counts.get(folder) ?? 0) + 1)
  }
  const out: string[] = []
  const folded = new Set<string>()
  for (const path of unique) {
    const folder = folderOf(path)
    if (folder === '' || counts.get(folder)! <= parentAfter) out.push(path)
    else if (!folded.has(folder)) {
      folded.add(folder)
      out.push(folder)
    }
  }
  return out
}

export function createAggregator(options: AggregatorOptions = {}): Aggregator {
  const moveWindowMs = options.moveWindowMs ?? 2000
  const parentAfter = options.parentAfter ?? 128
  const deviceAfter = options.deviceAfter ?? 512
  const maxHoldMs = options.maxHoldMs ?? 6 * moveWindowMs
  const names = namesOf(options.rules)
  const releaseAt = (t: Times) => Math.min(t.last + moveWindowMs, t.first + maxHoldMs)
  const devices = new Map<number, { adds: Tracked; removals: Tracked }>()

  return {
    add(event, now) {
      let rest = event.path
      if (options.root) {
        const root = options.root(event.device)
        if (root === undefined) return
        if (rest + names.sep === root) rest = ''
        else if (rest.startsWith(root)) rest = rest.slice(root.length)
        else return
      }
      const path = names.normalize(rest)
      if (names.excluded(path)) return
      let d = devices.get(event.device)
      if (!d) {
        d = {
          adds: createTracked(parentAfter, deviceAfter, names),
          removals: createTracked(parentAfter, deviceAfter, names),
        }
        devices.set(event.device, d)
      }
      const t = { first: now, last: now, dir: event.type === 'addDir' || event.type === 'unlinkDir' }
      if (event.type === 'unlink' || event.type === 'unlinkDir') {
        d.adds.cancel(path)
        d.removals.insert(path, t)
      } else {
        d.removals.cancel(path)
        d.adds.insert(path, t)
      }
    },
    due(now) {
      const batches: Batch[] = []
      for (const [device, d] of devices) {
        const batch = createTracked(parentAfter, deviceAfter, names)
        for (const [path, t] of d.adds.take(() => true)) batch.insert(path, t)
        for (const [path, t] of d.removals.take((t) => releaseAt(t) <= now)) batch.insert(path, t)
        if (!batch.empty()) batches.push({ device, paths: batch.list(options.root?.(device) ?? '') })
        if (d.adds.empty() && d.removals.empty()) devices.delete(device)
      }
      return batches
    },
    nextAt() {
      let next: number | undefined
      const consider = (at: number) => {
        if (next === undefined || at < next) next = at
      }
      for (const d of devices.values()) {
        for (const t of d.adds.times()) consider(t.first)
        for (const t of d.removals.times()) consider(releaseAt(t))
      }
      return next
    },
  }
}
