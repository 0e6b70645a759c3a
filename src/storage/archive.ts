// One file copied to another device and checked, for archiving and restoring an asset
// (modules/archive): the bytes are hashed as they are read and read back once written
// (verified.ts), into a hidden temporary name in the target folder, then given their final name
// with a link that fails when the name is taken, so nothing is ever overwritten: on an LTFS tape
// a file once written is never rewritten, and on any device another file already at the path
// belongs to someone else. The folders on the way are made inside the device root, with no
// symbolic link between the root and the target.
import { randomBytes } from 'node:crypto'
import { closeSync, constants, fstatSync, fsyncSync, linkSync, openSync, unlinkSync } from 'node:fs'
import type { HashedFile } from './hash.ts'
import { PathError, aliasProblem, makeDirInside, parentFolder } from './paths.ts'
import { type CopyOptions, copyHashed, readBack, readBackProblem } from './verified.ts'

/** The prefix of the hidden name a copy is written under before it gets its own. */
export const ARCHIVE_TEMP_PREFIX = '.reelhouse-archive-'

export type VerifiedCopy = HashedFile & { path: string; dev: number; ino: number; stamp: number }

/**
 * Copies the open file `source` (a descriptor, read from its start) to `target` on the device at
 * `devicePath`, checked by read-back; fails with EEXIST when `target` exists (before or after the
 * copy), leaving it as it is. The temporary file is removed on every failure.
 */
export async function copyVerifiedTo(
  source: number,
  devicePath: string,
  target: string,
  options: CopyOptions = {},
): Promise<VerifiedCopy> {
  const folder = parentFolder(target)
  makeDirInside(devicePath, folder)
  const alias = aliasProblem(devicePath, folder)
  if (alias) throw new PathError(`the target folder: ${alias}`)
  const temp = folder + ARCHIVE_TEMP_PREFIX + randomBytes(6).toString('hex')
  const out = openSync(temp, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
  try {
    const read = await copyHashed(source, out, options)
    const size = fstatSync(source).size
    if (read.size !== size) throw new Error(`the source holds ${size} bytes, ${read.size} were read`)
    fsyncSync(out)
    const problem = readBackProblem(read, await readBack(out, options.signal))
    if (problem) throw new Error(problem)
    // link() never replaces: a file that took the name meanwhile is left and the copy fails.
    linkSync(temp, target)
    const s = fstatSync(out)
    return { ...read, path: target, dev: s.dev, ino: s.ino, stamp: s.birthtimeMs > 0 ? s.birthtimeMs : s.mtimeMs }
  } finally {
    closeSync(out)
    try {
      unlinkSync(temp)
    } catch {
      // already gone
    }
  }
}
