// A production's own ignore patterns (docs/cards.md, Ignored files; the production's `ignore_patterns`),
// pure: checked when a production is created or changed, then matched against each file the watcher
// or an import would take, by its path relative to its device's root.
//
// The language is gitignore's, the part of it a data wrangler needs, matched without case (NAS shares
// are written from macOS and Windows, whose file systems ignore case):
// - `*` any run of characters within one name, `?` one character, `[abc]`, `[a-z]`, `[!abc]` one of
//   (or none of) a set; `**` as a whole name: any number of folders, none too.
// - A pattern without `/` names a file or folder by its name wherever it lies: `*.lrf` ignores DJI's
//   low-resolution files everywhere, `Proxies` every folder (and file) called so, with all inside.
// - A pattern with `/` is a path from the device's root (a leading `/` changes nothing): it names the
//   file itself, or a folder above it and with it everything inside (`drop/night-shift/reference`,
//   `**/Exports/*.mov`).
// - A final `/` names folders only (`Renders/` ignores what lies inside folders called Renders, not
//   a file of that name).
// Relative to the device, not to the production's folders: a file is judged the same whichever
// way it comes (the watcher's drop folder, a storage root, an import by path), and a pattern names
// the same place whatever the production's roots are.
//
// Matching is a walk over the names, never a regular expression: its time is bounded by the
// pattern's length times the path's (no backtracking blow-up on a pattern of many stars).

export const MAX_PATTERNS = 100
export const MAX_PATTERN_LENGTH = 255

type Atom =
  | { any: true }
  | { one: true }
  | { char: string }
  | { set: string[]; ranges: [string, string][]; not: boolean }
type Segment = { globstar: true } | { atoms: Atom[] }
type Compiled = { text: string; segments: Segment[]; anchored: boolean; foldersOnly: boolean }

/** Why `pattern` is not a usable ignore pattern (in words, for a 400), or undefined. */
export function patternProblem(pattern: string): string | undefined {
  if (typeof pattern !== 'string') return 'A pattern is text.'
  if (pattern.length === 0) return 'A pattern may not be empty.'
  if (pattern.length > MAX_PATTERN_LENGTH) return `A pattern has at most ${MAX_PATTERN_LENGTH} characters.`
  if (pattern.includes('\0')) return 'A pattern may not hold a NUL character.'
  if (pattern.includes('\\')) return 'Separate folders with / (a backslash is not part of the pattern language).'
  const body = pattern.replace(/^\//, '').replace(/\/$/, '')
  if (body === '') return 'A pattern names something: / alone names the whole device.'
  for (const name of body.split('/')) {
    if (name === '') return 'A pattern has no empty names (two slashes in a row).'
    if (name === '.' || name === '..') return 'A pattern has no . or .. names.'
    if (name !== '**' && name.includes('**')) return '** stands alone between slashes (any number of folders).'
    const problem = atomsOf(name).problem
    if (problem) return problem
  }
  return undefined
}

/** The first problem of a list of patterns, with the index it is at. */
export function patternsProblem(patterns: readonly string[]): { index?: number; detail: string } | undefined {
  if (patterns.length > MAX_PATTERNS) return { detail: `At most ${MAX_PATTERNS} patterns.` }
  for (const [index, p] of patterns.entries()) {
    const detail = patternProblem(p)
    if (detail) return { index, detail }
  }
  return undefined
}

function atomsOf(name: string): { atoms: Atom[]; problem?: string } {
  const atoms: Atom[] = []
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!
    if (c === '*') {
      if (atoms.at(-1) && 'any' in atoms.at(-1)!) continue
      atoms.push({ any: true })
    } else if (c === '?') atoms.push({ one: true })
    else if (c === '[') {
      let j = i + 1
      const not = name[j] === '!' || name[j] === '^'
      if (not) j++
      const set: string[] = []
      const ranges: [string, string][] = []
      let closed = false
      for (let first = true; j < name.length; j++, first = false) {
        const d = name[j]!
        if (d === ']' && !first) {
          closed = true
          break
        }
        if (name[j + 1] === '-' && j + 2 < name.length && name[j + 2] !== ']') {
          // The ends as written (lowering them would make [0-Z] take `_` and `[`, and refuse [Z-a]);
          // a name's character is tested in both its cases (oneMatches).
          const from = d
          const to = name[j + 2]!
          if (from > to) return { atoms, problem: `The range ${d}-${name[j + 2]} runs backwards.` }
          ranges.push([from, to])
          j += 2
        } else set.push(d.toLowerCase())
      }
      if (!closed) return { atoms, problem: 'A [ opens a set of characters that no ] closes.' }
      atoms.push({ set, ranges, not })
      i = j
    } else atoms.push({ char: c.toLowerCase() })
  }
  return { atoms }
}

function compile(text: string): Compiled {
  const foldersOnly = text.endsWith('/')
  const body = text.replace(/^\//, '').replace(/\/$/, '')
  const names = body.split('/')
  return {
    text,
    anchored: names.length > 1 || text.startsWith('/') || body === '**',
    foldersOnly,
    segments: names.map((n) => (n === '**' ? { globstar: true as const } : { atoms: atomsOf(n).atoms })),
  }
}

const oneMatches = (a: Atom, c: string): boolean => {
  if ('one' in a) return true
  if ('char' in a) return a.char === c
  if ('set' in a) {
    const upper = c.toUpperCase()
    const inside =
      a.set.includes(c) || a.ranges.some(([from, to]) => (c >= from && c <= to) || (upper >= from && upper <= to))
    return inside !== a.not
  }
  return false
}

/** One name against one pattern name (lower case both): the two-pointer walk with the last star to go back to. */
function nameMatches(atoms: readonly Atom[], name: string): boolean {
  let a = 0
  let c = 0
  let star = -1
  let mark = 0
  while (c < name.length) {
    const atom = atoms[a]
    if (atom && 'any' in atom) {
      star = a++
      mark = c
    } else if (atom && oneMatches(atom, name[c]!)) {
      a++
      c++
    } else if (star >= 0) {
      a = star + 1
      c = ++mark
    } else return false
  }
  while (a < atoms.length && 'any' in atoms[a]!) a++
  return a === atoms.length
}

/**
 * Whether the pattern's names match the path's first k names for some k in [min, max]: the states
 * (pattern name, path name) reachable, a table of at most pattern × path entries.
 */
function prefixMatches(segments: readonly Segment[], names: readonly string[], min: number, max: number): boolean {
  const P = segments.length
  let states = new Set<number>([0]) // pattern index at path position 0
  for (let s = 0; s <= names.length; s++) {
    // Close over globstars: ** may match no name.
    for (const p of [...states]) for (let q = p; q < P && 'globstar' in segments[q]!; q++) states.add(q + 1)
    if (states.has(P) && s >= min && s <= max) return true
    if (s === names.length) break
    const next = new Set<number>()
    for (const p of states) {
      if (p >= P) continue
      const seg = segments[p]!
      if ('globstar' in seg) next.add(p)
      else if (nameMatches(seg.atoms, names[s]!)) next.add(p + 1)
    }
    if (!next.size) return false
    states = next
  }
  return false
}

export type IgnoreRules = {
  /** The pattern that names the file (its names from the device's root, the file's last), or undefined. */
  match(names: readonly string[]): string | undefined
}

/** The rules of a list of patterns (each checked by patternProblem; one that is not is never matched). */
export function ignoreRules(patterns: readonly string[]): IgnoreRules {
  const compiled = patterns.filter((p) => patternProblem(p) === undefined).map(compile)
  return {
    match(names) {
      if (!compiled.length || !names.length) return undefined
      const lower = names.map((n) => n.toLowerCase())
      const n = lower.length
      for (const c of compiled) {
        // Folders only: a prefix that stops before the file's own name.
        const max = c.foldersOnly ? n - 1 : n
        if (c.anchored) {
          if (prefixMatches(c.segments, lower, 1, max)) return c.text
          continue
        }
        const atoms = (c.segments[0] as { atoms: Atom[] }).atoms
        for (let k = 0; k < max; k++) if (nameMatches(atoms, lower[k]!)) return c.text
      }
      return undefined
    },
  }
}
