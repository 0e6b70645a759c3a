// The verified copy's threads (verified.ts): files read, hashed and written with synchronous
// calls in threads of their own, so the server's thread never waits on them. A job names open
// descriptors (a process's descriptors are every thread's); verified.ts keeps them open until
// every thread of the job has answered.
//
// A copy takes two threads, which share pieces of CHUNK bytes through a ring of SLOTS in shared
// memory (copy-ring.ts). The reader reads the source from its start into the next slot once it
// is free, hashes the piece (copied into the hasher's WebAssembly memory, in the core's cache),
// and marks the slot filled. The writer takes the earliest filled slot (compare-and-swap: filled
// to writing), writes its piece to the copy at the piece's position and frees the slot. A slot
// is filled again only once its piece is written, so the copy gets exactly the bytes that were
// hashed. When the next slot is not free the reader writes a filled piece itself instead of
// waiting: on a machine whose other core is busy the writer may not run for a while, and the
// reader then does the whole copy alone, no slower than one thread. Reading and hashing on one
// core while the other writes, a copy of 1 GiB took 0.36 s where one thread doing both took
// 0.50 s and cp 0.41 s (Linux 6.18, ext4, 2 cores, page cache warm, five rounds each). A hash
// alone (a read-back) takes one thread, which reads straight into the hasher's memory.
//
// The ring's control words (CTL) count the pieces filled and written, and hold how the reader
// ended, whether a write failed, and the job's stop word, which verified.ts sets to stop the
// job between two pieces. A thread that waits for the other wakes when the other moves on, and
// looks at the stop and failure words at least every WAIT_MS.
//
// The threads keep the process's priority, unlike the checkpointer's and the watcher's
// (storage/threads.ts): a copy is work someone waits for, as it was on Bun's thread pool before,
// and the server's thread, which used to hash every piece itself, now only reads their answers.
// On Linux they are named `reelhouse-copy` (top -H, /proc/PID/task/TID/comm).
//
// `durable` (the copy will be fsynced by the caller, as an archive, a restore and a move do): on
// Linux the writer writes the copy's pages back while it is made, with sync_file_range: each
// WINDOW written from the start is handed to the disk at once, and the one WINDOWS_AHEAD before
// it is waited for, so a few windows at most are ever dirty and the fsync that follows has little
// left. Only a hint: the fsync still decides, and a file system that refuses the call (EINVAL,
// ESPIPE) is written back at the fsync.
import { readSync, writeSync } from 'node:fs'
import { FFIType } from 'bun:ffi'
import { cFunction } from './dirfd.ts'
import { BYTES_AT, CHUNK, CTL, type CopyJob, type CopyReport, type Ring, SLOT, SLOTS } from './copy-ring.ts'
import { type BufferHasher, createBufferHasher } from './hash.ts'

/** Progress is told after the first piece, then at least this many bytes apart, and at the end. */
const PROGRESS_EVERY = 16 * 1024 * 1024

/** The writes handed to the disk at once when `durable`, and how many may be under way. */
const WINDOW = 32 * 1024 * 1024
const WINDOWS_AHEAD = 4

/** The longest a thread waits for the other before it looks at the stop and failure words again. */
const WAIT_MS = 50

// <linux/fs.h>
const SYNC_FILE_RANGE_WAIT_BEFORE = 1
const SYNC_FILE_RANGE_WRITE = 2
const SYNC_FILE_RANGE_WAIT_AFTER = 4

declare const self: Worker

const syncFileRange =
  process.platform === 'linux'
    ? cFunction('sync_file_range', [FFIType.i32, FFIType.i64, FFIType.i64, FFIType.u32])
    : undefined

// PR_SET_NAME (<linux/prctl.h>): the calling thread's name, 15 bytes at most.
if (process.platform === 'linux')
  cFunction('prctl', [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.u64, FFIType.u64])?.(
    15,
    Buffer.from('reelhouse-copy\0'),
    0,
    0,
    0,
  )

let hasher: BufferHasher | undefined

createBufferHasher(CHUNK).then(
  (made) => {
    hasher = made
    self.postMessage('ready' satisfies CopyReport)
  },
  (error) => self.postMessage({ failed: String((error as Error)?.message ?? error) } satisfies CopyReport),
)

self.onmessage = (event: MessageEvent<CopyJob>) => {
  const job = event.data
  const tell = (report: CopyReport) => self.postMessage(report)
  const progress = (bytes: number) => tell({ id: job.id, progress: bytes })
  try {
    const done =
      job.role === 'hash'
        ? hashAlone(job.input, new Int32Array(job.ctl), hasher!, progress)
        : job.role === 'read'
          ? readInto(job.input, job.output, job.ring, hasher!, progress)
          : writeFrom(job.output, job.ring, job.durable, progress)
    tell(done ? { id: job.id, done } : { id: job.id, stopped: true })
  } catch (error) {
    const e = error as NodeJS.ErrnoException
    tell({
      id: job.id,
      error: { message: String(e?.message ?? e), code: e?.code, errno: e?.errno, syscall: e?.syscall },
    })
  }
}

/** Sets a control word and wakes the other thread, whichever word it waits on. */
function end(ctl: Int32Array, word: number, value: number) {
  Atomics.store(ctl, word, value)
  Atomics.notify(ctl, CTL.filled)
  Atomics.notify(ctl, CTL.written)
}

/** A read-back: the file read into the hasher's buffer and hashed; undefined when stopped. */
function hashAlone(input: number, ctl: Int32Array, h: BufferHasher, progress: (bytes: number) => void) {
  h.reset()
  const told = teller(progress)
  let at = 0
  for (;;) {
    if (Atomics.load(ctl, CTL.stop) !== 0) return undefined
    const n = fill(input, h.buffer, at)
    if (n > 0) h.update(n)
    at += n
    told.now(at)
    // fill() comes back short only when a read found the end.
    if (n < h.buffer.byteLength) break
  }
  told.last(at)
  return { xxh64: h.digest(), size: at }
}

/**
 * A copy's reader: each piece of the source into the next slot once it is free, hashed, and
 * marked filled. When that slot is not free yet it writes a filled piece itself rather than wait
 * for the writer (on a busy machine the writer may not get a core for a while); once the source
 * is read, it writes what is left filled. Undefined when stopped.
 */
function readInto(input: number, output: number, ring: Ring, h: BufferHasher, progress: (bytes: number) => void) {
  const ctl = new Int32Array(ring.ctl)
  const data = new Uint8Array(ring.data)
  const told = teller(progress)
  h.reset()
  let at = 0
  try {
    for (let i = 0; ; i++) {
      const slot = i % SLOTS
      for (;;) {
        if (Atomics.load(ctl, CTL.stop) !== 0 || Atomics.load(ctl, CTL.failed) !== 0) {
          end(ctl, CTL.readerEnd, 2)
          return undefined
        }
        if (Atomics.load(ctl, CTL.state + slot) === SLOT.free) break
        const written = Atomics.load(ctl, CTL.written)
        const bytes = writeOne(output, ctl, data)
        if (bytes > 0) told.now(bytes)
        else Atomics.wait(ctl, CTL.written, written, WAIT_MS)
      }
      const piece = data.subarray(slot * CHUNK, (slot + 1) * CHUNK)
      const n = fill(input, piece, at)
      if (n > 0) {
        h.buffer.set(n === CHUNK ? piece : piece.subarray(0, n))
        h.update(n)
        ctl[CTL.length + slot] = n
        ctl[CTL.piece + slot] = i
        Atomics.store(ctl, CTL.state + slot, SLOT.filled)
        Atomics.add(ctl, CTL.filled, 1)
        Atomics.notify(ctl, CTL.filled)
      }
      at += n
      if (n < CHUNK) break
    }
  } catch (error) {
    end(ctl, CTL.readerEnd, 2)
    throw error
  }
  end(ctl, CTL.readerEnd, 1)
  for (let bytes = writeOne(output, ctl, data); bytes > 0; bytes = writeOne(output, ctl, data)) told.now(bytes)
  return { xxh64: h.digest(), size: at }
}

/**
 * A copy's writer: the filled pieces to the copy, the earliest first, until the reader has
 * ended and none is left filled (the reader finishes any it is writing). Undefined when stopped.
 */
function writeFrom(output: number, ring: Ring, durable: boolean, progress: (bytes: number) => void) {
  const ctl = new Int32Array(ring.ctl)
  const data = new Uint8Array(ring.data)
  const told = teller(progress)
  const writeBack = durable ? startWriteBack(output) : undefined
  for (;;) {
    if (Atomics.load(ctl, CTL.stop) !== 0 || Atomics.load(ctl, CTL.failed) !== 0) return undefined
    const filled = Atomics.load(ctl, CTL.filled)
    const bytes = writeOne(output, ctl, data)
    if (bytes > 0) {
      told.now(bytes)
      writeBack?.(writtenBefore(ctl) * CHUNK)
      continue
    }
    // Nothing filled: the reader has ended (its end is read after the slots: a piece filled
    // before it ended was seen), or the next piece is not read yet.
    const readerEnd = Atomics.load(ctl, CTL.readerEnd)
    if (readerEnd !== 0 && !anyFilled(ctl)) return readerEnd === 1 ? { size: 0 } : undefined
    Atomics.wait(ctl, CTL.filled, filled, WAIT_MS)
  }
}

/**
 * The earliest filled piece written to the copy by this thread (the slot taken from the other
 * thread with compare-and-swap), then its slot freed; false when none is filled. A failed write
 * stops both threads.
 */
function writeOne(output: number, ctl: Int32Array, data: Uint8Array): number {
  for (;;) {
    let slot = -1
    for (let s = 0; s < SLOTS; s++)
      if (
        Atomics.load(ctl, CTL.state + s) === SLOT.filled &&
        (slot < 0 || ctl[CTL.piece + s]! < ctl[CTL.piece + slot]!)
      )
        slot = s
    if (slot < 0) return 0
    if (Atomics.compareExchange(ctl, CTL.state + slot, SLOT.filled, SLOT.writing) !== SLOT.filled) continue
    const n = ctl[CTL.length + slot]!
    try {
      writeAll(output, data.subarray(slot * CHUNK, slot * CHUNK + n), ctl[CTL.piece + slot]! * CHUNK)
    } catch (error) {
      end(ctl, CTL.failed, 1)
      throw error
    }
    Atomics.store(ctl, CTL.state + slot, SLOT.free)
    Atomics.add(ctl, CTL.written, 1)
    Atomics.notify(ctl, CTL.written)
    const bytes = new BigInt64Array(ctl.buffer, BYTES_AT, 1)
    return Number(Atomics.add(bytes, 0, BigInt(n))) + n
  }
}

/**
 * How many pieces from the start are all written: those filled, up to the earliest still filled
 * or being written. `filled` is read first, so a piece filled after it (a later one) cannot hide
 * an earlier piece still in a slot.
 */
function writtenBefore(ctl: Int32Array) {
  let before = Atomics.load(ctl, CTL.filled)
  for (let s = 0; s < SLOTS; s++)
    if (Atomics.load(ctl, CTL.state + s) !== SLOT.free) before = Math.min(before, ctl[CTL.piece + s]!)
  return before
}

function anyFilled(ctl: Int32Array) {
  for (let s = 0; s < SLOTS; s++) if (Atomics.load(ctl, CTL.state + s) === SLOT.filled) return true
  return false
}

/** Tells progress after the first piece, then every PROGRESS_EVERY bytes, and at the end. */
function teller(progress: (bytes: number) => void) {
  let told = -1
  return {
    now(at: number) {
      if (at > 0 && (told < 0 || at - told >= PROGRESS_EVERY)) progress((told = at))
    },
    last(at: number) {
      if (at > 0 && told !== at) progress((told = at))
    },
  }
}

/** Reads at `position` until `buffer` is full or a read finds the end; how many bytes it holds. */
function fill(fd: number, buffer: Uint8Array, position: number): number {
  let done = 0
  while (done < buffer.byteLength) {
    const n = readSync(fd, buffer, done, buffer.byteLength - done, position + done)
    if (n === 0) break
    done += n
  }
  return done
}

/** A write may take fewer bytes than given (a disk filling up): the rest is written, or it throws. */
function writeAll(fd: number, bytes: Uint8Array, position: number) {
  for (let done = 0; done < bytes.byteLength; )
    done += writeSync(fd, bytes, done, bytes.byteLength - done, position + done)
}

/** Told the bytes written so far; hands each WINDOW to the disk and waits for the one WINDOWS_AHEAD before it. */
function startWriteBack(fd: number): ((written: number) => void) | undefined {
  const call = syncFileRange
  if (!call) return undefined
  const handed: number[] = [] // the start of each window handed over and not waited for yet
  let from = 0
  let working = true
  return (written) => {
    if (!working || written - from < WINDOW) return
    if (call(fd, from, written - from, SYNC_FILE_RANGE_WRITE) !== 0) {
      working = false
      return
    }
    handed.push(from)
    from = written
    if (handed.length > WINDOWS_AHEAD) {
      const start = handed.shift()!
      const waited = call(
        fd,
        start,
        handed[0]! - start,
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER,
      )
      if (waited !== 0) working = false
    }
  }
}
