// The helper threads' lower CPU priority (src/storage/threads.ts): a thread that asks for it gets
// nice 10, and only that thread (the nice value is per thread on Linux; the call with PRIO_PROCESS
// and 0 must not lower the whole process, or every request would wait with it).
import { expect, test } from 'bun:test'
import { HELPER_NICE, threadNice } from '../../src/storage/threads.ts'
import { ownNice, threadsOf } from '../helpers/threads.ts'

test.skipIf(process.platform !== 'linux')(
  'a helper thread lowers its own priority to nice 10, and the process keeps its own',
  async () => {
    const own = ownNice()
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
    expect(ownNice()).toBe(own)
    expect(threadsOf(process.pid).find((t) => t.tid === process.pid)!.nice).toBe(own)
  },
)

test.skipIf(process.platform !== 'linux')("threadNice reads this thread's nice value", () => {
  expect(threadNice()).toBe(ownNice())
})
