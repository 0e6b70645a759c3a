// One file-system error in words, for a task's error and its log: what the work met, said so that
// a NAS owner knows what to look at, with the system's code for whoever searches it; and the
// error of work stopped on purpose, which every copy, move and removal throws alike.

/** Work stopped because its signal was aborted; the message is the signal's reason. */
export class CancelledError extends Error {
  constructor(reason = 'cancelled') {
    super(reason)
  }
}

/** A file system error in words a user can act on. */
export function describe(error: unknown): string {
  const e = error as NodeJS.ErrnoException
  const words: Record<string, string> = {
    ENOENT: 'a file or folder disappeared during the work',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'the target is on a read-only file system',
    ENOSPC: 'no space left on the device',
    EEXIST: 'a file that should be new already exists',
    EIO: 'input/output error on the disk',
    ENOTDIR: 'a folder was replaced by a symbolic link or a file during the work',
    ELOOP: 'a file or folder was replaced by a symbolic link during the work',
    ECHANGED: 'a folder was replaced by another one during the work',
    EXDEV: 'another file system is mounted inside the folder',
    ENOSYS: 'not supported on this system',
    EHASH: 'the copy read back does not hold the bytes read from the source (their xxHash64 differs)',
  }
  if (e?.code && words[e.code]) return `${words[e.code]} (${e.path ?? e.message})`
  return e?.message ?? String(error)
}
