// One file copied to another device and checked, for archiving and restoring an asset
// (modules/archive): the bytes are hashed as they are read and read back once written
// (verified.ts), into a hidden temporary name in the target folder, then given their final name
// with a link that fails when the name is taken, so nothing is ever overwritten: on an LTFS tape
// a file once written is never rewritten, and on any device another file already at the path
// belongs to someone else. The folders on the way are made inside the device root, with no
// symbolic link between the root and the target.
//
// Resuming: a task that died part way (a crash, a restart) runs again from its start. What it
// left is recognised, never taken on trust:
// - its temporary files carry the task's tag (`.reelhouse-archive-<tag>-…`) and are removed
//   before the copy starts again;
// - a file already at the target that holds exactly the source's bytes (same size, same xxh64,
//   both read here) is the copy the earlier run linked before it died: it is taken as the copy
//   (`adopted`), not written again, which on a tape would be a rewrite. Any other file there is
//   someone else's, and the copy fails with EEXIST.
//
// On the disk: a copy whose source is then removed on its strength (an archive with purge) is
// `durable`: written back while it is made, fsynced before it is read back, and its name and the
// folders made for it synced once it is linked, so that no crash after the source's removal can
// find the copy short. Any other copy (an archive that leaves the file online, a restore, whose
// archive copy stays) is read back from what was written and named without waiting for the disk,
// as a project copy is (docs/projects.md): the system writes it back in its own time (Linux: within
// 30 s), and until then a power cut can leave the copy short while the catalogue names it; its
// source is still there, and `verify` (the asset's `technical.hashes.xxh64`) finds it. Waiting
// for the disk there costs more than the rest of the copy: 1 GiB archived in 0.76-0.91 s
// durably, 0.49-0.61 s without, against 0.52-0.64 s for cp and xxhsum by hand (bench/verified.ts,
// docs/benchmarks.md "Verified copies against cp + xxhsum"). Measured and left: starting that
// write-back at once with an fsync in the background, not awaited. The archive's next step, its
// MHL manifest's own fsync, then waited behind it for the whole file (ext4 commits its journal in
// order): 0.97-1.18 s.
import { randomBytes } from 'node:crypto'
import { closeSync, constants, fstatSync, fsyncSync, linkSync, openSync, readdirSync, unlinkSync } from 'node:fs'
import { type HashedFile, hashFile } from './hash.ts'
import { PathError, aliasProblem, makeDirInside, parentFolder, syncFolder } from './paths.ts'
import { type CopyOptions, copyHashed, readBack, readBackProblem } from './verified.ts'

/** The prefix of the hidden name a copy is written under before it gets its own. */
export const ARCHIVE_TEMP_PREFIX = '.reelhouse-archive-'

export type VerifiedCopy = HashedFile & {
  path: string
  dev: number
  ino: number
  stamp: number
  /** The file was already there with the source's bytes (a resumed run, a restore of a file that is online). */
  adopted: boolean
}

export type ArchiveCopyOptions = CopyOptions & {
  /** Names this run's temporary files (the task's id): those a dead run with the same tag left are removed first. */
  tag?: string
  /** Called with the temporary file's path once the copy is written (and, durable, synced), before its read-back (tests: a byte changed there must fail the copy). */
  onWritten?: (temp: string) => void
}

/**
 * Copies the open file `source` (a descriptor, read from its start) to `target` on the device at
 * `devicePath`, checked by read-back. A file already at `target` with the source's bytes is
 * adopted; any other one fails the copy with EEXIST (before or after the copy) and is left as it
 * is. The temporary file is removed on every failure. `durable`: the copy and its name are on the
 * disk when this returns (see the top of this file).
 */
export async function copyVerifiedTo(
  source: number,
  devicePath: string,
  target: string,
  options: ArchiveCopyOptions = {},
): Promise<VerifiedCopy> {
  const folder = parentFolder(target)
  makeDirInside(devicePath, folder)
  const alias = aliasProblem(devicePath, folder)
  if (alias) throw new PathError(`the target folder: ${alias}`)
  const tag = options.tag ? `${options.tag.replace(/[^A-Za-z0-9]/g, '')}-` : ''
  if (tag) removeStaleTemps(folder, ARCHIVE_TEMP_PREFIX + tag)

  const durable = options.durable === true
  const adopted = await sameFileAt(source, target, durable, options.signal)
  if (adopted) {
    // A purge may now rest on a copy an earlier archive made without waiting for the disk.
    if (durable) for (const made of foldersUpTo(devicePath, folder)) syncFolder(made)
    return adopted
  }

  const temp = folder + ARCHIVE_TEMP_PREFIX + tag + randomBytes(6).toString('hex')
  const out = openSync(temp, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
  try {
    // Durable: written back while it is made (verified.ts), so the fsync below has little left to do.
    const read = await copyHashed(source, out, { ...options, durable })
    const size = fstatSync(source).size
    if (read.size !== size) throw new Error(`the source holds ${size} bytes, ${read.size} were read`)
    if (durable) fsyncSync(out)
    options.onWritten?.(temp)
    const problem = readBackProblem(read, await readBack(out, options.signal))
    if (problem) throw new Error(problem)
    // link() never replaces: a file that took the name meanwhile is left and the copy fails.
    linkSync(temp, target)
    if (durable) for (const made of foldersUpTo(devicePath, folder)) syncFolder(made)
    const s = fstatSync(out)
    return {
      ...read,
      path: target,
      dev: s.dev,
      ino: s.ino,
      stamp: s.birthtimeMs > 0 ? s.birthtimeMs : s.mtimeMs,
      adopted: false,
    }
  } finally {
    closeSync(out)
    try {
      unlinkSync(temp)
    } catch {
      // already gone
    }
  }
}

/** `folder` and the folders above it up to the device folder `root` (whose entries a new name and makeDirInside change). */
function foldersUpTo(root: string, folder: string): string[] {
  const folders = [folder]
  for (let up = parentFolder(folder); up && up.length >= root.length; up = parentFolder(up)) folders.push(up)
  return folders
}

/**
 * The file at `target` as the copy when it holds the open `source`'s bytes (both hashed here),
 * fsynced when `durable`; undefined when nothing is there; EEXIST when something else is.
 */
async function sameFileAt(
  source: number,
  target: string,
  durable: boolean,
  signal?: AbortSignal,
): Promise<VerifiedCopy | undefined> {
  let fd: number
  try {
    fd = openSync(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw exists(target)
  }
  try {
    const s = fstatSync(fd)
    if (!s.isFile() || s.size !== fstatSync(source).size) throw exists(target)
    const [there, wanted] = [await readBack(fd, signal), await hashFile(source, { signal })]
    if (readBackProblem(wanted, there)) throw exists(target)
    if (durable) flushReadOnly(fd)
    return {
      ...there,
      path: target,
      dev: s.dev,
      ino: s.ino,
      stamp: s.birthtimeMs > 0 ? s.birthtimeMs : s.mtimeMs,
      adopted: true,
    }
  } finally {
    closeSync(fd)
  }
}

/**
 * fsync of a file opened to read: Linux and macOS flush it; Windows flushes only a handle opened
 * to write, and refuses this one (EPERM), so there the file is as durable as the system made it.
 */
function flushReadOnly(fd: number) {
  try {
    fsyncSync(fd)
  } catch (error) {
    if (process.platform !== 'win32') throw error
  }
}

const exists = (path: string) =>
  Object.assign(new Error(`${path} already exists`), { code: 'EEXIST', path }) as NodeJS.ErrnoException

/** Removes the regular files of `folder` whose names start with `prefix` (a dead run's temporaries). */
function removeStaleTemps(folder: string, prefix: string) {
  let names: string[]
  try {
    names = readdirSync(folder)
  } catch {
    return
  }
  for (const name of names)
    if (name.startsWith(prefix))
      try {
        unlinkSync(folder + name)
      } catch {
        // a folder or already gone: not ours to chase
      }
}

/**
 * Extensions of files that describe a clip rather than hold it: camera and DIT metadata, subtitles
 * and colour decisions. Lower case.
 */
const SIDECAR_EXTENSIONS = new Set([
  'xml',
  'xmp',
  'srt',
  'vtt',
  'cdl',
  'cc',
  'ccc',
  'cube',
  'ale',
  'bim',
  'cpf',
  'thm',
  'txt',
  'json',
  'rmd',
  'sidecar',
])

/**
 * The sidecars of the clip named `essence` among `names` (the names of its folder): the files
 * that describe it, archived and restored with it. A sidecar is named after the clip's base
 * name and has a sidecar extension: `A001C003.xml`, `A001C003.mov.xmp` (the clip's whole name
 * first), and Sony's and XDCAM's non-real-time metadata `C0001M01.XML` (the base name, `M` and
 * two digits). Names compare case-insensitively: cards are FAT and exFAT.
 */
export function sidecarNames(essence: string, names: readonly string[]): string[] {
  const whole = essence.toLowerCase()
  const dot = whole.lastIndexOf('.')
  const stem = dot > 0 ? whole.slice(0, dot) : whole
  return names.filter((name) => {
    const lower = name.toLowerCase()
    if (lower === whole) return false
    const ext = lower.slice(lower.lastIndexOf('.') + 1)
    if (!SIDECAR_EXTENSIONS.has(ext) || lower.lastIndexOf('.') <= 0) return false
    const base = lower.slice(0, lower.lastIndexOf('.'))
    return base === stem || base === whole || (ext === 'xml' && new RegExp(`^${escape(stem)}m\\d\\d$`).test(base))
  })
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
