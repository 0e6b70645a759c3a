// The log on the process's real stderr (src/util/log.ts): request lines (infoBatched) are held
// until the end of the event loop's turn and written together, never after a later line of
// another kind, and never lost by an exit. A child process writes its stderr to a file and reads
// that file itself (/proc/self/fd/2) at each step, printing what it found on stdout.
import { afterAll, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { ROOT } from '../helpers/process.ts'

const dir = tempDir('reelhouse-log-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs `body` after `log = createLog('text')` in a child; its stdout (JSON lines) and its stderr file's lines. */
function child(name: string, body: string) {
  const script = join(dir, `${name}.ts`)
  const stderr = join(dir, `${name}.log`)
  writeFileSync(
    script,
    `import { createLog } from ${JSON.stringify(join(ROOT, 'src/util/log.ts'))}
import { readFileSync } from 'node:fs'
const log = createLog('text')
/** The messages of stderr's lines so far, with their n. */
const written = () => readFileSync('/proc/self/fd/2', 'utf8').split('\\n').filter(Boolean).map((l) => l.split(' ').slice(2).join(' '))
const turn = () => new Promise((resolve) => setImmediate(resolve))
${body}`,
  )
  const run = Bun.spawnSync([process.execPath, script], { stdout: 'pipe', stderr: Bun.file(stderr), timeout: 60_000 })
  const seen = run.stdout
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
  const lines = readFileSync(stderr, 'utf8').split('\n').filter(Boolean)
  return { code: run.exitCode, seen, lines }
}

test('request lines wait for the end of the turn; another line writes them first; the exit writes the last ones', () => {
  const { code, seen, lines } = child(
    'order',
    `
log.infoBatched('request', { n: 1 })
log.infoBatched('request', { n: 2 })
console.log(JSON.stringify(written()))
log.warn('event')
console.log(JSON.stringify(written()))
log.infoBatched('request', { n: 3 })
await turn()
console.log(JSON.stringify(written()))
log.infoBatched('request', { n: 4 })
// The process's exit in the middle of a turn: what the log hooked on it writes the held line at
// once, before the turn could end (the last print shows it there); the code is the process's own.
process.exitCode = 3
process.emit('exit', 3)
console.log(JSON.stringify(written()))
`,
  )
  expect(code).toBe(3)
  expect(seen).toEqual([
    [],
    ['request n=1', 'request n=2', 'event'],
    ['request n=1', 'request n=2', 'event', 'request n=3'],
    ['request n=1', 'request n=2', 'event', 'request n=3', 'request n=4'],
  ])
  expect(lines.map((l) => l.split(' ').slice(1).join(' '))).toEqual([
    'info request n=1',
    'info request n=2',
    'warn event',
    'info request n=3',
    'info request n=4',
  ])
})

test('an uncaught error still has the held lines written, after its report', () => {
  const { code, lines } = child(
    'crash',
    `
log.infoBatched('request', { n: 1 })
throw new Error('boom')
`,
  )
  expect(code).toBe(1)
  expect(lines.some((l) => l.includes('boom'))).toBe(true)
  expect(lines.filter((l) => l.includes(' info request '))).toEqual([expect.stringMatching(/ info request n=1$/)])
})

test('64 KiB of held lines are written without waiting for the end of the turn', () => {
  const { seen } = child(
    'full',
    `
const path = '/' + 'x'.repeat(100)
for (let i = 0; i < 1000; i++) log.infoBatched('request', { path, i })
console.log(JSON.stringify(written().length))
`,
  )
  // Lines of about 150 bytes: written 64 KiB at a time, 400-odd lines each.
  expect(seen[0]).toBeGreaterThan(400)
  expect(seen[0]).toBeLessThan(1000)
})
