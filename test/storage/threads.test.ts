// The helper threads' lower CPU priority (src/storage/threads.ts): a thread that asks for it gets
// nice 10, and only that thread (the nice value is per thread on Linux; the call with PRIO_PROCESS
// and 0 must not lower the whole process, or every request would wait with it).
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { HELPER_NICE, threadNice } from '../../src/storage/threads.ts'

const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])

test.skipIf(process.platform !== 'linux')('a helper thread lowers its own priority to nice 10, and the process keeps its own', async () => {
  const own = niceOf(readFileSync('/proc/thread-self/stat', 'utf8'))
  const worker = new Worker(new URL('./fixtures/priority.worker.ts', import.meta.url).href)
  const report = await new Promise<{ before: number; problem: string | null; after: number }>((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data)
    worker.onerror = (e) => reject(new Error(e.message))
  })
  worker.terminate()
  expect(HELPER_NICE).toBe(10)
  // Lowered to 10, never raised (a suite run under `nice -n 15` keeps 15).
  expect(report).toEqual({ before: own, problem: null, after: Math.max(own, HELPER_NICE) })
  // This thread, and every other thread of the process but the helper, kept its nice value.
  expect(niceOf(readFileSync('/proc/thread-self/stat', 'utf8'))).toBe(own)
  expect(niceOf(readFileSync(`/proc/${process.pid}/stat`, 'utf8'))).toBe(own)
})

test.skipIf(process.platform !== 'linux')("threadNice reads this thread's nice value", () => {
  expect(threadNice()).toBe(niceOf(readFileSync('/proc/thread-self/stat', 'utf8')))
})
