// One serve per data folder (issue 27, point 5): two serves started at the same moment on one
// folder, many times, on a fresh folder and on one whose serve.pid names a process that died:
// each time exactly one serves, and the other stops with the documented line and exit code 1.
// test/helpers/claim-barrier.ts makes them claim at the same moment too, which plain starts, some
// milliseconds apart, seldom do.
import { afterAll, afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { tempDir } from '../helpers/app.ts'
import { killAll, lines, ROOT, Running, TEST_TIMEOUT_MS } from '../helpers/process.ts'

// Rounds of child processes on a loaded machine: room for all of them, still bounded.
setDefaultTimeout(TEST_TIMEOUT_MS)

const dirs: string[] = []
afterEach(() => killAll())
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const ROUNDS = 10
const starting = (data: string) =>
  expect.stringMatching(new RegExp(`^\\S+Z info ${RegExp.escape(`reelhouse ${pkg.version} starting data=${data}`)}$`))

/** What became of one serve: 'serving', or the code it exited with. */
const outcome = (proc: Running) =>
  proc.waitFor('stderr', / serving api=/).then(
    () => 'serving' as const,
    () => proc.exitCode,
  )

/** Two serves on `data` started together: the one serving, the other's exit and lines; then it stops. */
async function race(data: string) {
  const barrier = tempDir('reelhouse-claim-barrier-')
  dirs.push(barrier)
  const cli = [
    process.execPath,
    '--preload',
    join(ROOT, 'test', 'helpers', 'claim-barrier.ts'),
    join(ROOT, 'src', 'main.ts'),
  ]
  const env = { CLAIM_BARRIER: barrier, CLAIM_PARTIES: '2' }
  const both = [0, 1].map(() => new Running([...cli, 'serve', '--port', '0', '--data', data], { env }))
  const outcomes = await Promise.all(both.map(outcome))
  const winner = both[outcomes.indexOf('serving')]
  const loser = both.find((p) => p !== winner)!
  const seen = {
    outcomes: outcomes.toSorted(),
    loser: { stdout: loser.stdout, stderr: lines(loser.stderr) },
    // The file names the one serving, and no claim of either is left beside it.
    claim: readFileSync(join(data, 'serve.pid'), 'utf8'),
    litter: readdirSync(data).filter((n) => n.startsWith('serve.pid.')),
    // Both came to the point of claiming: the loser lost there, not at the look before it.
    met: readdirSync(barrier).toSorted(),
  }
  expect(seen).toEqual({
    outcomes: [1, 'serving'],
    loser: {
      stdout: '',
      stderr: [starting(data), `reelhouse: another reelhouse serve (pid ${winner?.child.pid}) is using ${data}`],
    },
    claim: `${winner?.child.pid}\n`,
    litter: [],
    met: both.map((p) => String(p.child.pid)).toSorted(),
  })
  expect(await winner!.stop()).toBe(0)
}

test(`${ROUNDS} rounds of two serves started together on a fresh folder: one serves, the other says who does and exits 1`, async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const data = tempDir('reelhouse-claim-')
    dirs.push(data)
    await race(data)
  }
})

test(`${ROUNDS} rounds of two serves started together on a folder whose serve.pid names a process that died: one takes it over`, async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const data = tempDir('reelhouse-claim-stale-')
    dirs.push(data)
    const dead = Bun.spawn(['true'])
    await dead.exited
    writeFileSync(join(data, 'serve.pid'), `${dead.pid}\n`)
    await race(data)
  }
})
