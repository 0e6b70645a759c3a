// Phase 2, gather: what the catalogue says of what the walk found. Reads the assets under the
// scopes, sets aside the files in place (nothing left to decide for them), reads the assets that
// hold a strange file's identity or had its path lately and looks at their paths (evidence), and
// reads the productions, devices and project assets that reconcile needs. Hands on (Gathered) the
// rows, what reconcile is given, and the means to take more rows and evidence in (decide's rounds).
import { existsSync } from 'node:fs'
import type { ScanRow } from '../../modules/mediaassets/service.ts'
import { type Work, all } from '../../db/port.ts'
import { devices, productions } from '../../db/tables.ts'
import { asFolder, isInside, trimSep } from '../../storage/paths.ts'
import { openCopyAndDeleteTargets } from '../../tasks/queries.ts'
import type { DiskEntry, ProjectRow } from '../reconcile.ts'
import { ingestOwner } from './owner.ts'
import { type ScanRun, entryOf, look, rowsAtPaths, underAny } from './run.ts'
import type { Walked } from './walk.ts'

/**
 * The catalogue in the scopes; a row may come twice (two scopes, found by identity or size too).
 * A list, the row at each path (an array only where several name one path: a vanished asset's
 * old path), and by id only once asked (a full scan reads 100,000 rows and decides on few).
 */
export type Rows = {
  list: ScanRow[]
  /** Index in `list` of the row at each path (numbers, not objects: 100,000 of them). */
  atPath: Map<string, number | number[]>
  get(id: number): ScanRow | undefined
  has(id: number): boolean
  add(r: ScanRow): void
  /** Adds `r` unless a row of its id is there. */
  take(r: ScanRow): void
}

export type Gathered = {
  rows: Rows
  /** The entries reconcile is given: folders, and files not in place. */
  pending: DiskEntry[]
  /** The rows in place, by index in rows.list (entries and rows found later are never in place). */
  inPlace: Uint8Array
  settledCount: number
  /** Files whose identity the row at their path does not hold (or with no row there). */
  strange: DiskEntry[]
  /** Entries added to `disk` from here on (evidence, files seen lately) go to reconcile too. */
  walkedCount: number
  /** The production a new file at a path on a device is imported into (ingestOwner). */
  ingestInto: ReturnType<typeof ingestOwner>
  /** Every device's root, by id. */
  roots: Map<number, string>
  rootPresent(id: number): boolean
  projects: ProjectRow[]
  /** Reconcile's scope: the scopes, then the paths of assets looked at outside them (evidence). */
  looked: string[]
  /** Entries looked at outside the walk: evidence only (reconcile's `outside`). */
  outside: Set<string>
  /** Whether a path is in the scopes or is an evidence path already looked at. */
  inScopes(path: string): boolean
  /**
   * Other assets' paths looked at (the assets of a content, those another scan found vanished),
   * with the assets that hold or name what is there now: a file at an offline asset's old path
   * may be another asset's by now (renamed there), never a file nobody holds.
   */
  lookAt(list: readonly ScanRow[]): Promise<void>
}

export async function gather(run: ScanRun & Walked): Promise<Gathered> {
  const rows = await readRows(run)
  const sorted = await sortOut(run, rows)
  await run.breathe()
  const { holders, formerHolders } = await readHolders(run, rows, sorted.strange)
  await run.breathe()
  const around = await run.port.run(readSurroundings(run))
  const { add, looked, outside, inScopes, lookAt } = evidenceOf(run, rows)
  for (const r of [...holders, ...formerHolders]) add(r)
  return { rows, ...sorted, ...around, looked, outside, inScopes, lookAt }
}

function rowsOf(): Rows {
  const list: ScanRow[] = []
  const atPath = new Map<string, number | number[]>()
  let byId: Map<number, ScanRow> | undefined
  const rows: Rows = {
    list,
    atPath,
    get: (id) => (byId ??= new Map(list.map((r) => [r.id, r]))).get(id),
    has: (id) => rows.get(id) !== undefined,
    add: (r) => {
      const i = list.push(r) - 1
      byId?.set(r.id, r)
      const there = atPath.get(r.path_file)
      if (there === undefined) atPath.set(r.path_file, i)
      else if (Array.isArray(there)) there.push(i)
      else atPath.set(r.path_file, [there, i])
    },
    take: (r) => {
      if (!rows.has(r.id)) rows.add(r)
    },
  }
  return rows
}

async function readRows(run: ScanRun): Promise<Rows> {
  const { media } = run.deps
  const rows = rowsOf()
  for (const [i, s] of run.scopes.entries()) {
    // The first scope's rows are the first read: no id to compare them with.
    await media.underForScanPaged(asFolder(s), i === 0 ? rows.add : rows.take, run.breathe)
    // The value itself on SQLite (no await per scope), a promise on PostgreSQL.
    const at = run.port.run(media.atPathForScan(s))
    for (const r of at instanceof Promise ? await at : at) rows.take(r)
  }
  await run.breathe()
  return rows
}

/** The file is the one the row records (device, inode and birth time). */
const sameIdentity = (r: ScanRow, e: DiskEntry) =>
  r.file_dev === e.dev && r.file_ino === e.ino && r.file_stamp === e.stamp

/**
 * Files whose identity the row at their path does not hold (or with no row there): the asset
 * holding that identity, wherever its path is, is read too (readHolders).
 * Files in place: the one asset at their path holds them, in production, as they were when
 * fingerprinted, and no other name of them exists (one link), so no other file or asset can
 * contest them. Nothing is left to decide for those, and reconcile is given only the rest (a
 * start scan of 100,000 unchanged files decided each of them again: a third of its time).
 */
async function sortOut(run: ScanRun, rows: Rows) {
  const { disk } = run
  const pending: DiskEntry[] = []
  const inPlace = new Uint8Array(rows.list.length)
  let settledCount = 0
  const strange: DiskEntry[] = []
  for (let n = 0; n < disk.length; n++) {
    // A look at the clock every 256 entries: one pass over a big walk is turns, not one block.
    if ((n & 255) === 0) await run.breathe()
    const e = disk[n]!
    if (e.kind !== 'file') {
      pending.push(e)
      continue
    }
    const i = rows.atPath.get(e.path)
    if (i === undefined || Array.isArray(i)) {
      // The whole identity: a freed inode given to a new file is another file (birth time).
      if (i === undefined || !i.some((j) => sameIdentity(rows.list[j]!, e))) strange.push(e)
      pending.push(e)
      continue
    }
    const here = rows.list[i]!
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
  return { pending, inPlace, settledCount, strange, walkedCount: disk.length }
}

/** The rows holding a strange file's identity, and those at the paths its file was seen at lately. */
async function readHolders(run: ScanRun, rows: Rows, strange: DiskEntry[]) {
  const { media, recent } = run.deps
  const holders: ScanRow[] = []
  const formerHolders: ScanRow[] = []
  if (!strange.length) return { holders, formerHolders }
  // A file seen lately at another path (a save over an asset's path, then a rename): the
  // assets at those paths are read too, and their paths looked at.
  // (A thousand files at a time, with turns between: a drop's 20,000 new files are all strange.)
  for (let i = 0; i < strange.length; i += 1000) {
    const former = run.port.run(rowsAtPaths(media, recent.formerFiles(strange.slice(i, i + 1000), Date.now())))
    for (const r of former instanceof Promise ? await former : former) rows.take(r), formerHolders.push(r)
    await run.breathe()
  }
  const found = await media.byIdentities(strange, run.breathe)
  if (found.length) {
    // Holders: rows whose whole identity (birth time too) a strange file has. Keys only for
    // the files whose inode a row has (a new share's scan has 100,000 strange files and no row).
    const inos = new Set(found.map((r) => r.file_ino))
    const stamps = new Set<string>()
    for (const e of strange) if (inos.has(e.ino)) stamps.add(`${e.dev}:${e.ino}:${e.stamp}`)
    for (const r of found) {
      rows.take(r)
      if (stamps.has(`${r.file_dev}:${r.file_ino}:${r.file_stamp}`)) holders.push(r)
    }
  }
  return { holders, formerHolders }
}

/** The productions (who imports a new file), every device's root, and the project assets in the scopes. */
function* readSurroundings(run: ScanRun): Work<Pick<Gathered, 'ingestInto' | 'roots' | 'rootPresent' | 'projects'>> {
  const { db, device, scopes } = run
  const productionsList = yield* all(
    db
      .select({
        id: productions.id,
        storage_root: productions.storage_root,
        upload_device: productions.upload_device,
        upload_root: productions.upload_root,
      })
      .from(productions),
  )
  const ingestInto = ingestOwner(productionsList)
  const roots = new Map(
    (yield* all(db.select({ id: devices.id, path: devices.path }).from(devices))).map((d) => [d.id, d.path]),
  )
  const rootPresent = (id: number) => {
    const root = roots.get(id)
    return root !== undefined && existsSync(root)
  }
  const projectRows = (yield* run.projectsOnDevice()).filter((p) =>
    scopes.some((s) => {
      const d = asFolder(s)
      return p.bundle_root === d || isInside(d, p.bundle_root)
    }),
  )
  const busy = new Set((yield* openCopyAndDeleteTargets(db)).map((t) => t.projectasset))
  const projects = projectRows.map((p) => ({ ...p, device: device.id, busy: p.deleting || busy.has(p.id) }))
  return { ingestInto, roots, rootPresent, projects }
}

/**
 * Evidence from outside the scopes: the paths of assets found by identity or size elsewhere are
 * looked at now (lstat), so that "its file is still there" (a hard link, a copy) and "its file is
 * gone" are known, not assumed from an identity recorded earlier.
 */
function evidenceOf(run: ScanRun, rows: Rows) {
  const { disk, scopes } = run
  const { media } = run.deps
  const looked = [...scopes]
  const outside = new Set<string>()
  // The scopes by path without a final separator: a path is in them when it or a folder above it is
  // (a walk up its folders, not a comparison with every scope: a big move adds thousands).
  const scopeKeys = new Set(scopes.map((s) => trimSep(s)))
  const inScopes = (path: string) => underAny(scopeKeys, path)
  const add = (r: ScanRow) => {
    if (inScopes(r.path_file)) return
    scopeKeys.add(r.path_file)
    looked.push(r.path_file)
    const s = look(r.path_file)
    if (s?.isFile()) {
      disk.push(entryOf(r.path_file, r.device, s))
      outside.add(r.path_file)
    }
  }
  const lookAt = async (list: readonly ScanRow[]) => {
    const from = disk.length
    for (const r of list) rows.take(r), add(r)
    const seen = disk.slice(from)
    if (!seen.length) return
    for (const r of await run.port.run(
      rowsAtPaths(
        media,
        seen.map((e) => e.path),
      ),
    ))
      rows.take(r)
    for (const r of await media.byIdentities(seen, run.breathe)) rows.take(r)
  }
  return { looked, outside, inScopes, add, lookAt }
}
