// The calls relative to open folders (src/storage/dirfd.ts) on real folders: what they return,
// the errno codes of the failures the removal relies on, and names that are not UTF-8.
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test'
import { existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/temp.ts'
import {
  AT_FDCWD,
  AT_REMOVEDIR,
  DIR_FLAGS,
  DT,
  E,
  O,
  cName,
  close,
  identity,
  listDir,
  mkdirat,
  nameText,
  openat,
  readlinkat,
  removalSupported,
  renameat,
  sysError,
  unlinkat,
  unsupportedReason,
} from '../../src/storage/dirfd.ts'
import { removeAll } from '../helpers/tree.ts'

let base: string
let dir: string
let fd = -1

beforeAll(() => {
  base = tempDir('reelhouse-dirfd-')
})
afterAll(() => removeAll(base))

let n = 0
const fresh = () => {
  dir = join(base, `t${n++}`)
  mkdirSync(dir)
  fd = openat(AT_FDCWD, cName(dir), DIR_FLAGS)
  expect(fd).toBeGreaterThanOrEqual(0)
}
afterEach(() => {
  if (fd >= 0) close(fd)
  fd = -1
})

test('is supported on this Linux machine', () => {
  expect(process.platform).toBe('linux')
  expect({ supported: removalSupported(), reason: unsupportedReason() }).toEqual({ supported: true, reason: undefined })
})

test('an open folder: its identity and its listing, names as bytes with their types and inodes', () => {
  fresh()
  mkdirSync(join(dir, 'sub'))
  writeFileSync(join(dir, 'a file é.txt'), 'x')
  symlinkSync('/etc', join(dir, 'link'))
  const listed = listDir(fd)
  if (typeof listed === 'number') throw sysError(listed, 'readdir', '.')
  const ino = (name: string) => BigInt(lstatSync(join(dir, name)).ino)
  expect(listed.map((e) => ({ ...e, text: nameText(e.name) })).sort((a, b) => a.text.localeCompare(b.text))).toEqual([
    { name: Buffer.from('a file é.txt\0'), text: 'a file é.txt', type: DT.REG, ino: ino('a file é.txt') },
    { name: Buffer.from('link\0'), text: 'link', type: DT.LNK, ino: ino('link') },
    { name: Buffer.from('sub\0'), text: 'sub', type: DT.DIR, ino: ino('sub') },
  ])
  const s = lstatSync(dir, { bigint: true })
  expect(identity(fd)).toEqual({ dev: s.dev, ino: s.ino })
})

test('openat: a folder by name, never through a link, with the codes the removal relies on', () => {
  fresh()
  mkdirSync(join(dir, 'sub'))
  writeFileSync(join(dir, 'file'), 'x')
  symlinkSync(join(dir, 'sub'), join(dir, 'link'))
  const sub = openat(fd, cName('sub'), DIR_FLAGS)
  expect(sub).toBeGreaterThanOrEqual(0)
  expect(identity(sub).ino).toBe(BigInt(lstatSync(join(dir, 'sub')).ino))
  close(sub)
  expect({
    missing: openat(fd, cName('missing'), DIR_FLAGS),
    // O_NOFOLLOW on a link: ELOOP; with O_DIRECTORY Linux answers ENOTDIR first (macOS: ELOOP).
    linkNoFollow: openat(fd, cName('link'), O.RDONLY | O.NOFOLLOW | O.CLOEXEC),
    linkAsFolder: openat(fd, cName('link'), DIR_FLAGS),
    fileAsFolder: openat(fd, cName('file'), DIR_FLAGS),
  }).toEqual({ missing: -E.ENOENT, linkNoFollow: -E.ELOOP, linkAsFolder: -E.ENOTDIR, fileAsFolder: -E.ENOTDIR })
  expect(existsSync(join(dir, 'sub'))).toBe(true)
})

test('unlinkat: files and links, folders with AT_REMOVEDIR only when empty', () => {
  fresh()
  mkdirSync(join(dir, 'full'))
  writeFileSync(join(dir, 'full', 'inside'), 'x')
  mkdirSync(join(dir, 'empty'))
  writeFileSync(join(dir, 'file'), 'x')
  symlinkSync(join(dir, 'full'), join(dir, 'link'))
  expect({
    file: unlinkat(fd, cName('file'), 0),
    link: unlinkat(fd, cName('link'), 0),
    missing: unlinkat(fd, cName('file'), 0),
    full: unlinkat(fd, cName('full'), AT_REMOVEDIR),
    folderAsFile: unlinkat(fd, cName('empty'), 0),
    empty: unlinkat(fd, cName('empty'), AT_REMOVEDIR),
  }).toEqual({ file: 0, link: 0, missing: -E.ENOENT, full: -E.ENOTEMPTY, folderAsFile: -E.EISDIR, empty: 0 })
  expect(readdirSync(dir)).toEqual(['full'])
  expect(readdirSync(join(dir, 'full'))).toEqual(['inside'])
})

test('a name that is not UTF-8 is listed as its bytes and removed by them', () => {
  fresh()
  const raw = Buffer.from([0x66, 0xff, 0xfe, 0x2e, 0x62, 0x69, 0x6e]) // "f\xff\xfe.bin"
  writeFileSync(Buffer.concat([Buffer.from(dir + '/'), raw]), 'x')
  const listed = listDir(fd)
  if (typeof listed === 'number') throw sysError(listed, 'readdir', '.')
  expect(listed.map((e) => e.name)).toEqual([Buffer.concat([raw, Buffer.from([0])])])
  expect(nameText(listed[0]!.name)).toBe('f\uFFFD\uFFFD.bin')
  expect(unlinkat(fd, listed[0]!.name, 0)).toBe(0)
  expect(readdirSync(dir)).toEqual([])
})

test('renameat: within and between open folders, never replacing a folder that has entries', () => {
  fresh()
  mkdirSync(join(dir, 'a'))
  mkdirSync(join(dir, 'full'))
  writeFileSync(join(dir, 'full', 'x'), 'x')
  const other = openat(fd, cName('full'), DIR_FLAGS)
  try {
    expect({
      within: renameat(fd, cName('a'), fd, cName('b')),
      missing: renameat(fd, cName('a'), fd, cName('c')),
      onFull: renameat(fd, cName('b'), fd, cName('full')),
      between: renameat(fd, cName('b'), other, cName('moved')),
    }).toEqual({ within: 0, missing: -E.ENOENT, onFull: -E.ENOTEMPTY, between: 0 })
  } finally {
    close(other)
  }
  expect(readdirSync(join(dir, 'full')).sort()).toEqual(['moved', 'x'])
})

test('readlinkat: the bytes of a link, EINVAL for what is not one', () => {
  fresh()
  const target = Buffer.from([0x2e, 0x2e, 0x2f, 0xc3, 0xa9, 0xff])
  symlinkSync(target, join(dir, 'link'))
  writeFileSync(join(dir, 'file'), 'x')
  expect({
    link: readlinkat(fd, cName('link')),
    file: readlinkat(fd, cName('file')),
    missing: readlinkat(fd, cName('nope')),
  }).toEqual({ link: target, file: -E.EINVAL, missing: -E.ENOENT })
})

test('failures become Node-style errors that name the path given', () => {
  fresh()
  const { code, errno, syscall, path, message } = sysError(
    unlinkat(fd, cName('full'), AT_REMOVEDIR),
    'unlinkat',
    'a/full',
  )
  expect({ code, errno, syscall, path, message }).toEqual({
    code: 'ENOENT',
    errno: -E.ENOENT,
    syscall: 'unlinkat',
    path: 'a/full',
    message: "ENOENT: no such file or directory, unlinkat 'a/full'",
  })
  expect(() => cName('a\0b')).toThrow('NUL')
})

test('mkdirat makes a folder with the given mode (under the umask), refuses a taken name (a link too), and never follows one', () => {
  fresh()
  expect(mkdirat(fd, cName('made'), 0o700)).toBe(0)
  expect(lstatSync(join(dir, 'made')).mode & 0o777).toBe(0o700)
  expect(mkdirat(fd, cName('made'), 0o700)).toBe(-E.EEXIST)
  symlinkSync(base, join(dir, 'link'))
  expect(mkdirat(fd, cName('link'), 0o700)).toBe(-E.EEXIST)
  expect(mkdirat(fd, cName('missing/sub'), 0o700)).toBe(-E.ENOENT)
})
