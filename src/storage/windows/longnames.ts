// 8.3 short names on Windows. NTFS (where enabled) and FAT give a long name a second, short
// spelling: C:\MEDIAF~1\ is C:\Media Files\. Paths are compared as text (which device a path is
// on, what lies inside a production), so a short spelling would be another place to those
// comparisons: every path a request gives is turned into its long spelling first, as far as it
// exists (GetLongPathNameW resolves names that exist; the rest is kept as written). Only paths
// with a `~` in a name are looked at, since every short name has one.
import { dlopen, FFIType, ptr } from 'bun:ffi'

let call: ((path: ReturnType<typeof ptr>, out: ReturnType<typeof ptr>, size: number) => number) | undefined

function getLongPathName(path: string): string | undefined {
  call ??= dlopen('kernel32.dll', {
    GetLongPathNameW: { args: [FFIType.ptr, FFIType.ptr, FFIType.u32], returns: FFIType.u32 },
  }).symbols.GetLongPathNameW
  const input = Buffer.from(`${path}\0`, 'utf16le')
  let out = Buffer.alloc(1024)
  let n = call(ptr(input), ptr(out), out.length / 2)
  if (n > out.length / 2) {
    out = Buffer.alloc(n * 2)
    n = call(ptr(input), ptr(out), out.length / 2)
  }
  return n > 0 && n <= out.length / 2 ? out.toString('utf16le', 0, n * 2) : undefined
}

/**
 * `path` (a cleaned Windows path) with its short names resolved to long ones, as far as the
 * path exists; unchanged where it has no `~`, off Windows, or where nothing can be resolved.
 */
export function longNames(path: string): string {
  if (process.platform !== 'win32' || !path.includes('~')) return path
  try {
    // The longest existing prefix ending at a name's end, and the rest as written.
    for (let end = path.length; end > 2; ) {
      const prefix = path.slice(0, end)
      const long = getLongPathName(prefix)
      if (long !== undefined) return long + path.slice(end)
      end = path.lastIndexOf('\\', end - (path[end - 1] === '\\' ? 2 : 1))
      if (end <= 2) break
    }
  } catch {}
  return path
}
