// A file held by another program (src/storage/busy.ts): a move or a delete that meets EBUSY waits
// and tries again, saying so in its task's step, and completes once the file is let go; a cancel
// ends it at once while it waits. On Linux a file that something is mounted on is such a file:
// renaming or removing it gives EBUSY (rename(2)) until it is unmounted. So the compiled server
// runs in a mount namespace of its own (unshare -m, private propagation: nothing reaches the
// machine's mounts), and the test bind-mounts a clip onto itself there (nsenter), which changes
// neither its bytes nor its identity (a bind mount shows the same device and inode), only makes
// it busy. On Windows the same wait follows a sharing violation (an editing application holding
// the file), which test/cli/windows.test.ts shows under Wine.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { folders } from '../helpers/envelope.ts'
import { call, compiledExecutable, killAll, type Server, startServe } from '../helpers/process.ts'
import { makeTree } from '../helpers/tree.ts'
import { waitFor } from '../helpers/wait.ts'

const UNSHARE = Bun.which('unshare')
const NSENTER = Bun.which('nsenter')
const MOUNT = Bun.which('mount')

/** Why the test cannot run here (mount namespaces need Linux and the right to make them), or undefined. */
const why = (() => {
  if (process.platform !== 'linux') return `mount namespaces are Linux's, not ${process.platform}'s`
  if (!UNSHARE || !NSENTER || !MOUNT) return 'unshare, nsenter or mount is missing (Debian: util-linux, mount)'
  const probe = Bun.spawnSync([UNSHARE, '-m', '--propagation', 'private', 'true'], { stderr: 'pipe' })
  if (probe.exitCode !== 0)
    return `a mount namespace cannot be made here (${probe.stderr.toString().trim() || `exit ${probe.exitCode}`}; it needs root or CAP_SYS_ADMIN)`
  return undefined
})()
if (why) console.log(`[skip] test/cli/in-use.test.ts: ${why}`)

const dirs = folders()
const dir = dirs.make
afterAll(async () => {
  await killAll()
  dirs.cleanup()
})

describe.skipIf(why !== undefined)('a file in use by another program', () => {
  test('a move waits, saying which file, and completes once the file is let go; a cancel ends a waiting move at once and leaves the file', async () => {
    const data = join(dir('reelhouse-inuse-'), 'data')
    const media = dir('reelhouse-inuse-media-')
    const server: Server = await startServe(data, {
      cli: [UNSHARE!, '-m', '--propagation', 'private', await compiledExecutable()],
      args: ['--port', '0', '--ffmpeg', dir('reelhouse-inuse-noff-'), '--settle', '3600'],
    })
    const pid = server.proc.child.pid
    const inside = (...args: string[]) => {
      const run = Bun.spawnSync([NSENTER!, '-t', String(pid), '-m', ...args], { stderr: 'pipe' })
      if (run.exitCode !== 0) throw new Error(`${args.join(' ')}: ${run.stderr.toString()}`)
    }
    const key = readFileSync(join(data, 'admin.token'), 'utf8').trim()
    const api = (method: string, path: string, body?: unknown) => call(server, method, path, key, body)
    expect((await api('POST', '/devices/', { name: 'media', path: `${media}/` })).status).toBe(201)
    expect((await api('POST', '/productions/', { name: 'Show', storage_root: join(media, 'Show') })).status).toBe(201)
    makeTree(media, { 'ingest/A001.mov': 'essence A\n', 'ingest/A002.mov': 'essence B\n' })
    const clip = join(media, 'ingest', 'A001.mov')
    const other = join(media, 'ingest', 'A002.mov')
    inside(MOUNT!, '--bind', clip, clip)
    inside(MOUNT!, '--bind', other, other)

    const task = async (url: string) => (await api('GET', url.replace(/^\/api/, ''))).json
    const imported = await api('POST', '/asset/import/', {
      type: 'video',
      production: 'Show',
      move_asset: true,
      asset: { asset_meta: { name: 'A001', path_file: clip } },
    })
    expect(imported.status).toBe(201)
    const url = imported.json.task.url as string
    let seen: Record<string, any> = {}
    await waitFor(
      async () => {
        seen = await task(url)
        return seen.step.startsWith('waiting')
      },
      'the move to wait for the held file',
      { ms: 30_000, everyMs: 50 },
    )
    expect(seen).toMatchObject({
      state: 'running',
      step: `waiting: a file is in use by another program: ${clip}`,
      error: '',
    })
    // Still waiting a moment later: the refusal is not the task's end, and nothing was copied.
    await Bun.sleep(1500)
    expect(await task(url)).toMatchObject({
      state: 'running',
      step: `waiting: a file is in use by another program: ${clip}`,
    })
    expect(existsSync(clip)).toBe(true)

    inside('umount', clip)
    let ended: Record<string, any> = {}
    await waitFor(
      async () => {
        ended = await task(url)
        return ended.state !== 'running' && ended.state !== 'queued'
      },
      'the move to complete',
      { ms: 30_000, everyMs: 50 },
    )
    expect(ended).toMatchObject({ state: 'done', error: '' })
    const asset = (await api('GET', `/videoassets/${imported.json.asset_import_id}/`)).json
    expect(asset.path_file).toBe(join(media, 'Show', 'video', 'A001.mov'))
    expect(readFileSync(asset.path_file, 'utf8')).toBe('essence A\n')
    expect(existsSync(clip)).toBe(false)

    // A cancel while it waits: ended at once, the file where it was.
    const second = await api('POST', '/asset/import/', {
      type: 'video',
      production: 'Show',
      move_asset: true,
      asset: { asset_meta: { name: 'A002', path_file: other } },
    })
    const secondUrl = second.json.task.url as string
    await waitFor(async () => (await task(secondUrl)).step.startsWith('waiting'), 'the second move to wait', {
      ms: 30_000,
      everyMs: 50,
    })
    const cancelled = await api('POST', `/tasks/${second.json.task.id}/cancel/`)
    expect(cancelled.status).toBe(200)
    await waitFor(async () => (await task(secondUrl)).state === 'failed', 'the cancel to end the task', {
      ms: 10_000,
      everyMs: 50,
    })
    expect(await task(secondUrl)).toMatchObject({ state: 'failed', error: 'cancelled' })
    inside('umount', other)
    expect(readFileSync(other, 'utf8')).toBe('essence B\n')
    expect(existsSync(join(media, 'Show', 'video', 'A002.mov'))).toBe(false)
    expect(await server.proc.stop('SIGTERM')).toBe(0)
  }, 120_000)
})
