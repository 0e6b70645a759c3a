// The linux-arm64 executable (build.ts --target linux-arm64), tested rather than assumed: built
// once per run into a folder of its own (crossExecutable) and run under qemu-aarch64, QEMU's
// user-mode emulation (Debian: qemu-user, with the arm64 C library of libc6-arm64-cross as its
// -L root), through a whole session over HTTP: serve on an empty data folder, a device, a
// production, a project copied and the copy deleted (the delete goes through src/storage/dirfd.ts,
// the C library's openat/unlinkat called by bun:ffi with aarch64's flags), a file imported, the
// watcher (inotify, in its thread) following a rename of that file, and SIGTERM with exit code 0.
// On an arm64 Linux machine the executable runs as it is. User-mode emulation runs the arm64
// code on this machine's kernel: it is not a NAS, but it is the program a NAS would run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { folders } from '../helpers/envelope.ts'
import {
  call,
  crossExecutable,
  killAll,
  lines,
  runCli,
  type Server,
  startServe,
  versionPattern,
} from '../helpers/process.ts'
import { inHistory, makeTree, snapshot, withoutHistory } from '../helpers/tree.ts'
import { waitFor } from '../helpers/wait.ts'

const SYSROOT = '/usr/aarch64-linux-gnu'
const qemu = Bun.which('qemu-aarch64')
const native = process.platform === 'linux' && process.arch === 'arm64'

/** Why the test cannot run here, or undefined. */
const why = native
  ? undefined
  : process.platform !== 'linux'
    ? `qemu-aarch64's user-mode emulation runs only on Linux, not ${process.platform}`
    : !qemu
      ? 'qemu-aarch64 is not installed (Debian: apt-get install qemu-user)'
      : !existsSync(join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1'))
        ? `the arm64 C library is not in ${SYSROOT} (Debian: apt-get install libc6-arm64-cross)`
        : undefined
if (why) console.log(`[skip] test/cli/arm64.test.ts: ${why}`)

/**
 * Bounds under emulation: qemu translates every instruction of the runtime, so here serve took
 * about 5 s from starting to serving (natively 0.3 s), `--version` about 4 s, and the whole
 * session 20 s; the bounds leave room for a loaded machine (npm test runs other test files beside
 * this one, and under their load the first start took over 60 s once).
 */
const SESSION_MS = 400_000
const STEP_MS = 120_000

const dirs = folders()
const dir = dirs.make
afterAll(async () => {
  await killAll()
  dirs.cleanup()
})

describe.skipIf(why !== undefined)('the linux-arm64 executable under qemu-aarch64', () => {
  let binary: string
  let cli: string[]
  let started: number

  beforeAll(async () => {
    started = Date.now()
    binary = await crossExecutable('linux-arm64')
    cli = native ? [binary] : [qemu!, '-L', SYSROOT, binary]
    console.log(`built ${binary} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }, 180_000)

  test(
    '--version names the commit it was built from',
    async () => {
      expect(await runCli(['--version'], { cli })).toEqual({
        code: 0,
        stdout: expect.stringMatching(versionPattern({ path: binary })),
        stderr: '',
      })
    },
    STEP_MS,
  )

  test(
    'a session: a device, a production, a project copied and the copy deleted, a file imported, the watcher following its rename, SIGTERM',
    async () => {
      const began = Date.now()
      const data = join(dir('reelhouse-arm64-'), 'data')
      const media = dir('reelhouse-arm64-media-')
      const cwd = dir('reelhouse-arm64-cwd-')
      // No ffmpeg (an empty folder): the import completes with a warning instead of probing. A
      // settle time longer than the test keeps the watcher from importing the clip itself before
      // the request does; renames are followed by the file's identity, with no settling.
      const edit = join(media, 'Show', 'edit')
      makeTree(edit, {
        'edit.prproj': 'project\n',
        'media/a.bin': 300_000,
        'media/b.bin': 'b\n',
        'media/deep/c.bin': 70_000,
      })
      const server: Server = await startServe(data, {
        cli,
        cwd,
        args: ['--port', '0', '--ffmpeg', dir('reelhouse-arm64-noff-'), '--settle', '3600'],
        boundMs: STEP_MS,
      })
      const key = readFileSync(join(data, 'admin.token'), 'utf8').trim()
      const api = (method: string, path: string, body?: unknown) => call(server, method, path, key, body)
      /** The task at `url` once it has ended. */
      const ended = async (url: string) => {
        let task: Record<string, any> = {}
        await waitFor(
          async () => {
            task = (await api('GET', url.replace(/^\/api/, ''))).json
            return task.state === 'done' || task.state === 'failed'
          },
          `${url} to end`,
          { ms: STEP_MS, everyMs: 100 },
        )
        return task
      }

      const device = await api('POST', '/devices/', { name: 'nas', path: media })
      expect(device.status).toBe(201)
      const production = await api('POST', '/productions/', { name: 'Show', storage_root: join(media, 'Show') })
      expect(production.status).toBe(201)
      // The watcher's thread watches the device with file events (inotify), not polling, and the
      // device's start scan is done.
      let status: Record<string, any> = {}
      await waitFor(
        async () => {
          status = (await api('GET', `/devices/${device.json.id}/status/`)).json
          return status.watch?.ready === true && status.last_scan?.state === 'done'
        },
        'the watcher to be ready and the start scan done',
        { ms: STEP_MS, everyMs: 100 },
      )
      expect(status.watch).toEqual({ mode: 'events', ready: true })

      const clip = join(media, 'Show', 'footage', 'A001C001.mov')
      makeTree(media, { 'Show/footage/A001C001.mov': 'essence\n' })
      const imported = await api('POST', '/asset/import/', {
        type: 'video',
        production: 'Show',
        asset: { asset_meta: { name: 'A001C001', path_file: clip } },
      })
      expect([imported.status, imported.json.status]).toEqual([201, 'asset_creation_completed'])
      expect((await ended(imported.json.task.url)).state).toBe('done')
      const asset = imported.json.asset_import_id as number

      const source = snapshot(edit)
      const project = await api('POST', '/projectassets/', {
        name: 'edit',
        bundle_root: `${edit}/`,
        production_id: production.json.id,
      })
      expect(project.status).toBe(201)
      const copyRoot = join(media, 'Show', 'edit copy')
      const copy = await api('POST', '/projectassets/', {
        name: 'edit copy',
        bundle_root: `${copyRoot}/`,
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
      })
      // The copy holds the source, and the ASC MHL history it wrote at its root.
      const copied = snapshot(copyRoot)
      expect(withoutHistory(copied)).toEqual(source)
      expect(Object.keys(copied).filter(inHistory)).toEqual([
        'ascmhl',
        expect.stringMatching(/^ascmhl\/0001_edit copy_\d{4}-\d\d-\d\d_\d{6}Z\.mhl$/),
        'ascmhl/ascmhl_chain.xml',
      ])
      expect((await api('GET', `/projectassets/${copy.json.id}/`)).json).toMatchObject({
        is_production: true,
        status_asset: 6,
      })

      const removal = await api('DELETE', `/projectassets/${copy.json.id}/`)
      expect(removal.status).toBe(202)
      expect(await ended(removal.json.task.url)).toMatchObject({ kind: 'delete', state: 'done', error: '' })
      expect(existsSync(copyRoot)).toBe(false)
      expect((await api('GET', `/projectassets/${copy.json.id}/`)).status).toBe(404)
      expect(snapshot(edit)).toEqual(source)

      // Renamed behind the catalogue's back: the same asset, at the new path.
      const renamed = join(media, 'Show', 'footage', 'A001C001 take 2.mov')
      renameSync(clip, renamed)
      await waitFor(
        async () => (await api('GET', `/videoassets/${asset}/`)).json.path_file === renamed,
        'the rename to be followed',
        { ms: STEP_MS, everyMs: 100 },
      )
      expect((await api('GET', `/videoassets/${asset}/`)).json).toMatchObject({
        id: asset,
        is_production: true,
        path_file: renamed,
      })
      expect(Number((await api('GET', '/videoassets/?limit=0')).headers.get('x-total-count'))).toBe(1)

      // The page is embedded as in the host's build.
      const page = await fetch(`${server.base}/`)
      expect([page.status, page.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/html')])

      expect(await server.proc.stop('SIGTERM', STEP_MS)).toBe(0)
      expect(lines(server.proc.stderr).at(-1)).toMatch(/ info stopped$/)
      // Only our own lines, and no warning but the one of the missing ffmpeg: no failed thread, no
      // call the platform could not make.
      expect(
        lines(server.proc.stderr).filter(
          (l) => !/^\d{4}-\d\d-\d\dT\S+Z (info|warn imports will make no proxies or probes) /.test(l),
        ),
      ).toEqual([])
      console.log(
        `the arm64 session took ${((Date.now() - began) / 1000).toFixed(1)} s under ${native ? 'no emulation' : 'qemu-aarch64'}`,
      )
    },
    SESSION_MS,
  )
})
