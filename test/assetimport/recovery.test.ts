// The compiled server killed with SIGKILL in the middle of an import's move of a large file
// across file systems (service.md 8 and 9): after a restart the import ends, the file is at
// exactly one of its two paths with its content, path_file names that path, no temporary file
// is left, and the asset is listed once.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import {
  emptyFfmpegDir,
  importBody,
  otherFileSystemDir,
  removeScratch,
  scratchDir,
  sha256,
} from '../helpers/imports.ts'
import { type Server, call, compiledExecutable, killAll, startServe } from '../helpers/process.ts'
import { writeLarge } from '../helpers/tree.ts'
import { waitFor } from '../helpers/wait.ts'
import { OTHER_TMP } from '../helpers/temp.ts'

const SIZE = 300 * 1024 * 1024
const data = scratchDir('reelhouse-import-recovery-data-')
const disk = scratchDir('reelhouse-import-recovery-disk-')
/** Where the big file is written, off the devices (same file system as `disk`): see the test. */
const staging = scratchDir('reelhouse-import-recovery-staging-')
const far = otherFileSystemDir('reelhouse-import-recovery-far-')
/** No ffmpeg: the import ends right after the move, with warnings. */
const noFfmpeg = emptyFfmpegDir()
let binary: string
let server: Server
let key: string

const start = async () => {
  server = await startServe(data, { cli: [binary], args: ['--port', '0', '--ffmpeg', noFfmpeg] })
}

beforeAll(async () => {
  binary = await compiledExecutable()
  await start()
  key = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  expect((await call(server, 'POST', '/devices/', key, { name: 'disk', path: disk })).status).toBe(201)
  expect((await call(server, 'POST', '/devices/', key, { name: 'far-disk', path: far.dir })).status).toBe(201)
  expect(
    (await call(server, 'POST', '/productions/', key, { name: 'Show', storage_root: join(disk, 'Show') })).status,
  ).toBe(201)
}, 60_000)

afterAll(async () => {
  await killAll()
  removeScratch()
})

const hidden = (dir: string) =>
  existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith('.reelhouse-')) : []

const name = far.cross
  ? `SIGKILL during a move across file systems (onto ${OTHER_TMP}): after restart the file is at one path, whole, and catalogued once`
  : 'SIGKILL during a move onto another device (both on one file system here: the machine has no second one): after restart the file is at one path, whole, and catalogued once'

test(name, async () => {
  const source = join(disk, 'incoming', 'big.mov')
  mkdirSync(join(disk, 'incoming'))
  // Written off the device and renamed in right before the import: `disk` is the production's
  // watch folder, and on a busy machine the watcher's settle time could pass during a slow write
  // of 300 MB, so that the watcher imported the file first (the request's answer: an update).
  const written = join(staging, 'big.mov')
  writeLarge(written, SIZE)
  const hash = sha256(written)
  renameSync(written, source)
  const targetDir = join(far.dir, 'show', 'video')
  const target = join(targetDir, 'big.mov')

  const body = importBody(source, { name: 'big' }, {}, { move_asset: true, asset_destination: 'far-disk' })
  const reply = await call(server, 'POST', '/asset/import/', key, body)
  expect([reply.status, reply.json?.status]).toEqual([201, 'asset_creation_completed'])
  const id = reply.json.asset_import_id as number

  await waitFor(() => hidden(targetDir).some((n) => n.startsWith('.reelhouse-move-')), 'the move to start copying', {
    ms: 60_000,
    everyMs: 1,
  })
  server.proc.child.kill('SIGKILL')
  await server.proc.exited()

  await start()
  const log = async () =>
    (await call(server, 'GET', `/importlogs/?asset_path=${encodeURIComponent(source)}`, key)).json[0]
  await waitFor(async () => ['import_completed', 'import_failed'].includes((await log()).status), 'the import to end', {
    ms: 60_000,
    everyMs: 20,
  })

  expect(await log()).toEqual({
    id: expect.any(Number),
    asset_type: 'videoasset',
    asset_path: source,
    status: 'import_completed',
    error: '',
    warning: { probe: expect.any(String), proxy: expect.any(String) },
    payload: expect.any(String),
    asset_config: { move_asset: true, rewrap_proxy: false, asset_destination: 'far-disk' },
    asset_import_id: id,
  })
  const at = [source, target].filter((p) => existsSync(p))
  expect(at).toHaveLength(1)
  expect(sha256(at[0]!)).toBe(hash)
  const asset = (await call(server, 'GET', `/videoassets/${id}/`, key)).json
  expect(asset).toMatchObject({ id, path_file: at[0], status_asset: 6 })
  expect(hidden(targetDir)).toEqual([])
  expect(hidden(join(disk, 'incoming'))).toEqual([])
  const listed = (await call(server, 'GET', '/videoassets/', key)).json as { id: number; path_file: string }[]
  expect(listed.filter((a) => a.id === id || a.path_file === source || a.path_file === target)).toEqual([
    expect.objectContaining({ id, path_file: at[0] }),
  ])
  expect(server.proc.stderr).toContain('task resumed after restart')
}, 90_000)
