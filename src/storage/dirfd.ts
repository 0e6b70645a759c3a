// Calls relative to open folder descriptors (openat, unlinkat, renameat, readlinkat, listing an
// open folder), which Node's `fs` does not have, made on the C library through bun:ffi. Every
// platform detail of them lives here: the library's name, flag values, the layout of
// `struct dirent`, errno.
//
// The calls are thin: they return what the C call returns, with a failure as a negative errno
// (`-ENOENT`), so a caller can branch on an expected failure without an exception; `sysError`
// turns a failure into a Node-style error. Names are bytes ending in a NUL (`cName`, or the
// `name` of a listed entry, passed back unchanged), so a name that is not valid UTF-8 is
// removed like any other; it is decoded only for messages.
//
// Supported: 64-bit Linux (glibc or musl) and macOS (platform.ts decides). Anywhere else every
// call throws FileWorkUnavailable, whose message names the platform; where the library or its
// self-check fails, `removalSupported()` is false and every call throws ENOSYS. Either way
// callers refuse the work rather than fall back to calls by path name.
//
// errno is read right after the failed call, before any other C call of ours; the runtime
// could in principle change it in between (nothing we know of does). A wrong code could only
// make a removal stop with a wrong message or skip an entry (which then leaves its folder not
// empty, and the removal fails): safety rests on the flags and identity checks, not on errno.
import { CString, type Library, type Pointer, dlopen, FFIType, ptr, read, toArrayBuffer } from 'bun:ffi'
import {
  type BigIntStats,
  type Stats,
  fchmodSync,
  fstatSync,
  futimesSync,
  lstatSync,
  utimesSync,
  constants as fsConstants,
} from 'node:fs'
import { constants as osConstants } from 'node:os'
import { getSystemErrorMap } from 'node:util'
import { FileWorkUnavailable, REFUSAL } from './platform.ts'
import * as win from './windows/calls.ts'

/** Windows: every call below goes to windows/calls.ts, the same calls made of NT handles. */
const WIN = process.platform === 'win32'

type Platform = {
  libraries: string[]
  /** Symbol names where they differ from the C names (macOS x86_64 keeps 32-bit-inode ones). */
  symbols: { fdopendir: string; readdir: string; errno: string }
  AT_FDCWD: number
  AT_REMOVEDIR: number
  O_CLOEXEC: number
  /** struct dirent: d_ino is u64 at 0 and d_reclen u16 at 16 on both; these differ. */
  typeAt: number
  nameAt: number
}

const arch = process.arch === 'x64' ? 'x86_64' : process.arch === 'arm64' ? 'aarch64' : undefined

function platform(): Platform | undefined {
  if (!arch || REFUSAL) return undefined
  if (process.platform === 'linux')
    // glibc <bits/dirent.h> and musl <bits/dirent.h> (64-bit): d_ino u64 @0, d_off @8,
    // d_reclen u16 @16, d_type u8 @18, d_name @19. <linux/fcntl.h>: AT_FDCWD -100,
    // AT_REMOVEDIR 0x200; O_CLOEXEC is 02000000 on x86_64 and arm64 (asm-generic).
    return {
      libraries: ['libc.so.6', `libc.musl-${arch}.so.1`, `/lib/ld-musl-${arch}.so.1`, 'libc.so'],
      symbols: { fdopendir: 'fdopendir', readdir: 'readdir', errno: '__errno_location' },
      AT_FDCWD: -100,
      AT_REMOVEDIR: 0x200,
      O_CLOEXEC: 0o2000000,
      typeAt: 18,
      nameAt: 19,
    }
  if (process.platform === 'darwin') {
    // <sys/dirent.h> with 64-bit inodes (__DARWIN_STRUCT_DIRENTRY): d_ino u64 @0, d_seekoff @8,
    // d_reclen u16 @16, d_namlen u16 @18, d_type u8 @20, d_name @21. <sys/fcntl.h>: AT_FDCWD -2,
    // AT_REMOVEDIR 0x80, O_CLOEXEC 0x1000000. On x86_64 the 64-bit-inode functions carry the
    // $INODE64 suffix; arm64 has only those, under the plain names. Written from the headers and
    // read against them again since; never run on a Mac (docs/operations.md, Platforms).
    const suffix = arch === 'x86_64' ? '$INODE64' : ''
    return {
      libraries: ['libc.dylib', '/usr/lib/libSystem.B.dylib'],
      symbols: { fdopendir: `fdopendir${suffix}`, readdir: `readdir${suffix}`, errno: '__error' },
      AT_FDCWD: -2,
      AT_REMOVEDIR: 0x80,
      O_CLOEXEC: 0x1000000,
      typeAt: 20,
      nameAt: 21,
    }
  }
  return undefined
}

// openat is variadic (a mode follows with O_CREAT); it is declared without the mode, which is
// never passed: on Apple arm64 variadic arguments go on the stack, so declaring one would
// be wrong there, and without O_CREAT the mode is not read.
const declarations = (s: Platform['symbols']) => ({
  openat: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  unlinkat: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  readlinkat: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr, FFIType.u64], returns: FFIType.i64_fast },
  renameat: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  // mode_t is 16 bits on macOS and 32 on Linux; a fixed (not variadic) argument either way,
  // passed widened to 32 bits as both ABIs expect.
  mkdirat: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  close: { args: [FFIType.i32], returns: FFIType.i32 },
  [s.fdopendir]: { args: [FFIType.i32], returns: FFIType.ptr },
  [s.readdir]: { args: [FFIType.ptr], returns: FFIType.ptr },
  closedir: { args: [FFIType.ptr], returns: FFIType.i32 },
  [s.errno]: { args: [], returns: FFIType.ptr },
})

type Calls = {
  openat(dirfd: number, name: Buffer, flags: number): number
  unlinkat(dirfd: number, name: Buffer, flags: number): number
  readlinkat(dirfd: number, name: Buffer, buffer: Buffer, size: number): number | bigint
  renameat(fromfd: number, from: Buffer, tofd: number, to: Buffer): number
  mkdirat(dirfd: number, name: Buffer, mode: number): number
  close(fd: number): number
  fdopendir(fd: number): number | null
  readdir(dir: number): number | null
  closedir(dir: number): number
  errnoAt(): number | null
}

/** File types of d_type (the same numbers on Linux and macOS). */
export const DT = { UNKNOWN: 0, DIR: 4, REG: 8, LNK: 10 } as const

/** errno numbers of this platform, by name (Node's table, so they match the running system). */
export const E = osConstants.errno

const P = platform()

export const AT_FDCWD = WIN ? win.AT_FDCWD : (P?.AT_FDCWD ?? -100)
export const AT_REMOVEDIR = WIN ? win.AT_REMOVEDIR : (P?.AT_REMOVEDIR ?? 0)
/** Open flags of this platform: Node has most of them (O_DIRECTORY and O_NOFOLLOW differ between x86_64 and arm64 Linux), not O_CLOEXEC. */
export const O = WIN
  ? { ...win.O }
  : {
      RDONLY: fsConstants.O_RDONLY ?? 0,
      DIRECTORY: fsConstants.O_DIRECTORY ?? 0,
      NOFOLLOW: fsConstants.O_NOFOLLOW ?? 0,
      NONBLOCK: fsConstants.O_NONBLOCK ?? 0,
      WRONLY: fsConstants.O_WRONLY ?? 1,
      RDWR: fsConstants.O_RDWR ?? 2,
      CREAT: fsConstants.O_CREAT ?? 0,
      EXCL: fsConstants.O_EXCL ?? 0,
      CLOEXEC: P?.O_CLOEXEC ?? 0,
    }
/**
 * A folder opened to work in: a link is not followed (the open fails: ENOTDIR on Linux, where
 * O_DIRECTORY is checked first, ELOOP elsewhere) and a non-folder is refused before it is
 * opened (so a fifo or a device never blocks the call; O_NONBLOCK besides).
 */
export const DIR_FLAGS = O.RDONLY | O.DIRECTORY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK

let calls: Calls | undefined
let loadProblem: string | undefined

function load(): Calls | undefined {
  if (calls || loadProblem) return calls
  try {
    if (!P) throw new Error(REFUSAL ?? `${process.platform} ${process.arch} is not supported`)
    const wanted = declarations(P.symbols)
    let lib: Library<typeof wanted> | undefined
    const failures: string[] = []
    for (const name of P.libraries) {
      try {
        lib = dlopen(name, wanted)
        break
      } catch (error) {
        failures.push(`${name}: ${(error as Error).message}`)
      }
    }
    if (!lib) throw new Error(`no C library could be loaded (${failures.join('; ')})`)
    const s = lib.symbols as Record<string, (...args: any[]) => any>
    const loaded: Calls = {
      openat: s.openat!,
      unlinkat: s.unlinkat!,
      readlinkat: s.readlinkat!,
      renameat: s.renameat!,
      mkdirat: s.mkdirat!,
      close: s.close!,
      closedir: s.closedir!,
      fdopendir: s[P.symbols.fdopendir]!,
      readdir: s[P.symbols.readdir]!,
      errnoAt: s[P.symbols.errno]!,
    }
    selfCheck(loaded)
    calls = loaded
  } catch (error) {
    loadProblem = (error as Error).message
  }
  return calls
}

/**
 * The flags, the calling convention, errno and the dirent layout, tried once on `/`: it opens
 * as a folder with these flags, an empty name fails with ENOENT, and its listing has `.` and
 * `..`, as folders, where the layout says names and types are.
 */
function selfCheck(c: Calls) {
  // The flags come from Node's table with 0 where a constant is missing: a missing O_NOFOLLOW
  // would make every open follow links without a sound, so none of them may be 0.
  if (!O.NOFOLLOW || !O.DIRECTORY || !O.CLOEXEC)
    throw new Error('the open flags O_NOFOLLOW, O_DIRECTORY and O_CLOEXEC are not all known here')
  const fd = c.openat(AT_FDCWD, cName('/'), DIR_FLAGS)
  if (fd < 0) throw new Error(`openat("/") failed (errno ${errnoOf(c)})`)
  try {
    if (!fstatSync(fd).isDirectory()) throw new Error('openat("/") did not open a folder')
    if (c.openat(fd, cName(''), DIR_FLAGS) !== -1 || errnoOf(c) !== E.ENOENT)
      throw new Error('errno is not read correctly')
    const listed = listWith(c, fd, true)
    if (typeof listed === 'number') throw new Error(`listing "/" failed (errno ${-listed})`)
    const dots = listed.filter((e) => (e.name.equals(DOT) || e.name.equals(DOTDOT)) && e.type === DT.DIR)
    if (dots.length !== 2) throw new Error('the dirent layout does not match (no . and .. found)')
  } finally {
    c.close(fd)
  }
}

/** True when removals relative to descriptors can run here. */
export function removalSupported(): boolean {
  if (WIN) return !REFUSAL
  return load() !== undefined
}

/** Why `removalSupported()` is false, for a message. */
export function unsupportedReason(): string | undefined {
  if (WIN) return REFUSAL
  load()
  return loadProblem
}

function sys(): Calls {
  if (REFUSAL) throw new FileWorkUnavailable(REFUSAL)
  const c = load()
  if (!c) throw Object.assign(new Error(`removal by descriptors is not available: ${loadProblem}`), { code: 'ENOSYS' })
  return c
}

const errnoOf = (c: Calls) => read.i32(c.errnoAt()!, 0)

/** A name for the calls: UTF-8 bytes and a final NUL. */
export function cName(name: string): Buffer {
  if (name.includes('\0')) throw Object.assign(new Error('a name contains a NUL character'), { code: 'EINVAL' })
  return Buffer.from(name + '\0', 'utf8')
}

/** A name of `cName` or of a listing as text, for messages (invalid UTF-8 becomes U+FFFD). */
export const nameText = (name: Buffer) => name.toString('utf8', 0, name.length - 1)

/** openat(2): a descriptor, or -errno. */
export function openat(dirfd: number, name: Buffer, flags: number): number {
  if (WIN) return win.openat(dirfd, name, flags)
  const c = sys()
  const fd = c.openat(dirfd, name, flags)
  return fd >= 0 ? fd : -errnoOf(c)
}

/** unlinkat(2), flags 0 or AT_REMOVEDIR: 0, or -errno. */
export function unlinkat(dirfd: number, name: Buffer, flags: number): number {
  if (WIN) return win.unlinkat(dirfd, name, flags)
  const c = sys()
  return c.unlinkat(dirfd, name, flags) === 0 ? 0 : -errnoOf(c)
}

/** mkdirat(2): 0, or -errno (EEXIST when anything, a link too, has the name). */
export function mkdirat(dirfd: number, name: Buffer, mode: number): number {
  if (WIN) return win.mkdirat(dirfd, name, mode)
  const c = sys()
  return c.mkdirat(dirfd, name, mode) === 0 ? 0 : -errnoOf(c)
}

/** renameat(2): 0, or -errno. Like rename(2), it replaces an existing `to` (an empty folder for a folder). */
export function renameat(fromfd: number, from: Buffer, tofd: number, to: Buffer): number {
  if (WIN) return win.renameat(fromfd, from, tofd, to)
  const c = sys()
  return c.renameat(fromfd, from, tofd, to) === 0 ? 0 : -errnoOf(c)
}

const linkBuffer = Buffer.allocUnsafe(4097)

/**
 * readlinkat(2): the value of the link `name` in `dirfd` as its bytes (a link's value need not
 * be UTF-8; `fs.symlinkSync` takes the Buffer as it is), or -errno (EINVAL: not a link).
 */
export function readlinkat(dirfd: number, name: Buffer): Buffer | number {
  if (WIN) return win.readlinkat(dirfd, name)
  const c = sys()
  const n = Number(c.readlinkat(dirfd, name, linkBuffer, linkBuffer.length))
  if (n < 0) return -errnoOf(c)
  if (n >= linkBuffer.length) return -E.ENAMETOOLONG
  return Buffer.from(linkBuffer.subarray(0, n))
}

/** close(2); a failure to close a folder opened for reading loses nothing and is ignored. */
export function close(fd: number) {
  if (WIN) return win.close(fd)
  sys().close(fd)
}

/**
 * What the callers read of an open file's or folder's status: fstat's fields with bigints (times
 * to the nanosecond, inodes past 2^53).
 */
export type FdStat = Pick<
  BigIntStats,
  | 'dev'
  | 'ino'
  | 'mode'
  | 'nlink'
  | 'size'
  | 'atimeNs'
  | 'mtimeNs'
  | 'birthtimeNs'
  | 'isFile'
  | 'isDirectory'
  | 'isSymbolicLink'
>

/**
 * Sets a folder's mode and times (a copied folder, once filled). On Windows a folder handle is not
 * a descriptor and modes mean nothing: the times are set by the folder's path, below folders
 * held open (windows/calls.ts).
 */
export function setFolderTimes(fd: number, mode: number, atimeMs: number, mtimeMs: number): void {
  if (WIN) return utimesSync(win.folderPath(fd), atimeMs / 1000, mtimeMs / 1000)
  fchmodSync(fd, mode & 0o7777)
  futimesSync(fd, atimeMs / 1000, mtimeMs / 1000)
}

/** Whether `fd` is a Windows folder handle (which node:fs does not know), not a descriptor. */
export const isFolderHandle = (fd: number): boolean => WIN && win.isFolder(fd)

/** fstat of a descriptor these calls opened, a folder's as well as a file's. */
export function statOf(fd: number): FdStat {
  if (WIN && win.isFolder(fd)) return win.statOf(fd)
  return fstatSync(fd, { bigint: true })
}

/** statOf with numbers: cheaper (no bigints), for comparisons with lstat's numbers. */
export function statNumbersOf(fd: number): Pick<Stats, 'dev' | 'ino' | 'size' | 'mtimeMs' | 'isFile' | 'isDirectory'> {
  if (WIN && win.isFolder(fd)) {
    const s = win.statOf(fd)
    return {
      dev: Number(s.dev),
      ino: Number(s.ino),
      size: Number(s.size),
      mtimeMs: Number(s.mtimeNs) / 1e6,
      isFile: s.isFile,
      isDirectory: s.isDirectory,
    }
  }
  return fstatSync(fd)
}

/** Device and inode of an open descriptor (fstat). */
export function identity(fd: number): { dev: bigint; ino: bigint } {
  const s = statOf(fd)
  return { dev: s.dev, ino: s.ino }
}

export type DirEntry = {
  /** The name as bytes with a final NUL, ready to pass back to openat/unlinkat. */
  name: Buffer
  /** d_type: one of DT, or another type (fifo, socket, device). */
  type: number
  /** d_ino: the inode the folder's entry names. */
  ino: bigint
}

const DOT = Buffer.from('.\0')
const DOTDOT = Buffer.from('..\0')

/**
 * All entries of the open folder `fd` except `.` and `..`, or -errno. The folder is read
 * through its own descriptor (openat(fd, ".")), closed before returning, so `fd` stays usable
 * and no DIR buffer is held while the entries are worked on; a whole listing is taken before
 * any of it is removed, since removing while reading can make some systems skip entries.
 */
export function listDir(fd: number): DirEntry[] | number {
  if (WIN) return win.listDir(fd, DT)
  return listWith(sys(), fd, false)
}

/**
 * A DIR stream over the folder descriptor `fd` (the result of an openat: -1 passes the failure
 * on), which then owns it: closedir closes both. -errno when either call failed (`fd` closed).
 */
function streamOf(c: Calls, fd: number): number {
  if (fd < 0) return -errnoOf(c)
  const dir = c.fdopendir(fd)
  if (dir) return dir
  const errno = errnoOf(c)
  c.close(fd)
  return -errno
}

function listWith(c: Calls, fd: number, dots: boolean): DirEntry[] | number {
  const dir = streamOf(c, c.openat(fd, DOT, O.RDONLY | O.DIRECTORY | O.CLOEXEC))
  if (dir < 0) return dir
  const { typeAt, nameAt } = P!
  // readdir returns NULL both at the end and on an error: errno, cleared before each call, tells.
  const errno = new Int32Array(toArrayBuffer(c.errnoAt()!, 0, 4))
  const entries: DirEntry[] = []
  try {
    for (;;) {
      errno[0] = 0
      const at = c.readdir(dir)
      if (!at) {
        if (errno[0]) return -errno[0]
        return entries
      }
      const reclen = read.u16(at, 16)
      const raw = new Uint8Array(toArrayBuffer(at, nameAt, reclen - nameAt))
      const end = raw.indexOf(0)
      if (end < 0) throw new Error('a dirent name without its final NUL (layout mismatch)')
      // Copied: readdir reuses its buffer. The copy keeps the NUL, for the calls.
      const name = Buffer.from(raw.subarray(0, end + 1))
      if (!dots && name[0] === 0x2e && (end === 1 || (end === 2 && name[1] === 0x2e))) continue
      entries.push({ name, type: read.u8(at, typeAt), ino: read.u64(at, 0) })
    }
  } finally {
    c.closedir(dir)
  }
}

const errorMap = getSystemErrorMap()

/** 'ENOENT' for E.ENOENT, and so on. */
export function errnoName(errno: number): string {
  return codeAndText(Math.abs(errno))[0]
}

/**
 * The code and words of the errno number `n` (E's numbers). Node's table is by libuv's numbers:
 * the system's own on Linux and macOS, but on Windows libuv numbers its codes itself (-4058 for
 * ENOENT, where os.constants.errno says 2), so there the code is found by name.
 */
const byNumber = new Map(Object.entries(E).map(([code, n]) => [n, code]))
const textByCode = new Map([...errorMap.values()].map(([code, text]) => [code, text]))
function codeAndText(n: number): [string, string] {
  if (!WIN) return errorMap.get(-n) ?? [`E${n}`, `error ${n}`]
  const code = byNumber.get(n) ?? `E${n}`
  return [code, textByCode.get(code) ?? `error ${n}`]
}

/**
 * A Node-style error for a failed call (`code`, `errno` < 0, `syscall`, `path`), as `fs` makes
 * them: "ENOENT: no such file or directory, unlinkat 'a/b'". `path` is what the caller wants
 * shown: relative to the folder being worked on, never an absolute path or a link target.
 */
export function sysError(errno: number, syscall: string, path: string): NodeJS.ErrnoException {
  const n = Math.abs(errno)
  const [code, text] = codeAndText(n)
  return Object.assign(new Error(`${code}: ${text}, ${syscall} '${path}'`), { code, errno: -n, syscall, path })
}

// ---------------------------------------------------------------------------------------------
// Calls for moving one file (file.ts): a rename that never replaces, linkat, openat with a mode
// (an exclusive create) and futimens. They are loaded apart from the calls above and one symbol
// at a time, so that a C library without one of them (renameat2 came with glibc 2.28; musl has
// it only in recent versions) still gives the others; a missing one answers -ENOSYS.
//
// Linux: renameat2(2) with RENAME_NOREPLACE (1). macOS: renameatx_np(2) with RENAME_EXCL (4).
// Both fail with EEXIST when `to` exists (a dangling link too) and with EINVAL (Linux) or
// ENOTSUP (macOS) on a file system that cannot honour the flag (NFS, some FUSE); the caller then
// uses linkat + unlinkat, which never replaces either.

type MoveCalls = {
  renameNoReplace?: (fromfd: number, from: Buffer, tofd: number, to: Buffer, flags: number) => number
  linkat?: (fromfd: number, from: Buffer, tofd: number, to: Buffer, flags: number) => number
  openatMode?: (dirfd: number, name: Buffer, flags: number, mode: number) => number
  futimens?: (fd: number, times: BigInt64Array) => number
  symlinkat?: (target: Buffer, dirfd: number, name: Buffer) => number
  fcloneat?: (srcfd: number, dirfd: number, name: Buffer, flags: number) => number
}

/** The flag of the rename that fails instead of replacing: RENAME_NOREPLACE, RENAME_EXCL. */
export const RENAME_NOREPLACE = process.platform === 'darwin' ? 0x4 : 0x1

let moveCalls: MoveCalls | undefined

/** `symbol` of the C library, a function of `args` that returns an int, or undefined where the library lacks it (or has none here). */
export function cFunction(symbol: string, args: FFIType[]): ((...a: any[]) => number) | undefined {
  for (const name of P?.libraries ?? []) {
    try {
      return dlopen(name, { [symbol]: { args, returns: FFIType.i32 } }).symbols[symbol] as (...a: any[]) => number
    } catch {}
  }
  return undefined
}

function loadMoveCalls(): MoveCalls {
  if (moveCalls) return moveCalls
  sys() // the C library loads and checks itself first; errno is read through it
  const i32 = FFIType.i32
  const ptr = FFIType.ptr
  moveCalls = {
    renameNoReplace: cFunction(process.platform === 'darwin' ? 'renameatx_np' : 'renameat2', [
      i32,
      ptr,
      i32,
      ptr,
      FFIType.u32,
    ]),
    linkat: cFunction('linkat', [i32, ptr, i32, ptr, i32]),
    // openat's mode is a variadic argument, declared here as a fixed one: the same register on
    // x86_64 (both systems) and on arm64 Linux. Apple arm64 passes variadic arguments on the
    // stack, so there the mode is not what was passed: callers fchmod the file they created
    // right away (file.ts does), and the umask narrows whatever mode it got meanwhile.
    openatMode: cFunction('openat', [i32, ptr, i32, FFIType.u32]),
    futimens: cFunction('futimens', [i32, ptr]),
    symlinkat: cFunction('symlinkat', [ptr, i32, ptr]),
    // <sys/clonefile.h>, macOS 10.12 on: fixed arguments only; uint32_t flags.
    fcloneat: process.platform === 'darwin' ? cFunction('fclonefileat', [i32, i32, ptr, FFIType.u32]) : undefined,
  }
  return moveCalls
}

const missing = -(E.ENOSYS ?? 38)

/**
 * Renames `from` (in `fromfd`) to `to` (in `tofd`) unless `to` exists: 0, or -errno (EEXIST when
 * taken; EXDEV across file systems; EINVAL/ENOTSUP where the file system cannot do it; ENOSYS
 * when the C library has no such call).
 */
export function renameNoReplace(fromfd: number, from: Buffer, tofd: number, to: Buffer): number {
  if (WIN) return win.renameNoReplace(fromfd, from, tofd, to)
  const call = loadMoveCalls().renameNoReplace
  if (!call) return missing
  return call(fromfd, from, tofd, to, RENAME_NOREPLACE) === 0 ? 0 : -errnoOf(sys())
}

/**
 * linkat(2) with flags 0: a second name `to` for the file `from`, which is not followed when it
 * is a link. 0, or -errno (EEXIST when `to` exists: it never replaces).
 */
export function linkat(fromfd: number, from: Buffer, tofd: number, to: Buffer): number {
  if (WIN) return win.linkat(fromfd, from, tofd, to)
  const call = loadMoveCalls().linkat
  if (!call) return missing
  return call(fromfd, from, tofd, to, 0) === 0 ? 0 : -errnoOf(sys())
}

/** openat(2) with a mode, for O_CREAT: a descriptor, or -errno. See the note on Apple arm64 above. */
export function openatCreate(dirfd: number, name: Buffer, flags: number, mode: number): number {
  if (WIN) return win.openatCreate(dirfd, name, flags, mode)
  const call = loadMoveCalls().openatMode
  if (!call) return missing
  const fd = call(dirfd, name, flags, mode)
  return fd >= 0 ? fd : -errnoOf(sys())
}

/**
 * futimens(2): the access and modification times of an open file to the nanosecond (Node's
 * futimes takes seconds as a double, which loses the last digits). 0, or -errno.
 * struct timespec is { time_t (64 bits); long (64 bits) } on every platform supported here.
 */
export function futimens(fd: number, atimeNs: bigint, mtimeNs: bigint): number {
  if (WIN) return win.futimens(fd, atimeNs, mtimeNs)
  const call = loadMoveCalls().futimens
  if (!call) return missing
  return call(fd, new BigInt64Array([...timespec(atimeNs), ...timespec(mtimeNs)])) === 0 ? 0 : -errnoOf(sys())
}

/** Seconds and nanoseconds (0 to 999,999,999, also before 1970) of a time in nanoseconds. */
function timespec(ns: bigint): [bigint, bigint] {
  const G = 1_000_000_000n
  const rest = ((ns % G) + G) % G
  return [(ns - rest) / G, rest]
}

/** symlinkat(2): a link `name` in `dirfd` whose value is `target` (bytes with a final NUL). 0, or -errno (EEXIST when taken). */
export function symlinkat(target: Buffer, dirfd: number, name: Buffer): number {
  if (WIN) return win.symlinkat(target, dirfd, name)
  const call = loadMoveCalls().symlinkat
  if (!call) return missing
  return call(target, dirfd, name) === 0 ? 0 : -errnoOf(sys())
}

/** fclonefileat flags (<sys/clonefile.h>): a link is cloned as the link; the clone is the caller's, not the source's owner's. */
export const CLONE_NOFOLLOW = 0x0001
export const CLONE_NOOWNERCOPY = 0x0002

/**
 * macOS fclonefileat(2): `name` in `dirfd` made as a clone of the open file `srcfd` (APFS: the
 * blocks are shared, nothing is copied), with the source's mode, ACLs, extended attributes and
 * times. It makes `name` itself and never replaces (EEXIST, a dangling link too). 0, or -errno:
 * ENOTSUP where the volume cannot clone (not APFS), EXDEV across volumes, ENOSYS everywhere but
 * macOS (nothing is loaded there) and where libSystem lacks the call. Written from the header;
 * never run on a Mac.
 */
export function fcloneat(srcfd: number, dirfd: number, name: Buffer, flags: number): number {
  if (WIN || process.platform !== 'darwin') return missing
  const call = loadMoveCalls().fcloneat
  if (!call) return missing
  return call(srcfd, dirfd, name, flags) === 0 ? 0 : -errnoOf(sys())
}

// ---------------------------------------------------------------------------------------------
// A folder's entries with each one's lstat, for walks of big trees (the watcher's scans). On
// Linux through statx(2) relative to the folder's descriptor, into one buffer used again and
// again: no path is resolved and no Stats object is made per entry (a walk of 100,000 files took
// 375 ms this way against 550 by opendir + lstatSync; docs/benchmarks.md). The numbers are made
// as Node's lstat makes them, and checked once against lstatSync on this machine: any difference
// (or no statx: macOS, an old C library) and `openStatted` answers undefined, and callers use
// opendir + lstatSync.
//
// struct statx (<linux/stat.h>, the same on every Linux architecture): stx_mask u32 @0,
// stx_nlink u32 @16, stx_mode u16 @28, stx_ino u64 @32, stx_size u64 @40, timestamps
// {tv_sec i64, tv_nsec u32} at atime @64, btime @80, mtime @112, stx_dev_major u32 @136,
// stx_dev_minor u32 @140; 256 bytes in all.

/** One entry's lstat, in the numbers Node's Stats has (`birthtimeMs` 0 where none is kept). */
export type StatFields = {
  mode: number
  nlink: number
  dev: number
  ino: number
  size: number
  atimeMs: number
  mtimeMs: number
  birthtimeMs: number
}

const AT_SYMLINK_NOFOLLOW = 0x100
/** STATX_BASIC_STATS | STATX_BTIME. */
const STATX_WANTED = 0x7ff | 0x800
const STATX_BTIME = 0x800

type StatxCalls = { statx: (dirfd: number, name: number | Buffer, flags: number, mask: number, into: number) => number }
let statxCalls: StatxCalls | null | undefined
const statxBuffer = new Uint8Array(256)
/** Its address, taken once (a typed array passed to a call is converted on every call). */
let statxAt: number | undefined
const statxView = new DataView(statxBuffer.buffer)

const u64At = (at: number) => statxView.getUint32(at, true) + statxView.getUint32(at + 4, true) * 2 ** 32
const msAt = (at: number) =>
  (statxView.getUint32(at, true) + statxView.getInt32(at + 4, true) * 2 ** 32) * 1000 +
  statxView.getUint32(at + 8, true) / 1e6

/** What the last statx filled in. st_dev as the kernel encodes it for stat(2) (new_encode_dev), as Node shows it. */
function statxFields(): StatFields {
  const major = statxView.getUint32(136, true)
  const minor = statxView.getUint32(140, true)
  return {
    mode: statxView.getUint16(28, true),
    nlink: statxView.getUint32(16, true),
    dev: (minor & 0xff) | (major << 8) | ((minor & ~0xff) << 12),
    ino: u64At(32),
    size: u64At(40),
    atimeMs: msAt(64),
    mtimeMs: msAt(112),
    birthtimeMs: statxView.getUint32(0, true) & STATX_BTIME ? msAt(80) : 0,
  }
}

function loadStatx(): StatxCalls | undefined {
  if (statxCalls !== undefined) return statxCalls ?? undefined
  statxCalls = null
  if (process.platform !== 'linux' || !load()) return undefined
  statxAt = ptr(statxBuffer)
  for (const name of P!.libraries) {
    try {
      const calls = dlopen(name, {
        statx: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
      }).symbols as unknown as StatxCalls
      // The same numbers as lstatSync, on a folder and a file of this machine, or not used at all.
      for (const path of ['/', process.execPath]) {
        if (calls.statx(AT_FDCWD, cName(path), AT_SYMLINK_NOFOLLOW, STATX_WANTED, statxAt) !== 0) return undefined
        const mine = statxFields()
        const theirs = lstatSync(path)
        for (const k of ['mode', 'nlink', 'dev', 'ino', 'size', 'mtimeMs', 'birthtimeMs'] as const)
          if (mine[k] !== theirs[k]) return undefined
      }
      statxCalls = calls
      return calls
    } catch {}
  }
  return undefined
}

/** An open folder read one entry at a time; `stat()` is the lstat of the entry `next()` gave last. */
export type StattedFolder = {
  /** The next name (not `.` or `..`), or null at the end. */
  next(): string | null
  /** The last name is not valid UTF-8: the text `next()` gave shows it (U+FFFD for what is not) but names nothing. */
  undecodable(): boolean
  /** The lstat of the last name, or -errno (ENOENT: gone since it was listed). */
  stat(): StatFields | number
  close(): void
}

/**
 * The folder at `path` (not followed when it is a link: ENOTDIR), to read with each entry's
 * lstat; -errno when it cannot be opened; undefined when this system has no statx for it (see above).
 */
export function openStatted(path: string): StattedFolder | number | undefined {
  const sx = loadStatx()
  if (!sx) return undefined
  const c = sys()
  const fd = c.openat(AT_FDCWD, cName(path), DIR_FLAGS)
  const dir = streamOf(c, fd)
  if (dir < 0) return dir
  const nameAt = P!.nameAt
  let name = 0
  let bad = false
  let open = true
  return {
    next() {
      for (;;) {
        // NULL at the end, and on an error (a folder removed while read): both end the listing.
        const at = c.readdir(dir)
        if (!at) return null
        name = at + nameAt
        const first = read.u8(name, 0)
        if (first === 0x2e && (read.u8(name, 1) === 0 || (read.u8(name, 1) === 0x2e && read.u8(name, 2) === 0)))
          continue
        const text = new CString(name as Pointer).toString()
        // U+FFFD is where a decoder met bytes that are not UTF-8 (or a name that has that very
        // character): the bytes tell which.
        bad =
          text.includes('\uFFFD') &&
          !Buffer.from(text).equals(Buffer.from(toArrayBuffer(name as Pointer, 0, rawLength(name))))
        return text
      }
    },
    undecodable: () => bad,
    stat() {
      return sx.statx(fd, name, AT_SYMLINK_NOFOLLOW, STATX_WANTED, statxAt!) === 0 ? statxFields() : -errnoOf(c)
    },
    close() {
      if (open) c.closedir(dir) // closes fd too
      open = false
    },
  }
}

/** The length of the NUL-ended name at `at`, in bytes (names are at most 255 bytes). */
function rawLength(at: number): number {
  let n = 0
  while (n < 256 && read.u8(at as Pointer, n) !== 0) n++
  return n
}

let getxattrCall: ((...a: any[]) => number) | undefined | null

/**
 * The LTFS `startblock` extended attribute of the file at `path` (the tape block where its data
 * begins), or undefined where the file system gives none (not LTFS, no getxattr here). LTFS names
 * it `user.ltfs.startblock` on Linux and `ltfs.startblock` on macOS; Windows has no such call here.
 */
export function ltfsStartBlock(path: string): number | undefined {
  if (WIN) return undefined
  if (getxattrCall === undefined) {
    sys()
    const ptr = FFIType.ptr
    getxattrCall =
      (process.platform === 'darwin'
        ? cFunction('getxattr', [ptr, ptr, ptr, FFIType.u64, FFIType.u32, FFIType.i32])
        : cFunction('getxattr', [ptr, ptr, ptr, FFIType.u64])) ?? null
  }
  if (!getxattrCall) return undefined
  const name = cName(process.platform === 'darwin' ? 'ltfs.startblock' : 'user.ltfs.startblock')
  const value = Buffer.alloc(32)
  const n = getxattrCall(cName(path), name, value, value.length, 0, 0)
  if (n <= 0) return undefined
  const text = value.toString('utf8', 0, n).replace(/\0+$/, '').trim()
  return /^\d+$/.test(text) ? Number(text) : undefined
}
