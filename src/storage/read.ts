// Reading a file that must lie inside a folder (a proxy inside its production's proxy_root),
// as the removals do it: the folders on the way are opened one name at a time from the device's
// root without following a link (storage/roots.ts), the file itself with O_NOFOLLOW, and it must
// be a regular file. What is read is then the open descriptor: a name swapped for a link or for
// another file after the check reaches nothing outside. The path is only split into names here;
// its containment is decided by the walk, not by comparing text.
import { type Stats, closeSync, existsSync, fstatSync, read } from 'node:fs'
import { O, close, openat } from './dirfd.ts'
import { openParentInside } from './roots.ts'
import { requireFileWork } from './platform.ts'

/** A regular file open for reading, with its fstat (size, mtime, identity) as it was opened. */
export type OpenFile = { fd: number; stat: Stats }

/**
 * Opens the regular file `path` found beneath `root` (a production's folder on the device at
 * `devicePath`, reached from the device root as storage/roots.ts does). Undefined when nothing
 * is there, when a folder below the root or the file is a link, when the path does not lie inside
 * `root`, or when it is not a regular file; PathError when the root itself is reached through a
 * link. Nothing outside `root` is ever opened. The caller closes the descriptor (fileBody and
 * fdStream do, when the file has been sent).
 */
export function openFileInside(devicePath: string, root: string, path: string): OpenFile | undefined {
  // Refused where folder descriptors are not written: a 501, not a 404 for a file that may be there.
  requireFileWork()
  const at = openParentInside(devicePath, root, path)
  if (!at) return undefined
  let fd = -1
  try {
    fd = openat(at.parent, at.name, O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
    if (fd < 0) return undefined
    const stat = fstatSync(fd)
    if (!stat.isFile()) return undefined
    const opened = { fd, stat }
    fd = -1
    return opened
  } finally {
    if (fd >= 0) close(fd)
    close(at.parent)
  }
}

/**
 * The name under which this process opens its descriptor `fd` again: the same open file, whatever
 * has since been renamed, swapped or linked at the path it was found by. Undefined where the
 * system has no such names.
 */
const FD_NAMES =
  process.platform === 'linux' ? '/proc/self/fd/' : process.platform === 'darwin' ? '/dev/fd/' : undefined
const fdNames = FD_NAMES !== undefined && existsSync(FD_NAMES) ? FD_NAMES : undefined // /proc may be missing in a container
const reopenName = (fd: number): string | undefined => (fdNames === undefined ? undefined : fdNames + fd)

/**
 * How long a descriptor handed to the runtime by name stays open. Bun opens a file body's name
 * when it renders the answer, as soon as the handler's promise settles (in the same turn of the
 * event loop, before any timer); ten seconds leave room for any hook that waits after the
 * handler. A name read after its descriptor was closed could name another file of this process
 * (numbers are reused), so the bound on how many wait (MAX_LINGERING) falls back to the stream,
 * never to an earlier close.
 */
const LINGER_MS = 10_000
const MAX_LINGERING = 1024
let lingering = 0

/**
 * The bytes `start` to `end` (inclusive) of the open file `file` as a body of known length, so
 * the answer carries Content-Length (a ReadableStream would be sent chunked, without it) and the
 * runtime sends it from the file (sendfile), never the whole file in memory. The runtime reads
 * the very file that was opened and checked: it opens the descriptor's own name (/proc/self/fd),
 * not the path. Takes the descriptor (closes it). Where the system has no such name, or while
 * MAX_LINGERING descriptors wait to be closed, the body is fdStream's (sent chunked).
 */
export function fileBody(file: OpenFile, start: number, end: number): Blob | ReadableStream<Uint8Array> {
  const name = reopenName(file.fd)
  if (!name || lingering >= MAX_LINGERING) return fdStream(file.fd, start, end)
  const body = Bun.file(name).slice(start, end + 1)
  lingering++
  setTimeout(() => {
    lingering--
    closeSync(file.fd)
  }, LINGER_MS).unref()
  return body
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
  return new ReadableStream<Uint8Array>(
    {
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
    },
    { highWaterMark: 0 },
  )
}
