// What the watcher remembers of files no asset has (strangers): bounded, newest kept.
import { expect, test } from 'bun:test'
import type { DiskEntry } from '../../src/watch/reconcile.ts'
import { createRecent } from '../../src/watch/recent.ts'

const entry = (n: number): DiskEntry => ({
  path: `/v/f${n}.mov`,
  device: 1,
  kind: 'file',
  dev: 1,
  ino: n,
  stamp: n,
  size: n,
  mtimeMs: n,
})

test('strangers: more than the cap at once keeps the last ones, in order; later ones push the oldest out', () => {
  const recent = createRecent({ maxFiles: 3 })
  recent.remember([entry(1)], 0)
  recent.remember([1, 2, 3, 4, 5].map(entry), 0)
  expect(recent.strangers(0).map((e) => e.ino)).toEqual([3, 4, 5])
  recent.remember([entry(6), entry(4)], 0)
  expect(recent.strangers(0).map((e) => e.ino)).toEqual([5, 6, 4])
})

const file = (n: number) => ({ kind: 'file' as const, dev: 1, ino: n, stamp: n })

test('file sightings: within their time, the newest kept under the cap, a path seen again counted from then', () => {
  const recent = createRecent({ maxFiles: 3, fileMs: 100 })
  for (const n of [1, 2, 3]) recent.saw(`/v/f${n}.mov`, file(n), 0)
  // f1 seen again (another file there now): it is the newest, so the cap drops f2 next.
  recent.saw('/v/f1.mov', file(11), 10)
  recent.saw('/v/f4.mov', file(4), 20)
  const at20 = recent.sightings(20)
  expect(['/v/f1.mov', '/v/f2.mov', '/v/f3.mov', '/v/f4.mov'].map((p) => at20.get(p)?.ino)).toEqual([
    11,
    undefined,
    3,
    4,
  ])
  // The file once at f3 turns up under a new name: f3 is where it was seen, while within its time.
  expect(
    recent.formerFiles(
      [{ path: '/v/moved.mov', device: 1, kind: 'file', dev: 1, ino: 3, stamp: 3, size: 0, mtimeMs: 0 }],
      50,
    ),
  ).toEqual(['/v/f3.mov'])
  expect(
    recent.formerFiles(
      [{ path: '/v/moved.mov', device: 1, kind: 'file', dev: 1, ino: 3, stamp: 3, size: 0, mtimeMs: 0 }],
      150,
    ),
  ).toEqual([])
  // Out of time: never read as current, and dropped a few at a time as new sightings come.
  expect(recent.sightings(150).get('/v/f4.mov')).toBeUndefined()
  for (let n = 100; n < 110; n++) recent.saw(`/v/g${n}.mov`, file(n), 200)
  const at200 = recent.sightings(200)
  expect(
    ['/v/f1.mov', '/v/f3.mov', '/v/f4.mov', '/v/g107.mov', '/v/g108.mov', '/v/g109.mov'].map((p) => at200.get(p)?.ino),
  ).toEqual([undefined, undefined, undefined, 107, 108, 109])
})

test('scans under way: each reads what the others found (newcomers and vanished assets, by size), never its own, and nothing once the finder has ended', () => {
  const recent = createRecent()
  const [store, shm] = [{}, {}]
  recent.found(shm, [entry(7), entry(8)])
  recent.lost(store, [{ id: 1, path: '/v/a.mov', size: 7 }])
  recent.lost(store, [{ id: 2, path: '/v/b.mov', size: 9 }])
  expect(recent.newcomers(new Set([7, 9]), store)).toEqual([entry(7)])
  expect(recent.newcomers(new Set([7]), shm)).toEqual([])
  expect(recent.vanished(new Set([7, 8]), shm)).toEqual([{ id: 1, path: '/v/a.mov', size: 7 }])
  expect(recent.vanished(new Set([7]), store)).toEqual([])
  recent.ended(shm)
  recent.ended(store)
  expect(recent.newcomers(new Set([7, 8]), {})).toEqual([])
  expect(recent.vanished(new Set([7, 9]), {})).toEqual([])
})
