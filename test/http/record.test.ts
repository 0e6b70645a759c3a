// The single-record answer of a media asset (GET /api/<kind>assets/{id}/): read in one statement
// since issue 9, it must answer exactly what the row and its separate keyword, project and share
// queries made before (the reference below states those queries plainly), for every user.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'

let t: TestApp
let root: string
let show: { id: number }
let other: { id: number }
let device: { id: number }

beforeAll(async () => {
  t = testApp()
  ;({ root, production: show, device } = await seedProduction(t))
  other = (await t.post('/api/productions/', { name: 'Other', storage_root: `${root}/Other` })).json
})
afterAll(() => t.cleanup())

let counter = 0
const create = async (kind: string, extra: Record<string, unknown> = {}) => {
  const r = await t.post(`/api/${kind}assets/`, {
    name: `clip ${++counter}`,
    path_file: `${root}/Show/clip-${counter}.mov`,
    production: show.id,
    ...extra,
  })
  expect(r.status).toBe(201)
  return r.json as { id: number }
}

/** The answer as the code before issue 9 made it: the row, then keywords and projects each by its own query. */
function reference(id: number) {
  const client = t.db.$client
  const row = client.query<Record<string, any>, [number]>('SELECT * FROM media_assets WHERE id = ?').get(id)!
  const keywords: Record<string, string[]> = {}
  for (const { category, keyword } of client
    .query<{ category: string; keyword: string }, [number]>(
      `SELECT c.name AS category, k.name AS keyword FROM media_asset_keywords mk JOIN keywords k ON k.id = mk.keyword_id
     JOIN keyword_categories c ON c.id = k.category_id WHERE mk.asset_id = ? ORDER BY c.name, k.name`,
    )
    .all(id))
    (keywords[category] ??= []).push(keyword)
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    production: row.production,
    status_asset: row.status_asset,
    path_file: row.path_file,
    device: row.device,
    is_archive: row.is_archive === 1,
    is_production: row.is_production === 1,
    meta_field_store: JSON.parse(row.meta_field_store),
    status_approval: row.approval,
    date_crt: row.date_crt,
    date_add: row.date_add,
    date_mod: row.date_mod,
    date_del: row.date_del,
    keywords,
    technical: JSON.parse(row.technical),
    path_proxy: row.path_proxy,
    projects: client
      .query<{ project_id: number }, [number]>(
        'SELECT project_id FROM project_asset_links WHERE asset_id = ? ORDER BY project_id',
      )
      .all(id)
      .map((p) => p.project_id),
    // Who wrote the newest history row of the asset.
    modified_by:
      client
        .query<{ who: string }, [string, number]>(
          "SELECT coalesce(username, 'system') AS who FROM history WHERE resource = ? AND resource_id = ? ORDER BY id DESC LIMIT 1",
        )
        .get(`${row.kind}asset`, id)?.who ?? null,
    archive_details: JSON.parse(row.archive_details),
    // No proxy file is made here: the pictures' fields are empty (test/assetimport/pictures.test.ts has them made).
    poster_url: '',
    thumbnail_url: '',
    path_thumbnail: '',
    is_proxy_available: false,
    ...(row.kind === 'video' ? { strip_url: '' } : {}),
  }
}

/** Keywords given out of order (categories and names), technical details, three linked projects, a share. */
function furnish(id: number) {
  const client = t.db.$client
  const category = (name: string) =>
    client
      .query<{ id: number }, [string]>("INSERT INTO keyword_categories (kind, name) VALUES ('video', ?) RETURNING id")
      .get(name)!.id
  const keyword = (categoryId: number, name: string) =>
    client
      .query<{ id: number }, [number, string]>('INSERT INTO keywords (category_id, name) VALUES (?, ?) RETURNING id')
      .get(categoryId, name)!.id
  const people = category(`People ${id}`)
  const location = category(`Location ${id}`)
  for (const k of [
    keyword(people, 'Zoe'),
    keyword(location, 'Night'),
    keyword(people, 'Anna "A" Ö'),
    keyword(location, 'Harbour'),
  ])
    client.query('INSERT INTO media_asset_keywords (asset_id, keyword_id) VALUES (?, ?)').run(id, k)
  client
    .query('UPDATE media_assets SET technical = ?, path_proxy = ? WHERE id = ?')
    .run(
      JSON.stringify({ codec: 'dnxhd', width: 1920, fps: 25.0, nested: { a: [1, null] } }),
      `${root}/proxy-${id}.mp4`,
      id,
    )
  const now = new Date().toISOString()
  for (const n of [3, 1, 2]) {
    const project = client
      .query<{ id: number }, [string, string, number, number, string, string]>(
        'INSERT INTO project_assets (name, bundle_root, production, device, date_add, date_mod) VALUES (?, ?, ?, ?, ?, ?) RETURNING id',
      )
      .get(`project ${id}-${n}`, `${root}/Show/project-${id}-${n}/`, show.id, device.id, now, now)!.id
    client.query('INSERT INTO project_asset_links (project_id, asset_id) VALUES (?, ?)').run(project, id)
  }
  client.query('INSERT INTO media_asset_shares (asset_id, production_id) VALUES (?, ?)').run(id, other.id)
}

test('an asset with keywords, technical details, linked projects and a share: the same JSON, byte for byte, as the separate queries made', async () => {
  const plain = await create('video')
  const full = await create('video', { meta_field_store: {}, date_crt: '2024-05-01' })
  furnish(full.id)
  for (const { id } of [plain, full]) {
    const r = await t.get(`/api/videoassets/${id}/`)
    expect(r.status).toBe(200)
    expect(r.text).toBe(JSON.stringify(reference(id)))
  }
  const answer = (await t.get(`/api/videoassets/${full.id}/`)).json
  expect(answer.keywords).toEqual({
    [`Location ${full.id}`]: ['Harbour', 'Night'],
    [`People ${full.id}`]: ['Anna "A" Ö', 'Zoe'],
  })
  expect(answer.projects).toHaveLength(3)
  expect((await t.get(`/api/videoassets/${plain.id}/`)).json).toMatchObject({ keywords: {}, projects: [] })
})

test('the create answer is the single-record answer', async () => {
  const r = await t.post('/api/videoassets/', { name: 'made', path_file: `${root}/Show/made.mov`, production: show.id })
  expect(r.status).toBe(201)
  expect(r.text).toBe(JSON.stringify(reference(r.json.id)))
  expect(r.text).toBe((await t.get(`/api/videoassets/${r.json.id}/`)).text)
})

test("a non-superuser: the asset of a readable production or shared with one, else 404; another kind's id is 404", async () => {
  const own = await create('video')
  const shared = await create('video')
  furnish(shared.id)
  const hidden = await create('video')
  const key = t.makeUser(`reader-${other.id}`, { read: [other.id] })
  const otherAsset = (
    await t.post('/api/videoassets/', { name: 'o', path_file: `${root}/Other/o.mov`, production: other.id })
  ).json
  const get = (kind: string, id: number) => t.get(`/api/${kind}assets/${id}/`, { key })
  const seen = await get('video', shared.id)
  expect([seen.status, seen.text]).toEqual([200, JSON.stringify(reference(shared.id))])
  expect((await get('video', otherAsset.id)).text).toBe(JSON.stringify(reference(otherAsset.id)))
  for (const r of [
    await get('video', own.id),
    await get('video', hidden.id),
    await get('audio', shared.id),
    await get('video', 999_999),
  ]) {
    expect(r.status).toBe(404)
    expect(r.json.errors[0].code).toBe('not_found')
  }
  // The superuser sees them all; the wrong kind is 404 for everyone.
  expect((await t.get(`/api/videoassets/${hidden.id}/`)).status).toBe(200)
  expect((await t.get(`/api/imageassets/${hidden.id}/`)).status).toBe(404)
})
