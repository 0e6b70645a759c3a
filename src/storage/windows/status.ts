// NTSTATUS codes as Node-style errors, so that code written against dirfd.ts's errors (`code`
// 'ENOENT', 'EEXIST', 'ELOOP'...) reads the Windows primitives' failures the same way. Pure: it
// runs, and is tested, on every platform.
//
// The NT calls return their NTSTATUS, so nothing is read from a thread-local error after the
// fact (as GetLastError would be, with the runtime's own calls in between). An NTSTATUS is a
// 32-bit value: the two top bits give its severity (0b11 error, 0b10 warning, 0b01 information,
// 0b00 success); bun:ffi hands it over as a signed 32-bit number, so `>>> 0` gives the code as
// documented (0xC0000034), and a negative number is an error or a warning.
import { getSystemErrorMap } from 'node:util'
import { constants } from 'node:os'

/** The NTSTATUS codes the primitives meet, by their names in ntstatus.h. */
export const STATUS = {
  SUCCESS: 0x00000000,
  /** Warning: a listing has no (more) entries. */
  NO_MORE_FILES: 0x80000006,
  /** Warning: the buffer was too small for all of the answer (a volume label, say); the fixed part is there. */
  BUFFER_OVERFLOW: 0x80000005,
  STOPPED_ON_SYMLINK: 0x8000002d,
  NOT_IMPLEMENTED: 0xc0000002,
  INVALID_INFO_CLASS: 0xc0000003,
  INVALID_PARAMETER: 0xc000000d,
  NO_SUCH_FILE: 0xc000000f,
  END_OF_FILE: 0xc0000011,
  ACCESS_DENIED: 0xc0000022,
  OBJECT_NAME_INVALID: 0xc0000033,
  OBJECT_NAME_NOT_FOUND: 0xc0000034,
  OBJECT_NAME_COLLISION: 0xc0000035,
  OBJECT_PATH_NOT_FOUND: 0xc000003a,
  OBJECT_PATH_SYNTAX_BAD: 0xc000003b,
  SHARING_VIOLATION: 0xc0000043,
  DELETE_PENDING: 0xc0000056,
  DISK_FULL: 0xc000007f,
  MEDIA_WRITE_PROTECTED: 0xc00000a2,
  FILE_IS_A_DIRECTORY: 0xc00000ba,
  NOT_SUPPORTED: 0xc00000bb,
  NOT_SAME_DEVICE: 0xc00000d4,
  DIRECTORY_NOT_EMPTY: 0xc0000101,
  NOT_A_DIRECTORY: 0xc0000103,
  NAME_TOO_LONG: 0xc0000106,
  CANNOT_DELETE: 0xc0000121,
  REPARSE_POINT_ENCOUNTERED: 0xc000050b,
} as const

/** The code as ntstatus.h writes it: an unsigned 32-bit number (bun:ffi returns it signed). */
export const ntstatusCode = (status: number): number => status >>> 0

/** NT_SUCCESS: success and information codes (the top bit clear); warnings and errors are failures here. */
export const ntSuccess = (status: number): boolean => (status | 0) >= 0

/** 0xC0000034, as a message shows a code. */
export const ntstatusHex = (status: number): string =>
  `0x${ntstatusCode(status).toString(16).toUpperCase().padStart(8, '0')}`

/** The errno name each NTSTATUS the primitives expect stands for; every other code is EIO. */
const CODES: ReadonlyMap<number, string> = new Map([
  [STATUS.OBJECT_NAME_NOT_FOUND, 'ENOENT'],
  [STATUS.OBJECT_PATH_NOT_FOUND, 'ENOENT'],
  [STATUS.NO_SUCH_FILE, 'ENOENT'],
  [STATUS.OBJECT_NAME_COLLISION, 'EEXIST'],
  [STATUS.NOT_A_DIRECTORY, 'ENOTDIR'],
  [STATUS.FILE_IS_A_DIRECTORY, 'EISDIR'],
  [STATUS.STOPPED_ON_SYMLINK, 'ELOOP'],
  [STATUS.REPARSE_POINT_ENCOUNTERED, 'ELOOP'],
  [STATUS.SHARING_VIOLATION, 'EBUSY'],
  [STATUS.DELETE_PENDING, 'EBUSY'],
  [STATUS.DIRECTORY_NOT_EMPTY, 'ENOTEMPTY'],
  [STATUS.NOT_SAME_DEVICE, 'EXDEV'],
  [STATUS.ACCESS_DENIED, 'EACCES'],
  [STATUS.CANNOT_DELETE, 'EPERM'],
  [STATUS.OBJECT_NAME_INVALID, 'EINVAL'],
  [STATUS.OBJECT_PATH_SYNTAX_BAD, 'EINVAL'],
  [STATUS.DISK_FULL, 'ENOSPC'],
  [STATUS.MEDIA_WRITE_PROTECTED, 'EROFS'],
  [STATUS.NAME_TOO_LONG, 'ENAMETOOLONG'],
])

/** The errno name of an NTSTATUS: 'ENOENT' for 0xC0000034; 'EIO' for a code not expected. */
export const errnoCodeOf = (status: number): string => CODES.get(ntstatusCode(status)) ?? 'EIO'

/**
 * What the message says after the code, where Node's words would mislead: a sharing violation
 * is a program holding the file (Premiere, Resolve, an antivirus scan), not a busy device, and
 * a pending delete is a file removed while another handle still has it open.
 */
const WORDS: ReadonlyMap<number, string> = new Map([
  [STATUS.SHARING_VIOLATION, 'the file is in use by another program (sharing violation)'],
  [STATUS.DELETE_PENDING, 'the file is being deleted and another program still has it open (delete pending)'],
  [STATUS.CANNOT_DELETE, 'the file cannot be deleted (read-only, or mapped by a program)'],
])

const systemErrors = getSystemErrorMap()
/** Node's errno number of each code on this platform (negative, as `fs` errors carry it: -2 on Linux, -4058 on Windows). */
const errnoNumbers = new Map<string, number>([...systemErrors].map(([n, [code]]) => [code, n]))
const errnoNumber = (code: string): number =>
  errnoNumbers.get(code) ?? -((constants.errno as Record<string, number | undefined>)[code] ?? 5)
const errnoText = (code: string): string => systemErrors.get(errnoNumber(code))?.[1] ?? code

/** A Node-style error made by the primitives; `ntstatus` is the code the NT call returned (undefined: refused before any call). */
export type NtError = NodeJS.ErrnoException & { ntstatus?: number }

/**
 * The error of a failed NT call, shaped as `fs` shapes its own ("ENOENT: no such file or
 * directory (NTSTATUS 0xC0000034), NtCreateFile 'name'"): `code`, `errno`, `syscall` (the NT
 * call), `path` (the name relative to the folder handle, or the root's path), `ntstatus`.
 */
export function ntError(status: number, syscall: string, path: string): NtError {
  const code = errnoCodeOf(status)
  const words = WORDS.get(ntstatusCode(status)) ?? errnoText(code)
  const message = `${code}: ${words} (NTSTATUS ${ntstatusHex(status)}), ${syscall} '${path}'`
  return Object.assign(new Error(message), {
    code,
    errno: errnoNumber(code),
    syscall,
    path,
    ntstatus: ntstatusCode(status),
  })
}

/** An error found before any call (a bad name, a relative root): `code` such as EINVAL, the reason in words. */
export function refusal(code: string, reason: string, syscall: string, path: string): NtError {
  return Object.assign(new Error(`${code}: ${reason}, ${syscall} '${path}'`), {
    code,
    errno: errnoNumber(code),
    syscall,
    path,
  })
}
