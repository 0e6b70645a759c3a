// Users, keys and permissions (service.md section 5): superusers, codenames for creating
// catalogue records, per-production read/write access for productions, media assets and import
// logs, shares, and keys and grants that change between two requests.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type TestApp, testApp } from '../helpers/app.ts'
import { expectError, folders } from '../helpers/envelope.ts'

const KINDS = ['audio', 'image', 'video'] as const
type Kind = (typeof KINDS)[number]

const dirs = folders()
let t: TestApp
let root: string
let device: { id: number }
/** Productions: alpha, beta, gamma. */
const prod: Record<string, { id: number; name: string }> = {}
/** One asset of each kind per production: assets[production][kind]. */
const assets: Record<string, Record<Kind, { id: number; production: number; path_file: string }>> = {}
/** One import log per production, and one with no production. */
const logIds: Record<string, number> = {}
let setId: number

function insertLog(production: number | null, asset_path: string): number {
  const now = '2026-01-02T03:04:05.000000Z'
  return t.db.$client
    .query<{ id: number }, (string | number | null)[]>(
      `INSERT INTO import_logs (asset_type, asset_path, status, payload, production, date_add, date_mod)
       VALUES ('videoasset', ?, 'asset_creation_completed', '{}', ?, ?, ?) RETURNING id`,
    )
    .get(asset_path, production, now, now)!.id
}

beforeAll(async () => {
  t = testApp(dirs.make('reelhouse-data-'))
  root = dirs.make()
  device = (await t.post('/api/devices/', { name: 'perm-disk', path: root })).json
  for (const name of ['alpha', 'beta', 'gamma']) {
    const p = await t.post('/api/productions/', { name, storage_root: `${root}/${name}` })
    expect(p.status).toBe(201)
    prod[name] = p.json
    assets[name] = {} as Record<Kind, { id: number; production: number; path_file: string }>
    for (const kind of KINDS) {
      const a = await t.post(`/api/${kind}assets/`, {
        name: `${name} ${kind}`,
        path_file: `${root}/${name}/${kind}.bin`,
        production: p.json.id,
      })
      expect(a.status).toBe(201)
      assets[name]![kind] = a.json
    }
    logIds[name] = insertLog(p.json.id, `${root}/${name}/video.bin`)
  }
  logIds.none = insertLog(null, '/nowhere/x.mov')
  expect((await t.post('/api/transcodingprofiles/', { name: 'proxy' })).status).toBe(200)
  const set = await t.post('/api/custommetadatasets/', { name: 'set', description: 'd', content_type: 4 })
  setId = set.json.id
  expect(
    (await t.post('/api/custommetadata/', { key: 'perm.scene', value: 'Scene', custom_metadata_set: setId })).status,
  ).toBe(200)
  expect(
    (
      await t.post('/api/assetholddurations/', {
        asset_type: 'videoasset',
        context_type: 'production',
        context: 'alpha',
        duration: 5,
      })
    ).status,
  ).toBe(201)
})

afterAll(() => {
  t.cleanup()
  dirs.cleanup()
})

const ids = (list: { id: number }[]) => list.map((r) => r.id)

// ------------------------------------------------------------------ creating catalogue records

let seq = 0
/** A valid body for each catalogue POST, fresh on every call (unique names). */
const CREATE: Record<string, { path: string; codename: string; ok: number; body: () => Record<string, unknown> }> = {
  device: {
    path: '/api/devices/',
    codename: 'browser.add_device',
    ok: 201,
    body: () => ({ name: `dev-${++seq}`, path: `${root}/devices/${seq}/` }),
  },
  production: {
    path: '/api/productions/',
    codename: 'browser.add_production',
    ok: 201,
    body: () => ({ name: `prod-${++seq}`, storage_root: `${root}/prods/${seq}` }),
  },
  transcodingprofile: {
    path: '/api/transcodingprofiles/',
    codename: 'browser.add_transcodingprofile',
    ok: 200,
    body: () => ({ name: `tp-${++seq}` }),
  },
  custommetadata: {
    path: '/api/custommetadata/',
    codename: 'browser.add_custommetadata',
    ok: 200,
    body: () => ({ key: `perm.f${++seq}`, value: 'F', custom_metadata_set: setId }),
  },
  custommetadataset: {
    path: '/api/custommetadatasets/',
    codename: 'browser.add_custommetadataset',
    ok: 201,
    body: () => ({ name: `set-${++seq}`, description: '', content_type: 2 }),
  },
  assetholdduration: {
    path: '/api/assetholddurations/',
    codename: 'browser.add_assetholdduration',
    ok: 201,
    // (asset_type, context_type, context) is unique: every body takes the next unused combination.
    body: () => holdRules.shift()!,
  },
}
const holdRules = ['audioasset', 'imageasset', 'videoasset', 'projectasset'].flatMap((asset_type) => [
  { asset_type, context_type: 'device', context: 'perm-disk', duration: 1 },
  ...['beta', 'gamma'].map((context) => ({ asset_type, context_type: 'production', context, duration: 2 })),
])

describe('creating catalogue records', () => {
  test.each(Object.keys(CREATE))(
    '%s: a plain user gets 403 permission_denied and nothing is created',
    async (model) => {
      const spec = CREATE[model]!
      const key = t.makeUser(`plain-${model}`, { read: [prod.alpha!.id], write: [prod.beta!.id] })
      const before = (await t.get(spec.path)).headers.get('x-total-count')
      expectError(await t.post(spec.path, spec.body(), { key }), 403, 'permission_denied')
      expect((await t.get(spec.path)).headers.get('x-total-count')).toBe(before)
    },
  )

  test.each(Object.keys(CREATE))('%s: the codename browser.add_<model> allows it, and only it', async (model) => {
    const spec = CREATE[model]!
    const key = t.makeUser(`maker-${model}`, { perms: [spec.codename] })
    const r = await t.post(spec.path, spec.body(), { key })
    expect([r.status, r.json.id]).toEqual([spec.ok, expect.any(Number)])
    for (const [otherModel, other] of Object.entries(CREATE)) {
      if (otherModel === model) continue
      expectError(await t.post(other.path, other.body(), { key }), 403, 'permission_denied')
    }
  })

  test('a codename of another app or model does not count', async () => {
    const key = t.makeUser('near-miss', {
      perms: ['browser.add_devices', 'add_device', 'browser.change_device', 'BROWSER.ADD_DEVICE'],
    })
    expectError(await t.post('/api/devices/', CREATE.device!.body(), { key }), 403, 'permission_denied')
  })

  test('a superuser may create every kind of record, and media assets in any production', async () => {
    const key = t.makeUser('root2', { superuser: true })
    for (const [model, spec] of Object.entries(CREATE)) {
      const r = await t.post(spec.path, spec.body(), { key })
      expect([model, r.status]).toEqual([model, spec.ok])
    }
    for (const kind of KINDS) {
      const r = await t.post(
        `/api/${kind}assets/`,
        { name: 'su', path_file: `${root}/gamma/su.${kind}`, production: prod.gamma!.id },
        { key },
      )
      expect(r.status).toBe(201)
    }
  })
})

// ------------------------------------------------------------------ reading

describe('reading', () => {
  const OPEN = [
    '/api/devices/',
    '/api/transcodingprofiles/',
    '/api/custommetadata/',
    '/api/custommetadatasets/',
    '/api/contenttypes/',
    '/api/assetholddurations/',
  ]

  test.each(OPEN)(
    '%s: a user with no permissions and no productions reads the same list and records as the admin',
    async (path) => {
      const key = t.makeUser(`reader-${path.split('/')[2]}`)
      const mine = await t.get(path, { key })
      const admins = await t.get(path)
      expect(mine.status).toBe(200)
      expect(mine.json.length).toBeGreaterThan(0)
      expect(mine.json).toEqual(admins.json)
      expect(mine.headers.get('x-total-count')).toBe(admins.headers.get('x-total-count'))
      const first = mine.json[0]
      expect((await t.get(`${path}${first.id}/`, { key })).json).toEqual(first)
    },
  )

  test('a superuser sees every production, asset and import log', async () => {
    const key = t.makeUser('root3', { superuser: true })
    expect(ids((await t.get('/api/productions/', { key })).json)).toEqual(
      expect.arrayContaining(Object.values(prod).map((p) => p.id)),
    )
    expect(ids((await t.get('/api/importlogs/', { key })).json)).toEqual(Object.values(logIds))
    for (const kind of KINDS)
      expect(ids((await t.get(`/api/${kind}assets/`, { key })).json)).toEqual(
        expect.arrayContaining(Object.values(assets).map((a) => a[kind].id)),
      )
    expect((await t.get(`/api/importlogs/${logIds.none}/`, { key })).status).toBe(200)
  })

  describe('productions, media assets and import logs: only where the user can read the production', () => {
    let viewer: string
    let editor: string
    let nobody: string
    beforeAll(() => {
      viewer = t.makeUser('viewer', { read: [prod.alpha!.id] })
      editor = t.makeUser('editor', { write: [prod.alpha!.id], read: [prod.beta!.id] })
      nobody = t.makeUser('nobody', { perms: ['browser.add_device'] })
    })

    test('productions list', async () => {
      const cases: [string, number[]][] = [
        [viewer, [prod.alpha!.id]],
        [editor, [prod.alpha!.id, prod.beta!.id]],
        [nobody, []],
      ]
      for (const [key, expected] of cases) {
        const r = await t.get('/api/productions/', { key })
        expect(ids(r.json)).toEqual(expected)
        expect(r.headers.get('x-total-count')).toBe(String(expected.length))
      }
      // The admin's record, but for the rights of the one asking (a reader: none).
      const admins = (await t.get(`/api/productions/${prod.alpha!.id}/`)).json
      expect((await t.get('/api/productions/', { key: viewer })).json).toEqual([
        { ...admins, can_write: false, can_delete_assets: false },
      ])
    })

    test('a production the user cannot read is 404, as if missing; one it can read is the same record the admin sees', async () => {
      expectError(await t.get(`/api/productions/${prod.beta!.id}/`, { key: viewer }), 404, 'not_found')
      expectError(await t.get(`/api/productions/${prod.gamma!.id}/`, { key: editor }), 404, 'not_found')
      const unreadable = await t.get(`/api/productions/${prod.gamma!.id}/`, { key: editor })
      const missing = await t.get('/api/productions/999999/', { key: editor })
      expect(unreadable.json).toEqual(missing.json)
      const admins = (await t.get(`/api/productions/${prod.beta!.id}/`)).json
      expect((await t.get(`/api/productions/${prod.beta!.id}/`, { key: editor })).json).toEqual({
        ...admins,
        can_write: false,
        can_delete_assets: false,
      })
    })

    test('the storage_root filter does not reveal an unreadable production', async () => {
      const r = await t.get(`/api/productions/?storage_root=${encodeURIComponent(`${root}/gamma/`)}`, { key: editor })
      expect([r.status, r.json, r.headers.get('x-total-count')]).toEqual([200, [], '0'])
      const own = await t.get(`/api/productions/?storage_root=${encodeURIComponent(`${root}/alpha/`)}`, { key: editor })
      expect(ids(own.json)).toEqual([prod.alpha!.id])
    })

    test.each(KINDS)('%s assets: list, single and path_file filter', async (kind) => {
      const path = `/api/${kind}assets/`
      expect(ids((await t.get(path, { key: viewer })).json)).toEqual([assets.alpha![kind].id])
      expect(ids((await t.get(path, { key: editor })).json)).toEqual([assets.alpha![kind].id, assets.beta![kind].id])
      const none = await t.get(path, { key: nobody })
      expect([none.json, none.headers.get('x-total-count')]).toEqual([[], '0'])

      expect((await t.get(`${path}${assets.alpha![kind].id}/`, { key: viewer })).json).toEqual(
        (await t.get(`${path}${assets.alpha![kind].id}/`)).json,
      )
      expectError(await t.get(`${path}${assets.beta![kind].id}/`, { key: viewer }), 404, 'not_found')
      expectError(await t.get(`${path}${assets.gamma![kind].id}/`, { key: editor }), 404, 'not_found')

      const hidden = await t.get(`${path}?path_file=${encodeURIComponent(assets.gamma![kind].path_file)}`, {
        key: editor,
      })
      expect([hidden.json, hidden.headers.get('x-total-count')]).toEqual([[], '0'])
    })

    test('import logs: list, single; a log without a production is for superusers only', async () => {
      expect(ids((await t.get('/api/importlogs/', { key: viewer })).json)).toEqual([logIds.alpha!])
      expect(ids((await t.get('/api/importlogs/', { key: editor })).json)).toEqual([logIds.alpha!, logIds.beta!])
      expect((await t.get('/api/importlogs/', { key: nobody })).json).toEqual([])
      expect((await t.get(`/api/importlogs/${logIds.beta}/`, { key: editor })).status).toBe(200)
      expectError(await t.get(`/api/importlogs/${logIds.beta}/`, { key: viewer }), 404, 'not_found')
      expectError(await t.get(`/api/importlogs/${logIds.none}/`, { key: editor }), 404, 'not_found')
      const filtered = await t.get(`/api/importlogs/?asset_path=${encodeURIComponent(`${root}/gamma/video.bin`)}`, {
        key: editor,
      })
      expect(filtered.json).toEqual([])
    })
  })
})

// ------------------------------------------------------------------ creating media assets

describe('creating media assets needs write access to the production', () => {
  let reader: string
  let writer: string
  beforeAll(() => {
    reader = t.makeUser('asset-reader', { read: [prod.alpha!.id] })
    writer = t.makeUser('asset-writer', { write: [prod.alpha!.id], read: [prod.beta!.id] })
  })
  let n = 0
  const body = (kind: Kind, production: Record<string, unknown>) => ({
    name: 'new',
    path_file: `${root}/alpha/new-${++n}.${kind}`,
    ...production,
  })

  test.each(KINDS)('%s: writable production → 201', async (kind) => {
    const byId = await t.post(`/api/${kind}assets/`, body(kind, { production: prod.alpha!.id }), { key: writer })
    expect([byId.status, byId.json.production]).toEqual([201, prod.alpha!.id])
    const byName = await t.post(`/api/${kind}assets/`, body(kind, { production_name: 'alpha' }), { key: writer })
    expect([byName.status, byName.json.production]).toEqual([201, prod.alpha!.id])
    expect((await t.get(`/api/${kind}assets/${byId.json.id}/`, { key: reader })).status).toBe(200)
  })

  test.each(KINDS)('%s: readable but not writable → 403 permission_denied, nothing created', async (kind) => {
    const before = (await t.get(`/api/${kind}assets/`)).headers.get('x-total-count')
    expectError(
      await t.post(`/api/${kind}assets/`, body(kind, { production: prod.alpha!.id }), { key: reader }),
      403,
      'permission_denied',
    )
    expectError(
      await t.post(`/api/${kind}assets/`, body(kind, { production_name: 'beta' }), { key: writer }),
      403,
      'permission_denied',
    )
    expect((await t.get(`/api/${kind}assets/`)).headers.get('x-total-count')).toBe(before)
  })

  test.each(KINDS)('%s: unreadable or unknown production → 400 invalid at the field given, alike', async (kind) => {
    const path = `/api/${kind}assets/`
    const unreadableId = await t.post(path, body(kind, { production: prod.gamma!.id }), { key: writer })
    const unknownId = await t.post(path, body(kind, { production: 999_999 }), { key: writer })
    expectError(unreadableId, 400, 'invalid', { pointer: '/production' })
    expect(unreadableId.json).toEqual(unknownId.json)

    const unreadableName = await t.post(path, body(kind, { production_name: 'gamma' }), { key: writer })
    const unknownName = await t.post(path, body(kind, { production_name: 'delta' }), { key: writer })
    expectError(unreadableName, 400, 'invalid', { pointer: '/production_name' })
    expect(unreadableName.json).toEqual(unknownName.json)

    // The id wins: a writable name does not rescue an unreadable id.
    expectError(
      await t.post(path, body(kind, { production: prod.gamma!.id, production_name: 'alpha' }), { key: writer }),
      400,
      'invalid',
      { pointer: '/production' },
    )
  })

  test('a user with every codename but no production access still cannot create media assets', async () => {
    const key = t.makeUser('codenames-only', { perms: Object.values(CREATE).map((c) => c.codename) })
    expectError(
      await t.post('/api/videoassets/', body('video', { production: prod.alpha!.id }), { key }),
      400,
      'invalid',
      { pointer: '/production' },
    )
  })
})

describe('a user who creates a production gets write access to it', () => {
  test('create with browser.add_production, then see it, write into it; others do not see it', async () => {
    const key = t.makeUser('producer', { perms: ['browser.add_production'] })
    expect((await t.get('/api/productions/', { key })).json).toEqual([])
    const p = await t.post('/api/productions/', { name: 'Own Show', storage_root: `${root}/own` }, { key })
    expect([p.status, p.json.can_write]).toEqual([201, true])
    expect((await t.get('/api/productions/', { key })).json).toEqual([p.json])
    expect((await t.get(`/api/productions/${p.json.id}/`, { key })).json).toEqual(p.json)
    for (const kind of KINDS) {
      const a = await t.post(
        `/api/${kind}assets/`,
        { name: 'mine', path_file: `${root}/own/mine.${kind}`, production: p.json.id },
        { key },
      )
      expect([a.status, a.json.production]).toEqual([201, p.json.id])
    }
    const someone = t.makeUser('someone', { read: [prod.alpha!.id] })
    expectError(await t.get(`/api/productions/${p.json.id}/`, { key: someone }), 404, 'not_found')
  })
})

describe('shares', () => {
  test('a media asset shared with a production the user can read becomes visible, in list and single record', async () => {
    const key = t.makeUser('share-reader', { read: [prod.beta!.id] })
    const bystander = t.makeUser('share-bystander', { read: [prod.alpha!.id] })
    const asset = assets.gamma!.image
    expectError(await t.get(`/api/imageassets/${asset.id}/`, { key }), 404, 'not_found')
    expect(ids((await t.get('/api/imageassets/', { key })).json)).toEqual([assets.beta!.image.id])

    t.db.$client
      .query('INSERT INTO media_asset_shares (asset_id, production_id) VALUES (?, ?)')
      .run(asset.id, prod.beta!.id)

    const single = await t.get(`/api/imageassets/${asset.id}/`, { key })
    expect(single.status).toBe(200)
    expect(single.json.production).toBe(prod.gamma!.id) // shared, not moved
    const list = await t.get('/api/imageassets/', { key })
    expect(ids(list.json)).toEqual([assets.beta!.image.id, asset.id])
    expect(list.headers.get('x-total-count')).toBe('2')
    // Other kinds of gamma are not shared; a reader of another production sees nothing new.
    expectError(await t.get(`/api/videoassets/${assets.gamma!.video.id}/`, { key }), 404, 'not_found')
    expectError(await t.get(`/api/imageassets/${asset.id}/`, { key: bystander }), 404, 'not_found')
    // Reading a shared asset gives no write access to its production.
    const w = await t.post(
      '/api/imageassets/',
      { name: 'x', path_file: `${root}/gamma/x.png`, production: prod.gamma!.id },
      { key },
    )
    expectError(w, 400, 'invalid', { pointer: '/production' })
  })
})

describe('changes take effect on the next request', () => {
  test('a revoked key is refused at once; the same user’s other key still works', async () => {
    const first = t.makeUser('revokee', { read: [prod.alpha!.id] })
    const second = t.users.createKey('revokee')
    expect((await t.get('/api/productions/', { key: first })).status).toBe(200)
    expect(t.users.revokeKey(first)).toBe(true)
    expectError(await t.get('/api/productions/', { key: first }), 401, 'authentication_failed')
    expectError(
      await t.post('/api/devices/', { name: 'late', path: `${root}/late/` }, { key: first }),
      401,
      'authentication_failed',
    )
    expect(ids((await t.get('/api/productions/', { key: second })).json)).toEqual([prod.alpha!.id])
    t.users.revokeAll('revokee')
    expectError(await t.get('/api/productions/', { key: second }), 401, 'authentication_failed')
  })

  test('a new grant or codename is seen by the next request with the same key', async () => {
    const key = t.makeUser('growing')
    const userId = t.db.$client
      .query<{ id: number }, [string]>('SELECT id FROM users WHERE username = ?')
      .get('growing')!.id
    expectError(await t.get(`/api/productions/${prod.gamma!.id}/`, { key }), 404, 'not_found')
    t.users.grantById(userId, prod.gamma!.id, 'read')
    expect((await t.get(`/api/productions/${prod.gamma!.id}/`, { key })).status).toBe(200)
    expectError(
      await t.post(
        '/api/videoassets/',
        { name: 'g', path_file: `${root}/gamma/g.mov`, production: prod.gamma!.id },
        { key },
      ),
      403,
      'permission_denied',
    )
    t.users.grantById(userId, prod.gamma!.id, 'write')
    expect(
      (
        await t.post(
          '/api/videoassets/',
          { name: 'g', path_file: `${root}/gamma/g.mov`, production: prod.gamma!.id },
          { key },
        )
      ).status,
    ).toBe(201)

    expectError(await t.post('/api/transcodingprofiles/', { name: 'growing-tp' }, { key }), 403, 'permission_denied')
    t.db.$client
      .query("INSERT INTO user_permissions (user_id, codename) VALUES (?, 'browser.add_transcodingprofile')")
      .run(userId)
    expect((await t.post('/api/transcodingprofiles/', { name: 'growing-tp' }, { key })).status).toBe(200)
  })
})
