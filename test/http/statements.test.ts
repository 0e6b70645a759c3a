// The SQLite statements a GET runs (db/client.ts readSnapshotOf, dataVersionOf, fileVersion): with
// a known key, a list's page and one record run their own statements and three more: BEGIN, one
// `PRAGMA data_version` (the key's and the count's freshness, and the read that opens the
// snapshot) and COMMIT. What the checks compare besides (this connection's writes to the auth
// tables, the catalogue's version for the kept count) is read without a statement. Counted by
// wrapping every statement of the connection before the app prepares any; bun:sqlite has no
// trace hook. The benchmark's catalogue (bench/seed.ts) and its requests (bench/lists.ts).
import { Database, type Statement } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { dbFile } from '../../src/config.ts'
import { createCore } from '../../src/core.ts'
import { type Db, openDb } from '../../src/db/client.ts'
import { silentLog } from '../../src/util/log.ts'
import { seedCatalogue } from '../../bench/seed.ts'
import { tempDir } from '../helpers/app.ts'

const RUNS = ['run', 'get', 'all', 'values', 'iterate'] as const

/** Every statement run on `client` from now on, by its SQL text (Database.run's too). */
function statementLog(client: Database) {
  const ran: string[] = []
  const wrapped = new WeakSet<Statement>()
  const wrap = (statement: Statement, sql: string) => {
    if (wrapped.has(statement)) return statement
    wrapped.add(statement)
    const s = statement as unknown as Record<string, (...args: unknown[]) => unknown>
    for (const name of RUNS) {
      const run = s[name]!.bind(statement)
      s[name] = (...args: unknown[]) => {
        ran.push(sql)
        return run(...args)
      }
    }
    return statement
  }
  const prepare = client.prepare.bind(client)
  const query = client.query.bind(client)
  const run = client.run.bind(client)
  client.prepare = ((sql: string, ...rest: unknown[]) =>
    wrap((prepare as (...a: unknown[]) => Statement)(sql, ...rest), sql)) as typeof client.prepare
  client.query = ((sql: string) => wrap(query(sql) as Statement, sql)) as typeof client.query
  client.run = ((sql: string, ...rest: unknown[]) => {
    ran.push(sql)
    return (run as (...a: unknown[]) => unknown)(sql, ...rest)
  }) as typeof client.run
  return {
    /** The statements run by `fn`, once it has settled. */
    async during(fn: () => Promise<unknown>): Promise<string[]> {
      const from = ran.length
      await fn()
      return ran.slice(from)
    },
  }
}

let dir: string
let db: Db
let key: string
let log: ReturnType<typeof statementLog>
let handle: (request: Request) => Promise<Response>

beforeAll(() => {
  dir = tempDir()
  key = seedCatalogue(dir, 100)
  db = openDb(dbFile(dir))
  log = statementLog(db.$client)
  const app = createApp(createCore(db, { log: silentLog, concurrency: 1 }), { quiet: true })
  handle = (request) => app.handle(request)
})
afterAll(() => {
  db.$client.close()
  rmSync(dir, { recursive: true, force: true })
})

const get = (path: string, k = key) =>
  handle(new Request(`http://localhost${path}`, { headers: { authorization: `Token ${k}` } })).then(async (r) => ({
    status: r.status,
    total: r.headers.get('x-total-count'),
    body: await r.text(),
  }))

const PAGE = expect.stringMatching(/^select "id", .* from "media_assets" where .* limit \+\? offset \?$/)

test('a first page and one record with a known key: BEGIN, data_version, their own statement, COMMIT', async () => {
  // The first requests make the key's principal and the count, kept for the next ones.
  for (const path of ['/api/videoassets/?limit=1', '/api/videoassets/?limit=50', '/api/videoassets/42/'])
    expect((await get(path)).status).toBe(200)
  const seen = {
    limit1: await log.during(() => get('/api/videoassets/?limit=1&offset=0')),
    limit50: await log.during(() => get('/api/videoassets/?limit=50&offset=0')),
    record: (await log.during(() => get('/api/videoassets/42/'))).length,
  }
  expect(seen).toEqual({
    limit1: ['BEGIN', 'PRAGMA data_version', PAGE, 'COMMIT'],
    limit50: ['BEGIN', 'PRAGMA data_version', PAGE, 'COMMIT'],
    record: 4,
  })
})

test('a commit of another connection: the next page counts again and checks the key again, in the same snapshot', async () => {
  expect((await get('/api/videoassets/?limit=1')).total).toBe('100')
  // Another connection, as a CLI command in another process.
  const other = new Database(dbFile(dir))
  other.run("UPDATE media_assets SET description = 'elsewhere' WHERE id = 1")
  other.close()
  const after = await log.during(async () => expect((await get('/api/videoassets/?limit=1')).total).toBe('100'))
  expect(after).toEqual([
    'BEGIN',
    'PRAGMA data_version',
    expect.stringMatching(/ from "api_keys" inner join "users" .* where "api_keys"."key_hash" = \?$/),
    expect.stringMatching(/^select count\(\*\) from "media_assets"/),
    PAGE,
    'COMMIT',
  ])
})
