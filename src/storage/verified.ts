// Copies that check themselves. The bytes of a file are hashed (xxHash64, hash.ts) as they are
// read from the source and written to the copy; once the copy is written, it is read back and
// hashed again, and a copy whose read-back differs from what was read is not a copy. A project
// copy's large files (fs.ts copyTree) and a move across file systems (file.ts) copy here; the
// small files of a project copy are read and read back in one call each, in fs.ts.
//
// The kernel's own copy (copy_file_range, which Bun.write uses between two files) would be
// faster where the file system copies without the data passing through us, but what it copied
// is never seen, so it cannot be hashed: the bytes go through our buffers instead.
//
// What a read-back proves: the file system now gives, for the copy, the bytes that were read
// from the source, so nothing between our read and the file system's answer (our code, a write
// cut short, another program writing into the copy) changed them. The read-back usually comes
// from the system's cache, not from the disk, so it says nothing of the disk's surface: that is
// what the hashes kept (the ASC MHL history of a project copy, an asset's `technical.hashes`)
// are for, when the files are checked again later.
import { read, write } from 'node:fs'
import { CancelledError } from './errors.ts'
import { type HashedFile, createXxh64, hashFile, hashReady } from './hash.ts'

/**
 * Bytes per read and write. Measured with the hashing, 1 GiB into a fresh file each round, three
 * rounds (Linux 6.18, 2 cores): from tmpfs to ext4, 128 KiB took 1.4 s, 256 KiB 1.0–1.1, 512 KiB
 * 0.8, 1 MiB 0.6–0.76, 2 MiB 2.1–4.4; from ext4 to the same ext4, 1.3–1.6, 0.8–1.0, 0.7, 0.55–0.65
 * and 3.1–4.6 s; from tmpfs to tmpfs, 1.5, 1.1–1.25, 0.95–1.0, 0.76–0.9 and 0.7–0.84 s. From
 * 2 MiB on, a write of one chunk into ext4 became several times slower in the kernel. An earlier
 * measurement on a machine of this kind (without the hashing) saw that slowdown from 256 KiB on:
 * if it comes back, this is the number to lower.
 */
export const COPY_CHUNK = 1024 * 1024

export type CopyOptions = {
  /** Stops the copy between two chunks, with a CancelledError. */
  signal?: AbortSignal
  /** Bytes written so far, after each chunk. */
  onProgress?: (bytes: number) => void
}

/**
 * The bytes of `input` into `output`, from the start of each to the end of `input`, on the
 * thread pool in chunks at explicit positions (any size: positions are numbers, exact to 2^53),
 * the next read overlapping the last write. Each chunk is hashed as soon as it is read, while
 * the write before it is still under way. Returns the bytes copied and their xxHash64.
 */
export async function copyHashed(input: number, output: number, options: CopyOptions = {}): Promise<HashedFile> {
  const { signal, onProgress } = options
  await hashReady
  const hasher = createXxh64()
  const buffers = [Buffer.allocUnsafe(COPY_CHUNK), Buffer.allocUnsafe(COPY_CHUNK)]
  let at = 0
  let writing: Promise<void> = Promise.resolve()
  try {
    for (let i = 0; ; i++) {
      if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
      const buffer = buffers[i & 1]!
      const n = await readAt(input, buffer, at)
      if (n > 0) hasher.update(buffer.subarray(0, n))
      await writing
      if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
      if (n === 0) return { xxh64: hasher.digest(), size: at }
      const position = at
      at += n
      writing = writeAll(output, buffer, n, position).then(() => onProgress?.(position + n))
      writing.catch(() => {}) // awaited on the next turn; not an unhandled rejection meanwhile
    }
  } finally {
    await writing.catch(() => {})
  }
}

/**
 * The xxHash64 of the whole file open at `fd` (opened for reading), read back from its start
 * (hash.ts hashFile). A cancellation between two chunks throws CancelledError, as a copy's does.
 */
export async function readBack(fd: number, signal?: AbortSignal): Promise<HashedFile> {
  try {
    return await hashFile(fd, { signal })
  } catch (error) {
    if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
    throw error
  }
}

/** Why a copy's read-back is not what was read from its source, in words; undefined when it is. */
export function readBackProblem(source: HashedFile, copy: HashedFile): string | undefined {
  if (copy.size !== source.size)
    return `the copy read back holds ${copy.size} bytes, ${source.size} were read from the source`
  if (copy.xxh64 !== source.xxh64)
    return `the copy read back has xxh64 ${copy.xxh64}, the bytes read from the source ${source.xxh64}`
  return undefined
}

const readAt = (fd: number, buffer: Buffer, position: number) =>
  new Promise<number>((resolve, reject) =>
    read(fd, buffer, 0, buffer.length, position, (error, n) => (error ? reject(error) : resolve(n))),
  )

async function writeAll(fd: number, buffer: Buffer, length: number, position: number) {
  for (let done = 0; done < length; ) {
    done += await new Promise<number>((resolve, reject) =>
      write(fd, buffer, done, length - done, position + done, (error, n) => (error ? reject(error) : resolve(n))),
    )
  }
}
