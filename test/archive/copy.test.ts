// The archive's copy of one file (storage/archive.ts copyVerifiedTo) on real folders: a byte
// changed in the copy between its write and its read-back fails it, naming both hashes, with
// nothing left at the target and the source as it was; a file in the way is never replaced.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { copyVerifiedTo, sidecarNames } from '../../src/storage/archive.ts'
import { tempDir } from '../helpers/app.ts'

let device: string
let source: string
const BYTES = Buffer.alloc(3 * 1024 * 1024 + 17, 'clip')

beforeEach(() => {
  device = tempDir('reelhouse-archive-copy-')
  mkdirSync(join(device, 'src'))
  source = join(device, 'src', 'A001C003.mov')
  writeFileSync(source, BYTES)
})
afterEach(() => rmSync(device, { recursive: true, force: true }))

const copy = async (target: string, options: Parameters<typeof copyVerifiedTo>[3] = {}) => {
  const fd = openSync(source, 'r')
  try {
    return await copyVerifiedTo(fd, `${device}/`, target, options)
  } finally {
    closeSync(fd)
  }
}

test('a byte changed in the copy before its read-back fails the copy; nothing is left at the target; the source stays', async () => {
  const target = `${device}/vault/show/A001C003.mov`
  const failure = await copy(target, {
    onWritten: (temp) => {
      const bytes = readFileSync(temp)
      bytes[bytes.length >> 1]! ^= 0x01
      writeFileSync(temp, bytes)
    },
  }).then(
    () => 'copied',
    (error: Error) => error.message.replace(/[0-9a-f]{16}/g, 'HASH'),
  )
  expect(failure).toBe('the copy read back has xxh64 HASH, the bytes read from the source HASH')
  expect(readdirSync(`${device}/vault/show`)).toEqual([])
  expect(readFileSync(source).equals(BYTES)).toBe(true)
})

test('the copy: the bytes and their hash; a second copy to the same path takes the file that is there; other bytes there are left and fail it', async () => {
  const target = `${device}/vault/A001C003.mov`
  const first = await copy(target)
  expect(first).toMatchObject({
    size: BYTES.length,
    xxh64: Bun.hash.xxHash64(BYTES, 0n).toString(16).padStart(16, '0'),
    adopted: false,
  })
  expect(readFileSync(target).equals(BYTES)).toBe(true)
  expect((await copy(target)).adopted).toBe(true)
  writeFileSync(target, 'someone else')
  expect(await copy(target).catch((error: NodeJS.ErrnoException) => error.code)).toBe('EEXIST')
  expect(readFileSync(target, 'utf8')).toBe('someone else')
})

test('durable or not, the same checked copy, named in folders made for it', async () => {
  const durable = await copy(`${device}/vault/deep/er/durable.mov`, { durable: true })
  const later = await copy(`${device}/vault/later.mov`)
  expect(durable.xxh64).toBe(later.xxh64)
  expect(readFileSync(`${device}/vault/deep/er/durable.mov`).equals(BYTES)).toBe(true)
  expect(readFileSync(`${device}/vault/later.mov`).equals(BYTES)).toBe(true)
  expect(readdirSync(`${device}/vault`).sort()).toEqual(['deep', 'later.mov'])
  // A purge later rests on the copy that is there: taken as it is, and synced.
  expect((await copy(`${device}/vault/later.mov`, { durable: true })).adopted).toBe(true)
})

test('sidecar names: named after the clip, with a sidecar extension; Sony M01 XML; nothing else', () => {
  expect(
    sidecarNames('C0001.MP4', [
      'C0001.MP4',
      'C0001M01.XML',
      'C0001.xml',
      'C0001.MP4.xmp',
      'C0001.wav',
      'C00011.xml',
      'C0002M01.XML',
      'C0001M01.BIM',
      '.C0001.xml',
    ]),
  ).toEqual(['C0001M01.XML', 'C0001.xml', 'C0001.MP4.xmp'])
})
