// Checking files against what was recorded of them
// (docs/operations.md, Verified copies and ASC MHL histories): the files of a folder against its
// ASC MHL history (storage/mhl.ts), as `reelhouse verify PATH` and the verify task of a project
// do it, and one file against the history that records it nearest above it (a card's, an
// archive's), as the verify task of a media asset does it.
//
// Every file is hashed (xxHash64, streaming: storage/hash.ts) through descriptors: the folder a
// check begins at is opened once, every folder below it is reached one name at a time without
// following a link, and every file is opened relative to its folder's descriptor with O_NOFOLLOW
// and checked to be a regular file, so that a link or a swapped folder met on the way leads
// nowhere outside. Links are neither followed nor checked (a copy records none).
//
// What a file is expected to hold is mhl.ts's expectedHashes: the latest xxh64 a generation
// recorded for it that is not "failed" (the original, which "verified" entries repeat). A folder
// below the root with an `ascmhl/` of its own (a camera card offloaded by a DIT tool, copied into
// a project) is a history of its own, as the ASC's tool reads it: a file is checked against the
// deepest history that records it, and the files every history records are expected. Nothing is
// written: a check never adds a generation unless its caller writes one from what it found
// (`reelhouse verify --record`).
import { fstatSync, lstatSync, statSync } from 'node:fs'
import {
  AT_FDCWD,
  DIR_FLAGS,
  DT,
  E,
  O,
  cName,
  close,
  errnoName,
  listDir,
  nameText,
  openat,
  sysError,
} from '../../storage/dirfd.ts'
import { CancelledError } from '../../storage/errors.ts'
import { descend } from '../../storage/fs.ts'
import { hashFile } from '../../storage/hash.ts'
import {
  type History,
  MHL_FOLDER,
  expectedHashes,
  historyFolderAt,
  ignoreOf,
  isRecorded,
  readHistory,
} from '../../storage/mhl.ts'
import { asFolder, below, pathOf, relParts, samePath, trimSep } from '../../storage/paths.ts'

/** A check that cannot be made: no history where one is needed, a folder that cannot be reached. */
export class VerifyError extends Error {
  override readonly name = 'VerifyError'
}

/** A file found and hashed: what a new generation records of it (mhl.ts NewEntry). */
export type FoundFile = {
  /** Relative to the history's root, "/" between names. */
  path: string
  size: number
  mtimeMs: number
  xxh64: string
  hashDate: Date
}

export type Mismatch = { path: string; recorded: string; found: string }

export type FolderReport = {
  /** The folder the history describes (its root). */
  root: string
  /** Its `ascmhl/` folder. */
  history: string
  /** How many generations it has. */
  generations: number
  /** The `ascmhl/` folders of histories below the root that the check read (deepest records win). */
  nested: string[]
  /** Paths as found as recorded. */
  verified: string[]
  /** Paths whose bytes are not those recorded. */
  failed: Mismatch[]
  /** Paths recorded and not found (as regular files). */
  missing: string[]
  /** Paths found that no history records. */
  new: string[]
  /** Paths recorded with other hash formats only (md5, xxh128, ...), which are not checked here. */
  unverifiable: { path: string; formats: string[] }[]
  /** Paths that could not be read (an input/output error, a permission), with the reason. */
  unreadable: { path: string; error: string }[]
  /** Every file hashed, in path order. */
  found: FoundFile[]
}

export type CheckProgress = {
  files: number
  filesTotal: number
  /** Bytes hashed so far, the file being hashed too. */
  bytes: number
}

export type CheckOptions = {
  /** Stops the check between two files, and between two chunks of a large one (CancelledError). */
  signal?: AbortSignal
  /** After each file, and while a large file is hashed. */
  onProgress?: (progress: CheckProgress) => void
  /** Once the root's history is read, before the walk (the tests change the folders there; the service and the CLI pass none). */
  onHistory?: () => void
  /** Once the walk has listed every folder, before the first file is hashed (the tests look there; the service and the CLI pass none). */
  onWalked?: () => void
}

/** One history's expectation of a file. */
export type Expected = { recorded: string | undefined; formats: string[] }

const FILE_FLAGS = O.RDONLY | O.NOFOLLOW | O.NONBLOCK | O.CLOEXEC

/**
 * The folder `rel` ('' for itself) below the open folder `root` (at `rootPath`, for messages),
 * reached from that descriptor one name at a time without following a link: `root` itself when
 * `rel` is '' (the caller's, not to be closed: see `release`), a new descriptor otherwise.
 * Nothing is opened by path, so a folder on the way to `root` swapped for a link since `root` was
 * opened changes nothing. VerifyError naming it otherwise.
 */
function openFrom(root: number, rootPath: string, rel: string): number {
  let fd = root
  let walked = ''
  for (const part of relParts(rel)) {
    walked = walked ? `${walked}/${part}` : part
    const next = openat(fd, cName(part), DIR_FLAGS)
    if (fd !== root) close(fd)
    if (next < 0) {
      const where = joinRel(rootPath, walked)
      if (next === -E.ENOENT) throw new VerifyError(`${where} does not exist`)
      if (next === -E.ENOTDIR || next === -E.ELOOP)
        throw new VerifyError(`${where} is not a folder reached without a symbolic link on the way`)
      throw new VerifyError(`${where} cannot be opened: ${errnoName(next)}`)
    }
    fd = next
  }
  return fd
}

/**
 * The walk lists folders with synchronous calls (storage/dirfd.ts): in the server, a tree of
 * 200,000 files would hold the event loop for half a second (seconds on a NAS). It gives the
 * loop a turn (setImmediate: requests, timers and other tasks run) once BREATHE_MS have passed
 * since the last, and after BREATHE_STEPS folders (or runs of BREATHE_EVERY entries) whatever the
 * time: a few microseconds each, and the CLI, with nothing else to run, just goes on.
 */
const BREATHE_MS = 8
const BREATHE_STEPS = 64
const BREATHE_EVERY = 256

/** A function to await at each step of a walk: a turn of the event loop when one is due, else nothing. */
function breathing(): () => Promise<void> | undefined {
  let last = performance.now()
  let steps = 0
  return () => {
    if (++steps < BREATHE_STEPS && performance.now() - last < BREATHE_MS) return undefined
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        steps = 0
        last = performance.now()
        resolve()
      }),
    )
  }
}

/** A path below `root` for messages, in the platform's spelling. */
export const joinRel = (root: string, rel: string) => (rel ? pathOf.join(root, ...rel.split('/')) : root)

/**
 * The history of the open folder `fd` (at `path`, for messages); undefined when it has no
 * `ascmhl/`. MhlError when the history cannot be read (storage/mhl.ts readHistory), VerifyError
 * when `ascmhl` is not a folder.
 */
export function historyAt(fd: number, path: string): History | undefined {
  const folder = historyFolderAt(fd, joinRel(path, MHL_FOLDER))
  let names: string[] | undefined
  try {
    names = folder.names()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOTDIR' || code === 'ELOOP')
      throw new VerifyError(`${folder.path} is not a folder (a file or a symbolic link in its place)`)
    throw error
  }
  if (names === undefined) return undefined
  return readHistory(path, { folder })
}

/** Path → what the history expects of it, with the formats it recorded where it recorded no xxh64. */
function expectationsOf(history: History): Map<string, Expected> {
  const out = new Map<string, Expected>()
  for (const [path, recorded] of expectedHashes(history)) {
    let formats: string[] = []
    if (recorded === undefined)
      for (const g of history.generations) {
        const file = g.files.get(path)
        if (file?.otherFormats.length) formats = file.otherFormats
      }
    out.set(path, { recorded, formats })
  }
  return out
}

/**
 * Checks the files of the folder `within` (relative to the history's root, "/" between names;
 * '' for the whole root; or one file) of the folder at `rootPath`, which has an ASC MHL history
 * (read through `root`, that folder open): each regular file found is hashed and compared with
 * what the histories expect of it. Everything is read through `root`: the folders below are
 * reached from it one name at a time without following a link, and `rootPath` is never opened
 * again (it only names things in the report and the messages), so a folder on the way to the
 * root swapped for a link meanwhile leads nowhere else. The walk gives the event loop a turn now
 * and then (`breathing`). Files that the root history's ignore patterns name (`.DS_Store`,
 * `ascmhl` folders) are neither hashed nor expected. Folders between the root and `within` are
 * not looked at for histories of their own (the callers begin at the nearest history above
 * `within`). VerifyError when the root has no history (none, or one without generations) or
 * `within` cannot be reached; MhlError when a history is malformed or changed. `root` stays open
 * (the caller's).
 */
export async function checkFolder(
  root: number,
  rootPath: string,
  within: string,
  opts: CheckOptions = {},
): Promise<FolderReport> {
  const { signal, onProgress } = opts
  const history = historyAt(root, rootPath)
  if (!history?.generations.length)
    throw new VerifyError(`${joinRel(rootPath, MHL_FOLDER)} holds no ASC MHL generation to check against`)
  const recorded = isRecorded(ignoreOf(history))
  opts.onHistory?.()
  const inScope = (path: string) => within === '' || path === within || path.startsWith(`${within}/`)
  const cancelled = () => new CancelledError(String(signal?.reason ?? 'cancelled'))
  const breather = breathing()

  // The walk: every folder of the scope (its files by name), and the histories below the root.
  const folders: { rel: string; files: { name: Buffer; rel: string }[] }[] = []
  const nested: { prefix: string; history: History; path: string }[] = []
  let total = 0
  const parts = relParts(within)
  let start = parts.join('/')
  /** The one name of `start` that is checked, when `within` names a file. */
  let only: string | undefined
  /** The descriptors of the folders below the root are the walk's; the root's is the caller's. */
  const release = (fd: number) => {
    if (fd !== root) close(fd)
  }
  if (parts.length) {
    try {
      release(openFrom(root, rootPath, start))
    } catch (error) {
      // Not a folder: a file (present or not) of a folder that is one.
      if (!(error instanceof VerifyError)) throw error
      const parent = parts.slice(0, -1).join('/')
      const fd = openFrom(root, rootPath, parent)
      const at = openat(fd, cName(parts.at(-1)!), FILE_FLAGS)
      release(fd)
      if (at < 0 && at !== -E.ENOENT) throw error
      if (at >= 0) close(at)
      start = parent
      only = parts.at(-1)!
    }
  }
  const pending = [start]
  while (pending.length) {
    await breather()
    if (signal?.aborted) throw cancelled()
    const rel = pending.pop()!
    const fd = openFrom(root, rootPath, rel)
    try {
      const listed = listDir(fd)
      if (typeof listed === 'number')
        throw new VerifyError(`${joinRel(rootPath, rel)} cannot be listed: ${errnoName(listed)}`)
      const files: { name: Buffer; rel: string }[] = []
      for (const [i, entry] of listed.entries()) {
        // A folder of many entries (each a name to decode, some to open) lets the event loop run too.
        if (i % BREATHE_EVERY === BREATHE_EVERY - 1) await breather()
        const name = nameText(entry.name)
        if (only !== undefined && name !== only) continue
        const path = rel ? `${rel}/${name}` : name
        let type = entry.type
        if (type === DT.UNKNOWN) {
          // No type in the listing (some network file systems): a folder opens as one; anything else is looked at when it is hashed.
          const dir = openat(fd, entry.name, DIR_FLAGS)
          if (dir >= 0) close(dir)
          type = dir >= 0 ? DT.DIR : DT.REG
        }
        if (type === DT.DIR) {
          if (name === MHL_FOLDER) {
            // The root's own history, or a history of the folder it is in (read once, relative to that folder).
            if (rel !== '')
              nested.push({ prefix: `${rel}/`, history: historyOf(fd, joinRel(rootPath, rel)), path: rel })
            continue
          }
          if (only === undefined) pending.push(path)
        } else if (type === DT.REG && recorded(path)) files.push({ name: entry.name, rel: path })
      }
      files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))
      folders.push({ rel, files })
      total += files.length
    } finally {
      release(fd)
    }
  }
  opts.onWalked?.()
  folders.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))

  // What is expected: the root's records in scope, then each nested history's, deeper ones last (they win).
  const expected = new Map<string, Expected>()
  for (const [path, e] of expectationsOf(history)) if (inScope(path) && recorded(path)) expected.set(path, e)
  nested.sort((a, b) => a.prefix.length - b.prefix.length)
  for (const n of nested)
    for (const [path, e] of expectationsOf(n.history)) {
      const full = n.prefix + path
      if (inScope(full) && recorded(full)) expected.set(full, e)
    }

  const report: FolderReport = {
    root: rootPath,
    history: joinRel(rootPath, MHL_FOLDER),
    generations: history.generations.length,
    nested: nested.map((n) => joinRel(joinRel(rootPath, n.path), MHL_FOLDER)).sort(),
    verified: [],
    failed: [],
    missing: [],
    new: [],
    unverifiable: [],
    unreadable: [],
    found: [],
  }
  const seen = new Set<string>()
  let done = 0
  let bytes = 0
  for (const folder of folders) {
    if (!folder.files.length) continue
    if (signal?.aborted) throw cancelled()
    await breather()
    const fd = openFrom(root, rootPath, folder.rel)
    try {
      for (const file of folder.files) {
        if (signal?.aborted) throw cancelled()
        const hashed = await hashAt(fd, file.name, {
          signal,
          onProgress: (n) => onProgress?.({ files: done, filesTotal: total, bytes: bytes + n }),
        })
        done++
        if (hashed === 'gone') {
          onProgress?.({ files: done, filesTotal: total, bytes })
          continue
        }
        if ('error' in hashed) {
          seen.add(file.rel)
          report.unreadable.push({ path: file.rel, error: hashed.error })
          onProgress?.({ files: done, filesTotal: total, bytes })
          continue
        }
        bytes += hashed.size
        onProgress?.({ files: done, filesTotal: total, bytes })
        seen.add(file.rel)
        report.found.push({ path: file.rel, ...hashed })
        const e = expected.get(file.rel)
        if (!e) report.new.push(file.rel)
        else if (e.recorded === undefined) report.unverifiable.push({ path: file.rel, formats: e.formats })
        else if (e.recorded === hashed.xxh64) report.verified.push(file.rel)
        else report.failed.push({ path: file.rel, recorded: e.recorded, found: hashed.xxh64 })
      }
    } finally {
      release(fd)
    }
  }
  report.missing = [...expected.keys()].filter((path) => !seen.has(path)).sort()
  // In path order, as the manifests list them (the walk went folder by folder).
  const byPath = (a: { path: string } | string, b: { path: string } | string) => {
    const [x, y] = [typeof a === 'string' ? a : a.path, typeof b === 'string' ? b : b.path]
    return x < y ? -1 : x > y ? 1 : 0
  }
  for (const list of [report.verified, report.failed, report.new, report.unverifiable, report.unreadable, report.found])
    (list as ({ path: string } | string)[]).sort(byPath)
  return report
}

/** The history of the open folder `fd`, which has an `ascmhl` entry (one without generations reads as empty). */
function historyOf(fd: number, path: string): History {
  return historyAt(fd, path) ?? { root: path, generations: [], unlisted: [] }
}

type Hashed = { size: number; mtimeMs: number; xxh64: string; hashDate: Date }

/**
 * The xxHash64 of the regular file `name` of the open folder `dir`: 'gone' when it is no longer
 * there as a regular file (removed, replaced by a link or a folder since the walk), `{error}`
 * when it cannot be read. A cancellation throws CancelledError.
 */
async function hashAt(
  dir: number,
  name: Buffer,
  opts: { signal?: AbortSignal; onProgress?: (bytes: number) => void },
): Promise<Hashed | 'gone' | { error: string }> {
  const fd = openat(dir, name, FILE_FLAGS)
  if (fd === -E.ENOENT || fd === -E.ELOOP || fd === -E.ENOTDIR) return 'gone'
  if (fd < 0) return { error: sysError(fd, 'openat', nameText(name)).message }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) return 'gone'
    const hashDate = new Date()
    const hashed = await hashFile(fd, opts)
    return { size: hashed.size, mtimeMs: stat.mtimeMs, xxh64: hashed.xxh64, hashDate }
  } catch (error) {
    if (opts.signal?.aborted) throw new CancelledError(String(opts.signal.reason ?? 'cancelled'))
    const e = error as NodeJS.ErrnoException
    return { error: e.code ? `${e.code}: ${e.message.replace(/^E[A-Z]+: /, '')}` : String(e.message ?? e) }
  } finally {
    close(fd)
  }
}

/** A history found above a file or folder (nearestHistory). */
export type Nearest = {
  /** The folder the history describes. */
  root: string
  /** That folder relative to the device's folder ("/" between names; '' for the device's folder). */
  at: string
  history: History
  /** The file or folder asked about, relative to `root`. */
  rel: string
  /** What the history expects of the file asked about (when one was). */
  expected?: Expected
}

/**
 * The nearest folder holding an `ascmhl/` history at `folder` (a folder on the device whose
 * folder is `device`) or above it, never above the device's folder; with `file` (a name in
 * `folder`), the nearest whose history records that file. Each folder is reached from the
 * device's folder one name at a time without following a link. Undefined when there is none.
 * MhlError when a history on the way is malformed or changed, VerifyError when `ascmhl` is not a
 * folder there.
 */
export function nearestHistory(device: string, folder: string, file?: string): Nearest | undefined {
  const rest = samePath(asFolder(folder), asFolder(device)) ? '' : below(asFolder(device), asFolder(folder))
  if (rest === undefined) throw new VerifyError(`${folder} does not lie on the device ${device}`)
  const parts = relParts(rest)
  for (let depth = parts.length; depth >= 0; depth--) {
    const at = parts.slice(0, depth).join('/')
    let fd: number
    try {
      fd = openDevice(device, at)
    } catch {
      continue // a folder on the way is missing or a link: no history is read through it
    }
    try {
      const root = joinRel(trimSep(device) || device, at)
      const history = historyAt(fd, root)
      if (!history?.generations.length) continue
      const rel = [...parts.slice(depth), ...(file === undefined ? [] : [file])].join('/')
      if (file === undefined) return { root, at, history, rel }
      const expected = expectationsOf(history).get(rel)
      if (expected) return { root, at, history, rel, expected }
    } finally {
      close(fd)
    }
  }
  return undefined
}

/** The folder `rel` of the device at `device` (its path opened as configured), no link followed below it. */
export function openDevice(device: string, rel: string): number {
  const fd = openat(AT_FDCWD, cName(device), O.RDONLY | O.DIRECTORY | O.CLOEXEC)
  if (fd < 0) throw sysError(fd, 'open', device)
  return descend(fd, rel)
}

/**
 * For `reelhouse verify PATH` (an absolute path, as the user named it): the nearest folder at or
 * above PATH (a folder, or a file's folder) that has an `ascmhl/` folder, the history's root, and
 * PATH relative to it ("/" between names; '' for the folder itself). VerifyError
 * when PATH cannot be looked at, when there is no such folder up to the file system's root, and
 * when PATH lies inside the history folder itself.
 */
export function locateHistory(path: string): { root: string; within: string } {
  let isFolder: boolean
  try {
    const stat = statSync(path)
    if (!stat.isDirectory() && !stat.isFile()) throw new VerifyError(`${path} is neither a folder nor a regular file`)
    isFolder = stat.isDirectory()
  } catch (error) {
    if (error instanceof VerifyError) throw error
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new VerifyError(`${path} does not exist`)
    throw new VerifyError(`${path} cannot be looked at (${code ?? (error as Error).message})`)
  }
  let dir = isFolder ? path : pathOf.dirname(path)
  for (;;) {
    const at = pathOf.join(dir, MHL_FOLDER)
    let found = false
    try {
      const stat = lstatSync(at)
      if (!stat.isDirectory()) throw new VerifyError(`${at} is not a folder (a file or a symbolic link in its place)`)
      found = true
    } catch (error) {
      if (error instanceof VerifyError) throw error
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new VerifyError(`${at} cannot be looked at (${code})`)
    }
    if (found) break
    const up = pathOf.dirname(dir)
    if (up === dir)
      throw new VerifyError(`no ${MHL_FOLDER}/ history at ${path} or in a folder above it; give a folder that has one`)
    dir = up
  }
  const within = pathOf.relative(dir, path).split(pathOf.sep).filter(Boolean).join('/')
  if (within === MHL_FOLDER || within.startsWith(`${MHL_FOLDER}/`))
    throw new VerifyError(
      `${path} lies inside the history folder ${pathOf.join(dir, MHL_FOLDER)}; give the folder it describes: ${dir}`,
    )
  return { root: dir, within }
}
