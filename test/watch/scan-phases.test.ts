// The scan task is named phases sharing one run (src/watch/scan/index.ts): walk, gather, decide,
// verify, apply, ingest, with run.ts for the run they share. Two rules, checked here on every file
// under src/watch/scan/ and on src/watch/scan.task.ts (the entry importers know):
// - No function is longer than MAX_LINES lines, from its first line to its closing brace (a
//   closure written inline counts in its parent too; a named helper is a function of its own).
// - Feature code (src/modules/) is imported as values only by the phases that write the
//   catalogue through it, apply.ts and ingest.ts, and by run.ts, which makes the run and holds
//   the reads of features the other phases share (our own output folders, the project assets on
//   the device). walk, gather, decide, verify and index import feature types at most: they work
//   on what the run holds and on the services in its deps.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../helpers/process.ts'

const MAX_LINES = 120
/** The files that may import values from src/modules/. */
const WRITERS = ['src/watch/scan/apply.ts', 'src/watch/scan/ingest.ts', 'src/watch/scan/run.ts']

/**
 * The text with comments, strings, template literals and regular expressions blanked (newlines
 * kept): what is left are the brackets of the code, at their places.
 */
function codeOnly(text: string): string {
  const out = text.split('')
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' '
  }
  /** The end (exclusive) of the string or template literal opening at `i`. */
  const stringEnd = (i: number): number => {
    const quote = text[i]!
    let j = i + 1
    while (j < text.length && text[j] !== quote) {
      if (text[j] === '\\') j++
      else if (quote === '`' && text[j] === '$' && text[j + 1] === '{') {
        // A template's `${…}`: skipped whole, strings and braces inside it too.
        let depth = 0
        for (j++; j < text.length; j++) {
          if (text[j] === '{') depth++
          else if (text[j] === '}' && --depth === 0) break
          else if (text[j] === "'" || text[j] === '"' || text[j] === '`') j = stringEnd(j) - 1
        }
      }
      j++
    }
    return j + 1
  }
  let last = '' // the last character of code before here (not space)
  for (let i = 0; i < text.length; ) {
    const c = text[i]!
    const next = text[i + 1]
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i)
      const to = end === -1 ? text.length : end
      blank(i, to)
      i = to
    } else if (c === '/' && next === '*') {
      const to = text.indexOf('*/', i + 2) + 2
      blank(i, to)
      i = to
    } else if (c === "'" || c === '"' || c === '`') {
      const to = stringEnd(i)
      blank(i + 1, to - 1)
      i = to
      last = c
    } else if (
      c === '/' &&
      (last === '' || '(,=:[!&|?{};+-*%<>~^'.includes(last) || /\breturn\s*$/.test(text.slice(0, i)))
    ) {
      // A regular expression (where a value may begin), to its closing slash outside a class.
      let j = i + 1
      let inClass = false
      for (; j < text.length && text[j] !== '\n'; j++) {
        if (text[j] === '\\') j++
        else if (text[j] === '[') inClass = true
        else if (text[j] === ']') inClass = false
        else if (text[j] === '/' && !inClass) break
      }
      blank(i + 1, j)
      i = j + 1
      last = '/'
    } else {
      if (!/\s/.test(c)) last = c
      i++
    }
  }
  return out.join('')
}

const OPEN: Record<string, string> = { '(': ')', '[': ']', '{': '}' }

/** The index just past the bracket that closes the one at `i`. */
function closing(code: string, i: number): number {
  const stack: string[] = []
  for (let j = i; j < code.length; j++) {
    const c = code[j]!
    if (OPEN[c]) stack.push(OPEN[c])
    else if (c === ')' || c === ']' || c === '}') {
      stack.pop()
      if (stack.length === 0) return j + 1
    }
  }
  return code.length
}

/**
 * The index just past a function's body, its parameters' `(` at `i`; undefined when what follows
 * them is no body (a call, a signature in a type). A return type is passed over (a `{` after `:`,
 * `|`, `&`, `<` or `,` opens an object type there, not the body). An arrow's body is a block or an
 * expression (to a `,`, `;` or closing bracket at its depth, or a line break where the next line
 * is not indented past the function's first).
 */
function bodyEnd(code: string, i: number, indent: number): number | undefined {
  const arrowBody = (j: number) => {
    while (code[j] === ' ' || code[j] === '\n') j++
    return code[j] === '{' ? closing(code, j) : expressionEnd(code, j, indent)
  }
  let j = closing(code, i)
  while (code[j] === ' ' || code[j] === '\n') j++
  if (code[j] === '{') return closing(code, j)
  if (code.startsWith('=>', j)) return arrowBody(j + 2)
  if (code[j] !== ':') return undefined
  let angle = 0
  for (j++; j < code.length; j++) {
    const c = code[j]!
    if (c === '=' && code[j + 1] === '>') {
      if (angle === 0) return arrowBody(j + 2)
      j++
    } else if (c === '<') angle++
    else if (c === '>') angle--
    else if (c === '(' || c === '[') j = closing(code, j) - 1
    else if (c === '{') {
      const before = code.slice(0, j).trimEnd().at(-1)
      if (angle === 0 && (before === undefined || !':|&<,('.includes(before))) return closing(code, j)
      j = closing(code, j) - 1
    } else if (angle === 0 && ';,)]}='.includes(c)) return undefined
  }
  return undefined
}

function expressionEnd(code: string, i: number, indent: number): number {
  for (let j = i; j < code.length; j++) {
    const c = code[j]!
    if (OPEN[c]) j = closing(code, j) - 1
    else if (c === ',' || c === ';' || c === ')' || c === ']' || c === '}') return j
    else if (c === '\n') {
      // The next line with code on it (comments are blank by now): not indented past the first, the end.
      const rest = /\S/.exec(code.slice(j))
      if (!rest) return j
      const at = j + rest.index
      if (at - code.lastIndexOf('\n', at) - 1 <= indent) return j
    }
  }
  return code.length
}

const NOT_NAMES = new Set(['if', 'for', 'while', 'switch', 'catch', 'return', 'function', 'await', 'new', 'typeof'])

/** Each function of `text` (declarations, arrows bound to a name, methods) with its length in lines. */
function functionLengths(text: string): { name: string; line: number; lines: number }[] {
  const code = codeOnly(text)
  const lineAt = (index: number) => code.slice(0, index).split('\n').length
  const found: { name: string; line: number; lines: number }[] = []
  const starts = [
    // function name(…) / function name<T>(…)
    /\bfunction\b\s*\*?\s*([A-Za-z_$][\w$]*)\s*(?:<[^(]*>)?\s*(?=\()/g,
    // const name = (…) => / const name = async x =>
    /\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?=\(|[A-Za-z_$][\w$]*\s*=>)/g,
    // name: (…) => (a property), name(…) { (a method), at the start of a line
    /^[ \t]*(?:async\s+)?(?:get\s+|set\s+)?([A-Za-z_$][\w$]*)\s*(?::\s*(?:async\s+)?)?(?:<[^(]*>)?(?=\()/gm,
  ]
  for (const pattern of starts)
    for (const m of code.matchAll(pattern)) {
      const name = m[1]!
      if (NOT_NAMES.has(name)) continue
      let open = m.index! + m[0].length
      if (code[open] !== '(') {
        // A bare parameter: x => …
        open = code.indexOf('=>', open)
      }
      const lineStart = code.lastIndexOf('\n', m.index!) + 1
      const indent = code.slice(lineStart).length - code.slice(lineStart).trimStart().length
      const end = code[open] === '(' ? bodyEnd(code, open, indent) : expressionEnd(code, open + 2, indent)
      if (end === undefined) continue
      found.push({ name, line: lineAt(m.index!), lines: lineAt(end - 1) - lineAt(m.index!) + 1 })
    }
  return found.sort((a, b) => a.line - b.line)
}

/** Value imports (not `import type`, not every name a type) of src/modules/, by line. */
function featureImports(text: string): { line: number; from: string }[] {
  const found: { line: number; from: string }[] = []
  for (const m of text.matchAll(/^import\s+(type\s+)?([\s\S]*?)\s*from\s*['"]([^'"]+)['"]/gm)) {
    const [, typeOnly, names, from] = m
    if (typeOnly || !/(^|\/)modules\//.test(from!)) continue
    const inner = /\{([\s\S]*)\}/.exec(names!)
    const values = inner
      ? inner[1]!
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n !== '' && !n.startsWith('type '))
      : [names!]
    if (values.length) found.push({ line: text.slice(0, m.index).split('\n').length, from: from! })
  }
  return found
}

const scanFiles = () =>
  [
    ...[...new Bun.Glob('src/watch/scan/**/*.ts').scanSync({ cwd: ROOT })].map((f) => f.split('\\').join('/')),
    'src/watch/scan.task.ts',
  ].sort()

test(`no function of the scan's phases is longer than ${MAX_LINES} lines`, () => {
  const files = scanFiles()
  expect(files).toContain('src/watch/scan/walk.ts')
  const long = files.flatMap((f) =>
    functionLengths(readFileSync(join(ROOT, f), 'utf8'))
      .filter((fn) => fn.lines > MAX_LINES)
      .map((fn) => `${f}:${fn.name}:${fn.lines}`),
  )
  expect(long).toEqual([])
})

test('only the phases that write (and run.ts) import values from src/modules/', () => {
  const found = scanFiles()
    .filter((f) => !WRITERS.includes(f))
    .flatMap((f) => featureImports(readFileSync(join(ROOT, f), 'utf8')).map((i) => `${f}:${i.line}: ${i.from}`))
  expect(found).toEqual([])
})

test('the guards see what they look for', () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  const x${i} = '{' + "(" + \`\${i}}\``).join('\n')
  const sample = [
    `export async function long(a: { b: number }): Promise<{ c: string }> {`, // 1
    body(119),
    '}', // 121 lines
    'const short = (x: number) => {', // 122
    '  return /[{(]/.test(String(x)) // a { in a comment',
    '}',
    'const arrow = async (rows: string[]) =>', // 125
    '  rows.map((r) => r)',
    '',
    '// the rows, by id',
    'const rows = {', // 129
    '  get(id: number) {',
    body(120),
    '  },', // get: 122 lines
    '  take: (r: number) => {',
    '    rows.get(r)',
    '  },',
    '}',
    'go(1)',
  ].join('\n')
  expect(functionLengths(sample).map((f) => `${f.name}:${f.line}:${f.lines}`)).toEqual([
    'long:1:121',
    'short:122:3',
    'arrow:125:2',
    'get:130:122',
    'take:252:3',
  ])
  const imports = [
    "import { assetsBeingMoved } from '../../modules/assetimport/service.ts'",
    "import type { MediaAssets } from '../../modules/mediaassets/service.ts'",
    "import { type ScanRow } from '../../modules/mediaassets/service.ts'",
    'import {',
    '  type ProjectAssets,',
    '  projectsOnDevice,',
    "} from '../../modules/projectassets/service.ts'",
    "import { isInside } from '../../storage/paths.ts'",
  ].join('\n')
  expect(featureImports(imports)).toEqual([
    { line: 1, from: '../../modules/assetimport/service.ts' },
    { line: 4, from: '../../modules/projectassets/service.ts' },
  ])
})
