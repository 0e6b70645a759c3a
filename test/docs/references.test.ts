// Every reference a comment in src/ makes resolves inside the repository: a reader of a clone can
// open it. Documents of the team's own (the contract the API was first written against, design
// notes) and issue numbers are not in a clone: a comment says the rule itself, or names the
// section of docs/ that does. A docs/ reference with a section ("docs/api.md, Import") must name
// a heading that file has.
import { expect, test } from 'bun:test'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT } from '../helpers/process.ts'

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return sources(path)
    return /\.(ts|tsx)$/.test(e.name) ? [path] : []
  })
}

const files = [...sources(join(ROOT, 'src')), join(ROOT, 'build.ts')].map((path) => ({
  path: relative(ROOT, path),
  text: readFileSync(path, 'utf8'),
}))

test('no comment cites a document outside the repository or an issue number', () => {
  const outside =
    /\bservice\.md\b|(?<!docs\/)\bapi\.md (section )?\d|\bspec\/|\.\.\/shared\/|\bshared\/design\b|\bowners\.md\b|(?<![\w/#-])[Ii]ssues? \d+/
  const found = files.flatMap(({ path, text }) =>
    text
      .split('\n')
      .flatMap((line, i) => (outside.test(line) ? [`${path}:${i + 1}: ${line.trim().slice(0, 120)}`] : [])),
  )
  expect(found).toEqual([])
})

test('every docs/ file a comment names exists, and every section it names is a heading there', () => {
  const headings = new Map<string, string[]>()
  const headingsOf = (doc: string) => {
    let list = headings.get(doc)
    if (!list) {
      const text = readFileSync(join(ROOT, doc), 'utf8')
      // A heading's title without what follows a colon or a parenthesis ("Devices: `/api/devices/`").
      list = [...text.matchAll(/^#{1,4} (.+)$/gm)].map((m) => m[1]!.split(/:|\s\(/)[0]!.trim())
      headings.set(doc, list)
    }
    return list
  }
  const broken: string[] = []
  for (const { path, text } of files) {
    for (const m of text.matchAll(/\b((?:docs\/[\w-]+|README)\.md)(?:, ([A-Z][^;).\n`]*))?/g)) {
      const doc = m[1]!
      if (!existsSync(join(ROOT, doc))) {
        broken.push(`${path}: ${doc} does not exist`)
        continue
      }
      const section = m[2]?.trim()
      // The section is named by the words after the comma that a heading's title begins ("docs/api.md,
      // Import, its members" names Import).
      if (
        section &&
        !headingsOf(doc).some((h) => section.startsWith(h) && !/[A-Za-z0-9]/.test(section[h.length] ?? ''))
      )
        broken.push(`${path}: ${doc} has no heading "${section}"`)
    }
  }
  expect(broken).toEqual([])
})
