// Every change Reelhouse makes on disk: walking, copying and removing folder trees. Nothing here
// follows a symbolic link: links are copied as links and removed as links. Callers check
// containment (paths.ts) before calling, and the functions check it again where it matters.
import { constants } from 'node:fs'
import { copyFile, lstat, mkdir, opendir, readlink, rename, rmdir, stat, symlink, unlink, utimes } from 'node:fs/promises'
import { join } from 'node:path'

export type Entry = {
  /** Path relative to the walked root, '' for the root itself. */
  rel: string
  kind: 'dir' | 'file' | 'link' | 'other'
  size: number
  atime: Date
  mtime: Date
  mode: number
}

export class CancelledError extends Error {
  constructor(reason = 'cancelled') {
    super(reason)
  }
}

const kindOf = (s: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }): Entry['kind'] =>
  s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other'

/** Every entry under root (root first, parents before children), by lstat: links are not entered. */
export async function* walk(root: string, signal?: AbortSignal): AsyncGenerator<Entry> {
  const s = await lstat(root)
  yield { rel: '', kind: kindOf(s), size: s.size, atime: s.atime, mtime: s.mtime, mode: s.mode }
  if (!s.isDirectory()) return
  const pending = ['']
  while (pending.length) {
    const dir = pending.pop()!
    for await (const dirent of await opendir(join(root, dir))) {
      if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
      const rel = dir ? `${dir}/${dirent.name}` : dirent.name
      const st = await lstat(join(root, rel))
      const entry: Entry = { rel, kind: kindOf(st), size: st.size, atime: st.atime, mtime: st.mtime, mode: st.mode }
      yield entry
      if (entry.kind === 'dir') pending.push(rel)
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

/** Copies in flight at once: enough to hide per-file latency, few enough for a NAS disk. */
const PARALLEL_FILES = 8

/**
 * Copies the tree at `source` into `target`, which must not exist. Regular files are copied
 * without ever overwriting, then their size is checked and their times are set from the
 * source; links are recreated as links; folders get their times once their contents are in.
 * Other kinds of files (sockets, devices, pipes) are refused. `onProgress` is called after
 * every file and, for large files, while they are copied.
 */
export async function copyTree(
  source: string,
  target: string,
  options: { signal?: AbortSignal; onProgress?: (done: Progress) => void; entries?: Entry[] } = {},
): Promise<Progress> {
  const { signal, onProgress } = options
  const entries = options.entries ?? (await Array.fromAsync(walk(source, signal)))
  const done: Progress = { files: 0, bytes: 0 }
  let failure: unknown
  const check = () => {
    if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
    if (failure) throw failure
  }

  const dirs = entries.filter((e) => e.kind === 'dir')
  for (const e of dirs) {
    check()
    await mkdir(join(target, e.rel), { mode: e.mode & 0o7777 })
  }
  const other = entries.find((e) => e.kind === 'other')
  if (other) throw new Error(`${join(source, other.rel)} is not a regular file, folder or link`)

  const files = entries.filter((e) => e.kind === 'file' || e.kind === 'link')
  let next = 0
  const worker = async () => {
    while (next < files.length && !failure && !signal?.aborted) {
      const e = files[next++]!
      const from = join(source, e.rel)
      const to = join(target, e.rel)
      try {
        if (e.kind === 'link') {
          await symlink(await readlink(from), to)
          continue
        }
        await copyOne(from, to, e, done, onProgress)
      } catch (error) {
        failure ??= error // the first failure stops every worker at its next file
        return
      }
      done.files++
      done.bytes += e.size
      onProgress?.(done)
    }
  }
  // Every worker has stopped when this returns: nothing writes into the target afterwards.
  await Promise.all(Array.from({ length: Math.min(PARALLEL_FILES, files.length) }, worker))
  check()

  // Deepest folders first, so setting a parent's times comes after its children changed it.
  for (const e of dirs.sort((a, b) => b.rel.length - a.rel.length)) await utimes(join(target, e.rel), e.atime, e.mtime)
  return done
}

const WATCH_BYTES = 64 * 1024 * 1024

async function copyOne(from: string, to: string, e: Entry, done: Progress, onProgress?: (p: Progress) => void) {
  // A large file is copied by the kernel in one call; its growing size is the progress.
  const timer =
    e.size >= WATCH_BYTES && onProgress
      ? setInterval(() => {
          stat(to).then((s) => onProgress({ files: done.files, bytes: done.bytes + s.size }), () => {})
        }, 500)
      : undefined
  try {
    await copyFile(from, to, constants.COPYFILE_EXCL)
  } finally {
    clearInterval(timer)
  }
  const copied = await stat(to)
  if (copied.size !== e.size) throw new Error(`size check failed for ${from}: ${copied.size} of ${e.size} bytes copied`)
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
  const done: Progress = { files: 0, bytes: 0 }
  for (const e of entries) {
    if (e.kind === 'dir') continue
    if (options.signal?.aborted) throw new CancelledError(String(options.signal.reason ?? 'cancelled'))
    await unlink(join(dir, e.rel))
    if (e.kind === 'file') {
      done.files++
      done.bytes += e.size
      if (done.files % 100 === 0) options.onProgress?.(done)
    }
  }
  for (const e of entries.filter((x) => x.kind === 'dir').sort((a, b) => b.rel.length - a.rel.length)) await rmdir(join(dir, e.rel))
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
