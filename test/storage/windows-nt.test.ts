// The Windows folder-handle primitives (src/storage/windows/): first their pure parts on Linux
// (NTSTATUS to errno, the NT spelling of a device root, the names refused before any call, the
// bytes of every structure passed, the parsing of a listing, times), then every primitive for
// real, on Windows' calls as Wine implements them: one run of windows-nt.wine.ts inside the
// Windows executable, whose one JSON answer is compared whole.
//
// What Wine 8 cannot show, and is tested here as a decision instead: the refusal of a name
// surrogate (CreateSymbolicLinkW reports success and makes nothing, so no link or junction can
// be made to open), the second open of a cloud placeholder, and POSIX deletes
// (FileDispositionInformationEx answers STATUS_NOT_IMPLEMENTED: every removal under Wine is
// the 'classic' fallback). Wine also lets a handle opened for reading set times, which Windows
// refuses, and its own opens move a file's access time to the present.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { crossExecutable } from '../helpers/process.ts'
import { driveCFolder, WINE, wineEnv, wineMissing, winePrefix } from '../helpers/wine.ts'
import { openRoot, ntSupported } from '../../src/storage/windows/nt.ts'
import { errnoCodeOf, ntError, ntstatusHex, ntSuccess, STATUS } from '../../src/storage/windows/status.ts'
import {
  checkName,
  checkNewName,
  fileTimeToMs,
  id128Of,
  isNameSurrogate,
  kindOf,
  msToFileTime,
  ntRootPath,
  parseDirectoryBuffer,
  writeObjectAttributes,
  writeRenameInformation,
  writeUnicodeString,
} from '../../src/storage/windows/structs.ts'

/** The error `fn` throws as { code, message }, or 'ok'. */
function thrown(fn: () => unknown): unknown {
  try {
    fn()
    return 'ok'
  } catch (error) {
    const e = error as NodeJS.ErrnoException
    return { code: e.code, message: e.message }
  }
}
const codeOf = (fn: () => unknown) => {
  const t = thrown(fn)
  return typeof t === 'string' ? t : (t as { code: string }).code
}

describe('NTSTATUS as Node-style errors', () => {
  test('each status the primitives meet has its errno code; any other is EIO', () => {
    const codes = Object.fromEntries(Object.entries(STATUS).map(([name, status]) => [name, errnoCodeOf(status)]))
    expect(codes).toEqual({
      SUCCESS: 'EIO',
      NO_MORE_FILES: 'EIO',
      BUFFER_OVERFLOW: 'EIO',
      NOT_IMPLEMENTED: 'EIO',
      INVALID_INFO_CLASS: 'EIO',
      INVALID_PARAMETER: 'EIO',
      NOT_SUPPORTED: 'EIO',
      END_OF_FILE: 'EIO',
      OBJECT_NAME_NOT_FOUND: 'ENOENT',
      OBJECT_PATH_NOT_FOUND: 'ENOENT',
      NO_SUCH_FILE: 'ENOENT',
      OBJECT_NAME_COLLISION: 'EEXIST',
      NOT_A_DIRECTORY: 'ENOTDIR',
      FILE_IS_A_DIRECTORY: 'EISDIR',
      STOPPED_ON_SYMLINK: 'ELOOP',
      REPARSE_POINT_ENCOUNTERED: 'ELOOP',
      SHARING_VIOLATION: 'EBUSY',
      DELETE_PENDING: 'EBUSY',
      DIRECTORY_NOT_EMPTY: 'ENOTEMPTY',
      NOT_SAME_DEVICE: 'EXDEV',
      ACCESS_DENIED: 'EACCES',
      CANNOT_DELETE: 'EPERM',
      OBJECT_NAME_INVALID: 'EINVAL',
      OBJECT_PATH_SYNTAX_BAD: 'EINVAL',
      DISK_FULL: 'ENOSPC',
      MEDIA_WRITE_PROTECTED: 'EROFS',
      NAME_TOO_LONG: 'ENAMETOOLONG',
    })
    // bun:ffi returns an NTSTATUS as a signed 32-bit number: read the same either way.
    expect([errnoCodeOf(0xc0000034 | 0), errnoCodeOf(0xc0000034), ntstatusHex(0xc0000034 | 0)]).toEqual([
      'ENOENT',
      'ENOENT',
      '0xC0000034',
    ])
  })

  test('success and information codes succeed; warnings and errors fail', () => {
    const cases = {
      success: 0,
      pending: 0x103,
      information: 0x40000000,
      stoppedOnSymlink: 0x8000002d | 0,
      noMoreFiles: 0x80000006,
      error: 0xc0000034 | 0,
    }
    expect(Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, ntSuccess(v)]))).toEqual({
      success: true,
      pending: true,
      information: true,
      stoppedOnSymlink: false,
      noMoreFiles: false,
      error: false,
    })
  })

  test('an error is shaped as fs shapes its own, with the NTSTATUS; a sharing violation says a program holds the file', () => {
    const e = ntError(0xc0000034 | 0, 'NtCreateFile', 'clip.mov')
    expect(e).toBeInstanceOf(Error)
    expect({
      message: e.message,
      code: e.code,
      errno: e.errno,
      syscall: e.syscall,
      path: e.path,
      ntstatus: e.ntstatus,
    }).toEqual({
      message: "ENOENT: no such file or directory (NTSTATUS 0xC0000034), NtCreateFile 'clip.mov'",
      code: 'ENOENT',
      errno: -2,
      syscall: 'NtCreateFile',
      path: 'clip.mov',
      ntstatus: 0xc0000034,
    })
    expect(ntError(STATUS.SHARING_VIOLATION, 'NtCreateFile', 'clip.mov').message).toBe(
      "EBUSY: the file is in use by another program (sharing violation) (NTSTATUS 0xC0000043), NtCreateFile 'clip.mov'",
    )
    expect(ntError(0xc0000185, 'NtReadFile', '<handle>')).toMatchObject({
      code: 'EIO',
      errno: -5,
      message: "EIO: i/o error (NTSTATUS 0xC0000185), NtReadFile '<handle>'",
    })
  })
})

describe('roots and names', () => {
  test('a device root in the NT namespace: \\??\\ before a drive, \\??\\UNC\\ before a share; the final \\ kept only on a drive or share root', () => {
    const spelled = (paths: string[]) =>
      Object.fromEntries(
        paths.map((p) => {
          try {
            return [p, ntRootPath(p)]
          } catch (error) {
            return [p, `${(error as NodeJS.ErrnoException).code}: ${(error as Error).message}`]
          }
        }),
      )
    expect(
      spelled([
        'C:\\media\\',
        'C:\\',
        'd:/Media/Show',
        'C:\\media\\..\\other\\',
        '\\\\nas\\share\\',
        '\\\\nas\\share',
        '\\\\nas\\share\\x\\y\\',
        'media\\',
        'C:media',
        '\\media',
        '\\\\?\\C:\\media\\',
        '\\\\.\\C:\\media',
        '\\??\\C:\\media',
        'C:\\con\\',
        '\\\\nas\\share\\..\\x',
      ]),
    ).toEqual({
      'C:\\media\\': '\\??\\C:\\media',
      'C:\\': '\\??\\C:\\',
      'd:/Media/Show': '\\??\\D:\\Media\\Show',
      'C:\\media\\..\\other\\': '\\??\\C:\\other',
      '\\\\nas\\share\\': '\\??\\UNC\\nas\\share\\',
      '\\\\nas\\share': '\\??\\UNC\\nas\\share\\',
      '\\\\nas\\share\\x\\y\\': '\\??\\UNC\\nas\\share\\x\\y',
      'media\\':
        "EINVAL: EINVAL: The path must be absolute: C:\\folder\\ or \\\\server\\share\\folder\\, NtCreateFile 'media\\'",
      'C:media':
        "EINVAL: EINVAL: A path like C:folder is relative to the current folder of its drive: give it from the drive's root (C:\\folder\\), NtCreateFile 'C:media'",
      '\\media':
        "EINVAL: EINVAL: A path starting with \\ or / lies on the current drive, whichever that is: give the drive (C:\\folder\\) or the share (\\\\server\\share\\folder\\), NtCreateFile '\\media'",
      '\\\\?\\C:\\media\\':
        "EINVAL: EINVAL: Device paths (\\\\?\\ and \\\\.\\) are not accepted: give the path as C:\\folder\\ or \\\\server\\share\\folder\\, NtCreateFile '\\\\?\\C:\\media\\'",
      '\\\\.\\C:\\media':
        "EINVAL: EINVAL: Device paths (\\\\?\\ and \\\\.\\) are not accepted: give the path as C:\\folder\\ or \\\\server\\share\\folder\\, NtCreateFile '\\\\.\\C:\\media'",
      '\\??\\C:\\media':
        "EINVAL: EINVAL: Device paths (\\\\?\\ and \\\\.\\) are not accepted: give the path as C:\\folder\\ or \\\\server\\share\\folder\\, NtCreateFile '\\??\\C:\\media'",
      'C:\\con\\':
        'EINVAL: EINVAL: "con" is a device name on Windows (CON, PRN, AUX, NUL, COM0-9, LPT0-9), not a file or folder, NtCreateFile \'C:\\con\\\'',
      '\\\\nas\\share\\..\\x':
        "EINVAL: EINVAL: .. would climb above the share \\\\nas\\share\\: a UNC path stays within its share, NtCreateFile '\\\\nas\\share\\..\\x'",
    })
  })

  test('every name is one name, refused before any call; a name to create must also be one Win32 can open', () => {
    const names = [
      'clip.mov',
      'Ünïcødé 🎬.mov',
      '',
      '.',
      '..',
      'a\\b',
      'a/b',
      '..\\x',
      'clip.mov:stream',
      'a\0b',
      'x'.repeat(255),
      'x'.repeat(256),
      'CON',
      'nul.txt',
      'clip.',
      'clip ',
      'a?b',
      'COM1',
    ]
    const outcomes = (check: (name: string, syscall: string) => void) =>
      Object.fromEntries(names.map((n) => [n, codeOf(() => check(n, 'NtCreateFile'))]))
    const opened = {
      'clip.mov': 'ok',
      'Ünïcødé 🎬.mov': 'ok',
      '': 'EINVAL',
      '.': 'EINVAL',
      '..': 'EINVAL',
      'a\\b': 'EINVAL',
      'a/b': 'EINVAL',
      '..\\x': 'EINVAL',
      'clip.mov:stream': 'EINVAL',
      'a\0b': 'EINVAL',
      ['x'.repeat(255)]: 'ok',
      ['x'.repeat(256)]: 'ENAMETOOLONG',
    }
    // NT itself opens these; they are refused only where a name is made.
    const win32Only = { CON: 'ok', 'nul.txt': 'ok', 'clip.': 'ok', 'clip ': 'ok', 'a?b': 'ok', COM1: 'ok' }
    expect(outcomes(checkName)).toEqual({ ...opened, ...win32Only })
    expect(outcomes(checkNewName)).toEqual({
      ...opened,
      ...Object.fromEntries(Object.keys(win32Only).map((k) => [k, 'EINVAL'])),
    })
    expect(thrown(() => checkNewName('clip.', 'NtSetInformationFile'))).toEqual({
      code: 'EINVAL',
      message:
        'EINVAL: The name "clip." ends with a dot or a space, which Windows drops: it would name another file than written, NtSetInformationFile \'clip.\'',
    })
    expect(thrown(() => checkName('..', 'NtCreateFile'))).toEqual({
      code: 'EINVAL',
      message: "EINVAL: the name .. is not accepted, NtCreateFile '..'",
    })
  })

  test('on Linux the module loads nothing and every call throws ENOSYS', () => {
    expect(ntSupported()).toBe(false)
    expect(thrown(() => openRoot('C:\\media\\'))).toEqual({
      code: 'ENOSYS',
      message: `ENOSYS: the Windows folder handle calls run on 64-bit Windows only, not ${process.platform} ${process.arch}, NtCreateFile 'C:\\media\\'`,
    })
  })
})

describe('structures, byte by byte (x64)', () => {
  const hex = (b: Buffer) => b.toString('hex').match(/.{16}/g)
  test('UNICODE_STRING: lengths in bytes twice, then the buffer address at 8', () => {
    const b = Buffer.alloc(16, 0xff)
    writeUnicodeString(b, 10, 0x1122334455667788n)
    expect(hex(b)).toEqual(['0a000a0000000000', '8877665544332211'])
    expect(() => writeUnicodeString(b, 0x10000, 0)).toThrow(RangeError)
    expect(() => writeUnicodeString(b, 3, 0)).toThrow(RangeError)
  })

  test('OBJECT_ATTRIBUTES: length 48, root handle at 8, name at 16, attributes at 24, no security descriptor', () => {
    const b = Buffer.alloc(48, 0xff)
    writeObjectAttributes(b, 0x1a4, 0x7ff612345678, 0x40)
    expect(hex(b)).toEqual([
      '3000000000000000',
      'a401000000000000',
      '78563412f67f0000',
      '4000000000000000',
      '0000000000000000',
      '0000000000000000',
    ])
  })

  test('FILE_RENAME_INFORMATION: no-replace byte, root at 8, name length at 16, the name inline at 20; never shorter than 24 bytes', () => {
    const b = Buffer.alloc(64, 0xff)
    expect(writeRenameInformation(b, false, 0x2c, 'a')).toBe(24)
    expect(hex(b.subarray(0, 24))).toEqual(['0000000000000000', '2c00000000000000', '0200000061000000'])
    expect(writeRenameInformation(b, true, 0x2c, 'é🎬.mov')).toBe(20 + 14)
    expect(b.subarray(0, 34).toString('hex')).toBe(
      `01000000000000002c00000000000000${'0e000000'}${Buffer.from('é🎬.mov', 'utf16le').toString('hex')}`,
    )
    expect(() => writeRenameInformation(Buffer.alloc(24), false, 1, 'long name')).toThrow(RangeError)
  })

  test('FILE_ID_INFO: the 128-bit id as 32 hex digits, the high half first', () => {
    const id = Buffer.alloc(16)
    id.writeBigUInt64LE(0x0005000000035d95n, 0)
    id.writeBigUInt64LE(0x1n, 8)
    expect(id128Of(id)).toBe('00000000000000010005000000035d95')
  })
})

describe('listing', () => {
  /** One FILE_ID_BOTH_DIR_INFORMATION record, written at the offsets of ntifs.h (not the module's constants). */
  function record(e: {
    name: string
    attributes: number
    ea?: number
    id: bigint
    size?: bigint
    write?: bigint
    creation?: bigint
    short?: string
  }): Buffer {
    const name = Buffer.from(e.name, 'utf16le')
    const b = Buffer.alloc(Math.ceil((104 + name.length) / 8) * 8)
    b.writeBigInt64LE(e.creation ?? 0n, 8)
    b.writeBigInt64LE(e.write ?? 0n, 24)
    b.writeBigInt64LE(e.size ?? 0n, 40)
    b.writeBigInt64LE(((e.size ?? 0n) + 4095n) & ~4095n, 48)
    b.writeUInt32LE(e.attributes, 56)
    b.writeUInt32LE(name.length, 60)
    b.writeUInt32LE(e.ea ?? 0, 64)
    if (e.short) {
      b.writeInt8(e.short.length * 2, 68)
      b.write(e.short, 70, 'utf16le')
    }
    b.writeBigInt64LE(e.id, 96)
    name.copy(b, 104)
    return b
  }
  /** Records chained by NextEntryOffset, the last one 0. */
  function chain(records: Buffer[]): Buffer {
    records.forEach((r, i) => r.writeUInt32LE(i < records.length - 1 ? r.length : 0, 0))
    return Buffer.concat(records)
  }
  const T = 132_000_000_000_000_000n // 2019-04-17T18:40:00Z as a FILETIME
  const ms = 1_555_526_400_000

  test('names, kinds, ids, sizes and times; . and .. left out; a reparse tag read from EaSize only on reparse points', () => {
    const buffer = chain([
      record({ name: '.', attributes: 0x10, id: 5n }),
      record({ name: '..', attributes: 0x10, id: 6n }),
      record({
        name: 'clip.mov',
        attributes: 0x20,
        id: 0x0001000000001234n,
        size: 5_000_000_000n,
        write: T + 12_345n,
        creation: T,
        short: 'CLIP.MOV',
      }),
      record({ name: 'Long name of a take.mov', attributes: 0x20, ea: 96, id: 11n, short: 'LONGNA~1.MOV' }),
      record({ name: 'Show', attributes: 0x10, id: 12n }),
      record({ name: 'symlink.mov', attributes: 0x420, ea: 0xa000000c, id: 13n }),
      record({ name: 'junction', attributes: 0x410, ea: 0xa0000003, id: 14n }),
      record({ name: 'OneDrive take.mov', attributes: 0x420 | 0x400000, ea: 0x9000001a, id: 15n }),
      record({ name: 'OneDrive folder', attributes: 0x410, ea: 0x9000701a, id: 16n }),
      record({ name: 'dedup.mov', attributes: 0x620, ea: 0x80000013, id: 17n }),
      record({ name: 'wsl.sock', attributes: 0x420, ea: 0x80000023, id: 18n }),
      record({ name: 'é🎬', attributes: 0x20, id: 19n }),
    ])
    const entries = parseDirectoryBuffer(buffer)
    expect(entries.map(({ name, kind, ino, reparseTag }) => ({ name, kind, ino, reparseTag }))).toEqual([
      { name: 'clip.mov', kind: 'file', ino: 0x0001000000001234n, reparseTag: 0 },
      { name: 'Long name of a take.mov', kind: 'file', ino: 11n, reparseTag: 0 },
      { name: 'Show', kind: 'dir', ino: 12n, reparseTag: 0 },
      { name: 'symlink.mov', kind: 'link', ino: 13n, reparseTag: 0xa000000c },
      { name: 'junction', kind: 'link', ino: 14n, reparseTag: 0xa0000003 },
      { name: 'OneDrive take.mov', kind: 'file', ino: 15n, reparseTag: 0x9000001a },
      { name: 'OneDrive folder', kind: 'dir', ino: 16n, reparseTag: 0x9000701a },
      { name: 'dedup.mov', kind: 'file', ino: 17n, reparseTag: 0x80000013 },
      { name: 'wsl.sock', kind: 'other', ino: 18n, reparseTag: 0x80000023 },
      { name: 'é🎬', kind: 'file', ino: 19n, reparseTag: 0 },
    ])
    expect(entries[0]).toEqual({
      name: 'clip.mov',
      kind: 'file',
      ino: 0x0001000000001234n,
      size: 5_000_000_000,
      mtimeMs: ms + 1.2345,
      birthtimeMs: ms,
      attributes: 0x20,
      reparseTag: 0,
    })
  })

  test('only the bytes the call returned are read; a record running past them is an error, not a guess', () => {
    const one = chain([record({ name: 'a.mov', attributes: 0x20, id: 1n })])
    const two = chain([
      record({ name: 'a.mov', attributes: 0x20, id: 1n }),
      record({ name: 'b.mov', attributes: 0x20, id: 2n }),
    ])
    expect(parseDirectoryBuffer(Buffer.concat([one, Buffer.alloc(200, 0xff)]), one.length).map((e) => e.name)).toEqual([
      'a.mov',
    ])
    expect(() => parseDirectoryBuffer(two, two.length - 8)).toThrow(RangeError)
    expect(() => parseDirectoryBuffer(one, 100)).toThrow(RangeError)
  })

  test('a link is a name surrogate: the decision behind ELOOP (Wine cannot make a link to open)', () => {
    const tags = {
      symlink: 0xa000000c,
      mountPoint: 0xa0000003,
      wslLink: 0xa000001d,
      cloud: 0x9000001a,
      dedup: 0x80000013,
      appExecLink: 0x8000001b,
      none: 0,
    }
    expect(Object.fromEntries(Object.entries(tags).map(([k, t]) => [k, isNameSurrogate(t)]))).toEqual({
      symlink: true,
      mountPoint: true,
      wslLink: true,
      cloud: false,
      dedup: false,
      appExecLink: false,
      none: false,
    })
    // The tag counts only with the reparse attribute; a folder link is a link, not a folder.
    expect([kindOf(0x20, 0xa000000c), kindOf(0x410, 0xa000000c), kindOf(0x10, 0), kindOf(0x40, 0)]).toEqual([
      'file',
      'link',
      'dir',
      'other',
    ])
  })
})

test('times: FILETIME (100 ns since 1601) and milliseconds since 1970, exact to 100 ns where a double is', () => {
  expect(fileTimeToMs(116_444_736_000_000_000n)).toBe(0)
  expect(fileTimeToMs(132_000_000_000_000_000n + 1n)).toBe(1_555_526_400_000.0001)
  expect(fileTimeToMs(0n)).toBe(-11_644_473_600_000)
  expect(msToFileTime(0)).toBe(116_444_736_000_000_000n)
  // The double nearest to .4567 ms is .456787… ms: to the nearest 100 ns, .4568.
  expect(msToFileTime(1_600_000_000_123.4567)).toBe(116_444_736_000_000_000n + 16_000_000_001_234_568n)
  expect(msToFileTime(1_600_000_000_123.25)).toBe(116_444_736_000_000_000n + 16_000_000_001_232_500n)
  expect(fileTimeToMs(msToFileTime(1_600_000_000_123.4567))).toBe(1_600_000_000_123.4567)
  expect(msToFileTime(-1000)).toBe(116_444_735_990_000_000n)
  expect(() => msToFileTime(-11_644_473_600_000)).toThrow(RangeError)
  expect(() => msToFileTime(Number.NaN)).toThrow(RangeError)
})

// ---------------------------------------------------------------------------------------------
// Under Wine.

if (wineMissing) console.log(`[skip] test/storage/windows-nt.test.ts (the Wine part): ${wineMissing}`)

/** The first start of Wine's server, or a first build of the Windows executable, under the load of a full run. */
const STEP_MS = 120_000

describe.skipIf(wineMissing !== undefined)('the primitives on Windows calls, under Wine', () => {
  let binary: string
  let prefix: string
  let folder: string
  let windowsFolder: string

  beforeAll(async () => {
    ;[binary, prefix] = await Promise.all([crossExecutable('windows-x64'), winePrefix()])
    ;[folder, windowsFolder] = driveCFolder(prefix, 'nt')
    // Made here: 400 files take milliseconds on Linux, a second through Wine.
    mkdirSync(join(folder, 'many'))
    for (let i = 0; i < 400; i++)
      writeFileSync(join(folder, 'many', `${String(i).padStart(3, '0')}-${'x'.repeat(116)}`), '')
  }, 300_000)
  afterAll(() => {
    if (folder) rmSync(folder, { recursive: true, force: true })
  })

  test(
    'every case of the primitives, in one Wine process',
    async () => {
      const started = performance.now()
      const child = Bun.spawn([WINE!, binary, 'windows-nt.wine.ts', windowsFolder], {
        cwd: import.meta.dir,
        env: { ...process.env, ...wineEnv(prefix, { BUN_BE_BUN: '1' }) },
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
        timeout: STEP_MS,
      })
      const [out, err, code] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ])
      if (code !== 0) throw new Error(`windows-nt.wine.ts exited with ${code}:\n${out}${err}`)
      const r = JSON.parse(out)
      console.log(
        `windows-nt.wine.ts: ${Math.round(performance.now() - started)} ms in all, ${r.ms} ms of it in the script`,
      )

      /** A pair where the handle must say what Bun says by path. */
      const same = (pair: { bun: unknown }) => ({ mine: pair.bun, bun: pair.bun })
      const MTIME = 1_600_000_000_123.4567
      expect(r).toEqual({
        openRoot: { file: 'ENOTDIR', missing: 'ENOENT', relative: 'EINVAL', verbatim: 'EINVAL', forwardSlashes: 'ok' },
        // dev is the volume serial, ino the file index, as Bun's stat gives them; the 128-bit id's
        // low half is the same index, and FILE_ID_INFO's 64-bit serial has the same low half.
        identity: {
          root: same(r.identity.root),
          sub: same(r.identity.sub),
          file: {
            ...same(r.identity.file),
            low64OfId128: r.identity.file.bun.ino,
            volumeLow32: r.identity.file.bun.dev,
          },
        },
        open: {
          subOtherCase: 'ok',
          fileOtherCase: { ino: true, text: 'hello' },
          fileAsFolder: 'ENOTDIR',
          folderAsFile: 'EISDIR',
          missing: 'ENOENT',
          names: {
            '..': 'EINVAL',
            '.': 'EINVAL',
            '': 'EINVAL',
            'sub\\x': 'EINVAL',
            'sub/x': 'EINVAL',
            'f.txt:stream': 'EINVAL',
            '..\\f.txt': 'EINVAL',
          },
        },
        // errno is Node's on Windows (libuv's UV_ENOENT), as fs errors there carry it.
        error: {
          code: 'ENOENT',
          errno: -4058,
          syscall: 'NtCreateFile',
          path: 'missing',
          ntstatus: 0xc0000034,
          message: "ENOENT: no such file or directory (NTSTATUS 0xC0000034), NtCreateFile 'missing'",
        },
        create: {
          first: 3,
          again: 'EEXIST',
          againOtherCase: 'EEXIST',
          content: 'new',
          device: 'EINVAL',
          trailingDot: 'EINVAL',
        },
        mkdir: { first: 0, isFolder: true, again: 'EEXIST' },
        rename: {
          ontoExisting: 'EEXIST',
          ontoExistingOtherCase: 'EEXIST',
          targetUntouched: 'hello',
          intoSubByHandle: 'ok',
          after: [false, 'new'],
          folder: 'ok',
          folderAfter: [false, true],
          missing: 'ENOENT',
          toDeviceName: 'EINVAL',
        },
        link: { first: 'ok', again: 'EEXIST', nlink: 2, sameFile: true, folder: 'EISDIR' },
        // 'classic': Wine has no POSIX deletes, so each removal here took the fallback (and the
        // read-only file had its attribute cleared first).
        remove: {
          file: 'classic',
          fileGone: false,
          emptyFolder: 'classic',
          emptyFolderGone: false,
          fullFolder: 'ENOTEMPTY',
          fullFolderKept: true,
          fileAsFolder: 'ENOTDIR',
          folderAsFile: 'EISDIR',
          readOnlyBefore: true,
          readOnly: 'classic',
          readOnlyGone: false,
          missing: 'ENOENT',
        },
        list: {
          root: same(r.list.root),
          sub: same(r.list.sub),
          many: { count: 400, sameNames: true, sampleIds: [true, true, true] },
          again: r.list.root.bun.length,
        },
        stat: { file: same(r.stat.file), folder: same(r.stat.folder) },
        setTimes: {
          file: { atimeMs: 1_700_000_000_000.25, mtimeMs: MTIME },
          fileByBun: MTIME,
          folder: 'ok',
          folderByBun: MTIME,
        },
        pin: {
          held: { rename: 'EBUSY', remove: 'EBUSY', renameByPath: 'EBUSY', secondPin: 'ok' },
          renamedOnceClosed: 'ok',
          unpinned: 'ok',
        },
        locked: {
          held: {
            forDelete: 'EBUSY',
            message:
              "EBUSY: the file is in use by another program (sharing violation) (NTSTATUS 0xC0000043), NtCreateFile 'locked.mov'",
            forRead: 'data',
            forWrite: 'EBUSY',
            remove: 'EBUSY',
            rename: 'EBUSY',
          },
          removedOnceClosed: 'classic',
          gone: false,
        },
        followsTheFolder: { created: 'ok', where: [false, true] },
        ms: expect.any(Number),
      })
      // The listings are not empty pairs: what was made is there, with the kinds of its entries.
      expect(r.list.root.bun.map((e: { name: string; kind: string }) => `${e.name}:${e.kind}`)).toEqual([
        'a:dir',
        'f.txt:file',
        'full:dir',
        'locked.mov:file',
        'many:dir',
        'pinned:dir',
        'sub:dir',
      ])
      expect(r.list.sub.bun.map((e: { name: string }) => e.name)).toEqual(['f-link.txt', 'made', 'moved.txt'])
    },
    STEP_MS,
  )
})
