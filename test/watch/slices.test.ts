// A scan of a big folder works in slices (issue 25, "no stall from one drop"): the catalogue's
// rows are read a page at a time, and reconcile pauses between thousands of entries. Both must
// give exactly what the one-go versions give.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { type CoreOn, createCore } from '../../src/core.ts'
import type { SqlitePort } from '../../src/db/port.ts'
import { mediaAssets } from '../../src/db/schema.ts'
import { silentLog } from '../../src/util/log.ts'
import { type DiskEntry, type MediaRow, reconcile, reconcileSliced } from '../../src/watch/reconcile.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { emptyFfmpegDir, removeScratch } from '../helpers/imports.ts'

let base: TestApp
let core: CoreOn<SqlitePort>
let root: string
let device: { id: number }
let show: { id: number }

beforeEach(async () => {
  base = testApp(undefined, { tasks: false })
  ;({ root, device, production: show } = await seedProduction(base))
  core = createCore(base.db, { log: silentLog, ffmpegDir: emptyFfmpegDir() })
})
afterEach(async () => {
  await core.stop()
  base.cleanup()
  removeScratch()
})

test('rows under a folder read a page at a time are every row once, also where rows naming one path meet a page boundary', async () => {
  const dir = `${root}drop/`
  const paths = ['a.mov', 'b.mov', 'b.mov', 'b.mov', 'c.mov', 'd.mov', 'e.mov', 'e.mov', 'f/g.mov', 'h.mov']
  // Rows naming one path: one video in production and vanished ones (offline), as a scan finds them.
  paths.forEach((rel, i) =>
    base.db
      .insert(mediaAssets)
      .values({
        kind: i % 3 === 0 ? 'audio' : 'video',
        production: show.id,
        device: device.id,
        path_file: dir + rel,
        name: rel,
        is_production: paths.indexOf(rel) === i,
        date_add: '2026-01-01T00:00:00Z',
        date_mod: '2026-01-01T00:00:00Z',
      })
      .run(),
  )
  // Rows beside the folder (its name as a prefix) are not under it.
  base.db
    .insert(mediaAssets)
    .values({
      kind: 'video',
      production: show.id,
      device: device.id,
      path_file: `${root}drop2/x.mov`,
      name: 'x',
      date_add: '2026-01-01T00:00:00Z',
      date_mod: '2026-01-01T00:00:00Z',
    })
    .run()
  const whole = core.port
    .run(core.media.underForScan(dir))
    .map((r) => r.id)
    .sort((a, b) => a - b)
  expect(whole).toHaveLength(paths.length)
  for (const pageSize of [1, 2, 3, 4, 100]) {
    const seen: number[] = []
    let pauses = 0
    await core.media.underForScanPaged(
      dir,
      (r) => seen.push(r.id),
      async () => void pauses++,
      pageSize,
    )
    expect(seen.sort((a, b) => a - b)).toEqual(whole)
    if (pageSize <= 4) expect(pauses).toBeGreaterThan(0)
    else expect(pauses).toBe(0)
  }
})

test('reconcile in slices decides exactly what reconcile in one go decides, and pauses on a big folder', async () => {
  const roots = new Map([[1, '/v/media/']])
  const disk: DiskEntry[] = [
    { path: '/v/media/', device: 1, kind: 'dir', dev: 10, ino: 1, stamp: 1, size: 4096, mtimeMs: 1 },
  ]
  const media: MediaRow[] = []
  for (let i = 0; i < 6000; i++) {
    const row: MediaRow = {
      id: i + 1,
      path_file: `/v/media/clip-${i}.mov`,
      device: 1,
      is_archive: false,
      is_production: i % 5 !== 0,
      file_dev: 10,
      file_ino: 100 + i,
      file_stamp: 7,
      file_size: 1000 + i,
      file_mtime: 5,
      file_hash: `h${i}`,
    }
    media.push(row)
    // Most files in place, some moved (by identity), some gone, and new files beside them.
    if (i % 7 === 0) continue
    const path = i % 11 === 0 ? `/v/media/moved/clip-${i}.mov` : row.path_file
    disk.push({ path, device: 1, kind: 'file', dev: 10, ino: 100 + i, stamp: 7, size: 1000 + i, mtimeMs: 5 })
  }
  for (let i = 0; i < 3000; i++)
    disk.push({
      path: `/v/media/new-${i}.mov`,
      device: 1,
      kind: 'file',
      dev: 10,
      ino: 50_000 + i,
      stamp: 7,
      size: 99,
      mtimeMs: 5,
    })
  const opts = { scope: ['/v/media/'], roots, rootPresent: () => true, ingestInto: () => 7 }
  const once = reconcile(disk, { media, projects: [] }, opts)
  let pauses = 0
  const sliced = await reconcileSliced(disk, { media, projects: [] }, opts, async () => void pauses++)
  expect(sliced).toEqual(once)
  expect(once.relocations.length).toBeGreaterThan(0)
  expect(once.offline.length).toBeGreaterThan(0)
  expect(once.ingest).toHaveLength(3000)
  expect(pauses).toBeGreaterThan(5)
})
