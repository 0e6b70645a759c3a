// Where paths lie: the device a path is on, containment, and symlink checks. Every file
// operation goes through here first (service.md sections 6 and 7).
import { lstatSync, mkdirSync, realpathSync } from 'node:fs'
import { posix } from 'node:path'

export const MAX_PATH = 4096

export class PathError extends Error {}

/** Checks an absolute path from a request and resolves `.` and `..` in it. */
export function cleanPath(value: string): string {
  if (value.includes('\0')) throw new PathError('The path contains a NUL character.')
  if (value.length > MAX_PATH) throw new PathError(`The path is longer than ${MAX_PATH} characters.`)
  if (!value.startsWith('/')) throw new PathError('The path must be absolute.')
  const normal = posix.normalize(value)
  return value.endsWith('/') && !normal.endsWith('/') ? normal + '/' : normal
}

/** A folder path: cleaned, with exactly one final slash. */
export const cleanDir = (value: string) => {
  const p = cleanPath(value)
  return p.endsWith('/') ? p : p + '/'
}

type DeviceLike = { id: number; path: string }

/** The device with the longest path that is a prefix of `path` (a folder path or a file path). */
export function deviceFor<D extends DeviceLike>(devices: readonly D[], path: string): D | undefined {
  let best: D | undefined
  for (const d of devices) {
    const inside = path === d.path || path.startsWith(d.path) || path + '/' === d.path
    if (inside && (!best || d.path.length > best.path.length)) best = d
  }
  return best
}

/** True when `child` lies inside the folder `parent` (both cleaned, folder ends with /). */
export const isInside = (parent: string, child: string) => child !== parent && child.startsWith(parent)

/**
 * Creates `dir` (and missing parents) inside `root`, refusing when an existing part of the way
 * resolves, through a symlink, to somewhere outside `root`.
 */
export function makeDirInside(root: string, dir: string): void {
  let realRoot: string
  try {
    realRoot = realpathSync(root)
  } catch {
    throw new PathError(`The device folder ${root} does not exist (offline).`)
  }
  let existing = dir
  while (true) {
    try {
      const real = realpathSync(existing)
      if (real !== realRoot && !(real + '/').startsWith(realRoot.endsWith('/') ? realRoot : realRoot + '/'))
        throw new PathError(`${existing} leads outside its device through a symbolic link.`)
      break
    } catch (error) {
      if (error instanceof PathError) throw error
      const parent = posix.dirname(existing.replace(/\/$/, ''))
      if (parent === existing) break
      existing = parent + '/'
    }
  }
  try {
    mkdirSync(dir, { recursive: true })
  } catch (error) {
    throw new PathError(`Cannot create ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`)
  }
}

/**
 * Why `path` (a folder on the device at `devicePath`) is not where its name says, or undefined.
 * Between the device root and the folder there must be no symbolic link: otherwise one folder
 * has two names, and checks on names (is this inside that project?) stop meaning anything.
 */
export function aliasProblem(devicePath: string, path: string): string | undefined {
  return resolveFolder(devicePath, path).problem
}

/**
 * aliasProblem's answer, and when there is none, the folder's real path (final slash; links in
 * the device's own path resolved), or undefined when the device is offline.
 */
function resolveFolder(devicePath: string, path: string): { problem?: string; real?: string } {
  let realDevice: string
  try {
    realDevice = realpathSync(devicePath).replace(/\/?$/, '/')
  } catch {
    return {} // an offline device: nothing on it can be reached through a link either
  }
  let existing = path.replace(/\/$/, '')
  let rest = ''
  for (;;) {
    try {
      const real = realpathSync(existing)
      const actual = (real + '/' + rest).replace(/\/+$/, '/')
      const expected = (realDevice + path.slice(devicePath.length)).replace(/\/+$/, '/')
      // The link's target is not named: it may lie outside every device (service.md 5).
      return actual === expected ? { real: actual } : { problem: `${existing} is reached through a symbolic link; use the real path.` }
    } catch {
      const parent = posix.dirname(existing)
      if (parent === existing) return {}
      rest = posix.basename(existing) + '/' + rest
      existing = parent
    }
  }
}

/**
 * The path with every symbolic link resolved, as far as it exists; the part that does not exist
 * yet is appended as written. Ends with a slash when `path` does.
 */
export function realOf(path: string): string {
  const slash = path.endsWith('/')
  let existing = path.replace(/\/+$/, '') || '/'
  let rest = ''
  for (;;) {
    try {
      const real = realpathSync(existing)
      const joined = rest ? posix.join(real, rest) : real
      return slash && !joined.endsWith('/') ? joined + '/' : joined
    } catch {
      const parent = posix.dirname(existing)
      if (parent === existing) return path
      rest = rest ? posix.join(posix.basename(existing), rest) : posix.basename(existing)
      existing = parent
    }
  }
}

/** Names Reelhouse gives its own work folders; no path a user gives may use them. */
export const WORK_FOLDER = /(^|\/)\.reelhouse-/

export function reservedProblem(path: string): string | undefined {
  return WORK_FOLDER.test(path) ? 'Names starting with .reelhouse- are reserved for the work folders of copies and deletes.' : undefined
}

/** What the disk says of a file path when it was checked (lstat); undefined when nothing is there. */
export type FileStat = { kind: 'file' | 'dir' | 'link' | 'other'; dev: number; ino: number; size: number; mtimeMs: number; stamp: number }

/**
 * What tells one file from the next one given the same inode: its birth time (ms, from statx),
 * which a rename keeps and a new file never shares; where the file system records none (0:
 * some network mounts), the modification time, which a rename keeps as well (a file edited in
 * place then reads as another file: an offline asset and a new import, never a wrong match).
 */
export const stampOf = (s: { birthtimeMs: number; mtimeMs: number }): number => (s.birthtimeMs > 0 ? s.birthtimeMs : s.mtimeMs)

/** `real`: the path with the links in the device's own path resolved (none lie below it); undefined when the device is offline. */
export type FileOnDevice<D> = { path: string; device: D; stat?: FileStat; real?: string }

/**
 * The one gate for a single file's path (media assets, imports): cleaned, naming a file (not a
 * folder, not a device root), on a device, with no symbolic link between the device root and
 * the file's folder, and not itself a link. `stat` is what is there now, or undefined when
 * nothing is (a catalogue entry may name a file that is offline or archived). Throws PathError.
 * Tasks that act on the file open it again relative to descriptors (fs.ts openBeneath).
 */
export function fileOnDevice<D extends DeviceLike>(devices: readonly D[], value: string): FileOnDevice<D> {
  const path = cleanPath(value)
  if (path.endsWith('/')) throw new PathError('The path names a folder; a file is needed.')
  const device = deviceFor(devices, path)
  if (!device) throw new PathError('The path does not lie on any device.')
  if (path + '/' === device.path) throw new PathError('The path names the root of a device; a file is needed.')
  const folder = resolveFolder(device.path, posix.dirname(path) + '/')
  if (folder.problem) throw new PathError(folder.problem)
  const reserved = reservedProblem(path)
  if (reserved) throw new PathError(reserved)
  let stat: FileStat | undefined
  try {
    const s = lstatSync(path)
    stat = {
      kind: s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other',
      dev: s.dev, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs, stamp: stampOf(s),
    }
  } catch (error) {
    // Only "nothing there" is nothing there; a path too long or not readable is said as such.
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new PathError(`The path cannot be looked at (${code}).`)
    stat = undefined
  }
  if (stat?.kind === 'link') throw new PathError('The path is a symbolic link; name the file itself.')
  return { path, device, stat, real: folder.real && folder.real + posix.basename(path) }
}

/** A folder path on a device (device, production and project roots): cleaned, with its device. Throws PathError. */
export function dirOnDevice<D extends DeviceLike>(devices: readonly D[], value: string): { path: string; device: D } {
  const path = cleanDir(value)
  const device = deviceFor(devices, path)
  if (!device) throw new PathError('The path does not lie on any device.')
  return { path, device }
}
