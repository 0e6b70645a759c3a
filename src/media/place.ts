// Naming files in an open proxy folder without ever replacing one (docs/media.md, "Remaking
// proxies"): what media/proxy.ts does with a finished proxy, media/pictures.ts with its
// pictures, and the proxy-name task with a proxy of the old name. Every call is relative to the
// open folder, so a folder swapped for a link meanwhile receives nothing.
//
// A hard link to the new name fails when the name is taken (the old name is then removed). On
// file systems without hard links (FAT, some SMB mounts) a rename that refuses a taken name is
// used where the system has one, else "check, then rename", which leaves a moment in which a
// file made by someone else could be replaced.
import { E, O, cName, close, linkat, openat, renameNoReplace, renameat, unlinkat } from '../storage/dirfd.ts'

/** Errors of a file system that cannot make a second name for a file (FAT, some SMB mounts). */
const NO_LINKS = new Set(
  [E.EPERM, E.ENOTSUP, E.EOPNOTSUPP, E.ENOSYS, E.EMLINK].filter((n) => n !== undefined).map((n) => -n),
)

/** Whether anything (a file, a folder, a link) has the name `name` in the open folder. */
export function takenIn(folder: number, name: string): boolean {
  const fd = openat(folder, cName(name), O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
  if (fd >= 0) close(fd)
  return fd >= 0 || fd !== -E.ENOENT
}

/**
 * Gives the file `from` of the open folder the name `to` there, unless `to` is taken: 0, or
 * -errno (-EEXIST when taken). A link first (the file then has both names for a moment, and
 * `from` goes), as a finished proxy is put in place.
 */
export function linkIntoPlace(folder: number, from: string, to: string): number {
  const source = cName(from)
  const target = cName(to)
  const linked = linkat(folder, source, folder, target)
  if (linked === 0) {
    unlinkat(folder, source, 0)
    return 0
  }
  return NO_LINKS.has(linked) ? renameWithoutLink(folder, source, target, to) : linked
}

/**
 * Renames `from` to `to` in the open folder unless `to` is taken: 0, or -errno (-EEXIST when
 * taken). A rename that refuses a taken name first (one step: a reader never sees both names),
 * then a link (a folder cannot have one), then "check, then rename" (the header).
 */
export function renameIntoPlace(folder: number, from: string, to: string): number {
  const source = cName(from)
  const target = cName(to)
  const renamed = renameNoReplace(folder, source, folder, target)
  if (renamed === 0 || renamed === -E.EEXIST) return renamed
  const linked = linkat(folder, source, folder, target)
  if (linked === 0) {
    unlinkat(folder, source, 0)
    return 0
  }
  if (linked === -E.EEXIST) return linked
  return takenIn(folder, to) ? -E.EEXIST : renameCall(folder, source, target)
}

/** Without a hard link: the rename that refuses a taken name, else check, then rename. */
function renameWithoutLink(folder: number, source: Buffer, target: Buffer, to: string): number {
  const done = renameNoReplace(folder, source, folder, target)
  if (done === 0 || done === -E.EEXIST) return done
  return takenIn(folder, to) ? -E.EEXIST : renameCall(folder, source, target)
}

/** The one call here that would replace a taken name: made only after the check above found it free. */
const renameCall = (folder: number, source: Buffer, target: Buffer) => renameat(folder, source, folder, target)
