// The compiled executable against the red team's attacks on production folders, repeated as they
// were made: a user who may create productions and writes P1 only cannot put a production's roots
// in P2's folders (create or PATCH), a proxy_root never lies on P2's storage root, and a proxy_root
// swapped for a link to a folder outside every device neither serves nor loses the file named like
// the asset's proxy there. Proxies are answered with Content-Length over real HTTP.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { dbFile } from '../../src/config.ts'
import { folders } from '../helpers/envelope.ts'
import {
  call,
  compiledExecutable,
  killAll,
  runCli,
  type Server,
  startServe,
  TEST_TIMEOUT_MS,
} from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

const scratch = folders()
const dir = scratch.make
afterAll(async () => {
  await killAll()
  scratch.cleanup()
})

describe('the compiled executable keeps each production to its folders', () => {
  let binary: string
  let server: Server
  let data: string
  let admin: string
  let squatter: string
  let dev: string
  let p1: number
  let p2: number

  beforeAll(async () => {
    binary = await compiledExecutable()
    data = join(dir('reelhouse-roots-e2e-'), 'data')
    dev = dir('reelhouse-roots-dev-')
    server = await startServe(data, { cli: [binary], cwd: dir('reelhouse-roots-cwd-') })
    admin = readFileSync(join(data, 'admin.token'), 'utf8').trim()
    expect((await call(server, 'POST', '/devices/', admin, { name: 'DEV', path: dev })).status).toBe(201)
    p2 = (await call(server, 'POST', '/productions/', admin, { name: 'P2', storage_root: `${dev}/p2/` })).json.id
    p1 = (await call(server, 'POST', '/productions/', admin, { name: 'P1', storage_root: `${dev}/p1/` })).json.id
    const cli = (...args: string[]) => runCli([...args, '--data', data], { cli: [binary] })
    expect(
      (await cli('user', 'add', 'squatter', '--perm', 'browser.add_production', '--perm', 'browser.change_production'))
        .code,
    ).toBe(0)
    expect((await cli('user', 'grant', 'squatter', '--production', String(p1), '--write')).code).toBe(0)
    expect((await cli('user', 'grant', 'squatter', '--production', String(p2), '--read')).code).toBe(0)
    const token = await cli('token', 'create', 'squatter')
    expect(token.code).toBe(0)
    squatter = token.stdout.trim()
  }, 180_000)

  test("a production's roots in another production's folders: 403 for a user without write access there, 400 for a proxy_root on its storage", async () => {
    const squat = await call(server, 'POST', '/productions/', squatter, {
      name: 'Squat',
      storage_root: `${dev}/p2/footage/`,
    })
    expect({
      status: squat.status,
      detail: squat.json.errors[0].detail,
      made: existsSync(join(dev, 'p2', 'footage')),
    }).toEqual({
      status: 403,
      detail: `storage_root lies inside the folders of production ${p2}; you need write access to production ${p2}.`,
      made: false,
    })
    const own = await call(server, 'POST', '/productions/', squatter, { name: 'Empty', storage_root: `${dev}/empty/` })
    expect(own.status).toBe(201)
    for (const body of [{ storage_root: `${dev}/p2/cam/` }, { proxy_root: `${dev}/p2/proxies/` }])
      expect([body, (await call(server, 'PATCH', `/productions/${own.json.id}/`, squatter, body)).status]).toEqual([
        body,
        403,
      ])
    const hiding = await call(server, 'POST', '/productions/', admin, {
      name: 'Hiding',
      storage_root: `${dev}/hiding/`,
      proxy_root: `${dev}/p2/`,
    })
    expect({ status: hiding.status, pointer: hiding.json.errors[0].source.pointer }).toEqual({
      status: 400,
      pointer: '/proxy_root',
    })
    const nested = await call(server, 'POST', '/productions/', admin, {
      name: 'Nested',
      storage_root: `${dev}/p2/nested/`,
    })
    expect(nested.status).toBe(409)
    expect(
      (
        await call(server, 'POST', '/productions/?nest=true', admin, {
          name: 'Nested',
          storage_root: `${dev}/p2/nested/`,
        })
      ).status,
    ).toBe(201)
  })

  test('a proxy is answered with Content-Length; a proxy_root swapped for a link outside the device: 409, nothing read or removed', async () => {
    const away = dir('reelhouse-roots-away-')
    const assets: number[] = []
    for (const name of ['a', 'b']) {
      const path = join(dev, 'p1', `${name}.mov`)
      writeFileSync(path, `essence ${name}`)
      const r = await call(server, 'POST', '/videoassets/', admin, { name, path_file: path, production: p1 })
      expect(r.status).toBe(201)
      assets.push(r.json.id)
    }
    const proxyRoot = join(dev, 'p1', 'proxies')
    mkdirSync(proxyRoot, { recursive: true })
    const content = Buffer.alloc(200_000, 7)
    // What an import writes when it has made a proxy: its path on the record (set in the catalogue
    // itself here, so that the test needs no ffmpeg).
    const db = new Database(dbFile(data))
    // The server writes too (its start's tasks): wait for its transaction rather than fail at once.
    db.run('PRAGMA busy_timeout = 10000')
    for (const id of assets) {
      writeFileSync(join(proxyRoot, `${id}.mp4`), content)
      writeFileSync(join(away, `${id}.mp4`), 'THE-OUTSIDE-BYTES')
      db.run('UPDATE media_assets SET path_proxy = ? WHERE id = ?', [join(proxyRoot, `${id}.mp4`), id])
    }
    db.close()
    const proxyUrl = (id: number) => `${server.api}/videoassets/${id}/proxy/`
    const auth = { authorization: `Token ${admin}` }
    for (const range of [undefined, 'bytes=100-199']) {
      const r = await fetch(proxyUrl(assets[0]!), { headers: { ...auth, ...(range ? { range } : {}) } })
      const body = Buffer.from(await r.arrayBuffer())
      expect({
        status: r.status,
        length: r.headers.get('content-length'),
        chunked: r.headers.get('transfer-encoding'),
        size: body.length,
      }).toEqual(
        range
          ? { status: 206, length: '100', chunked: null, size: 100 }
          : { status: 200, length: '200000', chunked: null, size: 200_000 },
      )
    }

    rmSync(proxyRoot, { recursive: true })
    symlinkSync(away, proxyRoot)
    const served = await fetch(proxyUrl(assets[0]!), { headers: auth })
    const text = await served.text()
    expect({
      status: served.status,
      outside: text.includes('THE-OUTSIDE-BYTES'),
      says: text.includes('leads outside its device through a symbolic link'),
    }).toEqual({ status: 409, outside: false, says: true })
    const removed = await call(server, 'DELETE', `/videoassets/${assets[1]}/`, admin)
    expect({ status: removed.status, kept: readFileSync(join(away, `${assets[1]}.mp4`), 'utf8') }).toEqual({
      status: 409,
      kept: 'THE-OUTSIDE-BYTES',
    })
  })
})
