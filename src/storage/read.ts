// Reading a file that must lie inside a folder (a proxy inside its production's proxy_root),
// as the removals do it: the folders on the way are opened one name at a time from the root
// without following a link (fs.ts openBeneath), the file itself with O_NOFOLLOW, and it must be
// a regular file. What is read is then the open descriptor: a name swapped for a link or for
// another file after the check reaches nothing outside. The path is only split into names here;
// its containment is decided by the walk, not by comparing text.
import { type Stats, closeSync, fstatSync, read } from 'node:fs'
import { posix } from 'node:path'
import { O, cName, close, openat } from './dirfd.ts'
import { openBeneath } from './fs.ts'
import { below } from './paths.ts'
import { requireFileWork } from './platform.ts'

/** A regular file open for reading, with its fstat (size, mtime, identity) as it was opened. */
export type OpenFile = { fd: number; stat: Stats }

/**
 * Opens the regular file `path` found beneath `root` (an absolute folder path; the root itself
 * may be a link, as a device path may). Undefined when nothing is there, when a folder on the
 * way or the file is a link, when the path does not lie inside `root`, or when it is not a
 * regular file: nothing outside `root` is ever opened. The caller closes the descriptor
 * (fdStream does, when the stream ends).
 */
export function openFileInside(root: string, path: string): OpenFile | undefined {
  // Refused where folder descriptors are not written: a 501, not a 404 for a file that may be there.
  requireFileWork()
  const dir = root.endsWith('/') ? root : `${root}/`
  const rel = below(dir, path)
  if (!rel) return undefined
  if (rel.split('/').some((part) => part === '..' || part === '.' || part === '')) return undefined
  const name = posix.basename(rel)
  const folder = posix.dirname(rel)
  let parent: number
  try {
    parent = openBeneath(dir, folder === '.' ? '' : folder)
  } catch {
    return undefined // a folder on the way is missing, or a link
  }
  let fd = -1
  try {
    fd = openat(parent, cName(name), O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
    if (fd < 0) return undefined
    const stat = fstatSync(fd)
    if (!stat.isFile()) return undefined
    const opened = { fd, stat }
    fd = -1
    return opened
  } finally {
    if (fd >= 0) close(fd)
    close(parent)
  }
}

/** Bytes per read of a stream: a few reads per second of a proxy played, few calls for a download. */
const CHUNK = 256 * 1024

/**
 * The bytes `start` to `end` (inclusive) of the open file `fd` as a stream, read on the thread
 * pool a chunk at a time as the client takes them (never the whole file in memory). The stream
 * owns the descriptor: it is closed at the end, on an error, and when the client goes away.
 * A file that shrank meanwhile ends the stream early (the client sees a short body).
 */
export function fdStream(fd: number, start: number, end: number): ReadableStream<Uint8Array> {
  let position = start
  let closed = false
  /** A read is on the thread pool: the descriptor is closed after it, never under it (its number could be reused meanwhile). */
  let reading = false
  let cancelled = false
  const closeOnce = () => {
    if (closed) return
    closed = true
    closeSync(fd)
  }
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const want = Math.min(CHUNK, end + 1 - position)
      if (want <= 0) {
        closeOnce()
        controller.close()
        return
      }
      reading = true
      return new Promise<void>((resolve) => {
        const buffer = Buffer.allocUnsafe(want)
        read(fd, buffer, 0, want, position, (error, bytesRead) => {
          reading = false
          if (cancelled) closeOnce()
          else if (error) {
            closeOnce()
            controller.error(error)
          } else if (bytesRead === 0) {
            closeOnce()
            controller.close()
          } else {
            position += bytesRead
            controller.enqueue(bytesRead === want ? buffer : buffer.subarray(0, bytesRead))
          }
          resolve()
        })
      })
    },
    cancel() {
      cancelled = true
      if (!reading) closeOnce()
    },
  }, { highWaterMark: 0 })
}
