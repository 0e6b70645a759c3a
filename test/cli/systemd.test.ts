// The service files of docs/ stay runnable (issue 8, point 8): the systemd unit shipped as
// docs/reelhouse.service and the launchd plist of docs/operations.md start a real serve with
// their own arguments (only the data folder and the port swapped for a temporary folder and a
// free port) and stop on the signal they send; every `serve` command line in operations.md uses
// only flags `serve --help` documents; and the binary path is the one the docs install to.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { folders } from '../helpers/envelope.ts'
import { call, killAll, ROOT, runCli, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)
const dirs = folders()
afterAll(async () => {
  await killAll()
  dirs.cleanup()
})

const unit = readFileSync(join(ROOT, 'docs', 'reelhouse.service'), 'utf8')
const operations = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8')
const setting = (name: string) => [...unit.matchAll(new RegExp(`^${name}=(.*)$`, 'gm'))].map((m) => m[1]!)

/** The arguments with --data's and --port's values swapped for a temporary folder and port 0. */
function runnable(args: string[]) {
  const swapped = [...args]
  expect(swapped.indexOf('--data')).toBeGreaterThan(0)
  expect(swapped.indexOf('--port')).toBeGreaterThan(0)
  const data = join(dirs.make(), 'data')
  swapped[swapped.indexOf('--data') + 1] = data
  swapped[swapped.indexOf('--port') + 1] = '0'
  return { args: swapped, data }
}

/** Starts `bun src/main.ts` with the arguments, checks it serves its folder, and stops it with `signal`. */
async function serveAndStop(args: string[], signal: NodeJS.Signals) {
  const { args: swapped, data } = runnable(args)
  // startServe puts "serve" first, then these arguments, and no --data of its own.
  expect(swapped[0]).toBe('serve')
  const server = await startServe(undefined, {
    args: swapped.slice(1),
    cli: [process.execPath, join(ROOT, 'src', 'main.ts')],
  })
  expect(server.proc.stderr).toContain(`data=${data}`)
  expect((await call(server, 'GET', '/health', null)).status).toBe(200)
  expect(await server.proc.stop(signal)).toBe(0)
}

test('the unit runs the binary the docs install, on the folder systemd makes for it', () => {
  const [execStart, ...more] = setting('ExecStart')
  expect(more).toEqual([])
  // Split on spaces, as the test does below: no quoting for it to get wrong.
  expect(execStart).not.toMatch(/["'\\$%]/)
  const [binary, command, ...args] = execStart!.split(/\s+/)
  expect({ binary, command }).toEqual({ binary: '/usr/local/bin/reelhouse', command: 'serve' })
  expect(operations).toContain(`install -m 0755 dist/reelhouse ${binary}`)
  expect(args[args.indexOf('--data') + 1]).toBe(`/var/lib/${setting('StateDirectory')[0]}`)
  expect(setting('User')).toEqual(['reelhouse'])
})

test("the unit's ExecStart serves, and its KillSignal stops it cleanly", async () => {
  const [, ...args] = setting('ExecStart')[0]!.split(/\s+/)
  await serveAndStop(args, setting('KillSignal')[0] as NodeJS.Signals)
})

test("the launchd plist's ProgramArguments serve, and launchd's SIGTERM stops it cleanly", async () => {
  const plist = operations.match(/<key>ProgramArguments<\/key>\s*<array>([\s\S]*?)<\/array>/)
  expect(plist).not.toBeNull()
  const [binary, ...args] = [...plist![1]!.matchAll(/<string>([^<]*)<\/string>/g)].map((m) => m[1]!)
  expect(binary).toBe('/usr/local/bin/reelhouse')
  await serveAndStop(args, 'SIGTERM')
})

test('every serve command line in docs/operations.md uses flags serve --help documents', async () => {
  const help = (await runCli(['serve', '--help'])).stdout
  const documented = new Set([...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!))
  expect(documented).toContain('--log-format')
  const commandLines = operations.split('\n').filter((l) => /reelhouse(\.exe)? serve\b/.test(l))
  expect(commandLines.length).toBeGreaterThanOrEqual(4) // systemd, Windows, Synology, QNAP at least
  const used = new Set(commandLines.flatMap((l) => [...l.matchAll(/(?<=\s)--[a-z][a-z-]*/g)].map((m) => m[0])))
  expect([...used].filter((flag) => !documented.has(flag))).toEqual([])
})
