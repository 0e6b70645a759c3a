// The watcher running as serve runs it (createCore with watch options): real folders, real file
// events (and polling), changes made by the test as another program would make them; the
// catalogue follows within a bounded wait.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { createCore } from '../../src/core.ts'
import { silentLog } from '../../src/util/log.ts'
import { readResponse, seedProduction, testApp, type TestApp } from '../helpers/app.ts'
import { emptyFfmpegDir, removeScratch } from '../helpers/imports.ts'
import { waitFor } from '../helpers/wait.ts'

let base: TestApp
let core: ReturnType<typeof createCore>
let app: { handle(request: Request): Promise<Response> }
let root: string
let show: { id: number }

async function start(poll: boolean) {
  base = testApp(undefined, { tasks: false })
  ;({ root, production: show } = await seedProduction(base))
  core = createCore(base.db, { log: silentLog, ffmpegDir: emptyFfmpegDir(), settleMs: 200, watch: { poll, pollIntervalMs: 100, rescanMs: 0 } })
  app = createApp(core)
  core.start()
  await waitFor(() => (core.watch?.status() ?? []).every((s) => s.ready), 'the watcher to be ready', { ms: 15_000, everyMs: 20 })
}
afterEach(async () => {
  await core.stop()
  base.cleanup()
  removeScratch()
})

const get = async (path: string) => readResponse(await app.handle(new Request(`http://localhost${path}`, { headers: { authorization: `Token ${base.adminKey}` } })))
const assetsAt = async (path: string) => (await get(`/api/videoassets/?path_file=${encodeURIComponent(path)}`)).json as { id: number; is_production: boolean; path_file: string }[]

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
    await waitFor(async () => (await assetsAt(renamed)).length === 1, 'the rename to be followed', { ms: 15_000, everyMs: 50 })
    expect((await assetsAt(renamed))[0]!.id).toBe(asset!.id)

    rmSync(renamed)
    await waitFor(async () => (await assetsAt(renamed))[0]?.is_production === false, 'the asset to go offline', { ms: 15_000, everyMs: 50 })
    writeFileSync(renamed, 'essence')
    await waitFor(async () => (await assetsAt(renamed))[0]?.is_production === true, 'the asset to come back', { ms: 15_000, everyMs: 50 })
    expect((await get('/api/importlogs/')).json).toHaveLength(1)
    expect((await get('/api/health')).json.watch).toEqual([expect.objectContaining({ mode: poll ? 'polling' : 'events', ready: true })])
  }, 60_000)
}
