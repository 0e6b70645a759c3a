// Folder handles on Windows: what dirfd.ts gives on Linux and macOS (openat, mkdirat,
// renameat2(RENAME_NOREPLACE), linkat, unlinkat, fstat, readdir, futimens), made with the NT
// calls of ntdll.dll through bun:ffi. Every name is one name, looked up in a folder held open
// (OBJECT_ATTRIBUTES.RootDirectory), so a folder swapped for a link or moved between a check
// and a use cannot send the work elsewhere: the handle follows the folder it was opened on.
//
// Why the NT calls and not kernel32's: they take a folder handle and one name (CreateFileW takes
// only whole paths), they say what failed in the NTSTATUS they return (nothing is read from
// GetLastError after other code of the runtime ran), and the Win32 rename by handle
// (SetFileInformationByHandle(FileRenameInfo)) is refused with error 87 under Wine, where the
// NT form works. Go's os.Root (internal/syscall/windows/at_windows.go) and Rust's std
// (remove_dir_all's open_link_no_reparse) work the same way.
//
// Links: every open is made with FILE_OPEN_REPARSE_POINT, so the last name is opened itself,
// never followed, and then its reparse tag is read: a name surrogate (a symbolic link, a
// junction, a mount point) is refused with ELOOP. Other reparse points (OneDrive and other cloud
// placeholders, deduplicated files) are the file itself and are opened once more, through the
// handle, without the flag, so that the driver owning them serves their data (see `opened`).
// OBJ_DONT_REPARSE is not used: with one name per call and the flag above, no name is parsed
// but the last, which is opened, not followed; and older Windows refuse the flag with
// STATUS_INVALID_PARAMETER (Rust's std retries without it).
//
// Sharing: handles share read, write and delete with other programs, except where asked not to:
// a folder opened with `pin` refuses others the right to rename or delete it while held (what
// cap-std does to every folder it holds), and a program holding a file without
// FILE_SHARE_DELETE (an NLE, say) makes our open for deleting or renaming it fail with EBUSY,
// "in use by another program". Nothing here retries: the caller decides whether to wait.
//
// Shares (\\nas\media\): SMB2 has no root handle, so Windows sends the server the folder's path
// with the name, and the server resolves it again at each call: there the relative opens are as
// race-free as the server is (Samba's default `wide links = no` keeps them inside the share),
// while the sharing modes, `pin`, are enforced by the server for every client. (From the
// protocol; not tried here.)
//
// Memory: the structures passed hold the addresses of other buffers (the name inside the
// UNICODE_STRING, that inside OBJECT_ATTRIBUTES). A buffer only its address points to could be
// collected before the call reads it, so all of them are allocated once per module (per thread:
// a Worker loads its own copy), held for good, and their addresses taken once; FFI calls are
// synchronous, so one set is never used by two calls at once.
//
// Only loaded, and only usable, on 64-bit Windows: importing this module elsewhere makes no call
// (ntdll.dll is opened at the first use), and every call throws ENOSYS there.
//
// What Wine 8 (the tests' Windows) cannot show: it has no FileDispositionInformationEx (it
// answers 0xC0000002, so every delete there takes the classic form), CreateSymbolicLinkW reports success
// and creates nothing (so ELOOP on a name surrogate is tested on the decision, `isNameSurrogate`),
// and GetFinalPathNameByHandleW is stale after a rename (nothing here uses it).
import { dlopen, FFIType, ptr } from 'bun:ffi'
import {
  checkName,
  checkNewName,
  FILE_ATTRIBUTE,
  fileTimeToMs,
  UNIX_EPOCH_FILETIME,
  type Handle,
  id128Of,
  IO_STATUS_BLOCK_SIZE,
  isNameSurrogate,
  type ListEntry,
  MAX_NAME_BYTES,
  msToFileTime,
  ntRootPath,
  OBJ_CASE_INSENSITIVE,
  OBJECT_ATTRIBUTES_SIZE,
  parseDirectoryBuffer,
  UNICODE_STRING_SIZE,
  writeObjectAttributes,
  writeRenameInformation,
  writeUnicodeString,
} from './structs.ts'
import { type NtError, ntError, ntSuccess, ntstatusCode, ntstatusHex, refusal, STATUS } from './status.ts'

export type { Handle, ListEntry }
export type { NtError }

// Access rights (winnt.h). A folder's FILE_LIST_DIRECTORY is a file's FILE_READ_DATA, and so on.
const FILE_READ_DATA = 0x1 // FILE_LIST_DIRECTORY
const FILE_TRAVERSE = 0x20
const FILE_READ_ATTRIBUTES = 0x80
const FILE_WRITE_ATTRIBUTES = 0x100
const DELETE = 0x10000
const SYNCHRONIZE = 0x100000
/** STANDARD_RIGHTS_READ | FILE_READ_DATA | FILE_READ_ATTRIBUTES | FILE_READ_EA | SYNCHRONIZE. */
const FILE_GENERIC_READ = 0x120089
/** STANDARD_RIGHTS_WRITE | FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_WRITE_EA | FILE_APPEND_DATA | SYNCHRONIZE. */
const FILE_GENERIC_WRITE = 0x120116

const FILE_SHARE_READ = 0x1
const FILE_SHARE_WRITE = 0x2
const FILE_SHARE_DELETE = 0x4
const SHARE_ALL = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE

// CreateDisposition.
const FILE_OPEN = 1
const FILE_CREATE = 2

// CreateOptions.
const FILE_DIRECTORY_FILE = 0x1
const FILE_SYNCHRONOUS_IO_NONALERT = 0x20
const FILE_NON_DIRECTORY_FILE = 0x40
const FILE_OPEN_FOR_BACKUP_INTENT = 0x4000
const FILE_OPEN_REPARSE_POINT = 0x200000
/**
 * On every open: calls on the handle wait for their end (no STATUS_PENDING to wait on), and a
 * folder can be opened (NT's form of FILE_FLAG_BACKUP_SEMANTICS; it bypasses access checks only
 * for a process that has enabled SeBackupPrivilege).
 */
const ALWAYS = FILE_SYNCHRONOUS_IO_NONALERT | FILE_OPEN_FOR_BACKUP_INTENT

// FILE_INFORMATION_CLASS and FS_INFORMATION_CLASS values.
const FileBasicInformation = 4
const FileInternalInformation = 6
const FileRenameInformation = 10
const FileLinkInformation = 11
const FileDispositionInformation = 13
const FileNetworkOpenInformation = 34
const FileAttributeTagInformation = 35
const FileIdBothDirectoryInformation = 37
const FileIdInformation = 59
const FileDispositionInformationEx = 64
const FileFsVolumeInformation = 1

/** FILE_DISPOSITION_DELETE | FILE_DISPOSITION_POSIX_SEMANTICS | FILE_DISPOSITION_IGNORE_READONLY_ATTRIBUTE. */
const DISPOSITION_POSIX = 0x1 | 0x2 | 0x10
/**
 * The answers of FileDispositionInformationEx where it cannot be used, and FileDispositionInformation
 * is: before Windows 10 1607 (the class) or 1809 (the read-only flag), on FAT and exFAT, on SMB
 * servers without POSIX deletes, under Wine 8 (STATUS_NOT_IMPLEMENTED).
 */
const CLASSIC_DELETE_WHEN = new Set<number>([
  STATUS.NOT_IMPLEMENTED,
  STATUS.INVALID_PARAMETER,
  STATUS.NOT_SUPPORTED,
  STATUS.INVALID_INFO_CLASS,
])
/** FILE_ATTRIBUTE_VALID_SET_FLAGS: the attributes FileBasicInformation may set (not DIRECTORY, not REPARSE_POINT). */
const SETTABLE_ATTRIBUTES = 0x31a7
/** Answers of FileIdInformation where the file system or Windows (before 8) does not give 128-bit ids. */
const NO_FILE_ID_WHEN = CLASSIC_DELETE_WHEN

const LIST_BUFFER_BYTES = 64 * 1024

const { i32, u32, u8, i64_fast, ptr: P } = FFIType
/** ntdll's calls, as winternl.h declares them; every one returns an NTSTATUS. */
const DECLARATIONS = {
  // (FileHandle*, DesiredAccess, ObjectAttributes*, IoStatusBlock*, AllocationSize*, FileAttributes,
  //  ShareAccess, CreateDisposition, CreateOptions, EaBuffer*, EaLength)
  NtCreateFile: { args: [P, u32, P, P, P, u32, u32, u32, u32, P, u32], returns: i32 },
  NtClose: { args: [i64_fast], returns: i32 },
  // (FileHandle, IoStatusBlock*, FileInformation*, Length, FileInformationClass)
  NtQueryInformationFile: { args: [i64_fast, P, P, u32, u32], returns: i32 },
  NtSetInformationFile: { args: [i64_fast, P, P, u32, u32], returns: i32 },
  NtQueryVolumeInformationFile: { args: [i64_fast, P, P, u32, u32], returns: i32 },
  // (FileHandle, Event, ApcRoutine, ApcContext, IoStatusBlock*, FileInformation*, Length,
  //  FileInformationClass, ReturnSingleEntry, FileName*, RestartScan)
  NtQueryDirectoryFile: { args: [i64_fast, P, P, P, P, P, u32, u32, u8, P, u8], returns: i32 },
  // (FileHandle, Event, ApcRoutine, ApcContext, IoStatusBlock*, Buffer*, Length, ByteOffset*, Key*)
  NtReadFile: { args: [i64_fast, P, P, P, P, P, u32, P, P], returns: i32 },
  NtWriteFile: { args: [i64_fast, P, P, P, P, P, u32, P, P], returns: i32 },
} as const

type Address = number
type InfoCall = (handle: Handle, iosb: Address, info: Address, length: number, infoClass: number) => number
type IoCall = (
  handle: Handle,
  event: null,
  apc: null,
  context: null,
  iosb: Address,
  data: Uint8Array,
  length: number,
  offset: Address,
  key: null,
) => number
type Calls = {
  NtCreateFile(
    handleOut: Address,
    access: number,
    attributes: Address,
    iosb: Address,
    allocation: null,
    fileAttributes: number,
    share: number,
    disposition: number,
    options: number,
    ea: null,
    eaLength: number,
  ): number
  NtClose(handle: Handle): number
  NtQueryInformationFile: InfoCall
  NtSetInformationFile: InfoCall
  NtQueryVolumeInformationFile: InfoCall
  NtQueryDirectoryFile(
    handle: Handle,
    event: null,
    apc: null,
    context: null,
    iosb: Address,
    info: Address,
    length: number,
    infoClass: number,
    single: number,
    name: null,
    restart: number,
  ): number
  NtReadFile: IoCall
  NtWriteFile: IoCall
}

/** A buffer held for the module's life, with its address. */
type Held = { buffer: Buffer; at: Address }
type Scratch = {
  handle: Held
  iosb: Held
  unicode: Held
  attributes: Held
  /** A name or a root path in UTF-16 (with room for a final NUL no call needs). */
  name: Held
  /** FILE_*_INFORMATION in and out, a rename's new name included (at most 255 units). */
  info: Held
  list: Held
  offset: Held
}

let calls: Calls | undefined
let scratch: Scratch | undefined

/** True where these calls can run: 64-bit Windows. */
export const ntSupported = (): boolean =>
  process.platform === 'win32' && (process.arch === 'x64' || process.arch === 'arm64')

function held(size: number): Held {
  const buffer = Buffer.alloc(size)
  return { buffer, at: ptr(buffer) }
}

function nt(syscall: string, path: string): { c: Calls; s: Scratch } {
  if (!ntSupported())
    throw refusal(
      'ENOSYS',
      `the Windows folder handle calls run on 64-bit Windows only, not ${process.platform} ${process.arch}`,
      syscall,
      path,
    )
  calls ??= dlopen('ntdll.dll', DECLARATIONS).symbols as unknown as Calls
  scratch ??= {
    handle: held(8),
    iosb: held(IO_STATUS_BLOCK_SIZE),
    unicode: held(UNICODE_STRING_SIZE),
    attributes: held(OBJECT_ATTRIBUTES_SIZE),
    name: held(MAX_NAME_BYTES + 2),
    info: held(1024),
    list: held(LIST_BUFFER_BYTES),
    offset: held(8),
  }
  return { c: calls, s: scratch }
}

// ---------------------------------------------------------------------------------------------
// Opening.

type OpenSpec = { access: number; share: number; disposition: number; options: number; fileAttributes?: number }

/**
 * NtCreateFile of `name` relative to `root` (a folder handle; 0 with an absolute NT path), as
 * `spec` says, names compared without regard to case; `shown` names it in an error.
 */
function create(root: Handle, name: string, spec: OpenSpec, shown: string): Handle {
  const { c, s } = nt('NtCreateFile', shown)
  const bytes = s.name.buffer.write(name, 0, 'utf16le')
  writeUnicodeString(s.unicode.buffer, bytes, s.name.at)
  writeObjectAttributes(s.attributes.buffer, root, s.unicode.at, OBJ_CASE_INSENSITIVE)
  const status = c.NtCreateFile(
    s.handle.at,
    spec.access | SYNCHRONIZE,
    s.attributes.at,
    s.iosb.at,
    null,
    spec.fileAttributes ?? 0,
    spec.share,
    spec.disposition,
    spec.options | ALWAYS,
    null,
    0,
  )
  if (!ntSuccess(status)) throw ntError(status, 'NtCreateFile', shown)
  return Number(s.handle.buffer.readBigInt64LE(0))
}

/** NtQueryInformationFile of `infoClass` into the scratch buffer, `length` bytes; throws on failure. */
function query(h: Handle, infoClass: number, length: number, shown: string): Buffer {
  const status = tryQuery(h, infoClass, length, shown)
  if (!ntSuccess(status)) throw ntError(status, 'NtQueryInformationFile', shown)
  return nt('NtQueryInformationFile', shown).s.info.buffer
}

function tryQuery(h: Handle, infoClass: number, length: number, shown: string): number {
  const { c, s } = nt('NtQueryInformationFile', shown)
  s.info.buffer.fill(0, 0, length)
  return c.NtQueryInformationFile(h, s.iosb.at, s.info.at, length, infoClass)
}

/** NtSetInformationFile of `infoClass` with the first `length` bytes of the scratch buffer (written by `fill`): its NTSTATUS. */
function trySet(h: Handle, infoClass: number, fill: (into: Buffer) => number, shown: string): number {
  const { c, s } = nt('NtSetInformationFile', shown)
  const length = fill(s.info.buffer)
  return c.NtSetInformationFile(h, s.iosb.at, s.info.at, length, infoClass)
}

/** Attributes and reparse tag (0 without one): FileAttributeTagInformation, 8 bytes. */
function attributeTag(h: Handle, shown: string): { attributes: number; tag: number } {
  const b = query(h, FileAttributeTagInformation, 8, shown)
  const attributes = b.readUInt32LE(0)
  return { attributes, tag: attributes & FILE_ATTRIBUTE.REPARSE_POINT ? b.readUInt32LE(4) : 0 }
}

/**
 * `h`, just opened with FILE_OPEN_REPARSE_POINT, checked: a name surrogate is closed and refused
 * (ELOOP); another reparse point is opened again without the flag, so that its driver (cloud
 * files, deduplication) serves it as the file it stands for rather than as its stored stub;
 * anything else is `h` itself. The second open goes through the handle, not the name (an empty
 * name relative to a handle is the same file, as ReOpenFile does): nothing put in the name's
 * place meanwhile can be reached.
 */
function opened(h: Handle, spec: OpenSpec, shown: string): Handle {
  let tag: number
  try {
    tag = attributeTag(h, shown).tag
  } catch (error) {
    closeHandle(h)
    throw error
  }
  if (!tag) return h
  if (isNameSurrogate(tag)) {
    closeHandle(h)
    throw refusal('ELOOP', `a link (reparse tag ${ntstatusHex(tag)}) is not followed`, 'NtCreateFile', shown)
  }
  // Held by an anchor that asks only to read attributes (which no sharing mode restricts) while
  // `h` is closed: `h` itself could deny the new handle what it asks for (a file opened to write
  // that denies others writing would refuse its own second open).
  let anchor: Handle
  try {
    anchor = create(
      h,
      '',
      { access: FILE_READ_ATTRIBUTES, share: SHARE_ALL, disposition: FILE_OPEN, options: FILE_OPEN_REPARSE_POINT },
      shown,
    )
  } finally {
    closeHandle(h)
  }
  try {
    return create(
      anchor,
      '',
      { ...spec, disposition: FILE_OPEN, options: spec.options & ~FILE_OPEN_REPARSE_POINT },
      shown,
    )
  } finally {
    closeHandle(anchor)
  }
}

/** Closes a handle. A failure (a handle already closed: a bug of ours) is ignored, as closing a descriptor is in dirfd.ts. */
export function closeHandle(h: Handle): void {
  nt('NtClose', '').c.NtClose(h)
}

/** Sharing of a folder handle: others may read, write, and (unless pinned) rename or delete it. */
const folderShare = (pin: boolean | undefined) => (pin ? FILE_SHARE_READ | FILE_SHARE_WRITE : SHARE_ALL)
/** A folder handle: list it, open and create in it, read its attributes (and set its times, with `writeAttributes`). */
const folderAccess = (writeAttributes: boolean | undefined) =>
  FILE_READ_DATA | FILE_TRAVERSE | FILE_READ_ATTRIBUTES | (writeAttributes ? FILE_WRITE_ATTRIBUTES : 0)

export type FolderOptions = {
  /**
   * Open without FILE_SHARE_DELETE: while the handle is held, nobody (this process neither) can
   * rename or delete the folder, so a path through it keeps meaning this folder; the open fails
   * with EBUSY when another handle already has it open for renaming or deleting.
   */
  pin?: boolean
  /** Open with FILE_WRITE_ATTRIBUTES too, for setTimes on the folder. */
  writeAttributes?: boolean
}

/**
 * A device root folder, from its Win32 path (`C:\media\`, `\\nas\share\x\`; see ntRootPath for
 * the spelling and what is refused): ENOTDIR when it is a file, ELOOP when the folder named is
 * itself a link or junction. The names before the last are resolved as Windows resolves them
 * (a folder link there is followed): the path is the device as configured, like the path a
 * Linux device root is opened by.
 */
export function openRoot(path: string, options: FolderOptions = {}): Handle {
  const spec = {
    access: folderAccess(options.writeAttributes),
    share: folderShare(options.pin),
    disposition: FILE_OPEN,
    options: FILE_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT,
  }
  return opened(create(0, ntRootPath(path), spec, path), spec, path)
}

/** The folder `name` in the folder `dir`, never through a link (ELOOP; ENOTDIR for a file or a file link). */
export function openDir(dir: Handle, name: string, options: FolderOptions = {}): Handle {
  checkName(name, 'NtCreateFile')
  const spec = {
    access: folderAccess(options.writeAttributes),
    share: folderShare(options.pin),
    disposition: FILE_OPEN,
    options: FILE_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT,
  }
  return opened(create(dir, name, spec, name), spec, name)
}

export type FileMode = 'read' | 'write' | 'delete'
export type FileOptions = {
  /** Refuse others write access while held (and fail with EBUSY if some handle has it): a file nobody is writing stays so. */
  denyWrite?: boolean
  /** Refuse others renaming or deleting it while held (EBUSY if some handle already may). */
  denyDelete?: boolean
}

const FILE_ACCESS: Record<FileMode, number> = {
  read: FILE_GENERIC_READ,
  write: FILE_GENERIC_WRITE | FILE_READ_ATTRIBUTES,
  // The pre-flight of a move across devices: fails with EBUSY now, not after the copy, when a
  // program holds the file without FILE_SHARE_DELETE.
  delete: DELETE | FILE_READ_ATTRIBUTES,
}

const fileShare = (o: FileOptions) =>
  FILE_SHARE_READ | (o.denyWrite ? 0 : FILE_SHARE_WRITE) | (o.denyDelete ? 0 : FILE_SHARE_DELETE)

/** The file `name` in `dir`, for `mode`, never through a link (ELOOP; EISDIR for a folder). */
export function openFile(dir: Handle, name: string, mode: FileMode, options: FileOptions = {}): Handle {
  checkName(name, 'NtCreateFile')
  const spec = {
    access: FILE_ACCESS[mode],
    share: fileShare(options),
    disposition: FILE_OPEN,
    options: FILE_NON_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT,
  }
  return opened(create(dir, name, spec, name), spec, name)
}

/**
 * The file at the absolute Win32 `path`, for reading, held so that nobody may write, rename or
 * delete it meanwhile (EBUSY when a handle already may write it): what a child process (ffmpeg,
 * which cannot be handed a descriptor of ours on Windows) is given by path while this handle
 * keeps that path naming this very file. The last name is not followed when it is a link (ELOOP).
 */
export function holdByPath(path: string): Handle {
  const spec = {
    access: FILE_GENERIC_READ,
    share: FILE_SHARE_READ,
    disposition: FILE_OPEN,
    options: FILE_NON_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT,
  }
  return opened(create(0, ntRootPath(path), spec, path), spec, path)
}

/** A new file `name` in `dir`, open for writing: EEXIST when anything (a link too) has the name, EINVAL for a name Win32 could not open. */
export function createFile(dir: Handle, name: string): Handle {
  checkNewName(name, 'NtCreateFile')
  return create(
    dir,
    name,
    {
      access: FILE_GENERIC_WRITE | FILE_READ_ATTRIBUTES,
      share: SHARE_ALL,
      disposition: FILE_CREATE,
      options: FILE_NON_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT,
      fileAttributes: FILE_ATTRIBUTE.NORMAL,
    },
    name,
  )
}

/**
 * A new folder `name` in `dir`: EEXIST when the name is taken. Returns the new folder's handle
 * (close it), unlike mkdirat: the folder is held from its creation, so no second lookup by
 * name can meet something put in its place meanwhile.
 */
export function mkdir(dir: Handle, name: string, options: FolderOptions = {}): Handle {
  checkNewName(name, 'NtCreateFile')
  return create(
    dir,
    name,
    {
      access: folderAccess(options.writeAttributes),
      share: folderShare(options.pin),
      disposition: FILE_CREATE,
      options: FILE_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT,
    },
    name,
  )
}

// ---------------------------------------------------------------------------------------------
// Renaming, linking, removing.

/** `name` in `dir`, opened for renaming or deleting it: the entry itself (a link is never followed), file or folder. */
function openEntry(dir: Handle, name: string, access: number, options = 0): Handle {
  return create(
    dir,
    name,
    {
      access: access | FILE_READ_ATTRIBUTES,
      share: SHARE_ALL,
      disposition: FILE_OPEN,
      options: options | FILE_OPEN_REPARSE_POINT,
    },
    name,
  )
}

/** Throws for the NTSTATUS of a rename or a link of `name` to `toName`, with `dest` as `fs.rename` errors have it. */
function failed(status: number, name: string, toName: string): never {
  throw Object.assign(ntError(status, 'NtSetInformationFile', name), { dest: toName })
}

/**
 * Renames `name` in `dir` to `toName` in `toDir` unless `toName` exists (EEXIST; never replaces).
 * Native on NTFS, FAT, exFAT and SMB alike (ReplaceIfExists = FALSE), so no link-and-unlink
 * fallback is needed as on some Linux file systems. EXDEV across volumes; EBUSY when a program
 * holds the entry (or a file in a folder being renamed, on Windows) without FILE_SHARE_DELETE.
 */
export function renameNoReplace(dir: Handle, name: string, toDir: Handle, toName: string): void {
  checkName(name, 'NtSetInformationFile')
  checkNewName(toName, 'NtSetInformationFile')
  const h = openEntry(dir, name, DELETE)
  try {
    const status = trySet(h, FileRenameInformation, (into) => writeRenameInformation(into, false, toDir, toName), name)
    if (!ntSuccess(status)) failed(status, name, toName)
  } finally {
    closeHandle(h)
  }
}

/** A second name `toName` in `toDir` for the file `name` in `dir` (a link is linked, not followed): EEXIST when taken, EISDIR for a folder. */
export function link(dir: Handle, name: string, toDir: Handle, toName: string): void {
  checkName(name, 'NtSetInformationFile')
  checkNewName(toName, 'NtSetInformationFile')
  const h = openEntry(dir, name, FILE_WRITE_ATTRIBUTES, FILE_NON_DIRECTORY_FILE)
  try {
    const status = trySet(h, FileLinkInformation, (into) => writeRenameInformation(into, false, toDir, toName), name)
    if (!ntSuccess(status)) failed(status, name, toName)
  } finally {
    closeHandle(h)
  }
}

/** How a removal was made. */
export type Removal =
  /** FileDispositionInformationEx with POSIX semantics: the name is gone now, even while other handles keep the file open. */
  | 'posix'
  /**
   * FileDispositionInformation: the name goes when the last handle on the file closes; until
   * then it stays, a new file of the same name fails with EBUSY (delete pending) and its folder
   * is not empty.
   */
  | 'classic'

/**
 * Removes `name` from `dir`: a file (`folder` false; EISDIR for a folder) or an empty folder
 * (`folder` true; ENOTDIR for a file, ENOTEMPTY when not empty). A link is removed itself, never
 * what it points to; a link to a folder (a junction, a folder symbolic link) is a folder to
 * Windows and is removed with `folder` true. A read-only file is removed too, as unlink does on
 * Linux. EBUSY when a program holds it without FILE_SHARE_DELETE.
 */
export function remove(dir: Handle, name: string, folder: boolean): Removal {
  checkName(name, 'NtSetInformationFile')
  const h = openEntry(dir, name, DELETE, folder ? FILE_DIRECTORY_FILE : FILE_NON_DIRECTORY_FILE)
  try {
    const status = trySet(
      h,
      FileDispositionInformationEx,
      (into) => (into.writeUInt32LE(DISPOSITION_POSIX, 0), 4),
      name,
    )
    if (ntSuccess(status)) return 'posix'
    if (!CLASSIC_DELETE_WHEN.has(ntstatusCode(status))) throw ntError(status, 'NtSetInformationFile', name)
    classicDelete(h, name)
    return 'classic'
  } finally {
    closeHandle(h)
  }
}

/**
 * FileDispositionInformation, which refuses a read-only entry (STATUS_CANNOT_DELETE): the
 * attribute is cleared first, through a second handle with FILE_WRITE_ATTRIBUTES opened on `h`
 * itself (`h` asks only for DELETE, so that it opens wherever deleting is allowed), and set
 * again if the removal then fails (a read-only folder that is not empty).
 */
function classicDelete(h: Handle, name: string): void {
  const attributes = query(h, FileBasicInformation, 40, name).readUInt32LE(32)
  const readOnly = (attributes & FILE_ATTRIBUTE.READONLY) !== 0
  if (readOnly)
    setAttributes(h, attributes & SETTABLE_ATTRIBUTES & ~FILE_ATTRIBUTE.READONLY || FILE_ATTRIBUTE.NORMAL, name)
  const status = trySet(h, FileDispositionInformation, (into) => (into.writeUInt8(1, 0), 1), name)
  if (ntSuccess(status)) return
  if (readOnly) {
    try {
      setAttributes(h, attributes & SETTABLE_ATTRIBUTES, name)
    } catch {}
  }
  throw ntError(status, 'NtSetInformationFile', name)
}

/** Sets the attributes of the file of `h` (times untouched) through a second handle on it with FILE_WRITE_ATTRIBUTES. */
function setAttributes(h: Handle, attributes: number, name: string): void {
  const w = create(
    h,
    '',
    { access: FILE_WRITE_ATTRIBUTES, share: SHARE_ALL, disposition: FILE_OPEN, options: FILE_OPEN_REPARSE_POINT },
    name,
  )
  try {
    const status = trySet(
      w,
      FileBasicInformation,
      (into) => (into.fill(0, 0, 40), into.writeUInt32LE(attributes, 32), 40),
      name,
    )
    if (!ntSuccess(status)) throw ntError(status, 'NtSetInformationFile', name)
  } finally {
    closeHandle(w)
  }
}

// ---------------------------------------------------------------------------------------------
// What a handle is.

export type Identity = {
  /** The volume's 32-bit serial number (FileFsVolumeInformation): what Bun's `fs.Stats.dev` is on Windows. */
  dev: bigint
  /** The file's 64-bit index (FileInternalInformation): what Bun's `fs.Stats.ino` is on Windows. */
  ino: bigint
  /** The volume's serial as FILE_ID_INFO gives it (64 bits on NTFS and ReFS); 0 where that class is not answered. */
  volume: bigint
  /** The 128-bit file id (FILE_ID_INFO) as 32 hex digits: unique on ReFS too, where 64 bits may not be. On NTFS, `ino` zero-extended. */
  id128: string
}

/**
 * What file `h` is, in the numbers Bun's `fs.stat` gives on Windows, so records made by path
 * (`file_dev`, `file_ino`) compare with what a handle walk finds: libuv (which Bun's `node:fs`
 * calls on Windows) takes st_dev from FileFsVolumeInformation and st_ino from
 * FileInternalInformation, and these are read the same way. Under Wine 8 they equal what
 * statSync reports, and `ino` equals the low 64 bits of the 128-bit id (as on NTFS, where the
 * id is the 64-bit file reference number).
 */
export function identity(h: Handle): Identity {
  const shown = '<handle>'
  const ino = query(h, FileInternalInformation, 8, shown).readBigUInt64LE(0)
  const dev = BigInt(volumeSerial(h, shown))
  const status = tryQuery(h, FileIdInformation, 24, shown)
  if (ntSuccess(status)) {
    const b = nt('NtQueryInformationFile', shown).s.info.buffer
    return { dev, ino, volume: b.readBigUInt64LE(0), id128: id128Of(b.subarray(8, 24)) }
  }
  if (!NO_FILE_ID_WHEN.has(ntstatusCode(status))) throw ntError(status, 'NtQueryInformationFile', shown)
  return { dev, ino, volume: 0n, id128: ino.toString(16).padStart(32, '0') }
}

/**
 * The file index of `h` alone (FileInternalInformation: Bun's `ino` on Windows), one query where
 * identity makes three: a file opened relative to a folder lies on the folder's volume (a
 * mount point on the way is a link, and refused), so its volume serial is the folder's.
 */
export function fileIndex(h: Handle): bigint {
  return query(h, FileInternalInformation, 8, '<handle>').readBigUInt64LE(0)
}

/**
 * FILE_FS_VOLUME_INFORMATION: VolumeCreationTime i64 @0, VolumeSerialNumber u32 @8, then the
 * label. The label may not fit (BUFFER_OVERFLOW, a warning): the serial is there all the same.
 */
function volumeSerial(h: Handle, shown: string): number {
  const { c, s } = nt('NtQueryVolumeInformationFile', shown)
  s.info.buffer.fill(0, 0, 128)
  const status = c.NtQueryVolumeInformationFile(h, s.iosb.at, s.info.at, 128, FileFsVolumeInformation)
  if (!ntSuccess(status) && ntstatusCode(status) !== STATUS.BUFFER_OVERFLOW)
    throw ntError(status, 'NtQueryVolumeInformationFile', shown)
  return s.info.buffer.readUInt32LE(8)
}

export type NtStat = {
  size: number
  attributes: number
  /** 0 when the entry is no reparse point. */
  reparseTag: number
  /** A folder, not a link to one. */
  isDirectory: boolean
  /** A name surrogate: a symbolic link, junction or mount point (a handle on one comes from a caller's own open with FILE_OPEN_REPARSE_POINT: the opens here refuse them). */
  isLink: boolean
  birthtimeMs: number
  atimeMs: number
  mtimeMs: number
  /** The change time (metadata too), as Bun's `ctimeMs` on Windows. */
  ctimeMs: number
  /** The creation, access and modification times in nanoseconds, exact (Windows keeps 100 ns), as Bun's `*Ns` on Windows. */
  birthtimeNs: bigint
  atimeNs: bigint
  mtimeNs: bigint
}

/**
 * Size, attributes and times of the file of `h`, in one call (FILE_NETWORK_OPEN_INFORMATION:
 * CreationTime @0, LastAccessTime @8, LastWriteTime @16, ChangeTime @24, AllocationSize @32,
 * EndOfFile @40, FileAttributes u32 @48; 56 bytes), and its reparse tag where it has one.
 */
export function stat(h: Handle): NtStat {
  const shown = '<handle>'
  const b = query(h, FileNetworkOpenInformation, 56, shown)
  const times = [0, 8, 16, 24].map((at) => fileTimeToMs(b.readBigInt64LE(at)))
  const exact = [0, 8, 16].map((at) => (b.readBigInt64LE(at) - UNIX_EPOCH_FILETIME) * 100n)
  const size = Number(b.readBigInt64LE(40))
  const attributes = b.readUInt32LE(48)
  const reparseTag = attributes & FILE_ATTRIBUTE.REPARSE_POINT ? attributeTag(h, shown).tag : 0
  const isLink = isNameSurrogate(reparseTag)
  return {
    size,
    attributes,
    reparseTag,
    isLink,
    isDirectory: (attributes & FILE_ATTRIBUTE.DIRECTORY) !== 0 && !isLink,
    birthtimeMs: times[0]!,
    atimeMs: times[1]!,
    mtimeMs: times[2]!,
    ctimeMs: times[3]!,
    birthtimeNs: exact[0]!,
    atimeNs: exact[1]!,
    mtimeNs: exact[2]!,
  }
}

/**
 * Sets the access and modification times of the file of `h` (opened for writing, or a folder
 * opened with `writeAttributes`), in milliseconds since 1970 kept to 100 ns (Windows' unit).
 * Creation and change times are left as they are. FILE_BASIC_INFORMATION: CreationTime @0,
 * LastAccessTime @8, LastWriteTime @16, ChangeTime @24, FileAttributes u32 @32; 40 bytes, a 0
 * leaving a field unchanged.
 */
export function setTimes(h: Handle, atimeMs: number, mtimeMs: number): void {
  const shown = '<handle>'
  const atime = msToFileTime(atimeMs)
  const mtime = msToFileTime(mtimeMs)
  const status = trySet(
    h,
    FileBasicInformation,
    (into) => {
      into.fill(0, 0, 40)
      into.writeBigInt64LE(atime, 8)
      into.writeBigInt64LE(mtime, 16)
      return 40
    },
    shown,
  )
  if (!ntSuccess(status)) throw ntError(status, 'NtSetInformationFile', shown)
}

// ---------------------------------------------------------------------------------------------
// Listing.

/**
 * The entries of the folder `dir` (opened by openRoot, openDir or mkdir), without `.` and `..`:
 * names, kinds (a name surrogate is a 'link', a folder link too), file ids (Bun's `ino`), sizes
 * and times, in batches of 64 KiB per call (NtQueryDirectoryFile, FileIdBothDirectoryInformation):
 * Windows' statx walk, one call per batch, not one per entry. The listing starts again from the
 * first entry at each call (the handle's own position is reset).
 */
export function list(dir: Handle): ListEntry[] {
  const shown = '<folder>'
  const { c, s } = nt('NtQueryDirectoryFile', shown)
  const entries: ListEntry[] = []
  for (let first = true; ; first = false) {
    const status = c.NtQueryDirectoryFile(
      dir,
      null,
      null,
      null,
      s.iosb.at,
      s.list.at,
      LIST_BUFFER_BYTES,
      FileIdBothDirectoryInformation,
      0,
      null,
      first ? 1 : 0,
    )
    const code = ntstatusCode(status)
    // The end; NO_SUCH_FILE is a first answer for an empty folder with no `.` and `..` (a drive's root).
    if (code === STATUS.NO_MORE_FILES || (first && code === STATUS.NO_SUCH_FILE)) return entries
    if (!ntSuccess(status)) throw ntError(status, 'NtQueryDirectoryFile', shown)
    const length = Number(s.iosb.buffer.readBigUInt64LE(8))
    for (const entry of parseDirectoryBuffer(s.list.buffer, length)) entries.push(entry)
  }
}

// ---------------------------------------------------------------------------------------------
// Reading and writing through a handle. An FFI HANDLE cannot become a `node:fs` descriptor
// (Bun's C runtime is linked in, and a descriptor made from the handle by another runtime's
// _open_osfhandle answers EBADF), so the bytes of a file opened here go through these two.

/** The Length of NtReadFile and NtWriteFile is a ULONG. */
const MAX_IO_BYTES = 0xffff_ffff

/** Reads up to `into.length` bytes at `position`: the count read, 0 at the end of the file. */
export function read(h: Handle, into: Uint8Array, position: number): number {
  const { c, s } = nt('NtReadFile', '<handle>')
  if (into.length === 0) return 0
  if (into.length > MAX_IO_BYTES) throw new RangeError(`at most ${MAX_IO_BYTES} bytes are read at once`)
  s.offset.buffer.writeBigInt64LE(BigInt(position), 0)
  const status = c.NtReadFile(h, null, null, null, s.iosb.at, into, into.length, s.offset.at, null)
  if (ntstatusCode(status) === STATUS.END_OF_FILE) return 0
  if (!ntSuccess(status)) throw ntError(status, 'NtReadFile', '<handle>')
  return Number(s.iosb.buffer.readBigUInt64LE(8))
}

/** Writes all of `data` at `position` (a handle opened for writing): the count written. */
export function write(h: Handle, data: Uint8Array, position: number): number {
  const { c, s } = nt('NtWriteFile', '<handle>')
  if (data.length === 0) return 0
  if (data.length > MAX_IO_BYTES) throw new RangeError(`at most ${MAX_IO_BYTES} bytes are written at once`)
  s.offset.buffer.writeBigInt64LE(BigInt(position), 0)
  const status = c.NtWriteFile(h, null, null, null, s.iosb.at, data, data.length, s.offset.at, null)
  if (!ntSuccess(status)) throw ntError(status, 'NtWriteFile', '<handle>')
  return Number(s.iosb.buffer.readBigUInt64LE(8))
}
