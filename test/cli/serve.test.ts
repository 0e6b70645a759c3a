// `reelhouse serve` as a child process (the compiled executable, `serve --port 0`), on temporary data
// folders: the first admin, loopback by default, clean stops on SIGTERM/SIGINT, persistence
// across restarts, and the other commands working beside it (service.md section 2).
import { Database } from 'bun:sqlite'
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { tempDir } from '../helpers/app.ts'
import { call, killAll, lines, runCli, type Server, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'

// Child processes on a loaded machine: more room than the default 5 s, still bounded.
setDefaultTimeout(TEST_TIMEOUT_MS)

const dirs: string[] = []
const dir = (prefix = 'reelhouse-serve-') => {
  const d = tempDir(prefix)
  dirs.push(d)
  return d
}
afterEach(() => killAll())
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const KEY_LINE = /^([0-9a-f]{40})$/m

/** Starts serve on a fresh folder and returns the server with the admin key it printed. */
async function fresh(data = dir()) {
  const server = await startServe(data)
  const key = (await server.proc.waitFor('stdout', KEY_LINE))[1]!
  return { server, key, data }
}

const refused = (url: string) =>
  fetch(url).then(
    () => false,
    () => true,
  )

test('on an empty data folder: the admin, its key printed once on stdout and kept in admin.token (0600)', async () => {
  const { server, key, data } = await fresh()
  const tokenFile = join(data, 'admin.token')
  expect(server.proc.stdout).toBe(
    `Created the superuser "admin". Its key (shown once, also in ${tokenFile}):\n${key}\n`,
  )
  expect(server.proc.stderr).not.toContain(key)
  expect(readFileSync(tokenFile, 'utf8')).toBe(`${key}\n`)
  expect(statSync(tokenFile).mode & 0o777).toBe(0o600)

  const devices = await call(server, 'GET', '/devices/', key)
  expect({ status: devices.status, json: devices.json, total: devices.headers.get('x-total-count') }).toEqual({
    status: 200,
    json: [],
    total: '0',
  })
  const anonymous = await call(server, 'GET', '/devices/', null)
  expect(anonymous.status).toBe(401)
  expect(anonymous.json.errors[0].code).toBe('not_authenticated')

  const db = new Database(join(data, 'reelhouse.db'), { readonly: true })
  try {
    expect(db.query('SELECT username, is_superuser FROM users').all()).toEqual([{ username: 'admin', is_superuser: 1 }])
  } finally {
    db.close()
  }
})

test('a later start prints no key, only where the token file is; the first key still works', async () => {
  const first = await fresh()
  expect(await first.server.proc.stop()).toBe(0)
  const tokenFile = join(first.data, 'admin.token')

  const again = await startServe(first.data)
  await again.proc.waitFor('stdout', /\n/)
  expect(again.proc.stdout).toBe(`The first admin key is in ${tokenFile}\n`)
  expect(again.proc.stdout + again.proc.stderr).not.toMatch(/[0-9a-f]{40}/)
  expect(again.proc.stderr).not.toContain('database migrated')
  expect(readFileSync(tokenFile, 'utf8')).toBe(`${first.key}\n`)
  expect((await call(again, 'GET', '/devices/', first.key)).status).toBe(200)
})

test('logs the API and docs URLs, and listens on loopback only by default', async () => {
  const { server } = await fresh()
  expect(server.host).toBe('127.0.0.1')
  const line = lines(server.proc.stderr).find((l) => l.includes(' serving '))!
  expect(line).toContain(`info reelhouse ${pkg.version} serving api=${server.base}/api/ docs=${server.base}/api/docs`)
  expect((await call(server, 'GET', '/health', null)).json).toEqual({ status: 'ok', version: pkg.version })
  expect((await fetch(`${server.base}/api/docs`)).status).toBe(200)

  const outside = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)
  if (outside) expect(await refused(`http://${outside.address}:${server.port}/api/health`)).toBe(true)
})

describe.each([['SIGTERM'], ['SIGINT']] as const)('%s', (signal) => {
  test('stops with exit code 0, closes the port, leaves the database intact; a restart has the data', async () => {
    const { server, key, data } = await fresh()
    const root = dir('reelhouse-device-')
    const created = await call(server, 'POST', '/devices/', key, { name: 'disk', path: root })
    expect(created.status).toBe(201)

    expect(await server.proc.stop(signal)).toBe(0)
    expect(server.proc.child.signalCode).toBeNull()
    const log = lines(server.proc.stderr)
    // The last lines: stopping, then (a task or a request that was finishing may log between
    // them; a request's line is written after its answer went out) stopped.
    const stopping = log.findLastIndex((l) => l.includes(`info stopping signal=${signal}`))
    expect(stopping).toBeGreaterThan(-1)
    expect(log.slice(stopping + 1, -1).filter((l) => !/ info (task (done|left to resume)|request )/.test(l))).toEqual(
      [],
    )
    expect(log.at(-1)).toMatch(/ info stopped$/)
    expect(await refused(`${server.api}/health`)).toBe(true)

    const db = new Database(join(data, 'reelhouse.db'), { readonly: true })
    try {
      expect(db.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
      expect(db.query('SELECT id, name FROM devices').all()).toEqual([{ id: created.json.id, name: 'disk' }])
    } finally {
      db.close()
    }

    const again = await startServe(data)
    const listed = await call(again, 'GET', '/devices/', key)
    expect(listed.status).toBe(200)
    expect(listed.json).toEqual([created.json])
    expect(await again.proc.stop(signal)).toBe(0)
  })
})

test('after a hard kill (SIGKILL) a restart takes over the folder and has what was committed', async () => {
  const { server, key, data } = await fresh()
  const created = await call(server, 'POST', '/devices/', key, { name: 'disk', path: dir('reelhouse-device-') })
  expect(created.status).toBe(201)
  await killAll()
  expect(server.proc.child.signalCode).toBe('SIGKILL')

  const again = await startServe(data)
  expect((await call(again, 'GET', '/devices/', key)).json).toEqual([created.json])
})

test('every command works while serve runs on the same data folder', async () => {
  const { server, key: adminKey, data } = await fresh()
  const cli = (...args: string[]) => runCli([...args, '--data', data])
  const root = dir('reelhouse-device-')
  expect((await call(server, 'POST', '/devices/', adminKey, { name: 'disk', path: root })).status).toBe(201)
  const production = await call(server, 'POST', '/productions/', adminKey, {
    name: 'Show',
    storage_root: `${root}/Show`,
  })
  expect(production.status).toBe(201)

  expect(await cli('user', 'add', 'ed', '--perm', 'browser.add_device')).toEqual({
    code: 0,
    stdout: 'user ed added\n',
    stderr: `data=${data}\n`,
  })
  const created = await cli('token', 'create', 'ed')
  expect(created).toMatchObject({ code: 0, stderr: `data=${data}\n` })
  expect(created.stdout).toMatch(/^[0-9a-f]{40}\n$/)
  const key = created.stdout.trim()

  const devices = await call(server, 'GET', '/devices/', key)
  expect(devices.status).toBe(200)
  expect(devices.json.map((d: { name: string }) => d.name)).toEqual(['disk'])
  expect((await call(server, 'GET', '/productions/', key)).json).toEqual([])

  expect((await cli('user', 'grant', 'ed', '--production', 'Show', '--read')).code).toBe(0)
  expect((await call(server, 'GET', '/productions/', key)).json.map((p: { id: number }) => p.id)).toEqual([
    production.json.id,
  ])

  expect(await cli('migrate')).toEqual({ code: 0, stdout: 'database is up to date\n', stderr: `data=${data}\n` })
  const target = join(dir('reelhouse-backup-'), 'live.db')
  expect((await cli('backup', target)).code).toBe(0)
  const copy = new Database(target, { readonly: true })
  try {
    expect(copy.query("SELECT count(*) AS n FROM users WHERE username IN ('admin', 'ed')").get()).toEqual({ n: 2 })
  } finally {
    copy.close()
  }

  expect((await cli('token', 'revoke', key)).code).toBe(0)
  expect((await call(server, 'GET', '/devices/', key)).status).toBe(401)
  // The server is untouched by all this.
  expect((await call(server, 'GET', '/devices/', adminKey)).status).toBe(200)
  expect(server.proc.exitCode).toBeNull()
})

/** The first line of every serve: the folder it was given, before anything can fail. */
const starting = (data: string) =>
  expect.stringMatching(new RegExp(`^\\S+Z info ${RegExp.escape(`reelhouse ${pkg.version} starting data=${data}`)}$`))

describe('serve that cannot start: its starting line naming the folder, one line on stderr, exit code 1', () => {
  test('a second serve on the same data folder', async () => {
    const { server, key, data } = await fresh()
    const second = await runCli(['serve', '--port', '0', '--data', data])
    expect({ code: second.code, stderr: lines(second.stderr) }).toEqual({
      code: 1,
      stderr: [starting(data), `reelhouse: another reelhouse serve (pid ${server.proc.child.pid}) is using ${data}`],
    })
    expect((await call(server, 'GET', '/devices/', key)).status).toBe(200)
  })

  test('a second serve on the same folder and port (npm start twice) is told the folder is in use, not sent to another port', async () => {
    const { server, data } = await fresh()
    const second = await runCli(['serve', '--port', String(server.port), '--data', data])
    expect({ code: second.code, stdout: second.stdout, stderr: lines(second.stderr) }).toEqual({
      code: 1,
      stdout: '',
      stderr: [starting(data), `reelhouse: another reelhouse serve (pid ${server.proc.child.pid}) is using ${data}`],
    })
  })

  test('a port already in use: said before anything is made, with a port that is free', async () => {
    const { server, key } = await fresh()
    const data = join(dir(), 'not-yet')
    const other = await runCli(['serve', '--port', String(server.port), '--data', data])
    expect({ code: other.code, stdout: other.stdout }).toEqual({ code: 1, stdout: '' })
    const advice = lines(other.stderr)
    expect(advice).toEqual([
      starting(data),
      expect.stringMatching(new RegExp(`^reelhouse: port ${server.port} is in use; try --port (\\d+)$`)),
    ])
    expect(existsSync(data)).toBe(false)
    // The port it offers is one a serve can take.
    const offered = advice[1]!.match(/--port (\d+)$/)![1]!
    const taker = await startServe(data, { args: ['--port', offered] })
    expect(taker.port).toBe(Number(offered))
    expect((await call(server, 'GET', '/devices/', key)).status).toBe(200)
  })

  test('a data folder that exists as a file', async () => {
    const file = join(dir(), 'file')
    await Bun.write(file, 'x')
    const r = await runCli(['serve', '--port', '0', '--data', file])
    expect({ code: r.code, stderr: lines(r.stderr) }).toEqual({
      code: 1,
      stderr: [starting(file), expect.stringMatching(/^reelhouse: /)],
    })
    expect(existsSync(join(file, 'reelhouse.db'))).toBe(false)
  })

  test('a catalogue that cannot be opened: the folder was named before the failure', async () => {
    const data = dir()
    // Not SQLite: opening or migrating it fails after the folder was claimed.
    await Bun.write(
      join(data, 'reelhouse.db'),
      'not a database, only text that is long enough to be read as a header '.repeat(20),
    )
    const r = await runCli(['serve', '--port', '0', '--data', data])
    expect({ code: r.code, stderr: lines(r.stderr) }).toEqual({
      code: 1,
      stderr: [starting(data), expect.stringMatching(/^reelhouse: /)],
    })
  })

  test('with --log-format json the starting line is JSON and names the folder too', async () => {
    const { data } = await fresh()
    const r = await runCli(['serve', '--port', '0', '--log-format', 'json', '--data', data])
    const [first, failure] = lines(r.stderr)
    expect({ code: r.code, first: JSON.parse(first!), failure }).toEqual({
      code: 1,
      first: { time: expect.any(String), level: 'info', msg: `reelhouse ${pkg.version} starting`, data },
      failure: expect.stringMatching(/^reelhouse: another reelhouse serve/),
    })
  })
})
