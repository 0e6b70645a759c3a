// The way to the PostgreSQL catalogue, held: statements run through the data-access port
// (src/db/port.ts), whose work is driven synchronously on SQLite and awaited on PostgreSQL. Code
// that still runs statements synchronously by itself works only on SQLite: a drizzle builder's
// `.all()`, `.get()` or `.run()`, a transaction of its own (`.transaction(`, `committed(`), a raw
// statement on bun:sqlite (`$client`), or a port work run synchronously from such code
// (`runSync(`, SQLite only, the bridge while its callers are converted).
//
// The counts of those per file below may only go down: a file not listed may have none, and a
// listed one no more than its count. Lower a count when a file is converted (the test prints the
// files that now have fewer), and remove the file when it reaches zero. src/db/ is the port
// itself and is not counted.
import { expect, test } from 'bun:test'
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')
const PATTERN = /\$client|\.(?:all|get|run)\(\)|\.prepare\(|\.transaction\(|\bcommitted\(|\brunSync\(/g

/** The synchronous statement calls left outside src/db/, per file. */
const LEFT: Record<string, number> = {}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return /\.tsx?$/.test(entry.name) ? [path] : []
  })
}

/** The calls in `text` outside comments (a comment may name `.get()` without calling it). */
function count(text: string): number {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  return code.match(PATTERN)?.length ?? 0
}

test('no file runs more statements synchronously than it did: new code goes through the port', () => {
  const found: Record<string, number> = {}
  for (const path of sources(join(ROOT, 'src'))) {
    const name = relative(ROOT, path).split('\\').join('/')
    if (name.startsWith('src/db/')) continue
    const n = count(readFileSync(path, 'utf8'))
    if (n) found[name] = n
  }
  const over = Object.entries(found)
    .filter(([name, n]) => n > (LEFT[name] ?? 0))
    .map(([name, n]) => `${name}: ${n} (at most ${LEFT[name] ?? 0})`)
  const fewer = Object.entries(LEFT)
    .filter(([name, n]) => (found[name] ?? 0) < n)
    .map(([name, n]) => `${name}: ${found[name] ?? 0} (listed ${n})`)
  if (fewer.length)
    console.log(`converted since the list was written; lower these in ${import.meta.file}:\n${fewer.join('\n')}`)
  expect(over).toEqual([])
})

// A work that is called but neither yielded nor run does nothing, silently: calling a generator
// function only makes the generator. The history's writes are called from most services, so each
// call must be `yield* history.x(…)` or, from code not yet converted, `runSync(db, history.x(…))`.
const DROPPED_HISTORY =
  /(?<!yield\*\s*)(?<!runSync\(\s*[\w.]+,\s*)\bhistory(?:\(\))?\.(?:created|updated|deleted|record)\(/g

test('no history write is called and dropped: each is yielded or run', () => {
  const dropped: string[] = []
  for (const path of sources(join(ROOT, 'src'))) {
    const text = readFileSync(path, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '')
    for (const m of text.matchAll(DROPPED_HISTORY))
      dropped.push(`${relative(ROOT, path)}:${text.slice(0, m.index).split('\n').length}`)
  }
  expect(dropped).toEqual([])
})
