// One data folder (issue 8, point 1): every command says which folder it uses; only serve and
// migrate make a catalogue, the others refuse a folder without one and make nothing; --data may
// come anywhere among the words, before the command being how `npm run reelhouse --` passes the
// folder `npm start` serves; an empty --data or REELHOUSE_DATA never means the current folder.
// Also the commands added for point 7 (user list, user perm, token list, token revoke --id) and
// backup into a missing folder (point 4). On temporary folders, each case run through the
// command line's own entry in this process, and a representative few also in child processes,
// as `bun src/main.ts` and as the compiled executable users get.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { seedProduction, testApp } from '../helpers/app.ts'
import { folders } from '../helpers/envelope.ts'
import { lines, type Runner, TEST_TIMEOUT_MS, WAYS } from '../helpers/process.ts'
import { defaultDataDir } from '../../src/config.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)
const dirs = folders()
afterAll(() => dirs.cleanup())

const refusal = (data: string) => [
  `data=${data}`,
  `reelhouse: no catalogue in ${data}; pass --data DIR (serve prints its data= folder)`,
]

test('npm run reelhouse passes the folder npm start serves', () => {
  const start = pkg.scripts.start.split(' ')
  const cli = (pkg.scripts as Record<string, string>).reelhouse!.split(' ')
  expect(cli).toEqual(['bun', 'src/main.ts', '--data', start[start.indexOf('--data') + 1]!])
})

describe.each(WAYS)('%s', (_, which, every) => {
  let run: Runner
  beforeAll(async () => {
    run = await which()
  })
  /**
   * The tests and cases a process runs too are a representative few (a process adds the wrapper
   * around run(), its real working folder and environment, and the compiled executable's build);
   * every one runs in this process.
   */
  const inThisProcess = (name: string, fn: () => Promise<void>) => void (every && test(name, fn))
  const cases = <T>(all: T[], alsoInProcesses: (c: T) => boolean) => (every ? all : all.filter(alsoInProcesses))

  async function catalogue() {
    const data = join(dirs.make(), 'data')
    expect((await run(['migrate', '--data', data])).code).toBe(0)
    return data
  }

  describe.concurrent('a folder without a catalogue', () => {
    test.each(
      cases(
        [
          [['user', 'add', 'ana']],
          [['user', 'grant', 'ana', '--production', 'Show', '--read']],
          [['user', 'list']],
          [['user', 'perm', 'add', 'ana', 'browser.add_device']],
          [['user', 'perm', 'remove', 'ana', 'browser.add_device']],
          [['token', 'create', 'ana']],
          [['token', 'list', 'ana']],
          [['token', 'revoke', '--user', 'ana']],
          [['token', 'revoke', '--id', '1']],
          [['token', 'revoke', 'a'.repeat(40)]],
          [['backup', 'copy.db']],
        ],
        ([args]) => ['user add ana', 'backup copy.db'].includes(args.join(' ')),
      ),
    )('%j is refused, exit 1, and neither the folder nor a file is made', async (args) => {
      const top = dirs.make()
      const missing = join(top, 'data')
      const r = await run([...args, '--data', missing], { cwd: top })
      expect({ code: r.code, stdout: r.stdout, stderr: lines(r.stderr) }).toEqual({
        code: 1,
        stdout: '',
        stderr: refusal(missing),
      })
      expect(readdirSync(top)).toEqual([])

      // A folder that exists but holds no catalogue (the wrong one, say) stays as it was.
      const empty = dirs.make()
      writeFileSync(join(empty, 'notes.txt'), 'mine')
      const again = await run(['--data', empty, ...args], { cwd: top })
      expect({ code: again.code, stderr: lines(again.stderr) }).toEqual({ code: 1, stderr: refusal(empty) })
      expect(readdirSync(empty)).toEqual(['notes.txt'])
      expect(readdirSync(top)).toEqual([])
    })
  })

  test('migrate makes the catalogue, saying where; then the other commands use it', async () => {
    const data = join(dirs.make(), 'new', 'data')
    const made = await run(['migrate', '--data', data])
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: `data=${data}\n` })
    expect(await run(['user', 'add', 'ana', '--data', data])).toEqual({
      code: 0,
      stdout: 'user ana added\n',
      stderr: `data=${data}\n`,
    })
  })

  test('--data before the command, between its words or after them is the same folder; a relative one is said as an absolute path', async () => {
    const cwd = dirs.make()
    const data = join(cwd, 'data')
    const done = (stdout: string) => ({ code: 0, stdout, stderr: `data=${data}\n` })
    expect((await run(['--data', './data', 'migrate'], { cwd })).stderr).toBe(`data=${data}\n`)
    expect(await run(['--data=./data', 'user', 'add', 'ana'], { cwd })).toEqual(done('user ana added\n'))
    expect(await run(['user', 'add', 'bob', '--data', data], { cwd })).toEqual(done('user bob added\n'))
    // Between a group's words, and between them and the command's arguments.
    expect(await run(['user', '--data', './data', 'add', 'cy'], { cwd })).toEqual(done('user cy added\n'))
    expect(await run(['user', 'perm', '--data=./data', 'add', 'cy', 'browser.add_device'], { cwd })).toEqual(
      done('cy now has browser.add_device\n'),
    )
    expect(await run(['token', 'list', '--data', './data', 'cy'], { cwd })).toEqual(done('cy has no keys\n'))
    expect((await run(['user', '--data', './data', 'list'], { cwd })).stdout).toStartWith('ana\n')
    // --help still wins wherever --data is.
    expect((await run(['user', '--data', './data', '--help'], { cwd })).stdout).toStartWith(
      'Usage: reelhouse [--data DIR] user COMMAND',
    )
    const db = new Database(join(data, 'reelhouse.db'), { readonly: true })
    try {
      expect(db.query('SELECT username FROM users ORDER BY username').all()).toEqual([
        { username: 'ana' },
        { username: 'bob' },
        { username: 'cy' },
      ])
    } finally {
      db.close()
    }
  })

  describe.concurrent('an empty data folder is never the current folder', () => {
    test.each(
      cases(
        [
          [['migrate', '--data', '']],
          [['migrate', '--data=']],
          [['--data=', 'migrate']],
          [['--data', '', 'migrate']],
          [['user', '--data=', 'list']],
          [['serve', '--port', '0', '--data', '']],
        ],
        ([args]) => ['migrate --data ', 'serve --port 0 --data '].includes(args.join(' ')),
      ),
    )('%j: a usage error, exit 2, nothing made', async (args) => {
      const cwd = dirs.make()
      const r = await run(args, { cwd })
      expect({ code: r.code, stdout: r.stdout, stderr: lines(r.stderr) }).toEqual({
        code: 2,
        stdout: '',
        stderr: ['reelhouse: --data needs a value (DIR), not an empty one; see reelhouse --help'],
      })
      expect(readdirSync(cwd)).toEqual([])
    })

    test.if(process.platform === 'linux')('an empty REELHOUSE_DATA counts as unset: the platform folder', async () => {
      const cwd = dirs.make()
      const xdg = dirs.make()
      const r = await run(['migrate'], { cwd, env: { REELHOUSE_DATA: '', XDG_DATA_HOME: xdg } })
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: `data=${join(xdg, 'reelhouse')}\n` })
      expect(readdirSync(cwd)).toEqual([])
      expect(existsSync(join(xdg, 'reelhouse', 'reelhouse.db'))).toBe(true)
    })
  })

  describe.concurrent('--data given twice', () => {
    inThisProcess('says so, wherever the two are', async () => {
      const cwd = dirs.make()
      const r = await run(['--data', 'a', 'user', '--data', 'b', 'list'], { cwd })
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: 'reelhouse: --data is given twice; give it once\n',
      })
    })

    test('under npm run reelhouse, whose script gave the first one, says that and what to use instead', async () => {
      const cwd = dirs.make()
      const env = { npm_lifecycle_event: 'reelhouse', npm_lifecycle_script: pkg.scripts.reelhouse }
      const r = await run(['--data', './data', 'migrate', '--data', join(cwd, 'elsewhere')], { cwd, env })
      expect({ code: r.code, stderr: r.stderr }).toEqual({
        code: 2,
        stderr:
          'reelhouse: --data is given twice (npm run reelhouse already passes --data ./data; use bun src/main.ts or the executable for another folder)\n',
      })
      expect(readdirSync(cwd)).toEqual([])
    })
  })

  describe('user list, user perm, token list, token revoke --id', () => {
    inThisProcess('user list shows each user with codenames and production access', async () => {
      const data = await catalogue()
      // Two productions made through the API (its superuser is admin), then the app is closed.
      const t = testApp(data)
      const night = (await seedProduction(t, 'Night Shift', dirs.make())).production
      const archive = (await seedProduction(t, 'Archive', dirs.make())).production
      t.close()
      const rh = (...args: string[]) => run([...args, '--data', data])
      expect((await rh('user', 'add', 'ana', '--perm', 'browser.add_device')).code).toBe(0)
      expect((await rh('user', 'add', 'viewer')).code).toBe(0)
      expect((await rh('user', 'grant', 'ana', '--production', 'Night Shift', '--write')).code).toBe(0)
      expect((await rh('user', 'grant', 'ana', '--production', String(archive.id), '--read')).code).toBe(0)

      expect(await rh('user', 'perm', 'add', 'ana', 'browser.copy_projectasset')).toEqual({
        code: 0,
        stdout: 'ana now has browser.copy_projectasset\n',
        stderr: `data=${data}\n`,
      })
      expect((await rh('user', 'perm', 'add', 'ana', 'browser.copy_projectasset')).stdout).toBe(
        'ana already had browser.copy_projectasset\n',
      )
      expect((await rh('user', 'perm', 'add', 'ana', 'browser.add_production')).code).toBe(0)
      expect(await rh('user', 'perm', 'remove', 'ana', 'browser.add_device')).toEqual({
        code: 0,
        stdout: 'ana no longer has browser.add_device\n',
        stderr: `data=${data}\n`,
      })
      expect((await rh('user', 'perm', 'remove', 'ana', 'browser.add_device')).stdout).toBe(
        'ana did not have browser.add_device\n',
      )
      const nobody = await rh('user', 'perm', 'add', 'nobody', 'browser.add_device')
      expect({ code: nobody.code, stderr: lines(nobody.stderr) }).toEqual({
        code: 1,
        stderr: [`data=${data}`, 'reelhouse: no user named "nobody"'],
      })

      expect(await rh('user', 'list')).toEqual({
        code: 0,
        stderr: `data=${data}\n`,
        stdout: [
          'admin  superuser (may do everything)',
          'ana',
          '  permissions  browser.add_production, browser.copy_projectasset',
          `  write        Night Shift (id ${night.id})`,
          `  read         Archive (id ${archive.id})`,
          'viewer',
          '  permissions  none',
          '  write        none',
          '  read         none',
          '',
        ].join('\n'),
      })
    })

    inThisProcess(
      'user perm remove takes a codename no longer in the list, as an older catalogue may hold',
      async () => {
        const data = await catalogue()
        const rh = (...args: string[]) => run([...args, '--data', data])
        await rh('user', 'add', 'ana', '--perm', 'browser.add_device')
        // Granted when --perm took any word.word: no route checks it now.
        const db = new Database(join(data, 'reelhouse.db'))
        db.run(
          "INSERT INTO user_permissions (user_id, codename) SELECT id, 'browser.view_device' FROM users WHERE username = 'ana'",
        )
        db.close()
        expect((await rh('user', 'list')).stdout).toContain('  permissions  browser.add_device, browser.view_device\n')

        expect(await rh('user', 'perm', 'remove', 'ana', 'browser.view_device')).toEqual({
          code: 0,
          stdout: 'ana no longer has browser.view_device\n',
          stderr: `data=${data}\n`,
        })
        expect(await rh('user', 'perm', 'remove', 'ana', 'browser.view_device')).toEqual({
          code: 0,
          stdout: 'ana did not have browser.view_device\n',
          stderr: `data=${data}\n`,
        })
        expect((await rh('user', 'list')).stdout).toContain('  permissions  browser.add_device\n')
        // Adding one stays checked against the list (help.test.ts has the usage error).
        expect((await rh('user', 'perm', 'add', 'ana', 'browser.view_device')).code).toBe(2)
      },
    )

    inThisProcess(
      "token list shows each key's id, creation time and first 8 characters, never the key; a key made before those were kept, its hash's",
      async () => {
        const data = await catalogue()
        const rh = (...args: string[]) => run([...args, '--data', data])
        await rh('user', 'add', 'ana')
        expect(await rh('token', 'list', 'ana')).toEqual({
          code: 0,
          stdout: 'ana has no keys\n',
          stderr: `data=${data}\n`,
        })
        const keys = [
          (await rh('token', 'create', 'ana')).stdout.trim(),
          (await rh('token', 'create', 'ana')).stdout.trim(),
        ]
        // The first key as one made before migration 0008 left it: no prefix kept.
        const db = new Database(join(data, 'reelhouse.db'))
        db.run('UPDATE api_keys SET key_prefix = NULL WHERE id = 1')
        db.close()
        const listed = await rh('token', 'list', 'ana')
        const sha = (k: string) => createHash('sha256').update(k).digest('hex').slice(0, 8)
        const when = 'created \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z'
        expect(lines(listed.stdout)).toEqual([
          expect.stringMatching(new RegExp(`^key 1 {2}${when} {2}sha256 ${sha(keys[0]!)}…$`)),
          expect.stringMatching(new RegExp(`^key 2 {2}${when} {2}${keys[1]!.slice(0, 8)}…$`)),
        ])
        for (const k of keys) expect(listed.stdout).not.toContain(k.slice(0, 9))
      },
    )

    inThisProcess(
      'token revoke --id takes the id token list shows, says whose key it was, and leaves the other keys',
      async () => {
        const data = await catalogue()
        const rh = (...args: string[]) => run([...args, '--data', data])
        await rh('user', 'add', 'ana')
        await rh('user', 'add', 'bob')
        await rh('token', 'create', 'ana')
        await rh('token', 'create', 'bob')
        await rh('token', 'create', 'ana')
        const id = lines((await rh('token', 'list', 'bob')).stdout)[0]!.match(/^key (\d+) /)![1]!
        expect(await rh('token', 'revoke', '--id', id)).toEqual({
          code: 0,
          stdout: `key ${id} of bob revoked\n`,
          stderr: `data=${data}\n`,
        })
        expect((await rh('token', 'list', 'bob')).stdout).toBe('bob has no keys\n')
        expect(lines((await rh('token', 'list', 'ana')).stdout)).toHaveLength(2)
        const again = await rh('token', 'revoke', '--id', id)
        expect({ code: again.code, stderr: lines(again.stderr) }).toEqual({
          code: 1,
          stderr: [`data=${data}`, `reelhouse: no key with id ${id}; reelhouse token list NAME shows a user's keys`],
        })
      },
    )
  })

  describe('backup', () => {
    test('into a folder that does not exist: says so, exit 1, makes nothing', async () => {
      const data = await catalogue()
      const top = dirs.make()
      const target = join(top, 'x', 'y', 'copy.db')
      const r = await run(['backup', target, '--data', data])
      expect({ code: r.code, stdout: r.stdout, stderr: lines(r.stderr) }).toEqual({
        code: 1,
        stdout: '',
        stderr: [`data=${data}`, `reelhouse: folder ${join(top, 'x', 'y')} does not exist; create it first`],
      })
      expect(readdirSync(top)).toEqual([])
    })

    test.each(cases([[['copy.db']], [['x', 'copy.db']], [['x', 'y', 'copy.db']]], ([below]) => below.length === 2))(
      'into a path through a file (file/%j): names that file as not a folder',
      async (below) => {
        const data = await catalogue()
        const top = dirs.make()
        writeFileSync(join(top, 'file'), 'x')
        const r = await run(['backup', join(top, 'file', ...below), '--data', data])
        expect({ code: r.code, stderr: lines(r.stderr) }).toEqual({
          code: 1,
          stderr: [`data=${data}`, `reelhouse: ${join(top, 'file')} is not a folder`],
        })
        expect(readdirSync(top)).toEqual(['file'])
      },
    )

    test('once the folder is made, the same command works', async () => {
      const data = await catalogue()
      const folder = join(dirs.make(), 'backups')
      mkdirSync(folder)
      const r = await run(['backup', join(folder, 'copy.db'), '--data', data])
      expect(r.code).toBe(0)
      expect(existsSync(join(folder, 'copy.db'))).toBe(true)
    })
  })
})

describe('the default data folder of each system (defaultDataDir)', () => {
  test("Linux: $XDG_DATA_HOME, else ~/.local/share; macOS: Application Support; Windows: %LOCALAPPDATA% (not the roaming %APPDATA%), else the profile's AppData\\Local", () => {
    expect([
      defaultDataDir({ XDG_DATA_HOME: '/x/data', HOME: '/home/ana' }, 'linux'),
      defaultDataDir({ XDG_DATA_HOME: '', HOME: '/home/ana' }, 'linux'),
      defaultDataDir({ HOME: '/Users/ana' }, 'darwin'),
      defaultDataDir(
        {
          LOCALAPPDATA: 'C:/Users/ana/AppData/Local',
          APPDATA: 'C:/Users/ana/AppData/Roaming',
          USERPROFILE: 'C:/Users/ana',
        },
        'win32',
      ),
      defaultDataDir(
        { LOCALAPPDATA: '', APPDATA: 'C:/Users/ana/AppData/Roaming', USERPROFILE: 'C:/Users/ana' },
        'win32',
      ),
    ]).toEqual([
      join('/x/data', 'reelhouse'),
      join('/home/ana', '.local', 'share', 'reelhouse'),
      join('/Users/ana', 'Library', 'Application Support', 'reelhouse'),
      join('C:/Users/ana/AppData/Local', 'reelhouse'),
      join('C:/Users/ana', 'AppData', 'Local', 'reelhouse'),
    ])
  })
})
