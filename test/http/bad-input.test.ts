// Bad input on every POST and list endpoint (service.md sections 3 and 4; STYLE.md: every bad
// input the contract names has a test that would fail if it reached a 500). Each endpoint is
// described once; the cases are generated from that description, and every answer must be the
// envelope with the expected status, code and pointer.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type RequestOptions, type TestApp, testApp } from '../helpers/app.ts'
import { errorEntry, expectError, folders } from '../helpers/envelope.ts'

type Reply = Awaited<ReturnType<TestApp['request']>>
type FieldKind =
  | 'string'
  | 'nullableString'
  | 'integer'
  | 'nullableInteger'
  | 'boolean'
  | 'object'
  | 'intArray'
  | 'stringArray'

/** Values of the wrong type for each kind of field, and where the error points (relative to the field). */
const WRONG: Record<FieldKind, [unknown, string][]> = {
  string: [
    [123, ''],
    [true, ''],
    [{ a: 1 }, ''],
    [['a'], ''],
    [null, ''],
  ],
  nullableString: [
    [123, ''],
    [false, ''],
    [{}, ''],
    [['a'], ''],
  ],
  integer: [
    ['abc', ''],
    [1.5, ''],
    [true, ''],
    [{}, ''],
    [[1], ''],
    [null, ''],
    ['', ''],
  ],
  nullableInteger: [
    ['abc', ''],
    [1.5, ''],
    [true, ''],
    [{}, ''],
    [[1], ''],
  ],
  boolean: [
    ['yes', ''],
    [2, ''],
    [{}, ''],
    [[true], ''],
    [null, ''],
  ],
  object: [
    [5, ''],
    ['{}', ''],
    [[], ''],
    [true, ''],
    [null, ''],
  ],
  intArray: [
    [5, ''],
    ['1', ''],
    [{ 0: 1 }, ''],
    [null, ''],
    [['x'], '/0'],
    [[1.5], '/0'],
    [[{}], '/0'],
  ],
  stringArray: [
    [5, ''],
    ['a', ''],
    [{ 0: 'a' }, ''],
    [null, ''],
    [[1], '/0'],
    [[null], '/0'],
  ],
}

type Endpoint = {
  path: string
  /** Success status of the POST. */
  ok: 200 | 201
  /** A valid body; fresh (unique names and paths) on every call. */
  valid: () => Record<string, unknown>
  /** Required fields in the order the errors list them. */
  required: string[]
  fields: Record<string, FieldKind>
  /** Values refused as not one of the allowed ones (unknown enum values, unknown ids, bad formats),
   * with the rest of the pointer below the field when the error names a part of it. */
  refused: [string, unknown, string?][]
  /** Name-like fields: unicode is stored as given; 10,000 characters are refused. */
  names: string[]
  /** Longer text fields: unicode is stored as given. */
  texts?: string[]
  /** Path fields: traversal, relative paths, NUL and 5,000 characters are refused. */
  paths: string[]
  /** Fields that must be unique: a second record with the same value is 400 unique at the pointer. */
  unique?: {
    field: string
    first?: () => Record<string, unknown>
    same: (first: Record<string, unknown>) => Record<string, unknown>
  }[]
  /** Path values that are accepted, with the stored form, where the endpoint answers with the field. */
  cleanedPaths?: () => [string, unknown, string][]
}

const dirs = folders()
let t: TestApp
let root: string
/** A folder that is not a device: device paths are made under it. */
let elsewhere: string
let productionId: number
let setId: number
let n = 0
const next = () => ++n

const mediaEndpoint = (kind: 'audio' | 'image' | 'video'): Endpoint => ({
  path: `/api/${kind}assets/`,
  ok: 201,
  valid: () => ({ name: `clip ${next()}`, path_file: `${root}/Show/${kind}-${n}.bin`, production: productionId }),
  required: ['name', 'path_file', 'production'],
  fields: {
    name: 'string',
    path_file: 'string',
    production: 'integer',
    production_name: 'string',
    description: 'string',
    is_archive: 'boolean',
    is_production: 'boolean',
    meta_field_store: 'object',
    date_crt: 'string',
    date_del: 'string',
  },
  refused: [
    // (An unknown production_name is tested without a production id in assets.test.ts: the id wins.)
    ['production', 0],
    ['production', -3],
    ['production', 999_999],
    ['production', 2 ** 53],
    ['production_name', ''],
    ['name', ''],
    ['path_file', ''],
    ['date_crt', 'yesterday'],
    ['date_crt', '2024-02-30'],
    ['date_del', '2024-1-1'],
    ['meta_field_store', { 'no.such.field': 'x' }, '/no.such.field'],
    ['description', 'd'.repeat(100_001)],
  ],
  names: ['name'],
  texts: ['description'],
  paths: ['path_file'],
  cleanedPaths: () => [
    ['path_file', `${root}/Show/sub/../${kind}-dots.bin`, `${root}/Show/${kind}-dots.bin`],
    ['path_file', `${root}/Show/Ünïcødé 🎬 ${kind}.bin`, `${root}/Show/Ünïcødé 🎬 ${kind}.bin`],
  ],
})

const ENDPOINTS: Record<string, Endpoint> = {
  devices: {
    path: '/api/devices/',
    ok: 201,
    valid: () => ({ name: `dev-${next()}`, path: `${elsewhere}/dev-${n}/` }),
    required: ['name', 'path'],
    fields: {
      name: 'string',
      path: 'string',
      display_name: 'string',
      is_internal: 'boolean',
      is_archive: 'boolean',
      autoshot_detection: 'boolean',
      allow_direct_writing: 'boolean',
      recieve_xml_meta: 'boolean',
      protocol: 'string',
      anonymous: 'boolean',
      server: 'nullableString',
      username: 'nullableString',
      password: 'nullableString',
      transcoding_profile: 'nullableInteger',
      archive_connector: 'nullableString',
      passthrough_profiles: 'intArray',
      write_permission_groups: 'stringArray',
    },
    refused: [
      ['protocol', 'ftp'],
      ['protocol', 'FILE'],
      ['protocol', ''],
      ['transcoding_profile', 999_999],
      ['transcoding_profile', 0],
      ['name', ''],
      ['path', ''],
      ['passthrough_profiles', [0], '/0'],
      ['passthrough_profiles', [1, 2 ** 60], '/1'],
    ],
    names: ['name', 'display_name'],
    paths: ['path'],
    unique: [
      { field: 'name', same: (first) => ({ name: first.name, path: `${elsewhere}/other-${next()}/` }) },
      // The same folder spelled differently is the same path.
      { field: 'path', same: (first) => ({ name: `dev-${next()}`, path: `${String(first.path).slice(0, -1)}/./` }) },
    ],
    cleanedPaths: () => [
      // '..' above the root stays at the root (a device may lie anywhere; this one does not exist).
      ['path', '/dev/../../reelhouse-nowhere/x', '/reelhouse-nowhere/x/'],
      ['path', `${elsewhere}/a/./b/../dev-clean`, `${elsewhere}/a/dev-clean/`],
      ['path', `${elsewhere}/Ünïcødé 🎬`, `${elsewhere}/Ünïcødé 🎬/`],
    ],
  },
  productions: {
    path: '/api/productions/',
    ok: 201,
    valid: () => ({ name: `prod-${next()}`, storage_root: `${root}/prod-${n}` }),
    required: ['name', 'storage_root'],
    fields: {
      name: 'string',
      storage_root: 'string',
      codename: 'string',
      company: 'string',
      proxy_root: 'string',
      proxy_url: 'string',
      upload_root: 'nullableString',
      move_uploads: 'boolean',
      ignore_patterns: 'stringArray',
      upload_device: 'integer',
      audioasset_device: 'integer',
      imageasset_device: 'integer',
      videoasset_device: 'integer',
    },
    refused: [
      ['codename', 'Not A Slug'],
      ['codename', '-lead'],
      ['codename', 'ünï'],
      ['upload_device', 999_999],
      ['videoasset_device', 0],
      ['proxy_url', 'ftp://example.com/'],
      ['proxy_url', 'not a url'],
      ['name', ''],
      ['storage_root', ''],
      ['storage_root', '/'],
      ['upload_root', 'relative/drop'],
      ['upload_root', '/nowhere-on-a-device/drop'],
      ['ignore_patterns', ['[abc'], '/0'],
      ['ignore_patterns', ['*.lrf', ''], '/1'],
    ],
    names: ['name', 'company'],
    paths: ['storage_root', 'proxy_root'],
    unique: [
      { field: 'name', same: (first) => ({ name: first.name, storage_root: `${root}/prod-${next()}` }) },
      {
        field: 'codename',
        same: (first) => ({ name: `prod-${next()}`, storage_root: `${root}/prod-${n}`, codename: first.codename }),
      },
    ],
    cleanedPaths: () => [
      ['storage_root', `${root}/x/../prod-clean`, `${root}/prod-clean/`],
      ['proxy_root', `${root}/p/./../proxies-clean`, `${root}/proxies-clean/`],
      ['storage_root', `${root}/Ünïcødé 🎬`, `${root}/Ünïcødé 🎬/`],
    ],
  },
  transcodingprofiles: {
    path: '/api/transcodingprofiles/',
    ok: 200,
    valid: () => ({ name: `tp-${next()}` }),
    required: ['name'],
    fields: {
      name: 'string',
      codec_name: 'string',
      codec_profile: 'string',
      video_container: 'string',
      frame_rate: 'string',
      video_data_rate: 'string',
      width: 'integer',
      height: 'integer',
      display_aspect_ratio: 'string',
      pix_fmt: 'string',
      progressive: 'boolean',
      passthrough: 'boolean',
      default_profile: 'boolean',
      interlaced: 'string',
      ar_conversion: 'string',
      should_have_audio: 'boolean',
      audio_codec_name: 'string',
      audio_container: 'string',
      audio_codec_profile: 'string',
      audio_data_rate: 'string',
      tracks: 'integer',
      channels_per_track: 'integer',
      bits_per_sample: 'integer',
      sample_rate: 'integer',
    },
    refused: [
      ['width', -1],
      ['height', 2 ** 40],
      ['sample_rate', -48000],
      ['name', ''],
    ],
    // codec_name is checked against what ffmpeg makes (media/profile.ts): display_aspect_ratio is free text.
    names: ['name', 'display_aspect_ratio'],
    paths: [],
    unique: [{ field: 'name', same: (first) => ({ name: first.name }) }],
  },
  custommetadata: {
    path: '/api/custommetadata/',
    ok: 200,
    valid: () => ({ key: `bad.input_${next()}`, value: `Field ${n}`, custom_metadata_set: setId }),
    required: ['key', 'value', 'custom_metadata_set'],
    fields: {
      key: 'string',
      value: 'string',
      custom_metadata_set: 'integer',
      order: 'integer',
      validation_rule: 'nullableString',
    },
    refused: [
      ['key', 'Not Dotted'],
      ['key', 'a..b'],
      ['key', '.a'],
      ['key', 'a.'],
      ['key', 'ünï.code'],
      ['key', ''],
      ['key', 'a/b'],
      ['value', ''],
      ['custom_metadata_set', 999_999],
      ['custom_metadata_set', 0],
      ['order', -1],
      ['validation_rule', '('],
      ['validation_rule', '[z-a]'],
    ],
    names: ['value'],
    paths: [],
    unique: [{ field: 'key', same: (first) => ({ key: first.key, value: 'again', custom_metadata_set: setId }) }],
  },
  custommetadatasets: {
    path: '/api/custommetadatasets/',
    ok: 201,
    valid: () => ({ name: `set-${next()}`, description: 'about', content_type: 2 }),
    required: ['name', 'description', 'content_type'],
    fields: { name: 'string', description: 'string', content_type: 'integer' },
    refused: [
      ['content_type', 0],
      ['content_type', 5],
      ['content_type', 999_999],
      ['name', ''],
      ['description', 'd'.repeat(10_001)],
    ],
    names: ['name'],
    texts: ['description'],
    paths: [],
  },
  assetholddurations: {
    path: '/api/assetholddurations/',
    ok: 201,
    // (asset_type, context_type, context) is unique; the successful cases below name their own context.
    valid: () => ({ asset_type: 'videoasset', context_type: 'production', context: 'Show', duration: next() }),
    required: ['asset_type', 'context_type', 'context', 'duration'],
    fields: { asset_type: 'string', context_type: 'string', context: 'string', duration: 'integer' },
    refused: [
      ['asset_type', 'movieasset'],
      ['asset_type', 'VIDEOASSET'],
      ['asset_type', ''],
      ['context_type', 'user'],
      ['context_type', 'Device'],
      ['context', 'no such production'],
      ['context', ''],
      ['duration', -1],
      ['duration', 1e12],
    ],
    names: [],
    paths: [],
    unique: [
      {
        field: 'context',
        first: () => ({ asset_type: 'imageasset', context_type: 'device', context: 'disk', duration: 1 }),
        same: (first) => ({
          asset_type: first.asset_type,
          context_type: first.context_type,
          context: first.context,
          duration: 99,
        }),
      },
    ],
  },
  audioassets: mediaEndpoint('audio'),
  imageassets: mediaEndpoint('image'),
  videoassets: mediaEndpoint('video'),
}

beforeAll(async () => {
  t = testApp(dirs.make('reelhouse-data-'))
  root = dirs.make()
  elsewhere = dirs.make()
  expect((await t.post('/api/devices/', { name: 'disk', path: root })).status).toBe(201)
  const p = await t.post('/api/productions/', { name: 'Show', storage_root: `${root}/Show` })
  expect(p.status).toBe(201)
  productionId = p.json.id
  const set = await t.post('/api/custommetadatasets/', { name: 'set', description: '', content_type: 4 })
  setId = set.json.id
  // Transcoding profile 1, for the device fields that name profiles.
  expect((await t.post('/api/transcodingprofiles/', { name: 'profile-1' })).json.id).toBe(1)
})

afterAll(() => {
  t.cleanup()
  dirs.cleanup()
})

const pointer = (field: string, rest = '') => ({ pointer: `/${field}${rest}` })
const count = async (path: string) => (await t.get(path)).headers.get('x-total-count')
const raw = (path: string, body: RequestOptions['raw'], contentType?: string) =>
  t.request('POST', path, { raw: body, headers: contentType ? { 'content-type': contentType } : {} })

/** The reply is a 400 envelope whose entries are all `code`, at exactly these pointers. */
function expect400(reply: Reply, code: string, pointers: string[]) {
  expect(reply.status).toBe(400)
  expect(reply.json).toEqual({ errors: pointers.map((p) => errorEntry(400, code, { pointer: p })) })
}

describe.each(Object.keys(ENDPOINTS))('POST /api/%s/', (name) => {
  const spec = ENDPOINTS[name]!

  test('the valid body is accepted (the baseline every case below changes one thing of)', async () => {
    const r = await t.post(spec.path, spec.valid())
    expect([r.status, typeof r.json.id]).toEqual([spec.ok, 'number'])
  })

  if (spec.unique)
    test('a value that must be unique and is taken: 400 unique at its pointer', async () => {
      for (const { field, first: firstBody, same } of spec.unique!) {
        const first = await t.post(spec.path, firstBody?.() ?? spec.valid())
        expect(first.status).toBe(spec.ok)
        const before = await count(spec.path)
        expectError(await t.post(spec.path, same(first.json)), 400, 'unique', pointer(field))
        expect(await count(spec.path)).toBe(before)
      }
    })

  test('empty object: one required entry per required field', async () => {
    const before = await count(spec.path)
    expect400(
      await t.post(spec.path, {}),
      'required',
      spec.required.map((f) => `/${f}`),
    )
    expect(await count(spec.path)).toBe(before)
  })

  test('empty body with a JSON content type: the same as {}', async () => {
    expect400(
      await raw(spec.path, '', 'application/json'),
      'required',
      spec.required.map((f) => `/${f}`),
    )
  })

  test('each required field missing: 400 required at its pointer', async () => {
    for (const field of spec.required) {
      const body = spec.valid()
      delete body[field]
      const r = await t.post(spec.path, body)
      expect([field, r.status]).toEqual([field, 400])
      expectError(r, 400, 'required', pointer(field))
    }
  })

  test('each field with a value of the wrong type: 400 invalid at its pointer', async () => {
    const before = await count(spec.path)
    for (const [field, kind] of Object.entries(spec.fields)) {
      for (const [value, rest] of WRONG[kind]) {
        const r = await t.post(spec.path, { ...spec.valid(), [field]: value })
        expect([field, value, r.status]).toEqual([field, value, 400])
        expectError(r, 400, 'invalid', pointer(field, rest))
      }
    }
    expect(await count(spec.path)).toBe(before)
  })

  test('values outside the allowed ones: 400 invalid at the field', async () => {
    for (const [field, value, rest] of spec.refused) {
      const r = await t.post(spec.path, { ...spec.valid(), [field]: value })
      expect([field, value, r.status]).toEqual([field, value, 400])
      expectError(r, 400, 'invalid', pointer(field, rest))
    }
  })

  test('unicode names and texts are stored as given', async () => {
    for (const field of [...spec.names, ...(spec.texts ?? [])]) {
      const value = `Ünïcødé 🎬 ${field} ${next()} — 名前 ✓`
      const r = await t.post(spec.path, { ...spec.valid(), [field]: value })
      expect([field, r.status, r.json[field]]).toEqual([field, spec.ok, value])
      expect((await t.get(`${spec.path}${r.json.id}/`)).json[field]).toBe(value)
    }
  })

  if (spec.names.length > 0)
    test('names of 10,000 characters: 400 invalid', async () => {
      for (const field of spec.names)
        expectError(
          await t.post(spec.path, { ...spec.valid(), [field]: 'n'.repeat(10_000) }),
          400,
          'invalid',
          pointer(field),
        )
    })

  if (spec.paths.length > 0)
    test('paths: traversal out of the devices, relative paths, NUL characters and 5,000 characters are refused', async () => {
      for (const field of spec.paths) {
        const refused = [
          '../../etc/',
          'media/x',
          './x',
          '~/x',
          '/dev/../../etc/passwd',
          `${root}/../../etc/`,
          `${root}/Show/../../outside/x`,
          `${root}/Show/a\u0000b`,
          `\u0000${root}/Show/x`,
          `${root}/${'p'.repeat(5000)}`,
        ]
        // Devices may lie anywhere: for them only the relative, NUL and over-long paths are refused.
        const cases =
          spec.path === '/api/devices/'
            ? refused.filter((p) => !p.startsWith('/') || p.includes('\u0000') || p.length > 4096)
            : refused
        for (const value of cases) {
          const r = await t.post(spec.path, { ...spec.valid(), [field]: value })
          expect([field, value.slice(0, 60), r.status]).toEqual([field, value.slice(0, 60), 400])
          expectError(r, 400, 'invalid', pointer(field))
        }
      }
    })

  if (spec.cleanedPaths)
    test('paths with . and .. inside are cleaned; unicode paths are kept', async () => {
      for (const [field, given, stored] of spec.cleanedPaths?.() ?? []) {
        const r = await t.post(spec.path, { ...spec.valid(), [field]: given })
        expect([field, given, r.status, r.json[field]]).toEqual([field, given, spec.ok, stored])
      }
    })

  test('malformed JSON: 400 parse_error', async () => {
    for (const body of [
      '{"name": ',
      '{name: "x"}',
      "{'name': 'x'}",
      '{"a": 1,}',
      '{"a": 1}}',
      'nul',
      '\u0000',
      '{"a": "\u0001"}',
    ]) {
      const r = await raw(spec.path, body, 'application/json')
      expect([body, r.status]).toEqual([body, 400])
      expectError(r, 400, 'parse_error')
    }
    expectError(
      await raw(spec.path, new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), 'application/json'),
      400,
      'parse_error',
    )
  })

  test('a JSON array, string, number, boolean or null at the top: 400 invalid at the body', async () => {
    for (const body of [[], [spec.valid()], 'name', 42, true, null]) {
      const r = await raw(spec.path, JSON.stringify(body), 'application/json')
      expect([body, r.status]).toEqual([body, 400])
      expectError(r, 400, 'invalid', { pointer: '' })
    }
  })

  test('other content types, or none: 415 unsupported_media_type, and nothing is created', async () => {
    const before = await count(spec.path)
    const body = JSON.stringify(spec.valid())
    for (const type of [
      'text/plain',
      'application/xml',
      'text/xml',
      'application/octet-stream',
      'text/json',
      'image/png',
    ]) {
      const r = await raw(spec.path, body, type)
      expect([type, r.status]).toEqual([type, 415])
      expectError(r, 415, 'unsupported_media_type')
    }
    expectError(await raw(spec.path, body), 415, 'unsupported_media_type')
    expect(await count(spec.path)).toBe(before)
  })

  test('a body over 1 MiB: 413 too_large', async () => {
    const field = spec.names[0] ?? 'context'
    expectError(await t.post(spec.path, { ...spec.valid(), [field]: 'x'.repeat(1024 * 1024 + 1) }), 413, 'too_large')
  })

  test('form data with values of the wrong type: 400 invalid, never a 500', async () => {
    const before = await count(spec.path)
    for (const [field, kind] of Object.entries(spec.fields)) {
      if (kind === 'string' || kind === 'nullableString') continue // any text is a string
      const form = { ...spec.valid(), [field]: kind === 'object' ? '{not json' : 'not-a-value' }
      const r = await t.request('POST', spec.path, { form })
      expect([field, r.status]).toEqual([field, 400])
      expectError(r, 400, 'invalid', pointer(field))
    }
    expect(await count(spec.path)).toBe(before)
  })

  if (spec.names.length > 0)
    test('NUL characters in names never reach a 500', async () => {
      for (const field of spec.names) {
        const r = await t.post(spec.path, { ...spec.valid(), [field]: `a\u0000b ${next()}` })
        expect(r.status).toBeLessThan(500)
        if (r.status >= 400) expect(r.json.errors[0].code).toBe('invalid')
      }
    })
})

// ------------------------------------------------------------------ list query parameters

const LISTS: Record<string, [string, string][]> = {
  '/api/devices/': [
    ['path', 'relative'],
    ['path', '/no/slash'],
  ],
  '/api/productions/': [['storage_root', '/no/slash']],
  '/api/transcodingprofiles/': [],
  '/api/custommetadata/': [
    ['content_type_name', 'movieasset'],
    ['content_type_name', 'AUDIOASSET'],
    ['content_type_name', ''],
    ['content_type_id', 'abc'],
    ['content_type_id', '-1'],
    ['content_type_id', '1.5'],
  ],
  '/api/custommetadatasets/': [],
  '/api/contenttypes/': [],
  '/api/assetholddurations/': [
    ['asset_type', 'movieasset'],
    ['asset_type', ''],
    ['context_type', 'user'],
    ['context_type', 'DEVICE'],
  ],
  '/api/audioassets/': [],
  '/api/imageassets/': [],
  '/api/videoassets/': [],
  '/api/importlogs/': [],
}

/** Filters of each list with odd but well-formed values: never an error, just no match. */
const ODD_FILTERS: Record<string, string[]> = {
  '/api/devices/': ['path'],
  '/api/productions/': ['storage_root'],
  '/api/audioassets/': ['path_file'],
  '/api/imageassets/': ['path_file'],
  '/api/videoassets/': ['path_file'],
  '/api/importlogs/': ['asset_path'],
}

describe.each(Object.keys(LISTS))('GET %s', (path) => {
  test('limit and offset that are not non-negative decimal integers: 400 invalid naming the parameter', async () => {
    for (const name of ['limit', 'offset']) {
      for (const value of ['-1', 'abc', '1.5', '', '1e3', '0x10', ' 1', '1 ', '+1', '%00', '１']) {
        const r = await t.get(`${path}?${name}=${value === '%00' ? value : encodeURIComponent(value)}`)
        expect([name, value, r.status]).toEqual([name, value, 400])
        expectError(r, 400, 'invalid', { parameter: name })
      }
    }
  })

  test('huge limit and offset are not a 500', async () => {
    for (const query of [
      'limit=99999999999999999999',
      'offset=99999999999999999999',
      'limit=9223372036854775808&offset=9223372036854775808',
    ]) {
      const r = await t.get(`${path}?${query}`)
      expect([query, r.status]).toEqual([query, 200])
      expect(Array.isArray(r.json)).toBe(true)
    }
  })

  if (LISTS[path]!.length > 0)
    test('filters with values outside the allowed ones: 400 invalid naming the parameter', async () => {
      for (const [name, value] of LISTS[path]!) {
        const r = await t.get(`${path}?${name}=${encodeURIComponent(value)}`)
        expect([name, value, r.status]).toEqual([name, value, 400])
        expectError(r, 400, 'invalid', { parameter: name })
      }
    })

  if (path in ODD_FILTERS)
    test('odd filter values (NUL, unicode, 5,000 characters, traversal) match nothing', async () => {
      for (const name of ODD_FILTERS[path]!) {
        for (const value of [
          '/a\u0000b/',
          '/Ünïcødé 🎬/',
          `/${'p'.repeat(5000)}/`,
          '/../../etc/',
          `${root}/../${root.split('/').pop()}/`,
        ]) {
          const r = await t.get(`${path}?${name}=${encodeURIComponent(value)}`)
          expect([name, value.slice(0, 40), r.status, r.json]).toEqual([name, value.slice(0, 40), 200, []])
        }
      }
    })

  test('ids that are not positive integers or name no record: 404 not_found', async () => {
    for (const id of ['abc', '0', '-1', '1.5', '1e2', '99999999999999999999', '%00', '%F0%9F%8E%AC']) {
      const r = await t.get(`${path}${id}/`)
      expect([id, r.status]).toEqual([id, 404])
      expectError(r, 404, 'not_found')
    }
  })
})

describe('integers in JSON are JSON integers', () => {
  const t = testApp()
  afterAll(() => t.cleanup())
  test('a digit string, an exponent or a fraction is 400 invalid at the field, never coerced', async () => {
    for (const width of ['"12"', '"1e1"', '1.5', '"-3"']) {
      const r = await t.post('/api/transcodingprofiles/', { name: `width ${width}`, width: JSON.parse(width) })
      expect([r.status, r.json.errors]).toEqual([
        400,
        [expect.objectContaining({ code: 'invalid', source: { pointer: '/width' } })],
      ])
    }
    const form = await t.request('POST', '/api/transcodingprofiles/', { form: { name: 'form width', width: '12' } })
    expect([form.status, form.json.width]).toEqual([200, 12])
  })
})
