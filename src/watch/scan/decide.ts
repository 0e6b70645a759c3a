// Phase 3, decide: what the changes are, by reconcile (reconcile.ts: identity first, then
// sightings, the path, content). Decides in rounds: between two, it takes in the relink
// candidates of the files no asset holds, the files seen lately of the size of an asset going
// offline, and the fingerprints reconcile asked for with every asset of those contents. Hands on
// (Decided) the outcome of the last round, with the time it was decided at and the fingerprints
// read; paths to look at again go to the run's `recheck`.
import type { Work } from '../../db/port.ts'
import type { ScanRow } from '../../modules/mediaassets/service.ts'
import { type DiskEntry, type ReconcileOptions, type Reconciliation, reconcileSliced } from '../reconcile.ts'
import type { Vanished } from '../recent.ts'
import type { Gathered } from './gather.ts'
import { type ScanRun, entryOf, look, readFingerprints } from './run.ts'
import type { Walked } from './walk.ts'

/**
 * Decisions are made again at most this often in one scan (each round reads fingerprints, strangers,
 * or the assets of a content): going offline, a stranger found, its fingerprint, its content's assets.
 */
const ROUNDS = 4

export type Decided = {
  /** When the decisions were made (sightings, files seen lately, the settle gate). */
  now: number
  outcome: Reconciliation
  /** Fingerprints read, by path ('' when the file was no longer as the walk saw it). */
  fingerprints: Map<string, string>
}

type Run = ScanRun & Walked & Gathered

/** What the rounds have looked at already: sizes of relink candidates, files seen lately, contents. */
type Looked = { sizes: Set<number>; strangers: Set<string>; contents: Set<string> }

export async function decide(run: Run): Promise<Decided> {
  const now = Date.now()
  const fingerprints = new Map<string, string>()
  const sightings = run.deps.recent.sightings(now)
  let outcome!: Reconciliation
  const seen: Looked = { sizes: new Set(), strangers: new Set(), contents: new Set() }
  await run.breathe()
  // A move across file systems has a half on each device, and two devices' scans may run at once
  // (the start scans, polling): each scan publishes its half before it reads the other's, so that
  // of two scans at least one sees both, whichever looks first. The files found here that no
  // asset holds first; the assets found vanished as each round finds them (below).
  run.deps.recent.found(run.self, run.strange)
  for (let round = 0; round < ROUNDS; round++) {
    await takeRelinkCandidates(run, seen)
    outcome = await reconcileRound(run, sightings, fingerprints)
    const newcomers = lookAtNewcomers(run, outcome, now, seen)
    const read = await readAskedFingerprints(run, outcome, fingerprints, seen)
    if (!newcomers && !read) break
  }
  // A file that could not be read as the walk saw it is being written: looked at again shortly.
  if (fingerprints.size)
    for (const e of run.disk) if (fingerprints.get(e.path) === '' && changedSince(e)) run.recheck.add(e.path)
  return { now, outcome, fingerprints }
}

/**
 * Relink candidates: assets whose file may have vanished, of the sizes of files no asset has:
 * offline ones, and those another scan under way found vanished (still online in the
 * catalogue: their paths are looked at here, so this scan decides on what it sees itself).
 */
async function takeRelinkCandidates(run: Run, seen: Looked) {
  const { disk, rows } = run
  const { media, recent } = run.deps
  const sizes = new Set<number>()
  const unnamed = (e: DiskEntry) => e.kind === 'file' && !seen.sizes.has(e.size) && !rows.atPath.has(e.path)
  for (const e of run.strange) if (unnamed(e)) sizes.add(e.size)
  for (let i = run.walkedCount; i < disk.length; i++) if (unnamed(disk[i]!)) sizes.add(disk[i]!.size)
  for (const s of sizes) seen.sizes.add(s)
  if (!sizes.size) return
  const vanished = recent.vanished(sizes, run.self)
  const found = await run.port.run(
    (function* () {
      const offline = yield* media.offlineBySizes(sizes)
      const stillNamed: ScanRow[] = []
      for (const v of vanished)
        for (const r of yield* media.atPathForScan(v.path)) if (r.id === v.id) stillNamed.push(r)
      return { offline, stillNamed }
    })(),
  )
  for (const r of found.offline) rows.take(r)
  if (vanished.length) await run.lookAt(found.stillNamed)
}

function reconcileRound(
  run: Run,
  sightings: ReconcileOptions['sightings'],
  fingerprints: ReadonlyMap<string, string>,
): Promise<Reconciliation> {
  const { disk, walkedCount, rows, device, isOwn, underUnread } = run
  const pendingDisk = walkedCount < disk.length ? run.pending.concat(disk.slice(walkedCount)) : run.pending
  const pendingRows = run.settledCount ? rows.list.filter((_, i) => run.inPlace[i] !== 1) : rows.list
  return reconcileSliced(
    pendingDisk,
    { media: pendingRows, projects: run.projects },
    {
      scope: run.looked,
      roots: run.roots,
      rootPresent: run.rootPresent,
      sightings,
      fingerprints,
      outside: run.outside,
      // Which production a new file goes to is the scanned device's watch folder's to say, also in a
      // device nested in it (as before).
      ingestInto: (path) => run.ingestInto(path, device.id),
      // Our own output, and folders not read: neither is judged (unknown is not gone).
      ownOutput: run.unreadKeys.size ? (path) => isOwn(path) || underUnread(path) : isOwn,
      diskFiltered: true, // the walk skipped the same; evidence is at rows' paths, strangers come from walks
    },
    run.breathe,
  )
}

/**
 * Assets going offline now: files of their size seen lately elsewhere (a copy across file
 * systems appears before its original goes), and those other scans under way found (published
 * after this scan's vanished assets are), are looked at again. True when one was taken in.
 */
function lookAtNewcomers(run: Run, outcome: Reconciliation, now: number, seen: Looked): boolean {
  if (!outcome.offline.length) return false
  const { recent } = run.deps
  let again = false
  const wanted = new Set<number>()
  const lost: Vanished[] = []
  for (const id of outcome.offline) {
    const r = run.rows.get(id)
    if (r?.file_size == null || r.file_hash === null) continue
    wanted.add(r.file_size)
    lost.push({ id, path: r.path_file, size: r.file_size })
  }
  recent.lost(run.self, lost)
  // Their size now, not when they were seen: a copy seen half-written has grown since (and
  // polling does not see a file grow).
  if (wanted.size)
    for (const e of [...recent.strangers(now), ...recent.newcomers(wanted, run.self)]) {
      if (seen.strangers.has(e.path) || run.inScopes(e.path)) continue
      seen.strangers.add(e.path)
      const s = look(e.path)
      if (!s?.isFile()) recent.forgetStranger(e.path)
      else if (wanted.has(s.size)) {
        run.disk.push(entryOf(e.path, e.device, s))
        run.outside.add(e.path)
        again = true
      }
    }
  return again
}

/** The fingerprints reconcile asked for, and every asset of those contents. True when any was read. */
async function readAskedFingerprints(
  run: Run,
  outcome: Reconciliation,
  fingerprints: Map<string, string>,
  seen: Looked,
): Promise<boolean> {
  const unread = outcome.needFingerprints.filter((e) => !fingerprints.has(e.path))
  if (!unread.length) return false
  const contents: { size: number; hash: string }[] = []
  for (const [e, hash] of await readFingerprints(run, unread)) {
    fingerprints.set(e.path, hash)
    // Every asset of this content, wherever it is: its path is looked at, so that the relink
    // knows which of them is still in place (no candidate) and which vanished (candidates).
    const content = `${e.size}:${hash}`
    if (hash === '' || seen.contents.has(content)) continue
    seen.contents.add(content)
    contents.push({ size: e.size, hash })
  }
  await run.lookAt(contents.length ? await run.port.run(twinsOf(run, contents)) : [])
  return true
}

/** The assets of these contents, archive-only ones left out (no file of theirs to find). */
function* twinsOf(run: Run, contents: readonly { size: number; hash: string }[]): Work<ScanRow[]> {
  const twins: ScanRow[] = []
  for (const { size, hash } of contents)
    for (const r of yield* run.deps.media.byContent(size, hash)) if (!(r.is_archive && !r.is_production)) twins.push(r)
  return twins
}

const changedSince = (e: DiskEntry) => {
  const s = look(e.path)
  return s !== undefined && (s.size !== e.size || s.mtimeMs !== e.mtimeMs || s.ino !== e.ino)
}
