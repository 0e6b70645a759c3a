// The streaming xxHash64 (src/storage/hash.ts) against Bun's own one-shot xxHash64 with seed 0:
// sizes around xxHash64's 32-byte stripe (where the streaming form keeps a partial stripe between
// two updates), the empty input, and a file larger than one read fed in pieces of odd sizes.
import { beforeAll, expect, test } from 'bun:test'
import { closeSync, openSync, readSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { HASH_CHUNK, createXxh64, hashFile, hashReady, xxh64 } from '../../src/storage/hash.ts'
import { disposableDir } from '../helpers/temp.ts'

beforeAll(() => hashReady)

/** Bytes that differ along their length, so a piece hashed twice or skipped changes the hash. */
function bytesOf(size: number): Uint8Array {
  const out = new Uint8Array(size)
  let x = 0x9e3779b9
  for (let i = 0; i < size; i++) {
    x = (x ^ (x << 13)) >>> 0
    x = (x ^ (x >>> 17)) >>> 0
    x = (x ^ (x << 5)) >>> 0
    out[i] = x & 0xff
  }
  return out
}

const oneShot = (bytes: Uint8Array) => Bun.hash.xxHash64(bytes, 0n).toString(16).padStart(16, '0')

/** The streaming hash of `bytes` fed in pieces of the given sizes, in turn, until all is fed. */
function streamed(bytes: Uint8Array, pieces: number[]): string {
  const hasher = createXxh64()
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = pieces[i % pieces.length]!
    hasher.update(bytes.subarray(at, at + n))
    at += n
  }
  return hasher.digest()
}

const MiB = 1 << 20

test('the streaming hash equals Bun.hash.xxHash64 (seed 0) whole and in odd pieces, around the 32-byte stripe', () => {
  const sizes = [0, 1, 31, 32, 33, MiB + 7]
  const rows = sizes.map((size) => {
    const bytes = bytesOf(size)
    return {
      size,
      whole: createXxh64().update(bytes).digest(),
      pieces: streamed(bytes, [1, 7, 31, 33, 4093, 65537]),
      bytewise: size <= 64 ? streamed(bytes, [1]) : oneShot(bytes),
      xxh64: xxh64(bytes),
    }
  })
  expect(rows).toEqual(
    sizes.map((size) => {
      const h = oneShot(bytesOf(size))
      return { size, whole: h, pieces: h, bytewise: h, xxh64: h }
    }),
  )
  // The published value for the empty input, as 16 lowercase digits.
  expect(rows[0]!.whole).toBe('ef46db3751d8e999')
})

test('a digest leaves the hasher going; hashers interleaved keep their own states', () => {
  const a = bytesOf(1000)
  const b = bytesOf(777).reverse()
  const ha = createXxh64()
  const hb = createXxh64()
  ha.update(a.subarray(0, 100))
  hb.update(b.subarray(0, 500))
  expect(ha.digest()).toBe(oneShot(a.subarray(0, 100)))
  ha.update(a.subarray(100))
  hb.update(b.subarray(500))
  expect([ha.digest(), hb.digest()]).toEqual([oneShot(a), oneShot(b)])
})

test('hashFile reads a file of several chunks by path and by descriptor (from its start, wherever the descriptor is), with its size', async () => {
  using dir = disposableDir()
  const bytes = bytesOf(2 * HASH_CHUNK + 12345)
  const path = join(dir.path, 'clip.mov')
  writeFileSync(path, bytes)
  const seen: number[] = []
  const byPath = await hashFile(path, { onProgress: (n) => seen.push(n) })
  const fd = openSync(path, 'r')
  try {
    readSync(fd, new Uint8Array(100)) // moves the descriptor's own offset
    const byFd = await hashFile(fd, { chunk: 4093 })
    expect({ byPath, byFd }).toEqual({
      byPath: { xxh64: oneShot(bytes), size: bytes.length },
      byFd: { xxh64: oneShot(bytes), size: bytes.length },
    })
  } finally {
    closeSync(fd)
  }
  expect(seen).toEqual([HASH_CHUNK, 2 * HASH_CHUNK, bytes.length])

  const empty = join(dir.path, 'empty')
  writeFileSync(empty, '')
  expect(await hashFile(empty)).toEqual({ xxh64: 'ef46db3751d8e999', size: 0 })
})

test('hashFile by path refuses a link, a folder and a FIFO (it never waits on one), and stops when aborted', async () => {
  using dir = disposableDir()
  const path = join(dir.path, 'clip.mov')
  writeFileSync(path, bytesOf(3 * 4096))
  symlinkSync(path, join(dir.path, 'link.mov'))
  expect(Bun.spawnSync(['mkfifo', join(dir.path, 'fifo')]).exitCode).toBe(0)
  await expect(hashFile(join(dir.path, 'link.mov'))).rejects.toMatchObject({ code: 'ELOOP' })
  await expect(hashFile(dir.path)).rejects.toMatchObject({ code: 'EINVAL' })
  await expect(hashFile(join(dir.path, 'fifo'))).rejects.toMatchObject({ code: 'EINVAL' })
  const stop = new AbortController()
  const reason = new Error('stopped')
  const run = hashFile(path, { chunk: 4096, signal: stop.signal, onProgress: () => stop.abort(reason) })
  await expect(run).rejects.toBe(reason)
})
