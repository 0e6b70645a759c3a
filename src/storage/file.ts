// Moving one file: the essence of an import with `move_asset` (docs/api.md, Import; design note
// core-import-watcher A3) goes to DEVICE/CODENAME/<video|audio|image>/ under its own name, or
// under name_1.ext, name_2.ext, ... when that is taken. Nothing is ever overwritten, no link is
// followed, and a crash at any moment leaves the file at exactly one of its two paths.
//
// A camera card's files (`exact`, docs/cards.md) keep their names: a taken name fails the move rather
// than becoming `_N`; the card's new folder is made first and is the caller's alone (`claimFolder`,
// which puts any `_N` on the card's folder, never on a clip), so no name inside it is taken.
//
// A move is planned first (`planMove`): the caller stores the plan (source, target folder, the
// chosen name, the hidden temp name, the source's identity) in its task's params, then runs
// `moveFile(plan)`. `moveFile` is also the resume: it looks at what is on disk and carries on
// from there, so running it again after a crash, or twice, ends in the same place.
//
// How, and why each step:
// - Both folders are opened from their device roots one name at a time with O_NOFOLLOW (the
//   target's missing folders made on the way with mkdirat); the source is opened relative to
//   its folder with O_NOFOLLOW and must be a regular file with the planned device and inode.
//   Everything after that is relative to these descriptors, so a folder swapped for a link
//   meanwhile cannot lead anywhere else.
// - Within one file system: one rename that fails instead of replacing (renameat2
//   RENAME_NOREPLACE, renameatx_np RENAME_EXCL; where the file system cannot do that: linkat,
//   which never replaces either, then unlinkat of the old name). A taken name (EEXIST, also when
//   another process took it a moment ago) moves on to the next free `_N`.
// - Across file systems (EXDEV): the bytes are copied into `.reelhouse-move-<id>` in the target
//   folder (created exclusively, mode 0600 until complete) and hashed as they are read, the size
//   checked, mode and times (to the nanosecond) set, fsynced, then read back and hashed again:
//   a copy whose read-back differs is removed and the move fails (verified.ts). The copy's
//   identity and hash are recorded (`record`), then it is renamed into place without replacing,
//   the folder fsynced, and only then is the source unlinked (relative to its folder, after
//   checking that its name still holds the same, unchanged file).
// - Whenever the plan changes (another name, the copy's identity, a source that grew since the
//   plan), `record` is awaited BEFORE the step that depends on it: a task's params are written
//   first and the disk changed second, so a resume always knows every name this move may have
//   used. A resume recognises its own copy by that recorded identity; without `record` it falls
//   back to comparing size, modification time (to the nanosecond) and every byte.
//
// The copy runs on the thread pool in chunks (verified.ts: positioned reads and writes, two
// buffers, one read overlapping the previous write, each chunk hashed as it is read), so the
// event loop only ever does a chunk's bookkeeping and hashing and a few metadata calls;
// cancellation is noticed between chunks. Bun.write(file(fd), file(fd)) copies in one job
// (copy_file_range), but its bytes are never seen, so they could not be hashed; nor can it be
// cancelled or sliced (on descriptors its copy_file_range ignores `.slice()`).
import { randomBytes } from 'node:crypto'
import { accessSync, closeSync, fchmodSync, fstatSync, fsync, constants as fsConstants, read } from 'node:fs'
import {
  AT_FDCWD,
  AT_REMOVEDIR,
  DIR_FLAGS,
  E,
  O,
  cName,
  close,
  futimens,
  isFolderHandle,
  statOf,
  type FdStat,
  linkat,
  mkdirat,
  openat,
  openatCreate,
  readlinkat,
  renameNoReplace,
  renameat,
  sysError,
  unlinkat,
} from './dirfd.ts'
import { CancelledError, openBeneath } from './fs.ts'
import {
  PathError,
  SEP,
  baseName,
  below,
  cleanDir,
  cleanPath,
  dirName,
  endsWithSep,
  pathOf,
  relParts,
} from './paths.ts'
import { requireFileWork } from './platform.ts'
import { copyHashed, readBack, readBackProblem } from './verified.ts'

/** Device and inode as decimal text: exact (a bigint does not fit JSON) and comparable. */
export type FileId = { dev: string; ino: string }

/**
 * A planned move, to be stored as it is (JSON) in the task that runs it. Paths are a device
 * root (as configured, with its final slash) and a path relative to it.
 */
export type MovePlan = {
  source: { root: string; rel: string }
  /** The target folder ('' for the device root itself; else ending with a slash). */
  target: { root: string; rel: string }
  /** The name asked for (the source's); `name` is it or one of its `_N` forms. */
  wanted: string
  /**
   * The name is `wanted` or nothing (a camera card's files keep their names, docs/cards.md): a taken
   * name fails the move (EEXIST) instead of moving on to `_N`. Absent in plans of single files.
   */
  exact?: true
  /** The final name chosen; `record` is told when it changes. */
  name: string
  /** The hidden temporary name in the target folder, for copies across file systems. */
  temp: string
  /** The source file: identity, and size and modification time as last seen. */
  file: FileId & { size: number; mtimeNs: string }
  /**
   * The finished copy in `temp` (across file systems), once it is complete, synced and read back
   * with the hash of the bytes read from the source (plans recorded by older versions lack it).
   */
  copy?: FileId & { xxh64?: string }
}

/**
 * The points a move passes, in order (a move within a file system only passes 'renamed' and
 * 'synced'). 'written': the temp holds the bytes, synced, not read back yet; 'copied': read back
 * and found to be what was read from the source.
 */
export type MoveStep = 'temp-created' | 'written' | 'copied' | 'recorded' | 'renamed' | 'synced' | 'source-removed'

export type MoveOptions = {
  /**
   * Stores the changed plan where the caller keeps it (the task's params), before the step that
   * depends on it runs. A throw stops the move (the file stays at its source).
   */
  record?: (plan: MovePlan) => void | Promise<void>
  /** Bytes copied so far, across file systems; called after each chunk. */
  onProgress?: (bytes: number, total: number) => void
  /** Cancels a copy between chunks: the temp is removed and the file stays at its source. */
  signal?: AbortSignal
  /** Called as each step is passed (for logs; the crash tests stop the process there). */
  onStep?: (step: MoveStep, plan: MovePlan) => void
  /**
   * Copy as if the two folders were on different file systems. For the tests of the copy on a
   * machine with only one file system (the crash tests use it to get a copy wherever they run).
   */
  crossDevice?: boolean
}

export type MoveResult = {
  /** Where the file is now: the target folder's path and the final name. */
  path: string
  name: string
  /**
   * What this call did: one rename, a copy and removal, or nothing but finishing up because an
   * earlier run had already put the file there ('found').
   */
  how: 'renamed' | 'copied' | 'found'
  /** The plan as it ends (the name may be another than planned). */
  plan: MovePlan
  /**
   * The file's xxHash64 (16 hex digits) when the file at the destination is a copy that this move
   * (or the run it resumed) made, read back and checked: the bytes were read. A rename reads none.
   */
  xxh64?: string
}

type Fail = NodeJS.ErrnoException & { code: string; path: string }
const fail = (code: string, path: string, text: string): Fail =>
  Object.assign(new Error(`${code}: '${path}' ${text}`), { code, path })

const TEMP = /^\.reelhouse-move-[0-9a-f]{16}$/
/** How many `_N` names are tried before giving up (a folder with clip_1 ... clip_9999). */
export const MAX_SUFFIX = 9999
/** Bytes per read when two files are compared (reads of large chunks are not slower). */
const COMPARE_CHUNK = 1024 * 1024
const FILE_FLAGS = O.RDONLY | O.NOFOLLOW | O.NONBLOCK | O.CLOEXEC | (fsConstants.O_NOCTTY ?? 0)

/** `name` with `_n` before its extension: clip.mov → clip_1.mov, README → README_1, .hidden → .hidden_1. */
export function suffixed(name: string, n: number): string {
  if (n === 0) return name
  const dot = name.lastIndexOf('.')
  return dot > 0 ? `${name.slice(0, dot)}_${n}${name.slice(dot)}` : `${name}_${n}`
}

/** The absolute path of the plan's destination. */
export const destinationPath = (plan: MovePlan) => plan.target.root + plan.target.rel + plan.name

/** The absolute path of the plan's source. */
export const sourcePath = (plan: MovePlan) => plan.source.root + plan.source.rel

export type PlanInput = {
  /** The file to move, an absolute path on the device whose folder is `sourceRoot`. */
  source: string
  sourceRoot: string
  /** The folder to move it into (made when missing), on the device whose folder is `targetRoot`. */
  targetDir: string
  targetRoot: string
  /** The name wanted in the target folder; the source's name when not given. */
  name?: string
  /** The device and inode the caller saw (e.g. the asset's file_dev/file_ino): any other file is refused. */
  expect?: { dev: number | bigint | string; ino: number | bigint | string }
  /** The name is `name` or nothing: a taken name is EEXIST, never `_N` (a camera card's files). */
  exact?: boolean
}

/**
 * Checks the source and picks the final name (the first of name, name_1, ... that nothing in
 * the target folder has, a dangling link counting as taken). Nothing on disk changes. Throws
 * ELOOP (the source is a link), EINVAL (not a regular file; a path outside its device),
 * ENOTDIR/ELOOP (a link on the way from a device root), ECHANGED (not the expected file),
 * ENOENT.
 */
export function planMove(input: PlanInput): MovePlan {
  requireFileWork()
  const sourceRoot = rootOf(input.sourceRoot)
  const targetRoot = rootOf(input.targetRoot)
  const source = { root: sourceRoot, rel: relOf(sourceRoot, input.source, false) }
  const target = { root: targetRoot, rel: relOf(targetRoot, input.targetDir, true) }
  const wanted = input.name ?? baseName(source.rel)
  checkName(wanted)
  const temp = `.reelhouse-move-${randomBytes(8).toString('hex')}`
  const found = openSource({ source, file: undefined })
  let file: MovePlan['file']
  let sourceFolder: FileId
  try {
    if (found.kind !== 'file') throw refusal(found, source.rel, true)
    file = fileOf(found.stat)
    sourceFolder = idOf(statOf(found.folder))
    if (input.expect && (String(input.expect.dev) !== file.dev || String(input.expect.ino) !== file.ino))
      throw fail('ECHANGED', source.rel, 'is not the expected file (device and inode differ)')
  } finally {
    closeFound(found)
  }
  let name = wanted
  const folder = openFolder(target, false)
  if (folder !== undefined) {
    try {
      const same = sameId(idOf(statOf(folder)), sourceFolder) && baseName(source.rel) === wanted
      if (!same) name = pickName(folder, { wanted, target, exact: input.exact ? true : undefined })
    } finally {
      close(folder)
    }
  }
  return { source, target, wanted, name, temp, file, ...(input.exact ? { exact: true as const } : {}) }
}

/** Runs or resumes a planned move; see the top of this file. Same plan, same end, however often. */
export async function moveFile(planned: MovePlan, options: MoveOptions = {}): Promise<MoveResult> {
  requireFileWork()
  checkPlan(planned)
  let plan: MovePlan = { ...planned, file: { ...planned.file } }
  const save = async (next: MovePlan) => {
    plan = next
    await options.record?.(next)
  }
  const step = (s: MoveStep) => options.onStep?.(s, plan)
  const { signal } = options
  if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))

  // The source first: a refused source leaves no folders made behind.
  const found = openSource(plan)
  let folder: number
  try {
    folder = openFolder(plan.target, true)!
  } catch (error) {
    closeFound(found)
    throw error
  }
  try {
    /** `ours`: the file at the destination is the copy recorded in the plan, with its hash. */
    const done = (how: MoveResult['how'], ours = false): MoveResult => ({
      path: destinationPath(plan),
      name: plan.name,
      how,
      plan,
      ...(ours && plan.copy?.xxh64 ? { xxh64: plan.copy.xxh64 } : {}),
    })
    const srcName = baseName(plan.source.rel)
    const sourceFolder = found.folder >= 0 ? idOf(statOf(found.folder)) : undefined
    const targetFolder = idOf(statOf(folder))
    const ours = found.kind === 'file' ? found : undefined

    // The source is already where it should be: nothing to do.
    if (sourceFolder && sameId(sourceFolder, targetFolder) && srcName === plan.name) {
      if (!ours) throw refusal(found, plan.source.rel)
      return done('found')
    }

    // What the final name and the temp hold now.
    let final = look(folder, plan.name)
    let temp = look(folder, plan.temp)
    const isFile = (s?: FdStat) => !!s && sameId(idOf(s), plan.file)
    const isCopy = (s?: FdStat) => !!s && !!plan.copy && sameId(idOf(s), plan.copy)

    // An earlier run got the file there: finish what it left (a second name, a temp, the source).
    if (isFile(final)) {
      // A rename, or linkat then a crash before the old name went: the old name goes now.
      if (temp) removeTemp(folder, plan)
      if (ours) unlinkSecondName(ours.folder, srcName, plan)
      await fsyncFd(folder)
      return done('found')
    }
    if (isCopy(final)) {
      if (temp) removeTemp(folder, plan) // linkat left the temp as a second name of the copy
      if (!ours) return done('found', true)
      if (unchanged(ours.stat, plan.file)) {
        await fsyncFd(folder)
        await removeSource(ours, plan, srcName, undefined)
        return done('found', true)
      }
      // The source was written to after it was copied: the copy (ours, by its recorded identity)
      // is out of date. It goes, and the source is moved again below.
      unlinkIfSame(folder, plan.name, plan.copy!)
      await save({ ...plan, copy: undefined })
      final = look(folder, plan.name)
      temp = undefined
    }

    // The temp as a recorded copy is complete: it goes into place (a copy is never dropped).
    const placeTemp = async () => {
      for (let tries = 0; ; tries++) {
        if (tries > 0 || look(folder, plan.name)) {
          let free: string
          try {
            free = pickName(folder, plan)
          } catch (error) {
            // An exact name taken: the copy goes while the source is there (never the only copy left).
            if (ours) removeTemp(folder, plan)
            throw error
          }
          if (free !== plan.name) await save({ ...plan, name: free })
        }
        const moved = renameOrLink(folder, plan.temp, folder, plan.name, plan.copy!)
        if (moved === 0) break
        if (moved === -E.EEXIST && tries < MAX_SUFFIX) continue
        removeTemp(folder, plan)
        throw sysError(moved, 'rename', `${plan.target.rel}${plan.temp}`)
      }
      step('renamed')
      await fsyncFd(folder)
      step('synced')
    }

    if (!ours) {
      // The source is gone or is another file now, and the final name does not hold our file.
      // A complete copy in the temp is then the only copy left of it: it is put in place.
      if (isCopy(temp)) {
        await placeTemp()
        return done('found', true)
      }
      // Without a recorded copy, a file of the planned size and time there is taken as ours.
      if (temp) removeTemp(folder, plan)
      if (!plan.copy && final && found.kind === 'missing' && final.isFile() && unchanged(final, plan.file))
        return done('found')
      throw refusal(found, plan.source.rel)
    }

    // The source is ours. Is the final name taken by a copy that a run without `record` made?
    if (final && !plan.copy && final.isFile() && (await identical(ours, folder, plan.name, signal))) {
      if (temp) removeTemp(folder, plan)
      await fsyncFd(folder)
      await removeSource(ours, plan, srcName, undefined)
      return done('found')
    }
    if (!unchanged(ours.stat, plan.file)) await save({ ...plan, file: fileOf(ours.stat), copy: undefined })

    // Within one file system: one rename that does not replace.
    let n = 0
    if (!options.crossDevice) {
      for (; ; n++) {
        if (final || n > 0) {
          const free = pickName(folder, plan)
          if (free !== plan.name) await save({ ...plan, name: free })
        }
        const moved = renameOrLink(ours.folder, srcName, folder, plan.name, plan.file)
        if (moved === 0) {
          const at = look(folder, plan.name)
          if (!isFile(at)) {
            // Another file took the source's name between our check and the rename: it goes
            // back where it was, and this move stops.
            const back = putBack(folder, plan.name, ours.folder, srcName, at)
            throw fail(
              'ECHANGED',
              plan.source.rel,
              `was replaced by another file while being moved${back ? '' : `; that file is now at '${plan.target.rel}${plan.name}'`}`,
            )
          }
          if (temp) removeTemp(folder, plan)
          step('renamed')
          await fsyncFd(folder)
          await fsyncFd(ours.folder)
          step('synced')
          return done('renamed')
        }
        if (moved === -E.EEXIST && n < MAX_SUFFIX) continue
        if (moved === -E.EXDEV) break
        throw sysError(moved, 'rename', plan.source.rel)
      }
    }

    // Across file systems: copy into the temp, then rename it into place.
    try {
      accessSync(pathOf.dirname(sourcePath(plan)), fsConstants.W_OK)
    } catch (error) {
      // Checked before copying, so that a source on a read-only card fails at once, not after
      // the whole copy (the unlink at the end would fail, and the copy would be removed again).
      throw fail(
        (error as NodeJS.ErrnoException).code ?? 'EACCES',
        dirName(plan.source.rel) || '.',
        'cannot be changed, so the source could not be removed after copying',
      )
    }
    // A complete copy recorded before a crash is renamed as it is, not made again.
    const reuse = temp && isCopy(temp)
    if (temp && !reuse) removeTemp(folder, plan)
    if (!reuse) await copyToTemp(ours, folder, plan, { ...options, save, step })
    await placeTemp()
    await removeSource(ours, plan, srcName, folder)
    step('source-removed')
    return done('copied', true)
  } finally {
    closeFound(found)
    close(folder)
  }
}

/** The same as `moveFile`: a resume is a run that finds some of the work done. */
export const resumeMove = moveFile

// ---------------------------------------------------------------------------------------------

type FoundFile = { kind: 'file'; folder: number; fd: number; stat: FdStat }
type Found =
  | FoundFile
  | { kind: 'missing'; folder: number }
  | { kind: 'link'; folder: number }
  | { kind: 'not-file'; folder: number }
  | { kind: 'other'; folder: number }

/**
 * The source folder (opened beneath its device root; -1 when a folder on the way is missing)
 * and what the source's name holds: the planned file, nothing, a link, not a regular file, or
 * another file. A link on the way to the folder throws.
 */
function openSource(plan: Pick<MovePlan, 'source'> & { file: FileId | undefined }): Found {
  const dir = dirName(plan.source.rel)
  let folder: number
  try {
    folder = openBeneath(plan.source.root, dir === '.' ? '' : dir)
  } catch (error) {
    const { code, path } = error as Fail
    if (path === 'the device folder') throw error
    if (code === 'ENOENT') return { kind: 'missing', folder: -1 }
    if (code === 'ENOTDIR' || code === 'ELOOP')
      throw fail('ENOTDIR', path, 'is a symbolic link or not a folder; the source must be reached without links')
    throw error
  }
  const fd = openat(folder, cName(baseName(plan.source.rel)), FILE_FLAGS)
  if (fd === -E.ENOENT) return { kind: 'missing', folder }
  if (fd === -E.ELOOP) return { kind: 'link', folder }
  if (fd < 0) {
    close(folder)
    throw sysError(fd, 'openat', plan.source.rel)
  }
  const stat = fstatSync(fd, { bigint: true })
  const found: Found = !stat.isFile()
    ? { kind: 'not-file', folder }
    : plan.file && !sameId(idOf(stat), plan.file)
      ? { kind: 'other', folder }
      : { kind: 'file', folder, fd, stat }
  if (found.kind !== 'file') closeSync(fd)
  return found
}

function closeFound(found: Found) {
  if (found.kind === 'file') closeSync(found.fd)
  if (found.folder >= 0) close(found.folder)
}

function refusal(found: Found, rel: string, planning = false): Error {
  switch (found.kind) {
    case 'link':
      return fail('ELOOP', rel, 'is a symbolic link; links are not moved or followed')
    case 'not-file':
      return fail('EINVAL', rel, 'is not a regular file')
    case 'other':
      return fail(
        'ECHANGED',
        rel,
        'is not the planned file (device and inode differ): it was replaced since the move was planned',
      )
    default:
      return fail(
        'ENOENT',
        rel,
        planning ? 'does not exist' : 'does not exist, and the file was not found at its destination',
      )
  }
}

/**
 * The target folder, opened from its device root one name at a time without following links;
 * with `make`, missing folders are made on the way (mode 0777 less the umask). Without it,
 * undefined when a folder on the way is missing.
 */
function openFolder(target: MovePlan['target'], make: boolean): number | undefined {
  let fd = openat(AT_FDCWD, cName(target.root), O.RDONLY | O.DIRECTORY | O.CLOEXEC)
  if (fd < 0) throw sysError(fd, 'open', 'the device folder')
  let walked = ''
  for (const part of relParts(target.rel)) {
    walked = walked ? `${walked}/${part}` : part
    let next = openat(fd, cName(part), DIR_FLAGS)
    if (next === -E.ENOENT && make) {
      const made = mkdirat(fd, cName(part), 0o777)
      next = made === 0 || made === -E.EEXIST ? openat(fd, cName(part), DIR_FLAGS) : made
    }
    close(fd)
    if (next === -E.ENOENT && !make) return undefined
    if (next === -E.ENOTDIR || next === -E.ELOOP)
      throw fail(
        'ENOTDIR',
        walked,
        'is a symbolic link or not a folder; the target folder must be reached without links',
      )
    if (next < 0) throw sysError(next, 'openat', walked)
    fd = next
  }
  return fd
}

/**
 * What `name` in `folder` is, without following a link: its stat, or undefined when nothing
 * has the name. A link (or a file that cannot be opened) gives a stat of no file of ours: the
 * folder's own, which matches no plan's file.
 */
function look(folder: number, name: string): FdStat | undefined {
  const fd = openat(folder, cName(name), FILE_FLAGS)
  if (fd === -E.ENOENT) return undefined
  if (fd < 0) return statOf(folder)
  try {
    return fstatSync(fd, { bigint: true })
  } finally {
    closeSync(fd)
  }
}

/** The first of `wanted`, wanted_1, ... that nothing in `folder` has (a dangling link counts). */
function freeName(folder: number, wanted: string, rel: string): string {
  for (let n = 0; n <= MAX_SUFFIX; n++) {
    const name = suffixed(wanted, n)
    // readlinkat looks at the name itself: ENOENT is free; EINVAL (not a link) or a value is taken.
    if (readlinkat(folder, cName(name)) === -E.ENOENT) return name
  }
  throw fail('EEXIST', `${rel}${wanted}`, `and its ${MAX_SUFFIX} numbered forms are all taken`)
}

/** The name a move takes in `folder`: the first free of wanted, wanted_1, ...; or, exact, wanted while it is free. */
function pickName(folder: number, plan: Pick<MovePlan, 'wanted' | 'target' | 'exact'>): string {
  if (!plan.exact) return freeName(folder, plan.wanted, plan.target.rel)
  if (readlinkat(folder, cName(plan.wanted)) === -E.ENOENT) return plan.wanted
  throw fail(
    'EEXIST',
    `${plan.target.rel}${plan.wanted}`,
    "is taken; a camera card's files keep their names, so this one was not moved",
  )
}

/**
 * A new folder of this caller's own: `wanted` in `parentDir` (made when missing, from the device root
 * `root` one name at a time without following links), or, when anything has that name, `wanted_1`,
 * `wanted_2`, ... (the suffix after the whole name: `A001` gives `A001_1`). mkdirat makes it or
 * fails, so two callers never get the same folder. Answers its absolute path, with a final separator.
 * Throws EEXIST when every numbered form is taken, and as planMove for a bad path.
 */
export function claimFolder(root: string, parentDir: string, wanted: string): string {
  requireFileWork()
  checkName(wanted)
  const target = { root: rootOf(root), rel: relOf(rootOf(root), parentDir, true) }
  const folder = openFolder(target, true)!
  try {
    for (let n = 0; n <= MAX_SUFFIX; n++) {
      const name = n === 0 ? wanted : `${wanted}_${n}`
      const made = mkdirat(folder, cName(name), 0o777)
      if (made === 0) return `${target.root}${target.rel}${name}${SEP}`
      if (made !== -E.EEXIST) throw sysError(made, 'mkdirat', `${target.rel}${name}`)
    }
  } finally {
    close(folder)
  }
  throw fail('EEXIST', `${target.rel}${wanted}`, `and its ${MAX_SUFFIX} numbered forms are all taken`)
}

/**
 * Removes each folder of `folders` (relative to the device root `root`, deepest first) while it is
 * empty, relative to its opened parent (no link followed on the way). A folder that is not empty, or
 * gone, stays or is skipped; nothing else is ever removed. Answers the folders removed.
 */
export function removeEmptyFolders(root: string, folders: readonly string[]): string[] {
  requireFileWork()
  const removed: string[] = []
  const from = rootOf(root)
  for (const rel of folders) {
    const parts = relParts(rel)
    const name = parts.pop()
    if (name === undefined) continue
    let parent: number
    try {
      parent = openBeneath(from, parts.join('/'))
    } catch {
      continue // gone, or a link on the way: not ours to touch
    }
    try {
      if (unlinkat(parent, cName(name), AT_REMOVEDIR) === 0) removed.push(rel)
    } finally {
      close(parent)
    }
  }
  return removed
}

/**
 * Which call decides a move within one file system, from what the rename that refuses to replace
 * answered (`renamed`) and, once it was tried, what linkat answered (`linked`):
 * - 'rename': the rename's answer stands (0, EEXIST, EXDEV, EACCES, ...);
 * - 'link': the file system cannot rename without replacing (EINVAL on Linux, ENOTSUP on macOS;
 *   ENOSYS: no such call): a hard link, then the old name removed; the link's answer stands;
 * - 'check-then-rename': it has no hard links either (ENOTSUP/EOPNOTSUPP; EPERM, which Linux's
 *   vfat and exFAT answer, and protected_hardlinks for a file of another user): exFAT and FAT
 *   camera cards, many SMB mounts on macOS. Only then; a link missing from the C library
 *   (ENOSYS) says nothing of the file system and is not taken for it.
 */
export function renameFallback(renamed: number, linked?: number): 'rename' | 'link' | 'check-then-rename' {
  const notsup = [-E.ENOTSUP, -(E.EOPNOTSUPP ?? E.ENOTSUP)]
  if (![-E.EINVAL, -E.ENOSYS, ...notsup].includes(renamed)) return 'rename'
  return linked !== undefined && [...notsup, -E.EPERM].includes(linked) ? 'check-then-rename' : 'link'
}

/**
 * Gives `from` the name `to` without replacing anything (but see below): 0, or -errno. A rename
 * that refuses to replace, or, where the file system cannot (EINVAL; ENOTSUP on macOS; no such
 * call), a link and the removal of the old name: the old name goes only while it still holds
 * `id`. Where it has neither (renameFallback), a check that `to` is free and a plain rename.
 */
function renameOrLink(fromDir: number, from: string, toDir: number, to: string, id: FileId): number {
  const renamed = renameNoReplace(fromDir, cName(from), toDir, cName(to))
  if (renameFallback(renamed) === 'rename') return renamed
  const linked = linkat(fromDir, cName(from), toDir, cName(to))
  if (renameFallback(renamed, linked) === 'check-then-rename') {
    // No rename that refuses to replace and no hard link: `to` must be free (nothing has the
    // name, a dangling link counting as taken: EEXIST, and the caller tries the next name), then
    // renameat, which replaces. The race: a file another writer makes at `to` between the check
    // and the rename is replaced by ours (its name unlinked). The window is one system call, and
    // it is accepted only where the file system offers nothing better, as Syncthing and cp
    // accept it there; wherever the rename or the link works, they are used (renameFallback).
    const there = readlinkat(toDir, cName(to))
    if (there !== -E.ENOENT) return typeof there === 'number' && there !== -E.EINVAL ? there : -E.EEXIST
    const moved = renameat(fromDir, cName(from), toDir, cName(to))
    if (moved !== 0) return moved
    // The file now at `to` must be ours (the planned device and inode): the old name may have
    // held another file by the time of the rename (or ours was taken away right after).
    const now = look(toDir, to)
    if (now && sameId(idOf(now), id)) return 0
    if (!now)
      throw fail('ENOENT', to, 'was gone right after it was renamed there (another program moved or removed it)')
    // As putBack: the file goes back under its old name while nothing has that name (the same
    // one-call race); if something appeared there meanwhile, it stays at `to` and is named.
    const back =
      readlinkat(fromDir, cName(from)) === -E.ENOENT && renameat(toDir, cName(to), fromDir, cName(from)) === 0
    throw fail(
      'ECHANGED',
      from,
      `was replaced by another file while being moved${back ? '' : `; that file is now at '${to}'`}`,
    )
  }
  if (linked !== 0) return linked
  const now = look(fromDir, from)
  if (now && sameId(idOf(now), id)) {
    const removed = unlinkat(fromDir, cName(from), 0)
    if (removed !== 0 && removed !== -E.ENOENT) throw sysError(removed, 'unlinkat', from)
  }
  return 0
}

function removeTemp(folder: number, plan: MovePlan) {
  const removed = unlinkat(folder, cName(plan.temp), 0)
  if (removed !== 0 && removed !== -E.ENOENT) throw sysError(removed, 'unlinkat', `${plan.target.rel}${plan.temp}`)
}

/**
 * After moving a file that was not ours (swapped in at the last moment): its old name back, or,
 * where linkat made the move and the old name is still there, the new second name removed.
 * True when nothing of it is left at the destination.
 */
function putBack(
  folder: number,
  name: string,
  sourceFolder: number,
  srcName: string,
  moved: FdStat | undefined,
): boolean {
  if (renameNoReplace(folder, cName(name), sourceFolder, cName(srcName)) === 0) return true
  const there = look(sourceFolder, srcName)
  if (!moved || !there || !sameId(idOf(there), idOf(moved))) return false
  return unlinkat(folder, cName(name), 0) === 0
}

/** The source's old name, while it is a second name of the file now at its destination. */
function unlinkSecondName(sourceFolder: number, srcName: string, plan: MovePlan) {
  const now = look(sourceFolder, srcName)
  if (!now || !sameId(idOf(now), plan.file)) return
  const removed = unlinkat(sourceFolder, cName(srcName), 0)
  if (removed !== 0 && removed !== -E.ENOENT) throw sysError(removed, 'unlinkat', plan.source.rel)
}

/** Unlinks `name` in `folder` if it is the file `id` (ours); anything else stays. */
function unlinkIfSame(folder: number, name: string, id: FileId) {
  const now = look(folder, name)
  if (!now || !sameId(idOf(now), id)) return
  const removed = unlinkat(folder, cName(name), 0)
  if (removed !== 0 && removed !== -E.ENOENT) throw sysError(removed, 'unlinkat', name)
}

/**
 * Removes the source's name once the file is safe at its destination: only while the name
 * still holds the same file, unchanged since it was copied (a file written to after its copy
 * began is not removed: with `copyFolder` given, our copy goes instead and the move fails).
 */
async function removeSource(ours: FoundFile, plan: MovePlan, srcName: string, copyFolder: number | undefined) {
  const now = look(ours.folder, srcName)
  if (!now || !sameId(idOf(now), plan.file)) return // gone, or another file took the name: not ours to remove
  if (!unchanged(now, plan.file)) {
    if (copyFolder === undefined)
      throw fail('ECHANGED', plan.source.rel, 'changed after it was copied; both files were left')
    unlinkIfSame(copyFolder, plan.name, plan.copy!)
    throw fail(
      'ECHANGED',
      plan.source.rel,
      'was written to while it was being moved; the copy was removed and the file stays where it was',
    )
  }
  const removed = unlinkat(ours.folder, cName(srcName), 0)
  if (removed !== 0 && removed !== -E.ENOENT) {
    if (copyFolder !== undefined) unlinkIfSame(copyFolder, plan.name, plan.copy!)
    throw sysError(removed, 'unlinkat', plan.source.rel)
  }
  await fsyncFd(ours.folder)
}

type CopyContext = MoveOptions & { save: (plan: MovePlan) => Promise<void>; step: (s: MoveStep) => void }

// No APFS clone here (fs.ts copyTree makes them): this copy is a move across volumes, and a
// clone is made only within one volume (fclonefileat answers EXDEV), so the bytes are copied.
/**
 * Copies the source into a new temp (exclusive create, 0600) hashing what it reads, checks the
 * size and that the source did not change meanwhile, sets mode and times, fsyncs, reads the
 * temp back and checks its hash against the source's, and records the copy's identity and hash.
 * On any failure or cancellation the temp is removed (the source stays).
 */
async function copyToTemp(ours: FoundFile, folder: number, plan: MovePlan, context: CopyContext) {
  const tempRel = `${plan.target.rel}${plan.temp}`
  // Read and write: the copy is read back through the descriptor it was written through.
  const out = openatCreate(
    folder,
    cName(plan.temp),
    fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_EXCL | O.NOFOLLOW | O.CLOEXEC,
    0o600,
  )
  if (out < 0) throw sysError(out, 'openat', tempRel)
  let copy: MovePlan['copy']
  try {
    fchmodSync(out, 0o600) // the mode openat was given may not have arrived (Apple arm64: see dirfd.ts)
    context.step('temp-created')
    const before = fstatSync(ours.fd, { bigint: true })
    const total = Number(before.size)
    const { signal, onProgress } = context
    // durable: written back while it is made (verified.ts), for the fsync below.
    const read = await copyHashed(ours.fd, out, {
      signal,
      onProgress: (bytes) => onProgress?.(bytes, total),
      durable: true,
    })
    const copied = read.size
    const after = fstatSync(ours.fd, { bigint: true })
    if (after.size !== before.size || after.mtimeNs !== before.mtimeNs)
      throw fail(
        'ECHANGED',
        plan.source.rel,
        'was written to while it was being copied; the move stopped and the file stays where it was',
      )
    const written = fstatSync(out, { bigint: true })
    if (copied !== total || Number(written.size) !== total)
      throw fail('EIO', plan.source.rel, `size check failed: ${Number(written.size)} of ${total} bytes copied`)
    fchmodSync(out, Number(before.mode) & 0o7777)
    const timed = futimens(out, before.atimeNs, before.mtimeNs)
    if (timed < 0) throw sysError(timed, 'futimens', tempRel)
    await fsyncFd(out)
    context.step('written')
    const problem = readBackProblem(read, await readBack(out, signal))
    if (problem) throw fail('EHASH', plan.source.rel, `was not copied faithfully: ${problem}; the copy was removed`)
    copy = { ...idOf(written), xxh64: read.xxh64 }
    context.step('copied')
  } catch (error) {
    closeSync(out)
    unlinkat(folder, cName(plan.temp), 0)
    throw error
  }
  closeSync(out)
  try {
    await context.save({ ...plan, copy })
  } catch (error) {
    unlinkat(folder, cName(plan.temp), 0)
    throw error
  }
  context.step('recorded')
}

const readAt = (fd: number, buffer: Buffer, position: number) =>
  new Promise<number>((resolve, reject) =>
    read(fd, buffer, 0, buffer.length, position, (error, n) => (error ? reject(error) : resolve(n))),
  )

/**
 * fsync of a file, or of a folder (its new and removed names are on disk). Windows flushes no
 * folder (FlushFileBuffers on a folder handle is refused; NTFS journals its names itself), so
 * there a folder's is a no-op.
 */
const fsyncFd = (fd: number) =>
  isFolderHandle(fd)
    ? Promise.resolve()
    : new Promise<void>((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())))

/**
 * For a resume without a recorded copy: is the file named `name` in `folder` a complete copy of
 * the source? Same size, same modification time to the nanosecond (a copy gets the source's),
 * and the same bytes, compared in chunks on the thread pool. Only ever asked after a crash
 * between a rename and the source's removal, or when someone put an identical file there.
 */
async function identical(ours: FoundFile, folder: number, name: string, signal?: AbortSignal): Promise<boolean> {
  const fd = openat(folder, cName(name), FILE_FLAGS)
  if (fd < 0) return false
  try {
    const s = fstatSync(fd, { bigint: true })
    if (!s.isFile() || s.size !== ours.stat.size || s.mtimeNs !== ours.stat.mtimeNs) return false
    const a = Buffer.allocUnsafe(COMPARE_CHUNK)
    const b = Buffer.allocUnsafe(COMPARE_CHUNK)
    for (let at = 0; ; ) {
      if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
      const [n, m] = await Promise.all([readAt(ours.fd, a, at), readAt(fd, b, at)])
      if (n !== m || !a.subarray(0, n).equals(b.subarray(0, m))) return false
      if (n === 0) return true
      at += n
    }
  } finally {
    closeSync(fd)
  }
}

const idOf = (s: FdStat): FileId => ({ dev: String(s.dev), ino: String(s.ino) })
const sameId = (a: FileId, b: FileId) => a.dev === b.dev && a.ino === b.ino
const fileOf = (s: FdStat): MovePlan['file'] => ({ ...idOf(s), size: Number(s.size), mtimeNs: String(s.mtimeNs) })
/** Same size and modification time as the plan's file. */
const unchanged = (s: FdStat, file: MovePlan['file']) =>
  Number(s.size) === file.size && String(s.mtimeNs) === file.mtimeNs

function rootOf(root: string): string {
  try {
    return cleanDir(root)
  } catch (error) {
    throw fail('EINVAL', root, (error as Error).message)
  }
}

/** `path` relative to `root` (a folder's with its final slash, '' for the root itself). */
function relOf(root: string, path: string, folder: boolean): string {
  let clean: string
  try {
    clean = folder ? cleanDir(path) : cleanPath(path)
  } catch (error) {
    if (error instanceof PathError) throw fail('EINVAL', path, error.message)
    throw error
  }
  // The rest in the path's own spelling: where names compare without case (macOS), the device's
  // root may be written otherwise in the path.
  const rel = below(root, clean)
  if (rel === undefined) throw fail('EINVAL', path, 'is not on the device it was given with')
  if (!folder && (!rel || endsWithSep(rel))) throw fail('EINVAL', path, 'is not a file path')
  return rel
}

function checkName(name: string) {
  if (
    !name ||
    name === '.' ||
    name === '..' ||
    baseName(name) !== name ||
    name.includes('\0') ||
    Buffer.byteLength(name) > 255
  )
    throw fail('EINVAL', name, 'is not a file name')
}

/** A plan read back from a task's params is checked before anything is done with it. */
function checkPlan(plan: MovePlan) {
  for (const name of [plan.wanted, plan.name]) checkName(name)
  if (!TEMP.test(plan.temp)) throw fail('EINVAL', plan.temp, 'is not a temporary name of a move')
  const clean =
    rootOf(plan.source.root) === plan.source.root &&
    rootOf(plan.target.root) === plan.target.root &&
    relOf(plan.source.root, sourcePath(plan), false) === plan.source.rel &&
    relOf(plan.target.root, plan.target.root + plan.target.rel, true) === plan.target.rel
  if (!clean)
    throw fail(
      'EINVAL',
      sourcePath(plan),
      'is not in the form planMove gives (a device root with its slash, a clean relative path)',
    )
}
