// Edit bays: a device names the groups whose members may copy projects onto it
// (write_permission_groups, with allow_direct_writing), so an editor copies a project to their bay
// without being a superuser. The territory rule stays for everything else: a project created there,
// a copy by someone in no such group, a device that does not allow direct writing, and a bay
// folder inside another production's folders are refused as before, and a copy task checks the
// group again when it starts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { makeTree } from '../helpers/tree.ts'
import type { Log } from '../../src/util/log.ts'

const PA = '/api/projectassets/'
let t: TestApp
let root: string
let bay: string
let show: { id: number }
let source: { id: number }
let bayDevice: { id: number }
let editorKey: string
let outsiderKey: string

beforeAll(async () => {
  t = testApp(undefined, { tasks: true })
  ;({ root, production: show } = await seedProduction(t))
  bay = tempDir('reelhouse-bay-')
  t.owned.push(bay)
  t.users.addGroup('editor', [])
  t.users.addGroup('colourist', ['browser.copy_projectasset'])
  // The editor's permissions come from the group alone: no --perm of their own.
  editorKey = t.makeUser('ed', { groups: ['editor'], write: [show.id] })
  outsiderKey = t.makeUser('cora', { groups: ['colourist'], write: [show.id] })
  const device = await t.post('/api/devices/', { name: 'bay-1', path: bay, write_permission_groups: ['editor'] })
  expect(device.status).toBe(201)
  expect(device.json.warning).toBeUndefined()
  bayDevice = device.json
  makeTree(join(root, 'Show', 'Cut'), { 'cut.prproj': 'the cut', 'media/a.wav': 'audio' })
  const made = await t.post(PA, { name: 'Cut', bundle_root: join(root, 'Show', 'Cut'), production_id: show.id })
  expect(made.status).toBe(201)
  source = made.json
})
afterAll(async () => {
  await t.stop()
  rmSync(t.dataDir, { recursive: true, force: true })
})

const copy = (bundle_root: string, key: string) =>
  t.post(PA, { name: 'Cut on the bay', bundle_root, production_id: show.id, copy_of: source.id }, { key })

describe('a copy onto a device that names a group of the user', () => {
  test('an editor (by group) copies a project onto the bay; the task finishes and the files are there', async () => {
    const target = join(bay, 'ed', 'Cut')
    const r = await copy(target, editorKey)
    expect(r.status).toBe(201)
    expect(r.json.bundle_root).toBe(`${target}/`)
    await t.runner.idle()
    const after = await t.get(`${PA}${r.json.id}/`, { key: editorKey })
    expect(after.json).toMatchObject({ status_asset: 6, is_production: true })
    expect(readFileSync(join(target, 'cut.prproj'), 'utf8')).toBe('the cut')
  })

  test('someone in no group the bay names is refused (400, saying why); nothing is made', async () => {
    const target = join(bay, 'cora', 'Cut')
    const r = await copy(target, outsiderKey)
    expect(r.status).toBe(400)
    expect(r.json.errors[0]).toMatchObject({ code: 'invalid', source: { pointer: '/bundle_root' } })
    expect(r.json.errors[0].detail).toContain('write_permission_groups')
    expect(existsSync(join(bay, 'cora'))).toBe(false)
  })

  test('creating (not copying) a project on the bay stays under the territory rule', async () => {
    const r = await t.post(
      PA,
      { name: 'New', bundle_root: join(bay, 'ed', 'New'), production_id: show.id },
      { key: editorKey },
    )
    expect(r.status).toBe(400)
    expect(r.json.errors[0].detail).toContain('inside the storage root of its production')
  })

  test('with allow_direct_writing false the groups let nobody write', async () => {
    const off = await t.request('PATCH', `/api/devices/${bayDevice.id}/`, { body: { allow_direct_writing: false } })
    expect(off.status).toBe(200)
    try {
      const r = await copy(join(bay, 'ed', 'Off'), editorKey)
      expect(r.status).toBe(400)
      expect(existsSync(join(bay, 'ed', 'Off'))).toBe(false)
    } finally {
      const on = await t.request('PATCH', `/api/devices/${bayDevice.id}/`, { body: { allow_direct_writing: true } })
      expect(on.status).toBe(200)
    }
  })

  test('a bay folder inside a production the editor cannot write to is still 403', async () => {
    const other = await t.post('/api/productions/', { name: 'Other', storage_root: join(bay, 'Other') })
    expect(other.status).toBe(201)
    const r = await copy(join(bay, 'Other', 'Cut'), editorKey)
    expect(r.status).toBe(403)
    expect(existsSync(join(bay, 'Other', 'Cut'))).toBe(false)
  })
})

test('a copy queued while the editor was in the group fails at its start once they are not', async () => {
  // An app whose runner starts only when told, as after a restart.
  const paused = testApp(undefined, { tasks: false })
  try {
    const { root: disk, production } = await seedProduction(paused, 'Paused')
    const bay3 = tempDir('reelhouse-bay3-')
    paused.owned.push(bay3)
    paused.users.addGroup('editor', [])
    const key = paused.makeUser('ed', { groups: ['editor'], write: [production.id] })
    expect(
      (await paused.post('/api/devices/', { name: 'bay-3', path: bay3, write_permission_groups: ['editor'] })).status,
    ).toBe(201)
    makeTree(join(disk, 'Paused', 'Cut'), { 'cut.prproj': 'the cut' })
    const made = await paused.post(PA, {
      name: 'Cut',
      bundle_root: join(disk, 'Paused', 'Cut'),
      production_id: production.id,
    })
    const target = join(bay3, 'ed', 'Later')
    const r = await paused.post(
      PA,
      { name: 'Later', bundle_root: target, production_id: production.id, copy_of: made.json.id },
      { key },
    )
    expect(r.status).toBe(201)
    paused.users.leaveGroup('ed', 'editor')
    paused.runner.start()
    await paused.runner.idle()
    const task = paused.db.$client
      .query<{ state: string; error: string }, []>(
        "SELECT state, error FROM tasks WHERE kind = 'copy' ORDER BY id DESC LIMIT 1",
      )
      .get()!
    expect(task.state).toBe('failed')
    expect(task.error).toContain('write_permission_groups')
    expect(existsSync(join(target, 'cut.prproj'))).toBe(false)
  } finally {
    await paused.stop()
    rmSync(paused.dataDir, { recursive: true, force: true })
  }
})

describe('a device naming groups that let nobody write', () => {
  test('is made and changed all the same (the answer stays the record), with a warn line in the log', async () => {
    const lines: { message: string; fields?: Record<string, unknown> }[] = []
    const log: Log = {
      info: () => {},
      warn: (message, fields) => void lines.push({ message, fields }),
      error: () => {},
    }
    const app = testApp(undefined, { core: { log } })
    try {
      const path = tempDir('reelhouse-bay2-')
      app.owned.push(path)
      app.users.addGroup('editor', [])
      const r = await app.post('/api/devices/', { name: 'bay-2', path, write_permission_groups: ['editor', 'edtior'] })
      expect(r.status).toBe(201)
      expect(r.json.write_permission_groups).toEqual(['editor', 'edtior'])
      expect(r.json.warning).toBeUndefined()
      expect(lines).toEqual([
        {
          message: expect.stringContaining('a device names groups that do not exist (yet)'),
          fields: { device: r.json.id, name: 'bay-2', groups: ['edtior'] },
        },
      ])
      app.users.addGroup('edtior', [])
      const patch = (body: object) => app.request('PATCH', `/api/devices/${r.json.id}/`, { body })
      expect((await patch({ display_name: 'Bay two' })).status).toBe(200)
      expect(lines).toHaveLength(1)
      const off = await patch({ allow_direct_writing: false })
      expect(off.status).toBe(200)
      expect(off.json.warning).toBeUndefined()
      expect(lines[1]).toEqual({
        message: expect.stringContaining('allow_direct_writing is false'),
        fields: { device: r.json.id, name: 'bay-2', groups: ['editor', 'edtior'] },
      })
    } finally {
      app.cleanup()
    }
  })
})
