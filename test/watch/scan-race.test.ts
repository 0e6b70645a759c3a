// The scan task between its walk and its apply: a walk takes time, and another scan may apply
// what happened meanwhile (a file moved right after its watch-folder import, seen once under
// load: the asset stayed offline for good). The handler is run with a task context whose
// progress report (made right after each walk) changes the disk and the catalogue as that other
// scan would; the real catalogue and real folders are used throughout.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { linkSync, lstatSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { type CoreOn, createCore } from '../../src/core.ts'
import type { SqlitePort } from '../../src/db/port.ts'
import { stampOf } from '../../src/storage/paths.ts'
import type { TaskContext } from '../../src/tasks/runner.ts'
import { createLog, silentLog } from '../../src/util/log.ts'
import { createSettle } from '../../src/watch/ingest.ts'
import { createRecent } from '../../src/watch/recent.ts'
import { scanHandler } from '../../src/watch/scan.task.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { emptyFfmpegDir, otherFileSystemDir, placeFile, removeScratch } from '../helpers/imports.ts'

let base: TestApp
let core: CoreOn<SqlitePort>
let root: string
let device: { id: number }
let show: { id: number }
let recent: ReturnType<typeof createRecent>
let later: string[]

beforeEach(async () => {
  base = testApp(undefined, { tasks: false })
  ;({ root, device, production: show } = await seedProduction(base))
  core = createCore(base.db, { log: silentLog, ffmpegDir: emptyFfmpegDir(), settleMs: 30 })
  createApp(core)
  recent = createRecent()
  later = []
})
afterEach(async () => {
  await core.stop()
  base.cleanup()
  removeScratch()
})

/** Runs one scan handler (of the device `on`) to its end; `meanwhile` runs once, right after the (first) walk. */
async function scan(paths: string[] | null, meanwhile?: () => void, on = device.id) {
  const handler = scanHandler(core.port, {
    media: core.media,
    imports: core.imports,
    settle: createSettle(30),
    recent,
    settleMs: 30,
    log: silentLog,
    later: (_device, p) => later.push(...p),
  })
  let result: Record<string, unknown> = {}
  let pending = meanwhile
  await handler({
    task: { id: 0, params: { device: on, paths } } as TaskContext<'scan'>['task'],
    signal: new AbortController().signal,
    progress: () => {
      const fn = pending
      pending = undefined
      fn?.()
    },
    save: () => {},
    report: (r) => void (result = r),
  })
  return result
}
const file = (rel: string, text = 'essence') => placeFile(join(root, rel), text)
const register = async (path: string) =>
  (await base.post('/api/videoassets/', { name: 'n', path_file: path, production: show.id })).json.id as number
const asset = async (id: number) => (await base.get(`/api/videoassets/${id}/`)).json
/** What another scan applies when it sees the file at its new path. */
const otherScanMoved = (id: number, from: string, to: string) => {
  const s = lstatSync(to)
  core.port.run(
    core.media.applyScan({
      offline: [],
      online: [],
      relocations: [
        {
          id,
          path: to,
          from,
          device: device.id,
          kind: 'video',
          dev: s.dev,
          ino: s.ino,
          stamp: stampOf(s),
          size: s.size,
          mtimeMs: s.mtimeMs,
          by: 'identity',
          archive: false,
        },
      ],
    }),
  )
}

test('a folder walked before a file moved into it, applied after another scan followed the move: the asset is not taken offline', async () => {
  const from = file('Show/in/a.mov')
  mkdirSync(join(root, 'Show', 'out'))
  const to = join(root, 'Show', 'out', 'a.mov')
  const id = await register(from)
  const result = await scan([join(root, 'Show', 'out/')], () => {
    renameSync(from, to)
    otherScanMoved(id, from, to)
  })
  expect(await asset(id)).toMatchObject({ path_file: to, is_production: true })
  expect(result).toMatchObject({ offline: 0, rechecked: 1 })
  expect(later).toEqual([to]) // looked at again shortly
})

test('a walk that saw the file at its old path, applied after another scan followed the move: the asset is not moved back', async () => {
  const from = file('Show/a.mov')
  const to = join(root, 'Show', 'b.mov')
  const id = await register(from)
  await scan(null, () => {
    renameSync(from, to)
    otherScanMoved(id, from, to)
  })
  expect(await asset(id)).toMatchObject({ path_file: to, is_production: true })
  expect(later).toContain(from)
})

test("a sighting of a new file at an asset's path, then found under another name: the asset follows it (saved anew, then renamed)", async () => {
  const a = file('Show/edit/a.mov')
  const id = await register(a)
  await scan(null) // fingerprints and identity as the catalogue keeps them
  file('Show/edit/.a.mov.swap', 'saved anew')
  renameSync(join(root, 'Show/edit/.a.mov.swap'), a)
  const s = lstatSync(a)
  recent.saw(a, { kind: 'file', dev: s.dev, ino: s.ino, stamp: stampOf(s) }, Date.now())
  const b = join(root, 'Show/edit/b.mov')
  renameSync(a, b)
  // Only the new name is scanned, as the watcher's first batch is.
  expect(await scan([b])).toMatchObject({ moved: 1, imported: 0 })
  expect(await asset(id)).toMatchObject({ path_file: b, is_production: true })
})

test('without that sighting the same scan does not guess: the asset is left to the scan of its own path', async () => {
  const a = file('Show/edit/a.mov')
  const id = await register(a)
  file('Show/edit/.a.mov.swap', 'saved anew')
  renameSync(join(root, 'Show/edit/.a.mov.swap'), a)
  renameSync(a, join(root, 'Show/edit/b.mov'))
  expect(await scan([join(root, 'Show/edit/b.mov')])).toMatchObject({ moved: 0 })
  expect(await asset(id)).toMatchObject({ path_file: a })
})

test('a file moved onto the path of an archived asset in production (never taken offline): no failed scan, no endless look again; said in the log', async () => {
  const x = file('Show/c.mov', 'x')
  const z = file('Show/b.mov', 'z')
  const X = await register(x)
  // Archived and in production (is_archive true): the watcher never takes it offline.
  const Z = (await base.post('/api/videoassets/', { name: 'z', path_file: z, production: show.id, is_archive: true }))
    .json.id as number
  renameSync(x, z)
  const result = await scan(null)
  expect(result).toMatchObject({ moved: 0 })
  expect(later).toEqual([]) // nothing to look at again: the disk will say the same
  expect(await asset(Z)).toMatchObject({ path_file: z, is_production: true })
  expect((await asset(X)).path_file).toBe(x)
})

test('an asset whose path became a symbolic link goes offline (not looked at again and again)', async () => {
  const a = file('Show/a.mov')
  const id = await register(a)
  const elsewhere = join(root, 'elsewhere.bin')
  renameSync(a, elsewhere)
  symlinkSync(elsewhere, a)
  await scan([join(root, 'Show/')])
  expect(await asset(id)).toMatchObject({ path_file: a, is_production: false })
  expect(later).toEqual([])
})

test("a media file in the service's data folder is never imported, even when the folder lies in a watch folder", async () => {
  // A device whose root holds the data folder, as the upload device of a production.
  const holder = join(base.dataDir, '..')
  const d = await base.post('/api/devices/', { name: 'holder', path: holder })
  expect(d.status).toBe(201)
  const p = await base.post('/api/productions/', {
    name: 'Holder',
    storage_root: join(root, 'Holder'),
    upload_device: d.json.id,
  })
  expect(p.status).toBe(201)
  const inData = placeFile(join(base.dataDir, 'looks-like-a.mov'), 'not a clip')
  const handler = scanHandler(core.port, {
    media: core.media,
    imports: core.imports,
    settle: createSettle(0),
    recent,
    settleMs: 0,
    log: silentLog,
    later: () => {},
  })
  const run = () =>
    handler({
      task: { id: 0, params: { device: d.json.id, paths: [base.dataDir] } } as TaskContext<'scan'>['task'],
      signal: new AbortController().signal,
      progress: () => {},
      save: () => {},
      report: () => {},
    })
  await run()
  await Bun.sleep(5)
  await run() // settled by now: it would be imported here
  expect((await base.get(`/api/videoassets/?path_file=${encodeURIComponent(inData)}`)).json).toEqual([])
  // Not even tried (the import road would refuse it, leaving a refused ImportLog): never seen as input.
  expect((await base.get(`/api/importlogs/?asset_path=${encodeURIComponent(inData)}`)).json).toEqual([])
})

// A scan decides the files found in place (the one asset at their path holds them, unchanged,
// one link) without reconcile; these show the rest sees them where they count.
test("a file in place is no candidate for a relink: a new file with the content of an asset in place and of a vanished one, under neither's name, is the vanished one's, by a full scan and by the watcher's scans of each name", async () => {
  for (const i of [0, 1]) {
    const gamma = file(`Show/c${i}/gamma.mov`, `same essence ${i}`)
    const alpha = file(`Show/a${i}/alpha.mov`, `same essence ${i}`)
    const [C, A] = [await register(gamma), await register(alpha)]
    await scan(null) // both fingerprinted
    rmSync(alpha)
    const beta = file(`Show/new${i}/beta.mov`, `same essence ${i}`) // alpha moved (gamma did not: its file is in place)
    let result: Record<string, unknown>
    if (i === 0) result = await scan(null)
    else {
      await scan([beta]) // the new name first (alpha's asset is still online: beta is a stranger)
      result = await scan([alpha]) // then the old one
    }
    expect(result).toMatchObject({ relinked: 1 })
    expect(result.ambiguous).toBeUndefined()
    expect(await asset(A)).toMatchObject({ path_file: beta, is_production: true })
    expect(await asset(C)).toMatchObject({ path_file: gamma, is_production: true })
  }
})

// Two devices' scans run at once (the start scans): each half of a move across file systems is
// seen by one of them. Each publishes its half before it reads the other's; these show that a scan
// completes a half that another scan under way has published (the scan that published it is a
// token here, as if still running).
test("a newcomer on one device, while another scan under way has found the asset's file vanished (still online in the catalogue): this scan relinks it", async () => {
  const other = otherFileSystemDir('reelhouse-shm-').dir
  const shm = (await base.post('/api/devices/', { name: 'shm', path: other })).json.id as number
  const a = file('Show/day/a.mov', 'the clip')
  const A = await register(a)
  await scan(null) // fingerprinted
  const moved = join(other, 'x', 'a.mov')
  placeFile(moved, 'the clip')
  rmSync(a)
  const store = {}
  recent.lost(store, [{ id: A, path: a, size: lstatSync(moved).size }])
  expect(await scan(null, undefined, shm)).toMatchObject({ relinked: 1 })
  expect(await asset(A)).toMatchObject({ path_file: moved, is_production: true, device: shm })
  recent.ended(store)
})

test("an asset's file vanished on one device, while another scan under way has found the newcomer (not yet remembered): this scan relinks it", async () => {
  const other = otherFileSystemDir('reelhouse-shm-').dir
  const shm = (await base.post('/api/devices/', { name: 'shm', path: other })).json.id as number
  const a = file('Show/day/a.mov', 'the clip')
  const A = await register(a)
  await scan(null)
  const moved = placeFile(join(other, 'x', 'a.mov'), 'the clip')
  rmSync(a)
  const s = lstatSync(moved)
  const scanOfShm = {}
  recent.found(scanOfShm, [
    {
      path: moved,
      device: shm,
      kind: 'file',
      dev: s.dev,
      ino: s.ino,
      stamp: stampOf(s),
      size: s.size,
      mtimeMs: s.mtimeMs,
    },
  ])
  expect(await scan([a])).toMatchObject({ relinked: 1, offline: 0 })
  expect(await asset(A)).toMatchObject({ path_file: moved, is_production: true, device: shm })
  // Once that scan has ended, what it found is remembered as strangers (or catalogued), not here.
  recent.ended(scanOfShm)
  expect(recent.newcomers(new Set([s.size]), {})).toEqual([])
})

test("the path of an asset of that content, looked at by a relink, holds another asset's file now: that file stays that asset's, and the vanished one follows its restored bytes", async () => {
  const alpha = file('Show/a/alpha.mov', 'same essence')
  const gamma = file('Show/c/gamma.mov', 'same essence') // a copy of alpha, catalogued
  const kappa = file('Show/k/kappa.mov', 'another clip')
  const [A, C, K] = [await register(alpha), await register(gamma), await register(kappa)]
  await scan(null)
  rmSync(gamma)
  await scan([gamma]) // the copy's asset offline
  renameSync(kappa, gamma) // another clip renamed onto the copy's old name, and followed there
  expect(await scan(null)).toMatchObject({ moved: 1 })
  const restored = file('Show/new/restored.mov', 'same essence') // the copy's bytes back, under another name
  expect(await scan([restored])).toMatchObject({ relinked: 1 })
  expect(await asset(C)).toMatchObject({ path_file: restored, is_production: true })
  expect(await asset(K)).toMatchObject({ path_file: gamma, is_production: true })
  expect(await asset(A)).toMatchObject({ path_file: alpha, is_production: true })
})

test('a real tie names the assets that tie: two vanished assets of one content and a copy in place, a new file named as none of them', async () => {
  const gamma = file('Show/c/gamma.mov', 'same essence')
  const alpha = file('Show/a/alpha.mov', 'same essence')
  const delta = file('Show/d/delta.mov', 'same essence')
  const [C, A, D] = [await register(gamma), await register(alpha), await register(delta)]
  await scan(null)
  rmSync(alpha)
  rmSync(delta)
  await scan([alpha]) // alpha's asset offline; delta's still online in the catalogue (its path not scanned yet)
  const beta = file('Show/new/beta.mov', 'same essence')
  // A scan of beta alone: it looks at the paths of every asset of that content, so it knows that
  // delta's file vanished too (and gamma's is in place), as a scan of everything would.
  const result = await scan([beta])
  expect(result).toMatchObject({
    relinked: 0,
    ambiguous: [
      {
        path: beta,
        assets: [A, D].sort((x, y) => x - y),
        reason: expect.stringContaining(`assets ${Math.min(A, D)} and ${Math.max(A, D)}, whose files vanished`),
      },
    ],
  })
  expect(JSON.stringify(result.ambiguous)).not.toContain(`${C},`)
  for (const id of [A, D]) expect(await asset(id)).toMatchObject({ is_production: false })
  expect(await asset(C)).toMatchObject({ path_file: gamma, is_production: true })
  expect((await base.get('/api/videoassets/')).json).toHaveLength(3) // beta not imported either
})

test('a file in place with a second name (a hard link) still holds its identity: the asset whose path now shows that link goes offline, it does not take the file', async () => {
  const one = file('Show/h/one.mov', 'one')
  const two = file('Show/h/two.mov', 'two')
  const [R1, R2] = [await register(one), await register(two)]
  await scan(null)
  rmSync(two)
  linkSync(one, two)
  expect(await scan(null)).toMatchObject({ saved_anew: 0, moved: 0 })
  expect(await asset(R1)).toMatchObject({ path_file: one, is_production: true })
  expect(await asset(R2)).toMatchObject({ path_file: two, is_production: false })
})

test("a watch-folder file that an asset gets between the scan's look and the import (another scan relinked a moved clip to it) keeps that asset's record: nothing is imported over it", async () => {
  const a = file('Show/cards/a.mov', 'the clip')
  const created = await base.post('/api/videoassets/', {
    name: 'Take 1',
    description: 'the harbour at dawn',
    path_file: a,
    production: show.id,
    meta_field_store: {},
  })
  expect(created.status).toBe(201)
  const id = created.json.id as number
  const f = file('Show/incoming/other.mov', 'another clip')
  const relinkFirst = {
    ...core.imports,
    register: (...args: Parameters<typeof core.imports.register>) => {
      // Another scan, right now: the asset's clip was moved here (its old path is gone).
      rmSync(a)
      otherScanMoved(id, a, f)
      return core.imports.register(...args)
    },
  }
  const handler = scanHandler(core.port, {
    media: core.media,
    imports: relinkFirst,
    settle: createSettle(0),
    recent,
    settleMs: 0,
    log: silentLog,
    later: () => {},
  })
  const results: Record<string, unknown>[] = []
  const run = () =>
    handler({
      task: {
        id: 0,
        params: { device: device.id, paths: [join(root, 'Show', 'incoming/')] },
      } as TaskContext<'scan'>['task'],
      signal: new AbortController().signal,
      progress: () => {},
      save: () => {},
      report: (r) => void results.push(r),
    })
  await run()
  await Bun.sleep(5)
  await run() // settled: imported here, but the asset took the file first
  expect(results.at(-1)).toMatchObject({ imported: 0 })
  expect(await asset(id)).toMatchObject({ path_file: f, name: 'Take 1', description: 'the harbour at dawn' })
  expect((await base.get('/api/videoassets/')).json).toHaveLength(1)
  expect((await base.get(`/api/importlogs/?asset_path=${encodeURIComponent(f)}`)).json).toEqual([])
})

test('a name that is not valid UTF-8 is said, not dropped: a warning naming the folder each scan, one failed ImportLog in a watch folder, no asset; an event for it looks at its folder', async () => {
  const folder = join(root, 'Show', 'drop')
  mkdirSync(folder, { recursive: true })
  // f<0xff>.mov: the byte 0xff is never UTF-8.
  const raw = Buffer.concat([Buffer.from(folder + '/f'), Buffer.from([0xff]), Buffer.from('.mov')])
  writeFileSync(raw, 'a clip whose name is Latin-1')
  const shown = join(folder, 'f\uFFFD.mov')
  const lines: string[] = []
  const handler = scanHandler(core.port, {
    media: core.media,
    imports: core.imports,
    logs: core.logs,
    settle: createSettle(0),
    recent,
    settleMs: 0,
    log: createLog('text', (l) => void lines.push(l)),
    later: () => {},
  })
  const run = (paths: string[] | null) =>
    handler({
      task: { id: 0, params: { device: device.id, paths } } as TaskContext<'scan'>['task'],
      signal: new AbortController().signal,
      progress: () => {},
      save: () => {},
      report: () => {},
    })
  await run(null)
  await run(null)
  const warnings = lines.filter((l) => l.includes('not valid UTF-8'))
  expect(warnings).toHaveLength(2) // one per scan
  expect(warnings[0]).toContain(folder + '/')
  const logs = (await base.get(`/api/importlogs/?asset_path=${encodeURIComponent(shown)}`)).json
  expect(logs).toMatchObject([{ status: 'import_failed', error: expect.stringContaining('not valid UTF-8') }])
  expect((await base.get('/api/videoassets/')).json).toEqual([])
  // The watcher's event names the file as decoded (U+FFFD), which names nothing on disk.
  lines.length = 0
  await run([shown])
  expect(lines.filter((l) => l.includes('not valid UTF-8'))).toHaveLength(1)
})
