// One data folder (issue 8, point 1): every command says which folder it uses; only serve and
// migrate make a catalogue, the others refuse a folder without one and make nothing; --data may
// come before the command, which is how `npm run reelhouse --` passes the folder `npm start`
// serves. Also the commands added for point 7 (user list, user perm, token list) and backup into
// a missing folder (point 4). Child processes of `bun src/main.ts` on temporary folders.
import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { seedProduction, testApp } from '../helpers/app.ts'
import { folders } from '../helpers/envelope.ts'
import { lines, runCli } from '../helpers/process.ts'

setDefaultTimeout(30_000)
const dirs = folders()
afterAll(() => dirs.cleanup())

const refusal = (data: string) => [`data=${data}`, `reelhouse: no catalogue in ${data}; pass --data DIR (serve prints its data= folder)`]

async function catalogue() {
  const data = join(dirs.make(), 'data')
  expect((await runCli(['migrate', '--data', data])).code).toBe(0)
  return data
}

describe.concurrent('a folder without a catalogue', () => {
  test.each([
    [['user', 'add', 'ana']],
    [['user', 'grant', 'ana', '--production', 'Show', '--read']],
    [['user', 'list']],
    [['user', 'perm', 'add', 'ana', 'browser.add_device']],
    [['user', 'perm', 'remove', 'ana', 'browser.add_device']],
    [['token', 'create', 'ana']],
    [['token', 'list', 'ana']],
    [['token', 'revoke', '--user', 'ana']],
    [['token', 'revoke', 'a'.repeat(40)]],
    [['backup', 'copy.db']],
  ])('%j is refused, exit 1, and neither the folder nor a file is made', async (args) => {
    const top = dirs.make()
    const missing = join(top, 'data')
    const r = await runCli([...args, '--data', missing], { cwd: top })
    expect({ code: r.code, stdout: r.stdout, stderr: lines(r.stderr) }).toEqual({ code: 1, stdout: '', stderr: refusal(missing) })
    expect(readdirSync(top)).toEqual([])

    // A folder that exists but holds no catalogue (the wrong one, say) stays as it was.
    const empty = dirs.make()
    writeFileSync(join(empty, 'notes.txt'), 'mine')
    const again = await runCli(['--data', empty, ...args], { cwd: top })
    expect({ code: again.code, stderr: lines(again.stderr) }).toEqual({ code: 1, stderr: refusal(empty) })
    expect(readdirSync(empty)).toEqual(['notes.txt'])
    expect(readdirSync(top)).toEqual([])
  })
})

test('migrate makes the catalogue, saying where; then the other commands use it', async () => {
  const data = join(dirs.make(), 'new', 'data')
  const made = await runCli(['migrate', '--data', data])
  expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: `data=${data}\n` })
  expect(await runCli(['user', 'add', 'ana', '--data', data])).toEqual({ code: 0, stdout: 'user ana added\n', stderr: `data=${data}\n` })
})

test('--data before the command is the same folder as after it; a relative one is said as an absolute path', async () => {
  const cwd = dirs.make()
  const data = join(cwd, 'data')
  expect((await runCli(['--data', './data', 'migrate'], { cwd })).stderr).toBe(`data=${data}\n`)
  expect(await runCli(['--data=./data', 'user', 'add', 'ana'], { cwd })).toEqual({ code: 0, stdout: 'user ana added\n', stderr: `data=${data}\n` })
  expect(await runCli(['user', 'add', 'bob', '--data', data], { cwd })).toEqual({ code: 0, stdout: 'user bob added\n', stderr: `data=${data}\n` })
  const db = new Database(join(data, 'reelhouse.db'), { readonly: true })
  try {
    expect(db.query('SELECT username FROM users ORDER BY username').all()).toEqual([{ username: 'ana' }, { username: 'bob' }])
  } finally {
    db.close()
  }
})

test('npm run reelhouse passes the folder npm start serves', () => {
  const start = pkg.scripts.start.split(' ')
  const cli = (pkg.scripts as Record<string, string>).reelhouse!.split(' ')
  expect(cli).toEqual(['bun', 'src/main.ts', '--data', start[start.indexOf('--data') + 1]!])
})

describe('user list, user perm, token list', () => {
  test('user list shows each user with codenames and production access', async () => {
    const data = await catalogue()
    // Two productions made through the API (its superuser is admin), then the app is closed.
    const t = testApp(data)
    const night = (await seedProduction(t, 'Night Shift', dirs.make())).production
    const archive = (await seedProduction(t, 'Archive', dirs.make())).production
    t.close()
    const cli = (...args: string[]) => runCli([...args, '--data', data])
    expect((await cli('user', 'add', 'ana', '--perm', 'browser.add_device')).code).toBe(0)
    expect((await cli('user', 'add', 'viewer')).code).toBe(0)
    expect((await cli('user', 'grant', 'ana', '--production', 'Night Shift', '--write')).code).toBe(0)
    expect((await cli('user', 'grant', 'ana', '--production', String(archive.id), '--read')).code).toBe(0)

    expect(await cli('user', 'perm', 'add', 'ana', 'browser.copy_projectasset')).toEqual({ code: 0, stdout: 'ana now has browser.copy_projectasset\n', stderr: `data=${data}\n` })
    expect((await cli('user', 'perm', 'add', 'ana', 'browser.copy_projectasset')).stdout).toBe('ana already had browser.copy_projectasset\n')
    expect((await cli('user', 'perm', 'add', 'ana', 'browser.add_production')).code).toBe(0)
    expect(await cli('user', 'perm', 'remove', 'ana', 'browser.add_device')).toEqual({ code: 0, stdout: 'ana no longer has browser.add_device\n', stderr: `data=${data}\n` })
    expect((await cli('user', 'perm', 'remove', 'ana', 'browser.add_device')).stdout).toBe('ana did not have browser.add_device\n')
    const nobody = await cli('user', 'perm', 'add', 'nobody', 'browser.add_device')
    expect({ code: nobody.code, stderr: lines(nobody.stderr) }).toEqual({ code: 1, stderr: [`data=${data}`, 'reelhouse: no user named "nobody"'] })

    expect(await cli('user', 'list')).toEqual({
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

  test("token list shows each key's id, creation time and first 8 characters, never the key; a key made before those were kept, its hash's", async () => {
    const data = await catalogue()
    const cli = (...args: string[]) => runCli([...args, '--data', data])
    await cli('user', 'add', 'ana')
    expect(await cli('token', 'list', 'ana')).toEqual({ code: 0, stdout: 'ana has no keys\n', stderr: `data=${data}\n` })
    const keys = [(await cli('token', 'create', 'ana')).stdout.trim(), (await cli('token', 'create', 'ana')).stdout.trim()]
    // The first key as one made before migration 0008 left it: no prefix kept.
    const db = new Database(join(data, 'reelhouse.db'))
    db.run('UPDATE api_keys SET key_prefix = NULL WHERE id = 1')
    db.close()
    const listed = await cli('token', 'list', 'ana')
    const sha = (k: string) => createHash('sha256').update(k).digest('hex').slice(0, 8)
    const when = 'created \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z'
    expect(lines(listed.stdout)).toEqual([
      expect.stringMatching(new RegExp(`^key 1 {2}${when} {2}sha256 ${sha(keys[0]!)}…$`)),
      expect.stringMatching(new RegExp(`^key 2 {2}${when} {2}${keys[1]!.slice(0, 8)}…$`)),
    ])
    for (const k of keys) expect(listed.stdout).not.toContain(k.slice(0, 9))
  })
})

describe('backup', () => {
  test('into a folder that does not exist: says so, exit 1, makes nothing', async () => {
    const data = await catalogue()
    const top = dirs.make()
    const target = join(top, 'x', 'y', 'copy.db')
    const r = await runCli(['backup', target, '--data', data])
    expect({ code: r.code, stdout: r.stdout, stderr: lines(r.stderr) }).toEqual({
      code: 1, stdout: '', stderr: [`data=${data}`, `reelhouse: folder ${join(top, 'x', 'y')} does not exist; create it first`],
    })
    expect(readdirSync(top)).toEqual([])
  })

  test('into a path through a file: says it is not a folder', async () => {
    const data = await catalogue()
    const top = dirs.make()
    writeFileSync(join(top, 'file'), 'x')
    const r = await runCli(['backup', join(top, 'file', 'copy.db'), '--data', data])
    expect({ code: r.code, stderr: lines(r.stderr) }).toEqual({ code: 1, stderr: [`data=${data}`, `reelhouse: ${join(top, 'file')} is not a folder`] })
  })

  test('once the folder is made, the same command works', async () => {
    const data = await catalogue()
    const folder = join(dirs.make(), 'backups')
    mkdirSync(folder)
    const r = await runCli(['backup', join(folder, 'copy.db'), '--data', data])
    expect(r.code).toBe(0)
    expect(existsSync(join(folder, 'copy.db'))).toBe(true)
  })
})
