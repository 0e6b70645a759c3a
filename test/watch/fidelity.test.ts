// The catalogue never puts one clip's metadata on another: the everyday editing moves that broke
// it (rotations, swaps through a temporary name, save-then-rename, moves across file systems, our
// own proxies fed back in), each made on real folders the way another program would make them,
// and followed by the watcher running as serve runs it: by file events, by polling, and while the
// service is stopped (the start scan must find the same answer). Each asset carries a
// description and a keyword naming its content, checked on the right file afterwards.
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { type CoreOn, createCore } from '../../src/core.ts'
import type { SqlitePort } from '../../src/db/port.ts'
import { silentLog } from '../../src/util/log.ts'
import { type TestApp, readResponse, seedProduction, testApp } from '../helpers/app.ts'
import {
  IMPORT,
  emptyFfmpegDir,
  importBody,
  otherFileSystemDir,
  removeScratch,
  scratchDir,
} from '../helpers/imports.ts'
import { hasFfmpeg, makeMedia } from '../helpers/media.ts'
import { waitFor } from '../helpers/wait.ts'
import { OTHER_TMP, TEST_TMP } from '../helpers/temp.ts'

const MODES = ['events', 'polling', 'restart'] as const
/** Whether the machine has a second file system for the tests (else a cross-device move is a rename). */
const CROSS = OTHER_TMP !== undefined
type Mode = (typeof MODES)[number]
const SETTLE_MS = 200

let base: TestApp
let core: CoreOn<SqlitePort>
let app: { handle(request: Request): Promise<Response> }
/** The production's storage device, which is also its watch folder (a production made with defaults). */
let up: string
/** Another device on the same file system, and one on another file system (tmpfs) when there is one. */
let store: string
let shm: { dir: string; cross: boolean }
/** Where the core looks for ffmpeg: an empty folder (none: imports only warn), or PATH (undefined). */
let ffmpegDir: string | undefined

async function boot(poll: boolean) {
  core = createCore(base.db, {
    log: silentLog,
    ffmpegDir,
    settleMs: SETTLE_MS,
    watch: { poll, pollIntervalMs: 100, rescanMs: 0 },
  })
  app = createApp(core)
  core.start()
  await waitFor(() => (core.watch?.status() ?? []).every((s) => s.ready), 'the watcher to be ready', {
    ms: 15_000,
    everyMs: 20,
  })
  // The start scans ran (imports wait for them): the catalogue is what the disk says now.
  await waitFor(() => core.watch!.importsOpen(), 'the start scans', { ms: 15_000, everyMs: 20 })
}

async function setup(mode: Mode, options: { ffmpeg?: boolean } = {}) {
  base = testApp(undefined, { tasks: false })
  ffmpegDir = options.ffmpeg ? undefined : emptyFfmpegDir()
  ;({ root: up } = await seedProduction(base))
  store = scratchDir('reelhouse-store-')
  shm = otherFileSystemDir('reelhouse-shm-')
  for (const [name, path] of [
    ['store', store],
    ['shm', shm.dir],
  ])
    expect((await base.post('/api/devices/', { name, path })).status).toBe(201)
  await boot(mode === 'polling')
}

/** Makes a change as another program would: while the service watches, or while it is stopped. */
async function change(mode: Mode, fn: () => void | Promise<void>) {
  if (mode !== 'restart') return fn()
  await core.stop()
  await fn()
  await boot(false)
}

afterEach(async () => {
  await core?.stop()
  base?.cleanup()
  removeScratch()
})

const send = async (method: string, path: string, body?: unknown) =>
  readResponse(
    await app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { authorization: `Token ${base.adminKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      }),
    ),
  )

/** A clip with content of its own (random bytes of one size, so only the content tells them apart). */
function clip(path: string, size = 8192) {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, crypto.getRandomValues(new Uint8Array(size)))
  return path
}
/** Imports the file with a description and a keyword that name its content; resolves once its task is done. */
async function imported(path: string, label: string) {
  const reply = await send('POST', IMPORT, importBody(path, { description: label }, { keywords: { Take: [label] } }))
  expect(reply.status).toBe(201)
  await core.runner.idle()
  return reply.json.asset_import_id as number
}
type Asset = {
  id: number
  path_file: string
  is_production: boolean
  description: string
  keywords: Record<string, string[]>
  device: number
  path_proxy: string
}
const asset = async (id: number) => (await send('GET', `/api/videoassets/${id}/`)).json as Asset
const videoCount = async () => Number((await send('GET', '/api/videoassets/?limit=0')).headers.get('x-total-count'))

/**
 * Waits until every asset is as expected: online at `path` with its own label (description and
 * keyword), or offline (`path: null`) with its label still. A bounded wait, never a fixed one.
 */
async function converges(expected: { id: number; label: string; path: string | null }[], what: string) {
  const state = async () => Promise.all(expected.map(async (e) => ({ e, a: await asset(e.id) })))
  const ok = async () =>
    (await state()).every(({ e, a }) =>
      e.path === null ? !a.is_production : a.is_production && a.path_file === e.path,
    )
  try {
    await waitFor(ok, what, { ms: 20_000, everyMs: 50 })
  } catch (error) {
    throw new Error(
      `${(error as Error).message}: ${JSON.stringify((await state()).map(({ e, a }) => ({ want: e, got: { path: a.path_file, online: a.is_production } })))}`,
    )
  }
  await core.runner.idle()
  for (const { e, a } of await state()) {
    expect(a.description).toBe(e.label)
    expect(a.keywords).toEqual({ Take: [e.label] })
    if (e.path !== null) expect(a.path_file).toBe(e.path)
  }
}

const mv = (from: string, to: string) => {
  const r = Bun.spawnSync(['mv', '-T', from, to])
  if (r.exitCode !== 0) throw new Error(`mv ${from} ${to}: ${r.stderr.toString()}`)
}

for (const mode of MODES) {
  describe(`${mode}:`, () => {
    test("a rotation (mv c b; mv a c): the asset of c follows to b, the asset of a to c, b's asset goes offline; nothing is imported", async () => {
      await setup(mode)
      const dir = join(up, 'Show', 'day1')
      const [a, b, c] = ['a.mov', 'b.mov', 'c.mov'].map((n) => clip(join(dir, n)))
      const [A, B, C] = [await imported(a!, 'A'), await imported(b!, 'B'), await imported(c!, 'C')]
      await change(mode, () => {
        mv(c!, b!)
        mv(a!, c!)
      })
      await converges(
        [
          { id: A, label: 'A', path: c! },
          { id: C, label: 'C', path: b! },
          { id: B, label: 'B', path: null },
        ],
        'the rotation',
      )
      expect(await videoCount()).toBe(3)
    }, 60_000)

    test('rotations of 3 and of 10 names in a row: every asset follows its file', async () => {
      await setup(mode)
      const dir = join(up, 'Show', 'reel')
      const names = Array.from({ length: 10 }, (_, i) => join(dir, `take-${i}.mov`))
      const ids: number[] = []
      for (const [i, p] of names.entries()) ids.push(await imported(clip(p), `T${i}`))
      // 3 names through a spare: 0 → spare, 1 → 0, 2 → 1, spare → 2. Then all 10 shift by one.
      const spare = join(dir, 'spare.mov')
      await change(mode, () => {
        mv(names[0]!, spare)
        mv(names[1]!, names[0]!)
        mv(names[2]!, names[1]!)
        mv(spare, names[2]!)
        mv(names[9]!, spare)
        for (let i = 9; i > 0; i--) mv(names[i - 1]!, names[i]!)
        mv(spare, names[0]!)
      })
      // After the 3-rotation: file i+1 at i for i<2, file 0 at 2; then every file moved up one.
      const after3 = [1, 2, 0, 3, 4, 5, 6, 7, 8, 9] // after3[i]: whose file is at name i
      const atName = (i: number) => (i === 0 ? after3[9]! : after3[i - 1]!)
      await converges(
        names.map((p, i) => ({ id: ids[atName(i)]!, label: `T${atName(i)}`, path: p })),
        'the rotations',
      )
      expect(await videoCount()).toBe(10)
    }, 60_000)

    test("a swap through a temporary name exchanges the two assets' paths; nothing goes offline or is imported", async () => {
      await setup(mode)
      const dir = join(up, 'Show', 'swap')
      const [a, b] = ['a.mov', 'b.mov'].map((n) => clip(join(dir, n)))
      const [A, B] = [await imported(a!, 'A'), await imported(b!, 'B')]
      await change(mode, () => {
        mv(a!, join(dir, 't.mov'))
        mv(b!, a!)
        mv(join(dir, 't.mov'), b!)
      })
      await converges(
        [
          { id: A, label: 'A', path: b! },
          { id: B, label: 'B', path: a! },
        ],
        'the swap',
      )
      expect(await videoCount()).toBe(2)
    }, 60_000)

    test('a swap inside a folder that is renamed in the same moment: both follow into the new folder name', async () => {
      await setup(mode)
      const dir = join(up, 'Show', 'cards')
      const [a, b] = ['a.mov', 'b.mov'].map((n) => clip(join(dir, n)))
      const [A, B] = [await imported(a!, 'A'), await imported(b!, 'B')]
      const renamed = join(up, 'Show', 'cards-graded')
      await change(mode, () => {
        mv(a!, join(dir, 't.mov'))
        mv(b!, a!)
        mv(join(dir, 't.mov'), b!)
        mv(dir, renamed)
      })
      await converges(
        [
          { id: A, label: 'A', path: join(renamed, 'b.mov') },
          { id: B, label: 'B', path: join(renamed, 'a.mov') },
        ],
        'the swap in the renamed folder',
      )
      expect(await videoCount()).toBe(2)
    }, 60_000)

    test(`a file and a folder of 200 files moved across file systems (${!CROSS ? 'one file system here: relinked after going offline' : `${TEST_TMP} to ${OTHER_TMP}`}): relinked by content, with their metadata, never imported anew`, async () => {
      await setup(mode)
      const one = clip(join(store, 'single.mov'))
      const folder = join(store, 'card')
      const files = Array.from({ length: 200 }, (_, i) =>
        clip(join(folder, `C${String(i).padStart(3, '0')}.mov`), 4096),
      )
      const ids = [await imported(one, 'single')]
      for (const [i, f] of files.entries()) ids.push(await imported(f, `card-${i}`))
      await change(mode, () => {
        mv(one, join(shm.dir, 'single.mov'))
        mv(folder, join(shm.dir, 'card'))
      })
      await converges(
        [
          { id: ids[0]!, label: 'single', path: join(shm.dir, 'single.mov') },
          ...files.map((f, i) => ({
            id: ids[i + 1]!,
            label: `card-${i}`,
            path: join(shm.dir, 'card', f.slice(folder.length + 1)),
          })),
        ],
        'the relink across file systems',
      )
      expect(await videoCount()).toBe(201)
      for (const a of [await asset(ids[0]!)]) expect(readFileSync(a.path_file).length).toBe(8192)
    }, 120_000)

    test('a file moved across file systems into the watch folder is the asset moved, not a new import', async () => {
      await setup(mode)
      const source = clip(join(store, 'dailies', 'shot.mov'))
      const id = await imported(source, 'shot')
      const target = join(up, 'Show', 'incoming', 'shot.mov')
      mkdirSync(join(target, '..'), { recursive: true })
      // Across file systems where there are two (mv copies and deletes); here, a copy and a delete by hand.
      await change(mode, () => {
        writeFileSync(target + '.part', readFileSync(source))
        renameSync(target + '.part', target)
        rmSync(source)
      })
      await converges([{ id, label: 'shot', path: target }], 'the relink into the watch folder')
      // Two settle times later, still one asset: the file was never imported.
      await Bun.sleep(2 * SETTLE_MS + 300)
      await core.runner.idle()
      expect(await videoCount()).toBe(1)
      expect((await send('GET', '/api/importlogs/')).json).toHaveLength(1)
    }, 60_000)

    test.skipIf(!CROSS)(
      `a move across file systems (${OTHER_TMP} to ${TEST_TMP}) into the watch folder whose copy settles long before the original is deleted: held, never imported, then the asset moved`,
      async () => {
        await setup(mode)
        const source = clip(join(shm.dir, 'cards', 'A001.mov'))
        const id = await imported(source, 'A001')
        const target = join(up, 'Show', 'incoming', 'A001.mov')
        mkdirSync(join(target, '..'), { recursive: true })
        // The copy half of `mv` (for a card of clips it takes minutes), then a pause past two settle times.
        await change(mode, () => writeFileSync(target, readFileSync(source)))
        await Bun.sleep(2 * SETTLE_MS + 300)
        await waitFor(
          async () => {
            await core.runner.idle()
            const scans = (await send('GET', '/api/tasks/?kind=scan&limit=1000')).json as {
              result: { held?: { path: string; asset: number }[] }
            }[]
            return scans.some((t) => t.result.held?.some((h) => h.path === target && h.asset === id))
          },
          'a scan to hold the copy',
          { ms: 20_000, everyMs: 100 },
        )
        expect(await videoCount()).toBe(1)
        // The delete half of `mv`.
        await change(mode, () => rmSync(source))
        await converges([{ id, label: 'A001', path: target }], 'the held copy to become the asset')
        expect(await videoCount()).toBe(1)
        expect((await send('GET', '/api/importlogs/')).json).toHaveLength(1)
      },
      60_000,
    )

    test('two files with the same content as two vanished assets: the same file name decides; without it nothing is guessed', async () => {
      await setup(mode)
      const bytes = crypto.getRandomValues(new Uint8Array(8192))
      const [a, b] = [join(store, 'x', 'one.mov'), join(store, 'y', 'two.mov')]
      for (const p of [a, b]) {
        mkdirSync(join(p, '..'), { recursive: true })
        writeFileSync(p, bytes)
      }
      const [A, B] = [await imported(a, 'one'), await imported(b, 'two')]
      await change(mode, () => {
        writeFileSync(join(shm.dir, 'one.mov'), bytes) // same name as A's: A's
        writeFileSync(join(shm.dir, 'other.mov'), bytes) // neither's name: nobody's
        rmSync(a)
        rmSync(b)
      })
      await converges(
        [
          { id: A, label: 'one', path: join(shm.dir, 'one.mov') },
          { id: B, label: 'two', path: null },
        ],
        'the name to decide',
      )
      expect((await asset(B)).path_file).toBe(b)
      expect(await videoCount()).toBe(2)
    }, 60_000)
  })
}

describe('saved as a new inode, then renamed', () => {
  test('events: an editor saves a.mov as a new file and renames it to b.mov at once: the asset follows to b.mov with its metadata', async () => {
    await setup('events')
    const dir = join(up, 'Show', 'edit')
    const a = clip(join(dir, 'a.mov'))
    const A = await imported(a, 'A')
    // The folder is under watch (as any folder that was there when the service started).
    await core.stop()
    await boot(false)
    clip(join(dir, '.a.mov.swap'), 4096)
    renameSync(join(dir, '.a.mov.swap'), a)
    // The watcher looks at a name as its event comes, usually well before a scan is due (the
    // aggregator's turn, 250 ms): the rename follows once it has looked, however long that took
    // on this machine, and the sighting tells the story.
    const saved = statSync(a).ino
    await waitFor(() => core.recent.sightings(Date.now()).get(a)?.ino === saved, 'the watcher to look at a.mov', {
      ms: 10_000,
      everyMs: 10,
    })
    renameSync(a, join(dir, 'b.mov'))
    await converges([{ id: A, label: 'A', path: join(dir, 'b.mov') }], 'the save and rename')
    expect(await videoCount()).toBe(1)
  }, 60_000)

  for (const mode of ['events', 'polling'] as const)
    test(`${mode}: rm x/a.wav, write x/a.wav again, then mv x y right away: the asset follows into y`, async () => {
      await setup(mode)
      const x = join(store, 'x')
      const a = clip(join(x, 'a.mov'))
      const A = await imported(a, 'A')
      // The folder was there when the service started (its start scan saw it), as on any share.
      await core.stop()
      await boot(mode === 'polling')
      rmSync(a)
      clip(a, 4096)
      mv(x, join(store, 'y'))
      await converges([{ id: A, label: 'A', path: join(store, 'y', 'a.mov') }], 'the folder rename')
      expect(await videoCount()).toBe(1)
    }, 60_000)

  for (const mode of ['polling', 'restart'] as const)
    test(`${mode}: when no look came between the save and the rename, nothing is guessed: the asset goes offline with its metadata and b.mov is a new file`, async () => {
      await setup(mode)
      const dir = join(up, 'Show', 'edit')
      const a = clip(join(dir, 'a.mov'))
      const A = await imported(a, 'A')
      await change(mode, () => {
        clip(join(dir, '.a.mov.swap'), 4096)
        renameSync(join(dir, '.a.mov.swap'), a)
        renameSync(a, join(dir, 'b.mov'))
      })
      await converges([{ id: A, label: 'A', path: null }], 'the asset to go offline')
      await waitFor(async () => (await videoCount()) === 2, 'b.mov to be imported as a new file', {
        ms: 20_000,
        everyMs: 50,
      })
      const fresh = (await send('GET', `/api/videoassets/?path_file=${encodeURIComponent(join(dir, 'b.mov'))}`))
        .json as Asset[]
      expect(fresh).toHaveLength(1)
      expect(fresh[0]!.id).not.toBe(A)
      expect(fresh[0]!.description).toBe('')
    }, 60_000)
})

describe('our own output is never input', () => {
  for (const mode of MODES)
    test.skipIf(!hasFfmpeg)(
      `${mode}: a production made with defaults (its whole device its watch folder, proxies inside it): two imports, one after the other, make exactly two assets`,
      async () => {
        await setup(mode, { ffmpeg: true })
        const media = await makeMedia(scratchDir('reelhouse-media-'), ['video'])
        const dir = join(up, 'Show', 'footage')
        mkdirSync(dir, { recursive: true })
        for (const name of ['one.mov', 'two.mov']) {
          const path = join(dir, name)
          writeFileSync(path, readFileSync(media.video))
          expect((await send('POST', IMPORT, importBody(path, { description: name }))).status).toBe(201)
          await core.runner.idle()
        }
        // Each import made a proxy in the production's proxies/ folder, on the watch folder; with
        // `restart`, the start scan meets them all at once.
        await change(mode, () => {})
        // Past two settle times (and every scan the proxies' events asked for): still two.
        await Bun.sleep(2 * SETTLE_MS + 500)
        await core.runner.idle()
        await Bun.sleep(SETTLE_MS + 300)
        await core.runner.idle()
        expect(await videoCount()).toBe(2)
        const all = (await send('GET', '/api/videoassets/')).json as { id: number }[]
        for (const { id } of all) {
          const a = await asset(id)
          expect(a.path_file).toContain('/footage/')
          expect(a.path_proxy).toContain('/proxies/')
        }
      },
      90_000,
    )

  test("a watch folder imports only into its own production: never a file inside another production's storage root, nor under any proxy root", async () => {
    await setup('events')
    // A second production on the same device, with its own storage root; its watch folder is another device.
    const other = await send('POST', '/api/productions/', {
      name: 'Other',
      storage_root: join(up, 'Other'),
      upload_device: 2,
    })
    expect(other.status).toBe(201)
    clip(join(up, 'Other', 'theirs.mov'))
    clip(join(up, 'Show', 'proxies', 'looks-like-ours.mov'))
    clip(join(up, 'Other', 'proxies', 'theirs-proxy.mov'))
    clip(join(up, 'Show', 'mine.mov'))
    await waitFor(async () => (await videoCount()) === 1, 'mine.mov to be imported', { ms: 20_000, everyMs: 50 })
    await Bun.sleep(2 * SETTLE_MS + 300)
    await core.runner.idle()
    const all = (await send('GET', '/api/videoassets/')).json as { path_file: string; production: number }[]
    expect(all.map((a) => a.path_file)).toEqual([join(up, 'Show', 'mine.mov')])
  }, 60_000)
})
