// The macOS executables' code signatures (src/build/macho.ts, the darwin step of build.ts), on the
// real files: darwin-x64 and darwin-arm64 built once by build.ts (crossExecutable, shared with
// other runs), each read once. Bun 1.4.5 leaves darwin-x64 with Oven's signature of the bare
// runtime (75 page hashes wrong, 11 MB past its codeLimit), so that build.ts signs it again ad
// hoc; darwin-arm64 comes validly signed. Nothing here runs on a Mac: what is checked is the
// signature's own arithmetic, every page hash recomputed.
import { beforeAll, describe, expect, test } from 'bun:test'
import { basename, dirname, join } from 'node:path'
import { checkSignature, signAdHoc } from '../../src/build/macho.ts'
import { crossExecutable, TEST_TIMEOUT_MS } from '../helpers/process.ts'

const CS_ADHOC = 0x2
const CS_LINKER_SIGNED = 0x20000
const LC_SEGMENT_64 = 0x19
const LC_CODE_SIGNATURE = 0x1d

const built = new Map<string, { path: string; bytes: Uint8Array }>()

beforeAll(async () => {
  // Both at once: two builds of about 10 s the first time, then found built.
  await Promise.all(
    ['darwin-x64', 'darwin-arm64'].map(async (target) => {
      const path = await crossExecutable(target)
      built.set(target, { path, bytes: new Uint8Array(await Bun.file(path).arrayBuffer()) })
    }),
  )
}, 2 * TEST_TIMEOUT_MS)

const file = (target: string) => built.get(target)!

/**
 * Where the test finds the load commands it looks at, read here from the Mach-O layout
 * (<mach-o/loader.h>) rather than through the module under test: the offset of the
 * LC_CODE_SIGNATURE command and its dataoff, and the offset of the __LINKEDIT segment command.
 */
function layout(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let signature = 0
  let linkedit = 0
  for (let i = 0, at = 32; i < view.getUint32(16, true); i++, at += view.getUint32(at + 4, true)) {
    const cmd = view.getUint32(at, true)
    if (cmd === LC_CODE_SIGNATURE) signature = at
    if (cmd === LC_SEGMENT_64 && new TextDecoder().decode(bytes.subarray(at + 8, at + 18)) === '__LINKEDIT')
      linkedit = at
  }
  expect(signature * linkedit).toBeGreaterThan(0)
  return { signature, linkedit, dataoff: view.getUint32(signature + 8, true) }
}

/** The offsets where two files differ (compared 64 KiB at a time; at most `limit` of them). */
function differences(a: Uint8Array, b: Uint8Array, limit = 1000): number[] {
  const found: number[] = []
  const length = Math.max(a.length, b.length)
  for (let start = 0; start < length && found.length < limit; start += 65_536) {
    const end = Math.min(start + 65_536, length)
    if (Buffer.compare(a.subarray(start, end), b.subarray(start, end)) === 0) continue
    for (let i = start; i < end && found.length < limit; i++) if (a[i] !== b[i]) found.push(i)
  }
  return found
}

const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && Buffer.compare(a, b) === 0

describe('the darwin executables build.ts makes', () => {
  test.each(['darwin-x64', 'darwin-arm64'])('%s is signed ad hoc, and every page hash checks', (target) => {
    const check = checkSignature(file(target).bytes)
    expect({ ok: check.ok, mismatched: check.mismatched, uncovered: check.uncovered }).toEqual({
      ok: true,
      mismatched: 0,
      uncovered: 0,
    })
    expect(check.flags & CS_ADHOC).toBe(CS_ADHOC)
    // About 100 MB in 4 KiB pages.
    expect(check.pages).toBeGreaterThan(20_000)
  })

  test("darwin-x64 carries build.ts's own signature, and SHA256SUMS is the signed file's", async () => {
    const { path, bytes } = file('darwin-x64')
    const check = checkSignature(bytes)
    // Re-signed (Bun leaves Oven's, identifier "bun", flags 0x10000): the linker's flags, the file's name.
    expect({ flags: check.flags, identifier: check.identifier }).toEqual({
      flags: CS_ADHOC | CS_LINKER_SIGNED,
      identifier: 'reelhouse-darwin-x64',
    })
    expect(bytes.length % 16).toBe(0)
    const sums = await Bun.file(join(dirname(path), 'SHA256SUMS')).text()
    const sum = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
    expect(sums.split('\n')).toContain(`${sum}  ${basename(path)}`)
  })
})

describe('checkSignature and signAdHoc', () => {
  test("one byte changed in a hashed page is found; signed again, the file checks and differs only there and in that page's hash", () => {
    const original = file('darwin-x64').bytes
    const { dataoff } = layout(original)
    // In __TEXT's code, three pages after the load commands' page.
    const at = 3 * 4096 + 123
    const broken = original.slice()
    broken[at]! ^= 0xff
    const check = checkSignature(broken)
    expect({ ok: check.ok, mismatched: check.mismatched, uncovered: check.uncovered }).toEqual({
      ok: false,
      mismatched: 1,
      uncovered: 0,
    })
    expect(check.detail).toStartWith('1 of ')

    const signed = signAdHoc(broken, 'reelhouse-darwin-x64')
    expect(checkSignature(signed).ok).toBe(true)
    expect(signed.length).toBe(original.length)
    const changed = differences(original, signed)
    // The byte itself, then page 3's hash: at most 32 bytes in a row, inside the signature.
    expect(changed[0]).toBe(at)
    const inHash = changed.slice(1)
    expect(inHash.length).toBeGreaterThan(0)
    expect(inHash[0]!).toBeGreaterThanOrEqual(dataoff)
    expect(inHash.at(-1)! - inHash[0]!).toBeLessThan(32)
  })

  test("signing Bun's arm64 file again changes only the signature command's and __LINKEDIT's sizes, and the signature", () => {
    const original = file('darwin-arm64').bytes
    const { signature, linkedit, dataoff } = layout(original)
    // A longer identifier than Bun's ("a.out"): the signature grows, and with it the sizes.
    const signed = signAdHoc(original, 'reelhouse-darwin-arm64 signed again')
    const check = checkSignature(signed)
    expect({ ok: check.ok, identifier: check.identifier, flags: check.flags }).toEqual({
      ok: true,
      identifier: 'reelhouse-darwin-arm64 signed again',
      flags: CS_ADHOC | CS_LINKER_SIGNED,
    })
    expect(signed.length).toBeGreaterThan(original.length)
    expect(signed.length % 16).toBe(0)
    const allowed = (i: number) =>
      (i >= signature + 12 && i < signature + 16) || // datasize
      (i >= linkedit + 32 && i < linkedit + 40) || // vmsize
      (i >= linkedit + 48 && i < linkedit + 56) || // filesize
      i >= dataoff
    expect(differences(original.subarray(0, dataoff), signed.subarray(0, dataoff)).filter((i) => !allowed(i))).toEqual(
      [],
    )
    const view = new DataView(signed.buffer, signed.byteOffset, signed.byteLength)
    expect(view.getUint32(signature + 8, true)).toBe(dataoff)
    expect(dataoff + view.getUint32(signature + 12, true)).toBe(signed.length)
    const fileoff = Number(view.getBigUint64(linkedit + 40, true))
    const filesize = Number(view.getBigUint64(linkedit + 48, true))
    expect(fileoff + filesize).toBe(signed.length)
    // vmsize: filesize rounded up as Bun rounded it in its own file (4 KiB for arm64).
    expect(Number(view.getBigUint64(linkedit + 32, true))).toBe(Math.ceil(filesize / 4096) * 4096)
  })

  test('signing is deterministic, and signing a file build.ts signed gives it back unchanged', () => {
    const { path, bytes } = file('darwin-x64')
    const once = signAdHoc(bytes, basename(path))
    expect(same(once, bytes)).toBe(true)
    expect(same(signAdHoc(bytes, basename(path)), once)).toBe(true)
  })

  test("signing a validly signed file (Bun's arm64) gives a valid file", () => {
    const again = signAdHoc(file('darwin-arm64').bytes, 'reelhouse-darwin-arm64')
    expect(checkSignature(again).ok).toBe(true)
    expect(checkSignature(signAdHoc(again, 'reelhouse-darwin-arm64')).ok).toBe(true)
  })

  test('a file cut short is reported, and refused for signing', () => {
    const bytes = file('darwin-arm64').bytes
    const cut = bytes.subarray(0, bytes.length - 1)
    expect(checkSignature(cut)).toMatchObject({
      ok: false,
      detail: expect.stringContaining('past the end of the file'),
    })
    expect(() => signAdHoc(cut, 'x')).toThrow('not at the end of the file')
  })

  test('anything but a 64-bit little-endian Mach-O is refused with what it is', () => {
    const header = (magic: number, littleEndian = false) => {
      const b = new Uint8Array(64)
      new DataView(b.buffer).setUint32(0, magic, littleEndian)
      return b
    }
    expect(() => checkSignature(header(0xcafebabe))).toThrow('universal (fat) Mach-O')
    expect(() => checkSignature(header(0xfeedface, true))).toThrow('a 32-bit Mach-O')
    expect(() => signAdHoc(new TextEncoder().encode('#!/bin/sh\necho not a Mach-O file at all\n'), 'x')).toThrow(
      'not a Mach-O file',
    )
  })
})
