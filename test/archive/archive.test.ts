// Archive and restore on real folders: an archive device, a production on another device, an
// asset registered with POST /api/videoassets/. Tasks run as in the service (the runner started),
// and each test waits for the runner to be idle.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { dlopen, FFIType } from 'bun:ffi'
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
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
const xxh64Of = (text: string) => Bun.hash.xxHash64(text).toString(16).padStart(16, '0')

/** Sets the start block LTFS gives a file on tape (Linux: the user.ltfs.startblock attribute). */
function setStartBlock(path: string, block: number) {
  const { symbols } = dlopen('libc.so.6', {
    setxattr: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
  })
  const value = Buffer.from(String(block))
  const result = symbols.setxattr(
    Buffer.from(`${path}\0`),
    Buffer.from('user.ltfs.startblock\0'),
    value,
    value.length,
    0,
  )
  if (result !== 0) throw new Error(`setxattr failed on ${path}`)
}

beforeEach(async () => {
  const t = testApp(undefined, { tasks: true })
  const { root, production } = await seedProduction(t, 'Night Shift')
  const archive = tempDir('reelhouse-archive-')
  t.owned.push(archive)
  const device = await t.post('/api/devices/', { name: 'vault', path: archive, is_archive: true })
  if (device.status !== 201) throw new Error(device.text)
  const file = `${root}/Night Shift/day1/clip.mov`
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
  const record = (await w.t.get(`/api/videoassets/${w.asset}/`)).json
  expect(record).toMatchObject({ is_archive: true, is_production: true })
  // The record's answer carries archive_details (an extension: api.md has it among an import's members).
  expect(record.archive_details).toEqual({
    archive_handle: handle,
    archive_type: 'archive_std',
    original_path: w.file,
  })
  // The hash of what was copied is kept in technical.
  expect(record.technical.hashes).toEqual({ xxh64: xxh64Of(BYTES) })
  expect(done.result).toMatchObject({ xxh64: xxh64Of(BYTES), archive_handle: handle, sidecars: [] })
  expect(readFileSync(w.file, 'utf8')).toBe(BYTES)
})

test('sidecars go with the clip, into the MHL, and come back with a restore; other files of the folder stay', async () => {
  const day = `${w.root}/Night Shift/day1`
  writeFileSync(`${day}/clip.xml`, '<clip/>')
  writeFileSync(`${day}/clipM01.XML`, '<NonRealTimeMeta/>')
  writeFileSync(`${day}/clip.mov.xmp`, '<x:xmpmeta/>')
  writeFileSync(`${day}/clip2.xml`, 'another clip')
  writeFileSync(`${day}/clip.wav`, 'not a sidecar')
  const done = await archive({ purge: true })
  expect([done.state, done.error]).toEqual(['done', ''])
  expect(done.result.sidecars.sort()).toEqual(['clip.mov.xmp', 'clip.xml', 'clipM01.XML'])
  const folder = `${w.archive}/${w.codename}/Night Shift/day1`
  expect(readdirSync(folder).sort()).toEqual(['clip.mov', 'clip.mov.xmp', 'clip.xml', 'clipM01.XML'])
  expect(readFileSync(`${folder}/clipM01.XML`, 'utf8')).toBe('<NonRealTimeMeta/>')
  const manifest = readdirSync(`${w.archive}/${w.codename}/ascmhl`).find((n) => n.endsWith('.mhl'))!
  const xml = readFileSync(`${w.archive}/${w.codename}/ascmhl/${manifest}`, 'utf8')
  for (const name of ['clip.mov', 'clip.xml', 'clipM01.XML', 'clip.mov.xmp'])
    expect(xml).toContain(`Night Shift/day1/${name}</path>`)
  // Purged online: the clip and its sidecars; the rest of the folder stays.
  expect(readdirSync(day).sort()).toEqual(['clip.wav', 'clip2.xml'])

  const r = await w.t.post('/api/restoreactivities/', { content_type_id: w.contentType, asset_id: w.asset })
  await w.t.runner.idle()
  const restored = await task(r.json.tasks[0].id)
  expect([restored.state, restored.error]).toEqual(['done', ''])
  expect(readdirSync(day).sort()).toEqual([
    'clip.mov',
    'clip.mov.xmp',
    'clip.wav',
    'clip.xml',
    'clip2.xml',
    'clipM01.XML',
  ])
  expect(readFileSync(`${day}/clip.xml`, 'utf8')).toBe('<clip/>')
})

test('a run that died is resumed: its temporaries go, a copy it linked with the same bytes is taken, not written again', async () => {
  const folder = `${w.archive}/${w.codename}/Night Shift/day1`
  mkdirSync(folder, { recursive: true })
  // The next task's id: the temporaries of a dead run of it carry it.
  const next = Math.max(0, ...(await w.t.get('/api/tasks/')).json.map((t: { id: number }) => t.id)) + 1
  writeFileSync(`${folder}/.reelhouse-archive-${next}-0123456789ab`, 'half a copy')
  writeFileSync(`${folder}/clip.mov`, BYTES)
  const before = statSync(`${folder}/clip.mov`).ino
  const done = await archive({ archive_type: 'archive_ltfs' })
  expect([done.id, done.state, done.error]).toEqual([next, 'done', ''])
  expect(done.result.adopted).toBe(true)
  expect(readdirSync(folder)).toEqual(['clip.mov'])
  expect(statSync(`${folder}/clip.mov`).ino).toBe(before)
  expect((await w.t.get(`/api/videoassets/${w.asset}/`)).json.archive_details.archive_handle).toBe(`${folder}/clip.mov`)
})

test('a restore of an asset archived and still online takes the file that is there when it holds the same bytes; other bytes fail it', async () => {
  expect((await archive()).state).toBe('done')
  const restore = async () => {
    const r = await w.t.post('/api/restoreactivities/', [{ content_type_id: w.contentType, asset_id: w.asset }])
    expect(r.status).toBe(202)
    await w.t.runner.idle()
    return task(r.json.tasks[0].id)
  }
  const same = await restore()
  expect([same.state, same.error, same.result.adopted]).toEqual(['done', '', true])
  writeFileSync(w.file, 'edited since')
  const other = await restore()
  expect(other.state).toBe('failed')
  expect(other.error).toContain('not overwritten')
  expect(readFileSync(w.file, 'utf8')).toBe('edited since')
})

test.skipIf(process.platform !== 'linux')(
  'restores from one tape run in the order of the files on the tape (ltfs.startblock), whatever the order asked',
  async () => {
    // Three clips archived (purged), then given start blocks the other way round from their names.
    const ids = [w.asset]
    for (const name of ['clip-b.mov', 'clip-c.mov']) {
      const file = `${w.root}/Night Shift/day1/${name}`
      writeFileSync(file, `${name} `.repeat(100))
      const r = await w.t.post('/api/videoassets/', { name, path_file: file, production_name: 'Night Shift' })
      ids.push(r.json.id)
    }
    const r = await w.t.post(
      '/api/archiveactivities/',
      ids.map((asset_id) => ({
        content_type_id: w.contentType,
        asset_id,
        archive_type: 'archive_ltfs',
        archive_connector: 'vault',
        purge: true,
      })),
    )
    expect(r.status).toBe(202)
    await w.t.runner.idle()
    const folder = `${w.archive}/${w.codename}/Night Shift/day1`
    const blocks: Record<string, number> = { 'clip.mov': 3000, 'clip-b.mov': 2000, 'clip-c.mov': 1000 }
    for (const [name, block] of Object.entries(blocks)) setStartBlock(`${folder}/${name}`, block)

    const restore = await w.t.post(
      '/api/restoreactivities/',
      ids.map((asset_id) => ({ content_type_id: w.contentType, asset_id })),
    )
    expect(restore.status).toBe(202)
    // Queued (and so run) in tape order: clip-c, clip-b, clip.
    const queued = restore.json.tasks.map((t: { id: number }) => t.id)
    expect(queued).toEqual([...queued].sort((a: number, b: number) => a - b))
    await w.t.runner.idle()
    const order = []
    for (const id of queued) order.push((await task(id)).result.asset)
    expect(order).toEqual([ids[2], ids[1], ids[0]])
  },
)

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
