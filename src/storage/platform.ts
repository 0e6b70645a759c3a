// Where Reelhouse may work on files, decided once from the platform and the processor. Every
// change on disk (copy, delete, import, scan, the folders a production or project gets) works
// through open folders, never by path name alone: on 64-bit Linux and macOS through folder
// descriptors (dirfd.ts), on 64-bit Windows through folder handles (windows/nt.ts, behind the
// same calls: windows/calls.ts). Anywhere else every file operation is refused before it
// touches anything, with a message that names the platform, while the catalogue and the API go
// on working. The decision is a pure function of (platform, arch), so that it can be tested
// on Linux.

/** Why file work is refused on `platform` and `arch` (process.platform, process.arch), or undefined where it is done. */
export function fileWorkRefusal(platform: string, arch: string): string | undefined {
  const where = `${platformName(platform)} (${platform} ${arch})`
  if (platform === 'win32')
    return arch === 'x64'
      ? undefined
      : `File operations are not available on ${where}: the folder handle calls are written for 64-bit x86 Windows only. The catalogue and the API work.`
  if (platform !== 'linux' && platform !== 'darwin')
    return `File operations are not available on ${where}: Reelhouse works on files only through open folders, written for Linux, macOS and Windows. The catalogue and the API work.`
  if (arch !== 'x64' && arch !== 'arm64')
    return `File operations are not available on ${where}: the folder descriptor calls are written for 64-bit x86 and ARM processors only. The catalogue and the API work.`
  return undefined
}

const platformName = (platform: string) => ({ win32: 'Windows', darwin: 'macOS', linux: 'Linux' })[platform] ?? platform

/**
 * A file operation refused on this platform. The API answers it 501 `not_implemented` with its
 * message (http/failures.ts); a task that meets it fails with the message.
 */
export class FileWorkUnavailable extends Error {
  readonly code = 'ENOSYS'
}

/** The refusal on the platform this process runs on, or undefined. */
export const REFUSAL = fileWorkRefusal(process.platform, process.arch)

/** Throws FileWorkUnavailable where file work is refused; called before a file operation touches anything. */
export function requireFileWork(): void {
  if (REFUSAL) throw new FileWorkUnavailable(REFUSAL)
}
