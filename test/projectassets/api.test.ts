// Project assets over HTTP (api.md 2.1, 3, 4.1; service.md 3 to 8): create, list and single
// record, the legacy /api/project/ path, visibility, copy (with and without shared linked
// assets), delete, 409 conflicts with pending work, and the tasks API. Real folders, a real
// SQLite file, the real task runner. Disk failure and restart recovery are in other files.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type TestApp, testApp } from '../helpers/app.ts'
import { expectError, expectErrors, folders } from '../helpers/envelope.ts'
import { historyFiles, withoutHistory } from '../helpers/tree.ts'

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/
const PA = '/api/projectassets/'
const KINDS = ['audio', 'image', 'video'] as const
type Kind = (typeof KINDS)[number]
type Prod = { id: number; name: string }
type Project = Record<string, any> & { id: number; bundle_root: string; path_file: string }
type Media = { id: number; production: number; path_file: string } & Record<string, unknown>

const dirs = folders()
let t: TestApp
let root: string
let device: { id: number; name: string }
/** Show: most work happens here. Other and Third: for access rules. Target: copies go here. */
const prod: Record<'Show' | 'Other' | 'Third' | 'Target', Prod> = {} as never

beforeAll(async () => {
  t = testApp(dirs.make('reelhouse-data-'), { tasks: true })
  root = dirs.make('reelhouse-device-')
  const d = await t.post('/api/devices/', { name: 'pa-disk', path: root })
  expect(d.status).toBe(201)
  device = d.json
  for (const name of ['Show', 'Other', 'Third', 'Target'] as const) {
    const p = await t.post('/api/productions/', { name, storage_root: `${root}/${name}` })
    expect(p.status).toBe(201)
    prod[name] = p.json
  }
  // Custom metadata: two fields for project assets (content type 1), one for video assets (4).
  const projectSet = await t.post('/api/custommetadatasets/', { name: 'project', description: '', content_type: 1 })
  const videoSet = await t.post('/api/custommetadatasets/', { name: 'video', description: '', content_type: 4 })
  expect([projectSet.status, videoSet.status]).toEqual([201, 201])
  for (const body of [
    { key: 'proj.scene', value: 'Scene', custom_metadata_set: projectSet.json.id, validation_rule: '^[0-9]+$' },
    { key: 'proj.note', value: 'Note', custom_metadata_set: projectSet.json.id },
    { key: 'vid.take', value: 'Take', custom_metadata_set: videoSet.json.id },
  ])
    expect((await t.post('/api/custommetadata/', body)).status).toBe(200)
})

afterAll(async () => {
  await t.stop()
  dirs.cleanup()
})

// ------------------------------------------------------------------ helpers

let seq = 0
/** A fresh folder path (not created) in a production's folder. */
const fresh = (production: keyof typeof prod = 'Show', stem = 'ep') => `${root}/${production}/${stem}-${++seq}`

/** Writes files (relative path → content) under dir, making folders as needed. */
function writeTree(dir: string, files: Record<string, string>) {
  mkdirSync(dir, { recursive: true })
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true })
    writeFileSync(join(dir, rel), content)
  }
}

/** Every entry under dir: folders as 'dir/', files with their content, links with their target. */
function readTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const rel of (readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const path = join(dir, rel)
    const s = lstatSync(path)
    if (s.isDirectory()) out[`${rel}/`] = 'dir'
    else if (s.isSymbolicLink()) out[rel] = 'link'
    else out[rel] = readFileSync(path, 'utf8')
  }
  return out
}

async function create(body: Record<string, unknown>, key?: string): Promise<Project> {
  const r = await t.post(PA, body, { key })
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`)
  return r.json
}

async function media(kind: Kind, production: Prod): Promise<Media> {
  const r = await t.post(`/api/${kind}assets/`, {
    name: `${kind} ${++seq}`,
    path_file: `${root}/${production.name}/media/${kind}-${seq}.bin`,
    production: production.id,
  })
  if (r.status !== 201) throw new Error(`media: ${r.status} ${r.text}`)
  return r.json
}

/** The ten list fields of a media asset (api.md 2.7), as a project shows its linked assets. */
const listed = ({
  id,
  name,
  description,
  production,
  status_asset,
  path_file,
  device,
  is_archive,
  is_production,
  meta_field_store,
  status_approval,
}: Media) => ({
  id,
  name,
  description,
  production,
  status_asset,
  path_file,
  device,
  is_archive,
  is_production,
  meta_field_store,
  status_approval,
})

async function link(project: number, list: { asset_id: number; type: Kind }[]) {
  const r = await t.post(`${PA}${project}/addasset/`, { asset_list: list })
  if (r.status !== 200) throw new Error(`link: ${r.status} ${r.text}`)
}

const total = async (path: string, key?: string) => Number((await t.get(path, { key })).headers.get('x-total-count'))
const projectCount = () => total(`${PA}?limit=0`)
const taskCount = () => total('/api/tasks/?limit=0')
const getProject = async (id: number) => (await t.get(`${PA}${id}/`)).json as Project

/** The whole record of a project made by create with only name, bundle_root and production. */
function created(o: { name: string; bundle_root: string; production: number } & Record<string, unknown>) {
  return {
    id: expect.any(Number),
    audio_assets: [],
    image_assets: [],
    video_assets: [],
    description: '',
    date_crt: null,
    date_add: expect.stringMatching(TIMESTAMP),
    date_mod: expect.stringMatching(TIMESTAMP),
    date_del: null,
    meta_field_store: {},
    // Who changed it last (the history): single records and create answers carry it, lists do not.
    modified_by: expect.any(String),
    status_asset: 6,
    status_asset_description: 'ASSET_DONE',
    status_editing: 0,
    status_approval: 0,
    path_file: '',
    type: 'generic',
    is_archive: false,
    is_production: true,
    files: { count: 0, bytes: 0 },
    name_editor: '',
    name_studio: '',
    locked_by: null,
    device: device.id,
    ...o,
  }
}

// ------------------------------------------------------------------ create

describe('create', () => {
  test('201 with every field of api.md 2.1; files counts the regular files already in the bundle', async () => {
    const bundle = fresh()
    writeTree(bundle, { 'ep.prproj': 'project', 'media/a.txt': 'aaa', 'media/deep/b.bin': '12345' })
    mkdirSync(`${bundle}/empty`)
    symlinkSync(`${bundle}/media/a.txt`, `${bundle}/link-to-a`)
    const r = await t.post(PA, {
      name: 'Ep',
      bundle_root: bundle,
      production_id: prod.Show.id,
      path_file: `${bundle}/ep.prproj`,
    })
    expect(r.status).toBe(201)
    expect(r.json).toEqual(
      created({
        name: 'Ep',
        bundle_root: `${bundle}/`,
        production: prod.Show.id,
        path_file: `${bundle}/ep.prproj`,
        type: 'premiere',
        files: { count: 3, bytes: 15 },
      }),
    )
    expect(r.json.date_add).toBe(r.json.date_mod)
    expect(r.headers.get('location')).toBe(`/api/projectassets/${r.json.id}/`)
    // The single record and the list show the same object (the list without modified_by).
    const one = await t.get(`${PA}${r.json.id}/`)
    expect([one.status, one.json]).toEqual([200, r.json])
    const list = await t.get(`${PA}?bundle_root=${encodeURIComponent(`${bundle}/`)}`)
    const { modified_by: _, ...listed } = r.json
    expect([list.status, list.json]).toEqual([200, [listed]])
  })

  test('every optional field given is stored and shown', async () => {
    const bundle = fresh()
    const body = {
      name: 'Full',
      bundle_root: `${bundle}/`,
      production_name: 'Show',
      path_file: `${bundle}/cut/ep.drp`,
      description: 'Director cut',
      date_crt: '2024-05-06',
      name_editor: 'Ana',
      name_studio: 'Studio B',
      status_approval: 1,
      status_editing: 3,
      is_archive: true,
      meta_field_store: { 'proj.scene': '12', 'proj.note': 'night' },
    }
    const p = await create(body)
    expect(p).toEqual(
      created({
        ...body,
        production_name: undefined,
        bundle_root: `${bundle}/`,
        production: prod.Show.id,
        type: 'resolve',
        date_crt: '2024-05-06T00:00:00.000000Z',
      }),
    )
    expect(await getProject(p.id)).toEqual(p)
  })

  test.each([
    ['ep.prproj', 'premiere'],
    ['EP.PRPROJ', 'premiere'],
    ['ep.avp', 'avid'],
    ['ep.avb', 'avid'],
    ['ep.drp', 'resolve'],
    ['ep.fcpxml', 'fcp'],
    ['ep.fcpbundle', 'fcp'],
    ['ep.fcpbundle/', 'fcp'],
    ['ep.prproj.bak', 'generic'],
    ['notes.txt', 'generic'],
    ['prproj', 'generic'],
  ])('type from the project file %s: %s', async (file, type) => {
    const bundle = fresh()
    const p = await create({
      name: 'T',
      bundle_root: bundle,
      production_id: prod.Show.id,
      path_file: `${bundle}/${file}`,
    })
    expect([p.type, p.path_file]).toEqual([type, `${bundle}/${file}`])
  })

  test('an explicit type wins over the extension; no path_file gives path_file "" and type generic', async () => {
    const a = fresh()
    expect(
      (
        await create({
          name: 'T',
          bundle_root: a,
          production_id: prod.Show.id,
          path_file: `${a}/ep.prproj`,
          type: 'avid',
        })
      ).type,
    ).toBe('avid')
    const b = fresh()
    const p = await create({ name: 'T', bundle_root: b, production_id: prod.Show.id })
    expect([p.path_file, p.type]).toEqual(['', 'generic'])
    const c = fresh()
    expect((await create({ name: 'T', bundle_root: c, production_id: prod.Show.id, path_file: '' })).path_file).toBe('')
  })

  test('bundle_root gets its final slash and is created on disk (with missing parents)', async () => {
    const bundle = `${fresh()}/season 1/ep 1`
    expect(existsSync(bundle)).toBe(false)
    const p = await create({ name: 'New', bundle_root: bundle, production_id: prod.Show.id })
    expect(p).toEqual(created({ name: 'New', bundle_root: `${bundle}/`, production: prod.Show.id }))
    expect(lstatSync(bundle).isDirectory()).toBe(true)
    expect(readdirSync(bundle)).toEqual([])
    // `.` and `..` are resolved.
    const other = fresh()
    const q = await create({
      name: 'Dots',
      bundle_root: `${root}/Show/x/../${other.split('/').pop()}/./`,
      production_id: prod.Show.id,
    })
    expect(q.bundle_root).toBe(`${other}/`)
  })

  test('path_file must lie inside bundle_root: 400 invalid /path_file, nothing made', async () => {
    const before = await projectCount()
    for (const path_file of [
      'relative/ep.prproj',
      `${root}/Show/elsewhere.prproj`,
      'BUNDLE/../ep.prproj',
      'BUNDLE',
      'BUNDLE/',
      'BUNDLE-b/ep.prproj',
    ]) {
      const bundle = fresh()
      const r = await t.post(PA, {
        name: 'P',
        bundle_root: bundle,
        production_id: prod.Show.id,
        path_file: path_file.replace('BUNDLE', bundle),
      })
      expectError(r, 400, 'invalid', { pointer: '/path_file' })
      expect(existsSync(bundle)).toBe(false)
    }
    expect(await projectCount()).toBe(before)
  })

  test('missing name and bundle_root: 400 required at /name and /bundle_root, both at once', async () => {
    expectErrors(await t.post(PA, { production_id: prod.Show.id }), 400, [
      { code: 'required', where: { pointer: '/name' } },
      { code: 'required', where: { pointer: '/bundle_root' } },
    ])
    expectError(await t.post(PA, { bundle_root: fresh(), production_id: prod.Show.id }), 400, 'required', {
      pointer: '/name',
    })
    expectError(await t.post(PA, { name: 'N', production_id: prod.Show.id }), 400, 'required', {
      pointer: '/bundle_root',
    })
  })

  test('wrong types are 400 invalid at their field, never a 500', async () => {
    expectErrors(
      await t.post(PA, { name: 5, bundle_root: ['x'], production_id: 'one', meta_field_store: 'abc' }),
      400,
      [
        { code: 'invalid', where: { pointer: '/name' } },
        { code: 'invalid', where: { pointer: '/bundle_root' } },
        { code: 'invalid', where: { pointer: '/production_id' } },
        { code: 'invalid', where: { pointer: '/meta_field_store' } },
      ],
    )
    expectError(
      await t.post(PA, { name: 'N', bundle_root: fresh(), production_id: prod.Show.id, date_crt: 'yesterday' }),
      400,
      'invalid',
      { pointer: '/date_crt' },
    )
  })

  test('no production_id and no production_name: 400 required at /production_id', async () => {
    const bundle = fresh()
    expectError(await t.post(PA, { name: 'N', bundle_root: bundle }), 400, 'required', { pointer: '/production_id' })
    expect(existsSync(bundle)).toBe(false)
  })

  test('production_name alone works; production_id wins over production_name', async () => {
    expect((await create({ name: 'N', bundle_root: fresh(), production_name: 'Other' })).production).toBe(prod.Other.id)
    expect(
      (await create({ name: 'N', bundle_root: fresh(), production_id: prod.Other.id, production_name: 'Show' }))
        .production,
    ).toBe(prod.Other.id)
    // The id wins even when the name names nothing.
    expect(
      (await create({ name: 'N', bundle_root: fresh(), production_id: prod.Show.id, production_name: 'No such' }))
        .production,
    ).toBe(prod.Show.id)
  })

  test('an unknown production, or one the user cannot read: 400 invalid at the field given', async () => {
    const key = t.makeUser('create-outsider', { write: [prod.Show.id] })
    const cases: [Record<string, unknown>, string, string | undefined][] = [
      [{ production_id: 99999 }, '/production_id', undefined],
      [{ production_name: 'No such' }, '/production_name', undefined],
      [{ production_id: 99999, production_name: 'Show' }, '/production_id', undefined],
      [{ production_id: prod.Other.id }, '/production_id', key],
      [{ production_name: 'Other' }, '/production_name', key],
    ]
    for (const [given, pointer, k] of cases) {
      const bundle = fresh()
      expectError(await t.post(PA, { name: 'N', bundle_root: bundle, ...given }, { key: k }), 400, 'invalid', {
        pointer,
      })
      expect(existsSync(bundle)).toBe(false)
    }
    // The same user may create in the production they can write.
    expect((await create({ name: 'N', bundle_root: fresh(), production_id: prod.Show.id }, key)).production).toBe(
      prod.Show.id,
    )
  })

  test('a production the user can read but not write: 403, nothing made', async () => {
    const key = t.makeUser('create-reader', { read: [prod.Show.id] })
    const before = await projectCount()
    for (const given of [{ production_id: prod.Show.id }, { production_name: 'Show' }]) {
      const bundle = fresh()
      expectError(await t.post(PA, { name: 'N', bundle_root: bundle, ...given }, { key }), 403, 'permission_denied')
      expect(existsSync(bundle)).toBe(false)
    }
    expect(await projectCount()).toBe(before)
  })

  test('bundle_root not on a device, relative, or a device root: 400 invalid /bundle_root', async () => {
    const elsewhere = dirs.make('reelhouse-nodevice-')
    const before = await projectCount()
    for (const bundle_root of [
      `${elsewhere}/proj`,
      'Show/proj',
      `${root}-sibling/proj`,
      root,
      `${root}/`,
      `${root}/Show/..`,
      `${root}/Show/../`,
    ]) {
      expectError(await t.post(PA, { name: 'N', bundle_root, production_id: prod.Show.id }), 400, 'invalid', {
        pointer: '/bundle_root',
      })
    }
    // An existing file is not a folder.
    const file = fresh()
    writeFileSync(file, 'x')
    expectError(await t.post(PA, { name: 'N', bundle_root: file, production_id: prod.Show.id }), 400, 'invalid', {
      pointer: '/bundle_root',
    })
    expect(readFileSync(file, 'utf8')).toBe('x')
    expect(readdirSync(elsewhere)).toEqual([])
    expect(existsSync(`${root}-sibling`)).toBe(false)
    expect(await projectCount()).toBe(before)
  })

  test('a bundle_root already taken, or nested with another bundle: 400 invalid /bundle_root', async () => {
    const outer = fresh()
    const taken = await create({ name: 'Taken', bundle_root: `${outer}/inner`, production_id: prod.Show.id })
    const before = await projectCount()
    for (const bundle_root of [
      `${outer}/inner`,
      `${outer}/inner/`,
      `${outer}/./inner`,
      `${outer}/inner/deeper`,
      outer,
      `${outer}/`,
    ]) {
      expectError(await t.post(PA, { name: 'N', bundle_root, production_id: prod.Other.id }), 400, 'invalid', {
        pointer: '/bundle_root',
      })
    }
    expect(await projectCount()).toBe(before)
    expect(readdirSync(`${outer}/inner`)).toEqual([])
    // A sibling whose name merely starts with the same letters is not nested.
    expect(
      (await create({ name: 'Sibling', bundle_root: `${outer}/inner-b`, production_id: prod.Show.id })).bundle_root,
    ).toBe(`${outer}/inner-b/`)
    expect(taken.bundle_root).toBe(`${outer}/inner/`)
  })

  test('meta_field_store: fields of project assets (content type 1) only, values checked by their rule', async () => {
    const p = await create({
      name: 'M',
      bundle_root: fresh(),
      production_id: prod.Show.id,
      meta_field_store: { 'proj.scene': 42, 'proj.note': 'x' },
    })
    expect(p.meta_field_store).toEqual({ 'proj.scene': 42, 'proj.note': 'x' })
    const bundle = fresh()
    const r = await t.post(PA, {
      name: 'M',
      bundle_root: bundle,
      production_id: prod.Show.id,
      meta_field_store: { nope: 1, 'vid.take': '3', 'proj.scene': 'abc' },
    })
    expectErrors(r, 400, [
      { code: 'invalid', where: { pointer: '/meta_field_store/nope' } },
      { code: 'invalid', where: { pointer: '/meta_field_store/vid.take' } },
      { code: 'invalid', where: { pointer: '/meta_field_store/proj.scene' } },
    ])
    expect(existsSync(bundle)).toBe(false)
  })

  test('form data creates too (production_id as text)', async () => {
    const bundle = fresh()
    const r = await t.request('POST', PA, {
      form: {
        name: 'Form',
        bundle_root: bundle,
        production_id: String(prod.Show.id),
        meta_field_store: { 'proj.note': 'f' },
      },
    })
    expect(r.status).toBe(201)
    expect(r.json).toEqual(
      created({
        name: 'Form',
        bundle_root: `${bundle}/`,
        production: prod.Show.id,
        meta_field_store: { 'proj.note': 'f' },
      }),
    )
  })
})

// ------------------------------------------------------------------ list, single, legacy path, visibility

describe('list and single record', () => {
  test('the list is ordered by id, carries X-Total-Count, and pages with limit/offset', async () => {
    for (let i = 0; i < 3; i++) await create({ name: `L${i}`, bundle_root: fresh(), production_id: prod.Show.id })
    const all = await t.get(PA)
    expect(all.status).toBe(200)
    const ids = all.json.map((p: Project) => p.id)
    expect(ids.length).toBeGreaterThanOrEqual(3)
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b))
    expect(all.headers.get('x-total-count')).toBe(String(ids.length))
    const page = await t.get(`${PA}?limit=2&offset=1`)
    expect([page.json, page.headers.get('x-total-count')]).toEqual([all.json.slice(1, 3), String(ids.length)])
    const rest = await t.get(`${PA}?offset=${ids.length - 1}`)
    expect(rest.json).toEqual(all.json.slice(-1))
    const none = await t.get(`${PA}?limit=0`)
    expect([none.json, none.headers.get('x-total-count')]).toEqual([[], String(ids.length)])
    expectError(await t.get(`${PA}?limit=-1`), 400, 'invalid', { parameter: 'limit' })
    expectError(await t.get(`${PA}?offset=x`), 400, 'invalid', { parameter: 'offset' })
  })

  test('bundle_root filters exactly; it must end with a slash', async () => {
    const bundle = `${fresh()}/with space & more`
    const p = await create({ name: 'F', bundle_root: bundle, production_id: prod.Show.id })
    const hit = await t.get(`${PA}?bundle_root=${encodeURIComponent(`${bundle}/`)}`)
    const { modified_by: _, ...listed } = p
    expect([hit.json, hit.headers.get('x-total-count')]).toEqual([[listed], '1'])
    // A parent folder of the bundle is not a match: filters are exact.
    const parent = `${dirname(bundle)}/`
    const miss = await t.get(`${PA}?bundle_root=${encodeURIComponent(parent)}`)
    expect([miss.json, miss.headers.get('x-total-count')]).toEqual([[], '0'])
    expectError(await t.get(`${PA}?bundle_root=${encodeURIComponent(bundle)}`), 400, 'invalid', {
      parameter: 'bundle_root',
    })
  })

  test('a single record with and without the trailing slash; unknown ids: 404 not_found', async () => {
    const p = await create({ name: 'S', bundle_root: fresh(), production_id: prod.Show.id })
    for (const path of [`${PA}${p.id}/`, `${PA}${p.id}`]) {
      const r = await t.get(path)
      expect([r.status, r.json]).toEqual([200, p])
    }
    for (const path of [`${PA}99999/`, `${PA}0/`, `${PA}abc/`, '/api/project/99999/']) {
      const r = await t.get(path)
      expectError(r, 404, 'not_found')
      expect(r.json.errors[0].title).toBe('Not Found')
    }
  })

  test('the legacy path /api/project/ serves the same list, records, create and delete', async () => {
    const p = await create({ name: 'Legacy', bundle_root: fresh(), production_id: prod.Show.id })
    const [a, b] = [await t.get(PA), await t.get('/api/project/')]
    expect([b.status, b.json, b.headers.get('x-total-count')]).toEqual([200, a.json, a.headers.get('x-total-count')])
    for (const path of [`/api/project/${p.id}/`, `/api/project/${p.id}`]) expect((await t.get(path)).json).toEqual(p)
    const bundle = fresh()
    const made = await t.post('/api/project/', { name: 'Via legacy', bundle_root: bundle, production_id: prod.Show.id })
    expect([made.status, made.json]).toEqual([
      201,
      created({ name: 'Via legacy', bundle_root: `${bundle}/`, production: prod.Show.id }),
    ])
    expect((await t.get(`${PA}${made.json.id}/`)).json).toEqual(made.json)
    const del = await t.request('DELETE', `/api/project/${made.json.id}/`)
    expect([del.status, del.json]).toEqual([
      202,
      { task: { id: expect.any(Number), state: 'queued', url: `/api/tasks/${del.json.task.id}/` } },
    ])
    await t.runner.idle()
    expectError(await t.get(`/api/project/${made.json.id}/`), 404, 'not_found')
    expect(existsSync(bundle)).toBe(false)
  })

  test('a user sees only projects of productions they can read; others answer 404', async () => {
    const mine = await create({ name: 'Mine', bundle_root: fresh(), production_id: prod.Show.id })
    const theirs = await create({ name: 'Theirs', bundle_root: fresh('Other'), production_id: prod.Other.id })
    const key = t.makeUser('pa-show-reader', { read: [prod.Show.id] })
    const all = (await t.get(PA)).json as Project[]
    const list = await t.get(PA, { key })
    const showOnly = all.filter((p) => p.production === prod.Show.id)
    expect([list.json, list.headers.get('x-total-count')]).toEqual([showOnly, String(showOnly.length)])
    expect(list.json.map((p: Project) => p.id)).toContain(mine.id)
    expect((await t.get(`${PA}${mine.id}/`, { key })).json).toEqual(mine)
    expectError(await t.get(`${PA}${theirs.id}/`, { key }), 404, 'not_found')
    expectError(await t.get(`/api/project/${theirs.id}/`, { key }), 404, 'not_found')
    const filtered = await t.get(`${PA}?bundle_root=${encodeURIComponent(theirs.bundle_root)}`, { key })
    expect([filtered.json, filtered.headers.get('x-total-count')]).toEqual([[], '0'])
    // A user with no access at all sees an empty list.
    const nobody = t.makeUser('pa-nobody')
    const none = await t.get(PA, { key: nobody })
    expect([none.status, none.json, none.headers.get('x-total-count')]).toEqual([200, [], '0'])
  })
})

// ------------------------------------------------------------------ copy

/** A source project in Show with files, metadata and linked assets of Show, Other and Third. */
async function makeSource() {
  const bundle = fresh('Show', 'source')
  writeTree(bundle, {
    'project/ep.prproj': 'project file',
    'media/a.wav': 'aaaa',
    'media/deep/b.txt': 'bb',
    'notes.txt': '',
  })
  const source = await create({
    name: 'Source',
    bundle_root: bundle,
    production_id: prod.Show.id,
    path_file: `${bundle}/project/ep.prproj`,
    description: 'Cut 3',
    date_crt: '2024-05-06 10:20:30',
    name_editor: 'Ana',
    name_studio: 'Studio B',
    status_approval: 1,
    status_editing: 2,
    meta_field_store: { 'proj.scene': '7', 'proj.note': 'keep' },
  })
  const assets = {
    audio: await media('audio', prod.Show),
    video: await media('video', prod.Other),
    image: await media('image', prod.Third),
  }
  await link(
    source.id,
    KINDS.map((type) => ({ asset_id: assets[type].id, type })),
  )
  return { bundle, source: await getProject(source.id), assets }
}

const copyPath = (share?: string) => (share === undefined ? PA : `${PA}?share_linked_assets=${share}`)

describe('copy', () => {
  let src: Awaited<ReturnType<typeof makeSource>>
  beforeAll(async () => {
    src = await makeSource()
  })

  test('201 with status 0 and is_production false, metadata from the source; the task makes it whole', async () => {
    const { source, bundle } = src
    expect(source.files).toEqual({ count: 4, bytes: 18 })
    const target = fresh('Target', 'copy')
    const r = await t.post(PA, { name: 'Copy', bundle_root: target, production_id: prod.Target.id, copy_of: source.id })
    expect(r.status).toBe(201)
    const expected = {
      ...source,
      id: expect.any(Number),
      name: 'Copy',
      date_add: expect.stringMatching(TIMESTAMP),
      date_mod: expect.stringMatching(TIMESTAMP),
      status_asset: 0,
      status_asset_description: 'NEW',
      is_production: false,
      files: { count: expect.any(Number), bytes: expect.any(Number) },
      path_file: `${target}/project/ep.prproj`,
      bundle_root: `${target}/`,
      production: prod.Target.id,
    }
    // The new project, and the task that copies its files (queued: the runner starts it after
    // the answer's transaction). Location names the task to follow, as task.url does.
    const task = { id: expect.any(Number), state: 'queued', url: `/api/tasks/${r.json.task?.id}/` }
    expect(r.json).toEqual({ ...expected, task })
    expect(r.headers.get('location')).toBe(`/api/tasks/${r.json.task.id}/`)
    expect((await t.get(r.json.task.url)).json).toMatchObject({
      id: r.json.task.id,
      kind: 'copy',
      target: { projectasset: r.json.id },
    })
    expect(r.json.id).not.toBe(source.id)
    expect(source.audio_assets).toHaveLength(1)
    expect(source.description).toBe('Cut 3')

    await t.runner.idle()
    const done = await getProject(r.json.id)
    // The files counted are the source's and the ASC MHL history the copy wrote beside them.
    const history = historyFiles(target)
    expect(done).toEqual({
      ...expected,
      status_asset: 6,
      status_asset_description: 'ASSET_DONE',
      is_production: true,
      files: { count: source.files.count + history.count, bytes: source.files.bytes + history.bytes },
    })
    expect(withoutHistory(readTree(target))).toEqual(readTree(bundle))
    expect(readTree(target)['project/ep.prproj']).toBe('project file')
    // The task says how many files it checked by hash, and names the history's manifest.
    expect((await t.get(r.json.task.url)).json.result).toEqual({
      files_verified: 4,
      manifest: expect.stringMatching(/^ascmhl\/0001_copy[^/]*_\d{4}-\d\d-\d\d_\d{6}Z\.mhl$/),
      recorded: { original: 4, verified: 0, failed: 0 },
    })
    // Nothing else is left beside the target (no hidden staging folder), and the source is untouched.
    expect(readdirSync(`${root}/Target`).filter((n) => n.startsWith('.'))).toEqual([])
    expect(await getProject(source.id)).toEqual(source)
  })

  test('description, date_crt, name_editor, name_studio and status_approval given in the body win', async () => {
    const target = fresh('Target', 'copy')
    const body = {
      name: 'Own',
      bundle_root: target,
      production_name: 'Target',
      copy_of: src.source.id,
      description: 'Mine',
      date_crt: '2025',
      name_editor: 'Bo',
      name_studio: 'Studio C',
      status_approval: 0,
    }
    const r = await t.post(PA, body)
    expect(r.status).toBe(201)
    expect(r.json).toMatchObject({
      description: 'Mine',
      date_crt: '2025-01-01T00:00:00.000000Z',
      name_editor: 'Bo',
      name_studio: 'Studio C',
      status_approval: 0,
      meta_field_store: src.source.meta_field_store,
      production: prod.Target.id,
    })
    await t.runner.idle()
    expect((await getProject(r.json.id)).status_asset).toBe(6)
  })

  test('copy into an existing empty folder is allowed', async () => {
    const target = fresh('Target', 'copy')
    mkdirSync(target, { recursive: true })
    const r = await t.post(PA, {
      name: 'Into empty',
      bundle_root: `${target}/`,
      production_id: prod.Target.id,
      copy_of: src.source.id,
    })
    expect(r.status).toBe(201)
    await t.runner.idle()
    expect((await getProject(r.json.id)).status_asset).toBe(6)
    expect(withoutHistory(readTree(target))).toEqual(readTree(src.bundle))
  })

  test('a copy has the same validation errors as create', async () => {
    expectErrors(await t.post(PA, { production_id: prod.Target.id, copy_of: src.source.id }), 400, [
      { code: 'required', where: { pointer: '/name' } },
      { code: 'required', where: { pointer: '/bundle_root' } },
    ])
    expectError(
      await t.post(PA, { name: 'C', bundle_root: fresh('Target'), copy_of: src.source.id }),
      400,
      'required',
      { pointer: '/production_id' },
    )
    expectError(
      await t.post(PA, { name: 'C', bundle_root: fresh('Target'), production_id: 99999, copy_of: src.source.id }),
      400,
      'invalid',
      { pointer: '/production_id' },
    )
    expectError(
      await t.post(PA, { name: 'C', bundle_root: fresh('Target'), production_id: prod.Target.id, copy_of: 'x' }),
      400,
      'invalid',
      { pointer: '/copy_of' },
    )
    expectError(
      await t.post(`${PA}?share_linked_assets=yes`, {
        name: 'C',
        bundle_root: fresh('Target'),
        production_id: prod.Target.id,
        copy_of: src.source.id,
      }),
      400,
      'invalid',
      { parameter: 'share_linked_assets' },
    )
  })

  /** Runs a failing copy request and checks that nothing was written: no record, no task, no folder. */
  async function refused(
    body: Record<string, unknown>,
    key: string | undefined,
    share: string | undefined,
    status: number,
    code: string,
    where?: { pointer: string },
  ) {
    const [projects, tasks] = [await projectCount(), await taskCount()]
    const target = typeof body.bundle_root === 'string' ? body.bundle_root : ''
    const snapshot = () =>
      !existsSync(target)
        ? undefined
        : lstatSync(target).isDirectory()
          ? readTree(target)
          : readFileSync(target, 'utf8')
    const before = snapshot()
    expectError(await t.post(copyPath(share), body, { key }), status, code, where)
    expect([await projectCount(), await taskCount()]).toEqual([projects, tasks])
    expect(snapshot()).toEqual(before)
  }

  test('permissions: browser.copy_projectasset, browser.share_production_asset when sharing, write on the target', async () => {
    const base = () => ({
      name: 'C',
      bundle_root: fresh('Target', 'copy'),
      production_id: prod.Target.id,
      copy_of: src.source.id,
    })
    const all = { read: [prod.Show.id], write: [prod.Target.id] }
    const noCopy = t.makeUser('copy-noperm', { ...all, perms: ['browser.share_production_asset'] })
    await refused(base(), noCopy, undefined, 403, 'permission_denied')
    await refused(base(), noCopy, '1', 403, 'permission_denied')
    const noShare = t.makeUser('copy-noshare', { ...all, perms: ['browser.copy_projectasset'] })
    await refused(base(), noShare, '1', 403, 'permission_denied')
    await refused(base(), noShare, 'true', 403, 'permission_denied')
    // Without sharing, the copy codename is enough.
    for (const share of [undefined, '0', 'false']) {
      const r = await t.post(copyPath(share), base(), { key: noShare })
      expect(r.status).toBe(201)
    }
    const readTarget = t.makeUser('copy-readtarget', {
      read: [prod.Show.id, prod.Target.id],
      perms: ['browser.copy_projectasset'],
    })
    await refused(base(), readTarget, undefined, 403, 'permission_denied')
    await t.runner.idle()
  })

  test('a source that does not exist or that the user cannot read: 400 invalid /copy_of', async () => {
    const key = t.makeUser('copy-blind', {
      write: [prod.Target.id],
      perms: ['browser.copy_projectasset', 'browser.share_production_asset'],
    })
    const body = (copy_of: number) => ({
      name: 'C',
      bundle_root: fresh('Target', 'copy'),
      production_id: prod.Target.id,
      copy_of,
    })
    await refused(body(src.source.id), key, undefined, 400, 'invalid', { pointer: '/copy_of' })
    await refused(body(src.source.id), key, '1', 400, 'invalid', { pointer: '/copy_of' })
    await refused(body(99999), key, undefined, 400, 'invalid', { pointer: '/copy_of' })
    await refused(body(99999), undefined, undefined, 400, 'invalid', { pointer: '/copy_of' })
  })

  test('a source not in production (is_production false): 400 invalid /copy_of', async () => {
    const { source } = await makeSource()
    t.db.$client.query('UPDATE project_assets SET is_production = 0 WHERE id = ?').run(source.id)
    await refused(
      { name: 'C', bundle_root: fresh('Target', 'copy'), production_id: prod.Target.id, copy_of: source.id },
      undefined,
      undefined,
      400,
      'invalid',
      { pointer: '/copy_of' },
    )
  })

  test('a target inside the source, containing it, off the devices, or a device root: 400 invalid /bundle_root', async () => {
    const { bundle, source } = src
    const elsewhere = dirs.make('reelhouse-nodevice-')
    for (const bundle_root of [
      `${bundle}/copy`,
      `${bundle}/media/deep/copy`,
      bundle,
      `${bundle}/`,
      dirname(bundle),
      `${root}/Show`,
      root,
      `${elsewhere}/copy`,
    ]) {
      await refused(
        { name: 'C', bundle_root, production_id: prod.Show.id, copy_of: source.id },
        undefined,
        undefined,
        400,
        'invalid',
        { pointer: '/bundle_root' },
      )
    }
    expect(readTree(bundle)).toEqual({
      'media/': 'dir',
      'media/a.wav': 'aaaa',
      'media/deep/': 'dir',
      'media/deep/b.txt': 'bb',
      'notes.txt': '',
      'project/': 'dir',
      'project/ep.prproj': 'project file',
    })
    expect(readdirSync(elsewhere)).toEqual([])
  })

  test('a target that exists and is not empty: 400 invalid /bundle_root, nothing written, the folder untouched', async () => {
    const target = fresh('Target', 'full')
    writeTree(target, { 'keep.txt': 'mine' })
    await refused(
      { name: 'C', bundle_root: target, production_id: prod.Target.id, copy_of: src.source.id },
      undefined,
      undefined,
      400,
      'invalid',
      { pointer: '/bundle_root' },
    )
    expect(readTree(target)).toEqual({ 'keep.txt': 'mine' })
    // A file where the folder should be is not an empty folder either.
    const file = fresh('Target', 'file')
    writeFileSync(file, 'x')
    await refused(
      { name: 'C', bundle_root: file, production_id: prod.Target.id, copy_of: src.source.id },
      undefined,
      undefined,
      400,
      'invalid',
      { pointer: '/bundle_root' },
    )
    expect(readFileSync(file, 'utf8')).toBe('x')
    // Nor is a symbolic link to an empty folder: a copy never goes through a link.
    const empty = fresh('Target', 'empty')
    mkdirSync(empty)
    const viaLink = fresh('Target', 'link')
    symlinkSync(empty, viaLink)
    await refused(
      { name: 'C', bundle_root: `${viaLink}/`, production_id: prod.Target.id, copy_of: src.source.id },
      undefined,
      undefined,
      400,
      'invalid',
      { pointer: '/bundle_root' },
    )
    expect([lstatSync(viaLink).isSymbolicLink(), readdirSync(empty)]).toEqual([true, []])
  })
})

// ------------------------------------------------------------------ shares

describe('share_linked_assets', () => {
  test('=1: linked assets of readable productions become visible in the target; the others stay linked, unshared', async () => {
    const { source, assets } = await makeSource()
    const copier = t.makeUser('sharer', {
      read: [prod.Show.id, prod.Other.id],
      write: [prod.Target.id],
      perms: ['browser.copy_projectasset', 'browser.share_production_asset'],
    })
    const reader = t.makeUser('target-reader-1', { read: [prod.Target.id] })
    for (const kind of KINDS)
      expectError(await t.get(`/api/${kind}assets/${assets[kind].id}/`, { key: reader }), 404, 'not_found')

    const r = await t.post(
      copyPath('1'),
      { name: 'Shared', bundle_root: fresh('Target', 'copy'), production_id: prod.Target.id, copy_of: source.id },
      { key: copier },
    )
    expect(r.status).toBe(201)
    // Every linked asset is linked to the copy, from the moment it is created; a user sees only
    // the linked assets they can read (the copier cannot read Third's image).
    expect([r.json.audio_assets, r.json.video_assets, r.json.image_assets]).toEqual([
      [listed(assets.audio)],
      [listed(assets.video)],
      [],
    ])
    const asAdmin = (await t.get(`${PA}${r.json.id}/`)).json
    expect([asAdmin.audio_assets, asAdmin.video_assets, asAdmin.image_assets]).toEqual([
      [listed(assets.audio)],
      [listed(assets.video)],
      [listed(assets.image)],
    ])
    // Show's audio and Other's video are shared with Target; Third's image (unreadable by the copier) is not.
    for (const kind of ['audio', 'video'] as const) {
      const one = await t.get(`/api/${kind}assets/${assets[kind].id}/`, { key: reader })
      expect([one.status, one.json.id, one.json.production]).toEqual([200, assets[kind].id, assets[kind].production])
      const list = await t.get(`/api/${kind}assets/?path_file=${encodeURIComponent(assets[kind].path_file)}`, {
        key: reader,
      })
      expect(list.json.map((a: Media) => a.id)).toEqual([assets[kind].id])
    }
    expectError(await t.get(`/api/imageassets/${assets.image.id}/`, { key: reader }), 404, 'not_found')
    expect((await t.get(`/api/imageassets/${assets.image.id}/`)).json.projects).toEqual([source.id, r.json.id])
    await t.runner.idle()
    expect((await t.get(`${PA}${r.json.id}/`, { key: reader })).json).toMatchObject({
      status_asset: 6,
      production: prod.Target.id,
    })
  })

  test('without the flag (or =0) nothing is shared, though the assets are linked', async () => {
    const { source, assets } = await makeSource()
    const reader = t.makeUser('target-reader-2', { read: [prod.Target.id] })
    for (const share of [undefined, '0']) {
      const r = await t.post(copyPath(share), {
        name: 'Unshared',
        bundle_root: fresh('Target', 'copy'),
        production_id: prod.Target.id,
        copy_of: source.id,
      })
      expect(r.status).toBe(201)
      expect(r.json.audio_assets).toEqual([listed(assets.audio)])
    }
    for (const kind of KINDS)
      expectError(await t.get(`/api/${kind}assets/${assets[kind].id}/`, { key: reader }), 404, 'not_found')
    for (const kind of KINDS) {
      const ids = (await t.get(`/api/${kind}assets/`, { key: reader })).json.map((a: Media) => a.id)
      expect(ids).not.toContain(assets[kind].id)
    }
    await t.runner.idle()
  })
})

// ------------------------------------------------------------------ delete (with the runner)

describe('delete', () => {
  test('202 with the task (Location names it); the task removes the folder and the record; linked media assets stay', async () => {
    const parent = fresh()
    const bundle = `${parent}/proj`
    writeTree(bundle, { 'ep.prproj': 'p', 'media/x.bin': 'xx' })
    writeTree(parent, { 'beside.txt': 'stays' })
    const p = await create({
      name: 'Doomed',
      bundle_root: bundle,
      production_id: prod.Show.id,
      path_file: `${bundle}/ep.prproj`,
    })
    const audio = await media('audio', prod.Show)
    const video = await media('video', prod.Other)
    await link(p.id, [
      { asset_id: audio.id, type: 'audio' },
      { asset_id: video.id, type: 'video' },
    ])

    const r = await t.request('DELETE', `${PA}${p.id}/`)
    const url = `/api/tasks/${r.json?.task?.id}/`
    expect([r.status, r.json, r.headers.get('location')]).toEqual([
      202,
      { task: { id: expect.any(Number), state: 'queued', url } },
      url,
    ])
    await t.runner.idle()
    expectError(await t.get(`${PA}${p.id}/`), 404, 'not_found')
    expect(existsSync(bundle)).toBe(false)
    expect(readTree(parent)).toEqual({ 'beside.txt': 'stays' })
    for (const [kind, asset] of [
      ['audio', audio],
      ['video', video],
    ] as const) {
      const a = await t.get(`/api/${kind}assets/${asset.id}/`)
      expect([a.status, a.json.projects]).toEqual([200, []])
    }
    const tasks = (await t.get('/api/tasks/?kind=delete')).json.filter(
      (x: { target: { projectasset: number } }) => x.target.projectasset === p.id,
    )
    expect(tasks).toEqual([
      expect.objectContaining({
        id: r.json.task.id,
        state: 'done',
        error: '',
        files_total: 2,
        bytes_total: 3,
        files_done: 2,
        bytes_done: 3,
      }),
    ])
    expect((await t.get(url)).json).toEqual(tasks[0])
    // Deleting it again: it does not exist any more.
    expectError(await t.request('DELETE', `${PA}${p.id}/`), 404, 'does_not_exist')
  })

  test('DELETE of an unknown id, or of a project the user cannot read: 404 does_not_exist, title Not Found', async () => {
    const hidden = await create({ name: 'Hidden', bundle_root: fresh('Other'), production_id: prod.Other.id })
    const key = t.makeUser('delete-outsider', { write: [prod.Show.id] })
    for (const [path, k] of [
      [`${PA}99999/`, undefined],
      [`${PA}99999`, undefined],
      [`/api/project/99999/`, undefined],
      [`${PA}${hidden.id}/`, key],
    ] as const) {
      const r = await t.request('DELETE', path, { key: k })
      expectError(r, 404, 'does_not_exist')
      expect(r.json.errors[0].title).toBe('Not Found')
    }
    expect(await getProject(hidden.id)).toEqual(hidden)
  })

  test('no write access: 403, the project and its folder stay', async () => {
    const bundle = fresh()
    writeTree(bundle, { 'a.txt': 'a' })
    const p = await create({ name: 'Kept', bundle_root: bundle, production_id: prod.Show.id })
    const key = t.makeUser('delete-reader', { read: [prod.Show.id], write: [prod.Other.id] })
    const tasks = await taskCount()
    expectError(await t.request('DELETE', `${PA}${p.id}/`, { key }), 403, 'permission_denied')
    await t.runner.idle()
    expect([await getProject(p.id), await taskCount(), readTree(bundle)]).toEqual([p, tasks, { 'a.txt': 'a' }])
    // A user who may write the production may delete it.
    const writer = t.makeUser('delete-writer', { write: [prod.Show.id] })
    expect((await t.request('DELETE', `${PA}${p.id}/`, { key: writer })).status).toBe(202)
    await t.runner.idle()
    expect(existsSync(bundle)).toBe(false)
  })
})

// ------------------------------------------------------------------ delete pending (runner not started) and 409

describe('while a delete is pending', () => {
  let t2: TestApp
  let root2: string
  let show2: Prod
  let p: Project
  let bundle: string

  beforeAll(async () => {
    t2 = testApp(dirs.make('reelhouse-data-'))
    root2 = dirs.make('reelhouse-device-')
    expect((await t2.post('/api/devices/', { name: 'pending-disk', path: root2 })).status).toBe(201)
    show2 = (await t2.post('/api/productions/', { name: 'Pending', storage_root: `${root2}/Pending` })).json
    bundle = `${root2}/Pending/ep`
    writeTree(bundle, { 'ep.prproj': 'p', 'media/x.bin': 'xx' })
    const made = await t2.post(PA, {
      name: 'Pending',
      bundle_root: bundle,
      production_id: show2.id,
      path_file: `${bundle}/ep.prproj`,
    })
    expect(made.status).toBe(201)
    p = made.json
    const audio = await t2.post('/api/audioassets/', {
      name: 'a',
      path_file: `${root2}/Pending/a.wav`,
      production: show2.id,
    })
    expect(
      (await t2.post(`${PA}${p.id}/addasset/`, { asset_list: [{ asset_id: audio.json.id, type: 'audio' }] })).status,
    ).toBe(200)
    p = (await t2.get(`${PA}${p.id}/`)).json
  })

  afterAll(async () => {
    await t2.stop()
  })

  const deleteTasks = async () =>
    (await t2.get('/api/tasks/?kind=delete')).json.filter(
      (x: { target: { projectasset: number } }) => x.target.projectasset === p.id,
    )

  let pending: { id: number; state: string; url: string }
  test('DELETE answers 202 at once; the record shows date_del and is_production false; the folder is still there', async () => {
    const r = await t2.request('DELETE', `${PA}${p.id}/`)
    expect(r.status).toBe(202)
    pending = r.json.task
    const after = await t2.get(`${PA}${p.id}/`)
    expect([after.status, after.json]).toEqual([
      200,
      {
        ...p,
        date_del: expect.stringMatching(TIMESTAMP),
        date_mod: expect.stringMatching(TIMESTAMP),
        is_production: false,
      },
    ])
    expect(readTree(bundle)).toEqual({ 'ep.prproj': 'p', 'media/': 'dir', 'media/x.bin': 'xx' })
    expect(await deleteTasks()).toEqual([
      expect.objectContaining({ id: pending.id, kind: 'delete', state: 'queued', date_start: null, date_end: null }),
    ])
  })

  test('DELETE again while pending: 202 with the same task, and still only one delete task', async () => {
    for (const path of [`${PA}${p.id}/`, `${PA}${p.id}`, `/api/project/${p.id}/`]) {
      const r = await t2.request('DELETE', path)
      expect([r.status, r.json, r.headers.get('location')]).toEqual([202, { task: pending }, pending.url])
    }
    expect(await deleteTasks()).toHaveLength(1)
  })

  test('copying a project that is being deleted: 409 conflict, nothing written', async () => {
    const target = `${root2}/Pending/copy`
    const tasks = (await t2.get('/api/tasks/')).json
    expectError(
      await t2.post(PA, { name: 'C', bundle_root: target, production_id: show2.id, copy_of: p.id }),
      409,
      'conflict',
    )
    expect((await t2.get('/api/tasks/')).json).toEqual(tasks)
    expect(existsSync(target)).toBe(false)
  })

  test('linking to or unlinking from a project that is being deleted: 409 conflict', async () => {
    const video = await t2.post('/api/videoassets/', {
      name: 'v',
      path_file: `${root2}/Pending/v.mov`,
      production: show2.id,
    })
    expectError(
      await t2.post(`${PA}${p.id}/addasset/`, { asset_list: [{ asset_id: video.json.id, type: 'video' }] }),
      409,
      'conflict',
    )
    expectError(
      await t2.post(`${PA}${p.id}/unlinkasset/`, { asset_list: [{ asset_id: p.audio_assets[0].id, type: 'audio' }] }),
      409,
      'conflict',
    )
    expect((await t2.get(`${PA}${p.id}/`)).json).toMatchObject({ audio_assets: p.audio_assets, video_assets: [] })
  })

  test('once the runner runs the task: 404, the folder is gone, the linked asset stays', async () => {
    t2.runner.start()
    await t2.runner.idle()
    expectError(await t2.get(`${PA}${p.id}/`), 404, 'not_found')
    expect(existsSync(bundle)).toBe(false)
    expect(existsSync(`${root2}/Pending`)).toBe(true)
    const a = await t2.get(`/api/audioassets/${p.audio_assets[0].id}/`)
    expect([a.status, a.json.projects]).toEqual([200, []])
    expect(await deleteTasks()).toEqual([expect.objectContaining({ state: 'done', error: '' })])
  })
})

// ------------------------------------------------------------------ tasks API

describe('tasks API', () => {
  type Task = Record<string, any> & { id: number; target: { projectasset: number } }
  let copy: Project
  let copyTask: Task

  beforeAll(async () => {
    const { source } = await makeSource()
    const r = await t.post(PA, {
      name: 'Task copy',
      bundle_root: fresh('Target', 'copy'),
      production_id: prod.Target.id,
      copy_of: source.id,
    })
    expect(r.status).toBe(201)
    copy = r.json
    await t.runner.idle()
    copyTask = (await t.get('/api/tasks/?kind=copy')).json.find((x: Task) => x.target.projectasset === copy.id)
  })

  test('a task has exactly the fields of service.md 8, and result (what the work found; for a copy, the files checked by hash and the history written)', async () => {
    const expected = {
      id: expect.any(Number),
      kind: 'copy',
      state: 'done',
      target: { projectasset: copy.id },
      step: '',
      percent: null,
      bytes_done: 18,
      bytes_total: 18,
      files_done: 4,
      files_total: 4,
      error: '',
      date_add: expect.stringMatching(TIMESTAMP),
      date_start: expect.stringMatching(TIMESTAMP),
      date_end: expect.stringMatching(TIMESTAMP),
      result: {
        files_verified: 4,
        manifest: expect.stringMatching(/^ascmhl\/0001_.*\.mhl$/),
        recorded: { original: 4, verified: 0, failed: 0 },
      },
    }
    expect(copyTask).toEqual(expected)
    for (const path of [`/api/tasks/${copyTask.id}/`, `/api/tasks/${copyTask.id}`]) {
      const one = await t.get(path)
      expect([one.status, one.json]).toEqual([200, copyTask])
    }
    expect(copyTask.date_start >= copyTask.date_add && copyTask.date_end >= copyTask.date_start).toBe(true)
    expectError(await t.get('/api/tasks/99999/'), 404, 'not_found')
  })

  test('the list is ordered newest first with X-Total-Count; state and kind filter exactly', async () => {
    const all = await t.get('/api/tasks/')
    const ids = all.json.map((x: Task) => x.id)
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a))
    expect(all.headers.get('x-total-count')).toBe(String(ids.length))
    for (const x of all.json) expect(Object.keys(x).sort()).toEqual(Object.keys(copyTask).sort())
    for (const [query, pick] of [
      ['kind=copy', (x: Task) => x.kind === 'copy'],
      ['kind=delete', (x: Task) => x.kind === 'delete'],
      ['kind=import', (x: Task) => x.kind === 'import'],
      ['state=done', (x: Task) => x.state === 'done'],
      ['state=failed', (x: Task) => x.state === 'failed'],
      ['state=done&kind=copy', (x: Task) => x.state === 'done' && x.kind === 'copy'],
    ] as const) {
      const r = await t.get(`/api/tasks/?${query}`)
      const want = all.json.filter(pick)
      expect([query, r.json, r.headers.get('x-total-count')]).toEqual([query, want, String(want.length)])
    }
    expect(all.json.filter((x: Task) => x.kind === 'copy').length).toBeGreaterThan(0)
    expect(all.json.filter((x: Task) => x.kind === 'delete').length).toBeGreaterThan(0)
  })

  test('?projectasset=ID lists the tasks working on that project, with X-Total-Count, combined with the other filters', async () => {
    const r = await t.get(`/api/tasks/?projectasset=${copy.id}`)
    expect([r.json, r.headers.get('x-total-count')]).toEqual([[copyTask], '1'])
    expect((await t.get(`/api/tasks/?projectasset=${copy.id}&kind=copy&state=done`)).json).toEqual([copyTask])
    const none = await t.get(`/api/tasks/?projectasset=${copy.id}&kind=delete`)
    expect([none.json, none.headers.get('x-total-count')]).toEqual([[], '0'])
  })

  test('an unknown state or kind: 400 invalid naming the parameter', async () => {
    expectError(await t.get('/api/tasks/?state=finished'), 400, 'invalid', { parameter: 'state' })
    expectError(await t.get('/api/tasks/?kind=move'), 400, 'invalid', { parameter: 'kind' })
    expectError(await t.get('/api/tasks/?kind=COPY'), 400, 'invalid', { parameter: 'kind' })
  })

  test('tasks are readable only where the production of their target is readable', async () => {
    const all = (await t.get('/api/tasks/')).json as Task[]
    // Which production each task belongs to (the target project's), from the database: some
    // targets (deleted projects) no longer exist.
    const productionOf = new Map(
      t.db.$client
        .query<{ id: number; production: number }, []>('SELECT id, production FROM tasks')
        .all()
        .map((r) => [r.id, r.production]),
    )
    const targetReader = t.makeUser('tasks-target-reader', { read: [prod.Target.id] })
    const list = await t.get('/api/tasks/', { key: targetReader })
    const want = all.filter((x) => productionOf.get(x.id) === prod.Target.id)
    expect([list.json, list.headers.get('x-total-count')]).toEqual([want, String(want.length)])
    expect(want.map((x) => x.id)).toContain(copyTask.id)
    expect(want.length).toBeLessThan(all.length)
    expect((await t.get(`/api/tasks/${copyTask.id}/`, { key: targetReader })).json).toEqual(copyTask)

    const showReader = t.makeUser('tasks-show-reader', { read: [prod.Show.id] })
    expect((await t.get('/api/tasks/?kind=copy', { key: showReader })).json).toEqual([])
    expectError(await t.get(`/api/tasks/${copyTask.id}/`, { key: showReader }), 404, 'not_found')
    const nobody = t.makeUser('tasks-nobody')
    const none = await t.get('/api/tasks/', { key: nobody })
    expect([none.status, none.json, none.headers.get('x-total-count')]).toEqual([200, [], '0'])
  })
})
