// Returning the memory of one big pass to the system. A full scan of a share (or the watcher's
// first walk of it) makes a few hundred thousand short-lived objects, 100-150 MB for 100,000
// files; left to the collector's own pace, a resting service keeps that footprint for minutes,
// which on a NAS is memory the file cache and the other services do not get. After such a pass
// (rare: at start, on a new device, once an hour) one full collection brings it back down.
import { gc } from 'bun'

/** Entries a pass must have touched for a full collection to be worth its pause (tens of ms). */
export const BIG_PASS = 10_000

export function afterBigPass(entries: number): void {
  if (entries >= BIG_PASS) gc(true)
}
