// What the import task checks when it starts or resumes, and the limits of one request (the
// review of the import): the user's permissions again, the file still the one imported, a move
// never onto a name another asset has in the catalogue, a merged import keeping what each
// request gave, a bounded number of keywords and categories, a file another production
// catalogued meanwhile never moved. Tasks are queued with the runner stopped, the
// world changes, then the runner starts: the same as a change made while the service was down.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { errorEntry } from '../helpers/envelope.ts'
import {
  ARCHIVE,
  ARCHIVED_ONLY_VIDEO,
  IMPORT,
  appWithFfmpegDir,
  assetOf,
  emptyFfmpegDir,
  importBody,
  logsOf,
  placeClip,
  placeFile,
  removeScratch,
} from '../helpers/imports.ts'
import { hasFfmpeg, makeMedia } from '../helpers/media.ts'
import { tempDir } from '../helpers/temp.ts'

let base: TestApp
let app: ReturnType<typeof appWithFfmpegDir>
let root: string
let show: { id: number; codename: string; storage_root: string }

beforeEach(async () => {
  base = testApp(undefined, { tasks: false })
  ;({ root, production: show } = await seedProduction(base))
  app = appWithFfmpegDir(base, emptyFfmpegDir(), { start: false })
})
afterEach(async () => {
  await app.stop()
  base.cleanup()
  removeScratch()
})

const run = async () => {
  app.runner.start()
  await app.runner.idle()
}

test('more than 1,000 keywords in one request: 400 invalid at /asset/keywords, nothing written', async () => {
  const path = placeFile(join(root, 'in', 'kw.mov'))
  const keywords = Object.fromEntries(
    Array.from({ length: 11 }, (_, c) => [`cat${c}`, Array.from({ length: 100 }, (_, k) => `k${k}`)]),
  )
  const r = await app.post(IMPORT, importBody(path, {}, { keywords }))
  expect([r.status, r.json.errors[0].code, r.json.errors[0].source]).toEqual([
    400,
    'invalid',
    { pointer: '/asset/keywords' },
  ])
  expect(await logsOf(app.request, path)).toEqual([])
})

/** The keyword categories of video assets in the catalogue, by name. */
const categories = () =>
  base.db.$client
    .query<{ name: string }, []>("SELECT name FROM keyword_categories WHERE kind = 'video' ORDER BY name")
    .all()
    .map((c) => c.name)

test('categories count with keywords against the 1,000: 40,000 empty categories, or one with 1,000 keywords, are 400 at /asset/keywords, nothing written', async () => {
  const path = placeFile(join(root, 'in', 'cats.mov'))
  const empty = Object.fromEntries(Array.from({ length: 40_000 }, (_, c) => [`c${c}`, []]))
  const full = { One: Array.from({ length: 1000 }, (_, k) => `k${k}`) }
  for (const keywords of [empty, full]) {
    const r = await app.post(IMPORT, importBody(path, {}, { keywords }))
    expect([r.status, r.json.errors]).toEqual([400, [errorEntry(400, 'invalid', { pointer: '/asset/keywords' })]])
  }
  expect(await logsOf(app.request, path)).toEqual([])
  expect(categories()).toEqual([])
  // One category and 999 keywords: 1,000 entries, taken.
  expect((await app.post(IMPORT, importBody(path, {}, { keywords: { One: full.One.slice(1) } }))).status).toBe(201)
})

test('an empty category is not stored; the others are', async () => {
  const r = await app.post(
    IMPORT,
    importBody(placeFile(join(root, 'in', 'empty.mov')), {}, { keywords: { Empty: [], Place: ['Harbour'] } }),
  )
  expect(r.status).toBe(201)
  expect(categories()).toEqual(['Place'])
  expect((await assetOf(app.request, r.json.asset_import_id)).keywords).toEqual({ Place: ['Harbour'] })
})

test("a category's name of more than 255 characters: 400 invalid at its pointer (escaped), nothing written; 255 is taken", async () => {
  const path = placeFile(join(root, 'in', 'long.mov'))
  for (const name of ['c'.repeat(256), `a/b~${'c'.repeat(252)}`, 'c'.repeat(500_000)]) {
    const r = await app.post(IMPORT, importBody(path, {}, { keywords: { [name]: ['k'] } }))
    const pointer = `/asset/keywords/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`
    expect([r.status, r.json.errors]).toEqual([400, [errorEntry(400, 'invalid', { pointer })]])
  }
  expect(await logsOf(app.request, path)).toEqual([])
  expect(categories()).toEqual([])
  expect((await app.post(IMPORT, importBody(path, {}, { keywords: { ['c'.repeat(255)]: ['k'] } }))).status).toBe(201)
})

test('a file another production catalogued after the 201: the move is refused when the task starts (import_failed), the file and that asset stay', async () => {
  const other = (await app.post('/api/productions/', { name: 'Other', storage_root: join(root, 'Other') })).json
  const path = placeFile(join(root, 'in', 'shared.mov'))
  expect((await app.post(IMPORT, importBody(path, {}, {}, { type: 'audio', move_asset: true }))).status).toBe(201)
  const theirs = await app.post('/api/videoassets/', { name: 'theirs', path_file: path, production: other.id })
  expect(theirs.status).toBe(201)
  await run()
  expect((await logsOf(app.request, path))[0]).toMatchObject({
    status: 'import_failed',
    error: expect.stringContaining('another production catalogues this file'),
  })
  expect(readFileSync(path, 'utf8')).toBe('essence\n')
  expect(await assetOf(app.request, theirs.json.id)).toMatchObject({ path_file: path, is_production: true })
})

test('a user who lost write access before the task starts: import_failed, the file not moved', async () => {
  const key = base.makeUser('leaving', { write: [show.id] })
  const path = placeFile(join(root, 'in', 'a.mov'))
  expect((await app.post(IMPORT, importBody(path, {}, {}, { move_asset: true }), { key })).status).toBe(201)
  base.db.$client.run(`UPDATE production_access SET level = 'read'`)
  await run()
  const [log] = await logsOf(app.request, path)
  expect(log).toMatchObject({
    status: 'import_failed',
    error: expect.stringContaining(`no longer has write access to production ${show.id}`),
  })
  expect(existsSync(path)).toBe(true)
})

test("a user who can write only this production: the task's recheck accepts the move into its own storage_root/video/", async () => {
  const key = base.makeUser('own-only', { write: [show.id] })
  const path = placeFile(join(root, 'in', 'own.mov'))
  const r = await app.post(IMPORT, importBody(path, {}, {}, { move_asset: true }), { key })
  expect(r.status).toBe(201)
  await run()
  const target = join(show.storage_root, 'video', 'own.mov')
  expect((await logsOf(app.request, path))[0]).toMatchObject({ status: 'import_completed', error: '' })
  expect([existsSync(path), existsSync(target)]).toEqual([false, true])
  expect(await assetOf(app.request, r.json.asset_import_id)).toMatchObject({ path_file: target, is_production: true })
})

test('a move onto a name another asset has in the catalogue: import_failed before anything moves; the file stays and path_file names it', async () => {
  // The device holds the production's storage_root: the move goes to storage_root/video/.
  const taken = join(show.storage_root, 'video', 'a.mov')
  expect(
    (
      await app.post(
        IMPORT,
        importBody(
          taken,
          { is_archive: true, is_production: false, ...ARCHIVED_ONLY_VIDEO },
          { archive_details: ARCHIVE },
        ),
      )
    ).status,
  ).toBe(201)
  const path = placeFile(join(root, 'Show', 'a.mov'), 'the new one')
  const r = await app.post(IMPORT, importBody(path, {}, {}, { move_asset: true }))
  await run()
  expect((await logsOf(app.request, path))[0]).toMatchObject({
    status: 'import_failed',
    error: expect.stringContaining('catalogued at'),
  })
  expect(readFileSync(path, 'utf8')).toBe('the new one')
  expect(existsSync(taken)).toBe(false)
  expect((await assetOf(app.request, r.json.asset_import_id)).path_file).toBe(path)
})

test('path_file replaced by another file between the request and the task: import_failed, the newcomer is not probed or proxied', async () => {
  const path = placeFile(join(root, 'in', 'b.mov'))
  expect((await app.post(IMPORT, importBody(path))).status).toBe(201)
  await app.stop()
  renameSync(path, path + '.old')
  writeFileSync(path, 'someone else')
  // With ffmpeg missing the task would end import_completed with warnings; the check comes first
  // only when there is something to probe, so this needs the task to reach the probe: a real ffprobe.
  // (Without ffmpeg for the tests, none for the task either, even where one is installed.)
  const withProbe = appWithFfmpegDir(base, hasFfmpeg ? undefined : emptyFfmpegDir(), { start: false })
  try {
    withProbe.runner.start()
    await withProbe.runner.idle()
  } finally {
    await withProbe.stop()
  }
  const [log] = await logsOf(app.request, path)
  if (hasFfmpeg)
    expect(log).toMatchObject({ status: 'import_failed', error: expect.stringContaining('no longer the file') })
  else
    expect(log).toMatchObject({
      status: 'import_completed',
      warning: { probe: expect.any(String), proxy: expect.any(String) },
    })
})

test(
  hasFfmpeg
    ? 'two imports merged into one task: each request keeps what it gave; the probe fills only the rest'
    : 'without ffmpeg: two imports merged into one task end import_completed, each log',
  async () => {
    const media = await makeMedia(tempDir('reelhouse-merge-media-'), ['video'])
    const path = placeClip(media.video, join(root, 'in', 'clip.mov'))
    const withProbe = appWithFfmpegDir(base, hasFfmpeg ? undefined : emptyFfmpegDir(), { start: false })
    try {
      const first = await withProbe.post(IMPORT, importBody(path))
      const second = await withProbe.post(IMPORT, importBody(path, { width: 1920, format: 'given-by-request-2' }))
      expect(second.json.asset_import_id).toBe(first.json.asset_import_id)
      withProbe.runner.start()
      await withProbe.runner.idle()
      expect((await logsOf(withProbe.request, path)).map((l) => l.status)).toEqual([
        'import_completed',
        'import_completed',
      ])
      const asset = await assetOf(withProbe.request, first.json.asset_import_id)
      expect(asset.technical).toMatchObject({ width: 1920, format: 'given-by-request-2' })
      if (hasFfmpeg) expect(asset.technical).toMatchObject({ height: 240, fps: '25/1' })
    } finally {
      await withProbe.stop()
    }
  },
)
