// The task runner over a real catalogue: enqueue's merge keys, waking on commit, tasks of one
// target in order, the bounded read of the queue, and rows of kinds without a handler.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Db } from '../../src/db/client.ts'
import { type Handlers, type Runner, createRunner, grouped } from '../../src/tasks/runner.ts'
import { silentLog } from '../../src/util/log.ts'
import { migratedDb, tempDir } from '../helpers/app.ts'
import { waitFor } from '../helpers/wait.ts'
import { sql } from 'drizzle-orm'
import { type Work, run, runSync, sqlitePort } from '../../src/db/port.ts'

let dir: string
let db: Db
let runner: Runner
/** Queues a task outside any transaction (the runner's enqueue is port work). */
const queue = (task: Parameters<Runner['enqueue']>[0]) => runSync(db, runner.enqueue(task))
let ran: string[]
let release: () => void

const copyParams = { source: '/a/', target: '/b/', device: '/' }
const deleteParams = { bundle_root: '/a/', device: '/' }

beforeEach(() => {
  dir = tempDir('reelhouse-runner-')
  db = migratedDb(join(dir, 'reelhouse.db'))
  ran = []
  let open = Promise.resolve()
  release = () => {}
  const handlers: Handlers = {
    copy: async ({ task }) => {
      ran.push(`copy ${task.id}`)
      await open
    },
    delete: async ({ task }) => void ran.push(`delete ${task.id} ${task.params.bundle_root}`),
    import: async ({ task }) => void ran.push(`import ${task.id}`),
    proxy: async ({ task }) => void ran.push(`proxy ${task.id}`),
    proxyname: async ({ task }) => void ran.push(`proxyname ${task.id}`),
    archive: async () => {},
    restore: async () => {},
    shots: async ({ task }) => void ran.push(`shots ${task.id}`),
    verify: async ({ task }) => void ran.push(`verify ${task.id}`),
    scan: async ({ task }) => void ran.push(`scan ${task.id}`),
  }
  runner = createRunner(sqlitePort(db), { concurrency: 2, log: silentLog, handlers })
  // A gate the copy handler waits at, opened by release().
  open = new Promise((r) => (release = r))
})
afterEach(async () => {
  release()
  await runner.stop()
  db.$client.close()
  rmSync(dir, { recursive: true, force: true })
})

const states = () =>
  db.$client
    .query<{ id: number; state: string; key: string | null }, []>('SELECT id, state, key FROM tasks ORDER BY id')
    .all()

test('a key merges a second enqueue into the queued task; once it runs, the same key queues anew', async () => {
  const a = queue({
    kind: 'delete',
    target: { projectasset: 1 },
    production: null,
    params: deleteParams,
    key: 'k',
  })
  const b = queue({
    kind: 'delete',
    target: { projectasset: 1 },
    production: null,
    params: deleteParams,
    key: 'k',
  })
  expect([a.merged, b]).toEqual([false, { id: a.id, merged: true }])
  expect(states()).toEqual([{ id: a.id, state: 'queued', key: 'k' }])
  runner.start()
  await runner.idle()
  const c = queue({
    kind: 'delete',
    target: { projectasset: 1 },
    production: null,
    params: deleteParams,
    key: 'k',
  })
  // A new row (the merged enqueue may have used up an id: ids are never reused, gaps are fine).
  expect(c).toEqual({ id: expect.any(Number), merged: false })
  expect(c.id).toBeGreaterThan(a.id)
  await runner.idle()
  expect(states().map((s) => s.state)).toEqual(['done', 'done'])
})

test('enqueue inside a transaction wakes the runner after the commit; a rolled back one leaves nothing', async () => {
  runner.start()
  db.transaction(
    (tx) =>
      void queue({
        kind: 'delete',
        target: { projectasset: 2 },
        production: null,
        params: { ...deleteParams, bundle_root: '/committed/' },
      }),
  )
  expect(() =>
    db.transaction((tx) => {
      queue({ kind: 'delete', target: { projectasset: 3 }, production: null, params: deleteParams })
      throw new Error('rolled back')
    }),
  ).toThrow('rolled back')
  await waitFor(() => ran.length === 1, 'the committed task to run')
  await runner.idle()
  expect(ran).toEqual([`delete 1 /committed/`])
  expect(states()).toEqual([{ id: 1, state: 'done', key: null }])
})

test('tasks of one target run one after the other; other targets use the free slots', async () => {
  runner.start()
  const first = queue({
    kind: 'copy',
    target: { projectasset: 7 },
    production: null,
    params: copyParams,
  }).id
  const second = queue({
    kind: 'delete',
    target: { projectasset: 7 },
    production: null,
    params: deleteParams,
  }).id
  const other = queue({
    kind: 'delete',
    target: { projectasset: 8 },
    production: null,
    params: deleteParams,
  }).id
  await waitFor(() => ran.includes(`delete ${other} /a/`), 'the other target to run')
  expect(ran).not.toContain(`delete ${second} /a/`)
  release()
  await runner.idle()
  expect(ran.indexOf(`copy ${first}`)).toBeLessThan(ran.indexOf(`delete ${second} /a/`))
})

test('a thousand queued tasks all run, two at a time, each once', async () => {
  for (let i = 0; i < 1000; i++)
    queue({ kind: 'delete', target: { projectasset: i }, production: null, params: deleteParams })
  runner.start()
  await runner.idle()
  expect(ran.length).toBe(1000)
  expect(new Set(ran).size).toBe(1000)
  expect(states().every((s) => s.state === 'done')).toBe(true)
})

test('a row of a kind this version has no handler for fails with the reason instead of stopping the runner', async () => {
  db.$client.run(
    `INSERT INTO tasks (kind, target, params, date_add) VALUES ('transcode', '{"device":1}', '{}', '2026-01-01T00:00:00.000000Z')`,
  )
  queue({ kind: 'delete', target: { projectasset: 1 }, production: null, params: deleteParams })
  runner.start()
  await runner.idle()
  expect(
    db.$client.query<{ state: string; error: string }, []>('SELECT state, error FROM tasks ORDER BY id').all(),
  ).toEqual([
    { state: 'failed', error: 'no handler for transcode tasks' },
    { state: 'done', error: '' },
  ])
})

test('a restart with a task of a key still running and another of the key queued starts (keys merge queued work only)', async () => {
  runner.start()
  const first = queue({
    kind: 'copy',
    target: { projectasset: 9 },
    production: null,
    params: copyParams,
    key: 'k',
  })
  await waitFor(() => ran.includes(`copy ${first.id}`), 'the first to run')
  const second = queue({
    kind: 'copy',
    target: { projectasset: 9 },
    production: null,
    params: copyParams,
    key: 'k',
  })
  expect(second).toEqual({ id: first.id + 1, merged: false })
  // A shutdown leaves the first running; the next start queues it again beside the second.
  await runner.stop(0)
  const again = createRunner(sqlitePort(db), {
    concurrency: 2,
    log: silentLog,
    handlers: {
      copy: async () => {},
      delete: async () => {},
      import: async () => {},
      proxy: async () => {},
      proxyname: async () => {},
      archive: async () => {},
      restore: async () => {},
      shots: async () => {},
      verify: async () => {},
      scan: async () => {},
    },
  })
  expect(() => again.start()).not.toThrow()
  await again.idle()
  expect(states().map((s) => s.state)).toEqual(['done', 'done'])
  await again.stop()
})

test("a handler's last write is committed with the task's end: done with it, or failed and rolled back with it", async () => {
  db.$client.run('CREATE TABLE marks (task INTEGER)')
  const mark = db.$client.prepare('INSERT INTO marks (task) VALUES (?)')
  const noop = async () => {}
  const withLast = createRunner(sqlitePort(db), {
    concurrency: 1,
    log: silentLog,
    handlers: {
      copy: noop,
      delete: noop,
      proxy: noop,
      proxyname: noop,
      archive: noop,
      restore: noop,
      shots: noop,
      verify: noop,
      scan: noop,
      import:
        async ({ task }) =>
        () => {
          mark.run(task.id)
          if (task.params.asset === 2) throw new Error('the last write failed')
        },
    },
  })
  const importParams = (asset: number) => ({ asset, kind: 'video' as const, logs: [], rewrap_proxy: false, given: [] })
  for (const asset of [1, 2, 3])
    runSync(
      db,
      withLast.enqueue({
        kind: 'import',
        target: { videoasset: asset },
        production: null,
        params: importParams(asset),
      }),
    )
  withLast.start()
  await withLast.idle()
  await withLast.stop()
  expect(
    db.$client
      .query<{ id: number; state: string; error: string }, []>('SELECT id, state, error FROM tasks ORDER BY id')
      .all(),
  ).toEqual([
    { id: 1, state: 'done', error: '' },
    { id: 2, state: 'failed', error: 'the last write failed' },
    { id: 3, state: 'done', error: '' }, // the slot the failure freed is taken again
  ])
  expect(
    db.$client
      .query<{ task: number }, []>('SELECT task FROM marks ORDER BY task')
      .all()
      .map((m) => m.task),
  ).toEqual([1, 3])
})

test("a handler's last write may be port work: committed with the task's end, or rolled back with it", async () => {
  db.$client.run('CREATE TABLE marks (task INTEGER)')
  const noop = async () => {}
  const withWork = createRunner(sqlitePort(db), {
    concurrency: 1,
    log: silentLog,
    handlers: {
      copy: noop,
      delete: noop,
      proxy: noop,
      proxyname: noop,
      archive: noop,
      restore: noop,
      shots: noop,
      verify: noop,
      scan: noop,
      import: async ({ task }) =>
        function* (): Work<void> {
          yield* run(sql`INSERT INTO marks (task) VALUES (${task.id})`)
          if (task.params.asset === 2) throw new Error('the last write failed')
        },
    },
  })
  for (const asset of [1, 2])
    runSync(
      db,
      withWork.enqueue({
        kind: 'import',
        target: { videoasset: asset },
        production: null,
        params: { asset, kind: 'video', logs: [], rewrap_proxy: false, given: [] },
      }),
    )
  withWork.start()
  await withWork.idle()
  await withWork.stop()
  expect(states().map(({ id, state }) => ({ id, state }))).toEqual([
    { id: 1, state: 'done' },
    { id: 2, state: 'failed' },
  ])
  expect(db.$client.query<{ task: number }, []>('SELECT task FROM marks').all()).toEqual([{ task: 1 }])
})

// A copy is timed by the user from the request to the finished record: the runner adds no wait
// of its own at either end. Both are observed by the order of the event loop, not by a clock:
// work done in microtasks comes before any timer, however short.
test('a committed task starts in the same turn of the event loop as its enqueue, before any timer', async () => {
  runner.start()
  let timer = false
  setTimeout(() => (timer = true), 0)
  const { id } = queue({
    kind: 'delete',
    target: { projectasset: 4 },
    production: null,
    params: deleteParams,
  })
  await Promise.resolve() // the wake-up is the microtask queued before this one
  expect({ ran, timer }).toEqual({ ran: [`delete ${id} /a/`], timer: false })
})

test('idle() resolves in the same turn of the event loop as the last task ends, before any timer', async () => {
  runner.start()
  const { id } = queue({ kind: 'copy', target: { projectasset: 5 }, production: null, params: copyParams })
  await waitFor(() => ran.includes(`copy ${id}`), 'the copy to start')
  const idle = runner.idle()
  let timer = false
  setTimeout(() => (timer = true), 0)
  release()
  await idle
  expect({ timer, states: states() }).toEqual({ timer: false, states: [{ id, state: 'done', key: null }] })
})

test("a task a shutdown left running is queued again at each start with that start counted once in its attempts; a queued one's are not", async () => {
  runner.start()
  const first = queue({ kind: 'copy', target: { projectasset: 9 }, production: null, params: copyParams })
  const second = queue({ kind: 'copy', target: { projectasset: 9 }, production: null, params: copyParams })
  await waitFor(() => ran.includes(`copy ${first.id}`), 'the first to run')
  const attempts = () =>
    db.$client
      .query<{ id: number; state: string; attempts: number }, []>('SELECT id, state, attempts FROM tasks ORDER BY id')
      .all()
  // Each start: the handler records the attempt it was given and never ends (a copy in the middle
  // of one huge file), so the stop leaves its row running.
  const seen: [number, number][] = []
  const holding: Handlers = {
    copy: ({ task }) => {
      seen.push([task.id, task.attempts])
      return new Promise(() => {})
    },
    delete: async () => {},
    import: async () => {},
    proxy: async () => {},
    proxyname: async () => {},
    archive: async () => {},
    restore: async () => {},
    shots: async () => {},
    verify: async () => {},
    scan: async () => {},
  }
  await runner.stop(0)
  for (const attempt of [1, 2]) {
    const again = createRunner(sqlitePort(db), { concurrency: 2, log: silentLog, handlers: holding })
    again.start()
    await waitFor(() => seen.length === attempt, 'the resumed task to run')
    expect(attempts()).toEqual([
      { id: first.id, state: 'running', attempts: attempt },
      { id: second.id, state: 'queued', attempts: 0 },
    ])
    await again.stop(0)
  }
  expect(seen).toEqual([
    [first.id, 1],
    [first.id, 2],
  ])
})

// Grouped kinds: a free slot claims several queued tasks of the kind at once, runs them side by
// side, and commits the ends of those that finish together in one transaction.
describe('a grouped kind', () => {
  const importParams = (asset: number) => ({ asset, kind: 'video' as const, logs: [], rewrap_proxy: false, given: [] })
  const noop = async () => {}
  const tasksOf = () =>
    db.$client
      .query<{ id: number; state: string; error: string; key: string | null }, []>(
        'SELECT id, state, error, key FROM tasks ORDER BY id',
      )
      .all()

  test('runs every task once, up to a group per slot at a time, and each ends done', async () => {
    const runs = new Map<number, number>()
    let now = 0
    let most = 0
    const groupedRunner = createRunner(sqlitePort(db), {
      concurrency: 2,
      log: silentLog,
      handlers: {
        copy: noop,
        delete: noop,
        proxy: noop,
        proxyname: noop,
        archive: noop,
        restore: noop,
        shots: noop,
        verify: noop,
        scan: noop,
        import: grouped(async ({ task }) => {
          runs.set(task.id, (runs.get(task.id) ?? 0) + 1)
          most = Math.max(most, ++now)
          await new Promise((r) => setImmediate(r))
          now--
        }, 8),
      },
    })
    for (let asset = 1; asset <= 100; asset++)
      runSync(
        db,
        groupedRunner.enqueue({
          kind: 'import',
          target: { videoasset: asset },
          production: null,
          params: importParams(asset),
        }),
      )
    groupedRunner.start()
    await groupedRunner.idle()
    await groupedRunner.stop()
    expect({ ran: runs.size, once: [...runs.values()].every((n) => n === 1), most }).toEqual({
      ran: 100,
      once: true,
      most: 16,
    })
    expect(tasksOf().every((t) => t.state === 'done' && t.error === '' && t.key === null)).toBe(true)
  })

  test('a task that fails, or whose last write fails, fails alone: the others of its group end done with their last writes', async () => {
    db.$client.run('CREATE TABLE marks (task INTEGER)')
    const mark = db.$client.prepare('INSERT INTO marks (task) VALUES (?)')
    const groupedRunner = createRunner(sqlitePort(db), {
      concurrency: 1,
      log: silentLog,
      handlers: {
        copy: noop,
        delete: noop,
        proxy: noop,
        proxyname: noop,
        archive: noop,
        restore: noop,
        shots: noop,
        verify: noop,
        scan: noop,
        import: grouped(async ({ task }) => {
          if (task.params.asset === 2) throw new Error('the work failed')
          return () => {
            mark.run(task.id)
            if (task.params.asset === 4) throw new Error('the last write failed')
          }
        }, 8),
      },
    })
    for (let asset = 1; asset <= 5; asset++)
      runSync(
        db,
        groupedRunner.enqueue({
          kind: 'import',
          target: { videoasset: asset },
          production: null,
          params: importParams(asset),
        }),
      )
    groupedRunner.start()
    await groupedRunner.idle()
    await groupedRunner.stop()
    expect(tasksOf().map(({ id, state, error }) => ({ id, state, error }))).toEqual([
      { id: 1, state: 'done', error: '' },
      { id: 2, state: 'failed', error: 'the work failed' },
      { id: 3, state: 'done', error: '' },
      { id: 4, state: 'failed', error: 'the last write failed' },
      { id: 5, state: 'done', error: '' },
    ])
    // The failed last write was rolled back with its task's end; the others' were committed.
    expect(
      db.$client
        .query<{ task: number }, []>('SELECT task FROM marks ORDER BY task')
        .all()
        .map((m) => m.task),
    ).toEqual([1, 3, 5])
  })

  test("exclusive work runs one task of the group at a time; the group's other work runs beside it", async () => {
    let inside = 0
    let most = 0
    const order: string[] = []
    const groupedRunner = createRunner(sqlitePort(db), {
      concurrency: 1,
      log: silentLog,
      handlers: {
        copy: noop,
        delete: noop,
        proxy: noop,
        proxyname: noop,
        archive: noop,
        restore: noop,
        shots: noop,
        verify: noop,
        scan: noop,
        import: grouped(async ({ task, exclusive }) => {
          order.push(`start ${task.params.asset}`)
          await exclusive!(async () => {
            most = Math.max(most, ++inside)
            await new Promise((r) => setTimeout(r, 5))
            inside--
          })
        }, 4),
      },
    })
    for (let asset = 1; asset <= 4; asset++)
      runSync(
        db,
        groupedRunner.enqueue({
          kind: 'import',
          target: { videoasset: asset },
          production: null,
          params: importParams(asset),
        }),
      )
    groupedRunner.start()
    await groupedRunner.idle()
    await groupedRunner.stop()
    // All four started at once (one group), their exclusive parts one after another.
    expect({ started: order, most }).toEqual({ started: ['start 1', 'start 2', 'start 3', 'start 4'], most: 1 })
    expect(tasksOf().map((t) => t.state)).toEqual(['done', 'done', 'done', 'done'])
  })

  test('tasks of one target are never in a group together: they run one after the other', async () => {
    const order: string[] = []
    const groupedRunner = createRunner(sqlitePort(db), {
      concurrency: 1,
      log: silentLog,
      handlers: {
        copy: noop,
        delete: noop,
        proxy: noop,
        proxyname: noop,
        archive: noop,
        restore: noop,
        shots: noop,
        verify: noop,
        scan: noop,
        import: grouped(async ({ task }) => {
          order.push(`start ${task.id}`)
          await new Promise((r) => setImmediate(r))
          order.push(`end ${task.id}`)
        }, 8),
      },
    })
    for (const asset of [1, 1, 2])
      runSync(
        db,
        groupedRunner.enqueue({
          kind: 'import',
          target: { videoasset: asset },
          production: null,
          params: importParams(asset),
        }),
      )
    groupedRunner.start()
    await groupedRunner.idle()
    await groupedRunner.stop()
    expect(order.indexOf('end 1')).toBeLessThan(order.indexOf('start 2'))
    expect(tasksOf().map((t) => t.state)).toEqual(['done', 'done', 'done'])
  })
})
