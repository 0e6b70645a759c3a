// Phase 5, apply: the decisions that stand are written in one transaction, through the media
// service (assets offline, online, relocated) and the project service (projects offline or
// online). Then the paths to look at again are asked for, what this scan saw is remembered, and
// the fingerprints that are missing or stale are read and written. Hands on (Applied) the
// decisions not applied and the counts for the report.
import { type Work, tx } from '../../db/port.ts'
import { assetsBeingMoved } from '../../modules/assetimport/service.ts'
import { system } from '../../modules/history/service.ts'
import { setOnlineUnrecorded } from '../../modules/projectassets/service.ts'
import { fingerprintAll } from '../../storage/fingerprint.ts'
import { CancelledError } from '../../storage/fs.ts'
import { isInside } from '../../storage/paths.ts'
import type { Decided } from './decide.ts'
import type { Gathered } from './gather.ts'
import type { ScanRun } from './run.ts'
import type { Verified } from './verify.ts'
import type { Walked } from './walk.ts'

export type Applied = {
  /** Decisions not applied: the asset changed meanwhile (looked at again), or its path is another's in production. */
  skipped: Set<number>
  /** The offline and online decisions given to the media service (not those of assets an import is moving). */
  applied: { offline: number; online: number }
  /** The assets whose fingerprint was missing or stale. */
  fingerprinted: number
}

type Run = ScanRun & Walked & Gathered & Decided & Verified

export async function apply(run: Run): Promise<Applied> {
  const { deps, device, recheck, rows, relocations, now } = run
  const { skipped, changedMeanwhile, applied } = await run.port.run(tx(() => write(run)))
  // The catalogue now says what the disk does: a start scan opens the watch folders here, before
  // the (possibly long) reading of missing fingerprints below.
  deps.scanned?.(device.id, run.task.params.paths === null)
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
  for (const path of run.missing) deps.recent.gone(path)
  for (const d of run.dirs) deps.recent.saw(d.path, { kind: 'dir', dev: d.dev, ino: d.ino, stamp: d.stamp }, now)
  for (const r of relocations) deps.recent.forgetStranger(r.path)

  const fingerprinted = await fingerprintStale(run, skipped)
  return { skipped, applied, fingerprinted }
}

/** The transaction's body: the media service's and the project service's writes. */
function* write(run: Run): Work<{ skipped: Set<number>; changedMeanwhile: number[]; applied: Applied['applied'] }> {
  const { db, deps, rows, relocations, offline, online, outcome } = run
  const { media } = deps
  // An asset an import is moving is out of production until its task has the file in place
  // (clients wait for that): its file at the old path is not this scan's to bring online.
  const moving = yield* assetsBeingMoved(db)
  const free = (id: number) => !moving.has(id)
  const off = offline.filter(free)
  const on = online.filter(free)
  const applied = { offline: off.length, online: on.length }
  const at = new Map(relocations.map((r) => [r.id, r.path]))
  const result = yield* media.applyScan({
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
  const skipped = new Set([...result.changed, ...result.conflicts])
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
    if (deps.projects) yield* deps.projects.setOnline([...ids], on, system('watcher'))
    // Tests of the scan alone build it without the project service: the same write, without history.
    else yield* setOnlineUnrecorded(db, [...ids], on)
  }
  return { skipped, changedMeanwhile: result.changed, applied }
}

/**
 * Fingerprints that are missing or stale (the file changed, or is new to its asset), read off
 * the request path here, a bounded number of bytes per file. Answers how many there were.
 */
async function fingerprintStale(run: Run, skipped: ReadonlySet<number>): Promise<number> {
  const { port, signal, progress, filesFound, slice, dropped } = run
  const stale = run.outcome.fingerprint.filter((f) => !dropped.has(f.id) && !skipped.has(f.id))
  if (!stale.length) return 0
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
    // Awaited on PostgreSQL only: on SQLite the port writes them in the same call.
    const written = port.run(run.deps.media.setFingerprints(list.slice(i, i + 200)))
    if (written instanceof Promise) await written
  }
  return stale.length
}
