// The reconcile road (docs/watcher.md): every start-up scan, timed rescan and watcher batch is one
// `scan` task {device, paths}. Walk what is on disk there, read what the catalogue says of it,
// decide with a pure function (reconcile.ts: identity first, then sightings, the path, content),
// check each decision against the disk once more, apply them through the media service in one
// transaction, then read the fingerprints that are missing and import settled new files of a watch
// folder through the same register() as POST /api/asset/import/. Events are hints; this is the
// truth. The watcher never deletes a catalogue record: missing files only go offline.
import { existsSync, lstatSync } from 'node:fs'
import { lstat, readdir } from 'node:fs/promises'
import { and, eq, inArray } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { committed } from '../db/aftercommit.ts'
import { ownOutputFolders } from '../modules/productions/lookup.ts'
import { devices, productions, projectAssets } from '../db/schema.ts'
import { system } from '../modules/history/service.ts'
import { AppError } from '../http/errors.ts'
import { AlreadyCatalogued, type Imports, assetsBeingMoved } from '../modules/assetimport/service.ts'
import type { ImportLogs } from '../modules/importlogs/service.ts'
import { IMPORT_STATUS } from '../modules/importlogs/service.ts'
import type { MediaAssets, ScanRow } from '../modules/mediaassets/service.ts'
import type { ProjectAssets } from '../modules/projectassets/service.ts'
import { SYSTEM } from '../modules/users/service.ts'
import { fingerprintAll } from '../storage/fingerprint.ts'
import { CancelledError, type Entry, slicer, walkTree } from '../storage/fs.ts'
import type { StatFields } from '../storage/dirfd.ts'
import {
  SEP,
  asFolder,
  baseName,
  below,
  isInside,
  lastName,
  lastSepIndex,
  parentFolder,
  platformRel,
  restOf,
  samePath,
  stampOf,
  trimSep,
} from '../storage/paths.ts'
import { openForWriting } from '../storage/writers.ts'
import { openCopyAndDeleteTargets } from '../tasks/queries.ts'
import type { Handler } from '../tasks/runner.ts'
import type { Log } from '../util/log.ts'
import { isoTimestamp } from '../util/time.ts'
import { type createSettle, excluded, kindOf } from './ingest.ts'
import { type DiskEntry, type Reconciliation, reconcileSliced } from './reconcile.ts'
import type { Recent, Vanished } from './recent.ts'

export type ScanDeps = {
  media: MediaAssets
  imports: Imports
  /** ImportLogs of files in a watch folder that cannot be imported at all (a name not UTF-8). */
  logs?: ImportLogs
  settle: ReturnType<typeof createSettle>
  /** What the watcher saw recently (sightings, strangers); shared by every scan. */
  recent: Recent
  /** Asks for another look at `paths` after `ms` (a file still settling, a decision the disk no longer bears out). */
  later(device: number, paths: string[], ms: number): void
  /**
   * False until every device's start scan has run: a new file in a watch folder waits until then,
   * since the asset it may be (moved while the service was stopped) is found only by those scans.
   */
  importsOpen?(): boolean
  /** A scan of `device` ended, whatever its outcome (`full`: of the whole device). */
  scanned?(device: number, full: boolean): void
  settleMs: number
  log: Log
  /** The owner of project assets, which writes a project going offline or online (with its history). */
  projects?: Pick<ProjectAssets, 'setOnline'>
}

/**
 * Decisions are made again at most this often in one scan (each round reads fingerprints, strangers,
 * or the assets of a content): going offline, a stranger found, its fingerprint, its content's assets.
 */
const ROUNDS = 4

/**
 * The production a new file is imported into (docs/watcher.md, Laying out drop folders):
 * - a file in a production's drop folder (`upload_root`, the innermost) goes to that production,
 *   unless it lies in another production's storage root too (then that production's rule below);
 * - a file inside a production's storage root (the innermost) goes to that production when its
 *   watch folder is on this device (its upload_device, whole or with a drop folder on it);
 * - a file in no production's folder goes to the first production (lowest id) whose watch folder
 *   is this whole device (no drop folder); on a device that only holds drop folders it is left alone.
 * A file inside another production's storage root is never imported into this one.
 */
export function ingestOwner(
  list: readonly { id: number; storage_root: string; upload_device: number; upload_root: string | null }[],
) {
  const byDepth = [...list].sort((a, b) => b.storage_root.length - a.storage_root.length || a.id - b.id)
  const drops = list
    .filter((p) => p.upload_root !== null)
    .sort((a, b) => b.upload_root!.length - a.upload_root!.length || a.id - b.id)
  const byId = [...list].sort((a, b) => a.id - b.id)
  const watchFolders = new Set(list.map((p) => p.upload_device))
  return (path: string, device: number): number | undefined => {
    const territory = byDepth.find((p) => isInside(p.storage_root, path))
    const drop = drops.find((p) => isInside(p.upload_root!, path))
    if (drop && (!territory || territory.id === drop.id)) return drop.id
    if (!watchFolders.has(device)) return undefined // no production's watch folder: nothing imported
    if (territory) return territory.upload_device === device ? territory.id : undefined
    return byId.find((p) => p.upload_device === device && p.upload_root === null)?.id
  }
}

const entryOf = (path: string, device: number, s: import('node:fs').Stats): DiskEntry => ({
  path,
  device,
  kind: s.isDirectory() ? 'dir' : 'file',
  dev: s.dev,
  ino: s.ino,
  stamp: stampOf(s),
  size: s.size,
  mtimeMs: s.mtimeMs,
  nlink: s.nlink,
})

/** The file is the one the row records (device, inode and birth time). */
const sameIdentity = (r: ScanRow, e: DiskEntry) =>
  r.file_dev === e.dev && r.file_ino === e.ino && r.file_stamp === e.stamp

/** Whether `path` or a folder above it is one of `keys` (paths without a final separator): a walk up its folders. */
function underAny(keys: ReadonlySet<string>, path: string): boolean {
  for (let k = trimSep(path); k !== ''; k = k.slice(0, Math.max(0, lastSepIndex(k)))) if (keys.has(k)) return true
  return false
}

/** What is at `path` now (no link followed), or undefined. */
function look(path: string): import('node:fs').Stats | undefined {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

export function scanHandler(db: Db, deps: ScanDeps): Handler<'scan'> {
  const { media, recent } = deps
  /** Names not UTF-8 already given a failed ImportLog (by folder and name as shown), so each gets one, not one per scan. */
  const undecodableLogged = new Set<string>()
  return async (run) => {
    /** This scan in the scans under way (recent's newcomers and vanished assets). */
    const self = {}
    try {
      await scan(run, self)
    } finally {
      recent.ended(self)
      deps.scanned?.(run.task.params.device, run.task.params.paths === null)
    }
  }
  async function scan({ task, signal, progress, report }: Parameters<Handler<'scan'>>[0], self: object) {
    const device = db.select().from(devices).where(eq(devices.id, task.params.device)).get()
    if (!device) return // the device was removed
    // An unmounted device marks nothing offline: its files are not known to be gone.
    if (!existsSync(device.path))
      return report({ seen: 0, offline: 0, online: 0, moved: 0, imported: 0, waiting: 0, unavailable: 1 })

    // Devices inside this one's folder, the innermost first: a file there lies on that device, as
    // the catalogue says (deviceFor), whichever device's scan walks it. Were it said to lie on the
    // device scanned, each scan of the outer device would move the inner one's assets onto it and
    // the inner one's scan back.
    const nested = db
      .select({ id: devices.id, path: devices.path })
      .from(devices)
      .all()
      .filter((d) => isInside(device.path, d.path))
      .sort((a, b) => b.path.length - a.path.length)
    const deviceOf = nested.length
      ? (path: string) => nested.find((d) => below(d.path, path) !== undefined)?.id ?? device.id
      : () => device.id
    const own = ownOutputFolders(db)
    const isOwn = (path: string) =>
      own.some((dir) => samePath(dir, path) || samePath(dir, path + SEP) || isInside(dir, path))
    const scopes = (task.params.paths ?? [device.path]).filter(
      (p) => below(device.path, p) !== undefined || samePath(p + SEP, device.path),
    )
    const disk: DiskEntry[] = []
    const walked = new Set<string>()
    /** Scopes that are gone: forgotten as folders once this scan has used what was seen of them. */
    const missing: string[] = []
    /** Folders the walk could not list or look into (another user's, `lost+found`): what is inside keeps its state. */
    const unread: { path: string; reason: string }[] = []
    const unreadKeys = new Set<string>()
    const underUnread = (path: string) => unreadKeys.size > 0 && underAny(unreadKeys, path)
    /** Names that are not valid UTF-8, by folder (absolute, final separator): no path of ours can name them. */
    const undecodable = new Map<string, string[]>()
    const walk = async (scope: string) => {
      const rel = restOf(device.path, scope)
      // Inside an excluded folder or our own output nothing is judged (the rows there keep their state).
      if ((rel && excluded(rel)) || isOwn(scope)) return
      walked.add(scope)
      const at = asFolder(scope)
      // Our own folders that lie inside this scope, relative to it (in the platform's spelling,
      // as the walk's names are compared below): the walk never enters them.
      const ownInside = new Set(own.filter((d) => isInside(at, d)).map((d) => trimSep(restOf(at, d))))
      // Each record is made as the walk lstats the entry (no Entry first); folders end in a
      // separator. The walk joins names with '/': the paths recorded are in the platform's spelling.
      const make = (rel: string, st: StatFields, kind: Entry['kind']): DiskEntry | undefined => {
        if (kind !== 'file' && kind !== 'dir') return undefined
        const path = rel ? at + platformRel(rel) : kind === 'dir' ? at : scope
        const full = kind === 'dir' && rel ? path + SEP : path
        return {
          path: full,
          device: deviceOf(full),
          kind,
          dev: st.dev,
          ino: st.ino,
          stamp: stampOf(st),
          size: st.size,
          mtimeMs: st.mtimeMs,
          nlink: st.nlink,
        }
      }
      try {
        // Both exclusion rules are per name, and the walk never enters an excluded folder: each
        // entry's own name is all that is left to judge (one short test per file, not the path).
        const unreadable = (rel: string, code: string) => {
          const path = rel ? at + platformRel(rel) + SEP : at
          if (unreadKeys.has(path.slice(0, -1))) return
          unreadKeys.add(path.slice(0, -1))
          unread.push({ path, reason: code === 'EACCES' ? 'permission denied (EACCES)' : `not permitted (${code})` })
          deps.log.warn('a folder cannot be read; the scan left it out, and what is inside keeps its state', {
            path,
            code,
          })
        }
        const notUtf8 = (dir: string, shown: string) => {
          const folder = dir ? at + platformRel(dir) + SEP : at
          const names = undecodable.get(folder)
          if (names) names.push(shown)
          else undecodable.set(folder, [shown])
        }
        for (const e of await walkTree(
          scope,
          signal,
          {
            skip: (r) => excluded(lastName(r)) || (ownInside.size > 0 && ownInside.has(platformRel(r))),
            live: true,
            unreadable,
            undecodable: notUtf8,
          },
          make,
        ))
          disk.push(e)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          // An event's path with U+FFFD names nothing when the bytes of the name were not UTF-8:
          // its folder is looked at instead, where the name is found and said.
          const parent = parentFolder(scope)
          if (baseName(scope).includes('\uFFFD') && below(device.path, parent) !== undefined && !walked.has(parent)) {
            scopes.push(parent)
            return walk(parent)
          }
          return void missing.push(scope) // gone: reconcile sees it missing
        }
        throw error
      }
      progress({ files_total: filesFound() })
    }
    // Progress: files_total is the regular files the walk found (known once it has walked),
    // files_done those judged so far, never more than files_total.
    let found = 0
    let counted = 0
    const filesFound = () => {
      for (; counted < disk.length; counted++) if (disk[counted]!.kind === 'file') found++
      return found
    }
    /**
     * Turns of the event loop between the steps of a scan and, later, between files (a drop of
     * 20,000 files): each step of a big scan takes tens of milliseconds, not all of them in one go.
     */
    const slice = slicer(signal)
    const breathe = async () => {
      if (slice.due()) await slice.tick()
    }
    for (const scope of scopes) await walk(scope)

    // A scope that vanished and was seen before as a folder may have been renamed beside itself
    // between the watcher's hint that named it and this scan (a save inside x, then mv x y): its
    // parent's folders are looked at (one listing, an lstat per folder), and the one with its
    // identity is walked too, so that what was inside is followed, not taken offline. The other
    // way round (a folder of this scan seen before under another name) is just below.
    const seenBefore = recent.sightings(Date.now())
    for (const gone of [...missing]) {
      const bare = trimSep(gone)
      const seen = seenBefore.get(bare)
      const parent = parentFolder(bare)
      if (seen?.kind !== 'dir' || !(parent === device.path || isInside(device.path, parent))) continue
      const names = await readdir(parent, { withFileTypes: true }).catch(() => [])
      for (const d of names) {
        if (!d.isDirectory() || excluded(d.name)) continue
        const st = await lstat(parent + d.name).catch(() => undefined)
        if (!st?.isDirectory() || st.dev !== seen.dev || st.ino !== seen.ino || stampOf(st) !== seen.stamp) continue
        const now = parent + d.name + SEP
        if (!walked.has(now)) {
          scopes.push(now)
          await walk(now)
        }
        break
      }
    }

    // A folder of this scan that was seen before under another name was renamed: its old name is
    // looked at too, so that what was inside is followed (files saved anew inside it as well).
    const dirs = disk.filter((e) => e.kind === 'dir')
    for (const former of recent.formerFolders(dirs))
      if (isInside(device.path, former) && ![...walked].some((s) => former === s || isInside(s, former))) {
        scopes.push(former)
        await walk(former)
      }

    // The catalogue in the scopes; a row may come twice (two scopes, found by identity or size too).
    // A list, the row at each path (an array only where several name one path: a vanished asset's
    // old path), and by id only once asked (a full scan reads 100,000 rows and decides on few).
    const rowList: ScanRow[] = []
    /** Index in rowList of the row at each path (numbers, not objects: 100,000 of them). */
    const atPath = new Map<string, number | number[]>()
    let byId: Map<number, ScanRow> | undefined
    const rows = {
      get: (id: number) => (byId ??= new Map(rowList.map((r) => [r.id, r]))).get(id),
      has: (id: number) => rows.get(id) !== undefined,
    }
    const add = (r: ScanRow) => {
      const i = rowList.push(r) - 1
      byId?.set(r.id, r)
      const there = atPath.get(r.path_file)
      if (there === undefined) atPath.set(r.path_file, i)
      else if (Array.isArray(there)) there.push(i)
      else atPath.set(r.path_file, [there, i])
    }
    const take = (r: ScanRow) => {
      if (!rows.has(r.id)) add(r)
    }
    for (const [i, s] of scopes.entries()) {
      // The first scope's rows are the first read: no id to compare them with.
      await media.underForScanPaged(asFolder(s), i === 0 ? add : take, breathe)
      for (const r of media.atPathForScan(s)) take(r)
    }
    await breathe()
    // Files whose identity the row at their path does not hold (or with no row there): the asset
    // holding that identity, wherever its path is, is read too.
    // Files in place: the one asset at their path holds them, in production, as they were when
    // fingerprinted, and no other name of them exists (one link), so no other file or asset can
    // contest them. Nothing is left to decide for those, and reconcile is given only the rest (a
    // start scan of 100,000 unchanged files decided each of them again: a third of its time).
    // `pending`: the entries reconcile is given (folders, and files not in place); `inPlace`: the
    // rows in place, by index (entries and rows found later are never in place).
    const pending: DiskEntry[] = []
    const inPlace = new Uint8Array(rowList.length)
    let settledCount = 0
    const strange: DiskEntry[] = []
    for (let n = 0; n < disk.length; n++) {
      // A look at the clock every 256 entries: one pass over a big walk is turns, not one block.
      if ((n & 255) === 0) await breathe()
      const e = disk[n]!
      if (e.kind !== 'file') {
        pending.push(e)
        continue
      }
      const i = atPath.get(e.path)
      if (i === undefined || Array.isArray(i)) {
        // The whole identity: a freed inode given to a new file is another file (birth time).
        if (i === undefined || !i.some((j) => sameIdentity(rowList[j]!, e))) strange.push(e)
        pending.push(e)
        continue
      }
      const here = rowList[i]!
      if (!sameIdentity(here, e)) strange.push(e)
      else if (
        e.nlink === 1 &&
        here.is_production &&
        here.device === e.device &&
        here.file_hash !== null &&
        here.file_size === e.size &&
        here.file_mtime === e.mtimeMs
      ) {
        inPlace[i] = 1
        settledCount++
        continue
      }
      pending.push(e)
    }
    /** Entries added to `disk` from here on (evidence, files seen lately) go to reconcile too. */
    const walkedCount = disk.length
    await breathe()
    const holders: ScanRow[] = []
    const formerHolders: ScanRow[] = []
    if (strange.length) {
      // A file seen lately at another path (a save over an asset's path, then a rename): the
      // assets at those paths are read too, and their paths looked at.
      // (A thousand files at a time, with turns between: a drop's 20,000 new files are all strange.)
      for (let i = 0; i < strange.length; i += 1000) {
        for (const path of recent.formerFiles(strange.slice(i, i + 1000), Date.now()))
          for (const r of media.atPathForScan(path)) take(r), formerHolders.push(r)
        await breathe()
      }
      const found = await media.byIdentities(strange, breathe)
      if (found.length) {
        // Holders: rows whose whole identity (birth time too) a strange file has. Keys only for
        // the files whose inode a row has (a new share's scan has 100,000 strange files and no row).
        const inos = new Set(found.map((r) => r.file_ino))
        const stamps = new Set<string>()
        for (const e of strange) if (inos.has(e.ino)) stamps.add(`${e.dev}:${e.ino}:${e.stamp}`)
        for (const r of found) {
          take(r)
          if (stamps.has(`${r.file_dev}:${r.file_ino}:${r.file_stamp}`)) holders.push(r)
        }
      }
    }

    await breathe()
    const productionsList = db
      .select({
        id: productions.id,
        storage_root: productions.storage_root,
        upload_device: productions.upload_device,
        upload_root: productions.upload_root,
      })
      .from(productions)
      .all()
    const ingestInto = ingestOwner(productionsList)
    const roots = new Map(
      db
        .select({ id: devices.id, path: devices.path })
        .from(devices)
        .all()
        .map((d) => [d.id, d.path]),
    )
    const rootPresent = (id: number) => {
      const root = roots.get(id)
      return root !== undefined && existsSync(root)
    }
    const projectRows = db
      .select({
        id: projectAssets.id,
        bundle_root: projectAssets.bundle_root,
        is_production: projectAssets.is_production,
        is_archive: projectAssets.is_archive,
        deleting: projectAssets.deleting,
      })
      .from(projectAssets)
      .where(eq(projectAssets.device, device.id))
      .all()
      .filter((p) =>
        scopes.some((s) => {
          const d = asFolder(s)
          return p.bundle_root === d || isInside(d, p.bundle_root)
        }),
      )
    const busy = new Set(openCopyAndDeleteTargets(db).map((t) => t.projectasset))

    // Evidence from outside the scopes: the paths of assets found by identity or size elsewhere are
    // looked at now (lstat), so that "its file is still there" (a hard link, a copy) and "its file is
    // gone" are known, not assumed from an identity recorded earlier.
    const scope = [...scopes]
    /** Entries looked at outside the walk: evidence only (reconcile's `outside`). */
    const outside = new Set<string>()
    // The scopes by path without a final separator: a path is in them when it or a folder above it is
    // (a walk up its folders, not a comparison with every scope: a big move adds thousands).
    const scopeKeys = new Set(scopes.map((s) => trimSep(s)))
    const inScopes = (path: string) => underAny(scopeKeys, path)
    const addEvidence = (r: ScanRow) => {
      if (inScopes(r.path_file)) return
      scopeKeys.add(r.path_file)
      scope.push(r.path_file)
      const s = look(r.path_file)
      if (s?.isFile()) {
        disk.push(entryOf(r.path_file, r.device, s))
        outside.add(r.path_file)
      }
    }
    for (const r of [...holders, ...formerHolders]) addEvidence(r)
    /**
     * Other assets' paths looked at (the assets of a content, those another scan found vanished),
     * with the assets that hold or name what is there now: a file at an offline asset's old path
     * may be another asset's by now (renamed there), never a file nobody holds.
     */
    const lookAt = async (list: readonly ScanRow[]) => {
      const from = disk.length
      for (const r of list) take(r), addEvidence(r)
      const seen = disk.slice(from)
      if (!seen.length) return
      for (const e of seen) for (const r of media.atPathForScan(e.path)) take(r)
      for (const r of await media.byIdentities(seen, breathe)) take(r)
    }

    const now = Date.now()
    const fingerprints = new Map<string, string>()
    const sightings = recent.sightings(now)
    let outcome!: Reconciliation
    const recheck = new Set<string>()
    /** Fingerprints of entries ('' when the file is no longer as seen), from what was read before when it can be. */
    const readFingerprints = async (entries: readonly DiskEntry[]): Promise<Map<DiskEntry, string>> => {
      const out = new Map<DiskEntry, string>()
      const toRead = entries.filter((e) => {
        const known = recent.hashOf(e.path, e)
        if (known !== undefined) out.set(e, known)
        return known === undefined
      })
      const read = await fingerprintAll(toRead, { signal })
      // Stopped meanwhile (a shutdown): the rest was not read; nothing is decided on it.
      if (signal.aborted) throw new CancelledError(String(signal.reason))
      for (const e of toRead) {
        const hash = read.get(e)
        if (hash !== undefined) recent.keepHash(e.path, e, hash)
        out.set(e, hash ?? '')
      }
      return out
    }
    const changedSince = (e: DiskEntry) => {
      const s = look(e.path)
      return s !== undefined && (s.size !== e.size || s.mtimeMs !== e.mtimeMs || s.ino !== e.ino)
    }
    const sizesLooked = new Set<number>()
    const strangersLooked = new Set<string>()
    /** Contents (size and fingerprint) whose assets were read and their paths looked at. */
    const contentsLooked = new Set<string>()
    await breathe()
    // A move across file systems has a half on each device, and two devices' scans may run at once
    // (the start scans, polling): each scan publishes its half before it reads the other's, so that
    // of two scans at least one sees both, whichever looks first. The files found here that no
    // asset holds first; the assets found vanished as each round finds them (below).
    recent.found(self, strange)
    for (let round = 0; round < ROUNDS; round++) {
      // Relink candidates: assets whose file may have vanished, of the sizes of files no asset has:
      // offline ones, and those another scan under way found vanished (still online in the
      // catalogue: their paths are looked at here, so this scan decides on what it sees itself).
      const sizes = new Set<number>()
      const unnamed = (e: DiskEntry) => e.kind === 'file' && !sizesLooked.has(e.size) && !atPath.has(e.path)
      for (const e of strange) if (unnamed(e)) sizes.add(e.size)
      for (let i = walkedCount; i < disk.length; i++) if (unnamed(disk[i]!)) sizes.add(disk[i]!.size)
      for (const s of sizes) sizesLooked.add(s)
      if (sizes.size) {
        for (const r of media.offlineBySizes(sizes)) take(r)
        const vanished = recent.vanished(sizes, self)
        if (vanished.length)
          await lookAt(vanished.flatMap((v) => media.atPathForScan(v.path).filter((r) => r.id === v.id)))
      }

      const pendingDisk = walkedCount < disk.length ? pending.concat(disk.slice(walkedCount)) : pending
      const pendingRows = settledCount ? rowList.filter((_, i) => inPlace[i] !== 1) : rowList
      outcome = await reconcileSliced(
        pendingDisk,
        {
          media: pendingRows,
          projects: projectRows.map((p) => ({ ...p, device: device.id, busy: p.deleting || busy.has(p.id) })),
        },
        {
          scope,
          roots,
          rootPresent,
          sightings,
          fingerprints,
          outside,
          // Which production a new file goes to is the scanned device's watch folder's to say, also in a device nested in it (as before).
          ingestInto: (path) => ingestInto(path, device.id),
          // Our own output, and folders not read: neither is judged (unknown is not gone).
          ownOutput: unreadKeys.size ? (path) => isOwn(path) || underUnread(path) : isOwn,
          diskFiltered: true, // the walk skipped the same; evidence is at rows' paths, strangers come from walks
        },
        breathe,
      )
      let again = false
      // Assets going offline now: files of their size seen lately elsewhere (a copy across file
      // systems appears before its original goes), and those other scans under way found (published
      // after this scan's vanished assets are), are looked at again.
      if (outcome.offline.length) {
        const wanted = new Set<number>()
        const lost: Vanished[] = []
        for (const id of outcome.offline) {
          const r = rows.get(id)
          if (r?.file_size == null || r.file_hash === null) continue
          wanted.add(r.file_size)
          lost.push({ id, path: r.path_file, size: r.file_size })
        }
        recent.lost(self, lost)
        // Their size now, not when they were seen: a copy seen half-written has grown since (and
        // polling does not see a file grow).
        if (wanted.size)
          for (const e of [...recent.strangers(now), ...recent.newcomers(wanted, self)]) {
            if (strangersLooked.has(e.path) || inScopes(e.path)) continue
            strangersLooked.add(e.path)
            const s = look(e.path)
            if (!s?.isFile()) recent.forgetStranger(e.path)
            else if (wanted.has(s.size)) {
              disk.push(entryOf(e.path, e.device, s))
              outside.add(e.path)
              again = true
            }
          }
      }
      const unread = outcome.needFingerprints.filter((e) => !fingerprints.has(e.path))
      if (unread.length) {
        const twins: ScanRow[] = []
        for (const [e, hash] of await readFingerprints(unread)) {
          fingerprints.set(e.path, hash)
          // Every asset of this content, wherever it is: its path is looked at, so that the relink
          // knows which of them is still in place (no candidate) and which vanished (candidates).
          const content = `${e.size}:${hash}`
          if (hash === '' || contentsLooked.has(content)) continue
          contentsLooked.add(content)
          for (const r of media.byContent(e.size, hash)) if (!(r.is_archive && !r.is_production)) twins.push(r)
        }
        await lookAt(twins)
        again = true
      }
      if (!again) break
    }

    // A file that could not be read as the walk saw it is being written: looked at again shortly.
    if (fingerprints.size)
      for (const e of disk) if (fingerprints.get(e.path) === '' && changedSince(e)) recheck.add(e.path)

    // Each decision is checked against the disk as it is now, right before it is applied: a walk
    // takes time, and another scan may have applied what happened meanwhile (a file moved right
    // after the walk read its folder). A decision the disk no longer bears out is left, and its
    // paths are looked at again shortly.
    const sameFile = (path: string, e: { dev: number; ino: number }) => {
      const s = look(path)
      return s !== undefined && s.isFile() && s.dev === e.dev && s.ino === e.ino
    }
    const relocations = outcome.relocations.filter((r) => {
      if (sameFile(r.path, r)) return true
      recheck.add(r.path)
      return false
    })
    const kept = new Set(relocations)
    const relocated = new Set(relocations.map((r) => r.id))
    const dropped = new Set(outcome.relocations.filter((r) => !kept.has(r)).map((r) => r.id))
    let filesSeen: Map<string, DiskEntry> | undefined
    const filesNow = {
      get(path: string) {
        if (!filesSeen) {
          filesSeen = new Map()
          for (const e of disk) if (e.kind === 'file') filesSeen.set(e.path, e)
        }
        return filesSeen.get(path)
      },
    }
    const offline = outcome.offline.filter((id) => {
      const path = rows.get(id)!.path_file
      const s = look(path)
      const seen = filesNow.get(path)
      // Gone as the walk said (or no longer a regular file: a link, a folder), or holding the file
      // the walk saw there (handed to another asset).
      if (!s || !s.isFile() || (seen && s.dev === seen.dev && s.ino === seen.ino)) return true
      recheck.add(path)
      return false
    })
    const online = outcome.online.filter((id) => !dropped.has(id) && (relocated.has(id) || sameFileAtOwnPath(id)))
    function sameFileAtOwnPath(id: number) {
      const path = rows.get(id)!.path_file
      const seen = filesNow.get(path)
      if (seen && sameFile(path, seen)) return true
      recheck.add(path)
      return false
    }

    /** Decisions not applied: the asset changed meanwhile (looked at again), or its path is another's in production. */
    let skipped = new Set<number>()
    let changedMeanwhile: number[] = []
    let applied = { offline: offline.length, online: online.length }
    db.transaction(() => {
      // An asset an import is moving is out of production until its task has the file in place
      // (clients wait for that): its file at the old path is not this scan's to bring online.
      const moving = assetsBeingMoved(db)
      const free = (id: number) => !moving.has(id)
      const off = offline.filter(free)
      const on = online.filter(free)
      applied = { offline: off.length, online: on.length }
      const at = new Map(relocations.map((r) => [r.id, r.path]))
      const result = media.applyScan({
        offline: off.map((id) => ({ id, from: rows.get(id)!.path_file, archive: rows.get(id)!.is_archive })),
        online: on.map((id) => ({ id, at: at.get(id) ?? rows.get(id)!.path_file, archive: rows.get(id)!.is_archive })),
        relocations: relocations
          .filter((r) => free(r.id))
          .map((r) => ({
            ...r,
            from: rows.get(r.id)!.path_file,
            kind: rows.get(r.id)!.kind,
            archive: rows.get(r.id)!.is_archive,
          })),
      })
      skipped = new Set([...result.changed, ...result.conflicts])
      changedMeanwhile = result.changed
      // A conflict is what the disk says (another asset stays in production there): said, not retried.
      for (const id of result.conflicts)
        deps.log.warn("an asset's file is at a path another asset holds in production; left as it was", {
          asset: id,
          path: at.get(id) ?? rows.get(id)!.path_file,
        })
      for (const [ids, on] of [
        [outcome.projectsOffline, false],
        [outcome.projectsOnline, true],
      ] as const) {
        if (!ids.length) continue
        if (deps.projects) deps.projects.setOnline([...ids], on, system('watcher'))
        // Tests of the scan alone build it without the project service: the same write, without history.
        else
          db.update(projectAssets)
            .set({ is_production: on, date_mod: isoTimestamp() })
            .where(inArray(projectAssets.id, [...ids]))
            .run()
      }
    })
    // The catalogue now says what the disk does: a start scan opens the watch folders here, before
    // the (possibly long) reading of missing fingerprints below.
    deps.scanned?.(device.id, task.params.paths === null)
    const again = new Set(changedMeanwhile)
    for (const id of again) recheck.add(rows.get(id)!.path_file)
    for (const r of relocations) if (again.has(r.id)) recheck.add(r.path)
    if (recheck.size)
      deps.later(
        device.id,
        [...recheck].filter((p) => isInside(device.path, p)),
        250,
      )

    // What this scan saw is remembered: folders by identity (a rename is recognised later), and
    // files no asset has that were not imported (a vanishing asset looks at those of its size).
    for (const path of missing) recent.gone(path)
    for (const d of dirs) recent.saw(d.path, { kind: 'dir', dev: d.dev, ino: d.ino, stamp: d.stamp }, now)
    for (const r of relocations) recent.forgetStranger(r.path)

    // Fingerprints that are missing or stale (the file changed, or is new to its asset), read off
    // the request path here, a bounded number of bytes per file.
    const stale = outcome.fingerprint.filter((f) => !dropped.has(f.id) && !skipped.has(f.id))
    if (stale.length) {
      // files_done: the files that need no fingerprint, then each whose fingerprint is read.
      const entries = stale.map((f) => f.entry)
      const judged = Math.max(0, filesFound() - entries.length)
      const read = await fingerprintAll(entries, {
        signal,
        onEach: (n) => progress({ files_done: Math.min(filesFound(), judged + n) }),
      })
      if (signal.aborted) throw new CancelledError(String(signal.reason))
      const list = stale.flatMap((f) => {
        const hash = read.get(f.entry)
        return hash === undefined
          ? []
          : [{ id: f.id, dev: f.entry.dev, ino: f.entry.ino, size: f.entry.size, mtimeMs: f.entry.mtimeMs, hash }]
      })
      // 200 a transaction, with turns of the event loop between them (20,000 made one block of 250 ms).
      for (let i = 0; i < list.length; i += 200) {
        if (slice.due()) await slice.tick()
        media.setFingerprints(list.slice(i, i + 200))
      }
    }

    // New files in a watch folder: imported once they stopped growing (docs/watcher.md), through
    // the same register() as POST /api/asset/import/, by the service itself (SYSTEM). Never a file
    // that is an asset's proxy, nor while a start scan that may find it to be a moved asset is due.
    let imported = 0
    const waiting: string[] = []
    // Which of them are some asset's proxy: a thousand paths a query, with turns between.
    const proxies = new Set<string>()
    for (let i = 0; i < outcome.ingest.length; i += 1000) {
      for (const p of media.proxiesAmong(outcome.ingest.slice(i, i + 1000).map((f) => f.path))) proxies.add(p)
      await breathe()
    }
    const open = deps.importsOpen?.() ?? true
    // A drop of 20,000 files is 20,000 lookups and then 20,000 imports written one by one: done in
    // slices (see `slice` above), so that requests are answered meanwhile.
    let settled: typeof outcome.ingest = []
    for (const file of outcome.ingest) {
      if (slice.due()) await slice.tick()
      // Our own, or catalogued meanwhile (any kind, online or not): never twice. (The scan's light
      // rows at the path, not whole records: this is asked once per file of a drop.)
      if (proxies.has(file.path) || media.atPathForScan(file.path).length > 0) continue
      // A file whose asset a user deleted (at this path, or moved here since): not imported again.
      if (media.dismissed(file.path, file)) continue
      if (deps.settle.observe(file.path, { size: file.size, mtimeMs: file.mtimeMs }, now) === 'settled' && open)
        settled.push(file)
      else waiting.push(file.path)
    }
    // A settled file with the content of an asset whose file is still in place on another device is
    // most likely that asset being moved across file systems (`mv` copies everything before it
    // deletes anything): it is held, not imported, and becomes the asset when the original goes (a
    // vanishing asset looks at the files seen lately). A copy on the same device is a copy.
    const held: { path: string; asset: number }[] = []
    const candidates: typeof settled = []
    // Asked once per size in a scan: a drop's clips often share a few sizes, and one look reads
    // every entry of the size without a fingerprint (they sort first in the size index) before it
    // finds one with: 51 ms for one look during a drop of 20,000 files.
    const sizesKnown = new Map<number, boolean>()
    for (const f of settled) {
      if (slice.due()) await slice.tick()
      let known = sizesKnown.get(f.size)
      if (known === undefined) sizesKnown.set(f.size, (known = media.sizeKnown(f.size)))
      if (known) candidates.push(f)
    }
    if (candidates.length) {
      const entries = candidates.map(
        (f): DiskEntry => ({
          path: f.path,
          device: f.device,
          kind: 'file',
          dev: f.dev,
          ino: f.ino,
          stamp: 0,
          size: f.size,
          mtimeMs: f.mtimeMs,
        }),
      )
      const hashes = await readFingerprints(entries)
      for (const e of entries) {
        if (slice.due()) await slice.tick()
        const hash = hashes.get(e)
        if (!hash) continue
        for (const twin of media.byContent(e.size, hash)) {
          if (!twin.is_production) continue
          const s = look(twin.path_file)
          const present = s?.isFile() === true && s.dev === twin.file_dev && s.ino === twin.file_ino
          // In place on this device: a copy. In place elsewhere: a move under way. Gone: that asset
          // moved here; the scan of its path (asked for now) takes it offline and relinks it to this file.
          // (By file system, not device id: two devices may share one, and one may span several.)
          if (present && twin.file_dev === e.dev) continue
          if (!present) deps.later(twin.device, [twin.path_file], 0)
          held.push({ path: e.path, asset: twin.id })
          break
        }
      }
    }
    const heldPaths = new Set(held.map((h) => h.path))
    if (held.length) settled = settled.filter((f) => !heldPaths.has(f.path))
    if (held.length)
      deps.later(
        device.id,
        held.map((h) => h.path),
        HELD_LOOK_MS,
      )
    const ingested = new Set<string>()
    // A writer that paused for longer than the settle time still holds the file open (Linux tells).
    const writing = openForWriting(new Set(settled.map((f) => f.path)))
    const uploads = new Map(
      db
        .select({
          id: productions.id,
          name: productions.name,
          storage_root: productions.storage_root,
          upload_root: productions.upload_root,
          move_uploads: productions.move_uploads,
        })
        .from(productions)
        .all()
        .map((p) => [p.id, p]),
    )
    // One transaction per slice, not one per file (group commit): each import's writes are a
    // savepoint inside it (register's own transaction nests), so a refusal still undoes only its
    // file. Committed one by one, every import wrote the same hot pages again (the newest rows,
    // the task queue's and history's index leaves): 56 WAL pages an import, and a commit each
    // (docs/benchmarks.md, stall). The transaction never spans a wait: the slice ends before the
    // next turn, and the cancel check is made between slices, outside it.
    const deviceName = device.name
    const importSlice = committed(db.$client, (from: number) => {
      const done: string[] = []
      let i = from
      for (; i < settled.length && (i === from || !slice.spent()); i++) {
        const path = importOne(settled[i]!)
        if (path) done.push(path)
      }
      return { next: i, done }
    })
    for (let i = 0; i < settled.length; ) {
      if (slice.due()) await slice.tick()
      let outcome: { next: number; done: string[] }
      try {
        outcome = importSlice.immediate(i)
      } catch (error) {
        // The catalogue refused a write (disk full, I/O): the slice was rolled back whole. Its files
        // and those not tried yet are looked at again later (the scan itself fails with the error).
        deps.later(
          device.id,
          settled.slice(i).map((f) => f.path),
          deps.settleMs,
        )
        throw error
      }
      const { next, done } = outcome
      for (const path of done) ingested.add(path)
      imported += done.length
      i = next
    }
    /** Imports `file` (a savepoint of the slice's transaction); its path when it became an asset. */
    function importOne(file: (typeof settled)[number]): string | undefined {
      if (writing.has(file.path)) {
        waiting.push(file.path)
        return
      }
      deps.settle.forget(file.path)
      const production = uploads.get(file.production)
      if (production === undefined) return
      const request = {
        type: file.kind,
        production: production.name,
        rewrap_proxy: false,
        move_asset: movesUpload(production, file.path),
        asset: {
          asset_meta: {
            name: baseName(file.path).replace(/\.[^.]+$/, ''),
            path_file: file.path,
            is_archive: false,
            is_production: true,
            approval: 0 as const,
            meta_field_store: {},
          },
          technical_details: {},
          archive_details: {},
          keywords: {},
        },
      }
      try {
        // Only as a new asset: one that has the file by now (relinked to it meanwhile) keeps its record.
        deps.imports.register(request, SYSTEM, JSON.stringify({ watch_folder: deviceName, path_file: file.path }), {
          newOnly: true,
        })
        return file.path
      } catch (error) {
        if (error instanceof AlreadyCatalogued) return
        // A refusal (the file went away: 406) is logged; a later scan tries again if it is back.
        if (!(error instanceof AppError)) throw error
        deps.log.warn('watch folder file not imported', { path: file.path, reason: error.message })
      }
    }
    recent.remember(
      outcome.strangers.filter((e) => !ingested.has(e.path)),
      now,
    )
    // Names not UTF-8: said once per folder and scan; in a watch folder, a media file's name gets
    // a failed ImportLog (once), so that a drop that never arrives says why.
    for (const [folder, names] of undecodable) {
      deps.log.warn('names in this folder are not valid UTF-8 and cannot be catalogued; rename them', {
        folder,
        count: names.length,
        first: names[0]!,
      })
      for (const shown of names) {
        const path = folder + shown
        const production = ingestInto(path, device.id)
        const kind = kindOf(shown)
        if (production === undefined || kind === undefined || undecodableLogged.has(path) || !deps.logs) continue
        if (undecodableLogged.size >= 10_000) undecodableLogged.clear()
        undecodableLogged.add(path)
        const error =
          'the file name is not valid UTF-8 (shown here with U+FFFD where its bytes are not): rename the file to import it'
        deps.logs.append({
          asset_type: `${kind}asset`,
          asset_path: path,
          status: IMPORT_STATUS.failed,
          error,
          payload: JSON.stringify({ watch_folder: device.name, path_file: path }),
          asset_import_id: null,
          production,
        })
      }
    }
    for (const a of outcome.ambiguous)
      deps.log.warn('a file was not relinked: nothing was guessed', {
        path: a.path,
        assets: a.assets.join(','),
        reason: a.reason,
      })
    if (waiting.length) deps.later(device.id, waiting, deps.settleMs)
    progress({ files_total: filesFound(), files_done: filesFound() })
    const counts = { identity: 0, sighting: 0, path: 0, folder: 0, content: 0 }
    for (const r of relocations) if (!skipped.has(r.id)) counts[r.by]++
    report({
      seen: disk.filter((e) => e.kind === 'file').length,
      offline: applied.offline - offline.filter((id) => skipped.has(id)).length,
      online: applied.online - online.filter((id) => skipped.has(id)).length,
      moved: counts.identity + counts.sighting + counts.folder,
      relinked: counts.content,
      saved_anew: counts.path,
      imported,
      waiting: waiting.length,
      fingerprinted: stale.length,
      ...(held.length
        ? {
            held: held.slice(0, 100).map((h) => ({
              ...h,
              reason:
                'the content of an asset whose file is still in place on another device: a move across file systems in progress, or a copy (import it to keep both)',
            })),
          }
        : {}),
      ...(outcome.ambiguous.length ? { ambiguous: outcome.ambiguous.slice(0, 100) } : {}),
      ...(recheck.size ? { rechecked: recheck.size } : {}),
      ...(unread.length ? { skipped_folders: unread.slice(0, 100), skipped_folders_count: unread.length } : {}),
    })
    // A walk of a big tree leaves about 60 MB per 100,000 entries behind (its entries, the
    // catalogue rows, reconcile's maps). The collector would free it only later, under whatever
    // comes next: collect it once this scan's frame is gone, and again a second later (JSC scans
    // the machine stack conservatively; right after the task, stale slots still held them).
    // Measurements: docs/benchmarks.md. Whole-device scans only (start, rescans: rare): a drop of
    // 20,000 files rescans its folder again and again, and a full collection each time held every
    // request for about 100 ms (bench/stall.ts); there the collector's own pace is kept.
    if (task.params.paths === null && disk.length >= BIG_SCAN)
      for (const ms of BIG_SCAN_COLLECT_MS) setTimeout(() => Bun.gc(true), ms).unref()
  }
}

/**
 * Whether the watcher's import of a new file moves it into its production's area (the production's
 * move_uploads, as an import with move_asset and no asset_destination does): a file in the drop
 * folder always, one elsewhere in the watch folder unless it lies in the production's storage_root
 * already (its own area, where editors keep their folders: never rearranged by the watcher).
 */
export function movesUpload(
  production: { storage_root: string; upload_root: string | null; move_uploads: boolean },
  path: string,
): boolean {
  if (!production.move_uploads) return false
  if (production.upload_root !== null && isInside(production.upload_root, path)) return true
  return !isInside(production.storage_root, path)
}

/** How often a held file (an asset's content, its original still in place) is looked at again. */
const HELD_LOOK_MS = 30_000

/** Entries from which a scan's garbage is collected at once (see the end of the scan). */
const BIG_SCAN = 10_000
/** When a big scan's garbage is collected, after it ends (see there). */
const BIG_SCAN_COLLECT_MS = [0, 1000]
