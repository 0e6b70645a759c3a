// Drop folders (issue 20, point 3): a production's upload_root is its watch folder instead of the
// whole upload_device, so several productions can have drop folders on one device. The rules of
// the field (POST, PATCH), the owner of a new file (ingestOwner, a pure function), and the
// watcher following them as serve runs it, a changed upload_root too, without a restart.
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { type CoreOn, createCore } from '../../src/core.ts'
import type { SqlitePort } from '../../src/db/port.ts'
import { silentLog } from '../../src/util/log.ts'
import { ingestOwner, movesUpload } from '../../src/watch/scan.task.ts'
import { type TestApp, readResponse, seedProduction, testApp } from '../helpers/app.ts'
import { allLogs, deviceOf, emptyFfmpegDir, removeScratch, scratchDir } from '../helpers/imports.ts'
import { waitFor } from '../helpers/wait.ts'
import { OTHER_TMP } from '../helpers/temp.ts'
import { runSync } from '../../src/db/port.ts'

const SETTLE_MS = 200

/** Another file system beside the tests' folders (OTHER_TMP), where the machine has one. */
const SHM_APART = OTHER_TMP !== undefined

/** The regular files below `dir`, relative to it. */
const filesBelow = (dir: string) =>
  (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name).slice(dir.length + 1))
    .sort()

let base: TestApp
let core: CoreOn<SqlitePort> | undefined

afterEach(async () => {
  await core?.stop()
  core = undefined
  base?.cleanup()
  removeScratch()
})

describe('ingestOwner: which production a new file is imported into', () => {
  // Device 1 (/nas/) holds the storage roots of A and B and the drop folders of A and B; device 2
  // (/legacy/) is the whole watch folder of L (no drop folder), as before drop folders.
  const list = [
    { id: 1, storage_root: '/nas/A/', upload_device: 1, upload_root: '/nas/drop/A/' },
    { id: 2, storage_root: '/nas/B/', upload_device: 1, upload_root: '/nas/drop/B/' },
    { id: 3, storage_root: '/nas/C/', upload_device: 2, upload_root: null },
    { id: 4, storage_root: '/legacy/L/', upload_device: 2, upload_root: null },
    { id: 5, storage_root: '/nas/A/inner/', upload_device: 3, upload_root: '/nas/A/inner/drop/' },
  ]
  const owner = ingestOwner(list)
  test('each file to the production whose drop folder or storage root holds it; elsewhere on a device of drop folders, nothing', () => {
    const files: [string, number][] = [
      ['/nas/drop/A/clip.mov', 1],
      ['/nas/drop/A/day 1/clip.mov', 1],
      ['/nas/drop/B/clip.mov', 1],
      ['/nas/drop/clip.mov', 1], // beside the drop folders: no production's
      ['/nas/loose.mov', 1], // in no folder of any production
      ['/nas/A/footage/clip.mov', 1], // A's storage root, A watches this device: A
      ['/nas/B/clip.mov', 1],
      ['/nas/C/clip.mov', 1], // C's storage root, but C's watch folder is device 2: never A's or B's
      ['/nas/A/inner/clip.mov', 1], // production 5's storage root (innermost), not A's
      ['/nas/A/inner/drop/clip.mov', 3],
      ['/legacy/L/clip.mov', 2],
      ['/legacy/loose.mov', 2], // the whole device is L's and C's watch folder: the lowest id without a drop folder
      ['/elsewhere/clip.mov', 9],
    ]
    expect(Object.fromEntries(files.map(([path, device]) => [path, owner(path, device) ?? null]))).toEqual({
      '/nas/drop/A/clip.mov': 1,
      '/nas/drop/A/day 1/clip.mov': 1,
      '/nas/drop/B/clip.mov': 2,
      '/nas/drop/clip.mov': null,
      '/nas/loose.mov': null,
      '/nas/A/footage/clip.mov': 1,
      '/nas/B/clip.mov': 2,
      '/nas/C/clip.mov': null,
      '/nas/A/inner/clip.mov': null,
      '/nas/A/inner/drop/clip.mov': 5,
      '/legacy/L/clip.mov': 4,
      '/legacy/loose.mov': 3,
      '/elsewhere/clip.mov': null,
    })
  })

  test("a drop folder that another production's storage root was made inside: that production's files there are never the drop folder's", () => {
    const nested = ingestOwner([
      { id: 1, storage_root: '/nas/A/', upload_device: 1, upload_root: '/nas/drop/' },
      { id: 2, storage_root: '/nas/drop/B/', upload_device: 2, upload_root: null },
    ])
    // B's file is B's when B's watch folder is that device, and never A's.
    expect([nested('/nas/drop/a.mov', 1), nested('/nas/drop/B/b.mov', 1), nested('/nas/drop/B/b.mov', 2)]).toEqual([
      1,
      undefined,
      2,
    ])
  })
})

describe('movesUpload: which of the files the watcher imports move_uploads moves', () => {
  test('none while move_uploads is false; with it, every file of the drop folder (also one inside the storage root), and of a whole-device watch folder every file outside the storage root', () => {
    const files = [
      '/nas/drop/A/a.mov',
      '/nas/drop/A/card/a.mov',
      '/nas/A/incoming/a.mov',
      '/nas/A/footage/a.mov',
      '/nas/A/video/a.mov',
      '/nas/loose.mov',
    ]
    // (Which production imports a file at all is ingestOwner's: /nas/loose.mov only one without a drop folder.)
    const moved = (p: { upload_root: string | null; move_uploads: boolean }) =>
      files.filter((path) => movesUpload({ storage_root: '/nas/A/', ...p }, path))
    expect([
      moved({ upload_root: '/nas/drop/A/', move_uploads: false }),
      moved({ upload_root: '/nas/drop/A/', move_uploads: true }),
      moved({ upload_root: '/nas/A/incoming/', move_uploads: true }),
      moved({ upload_root: null, move_uploads: true }),
    ]).toEqual([
      [],
      ['/nas/drop/A/a.mov', '/nas/drop/A/card/a.mov', '/nas/loose.mov'],
      ['/nas/drop/A/a.mov', '/nas/drop/A/card/a.mov', '/nas/A/incoming/a.mov', '/nas/loose.mov'],
      ['/nas/drop/A/a.mov', '/nas/drop/A/card/a.mov', '/nas/loose.mov'],
    ])
  })
})

describe('upload_root on POST and PATCH', () => {
  async function world() {
    base = testApp(undefined, { tasks: false })
    const { root, device, production: show } = await seedProduction(base)
    const drop = scratchDir('reelhouse-drop-disk-')
    const dropDevice = (await base.post('/api/devices/', { name: 'drop', path: drop })).json
    return { root, device, show, drop, dropDevice }
  }

  test('a drop folder on a device of its own: created, shown (slash added), its device becomes upload_device; null goes back to the whole device', async () => {
    const w = await world()
    const made = await base.post('/api/productions/', {
      name: 'Dropped',
      storage_root: join(w.root, 'Dropped'),
      upload_root: join(w.drop, 'Dropped'),
    })
    expect(made.status).toBe(201)
    expect(made.json).toMatchObject({
      upload_root: join(w.drop, 'Dropped') + '/',
      upload_device: { id: w.dropDevice.id },
    })
    expect(existsSync(join(w.drop, 'Dropped'))).toBe(true)
    const cleared = await base.request('PATCH', `/api/productions/${made.json.id}/`, { body: { upload_root: null } })
    expect([cleared.status, cleared.json.upload_root, cleared.json.upload_device.id]).toEqual([
      200,
      null,
      w.dropDevice.id,
    ])
    // A production made without one shows null.
    expect((await base.get(`/api/productions/${w.show.id}/`)).json.upload_root).toBe(null)
  })

  test("inside the production's own storage_root, by PATCH: taken, created", async () => {
    const w = await world()
    const r = await base.request('PATCH', `/api/productions/${w.show.id}/`, {
      body: { upload_root: join(w.show.storage_root, 'incoming') },
    })
    expect([r.status, r.json.upload_root, r.json.upload_device.id]).toEqual([
      200,
      join(w.show.storage_root, 'incoming') + '/',
      w.device.id,
    ])
    expect(existsSync(join(w.show.storage_root, 'incoming'))).toBe(true)
  })

  test("refused with 400 invalid at /upload_root, nothing changed: another production's storage_root, a proxy_root, another drop folder (inside or around), off every device, relative, reserved", async () => {
    const w = await world()
    const other = (
      await base.post('/api/productions/', {
        name: 'Other',
        storage_root: join(w.root, 'Other'),
        upload_root: join(w.drop, 'other'),
      })
    ).json
    const bad = [
      join(w.root, 'Other', 'in'),
      join(w.show.storage_root, 'proxies', 'in'),
      join(w.root, 'Other', 'proxies'),
      join(w.drop, 'other', 'sub'),
      w.drop,
      '/nowhere-a-device/drop',
      'relative/drop',
      join(w.drop, '.reelhouse-x'),
    ]
    for (const upload_root of bad) {
      const r = await base.request('PATCH', `/api/productions/${w.show.id}/`, { body: { upload_root } })
      expect([upload_root, r.status, r.json.errors?.[0]?.code, r.json.errors?.[0]?.source]).toEqual([
        upload_root,
        400,
        'invalid',
        { pointer: '/upload_root' },
      ])
    }
    expect((await base.get(`/api/productions/${w.show.id}/`)).json.upload_root).toBe(null)
    expect((await base.get(`/api/productions/${other.id}/`)).json.upload_root).toBe(join(w.drop, 'other') + '/')
    // An upload_device that is not the drop folder's device: 400 at /upload_device.
    const mismatch = await base.post('/api/productions/', {
      name: 'Mismatch',
      storage_root: join(w.root, 'Mismatch'),
      upload_root: join(w.drop, 'm'),
      upload_device: w.device.id,
    })
    expect([mismatch.status, mismatch.json.errors[0].source]).toEqual([400, { pointer: '/upload_device' }])
    // Not a string: 400, never a 500.
    for (const upload_root of [12, {}, ['/x/'], 'x'.repeat(5000)]) {
      const r = await base.request('PATCH', `/api/productions/${w.show.id}/`, { body: { upload_root } })
      expect(r.status).toBe(400)
    }
    // In form data null is text: "null" or empty clear it, as JSON null does.
    for (const text of ['null', '']) {
      expect(
        (await base.request('PATCH', `/api/productions/${other.id}/`, { body: { upload_root: join(w.drop, 'other') } }))
          .status,
      ).toBe(200)
      const r = await base.request('PATCH', `/api/productions/${other.id}/`, { form: { upload_root: text } })
      expect([r.status, r.json.upload_root]).toEqual([200, null])
    }
  })
})

describe('move_uploads on POST and PATCH', () => {
  test('false unless set; taken on POST and PATCH, in JSON and in form data (true/false, 1/0); each change in the history; shown in both versions', async () => {
    base = testApp(undefined, { tasks: false })
    const { root, production: show } = await seedProduction(base)
    expect(show.move_uploads).toBe(false)
    const made = await base.post('/api/productions/', {
      name: 'Moving',
      storage_root: join(root, 'Moving'),
      move_uploads: true,
    })
    expect([made.status, made.json.move_uploads]).toEqual([201, true])
    const path = `/api/productions/${show.id}/`
    const steps: [Record<string, unknown>, 'body' | 'form', boolean][] = [
      [{ move_uploads: true }, 'body', true],
      [{ move_uploads: 'false' }, 'form', false],
      [{ move_uploads: '1' }, 'form', true],
      [{ move_uploads: '0' }, 'form', false],
    ]
    for (const [given, as, expected] of steps) {
      const r = await base.request('PATCH', path, { [as]: given })
      expect([given, r.status, r.json.move_uploads]).toEqual([given, 200, expected])
    }
    // Neither a word nor a number other than 1 and 0: 400 invalid at /move_uploads, nothing changed.
    for (const [given, as] of [
      [{ move_uploads: 'yes' }, 'form'],
      [{ move_uploads: 'yes' }, 'body'],
      [{ move_uploads: 2 }, 'body'],
      [{ move_uploads: null }, 'body'],
    ] as const) {
      const r = await base.request('PATCH', path, { [as]: given })
      expect([given, r.status, r.json.errors?.[0]?.source]).toEqual([given, 400, { pointer: '/move_uploads' }])
    }
    for (const accept of ['application/json; version=1', 'application/json; version=2'])
      expect((await base.get(path, { headers: { accept } })).json.move_uploads).toBe(false)
    const history = (await base.get(`/api/history/?resource=production&id=${show.id}`)).json as {
      action: string
      changes: Record<string, unknown>
    }[]
    expect(history.filter((h) => 'move_uploads' in h.changes).map((h) => [h.action, h.changes.move_uploads])).toEqual([
      ['update', { old: true, new: false }],
      ['update', { old: false, new: true }],
      ['update', { old: true, new: false }],
      ['update', { old: false, new: true }],
      ['create', { old: null, new: false }],
    ])
  })
})

describe('the watcher and drop folders', () => {
  let send: (method: string, path: string, body?: unknown) => ReturnType<typeof readResponse>
  async function boot() {
    core = createCore(base.db, {
      log: silentLog,
      ffmpegDir: emptyFfmpegDir(),
      settleMs: SETTLE_MS,
      watch: { poll: false, pollIntervalMs: 100, rescanMs: 0 },
    })
    const app = createApp(core)
    send = async (method, path, body) =>
      readResponse(
        await app.handle(
          new Request(`http://localhost${path}`, {
            method,
            headers: {
              authorization: `Token ${base.adminKey}`,
              ...(body ? { 'content-type': 'application/json' } : {}),
            },
            body: body ? JSON.stringify(body) : undefined,
          }),
        ),
      )
    core.start()
    await waitFor(() => (core!.watch?.status() ?? []).every((s) => s.ready), 'the watcher to be ready', {
      ms: 30_000,
      everyMs: 20,
    })
    await waitFor(() => core!.watch!.importsOpen(), 'the start scans', { ms: 30_000, everyMs: 20 })
  }
  const clip = (path: string) => {
    mkdirSync(join(path, '..'), { recursive: true })
    writeFileSync(path, `a clip at ${path}\n`)
  }
  const videos = async () =>
    ((await send('GET', '/api/videoassets/?limit=1000')).json as { path_file: string; production: number }[])
      .map((a) => [a.path_file, a.production] as const)
      .sort()

  test('two productions with drop folders on one device: each file into its own production; a file outside every drop folder and storage root is not imported; a changed upload_root is followed live', async () => {
    base = testApp(undefined, { tasks: false })
    const nas = scratchDir('reelhouse-nas-')
    expect((await base.post('/api/devices/', { name: 'nas', path: nas })).status).toBe(201)
    const a = (
      await base.post('/api/productions/', {
        name: 'A',
        storage_root: join(nas, 'A'),
        upload_root: join(nas, 'drop', 'A'),
      })
    ).json
    const b = (
      await base.post('/api/productions/', {
        name: 'B',
        storage_root: join(nas, 'B'),
        upload_root: join(nas, 'drop', 'B'),
      })
    ).json
    // Placed while the service is stopped: the start scan and its second look see them all together,
    // so the loose ones would be imported in the same looks as the others if they were taken.
    clip(join(nas, 'loose.mov'))
    clip(join(nas, 'drop', 'beside.mov'))
    clip(join(nas, 'drop', 'A', 'a.mov'))
    clip(join(nas, 'drop', 'B', 'b.mov'))
    clip(join(nas, 'A', 'footage', 'in-a.mov'))
    await boot()
    const expected: (readonly [string, number])[] = [
      [join(nas, 'A', 'footage', 'in-a.mov'), a.id],
      [join(nas, 'drop', 'A', 'a.mov'), a.id],
      [join(nas, 'drop', 'B', 'b.mov'), b.id],
    ]
    await waitFor(
      async () => (await videos()).length >= 3,
      'the three files in drop folders and storage roots to be imported',
      { ms: 60_000, everyMs: 50 },
    )
    await core!.runner.idle()
    expect(await videos()).toEqual(expected.sort())

    // A's drop folder moves: PATCH, no restart. The new folder is made and watched as A's; the old one is A's no more.
    const moved = await send('PATCH', `/api/productions/${a.id}/`, { upload_root: join(nas, 'drop', 'A2') })
    expect([moved.status, moved.json.upload_root]).toEqual([200, join(nas, 'drop', 'A2') + '/'])
    clip(join(nas, 'drop', 'A', 'old-folder.mov'))
    clip(join(nas, 'drop', 'A2', 'new-folder.mov'))
    await waitFor(
      async () => (await videos()).some(([p]) => p.endsWith('new-folder.mov')),
      'the file in the new drop folder to be imported',
      { ms: 60_000, everyMs: 50 },
    )
    await core!.runner.idle()
    expect(await videos()).toEqual([...expected, [join(nas, 'drop', 'A2', 'new-folder.mov'), a.id] as const].sort())
    expect(readFileSync(join(nas, 'drop', 'A', 'old-folder.mov'), 'utf8')).toContain('old-folder')
  }, 120_000)

  // move_uploads (issue 20): the watcher's import moves the file as move_asset does. The moved file
  // appears at its new place as a new name in a folder the watcher watches (its production's
  // storage root, a watch folder of that production on the same device): it is the same asset
  // (identity), never imported a second time.
  for (const across of [false, true]) {
    const title = across
      ? 'move_uploads, the drop folder on another file system: each file copied into STORAGE_ROOT/<kind>/ on the storage device; one asset each, nothing left in the drop folder, no temporary file'
      : 'move_uploads: files dropped are moved into STORAGE_ROOT/<kind>/; exactly one asset each, at its new path; nothing left in the drop folder; a file already in the storage root stays; a scan afterwards finds nothing new'
    test.skipIf(across && !SHM_APART)(
      title,
      async () => {
        base = testApp(undefined, { tasks: false })
        const nas = scratchDir('reelhouse-nas-')
        expect((await base.post('/api/devices/', { name: 'nas', path: nas })).status).toBe(201)
        const dropDisk = across ? scratchDir('reelhouse-drop-shm-', OTHER_TMP) : nas
        if (across) expect((await base.post('/api/devices/', { name: 'drop', path: dropDisk })).status).toBe(201)
        const made = await base.post('/api/productions/', {
          name: 'A',
          storage_root: join(nas, 'A'),
          upload_root: join(dropDisk, 'drop', 'A'),
          move_uploads: true,
        })
        expect([made.status, made.json.move_uploads]).toEqual([201, true])
        const a = made.json
        // In the storage root, outside the drop folder: in the production's area already (imported
        // where it lies when the storage device is a watch folder of A's: the same-device case).
        clip(join(nas, 'A', 'footage', 'in-a.mov'))
        await boot()
        const drop = join(dropDisk, 'drop', 'A')
        clip(join(drop, 'card01', 'a.mov'))
        clip(join(drop, 'card01', 's.wav'))
        const movedTo = { video: join(nas, 'A', 'video', 'a.mov'), audio: join(nas, 'A', 'audio', 's.wav') }
        const all = async (kind: 'video' | 'audio') =>
          (await send('GET', `/api/${kind}assets/?limit=1000`)).json as {
            id: number
            path_file: string
            production: number
            is_production: boolean
            status_asset: number
          }[]
        await waitFor(
          async () => {
            const [videos, audios] = [await all('video'), await all('audio')]
            return (
              [...videos, ...audios].filter((x) => x.status_asset === 6 && x.is_production).length >= (across ? 2 : 3)
            )
          },
          'the dropped files to be imported and moved',
          { ms: 90_000, everyMs: 50 },
        )
        await core!.runner.idle()
        // A full scan of every device now: a file at its new place that the watcher took for a new
        // one would be imported (or still settling, `waiting`); it is the asset's file, so neither.
        const scans = (await send('GET', '/api/devices/')).json.map(
          (d: { id: number }) =>
            runSync(
              base.db,
              core!.runner.enqueue({
                kind: 'scan',
                target: { device: d.id },
                production: null,
                params: { device: d.id, paths: null },
                key: `scan:${d.id}`,
              }),
            ).id,
        )
        await waitFor(
          async () => {
            for (const id of scans)
              if (!['done', 'failed'].includes((await send('GET', `/api/tasks/${id}/`)).json.state)) return false
            return true
          },
          'the full scans',
          { ms: 60_000, everyMs: 50 },
        )
        await core!.runner.idle()
        for (const id of scans)
          expect((await send('GET', `/api/tasks/${id}/`)).json).toMatchObject({
            state: 'done',
            result: { imported: 0, waiting: 0 },
          })

        const shown = async (kind: 'video' | 'audio') =>
          (await all(kind)).map((x) => [x.path_file, x.production, x.is_production, x.status_asset]).sort()
        expect(await shown('video')).toEqual(
          [
            ...(across ? [] : [[join(nas, 'A', 'footage', 'in-a.mov'), a.id, true, 6]]),
            [movedTo.video, a.id, true, 6],
          ].sort(),
        )
        expect(await shown('audio')).toEqual([[movedTo.audio, a.id, true, 6]])
        // The files: at their new paths, whole; nothing left in the drop folder (its empty card folder stays);
        // the one in the storage root where it was; no temporary name anywhere.
        expect(readFileSync(movedTo.video, 'utf8')).toBe(`a clip at ${join(drop, 'card01', 'a.mov')}\n`)
        expect(readFileSync(movedTo.audio, 'utf8')).toBe(`a clip at ${join(drop, 'card01', 's.wav')}\n`)
        // Copied across file systems, each file was checked by hash and its hash kept; a rename reads no bytes.
        const hashesOf = async (kind: 'video' | 'audio', path: string) => {
          const id = (await all(kind)).find((x) => x.path_file === path)!.id
          return (await send('GET', `/api/${kind}assets/${id}/`)).json.technical.hashes
        }
        const xxh64 = (path: string) => Bun.hash.xxHash64(readFileSync(path), 0n).toString(16).padStart(16, '0')
        expect({
          video: await hashesOf('video', movedTo.video),
          audio: await hashesOf('audio', movedTo.audio),
        }).toEqual(
          across
            ? { video: { xxh64: xxh64(movedTo.video) }, audio: { xxh64: xxh64(movedTo.audio) } }
            : { video: undefined, audio: undefined },
        )
        expect(filesBelow(drop)).toEqual([])
        expect(filesBelow(join(nas, 'A')).filter((f) => !f.startsWith('proxies/'))).toEqual([
          'audio/s.wav',
          'footage/in-a.mov',
          'video/a.mov',
        ])
        // One ImportLog per dropped file, saying the move.
        const logs = (await allLogs((m, p) => send(m, p))).filter((l) => l.asset_path.startsWith(drop))
        expect(logs.map((l) => [l.asset_path, l.status, l.asset_config.move_asset]).sort()).toEqual([
          [join(drop, 'card01', 'a.mov'), 'import_completed', true],
          [join(drop, 'card01', 's.wav'), 'import_completed', true],
        ])
      },
      180_000,
    )
  }
})
