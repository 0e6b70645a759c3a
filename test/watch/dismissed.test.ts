// A media asset a user deleted is not imported again by the watcher (docs/api.md, Deleting a media
// asset): not at its path, nor by its identity under another name; an explicit import still works.
// And the watcher's own writes are in the history: a move, offline and online, an import.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { TestApp } from '../helpers/app.ts'
import { type ScanWorld, scanWorld } from '../helpers/scans.ts'
import { waitFor } from '../helpers/wait.ts'

let w: ScanWorld
let base: TestApp
let core: ScanWorld['core']
let root: string
let device: { id: number }
let show: { id: number }

beforeEach(async () => {
  w = await scanWorld()
  ;({ base, core, root, device, show } = w)
})
afterEach(() => w.stop())

/** A scan of the device (or of `paths`), run to its end; its result. */
const scan = async (paths: string[] | null = null) => JSON.parse((await w.scan(paths)).result) as Record<string, number>
const file = (rel: string, text = 'essence') => w.file(rel, text)
const assetsAt = (path: string) =>
  base.db.$client
    .query<{ id: number }, [string]>('SELECT id FROM media_assets WHERE path_file = ?')
    .all(path)
    .map((r) => r.id)
const history = async (id: number) =>
  (await base.get(`/api/history/?resource=videoasset&id=${id}`)).json as {
    user: string
    via: string
    action: string
    changes: Record<string, { old: unknown; new: unknown }>
  }[]

describe("a deleted asset's file is not imported again", () => {
  test('at its path, nor renamed; an explicit import brings it back', async () => {
    const path = file('Show/drop.mov')
    await waitFor(async () => (await scan()).imported === 1, 'the dropped file to be imported', { everyMs: 20 })
    const [id] = assetsAt(path)
    const imported = await history(id!)
    expect(imported.at(-1)).toMatchObject({ action: 'create', user: 'system', via: 'watcher' })

    expect((await base.request('DELETE', `/api/videoassets/${id}/?allow_partial=true`)).status).toBe(204)
    expect(existsSync(path)).toBe(true)
    // Scans settle a new file over two looks: two rounds, neither imports it.
    for (let i = 0; i < 3; i++) expect(await scan()).toMatchObject({ imported: 0 })
    expect(assetsAt(path)).toEqual([])
    // Renamed (the same file by identity): still the file the user removed.
    const renamed = join(root, 'Show', 'drop-renamed.mov')
    renameSync(path, renamed)
    for (let i = 0; i < 3; i++) expect(await scan()).toMatchObject({ imported: 0 })
    expect(assetsAt(renamed)).toEqual([])
    // Another file is imported as ever.
    const other = file('Show/other.mov', 'other essence')
    await waitFor(async () => (await scan()).imported === 1, 'another file to be imported', { everyMs: 20 })
    expect(assetsAt(other).length).toBe(1)
    // An explicit import of the file the user removed works, and the watcher leaves it be.
    const r = await base.post('/api/asset/import/', {
      type: 'video',
      production: 'Show',
      asset: { asset_meta: { name: 'back', path_file: renamed } },
    })
    expect(r.status).toBe(201)
    expect(r.json.asset_import_id).toBeGreaterThan(id!)
    expect(assetsAt(renamed)).toEqual([r.json.asset_import_id])
  })

  test('a new file that takes the freed inode of the removed one (the user deleted that file too) is imported', async () => {
    const path = file('Show/old.mov')
    await waitFor(async () => (await scan()).imported === 1, 'the dropped file to be imported', { everyMs: 20 })
    const [id] = assetsAt(path)
    expect((await base.request('DELETE', `/api/videoassets/${id}/`)).status).toBe(204)
    rmSync(path)
    // ext4 gives a new file the inode just freed, often at once; whether this one got it depends
    // on the rest of the machine, so the decision is given the new file's inode (dev and ino) with
    // the old file's birth stamp: the case of a reused inode, made certain.
    const fresh = file('Show/fresh.mov', 'new essence')
    const { dev, ino, birthtimeMs, mtimeMs } = statSync(fresh)
    const stamp = birthtimeMs > 0 ? birthtimeMs : mtimeMs
    base.db.$client
      .query('UPDATE dismissed_files SET file_dev = ?, file_ino = ?, file_stamp = ? WHERE asset_id = ?')
      .run(dev, ino, stamp - 60_000, id!)
    await waitFor(async () => (await scan()).imported === 1, 'the new file on the reused inode to be imported', {
      everyMs: 20,
    })
    expect(assetsAt(fresh).length).toBe(1)
    expect(assetsAt(path)).toEqual([])
  })
})

describe("the watcher's writes are in the history", () => {
  test('a move (path_file old and new), offline and online: by system, via watcher', async () => {
    const path = file('Show/take.mov')
    const id = (await base.post('/api/videoassets/', { name: 'take', path_file: path, production: show.id })).json
      .id as number
    const moved = join(root, 'Show', 'take-graded.mov')
    renameSync(path, moved)
    expect(await scan()).toMatchObject({ moved: 1 })
    const [move] = await history(id)
    expect(move).toMatchObject({
      user: 'system',
      via: 'watcher',
      action: 'update',
      changes: { path_file: { old: path, new: moved } },
    })
    rmSync(moved)
    expect(await scan()).toMatchObject({ offline: 1 })
    expect((await history(id))[0]).toMatchObject({
      via: 'watcher',
      changes: { is_production: { old: true, new: false } },
    })
    file('Show/take-graded.mov')
    expect(await scan()).toMatchObject({ online: 1 })
    expect((await history(id))[0]).toMatchObject({
      via: 'watcher',
      changes: { is_production: { old: false, new: true } },
    })
    expect((await base.get(`/api/videoassets/${id}/`)).json.modified_by).toBe('system')
  })

  test("a project folder gone and back: the project's rows, via watcher", async () => {
    const bundle = join(root, 'Show', 'p1')
    const p = (await base.post('/api/projectassets/', { name: 'P1', bundle_root: bundle, production_id: show.id })).json
    rmSync(bundle, { recursive: true })
    await scan()
    const rows = (await base.get(`/api/history/?resource=projectasset&id=${p.id}`)).json
    expect(rows[0]).toMatchObject({
      user: 'system',
      via: 'watcher',
      changes: { is_production: { old: true, new: false } },
    })
  })
})
