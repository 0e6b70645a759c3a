// The checkpointer's thread (see checkpointer.ts): its own connection to the catalogue, which
// copies what the WAL holds back into the database file while the server's thread goes on
// writing. A PASSIVE checkpoint never waits for a lock and never makes a writer wait.
import { Database } from 'bun:sqlite'
import { nextWait } from './pacing.ts'
import { lowerThreadPriority } from '../storage/threads.ts'

export type CheckpointerMessage = { file: string; fastMs: number; slowMs: number } | 'stop'
export type CheckpointerReport = { error: string } | 'stopped'

declare const self: Worker

// Checkpoints can wait a little for a core; the server's requests should not (storage/threads.ts).
lowerThreadPriority()

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
  const checkpoint = db.prepare<{ busy: number; log: number; checkpointed: number }, []>(
    'PRAGMA wal_checkpoint(PASSIVE)',
  )
  const restart = claimRestart(db)
  // Paced by how fast the WAL fills (pacing.ts).
  let wait = fastMs
  let seen = -1
  const tick = () => {
    if (!db) return
    try {
      const { log, checkpointed } = checkpoint.get()!
      // More than the one page of the last claim copied, and all of it: the WAL starts over now.
      if (log > 1 && checkpointed === log) restart()
      wait = nextWait(log, seen, wait, { fastMs, slowMs })
      seen = log
    } catch (error) {
      self.postMessage({ error: (error as Error).message } satisfies CheckpointerReport)
      wait = slowMs
    }
    timer = setTimeout(tick, wait)
  }
  tick()
}

/**
 * Starts the WAL over from this thread, right after a checkpoint that copied all of it. The first
 * commit after such a checkpoint writes the WAL's new header and, at synchronous = NORMAL, syncs
 * it (a header not on disk could let a power loss replay stale frames over newer pages). Left to
 * the server, that fsync ran in its only thread and, meeting this thread's fsync of the database
 * file or the file system's journal commit, held every request for 40 to 140 ms during a drop of
 * 20,000 files (docs/benchmarks.md, stall). So this thread commits first, a write of one page
 * that changes nothing (user_version to its own value; nothing else uses it), and the restart's
 * fsync is ours, made just after the checkpoint's own, while the journal has almost nothing to
 * commit. The server's commits then only append: it never syncs while this thread runs (its own
 * automatic checkpoint, the backstop, aside). Never waited for: when a writer holds the lock,
 * that writer's commit appends, and the next checkpoint tries again. A commit of the server's that
 * slips in between still restarts the WAL itself, as before.
 */
function claimRestart(db: Database) {
  const version = db.prepare<{ user_version: number }, []>('PRAGMA user_version')
  return () => {
    db.run('PRAGMA busy_timeout = 0')
    try {
      db.run('BEGIN IMMEDIATE')
    } catch {
      return // a writer is at work
    } finally {
      db.run('PRAGMA busy_timeout = 5000')
    }
    try {
      db.run(`PRAGMA user_version = ${version.get()!.user_version}`)
      db.run('COMMIT')
    } catch (error) {
      if (db.inTransaction) db.run('ROLLBACK')
      throw error
    }
  }
}
