// Whether a Windows path lies on a network share: a UNC path (\\nas\media\), or a drive letter
// mapped to a share (GetDriveTypeW: DRIVE_REMOTE). The watcher polls such devices: change
// notifications over SMB cover only part of what other machines do there, and overflow silently.
import { dlopen, FFIType, ptr } from 'bun:ffi'

const DRIVE_REMOTE = 4
let getDriveType: ((root: ReturnType<typeof ptr>) => number) | undefined

/** True for a UNC path and for a drive letter Windows reports as remote; false off Windows. */
export function onNetworkShare(path: string, platform: string = process.platform): boolean {
  if (platform !== 'win32') return false
  if (/^[\\/]{2}[^\\/]/.test(path)) return true
  const drive = /^([A-Za-z]):[\\/]/.exec(path)?.[1]
  if (!drive) return false
  try {
    getDriveType ??= dlopen('kernel32.dll', { GetDriveTypeW: { args: [FFIType.ptr], returns: FFIType.u32 } }).symbols
      .GetDriveTypeW
    return getDriveType(ptr(Buffer.from(`${drive}:\\\0`, 'utf16le'))) === DRIVE_REMOTE
  } catch {
    return false
  }
}
