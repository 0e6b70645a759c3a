// Removal of a folder tree relative to open folder descriptors (docs/projects.md, Delete), the way
// coreutils' rm walks with fts and openat: every folder is opened with O_NOFOLLOW|O_DIRECTORY
// relative to its parent's descriptor and checked to be the folder its parent listed (same
// device, inode of the listing) before anything in it is removed; entries are removed with
// unlinkat relative to that descriptor. A link is removed, never followed, and a folder
// swapped for a link or for another folder while the removal runs stops it: renaming and
// linking by other processes cannot lead it outside the tree, whatever they do between two
// calls. That is also why it may give the event loop a turn between time slices.
//
// Where the checks refuse what is harmless: a btrfs subvolume inside the tree has its own
// device number (EXDEV, like rm --one-file-system), and an overlayfs whose layers lie on
// different file systems without xino lists folders with inodes that differ from fstat's
// (ECHANGED). A removal there stops; nothing unsafe runs. A folder is removed by its name once
// it is empty (no call removes a folder by descriptor): a folder swapped in at that moment is
// removed only if it is empty too.
//
// Open descriptors: one per level on the way down, for the deepest OPEN_LEVELS levels; the
// ones above are closed and, on the way up, opened again as ".." of the level below and checked
// to be the same folder (device and inode), so any depth (a 10,000-deep chain) holds at most
// OPEN_LEVELS + 3 descriptors (those, the parent, and one while a folder is listed).
//
// Progress counts regular files and their bytes. The bytes come from the walk the caller made
// for its totals (`entries`, by inode: the listing gives each entry's inode for free), not from
// a stat of every file: a per-file fstatat would add one call per file to a removal whose cost
// is the number of calls, and would need struct stat's layout for each platform. Without
// `entries`, only files are counted.
import {
  AT_FDCWD,
  AT_REMOVEDIR,
  DIR_FLAGS,
  DT,
  type DirEntry,
  E,
  O,
  cName,
  close,
  identity,
  listDir,
  nameText,
  openat,
  removalSupported,
  statNumbersOf,
  sysError,
  unlinkat,
  unsupportedReason,
} from './dirfd.ts'
import { type Entry, type Progress, slicer } from './fs.ts'
import { openParentInside } from './roots.ts'
import { baseName, dirName, endsWithSep, pathOf } from './paths.ts'
import { requireFileWork } from './platform.ts'

export { removalSupported, unsupportedReason }

/**
 * The folder to remove: an absolute path, whose parent is opened by that path (the caller
 * checked containment), or a name in a folder the caller opened itself (and keeps open).
 */
export type RemovalTarget = string | { parent: number; name: string }

/** Levels whose descriptors stay open; deeper trees reopen the ones above on the way up. */
export const OPEN_LEVELS = 64
const DOTDOT = Buffer.from('..\0')

export type RemoveOptions = {
  signal?: AbortSignal
  /** Called after each regular file removed, and at the end; the object is reused. */
  onProgress?: (done: Progress) => void
  /** Device and inode the folder must have (from the caller's lstat), or nothing is removed. */
  expect?: { dev: number; ino: number }
  /** The caller's walk of the tree (listTree), for the bytes of the progress. */
  entries?: readonly Entry[]
}

/** A folder being emptied: its descriptor (-1 while closed), identity, name in its parent, listing. */
type Level = { fd: number; dev: bigint; ino: bigint; name: Buffer; entries: DirEntry[]; next: number }

type RemovalError = Error & { code: string; path: string }
const removalError = (code: string, path: string, text: string): RemovalError =>
  Object.assign(new Error(`${code}: '${path}' ${text}`), { code, path })

/**
 * Removes the folder `dir` and everything in it, depth first, relative to descriptors. Throws,
 * with nothing removed, when `dir` is a link or not a folder, or does not match `expect`.
 * Throws and stops when a folder inside does not match its listing (code ECHANGED) or is
 * another device (EXDEV), or on any failure but an entry that vanished meanwhile (skipped). Messages and `path` name paths
 * relative to `dir` ('.' for itself). Throws CancelledError between slices once `signal` aborts.
 */
export async function removeTreeAt(dir: RemovalTarget, options: RemoveOptions = {}): Promise<void> {
  const { signal, onProgress, expect } = options
  requireFileWork()
  if (!removalSupported())
    throw Object.assign(new Error(`refusing to delete: ${unsupportedReason()}`), { code: 'ENOSYS' })
  const path =
    typeof dir === 'string'
      ? dir.length > 1 && endsWithSep(dir) && pathOf.dirname(dir) !== dir
        ? dirName(dir) + pathOf.sep + baseName(dir)
        : dir
      : undefined
  const base = path === undefined ? (dir as { name: string }).name : pathOf.basename(path)
  if (
    (path !== undefined && (!pathOf.isAbsolute(path) || pathOf.normalize(path) !== path)) ||
    !base ||
    base === '.' ||
    base === '..' ||
    baseName(base) !== base
  )
    throw Object.assign(new Error(`not a folder to remove: ${JSON.stringify(dir)}`), { code: 'EINVAL' })
  const slice = slicer(signal)
  slice.due()
  const sizes = options.entries && sizesByInode(options.entries)
  const done: Progress = { files: 0, bytes: 0 }

  const parent =
    path === undefined
      ? (dir as { parent: number }).parent
      : openat(AT_FDCWD, cName(pathOf.dirname(path)), O.RDONLY | O.DIRECTORY | O.CLOEXEC)
  if (parent < 0) throw sysError(parent, 'open', '..')
  const levels: Level[] = []
  /** Levels from this index up have their descriptor open. */
  let lowestOpen = 0
  /** For messages: the path below the root of the first `end` levels, then `name`. */
  const relOf = (end: number, name?: Buffer) =>
    [...levels.slice(1, end).map((l) => nameText(l.name)), ...(name ? [nameText(name)] : [])].join('/') || '.'

  /** Checks the folder just opened (fd) against its parent's device and the listed inode, lists it, and goes down into it. */
  const enter = (fd: number, name: Buffer, dev: bigint, ino: bigint | undefined) => {
    const rel = () => (levels.length ? relOf(levels.length, name) : '.')
    let level: Level
    try {
      const id = identity(fd)
      if (id.dev !== dev)
        throw removalError(
          'EXDEV',
          rel(),
          'is on another device (a mount point); a removal never crosses one, and stopped',
        )
      if (ino !== undefined && id.ino !== ino)
        throw removalError(
          'ECHANGED',
          rel(),
          'is not the folder that was listed (it was swapped while being removed); the removal stopped',
        )
      const entries = listDir(fd)
      if (typeof entries === 'number') throw sysError(entries, 'readdir', rel())
      level = { fd, dev, ino: id.ino, name, entries, next: 0 }
    } catch (error) {
      close(fd)
      throw error
    }
    levels.push(level)
    while (levels.length - lowestOpen > OPEN_LEVELS) {
      const l = levels[lowestOpen++]!
      close(l.fd)
      l.fd = -1
    }
  }

  try {
    const name = cName(base)
    const fd = openat(parent, name, DIR_FLAGS)
    if (fd === -E.ENOTDIR || fd === -E.ELOOP)
      throw Object.assign(sysError(fd, 'openat', '.'), {
        message: `'.' is a symbolic link or not a folder; nothing was removed`,
      })
    if (fd < 0) throw sysError(fd, 'openat', '.')
    const root = identity(fd)
    if (expect && (Number(root.dev) !== expect.dev || Number(root.ino) !== expect.ino)) {
      close(fd)
      throw removalError(
        'ECHANGED',
        '.',
        'is not the folder that was checked (device and inode differ); nothing was removed',
      )
    }
    enter(fd, name, identity(parent).dev, undefined)

    while (levels.length) {
      const depth = levels.length
      const top = levels[depth - 1]!
      const e = top.entries[top.next++]
      if (e) {
        if (slice.due()) await slice.tick()
        if (e.type === DT.DIR || e.type === DT.UNKNOWN) {
          // DT_UNKNOWN (some file systems): the open tells; ENOTDIR or ELOOP means not a folder.
          const child = openat(top.fd, e.name, DIR_FLAGS)
          if (child >= 0) {
            enter(child, e.name, top.dev, e.ino)
            continue
          }
          if (child === -E.ENOENT) continue
          const notFolder = child === -E.ENOTDIR || child === -E.ELOOP
          if (e.type === DT.DIR && notFolder)
            throw removalError(
              'ECHANGED',
              relOf(depth, e.name),
              'is no longer a folder (it was swapped for a link or a file while being removed); the removal stopped',
            )
          if (!notFolder) throw sysError(child, 'openat', relOf(depth, e.name))
        }
        const r = unlinkat(top.fd, e.name, 0)
        if (r === -E.ENOENT) continue
        if (r === -E.EISDIR)
          throw removalError(
            'ECHANGED',
            relOf(depth, e.name),
            'became a folder while being removed; the removal stopped',
          )
        if (r < 0) throw sysError(r, 'unlinkat', relOf(depth, e.name))
        const size = sizes?.get(Number(e.ino))
        if (e.type === DT.REG || (e.type === DT.UNKNOWN && (!sizes || size !== undefined))) {
          done.files++
          done.bytes += size ?? 0
          onProgress?.(done)
        }
        continue
      }
      // `top` is empty: remove it from its parent, opened again from below if it was closed.
      const up = levels[depth - 2]
      if (up && up.fd < 0) {
        const fd = openat(top.fd, DOTDOT, DIR_FLAGS)
        if (fd < 0) throw sysError(fd, 'openat', relOf(depth - 1))
        up.fd = fd
        lowestOpen = depth - 2
        const id = identity(fd)
        if (id.dev !== up.dev || id.ino !== up.ino)
          throw removalError(
            'ECHANGED',
            relOf(depth - 1),
            'is not the folder that was entered (it was moved while being removed); the removal stopped',
          )
      }
      const rel = () => (up ? relOf(depth - 1, top.name) : '.')
      levels.pop()
      close(top.fd)
      const r = unlinkat(up ? up.fd : parent, top.name, AT_REMOVEDIR)
      if (r === -E.ENOTDIR)
        throw removalError(
          'ECHANGED',
          rel(),
          'is no longer a folder (it was swapped while being removed); the removal stopped',
        )
      if (r < 0 && r !== -E.ENOENT) throw sysError(r, 'unlinkat', rel())
    }
    onProgress?.(done)
  } finally {
    for (const l of levels) if (l.fd >= 0) close(l.fd)
    if (path !== undefined) close(parent)
  }
}

/** Sizes of the walk's regular files by inode (the tree is on one device). */
function sizesByInode(entries: readonly Entry[]) {
  const sizes = new Map<number, number>()
  for (const e of entries) if (e.kind === 'file') sizes.set(e.ino, e.size)
  return sizes
}

/**
 * Removes the regular file `path` lying inside the folder `root` (a production's proxy_root on the
 * device at `devicePath`), never anything else: its folder is opened from the device root one name
 * at a time without following a link (storage/roots.ts), the name is opened with O_NOFOLLOW and
 * must be a regular file, and it is removed with unlinkat relative to that folder. True when
 * removed; false when it was not there, not inside `root`, or not a regular file (a link, a
 * folder): nothing is removed then. PathError when `root` is reached through a symbolic link.
 */
export function removeFileInside(devicePath: string, root: string, path: string): boolean {
  const at = openParentInside(devicePath, root, path)
  return at ? removeOpened(at) : false
}

/** Removes the regular file `name` of the open folder `parent` (openParentInside's answer), and closes `parent`. */
export function removeOpened(at: { parent: number; name: Buffer }): boolean {
  try {
    const fd = openat(at.parent, at.name, O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
    if (fd < 0) return false
    const regular = statNumbersOf(fd).isFile()
    close(fd)
    return regular && unlinkat(at.parent, at.name, 0) === 0
  } finally {
    close(at.parent)
  }
}
