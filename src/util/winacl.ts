// The data folder's privacy on Windows. The catalogue holds key hashes and device passwords and
// admin.token a superuser's key; on Linux and macOS they are private by their modes (0700 and
// 0600, db/client.ts), which Windows does not have: Bun reports every file there as 0666 and a
// chmod changes nothing, so a check by mode would warn at every start. What makes a file private
// on Windows is its access list (DACL). The data folder gets a protected one, so that nothing is
// inherited from the folder above (C:\ProgramData, for one, lets every user read), with two
// entries, each inherited by what is made in it: full control for the user running Reelhouse,
// and for SYSTEM (the account a service runs as, and backups). The files already in the folder
// (an install from before, or a catalogue copied in) get the same list. It is read back at each
// start and written only where it differs, and said once in the log when it is written.
//
// The calls are advapi32's, through bun:ffi: the user's SID from the process token, the list from
// its SDDL text (ConvertStringSecurityDescriptorToSecurityDescriptorW), written and read by name
// (SetNamedSecurityInfoW, GetNamedSecurityInfoW) and compared as SDDL text. Under Wine (the
// tests' Windows) every call succeeds but the list is not kept: Wine derives a file's access
// list from its Unix mode, so what is read back is never what was written; the start says so
// there in an info line, and on Windows a file system that keeps no lists (FAT, exFAT, some
// network shares) gets a warning instead.
import { type Pointer, dlopen, FFIType, ptr, toArrayBuffer } from 'bun:ffi'
import { existsSync } from 'node:fs'

const SE_FILE_OBJECT = 1
const DACL_SECURITY_INFORMATION = 0x4
const PROTECTED_DACL_SECURITY_INFORMATION = 0x80000000
const TOKEN_QUERY = 0x8
const TOKEN_USER = 1
const SDDL_REVISION_1 = 1

type Api = ReturnType<typeof load>

function load() {
  const { i32, u32, ptr: P, i64_fast } = FFIType
  const advapi = dlopen('advapi32.dll', {
    OpenProcessToken: { args: [i64_fast, u32, P], returns: i32 },
    GetTokenInformation: { args: [i64_fast, u32, P, u32, P], returns: i32 },
    ConvertSidToStringSidW: { args: [P, P], returns: i32 },
    ConvertStringSecurityDescriptorToSecurityDescriptorW: { args: [P, u32, P, P], returns: i32 },
    ConvertSecurityDescriptorToStringSecurityDescriptorW: { args: [P, u32, u32, P, P], returns: i32 },
    GetSecurityDescriptorDacl: { args: [P, P, P, P], returns: i32 },
    SetNamedSecurityInfoW: { args: [P, u32, u32, P, P, P, P], returns: u32 },
    GetNamedSecurityInfoW: { args: [P, u32, u32, P, P, P, P, P], returns: u32 },
  }).symbols
  const kernel = dlopen('kernel32.dll', {
    GetCurrentProcess: { args: [], returns: i64_fast },
    CloseHandle: { args: [i64_fast], returns: i32 },
    LocalFree: { args: [P], returns: P },
    GetLastError: { args: [], returns: u32 },
    lstrlenW: { args: [P], returns: i32 },
  }).symbols
  return { advapi, kernel, wine: wineVersion() }
}

/** Wine's version where this runs under Wine (ntdll's wine_get_version), or undefined. */
function wineVersion(): string | undefined {
  try {
    const lib = dlopen('ntdll.dll', { wine_get_version: { args: [], returns: FFIType.cstring } })
    return String(lib.symbols.wine_get_version())
  } catch {
    return undefined
  }
}

let api: Api | undefined
const apiOf = () => (api ??= load())

const wide = (text: string) => Buffer.from(`${text}\0`, 'utf16le')
const pointerAt = (cell: Buffer) => Number(cell.readBigUInt64LE(0)) as Pointer

/** The UTF-16 text at `at`, freed with LocalFree (what the Convert* calls hand back). */
function takeText(a: Api, at: Pointer): string {
  try {
    const units = a.kernel.lstrlenW(at)
    return Buffer.from(toArrayBuffer(at, 0, units * 2)).toString('utf16le')
  } finally {
    a.kernel.LocalFree(at)
  }
}

const failure = (a: Api, call: string) => new Error(`${call} failed (Windows error ${a.kernel.GetLastError()})`)

/** The SID of the user this process runs as, in its text form (S-1-5-21-…). */
function userSid(a: Api): string {
  const handle = Buffer.alloc(8)
  if (!a.advapi.OpenProcessToken(a.kernel.GetCurrentProcess(), TOKEN_QUERY, ptr(handle)))
    throw failure(a, 'OpenProcessToken')
  const token = Number(handle.readBigInt64LE(0))
  try {
    const info = Buffer.alloc(512)
    const size = Buffer.alloc(4)
    if (!a.advapi.GetTokenInformation(token, TOKEN_USER, ptr(info), info.length, ptr(size)))
      throw failure(a, 'GetTokenInformation')
    const text = Buffer.alloc(8)
    if (!a.advapi.ConvertSidToStringSidW(pointerAt(info), ptr(text))) throw failure(a, 'ConvertSidToStringSidW')
    return takeText(a, pointerAt(text))
  } finally {
    a.kernel.CloseHandle(token)
  }
}

/**
 * The access list, as SDDL, for the data folder (`folder` true: inherited by files and folders
 * made in it) or a file in it: protected, full control for `sid` and SYSTEM (SY) only.
 */
export function privateSddl(sid: string, folder: boolean): string {
  const inherit = folder ? 'OICI' : ''
  const users = sid === 'S-1-5-18' ? ['SY'] : [sid, 'SY']
  return `D:P${users.map((user) => `(A;${inherit};FA;;;${user})`).join('')}`
}

/** The access list of `path` as SDDL (its DACL part only). */
function readSddl(a: Api, path: string): string {
  const described = Buffer.alloc(8)
  const code = a.advapi.GetNamedSecurityInfoW(
    ptr(wide(path)),
    SE_FILE_OBJECT,
    DACL_SECURITY_INFORMATION,
    null,
    null,
    null,
    null,
    ptr(described),
  )
  if (code !== 0) throw new Error(`GetNamedSecurityInfoW failed (Windows error ${code})`)
  const descriptor = pointerAt(described)
  try {
    const text = Buffer.alloc(8)
    if (
      !a.advapi.ConvertSecurityDescriptorToStringSecurityDescriptorW(
        descriptor,
        SDDL_REVISION_1,
        DACL_SECURITY_INFORMATION,
        ptr(text),
        null,
      )
    )
      throw failure(a, 'ConvertSecurityDescriptorToStringSecurityDescriptorW')
    return takeText(a, pointerAt(text))
  } finally {
    a.kernel.LocalFree(descriptor)
  }
}

/** Gives `path` the access list `sddl` (protected: nothing inherited from above). */
function writeSddl(a: Api, path: string, sddl: string): void {
  const described = Buffer.alloc(8)
  if (
    !a.advapi.ConvertStringSecurityDescriptorToSecurityDescriptorW(
      ptr(wide(sddl)),
      SDDL_REVISION_1,
      ptr(described),
      null,
    )
  )
    throw failure(a, 'ConvertStringSecurityDescriptorToSecurityDescriptorW')
  const descriptor = pointerAt(described)
  try {
    const present = Buffer.alloc(4)
    const dacl = Buffer.alloc(8)
    const defaulted = Buffer.alloc(4)
    if (!a.advapi.GetSecurityDescriptorDacl(descriptor, ptr(present), ptr(dacl), ptr(defaulted)))
      throw failure(a, 'GetSecurityDescriptorDacl')
    const code = a.advapi.SetNamedSecurityInfoW(
      ptr(wide(path)),
      SE_FILE_OBJECT,
      DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
      null,
      null,
      pointerAt(dacl),
      null,
    )
    if (code !== 0) throw new Error(`SetNamedSecurityInfoW failed (Windows error ${code})`)
  } finally {
    a.kernel.LocalFree(descriptor)
  }
}

export type Restriction =
  /** Every path already had the list: nothing was written. */
  | { state: 'held' }
  /** The list was written to `paths` and reads back as written. */
  | { state: 'restricted'; paths: string[]; user: string }
  /** Written without error, but the file system does not keep it (`wine`: running under Wine). */
  | { state: 'not kept'; paths: string[]; wine?: string }

/**
 * Makes `folder` and those of `files` that exist private to this process's user and SYSTEM on
 * Windows (the module's comment says how), writing only where the list differs. Throws with the
 * Windows error where a call fails.
 */
export function restrictToUser(folder: string, files: string[]): Restriction {
  const a = apiOf()
  const sid = userSid(a)
  const targets = [
    { path: folder, file: false },
    ...files.filter((file) => existsSync(file)).map((path) => ({ path, file: true })),
  ].map((target) => ({ ...target, sddl: privateSddl(sid, !target.file) }))
  const differing = targets.filter((target) => !sameSddl(readSddl(a, target.path), target.sddl, target.file))
  if (differing.length === 0) return { state: 'held' }
  for (const target of differing) writeSddl(a, target.path, target.sddl)
  const paths = differing.map((target) => target.path)
  if (differing.some((target) => !sameSddl(readSddl(a, target.path), target.sddl, target.file)))
    return { state: 'not kept', paths, wine: a.wine }
  return { state: 'restricted', paths, user: sid }
}

/**
 * Whether the DACL `actual` grants what `wanted` does, both in SDDL: Windows may print a protected
 * list's flags as P or PAI and its entries in its own order. For a file (`file` true) entries
 * inherited from the folder (flag ID, in a list that is not protected) count as its own, since a
 * file made in the restricted folder gets exactly those.
 */
export function sameSddl(actual: string, wanted: string, file = false): boolean {
  const parse = (sddl: string) => {
    const match = /^D:([A-Z]*)((?:\([^)]*\))*)$/.exec(sddl.trim().toUpperCase())
    if (!match) return undefined
    const entries = (match[2]!.match(/\([^)]*\)/g) ?? []).map((entry) => {
      const fields = entry.slice(1, -1).split(';')
      if (file) fields[1] = fields[1]!.replace('ID', '')
      return fields.join(';')
    })
    return { protectedList: match[1]!.includes('P'), entries: entries.sort().join('|') }
  }
  const a = parse(actual)
  const b = parse(wanted)
  return a !== undefined && b !== undefined && (file || a.protectedList === b.protectedList) && a.entries === b.entries
}
