// util/pace.ts: work runs at once until a turn of the event loop has spent its slice, then waits
// for the next turns, in order.
import { expect, test } from 'bun:test'
import { createPacer } from '../../src/util/pace.ts'

// The pacer's clock is the test's: a piece "takes" the time it adds, whatever the machine's speed.
let now = 0
const busy = (ms: number) => {
  now += ms
}

test('a burst: the first pieces run at once, the rest after the slice is spent wait for the next turns, all in the order they came', async () => {
  const pace = createPacer(5, () => now)
  const done: number[] = []
  pace(() => done.push(1))
  expect(done).toEqual([1]) // at once
  pace(() => (busy(10), done.push(2)))
  for (let i = 3; i <= 6; i++) pace(() => done.push(i))
  expect(done).toEqual([1, 2]) // the slice is spent: the rest waits
  for (let turn = 0; turn < 10 && done.length < 6; turn++) await new Promise((r) => setImmediate(r))
  expect(done).toEqual([1, 2, 3, 4, 5, 6])
  // A later turn starts a new slice: a single piece runs at once again.
  await new Promise((r) => setImmediate(r))
  pace(() => done.push(7))
  expect(done.at(-1)).toBe(7)
})

test('a piece that throws does not stop the others', async () => {
  const pace = createPacer(5, () => now)
  const done: string[] = []
  pace(() => {
    throw new Error('boom')
  })
  pace(() => done.push('after'))
  expect(done).toEqual(['after'])
})
