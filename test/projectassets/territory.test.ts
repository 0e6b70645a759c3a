// Territory (service.md 5): a production owns the folders under its storage and proxy roots. A
// user with write access to one production must not reach another production's folders through
// a project of theirs, and no project folder may hold the service's own data folder.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { makeTree, snapshot } from '../helpers/tree.ts'

let t: TestApp
let root: string
let show: { id: number }
let other: { id: number }
let nested: { id: number }
let showKey: string
let bothKey: string

beforeAll(async () => {
  t = testApp(undefined, { tasks: true })
  let production
  ;({ root, production } = await seedProduction(t))
  show = production
  other = (await t.post('/api/productions/', { name: 'Other', storage_root: join(root, 'Other') })).json
  // A production whose folders lie inside Show's storage root.
  nested = (await t.post('/api/productions/?nest=true', { name: 'Nested', storage_root: join(root, 'Show', 'Nested') }))
    .json
  makeTree(join(root, 'Other', 'Footage'), { 'A001.mxf': 'other production footage', 'B001.mxf': 'more' })
  showKey = t.makeUser('show-editor', { write: [show.id], perms: ['browser.copy_projectasset'] })
  bothKey = t.makeUser('both-editor', { write: [show.id, nested.id] })
})
afterAll(async () => {
  await t.stop()
  rmSync(t.dataDir, { recursive: true, force: true })
})

const create = (bundle_root: string, key: string | undefined, production = show.id) =>
  t.post('/api/projectassets/', { name: 'P', bundle_root, production_id: production }, { key })

describe('creating a project folder', () => {
  test("another production's footage folder cannot become a project of mine (and its files are not counted)", async () => {
    const before = snapshot(join(root, 'Other'))
    const r = await create(join(root, 'Other', 'Footage'), showKey)
    expect(r.status).toBe(400)
    expect(r.json.errors).toEqual([expect.objectContaining({ code: 'invalid', source: { pointer: '/bundle_root' } })])
    expect(r.json.errors[0].detail).toContain('inside the storage root of its production')
    expect(r.text).not.toContain('"files"')
    expect(snapshot(join(root, 'Other'))).toEqual(before)
  })

  test('a non-superuser places folders only inside the own production storage root; nothing is created outside it', async () => {
    const outside = join(root, 'Loose', 'Project')
    expect((await create(outside, showKey)).status).toBe(400)
    expect(existsSync(join(root, 'Loose'))).toBe(false)
    expect((await create(join(root, 'Show', 'Mine'), showKey)).status).toBe(201)
  })

  test('a folder inside a production I cannot write to (nested in mine) needs write access to it: 403', async () => {
    const r = await create(join(root, 'Show', 'Nested', 'Edit'), showKey)
    expect(r.status).toBe(403)
    expect(r.json.errors[0]).toMatchObject({ code: 'permission_denied' })
    expect(r.json.errors[0].detail).not.toContain('Nested')
    expect(existsSync(join(root, 'Show', 'Nested', 'Edit'))).toBe(false)
    expect((await create(join(root, 'Show', 'Nested', 'Edit'), bothKey)).status).toBe(201)
  })

  test('a superuser may place a folder anywhere on a device', async () => {
    expect((await create(join(root, 'Anywhere', 'Edit'), undefined)).status).toBe(201)
  })

  test('never the data folder, nor a folder holding it, for anyone', async () => {
    const data = tempDir('reelhouse-home-')
    const app = testApp(join(data, 'reelhouse'))
    try {
      expect((await app.post('/api/devices/', { name: 'home', path: data })).status).toBe(201)
      const prod = (await app.post('/api/productions/', { name: 'Home', storage_root: join(data, 'Home') })).json
      for (const bundle of [data + '/reelhouse', data + '/']) {
        const r = await app.post('/api/projectassets/', {
          name: 'Catalogue',
          bundle_root: bundle,
          production_id: prod.id,
        })
        expect(r.status).toBe(400)
        expect(r.json.errors[0].source).toEqual({ pointer: '/bundle_root' })
      }
      const r = await app.post('/api/projectassets/', {
        name: 'Catalogue',
        bundle_root: join(data, 'reelhouse'),
        production_id: prod.id,
      })
      expect(r.json.errors[0].detail).toContain('data folder of this service')
      expect(existsSync(join(data, 'reelhouse', 'reelhouse.db'))).toBe(true)
    } finally {
      app.cleanup()
      rmSync(data, { recursive: true, force: true })
    }
  })
})

describe('copying into a folder', () => {
  test("a non-superuser's copy lands only inside the target production's storage root", async () => {
    const source = await create(join(root, 'Show', 'CopySource'), showKey)
    expect(source.status).toBe(201)
    const body = {
      name: 'C',
      bundle_root: join(root, 'Other', 'Stolen'),
      production_id: show.id,
      copy_of: source.json.id,
    }
    const r = await t.post('/api/projectassets/', body, { key: showKey })
    expect(r.status).toBe(400)
    expect(r.json.errors[0]).toMatchObject({ code: 'invalid', source: { pointer: '/bundle_root' } })
    expect(existsSync(join(root, 'Other', 'Stolen'))).toBe(false)
  })
})

describe('deleting a folder', () => {
  test('a delete is refused (409) while the folder holds catalogued media of another production; nothing is removed', async () => {
    const bundle = join(root, 'Show', 'Mixed')
    makeTree(bundle, { 'edit.prproj': 'p', 'media/shot.mov': 'other production shot' })
    const project = (await create(bundle, undefined)).json
    const video = await t.post('/api/videoassets/', {
      name: 'shot',
      path_file: join(bundle, 'media', 'shot.mov'),
      production: other.id,
    })
    expect(video.status).toBe(201)
    const before = snapshot(bundle)
    const r = await t.request('DELETE', `/api/projectassets/${project.id}/`)
    expect(r.status).toBe(409)
    expect(r.json.errors[0]).toMatchObject({ code: 'conflict' })
    expect(snapshot(bundle)).toEqual(before)
    expect((await t.get(`/api/projectassets/${project.id}/`)).json.is_production).toBe(true)
  })

  test('media of the same production inside do not block it', async () => {
    const bundle = join(root, 'Show', 'Own')
    makeTree(bundle, { 'media/shot.mov': 'own shot' })
    const project = (await create(bundle, undefined)).json
    expect(
      (
        await t.post('/api/videoassets/', {
          name: 'own',
          path_file: join(bundle, 'media', 'shot.mov'),
          production: show.id,
        })
      ).status,
    ).toBe(201)
    expect((await t.request('DELETE', `/api/projectassets/${project.id}/`)).status).toBe(202)
    await t.runner.idle()
    expect(existsSync(bundle)).toBe(false)
  })

  test('a folder inside a production the user cannot write to is not theirs to delete (403)', async () => {
    const bundle = join(root, 'Show', 'Nested', 'Shared')
    const project = (await create(bundle, undefined, show.id)).json
    const r = await t.request('DELETE', `/api/projectassets/${project.id}/`, { key: showKey })
    expect(r.status).toBe(403)
    expect(existsSync(bundle)).toBe(true)
  })

  test('a media folder of another production sitting next to mine keeps its files', async () => {
    mkdirSync(join(root, 'Show', 'Neighbour'), { recursive: true })
    const project = (await create(join(root, 'Show', 'Neighbour'), showKey)).json
    expect((await t.request('DELETE', `/api/projectassets/${project.id}/`, { key: showKey })).status).toBe(202)
    await t.runner.idle()
    expect(snapshot(join(root, 'Other', 'Footage'))).toEqual({
      'A001.mxf': expect.objectContaining({ kind: 'file' }),
      'B001.mxf': expect.objectContaining({ kind: 'file' }),
    })
  })
})
