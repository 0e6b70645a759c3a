// Whether this process runs as a Windows service. Services run in session 0, apart from every
// user's logon session, and what a user did in their session does not reach them: above all
// drive letters mapped to network shares (Explorer's "Map network drive", `net use M:`), which
// belong to that logon. A device given as M:\media\ is then simply not there for the service.
import { dlopen, FFIType, ptr } from 'bun:ffi'

let session: number | undefined | null = null

/** The Windows session this process runs in (0: a service), or undefined off Windows or where it cannot be told. */
export function windowsSession(): number | undefined {
  if (session !== null) return session
  session = undefined
  if (process.platform !== 'win32') return session
  try {
    const k = dlopen('kernel32.dll', {
      ProcessIdToSessionId: { args: [FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
      GetCurrentProcessId: { args: [], returns: FFIType.u32 },
    }).symbols
    const id = new Uint32Array(1)
    if (k.ProcessIdToSessionId(k.GetCurrentProcessId(), ptr(id))) session = id[0]
  } catch {}
  return session
}
