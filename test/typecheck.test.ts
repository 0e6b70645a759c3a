// The sources, tests and benchmarks type-check with the TypeScript of package.json (issue 27:
// the toolchain kept current is only worth something if a type error fails the suite). The web
// page (src/ui) is checked with its own settings: it runs in a browser, with Preact's JSX.
import { expect, test } from 'bun:test'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')

for (const project of ['.', 'src/ui']) {
  test(`tsc --noEmit -p ${project} finds no type error`, () => {
    const run = Bun.spawnSync([join(root, 'node_modules', '.bin', 'tsc'), '--noEmit', '-p', join(root, project)], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
    const said = `${run.stdout.toString()}${run.stderr.toString()}`
    expect(said).toBe('')
    expect(run.exitCode).toBe(0)
  }, 120_000)
}
