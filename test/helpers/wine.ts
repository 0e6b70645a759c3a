// The Windows executable run under Wine, for the tests of the Windows build (test/cli/windows.test.ts,
// test/storage/windows-*.test.ts). Wine runs the PE executable on this machine's kernel, with
// its own ntdll, kernel32 and advapi32 over Linux files: what it shows is that the program starts,
// that its calls into Windows' libraries are well formed, and how those calls answer in the
// cases Wine implements (docs/operations.md lists what it cannot show).
//
// Debian 12's Wine (8.0) lacks bcryptprimitives.dll, which Bun's Windows runtime imports
// (ProcessPrng) and without which the loader stops before any code runs (exit 53). Wine 9 has
// it. Where it is missing, a DLL of a few lines that answers ProcessPrng from RtlGenRandom is
// built with MinGW (Debian: gcc-mingw-w64-x86-64) into the Wine prefix. The prefix (what
// `wineboot --init` makes: C:\windows, the registry; about 14 s) is made once for this and later
// runs, in the way of the shared builds (test/helpers/process.ts): made under another name, then
// renamed into place, under a lock folder.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { spawn } from 'bun'

/** The 64-bit Wine loader: Debian's /usr/lib/wine/wine64 (its `wine` script warns about wine32 on stderr), else wine64 or wine on PATH. */
export const WINE = existsSync('/usr/lib/wine/wine64')
  ? '/usr/lib/wine/wine64'
  : (Bun.which('wine64') ?? Bun.which('wine') ?? undefined)
const WINESERVER = existsSync('/usr/lib/wine/wineserver')
  ? '/usr/lib/wine/wineserver'
  : (Bun.which('wineserver') ?? undefined)
const MINGW = Bun.which('x86_64-w64-mingw32-gcc') ?? undefined

const PREFIXES = join(tmpdir(), 'reelhouse-test-wine')
/** Bumped when what a prefix holds changes. */
const PREFIX_VERSION = 1

/** The shim's source: ProcessPrng over RtlGenRandom (advapi32's SystemFunction036), in slices a ULONG can count. */
const SHIM = `#include <windows.h>
#include <limits.h>
BOOLEAN WINAPI SystemFunction036(PVOID, ULONG);
__declspec(dllexport) BOOL WINAPI ProcessPrng(BYTE *data, SIZE_T size) {
  while (size) {
    ULONG len = size > ULONG_MAX ? ULONG_MAX : (ULONG)size;
    if (!SystemFunction036(data, len)) return FALSE;
    data += len; size -= len;
  }
  return TRUE;
}
`

/** Why the Windows executable cannot be run here, or undefined. */
export const wineMissing: string | undefined =
  process.platform !== 'linux' || process.arch !== 'x64'
    ? `Wine runs the windows-x64 executable only on x86-64 Linux, not ${process.platform} ${process.arch}`
    : !WINE
      ? 'Wine is not installed (Debian: apt-get install wine64)'
      : undefined

/** The environment a Wine process runs with: its prefix, and none of Wine's debug lines. */
export function wineEnv(prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return { WINEPREFIX: prefix, WINEDEBUG: '-all', WINELOADER: WINE!, WINEDLLOVERRIDES: 'mscoree,mshtml=', ...extra }
}

async function run(cmd: string[], env: Record<string, string>, boundMs: number): Promise<string> {
  const child = spawn(cmd, {
    env: { ...process.env, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: boundMs,
  })
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  if (code !== 0) throw new Error(`${cmd.join(' ')} failed (${code}):\n${out}${err}`)
  return out
}

const PREFIX_BOUND_MS = 180_000
let prefix: Promise<string> | undefined

/**
 * The Wine prefix the tests share, made once (see the module's comment); resolves to its path.
 * Throws with what failed (no MinGW where the DLL is needed, say).
 */
export function winePrefix(): Promise<string> {
  prefix ??= (async () => {
    const version = (await run([WINE!, '--version'], {}, 30_000)).trim()
    const folder = join(PREFIXES, `${version.replace(/[^\w.-]/g, '_')}-${PREFIX_VERSION}`)
    const lock = `${folder}.lock`
    mkdirSync(PREFIXES, { recursive: true })
    for (;;) {
      if (existsSync(folder)) return folder
      try {
        mkdirSync(lock)
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      let age = 0
      try {
        age = Date.now() - statSync(lock).mtimeMs
      } catch {}
      if (age > PREFIX_BOUND_MS + 10_000) rmSync(lock, { recursive: true, force: true })
      await Bun.sleep(200)
    }
    try {
      if (existsSync(folder)) return folder
      const making = mkdtempSync(`${folder}.making-`)
      try {
        await run([WINE!, 'wineboot', '--init'], wineEnv(making), PREFIX_BOUND_MS)
        // wineboot returns before the wineserver it started has written everything down.
        if (WINESERVER) await run([WINESERVER, '--wait'], wineEnv(making), 60_000)
        const system32 = join(making, 'drive_c', 'windows', 'system32')
        if (!existsSync(join(system32, 'bcryptprimitives.dll'))) {
          if (!MINGW)
            throw new Error(
              `${version} lacks bcryptprimitives.dll and MinGW is not installed to build it (Debian: apt-get install gcc-mingw-w64-x86-64)`,
            )
          const source = join(making, 'bcryptprimitives.c')
          writeFileSync(source, SHIM)
          await run(
            [MINGW, '-shared', '-O2', '-o', join(system32, 'bcryptprimitives.dll'), source, '-ladvapi32'],
            {},
            60_000,
          )
          rmSync(source)
        }
        renameSync(making, folder)
      } finally {
        rmSync(making, { recursive: true, force: true })
      }
      return folder
    } finally {
      rmSync(lock, { recursive: true, force: true })
    }
  })()
  return prefix
}

/** A new folder on the prefix's drive C:, as [its Linux path, its Windows path (C:\reelhouse-tests\…)]. */
export function driveCFolder(prefixPath: string, label: string): [string, string] {
  const base = join(prefixPath, 'drive_c', 'reelhouse-tests')
  mkdirSync(base, { recursive: true })
  const path = mkdtempSync(join(base, `${label}-`))
  return [path, windowsPath(prefixPath, path)]
}

/** The Windows path of `path`, a Linux path on the prefix's drive C:. */
export function windowsPath(prefixPath: string, path: string): string {
  const inside = relative(join(prefixPath, 'drive_c'), path)
  if (inside.startsWith('..')) throw new Error(`${path} is not on drive C: of ${prefixPath}`)
  return `C:\\${inside.split('/').join('\\')}`
}

/** Reads a file of the prefix by its Windows path on C:. */
export const readOnC = (prefixPath: string, windows: string) =>
  readFileSync(join(prefixPath, 'drive_c', ...windows.replace(/^C:\\/i, '').split('\\')))
