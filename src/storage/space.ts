// Whether a device's folder is there, and the space of the file system it lies on (statfs), for
// the device status. A network mount that stopped answering can hold a stat for minutes: each
// look is bounded, and a folder that does not answer in time is reported as not there.
import { stat, statfs } from 'node:fs/promises'
import { describe } from './errors.ts'
import { windowsSession } from '../util/winsession.ts'

export type FolderSpace = { online: true; total: number; free: number } | { online: false; reason: string }

/** How long a look at a folder may take before it counts as not there. */
export const LOOK_TIMEOUT_MS = 2000

/**
 * Whether `path` is a folder that can be read, and its file system's size and the space free for
 * the service (statfs: blocks available to an unprivileged writer, as df shows them).
 */
export async function folderSpace(path: string, timeoutMs = LOOK_TIMEOUT_MS): Promise<FolderSpace> {
  let timer: Timer | undefined
  const timeout = new Promise<FolderSpace>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          online: false,
          reason: `the folder did not answer within ${timeoutMs / 1000} s (a network mount that is down?)`,
        }),
      timeoutMs,
    )
  })
  const look = (async (): Promise<FolderSpace> => {
    try {
      const s = await stat(path)
      if (!s.isDirectory()) return { online: false, reason: 'the path is not a folder' }
      const fs = await statfs(path)
      return { online: true, total: fs.blocks * fs.bsize, free: fs.bavail * fs.bsize }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      const reason =
        code === 'ENOENT'
          ? await missingReason(path)
          : code === 'EACCES' || code === 'EPERM'
            ? 'the service may not read the folder'
            : code === 'ENOTDIR'
              ? 'a part of the path is not a folder'
              : describe(error)
      return { online: false, reason }
    }
  })()
  try {
    return await Promise.race([look, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Why a folder that is not there is missing. On Windows a path on a drive letter that is not there
 * at all says so, and under a service (session 0) why that is likely: a drive letter mapped to a
 * network share in a user's logon does not exist for services, which must be given the share's
 * UNC path.
 */
async function missingReason(path: string): Promise<string> {
  if (process.platform !== 'win32') return missingText(path, { driveThere: true, service: false })
  const drive = /^([A-Za-z]):[\\/]/.exec(path)?.[1]
  const driveThere =
    !drive ||
    (await stat(`${drive}:\\`).then(
      () => true,
      () => false,
    ))
  return missingText(path, { driveThere, service: windowsSession() === 0 })
}

/** The reason for a missing folder at `path`, given whether its drive letter (Windows) is there and whether this runs as a service. */
export function missingText(path: string, { driveThere, service }: { driveThere: boolean; service: boolean }): string {
  const drive = /^([A-Za-z]):[\\/]/.exec(path)?.[1]?.toUpperCase()
  if (!drive || driveThere) return 'the folder is missing (a disk or share not mounted?)'
  if (service)
    return `the drive ${drive}: is not there: a Windows service does not see drive letters mapped in a user's logon (net use, Map network drive); give the device the share's UNC path (\\\\server\\share\\...) instead`
  return `the drive ${drive}: is not there (a disk not connected, or a network drive not mapped?)`
}
