// What the watcher remembers between scans, in memory only (a restart forgets it; the start scan
// then decides by identity and content alone):
// - Sightings: what was at a path when it was last looked at. Files from the watcher's look at a
//   name when its event came, kept for `fileMs` (the move window and a little more): a file saved
//   over an asset's path and renamed before any scan ran is followed through them. Folders from
//   every walk and look, kept while there is room: a folder renamed is recognised by its identity,
//   and what was inside it is looked for under the new name.
// - Strangers: files a scan saw that no asset has and that were not imported (not in a watch
//   folder, or still settling), kept for `strangerMs`: when an asset's file vanishes later, the
//   strangers are looked at again and those of its size now are judged (a move across file systems: the copy appears
//   before the original goes).
// Both are bounded: the oldest entries go first.
// - What the scans under way found, for as long as each runs (two devices' scans run at once: the
//   start scans, a timed rescan, events on both): the files it found that no asset holds yet
//   (newcomers), and the assets whose files it found vanished. A move across file systems has a
//   half on each device; each scan publishes its half before it reads the other's, so of two
//   scans running at once at least one sees both halves, whichever looks first (the newcomers
//   stay readable until the scan that found them has remembered them as strangers, the vanished
//   assets until the scan that found them has taken them offline).
import { SEP, trimSep } from '../storage/paths.ts'
import type { DiskEntry, Sighting } from './reconcile.ts'

/** An asset a scan under way found vanished: where it was, and the size of its file. */
export type Vanished = { id: number; path: string; size: number }

/** How many out-of-time entries one call drops besides what the cap drops: more than a call adds. */
const STALE_PER_CALL = 4

/** A path as a key: without its final separator (folders are spelled either way). */
const key = (path: string) => trimSep(path)

export function createRecent(
  options: { fileMs?: number; strangerMs?: number; maxFolders?: number; maxFiles?: number } = {},
) {
  const fileMs = options.fileMs ?? 10_000
  const strangerMs = options.strangerMs ?? 15 * 60_000
  const maxFolders = options.maxFolders ?? 200_000
  const maxFiles = options.maxFiles ?? 20_000
  const files = new Map<string, { s: Sighting; at: number }>()
  const folders = new Map<string, Sighting>()
  const strangers = new Map<string, { e: DiskEntry; at: number }>()
  /** Fingerprints read of files no asset has (held copies are looked at again without reading them again). */
  const hashes = new Map<string, { dev: number; ino: number; size: number; mtimeMs: number; hash: string }>()
  /** Folder paths by identity: a renamed folder is seen under its new name before its old one is forgotten. */
  const pathsOf = new Map<string, Set<string>>()
  const idOf = (s: { dev: number; ino: number; stamp: number }) => `${s.dev}:${s.ino}:${s.stamp}`
  /** File paths by the identity seen there: a file found under a new name was seen at these. */
  const filePathsOf = new Map<string, Set<string>>()
  const unfile = (k: string, s: Sighting) => {
    files.delete(k)
    const set = filePathsOf.get(idOf(s))
    set?.delete(k)
    if (set?.size === 0) filePathsOf.delete(idOf(s))
  }
  const unfolder = (k: string) => {
    const old = folders.get(k)
    if (!old) return
    folders.delete(k)
    const set = pathsOf.get(idOf(old))
    set?.delete(k)
    if (set?.size === 0) pathsOf.delete(idOf(old))
  }

  /**
   * Drops the oldest entries of an insertion-ordered map (through `drop`, which keeps an index in
   * step) while the map holds more than `max`, and at most STALE_PER_CALL entries that `stale`
   * says are out of time. Stale entries are never read as current (every reader checks the time):
   * they only take room, so they go a few per call. All at once, the 20,000 sightings of a drop
   * went in one call ten seconds later, holding every request for 100 to 200 ms (bench/stall.ts).
   * Without `stale`, a map within its cap is not walked at all: a walk from the start of a Map
   * steps over every entry deleted there since the engine last rehashed it.
   */
  const trim = <V>(
    map: Map<string, V>,
    max: number,
    stale?: (v: V) => boolean,
    drop: (k: string, v: V) => void = (k) => map.delete(k),
  ) => {
    if (!stale && map.size <= max) return
    let staleDropped = 0
    for (const [k, v] of map) {
      if (map.size <= max && (!stale || staleDropped >= STALE_PER_CALL || !stale(v))) break
      if (map.size <= max) staleDropped++
      drop(k, v)
    }
  }
  /**
   * The files' sightings oldest first, as [path, when seen]: the map's own order cannot be walked
   * from its start at every sighting (see trim; a drop's 20,000 sightings, each deleting the
   * oldest, made each walk step over thousands of deleted entries). An item whose path was seen
   * again later, or dropped, no longer matches the map and is passed over.
   */
  let fileOrder: [string, number][] = []
  let fileHead = 0
  const trimFiles = (now: number) => {
    let staleDropped = 0
    while (fileHead < fileOrder.length) {
      const [k, at] = fileOrder[fileHead]!
      const current = files.get(k)
      if (current && current.at === at) {
        if (files.size <= maxFiles && (staleDropped >= STALE_PER_CALL || now - at <= fileMs)) break
        if (files.size <= maxFiles) staleDropped++
        unfile(k, current.s)
      }
      fileHead++
    }
    // The items passed over go once they are half of the list.
    if (fileHead > 1024 && fileHead * 2 > fileOrder.length) {
      fileOrder = fileOrder.slice(fileHead)
      fileHead = 0
    }
  }

  /** Per scan under way (its token): its newcomers, indexed by size when first read. */
  const newcomers = new Map<object, { entries: readonly DiskEntry[]; bySize?: Map<number, DiskEntry[]> }>()
  const vanished = new Map<object, Vanished[]>()

  return {
    /** The files the scan `token` found that no asset holds (published before it reads vanished assets). */
    found(token: object, entries: readonly DiskEntry[]) {
      if (entries.length) newcomers.set(token, { entries })
    },
    /** Assets the scan `token` found vanished (published before it reads newcomers). */
    lost(token: object, assets: readonly Vanished[]) {
      if (!assets.length) return
      const list = vanished.get(token)
      if (list) list.push(...assets)
      else vanished.set(token, [...assets])
    },
    /** The scan `token` ended: what it found is in the catalogue, or remembered as strangers, by now. */
    ended(token: object) {
      newcomers.delete(token)
      vanished.delete(token)
    },
    /** The newcomers of these sizes that other scans under way found. */
    newcomers(sizes: ReadonlySet<number>, except: object): DiskEntry[] {
      const out: DiskEntry[] = []
      for (const [token, n] of newcomers) {
        if (token === except) continue
        if (!n.bySize) {
          n.bySize = new Map()
          for (const e of n.entries) (n.bySize.get(e.size) ?? n.bySize.set(e.size, []).get(e.size)!).push(e)
        }
        for (const size of sizes) out.push(...(n.bySize.get(size) ?? []))
      }
      return out
    },
    /** The assets with files of these sizes that other scans under way found vanished. */
    vanished(sizes: ReadonlySet<number>, except: object): Vanished[] {
      const out: Vanished[] = []
      for (const [token, list] of vanished)
        if (token !== except) for (const v of list) if (sizes.has(v.size)) out.push(v)
      return out
    },
    /** What is at `path` now (a watcher's look, or a walk's entry). */
    saw(path: string, s: Sighting, now: number) {
      const k = key(path)
      if (s.kind === 'dir') {
        const known = folders.get(k)
        // The same folder seen again (its every event during a drop) changes nothing.
        if (known && known.dev === s.dev && known.ino === s.ino && known.stamp === s.stamp) return
        unfolder(k)
        folders.set(k, s)
        const id = idOf(s)
        ;(pathsOf.get(id) ?? pathsOf.set(id, new Set()).get(id)!).add(k)
        trim(folders, maxFolders, undefined, unfolder)
        return
      }
      const old = files.get(k)
      if (old) unfile(k, old.s)
      files.set(k, { s, at: now })
      fileOrder.push([k, now])
      const id = idOf(s)
      ;(filePathsOf.get(id) ?? filePathsOf.set(id, new Set()).get(id)!).add(k)
      trimFiles(now)
    },
    /** Nothing is at `path` any more (a folder seen gone keeps no identity to be matched by). */
    gone(path: string) {
      unfolder(key(path))
    },
    /** The sightings as reconcile reads them, at `now`. */
    sightings(now: number) {
      return {
        get(path: string): Sighting | undefined {
          const f = files.get(path)
          if (f && now - f.at <= fileMs) return f.s
          return folders.get(path)
        },
      }
    },
    /** Folders seen earlier with one of these identities at another path than now (renamed away). */
    formerFolders(dirs: readonly DiskEntry[]): string[] {
      const out: string[] = []
      if (!pathsOf.size) return out
      for (const d of dirs)
        for (const path of pathsOf.get(idOf(d)) ?? []) if (path !== key(d.path)) out.push(path + SEP)
      return out
    },
    /** Paths where a file with one of these identities was seen lately, other than where it is now. */
    formerFiles(entries: readonly DiskEntry[], now: number): string[] {
      const out: string[] = []
      if (!filePathsOf.size) return out
      for (const e of entries)
        for (const path of filePathsOf.get(idOf(e)) ?? [])
          if (path !== key(e.path) && now - files.get(path)!.at <= fileMs) out.push(path)
      return out
    },
    remember(entries: readonly DiskEntry[], now: number) {
      // More than the cap at once (a new share's 100,000 files): only the last ones would stay.
      if (entries.length >= maxFiles) {
        strangers.clear()
        entries = entries.slice(entries.length - maxFiles)
      }
      for (const e of entries) {
        strangers.delete(e.path)
        strangers.set(e.path, { e, at: now })
      }
      trim(strangers, maxFiles, (v) => now - v.at > strangerMs)
    },
    /** The strangers seen within their time, oldest first. */
    strangers(now: number): DiskEntry[] {
      const out: DiskEntry[] = []
      for (const { e, at } of strangers.values()) if (now - at <= strangerMs) out.push(e)
      return out
    },
    forgetStranger(path: string) {
      strangers.delete(path)
    },
    /** A fingerprint read earlier of the file now at `path`, if it is still that file unchanged. */
    hashOf(path: string, seen: { dev: number; ino: number; size: number; mtimeMs: number }): string | undefined {
      const h = hashes.get(path)
      return h && h.dev === seen.dev && h.ino === seen.ino && h.size === seen.size && h.mtimeMs === seen.mtimeMs
        ? h.hash
        : undefined
    },
    keepHash(path: string, seen: { dev: number; ino: number; size: number; mtimeMs: number }, hash: string) {
      hashes.delete(path)
      hashes.set(path, { ...seen, hash })
      trim(hashes, maxFiles)
    },
  }
}

export type Recent = ReturnType<typeof createRecent>
