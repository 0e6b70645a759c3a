// A request that only reads runs its synchronous part in one read transaction (db/client.ts
// readSnapshotOf, app.ts): the key check, the count and the page share its snapshot and its locks.
// It must end with the request's synchronous part whatever the answer, or every later write of
// the server would join it and another process could never checkpoint past it.
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type TestApp, seedProduction, testApp, writeElsewhere } from '../helpers/app.ts'

let t: TestApp

beforeAll(async () => {
  t = testApp()
  await seedProduction(t)
})
afterAll(() => t.cleanup())

test('no transaction is left open after any GET, whatever it answers', async () => {
  const answers = [
    await t.get('/api/devices/?limit=1'), // a page
    await t.get('/api/devices/'), // streamed whole
    await t.get('/api/devices/999999/'), // 404
    await t.get('/api/devices/?limit=abc'), // 400
    await t.get('/api/devices/', { key: null }), // 401
    await t.get('/api/nothing-here/'), // 404 without a route
  ]
  expect(answers.map((r) => r.status)).toEqual([200, 200, 404, 400, 401, 404])
  expect(t.db.$client.inTransaction).toBe(false)
  // Another connection writes at once (no lock held), and the next page counts its row.
  writeElsewhere(
    t,
    "INSERT INTO devices (name, display_name, path, date_add) VALUES ('elsewhere', 'elsewhere', '/elsewhere/', '2026-01-01T00:00:00.000000Z')",
    0,
  )
  const after = await t.get('/api/devices/?limit=1')
  expect(after.headers.get('x-total-count')).toBe(String(Number(answers[0]!.headers.get('x-total-count')) + 1))
})

test('a write after a GET is committed by itself, not held in a transaction the GET opened', async () => {
  expect((await t.get('/api/productions/?limit=1')).status).toBe(200)
  const r = await t.post('/api/devices/', { name: 'after-a-get', path: '/after/a/get/' })
  expect(r.status).toBe(201)
  expect(t.db.$client.inTransaction).toBe(false)
  const other = new Database(join(t.dataDir, 'reelhouse.db'), { readonly: true })
  try {
    expect(other.query("SELECT count(*) AS n FROM devices WHERE name = 'after-a-get'").get()).toEqual({ n: 1 })
  } finally {
    other.close()
  }
})

test('the key check inside the read transaction still serves and refreshes its cache', async () => {
  const key = t.makeUser('snapshot-reader')
  expect((await t.get('/api/devices/', { key })).status).toBe(200)
  expect(t.users.revokeKey(key)).toBe(true)
  expect((await t.get('/api/devices/', { key })).status).toBe(401)
})

test('no GET route writes: every one leaves total_changes() as it was (a write inside the read transaction would need a lock it cannot wait for)', async () => {
  const changes = () => t.db.$client.query<{ n: number }, []>('SELECT total_changes() AS n').get()!.n
  // The event stream never ends (test/events covers it; it reads nothing from the catalogue).
  const routes = (t.app as unknown as { routes: { method: string; path: string }[] }).routes.filter(
    (r) => r.method === 'GET' && !r.path.startsWith('/api/events'),
  )
  expect(routes.length).toBeGreaterThan(15)
  for (const route of routes) {
    const path = route.path.replace(/:[^/]+/g, '1')
    for (const query of ['', '?limit=2']) {
      const before = changes()
      const r = await t.get(path + query)
      expect({ path, status: r.status < 500, changes: changes() }).toEqual({ path, status: true, changes: before })
    }
  }
  expect(t.db.$client.inTransaction).toBe(false)
})
