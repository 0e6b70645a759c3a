// The watcher running as serve runs it (createCore with watch options): real folders, real file
// events (and polling), changes made by the test as another program would make them; the
// catalogue follows within a bounded wait.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { type CoreOn, createCore } from '../../src/core.ts'
import type { SqlitePort } from '../../src/db/port.ts'
import { silentLog } from '../../src/util/log.ts'
import { readResponse, seedProduction, testApp, type TestApp } from '../helpers/app.ts'
import { emptyFfmpegDir, removeScratch } from '../helpers/imports.ts'
import { waitFor } from '../helpers/wait.ts'

let base: TestApp
let core: CoreOn<SqlitePort>
let app: { handle(request: Request): Promise<Response> }
let root: string
let show: { id: number }

async function start(poll: boolean) {
  base = testApp(undefined, { tasks: false })
  ;({ root, production: show } = await seedProduction(base))
  core = createCore(base.db, {
    log: silentLog,
    ffmpegDir: emptyFfmpegDir(),
    settleMs: 200,
    watch: { poll, pollIntervalMs: 100, rescanMs: 0 },
  })
  app = createApp(core)
  core.start()
  await waitFor(() => (core.watch?.status() ?? []).every((s) => s.ready), 'the watcher to be ready', {
    ms: 15_000,
    everyMs: 20,
  })
}
afterEach(async () => {
  await core.stop()
  base.cleanup()
  removeScratch()
})

const get = async (path: string) =>
  readResponse(
    await app.handle(new Request(`http://localhost${path}`, { headers: { authorization: `Token ${base.adminKey}` } })),
  )
const assetsAt = async (path: string) =>
  (await get(`/api/videoassets/?path_file=${encodeURIComponent(path)}`)).json as {
    id: number
    is_production: boolean
    path_file: string
  }[]

for (const poll of [false, true]) {
  const mode = poll ? 'polling' : 'file events'
  test(`${mode}: a file dropped into the watch folder is imported once; renamed, it keeps its asset; deleted, it goes offline; back, online`, async () => {
    await start(poll)
    expect(core.watch!.status()).toEqual([expect.objectContaining({ mode: poll ? 'polling' : 'events', ready: true })])
    mkdirSync(join(root, 'incoming'))
    const path = join(root, 'incoming', 'clip.mov')
    writeFileSync(path, 'essence')
    await waitFor(async () => (await assetsAt(path)).length === 1, 'the import', { ms: 15_000, everyMs: 50 })
    const [asset] = await assetsAt(path)

    const renamed = join(root, 'incoming', 'renamed.mov')
    renameSync(path, renamed)
    await waitFor(async () => (await assetsAt(renamed)).length === 1, 'the rename to be followed', {
      ms: 15_000,
      everyMs: 50,
    })
    expect((await assetsAt(renamed))[0]!.id).toBe(asset!.id)

    rmSync(renamed)
    await waitFor(async () => (await assetsAt(renamed))[0]?.is_production === false, 'the asset to go offline', {
      ms: 15_000,
      everyMs: 50,
    })
    writeFileSync(renamed, 'essence')
    await waitFor(async () => (await assetsAt(renamed))[0]?.is_production === true, 'the asset to come back', {
      ms: 15_000,
      everyMs: 50,
    })
    expect((await get('/api/importlogs/')).json).toHaveLength(1)
    expect((await get('/api/health')).json.watch).toEqual([
      expect.objectContaining({ mode: poll ? 'polling' : 'events', ready: true }),
    ])
  }, 60_000)
}

test('2,000 files copied into the watch folder at once: each imported exactly once', async () => {
  await start(false)
  const folder = join(root, 'incoming', 'card')
  mkdirSync(folder, { recursive: true })
  for (let i = 0; i < 2000; i++) writeFileSync(join(folder, `C${String(i).padStart(4, '0')}.mov`), `clip ${i}`)
  const count = async () => Number((await get('/api/videoassets/?limit=0')).headers.get('x-total-count'))
  await waitFor(async () => (await count()) === 2000, 'all 2,000 to be imported', { ms: 90_000, everyMs: 200 })
  await core.runner.idle()
  const logs = (await get('/api/importlogs/')).json as { asset_path: string; status: string }[]
  expect(logs).toHaveLength(2000)
  expect(new Set(logs.map((l) => l.asset_path)).size).toBe(2000)
  expect(logs.every((l) => l.status === 'import_completed')).toBe(true)
  expect(await count()).toBe(2000)
}, 120_000)

test('changes made while the service was stopped are found by the start scan', async () => {
  await start(false)
  mkdirSync(join(root, 'Show', 'media'), { recursive: true })
  const kept = join(root, 'Show', 'media', 'kept.mov')
  const gone = join(root, 'Show', 'media', 'gone.mov')
  for (const p of [kept, gone]) writeFileSync(p, 'essence')
  const post = (path: string) =>
    app.handle(
      new Request('http://localhost/api/videoassets/', {
        method: 'POST',
        headers: { authorization: `Token ${base.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'n', path_file: path, production: show.id }),
      }),
    )
  for (const p of [kept, gone]) expect((await post(p)).status).toBe(201)
  await core.stop()
  // While stopped: one file deleted, one renamed, one new in the watch folder.
  rmSync(gone)
  renameSync(kept, join(root, 'Show', 'media', 'kept-renamed.mov'))
  mkdirSync(join(root, 'incoming'))
  writeFileSync(join(root, 'incoming', 'new.mov'), 'new')
  core = createCore(base.db, {
    log: silentLog,
    ffmpegDir: emptyFfmpegDir(),
    settleMs: 200,
    watch: { poll: false, pollIntervalMs: 100, rescanMs: 0 },
  })
  app = createApp(core)
  core.start()
  await waitFor(async () => (await assetsAt(gone))[0]?.is_production === false, 'the deleted file to go offline', {
    ms: 15_000,
    everyMs: 50,
  })
  await waitFor(
    async () => (await assetsAt(join(root, 'Show', 'media', 'kept-renamed.mov'))).length === 1,
    'the rename',
    { ms: 15_000, everyMs: 50 },
  )
  await waitFor(async () => (await assetsAt(join(root, 'incoming', 'new.mov'))).length === 1, 'the new file', {
    ms: 15_000,
    everyMs: 50,
  })
}, 60_000)

test('the start scan of each device is queued once its folders are watched, never while the watcher is still walking', async () => {
  base = testApp(undefined, { tasks: false })
  ;({ root, production: show } = await seedProduction(base))
  for (let f = 0; f < 300; f++) mkdirSync(join(root, `reel-${f}`, 'day'), { recursive: true })
  core = createCore(base.db, {
    log: silentLog,
    ffmpegDir: emptyFfmpegDir(),
    settleMs: 200,
    watch: { poll: false, pollIntervalMs: 100, rescanMs: 0 },
  })
  app = createApp(core)
  const fullScans = () =>
    base.db.$client
      .query<{ n: number }, []>(
        "SELECT count(*) AS n FROM tasks WHERE kind = 'scan' AND params LIKE '%\"paths\":null%'",
      )
      .get()!.n
  core.start()
  // The watcher says ready in the same turn as it asks for the scan: whoever looks sees both or neither.
  const devices = core.watch!.status().length
  expect(devices).toBeGreaterThan(0)
  expect(fullScans()).toBe(0)
  let looks = 0
  await waitFor(
    () => {
      looks++
      const queued = fullScans()
      const ready = core.watch!.status().filter((s) => s.ready).length
      expect(queued).toBeLessThanOrEqual(ready)
      return queued === devices
    },
    'a start scan of every device',
    { ms: 15_000 },
  )
  expect(looks).toBeGreaterThan(1)
  await core.runner.idle()
})
