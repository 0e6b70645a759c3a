// The README's first commands work when pasted in order after `npm start` (issue 8, point 1):
// its "Start in a minute" shell blocks run, as written, by bash in a fresh folder whose ./data a
// fresh serve uses, as `npm start` would. What differs from a user's session, and only this: the
// server listens on a free port (the README's http://127.0.0.1:8000 is replaced by it), the block
// that starts it is not run, `npm run [-s] reelhouse -- ARGS` runs package.json's own
// "reelhouse" script (with this bun and this checkout's src/main.ts) through a shell function,
// and the password `user passwd` asks for comes on stdin as PASSWORD, which the README's curl uses.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { tempDir } from '../helpers/app.ts'
import { cleanEnv, killAll, ROOT, type Server, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const ORIGIN = 'http://127.0.0.1:8000'

/** The ```sh blocks of the section under `## heading`, in order. */
function shellBlocks(heading: string): string[] {
  const start = README.indexOf(`\n## ${heading}\n`)
  expect(start).toBeGreaterThan(-1)
  const end = README.indexOf('\n## ', start + 1)
  const section = README.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
}

/** `npm run [-s] reelhouse -- ARGS` as npm runs it: the script's words, then ARGS. */
function npmFunction() {
  const script = (pkg.scripts as Record<string, string>).reelhouse!
  const words = script.split(' ')
  expect(words.slice(0, 2)).toEqual(['bun', 'src/main.ts'])
  const command = [process.execPath, join(ROOT, 'src', 'main.ts'), ...words.slice(2)].map((w) => `'${w}'`).join(' ')
  return `npm() {
  [ "$1" = run ] || { echo "the test's npm runs only scripts, not: npm $*" >&2; return 1; }; shift
  [ "$1" = -s ] && shift
  [ "$1" = reelhouse ] && [ "$2" = -- ] || { echo "the test's npm knows only: npm run reelhouse --, not: $*" >&2; return 1; }; shift 2
  ${command} "$@"
}`
}

let server: Server
let cwd: string

beforeAll(async () => {
  cwd = tempDir('reelhouse-readme-')
  // As `npm start` runs it: package.json's start script, in the folder the user is in.
  const start = pkg.scripts.start.split(' ')
  expect(start.slice(0, 3)).toEqual(['bun', 'src/main.ts', 'serve'])
  server = await startServe(undefined, { cwd, args: [...start.slice(3), '--port', '0'] })
})
afterAll(() => killAll())

test('the README starts the server with npm start, and its setup commands pasted in order work on the same catalogue', async () => {
  const [first, ...blocks] = shellBlocks('Start in a minute')
  expect(first).toBe('npm install && npm start\n')
  const text = blocks.join('')
  for (const step of [
    'npm run reelhouse -- user add',
    'token create',
    'user list',
    'user passwd ana',
    'curl -u ana:PASSWORD',
  ])
    expect(text).toContain(step)

  const script = ['set -eu', npmFunction(), ...blocks].join('\n').replaceAll(ORIGIN, server.base)
  const bash = Bun.spawn(['bash', '-c', script], {
    cwd,
    env: cleanEnv(),
    stdin: new Blob(['PASSWORD\n']),
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: TEST_TIMEOUT_MS - 10_000,
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(bash.stdout).text(),
    new Response(bash.stderr).text(),
    bash.exited,
  ])
  // Each command's data= line, wherever it begins: curl's progress meter (on stderr, as the
  // output is not a terminal) ends without a newline, so the next command's line may follow it on
  // the same line (the cause of an occasional 3 of 4 before).
  const dataLines = [...stderr.matchAll(/data=(\S+)/g)].map((m) => m[0])
  if (code !== 0 || dataLines.length !== 4) console.error(`README output:\n${stdout}\n${stderr}`)
  expect(code).toBe(0)
  // Every command said the folder the server uses, and no request was refused.
  const data = join(cwd, 'data')
  expect(server.proc.stderr).toContain(`data=${data}`)
  expect(dataLines).toEqual([`data=${data}`, `data=${data}`, `data=${data}`, `data=${data}`])
  expect(stdout).not.toContain('"errors"')
  // The curls listed the (empty) devices: with admin's key, the new user's, and her password.
  expect(stdout.split('\n').filter((l) => l.startsWith('[]'))).toHaveLength(3)
  expect(stdout).toContain('password of ana set\n')
  expect(stdout).toContain('ana\n  permissions  browser.add_device, browser.add_production\n')
})
