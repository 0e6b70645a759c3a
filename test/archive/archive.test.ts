// Archive and restore on real folders: an archive device, a production on another device, an
// asset registered with POST /api/videoassets/. Tasks run as in the service (the runner started),
// and each test waits for the runner to be idle.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { type TestApp, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

type World = {
  device: number

  t: TestApp
  root: string
  archive: string
  codename: string
  file: string
  asset: number
  contentType: number
}
let w: World

const BYTES = 'essence bytes '.repeat(1000)

beforeEach(async () => {
  const t = testApp(undefined, { tasks: true })
  const { root, production } = await seedProduction(t, 'Night Shift')
  const archive = tempDir('reelhouse-archive-')
  t.owned.push(archive)
  const device = await t.post('/api/devices/', { name: 'vault', path: archive, is_archive: true })
  if (device.status !== 201) throw new Error(device.text)
  const file = `${root}/Night Shift/day1/clip.mov`
  const { mkdirSync } = await import('node:fs')
  mkdirSync(`${root}/Night Shift/day1`, { recursive: true })
  writeFileSync(file, BYTES)
  const r = await t.post('/api/videoassets/', { name: 'clip.mov', path_file: file, production_name: 'Night Shift' })
  if (r.status !== 201) throw new Error(r.text)
  const types = (await t.get('/api/contenttypes/')).json as { id: number; name: string }[]
  w = {
    t,
    device: device.json.id,
    root,
    archive,
    codename: (await t.get(`/api/productions/${production.id}/`)).json.codename,
    file,
    asset: r.json.id,
    contentType: types.find((c) => c.name === 'videoasset')!.id,
  }
})
afterEach(async () => {
  await w.t.stop()
})

const task = async (id: number) => (await w.t.get(`/api/tasks/${id}/`)).json

async function archive(extra: Record<string, unknown> = {}) {
  const r = await w.t.post('/api/archiveactivities/', [
    {
      content_type_id: w.contentType,
      asset_id: w.asset,
      archive_type: 'archive_std',
      archive_connector: 'vault',
      ...extra,
    },
  ])
  expect(r.status).toBe(202)
  expect(r.json).toEqual({
    tasks: [{ id: expect.any(Number), state: 'queued', url: expect.stringMatching(/^\/api\/tasks\/\d+\/$/) }],
  })
  await w.t.runner.idle()
  return task(r.json.tasks[0].id)
}

test('archive: the file is copied under <device>/<codename>/<path on its device>, with an MHL generation, and the asset says so', async () => {
  const done = await archive()
  expect([done.state, done.error]).toEqual(['done', ''])
  const handle = `${w.archive}/${w.codename}/Night Shift/day1/clip.mov`
  expect(readFileSync(handle, 'utf8')).toBe(BYTES)
  const mhl = readdirSync(`${w.archive}/${w.codename}/ascmhl`)
  expect(mhl).toContain('ascmhl_chain.xml')
  expect(mhl.some((n) => n.endsWith('.mhl'))).toBe(true)
  expect(readdirSync(`${w.archive}/${w.codename}/Night Shift/day1`)).toEqual(['clip.mov']) // no temp left
  expect((await w.t.get(`/api/videoassets/${w.asset}/`)).json).toMatchObject({ is_archive: true, is_production: true })
  // archive_details is not in the asset's API answer (api.md lists it among the import's fields): read from the catalogue.
  expect(w.t.core.media.byId(w.asset)!.archive_details).toEqual({
    archive_handle: handle,
    archive_type: 'archive_std',
    original_path: w.file,
  })
  expect(readFileSync(w.file, 'utf8')).toBe(BYTES)
})

test('archive with purge, then restore: the online file goes only after the copy, and comes back', async () => {
  const done = await archive({
    purge: true,
    archive_connector: w.device,
  })
  expect([done.state, done.error]).toEqual(['done', ''])
  expect(existsSync(w.file)).toBe(false)
  expect((await w.t.get(`/api/videoassets/${w.asset}/`)).json).toMatchObject({ is_archive: true, is_production: false })

  const r = await w.t.post('/api/restoreactivities/', { content_type_id: w.contentType, asset_id: w.asset })
  expect(r.status).toBe(202)
  await w.t.runner.idle()
  const restored = await task(r.json.tasks[0].id)
  expect([restored.state, restored.error]).toEqual(['done', ''])
  expect(readFileSync(w.file, 'utf8')).toBe(BYTES)
  expect((await w.t.get(`/api/videoassets/${w.asset}/`)).json).toMatchObject({
    is_archive: true,
    is_production: true,
    path_file: w.file,
  })
})

test('archive_ltfs never rewrites a file on the tape: a second archive of the same file fails and leaves it', async () => {
  expect((await archive({ archive_type: 'archive_ltfs' })).state).toBe('done')
  const handle = `${w.archive}/${w.codename}/Night Shift/day1/clip.mov`
  writeFileSync(handle, 'already on tape')
  const again = await archive({ archive_type: 'archive_ltfs' })
  expect(again.state).toBe('failed')
  expect(again.error).toContain('never rewritten')
  expect(readFileSync(handle, 'utf8')).toBe('already on tape')
})

test('errors: 400 for a device that is not an archive, an unknown asset, a wrong archive_type; 501 for archive_awps', async () => {
  const item = {
    content_type_id: w.contentType,
    asset_id: w.asset,
    archive_type: 'archive_std',
    archive_connector: 'vault',
  }
  const post = (body: unknown) => w.t.post('/api/archiveactivities/', body)
  const at = (pointer: string) => ({ pointer })
  expectError(
    await post([{ ...item, archive_connector: 'Night Shift-disk' }]),
    400,
    'invalid',
    at('/0/archive_connector'),
  )
  expectError(await post([{ ...item, archive_connector: 'nope' }]), 400, 'invalid', at('/0/archive_connector'))
  expectError(await post([{ ...item, asset_id: 9999 }]), 400, 'invalid', at('/0/asset_id'))
  expectError(await post([item, { ...item, archive_type: 'archive_tape' }]), 400, 'invalid', at('/1/archive_type'))
  const awps = await post([{ ...item, archive_type: 'archive_awps' }])
  expectError(awps, 501, 'not_implemented')
  expect(awps.json.errors[0].detail).toContain('Archiware P5')
  // Not archived: nothing to restore.
  expectError(
    await w.t.post('/api/restoreactivities/', [{ content_type_id: w.contentType, asset_id: w.asset }]),
    400,
    'invalid',
    at('/0/asset_id'),
  )
  // Nothing was queued.
  expect((await w.t.get('/api/tasks/')).json.filter((t: { kind: string }) => t.kind === 'archive')).toEqual([])
})

test('permissions: the codename and write access are needed; a reader is refused with 403', async () => {
  const reader = w.t.makeUser('reader', { read: [1], write: [1] })
  const item = {
    content_type_id: w.contentType,
    asset_id: w.asset,
    archive_type: 'archive_std',
    archive_connector: 'vault',
  }
  expectError(await w.t.post('/api/archiveactivities/', item, { key: reader }), 403, 'permission_denied')
  const archivist = w.t.makeUser('archivist', { read: [1], perms: ['browser.archive_mediaasset'] })
  expectError(await w.t.post('/api/archiveactivities/', item, { key: archivist }), 403, 'permission_denied')
  const both = w.t.makeUser('both', { read: [1], write: [1], perms: ['browser.archive_mediaasset'] })
  expect((await w.t.post('/api/archiveactivities/', item, { key: both })).status).toBe(202)
  await w.t.runner.idle()
})

test('restore to another path inside the production; a path outside it is 400', async () => {
  expect((await archive({ purge: true })).state).toBe('done')
  const item = { content_type_id: w.contentType, asset_id: w.asset }
  const outside = tempDir('reelhouse-outside-')
  w.t.owned.push(outside)
  expectError(await w.t.post('/api/restoreactivities/', [{ ...item, path: `${outside}/clip.mov` }]), 400, 'invalid', {
    pointer: '/0/path',
  })
  const elsewhere = `${w.root}/Night Shift/restored/clip.mov`
  const r = await w.t.post('/api/restoreactivities/', [{ ...item, path: elsewhere }])
  expect(r.status).toBe(202)
  await w.t.runner.idle()
  expect((await task(r.json.tasks[0].id)).state).toBe('done')
  expect(readFileSync(elsewhere, 'utf8')).toBe(BYTES)
  expect((await w.t.get(`/api/videoassets/${w.asset}/`)).json).toMatchObject({
    path_file: elsewhere,
    is_production: true,
  })
})
