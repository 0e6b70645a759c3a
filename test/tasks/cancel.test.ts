// POST /api/tasks/{id}/cancel/ where it meets the rules of the work it stops (issue 20): an import
// cancelled while its move copies the file across file systems leaves no half-moved file (the
// move's own crash rules), and a cancelled scan is queued again by the next timed rescan, which
// reconciles the catalogue. The other cancel tests (a copy, an import in ffprobe, a scan; queued
// and running; who may cancel): follow.test.ts. Real things: a migrated catalogue, real folders,
// a real 400 MiB file, the watcher's own rescan timer (its interval injected, as --rescan-interval).
import { afterEach, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import {
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { createCore } from '../../src/core.ts'
import { silentLog } from '../../src/util/log.ts'
import { type TestApp, readResponse, seedProduction, testApp } from '../helpers/app.ts'
import {
  IMPORT,
  appWithFfmpegDir,
  deviceOf,
  emptyFfmpegDir,
  importBody,
  logsOf,
  placeFile,
  removeScratch,
  scratchDir,
} from '../helpers/imports.ts'
import { waitFor } from '../helpers/wait.ts'
import { OTHER_TMP } from '../helpers/temp.ts'
import { runSync } from '../../src/db/port.ts'

let base: TestApp | undefined
const stops: (() => Promise<unknown>)[] = []

afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
  base?.cleanup()
  base = undefined
  removeScratch()
})

/** Another file system beside the tests' folders (OTHER_TMP), where the machine has one. */
const SHM_APART = OTHER_TMP !== undefined

/** The SHA-256 of a file, read as a stream (the file is too big to read at once). */
const sha256Of = (path: string) =>
  new Promise<string>((resolve, reject) => {
    const hash = createHash('sha256')
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject)
  })

/** A file of `size` bytes: random MiBs at its start, middle and end, holes (zeros) between. */
async function bigFile(path: string, size: number) {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, '')
  truncateSync(path, size)
  const file = await open(path, 'r+')
  try {
    for (const at of [0, Math.floor(size / 2), size - (1 << 20)])
      await file.write(crypto.getRandomValues(new Uint8Array(1 << 20)), 0, 1 << 20, at)
  } finally {
    await file.close()
  }
  return path
}

const BIG = 400 * 1024 * 1024

test.skipIf(!SHM_APART)(
  'an import cancelled while its move copies the file across file systems (from the folder of the tests to another file system): never half moved; the file is whole at its source or at its target, the asset names where it is, no temporary file is left',
  async () => {
    base = testApp(undefined, { tasks: false })
    const { root, device, production: show } = await seedProduction(base)
    const far = scratchDir('reelhouse-far-', OTHER_TMP)
    const farDevice = await base.post('/api/devices/', { name: 'far', path: far })
    expect(farDevice.status).toBe(201)
    const app = appWithFfmpegDir(base, emptyFfmpegDir())
    stops.push(() => app.stop())
    const source = await bigFile(join(root, 'incoming', 'big.mov'), BIG)
    const before = await sha256Of(source)
    // far does not hold the production's storage_root: DEVICE/CODENAME/video/ (docs/api.md, Import).
    const targetDir = join(far, show.codename, 'video')
    const target = join(targetDir, 'big.mov')

    const reply = await app.post(IMPORT, importBody(source, {}, {}, { move_asset: true, asset_destination: 'far' }))
    expect(reply.status).toBe(201)
    const url = reply.json.task.url
    // The copy is under way (the move's step, and its hidden temporary file at the target), or the
    // task is past it already: the cancel is sent then. Which of the two it meets does not matter
    // to what is checked after.
    const copying = () =>
      existsSync(targetDir) && readdirSync(targetDir).some((name) => name.startsWith('.reelhouse-move-'))
    await waitFor(
      async () => {
        const task = (await app.get(url)).json
        return (
          (task.step === 'move' && copying()) ||
          (task.step !== '' && task.step !== 'move') ||
          task.state === 'done' ||
          task.state === 'failed'
        )
      },
      'the import to copy the file',
      { ms: 60_000 },
    )
    const cancelled = await app.post(`${url}cancel/`, undefined)
    await waitFor(async () => ['done', 'failed'].includes((await app.get(url)).json.state), 'the import to end', {
      ms: 120_000,
      everyMs: 20,
    })
    await app.runner.idle()
    const task = (await app.get(url)).json
    const asset = (await app.get(`/api/videoassets/${reply.json.asset_import_id}/`)).json

    // Whatever the race gave, the move's crash rules hold: the file at exactly one of its two
    // paths, whole, the asset naming that path and in production; no temporary name at the target.
    const there = [existsSync(source), existsSync(target)]
    expect(there.filter(Boolean)).toHaveLength(1)
    const where = there[0] ? source : target
    expect(asset).toMatchObject({ path_file: where, is_production: true })
    expect([statSync(where).size, await sha256Of(where)]).toEqual([BIG, before])
    expect(existsSync(targetDir) ? readdirSync(targetDir) : []).toEqual(where === target ? ['big.mov'] : [])

    if (where === source) {
      // Stopped before the copy was complete: the cancel answered the task failed "cancelled".
      expect([cancelled.status, cancelled.json]).toMatchObject([
        200,
        { id: task.id, state: 'failed', error: 'cancelled' },
      ])
      expect(task).toMatchObject({ state: 'failed', error: 'cancelled', step: 'move' })
      expect(asset).toMatchObject({ status_asset: -1, device: device.id })
      expect((await logsOf(app.request, source)).map((l) => [l.status, l.error])).toEqual([
        ['import_failed', 'cancelled'],
      ])
    } else {
      // The move ended first: the task had ended (409), or it ended with what it had done (200, as it
      // is then); either way the asset is at its target, complete, and the source is gone.
      expect(cancelled.status === 409 || (cancelled.status === 200 && cancelled.json.id === task.id)).toBe(true)
      expect(task.state === 'done' || task.error === 'cancelled').toBe(true)
      expect(asset.device).toBe(farDevice.json.id)
    }
  },
  300_000,
)

test('a cancelled scan is queued again by the next timed rescan, which reconciles the catalogue', async () => {
  const SETTLE_MS = 200
  const RESCAN_MS = 200
  base = testApp(undefined, { tasks: false })
  const { root, device } = await seedProduction(base)
  // The catalogue first: a clip imported (catalogued where it lies), by a core of its own.
  const first = appWithFfmpegDir(base, emptyFfmpegDir())
  const kept = placeFile(join(root, 'Show', 'a.mov'), 'a clip\n')
  const imported = await first.post(IMPORT, importBody(kept))
  expect(imported.status).toBe(201)
  await first.runner.idle()
  await first.stop()
  // While the service is stopped: the clip goes, a new one comes into the watch folder (the whole
  // device: the production has no drop folder). Only a full scan of the device finds either.
  rmSync(kept)
  const added = placeFile(join(root, 'Show', 'b.mov'), 'another clip\n')

  // The watcher of serve, with a rescan every RESCAN_MS; its runner not started yet, so each scan
  // stays queued for as long as the test wants: the start scan (and the rescans merged into it).
  const core = createCore(base.db, {
    log: silentLog,
    ffmpegDir: emptyFfmpegDir(),
    settleMs: SETTLE_MS,
    watch: { poll: false, pollIntervalMs: 100, rescanMs: RESCAN_MS },
  })
  stops.push(() => core.stop())
  const app = createApp(core)
  const send = async (method: string, path: string) =>
    readResponse(
      await app.handle(
        new Request(`http://localhost${path}`, { method, headers: { authorization: `Token ${base!.adminKey}` } }),
      ),
    )
  const fullScans = async () =>
    (
      (await send('GET', `/api/tasks/?kind=scan&device=${device.id}&limit=1000`)).json as {
        id: number
        state: string
        error: string
      }[]
    ).filter((t) => runSync(core.db, core.runner.get(t.id))!.params.paths === null)
  core.watch!.start()
  await waitFor(
    async () => (await fullScans()).some((t) => t.state === 'queued'),
    'a full scan of the device to be queued',
    { ms: 60_000, everyMs: 20 },
  )
  const [queued] = (await fullScans()).filter((t) => t.state === 'queued')
  const cancelled = await send('POST', `/api/tasks/${queued!.id}/cancel/`)
  expect([cancelled.status, cancelled.json]).toMatchObject([
    200,
    { id: queued!.id, kind: 'scan', state: 'failed', error: 'cancelled' },
  ])

  // The next rescan queues a new full scan of the device (not merged into the cancelled one).
  await waitFor(
    async () => (await fullScans()).some((t) => t.id > queued!.id && t.state === 'queued'),
    'the next rescan to queue a scan',
    { ms: 30_000, everyMs: 20 },
  )
  const again = (await fullScans()).find((t) => t.id > queued!.id)!
  expect((await fullScans()).filter((t) => t.id <= queued!.id)).toEqual([
    expect.objectContaining({ id: queued!.id, state: 'failed', error: 'cancelled' }),
  ])
  // Nothing has reconciled the catalogue yet: the clip that went is still in production, the new one unknown.
  const videos = async () =>
    ((await send('GET', '/api/videoassets/?limit=1000')).json as { path_file: string; is_production: boolean }[])
      .map((v) => [v.path_file, v.is_production])
      .sort()
  expect(await videos()).toEqual([[kept, true]])

  core.runner.start()
  await waitFor(
    async () => (await send('GET', `/api/tasks/${again.id}/`)).json.state === 'done',
    "the rescan's scan to run",
    { ms: 60_000, everyMs: 20 },
  )
  expect((await send('GET', `/api/tasks/${again.id}/`)).json).toMatchObject({
    state: 'done',
    error: '',
    result: { offline: 1 },
  })
  // The new clip is imported once it has settled (a later look, as for any file in a watch folder).
  await waitFor(async () => (await videos()).length === 2, 'the new clip to be imported', { ms: 60_000, everyMs: 20 })
  expect(await videos()).toEqual(
    [
      [added, true],
      [kept, false],
    ].sort(),
  )
}, 180_000)
