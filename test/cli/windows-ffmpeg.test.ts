// How the Windows executable finds ffmpeg and ffprobe (src/media/ffmpeg.ts: searchPathOf,
// findBinary), run under Wine (test/helpers/wine.ts) with stand-ins built from a few lines of C
// (fixtures/ffstub.c) by MinGW. Found on PATH: Wine prepends WINEPATH's folders to the PATH its
// programs see (the Unix PATH is not theirs); one entry plain, one quoted, as cmd.exe reads them
// (Bun.which skipped the quoted one). Found beside the executable with nothing on PATH. And a PATH
// with only ffmpeg.cmd and ffprobe.cmd finds nothing and runs nothing: Bun.which('ffmpeg') finds
// ffmpeg.cmd there through PATHEXT (it does under Wine), and cmd.exe would read % and & in file
// names as its own syntax. The session with ffmpeg on PATH also imports a clip: the stand-ins get
// the file by its path while it is held (runChild, holdInput: Windows has no /dev/fd) and check
// that they can read it and nobody can write it. One serve start for each case: each Wine process
// costs about a second.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { call, crossExecutable, killAll, lines, ROOT, type Server, startServe } from '../helpers/process.ts'
import { makeTree } from '../helpers/tree.ts'
import { waitFor } from '../helpers/wait.ts'
import { driveCFolder, WINE, wineEnv, wineMissing, winePrefix } from '../helpers/wine.ts'

const MINGW = Bun.which('x86_64-w64-mingw32-gcc') ?? undefined
const why =
  wineMissing ??
  (MINGW
    ? undefined
    : 'MinGW is not installed to build the ffmpeg stand-ins (Debian: apt-get install gcc-mingw-w64-x86-64)')
if (why) console.log(`[skip] test/cli/windows-ffmpeg.test.ts: ${why}`)

/** As in test/cli/windows.test.ts: a bound for one step under Wine on a loaded machine, not a speed. */
const STEP_MS = 120_000

const made: string[] = []
afterAll(async () => {
  await killAll()
  for (const path of made) rmSync(path, { recursive: true, force: true })
})

/** The ffmpeg and ffprobe paths of serve's "ffmpeg found" line (a value with a space is quoted as JSON). */
function foundPaths(log: string[]): { ffmpeg: string; ffprobe: string } | undefined {
  const value = String.raw`("(?:[^"\\]|\\.)*"|\S+)`
  const line = log.map((l) => new RegExp(` info ffmpeg found ffmpeg=${value} ffprobe=${value}$`).exec(l)).find(Boolean)
  const read = (v: string) => (v.startsWith('"') ? (JSON.parse(v) as string) : v)
  return line ? { ffmpeg: read(line[1]!), ffprobe: read(line[2]!) } : undefined
}

describe.skipIf(why !== undefined)('the windows-x64 executable finds ffmpeg.exe and ffprobe.exe under Wine', () => {
  let binary: string
  let prefix: string
  /**
   * The stand-ins: ffmpeg.exe in a folder with a space in its name (as C:\Program Files),
   * ffprobe.exe in one with a semicolon too, which PATH can only hold quoted.
   */
  let ffmpegBin: [string, string]
  let ffprobeBin: [string, string]

  beforeAll(async () => {
    const started = Date.now()
    ;[binary, prefix] = await Promise.all([crossExecutable('windows-x64'), winePrefix()])
    ffmpegBin = driveCFolder(prefix, 'ffmpeg bin')
    ffprobeBin = driveCFolder(prefix, 'ffprobe; bin')
    made.push(ffmpegBin[0], ffprobeBin[0])
    const source = join(ROOT, 'test', 'cli', 'fixtures', 'ffstub.c')
    await Promise.all(
      (
        [
          ['ffmpeg', ffmpegBin[0]],
          ['ffprobe', ffprobeBin[0]],
        ] as const
      ).map(async ([name, folder]) => {
        const gcc = Bun.spawn([MINGW!, '-O2', '-s', `-DNAME="${name}"`, '-o', join(folder, `${name}.exe`), source], {
          stdout: 'pipe',
          stderr: 'pipe',
          timeout: STEP_MS,
        })
        const [err, code] = await Promise.all([new Response(gcc.stderr).text(), gcc.exited])
        if (code !== 0) throw new Error(`MinGW could not build ${name}.exe (${code}):\n${err}`)
      }),
    )
    console.log(
      `built ${binary}, the Wine prefix ${prefix} and the stand-ins in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    )
  }, 300_000)

  /**
   * One serve session under Wine with a data folder of its own on C:, `extra` added to Wine's
   * environment: started, `during` run once ffmpeg's line is logged, stopped by SIGINT (exit 0).
   * Answers its log lines.
   */
  async function session(
    exe: string,
    extra: Record<string, string>,
    during?: (server: Server, key: string, root: [string, string]) => Promise<void>,
  ) {
    const root = driveCFolder(prefix, 'data')
    made.push(root[0])
    const server = await startServe(`${root[1]}\\data`, {
      cli: [WINE!, exe],
      env: wineEnv(prefix, extra),
      boundMs: STEP_MS,
    })
    await server.proc.waitFor('stderr', / (info ffmpeg found|warn imports will make no proxies or probes) /, STEP_MS)
    if (during) await during(server, readFileSync(join(root[0], 'data', 'admin.token'), 'utf8').trim(), root)
    expect(await server.proc.stop('SIGINT', STEP_MS)).toBe(0)
    const log = lines(server.proc.stderr)
    expect(log.at(-1)).toMatch(/ info stopped$/)
    return log
  }

  test(
    'on PATH (WINEPATH), one entry plain and one quoted: both found by their .exe paths, and an import probes the held file by its path, makes its proxy, and the page plays it',
    async () => {
      const log = await session(
        binary,
        { WINEPATH: `${ffmpegBin[1]};"${ffprobeBin[1]}"` },
        async (server, key, [root, winRoot]) => {
          const api = (method: string, path: string, body?: unknown) => call(server, method, path, key, body)
          makeTree(join(root, 'media'), { 'Show/video/clip.mov': 'essence\n' })
          const winMedia = `${winRoot}\\media`
          expect((await api('POST', '/devices/', { name: 'media', path: `${winMedia}\\` })).status).toBe(201)
          expect((await api('POST', '/productions/', { name: 'Show', storage_root: `${winMedia}\\Show` })).status).toBe(
            201,
          )
          const imported = await api('POST', '/asset/import/', {
            type: 'video',
            production: 'Show',
            asset: { asset_meta: { name: 'clip', path_file: `${winMedia}\\Show\\video\\clip.mov` } },
          })
          expect(imported.status).toBe(201)
          let task: Record<string, any> = {}
          await waitFor(
            async () =>
              ['done', 'failed'].includes(
                (task = (await api('GET', imported.json.task.url.replace(/^\/api/, ''))).json).state,
              ),
            'the import to end',
            { ms: STEP_MS, everyMs: 100 },
          )
          expect(task).toMatchObject({ state: 'done', error: '' })
          // What the stand-in ffprobe said, read from the file it could read and nobody could write.
          const asset = (await api('GET', `/videoassets/${imported.json.asset_import_id}/`)).json
          expect(asset).toMatchObject({
            technical: { duration: 50, fps: '25/1', width: 320, height: 240, format: 'stub', video_codec: 'stub' },
            // Named after the source (docs/media.md, Proxy names).
            path_proxy: `${winMedia}\\Show\\proxies\\clip.mp4`,
          })
          expect(readFileSync(join(root, 'media', 'Show', 'proxies', 'clip.mp4'), 'utf8')).toBe('stub proxy\n')
          // The page plays it: streamed from the file opened below the proxy folder's handles, whole and by range.
          const played = await fetch(`${server.api}/videoassets/${imported.json.asset_import_id}/proxy/`, {
            headers: { authorization: `Token ${key}` },
          })
          expect([played.status, await played.text()]).toEqual([200, 'stub proxy\n'])
          const part = await fetch(`${server.api}/videoassets/${imported.json.asset_import_id}/proxy/`, {
            headers: { authorization: `Token ${key}`, range: 'bytes=5-9' },
          })
          expect([part.status, part.headers.get('content-range'), await part.text()]).toEqual([
            206,
            'bytes 5-9/11',
            'proxy',
          ])
        },
      )
      expect(foundPaths(log)).toEqual({
        ffmpeg: `${ffmpegBin[1]}\\ffmpeg.exe`,
        ffprobe: `${ffprobeBin[1]}\\ffprobe.exe`,
      })
      expect(log.filter((l) => / (warn|error) /.test(l))).toEqual([])
    },
    3 * STEP_MS,
  )

  test(
    'beside the executable, nothing on PATH: both found there',
    async () => {
      // A copy of the executable in a folder on C: with the stand-ins (a hard link: the same file system, no 120 MB copy).
      const [app, winApp] = driveCFolder(prefix, 'Reelhouse app')
      made.push(app)
      const exe = join(app, basename(binary))
      try {
        linkSync(binary, exe)
      } catch {
        copyFileSync(binary, exe)
      }
      linkSync(join(ffmpegBin[0], 'ffmpeg.exe'), join(app, 'ffmpeg.exe'))
      linkSync(join(ffprobeBin[0], 'ffprobe.exe'), join(app, 'ffprobe.exe'))
      const log = await session(exe, {})
      expect(foundPaths(log)).toEqual({ ffmpeg: `${winApp}\\ffmpeg.exe`, ffprobe: `${winApp}\\ffprobe.exe` })
      expect(log.filter((l) => / (warn|error) /.test(l))).toEqual([])
    },
    2 * STEP_MS,
  )

  test(
    'only ffmpeg.cmd and ffprobe.cmd on PATH: not found, and never run',
    async () => {
      const [scripts, winScripts] = driveCFolder(prefix, 'ffmpeg cmd')
      made.push(scripts)
      // Each would say it is ffmpeg, and leaves a mark that it ran.
      for (const name of ['ffmpeg', 'ffprobe'])
        writeFileSync(
          join(scripts, `${name}.cmd`),
          `@echo off\r\necho ${name} version 7.0-cmd\r\necho ran> "%~dp0${name}.ran"\r\n`,
        )
      const log = await session(binary, { WINEPATH: winScripts })
      expect(foundPaths(log)).toBeUndefined()
      expect(log.filter((l) => / warn /.test(l))).toEqual([
        expect.stringMatching(
          / warn imports will make no proxies or probes reason="ffmpeg was not found on PATH; ffprobe was not found on PATH; /,
        ),
      ])
      expect([existsSync(join(scripts, 'ffmpeg.ran')), existsSync(join(scripts, 'ffprobe.ran'))]).toEqual([
        false,
        false,
      ])
    },
    2 * STEP_MS,
  )
})
