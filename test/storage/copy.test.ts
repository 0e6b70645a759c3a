// copyTree's small-file path at its edges: a file of the walked size is copied with one read that
// asks for one byte more than its size (the end of the file is not read for), so sizes around the
// buffer's, empty files and files that shrank after the walk are checked here; names are written
// into one reused buffer per copy, so names of every length and script are too. And the check by
// hash of every file, small and large: a copy changed between its write and its read-back fails.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { close } from '../../src/storage/dirfd.ts'
import { copyTree, listTree, openBeneath } from '../../src/storage/fs.ts'
import { tempDir } from '../helpers/temp.ts'
import { makeTree, snapshot } from '../helpers/tree.ts'

let root: string
beforeEach(() => void (root = tempDir('reelhouse-copy-')))
afterEach(() => rmSync(root, { recursive: true, force: true }))

const MiB = 1024 * 1024

/**
 * Copies root/src into root/dst after `between` (run after the walk); the error message, or
 * 'copied'. `onWritten` is copyTree's: told each file once written, before it is read back.
 */
async function copy(between?: () => void, onWritten?: (rel: string) => void) {
  const entries = await listTree(join(root, 'src'))
  const source = openBeneath(root, 'src')
  const parent = openBeneath(root, '')
  between?.()
  try {
    return await copyTree(source, { parent, name: 'dst', path: join(root, 'dst') }, { entries, onWritten }).then(
      () => 'copied',
      (e: Error) => e.message,
    )
  } finally {
    close(source)
    close(parent)
  }
}

test('files of every size up to the large-file threshold, and names of every length and script, are copied whole', async () => {
  makeTree(join(root, 'src'), {
    empty: '',
    one: 'x',
    'sixteen.bin': 16384,
    // The small-file buffer is 8 MiB: a file one byte short of it is the largest read in one call.
    'below.bin': 8 * MiB - 1,
    'near/below-2.bin': 8 * MiB - 2,
    'été/日本語の名前.txt': 'utf-8',
    [`${'n'.repeat(255)}`]: 'the longest name',
    [`${'é'.repeat(127)}`]: '254 bytes of name',
    'a/b/c/short': 'after a long name, a short one: no byte of the longer name is left in the buffer',
  })
  expect(await copy()).toBe('copied')
  expect(snapshot(join(root, 'dst'))).toEqual(snapshot(join(root, 'src')))
})

test('a small file that shrank after the walk fails the copy (its size is checked, not only a growth)', async () => {
  makeTree(join(root, 'src'), { 'shrinks.bin': 16384 })
  expect(await copy(() => truncateSync(join(root, 'src', 'shrinks.bin'), 1000))).toBe(
    'size check failed for shrinks.bin: 1000 of 16384 bytes copied',
  )
})

test('an empty file that got bytes after the walk fails the copy', async () => {
  makeTree(join(root, 'src'), { empty: '' })
  expect(await copy(() => truncateSync(join(root, 'src', 'empty'), 10))).toBe(
    'size check failed for empty: 1 of 0 bytes copied',
  )
})

test('every file is hashed as read and read back: the hashes are those of the files, small and large', async () => {
  makeTree(join(root, 'src'), { empty: '', 'a/small.txt': 'small', 'a/b/large.bin': 8 * MiB + 3 })
  const entries = await listTree(join(root, 'src'))
  const source = openBeneath(root, 'src')
  const parent = openBeneath(root, '')
  try {
    const copied = await copyTree(source, { parent, name: 'dst', path: join(root, 'dst') }, { entries })
    const xxh = (rel: string) =>
      Bun.hash
        .xxHash64(readFileSync(join(root, 'dst', rel)), 0n)
        .toString(16)
        .padStart(16, '0')
    expect(Object.fromEntries(copied.hashes)).toEqual({
      empty: xxh('empty'),
      'a/small.txt': xxh('a/small.txt'),
      'a/b/large.bin': xxh('a/b/large.bin'),
    })
    expect(xxh('empty')).toBe('ef46db3751d8e999')
  } finally {
    close(source)
    close(parent)
  }
})

test('a copy changed between its write and its read-back fails the copy, naming the file; the source stays as it was', async () => {
  makeTree(join(root, 'src'), { 'a/first.txt': 'first', 'a/clip.mov': 16384, 'a/b/large.mxf': 8 * MiB })
  const before = snapshot(join(root, 'src'))
  const outcome: Record<string, string> = {}
  for (const changed of ['a/clip.mov', 'a/b/large.mxf']) {
    rmSync(join(root, 'dst'), { recursive: true, force: true })
    // Another writer changes one byte of the copy, in the middle, once it is written.
    const onWritten = (rel: string) => {
      if (rel !== changed) return
      const path = join(root, 'dst', rel)
      const bytes = readFileSync(path)
      bytes[bytes.length >> 1]! ^= 0xff
      writeFileSync(path, bytes)
    }
    outcome[changed] = (await copy(undefined, onWritten)).replace(/[0-9a-f]{16}/g, 'HASH')
  }
  expect(outcome).toEqual({
    'a/clip.mov':
      'hash check failed for a/clip.mov: the copy read back has xxh64 HASH, the bytes read from the source HASH',
    'a/b/large.mxf':
      'hash check failed for a/b/large.mxf: the copy read back has xxh64 HASH, the bytes read from the source HASH',
  })
  expect(snapshot(join(root, 'src'))).toEqual(before)
})
