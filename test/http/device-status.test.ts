// The device status and the rescan (docs/api.md, Device status): each device's folder and space,
// watch mode, asset counts, open and last scan; POST /api/devices/{id}/scan/ queues a full scan
// as the watcher does (202 with the task), for superusers and browser.change_device only, 409
// while the folder is not there; a file removed on disk shows as an offline asset once scanned.
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync, statfsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import { emptyFfmpegDir, removeScratch } from '../helpers/imports.ts'
import { waitFor } from '../helpers/wait.ts'
import { runSync } from '../../src/db/port.ts'

const apps: TestApp[] = []
afterAll(async () => {
  for (const t of apps) {
    await t.core.stop()
    t.cleanup()
  }
  removeScratch()
})

/** An app with its task runner (and, given `watch`, its watcher), a device and a production on a temporary folder. */
async function world(watch?: { poll: boolean; pollIntervalMs: number; rescanMs: number }) {
  const t = testApp(undefined, { tasks: true, core: { ffmpegDir: emptyFfmpegDir(), settleMs: 30, watch } })
  apps.push(t)
  const seeded = await seedProduction(t)
  return { t, ...seeded }
}

/** A media asset registered on a file written at `name` in the production's folder. */
async function asset(t: TestApp, root: string, production: number, name: string) {
  const path = join(root, 'Show', name)
  writeFileSync(path, `essence of ${name}`)
  const r = await t.post('/api/videoassets/', { name, path_file: path, production })
  if (r.status !== 201) throw new Error(r.text)
  return { id: r.json.id as number, path }
}

describe('the status', () => {
  test("online: the folder's file system space, no watcher, the counts, no scan yet; every user may read it", async () => {
    const { t, root, device, production } = await world()
    await asset(t, root, production.id, 'a.mov')
    await asset(t, root, production.id, 'b.mov')
    const fs = statfsSync(root)
    const ana = t.makeUser('ana')
    const one = await t.get(`/api/devices/${device.id}/status/`, { key: ana })
    expect(one.status).toBe(200)
    // Ana reads no production: the assets are not hers to count.
    expect(one.json).toEqual({
      device: device.id,
      online: true,
      space: { total: fs.blocks * fs.bsize, free: expect.any(Number) },
      watch: null,
      assets: { online: 0, offline: 0 },
      scan: null,
      last_scan: null,
    })
    // The free space is the file system's, as statfs says it at the same moment. Other test files
    // write and delete files of hundreds of MiB on the same file system meanwhile, so the two are
    // read side by side until one pair agrees (within 64 MiB), a few times at most.
    const near = async () => {
      for (let i = 0; i < 50; i++) {
        const before = statfsSync(root).bavail * fs.bsize
        const free = (await t.get(`/api/devices/${device.id}/status/`, { key: ana })).json.space.free as number
        const after = statfsSync(root).bavail * fs.bsize
        if (Math.abs(free - before) < 64 * 1024 * 1024 && Math.abs(free - after) < 64 * 1024 * 1024) return true
        await Bun.sleep(20)
      }
      return false
    }
    expect(await near()).toBe(true)
    const admin = await t.get(`/api/devices/${device.id}/status`)
    expect(admin.json.assets).toEqual({ online: 2, offline: 0 })
    const all = await t.get('/api/devices/status/')
    // The free space moves with the machine's other work: the rest is the same.
    const steady = (x: { space: { free: number } }) => ({ ...x, space: { ...x.space, free: 0 } })
    expect({ status: all.status, json: all.json.map(steady), total: all.headers.get('x-total-count') }).toEqual({
      status: 200,
      json: [steady(admin.json)],
      total: null,
    })
  })

  test('a device whose folder is missing: offline with the reason, no space; the rescan is 409 conflict', async () => {
    const { t } = await world()
    const gone = tempDir('reelhouse-gone-')
    rmSync(gone, { recursive: true })
    const d = await t.post('/api/devices/', { name: 'gone', path: gone })
    const r = await t.get(`/api/devices/${d.json.id}/status/`)
    expect(r.json).toEqual({
      device: d.json.id,
      online: false,
      reason: 'the folder is missing (a disk or share not mounted?)',
      space: null,
      watch: null,
      assets: { online: 0, offline: 0 },
      scan: null,
      last_scan: null,
    })
    const scan = await t.request('POST', `/api/devices/${d.json.id}/scan/`)
    expectError(scan, 409, 'conflict')
    expect(scan.json.errors[0].detail).toContain('offline')
    expect(t.db.$client.query("SELECT count(*) AS n FROM tasks WHERE kind = 'scan'").get()).toEqual({ n: 0 })
    // A path that is a file is no folder either.
    const file = join(tempDir('reelhouse-file-'), 'f')
    writeFileSync(file, '')
    const f = await t.post('/api/devices/', { name: 'file', path: file })
    expect((await t.get(`/api/devices/${f.json.id}/status/`)).json).toMatchObject({
      online: false,
      reason: expect.stringMatching(/not a folder/),
    })
  })

  test('unknown or malformed ids: 404 in the envelope; no key: 401', async () => {
    const { t } = await world()
    for (const path of ['/api/devices/999/status/', '/api/devices/abc/status/', '/api/devices/0/status'])
      expectError(await t.get(path), 404, 'not_found')
    expectError(await t.request('POST', '/api/devices/999/scan/'), 404, 'not_found')
    expectError(await t.request('POST', '/api/devices/abc/scan/'), 404, 'not_found')
    expectError(await t.get('/api/devices/status/', { key: null }), 401, 'not_authenticated')
    expectError(await t.request('POST', '/api/devices/1/scan/', { key: null }), 401, 'not_authenticated')
  })
})

describe('the rescan', () => {
  test('a file removed on disk: the rescan (202 with the task) marks its asset offline, and the status shows the scan and the counts', async () => {
    const { t, root, device, production } = await world()
    const kept = await asset(t, root, production.id, 'kept.mov')
    const removed = await asset(t, root, production.id, 'removed.mov')
    rmSync(removed.path)
    const r = await t.request('POST', `/api/devices/${device.id}/scan/`)
    expect({ status: r.status, location: r.headers.get('location') }).toEqual({
      status: 202,
      location: `/api/tasks/${r.json.id}/`,
    })
    // The body of GET /api/tasks/{id}/ (the task may have started since).
    expect(Object.keys(r.json).sort()).toEqual(Object.keys((await t.get(`/api/tasks/${r.json.id}/`)).json).sort())
    expect(r.json).toMatchObject({
      kind: 'scan',
      target: { device: device.id },
      state: expect.stringMatching(/^(queued|running|done)$/),
    })
    await t.runner.idle()
    const status = (await t.get(`/api/devices/${device.id}/status/`)).json
    expect(status).toMatchObject({
      assets: { online: 1, offline: 1 },
      scan: null,
      last_scan: {
        task: r.json.id,
        state: 'done',
        error: '',
        date_end: expect.any(String),
        counts: expect.objectContaining({ offline: 1 }),
      },
    })
    expect((await t.get(`/api/videoassets/${removed.id}/`)).json.is_production).toBe(false)
    expect((await t.get(`/api/videoassets/${kept.id}/`)).json.is_production).toBe(true)
    // The result's lists of paths are not shown: counts only.
    expect(Object.values(status.last_scan.counts).every((n) => typeof n === 'number')).toBe(true)
  })

  test('asked twice while it waits: one scan, the same task; the status shows it as the open scan', async () => {
    const { t, device } = await world()
    await t.runner.stop()
    const first = await t.request('POST', `/api/devices/${device.id}/scan/`)
    const second = await t.request('POST', `/api/devices/${device.id}/scan`)
    expect([first.status, second.status, second.json.id, second.json.state]).toEqual([
      202,
      202,
      first.json.id,
      'queued',
    ])
    expect(
      t.db.$client.query("SELECT count(*) AS n FROM tasks WHERE kind = 'scan' AND state = 'queued'").get(),
    ).toEqual({ n: 1 })
    expect((await t.get(`/api/devices/${device.id}/status/`)).json.scan).toEqual({
      task: first.json.id,
      state: 'queued',
      date_add: first.json.date_add,
      date_start: null,
      date_end: null,
      files_done: 0,
      files_total: 0,
      error: '',
      counts: {},
    })
    // A scan of some paths (the watcher's events) is not the device's full scan.
    runSync(
      t.db,
      t.runner.enqueue({
        kind: 'scan',
        target: { device: device.id },
        production: null,
        params: { device: device.id, paths: ['/x'] },
      }),
    )
    expect((await t.get(`/api/devices/${device.id}/status/`)).json.scan.task).toBe(first.json.id)
  })

  test('superuser or browser.change_device: others 403 and nothing queued; the scan task is readable by those who may rescan', async () => {
    const { t, device } = await world()
    await t.runner.stop()
    const plain = t.makeUser('plain', { perms: ['browser.add_device'] })
    const scanner = t.makeUser('scanner', { perms: ['browser.change_device'] })
    const refused = await t.request('POST', `/api/devices/${device.id}/scan/`, { key: plain })
    expectError(refused, 403, 'permission_denied')
    expect(refused.json.errors[0].detail).toContain('browser.change_device')
    expect(t.db.$client.query("SELECT count(*) AS n FROM tasks WHERE kind = 'scan'").get()).toEqual({ n: 0 })
    const ok = await t.request('POST', `/api/devices/${device.id}/scan/`, { key: scanner })
    expect(ok.status).toBe(202)
    expect((await t.get(`/api/tasks/${ok.json.id}/`, { key: scanner })).json).toEqual(ok.json)
    expect((await t.get('/api/tasks/?kind=scan', { key: scanner })).json.map((x: { id: number }) => x.id)).toEqual([
      ok.json.id,
    ])
    expectError(await t.get(`/api/tasks/${ok.json.id}/`, { key: plain }), 404, 'not_found')
    expect((await t.get('/api/tasks/?kind=scan', { key: plain })).json).toEqual([])
  })
})

test('with the watcher: its mode and reason (polling asked for), once it has taken the device up', async () => {
  const { t, device } = await world({ poll: true, pollIntervalMs: 200, rescanMs: 0 })
  await waitFor(
    async () => (await t.get(`/api/devices/${device.id}/status/`)).json.watch?.ready === true,
    'the watcher ready',
    { ms: 20_000, everyMs: 20 },
  )
  expect((await t.get(`/api/devices/${device.id}/status/`)).json.watch).toEqual({
    mode: 'polling',
    ready: true,
    reason: 'polling was asked for (--poll)',
  })
})
