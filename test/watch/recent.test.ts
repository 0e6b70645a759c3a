// What the watcher remembers of files no asset has (strangers): bounded, newest kept.
import { expect, test } from 'bun:test'
import type { DiskEntry } from '../../src/watch/reconcile.ts'
import { createRecent } from '../../src/watch/recent.ts'

const entry = (n: number): DiskEntry => ({ path: `/v/f${n}.mov`, device: 1, kind: 'file', dev: 1, ino: n, stamp: n, size: n, mtimeMs: n })

test('strangers: more than the cap at once keeps the last ones, in order; later ones push the oldest out', () => {
  const recent = createRecent({ maxFiles: 3 })
  recent.remember([entry(1)], 0)
  recent.remember([1, 2, 3, 4, 5].map(entry), 0)
  expect(recent.strangers(0).map((e) => e.ino)).toEqual([3, 4, 5])
  recent.remember([entry(6), entry(4)], 0)
  expect(recent.strangers(0).map((e) => e.ino)).toEqual([5, 6, 4])
})
