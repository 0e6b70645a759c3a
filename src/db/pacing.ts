// When the checkpoint thread (checkpoint.worker.ts) looks next. While the WAL grows: as often as
// lets about TARGET_FRAMES pages gather between two checkpoints, judged from how fast the last
// wait filled it (at 2,000 imports a second, every few dozen ms; under a trickle, every
// BUSY_MAX_MS, so that a burst after a trickle fills the WAL for at most that long before the
// wait shortens). Not every 20 ms whatever comes: each checkpoint that copies everything starts
// the WAL over, and that restart syncs the WAL's header (synchronous = NORMAL) under the write
// lock, which the server's commits then wait for (the thread makes the restart itself now:
// checkpoint.worker.ts, claimRestart). A drop of 20,000 files made 4,020 fsyncs (5.8 s in all)
// with a checkpoint every 20 ms, 1,281 (3.7 s) paced so. Once the WAL stands still the wait
// doubles up to `slowMs` (an idle server wakes a few times a minute).

/**
 * Pages (4 KiB each) a checkpoint should find in the WAL while writes come: 2 MiB, far below the
 * server's own backstop (10,000). Small on purpose: what stalls the server is its restart fsync
 * meeting this thread's fsync of the database file, and a smaller checkpoint's fsync is shorter.
 * During a drop of 20,000 files, the longest /api/health wait was 111-113 ms with 2,000 pages,
 * 98-140 ms with 8,000, 80-84 ms with 500 and 78-92 ms with 200 (docs/benchmarks.md, stall).
 */
export const TARGET_FRAMES = 500
/** The longest wait between checkpoints while the WAL still grows. */
export const BUSY_MAX_MS = 250

/**
 * The wait after a checkpoint that found `log` pages in the WAL (`seen` the time before), having
 * waited `wait` ms since then.
 */
export function nextWait(
  log: number,
  seen: number,
  wait: number,
  { fastMs, slowMs }: { fastMs: number; slowMs: number },
): number {
  // `log`: the pages in the WAL, nearly all written since the last checkpoint started it over.
  if (log !== seen && log > 0) return Math.min(Math.max(Math.round((TARGET_FRAMES * wait) / log), fastMs), BUSY_MAX_MS)
  return Math.min(wait * 2, slowMs)
}
