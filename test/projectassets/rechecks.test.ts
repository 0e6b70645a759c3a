// Tasks re-check everything when they start or resume (issue 10, points 3 and 4): a copy or a
// delete acts only on the folder that was there when it was asked for, reached from its device
// with no symbolic link on the way, for a user who may still do it. The task row is written
// with the runner stopped, the world is changed under it, then the runner starts: the same
// situation as a change made while the service was down.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { listTree, openBeneath, copyTree } from '../../src/storage/fs.ts'
import { close } from '../../src/storage/dirfd.ts'
import { type TestApp, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { leftovers, makeTree, manyFiles, snapshot } from '../helpers/tree.ts'

let t: TestApp
let root: string
let show: { id: number }
let outside: string

beforeEach(async () => {
  t = testApp(undefined, { tasks: false })
  ;({ root, production: show } = await seedProduction(t))
  outside = tempDir('reelhouse-outside-')
})
afterEach(async () => {
  await t.stop()
  rmSync(t.dataDir, { recursive: true, force: true })
  rmSync(outside, { recursive: true, force: true })
})

const project = async (bundle: string, files: Record<string, string | number | null> = { 'edit.prproj': 'project' }) => {
  makeTree(bundle, files)
  const r = await t.post('/api/projectassets/', { name: 'P', bundle_root: bundle, production_id: show.id })
  expect(r.status).toBe(201)
  return r.json as { id: number; bundle_root: string }
}
const lastTask = () => t.db.$client.query<{ id: number; state: string; error: string }, []>('SELECT id, state, error FROM tasks ORDER BY id DESC LIMIT 1').get()!
const runTasks = async () => {
  t.runner.start()
  await t.runner.idle()
  return lastTask()
}

describe('delete', () => {
  test('resumed after a crash, with a parent folder swapped for a link while the service was down: fails, nothing outside removed', async () => {
    const parent = join(root, 'Show', 'Parent')
    const doomed = await project(join(parent, 'Doomed'), { 'a.txt': 'a', 'b/c.txt': 'c' })
    expect((await t.request('DELETE', `/api/projectassets/${doomed.id}/`)).status).toBe(202)
    const task = lastTask()
    // The state a crash in the middle of the delete leaves: folder renamed, row still running.
    renameSync(join(parent, 'Doomed'), join(parent, `.reelhouse-delete-${task.id}`))
    t.db.$client.run(`UPDATE tasks SET state = 'running' WHERE id = ${task.id}`)
    // While the service is down, the parent is swapped for a link to an outside folder holding
    // a folder of the same hidden name with 10 files.
    manyFiles(join(outside, `.reelhouse-delete-${task.id}`), 10, 100, 5)
    const before = snapshot(outside)
    renameSync(parent, join(root, 'Show', 'Parent-real'))
    symlinkSync(outside, parent)

    const ended = await runTasks()
    expect(ended.state).toBe('failed')
    expect(ended.error).not.toContain(outside)
    expect(snapshot(outside)).toEqual(before)
    // The real hidden folder is left alone, whole.
    expect(readFileSync(join(root, 'Show', 'Parent-real', `.reelhouse-delete-${task.id}`, 'b', 'c.txt'), 'utf8')).toBe('c')
  })

  test('a folder replaced by another of the same name before the task starts is not removed', async () => {
    const bundle = join(root, 'Show', 'Replaced')
    const p = await project(bundle)
    expect((await t.request('DELETE', `/api/projectassets/${p.id}/`)).status).toBe(202)
    // Moved away (its inode stays taken) and another folder put in its place; a folder removed
    // and made again often gets the same inode back, which the birth time tells apart.
    renameSync(bundle, join(root, 'Show', 'Replaced-moved'))
    makeTree(bundle, { 'someone-elses.txt': 'new work' })
    const ended = await runTasks()
    expect(ended).toMatchObject({ state: 'failed' })
    expect(ended.error).toContain('replaced')
    expect(readFileSync(join(bundle, 'someone-elses.txt'), 'utf8')).toBe('new work')
    expect(leftovers(join(root, 'Show'))).toEqual([])
  })

  test('a folder removed and made again under the same name (often the same inode) is not removed', async () => {
    const bundle = join(root, 'Show', 'Remade')
    const p = await project(bundle)
    expect((await t.request('DELETE', `/api/projectassets/${p.id}/`)).status).toBe(202)
    rmSync(bundle, { recursive: true })
    makeTree(bundle, { 'someone-elses.txt': 'new work' })
    expect((await runTasks()).state).toBe('failed')
    expect(readFileSync(join(bundle, 'someone-elses.txt'), 'utf8')).toBe('new work')
  })

  test("a user who lost write access before the task starts: the task fails, the folder stays", async () => {
    const key = t.makeUser('leaving-editor', { write: [show.id] })
    const bundle = join(root, 'Show', 'Kept')
    const p = (await t.post('/api/projectassets/', { name: 'K', bundle_root: bundle, production_id: show.id }, { key })).json
    expect((await t.request('DELETE', `/api/projectassets/${p.id}/`, { key })).status).toBe(202)
    t.db.$client.run(`UPDATE production_access SET level = 'read'`)
    const ended = await runTasks()
    expect(ended.state).toBe('failed')
    expect(ended.error).toContain('write access')
    expect(existsSync(bundle)).toBe(true)
  })

  test('media of another production catalogued inside before the task starts: the task fails, nothing removed', async () => {
    const other = (await t.post('/api/productions/', { name: 'Other', storage_root: join(root, 'Other') })).json
    const bundle = join(root, 'Show', 'Late')
    const p = await project(bundle, { 'shot.mov': 'other production shot' })
    expect((await t.request('DELETE', `/api/projectassets/${p.id}/`)).status).toBe(202)
    expect((await t.post('/api/videoassets/', { name: 'shot', path_file: join(bundle, 'shot.mov'), production: other.id })).status).toBe(201)
    const ended = await runTasks()
    expect(ended.state).toBe('failed')
    expect(ended.error).toContain('another production')
    expect(readFileSync(join(bundle, 'shot.mov'), 'utf8')).toBe('other production shot')
  })
})

describe('copy', () => {
  const copy = (source: number, name: string, key?: string) =>
    t.post('/api/projectassets/', { name, bundle_root: join(root, 'Show', name), production_id: show.id, copy_of: source }, { key })

  test("a source whose parent was swapped for a link after the request is not read: the copy fails", async () => {
    const parent = join(root, 'Show', 'Src')
    const source = await project(join(parent, 'Proj'), { 'edit.prproj': 'real project' })
    expect((await copy(source.id, 'Copy')).status).toBe(201)
    makeTree(join(outside, 'Proj'), { 'edit.prproj': 'outside secret' })
    renameSync(parent, join(root, 'Show', 'Src-real'))
    symlinkSync(outside, parent)
    const ended = await runTasks()
    expect(ended.state).toBe('failed')
    expect(ended.error).not.toContain(outside)
    expect(existsSync(join(root, 'Show', 'Copy'))).toBe(false)
    expect(leftovers(join(root, 'Show'))).toEqual([])
  })

  test('a source replaced by another folder of the same name is not copied', async () => {
    const bundle = join(root, 'Show', 'Orig')
    const source = await project(bundle)
    expect((await copy(source.id, 'Copy2')).status).toBe(201)
    renameSync(bundle, join(root, 'Show', 'Orig-old'))
    makeTree(bundle, { 'planted.txt': 'planted' })
    const ended = await runTasks()
    expect(ended.state).toBe('failed')
    expect(ended.error).toContain('replaced')
    expect(existsSync(join(root, 'Show', 'Copy2'))).toBe(false)
  })

  test('a user who lost write access to the target before the task starts: nothing is copied', async () => {
    const key = t.makeUser('copier', { write: [show.id], perms: ['browser.copy_projectasset'] })
    const source = await project(join(root, 'Show', 'Theirs'))
    expect((await copy(source.id, 'Copy3', key)).status).toBe(201)
    t.db.$client.run(`UPDATE production_access SET level = 'read'`)
    const ended = await runTasks()
    expect(ended.state).toBe('failed')
    expect(existsSync(join(root, 'Show', 'Copy3'))).toBe(false)
  })
})

describe('a copy reads only what it walked', () => {
  // copyTree directly, so the swap lands exactly between the walk and the copy.
  async function copyAfter(swap: (source: string) => void) {
    const source = join(root, 'Show', 'Walked')
    makeTree(source, { 'a.txt': 'aaaa', 'sub/b.txt': 'bbbb', 'sub/deeper/c.txt': 'cccc' })
    const entries = await listTree(source)
    const fd = openBeneath(root, 'Show/Walked')
    swap(source)
    const target = join(root, 'Show', 'Target')
    const parent = openBeneath(root, 'Show')
    try {
      return await copyTree(fd, { parent, name: 'Target', path: target }, { entries }).then(() => 'copied', (e: Error) => e.message)
    } finally {
      close(fd)
      close(parent)
      const copied = existsSync(target) ? JSON.stringify(snapshot(target)) : ''
      expect(copied).not.toContain(hashOf('SECR'))
      rmSync(target, { recursive: true, force: true })
    }
  }
  const hashOf = (text: string) => new Bun.CryptoHasher('sha1').update(text).digest('hex')

  test('a file swapped for a same-size link to an outside file after the walk: the copy fails, the outside bytes are not read', async () => {
    const outcome = await copyAfter((source) => {
      rmSync(join(source, 'sub', 'b.txt'))
      writeFileSync(join(outside, 'b.txt'), 'SECR')
      symlinkSync(join(outside, 'b.txt'), join(source, 'sub', 'b.txt'))
    })
    expect(outcome).not.toBe('copied')
    expect(outcome).not.toContain(outside)
  })

  test('a folder swapped for a link to an outside folder with the same names and sizes: the copy fails', async () => {
    makeTree(join(outside, 'deeper'), { 'c.txt': 'SECR' })
    const outcome = await copyAfter((source) => {
      renameSync(join(source, 'sub', 'deeper'), join(source, 'sub', 'deeper-old'))
      symlinkSync(join(outside, 'deeper'), join(source, 'sub', 'deeper'))
    })
    expect(outcome).toContain("openat 'sub/deeper'")
  })

  test('a file replaced by another regular file (new inode) after the walk: the copy fails', async () => {
    const outcome = await copyAfter((source) => {
      renameSync(join(source, 'a.txt'), join(source, 'a-old.txt'))
      writeFileSync(join(source, 'a.txt'), 'SECR')
    })
    expect(outcome).toContain('a.txt changed since the copy began')
  })

  test('without a swap, the same call copies the tree', async () => {
    expect(await copyAfter(() => {})).toBe('copied')
  })
})
