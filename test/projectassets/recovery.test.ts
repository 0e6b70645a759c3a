// The compiled server killed with SIGKILL in the middle of a copy or a delete: after a restart
// the work is finished, nothing half made is ever visible, nothing is lost.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { type Server, call, compiledExecutable, killAll, startServe } from '../helpers/process.ts'
import { historyFiles, leftovers, makeTree, manyFiles, snapshot, withoutHistory } from '../helpers/tree.ts'
import { waitFor } from '../helpers/wait.ts'

const data = tempDir('reelhouse-recovery-data-')
const disk = tempDir('reelhouse-recovery-disk-')
let server: Server
let key: string
let production: number

const restart = async () => {
  server = await startServe(data, { cli: [await compiledExecutable()] })
}

beforeAll(async () => {
  await restart()
  key = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  expect((await call(server, 'POST', '/devices/', key, { name: 'disk', path: disk })).status).toBe(201)
  const p = await call(server, 'POST', '/productions/', key, { name: 'Show', storage_root: join(disk, 'Show') })
  production = p.json.id
}, 60_000)

afterAll(async () => {
  await killAll()
  rmSync(data, { recursive: true, force: true })
  rmSync(disk, { recursive: true, force: true })
})

async function createProject(name: string) {
  const r = await call(server, 'POST', '/projectassets/', key, {
    name,
    bundle_root: join(disk, 'Show', name),
    production_id: production,
  })
  expect(r.status).toBe(201)
  return r.json as { id: number; bundle_root: string }
}

test('SIGKILL during a copy: no target visible, the copy completes after restart', async () => {
  const bundle = join(disk, 'Show', 'Source')
  makeTree(bundle, { 'edit.prproj': 'project', 'media/big.mxf': 400 * 1024 * 1024 })
  manyFiles(join(bundle, 'cache'), 1000, 16 * 1024)
  const source = await createProject('Source')
  const before = snapshot(source.bundle_root)

  const copy = await call(server, 'POST', '/projectassets/', key, {
    name: 'Copy',
    bundle_root: join(disk, 'Show', 'Copy'),
    production_id: production,
    copy_of: source.id,
  })
  expect(copy.status).toBe(201)
  await waitFor(
    () => leftovers(join(disk, 'Show')).some((n) => n.startsWith('.reelhouse-copy-')),
    'the copy to start',
    { ms: 60_000, everyMs: 2 },
  )
  server.proc.child.kill('SIGKILL')
  await server.proc.exited()

  expect(existsSync(join(disk, 'Show', 'Copy'))).toBe(false)
  await restart()
  expect((await call(server, 'GET', `/projectassets/${copy.json.id}/`, key)).json.is_production).toBe(false)
  await waitFor(
    async () => (await call(server, 'GET', `/projectassets/${copy.json.id}/`, key)).json.status_asset !== 0,
    'the copy to end',
    { ms: 60_000, everyMs: 2 },
  )

  const after = await call(server, 'GET', `/projectassets/${copy.json.id}/`, key)
  // The copy made again holds the source and its history (one generation: the first copy's went with its hidden folder).
  const history = historyFiles(join(disk, 'Show', 'Copy'))
  expect(after.json).toMatchObject({
    status_asset: 6,
    is_production: true,
    files: { count: 1002 + history.count, bytes: 7 + 400 * 1024 * 1024 + 1000 * 16 * 1024 + history.bytes },
  })
  expect(history.count).toBe(2)
  expect(withoutHistory(snapshot(join(disk, 'Show', 'Copy')))).toEqual(before)
  expect(snapshot(source.bundle_root)).toEqual(before)
  expect(leftovers(join(disk, 'Show'))).toEqual([])
  expect(server.proc.stderr).toContain('task resumed after restart')
  const task = (await call(server, 'GET', '/tasks/?kind=copy', key)).json.at(-1)
  expect(task).toMatchObject({
    state: 'done',
    files_done: 1002,
    files_total: 1002,
    result: { files_verified: 1002, manifest: expect.stringMatching(/^ascmhl\/0001_Copy_.*\.mhl$/) },
  })
}, 120_000)

test('SIGKILL during a delete: the folder is gone at once and fully removed after restart', async () => {
  const bundle = join(disk, 'Show', 'Doomed')
  manyFiles(bundle, 20_000, 1, 500)
  const doomed = await createProject('Doomed')
  makeTree(join(disk, 'Show', 'Neighbour'), { 'stay.txt': 'stay' })

  expect((await call(server, 'DELETE', `/projectassets/${doomed.id}/`, key)).status).toBe(202)
  await waitFor(
    () => leftovers(join(disk, 'Show')).some((n) => n.startsWith('.reelhouse-delete-')),
    'the delete to start',
    { ms: 60_000, everyMs: 2 },
  )
  server.proc.child.kill('SIGKILL')
  await server.proc.exited()

  expect(existsSync(bundle)).toBe(false)
  expect(leftovers(join(disk, 'Show'))).toHaveLength(1)
  await restart()
  await waitFor(
    async () => (await call(server, 'GET', `/projectassets/${doomed.id}/`, key)).status === 404,
    'the delete to end',
    { ms: 60_000, everyMs: 2 },
  )
  expect(leftovers(join(disk, 'Show'))).toEqual([])
  expect(readFileSync(join(disk, 'Show', 'Neighbour', 'stay.txt'), 'utf8')).toBe('stay')
  expect(existsSync(join(disk, 'Show', 'Source', 'edit.prproj'))).toBe(true)
}, 120_000)
