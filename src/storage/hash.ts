// xxHash64 of whole files, a piece at a time: the hash that ASC MHL histories record for each
// file (the <xxh64> element, seed 0, 16 lowercase hex digits). Bun.hash.xxHash64 hashes one
// buffer in one call and keeps no state between calls, so a file larger than memory cannot go
// through it; xxhash-wasm has the streaming form (a state that update() carries along), in
// WebAssembly that travels inside the compiled executable with no native library to ship.
//
// The WebAssembly instance is made once, begun when this module loads. Not with a top-level
// await: the executable's code is compiled to bytecode (build.ts), which takes modules as
// CommonJS, where a top-level await does not build. hashFile waits for it; a caller of the
// synchronous createXxh64 awaits `hashReady` once first (createXxh64 throws until then).
//
// The descriptor form of hashFile is the one for work on shares that others write to: the caller
// opens the file as storage/ opens files (no link followed, checked to be a regular file) and
// hashes what it opened. The path form opens without following a link and without waiting on a
// FIFO, for files in folders the caller owns.
//
// createBufferHasher is the same hash without a copy: xxhash-wasm's update() copies every piece
// into the WebAssembly memory before hashing it, which for a large file costs about as much as
// the hashing itself (256 MiB in memory, 2 cores: the hashing alone 7-11 GiB/s, about native
// Bun.hash.xxHash64's speed; copy and hash together 4-5 GiB/s). A buffer hasher owns a buffer
// inside its own instance's memory: the caller reads the file straight into it and the bytes are
// hashed where they lie. The instance is made of the package's own WebAssembly (the file its
// workerd build loads, the very bytes its other builds carry inline), embedded in the executable
// as a file; it is checked against Bun.hash.xxHash64 when made. Bun's asynchronous reads copy
// into such a buffer through one of their own (measured: perf shows the copy), so it pays only
// with synchronous reads: the verified copy's threads (copy.worker.ts) use it.
import { constants, read } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import xxhash from 'xxhash-wasm'
// The package's exports map has no entry for its .wasm file, hence the path into node_modules.
import XXHASH_WASM from '../../node_modules/xxhash-wasm/workerd/xxhash.wasm' with { type: 'file' }

type Api = Awaited<ReturnType<typeof xxhash>>
let api: Api | undefined

/** Settles when the streaming hasher can be made (createXxh64); rejects if WebAssembly could not load it. */
export const hashReady: Promise<void> = xxhash().then((loaded) => void (api = loaded))
// Awaited by every user; a failure to load is theirs to see, not an unhandled rejection at start.
hashReady.catch(() => {})

/**
 * The most bytes handed to the WebAssembly side at once. Its memory grows to the largest piece it
 * was given and never shrinks, and every hasher shares it: a caller passing a 2 GiB buffer would
 * otherwise keep 2 GiB for the life of the process.
 */
const PIECE = 4 << 20

/** An xxHash64 (seed 0) fed a piece at a time. */
export type Xxh64 = {
  /** Adds the next bytes. */
  update(bytes: Uint8Array): Xxh64
  /** The hash of everything added so far, as 16 lowercase hex digits; more may be added after. */
  digest(): string
}

/** A new streaming xxHash64 with seed 0, as ASC MHL writes it. Only once `hashReady` has settled. */
export function createXxh64(): Xxh64 {
  if (!api) throw new Error('the xxHash64 WebAssembly is not loaded yet: await hashReady first')
  const state = api.create64(0n)
  const hasher: Xxh64 = {
    update(bytes) {
      for (let at = 0; at < bytes.byteLength; at += PIECE) state.update(bytes.subarray(at, at + PIECE))
      return hasher
    },
    digest: () => hex64(state.digest()),
  }
  return hasher
}

/** xxHash64 (seed 0) of one buffer, as createXxh64 would give it. */
export function xxh64(bytes: Uint8Array): string {
  return hex64(Bun.hash.xxHash64(bytes, 0n))
}

const hex64 = (value: bigint | number) => value.toString(16).padStart(16, '0')

/** A streaming xxHash64 (seed 0) of bytes put in its own buffer (createBufferHasher). */
export type BufferHasher = {
  /** Where the next bytes go; its contents are hashed by update(). Never replaced, never moved. */
  readonly buffer: Uint8Array
  /** Adds the first `length` bytes of `buffer`. */
  update(length: number): void
  /** The hash of everything added since it was made or reset, as 16 lowercase hex digits. */
  digest(): string
  /** Starts over, for the next file. */
  reset(): void
}

let bufferModule: Promise<WebAssembly.Module> | undefined

/** Where a buffer hasher's state lies in its memory (88 bytes), and its buffer after it. */
const STATE_AT = 0
const BUFFER_AT = 256

/**
 * A streaming xxHash64 (seed 0) with a buffer of `size` bytes in its own WebAssembly memory:
 * bytes read into `buffer` are hashed in place (no copy). Each hasher has an instance of its own,
 * so hashers on one thread never share memory, and the memory never grows after this.
 */
export async function createBufferHasher(size: number): Promise<BufferHasher> {
  bufferModule ??= Bun.file(XXHASH_WASM)
    .bytes()
    .then((bytes) => WebAssembly.compile(bytes))
  const instance = new WebAssembly.Instance(await bufferModule, {})
  const { mem, init64, update64, digest64 } = instance.exports as Record<string, unknown>
  if (
    !(mem instanceof WebAssembly.Memory) ||
    typeof init64 !== 'function' ||
    typeof update64 !== 'function' ||
    typeof digest64 !== 'function'
  )
    throw new Error('the xxhash-wasm module does not export mem, init64, update64 and digest64')
  const missing = BUFFER_AT + size - mem.buffer.byteLength
  if (missing > 0) mem.grow(Math.ceil(missing / 65536))
  const memory = new Uint8Array(mem.buffer)
  const reset = () => {
    memory.fill(0, STATE_AT, BUFFER_AT)
    init64(STATE_AT, 0n)
  }
  const hasher: BufferHasher = {
    buffer: memory.subarray(BUFFER_AT, BUFFER_AT + size),
    update: (length) => void update64(STATE_AT, BUFFER_AT, length),
    digest: () => hex64(BigInt.asUintN(64, digest64(STATE_AT))),
    reset,
  }
  // The module's calls as this code understands them, checked once per hasher on bytes that
  // cross its 32-byte stripes in two pieces, against Bun's own one-shot xxHash64.
  const probe = Math.min(size, 100)
  for (let i = 0; i < probe; i++) hasher.buffer[i] = (i * 37 + 11) & 255
  const expected = xxh64(hasher.buffer.slice(0, probe))
  reset()
  hasher.update(probe >> 1)
  hasher.buffer.copyWithin(0, probe >> 1, probe)
  hasher.update(probe - (probe >> 1))
  if (hasher.digest() !== expected) throw new Error('the xxhash-wasm module hashes differently than Bun.hash.xxHash64')
  reset()
  return hasher
}

/**
 * Bytes read from the file at a time. Two such buffers are in use: one is hashed while the next
 * is read into the other on the thread pool. Measured on a 512 MiB file in the page cache
 * (bench/hash.ts, 2 cores, six runs): 4 MiB was up to 1.3 times as fast as 1 MiB in four runs
 * and under 1.1 times slower in two; 256 KiB was half as fast (each read is a round trip through
 * the thread pool); 16 MiB was slower than 4 MiB in every run.
 */
export const HASH_CHUNK = 4 << 20

export type HashedFile = {
  /** 16 lowercase hex digits. */
  xxh64: string
  /** How many bytes were read and hashed: to compare with the size the caller saw. */
  size: number
}

export type HashOptions = {
  /** Stops the work between two chunks, with the signal's reason. */
  signal?: AbortSignal
  /** Told the bytes hashed so far after each chunk. */
  onProgress?: (bytes: number) => void
  /** Bytes per read (HASH_CHUNK); the benchmark compares sizes with it. */
  chunk?: number
}

/**
 * The xxHash64 of a whole file, read from its start to its end in chunks whatever the
 * descriptor's position is (positional reads: a descriptor shared with other readers keeps its
 * offset). `file` is an open descriptor (left open) or a path (opened without following a link,
 * closed at the end; anything but a regular file is refused).
 */
export async function hashFile(file: number | string, opts: HashOptions = {}): Promise<HashedFile> {
  await hashReady
  if (typeof file === 'number') return hashOpen(readFd(file), opts)
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  try {
    // A folder or a device has no content to record; a FIFO would never end.
    if (!(await handle.stat()).isFile())
      throw Object.assign(new Error(`not a regular file: ${file}`), { code: 'EINVAL', path: file })
    return await hashOpen(readHandle(handle), opts)
  } finally {
    await handle.close()
  }
}

type ReadAt = (buffer: Uint8Array, offset: number, length: number, position: number) => Promise<number>

async function hashOpen(read: ReadAt, { signal, onProgress, chunk = HASH_CHUNK }: HashOptions): Promise<HashedFile> {
  const hasher = createXxh64()
  let current = new Uint8Array(chunk)
  let spare = new Uint8Array(chunk)
  let position = 0
  let pending = fill(read, current, position)
  try {
    for (;;) {
      const got = await pending
      if (got === 0) break
      signal?.throwIfAborted()
      position += got
      // The next chunk comes from the disk while this one is hashed.
      pending = fill(read, spare, position)
      hasher.update(got === current.byteLength ? current : current.subarray(0, got))
      onProgress?.(position)
      ;[current, spare] = [spare, current]
    }
  } finally {
    // A read still on the thread pool ends before the caller may close the descriptor: its number
    // could otherwise be reused for another file under that read.
    await pending.catch(() => {})
  }
  return { xxh64: hasher.digest(), size: position }
}

/** Reads at `position` until `buffer` is full or the file ends; how many bytes it holds. */
async function fill(read: ReadAt, buffer: Uint8Array, position: number): Promise<number> {
  let done = 0
  while (done < buffer.byteLength) {
    const n = await read(buffer, done, buffer.byteLength - done, position + done)
    if (n === 0) break
    done += n
  }
  return done
}

const readFd =
  (fd: number): ReadAt =>
  (buffer, offset, length, position) =>
    new Promise((resolve, reject) =>
      read(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))),
    )

const readHandle =
  (handle: FileHandle): ReadAt =>
  async (buffer, offset, length, position) =>
    (await handle.read(buffer, offset, length, position)).bytesRead
