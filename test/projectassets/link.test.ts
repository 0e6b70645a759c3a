// Linking and unlinking media assets to project assets (api.md 4.1 and 7, service.md 3, 4 and
// 7): every path spelling, under /api/projectassets/ and the legacy /api/project/; the result
// bodies; the {detail} bodies of 400 and 422; all-or-nothing without silent_mode; silent_mode;
// and the envelope errors (404, 403, 415, parse_error). 409 on a project being deleted is in
// api.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type TestApp, testApp } from '../helpers/app.ts'
import { expectError, folders } from '../helpers/envelope.ts'

const KINDS = ['audio', 'image', 'video'] as const
type Kind = (typeof KINDS)[number]
type Media = { id: number; production: number; path_file: string } & Record<string, unknown>
type Project = Record<string, any> & { id: number }
type Entry = { asset_id: unknown; type: unknown }

const PREFIXES = ['/api/projectassets/', '/api/project/'] as const
const LINK = ['/addasset/', '/addasset', '/add/', '/add'] as const
const UNLINK = ['/unlinkasset/', '/unlinkasset', '/unlink/', '/unlink'] as const
const LINK_PATHS = PREFIXES.flatMap((prefix) => LINK.map((suffix) => [prefix, suffix] as const))
const UNLINK_PATHS = PREFIXES.flatMap((prefix) => UNLINK.map((suffix) => [prefix, suffix] as const))
const ALLOWED = /audio, image, video|audio.*image.*video/
const MISSING_ID = 999_999

const dirs = folders()
let t: TestApp
let root: string
const prod: Record<'Show' | 'Other' | 'Hidden', { id: number; name: string }> = {} as never
/** Assets: Show has a1 a2 (audio), i1 (image), v1 v2 (video); Other has ov (video); Hidden has hv (video), ha (audio). */
const m: Record<'a1' | 'a2' | 'i1' | 'v1' | 'v2' | 'ov' | 'hv' | 'ha', Media> = {} as never
const kindOf: Record<string, Kind> = {}
/** Writes Show, reads Other, nothing on Hidden. */
let editor: string
/** Reads Show only. */
let reader: string

beforeAll(async () => {
  t = testApp(dirs.make('reelhouse-data-'))
  root = dirs.make('reelhouse-device-')
  expect((await t.post('/api/devices/', { name: 'link-disk', path: root })).status).toBe(201)
  for (const name of ['Show', 'Other', 'Hidden'] as const) {
    const p = await t.post('/api/productions/', { name, storage_root: `${root}/${name}` })
    expect(p.status).toBe(201)
    prod[name] = p.json
  }
  const plan: [keyof typeof m, Kind, keyof typeof prod][] = [
    ['a1', 'audio', 'Show'],
    ['a2', 'audio', 'Show'],
    ['i1', 'image', 'Show'],
    ['v1', 'video', 'Show'],
    ['v2', 'video', 'Show'],
    ['ov', 'video', 'Other'],
    ['hv', 'video', 'Hidden'],
    ['ha', 'audio', 'Hidden'],
  ]
  for (const [name, kind, production] of plan) {
    const r = await t.post(`/api/${kind}assets/`, {
      name,
      path_file: `${root}/${production}/${name}.bin`,
      production: prod[production].id,
    })
    expect(r.status).toBe(201)
    m[name] = r.json
    kindOf[name] = kind
  }
  editor = t.makeUser('editor', { write: [prod.Show.id], read: [prod.Other.id] })
  reader = t.makeUser('reader', { read: [prod.Show.id] })
})

afterAll(() => {
  t.cleanup()
  dirs.cleanup()
})

// ------------------------------------------------------------------ helpers

let seq = 0
async function project(production: keyof typeof prod = 'Show'): Promise<Project> {
  const r = await t.post('/api/projectassets/', {
    name: `P${++seq}`,
    bundle_root: `${root}/${production}/p${seq}`,
    production_id: prod[production].id,
  })
  if (r.status !== 201) throw new Error(`project: ${r.status} ${r.text}`)
  return r.json
}

/** The {asset_id, type} of a named asset, as sent and as answered. */
const ref = (name: keyof typeof m, type: string = kindOf[name]!) => ({ asset_id: m[name].id, type })

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

/** The media arrays a project should show with these assets linked (ordered by id). */
function linkedArrays(names: (keyof typeof m)[]) {
  const out: Record<string, unknown[]> = { audio_assets: [], image_assets: [], video_assets: [] }
  for (const name of [...names].sort((a, b) => m[a].id - m[b].id)) out[`${kindOf[name]}_assets`]!.push(listed(m[name]))
  return out
}

const getProject = async (id: number) => (await t.get(`/api/projectassets/${id}/`)).json as Project
const projectsOf = async (name: keyof typeof m) =>
  (await t.get(`/api/${kindOf[name]}assets/${m[name].id}/`)).json.projects as number[]

async function linkAsAdmin(id: number, names: (keyof typeof m)[]) {
  const r = await t.post(`/api/projectassets/${id}/addasset/`, { asset_list: names.map((n) => ref(n)) })
  if (r.status !== 200) throw new Error(`link: ${r.status} ${r.text}`)
  return getProject(id)
}

/** Asserts a {detail} body of this status: exactly one member, non-empty text. */
function expectDetail(r: { status: number; json: any; text: string }, status: number, pattern: RegExp = /\S/) {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`)
  expect(r.json).toEqual({ detail: expect.stringMatching(pattern) })
}

// ------------------------------------------------------------------ spellings and results

describe('link', () => {
  test.each(LINK_PATHS)('%s{id}%s links, and tells new from already linked', async (prefix, suffix) => {
    const p = await project()
    const url = `${prefix}${p.id}${suffix}`
    const first = await t.post(url, { asset_list: [ref('a1'), ref('v1'), ref('i1'), ref('ov')] }, { key: editor })
    expect([first.status, first.json]).toEqual([
      200,
      {
        newly_linked_assets: [ref('a1'), ref('v1'), ref('i1'), ref('ov')],
        already_linked_assets: [],
        invalid_assets: [],
      },
    ])
    const second = await t.post(url, { asset_list: [ref('a1'), ref('a2'), ref('ov')] }, { key: editor })
    expect([second.status, second.json]).toEqual([
      200,
      {
        newly_linked_assets: [ref('a2')],
        already_linked_assets: [ref('a1'), ref('ov')],
        invalid_assets: [],
      },
    ])
    const after = await getProject(p.id)
    expect(after).toEqual({
      ...p,
      ...linkedArrays(['a1', 'a2', 'v1', 'i1', 'ov']),
      date_mod: expect.any(String),
      modified_by: expect.any(String),
    })
    for (const name of ['a1', 'a2', 'v1', 'i1', 'ov'] as const) expect(await projectsOf(name)).toContain(p.id)
    expect(await projectsOf('v2')).not.toContain(p.id)
  })

  test('an empty asset_list links nothing: 200 with three empty arrays', async () => {
    const p = await project()
    const r = await t.post(`/api/projectassets/${p.id}/addasset/`, { asset_list: [] })
    expect([r.status, r.json]).toEqual([
      200,
      { newly_linked_assets: [], already_linked_assets: [], invalid_assets: [] },
    ])
    expect(await getProject(p.id)).toMatchObject(linkedArrays([]))
  })

  test('the same asset twice in one list is linked once', async () => {
    const p = await project()
    const r = await t.post(`/api/projectassets/${p.id}/addasset/`, { asset_list: [ref('v2'), ref('v2')] })
    expect([r.status, r.json]).toEqual([
      200,
      { newly_linked_assets: [ref('v2')], already_linked_assets: [ref('v2')], invalid_assets: [] },
    ])
    expect(await getProject(p.id)).toMatchObject(linkedArrays(['v2']))
  })

  test('an asset linked to two projects lists both in its projects, in id order', async () => {
    const [p, q] = [await project(), await project()]
    await linkAsAdmin(q.id, ['i1'])
    await linkAsAdmin(p.id, ['i1'])
    const projects = await projectsOf('i1')
    expect(projects.filter((id) => id === p.id || id === q.id)).toEqual([p.id, q.id])
    expect(projects).toEqual([...projects].sort((a, b) => a - b))
  })
})

describe('unlink', () => {
  test.each(UNLINK_PATHS)('%s{id}%s unlinks; the media assets stay', async (prefix, suffix) => {
    const p = await linkAsAdmin((await project()).id, ['a1', 'v1', 'i1', 'ov'])
    const url = `${prefix}${p.id}${suffix}`
    const r = await t.post(url, { asset_list: [ref('a1'), ref('ov')] }, { key: editor })
    expect([r.status, r.json]).toEqual([200, { unlinked_assets: [ref('a1'), ref('ov')], invalid_assets: [] }])
    expect(await getProject(p.id)).toEqual({
      ...p,
      ...linkedArrays(['v1', 'i1']),
      date_mod: expect.any(String),
      modified_by: expect.any(String),
    })
    expect(await projectsOf('a1')).not.toContain(p.id)
    expect(await projectsOf('ov')).not.toContain(p.id)
    expect(await projectsOf('v1')).toContain(p.id)
    for (const name of ['a1', 'ov'] as const)
      expect((await t.get(`/api/${kindOf[name]}assets/${m[name].id}/`)).status).toBe(200)
  })

  test('an empty asset_list unlinks nothing: 200 with two empty arrays', async () => {
    const p = await linkAsAdmin((await project()).id, ['a1'])
    const r = await t.post(`/api/projectassets/${p.id}/unlinkasset/`, { asset_list: [] })
    expect([r.status, r.json]).toEqual([200, { unlinked_assets: [], invalid_assets: [] }])
    expect(await getProject(p.id)).toMatchObject(linkedArrays(['a1']))
  })
})

// ------------------------------------------------------------------ 400 and 422 {detail}

describe.each([
  ['link', '/addasset/'],
  ['unlink', '/unlinkasset/'],
] as const)('%s: {detail} errors', (mode, suffix) => {
  const url = (id: number, s: string = suffix) => `/api/projectassets/${id}${s}`
  /** A project with a1 and v1 linked; for unlink, the good entry below is linked. */
  const setup = async () => linkAsAdmin((await project()).id, ['a1', 'v1'])
  /** An entry that would succeed on its own. */
  const good = () => (mode === 'link' ? ref('a2') : ref('a1'))

  test.each([
    ['an empty object', {}],
    ['only silent_mode', { silent_mode: true }],
    ['asset_list misspelled', { asset_lists: [{ asset_id: 2, type: 'audio' }] }],
  ])('asset_list missing (%s): 400 {detail} and nothing else', async (_, body) => {
    const p = await setup()
    for (const s of mode === 'link' ? LINK : UNLINK) expectDetail(await t.post(url(p.id, s), body), 400, /asset_list/)
    expectDetail(await t.post(`/api/project/${p.id}${suffix}`, body), 400, /asset_list/)
    // An empty JSON body is a missing asset_list too.
    expectDetail(
      await t.request('POST', url(p.id), { raw: '', headers: { 'content-type': 'application/json' } }),
      400,
      /asset_list/,
    )
    expect(await getProject(p.id)).toEqual(p)
  })

  test.each([
    ['a string', 'a2'],
    ['an object', { asset_id: 1, type: 'audio' }],
    ['null', null],
  ])('asset_list that is not an array (%s): 400 {detail}', async (_, asset_list) => {
    const p = await setup()
    expectDetail(await t.post(url(p.id), { asset_list }), 400, /asset_list/)
    expect(await getProject(p.id)).toEqual(p)
  })

  test.each([
    ['the text "false"', 'false'],
    ['the text "true"', 'true'],
    ['a number', 1],
    ['an object', {}],
  ])('silent_mode that is not a boolean (%s): 400 {detail}, nothing done', async (_, silent_mode) => {
    const p = await setup()
    expectDetail(
      await t.post(url(p.id), { asset_list: [good(), { asset_id: 0, type: 'movie' }], silent_mode }),
      400,
      /silent_mode/,
    )
    expect(await getProject(p.id)).toEqual(p)
  })

  test.each([['movie'], ['Audio'], ['videoasset'], [''], [5], [null], [undefined]])(
    'unsupported type %p after a valid entry: 422 {detail} naming the index and the allowed types; nothing changes',
    async (type) => {
      const p = await setup()
      const bad: Record<string, unknown> = { asset_id: m.v2.id }
      if (type !== undefined) bad.type = type
      for (const body of [{ asset_list: [good(), bad] }, { asset_list: [good(), bad], silent_mode: false }]) {
        const r = await t.post(url(p.id), body)
        expectDetail(r, 422, ALLOWED)
        expect(r.json.detail).toMatch(/\b1\b/)
        expect(r.json.detail).not.toMatch(/\b0\b/)
      }
      // The index is the entry's own: the third entry here.
      const third = await t.post(url(p.id), { asset_list: [good(), good(), bad] })
      expectDetail(third, 422, ALLOWED)
      expect(third.json.detail).toMatch(/\b2\b/)
      expect(await getProject(p.id)).toEqual(p)
    },
  )

  const semantic: [string, () => Entry | unknown][] = [
    ['a media asset that does not exist', () => ({ asset_id: MISSING_ID, type: 'video' })],
    ['an asset of a production the user cannot read', () => ref('hv')],
    ['a video asset id sent as audio', () => ref('v2', 'audio')],
    ['an audio asset id sent as image', () => ref('a2', 'image')],
    ['an asset_id that is text', () => ({ asset_id: String(m.v2.id), type: 'video' })],
    ['an entry without asset_id', () => ({ type: 'video' })],
    ['an entry that is not an object', () => 5],
    ...(mode === 'unlink' ? [['an asset that is not linked', () => ref('v2')] as [string, () => Entry]] : []),
  ]

  test.each(semantic)('%s after a valid entry: 422 {detail}, nothing changes', async (_, entry) => {
    const p = await setup()
    const r = await t.post(url(p.id), { asset_list: [good(), entry()] }, { key: editor })
    expectDetail(r, 422)
    expect(r.json.detail).toMatch(/\b1\b/)
    expect(await getProject(p.id)).toEqual(p)
    // The same entry alone, first in the list, names index 0.
    const alone = await t.post(url(p.id), { asset_list: [entry()] }, { key: editor })
    expectDetail(alone, 422, /\b0\b/)
    expect(await getProject(p.id)).toEqual(p)
  })
})

// ------------------------------------------------------------------ silent_mode

describe('silent_mode', () => {
  test('link: 200, the invalid entries listed in order, the rest done', async () => {
    const p = await linkAsAdmin((await project()).id, ['a1'])
    const r = await t.post(
      `/api/projectassets/${p.id}/add/`,
      {
        silent_mode: true,
        asset_list: [
          ref('a2'),
          ref('a1'),
          ref('v1', 'audio'),
          { asset_id: MISSING_ID, type: 'video' },
          ref('hv'),
          ref('i1', 'movie'),
          ref('ov'),
          { type: 'image' },
        ],
      },
      { key: editor },
    )
    expect([r.status, r.json]).toEqual([
      200,
      {
        newly_linked_assets: [ref('a2'), ref('ov')],
        already_linked_assets: [ref('a1')],
        invalid_assets: [
          ref('v1', 'audio'),
          { asset_id: MISSING_ID, type: 'video' },
          ref('hv'),
          ref('i1', 'movie'),
          { asset_id: null, type: 'image' },
        ],
      },
    ])
    expect(await getProject(p.id)).toEqual({
      ...p,
      ...linkedArrays(['a1', 'a2', 'ov']),
      date_mod: expect.any(String),
      modified_by: expect.any(String),
    })
    expect(await projectsOf('hv')).not.toContain(p.id)
  })

  test('unlink: 200, the invalid entries listed in order, the rest done', async () => {
    const p = await linkAsAdmin((await project()).id, ['a1', 'v1', 'i1'])
    const r = await t.post(
      `/api/project/${p.id}/unlink`,
      {
        silent_mode: true,
        asset_list: [
          ref('a1'),
          ref('v2'),
          ref('ha'),
          ref('i1', 'picture'),
          { asset_id: MISSING_ID, type: 'audio' },
          ref('v1', 'image'),
          ref('i1'),
        ],
      },
      { key: editor },
    )
    expect([r.status, r.json]).toEqual([
      200,
      {
        unlinked_assets: [ref('a1'), ref('i1')],
        invalid_assets: [
          ref('v2'),
          ref('ha'),
          ref('i1', 'picture'),
          { asset_id: MISSING_ID, type: 'audio' },
          ref('v1', 'image'),
        ],
      },
    ])
    expect(await getProject(p.id)).toEqual({
      ...p,
      ...linkedArrays(['v1']),
      date_mod: expect.any(String),
      modified_by: expect.any(String),
    })
  })

  test('only invalid entries: 200 with everything in invalid_assets, nothing changed', async () => {
    const p = await linkAsAdmin((await project()).id, ['a1'])
    const link = await t.post(
      `/api/projectassets/${p.id}/addasset`,
      { silent_mode: true, asset_list: [ref('hv'), ref('a1', 'video')] },
      { key: editor },
    )
    expect([link.status, link.json]).toEqual([
      200,
      { newly_linked_assets: [], already_linked_assets: [], invalid_assets: [ref('hv'), ref('a1', 'video')] },
    ])
    const unlink = await t.post(
      `/api/projectassets/${p.id}/unlinkasset`,
      { silent_mode: true, asset_list: [ref('a2')] },
      { key: editor },
    )
    expect([unlink.status, unlink.json]).toEqual([200, { unlinked_assets: [], invalid_assets: [ref('a2')] }])
    expect(await getProject(p.id)).toMatchObject(linkedArrays(['a1']))
  })
})

// ------------------------------------------------------------------ envelope errors

describe.each([
  ['link', LINK],
  ['unlink', UNLINK],
] as const)('%s: envelope errors', (mode, suffixes) => {
  const body = () => ({ asset_list: [mode === 'link' ? ref('a2') : ref('a1')] })
  const setup = async () => linkAsAdmin((await project()).id, ['a1'])
  const urls = (id: number) => PREFIXES.flatMap((prefix) => suffixes.map((s) => `${prefix}${id}${s}`))

  test('form data, text/plain or no Content-Type: 415 unsupported_media_type, nothing changes', async () => {
    const p = await setup()
    for (const url of urls(p.id)) {
      expectError(await t.request('POST', url, { form: body() }), 415, 'unsupported_media_type')
      const multipart = new FormData()
      multipart.set('asset_list', JSON.stringify(body().asset_list))
      expectError(await t.request('POST', url, { raw: multipart }), 415, 'unsupported_media_type')
      const json = JSON.stringify(body())
      expectError(
        await t.request('POST', url, { raw: json, headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      )
      expectError(await t.request('POST', url, { raw: new TextEncoder().encode(json) }), 415, 'unsupported_media_type')
    }
    expect(await getProject(p.id)).toEqual(p)
  })

  test('an unknown project, or one of a production the user cannot read: 404 not_found', async () => {
    const hidden = await project('Hidden')
    for (const url of [...urls(MISSING_ID), ...urls(0)]) expectError(await t.post(url, body()), 404, 'not_found')
    for (const url of urls(hidden.id)) expectError(await t.post(url, body(), { key: editor }), 404, 'not_found')
    // Also when the body would be refused: the project is looked up first.
    expectError(await t.post(urls(MISSING_ID)[0]!, {}), 404, 'not_found')
  })

  test('no write access to the project: 403 permission_denied, nothing changes', async () => {
    const p = await setup()
    for (const url of urls(p.id)) expectError(await t.post(url, body(), { key: reader }), 403, 'permission_denied')
    // Write access to the asset's production is not enough: the project's production counts.
    const other = await project('Other')
    expectError(
      await t.post(urls(other.id)[0]!, { asset_list: [ref('a2')] }, { key: editor }),
      403,
      'permission_denied',
    )
    expect(await getProject(p.id)).toEqual(p)
  })

  test('malformed JSON: 400 parse_error, nothing changes', async () => {
    const p = await setup()
    for (const url of urls(p.id)) {
      for (const raw of ['{"asset_list": [', '{asset_list: []}', '\u00ff{}']) {
        expectError(
          await t.request('POST', url, { raw, headers: { 'content-type': 'application/json' } }),
          400,
          'parse_error',
        )
      }
    }
    expect(await getProject(p.id)).toEqual(p)
  })

  test('a JSON body that is not an object is refused without a change', async () => {
    const p = await setup()
    for (const raw of ['[]', '"asset_list"', '5', 'null']) {
      const r = await t.request('POST', urls(p.id)[0]!, { raw, headers: { 'content-type': 'application/json' } })
      expect(r.status).toBe(400)
    }
    expect(await getProject(p.id)).toEqual(p)
  })

  test('without a key: 401 not_authenticated', async () => {
    const p = await setup()
    expectError(await t.post(urls(p.id)[0]!, body(), { key: null }), 401, 'not_authenticated')
    expect(await getProject(p.id)).toEqual(p)
  })
})
