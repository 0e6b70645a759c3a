// Whether a device's folder is there, and the space of the file system it lies on (statfs), for
// the device status. A network mount that stopped answering can hold a stat for minutes: each
// look is bounded, and a folder that does not answer in time is reported as not there.
import { stat, statfs } from 'node:fs/promises'
import { describe } from './errors.ts'

export type FolderSpace =
  | { online: true; total: number; free: number }
  | { online: false; reason: string }

/** How long a look at a folder may take before it counts as not there. */
export const LOOK_TIMEOUT_MS = 2000

/**
 * Whether `path` is a folder that can be read, and its file system's size and the space free for
 * the service (statfs: blocks available to an unprivileged writer, as df shows them).
 */
export async function folderSpace(path: string, timeoutMs = LOOK_TIMEOUT_MS): Promise<FolderSpace> {
  let timer: Timer | undefined
  const timeout = new Promise<FolderSpace>((resolve) => {
    timer = setTimeout(() => resolve({ online: false, reason: `the folder did not answer within ${timeoutMs / 1000} s (a network mount that is down?)` }), timeoutMs)
  })
  const look = (async (): Promise<FolderSpace> => {
    try {
      const s = await stat(path)
      if (!s.isDirectory()) return { online: false, reason: 'the path is not a folder' }
      const fs = await statfs(path)
      return { online: true, total: fs.blocks * fs.bsize, free: fs.bavail * fs.bsize }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      const reason = code === 'ENOENT' ? 'the folder is missing (a disk or share not mounted?)'
        : code === 'EACCES' || code === 'EPERM' ? 'the service may not read the folder'
          : code === 'ENOTDIR' ? 'a part of the path is not a folder' : describe(error)
      return { online: false, reason }
    }
  })()
  try {
    return await Promise.race([look, timeout])
  } finally {
    clearTimeout(timer)
  }
}
