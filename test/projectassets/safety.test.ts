// What must never happen to folders: a delete taking more than its own folder, a copy leaving
// files behind, work lost or done twice at a shutdown, two projects sharing a folder.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/temp.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { leftovers, makeTree, manyFiles, snapshot } from '../helpers/tree.ts'
import { waitFor } from '../helpers/wait.ts'
import { TEST_TIMEOUT_MS } from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

let t: TestApp
let root: string
let show: string
let production: { id: number; name: string }

beforeAll(async () => {
  t = testApp(undefined, { tasks: true })
  ;({ root, production } = await seedProduction(t))
  show = join(root, 'Show')
})
afterAll(async () => {
  await t.stop()
  rmSync(t.dataDir, { recursive: true, force: true })
})

const create = (bundle_root: string, app: TestApp = t) =>
  app.post('/api/projectassets/', { name: bundle_root.split('/').at(-1), bundle_root, production_id: production.id })

const started = (prefix: string) => () => leftovers(show).some((n) => n.startsWith(prefix))

describe('what a project folder may be', () => {
  test('not a folder holding a device root, a storage root or a proxy root', async () => {
    mkdirSync(join(show, 'P', 'mount'), { recursive: true })
    expect((await t.post('/api/devices/', { name: 'inner', path: join(show, 'P', 'mount') })).status).toBe(201)
    const holding = await create(join(show, 'P'))
    expect(holding.status).toBe(400)
    expect(holding.json.errors[0]).toMatchObject({ code: 'invalid', source: { pointer: '/bundle_root' } })
    expect(holding.json.errors[0].detail).toContain('device inner')
    expect((await t.post('/api/productions/', { name: 'Other', storage_root: join(root, 'Other') })).status).toBe(201)
    const storage = await create(join(root, 'Other'))
    expect(storage.json.errors[0].detail).toContain('storage root of production Other')
    const proxies = await create(join(root, 'Other', 'proxies'))
    expect(proxies.json.errors[0].detail).toContain('proxy root of production Other')
  })

  test('a device or a production root is never put inside a project folder', async () => {
    expect((await create(join(show, 'Q'))).status).toBe(201)
    const device = await t.post('/api/devices/', { name: 'nested', path: join(show, 'Q', 'disk') })
    expect(device.status).toBe(400)
    expect(device.json.errors[0].source).toEqual({ pointer: '/path' })
    const prod = await t.post('/api/productions/', { name: 'Nested', storage_root: join(show, 'Q', 'store') })
    expect(prod.status).toBe(400)
    expect(prod.json.errors[0].source).toEqual({ pointer: '/storage_root' })
  })

  test('not a folder reached through a symbolic link (one folder, two names)', async () => {
    expect((await create(join(show, 'A'))).status).toBe(201)
    symlinkSync(show, join(root, 'alias'))
    const alias = await create(join(root, 'alias', 'A'))
    expect(alias.status).toBe(400)
    expect(alias.json.errors[0].detail).toContain('symbolic link')
    // Never the link's target: it may lie outside every device (service.md 5).
    expect(alias.json.errors[0].detail).not.toContain(show)
    const aliasNew = await create(join(root, 'alias', 'New'))
    expect(aliasNew.status).toBe(400)
  })

  test('two concurrent creates of nested folders: exactly one lands', async () => {
    const [outer, inner] = await Promise.all([create(join(show, 'Race')), create(join(show, 'Race', 'Inner'))])
    expect([outer.status, inner.status].sort()).toEqual([201, 400])
  })
})

describe('copy', () => {
  test('a file failing in the middle of a copy: every worker stops, nothing is left behind', async () => {
    const bundle = join(show, 'Failing')
    manyFiles(bundle, 2000, 256 * 1024)
    const source = await create(bundle)
    const copy = await t.post('/api/projectassets/', {
      name: 'x',
      bundle_root: join(show, 'Failing copy'),
      production_id: production.id,
      copy_of: source.json.id,
    })
    await waitFor(started('.reelhouse-copy-'), 'the copy to start')
    for (const dir of readdirSync(bundle))
      rmSync(join(bundle, dir, `f${Number(dir.slice(1)) * 100 + 99}.bin`), { force: true })
    await t.runner.idle()
    expect(leftovers(show)).toEqual([])
    const failed = (await t.get(`/api/projectassets/${copy.json.id}/`)).json
    expect(failed.status_asset).toBe(-1)
    expect(failed.status_asset_description).toContain('disappeared')
    expect(existsSync(join(show, 'Failing copy'))).toBe(false)
  })

  test('a delete arriving while the last (large) file is copied still cancels the copy', async () => {
    const source = join(show, 'Single')
    makeTree(source, { 'only.mxf': 512 * 1024 * 1024 })
    const src = await create(source)
    const copy = await t.post('/api/projectassets/', {
      name: 'x',
      bundle_root: join(show, 'Single copy'),
      production_id: production.id,
      copy_of: src.json.id,
    })
    await waitFor(started('.reelhouse-copy-'), 'the copy to start')
    expect((await t.request('DELETE', `/api/projectassets/${copy.json.id}/`)).status).toBe(202)
    await t.runner.idle()
    const copyTask = (await t.get('/api/tasks/?kind=copy')).json[0]
    expect(copyTask).toMatchObject({ state: 'failed', error: 'cancelled: the project asset is being deleted' })
    expect((await t.get(`/api/projectassets/${copy.json.id}/`)).status).toBe(404)
    expect(existsSync(join(show, 'Single copy'))).toBe(false)
    expect(leftovers(show)).toEqual([])
  })

  test('a project being copied from cannot be deleted until the copy ends (409)', async () => {
    const bundle = join(show, 'Busy source')
    manyFiles(bundle, 1000, 64 * 1024)
    const before = snapshot(bundle)
    const src = await create(bundle)
    const copy = await t.post('/api/projectassets/', {
      name: 'x',
      bundle_root: join(show, 'Busy copy'),
      production_id: production.id,
      copy_of: src.json.id,
    })
    const refused = await t.request('DELETE', `/api/projectassets/${src.json.id}/`)
    expect(refused.status).toBe(409)
    expect(refused.json.errors[0].code).toBe('conflict')
    await t.runner.idle()
    expect((await t.get(`/api/projectassets/${copy.json.id}/`)).json.status_asset).toBe(6)
    expect(snapshot(bundle)).toEqual(before)
    expect((await t.request('DELETE', `/api/projectassets/${src.json.id}/`)).status).toBe(202)
    await t.runner.idle()
  })
})

describe('delete', () => {
  test('media files inside a deleted folder stay catalogued, offline', async () => {
    const bundle = join(show, 'With media')
    makeTree(bundle, { 'clip.mov': 'video' })
    const p = await create(bundle)
    const asset = await t.post('/api/videoassets/', {
      name: 'clip',
      path_file: join(bundle, 'clip.mov'),
      production: production.id,
    })
    await t.request('DELETE', `/api/projectassets/${p.json.id}/`)
    await t.runner.idle()
    expect((await t.get(`/api/videoassets/${asset.json.id}/`)).json).toMatchObject({
      id: asset.json.id,
      is_production: false,
    })
  })

  test('a shutdown in the middle of a delete leaves it resumable; the next start finishes it', async () => {
    const app = testApp(undefined, { tasks: true })
    const { root: disk, production: prod } = await seedProduction(app, 'Stopping')
    const bundle = join(disk, 'Stopping', 'Doomed')
    manyFiles(bundle, 20_000, 1, 500)
    makeTree(join(disk, 'Stopping', 'Neighbour'), { 'stay.txt': 'stay' })
    const p = await app.post('/api/projectassets/', { name: 'Doomed', bundle_root: bundle, production_id: prod.id })
    await app.request('DELETE', `/api/projectassets/${p.json.id}/`)
    await waitFor(() => leftovers(join(disk, 'Stopping')).length > 0, 'the delete to start')
    await app.runner.stop()
    app.close()

    expect(leftovers(join(disk, 'Stopping'))).toHaveLength(1)
    const again = testApp(app.dataDir, { tasks: true })
    await again.runner.idle()
    expect((await again.get(`/api/projectassets/${p.json.id}/`)).status).toBe(404)
    expect(leftovers(join(disk, 'Stopping'))).toEqual([])
    expect(readFileSync(join(disk, 'Stopping', 'Neighbour', 'stay.txt'), 'utf8')).toBe('stay')
    const task = (await again.get('/api/tasks/?kind=delete')).json[0]
    expect(task).toMatchObject({ state: 'done', error: '' })
    await again.stop()
    rmSync(disk, { recursive: true, force: true })
    rmSync(app.dataDir, { recursive: true, force: true })
  })
})

test('a body that is not a JSON object on addasset is a 400 {detail}', async () => {
  const p = await create(join(show, 'Linkable'))
  for (const raw of ['[]', 'null', '5', '"x"']) {
    const r = await t.request('POST', `/api/projectassets/${p.json.id}/addasset/`, {
      raw,
      headers: { 'content-type': 'application/json' },
    })
    expect([r.status, Object.keys(r.json)]).toEqual([400, ['detail']])
  }
})

test('DELETE of an id that cannot exist answers 404 does_not_exist, like a missing one', async () => {
  for (const id of ['abc', '0', '99999']) {
    const r = await t.request('DELETE', `/api/projectassets/${id}/`)
    expect([r.status, r.json.errors[0].code]).toEqual([404, 'does_not_exist'])
  }
})

describe('work folders and real paths', () => {
  test('names of Reelhouse work folders are reserved for projects, devices and productions', async () => {
    const project = await create(join(show, '.reelhouse-copy-99'))
    expect([project.status, project.json.errors[0].source]).toEqual([400, { pointer: '/bundle_root' }])
    const device = await t.post('/api/devices/', { name: 'reserved', path: join(root, '.reelhouse-delete-1') })
    expect([device.status, device.json.errors[0].source]).toEqual([400, { pointer: '/path' }])
    const prod = await t.post('/api/productions/', { name: 'Reserved', storage_root: join(root, '.reelhouse-x') })
    expect([prod.status, prod.json.errors[0].source]).toEqual([400, { pointer: '/storage_root' }])
  })

  test('a device whose path is a link into a project folder is refused', async () => {
    expect((await create(join(show, 'Linked target'))).status).toBe(201)
    mkdirSync(join(show, 'Linked target', 'media'))
    const link = join(tempDirOwned(), 'devB')
    symlinkSync(join(show, 'Linked target', 'media'), link)
    const device = await t.post('/api/devices/', { name: 'through-link', path: link })
    expect(device.status).toBe(400)
    expect(device.json.errors[0].detail).toContain('inside the folder of project asset')
  })
  // A folder swapped for a link while a removal runs: test/storage/remove.test.ts (deterministic
  // swaps from the progress callback) and remove-race.test.ts (a racing process).
})

const owned: string[] = []
function tempDirOwned() {
  const dir = tempDir('reelhouse-safety-')
  owned.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of owned) rmSync(dir, { recursive: true, force: true })
})
