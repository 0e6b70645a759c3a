import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { seedProduction, testApp } from '../helpers/app.ts'

const t = testApp(undefined, { tasks: true })
afterAll(async () => {
  await t.stop()
  rmSync(t.dataDir, { recursive: true, force: true })
})

test('create, copy, delete', async () => {
  const { root, production } = await seedProduction(t)
  mkdirSync(`${root}/Show/ep1/media`, { recursive: true })
  writeFileSync(`${root}/Show/ep1/ep1.prproj`, 'project')
  writeFileSync(`${root}/Show/ep1/media/a.txt`, 'aaa')
  const created = await t.post('/api/projectassets/', {
    name: 'Ep1',
    bundle_root: `${root}/Show/ep1`,
    production_id: production.id,
    path_file: `${root}/Show/ep1/ep1.prproj`,
  })
  expect(created.status).toBe(201)
  expect(created.json.type).toBe('premiere')
  expect(created.json.files).toEqual({ count: 2, bytes: 10 })
  const copy = await t.post('/api/projectassets/', {
    name: 'Ep2',
    bundle_root: `${root}/Show/ep2/`,
    production_id: production.id,
    copy_of: created.json.id,
  })
  expect(copy.status).toBe(201)
  expect(copy.json.status_asset).toBe(0)
  await t.runner.idle()
  const after = await t.get(`/api/projectassets/${copy.json.id}/`)
  expect(after.json.status_asset).toBe(6)
  expect(after.json.path_file).toBe(`${root}/Show/ep2/ep1.prproj`)
  expect(readFileSync(`${root}/Show/ep2/media/a.txt`, 'utf8')).toBe('aaa')
  const tasks = await t.get('/api/tasks/')
  expect(tasks.json[0]).toMatchObject({ kind: 'copy', state: 'done', files_done: 2, files_total: 2, bytes_done: 10 })
  const del = await t.request('DELETE', `/api/projectassets/${copy.json.id}/`)
  expect(del.status).toBe(202)
  await t.runner.idle()
  expect(existsSync(`${root}/Show/ep2`)).toBe(false)
  expect((await t.get(`/api/projectassets/${copy.json.id}/`)).status).toBe(404)
  const link = await t.post(`/api/projectassets/${created.json.id}/addasset/`, {
    asset_list: [{ asset_id: 5, type: 'foo' }],
  })
  expect(link.status).toBe(422)
  expect(link.json).toEqual({ detail: 'asset_list[0]: unsupported type "foo"; allowed types: audio, image, video' })
})
