// Audio, image and video assets (api.md 2.7 and 4.7, service.md section 6) and import logs
// (api.md 2.8 and 4.8): create, list, single record, filters, kinds, uniqueness, custom metadata
// validation, dates and hold durations. Visibility per user is in permissions.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type TestApp, testApp } from '../helpers/app.ts'
import { expectError, expectErrors, folders } from '../helpers/envelope.ts'

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/
const KINDS = ['audio', 'image', 'video'] as const
type Kind = (typeof KINDS)[number]
const EXT: Record<Kind, string> = { audio: 'wav', image: 'png', video: 'mov' }

const dirs = folders()
let t: TestApp
let root: string
let device: { id: number; name: string }
let show: { id: number; name: string }
let other: { id: number; name: string }

beforeAll(async () => {
  t = testApp(dirs.make('reelhouse-data-'))
  root = dirs.make()
  const d = await t.post('/api/devices/', { name: 'assets-disk', path: root })
  expect(d.status).toBe(201)
  device = d.json
  const p = await t.post('/api/productions/', { name: 'Show', storage_root: `${root}/Show` })
  expect(p.status).toBe(201)
  show = p.json
  const o = await t.post('/api/productions/', { name: 'Other', storage_root: `${root}/Other` })
  expect(o.status).toBe(201)
  other = o.json
})

afterAll(() => {
  t.cleanup()
  dirs.cleanup()
})

let counter = 0
/** A fresh file path in the production folder of Show. */
const freshPath = (kind: Kind, stem = 'clip') => `${root}/Show/${stem}-${++counter}.${EXT[kind]}`

/** What a single-record answer of a freshly created asset holds, given what was sent. */
/** The ten fields of api.md 2.7 and status_approval (issue 19) for a freshly created asset, given what was sent. */
function listedOf(sent: { name: string; path_file: string }) {
  return {
    id: expect.any(Number),
    name: sent.name,
    description: '',
    production: show.id,
    status_asset: 6,
    path_file: sent.path_file,
    device: device.id,
    is_archive: false,
    is_production: true,
    meta_field_store: {},
    status_approval: 0,
  }
}

function detailOf(kind: Kind, sent: { name: string; path_file: string }, extra: Record<string, unknown> = {}) {
  return {
    ...listedOf(sent),
    date_crt: null,
    date_add: expect.stringMatching(TIMESTAMP),
    date_mod: expect.stringMatching(TIMESTAMP),
    date_del: null,
    keywords: {},
    technical: {},
    path_proxy: '',
    projects: [],
    modified_by: 'admin',
    archive_details: {},
    // No proxy: no pictures (test/assetimport/pictures.test.ts has them made).
    poster_url: '',
    thumbnail_url: '',
    path_thumbnail: '',
    is_proxy_available: false,
    ...(kind === 'video' ? { strip_url: '' } : {}),
    ...extra,
  }
}

/** The ten fields of api.md 2.7 and status_approval (issue 19), taken from a single-record answer. */
function listed(detail: Record<string, unknown>) {
  const {
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
  } = detail
  return {
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
  }
}

describe.each(KINDS)('%s assets', (kind) => {
  const base = `/api/${kind}assets/`

  test('POST with name, path_file and production id: 201 with the whole record', async () => {
    const sent = { name: `${kind} one`, path_file: freshPath(kind), production: show.id }
    const r = await t.post(base, sent)
    expect(r.status).toBe(201)
    expect(r.json).toEqual(detailOf(kind, sent))
    expect(r.json.date_mod).toBe(r.json.date_add)
  })

  test('the single record equals the create answer; the list shows exactly the ten fields of api.md 2.7 and status_approval', async () => {
    const sent = { name: `${kind} listed`, path_file: freshPath(kind), production: show.id }
    const created = (await t.post(base, sent)).json
    const single = await t.get(`${base}${created.id}/`)
    expect(single.status).toBe(200)
    expect(single.json).toEqual(created)

    const list = await t.get(base)
    expect(list.status).toBe(200)
    const entry = list.json.find((a: { id: number }) => a.id === created.id)
    expect(entry).toEqual({ ...listedOf(sent), id: created.id })
    expect(list.headers.get('x-total-count')).toBe(String(list.json.length))
  })

  test('every optional field is stored and shown; dates become timestamps with microseconds', async () => {
    const sent = {
      name: `${kind} full`,
      path_file: freshPath(kind),
      production: show.id,
      description: 'A longer text\nwith two lines',
      is_archive: true,
      is_production: false,
      date_crt: '2024-05-01',
      date_del: '2031-01-02 10:20:30.5+01:00',
    }
    const r = await t.post(base, sent)
    expect(r.status).toBe(201)
    expect(r.json).toEqual(
      detailOf(kind, sent, {
        description: sent.description,
        is_archive: true,
        is_production: false,
        date_crt: '2024-05-01T00:00:00.000000Z',
        date_del: '2031-01-02T09:20:30.500000Z',
      }),
    )
    for (const field of ['date_crt', 'date_add', 'date_mod', 'date_del']) expect(r.json[field]).toMatch(TIMESTAMP)
    expect((await t.get(`${base}${r.json.id}/`)).json).toEqual(r.json)
  })

  test('date_crt forms of service.md 9: YYYY, YYYY-MM, date and time with zone', async () => {
    const cases: [string, string][] = [
      ['1999', '1999-01-01T00:00:00.000000Z'],
      ['1999-07', '1999-07-01T00:00:00.000000Z'],
      ['2025-03-04 05:06', '2025-03-04T05:06:00.000000Z'],
      ['2025-03-04 05:06:07.123456Z', '2025-03-04T05:06:07.123456Z'],
      ['2025-03-04 00:30:00-02:00', '2025-03-04T02:30:00.000000Z'],
    ]
    for (const [given, stored] of cases) {
      const r = await t.post(base, { name: 'dated', path_file: freshPath(kind), production: show.id, date_crt: given })
      expect([given, r.status, r.json.date_crt]).toEqual([given, 201, stored])
    }
  })

  test('a date that is not one: 400 invalid at its field', async () => {
    for (const [field, value] of [
      ['date_crt', 'yesterday'],
      ['date_crt', '2024-02-30'],
      ['date_crt', '2024-13-01'],
      ['date_del', '31.12.2030'],
      ['date_del', ''],
    ] as const) {
      const r = await t.post(base, { name: 'dated', path_file: freshPath(kind), production: show.id, [field]: value })
      expectError(r, 400, 'invalid', { pointer: `/${field}` })
    }
  })

  test('production_name names the production; production (the id) wins when both are given', async () => {
    const byName = await t.post(base, { name: 'by name', path_file: freshPath(kind), production_name: 'Other' })
    expect([byName.status, byName.json.production]).toEqual([201, other.id])
    const both = await t.post(base, {
      name: 'both',
      path_file: freshPath(kind),
      production: show.id,
      production_name: 'Other',
    })
    expect([both.status, both.json.production]).toEqual([201, show.id])
  })

  test('an unknown production id is 400 invalid at /production even with a good production_name', async () => {
    const r = await t.post(base, {
      name: 'x',
      path_file: freshPath(kind),
      production: 999_999,
      production_name: 'Show',
    })
    expectError(r, 400, 'invalid', { pointer: '/production' })
    const n = await t.post(base, { name: 'x', path_file: freshPath(kind), production_name: 'No Such Show' })
    expectError(n, 400, 'invalid', { pointer: '/production_name' })
  })

  test('without production and production_name: 400 required at /production', async () => {
    const r = await t.post(base, { name: 'orphan', path_file: freshPath(kind) })
    expectError(r, 400, 'required', { pointer: '/production' })
  })

  test('missing name and path_file: one required entry each', async () => {
    expectErrors(await t.post(base, { production: show.id }), 400, [
      { code: 'required', where: { pointer: '/name' } },
      { code: 'required', where: { pointer: '/path_file' } },
    ])
  })

  test('path_file is cleaned of . and .. and must lie on a device, naming a file', async () => {
    const clean = `${root}/Show/cleaned-${kind}.${EXT[kind]}`
    const r = await t.post(base, {
      name: 'dotted',
      path_file: `${root}/Show/./sub/../cleaned-${kind}.${EXT[kind]}`,
      production: show.id,
    })
    expect([r.status, r.json.path_file]).toEqual([201, clean])

    for (const path_file of [
      '/nowhere/at/all.wav',
      `${root}/../outside.${EXT[kind]}`,
      'relative/clip.wav',
      `${root}/Show/folder/`,
      root,
      `${root}/`,
    ]) {
      const bad = await t.post(base, { name: 'bad path', path_file, production: show.id })
      expectError(bad, 400, 'invalid', { pointer: '/path_file' })
    }
  })

  test('the same path_file twice in one kind: 400 unique at /path_file, also when spelled differently', async () => {
    const path_file = freshPath(kind, 'twice')
    expect((await t.post(base, { name: 'first', path_file, production: show.id })).status).toBe(201)
    expectError(await t.post(base, { name: 'second', path_file, production: other.id }), 400, 'unique', {
      pointer: '/path_file',
    })
    const respelled = path_file.replace(`${root}/Show/`, `${root}/Other/../Show/`)
    expectError(await t.post(base, { name: 'third', path_file: respelled, production: show.id }), 400, 'unique', {
      pointer: '/path_file',
    })
  })

  test('path_file filter: exact match only, with X-Total-Count', async () => {
    const path_file = `${root}/Show/filter me #1 & ü 🎬-${kind}.${EXT[kind]}`
    const created = await t.post(base, { name: 'filtered', path_file, production: show.id })
    expect(created.status).toBe(201)
    const hit = await t.get(`${base}?path_file=${encodeURIComponent(path_file)}`)
    expect(hit.status).toBe(200)
    expect(hit.json).toEqual([listed(created.json)])
    expect(hit.headers.get('x-total-count')).toBe('1')

    for (const near of [
      path_file.slice(0, -1),
      `${path_file}x`,
      path_file.toUpperCase(),
      `${root}/Show/`,
      `${root}/Show/./filter me #1 & ü 🎬-${kind}.${EXT[kind]}`,
    ]) {
      const miss = await t.get(`${base}?path_file=${encodeURIComponent(near)}`)
      expect([near, miss.status, miss.json, miss.headers.get('x-total-count')]).toEqual([near, 200, [], '0'])
    }
  })

  test('a missing id: 404 not_found', async () => {
    expectError(await t.get(`${base}999999/`), 404, 'not_found')
  })
})

describe('the three kinds are separate', () => {
  test("one kind's id under another kind's path is 404, and lists hold only their kind", async () => {
    const ids = {} as Record<Kind, number>
    for (const kind of KINDS) {
      const r = await t.post(`/api/${kind}assets/`, {
        name: `sep ${kind}`,
        path_file: freshPath(kind, 'sep'),
        production: show.id,
      })
      expect(r.status).toBe(201)
      ids[kind] = r.json.id
    }
    for (const kind of KINDS) {
      expect((await t.get(`/api/${kind}assets/${ids[kind]}/`)).status).toBe(200)
      for (const otherKind of KINDS.filter((k) => k !== kind))
        expectError(await t.get(`/api/${otherKind}assets/${ids[kind]}/`), 404, 'not_found')
      const list = (await t.get(`/api/${kind}assets/`)).json as { id: number }[]
      const listedIds = list.map((a) => a.id)
      expect(listedIds).toContain(ids[kind])
      for (const otherKind of KINDS.filter((k) => k !== kind)) expect(listedIds).not.toContain(ids[otherKind])
    }
  })

  test('one path_file may be an asset of each kind; the filter finds only the kind asked', async () => {
    const path_file = `${root}/Show/shared-essence.mxf`
    const made = {} as Record<Kind, Record<string, unknown>>
    for (const kind of KINDS) {
      const r = await t.post(`/api/${kind}assets/`, { name: `essence ${kind}`, path_file, production: show.id })
      expect(r.status).toBe(201)
      made[kind] = r.json
    }
    for (const kind of KINDS) {
      const r = await t.get(`/api/${kind}assets/?path_file=${encodeURIComponent(path_file)}`)
      expect(r.json).toEqual([listed(made[kind])])
    }
  })
})

describe('meta_field_store', () => {
  // Fields by content type: 1 projectasset, 2 audioasset, 3 imageasset, 4 videoasset.
  const FIELDS: Record<number, { key: string; rule?: string }[]> = {
    1: [{ key: 'project.client' }],
    2: [{ key: 'audio.mood', rule: '^(calm|tense)$' }, { key: 'audio.bpm', rule: '^\\d+$' }, { key: 'audio.note' }],
    3: [{ key: 'image.camera' }, { key: 'image.iso', rule: '^\\d{2,5}$' }],
    4: [{ key: 'video.scene', rule: '^\\d+[A-Z]?$' }, { key: 'video.note' }],
  }
  const CONTENT_TYPE: Record<Kind, number> = { audio: 2, image: 3, video: 4 }
  const VALID: Record<Kind, Record<string, unknown>> = {
    audio: { 'audio.mood': 'calm', 'audio.bpm': 120, 'audio.note': 'room tone' },
    image: { 'image.camera': 'Ünïcødé 🎬', 'image.iso': '800' },
    video: { 'video.scene': '12A', 'video.note': '' },
  }
  const FAILING: Record<Kind, [string, unknown]> = {
    audio: ['audio.mood', 'angry'],
    image: ['image.iso', '8'],
    video: ['video.scene', 'A12'],
  }

  beforeAll(async () => {
    for (const [contentType, fields] of Object.entries(FIELDS)) {
      const set = await t.post('/api/custommetadatasets/', {
        name: `set ${contentType}`,
        description: '',
        content_type: Number(contentType),
      })
      expect(set.status).toBe(201)
      for (const { key, rule } of fields) {
        const f = await t.post('/api/custommetadata/', {
          key,
          value: key,
          custom_metadata_set: set.json.id,
          ...(rule ? { validation_rule: rule } : {}),
        })
        expect(f.status).toBe(200)
      }
    }
  })

  test('the fields are listed for every content type, and filtered by content type name or id', async () => {
    const all = await t.get('/api/custommetadata/')
    expect(all.json.map((f: { key: string }) => f.key)).toEqual(
      Object.values(FIELDS).flatMap((fields) => fields.map((f) => f.key)),
    )
    for (const [contentType, fields] of Object.entries(FIELDS)) {
      const name = ['', 'projectasset', 'audioasset', 'imageasset', 'videoasset'][Number(contentType)]
      const keys = fields.map((f) => f.key)
      expect(
        (await t.get(`/api/custommetadata/?content_type_name=${name}`)).json.map((f: { key: string }) => f.key),
      ).toEqual(keys)
      expect(
        (await t.get(`/api/custommetadata/?content_type_id=${contentType}`)).json.map((f: { key: string }) => f.key),
      ).toEqual(keys)
    }
  })

  describe.each(KINDS)('%s', (kind) => {
    const base = `/api/${kind}assets/`
    const post = (meta_field_store: unknown) =>
      t.post(base, { name: 'with metadata', path_file: freshPath(kind, 'meta'), production: show.id, meta_field_store })

    test('valid keys and values are stored and shown in create, single and list answers', async () => {
      const r = await post(VALID[kind])
      expect(r.status).toBe(201)
      expect(r.json.meta_field_store).toEqual(VALID[kind])
      expect((await t.get(`${base}${r.json.id}/`)).json.meta_field_store).toEqual(VALID[kind])
      const inList = (await t.get(`${base}?path_file=${encodeURIComponent(r.json.path_file)}`)).json
      expect(inList).toEqual([listed(r.json)])
    })

    test("a key of another content type's set is 400 invalid at /meta_field_store/<key>", async () => {
      const foreign = Object.entries(FIELDS)
        .filter(([ct]) => Number(ct) !== CONTENT_TYPE[kind])
        .flatMap(([, fields]) => fields.map((f) => f.key))
      expect(foreign.length).toBeGreaterThan(3)
      for (const key of foreign)
        expectError(await post({ [key]: 'x' }), 400, 'invalid', { pointer: `/meta_field_store/${key}` })
    })

    test('an unknown key is invalid; a / or ~ in it is escaped in the pointer', async () => {
      expectError(await post({ nope: 'x' }), 400, 'invalid', { pointer: '/meta_field_store/nope' })
      expectError(await post({ 'a/b~c': 'x' }), 400, 'invalid', { pointer: '/meta_field_store/a~1b~0c' })
    })

    test("a value failing the field's validation_rule is 400 invalid; nothing is stored", async () => {
      const [key, value] = FAILING[kind]
      const before = (await t.get(base)).headers.get('x-total-count')
      expectError(await post({ ...VALID[kind], [key]: value }), 400, 'invalid', { pointer: `/meta_field_store/${key}` })
      expect((await t.get(base)).headers.get('x-total-count')).toBe(before)
    })

    test('an object or array as a value is invalid', async () => {
      const key = Object.keys(VALID[kind])[0]!
      expectError(await post({ [key]: { nested: 1 } }), 400, 'invalid', { pointer: `/meta_field_store/${key}` })
      expectError(await post({ [key]: ['a'] }), 400, 'invalid', { pointer: `/meta_field_store/${key}` })
    })

    test('every failing key gets its own entry', async () => {
      const [key, value] = FAILING[kind]
      expectErrors(await post({ unknown_one: 1, [key]: value, 'project.client': 'ACME' }), 400, [
        { code: 'invalid', where: { pointer: '/meta_field_store/unknown_one' } },
        { code: 'invalid', where: { pointer: `/meta_field_store/${key}` } },
        { code: 'invalid', where: { pointer: '/meta_field_store/project.client' } },
      ])
    })

    test('meta_field_store that is not an object: 400 invalid at /meta_field_store', async () => {
      for (const value of [5, 'audio.mood', ['audio.mood'], true, null])
        expectError(await post(value), 400, 'invalid', { pointer: '/meta_field_store' })
    })
  })

  test('the rule of a field is checked against the text of a number or boolean value', async () => {
    const post = (meta_field_store: unknown) =>
      t.post('/api/audioassets/', {
        name: 'with metadata',
        path_file: freshPath('audio', 'meta'),
        production: show.id,
        meta_field_store,
      })
    expect((await post({ 'audio.bpm': 98 })).status).toBe(201)
    expectError(await post({ 'audio.bpm': 9.5 }), 400, 'invalid', { pointer: '/meta_field_store/audio.bpm' })
    expectError(await post({ 'audio.bpm': true }), 400, 'invalid', { pointer: '/meta_field_store/audio.bpm' })
  })
})

describe('hold durations set date_del of new assets', () => {
  let heldRoot: string
  let held: { id: number; name: string }
  let heldDevice: { id: number; name: string }

  beforeAll(async () => {
    heldRoot = dirs.make()
    heldDevice = (await t.post('/api/devices/', { name: 'held-disk', path: heldRoot })).json
    held = (await t.post('/api/productions/', { name: 'Held', storage_root: `${heldRoot}/Held` })).json
    for (const body of [
      { asset_type: 'videoasset', context_type: 'production', context: 'Held', duration: 30 },
      { asset_type: 'audioasset', context_type: 'production', context: 'Held', duration: 10 },
      { asset_type: 'audioasset', context_type: 'device', context: 'held-disk', duration: 2 },
    ])
      expect((await t.post('/api/assetholddurations/', body)).status).toBe(201)
  })

  const days = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 86_400_000

  test('the rules are listed whole without filters, and by asset_type and context_type', async () => {
    const all = (await t.get('/api/assetholddurations/')).json
    expect(
      all.map((r: { asset_type: string; context_type: string; duration: number }) => [
        r.asset_type,
        r.context_type,
        r.duration,
      ]),
    ).toEqual([
      ['videoasset', 'production', 30],
      ['audioasset', 'production', 10],
      ['audioasset', 'device', 2],
    ])
    expect((await t.get('/api/assetholddurations/?asset_type=audioasset')).json).toEqual([all[1], all[2]])
    expect((await t.get('/api/assetholddurations/?context_type=production')).json).toEqual([all[0], all[1]])
    expect((await t.get('/api/assetholddurations/?asset_type=audioasset&context_type=device')).json).toEqual([all[2]])
    expect((await t.get('/api/assetholddurations/?asset_type=projectasset')).json).toEqual([])
  })

  test('the production rule applies when no device rule matches', async () => {
    const r = await t.post('/api/videoassets/', {
      name: 'held',
      path_file: `${heldRoot}/Held/a.mov`,
      production: held.id,
    })
    expect(r.status).toBe(201)
    expect(r.json.date_del).toMatch(TIMESTAMP)
    expect(days(r.json.date_add, r.json.date_del)).toBe(30)
  })

  test('a device rule wins over the production rule', async () => {
    const r = await t.post('/api/audioassets/', {
      name: 'held',
      path_file: `${heldRoot}/Held/a.wav`,
      production: held.id,
    })
    expect(r.status).toBe(201)
    expect(r.json.device).toBe(heldDevice.id)
    expect(days(r.json.date_add, r.json.date_del)).toBe(2)
  })

  test('no rule: date_del stays null; a given date_del wins over a rule', async () => {
    const none = await t.post('/api/imageassets/', {
      name: 'kept',
      path_file: `${heldRoot}/Held/a.png`,
      production: held.id,
    })
    expect([none.status, none.json.date_del]).toEqual([201, null])
    const given = await t.post('/api/videoassets/', {
      name: 'given',
      path_file: `${heldRoot}/Held/b.mov`,
      production: held.id,
      date_del: '2040-06',
    })
    expect([given.status, given.json.date_del]).toEqual([201, '2040-06-01T00:00:00.000000Z'])
  })
})

describe('import logs', () => {
  const logs: Record<string, unknown>[] = []

  /** Import logs are written by the import endpoint; these tests put rows in directly. */
  function insertLog(row: {
    asset_type: string
    asset_path: string
    status: string
    error?: string
    warning?: object
    payload?: string
    asset_config?: object
    asset_import_id?: number | null
    production: number | null
  }) {
    const now = '2026-01-02T03:04:05.123456Z'
    const inserted = t.db.$client
      .query<{ id: number }, (string | number | null)[]>(
        `INSERT INTO import_logs (asset_type, asset_path, status, error, warning, payload, asset_config, asset_import_id, production, date_add, date_mod)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      )
      .get(
        row.asset_type,
        row.asset_path,
        row.status,
        row.error ?? '',
        JSON.stringify(row.warning ?? {}),
        row.payload ?? '{}',
        JSON.stringify(row.asset_config ?? {}),
        row.asset_import_id ?? null,
        row.production,
        now,
        now,
      )!
    const api = {
      id: inserted.id,
      asset_type: row.asset_type,
      asset_path: row.asset_path,
      status: row.status,
      error: row.error ?? '',
      warning: row.warning ?? {},
      payload: row.payload ?? '{}',
      asset_config: row.asset_config ?? {},
      asset_import_id: row.asset_import_id ?? null,
    }
    logs.push(api)
    return api
  }

  beforeAll(() => {
    insertLog({
      asset_type: 'videoasset',
      asset_path: `${root}/Show/a.mov`,
      status: 'asset_creation_completed',
      asset_import_id: 1,
      production: show.id,
      payload: '{"type":"video"}',
    })
    insertLog({
      asset_type: 'videoasset',
      asset_path: `${root}/Show/a.mov`,
      status: 'import_completed',
      warning: { ffmpeg: 'ffmpeg was not found' },
      asset_config: { move_asset: false },
      production: show.id,
    })
    insertLog({
      asset_type: 'audioasset',
      asset_path: `${root}/Other/b.wav`,
      status: 'import_failed',
      error: 'The file was not found on the device.',
      production: other.id,
    })
    insertLog({
      asset_type: 'imageasset',
      asset_path: 'relative/c.png',
      status: 'path_file must be absolute',
      error: 'path_file must be absolute',
      production: null,
    })
  })

  test('the list holds every log with the nine fields of api.md 2.8, by id', async () => {
    const r = await t.get('/api/importlogs/')
    expect(r.status).toBe(200)
    expect(r.json).toEqual(logs)
    expect(r.headers.get('x-total-count')).toBe('4')
  })

  test('a single log, and 404 for a missing one', async () => {
    for (const log of logs) expect((await t.get(`/api/importlogs/${log.id}/`)).json).toEqual(log)
    expectError(await t.get('/api/importlogs/999999/'), 404, 'not_found')
  })

  test('asset_path filter: every log of that path, exact match only', async () => {
    const r = await t.get(`/api/importlogs/?asset_path=${encodeURIComponent(`${root}/Show/a.mov`)}`)
    expect(r.json).toEqual([logs[0], logs[1]])
    expect(r.headers.get('x-total-count')).toBe('2')
    for (const near of [`${root}/Show/a.mo`, `${root}/Show/`, `${root}/Show/A.MOV`, '']) {
      const miss = await t.get(`/api/importlogs/?asset_path=${encodeURIComponent(near)}`)
      expect([near, miss.status, miss.json]).toEqual([near, 200, []])
    }
  })

  test('paging with limit and offset', async () => {
    expect((await t.get('/api/importlogs/?limit=2&offset=1')).json).toEqual([logs[1], logs[2]])
    expect((await t.get('/api/importlogs/?offset=3')).json).toEqual([logs[3]])
  })

  test('a user who can read one production sees only its logs', async () => {
    const key = t.makeUser('log-reader', { read: [show.id] })
    const r = await t.get('/api/importlogs/', { key })
    expect(r.json).toEqual([logs[0], logs[1]])
    expect(r.headers.get('x-total-count')).toBe('2')
    expectError(await t.get(`/api/importlogs/${logs[2]!.id}/`, { key }), 404, 'not_found')
    expectError(await t.get(`/api/importlogs/${logs[3]!.id}/`, { key }), 404, 'not_found')
    expect((await t.get(`/api/importlogs/${logs[0]!.id}/`, { key })).json).toEqual(logs[0])
  })
})
