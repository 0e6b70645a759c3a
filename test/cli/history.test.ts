// Issue 19 point 6: every create, update and delete made on the command line writes a history row
// (system, via cli), never a password, a password hash or a key. Real `reelhouse` commands in child
// processes on one data folder; the rows read from the catalogue, and through GET /api/history/.
import { Database } from 'bun:sqlite'
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDb } from '../../src/db/client.ts'
import { createApp } from '../../src/app.ts'
import { createCore } from '../../src/core.ts'
import { silentLog } from '../../src/util/log.ts'
import { tempDir, usersOf } from '../helpers/app.ts'
import { runCli, TEST_TIMEOUT_MS } from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

const data = tempDir('reelhouse-cli-history-')
afterAll(() => rmSync(data, { recursive: true, force: true }))

type Row = {
  id: number
  user_id: number | null
  username: string | null
  via: string
  resource: string
  resource_id: number
  action: string
  changes: string
}
const rowsSince = (after: number): Row[] => {
  const db = new Database(join(data, 'reelhouse.db'), { readonly: true })
  try {
    return db.query<Row, [number]>('SELECT * FROM history WHERE id > ? ORDER BY id').all(after)
  } finally {
    db.close()
  }
}
const lastId = () => rowsSince(0).at(-1)?.id ?? 0
const cli = async (args: string[], input?: string) => {
  const r = await runCli([...args, '--data', data], input === undefined ? {} : { input })
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: `data=${data}\n` })
  return r.stdout.trim()
}
/** The rows a command wrote, as {resource, resource_id, action, changes}; all of them by system via cli. */
async function rowsOf(args: string[], input?: string) {
  const before = lastId()
  const stdout = await cli(args, input)
  const rows = rowsSince(before)
  for (const r of rows)
    expect({ user: r.username, user_id: r.user_id, via: r.via }).toEqual({ user: null, user_id: null, via: 'cli' })
  return {
    stdout,
    rows: rows.map((r) => ({
      resource: r.resource,
      resource_id: r.resource_id,
      action: r.action,
      changes: JSON.parse(r.changes),
    })),
  }
}

test('user add, token create and revoke (by key, by id, all of a user), user passwd and --clear: one row each, never a secret', async () => {
  expect((await runCli(['migrate', '--data', data])).code).toBe(0)

  const added = await rowsOf(['user', 'add', 'ana', '--perm', 'browser.change_videoasset'])
  expect(added.rows).toHaveLength(1)
  const ana = added.rows[0]!.resource_id
  expect(added.rows).toEqual([
    {
      resource: 'user',
      resource_id: ana,
      action: 'create',
      changes: {
        username: { old: null, new: 'ana' },
        is_superuser: { old: null, new: false },
        'perm.browser.change_videoasset': { old: null, new: true },
      },
    },
  ])
  const boss = (await rowsOf(['user', 'add', 'boss', '--superuser'])).rows
  expect(boss).toEqual([
    {
      resource: 'user',
      resource_id: ana + 1,
      action: 'create',
      changes: { username: { old: null, new: 'boss' }, is_superuser: { old: null, new: true } },
    },
  ])

  // A key is the user's credential: its row is an update of the user, key.<id> (token list's id).
  const made = await rowsOf(['token', 'create', 'ana'])
  const key = made.stdout
  expect(key).toMatch(/^[0-9a-f]{40}$/)
  const keyId = Number(/^key (\d+) /.exec(await cli(['token', 'list', 'ana']))![1])
  expect(made.rows).toEqual([
    { resource: 'user', resource_id: ana, action: 'update', changes: { [`key.${keyId}`]: { old: false, new: true } } },
  ])
  expect((await rowsOf(['token', 'revoke', key])).rows).toEqual([
    { resource: 'user', resource_id: ana, action: 'update', changes: { [`key.${keyId}`]: { old: true, new: false } } },
  ])
  await cli(['token', 'create', 'ana'])
  const second = Number(/^key (\d+) /.exec(await cli(['token', 'list', 'ana']))![1])
  expect((await rowsOf(['token', 'revoke', '--id', String(second)])).rows).toEqual([
    { resource: 'user', resource_id: ana, action: 'update', changes: { [`key.${second}`]: { old: true, new: false } } },
  ])
  await cli(['token', 'create', 'ana'])
  await cli(['token', 'create', 'ana'])
  const all = (await rowsOf(['token', 'revoke', '--user', 'ana'])).rows
  expect(all).toEqual([
    {
      resource: 'user',
      resource_id: ana,
      action: 'update',
      changes: { [`key.${second + 1}`]: { old: true, new: false }, [`key.${second + 2}`]: { old: true, new: false } },
    },
  ])
  // Nothing to revoke: no row.
  expect((await rowsOf(['token', 'revoke', '--user', 'ana'])).rows).toEqual([])

  // Passwords: set, changed, cleared, as masks.
  expect((await rowsOf(['user', 'passwd', 'ana'], 'first secret\n')).rows).toEqual([
    { resource: 'user', resource_id: ana, action: 'update', changes: { password: { old: null, new: '********' } } },
  ])
  expect((await rowsOf(['user', 'passwd', 'ana'], 'second secret\n')).rows).toEqual([
    {
      resource: 'user',
      resource_id: ana,
      action: 'update',
      changes: { password: { old: '********', new: '********' } },
    },
  ])
  expect((await rowsOf(['user', 'passwd', 'ana', '--clear'])).rows).toEqual([
    { resource: 'user', resource_id: ana, action: 'update', changes: { password: { old: '********', new: null } } },
  ])

  // No row anywhere holds a key, a password or a hash of either.
  const everything = JSON.stringify(rowsSince(0))
  for (const secret of [key, key.slice(0, 8), 'first secret', 'second secret', '$argon2'])
    expect(everything).not.toContain(secret)

  // Over the API: the user's own rows are theirs and a superuser's to read, newest first.
  const db = openDb(join(data, 'reelhouse.db'))
  try {
    const users = usersOf(db)
    const anaKey = users.createKey('ana')
    const app = createApp(createCore(db, { log: silentLog }))
    const get = async (k: string) =>
      (
        await app.handle(
          new Request(`http://localhost/api/history/?resource=user&id=${ana}`, {
            headers: { authorization: `Token ${k}` },
          }),
        )
      ).json() as Promise<{ action: string; via: string; user: string }[]>
    const own = await get(anaKey)
    expect(own.at(-1)).toMatchObject({ action: 'create', via: 'cli', user: 'system' })
    expect(own.length).toBeGreaterThan(8)
    users.add('carl')
    const carlKey = users.createKey('carl')
    expect(await get(carlKey)).toEqual([])
  } finally {
    db.$client.close()
  }
})
