// GET /api/events/ over real HTTP (docs/api.md, "Events"): a server on a free port over a migrated
// catalogue, the stream read with fetch and a reader while requests, tasks and scans change things.
// Nothing here waits for a time: every wait is for a condition, with a bound.
import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AppOptions } from '../../src/app.ts'
import type { CoreOptions } from '../../src/core.ts'
import { type EventStream, matching, openEvents } from '../helpers/events.ts'
import { type TestApp, seedProduction, testApp, writeElsewhere } from '../helpers/app.ts'
import { emptyFfmpegDir, importBody, IMPORT, removeScratch } from '../helpers/imports.ts'
import { hashPassword } from '../../src/modules/users/passwords.ts'
import { waitFor } from '../helpers/wait.ts'
import { runSync } from '../../src/db/port.ts'

setDefaultTimeout(60_000)

type Served = { t: TestApp; stop(): Promise<void> }
const running: Served[] = []

/** The app with its task runner, listening on a free port; `stop` ends the streams, the server and the core. */
function served(events: CoreOptions['events'] = {}, dataDir?: string, app?: AppOptions) {
  const t = testApp(dataDir, { tasks: true, core: { ffmpegDir: emptyFfmpegDir(), events }, app })
  const server = t.app.listen({ port: 0, hostname: '127.0.0.1' }).server!
  const base = `http://127.0.0.1:${server.port}`
  const streams: EventStream[] = []
  const s = {
    t,
    server,
    base,
    /** A stream read as `key` (default admin's), with more headers (Last-Event-ID). */
    async events(key: string = t.adminKey, headers: Record<string, string> = {}) {
      const stream = await openEvents(base, { authorization: `Token ${key}`, ...headers })
      streams.push(stream)
      return stream
    },
    async stop() {
      running.splice(running.indexOf(s), 1)
      t.core.events.close()
      await server.stop()
      for (const stream of streams) await stream.close()
      await t.core.stop()
      t.cleanup()
    },
  }
  running.push(s)
  return s
}

afterEach(async () => {
  for (const s of [...running]) await s.stop()
  removeScratch()
})

/** A full scan of the device, as the watcher queues one, run to its end. */
async function scan(t: TestApp, device: number) {
  runSync(
    t.db,
    t.runner.enqueue({ kind: 'scan', target: { device }, production: null, params: { device, paths: null } }),
  )
  await t.runner.idle()
}

const file = (path: string, text = 'essence\n') => {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, text)
  return path
}

describe('authentication', () => {
  test('no credentials, or a key only in the URL: 401 in the envelope; a bad key: 401 authentication_failed', async () => {
    const { t, base } = served()
    for (const url of [`${base}/api/events/`, `${base}/api/events`, `${base}/api/events/?key=${t.adminKey}`]) {
      const r = await fetch(url)
      expect({ url, status: r.status, challenge: r.headers.get('www-authenticate'), body: await r.json() }).toEqual({
        url,
        status: 401,
        challenge: 'Token',
        body: { errors: [expect.objectContaining({ status: '401', code: 'not_authenticated' })] },
      })
    }
    const bad = await fetch(`${base}/api/events/`, { headers: { authorization: `Token ${'0'.repeat(40)}` } })
    expect([bad.status, ((await bad.json()) as any).errors[0].code]).toEqual([401, 'authentication_failed'])
  })

  test('a key in the header: 200 text/event-stream, unbuffered, opening with the position; Bearer and Basic with a key too', async () => {
    const { t, base, events } = served()
    const stream = await events()
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(stream.response.headers.get('cache-control')).toBe('no-store')
    expect(stream.response.headers.get('x-accel-buffering')).toBe('no')
    expect(stream.response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/)
    await waitFor(() => stream.blocks.length > 0, 'the opening', { ms: 10_000 })
    expect(stream.blocks[0]).toEqual({ id: expect.stringMatching(/^\d{16}$/), comments: [] })
    for (const authorization of [`Bearer ${t.adminKey}`, `Basic ${btoa(`admin:${t.adminKey}`)}`]) {
      const other = await openEvents(base, { authorization })
      expect(other.response.status).toBe(200)
      await other.close()
    }
  })

  test('Accept: what EventSource sends (text/event-stream), text/*, */* or none is served; only JSON, or the stream weighed 0: 406', async () => {
    const { t, base } = served()
    for (const accept of [
      'text/event-stream',
      'text/*',
      '*/*',
      'text/html, */*;q=0.1',
      'application/json, text/event-stream;q=0.5',
      undefined,
    ]) {
      const stream = await openEvents(base, { authorization: `Token ${t.adminKey}`, ...(accept ? { accept } : {}) })
      expect({ accept, status: stream.response.status }).toEqual({ accept, status: 200 })
      await stream.close()
    }
    for (const accept of [
      'application/json',
      'application/json; version=1',
      'text/event-stream;q=0, */*',
      'text/html',
    ]) {
      const r = await fetch(`${base}/api/events/`, { headers: { authorization: `Token ${t.adminKey}`, accept } })
      expect({ accept, status: r.status, code: ((await r.json()) as any).errors[0].code }).toEqual({
        accept,
        status: 406,
        code: 'not_acceptable',
      })
    }
    // The key first, as everywhere.
    expect((await fetch(`${base}/api/events/`, { headers: { accept: 'application/json' } })).status).toBe(401)
  })

  test('a page of an allowed origin reads it: CORS headers on the stream, which still streams', async () => {
    const { t, events } = served({}, undefined, { allowOrigins: ['http://panel.local'] })
    const stream = await events(t.adminKey, { origin: 'http://panel.local' })
    expect(stream.response.headers.get('access-control-allow-origin')).toBe('http://panel.local')
    t.core.events.bus.publish('task', { id: 1 }, [])
    await stream.until('an event', (e) => e.length === 1)
  })
})

describe('each kind of event', () => {
  test('asset: created, updated, offline, online, moved, relinked and deleted, from requests, imports and scans', async () => {
    const { t, events } = served()
    const { root, device, production } = await seedProduction(t)
    const stream = await events()
    const path = file(join(root, 'Show', 'a.mov'))
    const id = (await t.post('/api/videoassets/', { name: 'a', path_file: path, production: production.id })).json
      .id as number
    expect((await t.request('PATCH', `/api/videoassets/${id}/`, { body: { description: 'take 2' } })).status).toBe(200)
    rmSync(path)
    await scan(t, device.id)
    file(path)
    await scan(t, device.id)
    renameSync(path, join(root, 'Show', 'b.mov'))
    await scan(t, device.id)
    const actions = (asset: number) => matching(stream.events, 'asset', { id: asset }).map((e) => e.data.action)
    await stream.until('the move', () => actions(id).includes('moved'))
    expect(actions(id)).toEqual(['created', 'updated', 'offline', 'online', 'moved'])
    expect(matching(stream.events, 'asset', { id })[0]!.data).toEqual({ type: 'videoasset', id, action: 'created' })

    // An imported clip (its content fingerprinted) copied elsewhere and its file removed: the scan
    // finds it by its content.
    const clip = file(join(root, 'Show', 'in', 'clip.mov'), 'a clip of its own\n'.repeat(100))
    const imported = await t.post(IMPORT, importBody(clip))
    expect(imported.status).toBe(201)
    await t.runner.idle()
    const clipId = imported.json.asset_import_id as number
    copyFileSync(clip, join(root, 'Show', 'restored.mov'))
    rmSync(clip)
    await scan(t, device.id)
    await stream.until('the relink', () => actions(clipId).includes('relinked'))
    expect(actions(clipId)[0]).toBe('created')

    expect((await t.request('DELETE', `/api/videoassets/${id}/`)).status).toBeLessThan(300)
    await stream.until('the delete', () => actions(id).includes('deleted'))
  })

  test('project: created, linked, unlinked, updated, copied (with its task to the end), offline, online and deleted', async () => {
    const { t, events } = served()
    const { root, device, production } = await seedProduction(t)
    const stream = await events()
    const bundle = join(root, 'Show', 'edit') + '/'
    for (let i = 0; i < 20; i++) file(join(bundle, 'media', `f${i}.bin`), 'x'.repeat(10_000))
    const project = (
      await t.post('/api/projectassets/', { name: 'edit', bundle_root: bundle, production_id: production.id })
    ).json
    const clip = (
      await t.post('/api/videoassets/', {
        name: 'c',
        path_file: file(join(root, 'Show', 'c.mov')),
        production: production.id,
      })
    ).json
    expect(
      (
        await t.post(`/api/projectassets/${project.id}/addasset/`, {
          asset_list: [{ asset_id: clip.id, type: 'video' }],
        })
      ).status,
    ).toBe(200)
    expect(
      (
        await t.post(`/api/projectassets/${project.id}/unlinkasset/`, {
          asset_list: [{ asset_id: clip.id, type: 'video' }],
        })
      ).status,
    ).toBe(200)
    expect(
      (await t.request('PATCH', `/api/projectassets/${project.id}/`, { body: { description: 'cut 1' } })).status,
    ).toBe(200)
    const copy = await t.post('/api/projectassets/', {
      name: 'copy',
      bundle_root: join(root, 'Show', 'copy') + '/',
      production_id: production.id,
      copy_of: project.id,
    })
    expect(copy.status).toBe(201)
    await t.runner.idle()
    rmSync(bundle, { recursive: true })
    await scan(t, device.id)
    mkdirSync(bundle)
    await scan(t, device.id)
    expect((await t.request('DELETE', `/api/projectassets/${copy.json.id}/`)).status).toBe(202)
    await t.runner.idle()

    const actions = (id: number) => matching(stream.events, 'project', { id }).map((e) => e.data.action)
    await stream.until('the delete of the copy', () => actions(copy.json.id).includes('deleted'))
    await stream.until('the project online again', () => actions(project.id).includes('online'))
    expect(actions(project.id)).toEqual(['created', 'linked', 'unlinked', 'updated', 'offline', 'online'])
    // The delete takes it out of production first (offline), then the task removes it.
    expect(actions(copy.json.id)).toEqual(['created', 'copied', 'offline', 'deleted'])
    const task = matching(stream.events, 'task', { kind: 'copy' })
    expect(task.at(-1)!.data).toEqual({
      id: copy.json.task.id,
      kind: 'copy',
      state: 'done',
      target: { projectasset: copy.json.id },
      step: '',
      percent: null,
      bytes_done: 200_000,
      bytes_total: 200_000,
      files_done: 20,
      files_total: 20,
      error: '',
    })
    expect(task[0]!.data.state).toBe('queued')
  })

  test('importlog and task: an import from its log to import_completed, its task to done', async () => {
    const { t, events } = served()
    const { root } = await seedProduction(t)
    const stream = await events()
    const clip = file(join(root, 'Show', 'clip.mov'))
    const imported = await t.post(IMPORT, importBody(clip))
    expect(imported.status).toBe(201)
    await t.runner.idle()
    await stream.until(
      'the import completed',
      (e) => matching(e, 'importlog', { status: 'import_completed' }).length > 0,
    )
    const logs = stream.events.filter((e) => e.event === 'importlog')
    const log = (await t.get('/api/importlogs/')).json[0]
    expect(logs[0]!.data).toEqual({ id: log.id, asset_path: clip, status: 'asset_creation_completed' })
    expect(logs.map((e) => e.data)).toEqual(
      logs.map(() => ({ id: log.id, asset_path: clip, status: expect.any(String) })),
    )
    await stream.until('the import task done', (e) => matching(e, 'task', { kind: 'import', state: 'done' }).length > 0)
    // Its step and percent as the task list shows them (a page's bar follows an import's move and proxy by them).
    const task = (await t.get(`/api/tasks/${imported.json.task.id}/`)).json
    expect(matching(stream.events, 'task', { kind: 'import', state: 'done' })[0]!.data).toMatchObject({
      id: imported.json.task.id,
      target: { videoasset: imported.json.asset_import_id },
      step: task.step,
      percent: task.percent,
    })
    expect(matching(stream.events, 'task', { kind: 'import' }).map((e) => e.data.step)).toContain(task.step)
    expect(task.step).not.toBe('')
  })
})

test("a task's end is sent once: a full scan, an import, a proxy remake, a copy and a delete", async () => {
  const { t, events } = served()
  const { root, device, production } = await seedProduction(t)
  const stream = await events()
  const bundle = join(root, 'Show', 'edit') + '/'
  file(join(bundle, 'media', 'f.bin'), 'x'.repeat(10_000))
  await scan(t, device.id)
  const imported = await t.post(IMPORT, importBody(file(join(root, 'Show', 'clip.mov'))))
  expect(imported.status).toBe(201)
  await t.runner.idle()
  const remake = await t.post(`/api/videoassets/${imported.json.asset_import_id}/proxy/`, {})
  expect(remake.status).toBe(202)
  const project = (
    await t.post('/api/projectassets/', { name: 'edit', bundle_root: bundle, production_id: production.id })
  ).json
  const copy = await t.post('/api/projectassets/', {
    name: 'copy',
    bundle_root: join(root, 'Show', 'copy') + '/',
    production_id: production.id,
    copy_of: project.id,
  })
  expect(copy.status).toBe(201)
  await t.runner.idle()
  expect((await t.request('DELETE', `/api/projectassets/${copy.json.id}/`)).status).toBe(202)
  await t.runner.idle()
  // Every end is published as its task's end commits: an event published now comes after them all.
  t.core.events.bus.publish('task', { id: -1 }, [])
  await stream.until('the last event', (e) => matching(e, 'task', { id: -1 }).length === 1)
  const ends = new Map<string, number>()
  for (const e of stream.events)
    if (e.event === 'task' && (e.data.state === 'done' || e.data.state === 'failed'))
      ends.set(`${e.data.kind} ${e.data.id}`, (ends.get(`${e.data.kind} ${e.data.id}`) ?? 0) + 1)
  const ended = t.db.$client
    .query<{ id: number; kind: string }, []>("SELECT id, kind FROM tasks WHERE state IN ('done', 'failed') ORDER BY id")
    .all()
  expect(ended.map((r) => r.kind).sort()).toEqual(['copy', 'delete', 'import', 'proxy', 'scan'])
  expect(Object.fromEntries(ends)).toEqual(Object.fromEntries(ended.map((r) => [`${r.kind} ${r.id}`, 1])))
})

test('a change rolled back sends nothing: an asset created in a transaction that then fails', async () => {
  const { t, events } = served()
  const { root, production } = await seedProduction(t)
  const stream = await events()
  const path = file(join(root, 'Show', 'gone.mov'))
  expect(() =>
    t.db.transaction(() => {
      t.core.port.run(
        t.core.media.create(
          'video',
          { name: 'gone', path_file: path, production: production.id },
          t.users.principalById(1)!,
        ),
      )
      throw new Error('the rest of the work failed')
    }),
  ).toThrow('the rest of the work failed')
  const kept = (await t.post('/api/videoassets/', { name: 'kept', path_file: path, production: production.id })).json.id
  await stream.until('the asset that was kept', (e) => e.length === 1)
  expect(stream.events.map((e) => e.data)).toEqual([{ type: 'videoasset', id: kept, action: 'created' }])
})

describe('task events are paced', () => {
  test('a burst of changes gives at most one event a turn (4 a second), the newest state last; the end always, at once', async () => {
    const { t, events } = served()
    const { production } = await seedProduction(t)
    await t.runner.stop() // the task below stays as this test writes it
    const stream = await events()
    const { id } = runSync(
      t.db,
      t.runner.enqueue({
        kind: 'copy',
        target: { projectasset: 1 },
        production: production.id,
        params: { source: '/a/', target: '/b/', device: '/' },
      }),
    )
    const progress = (bytes: number) => {
      t.db.$client.run('UPDATE tasks SET state = ?, bytes_done = ? WHERE id = ?', ['running', bytes, id])
      t.core.events.taskChanged(id, (task) => runSync(t.db, t.runner.get(task)))
    }
    await stream.until('the queued task', (e) => matching(e, 'task', { id }).length === 1)
    const sent = () => matching(stream.events, 'task', { id }).map((e) => [e.data.state, e.data.bytes_done])
    // A hundred changes at once: the first goes now only if the last event is a turn old; the
    // newest state goes when its turn comes.
    for (let bytes = 1; bytes <= 100; bytes++) progress(bytes)
    await stream.until('the trailing event', (e) => matching(e, 'task', { id, bytes_done: 100 }).length === 1)
    const first = sent()
    expect([
      [
        ['queued', 0],
        ['running', 100],
      ],
      [
        ['queued', 0],
        ['running', 1],
        ['running', 100],
      ],
    ]).toContainEqual(first)
    // A hundred more, then the end: the end goes at once, whatever the turn, in place of the pending event.
    for (let bytes = 101; bytes <= 200; bytes++) progress(bytes)
    t.db.$client.run("UPDATE tasks SET state = 'done' WHERE id = ?", [id])
    t.core.events.taskChanged(id, (task) => runSync(t.db, t.runner.get(task)))
    await stream.until('the end', (e) => matching(e, 'task', { id, state: 'done' }).length === 1)
    expect([
      [...first, ['done', 200]],
      [...first, ['running', 101], ['done', 200]],
    ]).toContainEqual(sent())
    // Nothing after the end, even from the turn that was pending.
    t.core.events.bus.publish('task', { id: -1 }, [])
    await stream.until('a later event', (e) => matching(e, 'task', { id: -1 }).length === 1)
    expect(matching(stream.events, 'task', { id }).at(-1)!.data.state).toBe('done')
  })
})

describe('who sees what', () => {
  test('a user sees the events of productions they can read (and of media shared with one), none of the others', async () => {
    const { t, events } = served()
    const a = await seedProduction(t, 'A')
    const b = await seedProduction(t, 'B')
    const key = t.makeUser('ana', { read: [a.production.id] })
    const ana = await events(key)
    const admin = await events()
    const inA = (
      await t.post('/api/videoassets/', {
        name: 'a',
        path_file: file(join(a.root, 'A', 'a.mov')),
        production: a.production.id,
      })
    ).json.id
    const inB = (
      await t.post('/api/videoassets/', {
        name: 'b',
        path_file: file(join(b.root, 'B', 'b.mov')),
        production: b.production.id,
      })
    ).json.id
    const projectB = (
      await t.post('/api/projectassets/', {
        name: 'pb',
        bundle_root: join(b.root, 'B', 'p') + '/',
        production_id: b.production.id,
      })
    ).json.id
    const logB = (await t.post(IMPORT, importBody(file(join(b.root, 'B', 'clip.mov')), {}, {}, { production: 'B' })))
      .json
    await t.runner.idle()
    // Shared with A: its changes are A's readers' to see too.
    t.db.$client.run('INSERT INTO media_asset_shares (asset_id, production_id) VALUES (?, ?)', [inB, a.production.id])
    await t.request('PATCH', `/api/videoassets/${inB}/`, { body: { description: 'shared' } })
    const last = (
      await t.post('/api/videoassets/', {
        name: 'z',
        path_file: file(join(a.root, 'A', 'z.mov')),
        production: a.production.id,
      })
    ).json.id
    await admin.until('the last asset', (e) => matching(e, 'asset', { id: last }).length === 1)
    await ana.until('the last asset', (e) => matching(e, 'asset', { id: last }).length === 1)

    expect(matching(admin.events, 'project', { id: projectB })).toHaveLength(1)
    expect(matching(admin.events, 'importlog', { asset_path: logB.asset_path }).length).toBeGreaterThan(0)
    expect(matching(admin.events, 'task', { id: logB.task.id }).length).toBeGreaterThan(0)
    expect(ana.events.map((e) => [e.event, e.data.id, e.data.action])).toEqual([
      ['asset', inA, 'created'],
      ['asset', inB, 'updated'],
      ['asset', last, 'created'],
    ])
  })

  test('access taken away narrows an open stream; a revoked key ends it, in this process or another', async () => {
    const { t, events } = served()
    const a = await seedProduction(t, 'A')
    const c = await seedProduction(t, 'C')
    const key = t.makeUser('ana', { read: [a.production.id, c.production.id] })
    const ana = await events(key)
    const asset = (p: typeof a, name: string) =>
      t.post('/api/videoassets/', {
        name,
        path_file: file(join(p.root, p.production.name, `${name}.mov`)),
        production: p.production.id,
      })
    await asset(a, 'before')
    await ana.until('the asset of A', (e) => e.length === 1)
    t.db.$client.run('DELETE FROM production_access WHERE production_id = ?', [a.production.id])
    await asset(a, 'after')
    const inC = (await asset(c, 'c')).json.id
    await ana.until('the asset of C', (e) => matching(e, 'asset', { id: inC }).length === 1)
    expect(ana.events.map((e) => e.data.id)).toEqual([1, inC])

    // Revoked here: the stream ends at the next event or check, whichever comes first.
    expect(t.users.revokeKey(key)).toBe(true)
    await ana.end('the end of a revoked stream', 10_000)
    expect(ana.error).toBeUndefined()
    // Revoked by another process (reelhouse token revoke): seen at the next check.
    const other = t.users.createKey('ana')
    const bo = await events(other)
    writeElsewhere(t, `DELETE FROM api_keys WHERE user_id = (SELECT id FROM users WHERE username = 'ana')`)
    await bo.end('the end of a stream whose key another process revoked', 10_000)
  })
})

test('a stream opened with a password (Basic) ends when the password changes, not when another user changes', async () => {
  const { t, base } = served()
  const { production } = await seedProduction(t)
  t.makeUser('ana', { read: [production.id] })
  t.users.setPassword('ana', await hashPassword('first secret'))
  const ana = await openEvents(base, { authorization: `Basic ${btoa('ana:first secret')}` })
  // A key made for someone else changes the auth tables: ana's stream is checked again, and stays.
  t.makeUser('bo')
  t.core.events.bus.publish('task', { id: 1 }, [production.id])
  await ana.until('the event after the check', (e) => e.length === 1)
  t.users.setPassword('ana', await hashPassword('second secret'))
  await ana.end('the end of the stream after the password changed', 10_000)
  expect(ana.error).toBeUndefined()
})

describe('resume and reset', () => {
  test('Last-Event-ID replays exactly the events missed, then goes on live', async () => {
    const { t, events } = served()
    const { root, production } = await seedProduction(t)
    const witness = await events()
    const make = async (name: string) =>
      (
        await t.post('/api/videoassets/', {
          name,
          path_file: file(join(root, 'Show', `${name}.mov`)),
          production: production.id,
        })
      ).json.id
    const away = await events()
    await make('one')
    await away.until('one event', (e) => e.length === 1)
    const held = away.events[0]!.id!
    await away.close()
    for (const name of ['two', 'three', 'four']) await make(name)
    await witness.until('four events', (e) => e.length === 4)
    const back = await events(t.adminKey, { 'last-event-id': held })
    await back.until('the three missed', (e) => e.length === 3)
    const last = await make('five')
    await back.until('the live one', (e) => matching(e, 'asset', { id: last }).length === 1)
    await witness.until('the live one', (e) => matching(e, 'asset', { id: last }).length === 1)
    expect(back.blocks[0]).toEqual({ id: held, comments: [] })
    expect(back.events).toEqual(witness.events.slice(1))
  })

  test('an id of an earlier run of the server, an evicted one or no id at all: reset first, then live', async () => {
    const first = served({ ringEvents: 2 })
    const { root, production } = await seedProduction(first.t)
    const old = await first.events()
    for (const name of ['a', 'b', 'c'])
      await first.t.post('/api/videoassets/', {
        name,
        path_file: file(join(root, 'Show', `${name}.mov`)),
        production: production.id,
      })
    await old.until('three events', (e) => e.length === 3)
    // The ring holds the last two and the one before them (nothing missed after it); the opening's position is gone.
    const evicted = await first.events(first.t.adminKey, { 'last-event-id': old.blocks[0]!.id! })
    const garbage = await first.events(first.t.adminKey, { 'last-event-id': 'yesterday' })
    for (const s of [evicted, garbage]) {
      await waitFor(() => s.blocks.length > 0, 'the first block', { ms: 10_000 })
      expect(s.blocks[0]).toEqual({
        id: old.events[2]!.id!,
        event: 'reset',
        data: { reason: expect.any(String) },
        comments: [],
      })
    }
    const kept = old.events[2]!.id!
    const dataDir = first.t.dataDir
    // The same catalogue served anew: ids of the earlier run are not this run's.
    first.t.core.events.close()
    await first.server.stop()
    await first.t.core.stop()
    first.t.close()
    running.splice(running.indexOf(first), 1)
    const second = served({}, dataDir)
    const again = await second.events(second.t.adminKey, { 'last-event-id': kept })
    await waitFor(() => again.blocks.length > 0, 'the first block', { ms: 10_000 })
    expect(again.blocks[0]).toMatchObject({ event: 'reset' })
    expect(Number(again.blocks[0]!.id)).toBeGreaterThan(Number(kept))
    await second.t.post('/api/videoassets/', {
      name: 'd',
      path_file: file(join(root, 'Show', 'd.mov')),
      production: production.id,
    })
    await again.until('the live event after the reset', (e) => e.length === 2)
  })
})

describe('the connection', () => {
  test('a comment line keeps a quiet stream alive (the interval shortened here)', async () => {
    const { events } = served({ keepAliveMs: 50 })
    const stream = await events()
    await waitFor(() => stream.blocks.some((b) => b.comments.includes('keep-alive')), 'a keep-alive comment', {
      ms: 10_000,
    })
    expect(stream.text).toContain('\n\n: keep-alive\n\n')
  })

  test('a client that stops reading is dropped once it is a ring behind; the others are served on', async () => {
    const lines: string[] = []
    const log = {
      info() {},
      error() {},
      warn: (m: string, f?: Record<string, unknown>) => lines.push(`${m} ${JSON.stringify(f)}`),
    }
    const t = testApp(undefined, { core: { log, events: { ringEvents: 100 } } })
    const server = t.app.listen({ port: 0, hostname: '127.0.0.1' }).server!
    const gate = join(t.dataDir, 'gate')
    Bun.spawnSync(['mkfifo', gate])
    // A client in another process that sends its request and reads nothing until the gate opens:
    // what it is sent fills the sockets' buffers, then the stream's.
    const stalled = Bun.spawn(
      [
        'bash',
        '-c',
        `exec 3<>/dev/tcp/127.0.0.1/${server.port}
printf 'GET /api/events/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token ${t.adminKey}\r\nConnection: close\r\n\r\n' >&3
read -r _ < '${gate}'
exec cat <&3`,
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    try {
      await waitFor(() => t.core.events.bus.streams === 1, 'the stalled stream open', { ms: 10_000 })
      // A client that keeps up, counting what it reads.
      const reader = (
        await fetch(`http://127.0.0.1:${server.port}/api/events/`, {
          headers: { authorization: `Token ${t.adminKey}` },
        })
      ).body!.getReader()
      let read = 0
      void (async () => {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return
          read += value.length
        }
      })()
      const payload = 'x'.repeat(16 * 1024)
      let sent = 0
      for (let i = 0; i < 5_000 && t.core.events.bus.streams === 2; i++) {
        expect(t.core.events.bus.publish('importlog', { id: i, asset_path: payload, status: 'x' }, [])).toBeNumber()
        sent += payload.length
        await waitFor(() => read >= sent, `the reader to keep up with event ${i}`, { ms: 10_000 })
      }
      expect(t.core.events.bus.streams).toBe(1)
      expect(lines).toEqual([
        expect.stringMatching(/^event stream dropped: its client fell behind \{"user":"admin","behind":\d+\}$/),
      ])
      // The server goes on: the reader still gets events, and requests are answered.
      t.core.events.bus.publish('importlog', { id: -1, asset_path: 'last', status: 'x' }, [])
      await waitFor(() => read > sent, 'the reader to get the last event', { ms: 10_000 })
      expect((await fetch(`http://127.0.0.1:${server.port}/api/health`)).status).toBe(200)
      // Read at last, the dropped stream ends with `dropped` and the end of its body.
      writeFileSync(gate, 'go\n')
      const [text, code] = await Promise.all([new Response(stalled.stdout).text(), stalled.exited])
      expect(code).toBe(0)
      expect(text).toStartWith('HTTP/1.1 200 OK\r\n')
      expect(text).toContain('\r\nevent: dropped\ndata: {"reason":')
      expect(text).toEndWith('\r\n0\r\n\r\n')
      await reader.cancel()
    } finally {
      stalled.kill()
      t.core.events.close()
      await server.stop()
      await t.core.stop()
      t.cleanup()
    }
  })

  test('shutdown ends every stream cleanly (the end of the body, no reset), and the server stops without waiting for them', async () => {
    const s = served()
    const streams = [await s.events(), await s.events(), await s.events()]
    await Promise.all(streams.map((stream) => waitFor(() => stream.blocks.length > 0, 'the opening', { ms: 10_000 })))
    s.t.core.events.close()
    await s.server.stop()
    for (const stream of streams) {
      await stream.end('the end of the stream', 10_000)
      expect({ ended: stream.ended, error: stream.error }).toEqual({ ended: true, error: undefined })
    }
  })
})
