// Work that must wait for a commit: what a transaction tells the world (the live events of
// GET /api/events/) leaves only once its writes are durable, and never for writes rolled back.
// Queued per connection, flushed by whichever transaction wrapper ends the outermost transaction:
// drizzle's db.transaction (client.ts wraps it), the bare bun:sqlite ones made with committed(),
// and the read transaction of a GET (client.ts readSnapshotOf).
import type { Database } from 'bun:sqlite'
import type { Log } from '../util/log.ts'

type Queue = { fns: (() => void)[]; log?: Log }

const queues = new WeakMap<Database, Queue>()

function queueOf(client: Database): Queue {
  let queue = queues.get(client)
  if (!queue) queues.set(client, (queue = { fns: [] }))
  return queue
}

/**
 * Runs `fn` once what the connection has written so far is committed: at once outside a
 * transaction (an autocommitted statement is already durable), else after the outermost
 * transaction commits; never when it, or the savepoint `fn` was queued in, rolls back. `fn` must
 * not throw into the writer: a throw is logged (afterCommitLog) and the other functions still run.
 */
export function afterCommit(db: { $client: Database }, fn: () => void): void {
  const client = db.$client
  if (client.inTransaction) queueOf(client).fns.push(fn)
  else run(queueOf(client), fn)
}

/** Where a function queued by afterCommit that throws is logged (core.ts gives the service's log). */
export function afterCommitLog(db: { $client: Database }, log: Log) {
  queueOf(db.$client).log = log
}

function run(queue: Queue, fn: () => void) {
  try {
    fn()
  } catch (error) {
    const fields = { error: error instanceof Error ? error.message : String(error) }
    if (queue.log) queue.log.error('after-commit work failed', fields)
    else console.error('after-commit work failed', fields)
  }
}

function flush(queue: Queue) {
  // Swapped first: a function that writes in a transaction of its own queues into a fresh list,
  // which that transaction flushes.
  const fns = queue.fns
  queue.fns = []
  for (const fn of fns) run(queue, fn)
}

/**
 * Runs `body`, a whole transaction or savepoint begun and ended inside it, and then: when it threw
 * (rolled back), forgets what was queued during it, keeping what an enclosing transaction queued
 * before; when it returned and ended the outermost transaction (committed), runs the queue.
 */
export function settling<T>(client: Database, body: () => T): T {
  const queue = queueOf(client)
  const mark = queue.fns.length
  let result: T
  try {
    result = body()
  } catch (error) {
    queue.fns.length = mark
    throw error
  }
  if (!client.inTransaction && queue.fns.length) flush(queue)
  return result
}

/** A bun:sqlite transaction function (`client.transaction(fn)`) whose calls settle afterCommit's queue. */
export function committed<A extends unknown[], R>(client: Database, fn: (...args: A) => R) {
  const tx = client.transaction(fn)
  const call = (...args: A): R => settling(client, () => tx(...args))
  return Object.assign(call, { immediate: (...args: A): R => settling(client, () => tx.immediate(...args)) })
}
