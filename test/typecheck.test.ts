// The sources, tests and benchmarks type-check with the TypeScript of package.json (issue 27:
// the toolchain kept current is only worth something if a type error fails the suite).
import { expect, test } from 'bun:test'
import { join } from 'node:path'

test('tsc --noEmit finds no type error', () => {
  const root = join(import.meta.dir, '..')
  const run = Bun.spawnSync([join(root, 'node_modules', '.bin', 'tsc'), '--noEmit', '-p', root], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
  const said = `${run.stdout.toString()}${run.stderr.toString()}`
  expect(said).toBe('')
  expect(run.exitCode).toBe(0)
}, 120_000)
