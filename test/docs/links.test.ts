// The README and docs/ stand alone in a clone: every link in them names a file of the repository
// (and a heading that file has), none leaves it, and none points at notes a clone does not have.
import { expect, test } from 'bun:test'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from '../helpers/process.ts'

const pages = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')

const anchorsOf = (file: string) =>
  new Set(
    [
      ...readFileSync(file, 'utf8')
        .replace(/^```[\s\S]*?^```/gm, '')
        .matchAll(/^#+ (.+)$/gm),
    ].map((m) => anchorOf(m[1]!)),
  )

/** Markdown links outside code: [text](target). */
const linksOf = (text: string) =>
  [
    ...text
      .replace(/^```[\s\S]*?^```/gm, '')
      .replace(/`[^`\n]*`/g, '')
      .matchAll(/\]\(([^)\s]+)\)/g),
  ].map((m) => m[1]!)

test('every page links only to files and headings of the repository', () => {
  const broken: string[] = []
  let checked = 0
  for (const page of pages) {
    const file = join(ROOT, page)
    for (const link of linksOf(readFileSync(file, 'utf8'))) {
      checked++
      if (/^[a-z]+:/i.test(link)) {
        // The only address allowed is the server a reader runs themselves.
        if (!link.startsWith('http://127.0.0.1:8000/')) broken.push(`${page}: ${link} leaves the repository`)
        continue
      }
      const [path, anchor] = link.split('#') as [string, string | undefined]
      const target = path === '' ? file : resolve(dirname(file), path)
      if (relative(ROOT, target).startsWith('..')) broken.push(`${page}: ${link} leaves the repository`)
      else if (!existsSync(target)) broken.push(`${page}: ${link} names no file`)
      else if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor))
        broken.push(`${page}: ${link} names no heading`)
    }
  }
  expect(checked).toBeGreaterThan(10)
  expect(broken).toEqual([])
})

test('no page refers to the notes of our own development, which a clone does not have', () => {
  for (const page of pages) {
    const text = readFileSync(join(ROOT, page), 'utf8')
    expect({ page, refs: text.match(/\.\.\/shared|service\.md|spec\/api\.md/g) ?? [] }).toEqual({ page, refs: [] })
  }
})
