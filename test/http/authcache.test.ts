// Principals are cached by key on SQLite (src/modules/users/service.ts, through
// src/db/tablecache.ts): every change to who holds a key or what they may do is seen by the very
// next request, whether another process made it (the CLI, through PRAGMA data_version) or this
// connection did, by any path (temporary triggers on the auth tables, cascades included). Each
// request below is made once before the change, so that the answer after it would come from the
// cache if the cache missed it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type TestApp, seedProduction, tempDir, testApp, writeElsewhere } from '../helpers/app.ts'
import { runCli } from '../helpers/process.ts'

let t: TestApp
let root: string
let show: { id: number }

beforeAll(async () => {
  t = testApp()
  ;({ root, production: show } = await seedProduction(t))
})
afterAll(() => t.cleanup())

const cli = async (...args: string[]) => {
  const r = await runCli([...args, '--data', t.dataDir])
  expect(r.code).toBe(0)
}
const status = async (key: string, path = '/api/devices/') => (await t.get(path, { key })).status
const productionIds = async (key: string) =>
  (await t.get('/api/productions/', { key })).json.map((p: { id: number }) => p.id)

test('token revoke by the CLI (another process): the next request with that key is 401, the other key goes on', async () => {
  const gone = t.makeUser('revokee')
  const kept = t.users.createKey('revokee')
  expect([await status(gone), await status(gone), await status(kept)]).toEqual([200, 200, 200])
  await cli('token', 'revoke', gone)
  expect([await status(gone), await status(kept)]).toEqual([401, 200])
})

test('a key deleted through another connection: the very next request is 401, with no turn of the event loop between', async () => {
  // data_version is read once per request and kept for the rest of the turn (db/client.ts): each
  // request must read it again, or this one would be served from the key check made before.
  const key = t.makeUser('elsewhere')
  expect(await status(key)).toBe(200)
  writeElsewhere(t, "DELETE FROM api_keys WHERE user_id = (SELECT id FROM users WHERE username = 'elsewhere')")
  expect(await status(key)).toBe(401)
})

test('user grant and user perm add/remove by the CLI: the next request sees them', async () => {
  const key = t.makeUser('granted')
  expect(await productionIds(key)).toEqual([])
  await cli('user', 'grant', 'granted', '--production', String(show.id), '--read')
  expect(await productionIds(key)).toEqual([show.id])

  const device = () => {
    const path = tempDir('reelhouse-device-')
    t.owned.push(path)
    return t.post('/api/devices/', { name: `d-${crypto.randomUUID()}`, path }, { key })
  }
  expect((await device()).status).toBe(403)
  await cli('user', 'perm', 'add', 'granted', 'browser.add_device')
  expect((await device()).status).toBe(201)
  await cli('user', 'perm', 'remove', 'granted', 'browser.add_device')
  expect((await device()).status).toBe(403)
})

test("this server's own writes to the auth tables, by any path, are seen by the next request", async () => {
  const key = t.makeUser('own')
  const id = t.db.$client.query<{ id: number }, [string]>('SELECT id FROM users WHERE username = ?').get('own')!.id
  expect(await productionIds(key)).toEqual([])
  t.users.grantById(id, show.id, 'read')
  expect(await productionIds(key)).toEqual([show.id])
  // Not through the users service: a plain statement on the same connection.
  t.db.$client.run('DELETE FROM production_access WHERE user_id = ?', [id])
  expect(await productionIds(key)).toEqual([])
  t.db.$client.run('UPDATE users SET is_superuser = 1 WHERE id = ?', [id])
  expect(await productionIds(key)).toEqual([show.id])
  expect(t.users.revokeKey(key)).toBe(true)
  expect(await status(key)).toBe(401)
})

test('a production deleted with its access rows (ON DELETE CASCADE): the principal the requests use no longer holds it', async () => {
  const key = t.makeUser('cascade')
  const gone = (await t.post('/api/productions/', { name: 'Gone', storage_root: `${root}/Gone` })).json
  t.users.grant('cascade', String(gone.id), 'read')
  expect(await productionIds(key)).toEqual([gone.id])
  t.db.$client.run('DELETE FROM productions WHERE id = ?', [gone.id])
  expect(
    t.db.$client.query('SELECT count(*) AS n FROM production_access WHERE production_id = ?').get(gone.id),
  ).toEqual({ n: 0 })
  expect(t.core.users.authenticate(key)!.readable.has(gone.id)).toBe(false)
})

test('inside a transaction nothing is cached: a codename given and rolled back is not served after a later write', () => {
  const key = t.makeUser('rolled')
  const users = t.users
  expect(users.authenticate(key)!.perms.has('browser.add_device')).toBe(false)
  expect(() =>
    t.db.$client.transaction(() => {
      users.addPerm('rolled', 'browser.add_device')
      expect(users.authenticate(key)!.perms.has('browser.add_device')).toBe(true)
      throw new Error('roll back')
    })(),
  ).toThrow('roll back')
  // One more write to the auth tables takes the counter to where it stood inside the transaction.
  users.addPerm('rolled', 'browser.add_production')
  expect([...users.authenticate(key)!.perms]).toEqual(['browser.add_production'])
})

test('a table rebuilt (its triggers dropped with it) is watched again', () => {
  const key = t.makeUser('rebuilt')
  expect(t.users.authenticate(key)?.username).toBe('rebuilt')
  const client = t.db.$client
  client.run('PRAGMA foreign_keys = OFF')
  client.transaction(() => {
    client.run('CREATE TABLE user_permissions_new AS SELECT * FROM user_permissions')
    client.run('DROP TABLE user_permissions')
    client.run('ALTER TABLE user_permissions_new RENAME TO user_permissions')
  })()
  client.run('PRAGMA foreign_keys = ON')
  expect(t.users.authenticate(key)!.perms.has('browser.add_device')).toBe(false)
  client.run(
    "INSERT INTO user_permissions (user_id, codename) SELECT id, 'browser.add_device' FROM users WHERE username = 'rebuilt'",
  )
  expect(t.users.authenticate(key)!.perms.has('browser.add_device')).toBe(true)
})
