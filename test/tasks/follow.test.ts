// Following and steering work (issue 20): an import's 201 names its task, whose step and percent
// follow the move, the probe and ffmpeg's proxy of a 30 s clip; the task's result names the asset
// and its file; every task's log lines name what it works on; POST /api/tasks/{id}/cancel/ of a
// copy, an import and a scan, queued and running, and 409 once a task has ended. Real things: a
// migrated catalogue, real folders, ffmpeg; every change a task's row goes through is recorded by
// an SQLite trigger, so what a poll could miss between two reads is still seen.
import { scanTask } from '../../src/watch/service.ts'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createLog } from '../../src/util/log.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import {
  IMPORT,
  appWithFfmpegDir,
  gatedFfmpeg,
  importBody,
  logsOf,
  placeClip,
  placeFile,
  removeScratch,
  scratchDir,
} from '../helpers/imports.ts'
import { ff, hasFfmpeg, makeMedia } from '../helpers/media.ts'
import { makeTree } from '../helpers/tree.ts'
import { waitFor } from '../helpers/wait.ts'
import { runSync } from '../../src/db/port.ts'

type Task = {
  id: number
  kind: string
  state: string
  step: string
  percent: number | null
  error: string
  files_done: number
  files_total: number
  bytes_done: number
  bytes_total: number
  result: Record<string, unknown>
}

let base: TestApp
let app: ReturnType<typeof appWithFfmpegDir>
let root: string
let device: { id: number; name: string; path: string }
let show: { id: number; proxy_root: string; codename: string }
/** The 30 s clip (1280×720 at 25 fps), made by ffmpeg for these tests. */
let longClip: string
let clip: string
const lines: string[] = []

/** Every write of a task's progress, in order (a trigger on the tasks table). */
const writes = (task: number) =>
  base.db.$client
    .query<{ step: string; percent: number | null; files_done: number; files_total: number }, [number]>(
      'SELECT step, percent, files_done, files_total FROM test_task_writes WHERE task = ? ORDER BY n',
    )
    .all(task)

beforeAll(async () => {
  base = testApp(undefined, { tasks: false })
  ;({ root, device, production: show } = await seedProduction(base))
  base.db.$client.run(
    'CREATE TABLE test_task_writes (n INTEGER PRIMARY KEY, task INTEGER, step TEXT, percent REAL, files_done INTEGER, files_total INTEGER)',
  )
  base.db.$client.run(`CREATE TRIGGER test_task_writes AFTER UPDATE ON tasks BEGIN
    INSERT INTO test_task_writes (task, step, percent, files_done, files_total) VALUES (new.id, new.step, new.percent, new.files_done, new.files_total); END`)
  app = appWithFfmpegDir(base, undefined, { log: createLog('text', (line) => void lines.push(line)) })
  const dir = scratchDir('reelhouse-follow-media-')
  clip = (await makeMedia(dir, ['video'])).video
  longClip = join(dir, 'long-30s.mp4')
  if (hasFfmpeg)
    await ff.run(
      'ffmpeg',
      [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=1280x720:rate=25',
        '-t',
        '30',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-pix_fmt',
        'yuv420p',
        longClip,
      ],
      { timeoutMs: 300_000 },
    )
}, 300_000)

afterAll(async () => {
  await app.stop()
  base.cleanup()
  removeScratch()
})

let n = 0
const incoming = (from: string) => placeClip(from, join(root, 'incoming', `${++n}-${from.split('/').pop()}`))
const logLine = (words: string) => lines.find((l) => l.includes(words))
/** Polls the task until it has ended, keeping every answer. */
async function follow(url: string) {
  const seen: Task[] = []
  await waitFor(
    async () => {
      const r = await app.get(url)
      expect(r.status).toBe(200)
      seen.push(r.json)
      return r.json.state === 'done' || r.json.state === 'failed'
    },
    `task ${url} to end`,
    { ms: 300_000, everyMs: 10 },
  )
  return seen
}
/** Consecutive repeats taken out: [a, a, b] → [a, b]. */
const runs = <T>(xs: T[]) => xs.filter((x, i) => i === 0 || x !== xs[i - 1])

describe('an import you can follow', () => {
  test.skipIf(!hasFfmpeg)(
    "the 201 names the task; its step and percent follow ffmpeg's proxy of a 30 s clip; its result names the asset and the file",
    async () => {
      const path = incoming(longClip)
      const reply = await app.post(IMPORT, importBody(path))
      expect(reply.status).toBe(201)
      const id = reply.json.asset_import_id
      expect(reply.json.task).toEqual({
        id: expect.any(Number),
        state: 'queued',
        url: `/api/tasks/${reply.json.task.id}/`,
      })
      const seen = await follow(reply.json.task.url)
      const task = seen.at(-1)!
      const asset = (await app.get(`/api/videoassets/${id}/`)).json
      expect(task).toMatchObject({
        kind: 'import',
        state: 'done',
        target: { videoasset: id },
        step: 'proxy',
        percent: 100,
        error: '',
        result: { asset: id, asset_type: 'videoasset', path_file: path, path_proxy: asset.path_proxy },
      })
      expect(asset.path_proxy.startsWith(show.proxy_root)).toBe(true)
      // GET /api/tasks/{id}/ showed the proxy being made (a 30 s transcode lasts well beyond a poll).
      expect(seen.some((t) => t.state === 'running' && t.step === 'proxy')).toBe(true)
      // Every write: the steps in order, and ffmpeg's position within the proxy, rising, some of it between 0 and 100.
      const all = writes(task.id)
      expect(runs(all.map((w) => w.step))).toEqual(['', 'probe', 'proxy'].filter((s) => all.some((w) => w.step === s)))
      const proxy = all.filter((w) => w.step === 'proxy').map((w) => w.percent!)
      expect(proxy.some((p) => p > 0 && p < 100)).toBe(true)
      expect(proxy).toEqual([...proxy].sort((a, b) => a - b))
      // The log names the asset and its file.
      expect(logLine(`task done task=${task.id} kind=import videoasset=${id} path=${path}`)).toBeDefined()
    },
    300_000,
  )

  test('move_asset: the step move with the bytes of the file, then probe and proxy; the result names the file where it is now', async () => {
    const path = incoming(clip)
    const size = statSync(path).size
    const reply = await app.post(IMPORT, importBody(path, {}, {}, { move_asset: true }))
    const [task] = (await follow(reply.json.task.url)).slice(-1)
    // Where move_asset puts it is the import's rule (docs/api.md, Import); the task says where it is.
    const moved = (await app.get(`/api/videoassets/${reply.json.asset_import_id}/`)).json.path_file
    expect([moved === path, existsSync(moved), existsSync(path)]).toEqual([false, true, false])
    expect(task).toMatchObject({
      state: 'done',
      bytes_done: size,
      bytes_total: size,
      result: { asset: reply.json.asset_import_id, path_file: moved },
    })
    const steps = runs(writes(task!.id).map((w) => w.step)).filter(Boolean)
    expect(steps).toEqual(hasFfmpeg ? ['move', 'probe', 'proxy'] : ['move', 'probe'])
    expect(lines.filter((l) => l.includes(`task=${task!.id} `))).toEqual([
      expect.stringContaining(
        `task done task=${task!.id} kind=import videoasset=${reply.json.asset_import_id} path=${moved}`,
      ),
    ])
  })
})

describe('cancelling running work', () => {
  test('a running copy: its staging folder removed, the project ERROR: cancelled, the task failed "cancelled"; its log lines name both folders', async () => {
    const source = join(root, 'Show', 'Big edit')
    const files: Record<string, string | number> = { 'edit.prproj': 'project', 'media/big.mxf': 32 * 1024 * 1024 }
    for (let i = 0; i < 200; i++) files[`renders/r${i}.txt`] = `render ${i}`
    makeTree(source, files)
    const project = await app.post('/api/projectassets/', {
      name: 'Big edit',
      bundle_root: source,
      production_id: show.id,
    })
    const target = join(root, 'Show', 'Big edit copy')
    const copy = await app.post('/api/projectassets/', {
      name: 'Copy',
      bundle_root: target,
      production_id: show.id,
      copy_of: project.json.id,
    })
    expect(copy.status).toBe(201)
    const staging = join(root, 'Show', `.reelhouse-copy-${copy.json.task.id}`)
    await waitFor(() => existsSync(staging), 'the copy to start')
    const cancelled = await app.post(`${copy.json.task.url}cancel/`, undefined)
    expect([cancelled.status, cancelled.json]).toMatchObject([
      200,
      { id: copy.json.task.id, kind: 'copy', state: 'failed', error: 'cancelled' },
    ])
    expect([existsSync(staging), existsSync(target)]).toEqual([false, false])
    expect((await app.get(`/api/projectassets/${copy.json.id}/`)).json).toMatchObject({
      status_asset: -1,
      status_asset_description: 'ERROR: cancelled',
      is_production: false,
    })
    expect(logLine(`task started task=${copy.json.task.id} kind=copy projectasset=${copy.json.id} from=`)).toContain(
      `to=${JSON.stringify(target + '/')}`,
    )
    expect(logLine(`task cancelled task=${copy.json.task.id} kind=copy`)).toBeDefined()
    // Once ended: 409, and the record as it is.
    expectError(await app.post(`${copy.json.task.url}cancel/`, undefined), 409, 'conflict')
  })

  test.skipIf(!hasFfmpeg)(
    'a running import (held in ffprobe): ended failed, its ImportLog import_failed, the file where it was, no proxy',
    async () => {
      const gate = gatedFfmpeg()
      const gated = appWithFfmpegDir(base, gate.dir)
      try {
        const path = incoming(clip)
        const reply = await gated.post(IMPORT, importBody(path))
        await waitFor(async () => (await gated.get(reply.json.task.url)).json.step === 'probe', 'the import to probe')
        const cancelled = await gated.post(`${reply.json.task.url}cancel/`, undefined)
        expect([cancelled.status, cancelled.json]).toMatchObject([
          200,
          { state: 'failed', error: 'cancelled', step: 'probe' },
        ])
        expect((await logsOf(gated.request, path)).map((l) => [l.status, l.error])).toEqual([
          ['import_failed', 'cancelled'],
        ])
        expect((await gated.get(`/api/videoassets/${reply.json.asset_import_id}/`)).json).toMatchObject({
          status_asset: -1,
          path_file: path,
          is_production: true,
        })
        expect(existsSync(path)).toBe(true)
        expect(
          existsSync(show.proxy_root)
            ? readdirSync(show.proxy_root).filter(
                (f) => f.startsWith(`${reply.json.asset_import_id}.`) || f.startsWith('.reelhouse-'),
              )
            : [],
        ).toEqual([])
      } finally {
        gate.open()
        await gated.stop()
      }
    },
  )

  test('a running scan stops, failed "cancelled"; the device can be scanned again at once', async () => {
    const tree: Record<string, string> = {}
    for (let d = 0; d < 300; d++) for (let f = 0; f < 10; f++) tree[`many/d${d}/f${f}.txt`] = 'x'
    makeTree(root, tree)
    const { id } = runSync(base.db, app.runner.enqueue(scanTask(device.id, null)))
    const cancelled = await app.post(`/api/tasks/${id}/cancel/`, undefined)
    expect([cancelled.status, cancelled.json]).toMatchObject([
      200,
      { id, kind: 'scan', state: 'failed', error: 'cancelled' },
    ])
    expect(logLine(`task cancelled task=${id} kind=scan device=${device.name} path=${device.path}`)).toBeDefined()
    // Not merged into the cancelled one: a new scan is queued (as the next rescan does).
    const again = runSync(base.db, app.runner.enqueue(scanTask(device.id, null)))
    expect(again.merged).toBe(false)
    await app.runner.idle()
    const scan = (await app.get(`/api/tasks/${again.id}/`)).json as Task
    // The walk's count is the total, and no write ever said more files were done than that.
    expect(scan).toMatchObject({ state: 'done', files_total: scan.result.seen, files_done: scan.result.seen })
    expect(scan.files_total).toBeGreaterThanOrEqual(3000)
    for (const w of writes(again.id)) expect(w.files_done).toBeLessThanOrEqual(w.files_total)
    expect(logLine(`task done task=${again.id} kind=scan device=${device.name} path=${device.path}`)).toBeDefined()
  })
})

describe('cancelling queued work (the runner not started)', () => {
  let t: TestApp
  let prod: { id: number }
  let disk: string
  let keys: { writer: string; other: string; reader: string; stranger: string }
  beforeAll(async () => {
    t = testApp(undefined, { tasks: false })
    ;({ root: disk, production: prod } = await seedProduction(t))
    const other = await seedProduction(t, 'Other')
    keys = {
      writer: t.makeUser('writer', { write: [prod.id], perms: ['browser.copy_projectasset'] }),
      other: t.makeUser('other-writer', { write: [prod.id] }),
      reader: t.makeUser('reader', { read: [prod.id] }),
      stranger: t.makeUser('stranger', { write: [other.production.id] }),
    }
  })
  afterAll(async () => {
    await t.stop()
  })
  const cancel = (id: number, key?: string) => t.post(`/api/tasks/${id}/cancel/`, undefined, { key })

  test('a queued copy: 200 failed "cancelled", the project ERROR: cancelled; it never runs; who may cancel', async () => {
    makeTree(join(disk, 'Show', 'Cut'), { 'cut.prproj': 'project' })
    const source = await t.post(
      '/api/projectassets/',
      { name: 'Cut', bundle_root: join(disk, 'Show', 'Cut'), production_id: prod.id },
      { key: keys.writer },
    )
    const target = join(disk, 'Show', 'Cut copy')
    const copy = await t.post(
      '/api/projectassets/',
      { name: 'Cut copy', bundle_root: target, production_id: prod.id, copy_of: source.json.id },
      { key: keys.writer },
    )
    expect(copy.status).toBe(201)
    const task = copy.json.task.id
    // A writer who did not start it, and a reader: 403; a user who cannot read it: 404.
    expectError(await cancel(task, keys.other), 403, 'permission_denied')
    expectError(await cancel(task, keys.reader), 403, 'permission_denied')
    expectError(await cancel(task, keys.stranger), 404, 'not_found')
    const r = await cancel(task, keys.writer)
    expect([r.status, r.json]).toMatchObject([
      200,
      { id: task, kind: 'copy', state: 'failed', error: 'cancelled', date_end: expect.any(String) },
    ])
    expect((await t.get(`/api/projectassets/${copy.json.id}/`)).json).toMatchObject({
      status_asset: -1,
      status_asset_description: 'ERROR: cancelled',
    })
    t.runner.start()
    await t.runner.idle()
    expect((await t.get(`/api/tasks/${task}/`)).json).toMatchObject({
      state: 'failed',
      error: 'cancelled',
      date_start: null,
    })
    expect(existsSync(target)).toBe(false)
    expectError(await cancel(task, keys.writer), 409, 'conflict')
    await t.runner.stop()
  })

  test('a queued import: failed "cancelled", its ImportLog import_failed, the asset status -1', async () => {
    const t2 = testApp(undefined, { tasks: false })
    try {
      const { root: d } = await seedProduction(t2)
      const path = placeFile(join(d, 'incoming', 'a.mov'))
      const reply = await t2.post(IMPORT, importBody(path))
      const r = await t2.post(`${reply.json.task.url}cancel/`, undefined)
      expect([r.status, r.json]).toMatchObject([200, { kind: 'import', state: 'failed', error: 'cancelled' }])
      expect((await logsOf(t2.request, path)).map((l) => [l.status, l.error])).toEqual([['import_failed', 'cancelled']])
      expect((await t2.get(`/api/videoassets/${reply.json.asset_import_id}/`)).json).toMatchObject({
        status_asset: -1,
        path_file: path,
      })
    } finally {
      await t2.stop()
      t2.cleanup()
    }
  })

  test('a queued scan: failed "cancelled" (superusers only; others 404); a delete and an unknown task cannot be cancelled', async () => {
    const t3 = testApp(undefined, { tasks: false })
    try {
      const { device: dev, production: p, root: d } = await seedProduction(t3)
      const writer = t3.makeUser('w', { write: [p.id] })
      const { id } = runSync(t3.db, t3.runner.enqueue(scanTask(dev.id, null)))
      expectError(await t3.post(`/api/tasks/${id}/cancel/`, undefined, { key: writer }), 404, 'not_found')
      expect((await t3.post(`/api/tasks/${id}/cancel/`, undefined)).json).toMatchObject({
        id,
        kind: 'scan',
        state: 'failed',
        error: 'cancelled',
      })
      makeTree(join(d, 'Show', 'Gone'), { 'x.prproj': 'x' })
      const project = await t3.post('/api/projectassets/', {
        name: 'Gone',
        bundle_root: join(d, 'Show', 'Gone'),
        production_id: p.id,
      })
      const del = await t3.request('DELETE', `/api/projectassets/${project.json.id}/`)
      const refused = await t3.post(`${del.json.task.url}cancel/`, undefined)
      expectError(refused, 409, 'conflict')
      expect(refused.json.errors[0].detail).toContain('delete')
      for (const bad of ['999999', 'abc', '-1', '1.5'])
        expect((await t3.post(`/api/tasks/${bad}/cancel/`, undefined)).status).toBe(404)
      expect((await t3.get(`/api/tasks/${del.json.task.id}/`)).json.state).toBe('queued')
    } finally {
      await t3.stop()
      t3.cleanup()
    }
  })
})
