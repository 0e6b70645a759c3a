// The checkpointer's thread (see checkpointer.ts): its own connection to the catalogue, which
// copies what the WAL holds back into the database file while the server's thread goes on
// writing. A PASSIVE checkpoint never waits for a lock and never makes a writer wait.
import { Database } from 'bun:sqlite'

export type CheckpointerMessage = { file: string; fastMs: number; slowMs: number } | 'stop'
export type CheckpointerReport = { error: string } | 'stopped'

declare const self: Worker

/** Pages (4 KiB each) a checkpoint should find in the WAL while writes come: 8 MiB, far below the server's own backstop (10,000). */
const TARGET_FRAMES = 2_000
/** The longest wait between checkpoints while the WAL still grows. */
const BUSY_MAX_MS = 250

let db: Database | undefined
let timer: Timer | undefined

self.onmessage = (event: MessageEvent<CheckpointerMessage>) => {
  if (event.data === 'stop') {
    clearTimeout(timer)
    // Closed for good (close(true) finalizes the statements that would keep it open), so that
    // the server's connection, closing last, checkpoints everything and removes the WAL.
    db?.close(true)
    db = undefined
    self.postMessage('stopped' satisfies CheckpointerReport)
    return
  }
  const { file, fastMs, slowMs } = event.data
  try {
    db = new Database(file, { readwrite: true, create: false })
    db.run('PRAGMA busy_timeout = 5000')
    // The same durability as the server's connection: the database file is synced at the end of a checkpoint.
    db.run('PRAGMA synchronous = NORMAL')
  } catch (error) {
    self.postMessage({ error: (error as Error).message } satisfies CheckpointerReport)
    return
  }
  const checkpoint = db.prepare<{ busy: number; log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(PASSIVE)')
  // While the WAL grows: as often as lets about TARGET_FRAMES pages gather between two
  // checkpoints, judged from how fast the last wait filled it (at 2,000 imports a second, every
  // few dozen ms; under a trickle, every BUSY_MAX_MS, so that a burst after a trickle fills the
  // WAL for at most that long before the wait shortens). Not every 20 ms whatever comes: each
  // checkpoint that copies everything makes the server's next commit start the WAL over, and
  // that restart syncs the WAL's header (synchronous = NORMAL) in the server's thread. A drop of
  // 20,000 files made 4,020 fsyncs (5.8 s in all) with a checkpoint every 20 ms, 1,281 (3.7 s)
  // paced so. Rarely once the WAL stands still (an idle server wakes a few times a minute).
  let wait = fastMs
  let seen = -1
  const tick = () => {
    if (!db) return
    try {
      const { log } = checkpoint.get()!
      // `log`: the pages in the WAL, nearly all written since the last checkpoint started it over.
      if (log !== seen && log > 0) wait = Math.min(Math.max(Math.round((TARGET_FRAMES * wait) / log), fastMs), BUSY_MAX_MS)
      else wait = Math.min(wait * 2, slowMs)
      seen = log
    } catch (error) {
      self.postMessage({ error: (error as Error).message } satisfies CheckpointerReport)
      wait = slowMs
    }
    timer = setTimeout(tick, wait)
  }
  tick()
}
