// A drop is imported in batches: the scan's imports share transactions (scan.task.ts), and the
// watcher keeps one queued path scan per device, into which later batches of events merge
// (service.ts scanTask), so that a drop still being reported while it is imported is walked again
// once, not once per batch.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { AppError } from '../../src/http/errors.ts'
import { scanTask } from '../../src/watch/service.ts'
import type { TestApp } from '../helpers/app.ts'
import { type ScanWorld, scanWorld } from '../helpers/scans.ts'
import { waitFor } from '../helpers/wait.ts'
import { runSync } from '../../src/db/port.ts'

let w: ScanWorld
let base: TestApp
beforeEach(async () => {
  w = await scanWorld()
  base = w.base
})
afterEach(() => w.stop())

const assetPaths = async () =>
  ((await base.get('/api/videoassets/')).json as { path_file: string }[]).map((a) => a.path_file).sort()

test('a file of a batch that the import road refuses is left out; the others of the batch are imported, and the refused one later once it is accepted', async () => {
  const paths = ['a', 'b', 'c', 'd'].map((n) => w.file(`incoming/${n}.mov`))
  const [a, refused, c, d] = paths as [string, string, string, string]
  const imports = w.core.imports
  const register = imports.register
  imports.register = (req, actor, payload, options) => {
    if (req.asset.asset_meta.path_file === refused)
      throw AppError.plain(406, { type: 'path_file', detail: 'refused by the test' })
    return register(req, actor, payload, options)
  }
  expect(JSON.parse((await w.scan()).result)).toMatchObject({ imported: 0, waiting: 4 })
  await waitFor(async () => JSON.parse((await w.scan()).result).imported === 3, 'the batch to be imported', {
    everyMs: 20,
  })
  expect(await assetPaths()).toEqual([a, c, d])
  // Each imported file has its ImportLog and its import task; the refused one neither.
  const logs = base.db.$client
    .query<{ asset_path: string }, []>('SELECT asset_path FROM import_logs ORDER BY asset_path')
    .all()
    .map((l) => l.asset_path)
  expect(logs).toEqual([a, c, d])
  expect(base.db.$client.query("SELECT count(*) AS n FROM tasks WHERE kind = 'import'").get()).toEqual({ n: 3 })
  imports.register = register
  await waitFor(
    async () => JSON.parse((await w.scan()).result).imported === 1,
    'the refused file to be imported once accepted',
    { everyMs: 20 },
  )
  expect(await assetPaths()).toEqual(paths)
})

test('path scans of a device queued while none of them has started are one task, of the paths of all of them folded', async () => {
  const root = base.db.$client
    .query<{ path: string }, [number]>('SELECT path FROM devices WHERE id = ?')
    .get(w.device.id)!.path
  // The runner works through tasks at once: the rows are written in one transaction, as the
  // watcher's batches are queued between two turns of a busy scan.
  const many = Array.from({ length: 200 }, (_, i) => `${root}incoming/clip-${i}.mov`)
  const ids = base.db.transaction((tx) => [
    runSync(base.db, w.core.runner.enqueue(scanTask(w.device.id, [`${root}a.mov`], root))),
    runSync(base.db, w.core.runner.enqueue(scanTask(w.device.id, [`${root}b.mov`, `${root}a.mov`], root))),
    runSync(base.db, w.core.runner.enqueue(scanTask(w.device.id, many, root))),
    runSync(base.db, w.core.runner.enqueue(scanTask(w.device.id, null, root))),
  ])
  expect(ids.map((r) => r.merged)).toEqual([false, true, true, false])
  expect(ids[1]!.id).toBe(ids[0]!.id)
  expect(ids[3]!.id).not.toBe(ids[0]!.id) // a full scan is its own task (merged only with full scans)
  const params = JSON.parse(
    base.db.$client.query<{ params: string }, [number]>('SELECT params FROM tasks WHERE id = ?').get(ids[0]!.id)!
      .params,
  )
  // 200 names in one folder are a scan of the folder (as the aggregator folds events).
  expect(params).toEqual({ device: w.device.id, paths: [`${root}a.mov`, `${root}b.mov`, `${root}incoming/`] })
  await w.core.runner.idle()
})

test('merged path scans that fold to the whole device are a scan of the whole device', () => {
  const root = '/r/'
  const merge = scanTask(1, ['/r/a.mov'], root).merge!
  const wide = Array.from({ length: 600 }, (_, i) => `/r/f${i}/x.mov`)
  expect(merge({ device: 1, paths: ['/r/a.mov'] }, { device: 1, paths: wide })).toEqual({ device: 1, paths: null })
  expect(merge({ device: 1, paths: ['/r/a.mov'] }, { device: 1, paths: ['/r/x/'] })).toEqual({
    device: 1,
    paths: ['/r/a.mov', '/r/x/'],
  })
  // Without the device's root nothing merges (a path scan queued as before).
  expect(scanTask(1, ['/r/a.mov']).key).toBeUndefined()
})
