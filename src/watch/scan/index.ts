// The reconcile road (docs/watcher.md): every start-up scan, timed rescan and watcher batch is one
// `scan` task {device, paths}, run here as named phases sharing one run (run.ts):
//   walk    what is on disk there (walk.ts);
//   gather  what the catalogue says of it (gather.ts);
//   decide  with a pure function (reconcile.ts: identity first, then sightings, the path, content),
//           in rounds that read fingerprints and look at more paths (decide.ts);
//   verify  each decision against the disk once more (verify.ts);
//   apply   them through the media service in one transaction, then read the fingerprints that
//           are missing (apply.ts);
//   ingest  settled new files of a watch folder through the same register() as
//           POST /api/asset/import/ (ingest.ts).
// A camera card is one unit (cards.ts, docs/cards.md): the walk of a folder inside one walks the
// whole card, and the ingest phase imports a card whole, one asset per clip, once all of it settled.
// Each phase adds what it found to the run and hands it on; the scan reports the counts at the
// end. Events are hints; this is the truth. The watcher never deletes a catalogue record: missing
// files only go offline.
import { existsSync } from 'node:fs'
import type { Port } from '../../db/port.ts'
import type { Handler, TaskContext } from '../../tasks/runner.ts'
import { type Applied, apply } from './apply.ts'
import { type Decided, decide } from './decide.ts'
import { type Gathered, gather } from './gather.ts'
import { type Ingested, ingest } from './ingest.ts'
import { type ScanDeps, type ScanRun, readStart, startRun } from './run.ts'
import { type Verified, verify } from './verify.ts'
import { type Walked, walk } from './walk.ts'

/** Entries from which a scan's garbage is collected at once (see collect). */
const BIG_SCAN = 10_000
/** When a big scan's garbage is collected, after it ends (see collect). */
const BIG_SCAN_COLLECT_MS = [0, 1000]

type Scanned = ScanRun & Walked & Gathered & Decided & Verified & Applied & Ingested

export function scanHandler(port: Port, deps: ScanDeps): Handler<'scan'> {
  /**
   * Names not UTF-8 already given a failed ImportLog (by folder and name as shown), so each gets
   * one, not one per scan.
   */
  const undecodableLogged = new Set<string>()
  return async (ctx) => {
    /** This scan in the scans under way (recent's newcomers and vanished assets). */
    const self = {}
    try {
      await scan(port, deps, ctx, self, undecodableLogged)
    } finally {
      deps.recent.ended(self)
      deps.scanned?.(ctx.task.params.device, ctx.task.params.paths === null)
    }
  }
}

async function scan(port: Port, deps: ScanDeps, ctx: TaskContext<'scan'>, self: object, logged: Set<string>) {
  const start = await port.run(readStart(port.db, ctx.task.params.device))
  if (!start) return // the device was removed
  // An unmounted device marks nothing offline: its files are not known to be gone.
  if (!existsSync(start.device.path))
    return ctx.report({ seen: 0, offline: 0, online: 0, moved: 0, imported: 0, waiting: 0, unavailable: 1 })
  const run = startRun(port, deps, ctx, start, self, logged)
  const walked = Object.assign(run, await walk(run))
  const gathered = Object.assign(walked, await gather(walked))
  const decided = Object.assign(gathered, await decide(gathered))
  const verified = Object.assign(decided, verify(decided))
  const applied = Object.assign(verified, await apply(verified))
  const scanned = Object.assign(applied, await ingest(applied))
  reportOf(scanned, ctx.report)
  collect(scanned)
}

/** The scan's counts, shown in its task. */
function reportOf(run: Scanned, report: TaskContext<'scan'>['report']) {
  const { filesFound, skipped, relocations, held, outcome, recheck, unread } = run
  run.progress({ files_total: filesFound(), files_done: filesFound() })
  const counts = { identity: 0, sighting: 0, path: 0, folder: 0, content: 0 }
  for (const r of relocations) if (!skipped.has(r.id)) counts[r.by]++
  report({
    seen: run.disk.filter((e) => e.kind === 'file').length,
    offline: run.applied.offline - run.offline.filter((id) => skipped.has(id)).length,
    online: run.applied.online - run.online.filter((id) => skipped.has(id)).length,
    moved: counts.identity + counts.sighting + counts.folder,
    relinked: counts.content,
    saved_anew: counts.path,
    imported: run.imported,
    waiting: run.waiting.length,
    fingerprinted: run.fingerprinted,
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
}

/**
 * A walk of a big tree leaves about 60 MB per 100,000 entries behind (its entries, the
 * catalogue rows, reconcile's maps). The collector would free it only later, under whatever
 * comes next: collect it once this scan's frame is gone, and again a second later (JSC scans
 * the machine stack conservatively; right after the task, stale slots still held them).
 * Measurements: docs/benchmarks.md. Whole-device scans only (start, rescans: rare): a drop of
 * 20,000 files rescans its folder again and again, and a full collection each time held every
 * request for about 100 ms (bench/stall.ts); there the collector's own pace is kept.
 */
function collect(run: ScanRun) {
  if (run.task.params.paths === null && run.disk.length >= BIG_SCAN)
    for (const ms of BIG_SCAN_COLLECT_MS) setTimeout(() => Bun.gc(true), ms).unref()
}
