// The folder-descriptor calls of dirfd.ts on Windows, made of the handle primitives of nt.ts.
// The rest of the file layer (moves, copies, removals, reads) is written once against dirfd.ts's
// calls (openat, mkdirat, renameNoReplace, linkat, unlinkat, listDir, identity, close...), which
// take and give numbers as descriptors, names as NUL-terminated bytes and failures as -errno.
// Here those calls keep their meaning on Windows:
//
// - A folder is an NT handle opened relative to its parent's handle, one name at a time, never
//   through a link (nt.ts). It is held without FILE_SHARE_DELETE (pinned): while it is open,
//   nobody, this process included, can rename or delete it, so the folders on the way to the
//   work stay the folders that were checked. Its number is the handle plus FOLDER_BASE, above
//   every descriptor, so that a folder and a file are never taken for each other.
// - A file's bytes go through node:fs, as on Linux and macOS: an FFI handle cannot become a
//   descriptor that node:fs reads (Bun's C runtime is its own). So a file is first opened by
//   handle relative to its folder (refused when it is a link, a folder or another device), held
//   so that nobody may rename or delete it, then opened by node:fs by its path below the pinned
//   folders, and the descriptor is kept only when it is that very file (volume serial and file
//   index, which node:fs's fstat reports from the same calls). The handle then goes; the
//   descriptor stays valid whatever happens to the name afterwards, as on Linux.
// - Errors are -errno of os.constants.errno (the numbers E of dirfd.ts), by the code nt.ts maps
//   each NTSTATUS to; a sharing violation (a program holding the file) is EBUSY.
//
// What is not the same as on Linux and macOS, and why:
// - renameat does not replace an existing name (FileRenameInformation with ReplaceIfExists
//   FALSE): its callers rename into names nothing should have (a staging folder into place, a
//   folder to its hidden delete name), and an EEXIST is safer there than a replacement.
// - readlinkat and symlinkat answer EPERM: copies of links are refused on Windows (making one
//   needs a privilege or Developer Mode, and a link copied into a project could point anywhere).
// - Modes mean nothing: the mode of mkdirat and openatCreate is not used.
import { closeSync, fstatSync, futimesSync, openSync } from 'node:fs'
import { constants as osConstants } from 'node:os'
import * as nt from './nt.ts'
import type { Handle } from './structs.ts'

/** Folder handles are numbered from here; descriptors stay far below. */
export const FOLDER_BASE = 2 ** 40

/** dirfd.ts's AT_FDCWD: the first argument of an open by absolute path (a device root). */
export const AT_FDCWD = -100
export const AT_REMOVEDIR = 0x200

/**
 * Open flags as dirfd.ts's callers combine them. node:fs on Windows knows RDONLY, WRONLY, RDWR,
 * CREAT, EXCL (libuv's values); the others have no Windows meaning of their own and are given
 * bits no libuv flag uses, read only here.
 */
export const O = {
  RDONLY: 0,
  WRONLY: 1,
  RDWR: 2,
  CREAT: 0x100,
  EXCL: 0x400,
  DIRECTORY: 0x1000_0000,
  NOFOLLOW: 0x2000_0000,
  NONBLOCK: 0x0400_0000,
  CLOEXEC: 0x0800_0000,
}

const E = osConstants.errno as Record<string, number>

/** An open folder: its handle, the path it was opened by, and its volume serial once asked (the same for everything opened in it). */
type Folder = { handle: Handle; path: string; dev?: bigint }
const folders = new Map<number, Folder>()

export const isFolder = (fd: number) => fd >= FOLDER_BASE

/** The number of a new folder handle, its path kept for the files opened in it. */
function numbered(handle: Handle, path: string): number {
  const fd = FOLDER_BASE + handle
  folders.set(fd, { handle, path })
  return fd
}

function folderOf(fd: number): Folder {
  const folder = folders.get(fd)
  if (!folder) throw Object.assign(new Error(`EBADF: ${fd} is not an open folder`), { code: 'EBADF' })
  return folder
}

/** `name` below the folder path `dir` (a root path may end with its separator already). */
const below = (dir: string, name: string) =>
  dir.endsWith('\\') || dir.endsWith('/') ? `${dir}${name}` : `${dir}\\${name}`

/** A name given as bytes up to a NUL (a reused buffer may hold more after it). */
const text = (name: Buffer) => {
  const end = name.indexOf(0)
  return name.toString('utf8', 0, end < 0 ? name.length : end)
}

/** -errno of an error thrown by nt.ts (or by node:fs), for the calls' return convention. */
function negative(error: unknown): number {
  const code = (error as NodeJS.ErrnoException).code
  const n = code === undefined ? undefined : E[code]
  if (n === undefined) throw error
  return -n
}

/** openat(2): a folder's number (O.DIRECTORY) or a file's descriptor, or -errno. */
export function openat(dirfd: number, name: Buffer, flags: number): number {
  const wanted = text(name)
  try {
    if (dirfd === AT_FDCWD) {
      if (!(flags & O.DIRECTORY)) return -E.EINVAL!
      return numbered(nt.openRoot(wanted, { pin: true }), wanted)
    }
    const dir = folderOf(dirfd)
    if (flags & O.DIRECTORY) return numbered(nt.openDir(dir.handle, wanted, { pin: true }), below(dir.path, wanted))
    return openFileIn(dir, wanted, (flags & 3) === O.RDONLY ? 'r' : 'r+')
  } catch (error) {
    return negative(error)
  }
}

/**
 * The file `name` of `dir` as a node:fs descriptor: opened by handle first (no link, no folder),
 * held against renames and deletes, then by path, and kept only when both are the same file.
 */
function openFileIn(dir: Folder, name: string, flags: 'r' | 'r+', handle?: Handle): number {
  const h = handle ?? nt.openFile(dir.handle, name, flags === 'r' ? 'read' : 'write', { denyDelete: true })
  try {
    // The file's index, and the folder's volume (asked once per folder: under Wine every volume
    // query is a round trip to its mount manager, a few milliseconds a file).
    const ino = nt.fileIndex(h)
    dir.dev ??= nt.identity(dir.handle).dev
    const fd = openSync(below(dir.path, name), flags)
    const s = fstatSync(fd, { bigint: true })
    if (s.ino !== ino || s.dev !== dir.dev) {
      closeSync(fd)
      throw Object.assign(new Error(`ECHANGED: ${name} changed while it was opened`), { code: 'EAGAIN' })
    }
    return fd
  } finally {
    nt.closeHandle(h)
  }
}

/** openat with O_CREAT | O_EXCL: a new file's descriptor (EEXIST when anything has the name), or -errno. */
export function openatCreate(dirfd: number, name: Buffer, _flags: number, _mode: number): number {
  try {
    const dir = folderOf(dirfd)
    const wanted = text(name)
    return openFileIn(dir, wanted, 'r+', nt.createFile(dir.handle, wanted))
  } catch (error) {
    return negative(error)
  }
}

/** mkdirat(2): 0, or -errno (EEXIST when the name is taken). */
export function mkdirat(dirfd: number, name: Buffer, _mode: number): number {
  try {
    nt.closeHandle(nt.mkdir(folderOf(dirfd).handle, text(name)))
    return 0
  } catch (error) {
    return negative(error)
  }
}

/** A rename that never replaces (see the top of this file for renameat). 0, or -errno. */
export function renameNoReplace(fromfd: number, from: Buffer, tofd: number, to: Buffer): number {
  try {
    nt.renameNoReplace(folderOf(fromfd).handle, text(from), folderOf(tofd).handle, text(to))
    return 0
  } catch (error) {
    return negative(error)
  }
}

export const renameat = renameNoReplace

/** linkat(2): a second name; 0, or -errno (EEXIST when taken). */
export function linkat(fromfd: number, from: Buffer, tofd: number, to: Buffer): number {
  try {
    nt.link(folderOf(fromfd).handle, text(from), folderOf(tofd).handle, text(to))
    return 0
  } catch (error) {
    return negative(error)
  }
}

/**
 * unlinkat(2): a file (flags 0) or an empty folder (AT_REMOVEDIR); 0, or -errno. A link to a
 * folder (a junction) is a folder to Windows: removed as a file is on Linux, itself, never what
 * it points to.
 */
export function unlinkat(dirfd: number, name: Buffer, flags: number): number {
  const dir = folderOf(dirfd)
  const wanted = text(name)
  try {
    if (flags & AT_REMOVEDIR) removeFolder(dir.handle, wanted)
    else nt.remove(dir.handle, wanted, false)
    return 0
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EISDIR' || flags & AT_REMOVEDIR) return negative(error)
  }
  // EISDIR for a file removal: a junction or folder link goes as a folder; a real folder stays.
  try {
    nt.closeHandle(nt.openDir(dir.handle, wanted))
    return -E.EISDIR!
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOOP') return negative(error)
  }
  try {
    nt.remove(dir.handle, wanted, true)
    return 0
  } catch (error) {
    return negative(error)
  }
}

/**
 * Removes an emptied folder. Where a file system has no POSIX-semantics delete (FAT, SMB, older
 * Windows, Wine), a file removed while another handle still had it open (an indexer, a virus
 * scanner, the watcher's look at a new file) stays in its folder until that handle closes, and
 * the folder is "not empty" for that moment, or (seen under Wine, right after its last files
 * went) busy: the removal is tried again a few times over about half a second before ENOTEMPTY
 * or EBUSY is believed (Rust's remove_dir_all retries the same way). Seen under Wine when a copy
 * was cancelled halfway and its staging folder removed at once: ENOTEMPTY for a subfolder, then
 * EBUSY for the folder itself, both gone within the pauses.
 */
const PENDING_PAUSES_MS = [5, 10, 20, 40, 80, 120, 200]
const pauseCell = new Int32Array(new SharedArrayBuffer(4))
function removeFolder(dir: Handle, name: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      nt.remove(dir, name, true)
      return
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if ((code !== 'ENOTEMPTY' && code !== 'EBUSY') || attempt >= PENDING_PAUSES_MS.length) throw error
      Atomics.wait(pauseCell, 0, 0, PENDING_PAUSES_MS[attempt])
    }
  }
}

/** Closes a folder's handle or a file's descriptor. */
export function close(fd: number): void {
  const folder = folders.get(fd)
  if (!folder) {
    if (fd >= 0 && fd < FOLDER_BASE) closeSync(fd)
    return
  }
  folders.delete(fd)
  nt.closeHandle(folder.handle)
}

export type WinStat = {
  dev: bigint
  ino: bigint
  mode: bigint
  nlink: bigint
  size: bigint
  atimeNs: bigint
  mtimeNs: bigint
  birthtimeNs: bigint
  isFile(): boolean
  isDirectory(): boolean
  isSymbolicLink(): boolean
}

/** fstat of a folder handle, in the numbers node:fs's fstat gives for a file. */
export function statOf(fd: number): WinStat {
  const { handle } = folderOf(fd)
  const s = nt.stat(handle)
  const id = nt.identity(handle)
  const dir = s.isDirectory
  return {
    dev: id.dev,
    ino: id.ino,
    mode: BigInt(dir ? 0o40777 : 0o100666),
    nlink: 1n,
    size: BigInt(s.size),
    atimeNs: s.atimeNs,
    mtimeNs: s.mtimeNs,
    birthtimeNs: s.birthtimeNs,
    isFile: () => !dir && !s.isLink,
    isDirectory: () => dir,
    isSymbolicLink: () => s.isLink,
  }
}

/** The entries of a folder (dirfd.ts's DirEntry: the name as NUL-terminated bytes, d_type's numbers, the file index). */
export function listDir(
  fd: number,
  types: { DIR: number; REG: number; LNK: number; UNKNOWN: number },
): { name: Buffer; type: number; ino: bigint }[] | number {
  try {
    return nt.list(folderOf(fd).handle).map((e) => ({
      name: Buffer.from(`${e.name}\0`, 'utf8'),
      type:
        e.kind === 'dir'
          ? types.DIR
          : e.kind === 'file'
            ? types.REG
            : e.kind === 'link'
              ? types.LNK
              : 1 /* DT_FIFO: neither removed nor entered */,
      ino: e.ino,
    }))
  } catch (error) {
    return negative(error)
  }
}

/** futimens on a file's descriptor: node:fs's futimes, in seconds (Windows keeps 100 ns). */
export function futimens(fd: number, atimeNs: bigint, mtimeNs: bigint): number {
  try {
    futimesSync(fd, Number(atimeNs) / 1e9, Number(mtimeNs) / 1e9)
    return 0
  } catch (error) {
    return negative(error)
  }
}

/**
 * readlinkat: links are not read on Windows (see the top of this file), but what the answer says
 * of the name is kept: ENOENT when nothing has it, EINVAL when it is no link (a file or a
 * folder), EPERM for a link, whose value is not read.
 */
export function readlinkat(dirfd: number, name: Buffer): number {
  const dir = folderOf(dirfd)
  try {
    nt.closeHandle(nt.openFile(dir.handle, text(name), 'read'))
    return -E.EINVAL!
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP') return -E.EPERM!
    if (code === 'EISDIR' || code === 'EBUSY' || code === 'EACCES') return -E.EINVAL!
    return negative(error)
  }
}
export const symlinkat = (_target: Buffer, _dirfd: number, _name: Buffer): number => -E.EPERM!

/** The path a folder number was opened by (for node:fs calls by path below pinned folders). */
export const folderPath = (fd: number): string => folderOf(fd).path

/**
 * Holds the file at `path` for a child process that reads it by path (ffmpeg: Windows has no
 * /dev/fd to hand it our descriptor): nobody may write, rename or delete it while held, and it
 * must be the file of the descriptor `fd` that was opened and checked (ECHANGED otherwise).
 * Returns the release.
 */
export function holdInput(path: string, fd: number): () => void {
  const h = nt.holdByPath(path)
  try {
    const id = nt.identity(h)
    const s = fstatSync(fd, { bigint: true })
    if (id.ino !== s.ino || id.dev !== s.dev)
      throw Object.assign(new Error(`${path} is no longer the file that was checked`), { code: 'ECHANGED' })
  } catch (error) {
    nt.closeHandle(h)
    throw error
  }
  return () => nt.closeHandle(h)
}
