// The run of one scan task, shared by its phases (walk → gather → decide → verify → apply →
// ingest, docs/watcher.md): the task, the device and the scopes, the entries found on disk, the
// paths to look at again, and the turns of the event loop. Each phase adds what it found to the
// run (index.ts) and hands the run on. Made here from the task, with what every phase reads of the
// catalogue's features; the helpers more than one phase uses live here too.
import type { Stats } from 'node:fs'
import { lstatSync } from 'node:fs'
import type { Db } from '../../db/client.ts'
import { type Port, type Work, all } from '../../db/port.ts'
import { devices } from '../../db/tables.ts'
import type { Imports } from '../../modules/assetimport/service.ts'
import type { ImportLogs } from '../../modules/importlogs/service.ts'
import type { MediaAssets, ScanRow } from '../../modules/mediaassets/service.ts'
import { ownOutputFolders } from '../../modules/productions/lookup.ts'
import { type ProjectAssets, type ProjectOnDevice, projectsOnDevice } from '../../modules/projectassets/service.ts'
import { fingerprintAll } from '../../storage/fingerprint.ts'
import { CancelledError, slicer } from '../../storage/fs.ts'
import { SEP, below, isInside, lastSepIndex, samePath, stampOf, trimSep } from '../../storage/paths.ts'
import type { TaskContext } from '../../tasks/runner.ts'
import type { Log } from '../../util/log.ts'
import type { createSettle } from '../ingest.ts'
import type { DiskEntry } from '../reconcile.ts'
import type { Recent } from '../recent.ts'

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

export type ScanDevice = typeof devices.$inferSelect

/** What every phase shares. The phases add their own findings to it (index.ts). */
export type ScanRun = {
  /**
   * The port the phases run their statements through, between their looks at the disk (no
   * transaction spans one); `db` is its handle, which statements are built from.
   */
  port: Port
  db: Db
  deps: ScanDeps
  task: TaskContext<'scan'>['task']
  signal: AbortSignal
  progress: TaskContext<'scan'>['progress']
  /** This scan in the scans under way (recent's newcomers and vanished assets). */
  self: object
  /** Names not UTF-8 already given a failed ImportLog (by folder and name as shown), kept across scans. */
  logged: Set<string>
  device: ScanDevice
  /** The device a path lies on: this one, or a device nested in its folder. */
  deviceOf(path: string): number
  /** Our own output folders (proxy roots, the data folder): never input. */
  own: string[]
  isOwn(path: string): boolean
  /** The folders and files walked: the task's, then those a vanished or renamed folder became. */
  scopes: string[]
  /** What the walk found, then entries looked at outside it (evidence, files seen lately). */
  disk: DiskEntry[]
  /** The regular files in `disk` (progress: files_total). */
  filesFound(): number
  /** Paths looked at again shortly: a decision the disk no longer bears out, a file being written. */
  recheck: Set<string>
  /** The project assets on the device, read by their owner (projectassets/service.ts). */
  projectsOnDevice(): Work<ProjectOnDevice[]>
  slice: ReturnType<typeof slicer>
  /**
   * Turns of the event loop between the steps of a scan and, later, between files (a drop of
   * 20,000 files): each step of a big scan takes tens of milliseconds, not all of them in one go.
   */
  breathe(): Promise<void>
}

/** What a scan reads of the catalogue before it starts: its device, every device, our own output folders. */
export type ScanStart = { device: ScanDevice; devices: ScanDevice[]; own: string[] }

/** The scan's start (startRun), or undefined when its device was removed. */
export function* readStart(db: Db, id: number): Work<ScanStart | undefined> {
  const every = yield* all(db.select().from(devices))
  const device = every.find((d) => d.id === id)
  if (!device) return undefined
  return { device, devices: every, own: yield* ownOutputFolders(db) }
}

/** The run of `ctx` on `start.device` (present and mounted). */
export function startRun(
  port: Port,
  deps: ScanDeps,
  { task, signal, progress }: TaskContext<'scan'>,
  { device, devices: every, own }: ScanStart,
  self: object,
  logged: Set<string>,
): ScanRun {
  const { db } = port
  // Devices inside this one's folder, the innermost first: a file there lies on that device, as
  // the catalogue says (deviceFor), whichever device's scan walks it. Were it said to lie on the
  // device scanned, each scan of the outer device would move the inner one's assets onto it and
  // the inner one's scan back.
  const nested = every.filter((d) => isInside(device.path, d.path)).sort((a, b) => b.path.length - a.path.length)
  const deviceOf = nested.length
    ? (path: string) => nested.find((d) => below(d.path, path) !== undefined)?.id ?? device.id
    : () => device.id
  const isOwn = (path: string) =>
    own.some((dir) => samePath(dir, path) || samePath(dir, path + SEP) || isInside(dir, path))
  const scopes = (task.params.paths ?? [device.path]).filter(
    (p) => below(device.path, p) !== undefined || samePath(p + SEP, device.path),
  )
  const disk: DiskEntry[] = []
  // Progress: files_total is the regular files the walk found (known once it has walked),
  // files_done those judged so far, never more than files_total.
  let found = 0
  let counted = 0
  const filesFound = () => {
    for (; counted < disk.length; counted++) if (disk[counted]!.kind === 'file') found++
    return found
  }
  const slice = slicer(signal)
  const breathe = async () => {
    if (slice.due()) await slice.tick()
  }
  return {
    port,
    db,
    deps,
    task,
    signal,
    progress,
    self,
    logged,
    device,
    deviceOf,
    own,
    isOwn,
    scopes,
    disk,
    filesFound,
    recheck: new Set(),
    projectsOnDevice: () => projectsOnDevice(db, device.id),
    slice,
    breathe,
  }
}

/**
 * `step` of each of `items`, a time slice's worth per run of the port, with the cancel check and a
 * turn of the event loop between slices (a drop of 20,000 files is 20,000 steps). On SQLite the
 * port runs a slice in the same call: no await per item, as when the steps called the catalogue
 * themselves; on PostgreSQL each statement of a step is awaited.
 */
export async function eachInSlices<T>(
  run: Pick<ScanRun, 'port' | 'slice'>,
  items: readonly T[],
  step: (item: T) => Work<void>,
): Promise<void> {
  const { port, slice } = run
  function* from(start: number): Work<number> {
    let i = start
    for (; i < items.length && (i === start || !slice.spent()); i++) yield* step(items[i]!)
    return i
  }
  for (let i = 0; i < items.length; ) {
    if (slice.due()) await slice.tick()
    const next = port.run(from(i))
    i = next instanceof Promise ? await next : next
  }
}

/** The assets naming each of `paths` exactly (media atPathForScan of each), in the order of the paths. */
export function* rowsAtPaths(media: MediaAssets, paths: Iterable<string>): Work<ScanRow[]> {
  const rows: ScanRow[] = []
  for (const path of paths) rows.push(...(yield* media.atPathForScan(path)))
  return rows
}

export const entryOf = (path: string, device: number, s: Stats): DiskEntry => ({
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

/** Whether `path` or a folder above it is one of `keys` (paths without a final separator): a walk up its folders. */
export function underAny(keys: ReadonlySet<string>, path: string): boolean {
  for (let k = trimSep(path); k !== ''; k = k.slice(0, Math.max(0, lastSepIndex(k)))) if (keys.has(k)) return true
  return false
}

/** What is at `path` now (no link followed), or undefined. */
export function look(path: string): Stats | undefined {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

/** Fingerprints of entries ('' when the file is no longer as seen), from what was read before when it can be. */
export async function readFingerprints(run: ScanRun, entries: readonly DiskEntry[]): Promise<Map<DiskEntry, string>> {
  const { recent } = run.deps
  const out = new Map<DiskEntry, string>()
  const toRead = entries.filter((e) => {
    const known = recent.hashOf(e.path, e)
    if (known !== undefined) out.set(e, known)
    return known === undefined
  })
  const read = await fingerprintAll(toRead, { signal: run.signal })
  // Stopped meanwhile (a shutdown): the rest was not read; nothing is decided on it.
  if (run.signal.aborted) throw new CancelledError(String(run.signal.reason))
  for (const e of toRead) {
    const hash = read.get(e)
    if (hash !== undefined) recent.keepHash(e.path, e, hash)
    out.set(e, hash ?? '')
  }
  return out
}
