// The shape of the code that a reader relies on, checked: no two files under src/ import each other
// by any path (type imports too: a circle of types is a circle a reader follows all the same), and
// the composition root (src/core.ts) builds its parts in the order of their dependencies, with no
// getter and no variable filled in later standing in for a part not built yet.
import { expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { ROOT } from './helpers/process.ts'

/** Relative imports and re-exports of a file: `import ... from './x.ts'`, `export ... from`, `import './x.ts'`. */
const IMPORT = /^\s*(?:import|export)\s+(?:type\s+)?(?:[\s\S]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm

function graph(files: Map<string, string>): Map<string, string[]> {
  const edges = new Map<string, string[]>()
  for (const [file, text] of files) {
    const to: string[] = []
    for (const m of text.matchAll(IMPORT)) {
      const target = normalize(join(dirname(file), m[1]!))
        .split('\\')
        .join('/')
      if (files.has(target)) to.push(target)
    }
    edges.set(file, to)
  }
  return edges
}

/** Every circle as one of its shortest paths, found from each file in turn (a handful of files each). */
function circles(edges: Map<string, string[]>): string[] {
  const found = new Set<string>()
  for (const start of [...edges.keys()].sort()) {
    // Breadth first from start's imports back to start: the shortest circle through start.
    const from = new Map<string, string>()
    const queue = [...(edges.get(start) ?? [])]
    for (const f of queue) from.set(f, start)
    while (queue.length) {
      const file = queue.shift()!
      if (file === start) break
      for (const next of edges.get(file) ?? [])
        if (!from.has(next)) {
          from.set(next, file)
          queue.push(next)
        }
    }
    if (!from.has(start)) continue
    const path = [start]
    for (let at = from.get(start)!; at !== start; at = from.get(at)!) path.unshift(at)
    // The same circle seen from another of its files: named from its smallest file.
    const i = path.indexOf([...path].sort()[0]!)
    const named = [...path.slice(i), ...path.slice(0, i)]
    found.add([...named, named[0]].join(' -> '))
  }
  return [...found].sort()
}

test('no import circle under src/ (type imports included)', () => {
  const files = new Map(
    [...new Bun.Glob('src/**/*.{ts,tsx}').scanSync({ cwd: ROOT })]
      .map((f) => f.split('\\').join('/'))
      .map((f) => [f, readFileSync(join(ROOT, f), 'utf8')] as const),
  )
  expect(files.size).toBeGreaterThan(100)
  expect(circles(graph(files))).toEqual([])
})

test('the circle finder finds a circle, through types and re-exports', () => {
  const files = new Map([
    ['src/a.ts', "import { b } from './b.ts'\n"],
    ['src/b.ts', "import type {\n  C,\n} from './sub/c.ts'\n"],
    ['src/sub/c.ts', "export { a } from '../a.ts'\nimport './d.ts'\n"],
    ['src/sub/d.ts', "import { x } from 'elysia'\n"],
  ])
  expect(circles(graph(files))).toEqual(['src/a.ts -> src/b.ts -> src/sub/c.ts -> src/a.ts'])
})

test('src/core.ts has no getter and no late variable, and builds the runner before what queues through it', () => {
  const core = readFileSync(join(ROOT, 'src/core.ts'), 'utf8')
  expect(core).not.toMatch(/^\s*get \w+\(\)/m)
  expect(core).not.toMatch(/^\s*let /m)
  const at = (text: string) => {
    const i = core.indexOf(text)
    expect(i).toBeGreaterThan(-1)
    return i
  }
  expect(at('const runner = createRunner(')).toBeLessThan(at('const projects = createProjectAssets('))
  expect(at('const watch')).toBeLessThan(at('const devices = createDevices('))
  expect(at('const projects = createProjectAssets(')).toBeLessThan(at('runner.handle('))
  expect(at('const imports = createImports(')).toBeLessThan(at('runner.handle('))
  expect(existsSync(join(ROOT, 'src/core.ts'))).toBe(true)
})
