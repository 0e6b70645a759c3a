// The macOS-only file work, as far as Linux can check it without faking macOS: fcloneat (APFS
// clones, fs.ts copyTree) answers ENOSYS here and makes nothing, so copies stay byte copies with
// the result they always had; and the choice renameOrLink (file.ts) makes between a rename that
// refuses to replace, a hard link, and check-then-rename (exFAT/FAT cards, SMB on macOS) is the
// pure function renameFallback, tested on every pair of answers that matters. The calls
// themselves on a Mac (fclonefileat, renameatx_np answering ENOTSUP, linkat answering ENOTSUP or
// EPERM) were never run: there is no Mac here, and no FAT or FUSE mount either.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { chmodSync, existsSync, lstatSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  AT_FDCWD,
  CLONE_NOFOLLOW,
  CLONE_NOOWNERCOPY,
  DIR_FLAGS,
  E,
  O,
  cName,
  close,
  fcloneat,
  openat,
} from '../../src/storage/dirfd.ts'
import { renameFallback } from '../../src/storage/file.ts'
import { copyTree, listTree, openBeneath } from '../../src/storage/fs.ts'
import { tempDir } from '../helpers/temp.ts'
import { makeTree, snapshot } from '../helpers/tree.ts'

let root: string
beforeEach(() => void (root = tempDir('reelhouse-macos-calls-')))
afterEach(() => rmSync(root, { recursive: true, force: true }))

test('this is not macOS: the tests below check the Linux side only', () => {
  expect(process.platform).not.toBe('darwin')
})

test('fcloneat answers ENOSYS off macOS and makes nothing', () => {
  makeTree(root, { 'src.bin': 'bytes', 'dst/': null })
  const folder = openat(AT_FDCWD, cName(root), DIR_FLAGS)
  const input = openat(folder, cName('src.bin'), O.RDONLY | O.NOFOLLOW | O.CLOEXEC)
  const dst = openat(folder, cName('dst'), DIR_FLAGS)
  try {
    expect([folder, input, dst].every((fd) => fd >= 0)).toBe(true)
    expect(CLONE_NOFOLLOW | CLONE_NOOWNERCOPY).toBe(3)
    expect(fcloneat(input, dst, cName('clone.bin'), CLONE_NOFOLLOW | CLONE_NOOWNERCOPY)).toBe(-E.ENOSYS)
    expect(readdirSync(join(root, 'dst'))).toEqual([])
  } finally {
    close(dst)
    close(input)
    close(folder)
  }
})

test('copyTree here copies bytes into new files, with the modes and times of the walk, as before', async () => {
  makeTree(join(root, 'src'), {
    'a.txt': 'alpha',
    'ro.txt': 'read only',
    'big/large.bin': 9 * 1024 * 1024,
    empty: '',
    'sub/deeper/x': 'x',
  })
  chmodSync(join(root, 'src', 'ro.txt'), 0o444)
  chmodSync(join(root, 'src', 'a.txt'), 0o751)
  utimesSync(join(root, 'src', 'a.txt'), 1_000_000, 1_234_567)
  const entries = await listTree(join(root, 'src'))
  const source = openBeneath(root, 'src')
  const parent = openBeneath(root, '')
  const seen: number[] = []
  let done
  try {
    done = await copyTree(
      source,
      { parent, name: 'dst', path: join(root, 'dst') },
      { entries, onProgress: (p) => seen.push(p.files) },
    )
  } finally {
    close(source)
    close(parent)
  }
  const files = ['a.txt', 'big/large.bin', 'empty', 'ro.txt', 'sub/deeper/x']
  const xxh = (rel: string) =>
    Bun.hash
      .xxHash64(readFileSync(join(root, 'src', rel)), 0n)
      .toString(16)
      .padStart(16, '0')
  expect({ files: done.files, bytes: done.bytes, hashes: Object.fromEntries(done.hashes) }).toEqual({
    files: 5,
    bytes: 5 + 9 + 9 * 1024 * 1024 + 0 + 1,
    hashes: Object.fromEntries(files.map((rel) => [rel, xxh(rel)])),
  })
  expect(seen.at(-1)).toBe(5)
  expect(snapshot(join(root, 'dst'))).toEqual(snapshot(join(root, 'src')))
  for (const rel of files) {
    const [a, b] = [lstatSync(join(root, 'src', rel)), lstatSync(join(root, 'dst', rel))]
    expect({ rel, mode: b.mode, mtime: Math.floor(b.mtimeMs) }).toEqual({
      rel,
      mode: a.mode,
      mtime: Math.floor(a.mtimeMs),
    })
    expect(b.ino).not.toBe(a.ino)
    expect(b.nlink).toBe(1)
  }
  // A copy of its own: writing the copy leaves the source as it was.
  writeFileSync(join(root, 'dst', 'sub/deeper/x'), 'changed')
  expect(snapshot(join(root, 'src'))['sub/deeper/x']!.size).toBe(1)
  expect(existsSync(join(root, 'dst', 'clone.bin'))).toBe(false)
})

const notsup = [-E.ENOTSUP, -(E.EOPNOTSUPP ?? E.ENOTSUP)]

test('renameFallback: the rename that refuses to replace decides whenever it is supported', () => {
  for (const renamed of [0, -E.EEXIST, -E.EXDEV, -E.EACCES, -E.EPERM, -E.ENOENT, -E.EBUSY])
    for (const linked of [undefined, 0, ...notsup, -E.EPERM])
      expect({ renamed, linked, step: renameFallback(renamed, linked) }).toEqual({ renamed, linked, step: 'rename' })
})

test('renameFallback: where it is not (EINVAL, ENOTSUP, EOPNOTSUPP, ENOSYS), a hard link comes next', () => {
  for (const renamed of [-E.EINVAL, -E.ENOSYS, ...notsup]) expect(renameFallback(renamed)).toBe('link')
})

test('renameFallback: the link decides whenever it worked or failed for any reason but having no links', () => {
  for (const renamed of [-E.EINVAL, -E.ENOSYS, ...notsup])
    for (const linked of [0, -E.EEXIST, -E.EXDEV, -E.EMLINK, -E.EACCES, -E.ENOENT, -E.ENOSYS, -E.EINVAL])
      expect({ renamed, linked, step: renameFallback(renamed, linked) }).toEqual({ renamed, linked, step: 'link' })
})

test('renameFallback: check-then-rename only where neither the rename nor a hard link exists', () => {
  for (const renamed of [-E.EINVAL, -E.ENOSYS, ...notsup])
    for (const linked of [...notsup, -E.EPERM])
      expect({ renamed, linked, step: renameFallback(renamed, linked) }).toEqual({
        renamed,
        linked,
        step: 'check-then-rename',
      })
})
