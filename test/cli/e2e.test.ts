// The end-to-end test of the compiled executable: build dist/reelhouse, copy it into a folder
// of its own (compiledExecutable), and run it from yet another folder with an empty data folder. It boots on a free
// port, a user and key are made with its command line, and /api/devices/ answers with that key.
// Nothing of the repository (node_modules, drizzle/, swagger-ui-dist) is reachable from there.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { brotliDecompressSync } from 'node:zlib'
import pkg from '../../package.json' with { type: 'json' }
import { tempDir } from '../helpers/app.ts'
import {
  call,
  compiledExecutable,
  killAll,
  lines,
  runCli,
  type Server,
  startServe,
  TEST_TIMEOUT_MS,
  versionPattern,
} from '../helpers/process.ts'
import { ownNice, threadsOf } from '../helpers/threads.ts'
import { waitFor } from '../helpers/wait.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

const dirs: string[] = []
const dir = (prefix = 'reelhouse-e2e-') => {
  const d = tempDir(prefix)
  dirs.push(d)
  return d
}
let binary: string
let cwd: string
const exe = (args: string[], env: Record<string, string> = {}) => runCli(args, { cli: [binary], cwd, env })

beforeAll(async () => {
  binary = await compiledExecutable()
  expect(statSync(binary).mode & 0o111).not.toBe(0)
  cwd = dir('reelhouse-cwd-')
}, 120_000)

afterAll(async () => {
  await killAll()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

test('the executable answers --version (with the commit it was built from) and --help, and a wrong command with one line and exit code 2', async () => {
  expect(await exe(['--version'])).toEqual({
    code: 0,
    stdout: expect.stringMatching(versionPattern({ path: binary })),
    stderr: '',
  })
  // The commit is built in: no git program where it runs changes nothing.
  expect((await exe(['--version'], { PATH: '/nonexistent' })).stdout).not.toContain('unknown')
  const help = await exe(['--help'])
  expect(help.code).toBe(0)
  expect(help.stdout).toContain('reelhouse token create NAME')
  const wrong = await exe(['frobnicate', '--data', dir()])
  expect(wrong.code).toBe(2)
  expect(lines(wrong.stderr)).toEqual([expect.stringMatching(/^reelhouse: .*frobnicate/)])
})

test("a subcommand's --help, the codenames in user --help, and our own words for a parse error", async () => {
  const add = await exe(['user', 'add', '--help'])
  expect({ code: add.code, stderr: add.stderr }).toEqual({ code: 0, stderr: '' })
  expect(add.stdout).toStartWith('Usage: reelhouse [--data DIR] user add NAME')
  expect((await exe(['user', '--help'])).stdout).toContain('browser.copy_projectasset')
  const foo = await exe(['user', 'add', 'ana', '--foo'])
  expect({ code: foo.code, stderr: foo.stderr }).toEqual({
    code: 2,
    stderr: 'reelhouse: unknown option --foo for user add; see reelhouse user add --help\n',
  })
})

test('a command other than serve and migrate refuses a folder without a catalogue, and makes nothing', async () => {
  const top = dir()
  const missing = join(top, 'data')
  const r = await exe(['--data', missing, 'user', 'add', 'ana'])
  expect({ code: r.code, stdout: r.stdout, stderr: lines(r.stderr) }).toEqual({
    code: 1,
    stdout: '',
    stderr: [
      `data=${missing}`,
      `reelhouse: no catalogue in ${missing}; pass --data DIR (serve prints its data= folder)`,
    ],
  })
  expect(readdirSync(top)).toEqual([])
})

test("the systemd unit's ExecStart flags are ones the executable's serve --help documents", async () => {
  const unit = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'reelhouse.service'), 'utf8')
  const flags = [...unit.match(/^ExecStart=(.*)$/m)![1]!.matchAll(/(?<=\s)--[a-z-]+/g)].map((m) => m[0])
  expect(flags.length).toBeGreaterThan(2)
  const help = (await exe(['serve', '--help'])).stdout
  for (const flag of flags) expect(help).toMatch(new RegExp(`^  ${flag} `, 'm'))
})

describe('booted on a free port with an empty data folder', () => {
  let server: Server
  let data: string
  let adminKey: string

  beforeAll(async () => {
    data = join(dir('reelhouse-e2e-data-'), 'data')
    server = await startServe(data, { cli: [binary], cwd })
    adminKey = (await server.proc.waitFor('stdout', /^([0-9a-f]{40})$/m))[1]!
  })
  afterAll(async () => {
    if (server.proc.exitCode === null) expect(await server.proc.stop('SIGTERM')).toBe(0)
  })

  test('a user and key made with the CLI read /api/devices/', async () => {
    expect(readFileSync(join(data, 'admin.token'), 'utf8')).toBe(`${adminKey}\n`)
    expect(await exe(['user', 'add', 'editor', '--data', data])).toEqual({
      code: 0,
      stdout: 'user editor added\n',
      stderr: `data=${data}\n`,
    })
    const token = await exe(['token', 'create', 'editor', '--data', data])
    expect(token).toMatchObject({ code: 0, stderr: `data=${data}\n` })
    expect(token.stdout).toMatch(/^[0-9a-f]{40}\n$/)

    const devices = await call(server, 'GET', '/devices/', token.stdout.trim())
    expect({ status: devices.status, total: devices.headers.get('x-total-count'), json: devices.json }).toEqual({
      status: 200,
      total: '0',
      json: [],
    })
    expect((await call(server, 'GET', '/devices/', 'f'.repeat(40))).status).toBe(401)
  })

  test('user passwd reads the password from stdin, and it logs in over HTTP Basic', async () => {
    expect(await exe(['user', 'add', 'ana', '--data', data])).toMatchObject({ code: 0 })
    const set = await runCli(['user', 'passwd', 'ana', '--data', data], { cli: [binary], cwd, input: 'pass word: 1\n' })
    expect(set).toEqual({ code: 0, stdout: 'password of ana set\n', stderr: `data=${data}\n` })
    const login = (password: string) =>
      fetch(`${server.api}/devices/`, {
        headers: { authorization: `Basic ${Buffer.from(`ana:${password}`).toString('base64')}` },
      })
    expect((await login('pass word: 1')).status).toBe(200)
    expect((await login('pass word: 2')).status).toBe(401)
  })

  test('the migrations are embedded: the catalogue was made from nothing, and migrate finds it up to date', async () => {
    expect(server.proc.stderr).toMatch(/ info database migrated migrations=\d+/)
    expect(await exe(['migrate', '--data', data])).toEqual({
      code: 0,
      stdout: 'database is up to date\n',
      stderr: `data=${data}\n`,
    })
  })

  test('GET /api/health, answered with an X-Request-Id that its log line names', async () => {
    const health = await call(server, 'GET', '/health', null)
    expect({ status: health.status, json: health.json }).toEqual({
      status: 200,
      json: { status: 'ok', version: pkg.version },
    })
    const id = health.headers.get('x-request-id')!
    expect(id).toMatch(/^[0-9a-f]{16}$/)
    await server.proc.waitFor(
      'stderr',
      new RegExp(` info request method=GET path=/api/health status=200 ms=[\\d.]+ user=- request_id=${id}$`, 'm'),
    )
  })

  test('a second serve on its port says so before it makes anything', async () => {
    const other = join(dir(), 'other')
    const r = await exe(['serve', '--port', String(server.port), '--data', other])
    expect({ code: r.code, stderr: lines(r.stderr) }).toEqual({
      code: 1,
      stderr: [
        expect.stringMatching(/ info reelhouse \S+ starting data=/),
        expect.stringMatching(new RegExp(`^reelhouse: port ${server.port} is in use; try --port \\d+$`)),
      ],
    })
    expect(existsSync(other)).toBe(false)
  })

  test('the docs work offline: the page, its bundled assets and the OpenAPI document', async () => {
    const page = await fetch(`${server.api}/docs`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    const html = await page.text()
    expect(html).toContain('swagger-ui-bundle.js')
    expect(html).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs)\b|jsdelivr/)

    const bundle = await fetch(`${server.api}/docs/assets/swagger-ui-bundle.js`, { headers: { 'accept-encoding': '' } })
    expect(bundle.status).toBe(200)
    expect(bundle.headers.get('content-type')).toContain('javascript')
    const plain = await bundle.text()
    expect(plain.length).toBeGreaterThan(100_000)
    // Compressed from the bundle embedded in the executable (src/http/docs.ts), as sent on the wire.
    for (const coding of ['br', 'gzip']) {
      const sent = await fetch(`${server.api}/docs/assets/swagger-ui-bundle.js`, {
        headers: { 'accept-encoding': coding },
        decompress: false,
      })
      const body = new Uint8Array(await sent.arrayBuffer())
      expect([
        sent.headers.get('content-encoding'),
        sent.headers.get('vary'),
        sent.headers.get('content-length'),
      ]).toEqual([coding, 'Accept-Encoding', String(body.length)])
      const decoded = coding === 'br' ? brotliDecompressSync(body) : Buffer.from(Bun.gunzipSync(body))
      expect(decoded.toString('utf8') === plain).toBe(true)
    }

    const json = await call(server, 'GET', '/docs/json', null)
    expect(json.status).toBe(200)
    expect(json.json.openapi).toStartWith('3.1')
  })

  test('its checkpoint thread (an entrypoint of its own in the executable) copies the WAL into the catalogue while it serves', async () => {
    // The migrations' pages are far fewer than the server's own checkpoint threshold: only the
    // thread copies them into the catalogue file before the server stops.
    await waitFor(() => statSync(join(data, 'reelhouse.db')).size > 4096, 'the catalogue file to hold the migrations', {
      ms: 10_000,
      everyMs: 20,
    })
    expect(server.proc.stderr).not.toContain('checkpoint thread failed')
  })

  test.skipIf(process.platform !== 'linux')(
    "its helper threads (the checkpointer's, the watcher's) run at nice 10, the thread that answers requests at the process's own priority (Linux)",
    async () => {
      // A device starts the watcher's thread.
      const share = dir('reelhouse-e2e-share-')
      expect((await call(server, 'POST', '/devices/', adminKey, { name: 'share', path: `${share}/` })).status).toBe(201)
      const pid = server.proc.child.pid
      // The server starts at this process's priority (a suite run under `nice` included); helpers go to 10, never up.
      const own = ownNice()
      const helper = Math.max(own, 10)
      // A new thread runs at the process's priority until its first lines lower it.
      const helpers = () =>
        threadsOf(pid)
          .filter((t) => t.name === 'Worker')
          .map((t) => t.nice)
      await waitFor(() => helpers().join() === `${helper},${helper}`, 'both helper threads at nice 10', {
        ms: 10_000,
        everyMs: 20,
      })
      expect(helpers()).toEqual([helper, helper])
      expect(threadsOf(pid).find((t) => t.tid === pid)!.nice).toBe(own)
    },
  )

  test('SIGTERM stops it with exit code 0, leaving the catalogue whole in one file', async () => {
    expect(await server.proc.stop('SIGTERM')).toBe(0)
    expect(lines(server.proc.stderr).at(-1)).toMatch(/ info stopped$/)
    // Every line it wrote is one of ours: nothing from a library (Elysia's analysis of a hook
    // printed a multi-line warning on the first request of the compiled binary once).
    expect(lines(server.proc.stderr).filter((l) => !/^\d{4}-\d\d-\d\dT\S+Z (info|warn) /.test(l))).toEqual([])
    expect(lines(server.proc.stdout).filter((l) => !/^(Created the superuser "admin"|[0-9a-f]{40}$)/.test(l))).toEqual(
      [],
    )
    expect(
      readdirSync(data)
        .filter((name) => name.startsWith('reelhouse.db'))
        .sort(),
    ).toEqual(['reelhouse.db'])
  })
})

test('bunfig.toml and .env in the working folder are not loaded', async () => {
  const here = dir('reelhouse-hostile-cwd-')
  const marker = join(here, 'preloaded')
  writeFileSync(join(here, 'preload.ts'), `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x')\n`)
  writeFileSync(join(here, 'bunfig.toml'), 'preload = ["./preload.ts"]\n')
  writeFileSync(join(here, '.env'), `REELHOUSE_DATA=${join(here, 'from-dotenv')}\n`)
  const xdg = dir('reelhouse-xdg-')

  const r = await runCli(['migrate'], { cli: [binary], cwd: here, env: { XDG_DATA_HOME: xdg } })
  expect(r.code).toBe(0)
  expect(r.stdout).toStartWith('applied ')
  expect(existsSync(join(xdg, 'reelhouse', 'reelhouse.db'))).toBe(true)
  expect(existsSync(join(here, 'from-dotenv'))).toBe(false)
  expect(existsSync(marker)).toBe(false)
})
