// Every change Reelhouse makes on disk: walking, copying and removing folder trees. Nothing here
// follows a symbolic link: links are copied as links and removed as links. Callers check
// containment (paths.ts) before calling, and the functions check it again where it matters.
//
// Speed: a project folder is mostly small files, where the cost is the number of calls, not
// bytes. Calls on small things are made synchronously, in slices of a few milliseconds with a
// turn of the event loop between slices, so the API stays responsive while a copy runs; a
// large file is copied asynchronously (the kernel copies it in one call, copy_file_range).
import { type Stats, constants, copyFileSync, lstatSync, mkdirSync, opendirSync, readlinkSync, rmdirSync, statSync, symlinkSync, unlinkSync, utimesSync } from 'node:fs'
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
 * Call between synchronous steps: yields to the event loop once a slice's time is used up.
 * Resolves true when it yielded (the disk may have changed meanwhile).
 */
function slicer(signal?: AbortSignal) {
  let since = performance.now()
  return async () => {
    if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
    if (performance.now() - since < SLICE_MS) return false
    await new Promise((resolve) => setImmediate(resolve))
    since = performance.now()
    return true
  }
}

const entryOf = (rel: string, s: Stats): Entry => ({
  rel, kind: kindOf(s), size: s.size, atime: s.atime, mtime: s.mtime, mode: s.mode, dev: s.dev, ino: s.ino,
})

const kindOf = (s: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }): Entry['kind'] =>
  s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other'

/** Every entry under root (root first, parents before children), by lstat: links are not entered. */
export async function* walk(root: string, signal?: AbortSignal): AsyncGenerator<Entry> {
  const pause = slicer(signal)
  const s = await lstat(root)
  yield entryOf('', s)
  if (!s.isDirectory()) return
  const pending = ['']
  while (pending.length) {
    const dir = pending.pop()!
    // Read a folder a few names at a time: an image sequence can hold 100,000 files in one.
    const handle = opendirSync(join(root, dir))
    try {
      for (let dirent = handle.readSync(); dirent !== null; dirent = handle.readSync()) {
        await pause()
        const rel = dir ? `${dir}/${dirent.name}` : dirent.name
        const entry = entryOf(rel, lstatSync(join(root, rel)))
        yield entry
        if (entry.kind === 'dir') pending.push(rel)
      }
    } finally {
      handle.closeSync()
    }
  }
}

/** Regular files under root and their bytes (what `files` of a project counts). */
export async function totals(root: string, signal?: AbortSignal): Promise<{ count: number; bytes: number }> {
  let count = 0
  let bytes = 0
  for await (const e of walk(root, signal)) {
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
  const entries = options.entries ?? (await Array.fromAsync(walk(source, signal)))
  const other = entries.find((e) => e.kind === 'other')
  if (other) throw new Error(`${join(source, other.rel)} is not a regular file, folder or link`)
  const pause = slicer(signal)
  const done: Progress = { files: 0, bytes: 0 }

  const dirs = entries.filter((e) => e.kind === 'dir')
  for (const e of dirs) {
    await pause()
    mkdirSync(join(target, e.rel), { mode: e.mode & 0o7777 })
  }
  for (const e of entries) {
    if (e.kind !== 'file' && e.kind !== 'link') continue
    await pause()
    const from = join(source, e.rel)
    const to = join(target, e.rel)
    if (e.kind === 'link') {
      symlinkSync(readlinkSync(from), to)
      continue
    }
    if (e.size >= LARGE) await copyLarge(from, to, e, done, onProgress)
    else {
      copyFileSync(from, to, constants.COPYFILE_EXCL)
      checkSize(from, statSync(to).size, e.size)
      utimesSync(to, e.atime, e.mtime)
    }
    done.files++
    done.bytes += e.size
    onProgress?.(done)
  }
  // Deepest folders first, so setting a parent's times comes after its children changed it.
  for (const e of dirs.sort((a, b) => b.rel.length - a.rel.length)) {
    await pause()
    utimesSync(join(target, e.rel), e.atime, e.mtime)
  }
  return done
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
  const entries = await Array.fromAsync(walk(dir, options.signal))
  const pause = slicer(options.signal)
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
    await pause()
    let path = same(folder)
    for (const e of children.get(folder.rel) ?? []) {
      if (e.kind === 'dir') continue
      if (await pause()) path = same(folder)
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
