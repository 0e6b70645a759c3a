// The commands other than serve, on temporary data folders (service.md section 2), run through
// the command line's own entry in this process; a few also as `bun src/main.ts ...` in a child
// process, for its real exit code and streams. Where a command's effect shows over HTTP, a real
// `serve` runs in a child process on the same data folder and the effect is checked through it.
import { Database } from 'bun:sqlite'
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { tempDir } from '../helpers/app.ts'
import {
  call,
  gitHead,
  killAll,
  lines,
  ROOT,
  runCli,
  type RunOptions,
  runInProcess,
  type Server,
  SOURCE_CLI,
  startServe,
  TEST_TIMEOUT_MS,
  versionPattern,
} from '../helpers/process.ts'

// Child processes on a loaded machine: more room than the default 5 s, still bounded.
setDefaultTimeout(TEST_TIMEOUT_MS)

const dirs: string[] = []
const dir = (prefix = 'reelhouse-cli-') => {
  const d = tempDir(prefix)
  dirs.push(d)
  return d
}
afterAll(async () => {
  await killAll()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** One line on stderr, the program's own, and no trace of a stack. */
function expectOneLine(stderr: string) {
  expect(lines(stderr)).toHaveLength(1)
  expect(stderr).toStartWith('reelhouse: ')
  expect(stderr).not.toMatch(/^\s+at |Error:|\.ts:\d+|\.js:\d+/m)
}

/** A command that got as far as its data folder: the data= line, then the one line of its failure. */
function expectFailureIn(data: string, stderr: string) {
  expect(lines(stderr)).toEqual([`data=${data}`, expect.stringMatching(/^reelhouse: /)])
  expect(stderr).not.toMatch(/^\s+at |Error:|\.ts:\d+|\.js:\d+/m)
}

/** What a command that worked says on stderr: only the folder it used. */
const said = (data: string) => `data=${data}\n`

/** A data folder with a catalogue, as serve or migrate leave it. */
async function catalogue(data = dir()) {
  expect((await runInProcess(['migrate', '--data', data])).code).toBe(0)
  return data
}

const sqlite = (file: string) => new Database(file, { readonly: true })
const migrationCount = (
  JSON.parse(readFileSync(join(ROOT, 'drizzle/meta/_journal.json'), 'utf8')) as { entries: unknown[] }
).entries.length

/**
 * The two ways a test runs a command: the command line's own entry in this process, and the
 * process `bun src/main.ts` (a few cases: the wrapper around the entry, its real exit code).
 */
const WAY = {
  'in this process': runInProcess,
  'bun src/main.ts': (args: string[], options?: RunOptions) => runCli(args, { ...options, cli: SOURCE_CLI }),
} as const
type Way = keyof typeof WAY

describe.concurrent('--version and --help', () => {
  test.each<[string, Way]>([
    ['--version', 'in this process'],
    ['-v', 'in this process'],
    ['--version', 'bun src/main.ts'],
  ])('%s prints the package version and the commit HEAD is at (%s)', async (flag, way) => {
    const since = gitHead()
    expect(since).toMatch(/^[0-9a-f]{12}$/)
    expect(await WAY[way]([flag])).toEqual({
      code: 0,
      stdout: expect.stringMatching(versionPattern({ since })),
      stderr: '',
    })
  })

  test('--version without a git program says the commit is unknown', async () => {
    expect(await runInProcess(['--version'], { env: { PATH: '/nonexistent' } })).toEqual({
      code: 0,
      stdout: `reelhouse ${pkg.version} (commit unknown)\n`,
      stderr: '',
    })
  })

  test.each([[['--help']], [['-h']], [['help']], [[]]])('%j prints the usage', async (args) => {
    const r = await runInProcess(args)
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(r.stdout).toStartWith(`reelhouse ${pkg.version}`)
    for (const usage of [
      'reelhouse serve',
      'reelhouse user add NAME',
      'reelhouse user grant NAME --production NAME_OR_ID',
      'reelhouse token create NAME',
      'reelhouse token revoke KEY',
      'reelhouse migrate',
      'reelhouse backup FILE',
      '--data DIR',
    ])
      expect(r.stdout).toContain(usage)
  })
})

describe.concurrent('a wrong command, flag or value: one line on stderr, exit code 2', () => {
  const key = 'a'.repeat(40)
  const wrong: string[][][] = [
    [['frobnicate']],
    [['serve', '--frobnicate']],
    [['serve', '--port', 'abc']],
    [['serve', '--port', '65536']],
    [['serve', '--port', '-1']],
    [['serve', '--port']],
    [['serve', '--poll-interval', '0']],
    [['serve', 'extra']],
    [['user']],
    [['user', 'remove', 'bob']],
    [['user', 'add']],
    [['user', 'add', 'bob', 'carol']],
    [['user', 'add', 'bob', '--perm', 'NotACodename']],
    [['user', 'add', 'bob', '--superuser=yes']],
    [['user', 'grant', 'bob', '--production', 'Show']],
    [['user', 'grant', 'bob', '--production', 'Show', '--read', '--write']],
    [['user', 'grant', 'bob', '--read']],
    [['token']],
    [['token', 'list']],
    [['token', 'create']],
    [['token', 'create', 'bob', '--superuser']],
    [['token', 'revoke']],
    [['token', 'revoke', key, '--user', 'bob']],
    [['token', 'revoke', key, key]],
    [['token', 'revoke', 'not-a-key']],
    [['migrate', 'now']],
    [['backup']],
    [['backup', 'a.db', 'b.db']],
  ]
  // As a process too: a mistake of the parser and one of serve's values.
  const alsoAsProcess = new Set(['frobnicate', 'serve --port abc'])
  test.each<[string[], Way]>([
    ...wrong.map(([args]): [string[], Way] => [args!, 'in this process']),
    ...wrong
      .filter(([args]) => alsoAsProcess.has(args!.join(' ')))
      .map(([args]): [string[], Way] => [args!, 'bun src/main.ts']),
  ])('%j (%s)', async (args, way) => {
    const data = dir()
    const r = await WAY[way]([...args, '--data', data])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expectOneLine(r.stderr)
  })

  test('the line names what was wrong', async () => {
    const data = dir()
    expect((await runInProcess(['frobnicate', '--data', data])).stderr).toContain('frobnicate')
    expect((await runInProcess(['serve', '--port', 'abc', '--data', data])).stderr).toContain('--port')
    expect((await runInProcess(['serve', '--frobnicate', '--data', data])).stderr).toContain('--frobnicate')
    expect(
      (await runInProcess(['user', 'grant', 'bob', '--production', 'Show', '--read', '--write', '--data', data]))
        .stderr,
    ).toContain('--read')
  })
})

describe.concurrent('a command that cannot do its work: one line on stderr, exit code 1', () => {
  test.each<[Way]>([['in this process'], ['bun src/main.ts']])('token create for an unknown user (%s)', async (way) => {
    const data = await catalogue()
    const r = await WAY[way](['token', 'create', 'nobody', '--data', data])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expectFailureIn(data, r.stderr)
    expect(r.stderr).toContain('nobody')
  })

  test.each([
    [['user', 'grant', 'nobody', '--production', '1', '--read']],
    [['user', 'grant', 'admin', '--production', 'No such show', '--write']],
    [['user', 'grant', 'admin', '--production', '999', '--read']],
    [['token', 'revoke', '--user', 'nobody']],
    [['token', 'revoke', 'b'.repeat(40)]],
    [['user', 'add', 'bad name']],
  ])('%j', async (args) => {
    const data = await catalogue()
    expect((await runInProcess(['user', 'add', 'admin', '--superuser', '--data', data])).code).toBe(0)
    const r = await runInProcess([...args, '--data', data])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expectFailureIn(data, r.stderr)
  })

  test('a data folder that is a file', async () => {
    const file = join(dir(), 'not-a-folder')
    writeFileSync(file, 'x')
    for (const args of [['migrate'], ['user', 'add', 'bob'], ['token', 'create', 'bob']]) {
      const r = await runInProcess([...args, '--data', file])
      expect(r.code).toBe(1)
      expectFailureIn(file, r.stderr)
    }
  })
})

describe('user add', () => {
  test('adds users, with --superuser and --perm, and refuses a duplicate', async () => {
    const data = await catalogue()
    expect(await runInProcess(['user', 'add', 'boss', '--superuser', '--data', data])).toEqual({
      code: 0,
      stdout: 'user boss added (superuser)\n',
      stderr: said(data),
    })
    expect(
      await runInProcess([
        'user',
        'add',
        'editor',
        '--perm',
        'browser.add_device',
        '--perm',
        'browser.add_production',
        '--data',
        data,
      ]),
    ).toEqual({ code: 0, stdout: 'user editor added\n', stderr: said(data) })
    expect(await runInProcess(['user', 'add', 'viewer', '--data', data])).toEqual({
      code: 0,
      stdout: 'user viewer added\n',
      stderr: said(data),
    })

    const dup = await runInProcess(['user', 'add', 'editor', '--superuser', '--data', data])
    expect(dup.code).toBe(1)
    expect(dup.stdout).toBe('')
    expectFailureIn(data, dup.stderr)
    expect(dup.stderr).toContain('already exists')

    const db = sqlite(join(data, 'reelhouse.db'))
    try {
      expect(db.query('SELECT username, is_superuser FROM users ORDER BY id').all()).toEqual([
        { username: 'boss', is_superuser: 1 },
        { username: 'editor', is_superuser: 0 },
        { username: 'viewer', is_superuser: 0 },
      ])
      expect(
        db
          .query(
            'SELECT u.username, p.codename FROM user_permissions p JOIN users u ON u.id = p.user_id ORDER BY p.codename',
          )
          .all(),
      ).toEqual([
        { username: 'editor', codename: 'browser.add_device' },
        { username: 'editor', codename: 'browser.add_production' },
      ])
    } finally {
      db.close()
    }
  })
})

describe('token create', () => {
  test('prints one 40-hex key alone on stdout, stored only as its hash', async () => {
    const data = await catalogue()
    await runInProcess(['user', 'add', 'bob', '--data', data])
    const first = await runInProcess(['token', 'create', 'bob', '--data', data])
    const second = await runInProcess(['token', 'create', 'bob', '--data', data])
    for (const r of [first, second]) {
      expect(r.code).toBe(0)
      expect(r.stderr).toBe(said(data))
      expect(r.stdout).toMatch(/^[0-9a-f]{40}\n$/)
    }
    expect(first.stdout).not.toBe(second.stdout)
    const keys = [first.stdout.trim(), second.stdout.trim()]

    const db = sqlite(join(data, 'reelhouse.db'))
    try {
      const hashes = db
        .query<{ key_hash: string }, []>('SELECT key_hash FROM api_keys ORDER BY id')
        .all()
        .map((r) => r.key_hash)
      expect(hashes).toEqual(keys.map((k) => createHash('sha256').update(k).digest('hex')))
    } finally {
      db.close()
    }
    const bytes = Buffer.concat(
      ['reelhouse.db', 'reelhouse.db-wal']
        .filter((f) => existsSync(join(data, f)))
        .map((f) => readFileSync(join(data, f))),
    )
    for (const k of keys) expect(bytes.includes(k)).toBe(false)
  })
})

describe('migrate', () => {
  test('applies the embedded migrations, then says the database is up to date', async () => {
    const data = dir()
    expect(await runInProcess(['migrate', '--data', data])).toEqual({
      code: 0,
      stdout: `applied ${migrationCount} migration(s)\n`,
      stderr: said(data),
    })
    expect(await runInProcess(['migrate', '--data', data])).toEqual({
      code: 0,
      stdout: 'database is up to date\n',
      stderr: said(data),
    })
    const db = sqlite(join(data, 'reelhouse.db'))
    try {
      expect(db.query('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
      expect(db.query('SELECT count(*) AS n FROM __drizzle_migrations').get()).toEqual({ n: migrationCount })
    } finally {
      db.close()
    }
  })
})

describe('while serve runs on the same data folder', () => {
  let data: string
  let server: Server
  let adminKey: string
  let production: { id: number; name: string }
  let root: string

  beforeAll(async () => {
    data = dir()
    server = await startServe(data)
    adminKey = (await server.proc.waitFor('stdout', /^([0-9a-f]{40})$/m))[1]!
    root = dir('reelhouse-device-')
    const device = await call(server, 'POST', '/devices/', adminKey, { name: 'disk', path: root })
    expect(device.status).toBe(201)
    const created = await call(server, 'POST', '/productions/', adminKey, {
      name: 'Show',
      storage_root: `${root}/Show`,
    })
    expect(created.status).toBe(201)
    production = created.json
  })
  afterAll(async () => {
    expect(await server.proc.stop('SIGTERM')).toBe(0)
  })

  const cli = (...args: string[]) => runInProcess([...args, '--data', data])
  const newKey = async (user: string) => {
    const r = await cli('token', 'create', user)
    expect(r).toMatchObject({ code: 0, stderr: said(data) })
    return r.stdout.trim()
  }

  test('user add and token create: the new key works on the running server at once', async () => {
    expect((await cli('user', 'add', 'alice')).code).toBe(0)
    const key = await newKey('alice')
    expect(key).toMatch(/^[0-9a-f]{40}$/)
    const devices = await call(server, 'GET', '/devices/', key)
    expect(devices.status).toBe(200)
    expect(devices.json).toHaveLength(1)
  })

  test('--perm gives the codename; --superuser gives everything; a plain user neither', async () => {
    await cli('user', 'add', 'adder', '--perm', 'browser.add_device')
    await cli('user', 'add', 'plain')
    await cli('user', 'add', 'chief', '--superuser')
    const [adder, plain, chief] = [await newKey('adder'), await newKey('plain'), await newKey('chief')]
    const deviceRoot = (name: string) => {
      const d = join(dir('reelhouse-device-'), name)
      return d
    }
    expect((await call(server, 'POST', '/devices/', plain, { name: 'by-plain', path: deviceRoot('p') })).status).toBe(
      403,
    )
    expect((await call(server, 'POST', '/devices/', adder, { name: 'by-adder', path: deviceRoot('a') })).status).toBe(
      201,
    )
    expect(
      (await call(server, 'POST', '/productions/', adder, { name: 'Adder show', storage_root: `${root}/Adder` }))
        .status,
    ).toBe(403)
    expect(
      (await call(server, 'POST', '/productions/', chief, { name: 'Chief show', storage_root: `${root}/Chief` }))
        .status,
    ).toBe(201)
  })

  test('user grant --read, then --write, by production name or id', async () => {
    await cli('user', 'add', 'reader')
    const key = await newKey('reader')
    const asset = { name: 'clip', path_file: `${root}/Show/clip.mov`, production: production.id }
    expect((await call(server, 'GET', '/productions/', key)).json).toEqual([])
    expect((await call(server, 'GET', `/productions/${production.id}/`, key)).status).toBe(404)

    expect(await cli('user', 'grant', 'reader', '--production', 'Show', '--read')).toEqual({
      code: 0,
      stdout: `reader may now read production Show (id ${production.id})\n`,
      stderr: said(data),
    })
    const readable = await call(server, 'GET', '/productions/', key)
    expect(readable.json.map((p: { id: number }) => p.id)).toEqual([production.id])
    expect((await call(server, 'POST', '/videoassets/', key, asset)).status).toBe(403)

    expect(await cli('user', 'grant', 'reader', '--production', String(production.id), '--write')).toEqual({
      code: 0,
      stdout: `reader may now write production Show (id ${production.id})\n`,
      stderr: said(data),
    })
    expect((await call(server, 'POST', '/videoassets/', key, asset)).status).toBe(201)
  })

  test('token revoke KEY: that key fails with 401 on the next request, the others go on', async () => {
    await cli('user', 'add', 'revokee')
    const [gone, kept] = [await newKey('revokee'), await newKey('revokee')]
    expect((await call(server, 'GET', '/devices/', gone)).status).toBe(200)
    expect(await cli('token', 'revoke', gone)).toEqual({ code: 0, stdout: 'key revoked\n', stderr: said(data) })
    const denied = await call(server, 'GET', '/devices/', gone)
    expect(denied.status).toBe(401)
    expect(denied.json.errors[0].code).toBe('authentication_failed')
    expect((await call(server, 'GET', '/devices/', kept)).status).toBe(200)

    const again = await cli('token', 'revoke', gone)
    expect(again.code).toBe(1)
    expectFailureIn(data, again.stderr)
  })

  test('token revoke --id N (the id token list shows): that key fails with 401 on the next request, the others go on', async () => {
    await cli('user', 'add', 'listed')
    const [gone, kept] = [await newKey('listed'), await newKey('listed')]
    // The line of token list whose first characters are the key's: no need to paste the key.
    const line = lines((await cli('token', 'list', 'listed')).stdout).find((l) => l.endsWith(`${gone.slice(0, 8)}…`))!
    const id = line.match(/^key (\d+) /)![1]!
    expect(await cli('token', 'revoke', '--id', id)).toEqual({
      code: 0,
      stdout: `key ${id} of listed revoked\n`,
      stderr: said(data),
    })
    expect((await call(server, 'GET', '/devices/', gone)).status).toBe(401)
    expect((await call(server, 'GET', '/devices/', kept)).status).toBe(200)
  })

  test("token revoke --user NAME: all of that user's keys fail, other users' keys work", async () => {
    await cli('user', 'add', 'leaver')
    const keys = [await newKey('leaver'), await newKey('leaver')]
    for (const k of keys) expect((await call(server, 'GET', '/devices/', k)).status).toBe(200)
    expect(await cli('token', 'revoke', '--user', 'leaver')).toEqual({
      code: 0,
      stdout: 'revoked 2 key(s) of leaver\n',
      stderr: said(data),
    })
    for (const k of keys) expect((await call(server, 'GET', '/devices/', k)).status).toBe(401)
    expect((await call(server, 'GET', '/devices/', adminKey)).status).toBe(200)
    expect(await cli('token', 'revoke', '--user', 'leaver')).toEqual({
      code: 0,
      stdout: 'revoked 0 key(s) of leaver\n',
      stderr: said(data),
    })
  })

  test('migrate says the database is up to date', async () => {
    expect(await cli('migrate')).toEqual({ code: 0, stdout: 'database is up to date\n', stderr: said(data) })
  })

  test('backup FILE writes a valid SQLite copy with the data, and never overwrites', async () => {
    const target = join(dir('reelhouse-backup-'), 'copy.db')
    // Writes going on while the copy is taken must not break it.
    const writes = Array.from({ length: 20 }, (_, i) =>
      call(server, 'POST', '/devices/', adminKey, { name: `busy-${i}`, path: join(root, `busy-${i}`) }),
    )
    const r = await cli('backup', target)
    expect(r).toEqual({ code: 0, stdout: `backup written to ${target}\n`, stderr: said(data) })
    for (const w of await Promise.all(writes)) expect(w.status).toBe(201)

    const copy = sqlite(target)
    try {
      expect(copy.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
      expect(copy.query('SELECT name FROM productions WHERE id = ?').get(production.id)).toEqual({ name: 'Show' })
      expect(copy.query<{ n: number }, []>("SELECT count(*) AS n FROM users WHERE username = 'admin'").get()!.n).toBe(1)
      expect(copy.query<{ n: number }, []>("SELECT count(*) AS n FROM devices WHERE name = 'disk'").get()!.n).toBe(1)
    } finally {
      copy.close()
    }
    // A copy made in one snapshot: no WAL beside it is needed to read it.
    expect(existsSync(`${target}-wal`)).toBe(false)

    const before = { size: statSync(target).size, mtimeMs: statSync(target).mtimeMs, bytes: readFileSync(target) }
    const refused = await cli('backup', target)
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expectFailureIn(data, refused.stderr)
    expect(refused.stderr).toContain('already exists')
    expect(readFileSync(target).equals(before.bytes)).toBe(true)
    expect(statSync(target).mtimeMs).toBe(before.mtimeMs)
  })

  test('backup FILE with a relative path writes it in the working folder', async () => {
    const cwd = dir('reelhouse-cwd-')
    const r = await runInProcess(['backup', 'relative.db', '--data', data], { cwd })
    expect(r).toEqual({ code: 0, stdout: `backup written to ${join(cwd, 'relative.db')}\n`, stderr: said(data) })
    expect(statSync(join(cwd, 'relative.db')).size).toBeGreaterThan(0)
  })
})

describe('environment: REELHOUSE_DATA, REELHOUSE_PORT, REELHOUSE_HOST; flags win', () => {
  afterEach(() => killAll())

  test('REELHOUSE_DATA is the data folder when there is no --data', async () => {
    const env = await catalogue()
    expect((await runInProcess(['user', 'add', 'bob'], { env: { REELHOUSE_DATA: env } })).code).toBe(0)
    expect((await runInProcess(['token', 'create', 'bob'], { env: { REELHOUSE_DATA: env } })).stdout).toMatch(
      /^[0-9a-f]{40}\n$/,
    )
    expect(existsSync(join(env, 'reelhouse.db'))).toBe(true)
  })

  test('--data wins over REELHOUSE_DATA', async () => {
    const [env, flag] = [dir(), dir()]
    expect((await runInProcess(['migrate', '--data', flag], { env: { REELHOUSE_DATA: env } })).code).toBe(0)
    expect((await runInProcess(['user', 'add', 'bob', '--data', flag], { env: { REELHOUSE_DATA: env } })).code).toBe(0)
    expect(existsSync(join(flag, 'reelhouse.db'))).toBe(true)
    expect(existsSync(join(env, 'reelhouse.db'))).toBe(false)
  })

  test.if(process.platform === 'linux')('without either, the data folder is $XDG_DATA_HOME/reelhouse', async () => {
    const xdg = dir()
    expect((await runInProcess(['migrate'], { env: { XDG_DATA_HOME: xdg } })).code).toBe(0)
    expect(existsSync(join(xdg, 'reelhouse', 'reelhouse.db'))).toBe(true)
  })

  test('serve takes its data folder from REELHOUSE_DATA', async () => {
    const env = dir()
    const server = await startServe(undefined, { env: { REELHOUSE_DATA: env } })
    expect(server.proc.stderr).toContain(`data=${env}`)
    await server.proc.waitFor('stdout', /^[0-9a-f]{40}$/m)
    expect(existsSync(join(env, 'admin.token'))).toBe(true)
    expect(await server.proc.stop()).toBe(0)
  })

  test('REELHOUSE_PORT is read: a bad value is a usage error, 0 picks a free port', async () => {
    const data = dir()
    const bad = await runInProcess(['serve', '--data', data], { env: { REELHOUSE_PORT: 'eighty' } })
    expect(bad.code).toBe(2)
    expectOneLine(bad.stderr)
    expect(bad.stderr).toContain('eighty')

    const server = await startServe(data, { args: [], env: { REELHOUSE_PORT: '0' } })
    expect(server.port).toBeGreaterThan(0)
    expect(server.port).not.toBe(8000)
    expect((await call(server, 'GET', '/health', null)).status).toBe(200)
    expect(await server.proc.stop()).toBe(0)
  })

  test('an empty REELHOUSE_* variable counts as unset, not as a value', async () => {
    const data = dir()
    const empty = {
      REELHOUSE_HOST: '',
      REELHOUSE_PORT: '',
      REELHOUSE_TASK_CONCURRENCY: '',
      REELHOUSE_LOG_FORMAT: '',
      REELHOUSE_PUBLIC_URL: '',
      REELHOUSE_ALLOW_ORIGIN: '',
    }
    // --port 0 because an unset REELHOUSE_PORT means 8000, which a test must not take.
    const server = await startServe(data, { args: ['--port', '0'], env: empty })
    expect(server.host).toBe('127.0.0.1')
    expect(lines(server.proc.stderr)[0]).toMatch(/^\S+Z info reelhouse \S+ starting data=/)
    expect((await call(server, 'GET', '/health', null)).status).toBe(200)
    expect(await server.proc.stop()).toBe(0)
  })

  test('--port wins over REELHOUSE_PORT', async () => {
    const server = await startServe(dir(), { args: ['--port', '0'], env: { REELHOUSE_PORT: 'eighty' } })
    expect((await call(server, 'GET', '/health', null)).status).toBe(200)
    expect(await server.proc.stop()).toBe(0)
  })

  test('REELHOUSE_HOST is the host; --host wins over it', async () => {
    const fromEnv = await startServe(dir(), { env: { REELHOUSE_HOST: 'localhost' } })
    expect(fromEnv.host).toBe('localhost')
    expect((await call(fromEnv, 'GET', '/health', null)).status).toBe(200)
    expect(await fromEnv.proc.stop()).toBe(0)

    const fromFlag = await startServe(dir(), {
      args: ['--port', '0', '--host', '127.0.0.1'],
      env: { REELHOUSE_HOST: 'localhost' },
    })
    expect(fromFlag.host).toBe('127.0.0.1')
    expect((await call(fromFlag, 'GET', '/health', null)).status).toBe(200)
    expect(await fromFlag.proc.stop()).toBe(0)
  })
})
