// Where paths lie: the device a path is on, containment, and symlink checks. Every file
// operation goes through here first (docs/api.md, Resources; docs/projects.md).
//
// How a path is written and compared is the platform's: each has its rules below (`RULES`), and
// the functions of this module use those of the platform the service runs on. The rules of every
// platform can be used anywhere (the tests of the Windows and macOS rules run on Linux).
// - Linux: absolute paths start with `/`; names compare as written (byte for byte).
// - macOS: written as on Linux, at most 1,024 characters (PATH_MAX there); names compare without
//   regard to case or Unicode normalization, as APFS and HFS+ do by default (case-insensitive,
//   case-preserving): `/Volumes/Media/Show/` lies on the device `/volumes/media/`. A volume
//   formatted case-sensitive is rare and is then compared more loosely than its disk does,
//   which can only make two different folders look like one: a refusal, never a way out.
// - Windows: `C:\folder\` or `\\server\share\folder\` (`/` is read as `\`), the drive letter in
//   upper case, names compared without regard to case (by each character's upper case, as NTFS
//   does). A name Windows would change on its way to the disk, or a path that would mean
//   something else than it says, is refused rather than repaired (see `cleanWin32`).
// Paths keep the spelling the user gave (cleaned); only comparisons fold case.
import { closeSync, constants, fsyncSync, lstatSync, mkdirSync, openSync, realpathSync } from 'node:fs'
import { posix, win32 } from 'node:path'
import { longNames } from './windows/longnames.ts'
import { requireFileWork } from './platform.ts'

export class PathError extends Error {}

type DeviceLike = { id: number; path: string }

/** How one platform writes and compares paths. */
export type PathRules = {
  readonly platform: 'linux' | 'darwin' | 'win32'
  /** The separator of cleaned paths; a folder path ends with exactly one. */
  readonly sep: '/' | '\\'
  /** The longest path accepted, in characters. */
  readonly maxLength: number
  /** Node's path functions of the platform (dirname, basename, join). */
  readonly path: typeof posix
  /** A name of Reelhouse's own work folders somewhere in a path (compared as the platform compares names). */
  readonly workFolder: RegExp
  /** Checks an absolute path from a request and resolves `.` and `..` in it. Throws PathError. */
  cleanPath(value: string): string
  /** A folder path: cleaned, with exactly one final separator. */
  cleanDir(value: string): string
  /**
   * What follows the folder `folder` (cleaned, final separator) in `path`, in `path`'s own
   * spelling: '' for the folder itself (written with its separator), undefined when `path` does
   * not lie there.
   */
  below(folder: string, path: string): string | undefined
  /** True when `child` lies inside the folder `parent` (both cleaned, the folder with its final separator). */
  isInside(parent: string, child: string): boolean
  /** The two cleaned paths name the same place (written alike but for the case where that does not count). */
  samePath(a: string, b: string): boolean
  /** The device with the longest path that is a prefix of `path` (a folder path or a file path). */
  deviceFor<D extends DeviceLike>(devices: readonly D[], path: string): D | undefined
}

type Spec = {
  platform: PathRules['platform']
  sep: PathRules['sep']
  maxLength: number
  path: typeof posix
  workFolder: RegExp
  /** The platform's own checks and normalization, after the NUL and length checks. */
  clean(value: string): string
  /** The form a name is compared in; undefined: names compare as written. */
  fold?: (name: string) => string
}

function makeRules(spec: Spec): PathRules {
  const { sep, fold } = spec
  function cleanPath(value: string): string {
    if (value.includes('\0')) throw new PathError('The path contains a NUL character.')
    if (value.length > spec.maxLength) throw new PathError(`The path is longer than ${spec.maxLength} characters.`)
    return spec.clean(value)
  }
  // Without folding, a prefix of the text, exactly as Reelhouse always compared on Linux. With
  // it, name by name: a folded name may be longer or shorter than the name (NFD, some upper
  // cases), so the rest is cut from `path` by names, never by the folder's length.
  const below = !fold
    ? (folder: string, path: string) => (path.startsWith(folder) ? path.slice(folder.length) : undefined)
    : (folder: string, path: string) => {
        const names = folder.split(sep)
        if (names.at(-1) === '') names.pop()
        const parts = path.split(sep)
        if (parts.length <= names.length) return undefined
        for (let i = 0; i < names.length; i++)
          if (names[i] !== parts[i] && fold(names[i]!) !== fold(parts[i]!)) return undefined
        return parts.slice(names.length).join(sep)
      }
  // Whether `path` lies in `folder` or is it: without folding, the prefix test alone (no text is
  // cut: the scans ask it for every file they walk).
  const within = !fold
    ? (folder: string, path: string) => path.startsWith(folder)
    : (folder: string, path: string) => below(folder, path) !== undefined
  const samePath = !fold
    ? (a: string, b: string) => a === b
    : (a: string, b: string) => {
        if (a === b) return true
        const x = a.split(sep)
        const y = b.split(sep)
        return x.length === y.length && x.every((name, i) => name === y[i] || fold(name) === fold(y[i]!))
      }
  return {
    platform: spec.platform,
    sep,
    maxLength: spec.maxLength,
    path: spec.path,
    workFolder: spec.workFolder,
    cleanPath,
    cleanDir(value) {
      const p = cleanPath(value)
      return p.endsWith(sep) ? p : p + sep
    },
    below,
    samePath,
    isInside(parent, child) {
      return !samePath(child, parent) && within(parent, child)
    },
    deviceFor(devices, path) {
      let best: (typeof devices)[number] | undefined
      for (const d of devices) {
        const inside = within(d.path, path) || samePath(path + sep, d.path)
        if (inside && (!best || d.path.length > best.path.length)) best = d
      }
      return best
    },
  }
}

/** Linux and macOS: absolute from `/`, `.` and `..` resolved (`/..` is `/`), the final slash kept. */
function cleanPosix(value: string): string {
  if (!value.startsWith('/')) throw new PathError('The path must be absolute.')
  const normal = posix.normalize(value)
  return value.endsWith('/') && !normal.endsWith('/') ? normal + '/' : normal
}

/** Characters no Windows name may hold: `<>:"|?*` (a colon after the drive names a data stream) and controls. */
const WIN32_BAD_CHARACTER = /[<>:"|?*\x00-\x1f]/
/** Names Windows gives to devices in every folder, also with an extension (`NUL.txt`). */
const WIN32_DEVICE_NAME = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i
/** The longest path through the wide (Unicode) calls of Windows, in UTF-16 units. */
const WIN32_MAX_PATH = 32767

/**
 * Windows: `C:\...` or `\\server\share\...`, `/` read as `\`. Refused: `C:folder` (relative to
 * the drive's current folder), `\folder` (on the current drive, whichever that is), the device
 * namespaces `\\?\` and `\\.\` (they skip the checks the system makes on names, and reach
 * devices), a name with a character Windows does not allow, a name ending in a dot or a space
 * (Windows drops those, so the name would reach another file than written), a device name
 * (`CON`, `NUL`, `COM1`...). `..` stops at the drive's root, as Windows itself resolves it, but
 * is refused where it would climb above a share (`\\nas\media\..\other\` reads as another share).
 */
function cleanWin32(value: string): string {
  const v = value.replace(/\//g, '\\')
  if (/^\\\\[?.]\\/.test(v) || v.startsWith('\\??\\'))
    throw new PathError(
      'Device paths (\\\\?\\ and \\\\.\\) are not accepted: give the path as C:\\folder\\ or \\\\server\\share\\folder\\.',
    )
  let root: string
  let rest: string
  let share = false
  if (/^[A-Za-z]:\\/.test(v)) {
    root = `${v[0]!.toUpperCase()}:\\`
    rest = v.slice(3)
  } else if (/^[A-Za-z]:/.test(v)) {
    throw new PathError(
      `A path like ${v[0]!.toUpperCase()}:folder is relative to the current folder of its drive: give it from the drive's root (${v[0]!.toUpperCase()}:\\folder\\).`,
    )
  } else if (v.startsWith('\\\\')) {
    const [server = '', name = '', ...more] = v.slice(2).split('\\')
    if (!server || !name) throw new PathError('A UNC path names a server and a share: \\\\server\\share\\folder\\.')
    for (const part of [server, name]) checkWin32Name(part, 'server or share')
    root = `\\\\${server}\\${name}\\`
    rest = more.join('\\')
    share = true
  } else if (v.startsWith('\\')) {
    throw new PathError(
      'A path starting with \\ or / lies on the current drive, whichever that is: give the drive (C:\\folder\\) or the share (\\\\server\\share\\folder\\).',
    )
  } else {
    throw new PathError('The path must be absolute: C:\\folder\\ or \\\\server\\share\\folder\\.')
  }
  const names: string[] = []
  for (const part of rest.split('\\')) {
    if (part === '' || part === '.') continue
    if (part === '..') {
      if (names.length) names.pop()
      else if (share) throw new PathError(`.. would climb above the share ${root}: a UNC path stays within its share.`)
      continue
    }
    checkWin32Name(part, 'name')
    names.push(part)
  }
  const folder = v.endsWith('\\') && names.length > 0
  return root + names.join('\\') + (folder ? '\\' : '')
}

function checkWin32Name(name: string, what: string) {
  // Quoted as JSON: a control character shows as its escape, not as nothing.
  const shown = JSON.stringify(name)
  if (name === '.' || name === '..') throw new PathError(`The ${what} ${shown} is not accepted.`)
  if (WIN32_BAD_CHARACTER.test(name))
    throw new PathError(
      `The ${what} ${shown} holds a character Windows does not allow in names (< > : " | ? * or a control character).`,
    )
  if (/[. ]$/.test(name))
    throw new PathError(
      `The ${what} ${shown} ends with a dot or a space, which Windows drops: it would name another file than written.`,
    )
  if (WIN32_DEVICE_NAME.test(name))
    throw new PathError(
      `${shown} is a device name on Windows (CON, PRN, AUX, NUL, COM0-9, LPT0-9), not a file or folder.`,
    )
}

/** NTFS compares names by the upper case of each UTF-16 unit (its upcase table): one for one, never longer. */
const upperEach = (name: string) => {
  let out = ''
  for (const c of name) {
    const u = c.toUpperCase()
    out += u.length === c.length ? u : c
  }
  return out
}

/** The rules of each platform. */
export const RULES: { readonly linux: PathRules; readonly darwin: PathRules; readonly win32: PathRules } = {
  linux: makeRules({
    platform: 'linux',
    sep: '/',
    maxLength: 4096,
    path: posix,
    workFolder: /(^|\/)\.reelhouse-/,
    clean: cleanPosix,
  }),
  darwin: makeRules({
    platform: 'darwin',
    sep: '/',
    maxLength: 1024,
    path: posix,
    workFolder: /(^|\/)\.reelhouse-/i,
    clean: cleanPosix,
    fold: (name) => name.normalize('NFD').toLowerCase(),
  }),
  win32: makeRules({
    platform: 'win32',
    sep: '\\',
    maxLength: WIN32_MAX_PATH,
    path: win32 as typeof posix,
    workFolder: /(^|[\\/])\.reelhouse-/i,
    clean: cleanWin32,
    fold: upperEach,
  }),
}

/** The rules of `platform` (a process.platform value): Linux's for every other Unix. */
export const rulesFor = (platform: string): PathRules =>
  platform === 'darwin' ? RULES.darwin : platform === 'win32' ? RULES.win32 : RULES.linux

/** The rules of the platform the service runs on, which the functions below use. */
const R = rulesFor(process.platform)

export const MAX_PATH = R.maxLength
/** The separator of paths on this platform. */
export const SEP = R.sep

/**
 * Checks an absolute path from a request and resolves `.` and `..` in it; on Windows its 8.3
 * short names too, as far as it exists (windows/longnames.ts).
 */
export const cleanPath = (value: string): string => longNames(R.cleanPath(value))

/** A folder path: cleaned, with exactly one final separator. */
export const cleanDir = (value: string): string => longNames(R.cleanDir(value))

/** The device with the longest path that is a prefix of `path` (a folder path or a file path). */
export const deviceFor = <D extends DeviceLike>(devices: readonly D[], path: string): D | undefined =>
  R.deviceFor(devices, path)

/** True when `child` lies inside the folder `parent` (both cleaned, folder ends with its separator). */
export const isInside = (parent: string, child: string): boolean => R.isInside(parent, child)

/** `path` below the folder `folder` in its own spelling ('' for the folder itself), or undefined. */
export const below = (folder: string, path: string): string | undefined => R.below(folder, path)

/** The two cleaned paths name the same place on this platform. */
export const samePath = (a: string, b: string): boolean => R.samePath(a, b)

/**
 * What follows the folder `folder` in `path`, which the caller knows lies there (deviceFor,
 * isInside), in `path`'s own spelling. Where names compare without case, the two may spell the
 * folder's part differently, even in another length (NFC and NFD on macOS): cutting `path` at
 * the folder's length would cut in the wrong place.
 */
export const restOf = (folder: string, path: string): string => R.below(folder, path) ?? path.slice(folder.length)

/** `path` with one final separator (a folder's form). */
const withSep = (path: string) => (path.endsWith(R.sep) ? path : path + R.sep)

// Relative paths below a device or a folder, as the file layer splits and joins them. A cleaned
// path is in the platform's spelling (C:\media\Show\a.mov on Windows), and the rest of it below a
// root is too; the layer's own walks join names with '/'. On Windows both separate names (a name
// cannot hold either); elsewhere only '/' does, a backslash being an ordinary character of a name.
// Nothing outside src/storage/ splits a device path with a literal '/' or with node:path's posix
// functions: these and the platform's rules (`pathOf`) do it.

/** What separates names in a relative path on this platform. */
const NAME_SEP = R.sep === '\\' ? /[\\/]/ : /\//

/** The names of a relative path as written, empty ones ('a//b', a final separator) too. */
export const splitRel = (rel: string): string[] => rel.split(NAME_SEP)

/** The names of a relative path, empty ones (a final separator) left out. */
export const relParts = (rel: string): string[] => rel.split(NAME_SEP).filter(Boolean)

/** The last name of a path (a final separator ignored): 'a.mov' of 'Show/a.mov', of 'C:\\Show\\a.mov'. */
export const baseName = (path: string): string => relParts(path).at(-1) ?? ''

/** A path without its last name and the separator before it ('' when it has one name only); a final separator is ignored. */
export function dirName(path: string): string {
  let end = path.length
  while (end > 0 && NAME_SEP.test(path[end - 1]!)) end--
  let at = end - 1
  while (at >= 0 && !NAME_SEP.test(path[at]!)) at--
  return at < 0 ? '' : path.slice(0, at)
}

/** Whether a path ends with a separator (either one on Windows). */
export const endsWithSep = (path: string): boolean => path.length > 0 && NAME_SEP.test(path[path.length - 1]!)

/** `path` in a folder's form, with a final separator (the platform's, where it has none). */
export const asFolder = (path: string): string => (endsWithSep(path) ? path : path + R.sep)

/** `folder` (with or without its final separator) and `rest` joined by one separator. */
export const joinBelow = (folder: string, rest: string): string => asFolder(folder) + rest

/** Node's path functions of the platform the service runs on (dirname, basename, join). */
export const pathOf = R.path
/** `path` with its final separators made one. */
const oneSep = (path: string) => {
  let end = path.length
  while (end > 0 && path[end - 1] === R.sep) end--
  return end === path.length ? path : path.slice(0, end) + R.sep
}

/**
 * Creates `dir` (and missing parents) inside `root`, refusing when an existing part of the way
 * resolves, through a symlink, to somewhere outside `root`.
 */
export function makeDirInside(root: string, dir: string): void {
  requireFileWork()
  const outside = outsideProblem(root, dir)
  if (outside) throw new PathError(outside)
  try {
    mkdirSync(dir, { recursive: true })
  } catch (error) {
    throw new PathError(`Cannot create ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`)
  }
}

/**
 * Syncs a folder's entries (a new name, a rename, a folder made in it) to the disk; where the
 * system refuses it for folders (Windows opens no folder so, NTFS journals its names itself),
 * the change still stands.
 */
export function syncFolder(folder: string) {
  try {
    const fd = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY)
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {}
}

/**
 * Why `dir` does not lie where its name says on the device at `root`: the deepest part of it
 * that exists resolves, through a symbolic link, outside the device. Throws PathError when the
 * device folder itself is missing (offline).
 */
function outsideProblem(root: string, dir: string): string | undefined {
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
      return R.below(withSep(realRoot), real + R.sep) === undefined
        ? `${existing} leads outside its device through a symbolic link.`
        : undefined
    } catch {
      const parent = R.path.dirname(existing.endsWith(R.sep) ? existing.slice(0, -1) : existing)
      if (parent === existing) return undefined
      existing = parent + R.sep
    }
  }
}

/**
 * Why the folder `dir` (a production's storage or proxy root, or a folder in one) cannot be
 * worked in, as every reader, writer and remover of it words it: it leads outside its device
 * through a symbolic link, or it is reached through one (it has two names). Undefined when the
 * way from the device root holds no link as far as it exists.
 */
export function rootProblem(devicePath: string, dir: string): string | undefined {
  return outsideProblem(devicePath, dir) ?? aliasProblem(devicePath, dir)
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
 * aliasProblem's answer, and when there is none, the folder's real path (final separator; links
 * in the device's own path resolved), or undefined when the device is offline.
 */
function resolveFolder(devicePath: string, path: string): { problem?: string; real?: string } {
  // The folder exists and its real path is the path as written: no link lies on the way, the
  // device's own path included (a prefix of it). One realpath where the walk below takes two.
  const folder = path.endsWith(R.sep) ? path.slice(0, -1) : path
  try {
    if (realpathSync(folder) === folder) return { real: oneSep(folder + R.sep) }
  } catch {
    // not there (yet): the walk below finds how far it exists
  }
  let realDevice: string
  try {
    realDevice = withSep(realpathSync(devicePath))
  } catch {
    return {} // an offline device: nothing on it can be reached through a link either
  }
  let existing = path.endsWith(R.sep) ? path.slice(0, -1) : path
  let rest = ''
  for (;;) {
    try {
      const real = realpathSync(existing)
      const actual = oneSep(real + R.sep + rest)
      const expected = oneSep(realDevice + (R.below(devicePath, path) ?? path.slice(devicePath.length)))
      // The link's target is not named: it may lie outside every device (docs/api.md, Permissions). Where
      // the system compares names without case, the real path may spell them as the disk does.
      return R.samePath(actual, expected)
        ? { real: actual }
        : { problem: `${existing} is reached through a symbolic link; use the real path.` }
    } catch {
      const parent = R.path.dirname(existing)
      if (parent === existing) return {}
      rest = R.path.basename(existing) + R.sep + rest
      existing = parent
    }
  }
}

/**
 * The path with every symbolic link resolved, as far as it exists; the part that does not exist
 * yet is appended as written. Ends with a separator when `path` does.
 */
export function realOf(path: string): string {
  const folder = path.endsWith(R.sep)
  let end = path.length
  while (end > 0 && path[end - 1] === R.sep) end--
  let existing = path.slice(0, end) || R.sep
  let rest = ''
  for (;;) {
    try {
      const real = realpathSync(existing)
      const joined = rest ? R.path.join(real, rest) : real
      return folder && !joined.endsWith(R.sep) ? joined + R.sep : joined
    } catch {
      const parent = R.path.dirname(existing)
      if (parent === existing) return path
      rest = rest ? R.path.join(R.path.basename(existing), rest) : R.path.basename(existing)
      existing = parent
    }
  }
}

/**
 * Names Reelhouse gives its own work folders; no path a user gives may use them. Compared as the
 * platform compares names: on macOS and Windows `.REELHOUSE-x` is the same name.
 */
export const WORK_FOLDER = R.workFolder

export function reservedProblem(path: string): string | undefined {
  return WORK_FOLDER.test(path)
    ? 'Names starting with .reelhouse- are reserved for the work folders of copies and deletes.'
    : undefined
}

/** What the disk says of a file path when it was checked (lstat); undefined when nothing is there. */
export type FileStat = {
  kind: 'file' | 'dir' | 'link' | 'other'
  dev: number
  ino: number
  size: number
  mtimeMs: number
  stamp: number
}

/**
 * What tells one file from the next one given the same inode: its birth time (ms, from statx),
 * which a rename keeps and a new file never shares; where the file system records none (0:
 * some network mounts), the modification time, which a rename keeps as well (a file edited in
 * place then reads as another file: an offline asset and a new import, never a wrong match).
 */
export const stampOf = (s: { birthtimeMs: number; mtimeMs: number }): number =>
  s.birthtimeMs > 0 ? s.birthtimeMs : s.mtimeMs

/** `real`: the path with the links in the device's own path resolved (none lie below it); undefined when the device is offline. */
export type FileOnDevice<D> = { path: string; device: D; stat?: FileStat; real?: string }

/**
 * The one gate for a single file's path (media assets, imports): cleaned, naming a file (not a
 * folder, not a device root), on a device, with no symbolic link between the device root and
 * the file's folder, and not itself a link. `stat` is what is there now, or undefined when
 * nothing is (a catalogue entry may name a file that is offline or archived). Throws PathError.
 * Tasks that act on the file open it again relative to descriptors (fs.ts openBeneath). It only
 * looks (realpath, lstat), so it runs where file work is refused too: a catalogue entry records
 * what is there.
 */
export function fileOnDevice<D extends DeviceLike>(devices: readonly D[], value: string): FileOnDevice<D> {
  const path = cleanPath(value)
  if (path.endsWith(R.sep)) throw new PathError('The path names a folder; a file is needed.')
  const device = deviceFor(devices, path)
  if (!device) throw new PathError('The path does not lie on any device.')
  if (R.samePath(path + R.sep, device.path))
    throw new PathError('The path names the root of a device; a file is needed.')
  const folder = resolveFolder(device.path, R.path.dirname(path) + R.sep)
  if (folder.problem) throw new PathError(folder.problem)
  const reserved = reservedProblem(path)
  if (reserved) throw new PathError(reserved)
  let stat: FileStat | undefined
  try {
    const s = lstatSync(path)
    stat = {
      kind: s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other',
      dev: s.dev,
      ino: s.ino,
      size: s.size,
      mtimeMs: s.mtimeMs,
      stamp: stampOf(s),
    }
  } catch (error) {
    // Only "nothing there" is nothing there; a path too long or not readable is said as such.
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new PathError(`The path cannot be looked at (${code}).`)
    stat = undefined
  }
  if (stat?.kind === 'link') throw new PathError('The path is a symbolic link; name the file itself.')
  return { path, device, stat, real: folder.real && folder.real + R.path.basename(path) }
}

/** A folder path on a device (device, production and project roots): cleaned, with its device. Throws PathError. */
export function dirOnDevice<D extends DeviceLike>(devices: readonly D[], value: string): { path: string; device: D } {
  const path = cleanDir(value)
  const device = deviceFor(devices, path)
  if (!device) throw new PathError('The path does not lie on any device.')
  return { path, device }
}

// ============================================================================================
// Joins and splits of device paths for the code outside src/storage/ (watcher, imports,
// productions, media assets). Pure; each takes the separator of the platform whose rules it
// follows (`PathRules['sep']`, this platform's by default), so that a test on Linux can run the
// Windows spelling too. Under '\' (Windows) both '/' and '\' separate names, as in `splitRel`.
// ============================================================================================

/** Whether the character `c` separates names under the rules whose separator is `sep`. */
const isSepUnder = (c: string | undefined, sep: PathRules['sep']): boolean => c === '/' || (sep === '\\' && c === '\\')

/** The index of the last separator in `path` at or before `from` (as `lastIndexOf` clamps it), -1 when there is none. */
export function lastSepIndex(path: string, from = path.length - 1, sep: PathRules['sep'] = R.sep): number {
  if (sep === '/') return path.lastIndexOf('/', from)
  for (let i = Math.min(Math.max(from, 0), path.length - 1); i >= 0; i--) if (isSepUnder(path[i], sep)) return i
  return -1
}

/** `path` without one final separator: a folder's path as a key ('/mnt/a/' → '/mnt/a', 'C:\a\' → 'C:\a'). */
export const trimSep = (path: string, sep: PathRules['sep'] = R.sep): string =>
  isSepUnder(path[path.length - 1], sep) ? path.slice(0, -1) : path

/** `path` in a folder's form: as it is when it ends with a separator, else with `sep` added. */
export const withFinalSep = (path: string, sep: PathRules['sep'] = R.sep): string =>
  isSepUnder(path[path.length - 1], sep) ? path : path + sep

/** A relative path joined with '/' (the file layer's walks) spelled with `sep`: as it is on Linux and macOS. */
export const platformRel = (rel: string, sep: PathRules['sep'] = R.sep): string =>
  sep === '/' ? rel : rel.replace(/\//g, sep)

/** The folder holding `path` (a file, or a folder with or without its final separator), ending with `sep`; '' when it has none. */
export function parentFolder(path: string, sep: PathRules['sep'] = R.sep): string {
  const bare = trimSep(path, sep)
  const at = lastSepIndex(bare, bare.length - 1, sep)
  return at < 0 ? '' : bare.slice(0, at) + sep
}

/** What follows the last separator of `path`, as written: '' for a folder path with its final separator. */
export const lastName = (path: string, sep: PathRules['sep'] = R.sep): string =>
  path.slice(lastSepIndex(path, path.length - 1, sep) + 1)

/** Whether `name` holds a separator (it is a path, not one name). */
export const hasSep = (name: string, sep: PathRules['sep'] = R.sep): boolean =>
  lastSepIndex(name, name.length - 1, sep) >= 0

/** The folder `names` below the folder `folder` (final separator or not), as a folder path ending with `sep`. */
export const folderBelow = (folder: string, names: readonly string[], sep: PathRules['sep'] = R.sep): string =>
  withFinalSep(folder, sep) + names.map((name) => name + sep).join('')

/** A regular expression's source matching one separator under these rules ('/', or a class of '\' and '/' for Windows). */
export const sepPattern = (sep: PathRules['sep'] = R.sep): string => (sep === '\\' ? '[\\\\/]' : '/')
// ============================ end of the joins and splits block ============================
