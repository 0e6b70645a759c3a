// Which programs hold a file, from Windows' Restart Manager (rstrtmgr.dll): the API installers use
// to say "close Adobe Premiere Pro to continue". A task waiting for a file another program holds
// (storage/busy.ts) names them in its step, so that the editor knows which application to close.
// A session is opened for the one file and ended at once; where the Restart Manager is missing or
// answers nothing (Wine's answers no process) no name is given.
import { dlopen, FFIType, ptr } from 'bun:ffi'

/** RM_PROCESS_INFO: RM_UNIQUE_PROCESS (pid u32 @0, start FILETIME @4), strAppName WCHAR[256] @12, strServiceShortName WCHAR[64] @524, then four u32; 668 bytes. */
const PROCESS_INFO_SIZE = 668
const APP_NAME_AT = 12
const APP_NAME_CHARS = 256
const MAX_LISTED = 8
const ERROR_MORE_DATA = 234

type Calls = {
  RmStartSession: (handle: number, flags: number, key: number) => number
  RmRegisterResources: (
    session: number,
    files: number,
    names: number,
    apps: number,
    appList: null,
    services: number,
    serviceNames: null,
  ) => number
  RmGetList: (session: number, needed: number, count: number, infos: number, reasons: number) => number
  RmEndSession: (session: number) => number
}
let calls: Calls | null | undefined

function load(): Calls | undefined {
  if (calls !== undefined) return calls ?? undefined
  calls = null
  if (process.platform !== 'win32') return undefined
  try {
    const { u32, ptr: P } = FFIType
    calls = dlopen('rstrtmgr.dll', {
      RmStartSession: { args: [P, u32, P], returns: u32 },
      RmRegisterResources: { args: [u32, u32, P, u32, P, u32, P], returns: u32 },
      RmGetList: { args: [u32, P, P, P, P], returns: u32 },
      RmEndSession: { args: [u32], returns: u32 },
    }).symbols as unknown as Calls
  } catch {}
  return calls ?? undefined
}

/** The programs holding the file at `path`, as "Adobe Premiere Pro (pid 4242)"; empty where none can be named. */
export function programsHolding(path: string): string[] {
  const c = load()
  if (!c) return []
  const session = new Uint32Array(1)
  const key = Buffer.alloc(2 * 33)
  if (c.RmStartSession(ptr(session) as unknown as number, 0, ptr(key) as unknown as number) !== 0) return []
  try {
    const name = Buffer.from(`${path}\0`, 'utf16le')
    const names = new BigUint64Array([BigInt(ptr(name))])
    if (c.RmRegisterResources(session[0]!, 1, ptr(names) as unknown as number, 0, null, 0, null) !== 0) return []
    const needed = new Uint32Array(1)
    const count = new Uint32Array([MAX_LISTED])
    const infos = Buffer.alloc(PROCESS_INFO_SIZE * MAX_LISTED)
    const reasons = new Uint32Array(1)
    const status = c.RmGetList(
      session[0]!,
      ptr(needed) as unknown as number,
      ptr(count) as unknown as number,
      ptr(infos) as unknown as number,
      ptr(reasons) as unknown as number,
    )
    if (status !== 0 && status !== ERROR_MORE_DATA) return []
    const listed = Math.min(count[0]!, MAX_LISTED)
    const programs: string[] = []
    for (let i = 0; i < listed; i++) {
      const at = i * PROCESS_INFO_SIZE
      const pid = infos.readUInt32LE(at)
      const raw = infos.toString('utf16le', at + APP_NAME_AT, at + APP_NAME_AT + APP_NAME_CHARS * 2)
      const app = raw.slice(0, Math.max(0, raw.indexOf('\0')) || raw.length).trim()
      programs.push(`${app || 'a program'} (pid ${pid})`)
    }
    return programs
  } catch {
    return []
  } finally {
    c.RmEndSession(session[0]!)
  }
}
