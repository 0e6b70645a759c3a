// The verified copy (src/storage/verified.ts) in its copy threads (copy.worker.ts: a reader that
// hashes and a writer, sharing the writes through a ring) and on Bun's thread pool, where no copy
// thread runs: the same bytes and the same hash as Bun's one-shot xxHash64 for sizes around a
// piece (CHUNK) and the ring's length, progress that grows to the size, a stop between two
// pieces that leaves the descriptors to the caller, failures of a read and of a write, more
// copies at once than there are threads, and the buffer hasher the threads hash with.
import { afterAll, expect, test } from 'bun:test'
import { closeSync, constants, openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CHUNK, SLOTS } from '../../src/storage/copy-ring.ts'
import { CancelledError } from '../../src/storage/errors.ts'
import { createBufferHasher, xxh64 } from '../../src/storage/hash.ts'
import {
  MAX_THREADS,
  copyHashed,
  copyThreadsProblem,
  readBack,
  readBackProblem,
  useCopyThreads,
} from '../../src/storage/verified.ts'
import { disposableDir } from '../helpers/temp.ts'

const dir = disposableDir('reelhouse-verified-')
afterAll(() => {
  useCopyThreads(process.platform !== 'win32')
  dir[Symbol.dispose]()
})

/** Bytes that differ along their length, so a piece written twice, skipped or misplaced shows. */
function bytesOf(size: number, seed = 1): Buffer {
  const out = Buffer.alloc(size)
  let x = 0x9e3779b9 ^ seed
  for (let i = 0; i < size; i++) {
    x = (x ^ (x << 13)) >>> 0
    x = (x ^ (x >>> 17)) >>> 0
    x = (x ^ (x << 5)) >>> 0
    out[i] = x & 0xff
  }
  return out
}

let n = 0
/** A source file of `bytes`, and a fresh copy file opened for reading and writing. */
function pair(bytes: Uint8Array) {
  const source = join(dir.path, `source-${++n}`)
  const copy = join(dir.path, `copy-${n}`)
  writeFileSync(source, bytes)
  return {
    copy,
    input: openSync(source, constants.O_RDONLY),
    output: openSync(copy, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o600),
    close(this: { input: number; output: number }) {
      closeSync(this.input)
      closeSync(this.output)
    },
  }
}

const ways = process.platform === 'win32' ? [false] : [true, false]
const wayName = (threads: boolean) => (threads ? 'copy threads' : 'thread pool')

for (const threads of ways)
  test(`${wayName(threads)}: the bytes, their xxh64 and the read-back's, sizes around a piece and the ring; progress grows to the size`, async () => {
    useCopyThreads(threads)
    const sizes = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, CHUNK * SLOTS + 3, 3 * CHUNK * SLOTS - 1, 40 * CHUNK + 5]
    const rows = []
    for (const [i, size] of sizes.entries()) {
      const bytes = bytesOf(size, i)
      const p = pair(bytes)
      const progress: number[] = []
      const read = await copyHashed(p.input, p.output, { onProgress: (b) => progress.push(b), durable: i % 2 === 0 })
      const back = await readBack(p.output)
      p.close()
      rows.push({
        size,
        read,
        problem: readBackProblem(read, back),
        same: readFileSync(p.copy).equals(bytes),
        last: progress.at(-1),
        ascending: progress.every((b, k) => k === 0 || b > progress[k - 1]!),
        withinSize: progress.every((b) => b > 0 && b <= size),
      })
    }
    expect(rows).toEqual(
      sizes.map((size, i) => ({
        size,
        read: { xxh64: xxh64(bytesOf(size, i)), size },
        problem: undefined,
        same: true,
        last: size === 0 ? undefined : size,
        ascending: true,
        withinSize: true,
      })),
    )
    expect(copyThreadsProblem()).toBeUndefined()
  })

for (const threads of ways)
  test(`${wayName(threads)}: a copy stopped from its first progress ends with CancelledError, and nothing is told after`, async () => {
    useCopyThreads(threads)
    const p = pair(bytesOf(64 * CHUNK))
    const controller = new AbortController()
    const seen: number[] = []
    const error = await copyHashed(p.input, p.output, {
      signal: controller.signal,
      onProgress: (b) => (seen.push(b), controller.abort('stop')),
    }).catch((e) => e)
    // The descriptors are the caller's again: a read-back of the partial copy works.
    const back = await readBack(p.output)
    p.close()
    expect({ cancelled: error instanceof CancelledError, message: error.message, told: seen.length }).toEqual({
      cancelled: true,
      message: 'stop',
      told: 1,
    })
    expect(back.size).toBeLessThan(64 * CHUNK)
    // Stopped before it starts, and a read-back stopped the same way.
    await expect(copyHashed(p.input, p.output, { signal: AbortSignal.abort('early') })).rejects.toBeInstanceOf(
      CancelledError,
    )
    await expect(readBack(p.output, AbortSignal.abort('early'))).rejects.toBeInstanceOf(CancelledError)
  })

for (const threads of ways)
  test(`${wayName(threads)}: a failed read and a failed write fail the copy with the system's error; an exception of onProgress fails it too`, async () => {
    useCopyThreads(threads)
    const p = pair(bytesOf(4 * CHUNK))
    const folder = openSync(dir.path, constants.O_RDONLY)
    const readOnly = openSync(p.copy, constants.O_RDONLY)
    const failures = {
      read: await copyHashed(folder, p.output).catch((e) => e.code),
      readBack: await readBack(folder).catch((e) => e.code),
      write: await copyHashed(p.input, readOnly).catch((e) => e.code),
      progress: await copyHashed(p.input, p.output, {
        onProgress: () => {
          throw new Error('told too much')
        },
      }).catch((e) => e.message),
    }
    closeSync(folder)
    closeSync(readOnly)
    // The threads are usable after: the next copy is whole.
    const read = await copyHashed(p.input, p.output)
    p.close()
    expect(failures).toEqual({ read: 'EISDIR', readBack: 'EISDIR', write: 'EBADF', progress: 'told too much' })
    expect(read).toEqual({ xxh64: xxh64(bytesOf(4 * CHUNK)), size: 4 * CHUNK })
  })

test.skipIf(process.platform === 'win32')(
  'more copies and read-backs at once than there are threads: each waits its turn and is whole',
  async () => {
    useCopyThreads(true)
    const results = await Promise.all(
      Array.from({ length: 3 * MAX_THREADS }, async (_, k) => {
        const bytes = bytesOf(k * CHUNK + 17 * k, k)
        const p = pair(bytes)
        const read = await copyHashed(p.input, p.output, { durable: k % 3 === 0 })
        const back = await readBack(p.output)
        p.close()
        return readBackProblem(read, back) ?? (read.xxh64 === xxh64(bytes) && readFileSync(p.copy).equals(bytes))
      }),
    )
    expect(results).toEqual(Array.from({ length: 3 * MAX_THREADS }, () => true))
  },
)

test('the buffer hasher: xxh64 of what is put in its buffer, in pieces of any size, and again after reset', async () => {
  const hasher = await createBufferHasher(4096)
  const bytes = bytesOf(3 * 4096 + 5)
  const fed = (pieces: number[]) => {
    hasher.reset()
    for (let at = 0, i = 0; at < bytes.length; i++) {
      const piece = bytes.subarray(at, at + Math.min(pieces[i % pieces.length]!, 4096))
      hasher.buffer.set(piece)
      hasher.update(piece.length)
      at += piece.length
    }
    return hasher.digest()
  }
  expect([fed([4096]), fed([1, 31, 33, 4093]), fed([7])]).toEqual(Array(3).fill(xxh64(bytes)))
  hasher.reset()
  expect(hasher.digest()).toBe('ef46db3751d8e999')
})
