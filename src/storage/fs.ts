// Every change Reelhouse makes on disk: walking, copying and removing folder trees. Nothing here
// follows a symbolic link: links are copied as links and removed as links. Callers check
// containment (paths.ts) before calling, and the functions check it again where it matters.
//
// Speed: a project folder is mostly small files, where the cost is the number of calls, not
// bytes. Calls on small things are made synchronously, in slices of a few milliseconds with a
// turn of the event loop between slices, so the API stays responsive while a copy runs; a
// large file is copied asynchronously (the kernel copies it in one call, copy_file_range).
import { type Stats, chmodSync, closeSync, constants, fchmodSync, futimesSync, lstatSync, mkdirSync, opendirSync, openSync, readSync, readlinkSync, rmdirSync, symlinkSync, unlinkSync, utimesSync, writeSync } from 'node:fs'
import { copyFile, lstat, opendir, rename, stat, utimes } from 'node:fs/promises'
import { join } from 'node:path'

export type Entry = {
  /** Path relative to the walked root, '' for the root itself. */
  rel: string
  kind: 'dir' | 'file' | 'link' | 'other'
  size: number
  atime: Date
  mtime: Date
  mode: number
  /** Identity on disk, to notice a folder swapped while it is being worked on. */
  dev: number
  ino: number
}

export class CancelledError extends Error {
  constructor(reason = 'cancelled') {
    super(reason)
  }
}

const SLICE_MS = 8

/**
 * Time slices for synchronous steps: `due()` (checked between steps, cheap, and where a
 * cancellation is noticed) says when the slice is used up; `tick()` then gives the event loop
 * its turn. Awaiting only when due keeps the per-file cost of small files near a plain loop's.
 */
function slicer(signal?: AbortSignal) {
  let since = performance.now()
  return {
    due() {
      if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
      return performance.now() - since >= SLICE_MS
    },
    async tick() {
      await new Promise((resolve) => setImmediate(resolve))
      since = performance.now()
    },
  }
}

const entryOf = (rel: string, s: Stats): Entry => ({
  rel, kind: kindOf(s), size: s.size, atime: s.atime, mtime: s.mtime, mode: s.mode, dev: s.dev, ino: s.ino,
})

const kindOf = (s: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }): Entry['kind'] =>
  s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other'

/** `root` with one final slash, for joining with a relative path by concatenation. */
const base = (root: string) => (root.endsWith('/') ? root : root + '/')

/** Every entry under root (root first, parents before children), by lstat: links are not entered. */
export async function listTree(root: string, signal?: AbortSignal): Promise<Entry[]> {
  const slice = slicer(signal)
  const s = await lstat(root)
  const entries = [entryOf('', s)]
  if (!s.isDirectory()) return entries
  const prefix = base(root)
  const pending = ['']
  while (pending.length) {
    const dir = pending.pop()!
    // Read a folder a few names at a time: an image sequence can hold 100,000 files in one.
    const handle = opendirSync(prefix + dir)
    try {
      for (let dirent = handle.readSync(); dirent !== null; dirent = handle.readSync()) {
        if (slice.due()) await slice.tick()
        const rel = dir ? `${dir}/${dirent.name}` : dirent.name
        const entry = entryOf(rel, lstatSync(prefix + rel))
        entries.push(entry)
        if (entry.kind === 'dir') pending.push(rel)
      }
    } finally {
      handle.closeSync()
    }
  }
  return entries
}

/** Regular files under root and their bytes (what `files` of a project counts). */
export async function totals(root: string, signal?: AbortSignal): Promise<{ count: number; bytes: number }> {
  let count = 0
  let bytes = 0
  for (const e of await listTree(root, signal)) {
    if (e.kind === 'file') {
      count++
      bytes += e.size
    }
  }
  return { count, bytes }
}

export type Progress = { files: number; bytes: number }

/** Files from this size on are copied asynchronously, with progress while they are copied. */
const LARGE = 8 * 1024 * 1024

/**
 * Copies the tree at `source` into `target`, which must not exist. Regular files are copied
 * without ever overwriting, then their size is checked and their times are set from the
 * source; links are recreated as links; folders get their times once their contents are in.
 * Other kinds of files (sockets, devices, pipes) are refused. `onProgress` is called after
 * every file and, for large files, while they are copied. Nothing writes into the target
 * after this returns or throws.
 */
export async function copyTree(
  source: string,
  target: string,
  options: { signal?: AbortSignal; onProgress?: (done: Progress) => void; entries?: Entry[] } = {},
): Promise<Progress> {
  const { signal, onProgress } = options
  const entries = options.entries ?? (await listTree(source, signal))
  const other = entries.find((e) => e.kind === 'other')
  if (other) throw new Error(`${join(source, other.rel)} is not a regular file, folder or link`)
  const slice = slicer(signal)
  const done: Progress = { files: 0, bytes: 0 }
  const [src, dst] = [base(source), base(target)]

  const dirs = entries.filter((e) => e.kind === 'dir')
  for (const e of dirs) {
    if (slice.due()) await slice.tick()
    mkdirSync(dst + e.rel, { mode: e.mode & 0o7777 })
    keepMode(dst + e.rel, e.mode)
  }
  for (const e of entries) {
    if (e.kind !== 'file' && e.kind !== 'link') continue
    if (slice.due()) await slice.tick()
    const from = src + e.rel
    const to = dst + e.rel
    if (e.kind === 'link') {
      symlinkSync(readlinkSync(from), to)
      continue
    }
    if (e.size >= LARGE) await copyLarge(from, to, e, done, onProgress)
    else copySmall(from, to, e)
    done.files++
    done.bytes += e.size
    onProgress?.(done)
  }
  // Deepest folders first, so setting a parent's times comes after its children changed it.
  for (const e of dirs.sort((a, b) => b.rel.length - a.rel.length)) {
    if (slice.due()) await slice.tick()
    utimesSync(dst + e.rel, e.atime, e.mtime)
  }
  return done
}

const UMASK = process.umask()
const buffer = Buffer.allocUnsafe(LARGE)

/** Modes the umask would narrow (a group-writable 0664 under umask 022) are set explicitly. */
function keepMode(path: string, mode: number, fd?: number) {
  const wanted = mode & 0o7777
  if ((wanted & ~UMASK) === wanted) return
  if (fd === undefined) chmodSync(path, wanted)
  else fchmodSync(fd, wanted)
}

/**
 * A small file through one reused buffer: open both (the target with wx: created, never
 * overwritten), copy, check the byte count against the walked size, set the times on the open
 * file. Seven calls where a copyFile and its checks take ten.
 */
function copySmall(from: string, to: string, e: Entry) {
  const input = openSync(from, 'r')
  try {
    const output = openSync(to, 'wx', e.mode & 0o7777)
    try {
      let copied = 0
      for (let n = readSync(input, buffer, 0, buffer.length, null); n > 0; n = readSync(input, buffer, 0, buffer.length, null)) {
        writeSync(output, buffer, 0, n)
        copied += n
      }
      checkSize(from, copied, e.size)
      keepMode(to, e.mode, output)
      futimesSync(output, e.atime, e.mtime)
    } finally {
      closeSync(output)
    }
  } finally {
    closeSync(input)
  }
}

function checkSize(from: string, copied: number, expected: number) {
  if (copied !== expected) throw new Error(`size check failed for ${from}: ${copied} of ${expected} bytes copied`)
}

async function copyLarge(from: string, to: string, e: Entry, done: Progress, onProgress?: (p: Progress) => void) {
  // The kernel copies the file in one call; its growing size is the progress.
  const timer = onProgress
    ? setInterval(() => {
        stat(to).then((s) => onProgress({ files: done.files, bytes: done.bytes + s.size }), () => {})
      }, 500)
    : undefined
  try {
    await copyFile(from, to, constants.COPYFILE_EXCL)
  } finally {
    clearInterval(timer)
  }
  checkSize(from, (await stat(to)).size, e.size)
  await utimes(to, e.atime, e.mtime)
}

/**
 * Removes the tree at `dir`, bottom up, never following links (a link is removed, not what it
 * points to). Reports files removed as it goes.
 */
export async function removeTree(
  dir: string,
  options: { signal?: AbortSignal; onProgress?: (done: Progress) => void } = {},
): Promise<void> {
  const entries = await listTree(dir, options.signal)
  const slice = slicer(options.signal)
  const done: Progress = { files: 0, bytes: 0 }
  const children = new Map<string, Entry[]>()
  for (const e of entries) {
    if (!e.rel) continue
    const parent = e.rel.includes('/') ? e.rel.slice(0, e.rel.lastIndexOf('/')) : ''
    children.get(parent)?.push(e) ?? children.set(parent, [e])
  }
  // One folder at a time, deepest first. Whenever the event loop has had a turn, the folder is
  // checked again to be the very folder that was walked (same inode, still not a link), so a
  // folder swapped for a link meanwhile stops the removal instead of leading it elsewhere.
  const same = (folder: Entry) => {
    const path = join(dir, folder.rel)
    const now = lstatSync(path)
    if (!now.isDirectory() || now.ino !== folder.ino || now.dev !== folder.dev)
      throw new Error(`${path} changed while it was being removed; the removal stopped`)
    return path
  }
  for (const folder of entries.filter((x) => x.kind === 'dir').sort((a, b) => b.rel.length - a.rel.length)) {
    if (slice.due()) await slice.tick()
    let path = same(folder)
    for (const e of children.get(folder.rel) ?? []) {
      if (e.kind === 'dir') continue
      if (slice.due()) {
        await slice.tick()
        path = same(folder)
      }
      unlinkSync(join(path, e.rel.slice(folder.rel ? folder.rel.length + 1 : 0)))
      if (e.kind === 'file') {
        done.files++
        done.bytes += e.size
        options.onProgress?.(done)
      }
    }
    rmdirSync(path)
  }
  // A tree that is a single file or link.
  if (entries[0] && entries[0].kind !== 'dir') unlinkSync(dir)
  options.onProgress?.(done)
}

/** A folder's identity on disk ("dev:ino"), to check later that the folder is still the same one; undefined when missing, a link, or not a folder. */
export function identityOf(dir: string): string | undefined {
  try {
    const s = lstatSync(dir.replace(/(.)\/+$/, '$1'), { bigint: true })
    return s.isDirectory() ? `${s.dev}:${s.ino}` : undefined
  } catch {
    return undefined
  }
}

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
