// A command line you can explore (issue 8, point 7): --help at every level, exit 0 with the usage
// on stdout; every mistake said in our own one line, never in the words of node:util's parser;
// the permission codenames listed where `user --help` shows them, and those the routes check
// are all there. Every case runs through the command line's own entry in this process; a
// representative few also run in child processes, as `bun src/main.ts ...` and as the compiled
// executable users get.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { folders } from '../helpers/envelope.ts'
import { lines, ROOT, type Runner, runInProcess, TEST_TIMEOUT_MS, WAYS } from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)
const dirs = folders()
afterAll(() => dirs.cleanup())

/** What a process runs too: --help and -h, of a command and of a group. */
const helpInProcesses = new Set(['serve --help', 'user perm add -h', 'user perm --help', 'proxies -h'])

/**
 * The mistakes a process makes too: one of each place a mistake is found (the parser, --data,
 * the group, a codename, serve's values, a command's own check).
 */
const mistakesInProcesses = new Set([
  'user add ana --foo',
  'serve --port',
  '--data a migrate --data b',
  'user remove ana',
  'serve --log-format xml',
  'token revoke KEY',
])

describe.each(WAYS)('%s', (_, which, every) => {
  let run: Runner
  beforeAll(async () => {
    run = await which()
  })

  /** The commands `reelhouse --help` lists: "serve", "user add", "user perm add", ... */
  async function listedCommands() {
    const help = (await run(['--help'])).stdout
    return [...help.matchAll(/^ {2}reelhouse ([a-z]+(?: [a-z]+)*)(?= |$)/gm)].map((m) => m[1]!)
  }

  test('--help lists every command; each command and each group answers its own --help and -h on stdout, exit 0', async () => {
    const commands = await listedCommands()
    expect(commands).toEqual([
      'serve',
      'user add',
      'user grant',
      'user list',
      'user perm add',
      'user perm remove',
      'user group add',
      'user group remove',
      'user passwd',
      'group add',
      'group list',
      'group remove',
      'group perm add',
      'group perm remove',
      'token create',
      'token list',
      'token revoke',
      'proxies remake',
      'migrate',
      'backup',
      'verify',
    ])
    const groups = ['user', 'user perm', 'user group', 'group', 'group perm', 'token', 'proxies']
    const runs = [...commands, ...groups].flatMap((c) => [
      [...c.split(' '), '--help'],
      [...c.split(' '), '-h'],
    ])
    for (const args of every ? runs : runs.filter((a) => helpInProcesses.has(a.join(' ')))) {
      const r = await run(args)
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' })
      expect(r.stdout).toStartWith(`Usage: reelhouse [--data DIR] ${args.slice(0, -1).join(' ')}`)
    }
  })

  test("a command's --help names its options, --data among them, and wins over other arguments", async () => {
    const serve = await run(['serve', '--port', 'not-a-port', '--help'])
    expect(serve.code).toBe(0)
    for (const flag of [
      '--host HOST',
      '--port PORT',
      '--quiet',
      '--log-format text|json',
      '--data DIR',
      'REELHOUSE_LOG_FORMAT',
    ])
      expect(serve.stdout).toContain(flag)
    const add = await run(['user', 'add', '--help'])
    for (const flag of ['--superuser', '--perm CODENAME', '--data DIR']) expect(add.stdout).toContain(flag)
    const revoke = await run(['token', 'revoke', '--help'])
    expect(revoke.stdout).toStartWith('Usage: reelhouse [--data DIR] token revoke KEY | --id N | --user NAME\n')
    for (const flag of ['--id N', '--user NAME', '--data DIR']) expect(revoke.stdout).toContain(flag)
  })

  describe.concurrent("mistakes: our own one line naming the way out, exit 2, never the parser's text", () => {
    const mistakes: [string[], string][] = [
      [['user', 'add', 'ana', '--foo'], 'unknown option --foo for user add; see reelhouse user add --help'],
      [['user', 'add', 'ana', '-x'], 'unknown option -x for user add; see reelhouse user add --help'],
      [['user', 'add', 'ana', '--superuser=yes'], '--superuser takes no value; see reelhouse user add --help'],
      [['serve', '--port'], '--port needs a value (PORT); see reelhouse serve --help'],
      [['serve', '--port', '--quiet'], '--port needs a value (PORT); see reelhouse serve --help'],
      [['serve', '--port', '1', '--port', '2'], '--port is given twice; see reelhouse serve --help'],
      [['serve', '--log-format', 'xml'], '--log-format must be text or json, not "xml"'],
      [['user', 'add'], 'user add needs NAME; see reelhouse user add --help'],
      [['user', 'add', 'ana', 'bob'], 'unexpected argument "bob" for user add; see reelhouse user add --help'],
      [['user', 'perm', 'add', 'ana'], 'user perm add needs NAME and CODENAME; see reelhouse user perm add --help'],
      [
        ['user', 'perm', 'add', 'ana', 'browser.fly'],
        'unknown codename "browser.fly"; reelhouse user --help lists them (for user perm add)',
      ],
      [
        ['user', 'add', 'ana', '--perm', 'browser.fly'],
        'unknown codename "browser.fly"; reelhouse user --help lists them (for user add)',
      ],
      [['user'], 'user needs a command; see reelhouse user --help'],
      [['user', 'remove', 'ana'], 'unknown command "user remove"; see reelhouse user --help'],
      [['user', 'perm', 'grant'], 'unknown command "user perm grant"; see reelhouse user perm --help'],
      [['token', 'list'], 'token list needs NAME; see reelhouse token list --help'],
      [['frobnicate'], 'unknown command "frobnicate"; see reelhouse --help'],
      [['--data'], '--data needs a value (DIR); see reelhouse --help'],
      [['--data', 'a', 'migrate', '--data', 'b'], '--data is given twice; give it once'],
      [['migrate', '--data='], '--data needs a value (DIR), not an empty one; see reelhouse --help'],
      [['serve', '--ffmpeg', ''], '--ffmpeg needs a value (DIR), not an empty one; see reelhouse serve --help'],
      [
        ['user', 'perm', 'add', 'ana', 'browser.view_device'],
        'unknown codename "browser.view_device"; reelhouse user --help lists them (for user perm add)',
      ],
      [['token', 'revoke'], 'token revoke takes one of KEY, --id N and --user NAME; see reelhouse token revoke --help'],
      [
        ['token', 'revoke', '--id', '1', '--user', 'ana'],
        'token revoke takes one of KEY, --id N and --user NAME; see reelhouse token revoke --help',
      ],
      [
        ['token', 'revoke', '--id', 'key-1'],
        '--id must be a key\'s id as token list shows it, not "key-1"; see reelhouse token revoke --help',
      ],
      [
        ['token', 'revoke', '--id', '0'],
        '--id must be a key\'s id as token list shows it, not "0"; see reelhouse token revoke --help',
      ],
      [['token', 'revoke', 'KEY'], 'a key is 40 lowercase hex characters; or give --id N as token list shows it'],
    ]
    test.each(every ? mistakes : mistakes.filter(([args]) => mistakesInProcesses.has(args.join(' '))))(
      '%j',
      async (args, message) => {
        const data = dirs.make()
        const r = await run(args, { cwd: data })
        expect({ code: r.code, stdout: r.stdout, stderr: lines(r.stderr) }).toEqual({
          code: 2,
          stdout: '',
          stderr: [`reelhouse: ${message}`],
        })
        expect(readdirSync(data)).toEqual([])
      },
    )
  })
})

test('user --help lists every codename a route checks, and only those are accepted', async () => {
  const help = (await runInProcess(['user', '--help'])).stdout
  const listed = [...help.matchAll(/^ {2}(browser\.[a-z_]+) +\S/gm)].map((m) => m[1]!)
  // Every codename the code names anywhere under src/ (routes, services), besides the list itself.
  const used = new Set<string>()
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (path.endsWith('.ts') && !path.endsWith(join('users', 'service.ts')))
        for (const m of readFileSync(path, 'utf8').matchAll(/'(browser\.[a-z_]+)'/g)) used.add(m[1]!)
    }
  }
  walk(join(ROOT, 'src'))
  expect(used.size).toBeGreaterThan(5)
  expect(listed.toSorted()).toEqual([...used].toSorted())
})
