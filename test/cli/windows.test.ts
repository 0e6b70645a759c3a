// The windows-x64 executable (build.ts --target windows-x64), run under Wine (test/helpers/wine.ts)
// as test/cli/arm64.test.ts runs the arm64 one under qemu: built once per run, then its command
// line and a serve session with its data folder on C:\. Before its own entry file
// (src/executable.ts) the Windows executable printed nothing at all and exited 0, whatever the
// command: these tests fail on that. What Wine cannot show is listed in docs/operations.md.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { call, crossExecutable, killAll, lines, ROOT, Running, runCli, SOURCE_CLI, versionPattern } from '../helpers/process.ts'
import { driveCFolder, WINE, wineEnv, wineMissing, winePrefix } from '../helpers/wine.ts'

if (wineMissing) console.log(`[skip] test/cli/windows.test.ts: ${wineMissing}`)

/** Wine starts its server with the first process (a few seconds, more under the other files' load). */
const STEP_MS = 120_000

const made: string[] = []
afterAll(async () => {
  await killAll()
  for (const path of made) rmSync(path, { recursive: true, force: true })
})

describe.skipIf(wineMissing !== undefined)('the windows-x64 executable under Wine', () => {
  let binary: string
  let prefix: string
  let cli: string[]
  let env: Record<string, string>

  beforeAll(async () => {
    const started = Date.now()
    ;[binary, prefix] = await Promise.all([crossExecutable('windows-x64'), winePrefix()])
    cli = [WINE!, binary]
    env = wineEnv(prefix)
    console.log(`built ${binary} and made the Wine prefix ${prefix} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }, 300_000)

  test('--version and --help print what they print on Linux', async () => {
    const [version, help, linuxHelp] = await Promise.all([
      runCli(['--version'], { cli, env }),
      runCli(['--help'], { cli, env }),
      runCli(['--help'], { cli: SOURCE_CLI }),
    ])
    expect(version).toEqual({ code: 0, stdout: expect.stringMatching(versionPattern({ path: binary })), stderr: '' })
    expect(help.stdout).toStartWith('reelhouse ')
    expect(help).toEqual({ code: 0, stdout: linuxHelp.stdout, stderr: '' })
    // A mistake: one line and exit 2, as on Linux.
    const wrong = await runCli(['frobnicate'], { cli, env })
    expect([wrong.code, wrong.stdout, lines(wrong.stderr).length]).toEqual([2, '', 1])
  }, STEP_MS)

  test('serve with its data folder on C:\\: the threads start, no mode warnings, devices on C:\\ and UNC paths, the page, SIGINT and exit 0', async () => {
    const [root, winRoot] = driveCFolder(prefix, 'serve')
    made.push(root)
    const data = `${winRoot}\\data`
    // The arguments of the WinSW recipe in docs/operations.md, with the test's data folder and any free port.
    const recipe = /<arguments>serve ([^<]*)<\/arguments>/.exec(readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8'))![1]!.split(' ')
    expect(recipe).toContain('--ffmpeg')
    const args = recipe.map((arg, i) => (recipe[i - 1] === '--data' ? data : recipe[i - 1] === '--port' ? '0' : arg))
    const proc = new Running([...cli, 'serve', ...args], { env })
    const url = (await proc.waitFor('stderr', / serving api=(http:\/\/\S+)\/api\/ /, STEP_MS))[1]!
    const server = { proc, base: url, api: `${url}/api` }
    const key = readFileSync(join(root, 'data', 'admin.token'), 'utf8').trim()
    const api = (method: string, path: string, body?: unknown) => call(server, method, path, key, body)

    expect((await api('GET', '/health')).json).toMatchObject({ status: 'ok' })
    const media = await api('POST', '/devices/', { name: 'media', path: `${winRoot}\\` })
    expect([media.status, media.json.path]).toEqual([201, `${winRoot}\\`])
    const nas = await api('POST', '/devices/', { name: 'nas', path: '\\\\nas\\media\\' })
    expect(nas.status).toBe(201)
    // A path Windows' rules refuse gets the paths.ts message, not a 500.
    const verbatim = await api('POST', '/devices/', { name: 'verbatim', path: '\\\\?\\C:\\media\\' })
    expect(verbatim.status).toBe(400)
    // A drive letter that is not there (a network drive not mapped, for a program in a user's
    // logon as Wine runs it) is named in the status.
    const mapped = await api('POST', '/devices/', { name: 'mapped', path: 'M:\\media\\' })
    expect(mapped.status).toBe(201)
    const status = (await api('GET', '/devices/status/')).json
    const byId = (id: number) => status.find((s: any) => s.device === id)
    expect(byId(media.json.id)).toMatchObject({ online: true })
    expect(byId(nas.json.id)).toMatchObject({ online: false })
    expect(byId(mapped.json.id)).toMatchObject({ online: false, reason: 'the drive M: is not there (a disk not connected, or a network drive not mapped?)' })
    const page = await fetch(`${server.base}/`)
    expect([page.status, page.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/html')])

    expect(await server.proc.stop('SIGINT', STEP_MS)).toBe(0)
    const log = lines(server.proc.stderr)
    expect(log.at(-1)).toMatch(/ info stopped$/)
    // No warning but the missing ffmpeg's and the devices' refusal: the checkpoint thread
    // started (its worker found inside the executable), and no "permissions tightened" from modes
    // Windows does not have; the data folder's access list is written (Wine keeps none: the start
    // says so in an info line).
    expect(log.filter((l) => / warn /.test(l) && !/ warn (imports will make no proxies or probes|devices are not watched or scanned) /.test(l))).toEqual([])
    // The recipe's ffmpeg folder is not on this machine: said once, and serve goes on.
    expect(log.some((l) => / warn imports will make no proxies or probes reason="ffmpeg was not found in C:\\+ffmpeg\\+bin/.test(l))).toBe(true)
    expect(log.filter((l) => / (permissions|checkpoint)/.test(l))).toEqual([])
    expect(log.some((l) => / info data folder access lists are not kept under Wine path=/.test(l))).toBe(true)
    expect(existsSync(join(root, 'data', 'reelhouse.db'))).toBe(true)

    // A second start of the same folder: migrate has nothing to do and warns of nothing.
    const again = await runCli(['--data', data, 'migrate'], { cli, env })
    expect(again.code).toBe(0)
    expect(lines(again.stderr).filter((l) => / warn /.test(l))).toEqual([])
  }, 2 * STEP_MS)
})
