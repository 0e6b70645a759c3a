// Groups as the command line manages them: a role ("editor") is a group carrying codenames, so a
// user is given one --group instead of six --perm. A running server takes every change from its
// next request (the auth cache is emptied by the group tables as by the user tables).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers/app.ts'
import { TEST_TIMEOUT_MS, call, killAll, lines, runInProcess, type Server, startServe } from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

const dirs: string[] = []
const dir = (prefix = 'reelhouse-groups-') => {
  const d = tempDir(prefix)
  dirs.push(d)
  return d
}
afterAll(async () => {
  await killAll()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A command that failed after finding its data folder: the data= line and one line of its own. */
function expectFailure(r: { code: number; stderr: string }, code: number, text: string, data: string) {
  expect(r.code).toBe(code)
  expect(lines(r.stderr)).toEqual([`data=${data}`, `reelhouse: ${text}`])
}

describe('the commands', () => {
  let data: string
  const cli = (...args: string[]) => runInProcess([...args, '--data', data])
  beforeAll(async () => {
    data = dir()
    expect((await cli('migrate')).code).toBe(0)
  })

  test('group add of a suggested role without --perm gives the suggested codenames, and says so', async () => {
    const r = await cli('group', 'add', 'editor')
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(
      'group editor added with browser.copy_projectasset, browser.change_projectasset, browser.change_videoasset, ' +
        'browser.change_audioasset, browser.change_imageasset (the suggested role)\n',
    )
  })

  test('group add with --perm gives exactly those; another name without --perm gives none', async () => {
    expect((await cli('group', 'add', 'grading', '--perm', 'browser.change_videoasset')).stdout).toBe(
      'group grading added with browser.change_videoasset\n',
    )
    expect((await cli('group', 'add', 'interns')).stdout).toBe('group interns added with no permissions\n')
  })

  test('user add --group puts the user in each group; user list and group list show it', async () => {
    const r = await cli('user', 'add', 'ana', '--group', 'editor', '--group', 'grading')
    expect(r).toMatchObject({ code: 0, stdout: 'user ana added in groups editor, grading\n' })
    const users = (await cli('user', 'list')).stdout
    expect(users).toContain('ana\n  permissions  none\n  groups       editor, grading\n')
    const groups = (await cli('group', 'list')).stdout
    expect(groups).toContain('grading\n  permissions  browser.change_videoasset\n  members      ana\n')
    expect(groups).toContain('interns\n  permissions  none\n  members      none\n')
  })

  test('mistakes: one line each; exit 1 for what is not there, 2 for a wrong codename', async () => {
    expectFailure(
      await cli('user', 'add', 'bo', '--group', 'edtior'),
      1,
      'no group named "edtior"; reelhouse group add edtior makes it',
      data,
    )
    // The misspelt group made no user.
    expect((await cli('user', 'list')).stdout).not.toContain('bo\n')
    expectFailure(await cli('group', 'add', 'editor'), 1, 'group "editor" already exists', data)
    expectFailure(
      await cli('group', 'add', 'two words'),
      1,
      'invalid group name "two words": use letters, digits and @.+-_',
      data,
    )
    const wrong = await cli('group', 'add', 'x', '--perm', 'browser.fly')
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toBe(
      'reelhouse: unknown codename "browser.fly"; reelhouse user --help lists them (for group add)\n',
    )
    expectFailure(await cli('user', 'group', 'add', 'nobody', 'editor'), 1, 'no user named "nobody"', data)
    expectFailure(
      await cli('group', 'remove', 'nothing'),
      1,
      'no group named "nothing"; reelhouse group add nothing makes it',
      data,
    )
  })

  test('user group add and remove, group perm add and remove: each says what changed, or that nothing did', async () => {
    expect((await cli('user', 'group', 'add', 'ana', 'interns')).stdout).toBe('ana is now in group interns\n')
    expect((await cli('user', 'group', 'add', 'ana', 'interns')).stdout).toBe('ana was in group interns already\n')
    expect((await cli('user', 'group', 'remove', 'ana', 'interns')).stdout).toBe('ana is no longer in group interns\n')
    expect((await cli('user', 'group', 'remove', 'ana', 'interns')).stdout).toBe('ana was not in group interns\n')
    expect((await cli('group', 'perm', 'add', 'interns', 'browser.add_device')).stdout).toBe(
      'group interns now has browser.add_device\n',
    )
    expect((await cli('group', 'perm', 'add', 'interns', 'browser.add_device')).stdout).toBe(
      'group interns already had browser.add_device\n',
    )
    expect((await cli('group', 'perm', 'remove', 'interns', 'browser.add_device')).stdout).toBe(
      'group interns no longer has browser.add_device\n',
    )
    expect((await cli('group', 'perm', 'remove', 'interns', 'browser.add_device')).stdout).toBe(
      'group interns did not have browser.add_device\n',
    )
  })

  test('group --help lists the suggested roles with their codenames', async () => {
    const r = await runInProcess(['group', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Suggested roles (reelhouse group add NAME without --perm):\n  editor: ')
    for (const role of ['assistant', 'producer', 'engineer']) expect(r.stdout).toContain(`\n  ${role}: `)
  })
})

describe('a running server takes the groups from the next request', () => {
  let data: string
  let server: Server
  let adminKey: string
  const cli = (...args: string[]) => runInProcess([...args, '--data', data])
  beforeAll(async () => {
    data = dir()
    server = await startServe(data)
    adminKey = (await server.proc.waitFor('stdout', /^([0-9a-f]{40})$/m))[1]!
  })
  afterAll(async () => {
    expect(await server.proc.stop('SIGTERM')).toBe(0)
  })

  test("a user's codenames through a group: given, taken from the group, and the user taken out", async () => {
    expect((await cli('group', 'add', 'engineer')).code).toBe(0)
    expect((await cli('user', 'add', 'eng', '--group', 'engineer')).code).toBe(0)
    const key = (await cli('token', 'create', 'eng')).stdout.trim()
    const device = (name: string) => call(server, 'POST', '/devices/', key, { name, path: dir('reelhouse-disk-') })
    expect((await device('one')).status).toBe(201)

    expect((await cli('group', 'perm', 'remove', 'engineer', 'browser.add_device')).code).toBe(0)
    const refused = await device('two')
    expect(refused.status).toBe(403)
    expect(refused.json.errors[0].detail).toContain('browser.add_device')

    expect((await cli('group', 'perm', 'add', 'engineer', 'browser.add_device')).code).toBe(0)
    expect((await device('three')).status).toBe(201)
    expect((await cli('user', 'group', 'remove', 'eng', 'engineer')).code).toBe(0)
    expect((await device('four')).status).toBe(403)
    expect((await cli('user', 'group', 'add', 'eng', 'engineer')).code).toBe(0)
    expect((await device('five')).status).toBe(201)
    expect((await cli('group', 'remove', 'engineer')).code).toBe(0)
    expect((await device('six')).status).toBe(403)
    // The superuser's key was never in question.
    expect((await call(server, 'GET', '/devices/', adminKey)).json).toHaveLength(3)
  })
})
