// Copy and delete on real folders: what arrives on disk, what is left when it goes wrong.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readlinkSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { historyFiles, leftovers, makeTree, manyFiles, snapshot, withoutHistory } from '../helpers/tree.ts'
import { waitFor } from '../helpers/wait.ts'
import { TEST_TIMEOUT_MS } from '../helpers/process.ts'

// Real trees of thousands of files: generous bounds on a shared, noisy machine.
setDefaultTimeout(TEST_TIMEOUT_MS)

let t: TestApp
let root: string
let production: { id: number }
const outside = tempDir('reelhouse-outside-')

beforeAll(async () => {
  t = testApp(undefined, { tasks: true })
  ;({ root, production } = await seedProduction(t))
})
afterAll(async () => {
  await t.stop()
  rmSync(t.dataDir, { recursive: true, force: true })
  rmSync(root, { recursive: true, force: true })
  rmSync(outside, { recursive: true, force: true })
})

async function project(name: string, files: Parameters<typeof makeTree>[1]) {
  const bundle = join(root, 'Show', name)
  makeTree(bundle, files)
  const r = await t.post('/api/projectassets/', { name, bundle_root: bundle, production_id: production.id })
  expect(r.status).toBe(201)
  return r.json as { id: number; bundle_root: string }
}

async function copy(sourceId: number, name: string) {
  const r = await t.post('/api/projectassets/', {
    name,
    bundle_root: join(root, 'Show', name),
    production_id: production.id,
    copy_of: sourceId,
  })
  expect(r.status).toBe(201)
  return r.json as { id: number; bundle_root: string }
}

const get = async (id: number) => (await t.get(`/api/projectassets/${id}/`)).json

describe('copy', () => {
  test('a nested bundle with empty folders, unicode and spaces arrives whole, times kept', async () => {
    const src = await project('Épisode 1', {
      'Épisode 1.prproj': 'project file',
      'Media/Cam A/clip 001.mov': 50_000,
      'Media/Cam A/clip 002.mov': 70_000,
      'Media/Cam B/ünïcødé 🎬.wav': 12_345,
      'Media/Empty Folder': null,
      'Deeply/nested/a/b/c/d/file.txt': 'deep',
      Renders: null,
    })
    manyFiles(join(src.bundle_root, 'Cache'), 500, 2048, 50)
    spawnSync('touch', ['-d', '2020-01-02 03:04:05', join(src.bundle_root, 'Media/Cam A/clip 001.mov')])
    const before = snapshot(src.bundle_root)

    const dst = await copy(src.id, 'Épisode 2')
    expect(dst).toMatchObject({ status_asset: 0, status_asset_description: 'NEW', is_production: false })
    await t.runner.idle()

    // The copy holds the source, and its history beside (history.test.ts).
    expect(withoutHistory(snapshot(dst.bundle_root))).toEqual(before)
    expect(snapshot(src.bundle_root)).toEqual(before)
    const done = await get(dst.id)
    expect(done).toMatchObject({ status_asset: 6, status_asset_description: 'ASSET_DONE', is_production: true })
    const history = historyFiles(dst.bundle_root)
    expect(done.files).toEqual({
      count: 505 + history.count,
      bytes: 12 + 50_000 + 70_000 + 12_345 + 4 + 500 * 2048 + history.bytes,
    })
    expect(leftovers(join(root, 'Show'))).toEqual([])
    const task = (await t.get(`/api/tasks/?kind=copy`)).json.at(-1)
    expect(task).toMatchObject({
      state: 'done',
      files_done: 505,
      files_total: 505,
      bytes_done: done.files.bytes - history.bytes,
      bytes_total: done.files.bytes - history.bytes,
      error: '',
    })
  })

  test('permission bits are kept, also those the umask would narrow (group-writable media)', async () => {
    const src = await project('Modes', { 'shared/edit.prproj': 'p', 'private.txt': 'x', 'run.sh': '#!/bin/sh' })
    chmodSync(join(src.bundle_root, 'shared'), 0o775)
    chmodSync(join(src.bundle_root, 'shared', 'edit.prproj'), 0o664)
    chmodSync(join(src.bundle_root, 'private.txt'), 0o600)
    chmodSync(join(src.bundle_root, 'run.sh'), 0o755)
    const dst = await copy(src.id, 'Modes copy')
    await t.runner.idle()
    const mode = (root: string, rel: string) => lstatSync(join(root, rel)).mode & 0o7777
    for (const rel of ['shared', 'shared/edit.prproj', 'private.txt', 'run.sh'])
      expect([rel, mode(dst.bundle_root, rel)]).toEqual([rel, mode(src.bundle_root, rel)])
  })

  test('a multi-hundred-MB file is copied byte for byte', async () => {
    const src = await project('Big', { 'big.mxf': 300 * 1024 * 1024, 'small.txt': 'x' })
    const before = snapshot(src.bundle_root)
    const dst = await copy(src.id, 'Big copy')
    await t.runner.idle()
    expect(withoutHistory(snapshot(dst.bundle_root))).toEqual(before)
    const history = historyFiles(dst.bundle_root)
    expect((await get(dst.id)).files).toEqual({
      count: 2 + history.count,
      bytes: 300 * 1024 * 1024 + 1 + history.bytes,
    })
  })

  test('a symlink pointing outside the device is copied as a link, never followed', async () => {
    writeFileSync(join(outside, 'secret.txt'), 'outside the device')
    const src = await project('Linked', {
      'edit.avb': 'avid bin',
      external: { link: outside },
      'external-file': { link: join(outside, 'secret.txt') },
    })
    const dst = await copy(src.id, 'Linked copy')
    await t.runner.idle()
    expect((await get(dst.id)).status_asset).toBe(6)
    expect(lstatSync(join(dst.bundle_root, 'external')).isSymbolicLink()).toBe(true)
    expect(readlinkSync(join(dst.bundle_root, 'external'))).toBe(outside)
    expect(readlinkSync(join(dst.bundle_root, 'external-file'))).toBe(join(outside, 'secret.txt'))
    const history = historyFiles(dst.bundle_root)
    expect((await get(dst.id)).files).toEqual({ count: 1 + history.count, bytes: 8 + history.bytes })
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('outside the device')
  })

  test('a target folder that exists and is empty is filled; one with content is refused', async () => {
    const src = await project('Source E', { 'a.txt': 'a' })
    mkdirSync(join(root, 'Show', 'Empty target'))
    const dst = await copy(src.id, 'Empty target')
    await t.runner.idle()
    expect(readFileSync(join(dst.bundle_root, 'a.txt'), 'utf8')).toBe('a')
    makeTree(join(root, 'Show', 'Full target'), { 'keep.txt': 'mine' })
    const refused = await t.post('/api/projectassets/', {
      name: 'x',
      bundle_root: join(root, 'Show', 'Full target'),
      production_id: production.id,
      copy_of: src.id,
    })
    expect(refused.status).toBe(400)
    expect(refused.json.errors[0]).toMatchObject({ code: 'invalid', source: { pointer: '/bundle_root' } })
    expect(readFileSync(join(root, 'Show', 'Full target', 'keep.txt'), 'utf8')).toBe('mine')
  })

  test('a source deleted while it is being copied: status -1 with the reason, no partial folder', async () => {
    const src = await project('Vanishing', {})
    manyFiles(src.bundle_root, 4000, 4096)
    const dst = await copy(src.id, 'Vanishing copy')
    const staging = () => leftovers(join(root, 'Show')).some((n) => n.startsWith('.reelhouse-copy-'))
    await waitFor(staging, 'the copy to start')
    rmSync(src.bundle_root, { recursive: true, force: true })
    await t.runner.idle()
    const failed = await get(dst.id)
    expect(failed.status_asset).toBe(-1)
    expect(failed.status_asset_description).toStartWith('ERROR: ')
    expect(failed.is_production).toBe(false)
    expect(existsSync(dst.bundle_root)).toBe(false)
    expect(leftovers(join(root, 'Show'))).toEqual([])
    const task = (await t.get(`/api/tasks/?kind=copy&state=failed`)).json.at(-1)
    expect(task.error).toBe(failed.status_asset_description.slice('ERROR: '.length))
  })

  test('a disk error (target folder not writable): status -1, nothing left behind', async () => {
    const src = await project('Readonly source', { 'a.txt': 'a', 'sub/b.txt': 'b' })
    // A folder nobody may write into: immutable (root), read-only mode (others), or, where root
    // may not set the immutable flag, sysfs, which refuses new folders even to root.
    let parent = join(root, 'Show', 'Locked')
    mkdirSync(parent)
    let unlock = lock(parent)
    if (!unlock) {
      expect((await t.post('/api/devices/', { name: 'sysfs', path: '/sys/kernel/' })).status).toBe(201)
      parent = '/sys/kernel'
      unlock = () => {}
    }
    try {
      const r = await t.post('/api/projectassets/', {
        name: 'x',
        bundle_root: join(parent, 'Copy'),
        production_id: production.id,
        copy_of: src.id,
      })
      expect(r.status).toBe(201)
      await t.runner.idle()
      const failed = await get(r.json.id)
      expect(failed.status_asset).toBe(-1)
      expect(failed.status_asset_description).toMatch(/^ERROR: (permission denied|operation not permitted)/)
      expect(leftovers(parent)).toEqual([])
      expect(existsSync(join(parent, 'Copy'))).toBe(false)
    } finally {
      unlock()
    }
  })
})

describe('delete', () => {
  test('removes exactly the bundle folder; linked media and neighbours stay', async () => {
    const p = await project('To delete', {
      'p.drp': 'resolve',
      'media/x.mov': 1000,
      empty: null,
      out: { link: outside },
    })
    writeFileSync(join(outside, 'keep.txt'), 'keep')
    makeTree(join(root, 'Show', 'To delete sibling'), { 'stay.txt': 'stay' })
    const asset = await t.post('/api/videoassets/', {
      name: 'x',
      path_file: join(root, 'Show', 'x.mov'),
      production: production.id,
    })
    await t.post(`/api/projectassets/${p.id}/addasset/`, { asset_list: [{ asset_id: asset.json.id, type: 'video' }] })

    expect((await t.request('DELETE', `/api/projectassets/${p.id}/`)).status).toBe(202)
    await t.runner.idle()
    expect(existsSync(p.bundle_root)).toBe(false)
    expect((await get(p.id)).errors[0].code).toBe('not_found')
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('keep')
    expect(readFileSync(join(root, 'Show', 'To delete sibling', 'stay.txt'), 'utf8')).toBe('stay')
    expect((await t.get(`/api/videoassets/${asset.json.id}/`)).json.projects).toEqual([])
    expect(leftovers(join(root, 'Show'))).toEqual([])
  })

  test('a bundle folder replaced by a symlink to outside is refused, nothing outside touched', async () => {
    const p = await project('Swapped', { 'a.txt': 'a' })
    const victim = tempDir('reelhouse-victim-')
    writeFileSync(join(victim, 'precious.mov'), 'precious')
    rmSync(p.bundle_root, { recursive: true })
    symlinkSync(victim, p.bundle_root.replace(/\/$/, ''))
    await t.request('DELETE', `/api/projectassets/${p.id}/`)
    await t.runner.idle()
    expect(readFileSync(join(victim, 'precious.mov'), 'utf8')).toBe('precious')
    const task = (await t.get('/api/tasks/?kind=delete&state=failed')).json[0] // newest first
    expect(task.error).toContain('symbolic link')
    expect(await get(p.id)).toMatchObject({ is_production: false })
    rmSync(victim, { recursive: true, force: true })
  })

  test('delete of a project being copied cancels the copy and leaves nothing', async () => {
    const src = await project('Copy then delete', {})
    manyFiles(src.bundle_root, 3000, 4096)
    const before = snapshot(src.bundle_root)
    const dst = await copy(src.id, 'Cancelled copy')
    await waitFor(
      () => leftovers(join(root, 'Show')).some((n) => n.startsWith('.reelhouse-copy-')),
      'the copy to start',
    )
    await t.request('DELETE', `/api/projectassets/${dst.id}/`)
    await t.runner.idle()
    expect((await t.get(`/api/projectassets/${dst.id}/`)).status).toBe(404)
    expect(existsSync(dst.bundle_root)).toBe(false)
    expect(leftovers(join(root, 'Show'))).toEqual([])
    expect(snapshot(src.bundle_root)).toEqual(before)
    const copyTask = (await t.get('/api/tasks/?kind=copy')).json[0] // newest first
    expect(copyTask).toMatchObject({ state: 'failed', error: 'cancelled: the project asset is being deleted' })
  })
})

/** Makes a folder unwritable even for root (immutable flag), or by mode for other users; returns the undo, or undefined when it cannot. */
function lock(dir: string): (() => void) | undefined {
  if (process.getuid?.() !== 0) {
    chmodSync(dir, 0o555)
    return () => chmodSync(dir, 0o755)
  }
  if (spawnSync('chattr', ['+i', dir]).status !== 0) return undefined
  return () => void spawnSync('chattr', ['-i', dir])
}
