// The watch aggregator (src/watch/aggregator.ts): events and times in, batches out. No timers:
// time is a number the test moves.
import { expect, test } from 'bun:test'
import { type WatchEvent, createAggregator, foldPaths } from '../../src/watch/aggregator.ts'

const ev = (type: WatchEvent['type'], path: string, device = 1): WatchEvent => ({ device, type, path })

test('a rename: the new name is due at once, the old one only after the move window', () => {
  const a = createAggregator({ moveWindowMs: 2000 })
  a.add(ev('unlink', 'day/old.mov'), 1000)
  a.add(ev('add', 'day/new.mov'), 1010)
  const timeline = [1010, 1500, 2999, 3000, 5000].map((now) => [now, a.nextAt(), a.due(now)])
  expect(timeline).toEqual([
    [1010, 1010, [{ device: 1, paths: ['day/new.mov'] }]],
    [1500, 3000, []],
    [2999, 3000, []],
    [3000, 3000, [{ device: 1, paths: ['day/old.mov'] }]],
    [5000, undefined, []],
  ])
})

test('a held removal is released with, and after, the adds of the call that releases it', () => {
  const a = createAggregator()
  a.add(ev('unlink', 'a.mov'), 0)
  a.add(ev('add', 'b.mov'), 2000)
  a.add(ev('change', 'c.wav'), 2000)
  expect(a.due(2000)).toEqual([{ device: 1, paths: ['b.mov', 'c.wav', 'a.mov'] }])
})

test('a removal refreshed within the window waits for quiet, but never longer than maxHoldMs', () => {
  const a = createAggregator({ moveWindowMs: 2000 }) // maxHoldMs 12000
  a.add(ev('unlinkDir', 'tree'), 0)
  const released: [number, unknown][] = []
  for (let t = 1000; t <= 14_000; t += 1000) {
    a.add(ev('unlink', `tree/f${t}.mov`), t) // covered by 'tree', refreshes it
    released.push([t, a.due(t)])
  }
  expect(released.filter(([, b]) => (b as unknown[]).length > 0)).toEqual([[12_000, [{ device: 1, paths: ['tree/'] }]]])
  // What came after the release is held on its own, each 2 s after it came.
  expect([a.due(14_999), a.due(15_000), a.due(16_000)]).toEqual([
    [],
    [{ device: 1, paths: ['tree/f13000.mov'] }],
    [{ device: 1, paths: ['tree/f14000.mov'] }],
  ])
})

test('an add cancels a held removal of the same path; a removal cancels an add not yet released', () => {
  const a = createAggregator()
  a.add(ev('unlink', 'x.mov'), 0)
  a.add(ev('add', 'x.mov'), 100)
  a.add(ev('add', 'y.mov'), 100)
  a.add(ev('unlink', 'y.mov'), 110)
  expect([a.due(110), a.due(2109), a.due(2110), a.due(9000)]).toEqual([
    [{ device: 1, paths: ['x.mov'] }],
    [],
    [{ device: 1, paths: ['y.mov'] }],
    [],
  ])
})

test('more than 128 changed children of a folder: the folder is scanned; the root takes up to 512', () => {
  const run = (n: number, folder: string) => {
    const a = createAggregator()
    for (let i = 0; i < n; i++) a.add(ev('add', `${folder}clip${i}.mov`), 0)
    return a.due(0)
  }
  expect(run(128, 'card/')[0]!.paths!.length).toBe(128)
  expect(run(129, 'card/')).toEqual([{ device: 1, paths: ['card/'] }])
  expect(run(129, 'a/b/card/')).toEqual([{ device: 1, paths: ['a/b/card/'] }])
  expect(run(300, '')[0]!.paths!.length).toBe(300)
})

test('folding cascades upward', () => {
  const a = createAggregator({ parentAfter: 2, deviceAfter: 100 })
  for (const b of ['b1', 'b2', 'b3']) for (const f of ['f1', 'f2', 'f3']) a.add(ev('add', `shoot/${b}/${f}.mov`), 0)
  a.add(ev('add', 'other.mov'), 0)
  expect(a.due(0)).toEqual([{ device: 1, paths: ['shoot/', 'other.mov'] }])
})

test('more than 512 paths on one device: the whole device (null)', () => {
  const run = (n: number) => {
    const a = createAggregator()
    for (let i = 0; i < n; i++) a.add(ev('add', `d${i}/clip.mov`), 0)
    a.add(ev('add', 'on-two.mov', 2), 0)
    return a.due(0).map((b) => ({ device: b.device, count: b.paths?.length ?? null }))
  }
  expect(run(512)).toEqual([
    { device: 1, count: 512 },
    { device: 2, count: 1 },
  ])
  expect(run(513)).toEqual([
    { device: 1, count: null },
    { device: 2, count: 1 },
  ])
  // The root itself changing (the device gone, or back) is the whole device too, held like any removal.
  const a = createAggregator()
  a.add(ev('unlinkDir', ''), 0)
  a.add(ev('unlink', 'a.mov'), 10)
  expect([a.due(10), a.due(2010)]).toEqual([[], [{ device: 1, paths: null }]])
})

test('paths are de-duplicated, covered by a tracked folder, and spelled one way (folders with a final slash)', () => {
  const a = createAggregator()
  a.add(ev('add', 'card/a.mov'), 0)
  a.add(ev('change', 'card/a.mov'), 1)
  a.add(ev('add', './card/a.mov'), 2)
  a.add(ev('add', '/card/a.mov/'), 3)
  a.add(ev('add', 'day/x.mov'), 4)
  a.add(ev('addDir', 'day'), 5) // absorbs what lies below
  a.add(ev('add', 'day/y.mov'), 6) // covered
  expect(a.due(6)).toEqual([{ device: 1, paths: ['card/a.mov', 'day/'] }])
  expect(a.due(7)).toEqual([])
})

test('paths under an excluded name never appear; hidden ones do (a catalogued asset may be hidden)', () => {
  const a = createAggregator()
  for (const p of [
    '@eaDir/a.mov/SYNOFILE_THUMB_M.jpg',
    'x/#recycle/a.mov',
    '.reelhouse-copy-3/a.mov',
    'x/.reelhouse-move-0123',
    '.Trashes/501/a.mov',
    '.cache/a.mov',
    'a.mov',
  ])
    a.add(ev('add', p), 0)
  a.add(ev('unlink', '.reelhouse-delete-4'), 0)
  expect([a.due(0), a.nextAt()]).toEqual([[{ device: 1, paths: ['.cache/a.mov', 'a.mov'] }], undefined])
})

test('a folder of 1,000 files renamed: one scan of the new folder now, one of the old after the window', () => {
  for (const addDirFirst of [true, false]) {
    const a = createAggregator()
    a.add(ev('unlinkDir', 'day 1'), 0)
    for (let i = 0; i < 1000; i++) a.add(ev('unlink', `day 1/clip${i}.mov`), 0)
    if (addDirFirst) a.add(ev('addDir', 'day 1 (graded)'), 1)
    for (let i = 0; i < 1000; i++) a.add(ev('add', `day 1 (graded)/clip${i}.mov`), 1)
    if (!addDirFirst) a.add(ev('addDir', 'day 1 (graded)'), 1)
    expect([a.due(5), a.due(1999), a.due(2000)]).toEqual([
      [{ device: 1, paths: ['day 1 (graded)/'] }],
      [],
      [{ device: 1, paths: ['day 1/'] }],
    ])
  }
})

test('devices are batched apart, in the order their first event came', () => {
  const a = createAggregator()
  a.add(ev('add', 'b.mov', 2), 0)
  a.add(ev('add', 'a.mov', 1), 1)
  a.add(ev('unlink', 'c.mov', 2), 2)
  expect([a.due(2), a.due(2002)]).toEqual([
    [
      { device: 2, paths: ['b.mov'] },
      { device: 1, paths: ['a.mov'] },
    ],
    [{ device: 2, paths: ['c.mov'] }],
  ])
})

test("with `root`, the watcher's absolute paths: folded below the root, given back absolute", () => {
  const roots = new Map([
    [1, '/v/media/'],
    [2, '/v/@eaDir-is-fine/'],
  ])
  const a = createAggregator({ root: (d) => roots.get(d) })
  a.add(ev('addDir', '/v/media/card/'), 0)
  a.add(ev('add', '/v/media/card/A001.mov'), 0) // covered
  a.add(ev('add', '/v/media/@eaDir/x.jpg'), 0) // excluded below the root
  a.add(ev('add', '/v/@eaDir-is-fine/#recycle/x.mov', 2), 0)
  a.add(ev('add', '/v/@eaDir-is-fine/clip.mov', 2), 0) // the root's own name is not judged
  a.add(ev('add', '/elsewhere/clip.mov'), 0) // not on its device: dropped
  a.add(ev('add', '/v/media/x.mov', 9), 0) // a device without a root: dropped
  for (let i = 0; i < 129; i++) a.add(ev('add', `/v/media/day/c${i}.mov`), 0)
  expect(a.due(0)).toEqual([
    { device: 1, paths: ['/v/media/card/', '/v/media/day/'] },
    { device: 2, paths: ['/v/@eaDir-is-fine/clip.mov'] },
  ])
  // The root itself, with or without its slash (the watcher's unlinkDir when a device goes away).
  a.add(ev('unlinkDir', '/v/media/'), 0)
  a.add(ev('addDir', '/v/@eaDir-is-fine', 2), 0)
  expect([a.due(0), a.due(2000)]).toEqual([[{ device: 2, paths: null }], [{ device: 1, paths: null }]])
})

test('looks asked for directly are folded as events are: many files of one folder are that folder, very many paths the whole device', () => {
  const files = (n: number, dir: string) => Array.from({ length: n }, (_, i) => `/d/${dir}/f${i}.mov`)
  expect(foldPaths('/d/', ['/d/a.mov', '/d/x/b.mov', '/d/y/'])).toEqual(['/d/a.mov', '/d/x/b.mov', '/d/y/'])
  expect(foldPaths('/d/', [...files(20_000, 'drop/cards'), '/d/other.mov'])).toEqual(['/d/drop/cards/', '/d/other.mov'])
  expect(
    foldPaths(
      '/d/',
      Array.from({ length: 600 }, (_, i) => `/d/f${i}/a.mov`),
    ),
  ).toBeNull()
  expect(foldPaths('/d/', ['/elsewhere/a.mov'])).toEqual([])
})

test('a long list of looks folds as the same paths given a few at a time would', () => {
  const files = (n: number, dir: string) => Array.from({ length: n }, (_, i) => `/d/${dir}/f${i}.mov`)
  // A crowded folder (300); one at the limit (128 files) whose crowded subfolder makes it one
  // child too many (so it folds too); duplicates; the root's own files: past 512 paths in all.
  const list = [
    ...files(300, 'drop'),
    ...files(128, 'keep'),
    ...files(150, 'keep/deep'),
    ...files(3, 'keep/deep'),
    '/d/top.mov',
    '/d/top.mov',
    '/d/drop/',
  ]
  const folded = foldPaths('/d/', list)!
  expect(list.length).toBeGreaterThan(512)
  expect(folded.slice().sort()).toEqual(['/d/drop/', '/d/keep/', '/d/top.mov'])
  expect(
    foldPaths(
      '/d/',
      list.filter((p) => !p.startsWith('/d/keep/deep/')),
    )!.length,
  ).toBe(128 + 2)
  // The same paths folded in small steps (each step far under the 512 that takes the shortcut).
  let step: string[] = []
  for (let i = 0; i < list.length; i += 100) step = foldPaths('/d/', [...step, ...list.slice(i, i + 100)])!
  expect(step.slice().sort()).toEqual(folded.slice().sort())
})
