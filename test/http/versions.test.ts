// API versions and the two representations of a production (issue 19, point 4): version 1 (the
// default) names a production's devices by their records, version 2 by their ids, the shape the
// published medialoopster client validates; both carry the fields that client requires. Which
// version a request gets: its Accept header, else the app's default (serve --default-api-version,
// whose process-level tests are in test/cli/default-api-version.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { checkAccept } from '../../src/http/versioning.ts'
import { AppError } from '../../src/http/errors.ts'
import { type TestApp, tempDir, testApp } from '../helpers/app.ts'
import { errorEntry, expectError } from '../helpers/envelope.ts'
import { clientProductionProblems } from '../helpers/medialoopster.ts'

const V2 = { accept: 'application/json; version=2' }
const V1 = { accept: 'application/json; version=1' }

describe('which version an Accept header selects', () => {
  const versionOf = (accept: string | null, fallback: 1 | 2 = 1) => {
    try {
      return checkAccept(accept, fallback)
    } catch (error) {
      if (error instanceof AppError) return `${error.status} ${error.entries[0]!.code}`
      throw error
    }
  }

  test('no version named: the default version, 1 or 2', () => {
    for (const accept of [
      null,
      '',
      '*/*',
      'application/json',
      'application/*',
      'text/html, */*;q=0.8',
      'application/json; charset=utf-8',
    ])
      expect([accept, versionOf(accept, 1), versionOf(accept, 2)]).toEqual([accept, 1, 2])
  })

  test('a version named is served whatever the default; a quoted one too', () => {
    for (const fallback of [1, 2] as const) {
      expect(versionOf('application/json; version=1', fallback)).toBe(1)
      expect(versionOf('application/json;version=2', fallback)).toBe(2)
      expect(versionOf('application/json; version="2"', fallback)).toBe(2)
      expect(versionOf('*/*; version=2', fallback)).toBe(2)
      expect(versionOf('application/json ; Q=0.5 ; version=2', fallback)).toBe(2)
    }
  })

  test('weights: each version is weighed by the most specific range that matches it; the heavier wins, the default on a tie', () => {
    const cases: [string, 1 | 2, number | string][] = [
      ['application/json; version=1; q=0.5, application/json; version=2', 1, 2],
      ['application/json; version=2; q=0.5, application/json; version=1', 2, 1],
      ['application/json; version=1, application/json; version=2', 1, 1],
      ['application/json; version=1, application/json; version=2', 2, 2],
      // Version 1 refused, any JSON accepted: version 2 is acceptable, so it is served.
      ['application/json;version=1;q=0, application/json', 1, 2],
      ['application/json;version=2;q=0, */*', 2, 1],
      ['application/json;version=2;q=0, application/json;version=1;q=0', 1, '406 not_acceptable'],
      ['application/json;q=0', 2, '406 not_acceptable'],
      ['application/json; version=3', 1, '406 not_acceptable'],
      ['application/json; version=3, application/json; version=2;q=0.1', 1, 2],
      ['application/json; version=', 1, '406 not_acceptable'],
      ['application/json; version=2;q=2', 1, '406 not_acceptable'],
      ['text/html', 2, '406 not_acceptable'],
    ]
    expect(
      cases.map(([accept, fallback]): [string, 1 | 2, number | string] => [
        accept,
        fallback,
        versionOf(accept, fallback),
      ]),
    ).toEqual(cases)
  })

  test('the 406 names the versions spoken', () => {
    try {
      checkAccept('application/json; version=7')
      throw new Error('served')
    } catch (error) {
      expect((error as AppError).entries[0]!.detail).toBe(
        'Unsupported API version: this service speaks versions 1 and 2.',
      )
    }
  })
})

describe('productions in versions 1 and 2', () => {
  let t: TestApp
  let storage: Record<string, unknown>
  let upload: Record<string, unknown>
  let keys: Record<string, string>
  let ids: Record<string, number>

  beforeAll(async () => {
    t = testApp()
    const root = tempDir('reelhouse-versions-')
    const drop = tempDir('reelhouse-versions-drop-')
    t.owned.push(root, drop)
    storage = (await t.post('/api/devices/', { name: 'media', path: root })).json
    upload = (await t.post('/api/devices/', { name: 'drop', path: drop })).json
    // Production 1 has its uploads on the second device; production 2 is nobody's but the admin's.
    expect(
      (await t.post('/api/productions/', { name: 'Night Shift', storage_root: `${root}/night`, upload_device: 2 }))
        .status,
    ).toBe(201)
    expect((await t.post('/api/productions/', { name: 'Day Shift', storage_root: `${root}/day` })).status).toBe(201)
    const all = ['browser.delete_audioasset', 'browser.delete_imageasset', 'browser.delete_videoasset']
    keys = {
      reader: t.makeUser('reader', { read: [1] }),
      writer: t.makeUser('writer', { write: [1] }),
      twoKinds: t.makeUser('two-kinds', { write: [1], perms: all.slice(0, 2) }),
      deleter: t.makeUser('deleter', { write: [1], perms: all }),
      readDeleter: t.makeUser('read-deleter', { read: [1], perms: all }),
      root: t.makeUser('root', { superuser: true }),
    }
    ids = Object.fromEntries(
      t.db.$client
        .query<{ id: number; username: string }, []>('SELECT id, username FROM users')
        .all()
        .map((u) => [u.username, u.id]),
    )
  })
  afterAll(() => t.cleanup())

  /** Production 1 as the admin reads it, in each version. */
  const night = () => ({
    id: 1,
    name: 'Night Shift',
    codename: 'night-shift',
    company: '',
    storage_root: `${storage.path}night/`,
    proxy_root: `${storage.path}night/proxies/`,
    proxy_url: '',
    upload_root: null,
    move_uploads: false,
    ignore_patterns: [],
    can_write: true,
    can_delete_assets: true,
    san_mount: '',
    export_type: '',
    default_approval_status: 0,
    direct_attached_site: 1,
    network_attached_site: [],
    // Everyone granted access, by id; the superusers (admin, root) reach it without a grant.
    members: [ids.reader, ids.writer, ids['two-kinds'], ids.deleter, ids['read-deleter']],
    member_groups: [],
    projectasset_device: null,
  })
  const nightV1 = () => ({
    ...night(),
    upload_device: upload,
    audioasset_device: storage,
    imageasset_device: storage,
    videoasset_device: storage,
  })
  const nightV2 = () => ({
    ...night(),
    upload_device: 2,
    audioasset_device: 1,
    imageasset_device: 1,
    videoasset_device: 1,
  })

  test('version 1 (no Accept, or version=1): the devices as records, beside the added fields', async () => {
    for (const headers of [{}, V1, { accept: '*/*' }, { accept: 'application/json' }]) {
      const one = await t.get('/api/productions/1/', { headers })
      expect([headers, one.status, one.json]).toEqual([headers, 200, nightV1()])
      const list = await t.get('/api/productions/', { headers })
      expect(list.json.map((p: { id: number }) => p.id)).toEqual([1, 2])
      expect(list.json[0]).toEqual(nightV1())
    }
  })

  test('version 2: the same record with the devices by id, in the list, the record and filtered lists', async () => {
    expect((await t.get('/api/productions/1/', { headers: V2 })).json).toEqual(nightV2())
    expect((await t.get('/api/productions/', { headers: V2 })).json[0]).toEqual(nightV2())
    expect(
      (
        await t.get(`/api/productions/?storage_root=${encodeURIComponent(`${storage.path}night/`)}&limit=1`, {
          headers: V2,
        })
      ).json,
    ).toEqual([nightV2()])
  })

  test('the create answers in the version asked for', async () => {
    const made = await t.post(
      '/api/productions/',
      { name: 'Dusk', storage_root: `${storage.path}dusk` },
      { headers: V2 },
    )
    expect([made.status, made.json.upload_device, made.json.members, made.json.can_write]).toEqual([201, 1, [], true])
    const v1 = await t.post('/api/productions/', { name: 'Dawn', storage_root: `${storage.path}dawn` })
    expect([v1.status, v1.json.upload_device]).toEqual([201, storage])
  })

  test('an update answers in the version asked, and the added fields are answered, never written (another value: 400 invalid at it)', async () => {
    const refused = await t.request('PATCH', '/api/productions/2/', {
      body: { company: 'Harbour Lights', can_write: false, members: [99], san_mount: '/Volumes/SAN' },
      headers: V2,
    })
    expect([refused.status, refused.json.errors.map((e: { source: { pointer: string } }) => e.source.pointer)]).toEqual(
      [400, ['/can_write', '/members', '/san_mount']],
    )
    const v2 = await t.request('PATCH', '/api/productions/2/', {
      body: { company: 'Harbour Lights', can_write: true, members: [], san_mount: '' },
      headers: V2,
    })
    expect([
      v2.status,
      v2.json.company,
      v2.json.upload_device,
      v2.json.can_write,
      v2.json.members,
      v2.json.san_mount,
    ]).toEqual([200, 'Harbour Lights', 1, true, [], ''])
    const v1 = await t.request('PATCH', '/api/productions/2/', { body: { company: '' } })
    expect([v1.status, v1.json.upload_device]).toEqual([200, storage])
  })

  test('version 2 is what the published medialoopster client validates; version 1 is refused by it for its devices', async () => {
    for (const key of Object.values(keys)) {
      for (const record of (await t.get('/api/productions/', { key, headers: V2 })).json)
        expect(clientProductionProblems(record)).toEqual([])
      const v1 = (await t.get('/api/productions/1/', { key })).json
      expect(clientProductionProblems(v1)).toEqual(
        ['upload_device', 'audioasset_device', 'imageasset_device', 'videoasset_device'].map(
          (field) => `${field}: int expected, got object`,
        ),
      )
    }
  })

  test("can_write and can_delete_assets are the requesting user's: write access; and delete of all three media kinds", async () => {
    const rights: Record<string, [boolean, boolean]> = {
      reader: [false, false],
      writer: [true, false],
      twoKinds: [true, false],
      deleter: [true, true],
      readDeleter: [false, false],
      root: [true, true],
    }
    for (const [who, key] of Object.entries(keys)) {
      for (const headers of [{}, V2]) {
        const one = (await t.get('/api/productions/1/', { key, headers })).json
        expect([who, one.can_write, one.can_delete_assets]).toEqual([who, ...rights[who]!])
        // members does not depend on who asks.
        expect(one.members).toEqual(nightV1().members)
      }
    }
  })

  test('members follow the grants: a new grant is listed at once, a removed user goes', async () => {
    t.makeUser('late', { read: [2] })
    const late = t.db.$client.query<{ id: number }, []>("SELECT id FROM users WHERE username = 'late'").get()!.id
    expect((await t.get('/api/productions/2/', { headers: V2 })).json.members).toEqual([late])
    t.db.$client.run('DELETE FROM users WHERE id = ?', [late])
    expect((await t.get('/api/productions/2/', { headers: V2 })).json.members).toEqual([])
  })

  test('a production the user cannot read is 404 in both versions, and missing from both lists', async () => {
    for (const headers of [{}, V2]) {
      expectError(await t.get('/api/productions/2/', { key: keys.reader, headers }), 404, 'not_found')
      expect(
        (await t.get('/api/productions/', { key: keys.reader, headers })).json.map((p: { id: number }) => p.id),
      ).toEqual([1])
    }
  })

  test('every other resource is the same in both versions', async () => {
    for (const path of [
      '/api/devices/',
      '/api/devices/1/',
      '/api/transcodingprofiles/',
      '/api/contenttypes/',
      '/api/assetholddurations/',
      '/api/',
    ])
      expect([path, (await t.get(path, { headers: V2 })).json]).toEqual([
        path,
        (await t.get(path, { headers: V1 })).json,
      ])
  })

  test('odd Accept headers are served or 406, never a 500', async () => {
    const odd = [
      'application/json; version=2; version=1',
      'application/json; version',
      'application/json; version=""',
      'application/json;;version=2',
      `application/json; version=${'2'.repeat(5000)}`,
      'application/json; version=2\u00e9',
      ',,,',
      ';',
      'application/json; version=-1',
      'APPLICATION/JSON; VERSION=2',
    ]
    for (const accept of odd) {
      const r = await t.get('/api/productions/1/', { headers: { accept } })
      expect([accept.slice(0, 40), [200, 406].includes(r.status)]).toEqual([accept.slice(0, 40), true])
      if (r.status === 406) expectError(r, 406, 'not_acceptable')
    }
    // Parameter names are read without regard to case, as RFC 9110 says.
    expect(
      (await t.get('/api/productions/1/', { headers: { accept: 'APPLICATION/JSON; VERSION=2' } })).json.upload_device,
    ).toBe(2)
  })

  test('a version other than 1 or 2: 406 not_acceptable, on productions too', async () => {
    const r = await t.get('/api/productions/1/', { headers: { accept: 'application/json; version=3' } })
    expect([r.status, r.json]).toEqual([
      406,
      {
        errors: [
          {
            ...errorEntry(406, 'not_acceptable'),
            detail: 'Unsupported API version: this service speaks versions 1 and 2.',
          },
        ],
      },
    ])
  })
})

describe('an app whose default version is 2 (serve --default-api-version 2)', () => {
  const t = testApp(undefined, { app: { defaultApiVersion: 2 } })
  beforeAll(async () => {
    const root = tempDir('reelhouse-versions-default-')
    t.owned.push(root)
    await t.post('/api/devices/', { name: 'media', path: root })
    await t.post('/api/productions/', { name: 'Night Shift', storage_root: `${root}/night` })
  })
  afterAll(() => t.cleanup())

  test('requests naming no version get version 2; version=1 still gets version 1', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/json; version=2'])
      expect([
        accept,
        (await t.get('/api/productions/1/', { headers: accept ? { accept } : {} })).json.upload_device,
      ]).toEqual([accept, 1])
    const v1 = (await t.get('/api/productions/', { headers: V1 })).json[0]
    expect(v1.upload_device).toMatchObject({ id: 1, name: 'media' })
  })
})

describe('the OpenAPI document', () => {
  const t = testApp()
  afterAll(() => t.cleanup())

  test('a production is one of its two versions, each a component with its example; the record shows both examples', async () => {
    const doc = (await t.get('/api/docs/json')).json
    const { Production, ProductionVersion1, ProductionVersion2 } = doc.components.schemas
    expect(JSON.stringify(Production.anyOf)).toContain('upload_device')
    expect(
      ProductionVersion1.properties.upload_device.$ref ?? ProductionVersion1.properties.upload_device.type,
    ).not.toBe('integer')
    expect(ProductionVersion2.properties.upload_device.type).toBe('integer')
    for (const schema of [ProductionVersion1, ProductionVersion2])
      expect(schema.required).toEqual(
        expect.arrayContaining([
          'can_write',
          'can_delete_assets',
          'san_mount',
          'export_type',
          'default_approval_status',
          'direct_attached_site',
          'network_attached_site',
          'members',
          'member_groups',
          'projectasset_device',
        ]),
      )
    const media = doc.paths['/api/productions/{id}'].get.responses['200'].content['application/json']
    expect(Object.keys(media.examples)).toEqual(['version1', 'version2'])
    expect(media.examples.version2.value.upload_device).toBe(1)
    expect(
      doc.paths['/api/productions/{id}'].get.responses['406'].content['application/json'].example.errors[0].detail,
    ).toBe('Unsupported API version: this service speaks versions 1 and 2.')
  })
})
