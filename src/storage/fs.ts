// Every change Reelhouse makes on disk: walking, copying and removing folder trees. Nothing here
// follows a symbolic link: links are copied as links and removed as links. Callers check
// containment (paths.ts) before calling, and the functions check it again where it matters.
//
// Every regular file a copy makes is checked by hash: the bytes are hashed (xxHash64) as they are
// read from the source, and the copy, once written, is read back and hashed again; a file whose
// read-back differs fails the copy, which names it (verified.ts says what this proves).
//
// Speed: a project folder is mostly small files, where the cost is the number of calls, not
// bytes. Calls on small things are made synchronously, in slices of a few milliseconds with a
// turn of the event loop between slices, so the API stays responsive while a copy runs; a
// large file is copied asynchronously, in chunks on the thread pool (verified.ts).
import {
  type BigIntStats,
  type Stats,
  constants as fsConstants,
  existsSync,
  fstatSync,
  closeSync,
  fchmodSync,
  futimesSync,
  lstatSync,
  opendirSync,
  readSync,
  writeSync,
} from 'node:fs'
import { lstat, opendir, rename, stat } from 'node:fs/promises'
import { join } from 'node:path'
import {
  AT_FDCWD,
  CLONE_NOFOLLOW,
  CLONE_NOOWNERCOPY,
  DIR_FLAGS,
  E,
  O,
  type StatFields,
  cName,
  close,
  fcloneat,
  mkdirat,
  openStatted,
  setFolderTimes,
  statNumbersOf,
  statOf,
  openat,
  openatCreate,
  readlinkat,
  symlinkat,
  sysError,
  unlinkat,
} from './dirfd.ts'
import { CancelledError } from './errors.ts'
import { type HashedFile, xxh64 } from './hash.ts'
import { asFolder, baseName, dirName, relParts, stampOf } from './paths.ts'
import { requireFileWork } from './platform.ts'
import { copyHashed, readBack, readBackProblem } from './verified.ts'

export type Entry = {
  /** Path relative to the walked root, '' for the root itself. */
  rel: string
  kind: 'dir' | 'file' | 'link' | 'other'
  size: number
  /** Times in ms, as numbers: a walk of 100,000 files made 200,000 Dates nobody read. */
  atimeMs: number
  mtimeMs: number
  mode: number
  /** Identity on disk, to notice a folder swapped while it is being worked on. */
  dev: number
  ino: number
  /** Birth time, or modification time where none is kept (paths.ts stampOf). */
  stamp: number
  /** Hard links: 1 when this name is the file's only one. */
  nlink: number
}

export { CancelledError }

const SLICE_MS = 8

/**
 * Time slices for synchronous steps: `due()` (checked between steps, cheap, and where a
 * cancellation is noticed) says when the slice is used up; `tick()` then gives the event loop
 * its turn. Awaiting only when due keeps the per-file cost of small files near a plain loop's.
 */
export function slicer(signal?: AbortSignal) {
  let since = performance.now()
  return {
    due() {
      if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
      return this.spent()
    },
    /** The slice's time is used up (due() without the cancel check: for a loop inside a transaction, which must not throw half-way). */
    spent() {
      return performance.now() - since >= SLICE_MS
    },
    async tick() {
      await new Promise((resolve) => setImmediate(resolve))
      since = performance.now()
    },
  }
}

const { S_IFMT, S_IFLNK, S_IFDIR, S_IFREG } = fsConstants

/** An Entry from an lstat (a Stats, or dirfd.ts's numbers of one). */
const entryOf = (rel: string, s: StatFields, kind: Entry['kind'] = kindOf(s.mode)): Entry => ({
  rel,
  kind,
  size: s.size,
  atimeMs: s.atimeMs,
  mtimeMs: s.mtimeMs,
  mode: s.mode,
  dev: s.dev,
  ino: s.ino,
  stamp: stampOf(s),
  nlink: s.nlink,
})

const kindOf = (mode: number): Entry['kind'] => {
  const type = mode & S_IFMT
  return type === S_IFLNK ? 'link' : type === S_IFDIR ? 'dir' : type === S_IFREG ? 'file' : 'other'
}

/** `root` with one final slash, for joining with a relative path by concatenation. */
const base = asFolder

/**
 * Every entry under root (root first, parents before children), by lstat: links are not entered.
 * For scans of folders others write to (the watcher): `skip` leaves out an entry and everything
 * under it (clutter, work folders), and `live` lets entries vanish between the listing and their
 * lstat (they are left out) instead of failing the walk.
 */
export function listTree(
  root: string,
  signal?: AbortSignal,
  options: { skip?: (rel: string) => boolean; live?: boolean } = {},
): Promise<Entry[]> {
  return walkTree(root, signal, options, entryOf)
}

/**
 * listTree with the caller's own record per entry (`make`; undefined: nothing kept, a folder is
 * still entered): a walk of 100,000 files makes its 100,000 records once, not an Entry each first.
 */
export async function walkTree<T>(
  root: string,
  signal: AbortSignal | undefined,
  options: {
    skip?: (rel: string) => boolean
    live?: boolean
    /**
     * A folder that cannot be listed or looked into (EACCES, EPERM: another user's, `lost+found`)
     * is left out and said here (`rel` '' for the root), instead of failing the walk.
     */
    unreadable?: (rel: string, code: string) => void
    /**
     * A name that is not valid UTF-8 (no path of ours can name it): left out and said here, with
     * its folder and the name as shown (U+FFFD where the bytes are not UTF-8).
     */
    undecodable?: (dir: string, shown: string) => void
  },
  make: (rel: string, s: StatFields, kind: Entry['kind']) => T | undefined,
): Promise<T[]> {
  // Where folder descriptors are not written (Windows), the walk by names below is not done
  // either: scans are file work like any other there.
  requireFileWork()
  const slice = slicer(signal)
  const s = await lstat(root)
  const entries: T[] = []
  const first = make('', s, kindOf(s.mode))
  if (first !== undefined) entries.push(first)
  if (!s.isDirectory()) return entries
  const prefix = base(root)
  const pending = ['']
  while (pending.length) {
    const dir = pending.pop()!
    // Read a folder a few names at a time: an image sequence can hold 100,000 files in one.
    let folder
    try {
      folder = openListing(prefix + dir)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (options.unreadable && (code === 'EACCES' || code === 'EPERM')) {
        options.unreadable(dir, code)
        continue
      }
      if (options.live && dir) continue // the folder went away (or became a file) meanwhile
      throw error
    }
    try {
      for (let name = folder.next(); name !== null; name = folder.next()) {
        if (slice.due()) await slice.tick()
        if (folder.undecodable()) {
          options.undecodable?.(dir, name)
          continue
        }
        const rel = dir ? `${dir}/${name}` : name
        if (options.skip?.(rel)) continue
        let stat
        try {
          stat = folder.stat(rel)
        } catch (error) {
          // Listed but not searchable (read without execute permission): no name in it can be looked at.
          const code = (error as NodeJS.ErrnoException).code
          if (!options.unreadable || (code !== 'EACCES' && code !== 'EPERM')) throw error
          options.unreadable(dir, code)
          break
        }
        if (stat === undefined) {
          if (options.live) continue // gone between the listing and its lstat
          throw sysError(-(E.ENOENT ?? 2), 'lstat', prefix + rel)
        }
        const kind = kindOf(stat.mode)
        const entry = make(rel, stat, kind)
        if (entry !== undefined) entries.push(entry)
        if (kind === 'dir') pending.push(rel)
      }
    } finally {
      folder.close()
    }
  }
  return entries
}

/**
 * One folder's names and their lstat: through statx relative to the folder (dirfd.ts
 * openStatted: no path resolved, no Stats object per entry) where the system has it, else
 * opendir + lstatSync. `stat(rel)` is of the name `next()` gave last; undefined when that name
 * is gone; other failures throw as fs does.
 */
function openListing(path: string): {
  next(): string | null
  undecodable(): boolean
  stat(rel: string): StatFields | undefined
  close(): void
} {
  const statted = openStatted(path)
  if (typeof statted === 'number') throw sysError(statted, 'opendir', path)
  if (statted)
    return {
      next: () => statted.next(),
      undecodable: () => statted.undecodable(),
      stat(rel) {
        const s = statted.stat()
        if (typeof s !== 'number') return s
        if (s === -(E.ENOENT ?? 2)) return undefined
        throw sysError(s, 'lstat', base(path) + baseName(rel))
      },
      close: () => statted.close(),
    }
  const handle = opendirSync(path)
  let last: string | null = null
  return {
    next: () => (last = handle.readSync()?.name ?? null),
    // Names come decoded here: one with U+FFFD that no file has is one whose bytes were not UTF-8.
    undecodable: () => last !== null && last.includes('\uFFFD') && !existsSync(base(path) + last),
    stat(rel) {
      try {
        return lstatSync(base(path) + baseName(rel))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
        throw error
      }
    },
    close: () => handle.closeSync(),
  }
}

/** Regular files under root and their bytes (what `files` of a project counts); `skip` leaves out an entry and all under it. */
export async function totals(
  root: string,
  signal?: AbortSignal,
  skip?: (rel: string) => boolean,
): Promise<{ count: number; bytes: number }> {
  let count = 0
  let bytes = 0
  for (const e of await listTree(root, signal, { skip })) {
    if (e.kind === 'file') {
      count++
      bytes += e.size
    }
  }
  return { count, bytes }
}

export type Progress = { files: number; bytes: number }

/**
 * Each regular file's xxHash64 (16 hex digits) by its path relative to the root: the hash of the
 * bytes read from the source, which the copy was read back and found to hold.
 */
export type Hashes = ReadonlyMap<string, string>

/** What copyTree did: the files and bytes copied, and each file's hash. */
export type Copied = Progress & { hashes: Hashes }

/** Files from this size on are copied asynchronously, with progress while they are copied. */
const LARGE = 8 * 1024 * 1024

/**
 * Opens the folder `rel` below `root` one name at a time, never through a symbolic link
 * (O_NOFOLLOW at every step): whatever was swapped on the way, the folder reached lies inside
 * `root`. `root` itself is opened by its path, as configured (a device path may be a link).
 * The caller closes the descriptor.
 */
export function openBeneath(root: string, rel: string): number {
  const fd = openat(AT_FDCWD, cName(root), O.RDONLY | O.DIRECTORY | O.CLOEXEC)
  if (fd < 0) throw sysError(fd, 'open', 'the device folder')
  return descend(fd, rel)
}

/**
 * From the open folder `fd` down the folders of `rel` one name at a time, never through a
 * symbolic link (O_NOFOLLOW at every step). Takes `fd` (closes it, also on a failure) and answers
 * the last folder's descriptor, which the caller closes.
 */
export function descend(fd: number, rel: string): number {
  let walked = ''
  for (const part of relParts(rel)) {
    walked = walked ? `${walked}/${part}` : part
    const next = openat(fd, cName(part), DIR_FLAGS)
    close(fd)
    if (next < 0) throw sysError(next, 'openat', walked)
    fd = next
  }
  return fd
}

/**
 * The open file or folder is the one the walk saw (device and inode). An fstat of numbers, not
 * bigints: the walk's own numbers came from an lstat of numbers, so the comparison is the same,
 * and on a folder of small files the bigint Stats cost a microsecond per file (5% of a copy).
 */
const sameAsWalked = (fd: number, e: Entry) => {
  const s = statNumbersOf(fd)
  return s.dev === e.dev && s.ino === e.ino
}

/**
 * Copies the tree the walk `entries` describe from the open folder `sourceFd` into the new folder
 * `target.name` of the open folder `target.parent`. Both sides work through descriptors only:
 * every source folder and file is opened relative to its parent's descriptor with O_NOFOLLOW
 * and must be the very folder or file the walk saw (same device and inode), so a link or a
 * swapped folder met on the way fails the copy and nothing outside the walked tree is ever read;
 * every target folder, file and link is made relative to its parent's target descriptor
 * (exclusive creates, never following a link), so a folder swapped above or inside the target
 * cannot send a write anywhere else. Regular files are copied without ever overwriting, then
 * their size is checked; modes and times are set on the open files and folders (a folder's when
 * everything in it is done, deepest first). Links are recreated as links. Other kinds of files
 * (sockets, devices, pipes) are refused. The target folder is 0700 until its contents are in.
 * Every regular file is hashed as it is read and read back once written (the top of this file);
 * one whose read-back differs fails the copy with its path in the message. `onProgress` is
 * called after every file and, for large files, while they are copied. `onWritten` is called
 * with a file's path once its bytes are written, before they are read back (the tests change the
 * copy there; the service passes none). `seal` is called last, with the descriptor of the new
 * folder and every file's hash, once everything in it is copied and checked but before the
 * folder gets its mode and times: it is still 0700 and ours, so what `seal` writes into it (the
 * copy's history) is written whatever the source's mode, and the folder keeps the source's
 * times. Nothing writes into the target after this returns or throws. The caller keeps
 * `sourceFd` and `target.parent` (and closes them); `target.path` is for messages only.
 */
export async function copyTree(
  sourceFd: number,
  target: { parent: number; name: string; path: string },
  options: {
    entries: Entry[]
    signal?: AbortSignal
    onProgress?: (done: Progress) => void
    onWritten?: (rel: string) => void
    seal?: (folder: number, hashes: Hashes) => void | Promise<void>
  },
): Promise<Copied> {
  const { signal, onProgress, onWritten, entries } = options
  const other = entries.find((e) => e.kind === 'other')
  if (other) throw new Error(`${other.rel} is not a regular file, folder or link`)
  if (!entries[0] || entries[0].kind !== 'dir' || !sameAsWalked(sourceFd, entries[0]))
    throw new Error('the source folder changed since it was walked')
  const slice = slicer(signal)
  const done: Progress = { files: 0, bytes: 0 }
  const hashes = new Map<string, string>()
  const children = childrenOf(entries)
  const names = nameBuffer()

  // Depth first, one pair of open descriptors (source, target) per level: a folder's files,
  // then its subfolders; a folder's mode and times are set when it is left.
  type Frame = { entry: Entry; src: number; dst: number; dirs: Entry[] }
  const stack: Frame[] = []
  const enter = (entry: Entry, src: number, dst: number) => {
    const here = children.get(entry.rel) ?? []
    stack.push({ entry, src, dst, dirs: here.filter((e) => e.kind === 'dir') })
    return here
  }
  /** Makes the folder `name` in `parent` (0700 while it is filled) and opens it. */
  const makeDir = (parent: number, name: string, rel: string) => {
    const made = mkdirat(parent, cName(name), 0o700)
    if (made < 0) throw sysError(made, 'mkdirat', rel)
    const fd = openat(parent, cName(name), DIR_FLAGS)
    if (fd < 0) throw sysError(fd, 'openat', rel)
    return fd
  }
  const leave = (frame: Frame) => setFolderTimes(frame.dst, frame.entry.mode, frame.entry.atimeMs, frame.entry.mtimeMs)
  try {
    let files = enter(entries[0], -1, makeDir(target.parent, target.name, '.'))
    for (;;) {
      const frame = stack.at(-1)!
      const src = frame.src < 0 ? sourceFd : frame.src
      for (const e of files) {
        if (e.kind === 'dir') continue
        if (slice.due()) await slice.tick()
        const name = names.of(baseName(e.rel))
        if (e.kind === 'link') {
          const value = readlinkat(src, name)
          if (typeof value === 'number') throw sysError(value, 'readlinkat', e.rel)
          const made = symlinkat(Buffer.concat([value, NUL]), frame.dst, name)
          if (made < 0) throw sysError(made, 'symlinkat', e.rel)
          continue
        }
        const input = openat(src, name, O.RDONLY | O.NOFOLLOW | O.NONBLOCK | O.CLOEXEC)
        if (input < 0) throw sysError(input, 'openat', e.rel)
        try {
          if (!sameAsWalked(input, e))
            throw new Error(`${e.rel} changed since the copy began (another file is in its place)`)
          // macOS: an APFS clone where the volume makes one (cloneInto); else, and on every other
          // system, the bytes are copied.
          const clone = process.platform === 'darwin' ? cloneInto(input, frame.dst, name, e) : -1
          if (clone >= 0) {
            try {
              hashes.set(e.rel, await checkClone(input, clone, e, signal, onWritten))
            } finally {
              closeSync(clone)
            }
          } else {
            // Read and write: the copy is read back through the descriptor it was written through.
            const output = openatCreate(frame.dst, name, O.RDWR | O.CREAT | O.EXCL | O.NOFOLLOW | O.CLOEXEC, 0o600)
            if (output < 0) throw sysError(output, 'openat', e.rel)
            try {
              const hash =
                e.size >= LARGE
                  ? await copyLarge(input, output, e, { done, signal, onProgress, onWritten })
                  : copySmall(input, output, e, onWritten)
              hashes.set(e.rel, hash)
              // The mode on the open file (exactly the source's, whatever the umask), then the times
              // (after the read-back, which may have touched the access time).
              fchmodSync(output, e.mode & 0o7777)
              futimesSync(output, e.atimeMs / 1000, e.mtimeMs / 1000)
            } finally {
              closeSync(output)
            }
          }
        } finally {
          closeSync(input)
        }
        done.files++
        done.bytes += e.size
        onProgress?.(done)
      }
      // The next subfolder of the deepest folder that has one left; folders done are finished and closed.
      let next: Entry | undefined
      while (stack.length && !(next = stack.at(-1)!.dirs.shift())) {
        const finished = stack.pop()!
        if (slice.due()) await slice.tick()
        try {
          if (stack.length === 0) await options.seal?.(finished.dst, hashes)
          leave(finished)
        } finally {
          if (finished.src >= 0) close(finished.src)
          close(finished.dst)
        }
      }
      if (!next) break
      if (slice.due()) await slice.tick()
      const parent = stack.at(-1)!
      const sub = openat(parent.src < 0 ? sourceFd : parent.src, cName(baseName(next.rel)), DIR_FLAGS)
      if (sub < 0) throw sysError(sub, 'openat', next.rel)
      let dst: number
      try {
        if (!sameAsWalked(sub, next))
          throw new Error(`${next.rel} changed since the copy began (another folder is in its place)`)
        dst = makeDir(parent.dst, baseName(next.rel), next.rel)
      } catch (error) {
        close(sub)
        throw error
      }
      files = enter(next, sub, dst)
    }
  } finally {
    for (const frame of stack) {
      if (frame.src >= 0) close(frame.src)
      close(frame.dst)
    }
  }
  return { ...done, hashes }
}

const NUL = Buffer.from([0])

/**
 * macOS: the open file `input` (the walked `e`) as an APFS clone named `name` in the target
 * folder `dst` (fclonefileat: instant, the blocks shared until either file is written). Answers
 * the clone opened read-only, for the caller to check and close, when it is in place with the
 * walked mode and times set on it, as a copy gets them; -1 when no clone was made, for any reason
 * (ENOTSUP: the volume is not APFS; EXDEV: another volume; ENOSYS: no such call; EEXIST and the
 * rest): the caller then copies the bytes as on any other volume, and its exclusive create
 * reports a name that is taken. A clone that cannot be opened
 * (its owner bits, the source's, may not let us read it) is removed and the bytes copied
 * instead. A clone of another size than the walk saw (the file changed since) is removed and the
 * copy fails, as a byte copy's size check fails it. The clone is made in a folder this copy made
 * (0700 while it is filled), and whatever a failure leaves there goes with the whole unfinished
 * copy (its caller removes it). Written from the headers; never run on a Mac.
 */
function cloneInto(input: number, dst: number, name: Buffer, e: Entry): number {
  // NOOWNERCOPY: the clone is ours even for root, as a file we create is.
  if (fcloneat(input, dst, name, CLONE_NOFOLLOW | CLONE_NOOWNERCOPY) !== 0) return -1
  // Read-only: the clone has the source's mode, which may not allow writing; fchmod and futimes
  // need only that the file is ours.
  const fd = openat(dst, name, O.RDONLY | O.NOFOLLOW | O.NONBLOCK | O.CLOEXEC)
  if (fd < 0) {
    const removed = unlinkat(dst, name, 0)
    if (removed < 0 && removed !== -(E.ENOENT ?? 2)) throw sysError(removed, 'unlinkat', e.rel)
    return -1
  }
  try {
    const s = fstatSync(fd)
    if (!s.isFile())
      throw new Error(`${e.rel}: the clone made of it is not a regular file (another program is writing into the copy)`)
    checkSize(e.rel, s.size, e.size)
    fchmodSync(fd, e.mode & 0o7777)
    futimesSync(fd, e.atimeMs / 1000, e.mtimeMs / 1000)
  } catch (error) {
    closeSync(fd)
    unlinkat(dst, name, 0) // the copy fails with the reason above whether or not this succeeds
    throw error
  }
  return fd
}

/**
 * macOS: the clone `clone` of `input` (the walked `e`) checked as a copy is, and its hash. A
 * clone shares the source's blocks, so its read-back reads the very blocks the source's hash
 * read: the source and the clone are hashed anyway, because a clone is a copy like any other
 * for whoever checks it later (its hash goes into the history) and because the two files are
 * not the same file once either is written (another program writing into the clone, or into
 * the source between the clone and its hash, is what the comparison catches).
 */
async function checkClone(
  input: number,
  clone: number,
  e: Entry,
  signal: AbortSignal | undefined,
  onWritten: ((rel: string) => void) | undefined,
): Promise<string> {
  const hash = (fd: number) => (e.size >= LARGE ? readBack(fd, signal) : readSmall(fd, e.size))
  const source = await hash(input)
  checkSize(e.rel, source.size, e.size)
  onWritten?.(e.rel)
  failOnMismatch(e.rel, source, await hash(clone))
  return source.xxh64
}

/**
 * Names for the calls, written into one buffer per copy instead of a new Buffer per file (cName):
 * a name is used by the calls of its own file only, all made before the next name is written
 * (a large file's copy awaits, but uses descriptors, not names), and the buffer is this copy's,
 * so another copy running meanwhile cannot change it. A name too long for it (no file system
 * here allows one) gets its own buffer.
 */
function nameBuffer() {
  const buffer = Buffer.allocUnsafe(4096)
  return {
    of(name: string): Buffer {
      if (name.length * 3 >= buffer.length || name.includes('\0')) return cName(name)
      const n = buffer.write(name, 0, 'utf8')
      buffer[n] = 0
      return buffer
    },
  }
}

/** Entries by the folder they are in ('' for the root's). */
function childrenOf(entries: Entry[]): Map<string, Entry[]> {
  const children = new Map<string, Entry[]>()
  for (const e of entries) {
    if (!e.rel) continue
    const parent = dirName(e.rel)
    children.get(parent)?.push(e) ?? children.set(parent, [e])
  }
  return children
}

const buffer = Buffer.allocUnsafe(LARGE)

/**
 * A small file through one reused buffer: the bytes copied and counted against the walked size,
 * hashed, then read back from the copy into the same buffer and hashed again; the hash is
 * returned. The whole file fits in the buffer (it is smaller than LARGE, the buffer's size), so
 * it is read into it end to end and hashed in one call. Each read asks for one byte more than
 * the walked size still needs, so a file that grew is seen (the read brings more than the size)
 * without reading on to the end, and a file of the walked size takes one read, not two: a read
 * of a regular file comes back short of what was asked only at the end of the file, so a short
 * read that reaches the walked size is the end. (Where a file system reads short before the
 * end, the loop goes on reading until a read returns nothing, as it always did.)
 */
function copySmall(input: number, output: number, e: Entry, onWritten?: (rel: string) => void): string {
  let copied = 0
  for (;;) {
    const asked = e.size - copied + 1
    const n = readSync(input, buffer, copied, asked, null)
    if (n === 0) break
    // A write may take fewer bytes than given (a disk filling up): the rest is written, or it throws.
    for (let written = 0; written < n; ) written += writeSync(output, buffer, copied + written, n - written)
    copied += n
    if (copied > e.size || (n < asked && copied === e.size)) break
  }
  checkSize(e.rel, copied, e.size)
  const source: HashedFile = { xxh64: xxh64(buffer.subarray(0, copied)), size: copied }
  onWritten?.(e.rel)
  failOnMismatch(e.rel, source, readSmall(output, e.size))
  return source.xxh64
}

/**
 * The hash of a file of (walked) size `size`, smaller than LARGE, read whole into the buffer
 * from its start: one byte more than the size is asked for, as copySmall does, so a file that
 * is now longer is seen without reading on to its end.
 */
function readSmall(fd: number, size: number): HashedFile {
  let got = 0
  for (;;) {
    const asked = size - got + 1
    const n = readSync(fd, buffer, got, asked, got)
    if (n === 0) break
    got += n
    if (got > size || (n < asked && got === size)) break
  }
  return { xxh64: xxh64(buffer.subarray(0, got)), size: got }
}

/** A copy whose read-back is not what was read from its source fails the copy, naming the file. */
function failOnMismatch(rel: string, source: HashedFile, copy: HashedFile) {
  const problem = readBackProblem(source, copy)
  if (problem) throw new Error(`hash check failed for ${rel}: ${problem}`)
}

function checkSize(rel: string, copied: number, expected: number) {
  if (copied !== expected) throw new Error(`size check failed for ${rel}: ${copied} of ${expected} bytes copied`)
}

/**
 * A large file in chunks on the thread pool, hashed as it is read (verified.ts), its size
 * checked, then read back from the copy and hashed again; the hash is returned. Progress after
 * every chunk; a cancellation is noticed between chunks.
 */
async function copyLarge(
  input: number,
  output: number,
  e: Entry,
  o: {
    done: Progress
    signal?: AbortSignal
    onProgress?: (p: Progress) => void
    onWritten?: (rel: string) => void
  },
): Promise<string> {
  const { done, signal, onProgress } = o
  const source = await copyHashed(input, output, {
    signal,
    onProgress: onProgress && ((bytes) => onProgress({ files: done.files, bytes: done.bytes + bytes })),
  })
  checkSize(e.rel, source.size, e.size)
  o.onWritten?.(e.rel)
  failOnMismatch(e.rel, source, await readBack(output, signal))
  return source.xxh64
}

/**
 * A folder's identity on disk, to check later that the folder is still the same one: device,
 * inode and, where the file system records it, birth time (a folder removed and made again
 * often gets the freed inode back). Undefined when missing, a link, or not a folder.
 */
export function identityOf(dir: string): string | undefined {
  try {
    const s = lstatSync(dir.replace(/(.)\/+$/, '$1'), { bigint: true })
    return s.isDirectory() ? identityText(s) : undefined
  } catch {
    return undefined
  }
}

/** An open descriptor's identity, in the form of `identityOf`. */
export const identityOfFd = (fd: number) => identityText(statOf(fd))

const identityText = (s: Pick<BigIntStats, 'dev' | 'ino' | 'birthtimeNs'>) => `${s.dev}:${s.ino}:${s.birthtimeNs}`

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path)
    return true
  } catch {
    return false
  }
}

/** True when `dir` is missing, or is a folder with nothing in it. */
export async function isMissingOrEmpty(dir: string): Promise<boolean> {
  let s
  try {
    // Without its final slash: lstat("file/") fails with ENOTDIR, which made a file look missing.
    s = await lstat(dir.replace(/(.)\/+$/, '$1'))
  } catch {
    return true
  }
  if (!s.isDirectory()) return false
  const handle = await opendir(dir)
  const first = await handle.read()
  await handle.close()
  return first === null
}

export { rename }
