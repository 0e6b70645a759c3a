// The reconcile road's pure middle: what the disk says of a scanned scope, diffed against what the
// catalogue says, gives the changes to apply. No database, no disk, no clock: the scan task walks,
// looks rows up, calls this (twice when fingerprints are needed), verifies and applies the result
// through the media and project services. O(n) in entries and rows, with Maps.
//
//   scan task: walk(scope) → DiskEntry[]  +  rows under the scope, rows holding an entry's identity,
//              rows whose file vanished with an entry's size  →  reconcile  →  fingerprints?  →
//              reconcile  →  verify  →  apply
//
// IDENTITY FIRST. A record describes the file it names, and the file's identity decides which
// asset it is; the path decides only where identity says nothing. In order:
// 1. Identity. A file whose (dev, ino, stamp) an asset holds is that asset's file, wherever it now
//    is (online assets first, then offline ones: a file moved while unseen comes back). The stamp
//    (birth time, or mtime where none is kept) tells a file from the next one given a freed inode.
//    Of several names of one file (hard links), the asset's own path wins, else the first.
// 2. What was seen at a path (sightings: the watcher's look at a name when its event came, kept
//    for the move window). An asset whose identity is nowhere, whose path was seen holding another
//    file that no asset holds, and that file is now elsewhere in this scan: the file was saved
//    over the asset's path (a new inode) and then renamed; it is the asset's file.
// 3. The path. A file at an asset's path that no asset holds is that asset's (saved in place
//    under a new inode); where several assets whose files vanished name that path (and none in
//    production does), its content decides, and nothing is guessed when it does not. A file there that another asset holds was handed to that asset in step 1;
//    the asset that had the path goes offline unless its own identity was found elsewhere.
//    Through a renamed folder: an asset whose file is missing, one of whose folders was seen with
//    the identity a folder of this scan has now, looks for its relative path there.
// 4. Content. A file with no known identity whose size and fingerprint match an asset whose file
//    vanished (going offline in this scan, or offline since any time) is that asset moved: across
//    file systems, or restored. Only assets whose file vanished are candidates: one whose file is
//    still at its path (found in this scan, by identity or by its path) did not move, whatever its
//    content, so a copy in place never stands in the way. The caller gives every asset of that
//    content with its path looked at (the scan task reads them by fingerprint and lstats their
//    paths), so that every scan knows the same candidates whichever it is. One candidate: that one.
//    Several: the one with the same file name wins, else nothing is guessed (listed in `ambiguous`
//    with the assets that tie, and that file is not imported either).
// Whatever is left is new: an ingest candidate on a watch folder.
//
// Inodes are compared only among files seen in this scan (and the caller's lstat of the paths of
// the assets it found by identity, given in `disk` and `scope`): file systems reuse freed inodes
// at once, so an identity recorded long ago says nothing of a path not looked at now.
//
// Other rules, as before:
// - Archive-only (is_archive true, is_production false) is never touched, its identity not used.
//   Its path still counts as catalogued, so the file there is never imported.
// - Archived and online is not taken offline (offline it would read as archive-only).
// - Offline happens only to rows whose path lies in the scope and whose device root is present.
// - A move between two device ids needs both watched (`opts.watched`, default rootPresent).
// - Anything `ignored` (clutter, `.reelhouse-*`, our own output) is ignored on both sides: the
//   rows there keep their state and their identity still counts as held.
// - Paths are compared without their final separator, so folders may be spelled either way.
import type { MediaKind } from '../db/tables.ts'
import { below, lastName, lastSepIndex, trimSep } from '../storage/paths.ts'
import { excluded, kindOf, skipped } from './ingest.ts'

/** One thing the walk found. `path` is absolute; `device` is the device id it lies on. */
export type DiskEntry = {
  path: string
  device: number
  kind: 'file' | 'dir'
  dev: number
  ino: number
  /** Birth time, or mtime where none is kept (storage/paths.ts stampOf). */
  stamp: number
  size: number
  mtimeMs: number
  /** Hard links to the file, when the walk knows (1: no other name anywhere). */
  nlink?: number
}

/** A media asset as the scan reads it. */
export type MediaRow = {
  id: number
  path_file: string
  device: number
  is_archive: boolean
  is_production: boolean
  file_dev: number | null
  file_ino: number | null
  file_stamp: number | null
  file_size: number | null
  file_mtime: number | null
  file_hash: string | null
  /** The asset's kind: one path may be an asset of each kind (a .mov as video and as audio). */
  kind?: string
}

/** A project asset under the scope; `busy`: a copy or delete task of it is queued or running. */
export type ProjectRow = {
  id: number
  bundle_root: string
  device: number
  is_archive: boolean
  is_production: boolean
  busy: boolean
}

/** What was at a path when the watcher looked (file or folder), by identity. */
export type Sighting = { kind: 'file' | 'dir'; dev: number; ino: number; stamp: number }

export type Catalogue = { media: readonly MediaRow[]; projects: readonly ProjectRow[] }

export type ReconcileOptions = {
  /**
   * The absolute paths that were looked at (folders or single files; a device root for a whole
   * device). Only rows under them may go offline. Each existing scope path is itself an entry.
   */
  scope: readonly string[]
  /** Device id → its root path (absolute, final separator), for the name rules. */
  roots: ReadonlyMap<number, string>
  /** False when a device's root is missing (unmounted): nothing on it goes offline. */
  rootPresent: (device: number) => boolean
  /** The production a new file at `path` on `device` is imported into, or undefined (not a watch folder, or not its territory). */
  ingestInto: (path: string, device: number) => number | undefined
  /** Devices the watcher watches; a move between two device ids needs both. Default: rootPresent. */
  watched?: (device: number) => boolean
  /** Never input (our own output: proxy roots, the data folder), absolute paths. Default: nothing. */
  ownOutput?: (path: string) => boolean
  /**
   * `disk` comes from a walk that already left out what `excluded` and `ownOutput` name: its
   * entries are not checked again, one call per file.
   */
  diskFiltered?: boolean
  /** Recent sightings by path (no final separator): what the watcher saw at a name when its event came. */
  sightings?: { get(path: string): Sighting | undefined }
  /**
   * Entries the caller looked at outside its walk (the paths of assets found elsewhere, files seen
   * lately): evidence for decisions, never imported or remembered from here (their folders were
   * not read, so what else lies there is not known).
   */
  outside?: ReadonlySet<string>
  /**
   * Fingerprints of entries, by path, computed since the last call asked for them. A caller that
   * gives the fingerprint of a file asked for by content gives every asset of that content too,
   * with its path in `scope` (looked at): an asset not given, or whose path was not looked at, is
   * neither known in place nor known vanished, and so no candidate.
   */
  fingerprints?: ReadonlyMap<string, string>
}

/** A file not decided: the assets that tie for it (or the one asset several files tie for), and why, in words. */
export type Ambiguity = { path: string; assets: number[]; reason: string }

/** An asset's file is at `path` (moved, renamed, saved anew, relinked by content), with this identity. */
export type Relocation = {
  id: number
  path: string
  device: number
  dev: number
  ino: number
  stamp: number
  size: number
  mtimeMs: number
  /** How it was found: its identity, a sighting, its path, or its content. */
  by: 'identity' | 'sighting' | 'path' | 'folder' | 'content'
  /** The fingerprint when known for this very file (content relinks): no need to read it again. */
  hash?: string
}
export type IngestCandidate = {
  path: string
  device: number
  production: number
  kind: MediaKind
  dev: number
  ino: number
  /** As DiskEntry's: with dev and ino, which file this is (an inode freed and taken again is another file). */
  stamp: number
  size: number
  mtimeMs: number
}

export type Reconciliation = {
  /** Media asset ids to set is_production false. */
  offline: number[]
  /** Media asset ids to set is_production true (after the relocations). */
  online: number[]
  /** Assets whose path, device or identity on disk changed. */
  relocations: Relocation[]
  /** Assets present at their path whose fingerprint is missing or stale (size, mtime or identity changed). */
  fingerprint: { id: number; entry: DiskEntry }[]
  /** Entries whose fingerprint decides a relink: the caller reads them and calls again with `fingerprints`. */
  needFingerprints: DiskEntry[]
  /** Files not decided, by content or at a path several vanished assets name: nothing is guessed (nor imported). */
  ambiguous: Ambiguity[]
  /** New files in watch folders, before the settle gate. */
  ingest: IngestCandidate[]
  /** Files seen that no asset has and that were not relinked, ingest candidates included (the caller remembers those it does not import). */
  strangers: DiskEntry[]
  projectsOffline: number[]
  projectsOnline: number[]
}

// Paths as keys: without their final separator; the folder above a key, and its last name, by
// the platform's separators (storage/paths.ts).
const key = (path: string) => trimSep(path)
const parentKey = (k: string) => k.slice(0, Math.max(0, lastSepIndex(k)))
const baseName = (k: string) => lastName(k)
const inodeKey = (dev: number, ino: number) => `${dev}:${ino}`
/** A file's whole identity: a hard link shares it, a new file given a freed inode does not. */
const fileKey = (dev: number, ino: number, stamp: number | null) => `${dev}:${ino}:${stamp}`
const rowKey = (r: MediaRow) =>
  r.file_dev !== null && r.file_ino !== null ? fileKey(r.file_dev, r.file_ino, r.file_stamp) : undefined
const entryKey = (e: DiskEntry | Sighting) => fileKey(e.dev, e.ino, e.stamp)
/** "asset 3", "assets 3 and 7", "assets 3, 5 and 7". */
const assetsNamed = (ids: readonly number[]) =>
  ids.length === 1 ? `asset ${ids[0]}` : `assets ${ids.slice(0, -1).join(', ')} and ${ids[ids.length - 1]}`

export function reconcile(disk: readonly DiskEntry[], catalogue: Catalogue, opts: ReconcileOptions): Reconciliation {
  return drain(reconcileSteps(disk, catalogue, opts))
}

/** Runs a generator of reconcile's steps to its end without pausing. */
function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
  }
}

/**
 * reconcile() with turns of the event loop: `between()` is awaited every thousand or so entries or
 * rows (it gives the loop its turn when the caller's time slice is used up). A drop folder of
 * 20,000 new files is reconciled again at each rescan of the drop, 80 to 150 ms in one go.
 */
export async function reconcileSliced(
  disk: readonly DiskEntry[],
  catalogue: Catalogue,
  opts: ReconcileOptions,
  between: () => Promise<void>,
): Promise<Reconciliation> {
  const steps = reconcileSteps(disk, catalogue, opts)
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
    await between()
  }
}

/** How many entries or rows reconcile works through between two of its pauses. */
const STEP = 1024

/** reconcile() as a generator that pauses (yields) every STEP entries or rows of its loops. */
function* reconcileSteps(
  disk: readonly DiskEntry[],
  catalogue: Catalogue,
  opts: ReconcileOptions,
): Generator<void, Reconciliation> {
  let n = 0
  const out: Reconciliation = {
    offline: [],
    online: [],
    relocations: [],
    fingerprint: [],
    needFingerprints: [],
    ambiguous: [],
    ingest: [],
    strangers: [],
    projectsOffline: [],
    projectsOnline: [],
  }
  const presence = new Map<number, boolean>()
  const rootPresent = (device: number) => {
    let p = presence.get(device)
    if (p === undefined) presence.set(device, (p = opts.rootPresent(device)))
    return p
  }
  const watched = opts.watched ?? rootPresent
  const relative = (path: string, device: number): string | undefined => {
    const root = opts.roots.get(device)
    return root === undefined ? undefined : below(root, path)
  }
  const ignored = (path: string, device: number) =>
    excluded(relative(path, device) ?? path) || (opts.ownOutput?.(path) ?? false)

  const scope = new Set(opts.scope.map(key))
  const inScope = (path: string) => {
    for (let k = key(path); ; k = parentKey(k)) {
      if (scope.has(k)) return true
      if (k === '') return false
    }
  }

  // What the disk holds: files by path, folders known to exist (listed, or holding an entry;
  // worked out only when needed), files by inode.
  const files = new Map<string, DiskEntry>()
  const dirEntries: DiskEntry[] = []
  const seen: string[] = []
  for (const e of disk) {
    if (++n % STEP === 0) yield
    if (!opts.diskFiltered && ignored(e.path, e.device)) continue
    const k = key(e.path)
    seen.push(k)
    if (e.kind === 'dir') dirEntries.push(e)
    else files.set(k, e) // a path listed twice (overlapping scopes) is the same file
  }
  // The sets and maps below are made only when a decision needs them (most scans need few), by
  // generators that pause as the loops do: the loop that first needs one makes it with `yield*`
  // (a drop's 20,000 rows made into a set in one go held every request for 20 to 50 ms, at each
  // of its rescans). Made in the same place as when made at their first use: some depend on the
  // claims made so far. The getters make what is missing at once, so a decision never depends on
  // whether a loop made it first.
  let folderSet: Set<string> | undefined
  function* makeFolders() {
    if (folderSet) return
    const set = new Set<string>()
    for (const k of seen) {
      if (++n % STEP === 0) yield
      if (!files.has(k)) set.add(k)
      set.add(parentKey(k))
    }
    folderSet = set
  }
  const folders = () => folderSet ?? (drain(makeFolders()), folderSet!)
  let byInodeMap: Map<string, DiskEntry[]> | undefined
  function* makeByInode() {
    if (byInodeMap) return
    const map = new Map<string, DiskEntry[]>()
    for (const e of files.values()) {
      if (++n % STEP === 0) yield
      if (claimedBy.has(e)) continue // made after the own-path claims: only what is left
      const k = inodeKey(e.dev, e.ino)
      const list = map.get(k)
      if (list) list.push(e)
      else map.set(k, [e])
    }
    byInodeMap = map
  }
  const byInode = () => byInodeMap ?? (drain(makeByInode()), byInodeMap!)

  // Each row once, online first: they win an identity an offline row also claims.
  const rows: MediaRow[] = []
  const ids = new Set<number>()
  for (const online of [true, false])
    for (const r of catalogue.media) if (r.is_production === online && !ids.has(r.id)) ids.add(r.id), rows.push(r)
  const archiveOnly = (r: MediaRow) => r.is_archive && !r.is_production
  /** Rows the scan may change: not archive-only, not in an ignored place. */
  // A row whose file the walk found at its path lies in no ignored place (the walk skipped them):
  // the name rules are asked only of the others.
  const walkedFile = (path: string) => opts.diskFiltered === true && files.has(path) && !opts.outside?.has(path)
  const active = rows.filter((r) => !archiveOnly(r) && (walkedFile(r.path_file) || !ignored(r.path_file, r.device)))
  /**
   * Identities some asset holds (any row but archive-only): such a file is never new, nor another
   * asset's by path. Made only when a row or a file is left over after identity (a scan that finds
   * every file where its asset says makes no key per row).
   */
  let heldSet: Set<string> | undefined
  function* makeHeld() {
    if (heldSet) return
    const set = new Set<string>()
    for (const r of rows) {
      if (++n % STEP === 0) yield
      const rk = rowKey(r)
      if (rk && !archiveOnly(r)) set.add(rk)
    }
    heldSet = set
  }
  const held = {
    /** Whether an asset holds this file (or sighting); its key is made only when some asset holds any. */
    of(e: DiskEntry | Sighting) {
      if (!heldSet) drain(makeHeld())
      return heldSet!.size > 0 && heldSet!.has(entryKey(e))
    },
  }
  const sameFile = (e: DiskEntry, r: MediaRow) =>
    e.dev === r.file_dev && e.ino === r.file_ino && e.stamp === r.file_stamp

  // Which file each asset is (and how it was found, when not by identity: most are).
  const claim = new Map<number, DiskEntry>()
  const claimHow = new Map<number, Relocation['by']>()
  const claimedBy = new Map<DiskEntry, number>()
  const take = (r: MediaRow, entry: DiskEntry, by: Relocation['by']) => {
    claim.set(r.id, entry)
    if (by !== 'identity') claimHow.set(r.id, by)
    claimedBy.set(entry, r.id)
  }
  const movable = (r: MediaRow, e: DiskEntry) => e.device === r.device || (watched(r.device) && watched(e.device))

  // 1. Identity. The file at the asset's own path first (the common case, no map of inodes made;
  // an asset of each kind may name one path), then the files left, by inode.
  const elsewhere: MediaRow[] = []
  for (const r of active) {
    if (++n % STEP === 0) yield
    if (r.file_dev === null || r.file_ino === null) continue
    const here = files.get(key(r.path_file))
    if (here && sameFile(here, r)) take(r, here, 'identity')
    else elsewhere.push(r)
  }
  for (const r of elsewhere) {
    if (++n % STEP === 0) yield
    const here = files.get(key(r.path_file))
    if (!rootPresent(r.device) && !here) continue // an unmounted device says nothing of its files
    if (!byInodeMap) yield* makeByInode()
    const candidates = byInode()
      .get(inodeKey(r.file_dev!, r.file_ino!))
      ?.filter((e) => e.stamp === r.file_stamp && !claimedBy.has(e))
    if (!candidates?.length) continue
    const own = candidates.find((e) => key(e.path) === key(r.path_file))
    const pick = own ?? candidates.find((e) => movable(r, e))
    if (pick) take(r, pick, 'identity')
  }
  // 2. Sightings: saved over the asset's path under a new inode, then renamed.
  if (opts.sightings) {
    for (const r of active) {
      if (++n % STEP === 0) yield
      if (claim.has(r.id) || files.has(key(r.path_file))) continue
      const s = opts.sightings.get(key(r.path_file))
      if (!s || s.kind !== 'file' || entryKey(s) === rowKey(r)) continue
      if (!heldSet) yield* makeHeld()
      if (held.of(s)) continue
      if (!byInodeMap) yield* makeByInode()
      const pick = byInode()
        .get(inodeKey(s.dev, s.ino))
        ?.find((e) => e.stamp === s.stamp && !claimedBy.has(e) && movable(r, e))
      if (pick) take(r, pick, 'sighting')
    }
  }
  // 3. The path (a file no asset holds), directly or through a renamed folder.
  const free = (e: DiskEntry | undefined): e is DiskEntry => e !== undefined && !claimedBy.has(e) && !held.of(e)
  // Several assets may name one path (one in production at most, and those whose file vanished
  // from there): the one in production takes it; among offline ones only the content decides.
  const byPathLeft = new Map<string, MediaRow[]>()
  for (const r of active) {
    if (++n % STEP === 0) yield
    if (claim.has(r.id)) continue
    const e = files.get(key(r.path_file))
    if (e && !claimedBy.has(e) && !heldSet) yield* makeHeld()
    if (!free(e)) continue
    const k = `${r.kind ?? ''}\u0000${key(r.path_file)}`
    ;(byPathLeft.get(k) ?? byPathLeft.set(k, []).get(k)!).push(r)
  }
  for (const [pk, rs] of byPathLeft) {
    const k = pk.slice(pk.indexOf('\u0000') + 1)
    const e = files.get(k)!
    const online = rs.filter((r) => r.is_production)
    if (rs.length === 1 || online.length === 1) {
      take(online[0] ?? rs[0]!, e, 'path')
      continue
    }
    const hash = opts.fingerprints?.get(k)
    if (hash === undefined) {
      out.needFingerprints.push(e)
      continue
    }
    const same = rs.filter((r) => r.file_hash === hash && r.file_size === e.size)
    if (same.length === 1) take(same[0]!, e, 'content')
    else {
      const tie = (same.length ? same : rs).map((r) => r.id).sort((x, y) => x - y)
      out.ambiguous.push({
        path: e.path,
        assets: tie,
        reason: `${assetsNamed(tie)} named this path and their files vanished, and ${same.length ? 'each has' : 'none has'} this file's content; nothing was guessed`,
      })
    }
  }
  if (opts.sightings && dirEntries.length) {
    const dirByInode = new Map<string, DiskEntry>()
    for (const d of dirEntries) dirByInode.set(entryKey(d), d)
    for (const r of active) {
      if (++n % STEP === 0) yield
      if (claim.has(r.id) || files.has(key(r.path_file))) continue
      const root = opts.roots.get(r.device)
      for (
        let folder = parentKey(key(r.path_file));
        folder.length > 1 && (root === undefined || folder.length >= key(root).length);
        folder = parentKey(folder)
      ) {
        const s = opts.sightings.get(folder)
        if (s?.kind !== 'dir') continue
        const now = dirByInode.get(entryKey(s))
        if (!now || key(now.path) === folder) break // the folder is where it was: no rename to follow
        const e = files.get(key(now.path) + key(r.path_file).slice(folder.length))
        if (e && !heldSet) yield* makeHeld()
        if (free(e) && movable(r, e)) take(r, e, 'folder')
        break
      }
    }
  }

  // Which unclaimed assets vanished (their file is not where they say, and the path was looked at).
  const vanishing: MediaRow[] = []
  for (const r of active) {
    if (++n % STEP === 0) yield
    if (claim.has(r.id)) continue
    const e = files.get(key(r.path_file))
    const lookedAt = r.is_production && inScope(r.path_file) && rootPresent(r.device)
    if (lookedAt && e && !claimedBy.has(e) && !heldSet) yield* makeHeld()
    if (!r.is_production || (lookedAt && (!e || claimedBy.has(e) || held.of(e)))) vanishing.push(r)
  }

  // Paths some row names and keeps (any state; not a path its asset leaves in this pass): a file
  // there is catalogued, never imported. Archive-only and ignored rows are never claimed: theirs count.
  // (Made when the first unclaimed file is met: a scan that finds every file claimed makes none.)
  let namedSet: Set<string> | undefined
  function* makeNamed() {
    if (namedSet) return
    const set = new Set<string>()
    for (const r of rows) {
      if (++n % STEP === 0) yield
      const c = claim.get(r.id)
      if (!c || key(c.path) === key(r.path_file)) set.add(key(r.path_file))
    }
    namedSet = set
  }
  const named = () => namedSet ?? (drain(makeNamed()), namedSet!)
  // New files: unclaimed, at no catalogued path, holding no asset's identity.
  const fresh: DiskEntry[] = []
  for (const e of files.values()) {
    if (++n % STEP === 0) yield
    if (claimedBy.has(e)) continue
    if (!namedSet) yield* makeNamed()
    if (named().has(key(e.path))) continue
    if (!heldSet) yield* makeHeld()
    if (!held.of(e)) fresh.push(e)
  }

  // 4. Content: new files against vanished assets of the same size.
  const relinked = new Set<DiskEntry>()
  const undecided = new Set<DiskEntry>()
  const withHash = vanishing.filter((r) => r.file_size !== null && r.file_hash !== null)
  if (withHash.length && fresh.length) {
    const bySize = new Map<number, MediaRow[]>()
    for (const r of withHash) {
      const list = bySize.get(r.file_size!)
      if (list) list.push(r)
      else bySize.set(r.file_size!, [r])
    }
    // Each entry's matching rows and each row's matching entries, then only mutual, unique pairs.
    const rowsOf = new Map<DiskEntry, MediaRow[]>()
    const entriesOf = new Map<number, DiskEntry[]>()
    for (const e of fresh) {
      const sameSize = bySize.get(e.size)
      if (!sameSize) continue
      // '' from the caller: the file could not be read as it was seen (changed, gone): no match.
      const hash = opts.fingerprints?.get(key(e.path))
      if (hash === undefined) {
        out.needFingerprints.push(e)
        undecided.add(e)
        continue
      }
      const matches = sameSize.filter((r) => r.file_hash === hash && movable(r, e))
      if (!matches.length) continue
      rowsOf.set(e, matches)
      for (const r of matches) (entriesOf.get(r.id) ?? entriesOf.set(r.id, []).get(r.id)!).push(e)
    }
    // Only assets whose file vanished are candidates (an asset whose file is in place did not move);
    // of several, the one with the file's name. An asset with several matching files takes the one
    // with its own name. Anything else is a tie: nothing is guessed, and the reason names it.
    const byName = <T>(list: T[], name: string, nameOf: (t: T) => string) =>
      list.length === 1 ? list : list.filter((t) => baseName(nameOf(t)) === name)
    for (const [e, matches] of rowsOf) {
      const name = baseName(key(e.path))
      const rs = byName(matches, name, (r) => key(r.path_file))
      const r = rs.length === 1 ? rs[0]! : undefined
      const es = r ? byName(entriesOf.get(r.id)!, baseName(key(r.path_file)), (x) => key(x.path)) : []
      if (r && es.length === 1 && es[0] === e && !claim.has(r.id)) {
        take(r, e, 'content')
        relinked.add(e)
        continue
      }
      undecided.add(e)
      if (!r) {
        const tie = (rs.length ? rs : matches).map((m) => m.id).sort((x, y) => x - y)
        out.ambiguous.push({
          path: e.path,
          assets: tie,
          reason: `${assetsNamed(tie)}, whose files vanished, have this content, and ${rs.length ? 'each has' : 'none has'} this file name; nothing was guessed`,
        })
      } else {
        const others = entriesOf.get(r.id)!.length - 1
        out.ambiguous.push({
          path: e.path,
          assets: [r.id],
          reason:
            es.length === 1
              ? `${assetsNamed([r.id])}, whose file vanished, has this content; so has another new file, which has its file name; nothing was guessed`
              : `${assetsNamed([r.id])}, whose file vanished, has this content; so ${others === 1 ? 'has another new file' : `have ${others} other new files`}, and ${es.length ? 'more than one has' : 'none has'} its file name; nothing was guessed`,
        })
      }
    }
  }

  // The decisions, row by row.
  for (const r of active) {
    if (++n % STEP === 0) yield
    const e = claim.get(r.id)
    if (e) {
      const by = claimHow.get(r.id) ?? 'identity'
      // Another inode (saved anew) or none recorded yet; a share mounted again under another device
      // number keeps inode, birth time, size and mtime: the same file, its fingerprint still good.
      const remounted =
        e.dev !== r.file_dev &&
        e.ino === r.file_ino &&
        e.stamp === r.file_stamp &&
        e.size === r.file_size &&
        e.mtimeMs === r.file_mtime
      const anew = !sameFile(e, r) && !remounted
      if (anew || key(e.path) !== key(r.path_file) || e.device !== r.device)
        out.relocations.push({
          id: r.id,
          path: e.path,
          device: e.device,
          dev: e.dev,
          ino: e.ino,
          stamp: e.stamp,
          size: e.size,
          mtimeMs: e.mtimeMs,
          by,
          ...(by === 'content'
            ? { hash: opts.fingerprints!.get(key(e.path))! }
            : remounted && r.file_hash !== null
              ? { hash: r.file_hash }
              : {}),
        })
      if (!r.is_production) out.online.push(r.id)
      if (by !== 'content' && (r.file_hash === null || r.file_size !== e.size || r.file_mtime !== e.mtimeMs || anew))
        out.fingerprint.push({ id: r.id, entry: e })
      continue
    }
    if (!r.is_production || r.is_archive) continue
    if (inScope(r.path_file) && rootPresent(r.device)) {
      const e = files.get(key(r.path_file))
      // Gone, or its path now holds another asset's file.
      if (!e || claimedBy.has(e) || held.of(e)) out.offline.push(r.id)
    }
  }

  for (const e of fresh) {
    if (++n % STEP === 0) yield
    if (relinked.has(e) || opts.outside?.has(e.path)) continue
    out.strangers.push(e)
    if (undecided.has(e)) continue
    // The production first: on a device that is no watch folder it answers at once.
    const production = opts.ingestInto(e.path, e.device)
    if (production === undefined) continue
    const rel = relative(e.path, e.device)
    if (rel === undefined || skipped(rel) !== undefined) continue
    const kind = kindOf(rel)
    if (kind === undefined) continue
    out.ingest.push({
      path: e.path,
      device: e.device,
      production,
      kind,
      dev: e.dev,
      ino: e.ino,
      stamp: e.stamp,
      size: e.size,
      mtimeMs: e.mtimeMs,
    })
  }

  const projectsSeen = new Set<number>()
  for (const p of catalogue.projects) {
    if (projectsSeen.has(p.id)) continue
    projectsSeen.add(p.id)
    // Busy: a copy or delete owns the folder; archived: as for media (see above).
    if (p.busy || p.is_archive || ignored(p.bundle_root, p.device)) continue
    if (!folderSet) yield* makeFolders()
    if (folders().has(key(p.bundle_root))) {
      if (!p.is_production) out.projectsOnline.push(p.id)
    } else if (p.is_production && inScope(p.bundle_root) && rootPresent(p.device)) {
      out.projectsOffline.push(p.id)
    }
  }
  return out
}
