// removeTreeAt (src/storage/remove.ts) on real folders: what it removes, what it refuses, and
// folders swapped while it runs (a link or another folder in place of a listed folder), made
// deterministic by swapping from the progress callback, which runs between two removals.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/temp.ts'
import { AT_FDCWD, DIR_FLAGS, cName, close, identity, openat } from '../../src/storage/dirfd.ts'
import { CancelledError, listTree, totals } from '../../src/storage/fs.ts'
import { OPEN_LEVELS, removalSupported, removeTreeAt } from '../../src/storage/remove.ts'
import { makeTree, manyFiles, snapshot } from '../helpers/tree.ts'

let base: string
let n = 0
/** A fresh folder holding `tree` (the folder to remove) and `outside` (what must survive). */
const place = () => {
  const here = join(base, `p${n++}`)
  mkdirSync(here)
  return { here, tree: join(here, '.reelhouse-delete-1'), outside: join(here, 'outside') }
}

beforeAll(() => {
  base = tempDir('reelhouse-remove-')
})
// rm -rf (GNU, fts with openat) also copes with chains deeper than PATH_MAX left by a failure.
afterAll(() => spawnSync('rm', ['-rf', base]))

const outsideTree = (outside: string) =>
  makeTree(outside, { 'keep.txt': 'keep', 'folder/a.bin': 3000, 'folder/deeper/b.txt': 'b', empty: null })

/** Descriptors of this process open on something under the test folder (other tests' sockets and files come and go meanwhile). */
const fdCount = () =>
  readdirSync('/proc/self/fd').filter((n) => {
    try {
      return readlinkSync(`/proc/self/fd/${n}`).startsWith(base)
    } catch {
      return false
    }
  }).length

/** A chain of `depth` folders named d, built by wrapping (every path stays short). */
function chain(at: string, depth: number, file?: string) {
  mkdirSync(at)
  if (file) writeFileSync(join(at, file), 'bottom')
  const wrap = at + '.wrap'
  for (let i = 0; i < depth; i++) {
    mkdirSync(wrap)
    renameSync(at, join(wrap, 'd'))
    renameSync(wrap, at)
  }
}

test('removal is supported here (a delete would be refused otherwise)', () => {
  expect(removalSupported()).toBe(true)
})

test('removes a nested tree of files, empty folders, odd names and links, never what the links point to', async () => {
  const { here, tree, outside } = place()
  outsideTree(outside)
  makeTree(tree, {
    'a.txt': 'a',
    'shot 01/frame 0001.exr': 5000,
    'shot 01/näme ü 日本/clip.mov': 12345,
    'shot 01/empty one': null,
    'x/y/z/deep.txt': 'deep',
    'x/y/empty': null,
    'links/to-file': { link: join(outside, 'keep.txt') },
    'links/to-folder': { link: join(outside, 'folder') },
    'links/relative': { link: '../../outside' },
    'links/dangling': { link: join(outside, 'missing') },
  })
  writeFileSync(join(here, 'sibling.txt'), 'stays')
  const before = snapshot(outside)
  const entries = await listTree(tree)
  const seen: { files: number; bytes: number }[] = []
  await removeTreeAt(tree, { entries, onProgress: (d) => seen.push({ ...d }) })
  expect(snapshot(outside)).toEqual(before)
  expect(readdirSync(here).sort()).toEqual(['outside', 'sibling.txt'])
  expect(seen.at(-1)).toEqual({ files: 4, bytes: 1 + 5000 + 12345 + 4 })
  expect(seen.length).toBe(5) // each file, then the end
})

test('removes names that are not UTF-8', async () => {
  const { tree } = place()
  makeTree(tree, { 'x/ok.txt': 'ok' })
  const raw = (bytes: number[]) => Buffer.concat([Buffer.from(tree + '/'), Buffer.from(bytes)])
  mkdirSync(raw([0x64, 0xff]))
  writeFileSync(Buffer.concat([raw([0x64, 0xff]), Buffer.from([0x2f, 0x62, 0xe9, 0xfe])]), 'not UTF-8')
  await removeTreeAt(tree)
  expect(existsSync(tree)).toBe(false)
})

test('removes 10,000 files', async () => {
  const { tree } = place()
  // Names for one file (hard links): the removal does the same per name, and on some disks
  // making 10,000 inodes takes seconds, so the test would measure the disk, not the removal.
  const first = join(tree, 'd0', 'f0')
  for (let i = 0; i < 10_000; i++) {
    const dir = join(tree, `d${Math.floor(i / 500)}`)
    if (i % 500 === 0) mkdirSync(dir, { recursive: true })
    if (i === 0) writeFileSync(first, '')
    else linkSync(first, join(dir, `f${i}`))
  }
  let done = { files: 0, bytes: 0 }
  await removeTreeAt(tree, { onProgress: (d) => (done = { ...d }) })
  expect({ gone: !existsSync(tree), done }).toEqual({ gone: true, done: { files: 10_000, bytes: 0 } })
})

test('without the walk, progress counts files only', async () => {
  const { tree } = place()
  makeTree(tree, { 'a/1': 'one', 'a/2': 'two', 'b/3': 'three' })
  let done = { files: 0, bytes: 0 }
  await removeTreeAt(tree, { onProgress: (d) => (done = { ...d }) })
  expect(done).toEqual({ files: 3, bytes: 0 })
})

test('removes a chain of 2,000 folders, holding a bounded number of descriptors', async () => {
  const { tree } = place()
  chain(tree, 2000, 'bottom.txt')
  const open = fdCount()
  let atBottom = 0
  await removeTreeAt(tree, { onProgress: (d) => (atBottom = d.files === 1 && !atBottom ? fdCount() : atBottom) })
  expect(existsSync(tree)).toBe(false)
  expect(atBottom).toBeGreaterThan(open)
  expect(atBottom - open).toBeLessThanOrEqual(OPEN_LEVELS + 3)
  expect(fdCount()).toBe(open)
})

test('refuses a link in place of the folder, and a file, removing nothing', async () => {
  const { here, tree, outside } = place()
  outsideTree(outside)
  symlinkSync(outside, tree)
  writeFileSync(tree + '.file', 'x')
  const before = snapshot(here)
  const error = await removeTreeAt(tree).catch((e) => e)
  expect({ code: error.code, path: error.path }).toEqual({ code: 'ENOTDIR', path: '.' })
  expect(error.message).toContain('nothing was removed')
  expect((await removeTreeAt(tree + '.file').catch((e) => e)).code).toBe('ENOTDIR')
  expect((await removeTreeAt(tree + '.missing').catch((e) => e)).code).toBe('ENOENT')
  expect(snapshot(here)).toEqual(before)
})

test('refuses a folder that is not the expected one, removing nothing', async () => {
  const { tree } = place()
  makeTree(tree, { 'a/b.txt': 'b', 'c.txt': 'c' })
  const s = lstatSync(tree)
  const before = snapshot(tree)
  const error = await removeTreeAt(tree, { expect: { dev: s.dev, ino: s.ino + 1 } }).catch((e) => e)
  expect({ code: error.code, path: error.path }).toEqual({ code: 'ECHANGED', path: '.' })
  expect(snapshot(tree)).toEqual(before)
  await removeTreeAt(tree, { expect: { dev: s.dev, ino: s.ino } })
  expect(existsSync(tree)).toBe(false)
})

test('refuses a path that is not absolute and normal, or a name that is not one name', async () => {
  for (const bad of [
    'relative/x',
    '/a/../b',
    '/',
    '/a/./b',
    { parent: 0, name: 'a/b' },
    { parent: 0, name: '..' },
    { parent: 0, name: '.' },
  ])
    expect((await removeTreeAt(bad).catch((e) => e)).code).toBe('EINVAL')
})

test('removes a folder named in a parent the caller opened, and leaves that parent open', async () => {
  const { here, tree, outside } = place()
  outsideTree(outside)
  makeTree(tree, { 'a/1': '1', link: { link: outside } })
  const before = snapshot(outside)
  const parent = openat(AT_FDCWD, cName(here), DIR_FLAGS)
  try {
    await removeTreeAt({ parent, name: '.reelhouse-delete-1' })
    expect(identity(parent).ino).toBe(BigInt(lstatSync(here).ino))
  } finally {
    close(parent)
  }
  expect({ left: readdirSync(here), outside: snapshot(outside) }).toEqual({ left: ['outside'], outside: before })
})

/**
 * A tree of two folders `a` and `b` of three files each. At the first file removed (from the
 * folder entered first), `swap` replaces the other folder; returns that folder's name.
 */
async function removeWhileSwapping(tree: string, swap: (folder: string) => void) {
  makeTree(tree, { 'a/1': '1', 'a/2': '2', 'a/3': '3', 'b/1': '1', 'b/2': '2', 'b/3': '3' })
  let swapped = ''
  const error = await removeTreeAt(tree, {
    onProgress: () => {
      if (swapped) return
      swapped = readdirSync(join(tree, 'a')).length === 3 ? 'a' : 'b'
      swap(join(tree, swapped))
    },
  }).catch((e) => e)
  return { error, swapped }
}

test('a folder swapped for a link to an outside folder stops the removal; the outside is left alone', async () => {
  const { tree, outside } = place()
  outsideTree(outside)
  const before = snapshot(outside)
  const { error, swapped } = await removeWhileSwapping(tree, (folder) => {
    renameSync(folder, folder + '.held')
    symlinkSync(outside, folder)
  })
  expect({ code: error.code, path: error.path }).toEqual({ code: 'ECHANGED', path: swapped })
  expect(error.message).not.toContain(tree)
  expect(snapshot(outside)).toEqual(before)
  expect(readdirSync(join(tree, swapped + '.held')).sort()).toEqual(['1', '2', '3'])
  expect(lstatSync(join(tree, swapped)).isSymbolicLink()).toBe(true)
})

test('a folder moved outside the tree and linked back (the same folder, so its identity matches) is not entered: O_NOFOLLOW', async () => {
  const { here, tree } = place()
  const { error, swapped } = await removeWhileSwapping(tree, (folder) => {
    renameSync(folder, join(here, 'moved-out'))
    symlinkSync(join(here, 'moved-out'), folder)
  })
  expect(error.code).toBe('ECHANGED')
  expect(readdirSync(join(here, 'moved-out')).sort()).toEqual(['1', '2', '3'])
  expect(lstatSync(join(tree, swapped)).isSymbolicLink()).toBe(true)
})

test('a folder swapped for another folder (moved in from outside) stops the removal; its files are kept', async () => {
  const { here, tree, outside } = place()
  outsideTree(outside)
  const before = snapshot(join(outside, 'folder'))
  const { error, swapped } = await removeWhileSwapping(tree, (folder) => {
    renameSync(folder, join(here, 'held'))
    renameSync(join(outside, 'folder'), folder)
  })
  expect({ code: error.code, path: error.path }).toEqual({ code: 'ECHANGED', path: swapped })
  expect(snapshot(join(tree, swapped))).toEqual(before)
})

// Mounting needs root (or CAP_SYS_ADMIN); elsewhere these two tests are skipped.
const canMount = (() => {
  if (process.getuid?.() !== 0) return false
  const probe = tempDir('reelhouse-mount-')
  const ok = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'none', probe]).status === 0
  if (ok) spawnSync('umount', [probe])
  spawnSync('rmdir', [probe])
  return ok
})()

/** Runs `body` with `mountpoint` mounted (tmpfs, or a bind mount of `bind`), unmounted after. */
async function withMount(mountpoint: string, bind: string | undefined, body: () => Promise<void>) {
  const args = bind ? ['--bind', bind, mountpoint] : ['-t', 'tmpfs', '-o', 'size=1m', 'none', mountpoint]
  expect(spawnSync('mount', args).status).toBe(0)
  try {
    await body()
  } finally {
    spawnSync('umount', [mountpoint])
  }
}

test.skipIf(!canMount)(
  'a mount point inside the tree stops the removal; nothing on the mounted device is touched',
  async () => {
    const { tree } = place()
    makeTree(tree, { 'a/1': '1', mnt: null })
    await withMount(join(tree, 'mnt'), undefined, async () => {
      writeFileSync(join(tree, 'mnt', 'on-the-other-device'), 'x')
      const error = await removeTreeAt(tree).catch((e) => e)
      expect({ code: error.code, path: error.path }).toEqual({ code: 'EXDEV', path: 'mnt' })
      expect(readdirSync(join(tree, 'mnt'))).toEqual(['on-the-other-device'])
    })
  },
)

test.skipIf(!canMount)(
  'an outside folder bind-mounted inside the tree (same device) stops the removal, by its inode',
  async () => {
    const { tree, outside } = place()
    outsideTree(outside)
    makeTree(tree, { 'a/1': '1', mnt: null })
    const before = snapshot(outside)
    await withMount(join(tree, 'mnt'), join(outside, 'folder'), async () => {
      const error = await removeTreeAt(tree).catch((e) => e)
      expect({ code: error.code, path: error.path }).toEqual({ code: 'ECHANGED', path: 'mnt' })
    })
    expect(snapshot(outside)).toEqual(before)
  },
)

test('an entry removed by someone else meanwhile is skipped', async () => {
  const { tree } = place()
  makeTree(tree, { 'f/1': '1', 'f/2': '2', 'f/3': '3', 'f/4': '4', 'f/sub/5': '5' })
  let once = false
  await removeTreeAt(tree, {
    onProgress: () => {
      if (once) return
      once = true
      spawnSync('rm', ['-rf', ...['1', '2', '3', '4', 'sub'].map((x) => join(tree, 'f', x))])
    },
  })
  expect(existsSync(tree)).toBe(false)
})

test('a cancel stops between two entries, with every descriptor closed', async () => {
  const { tree } = place()
  manyFiles(tree, 300, 16, 100)
  const open = fdCount()
  const controller = new AbortController()
  let removed = 0
  const error = await removeTreeAt(tree, {
    signal: controller.signal,
    onProgress: (d) => {
      removed = d.files
      if (d.files === 120) controller.abort('stop')
    },
  }).catch((e) => e)
  expect(error).toBeInstanceOf(CancelledError)
  expect(removed).toBe(120)
  expect((await totals(tree)).count).toBe(180)
  expect(fdCount()).toBe(open)
  const aborted = await removeTreeAt(tree, { signal: AbortSignal.abort() }).catch((e) => e)
  expect(aborted).toBeInstanceOf(CancelledError)
  expect((await totals(tree)).count).toBe(180)
})
