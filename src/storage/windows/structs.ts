// The x64 layouts of the NT structures the folder-handle primitives (nt.ts) pass, the spelling
// of a device root in the NT namespace, the checks of a name, times, and the parsing of a
// listing buffer. Pure: written and read here with DataView-free Buffer calls, on any platform,
// so that every byte the Windows calls will see is checked by the tests on Linux too.
//
// Layouts (x64, from winternl.h / ntifs.h; pointers and HANDLEs are 8 bytes, aligned to 8):
// - UNICODE_STRING, 16 bytes: Length u16 @0 (bytes, no final NUL), MaximumLength u16 @2, Buffer ptr @8.
// - OBJECT_ATTRIBUTES, 48 bytes: Length u32 @0 (= 48), RootDirectory HANDLE @8, ObjectName
//   ptr @16, Attributes u32 @24, SecurityDescriptor ptr @32, SecurityQualityOfService ptr @40.
// - FILE_RENAME_INFORMATION and FILE_LINK_INFORMATION: ReplaceIfExists BOOLEAN @0 (a ULONG of
//   flags in their Ex forms), RootDirectory HANDLE @8, FileNameLength u32 @16 (bytes), FileName @20.
// - FILE_ID_BOTH_DIR_INFORMATION: see parseDirectoryBuffer.
// - IO_STATUS_BLOCK, 16 bytes: Status/Pointer @0, Information u64 @8.
import { PathError, RULES } from '../paths.ts'
import { refusal } from './status.ts'

/** An NT HANDLE: a pointer-sized number (small in practice; bun:ffi passes it as i64_fast). */
export type Handle = number

export const UNICODE_STRING_SIZE = 16
export const OBJECT_ATTRIBUTES_SIZE = 48
export const IO_STATUS_BLOCK_SIZE = 16
/** Where the name starts in FILE_RENAME_INFORMATION and FILE_LINK_INFORMATION. */
export const RENAME_NAME_AT = 20
/** sizeof(FILE_RENAME_INFORMATION) with its one-WCHAR name and padding: the least Length a driver accepts. */
export const RENAME_INFORMATION_SIZE = 24
/** A UNICODE_STRING counts bytes in 16 bits: 32,767 UTF-16 units at most. */
export const MAX_NAME_BYTES = 0xfffe

/** OBJECT_ATTRIBUTES.Attributes: names compare without regard to case, as Win32 opens them. */
export const OBJ_CASE_INSENSITIVE = 0x40

/** Writes a UNICODE_STRING over `byteLength` bytes of UTF-16 at `address` into `into` (16 bytes). */
export function writeUnicodeString(into: Buffer, byteLength: number, address: number | bigint): void {
  if (byteLength > MAX_NAME_BYTES || byteLength % 2)
    throw new RangeError(`a UNICODE_STRING cannot hold ${byteLength} bytes`)
  into.fill(0, 0, UNICODE_STRING_SIZE)
  into.writeUInt16LE(byteLength, 0)
  into.writeUInt16LE(byteLength, 2)
  into.writeBigUInt64LE(BigInt(address), 8)
}

/** Writes an OBJECT_ATTRIBUTES naming the UNICODE_STRING at `nameAddress`, relative to `root` (0: an absolute NT path), into `into` (48 bytes). */
export function writeObjectAttributes(
  into: Buffer,
  root: Handle,
  nameAddress: number | bigint,
  attributes: number,
): void {
  into.fill(0, 0, OBJECT_ATTRIBUTES_SIZE)
  into.writeUInt32LE(OBJECT_ATTRIBUTES_SIZE, 0)
  into.writeBigInt64LE(BigInt(root), 8)
  into.writeBigUInt64LE(BigInt(nameAddress), 16)
  into.writeUInt32LE(attributes, 24)
}

/**
 * Writes a FILE_RENAME_INFORMATION (or FILE_LINK_INFORMATION: the same layout) for `name` in
 * the folder `root` into `into`; returns the Length to pass: the name's end, and never less
 * than the structure's own size.
 */
export function writeRenameInformation(into: Buffer, replace: boolean, root: Handle, name: string): number {
  const bytes = Buffer.byteLength(name, 'utf16le')
  const length = Math.max(RENAME_INFORMATION_SIZE, RENAME_NAME_AT + bytes)
  if (into.length < length) throw new RangeError('the buffer is too small for the name')
  into.fill(0, 0, length)
  into.writeUInt8(replace ? 1 : 0, 0)
  into.writeBigInt64LE(BigInt(root), 8)
  into.writeUInt32LE(bytes, 16)
  into.write(name, RENAME_NAME_AT, 'utf16le')
  return length
}

// ---------------------------------------------------------------------------------------------
// Names and roots.

/** The longest name a Windows file system keeps (NTFS, exFAT, ReFS): 255 UTF-16 units. */
export const MAX_COMPONENT = 255

/**
 * Checks that `name` is one name: not empty, not `.` or `..`, without `\` or `/` (which NT
 * would read as a path: a relative open cannot climb with `..`, but it would walk down), without
 * `:` (NT reads `file:stream` as a data stream of `file`, a second content under one name) or
 * NUL. Throws EINVAL (ENAMETOOLONG past 255 units) before any call is made.
 */
export function checkName(name: string, syscall: string): void {
  const bad =
    name === ''
      ? 'an empty name'
      : name === '.' || name === '..'
        ? `the name ${name}`
        : /[\\/]/.test(name)
          ? 'a name with \\ or / (one name is expected, not a path)'
          : name.includes(':')
            ? 'a name with : (a data stream on Windows)'
            : name.includes('\0')
              ? 'a name with a NUL character'
              : undefined
  if (bad) throw refusal('EINVAL', `${bad} is not accepted`, syscall, name)
  if (name.length > MAX_COMPONENT)
    throw refusal('ENAMETOOLONG', `a name is at most ${MAX_COMPONENT} characters on Windows`, syscall, name)
}

/**
 * Checks a name about to be created (a new file or folder, the new name of a rename or a link):
 * `checkName`, and the Win32 rules of paths.ts. NT itself creates `CON`, `clip.` or `a ` without
 * complaint, and no Win32 program (Explorer, Premiere, our own `fs` calls) could open them
 * again: the names Windows drops a final dot or space from, its device names, its forbidden
 * characters. Throws EINVAL with paths.ts's reason.
 */
export function checkNewName(name: string, syscall: string): void {
  checkName(name, syscall)
  try {
    // The rules of a path apply name by name; under a drive's root, the path is just this name.
    RULES.win32.cleanPath(`C:\\${name}`)
  } catch (error) {
    if (!(error instanceof PathError)) throw error
    throw refusal('EINVAL', error.message.replace(/\.$/, ''), syscall, name)
  }
}

/**
 * A device root (`C:\media\`, `\\nas\share\x\`, `/` read as `\`) in the NT namespace:
 * `\??\C:\media`, `\??\UNC\nas\share\x`. The path is cleaned by paths.ts's Windows rules first
 * (so `..` is resolved, and `C:folder`, `\folder`, relative paths, `\\?\`/`\\.\` device paths
 * and names Windows would alter are refused with EINVAL). The final `\` is dropped, except on
 * a drive's or a share's own root: `\??\C:` names the volume (the device), `\??\C:\` its root
 * folder. `\??\` is the caller's DOS device folder, where its drive letters and mapped drives are.
 */
export function ntRootPath(path: string): string {
  let clean: string
  try {
    clean = RULES.win32.cleanPath(path)
  } catch (error) {
    if (!(error instanceof PathError)) throw error
    throw refusal('EINVAL', error.message.replace(/\.$/, ''), 'NtCreateFile', path)
  }
  const unc = clean.startsWith('\\\\')
  const [root, rest] = unc ? splitAt(clean, 2, 2) : splitAt(clean, 0, 1)
  const full = `\\??\\${unc ? `UNC\\${root.slice(2)}` : root}${rest.replace(/\\$/, '')}`
  if (Buffer.byteLength(full, 'utf16le') > MAX_NAME_BYTES)
    throw refusal('ENAMETOOLONG', 'the path is too long', 'NtCreateFile', path)
  return full
}

/** `path` cut after the `\` that ends its `count`-th name from `from`: [`C:\`, `media\`], [`\\nas\share\`, `x`]. */
function splitAt(path: string, from: number, count: number): [string, string] {
  let at = from
  for (let i = 0; i < count; i++) at = path.indexOf('\\', at) + 1
  return [path.slice(0, at), path.slice(at)]
}

// ---------------------------------------------------------------------------------------------
// Reparse points, attributes, times.

/** FILE_ATTRIBUTE_* values that matter here. */
export const FILE_ATTRIBUTE = {
  READONLY: 0x1,
  HIDDEN: 0x2,
  SYSTEM: 0x4,
  DIRECTORY: 0x10,
  ARCHIVE: 0x20,
  DEVICE: 0x40,
  NORMAL: 0x80,
  REPARSE_POINT: 0x400,
} as const

/**
 * The name-surrogate bit of a reparse tag (IsReparseTagNameSurrogate in ntifs.h): the reparse
 * point stands for another named entity, elsewhere: symbolic links (0xA000000C), junctions and
 * mount points (0xA0000003), WSL's links (0xA000001D). Those are the links never followed.
 * Other reparse points are the file itself, stored differently, and are worked on like any
 * file: OneDrive and cloud placeholders (0x9000xxxA), deduplicated files (0x80000013), WIM and
 * container overlays. Refusing every reparse point would refuse OneDrive-synced or deduplicated
 * media.
 */
export const NAME_SURROGATE = 0x20000000

/** True when a reparse tag is a link to something elsewhere (the bit above). */
export const isNameSurrogate = (tag: number): boolean => ((tag >>> 0) & NAME_SURROGATE) !== 0

/** Reparse tags of entries that are not files at all: WSL's AF_UNIX socket, fifo, character and block devices. */
const SPECIAL_TAGS = new Set([0x80000023, 0x80000024, 0x80000025, 0x80000026])

export type EntryKind = 'file' | 'dir' | 'link' | 'other'

/**
 * What an entry is, from its attributes and reparse tag (0 when it has none): 'link' for a name
 * surrogate (a folder link or junction too: it is never entered), 'dir', 'other' for a device
 * or one of WSL's special files, else 'file' (a cloud placeholder or a deduplicated file too).
 */
export function kindOf(attributes: number, tag: number): EntryKind {
  if (attributes & FILE_ATTRIBUTE.REPARSE_POINT) {
    if (isNameSurrogate(tag)) return 'link'
    if (SPECIAL_TAGS.has(tag >>> 0)) return 'other'
  }
  if (attributes & FILE_ATTRIBUTE.DIRECTORY) return 'dir'
  if (attributes & FILE_ATTRIBUTE.DEVICE) return 'other'
  return 'file'
}

/** 1970-01-01 in FILETIME units: 100 ns since 1601-01-01. */
export const UNIX_EPOCH_FILETIME = 116_444_736_000_000_000n

/**
 * A FILETIME (100 ns since 1601) as milliseconds since 1970, with the fraction. Computed in
 * whole milliseconds and a remainder: the count itself (about 1.3e17) is past the 2^53 a double
 * holds exactly.
 */
export function fileTimeToMs(time: bigint): number {
  const since = time - UNIX_EPOCH_FILETIME
  const whole = since / 10_000n
  const rest = since - whole * 10_000n
  return Number(whole) + Number(rest) / 10_000
}

/** Milliseconds since 1970 (a fraction kept to 100 ns) as a FILETIME; throws RangeError before 1601 (0 means "leave unchanged" to the calls). */
export function msToFileTime(ms: number): bigint {
  if (!Number.isFinite(ms)) throw new RangeError(`${ms} is not a time`)
  const whole = Math.floor(ms)
  const time = BigInt(whole) * 10_000n + BigInt(Math.round((ms - whole) * 10_000)) + UNIX_EPOCH_FILETIME
  if (time <= 0n) throw new RangeError(`${new Date(ms).toISOString()} is before 1601, which Windows cannot keep`)
  return time
}

// ---------------------------------------------------------------------------------------------
// Listing.

/**
 * FILE_ID_BOTH_DIR_INFORMATION (FileIdBothDirectoryInformation = 37), one entry per record,
 * each at an 8-byte boundary: NextEntryOffset u32 @0 (0 on the last), FileIndex u32 @4,
 * CreationTime @8, LastAccessTime @16, LastWriteTime @24, ChangeTime @32 (FILETIMEs, i64),
 * EndOfFile i64 @40, AllocationSize i64 @48, FileAttributes u32 @56, FileNameLength u32 @60
 * (bytes), EaSize u32 @64 (the reparse tag instead, when FILE_ATTRIBUTE_REPARSE_POINT is set),
 * ShortNameLength i8 @68, ShortName WCHAR[12] @70, FileId i64 @96, FileName @104.
 */
export const DIR_ENTRY = {
  next: 0,
  creation: 8,
  access: 16,
  write: 24,
  change: 32,
  size: 40,
  attributes: 56,
  nameLength: 60,
  eaSize: 64,
  fileId: 96,
  name: 104,
} as const

/** One listed entry: its name, what it is, the file id (the `ino` Bun's stat gives on Windows), size and times. */
export type ListEntry = {
  name: string
  kind: EntryKind
  ino: bigint
  size: number
  mtimeMs: number
  birthtimeMs: number
  attributes: number
  /** The reparse tag; 0 when the entry is no reparse point. */
  reparseTag: number
}

/** The entries of the first `length` bytes of a listing buffer, in their order, without `.` and `..`. */
export function parseDirectoryBuffer(buffer: Buffer, length = buffer.length): ListEntry[] {
  const entries: ListEntry[] = []
  let at = 0
  for (;;) {
    if (at + DIR_ENTRY.name > length)
      throw new RangeError(`a listing entry at ${at} runs past the ${length} bytes returned`)
    const nameLength = buffer.readUInt32LE(at + DIR_ENTRY.nameLength)
    if (at + DIR_ENTRY.name + nameLength > length)
      throw new RangeError(`a listing name at ${at} runs past the ${length} bytes returned`)
    const name = buffer.toString('utf16le', at + DIR_ENTRY.name, at + DIR_ENTRY.name + nameLength)
    if (name !== '.' && name !== '..') {
      const attributes = buffer.readUInt32LE(at + DIR_ENTRY.attributes)
      const reparseTag = attributes & FILE_ATTRIBUTE.REPARSE_POINT ? buffer.readUInt32LE(at + DIR_ENTRY.eaSize) : 0
      entries.push({
        name,
        kind: kindOf(attributes, reparseTag),
        ino: buffer.readBigUInt64LE(at + DIR_ENTRY.fileId),
        size: Number(buffer.readBigInt64LE(at + DIR_ENTRY.size)),
        mtimeMs: fileTimeToMs(buffer.readBigInt64LE(at + DIR_ENTRY.write)),
        birthtimeMs: fileTimeToMs(buffer.readBigInt64LE(at + DIR_ENTRY.creation)),
        attributes,
        reparseTag,
      })
    }
    const next = buffer.readUInt32LE(at + DIR_ENTRY.next)
    if (next === 0) return entries
    at += next
  }
}

/** The 128-bit file id of FILE_ID_INFO (16 bytes, little-endian) as 32 hex digits, the high half first. */
export function id128Of(bytes: Buffer): string {
  return (
    bytes.readBigUInt64LE(8).toString(16).padStart(16, '0') + bytes.readBigUInt64LE(0).toString(16).padStart(16, '0')
  )
}
