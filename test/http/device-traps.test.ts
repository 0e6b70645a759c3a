// No trap without a way back: a device made inside another device's folder
// where catalogued records of it lie is 409 naming that device and what would move, unless
// ?adopt=true (201, the answer counts what moved, each record's change in the history); deleting
// that device gives them back; a device over nothing is made as before. A project copy onto a
// device whose folder is missing is 409 at once; a device made on a missing folder says so.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Log } from '../../src/util/log.ts'
import { type TestApp, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import { emptyFfmpegDir, removeScratch } from '../helpers/imports.ts'
import { makeTree } from '../helpers/tree.ts'

const apps: TestApp[] = []
afterAll(async () => {
  for (const t of apps) {
    await t.core.stop()
    t.cleanup()
  }
  removeScratch()
})

type Line = { level: 'info' | 'warn' | 'error'; message: string; fields?: Record<string, unknown> }

/** An app with its task runner and a log kept in `lines`; a device and a production (Show) on a temporary folder. */
async function world() {
  const lines: Line[] = []
  const log: Log = {
    info: (message, fields) => void lines.push({ level: 'info', message, fields }),
    warn: (message, fields) => void lines.push({ level: 'warn', message, fields }),
    error: (message, fields) => void lines.push({ level: 'error', message, fields }),
  }
  const t = testApp(undefined, { tasks: true, core: { log, ffmpegDir: emptyFfmpegDir(), settleMs: 30 } })
  apps.push(t)
  const seeded = await seedProduction(t)
  return { t, lines, ...seeded }
}

/** A media asset of `kind` on a file written at `path`. */
async function asset(t: TestApp, kind: 'video' | 'audio' | 'image', path: string, production: number) {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, `essence of ${path}`)
  const r = await t.post(`/api/${kind}assets/`, { name: path.split('/').at(-1), path_file: path, production })
  if (r.status !== 201) throw new Error(r.text)
  return r.json.id as number
}

/**
 * Show's folder `sub/` with two video assets, an audio asset and a project of Show, a production
 * (Nested) whose storage_root lies in it, and a video asset outside it: the inner device's place.
 */
async function crowded() {
  const w = await world()
  const sub = join(w.root, 'Show', 'sub')
  const show = w.production.id as number
  const inside = [
    await asset(w.t, 'video', join(sub, 'a.mov'), show),
    await asset(w.t, 'video', join(sub, 'deep', 'b.mov'), show),
    await asset(w.t, 'audio', join(sub, 'c.wav'), show),
  ]
  const outside = await asset(w.t, 'video', join(w.root, 'Show', 'out.mov'), show)
  makeTree(join(sub, 'Edit'), { 'edit.drp': 'resolve' })
  const project = await w.t.post('/api/projectassets/', {
    name: 'Edit',
    bundle_root: join(sub, 'Edit'),
    production_id: show,
  })
  expect(project.status).toBe(201)
  const nested = await w.t.post('/api/productions/?nest=true', { name: 'Nested', storage_root: join(sub, 'Nested') })
  expect(nested.status).toBe(201)
  return { ...w, sub, inside, outside, project: project.json.id as number, nested: nested.json.id as number }
}

type W = Awaited<ReturnType<typeof crowded>>
const deviceOfMedia = (w: W, id: number) =>
  w.t.db.$client.query<{ device: number }, [number]>('SELECT device FROM media_assets WHERE id = ?').get(id)!.device
const devicesOf = (w: W) => ({
  media: [...w.inside, w.outside].map((id) => deviceOfMedia(w, id)),
  project: w.t.db.$client
    .query<{ device: number }, [number]>('SELECT device FROM project_assets WHERE id = ?')
    .get(w.project)!.device,
  nested: w.t.db.$client
    .query<Record<string, number>, [number]>(
      'SELECT upload_device, audioasset_device, imageasset_device, videoasset_device FROM productions WHERE id = ?',
    )
    .get(w.nested)!,
})
const historyCount = (t: TestApp) => t.db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM history').get()!.n

describe('a device inside another device, over its catalogued records', () => {
  test('(a) 409 conflict naming the outer device and what would move; nothing changed', async () => {
    const w = await crowded()
    const before = { devices: devicesOf(w), history: historyCount(w.t) }
    const r = await w.t.post('/api/devices/', { name: 'inner', path: w.sub })
    expectError(r, 409, 'conflict')
    const detail = r.json.errors[0].detail as string
    expect(detail).toContain(`device ${w.device.id} ("Show-disk", ${w.root}/)`)
    expect(detail).toContain('2 video assets, 1 audio asset, 1 project asset and the roots of 1 production')
    expect(detail).toContain('?adopt=true')
    // ?adopt=false is no adoption.
    expectError(await w.t.post('/api/devices/?adopt=false', { name: 'inner', path: w.sub }), 409, 'conflict')
    expect((await w.t.get('/api/devices/')).json.map((d: { id: number }) => d.id)).toEqual([w.device.id])
    expect({ devices: devicesOf(w), history: historyCount(w.t) }).toEqual(before)
  })

  test('(b) ?adopt=true: 201 with what moved; the records are on the new device, each change in the history; a scan of the outer device keeps them there', async () => {
    const w = await crowded()
    const outer = w.device.id as number
    const r = await w.t.post('/api/devices/?adopt=true', { name: 'inner', path: w.sub })
    expect(r.status).toBe(201)
    const inner = r.json.id as number
    expect(r.json).toMatchObject({ name: 'inner', path: `${w.sub}/` })
    expect(r.json.warning).toBeUndefined()
    expect(r.json.adopted).toEqual({
      device: outer,
      videoassets: 2,
      audioassets: 1,
      imageassets: 0,
      projectassets: 1,
      productions: 1,
    })
    // The record as GET shows it carries neither.
    expect(Object.keys((await w.t.get(`/api/devices/${inner}/`)).json)).not.toContain('adopted')
    // Nested's asset devices followed its storage_root; its watch folder (the whole outer device) stays.
    expect(devicesOf(w)).toEqual({
      media: [inner, inner, inner, outer],
      project: inner,
      nested: { upload_device: outer, audioasset_device: inner, imageasset_device: inner, videoasset_device: inner },
    })
    const rows = w.t.db.$client
      .query<{ resource: string; resource_id: number; username: string; via: string; changes: string }, []>(
        "SELECT resource, resource_id, username, via, changes FROM history WHERE action IN ('update', 'create') AND id > (SELECT max(id) FROM history WHERE resource = 'production' AND action = 'create') ORDER BY id",
      )
      .all()
    const byAdmin = { username: 'admin', via: 'api' }
    expect(rows.map((h) => ({ ...h, changes: JSON.parse(h.changes) })).filter((h) => h.resource !== 'device')).toEqual([
      {
        resource: 'videoasset',
        resource_id: w.inside[0]!,
        ...byAdmin,
        changes: { device: { old: outer, new: inner } },
      },
      {
        resource: 'videoasset',
        resource_id: w.inside[1]!,
        ...byAdmin,
        changes: { device: { old: outer, new: inner } },
      },
      {
        resource: 'audioasset',
        resource_id: w.inside[2]!,
        ...byAdmin,
        changes: { device: { old: outer, new: inner } },
      },
      { resource: 'projectasset', resource_id: w.project, ...byAdmin, changes: { device: { old: outer, new: inner } } },
      {
        resource: 'production',
        resource_id: w.nested,
        ...byAdmin,
        changes: Object.fromEntries(
          ['audioasset_device', 'imageasset_device', 'videoasset_device'].map((f) => [f, { old: outer, new: inner }]),
        ),
      },
    ])
    const created = JSON.parse(rows.find((h) => h.resource === 'device')!.changes)
    expect(created.adopted).toEqual({ old: null, new: r.json.adopted })
    expect(w.lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        fields: expect.objectContaining({ device: inner, from_device: outer, videoassets: 2 }),
      }),
    )
    // A scan of the outer device walks the inner one's folder too: its files stay on the inner device.
    expect((await w.t.request('POST', `/api/devices/${outer}/scan/`)).status).toBe(202)
    await w.t.runner.idle()
    expect(devicesOf(w).media).toEqual([inner, inner, inner, outer])
    const scanned = w.t.db.$client
      .query<{ result: string }, []>("SELECT result FROM tasks WHERE kind = 'scan' ORDER BY id DESC LIMIT 1")
      .get()!
    expect(JSON.parse(scanned.result)).toMatchObject({ moved: 0, offline: 0, imported: 0 })
  })

  test('(c) deleting the adopting device gives everything back to the outer device, in the history and the log', async () => {
    const w = await crowded()
    const outer = w.device.id as number
    const before = devicesOf(w)
    const inner = (await w.t.post('/api/devices/?adopt=true', { name: 'inner', path: w.sub })).json.id as number
    // It holds records now: its path does not change.
    expectError(
      await w.t.request('PATCH', `/api/devices/${inner}/`, { body: { path: join(w.root, 'elsewhere') } }),
      409,
      'conflict',
    )
    const r = await w.t.request('DELETE', `/api/devices/${inner}/`)
    expect(r.status).toBe(204)
    expect(devicesOf(w)).toEqual(before)
    expect((await w.t.get(`/api/devices/${inner}/`)).status).toBe(404)
    const deleted = w.t.db.$client
      .query<{ changes: string; username: string }, [number]>(
        "SELECT changes, username FROM history WHERE resource = 'device' AND resource_id = ? AND action = 'delete'",
      )
      .get(inner)!
    expect({ username: deleted.username, returned: JSON.parse(deleted.changes).returned }).toEqual({
      username: 'admin',
      returned: {
        old: null,
        new: { device: outer, videoassets: 2, audioassets: 1, imageassets: 0, projectassets: 1, productions: 1 },
      },
    })
    const back = w.t.db.$client
      .query<{ changes: string }, [number]>(
        "SELECT changes FROM history WHERE resource = 'videoasset' AND resource_id = ? ORDER BY id DESC LIMIT 1",
      )
      .get(w.inside[0]!)!
    expect(JSON.parse(back.changes)).toEqual({ device: { old: inner, new: outer } })
    expect(w.lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        fields: expect.objectContaining({ device: inner, to_device: outer, videoassets: 2, projectassets: 1 }),
      }),
    )
    // Made again without ?adopt: the same 409 as before.
    expectError(await w.t.post('/api/devices/', { name: 'inner', path: w.sub }), 409, 'conflict')
  })

  test('a device inside another one that a production chose for itself (not by its folders) is still refused on DELETE, naming it', async () => {
    const w = await crowded()
    const inner = (await w.t.post('/api/devices/?adopt=true', { name: 'inner', path: w.sub })).json.id as number
    // Show (storage_root outside the inner folder) sends its video imports to the inner device by choice.
    expect(
      (await w.t.request('PATCH', `/api/productions/${w.production.id}/`, { body: { videoasset_device: inner } }))
        .status,
    ).toBe(200)
    const r = await w.t.request('DELETE', `/api/devices/${inner}/`)
    expectError(r, 409, 'conflict')
    expect(r.json.errors[0].detail).toContain('production "Show" uses this device (videoasset_device)')
    expect(devicesOf(w).media.slice(0, 3)).toEqual([inner, inner, inner])
  })

  test('PATCH of an empty device onto the records of the device around its new path: 409, nothing changed', async () => {
    const w = await crowded()
    const empty = await w.t.post('/api/devices/', { name: 'empty', path: join(w.root, 'spare') })
    expect(empty.status).toBe(201)
    const r = await w.t.request('PATCH', `/api/devices/${empty.json.id}/`, { body: { path: w.sub } })
    expectError(r, 409, 'conflict')
    expect(r.json.errors[0].detail).toContain(`device ${w.device.id}`)
    expect((await w.t.get(`/api/devices/${empty.json.id}/`)).json.path).toBe(`${w.root}/spare/`)
  })

  test('(d) over nothing catalogued (files on disk, a folder with nothing): 201 as before, nothing adopted; deleted again at once', async () => {
    const w = await crowded()
    makeTree(join(w.root, 'loose'), { 'x.mov': 'not catalogued' })
    const before = devicesOf(w)
    for (const [name, path] of [
      ['loose', join(w.root, 'loose')],
      ['deeper', join(w.sub, 'deep', 'empty')],
    ] as const) {
      mkdirSync(path, { recursive: true })
      for (const query of ['', '?adopt=true']) {
        const r = await w.t.post(`/api/devices/${query}`, { name, path })
        expect(r.status).toBe(201)
        expect(r.json.warning).toBeUndefined()
        expect(r.json.adopted).toBeUndefined()
        expect((await w.t.request('DELETE', `/api/devices/${r.json.id}/`)).status).toBe(204)
      }
    }
    expect(devicesOf(w)).toEqual(before)
  })
})

describe('a device whose folder is not there', () => {
  test('(e) a project copy onto it: 409 conflict at once, as a rescan; no task, no project', async () => {
    const w = await crowded()
    const gone = tempDir('reelhouse-gone-')
    rmSync(gone, { recursive: true })
    const device = await w.t.post('/api/devices/', { name: 'gone', path: gone })
    expect(device.status).toBe(201)
    const projects = () => w.t.db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM project_assets').get()!.n
    const before = projects()
    const r = await w.t.post('/api/projectassets/', {
      name: 'Copy',
      bundle_root: join(gone, 'Copy'),
      production_id: w.production.id,
      copy_of: w.project,
    })
    expectError(r, 409, 'conflict')
    expect(r.json.errors[0].detail).toBe(
      `The device ${device.json.id} ("gone", ${gone}/) is offline (the folder is missing (a disk or share not mounted?)): there is nowhere to copy to. Ask again once its folder is back.`,
    )
    expect(w.t.db.$client.query("SELECT count(*) AS n FROM tasks WHERE kind = 'copy'").get()).toEqual({ n: 0 })
    expect(projects()).toBe(before)
    // The rescan says it in the same words.
    const scan = await w.t.request('POST', `/api/devices/${device.json.id}/scan/`)
    expect(scan.json.errors[0].detail).toBe(
      'The device is offline (the folder is missing (a disk or share not mounted?)): there is nothing to scan. Ask again once its folder is back.',
    )
  })

  test('(f) created: 201 with warning.path and a warn line in the log; a folder that is there: no warning', async () => {
    const w = await world()
    const gone = tempDir('reelhouse-gone-')
    rmSync(gone, { recursive: true })
    const r = await w.t.post('/api/devices/', { name: 'gone', path: gone })
    expect(r.status).toBe(201)
    expect(r.json.warning).toEqual({
      path: `The folder ${gone}/ is not there (yet): the folder is missing (a disk or share not mounted?). The device is offline until it is (GET /api/devices/${r.json.id}/status/ tells).`,
    })
    expect(w.lines.filter((l) => l.level === 'warn')).toEqual([
      {
        level: 'warn',
        message: expect.stringContaining('not there'),
        fields: {
          device: r.json.id,
          name: 'gone',
          path: `${gone}/`,
          reason: 'the folder is missing (a disk or share not mounted?)',
        },
      },
    ])
    const file = join(tempDir('reelhouse-file-'), 'f')
    writeFileSync(file, '')
    expect((await w.t.post('/api/devices/', { name: 'file', path: file })).json.warning.path).toMatch(
      /is not there \(yet\): .*not a folder/,
    )
    const there = await w.t.post('/api/devices/', { name: 'there', path: tempDir('reelhouse-there-') })
    // A folder that is there: the record as GET shows it, nothing more.
    expect([there.status, there.json]).toEqual([201, (await w.t.get(`/api/devices/${there.json.id}/`)).json])
  })
})
