// Checkpoints the catalogue from a thread of its own while the server runs.
//
// In WAL mode every commit appends the pages it changed to the -wal file, and a checkpoint copies
// them back into the database file. By default the connection that commits does it, inside that
// commit, every 1,000 pages: under a steady stream of imports (about 20 pages each) the server's
// one thread stopped every few dozen imports to copy and fsync, and the same hot pages (the
// task queue's index, the newest rows) were copied again each time. SQLite's advice for this
// load is to checkpoint from another thread or process. Here a worker thread with its own
// connection runs PASSIVE checkpoints, which never take the write lock, a few dozen times a
// second while the WAL grows. The server's connection keeps an automatic checkpoint, but at
// 10,000 pages: a backstop that bounds the WAL (about 40 MB) if the worker falls behind or
// stops, and that finds almost everything already copied when it runs.
//
// Durability does not change: a commit is in the WAL, which is what a crash recovers from,
// before and after this. Measured in docs/benchmarks.md (Import).
import type { Db } from './client.ts'
import type { CheckpointerMessage, CheckpointerReport } from './checkpoint.worker.ts'
import type { Log } from '../util/log.ts'
import { embeddedUrl } from '../util/embedded.ts'

/** The server's own automatic checkpoint while the worker runs, and without it (SQLite's default). */
const BACKSTOP_PAGES = 10_000
const DEFAULT_PAGES = 1_000
const STOP_WAIT_MS = 5_000

/**
 * The thread's code: beside this file when run from source; in the compiled executable, an
 * entrypoint of its own (build.ts) that sits where src/db/ sits under the executable's root
 * (src/util/embedded.ts says where that is on each system).
 */
const WORKER_URL = embeddedUrl('db/checkpoint.worker.js') ?? new URL('./checkpoint.worker.ts', import.meta.url).href

export type Checkpointer = { stop(): Promise<void> }

export function startCheckpointer(db: Db, log: Log, { fastMs = 20, slowMs = 2_000 } = {}): Checkpointer {
  const client = db.$client
  const worker = new Worker(WORKER_URL)
  let running = true
  /** Back to checkpointing in the server's thread: the worker failed or is stopping. */
  const alone = () => {
    if (!running) return
    running = false
    client.run(`PRAGMA wal_autocheckpoint = ${DEFAULT_PAGES}`)
  }
  let stopped: () => void = () => {}
  worker.onmessage = (event: MessageEvent<CheckpointerReport>) => {
    if (event.data === 'stopped') return stopped()
    log.warn('the checkpoint thread failed; the server checkpoints by itself', { error: event.data.error })
    alone()
    worker.terminate()
  }
  worker.onerror = (event) => {
    log.warn('the checkpoint thread failed; the server checkpoints by itself', { error: event.message })
    alone()
    worker.terminate()
  }
  // The thread must not keep a stopping process alive.
  worker.unref()
  client.run(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`)
  worker.postMessage({ file: client.filename, fastMs, slowMs } satisfies CheckpointerMessage)

  return {
    /** Ends the thread once its connection is closed (before the server's: the last to close cleans up the WAL). */
    async stop() {
      if (!running) return
      alone()
      // A thread stuck in a long checkpoint is not waited for past a few seconds (its copy is
      // safe to cut: the WAL stays the truth until a checkpoint completes).
      let timer: Timer | undefined
      await new Promise<void>((resolve) => {
        stopped = resolve
        timer = setTimeout(resolve, STOP_WAIT_MS)
        worker.postMessage('stop' satisfies CheckpointerMessage)
      })
      clearTimeout(timer)
      worker.terminate()
    },
  }
}
