// Copies that check themselves. The bytes of a file are hashed (xxHash64, hash.ts) as they are
// read from the source and written to the copy; once the copy is written, it is read back and
// hashed again, and a copy whose read-back differs from what was read is not a copy. A project
// copy's large files (fs.ts copyTree), a move across file systems (file.ts), an archive and a
// restore (archive.ts) copy here; the small files of a project copy are read and read back in
// one call each, in fs.ts.
//
// What a read-back proves: the file system now gives, for the copy, the bytes that were read
// from the source, so nothing between our read and the file system's answer (our code, a write
// cut short, another program writing into the copy) changed them. The read-back usually comes
// from the system's cache, not from the disk, so it says nothing of the disk's surface: that is
// what the hashes kept (the ASC MHL history of a project copy, an asset's `technical.hashes`)
// are for, when the files are checked again later.
//
// Where the work runs. On Linux and macOS, in threads of our own (copy.worker.ts): a copy takes
// two, one reading the source into a ring of pieces and hashing each (in the hasher's own
// WebAssembly memory, hash.ts createBufferHasher) while the other writes them to the copy, and
// either writes when the other is behind; a read-back takes one, reading straight into the
// hasher's memory. Synchronous calls in those threads never hold the server's thread, and cost
// no round trip through a thread pool per piece. The earlier way, still used on Windows and
// wherever a thread cannot start (copyOnThreadPool: positioned reads and writes on Bun's thread
// pool, the next read overlapping the last write, each piece copied into xxhash-wasm's memory to
// be hashed on the server's thread), reads and writes the same bytes. Measured on 1 GiB, copy
// then read-back, ext4, page cache warm (Linux 6.18, 2 cores; seven rounds, medians): 0.60 s in
// the copy threads, 0.89 s the earlier way, 0.61 s for cp + xxhsum of the same file. The two
// threads matter on a machine with a core to spare (the copy alone: 0.36 s, against 0.50 s for
// one thread doing all of it and 0.41 s for cp); when both cores are busy with other work, the
// reader does the writes itself and it is no slower than one thread.
//
// A copy that the caller fsyncs (`durable`: an archive with purge, a move across file systems) is
// also written back to the disk while it is made (copy.worker.ts): the fsync then waits for a
// few megabytes instead of the whole file. 1 GiB copied, fsynced and read back (bench/verified.ts,
// archive.ts copyVerifiedTo): 0.77-0.97 s, against 1.42 s before; cp, fsync and xxhsum of the
// same file by hand, 1.12 s.
//
// Measured and left (bench/verified.ts, docs/benchmarks.md "Verified copies against cp + xxhsum"):
// - Bigger pieces: 4 and 8 MiB were no faster than 1 MiB on the thread pool (1 GiB with its
//   read-back, tmpfs: 1.71 and 1.94 s against 1.78), and 2 MiB writes into ext4 met the kernel's
//   slow writes that COPY_CHUNK tells of, in the threads as on the pool. A third buffer on the
//   pool, so that a read and a write overlap the hashing of a third piece, was slower on 2 cores.
// - The thread pool writing for a copy thread (asynchronous writes from the thread that reads and
//   hashes): slower than the thread writing itself (0.75 s against 0.57 for the copy of 1 GiB).
// - Reading into the hasher's memory with Bun's asynchronous reads: Bun copies such a buffer
//   through one of its own, so nothing was saved (perf: more time in memmove, not less).
// - Bun.hash.xxHash64 of a mapped file (Bun.mmap, one call for the whole file, as fast as the
//   WebAssembly hashing without its copy): a mapped file that another program truncates
//   meanwhile kills the whole process with SIGBUS, and a source on a share is written by others.
// - The kernel's copy (copy_file_range, as cp does) followed by a hash of each side, each read
//   from its file: that would keep the guarantee (the copy's read-back equal to the bytes read
//   from the source says the copy holds them, whoever wrote them), but every byte still crosses
//   memory three times (the kernel's copy, our read of the source, the read-back) as it does
//   here, and on a file system that clones (Btrfs, XFS, a NAS's server-side copy) the "copy"
//   would share the source's blocks, which an archive must never do.
import { read, write } from 'node:fs'
import { embeddedUrl } from '../util/embedded.ts'
import { CHUNK, CTL, CTL_BYTES, type CopyJob, type CopyReport, type Ring, SLOTS } from './copy-ring.ts'
import { CancelledError } from './errors.ts'
import { type HashedFile, createXxh64, hashFile, hashReady } from './hash.ts'

/**
 * Bytes per read and write on Bun's thread pool (where no copy thread runs). Measured with the
 * hashing, 1 GiB into a fresh file each round, three rounds (Linux 6.18, 2 cores): from tmpfs to
 * ext4, 128 KiB took 1.4 s, 256 KiB 1.0–1.1, 512 KiB 0.8, 1 MiB 0.6–0.76, 2 MiB 2.1–4.4; from
 * ext4 to the same ext4, 1.3–1.6, 0.8–1.0, 0.7, 0.55–0.65 and 3.1–4.6 s; from tmpfs to tmpfs,
 * 1.5, 1.1–1.25, 0.95–1.0, 0.76–0.9 and 0.7–0.84 s. From 2 MiB on, a write of one chunk into
 * ext4 became several times slower in the kernel.
 */
export const COPY_CHUNK = 1024 * 1024

export type CopyOptions = {
  /** Stops the copy between two chunks, with a CancelledError. */
  signal?: AbortSignal
  /** Bytes written so far: after the first chunk, then every few megabytes, and at the end. */
  onProgress?: (bytes: number) => void
  /**
   * The caller fsyncs the copy once it is written: its pages are written back while it is made
   * (Linux), so that the fsync has little left to do.
   */
  durable?: boolean
}

/**
 * The bytes of `input` into `output`, from the start of each to the end of `input`, at explicit
 * positions (a descriptor shared with other readers keeps its offset; any size: positions are
 * numbers, exact to 2^53), each piece hashed as soon as it is read. Returns the bytes copied and
 * their xxHash64.
 */
export async function copyHashed(input: number, output: number, options: CopyOptions = {}): Promise<HashedFile> {
  return (await copyInThreads(input, output, options)) ?? copyOnThreadPool(input, output, options)
}

/**
 * The xxHash64 of the whole file open at `fd` (opened for reading), read back from its start. A
 * cancellation between two chunks throws CancelledError, as a copy's does.
 */
export async function readBack(fd: number, signal?: AbortSignal): Promise<HashedFile> {
  const ctl = new SharedArrayBuffer(CTL_BYTES)
  const answers = await inThreads([{ role: 'hash', input: fd, ctl }], ctl, signal, () => {})
  if (answers) return { xxh64: answers[0]!.xxh64!, size: answers[0]!.size }
  try {
    return await hashFile(fd, { signal })
  } catch (error) {
    if (signal?.aborted) throw cancelled(signal)
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

const cancelled = (signal: AbortSignal) => new CancelledError(String(signal.reason ?? 'cancelled'))

// ------------------------------------------------------------------ the copy threads

/** Threads at most: a copy takes two, a read-back one; work that finds none free waits its turn. */
export const MAX_THREADS = 4

/** How long a new thread may take to say it is ready before copies go to the thread pool instead. */
const START_MS = 30_000

const WORKER_URL = embeddedUrl('storage/copy.worker.js') ?? new URL('./copy.worker.ts', import.meta.url).href

type Answer = Exclude<CopyReport, 'ready' | { failed: string }>
type Thread = { worker: Worker; receive?: (answer: Answer) => void }

let enabled = process.platform === 'linux' || process.platform === 'darwin'
/** Why no copy thread runs, once one could not start: every copy then runs on the thread pool. */
let problem: string | undefined
const threads = new Set<Thread>()
const idle: Thread[] = []
/** Work waiting for threads, first come first served. */
const waiting: { count: number; take: (taken: Thread[] | undefined) => void }[] = []
let starting = 0
let nextId = 1

/** Whether copies run in copy threads (true by default on Linux and macOS); false: on Bun's thread pool. For tests and benchmarks. */
export function useCopyThreads(on: boolean) {
  enabled = on
}

/** Why copies run on Bun's thread pool instead of copy threads, once a thread could not start. */
export const copyThreadsProblem = () => problem

/** The copy done by two copy threads; undefined when there are none (the caller then copies on the thread pool). */
async function copyInThreads(
  input: number,
  output: number,
  { signal, onProgress, durable = false }: CopyOptions,
): Promise<HashedFile | undefined> {
  const ctl = new SharedArrayBuffer(CTL_BYTES)
  const ring: Ring = { data: new SharedArrayBuffer(CHUNK * SLOTS), ctl }
  // Both threads write, and tell the bytes written so far: told here only when they grew.
  let told = 0
  const progress = (bytes: number) => {
    if (bytes <= told) return
    told = bytes
    onProgress?.(bytes)
  }
  const answers = await inThreads(
    [
      { role: 'read', input, output, ring },
      { role: 'write', output, ring, durable },
    ],
    ctl,
    signal,
    (answer) => 'progress' in answer && progress(answer.progress),
  )
  if (!answers) return undefined
  // The read-back checks what was written: its size and hash against the reader's.
  const [read] = answers
  progress(read!.size)
  return { xxh64: read!.xxh64!, size: read!.size }
}

/**
 * Each of `jobs` in a copy thread of its own, all taken at once; their answers in order, once
 * every one has answered (until then the descriptors are in use). Undefined when there are no
 * copy threads. A job that fails makes the others stop (copy.worker.ts); the first failure is
 * thrown, a CancelledError when `signal` stopped them. `ctl`'s stop word is theirs.
 */
async function inThreads(
  jobs: DistributiveOmit<CopyJob, 'id'>[],
  ctl: SharedArrayBuffer,
  signal: AbortSignal | undefined,
  onProgress: (answer: Answer) => void,
): Promise<{ xxh64?: string; size: number }[] | undefined> {
  if (signal?.aborted) throw cancelled(signal)
  const taken = await takeThreads(jobs.length)
  if (!taken) return undefined
  const words = new Int32Array(ctl)
  const stop = () => {
    Atomics.store(words, CTL.stop, 1)
    Atomics.notify(words, CTL.filled)
    Atomics.notify(words, CTL.written)
  }
  // An exception of onProgress fails the copy, once the threads have stopped.
  let failure: { error: unknown } | undefined
  signal?.addEventListener('abort', stop, { once: true })
  try {
    if (signal?.aborted) stop()
    const answers = await Promise.all(
      jobs.map(
        (job, i) =>
          new Promise<Answer>((resolve) => {
            const thread = taken[i]!
            thread.worker.ref() // a copy under way keeps the process alive; an idle thread does not
            thread.receive = (answer) => {
              if (!('progress' in answer)) {
                // The others stop too (a thread that died could not tell them through the ring).
                if (!('done' in answer)) stop()
                return resolve(answer)
              }
              if (failure || signal?.aborted) return
              try {
                onProgress(answer)
              } catch (error) {
                failure = { error }
                stop()
              }
            }
            thread.worker.postMessage({ ...job, id: nextId++ } as CopyJob)
          }),
      ),
    )
    if (failure) throw failure.error
    const error = answers.find((a) => 'error' in a)
    if (error && 'error' in error) throw Object.assign(new Error(error.error.message), definedOf(error.error))
    if (signal?.aborted || answers.some((a) => 'stopped' in a))
      throw signal ? cancelled(signal) : new CancelledError('stopped')
    return answers.map((a) => ('done' in a ? a.done : { size: 0 }))
  } finally {
    signal?.removeEventListener('abort', stop)
    for (const thread of taken) {
      thread.receive = undefined
      giveBack(thread)
    }
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

const definedOf = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

/**
 * `count` copy threads at once, first come first served (never one now and one later: two copies
 * could each hold one and wait for the other forever); undefined when there are none. Threads are
 * started as the work waiting needs them, up to MAX_THREADS.
 */
function takeThreads(count: number): Promise<Thread[] | undefined> {
  if (!enabled || problem) return Promise.resolve(undefined)
  return new Promise((take) => {
    waiting.push({ count, take })
    const needed = waiting.reduce((n, w) => n + w.count, 0) - idle.length - starting
    for (let i = 0; i < needed && threads.size + starting < MAX_THREADS; i++) grow()
    serve()
  })
}

function grow() {
  starting++
  startThread().then(
    (thread) => {
      starting--
      threads.add(thread)
      giveBack(thread)
    },
    (error) => {
      starting--
      problem ??= `the copy thread did not start: ${(error as Error).message}`
      for (const w of waiting.splice(0)) w.take(undefined)
    },
  )
}

/** The first in line gets its threads once enough are idle. */
function serve() {
  while (waiting.length && idle.length >= waiting[0]!.count) {
    const first = waiting.shift()!
    first.take(idle.splice(idle.length - first.count))
  }
}

function giveBack(thread: Thread) {
  if (!threads.has(thread)) return // it failed and was dropped
  thread.worker.unref()
  idle.push(thread)
  serve()
}

/** A copy thread, once it has said it is ready. */
function startThread(): Promise<Thread> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL)
    const thread: Thread = { worker }
    let ready = false
    const notReady = (why: string) => {
      clearTimeout(timer)
      worker.terminate()
      reject(new Error(why))
    }
    const timer = setTimeout(() => notReady(`no answer in ${START_MS / 1000} s`), START_MS)
    worker.onmessage = (event: MessageEvent<CopyReport>) => {
      const report = event.data
      if (report === 'ready') {
        ready = true
        clearTimeout(timer)
        resolve(thread)
      } else if ('failed' in report) notReady(report.failed)
      else thread.receive?.(report)
    }
    worker.onerror = (event) => {
      if (!ready) return notReady(event.message)
      // An exception in the thread's own code (never a failed read or write: those are answered).
      // It reads and writes no more: its job fails and the thread goes.
      threads.delete(thread)
      worker.terminate()
      thread.receive?.({ id: 0, error: { message: `the copy thread failed: ${event.message}` } })
    }
  })
}

// ------------------------------------------------------------------ on Bun's thread pool

/**
 * copyHashed where no copy thread runs: on the thread pool in chunks, the next read overlapping
 * the last write, each chunk hashed on this thread as soon as it is read, while the write before
 * it is still under way.
 */
async function copyOnThreadPool(input: number, output: number, options: CopyOptions): Promise<HashedFile> {
  const { signal, onProgress } = options
  await hashReady
  const hasher = createXxh64()
  const buffers = [Buffer.allocUnsafe(COPY_CHUNK), Buffer.allocUnsafe(COPY_CHUNK)]
  let at = 0
  let writing: Promise<void> = Promise.resolve()
  try {
    for (let i = 0; ; i++) {
      if (signal?.aborted) throw cancelled(signal)
      const buffer = buffers[i & 1]!
      const n = await readAt(input, buffer, at)
      if (n > 0) hasher.update(buffer.subarray(0, n))
      await writing
      if (signal?.aborted) throw cancelled(signal)
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
