// What medialoopster clients send to POST /api/asset/import/ beyond api.md 4.10 (docs/api.md,
// Import): production as a JSON integer (the id; text is always a name, in form data too),
// date_add at the top level or in asset_meta (the asset's date_add, kept on a re-import), a
// null description; and the is_production a client waits on while move_asset moves the file:
// false from the 201 until the file is in place, true then, and after a failure true again only
// when the file is at path_file. The watcher leaves that to the task.
//
// The move tests each make a world whose runner is held (not started) until the test starts it,
// with one task at a time, so what runs first is the oldest task, and no ffmpeg (the import
// completes with warnings whatever the file holds).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { errorEntry, expectError } from '../helpers/envelope.ts'
import {
  IMPORT,
  allLogs,
  appWithFfmpegDir,
  assetOf,
  emptyFfmpegDir,
  expectImported,
  importBody,
  logRow,
  logsOf,
  placeFile,
  removeScratch,
} from '../helpers/imports.ts'
import { runSync } from '../../src/db/port.ts'

const M = '/asset/asset_meta'
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

let t: TestApp
let root: string
let show: { id: number; name: string }
let other: { id: number }
/** A production whose name is the id of Show, in digits. */
let numbered: { id: number; name: string }

beforeAll(async () => {
  t = testApp(undefined, { tasks: false })
  ;({ root, production: show } = await seedProduction(t))
  other = (await t.post('/api/productions/', { name: 'Other', storage_root: join(root, 'Other') })).json
  const r = await t.post('/api/productions/', { name: String(show.id), storage_root: join(root, 'Numbered') })
  expect(r.status).toBe(201)
  numbered = r.json
  expect(numbered.id).not.toBe(show.id)
})

afterAll(() => {
  t.cleanup()
  removeScratch()
})

let n = 0
/** A new existing file on the device, outside every production's folders. */
const fresh = () => placeFile(join(root, 'incoming', `c${++n}.mov`))

/** Posts a body that must be refused with 400, and checks that no ImportLog was written. */
async function refused(body: unknown, key?: string) {
  const before = (await allLogs(t.request)).length
  const reply = await t.request('POST', IMPORT, { body, key })
  expect((await allLogs(t.request)).length).toBe(before)
  return reply
}

describe('production: a JSON integer is the id, text always the name', () => {
  test('an integer names the production by id: the asset is of it', async () => {
    const body = importBody(fresh(), {}, {}, { production: show.id })
    const id = expectImported(await t.request('POST', IMPORT, { body }), body, 'asset_creation_completed')
    expect((await assetOf(t.request, id)).production).toBe(show.id)
  })

  test('text of digits is a name: the production called so, not the one with that id', async () => {
    const body = importBody(fresh(), {}, {}, { production: String(show.id) })
    const id = expectImported(await t.request('POST', IMPORT, { body }), body, 'asset_creation_completed')
    expect((await assetOf(t.request, id)).production).toBe(numbered.id)
  })

  test('in form data every value is text: production digits are a name there too', async () => {
    const path = fresh()
    const reply = await t.request('POST', IMPORT, {
      form: { type: 'video', production: String(show.id), asset: { asset_meta: { name: 'form', path_file: path } } },
    })
    expect(reply.status).toBe(201)
    expect((await assetOf(t.request, reply.json.asset_import_id)).production).toBe(numbered.id)
  })

  test('an id no production has, or one the user cannot read: 400 invalid at /production, no ImportLog', async () => {
    const unknown = await refused(importBody(fresh(), {}, {}, { production: 999_999 }))
    expectError(unknown, 400, 'invalid', { pointer: '/production' })
    expect(unknown.json.errors[0].detail).toBe('No production with this id.')
    const writer = t.makeUser('show-writer', { write: [show.id] })
    const unreadable = await refused(importBody(fresh(), {}, {}, { production: other.id }), writer)
    expect(unreadable.json).toEqual(unknown.json)
  })

  test('neither text of 1 to 255 characters nor a whole number of 1 or more: 400 invalid at /production, saying what it takes', async () => {
    for (const production of [0, -3, 1.5, true, [], {}, '', 'x'.repeat(256)]) {
      const reply = await refused(importBody(fresh(), {}, {}, { production }))
      expect([production, reply.status, reply.json]).toEqual([
        production,
        400,
        {
          errors: [
            {
              ...errorEntry(400, 'invalid', { pointer: '/production' }),
              detail: "The production's name (text of 1 to 255 characters) or its id (a whole number, 1 or more).",
            },
          ],
        },
      ])
    }
  })
})

describe('date_add', () => {
  test("in asset_meta: the asset's date_add, as a UTC timestamp; date_mod is still now", async () => {
    const body = importBody(fresh(), { date_add: '2024-05-06 07:08:09+02:00' })
    const asset = await assetOf(
      t.request,
      expectImported(await t.request('POST', IMPORT, { body }), body, 'asset_creation_completed'),
    )
    expect(asset.date_add).toBe('2024-05-06T05:08:09.000000Z')
    expect(Date.parse(asset.date_mod)).toBeGreaterThan(Date.parse('2025-01-01'))
  })

  test("at the top level: the same; asset_meta's wins when both are given", async () => {
    const top = importBody(fresh(), {}, {}, { date_add: '2023' })
    expect(
      (
        await assetOf(
          t.request,
          expectImported(await t.request('POST', IMPORT, { body: top }), top, 'asset_creation_completed'),
        )
      ).date_add,
    ).toBe('2023-01-01T00:00:00.000000Z')
    const both = importBody(fresh(), { date_add: '2022-02-02' }, {}, { date_add: '2023-03-03' })
    expect(
      (
        await assetOf(
          t.request,
          expectImported(await t.request('POST', IMPORT, { body: both }), both, 'asset_creation_completed'),
        )
      ).date_add,
    ).toBe('2022-02-02T00:00:00.000000Z')
  })

  test('absent or null: now', async () => {
    const before = Date.now()
    const body = importBody(fresh(), { date_add: null })
    const asset = await assetOf(
      t.request,
      expectImported(await t.request('POST', IMPORT, { body }), body, 'asset_creation_completed'),
    )
    expect(asset.date_add).toMatch(TIMESTAMP)
    expect(Date.parse(asset.date_add)).toBeGreaterThanOrEqual(before - 1000)
  })

  test('a re-import keeps the date the asset was first added', async () => {
    const path = fresh()
    const first = importBody(path, { date_add: '2021-06-01' })
    const id = expectImported(await t.request('POST', IMPORT, { body: first }), first, 'asset_creation_completed')
    const again = importBody(path, { date_add: '2024-01-01' }, {}, { date_add: '2024-01-02' })
    expect(expectImported(await t.request('POST', IMPORT, { body: again }), again, 'asset_update_completed')).toBe(id)
    expect((await assetOf(t.request, id)).date_add).toBe('2021-06-01T00:00:00.000000Z')
  })

  test('a hold duration counts from the date_add given', async () => {
    await t.post('/api/productions/', { name: 'Held', storage_root: join(root, 'Held') })
    expect(
      (
        await t.post('/api/assetholddurations/', {
          asset_type: 'videoasset',
          context_type: 'production',
          context: 'Held',
          duration: 30,
        })
      ).status,
    ).toBe(201)
    const body = importBody(
      placeFile(join(root, 'Held', 'dated.mov')),
      { date_add: '2020-01-01' },
      {},
      { production: 'Held' },
    )
    const asset = await assetOf(
      t.request,
      expectImported(await t.request('POST', IMPORT, { body }), body, 'asset_creation_completed'),
    )
    expect([asset.date_add, asset.date_del]).toEqual(['2020-01-01T00:00:00.000000Z', '2020-01-31T00:00:00.000000Z'])
  })

  test('not a date, or not text: 400 invalid at each one given, no ImportLog', async () => {
    for (const date_add of ['yesterday', '2024-13', 20240101, true]) {
      expectError(await refused(importBody(fresh(), { date_add })), 400, 'invalid', { pointer: `${M}/date_add` })
      expectError(await refused(importBody(fresh(), {}, {}, { date_add })), 400, 'invalid', { pointer: '/date_add' })
    }
    const reply = await refused(importBody(fresh(), { date_add: '2024-02-30' }, {}, { date_add: 'soon' }))
    expect(reply.json).toEqual({
      errors: [
        errorEntry(400, 'invalid', { pointer: '/date_add' }),
        errorEntry(400, 'invalid', { pointer: `${M}/date_add` }),
      ],
    })
  })
})

test("the body medialoopster's client sends (description null, approval 0, empty meta_field_store): 201", async () => {
  const path = fresh()
  const body = {
    production: show.name,
    type: 'video',
    move_asset: false,
    asset: {
      asset_meta: { name: 'from the client', description: null, approval: 0, path_file: path, meta_field_store: {} },
    },
  }
  const id = expectImported(await t.request('POST', IMPORT, { body }), body, 'asset_creation_completed')
  expect(await assetOf(t.request, id)).toMatchObject({
    name: 'from the client',
    description: '',
    production: show.id,
    path_file: path,
    is_production: true,
  })
})

describe('is_production while move_asset moves the file', () => {
  /** A world of its own whose runner is held until the test starts it; one task at a time. */
  async function world() {
    const base = testApp(undefined, { tasks: false })
    const { root: disk, device, production } = await seedProduction(base)
    const app = appWithFfmpegDir(base, emptyFfmpegDir(), { start: false, concurrency: 1 })
    const run = async () => {
      app.runner.start()
      await app.runner.idle()
    }
    const asset = (id: number) => assetOf(app.request, id)
    const listedOffline = async (path: string) =>
      (await app.get(`/api/videoassets/?is_production=false&path_file=${encodeURIComponent(path)}`)).json.map(
        (a: { id: number }) => a.id,
      )
    const close = async () => {
      await app.stop()
      base.cleanup()
    }
    return {
      base,
      app,
      disk,
      device,
      production,
      run,
      asset,
      listedOffline,
      close,
      target: (name: string) => join(production.storage_root, 'video', name),
    }
  }

  test('false from the 201 (list filter too) until the file is in place; true with path_file at the new place', async () => {
    const w = await world()
    try {
      const path = placeFile(join(w.disk, 'incoming', 'moving.mov'))
      const body = importBody(path, {}, {}, { move_asset: true })
      const id = expectImported(await w.app.post(IMPORT, body), body, 'asset_creation_completed')
      expect(await w.asset(id)).toMatchObject({ path_file: path, is_production: false, status_asset: 0 })
      expect(await w.listedOffline(path)).toEqual([id])
      await w.run()
      const target = w.target('moving.mov')
      expect([existsSync(path), existsSync(target)]).toEqual([false, true])
      expect(await w.asset(id)).toMatchObject({ path_file: target, is_production: true, status_asset: 6 })
      expect(await w.listedOffline(target)).toEqual([])
      expect(await logsOf(w.app.request, path)).toEqual([
        logRow({ asset_path: path, status: 'import_completed', warning: expect.any(Object), asset_import_id: id }),
      ])
    } finally {
      await w.close()
    }
  })

  test('without move_asset, or archive only with it: is_production as sent from the 201 on', async () => {
    const w = await world()
    try {
      const plain = importBody(placeFile(join(w.disk, 'incoming', 'staying.mov')))
      const archived = importBody(
        join(w.disk, 'incoming', 'archived.mov'),
        { is_archive: true, is_production: false, duration: 50, fps: '25', height: 240, width: 320 },
        { archive_details: { archive_handle: '1', archive_type: 'archive_std', original_path: '/tape/archived.mov' } },
        { move_asset: true },
      )
      const a = expectImported(await w.app.post(IMPORT, plain), plain, 'asset_creation_completed')
      const b = expectImported(await w.app.post(IMPORT, archived), archived, 'asset_creation_completed')
      expect([(await w.asset(a)).is_production, (await w.asset(b)).is_production]).toEqual([true, false])
      await w.run()
      expect([(await w.asset(a)).is_production, (await w.asset(b)).is_production]).toEqual([true, false])
    } finally {
      await w.close()
    }
  })

  test('a re-import without move_asset while the move is queued keeps it false', async () => {
    const w = await world()
    try {
      const path = placeFile(join(w.disk, 'incoming', 'twice.mov'))
      const moving = importBody(path, {}, {}, { move_asset: true })
      const id = expectImported(await w.app.post(IMPORT, moving), moving, 'asset_creation_completed')
      const again = importBody(path, { description: 'again' })
      expect(expectImported(await w.app.post(IMPORT, again), again, 'asset_update_completed')).toBe(id)
      expect(await w.asset(id)).toMatchObject({ description: 'again', is_production: false })
      await w.run()
      expect(await w.asset(id)).toMatchObject({ path_file: w.target('twice.mov'), is_production: true })
    } finally {
      await w.close()
    }
  })

  test('a scan that runs while the move is queued does not bring the asset online; the move does', async () => {
    const w = await world()
    try {
      const path = placeFile(join(w.disk, 'incoming', 'scanned.mov'))
      // Queued first, so it runs first (one task at a time), with the import's move still queued.
      const scan = runSync(
        w.base.db,
        w.app.runner.enqueue({
          kind: 'scan',
          target: { device: w.device.id },
          production: null,
          params: { device: w.device.id, paths: null },
        }),
      )
      const body = importBody(path, {}, {}, { move_asset: true })
      const id = expectImported(await w.app.post(IMPORT, body), body, 'asset_creation_completed')
      await w.run()
      const result = w.base.db.$client
        .query<{ state: string; result: string }, [number]>('SELECT state, result FROM tasks WHERE id = ?')
        .get(scan.id)!
      expect([result.state, JSON.parse(result.result).online]).toEqual(['done', 0])
      expect(await w.asset(id)).toMatchObject({
        path_file: w.target('scanned.mov'),
        is_production: true,
        status_asset: 6,
      })
    } finally {
      await w.close()
    }
  })

  test('a move refused with the file where it was: import_failed, is_production true again', async () => {
    const w = await world()
    try {
      const path = placeFile(join(w.disk, 'incoming', 'refused.mov'))
      // Another asset is catalogued at the name the move would take: the move refuses to begin.
      const squatter = await w.app.post('/api/videoassets/', {
        name: 'squatter',
        path_file: w.target('refused.mov'),
        production: w.production.id,
      })
      expect(squatter.status).toBe(201)
      const body = importBody(path, {}, {}, { move_asset: true })
      const id = expectImported(await w.app.post(IMPORT, body), body, 'asset_creation_completed')
      expect((await w.asset(id)).is_production).toBe(false)
      await w.run()
      expect((await logsOf(w.app.request, path))[0]).toMatchObject({
        status: 'import_failed',
        error: expect.stringContaining('nothing was moved'),
      })
      expect(existsSync(path)).toBe(true)
      expect(await w.asset(id)).toMatchObject({ path_file: path, is_production: true, status_asset: -1 })
    } finally {
      await w.close()
    }
  })

  test('a failed move whose file is gone from path_file: is_production stays false', async () => {
    const w = await world()
    try {
      const path = placeFile(join(w.disk, 'incoming', 'vanished.mov'))
      const body = importBody(path, {}, {}, { move_asset: true })
      const id = expectImported(await w.app.post(IMPORT, body), body, 'asset_creation_completed')
      rmSync(path)
      await w.run()
      expect((await logsOf(w.app.request, path))[0]!.status).toBe('import_failed')
      expect(await w.asset(id)).toMatchObject({ path_file: path, is_production: false, status_asset: -1 })
    } finally {
      await w.close()
    }
  })
})
