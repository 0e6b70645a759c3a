// A process's threads as /proc shows them (Linux), read by the tests of the helper threads'
// priority (test/storage/threads.test.ts, test/cli/e2e.test.ts) on their own, not through
// src/storage/threads.ts: the tests do not trust what they test.
import { readFileSync, readdirSync } from 'node:fs'

/** The nice value in a /proc .../stat line: field 19, the 17th after the name's closing parenthesis. */
export const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])

/** The calling thread's nice value. */
export const ownNice = () => niceOf(readFileSync('/proc/thread-self/stat', 'utf8'))

/** Each thread of `pid`: its id, name and nice value (a thread that ends while they are read is left out). */
export function threadsOf(pid: number): { tid: number; name: string; nice: number }[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
    } catch {
      return []
    }
    return [{ tid: Number(tid), name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: niceOf(stat) }]
  })
}
