// The sources, tests and benchmarks type-check with the TypeScript of package.json (issue 27:
// the toolchain kept current is only worth something if a type error fails the suite). The web
// page (src/ui) is checked with its own settings: it runs in a browser, with Preact's JSX.
import { expect, test } from 'bun:test'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')

// One checker (--checkers 1): TypeScript's default of four checks the same program in four
// parts, each binding what it needs again; on the 2-core test machine, where other test files
// run beside this one, that took 10.3 s of CPU against 5.5 s for one, and no less time.
for (const project of ['.', 'src/ui']) {
  test(`tsc --noEmit -p ${project} finds no type error`, () => {
    const run = Bun.spawnSync(
      [join(root, 'node_modules', '.bin', 'tsc'), '--noEmit', '--checkers', '1', '-p', join(root, project)],
      { cwd: root, stdout: 'pipe', stderr: 'pipe' },
    )
    const said = `${run.stdout.toString()}${run.stderr.toString()}`
    expect(said).toBe('')
    expect(run.exitCode).toBe(0)
  }, 120_000)
}
