// The reconcile road's pure middle (service.md 10, design note "core-import-watcher" 1): what the
// disk says of a scanned scope, diffed against what the catalogue says, gives the changes to
// apply. No database, no disk: the scan task walks, looks rows up, calls this, then applies the
// result through the media and project services. O(n) in entries and rows, with Maps.
//
//   scan task: walk(scope) → DiskEntry[]  +  rows under the scope and rows matching an entry's
//              (dev, ino)  →  reconcile  →  setOnline / relocate / record identity / ingest
//
// The rules, row by row (a row is looked at once, however often it is given):
// - Archive-only (is_archive true, is_production false: api.md 4.10 state 3) is never touched:
//   not brought online, not taken offline, not moved, its identity not used. Its path still
//   counts as catalogued, so the file there is never imported.
// - A row whose path is on disk (a file; a folder for a project) and is offline comes online.
//   Any entry is evidence, inside the scope or not.
// - An online row whose path is missing: moved when an entry no row names has its identity
//   (dev, ino), else offline, but offline only when its path lies in the scope (the rest was not
//   looked at) and its device root is present (an unmounted device says nothing).
// - An entry no row names, not a move's target, not the identity of a row that stays online,
//   on an upload device and not skipped (ingest.ts): an ingest candidate. The caller applies
//   the settle gate, then the import road (register) checks path and identity once more.
// - Anything under an excluded name (clutter, `.reelhouse-*`) is ignored on both sides.
//
// Choices where the contract is silent:
// - Archived and online (is_archive and is_production, state 2) is not taken offline either:
//   offline it would read as archive-only, which the watcher must never bring back, and state 3
//   requires members state 2 need not have. It does move with its file, and its identity is kept.
// - Offline rows are matched by identity too (online ones first): with the stamp, (dev, ino,
//   stamp) is the file itself, so a clip taken offline because its old name was scanned first,
//   or moved away and back, comes back online at its new path instead of being imported anew.
// - A move needs the same (dev, ino) AND the same stamp (birth time, or mtime where the file
//   system keeps none): a file deleted and a new one made within the move window often share
//   the inode (ext4 hands a freed inode to the next new file), and only the stamp tells them
//   apart. A row with no stamp recorded (made before it was) is not matched: the scan records
//   it once it sees the file at its path.
// - A move needs no time window here: the scan sees both sides at once, or (a rename whose new
//   name is scanned before its old one, the aggregator's order) matches an online row outside
//   the scope. If the caller also gives the entry for that row's old path (it lstat'ed it) and
//   the file is still there, the row is present and nothing moves: a hard link is not a move.
// - A path that now holds a different inode is the same asset (the path is the catalogue's
//   identity: editors save by writing a new file and renaming it over the old one); it is
//   listed in `identity` so the caller records the new (dev, ino). Rows with no identity yet
//   are listed there too when present, which fills the columns for older rows.
// - A move between two device ids (one file system under two devices) needs both watched
//   (`opts.watched`, default: the device root is present).
// - When two rows claim one identity, the first given wins; when two new entries share one
//   (hard links), the first in disk order is the target. Outputs follow input order.
// - Paths are compared without their final slash, so folders may be spelled either way.
import type { MediaKind } from '../db/schema.ts'
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
}

/** A media asset as the scan reads it: those under the scope, plus any whose identity matches an entry. */
export type MediaRow = {
  id: number
  path_file: string
  device: number
  is_archive: boolean
  is_production: boolean
  file_dev: number | null
  file_ino: number | null
  file_stamp: number | null
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

export type Catalogue = { media: readonly MediaRow[]; projects: readonly ProjectRow[] }

export type ReconcileOptions = {
  /**
   * The absolute paths that were walked (folders or single files; a device root for a whole
   * device). Only rows under them may go offline. Each existing scope path is itself an entry.
   */
  scope: readonly string[]
  /** Device id → its root path (absolute, final slash), for the name rules. */
  roots: ReadonlyMap<number, string>
  /** False when a device's root is missing (unmounted): nothing on it goes offline. */
  rootPresent: (device: number) => boolean
  /** Watch folders: upload device id → the production files found there are imported into. */
  uploadDevices: ReadonlyMap<number, number>
  /** Devices the watcher watches; a move between two device ids needs both. Default: rootPresent. */
  watched?: (device: number) => boolean
  /**
   * `disk` comes from a walk that already left out what `excluded` names (the scan's listTree
   * skips it and never descends there): its entries are not checked again, one call per file.
   */
  diskFiltered?: boolean
}

export type Move = { id: number; path: string; device: number; dev: number; ino: number; stamp: number }
export type Identity = { id: number; dev: number; ino: number; stamp: number }
export type IngestCandidate = {
  path: string
  device: number
  production: number
  kind: MediaKind
  dev: number
  ino: number
  size: number
  mtimeMs: number
}

export type Reconciliation = {
  /** Media asset ids to set is_production false. */
  offline: number[]
  /** Media asset ids to set is_production true. */
  online: number[]
  /** Media assets whose file is now at `path` on `device` (same dev and ino). */
  moves: Move[]
  /** Media assets present at their path whose recorded (file_dev, file_ino) differ or are missing. */
  identity: Identity[]
  /** New files in watch folders, before the settle gate. */
  ingest: IngestCandidate[]
  projectsOffline: number[]
  projectsOnline: number[]
}

const key = (path: string) => (path.endsWith('/') ? path.slice(0, -1) : path)
const parentKey = (k: string) => k.slice(0, Math.max(0, k.lastIndexOf('/')))
const identityKey = (dev: number, ino: number) => `${dev}:${ino}`
/** A file's whole identity: a hard link shares it, a new file given a freed inode does not. */
const fileKey = (dev: number, ino: number, stamp: number | null) => `${dev}:${ino}:${stamp}`

export function reconcile(disk: readonly DiskEntry[], catalogue: Catalogue, opts: ReconcileOptions): Reconciliation {
  const out: Reconciliation = { offline: [], online: [], moves: [], identity: [], ingest: [], projectsOffline: [], projectsOnline: [] }
  const watched = opts.watched ?? opts.rootPresent

  const relative = (path: string, device: number): string | undefined => {
    const root = opts.roots.get(device)
    return root !== undefined && path.startsWith(root) ? path.slice(root.length) : undefined
  }
  const ignored = (path: string, device: number) => excluded(relative(path, device) ?? path)

  const scope = new Set(opts.scope.map(key))
  const inScope = (path: string) => {
    for (let k = key(path); ; k = parentKey(k)) {
      if (scope.has(k)) return true
      if (k === '') return false
    }
  }

  // What the disk holds: files by path, and folders known to exist (listed, or holding an entry;
  // worked out only when there are projects to look for).
  const files = new Map<string, DiskEntry>()
  const seen: string[] = []
  for (const e of disk) {
    if (!opts.diskFiltered && ignored(e.path, e.device)) continue
    const k = key(e.path)
    seen.push(k)
    if (e.kind !== 'dir') files.set(k, e) // a path listed twice (overlapping scopes) is the same file
  }
  let folderSet: Set<string> | undefined
  const folders = () => {
    if (folderSet) return folderSet
    folderSet = new Set<string>()
    for (const k of seen) {
      if (!files.has(k)) folderSet.add(k)
      folderSet.add(parentKey(k))
    }
    return folderSet
  }

  // Online rows first: they win an identity an offline row also claims.
  const rows = new Map<number, MediaRow>()
  for (const online of [true, false]) for (const r of catalogue.media) if (r.is_production === online && !rows.has(r.id)) rows.set(r.id, r)
  // The files some row names at its path (whatever that row's state): never new, never a move's target.
  const named = new Set<DiskEntry>()
  for (const r of rows.values()) {
    const found = files.get(key(r.path_file))
    if (found) named.add(found)
  }

  // Files no row names, by identity: the possible targets of a move. Made when a row is first
  // missing at its path: a scan that finds every row in place makes no key per file.
  let freshMap: Map<string, DiskEntry> | undefined
  const fresh = () => {
    if (freshMap) return freshMap
    freshMap = new Map()
    for (const e of files.values()) {
      if (named.has(e)) continue
      const id = identityKey(e.dev, e.ino)
      if (!freshMap.has(id)) freshMap.set(id, e)
    }
    return freshMap
  }

  const claimed = new Set<DiskEntry>()
  // Identities of rows that are online once this is applied: a new entry with one of them is
  // that asset's file under a second name (a hard link), not a new file.
  // (Listed by reference as found, turned into keys only if a new file needs them: most scans find none.)
  const knownRows: MediaRow[] = []
  const knownFound: DiskEntry[] = []
  const keep = (r: MediaRow) => {
    if (r.file_dev !== null && r.file_ino !== null) knownRows.push(r)
  }
  let knownSet: Set<string> | undefined
  const known = (e: DiskEntry) => {
    if (!knownSet) {
      knownSet = new Set()
      for (const r of knownRows) knownSet.add(fileKey(r.file_dev!, r.file_ino!, r.file_stamp))
      for (const f of knownFound) knownSet.add(fileKey(f.dev, f.ino, f.stamp))
    }
    return knownSet.has(fileKey(e.dev, e.ino, e.stamp))
  }

  for (const r of rows.values()) {
    if (!r.is_production && r.is_archive) continue
    if (ignored(r.path_file, r.device)) {
      if (r.is_production) keep(r)
      continue
    }
    const found = files.get(key(r.path_file))
    if (found) {
      if (!r.is_production) out.online.push(r.id)
      if (found.dev !== r.file_dev || found.ino !== r.file_ino || found.stamp !== r.file_stamp)
        out.identity.push({ id: r.id, dev: found.dev, ino: found.ino, stamp: found.stamp })
      knownFound.push(found)
      continue
    }
    if (!opts.rootPresent(r.device)) {
      if (r.is_production) keep(r)
      continue
    }
    const target = r.file_dev !== null && r.file_ino !== null ? fresh().get(identityKey(r.file_dev, r.file_ino)) : undefined
    if (target && target.stamp === r.file_stamp && !claimed.has(target) && (target.device === r.device || (watched(r.device) && watched(target.device)))) {
      claimed.add(target)
      out.moves.push({ id: r.id, path: target.path, device: target.device, dev: target.dev, ino: target.ino, stamp: target.stamp })
      if (!r.is_production) out.online.push(r.id)
      keep(r)
      continue
    }
    if (!r.is_production) continue
    if (inScope(r.path_file) && !r.is_archive) out.offline.push(r.id)
    else keep(r)
  }

  for (const e of files.values()) {
    // Outside a watch folder nothing is imported: the other checks (and their keys) are not needed.
    const production = opts.uploadDevices.get(e.device)
    if (production === undefined || named.has(e) || claimed.has(e) || known(e)) continue
    const rel = relative(e.path, e.device)
    if (rel === undefined || skipped(rel) !== undefined) continue
    const kind = kindOf(rel)
    if (kind === undefined) continue
    out.ingest.push({ path: e.path, device: e.device, production, kind, dev: e.dev, ino: e.ino, size: e.size, mtimeMs: e.mtimeMs })
  }

  const projectsSeen = new Set<number>()
  for (const p of catalogue.projects) {
    if (projectsSeen.has(p.id)) continue
    projectsSeen.add(p.id)
    // Busy: a copy or delete owns the folder; archived: as for media (see above).
    if (p.busy || p.is_archive || ignored(p.bundle_root, p.device)) continue
    if (folders().has(key(p.bundle_root))) {
      if (!p.is_production) out.projectsOnline.push(p.id)
    } else if (p.is_production && inScope(p.bundle_root) && opts.rootPresent(p.device)) {
      out.projectsOffline.push(p.id)
    }
  }
  return out
}
