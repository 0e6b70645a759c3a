// A production's folders (its storage_root and proxy_root) as every read, write and delete beneath
// them reaches them: from the root of their device, one name at a time, never through a symbolic
// link. A root whose path holds a link (one put there after the root was checked, or a link that
// leads off the device) is refused with rootProblem's words, the same for a proxy played, a proxy
// removed and a proxy made; the link is never followed, so nothing outside the device is read or
// removed. The device's own path is opened as configured (it may be a link, as a mount point may).
import { AT_FDCWD, O, cName, openat } from './dirfd.ts'
import { descend } from './fs.ts'
import { PathError, asFolder, baseName, below, dirName, rootProblem, splitRel } from './paths.ts'

/**
 * The open folder `root` (a folder's path, on the device at `devicePath`), reached without
 * following a link; undefined when it, or a folder on the way, does not exist. Throws PathError
 * when a link or a file is on the way. The caller closes the descriptor.
 */
export function openRoot(devicePath: string, root: string): number | undefined {
  const device = asFolder(devicePath)
  const dir = asFolder(root)
  const rel = dir === device ? '' : below(device, dir)
  if (rel === undefined) throw new PathError(`${root} does not lie on the device ${devicePath}.`)
  const fd = openat(AT_FDCWD, cName(device), O.RDONLY | O.DIRECTORY | O.CLOEXEC)
  if (fd < 0) return undefined // the device is offline
  try {
    return descend(fd, rel)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'EMLINK')
      // The words of the check that refuses the same root before a proxy is made; a link swapped in
      // and out again since the walk leaves nothing for it to find, and is named for what it did.
      throw new PathError(
        rootProblem(device, root) ??
          `${root} is reached through a symbolic link or a file on the way; use the real path.`,
      )
    throw error
  }
}

/**
 * The open folder holding `path`, a file beneath `root`, and the file's name in it: `root` is
 * opened as openRoot does (PathError when it leads through a link), the folders below it without
 * following a link too. Undefined when `path` does not lie beneath `root`, names a folder, or a
 * folder on the way is missing or a link (the file then is not inside `root`). The caller closes
 * `parent`.
 */
export function openParentInside(
  devicePath: string,
  root: string,
  path: string,
): { parent: number; name: Buffer } | undefined {
  const dir = asFolder(root)
  const rel = below(dir, path)
  if (!rel || splitRel(rel).some((part) => part === '..' || part === '.' || part === '')) return undefined
  const rootFd = openRoot(devicePath, dir)
  if (rootFd === undefined) return undefined
  try {
    return { parent: descend(rootFd, dirName(rel)), name: cName(baseName(rel)) }
  } catch {
    return undefined // a folder below the root is missing or a link: the file is not inside it
  }
}

/** A production's proxy folder, open to make a proxy in (openRoot's; a missing folder is an error here). */
export function openProxyFolder(devicePath: string, proxyRoot: string): number {
  const fd = openRoot(devicePath, proxyRoot)
  if (fd === undefined) throw new PathError(`${proxyRoot} does not exist.`)
  return fd
}
