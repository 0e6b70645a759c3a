// What a task's log lines name of its record, read through the port (see namesForLog).
import type { Port, Work } from '../db/port.ts'

/** How many records' names a subject keeps on PostgreSQL for the later log lines of their tasks. */
const NAMES_KEPT = 1000

/**
 * What a task's log line names of its record (runner.ts Subjects), by the record's id: the runner
 * writes the line at once, so it cannot wait for a read. On SQLite the port answers in the same
 * call: `{ value }`, as read now. On PostgreSQL it answers a promise: a line gets what was read
 * for an earlier line of the task (its start's), and undefined until then.
 */
export function namesForLog<T>(port: Port): (id: number, read: () => Work<T>) => { value: T } | undefined {
  const known = new Map<number, T>()
  return (id, read) => {
    const answer = port.run(read())
    if (!(answer instanceof Promise)) return { value: answer }
    answer.then(
      (value) => {
        if (known.size >= NAMES_KEPT) known.clear()
        known.set(id, value)
      },
      () => {},
    )
    return known.has(id) ? { value: known.get(id) as T } : undefined
  }
}
