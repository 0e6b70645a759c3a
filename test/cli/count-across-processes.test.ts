// X-Total-Count stays exact when another process writes the catalogue while serve runs: the
// count a list answers is cached per state of the catalogue (src/http/lists.ts), and that state
// must include commits by other connections (the CLI; any program with the SQLite file), not only
// the server's own writes. Each count is read twice first, so that a cached count is what a
// stale answer would come from.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { call, killAll, runCli, type Server, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

let server: Server
let data: string
let media: string
let admin: string
let production: { id: number; name: string }

beforeAll(async () => {
  data = join(tempDir('reelhouse-counts-'), 'data')
  media = tempDir('reelhouse-counts-media-')
  server = await startServe(data)
  admin = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  expect((await call(server, 'POST', '/devices/', admin, { name: 'media', path: media })).status).toBe(201)
  mkdirSync(join(media, 'show'))
  production = (await call(server, 'POST', '/productions/', admin, { name: 'Show', storage_root: join(media, 'show') }))
    .json
  for (const name of ['a', 'b'])
    expect(
      (
        await call(server, 'POST', '/videoassets/', admin, {
          name,
          path_file: join(media, 'show', `${name}.mov`),
          production: production.id,
        })
      ).status,
    ).toBe(201)
})
afterAll(() => killAll())

const countOf = async (path: string, key: string) => {
  const r = await call(server, 'GET', `${path}?limit=0`, key)
  expect(r.status).toBe(200)
  return Number(r.headers.get('x-total-count'))
}
const twice = async (path: string, key: string) => [await countOf(path, key), await countOf(path, key)]

test("a grant made by the CLI changes the reader's count on the next request", async () => {
  expect((await runCli(['user', 'add', 'reader', '--data', data])).code).toBe(0)
  const key = (await runCli(['token', 'create', 'reader', '--data', data])).stdout.trim()
  expect(await twice('/productions/', key)).toEqual([0, 0])
  expect(await twice('/videoassets/', key)).toEqual([0, 0])
  expect((await runCli(['user', 'grant', 'reader', '--production', 'Show', '--read', '--data', data])).code).toBe(0)
  expect(await countOf('/productions/', key)).toBe(1)
  expect(await countOf('/videoassets/', key)).toBe(2)
})

test('rows another program inserts into the SQLite file are counted on the next request', async () => {
  expect(await twice('/videoassets/', admin)).toEqual([2, 2])
  // Another process with the catalogue open: one insert, committed, then gone.
  const insert = `
    import { Database } from 'bun:sqlite'
    const db = new Database(${JSON.stringify(join(data, 'reelhouse.db'))})
    db.run('PRAGMA busy_timeout = 5000')
    db.run(\`INSERT INTO media_assets (kind, name, description, production, device, status_asset, path_file, is_archive,
      is_production, meta_field_store, technical, date_add, date_mod)
      VALUES ('video', 'c', '', ${production.id}, 1, 6, '/elsewhere/c.mov', 0, 1, '{}', '{}', 't', 't')\`)
    db.close()`
  const child = Bun.spawnSync([process.execPath, '-e', insert], { stdout: 'pipe', stderr: 'pipe' })
  expect({ code: child.exitCode, stderr: child.stderr.toString() }).toEqual({ code: 0, stderr: '' })
  expect(await countOf('/videoassets/', admin)).toBe(3)
  // And the server's own write right after: counted too.
  expect(
    (
      await call(server, 'POST', '/videoassets/', admin, {
        name: 'd',
        path_file: join(media, 'show', 'd.mov'),
        production: production.id,
      })
    ).status,
  ).toBe(201)
  expect(await countOf('/videoassets/', admin)).toBe(4)
})
