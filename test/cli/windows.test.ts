// The windows-x64 executable (build.ts --target windows-x64), run under Wine (test/helpers/wine.ts)
// as test/cli/arm64.test.ts runs the arm64 one under qemu: built once per run, then its command
// line and a serve session with its data folder on C:\. Before its own entry file
// (src/executable.ts) the Windows executable printed nothing at all and exited 0, whatever the
// command: these tests fail on that. What Wine cannot show is listed in docs/operations.md.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import {
  call,
  crossExecutable,
  killAll,
  lines,
  ROOT,
  Running,
  runCli,
  SOURCE_CLI,
  startServe,
  versionPattern,
} from '../helpers/process.ts'
import { driveCFolder, WINE, wineEnv, wineMissing, winePrefix } from '../helpers/wine.ts'
import { inHistory, makeTree, manyFiles, snapshot, withoutHistory } from '../helpers/tree.ts'
import { waitFor } from '../helpers/wait.ts'

if (wineMissing) console.log(`[skip] test/cli/windows.test.ts: ${wineMissing}`)

/** Wine starts its server with the first process (a few seconds, more under the other files' load). */
const STEP_MS = 120_000

const made: string[] = []
afterAll(async () => {
  await killAll()
  for (const path of made) rmSync(path, { recursive: true, force: true })
})

describe.skipIf(wineMissing !== undefined)('the windows-x64 executable under Wine', () => {
  let binary: string
  let prefix: string
  let cli: string[]
  let env: Record<string, string>

  beforeAll(async () => {
    const started = Date.now()
    ;[binary, prefix] = await Promise.all([crossExecutable('windows-x64'), winePrefix()])
    cli = [WINE!, binary]
    env = wineEnv(prefix)
    console.log(`built ${binary} and made the Wine prefix ${prefix} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }, 300_000)

  test(
    '--version and --help print what they print on Linux',
    async () => {
      const [version, help, linuxHelp] = await Promise.all([
        runCli(['--version'], { cli, env }),
        runCli(['--help'], { cli, env }),
        runCli(['--help'], { cli: SOURCE_CLI }),
      ])
      expect(version).toEqual({ code: 0, stdout: expect.stringMatching(versionPattern({ path: binary })), stderr: '' })
      expect(help.stdout).toStartWith('reelhouse ')
      expect(help).toEqual({ code: 0, stdout: linuxHelp.stdout, stderr: '' })
      // A mistake: one line and exit 2, as on Linux.
      const wrong = await runCli(['frobnicate'], { cli, env })
      expect([wrong.code, wrong.stdout, lines(wrong.stderr).length]).toEqual([2, '', 1])
    },
    STEP_MS,
  )

  test(
    'serve with its data folder on C:\\: the threads start, no mode warnings, devices on C:\\ and UNC paths, the page, SIGINT and exit 0',
    async () => {
      const [root, winRoot] = driveCFolder(prefix, 'serve')
      made.push(root)
      const data = `${winRoot}\\data`
      // The arguments of the WinSW recipe in docs/operations.md, with the test's data folder and any free port.
      const recipe = /<arguments>serve ([^<]*)<\/arguments>/
        .exec(readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8'))![1]!
        .split(' ')
      expect(recipe).toContain('--ffmpeg')
      const args = recipe.map((arg, i) => (recipe[i - 1] === '--data' ? data : recipe[i - 1] === '--port' ? '0' : arg))
      const proc = new Running([...cli, 'serve', ...args], { env })
      const url = (await proc.waitFor('stderr', / serving api=(http:\/\/\S+)\/api\/ /, STEP_MS))[1]!
      const server = { proc, base: url, api: `${url}/api` }
      const key = readFileSync(join(root, 'data', 'admin.token'), 'utf8').trim()
      const api = (method: string, path: string, body?: unknown) => call(server, method, path, key, body)

      expect((await api('GET', '/health')).json).toMatchObject({ status: 'ok' })
      const media = await api('POST', '/devices/', { name: 'media', path: `${winRoot}\\` })
      expect([media.status, media.json.path]).toEqual([201, `${winRoot}\\`])
      // A path given in its 8.3 short spelling is kept in its long one (the spelling every comparison uses).
      mkdirSync(join(root, 'Media Files Long'))
      const short = await runCli(['short.ts', `${winRoot}\\Media Files Long`], {
        cli,
        cwd: join(ROOT, 'test', 'cli', 'fixtures'),
        env: { ...env, BUN_BE_BUN: '1' },
      })
      expect(short.stdout.trim()).toMatch(/~/)
      const long = await api('POST', '/devices/', { name: 'long', path: `${short.stdout.trim()}\\` })
      expect([long.status, long.json.path]).toEqual([201, `${winRoot}\\Media Files Long\\`])
      const nas = await api('POST', '/devices/', { name: 'nas', path: '\\\\nas\\media\\' })
      expect(nas.status).toBe(201)
      // A path Windows' rules refuse gets the paths.ts message, not a 500.
      const verbatim = await api('POST', '/devices/', { name: 'verbatim', path: '\\\\?\\C:\\media\\' })
      expect(verbatim.status).toBe(400)
      // A drive letter that is not there (a network drive not mapped, for a program in a user's
      // logon as Wine runs it) is named in the status.
      const mapped = await api('POST', '/devices/', { name: 'mapped', path: 'M:\\media\\' })
      expect(mapped.status).toBe(201)
      const status = (await api('GET', '/devices/status/')).json
      const byId = (id: number) => status.find((s: any) => s.device === id)
      expect(byId(media.json.id)).toMatchObject({ online: true })
      expect(byId(nas.json.id)).toMatchObject({ online: false })
      expect(byId(mapped.json.id)).toMatchObject({
        online: false,
        reason: 'the drive M: is not there (a disk not connected, or a network drive not mapped?)',
      })
      const page = await fetch(`${server.base}/`)
      expect([page.status, page.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/html')])

      expect(await server.proc.stop('SIGINT', STEP_MS)).toBe(0)
      const log = lines(server.proc.stderr)
      expect(log.at(-1)).toMatch(/ info stopped$/)
      // No warning but the missing ffmpeg's and the missing folders': the checkpoint thread
      // started (its worker found inside the executable), and no "permissions tightened" from modes
      // Windows does not have; the data folder's access list is written (Wine keeps none: the start
      // says so in an info line).
      expect(
        log.filter(
          (l) =>
            / warn /.test(l) &&
            !/ warn (imports will make no proxies or probes|a device was created on a folder that is not there) /.test(
              l,
            ),
        ),
      ).toEqual([])
      // The devices made on folders that are not there (the share, the unmapped drive) said so.
      expect(
        log
          .filter((l) => / warn a device was created on a folder that is not there /.test(l))
          .map((l) => / name=(\S+)/.exec(l)?.[1]),
      ).toEqual(['nas', 'mapped'])
      // The recipe's ffmpeg folder is not on this machine: said once, and serve goes on.
      expect(
        log.some((l) =>
          / warn imports will make no proxies or probes reason="ffmpeg was not found in C:\\+ffmpeg\\+bin/.test(l),
        ),
      ).toBe(true)
      expect(log.filter((l) => / (permissions|checkpoint)/.test(l))).toEqual([])
      expect(log.some((l) => / info data folder access lists are not kept under Wine path=/.test(l))).toBe(true)
      expect(existsSync(join(root, 'data', 'reelhouse.db'))).toBe(true)

      // A second start of the same folder: migrate has nothing to do and warns of nothing.
      const again = await runCli(['--data', data, 'migrate'], { cli, env })
      expect(again.code).toBe(0)
      expect(lines(again.stderr).filter((l) => / warn /.test(l))).toEqual([])
    },
    2 * STEP_MS,
  )

  test(
    "an editor's session on C:\\: a production, imports moved into it (one onto a taken name, one held by another program until it lets go), a project copied with its progress and the copy deleted, another copy cancelled halfway, SIGINT",
    async () => {
      const [root, winRoot] = driveCFolder(prefix, 'session')
      made.push(root)
      const media = join(root, 'media')
      const winMedia = `${winRoot}\\media`
      const edit = join(media, 'Show', 'edit')
      makeTree(edit, {
        'edit.prproj': 'project\n',
        'media/a.bin': 300_000,
        'media/b.bin': 'b\n',
        'media/deep/c.bin': 70_000,
      })
      makeTree(media, {
        'ingest/A001.mov': 'essence A\n',
        'ingest/A002.mov': 'essence B\n',
        'ingest/A003.mov': 'essence C\n',
        'Show/video/A002.mov': 'already there\n',
      })
      const server = await startServe(`${winRoot}\\data`, {
        cli,
        env,
        args: ['--port', '0', '--settle', '3600'],
        boundMs: STEP_MS,
      })
      const key = readFileSync(join(root, 'data', 'admin.token'), 'utf8').trim()
      const api = (method: string, path: string, body?: unknown) => call(server, method, path, key, body)
      const task = async (url: string) => (await api('GET', url.replace(/^\/api/, ''))).json
      const ended = async (url: string) => {
        let t: Record<string, any> = {}
        await waitFor(async () => ['done', 'failed'].includes((t = await task(url)).state), `${url} to end`, {
          ms: STEP_MS,
          everyMs: 100,
        })
        return t
      }

      expect((await api('POST', '/devices/', { name: 'media', path: `${winMedia}\\` })).status).toBe(201)
      const production = await api('POST', '/productions/', { name: 'Show', storage_root: `${winMedia}\\Show` })
      expect([production.status, production.json.storage_root, production.json.proxy_root]).toEqual([
        201,
        `${winMedia}\\Show\\`,
        `${winMedia}\\Show\\proxies\\`,
      ])

      // An import moved into the production's area, by one rename relative to the folder handles.
      const imported = await api('POST', '/asset/import/', {
        type: 'video',
        production: 'Show',
        move_asset: true,
        asset: { asset_meta: { name: 'A001', path_file: `${winMedia}\\ingest\\A001.mov` } },
      })
      expect(imported.status).toBe(201)
      expect(await ended(imported.json.task.url)).toMatchObject({ state: 'done', error: '' })
      expect((await api('GET', `/videoassets/${imported.json.asset_import_id}/`)).json).toMatchObject({
        path_file: `${winMedia}\\Show\\video\\A001.mov`,
        is_production: true,
      })
      expect(readFileSync(join(media, 'Show', 'video', 'A001.mov'), 'utf8')).toBe('essence A\n')

      // Onto a name that is taken: the rename never replaces (FileRenameInformation without
      // ReplaceIfExists); the file gets the next free name and the other file stays as it was.
      const taken = await api('POST', '/asset/import/', {
        type: 'video',
        production: 'Show',
        move_asset: true,
        asset: { asset_meta: { name: 'A002', path_file: `${winMedia}\\ingest\\A002.mov` } },
      })
      expect(await ended(taken.json.task.url)).toMatchObject({ state: 'done' })
      expect((await api('GET', `/videoassets/${taken.json.asset_import_id}/`)).json.path_file).toBe(
        `${winMedia}\\Show\\video\\A002_1.mov`,
      )
      expect(readFileSync(join(media, 'Show', 'video', 'A002.mov'), 'utf8')).toBe('already there\n')
      expect(readFileSync(join(media, 'Show', 'video', 'A002_1.mov'), 'utf8')).toBe('essence B\n')

      // Held by another program (a second Wine process, as an editing application holds its
      // media: no FILE_SHARE_DELETE): the move waits, saying so, and completes once it is let go.
      const holder = new Running([...cli, 'hold.ts', `${winMedia}\\ingest\\A003.mov`], {
        cwd: join(ROOT, 'test', 'cli', 'fixtures'),
        env: { ...env, BUN_BE_BUN: '1' },
      })
      await holder.waitFor('stdout', /^held$/m, STEP_MS)
      const held = await api('POST', '/asset/import/', {
        type: 'video',
        production: 'Show',
        move_asset: true,
        asset: { asset_meta: { name: 'A003', path_file: `${winMedia}\\ingest\\A003.mov` } },
      })
      let waiting: Record<string, any> = {}
      await waitFor(
        async () => (waiting = await task(held.json.task.url)).step !== 'move' && waiting.step !== '',
        'the move to wait',
        { ms: STEP_MS, everyMs: 100 },
      )
      expect(waiting).toMatchObject({
        state: 'running',
        step: `waiting: a file is in use by another program: ${winMedia}\\ingest\\A003.mov`,
      })
      expect(existsSync(join(media, 'ingest', 'A003.mov'))).toBe(true)
      await holder.stop('SIGKILL', STEP_MS)
      expect(await ended(held.json.task.url)).toMatchObject({ state: 'done', error: '' })
      expect(readFileSync(join(media, 'Show', 'video', 'A003.mov'), 'utf8')).toBe('essence C\n')

      // A project copied (its progress counted), then the copy deleted; the source untouched.
      const source = snapshot(edit)
      const project = await api('POST', '/projectassets/', {
        name: 'edit',
        bundle_root: `${winMedia}\\Show\\edit\\`,
        production_id: production.json.id,
      })
      expect(project.status).toBe(201)
      const copy = await api('POST', '/projectassets/', {
        name: 'edit copy',
        bundle_root: `${winMedia}\\Show\\edit copy\\`,
        production_id: production.json.id,
        copy_of: project.json.id,
      })
      expect(copy.status).toBe(201)
      expect(await ended(copy.json.task.url)).toMatchObject({
        kind: 'copy',
        state: 'done',
        files_done: 4,
        files_total: 4,
        bytes_done: 370_010,
        bytes_total: 370_010,
      })
      // The copy holds the source, and the ASC MHL history it wrote at its root.
      const copied = snapshot(join(media, 'Show', 'edit copy'))
      expect(withoutHistory(copied)).toEqual(source)
      expect(Object.keys(copied).filter(inHistory)).toEqual([
        'ascmhl',
        expect.stringMatching(/^ascmhl\/0001_edit copy_\d{4}-\d\d-\d\d_\d{6}Z\.mhl$/),
        'ascmhl/ascmhl_chain.xml',
      ])
      const removal = await api('DELETE', `/projectassets/${copy.json.id}/`)
      expect(removal.status).toBe(202)
      expect(await ended(removal.json.task.url)).toMatchObject({ kind: 'delete', state: 'done', error: '' })
      expect(existsSync(join(media, 'Show', 'edit copy'))).toBe(false)
      expect(snapshot(edit)).toEqual(source)

      // A copy cancelled while it runs: ended at once, its hidden staging folder removed, nothing
      // at the target (400 files: a few seconds under Wine, so the cancel meets it halfway).
      manyFiles(join(media, 'Show', 'rushes'), 400, 16384, 50)
      const rushes = await api('POST', '/projectassets/', {
        name: 'rushes',
        bundle_root: `${winMedia}\\Show\\rushes\\`,
        production_id: production.json.id,
      })
      const copying = await api('POST', '/projectassets/', {
        name: 'rushes copy',
        bundle_root: `${winMedia}\\Show\\rushes copy\\`,
        production_id: production.json.id,
        copy_of: rushes.json.id,
      })
      await waitFor(async () => (await task(copying.json.task.url)).files_done > 0, 'the copy to begin', {
        ms: STEP_MS,
        everyMs: 20,
      })
      expect((await api('POST', `/tasks/${copying.json.task.id}/cancel/`)).status).toBe(200)
      expect(await ended(copying.json.task.url)).toMatchObject({ kind: 'copy', state: 'failed', error: 'cancelled' })
      expect(existsSync(join(media, 'Show', 'rushes copy'))).toBe(false)
      expect(existsSync(join(media, 'Show', `.reelhouse-copy-${copying.json.task.id}`))).toBe(false)

      expect(await server.proc.stop('SIGINT', STEP_MS)).toBe(0)
      const log = lines(server.proc.stderr)
      expect(log.at(-1)).toMatch(/ info stopped$/)
      expect(
        log.filter(
          (l) =>
            / (warn|error) /.test(l) &&
            !/ warn (imports will make no proxies or probes|task failed .*error=cancelled) /.test(l),
        ),
      ).toEqual([])
    },
    4 * STEP_MS,
  )
})
