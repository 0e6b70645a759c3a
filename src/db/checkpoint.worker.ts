// The checkpointer's thread (see checkpointer.ts): its own connection to the catalogue, which
// copies what the WAL holds back into the database file while the server's thread goes on
// writing. A PASSIVE checkpoint never waits for a lock and never makes a writer wait.
import { Database } from 'bun:sqlite'
import { nextWait } from './pacing.ts'

export type CheckpointerMessage = { file: string; fastMs: number; slowMs: number } | 'stop'
export type CheckpointerReport = { error: string } | 'stopped'

declare const self: Worker

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
  // Paced by how fast the WAL fills (pacing.ts).
  let wait = fastMs
  let seen = -1
  const tick = () => {
    if (!db) return
    try {
      const { log } = checkpoint.get()!
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
