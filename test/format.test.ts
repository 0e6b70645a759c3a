// The code is formatted by Biome (biome.json: width 120, the house style), so that a change shows
// only what it changes: this fails when a file is not, naming it (`npx biome format --write src
// test bench build.ts` formats them). Strings and comments are not wrapped by a formatter; the
// lines over the width left are those.
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { ROOT } from './helpers/process.ts'

test('src, test, bench and build.ts are formatted as biome.json says', () => {
  const run = Bun.spawnSync(
    [join(ROOT, 'node_modules', '.bin', 'biome'), 'format', 'src', 'test', 'bench', 'build.ts'],
    { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' },
  )
  const out = `${run.stdout}${run.stderr}`
  const unformatted = [...out.matchAll(/^(\S+\.tsx?) format /gm)].map((m) => m[1])
  expect({ code: run.exitCode, unformatted }).toEqual({ code: 0, unformatted: [] })
})
