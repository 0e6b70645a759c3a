// HTTP conventions every endpoint shares (service.md sections 3 and 4): authentication, health,
// docs, the error envelope, 404/405, Accept versions, trailing slashes, body types and sizes,
// and lists (order, paging, X-Total-Count, streaming).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { VERSION } from '../../src/version.ts'
import { type TestApp, testApp, writeElsewhere } from '../helpers/app.ts'
import { errorEntry, expectError, folders } from '../helpers/envelope.ts'

const dirs = folders()
afterAll(() => dirs.cleanup())

/** A device record body on a fresh real folder. */
const deviceBody = (name: string) => ({ name, path: dirs.make() })

describe('authentication', () => {
  const t = testApp()
  afterAll(() => t.cleanup())

  const withHeader = (authorization: string) => t.get('/api/devices/', { headers: { authorization } })
  const ACCEPTED = 'Authorization must be "Token <key>" or "Bearer <key>" (40 lowercase hex characters).'
  const ALL_FORMS =
    'Authorization must be "Token <key>" or "Bearer <key>" (40 lowercase hex characters), or "Basic <base64 of user:password or user:key>".'

  test('no Authorization header: 401 not_authenticated with WWW-Authenticate: Token', async () => {
    const r = await t.get('/api/devices/', { key: null })
    expectError(r, 401, 'not_authenticated')
    expect(r.headers.get('www-authenticate')).toBe('Token')
  })

  test('no header on a detail route and on a POST: 401, and nothing is created', async () => {
    expectError(await t.get('/api/devices/1/', { key: null }), 401, 'not_authenticated')
    expectError(await t.post('/api/devices/', deviceBody('sneaky'), { key: null }), 401, 'not_authenticated')
    const all = await t.get('/api/devices/')
    expect(all.json.map((d: { name: string }) => d.name)).not.toContain('sneaky')
  })

  test('another scheme (a bare key reads as one) is not_authenticated and names the forms accepted, Basic among them', async () => {
    for (const header of [
      `Digest ${Buffer.from('admin:pw').toString('base64')}`,
      t.adminKey,
      `Tokens ${t.adminKey}`,
      `Bearer:${t.adminKey}`,
      `Basic:${t.adminKey}`,
    ]) {
      const r = await withHeader(header)
      expectError(r, 401, 'not_authenticated')
      expect(r.json.errors[0].detail).toBe(ALL_FORMS)
      expect(r.headers.get('www-authenticate')).toBe('Token')
    }
  })

  test('Bearer <key> is accepted beside Token <key>, its scheme in any letter case', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const r = await withHeader(`${scheme} ${t.adminKey}`)
      expect(r.status).toBe(200)
      expect(r.json).toEqual([])
    }
  })

  test('Token or Bearer with no key, extra spaces or words, or a malformed key: authentication_failed naming the forms', async () => {
    for (const scheme of ['Token', 'Bearer']) {
      for (const header of [
        scheme,
        `${scheme} `,
        `${scheme}  ${t.adminKey}`,
        `${scheme} ${t.adminKey} extra`,
        `${scheme} abc`,
      ]) {
        const r = await withHeader(header)
        expectError(r, 401, 'authentication_failed')
        expect(r.json.errors[0].detail).toBe(ACCEPTED)
      }
    }
  })

  test('Token with no key, extra words, a malformed or unknown key: authentication_failed', async () => {
    const headers = [
      'Token',
      'Token ',
      `Token ${t.adminKey} extra`,
      `Token  ${t.adminKey}`,
      'Token abc',
      `Token ${t.adminKey.slice(0, 39)}`,
      `Token ${t.adminKey}0`,
      `Token ${'g'.repeat(40)}`,
      `Token ${t.adminKey.toUpperCase()}`,
      `Token ${t.adminKey.slice(0, 20)} ${t.adminKey.slice(20)}`,
      `Token ${randomBytes(20).toString('hex')}`,
    ]
    for (const header of headers) {
      const r = await withHeader(header)
      if (r.status !== 401 || r.json.errors[0].code !== 'authentication_failed')
        throw new Error(`${JSON.stringify(header)}: ${r.status} ${r.text}`)
      expectError(r, 401, 'authentication_failed')
    }
  })

  test('a revoked key is refused on the very next request', async () => {
    const key = t.makeUser('revokee', { superuser: true })
    expect((await t.get('/api/devices/', { key })).status).toBe(200)
    expect(t.users.revokeKey(key)).toBe(true)
    expectError(await t.get('/api/devices/', { key }), 401, 'authentication_failed')
  })

  test('the scheme is matched in any letter case', async () => {
    for (const scheme of ['Token', 'token', 'TOKEN', 'tOkEn']) {
      const r = await withHeader(`${scheme} ${t.adminKey}`)
      expect(r.status).toBe(200)
      expect(r.json).toEqual([])
    }
  })

  test('a key of another user works and a second key of the same user works too', async () => {
    const first = t.makeUser('reader')
    const second = t.users.createKey('reader')
    expect((await t.get('/api/transcodingprofiles/', { key: first })).status).toBe(200)
    expect((await t.get('/api/transcodingprofiles/', { key: second })).status).toBe(200)
  })
})

describe('health and docs need no key', () => {
  const t = testApp()
  afterAll(() => t.cleanup())

  test('GET /api/health answers status ok and the version', async () => {
    for (const path of ['/api/health', '/api/health/']) {
      const r = await t.get(path, { key: null })
      expect(r.status).toBe(200)
      expect(r.json).toEqual({ status: 'ok', version: VERSION })
      expect(r.headers.get('content-type')).toContain('application/json')
    }
  })

  test('GET /api/docs serves HTML that loads its scripts from this service', async () => {
    for (const path of ['/api/docs', '/api/docs/']) {
      const r = await t.get(path, { key: null })
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toContain('text/html')
      expect(r.text).toContain('/api/docs/assets/swagger-ui-bundle.js')
      // No CDN: every script and stylesheet is a local path.
      const refs = [...r.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
      expect(refs.length).toBeGreaterThan(0)
      for (const ref of refs) expect(ref).toStartWith('/api/docs/')
    }
  })

  test('the docs page points at the OpenAPI document by a URL that resolves to it', async () => {
    for (const page of ['/api/docs', '/api/docs/']) {
      const html = (await t.get(page, { key: null })).text
      const url = /"url"\s*:\s*"([^"]+)"/.exec(html)?.[1]
      expect(url).toBeDefined()
      const resolved = new URL(url!, `http://localhost${page}`)
      const r = await t.get(resolved.pathname + resolved.search, { key: null })
      expect(r.status).toBe(200)
      expect(r.json.openapi).toStartWith('3.')
    }
  })

  test('the swagger bundle and stylesheet are served locally', async () => {
    const js = await t.get('/api/docs/assets/swagger-ui-bundle.js', { key: null })
    expect(js.status).toBe(200)
    expect(js.headers.get('content-type')).toMatch(/javascript/)
    expect(js.text.length).toBeGreaterThan(100_000)
    expect(js.text).toContain('SwaggerUIBundle')
    const css = await t.get('/api/docs/assets/swagger-ui.css', { key: null })
    expect(css.status).toBe(200)
    expect(css.headers.get('content-type')).toMatch(/text\/css/)
  })

  test('an unknown docs asset is a 404 envelope', async () => {
    expectError(await t.get('/api/docs/assets/nope.js', { key: null }), 404, 'not_found')
  })

  describe('the OpenAPI document', () => {
    let doc: any
    beforeAll(async () => {
      const r = await t.get('/api/docs/json', { key: null })
      expect(r.status).toBe(200)
      doc = r.json
    })

    const operations = () =>
      Object.entries<Record<string, any>>(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => ({ path, method, op })),
      )
    const resolve = (schema: any): any => {
      if (!schema?.$ref) return schema
      const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1]
      if (!name) throw new Error(`unresolvable $ref ${schema.$ref}`)
      return doc.components.schemas[name]
    }

    test('is OpenAPI 3.1 and lists every endpoint path', () => {
      expect(doc.openapi).toStartWith('3.1')
      const paths = Object.keys(doc.paths).map((p) => p.replace(/\/$/, ''))
      for (const resource of [
        'devices',
        'productions',
        'transcodingprofiles',
        'custommetadata',
        'custommetadatasets',
        'contenttypes',
        'audioassets',
        'imageassets',
        'videoassets',
        'importlogs',
        'assetholddurations',
      ]) {
        expect(paths).toContain(`/api/${resource}`)
        expect(paths).toContain(`/api/${resource}/{id}`)
        expect(Object.keys(doc.paths[`/api/${resource}/`] ?? doc.paths[`/api/${resource}`])).toContain('get')
      }
      expect(paths).toContain('/api/health')
    })

    test('describes the POST bodies of every create operation', () => {
      // Not a task's cancel, a proxy's remake, an asset's verification or a device's rescan: they read no body; nor a shot
      // detection, whose body (a threshold) is all optional; nor the archive activities, which take
      // one member or a list of them (test/archive).
      const posts = operations().filter(
        (o) =>
          o.method === 'post' &&
          !/\/(cancel|proxy|verify|scan|detect|archiveactivities|restoreactivities)\/?$/.test(o.path),
      )
      expect(posts.map((o) => o.path.replace(/\/$/, ''))).toEqual(
        expect.arrayContaining(
          [
            'assetholddurations',
            'audioassets',
            'custommetadata',
            'custommetadatasets',
            'devices',
            'imageassets',
            'productions',
            'transcodingprofiles',
            'videoassets',
          ].map((r) => `/api/${r}`),
        ),
      )
      for (const { path, op } of posts) {
        const content = op.requestBody?.content ?? {}
        if (!content['application/json']) throw new Error(`POST ${path}: no JSON request body described`)
        const schema = resolve(content['application/json'].schema)
        expect(schema.type).toBe('object')
        expect(Object.keys(schema.properties ?? {}).length).toBeGreaterThan(0)
        expect(schema.required?.length ?? 0).toBeGreaterThan(0)
      }
      const device = resolve(
        posts.find((o) => o.path.startsWith('/api/devices'))!.op.requestBody.content['application/json'].schema,
      )
      expect(device.required.sort()).toEqual(['name', 'path'])
    })

    test('describes error responses with the envelope', () => {
      const envelope = doc.components.schemas.Error
      expect(envelope.properties.errors.type).toBe('array')
      expect(Object.keys(envelope.properties.errors.items.properties).sort()).toEqual([
        'code',
        'detail',
        'source',
        'status',
        'title',
      ])
      // add/unlink answer 400 and 422 with {detail} (api.md 4.1); everything else with the envelope.
      const plainAllowed = (path: string, status: string) =>
        /\/(add|addasset|unlink|unlinkasset)\/?$/.test(path) && ['400', '422'].includes(status)
      for (const { path, method, op } of operations()) {
        // Neither needs a key: no 401 (ping's other errors are in test/http/clients.test.ts).
        if (path.startsWith('/api/health') || path.startsWith('/api/ping')) continue
        const expected = ['401', '406']
        // A task's cancel reads no body: 404, and 409 once it has ended;
        // nor a proxy's remake: 404, and 409 for an asset with no file in production; nor an asset's verification
        // (409: nothing to read); nor a device's rescan: 409 while it is offline.
        if (method === 'post' && /\/(cancel|proxy|verify|scan)\/?$/.test(path)) expected.push('403', '404', '409')
        else if (method === 'post') expected.push('400', '413', '415')
        else if (path.includes('{id}')) expected.push('404')
        else expected.push('400')
        for (const status of expected) {
          const response = op.responses?.[status]
          if (!response) throw new Error(`${method} ${path}: no ${status} response`)
          const schema = resolve(response.content['application/json'].schema)
          if (plainAllowed(path, status) && schema === doc.components.schemas.DetailError) continue
          if (schema !== envelope) throw new Error(`${method} ${path} ${status}: not the envelope`)
        }
      }
    })

    test('every $ref resolves to a component', () => {
      const refs: string[] = []
      const walk = (node: unknown) => {
        if (Array.isArray(node)) node.forEach(walk)
        else if (node && typeof node === 'object') {
          for (const [k, v] of Object.entries(node)) {
            if (k === '$ref' && typeof v === 'string') refs.push(v)
            else walk(v)
          }
        }
      }
      walk(doc)
      expect(refs.length).toBeGreaterThan(0)
      // Any component kind (schemas, headers, responses): the path inside the document.
      const at = (ref: string) =>
        ref
          .slice(2)
          .split('/')
          .reduce((node: any, key) => node?.[key], doc)
      for (const ref of new Set(refs)) expect({ ref, found: at(ref) !== undefined }).toEqual({ ref, found: true })
    })

    test('the list operations document limit and offset', () => {
      const list = doc.paths['/api/devices'].get
      const names = list.parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name)
      expect(names).toEqual(expect.arrayContaining(['limit', 'offset', 'path']))
    })
  })
})

describe('the error envelope, 404 and 405', () => {
  const t = testApp()
  afterAll(() => t.cleanup())

  test('unknown ids answer 404 not_found on every resource', async () => {
    for (const resource of [
      'devices',
      'productions',
      'transcodingprofiles',
      'custommetadata',
      'custommetadatasets',
      'contenttypes',
      'audioassets',
      'imageassets',
      'videoassets',
      'importlogs',
      'assetholddurations',
    ]) {
      for (const suffix of ['', '/']) expectError(await t.get(`/api/${resource}/424242${suffix}`), 404, 'not_found')
    }
  })

  test('ids that are not positive decimal integers answer 404, never 400 or 500', async () => {
    for (const id of ['abc', '1.5', '0', '-1', '1e3', '0x10', '99999999999999999999', '%20', '1abc']) {
      const r = await t.get(`/api/devices/${id}/`)
      if (r.status !== 404) throw new Error(`/api/devices/${id}/: ${r.status} ${r.text}`)
      expectError(r, 404, 'not_found')
    }
  })

  test('unknown routes answer 404 not_found', async () => {
    for (const path of ['/api/nope', '/api/nope/', '/api/devices/1/extra/', '/api/ping/x', '/', '/elsewhere']) {
      const r = await t.get(path)
      if (r.status !== 404) throw new Error(`${path}: ${r.status} ${r.text}`)
      expectError(r, 404, 'not_found')
    }
  })

  test('a method a route does not have is 405 method_not_allowed with Allow', async () => {
    const cases: [string, string, string[]][] = [
      ['DELETE', '/api/importlogs/1', ['GET']],
      ['DELETE', '/api/importlogs/1/', ['GET']],
      ['PUT', '/api/devices/', ['GET', 'POST']],
      ['PATCH', '/api/tasks/1/', ['GET']],
      ['PATCH', '/api/contenttypes/1/', ['GET']],
      ['POST', '/api/contenttypes/', ['GET']],
      ['DELETE', '/api/assetholddurations', ['GET', 'POST']],
      ['POST', '/api/health', ['GET']],
    ]
    for (const [method, path, must] of cases) {
      const r = await t.request(method, path)
      if (r.status !== 405) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
      expectError(r, 405, 'method_not_allowed')
      const allow = (r.headers.get('allow') ?? '').split(',').map((s) => s.trim())
      expect(allow).toEqual(expect.arrayContaining(must))
      expect(allow).not.toContain(method)
    }
  })

  test('HEAD works where Allow says it does', async () => {
    const r = await t.request('HEAD', '/api/devices/')
    expect(r.status).toBe(200)
    expect(r.text).toBe('')
  })

  test('a validation error has one entry per field with title Validation Error', async () => {
    const r = await t.post('/api/devices/', {})
    expect(r.status).toBe(400)
    expect(r.json).toEqual({
      errors: [errorEntry(400, 'required', { pointer: '/name' }), errorEntry(400, 'required', { pointer: '/path' })],
    })
    expect(r.json.errors[0].title).toBe('Validation Error')
  })
})

describe('Accept header and API version', () => {
  const t = testApp()
  afterAll(() => t.cleanup())
  const paths = ['/api/devices/', '/api/productions/', '/api/assetholddurations/', '/api/transcodingprofiles/']

  test('version 1, plain JSON, */* or no Accept select version 1', async () => {
    const accepts = [
      'application/json; version=1',
      'application/json;version=1',
      'application/json; version="1"',
      'application/json',
      '*/*',
      'text/html, application/json; version=1',
      'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      undefined,
    ]
    for (const path of paths) {
      for (const accept of accepts) {
        const r = await t.get(path, { headers: accept === undefined ? {} : { accept } })
        if (r.status !== 200) throw new Error(`${path} with Accept ${accept}: ${r.status} ${r.text}`)
        expect(r.json).toEqual([])
      }
    }
  })

  test('a version other than 1 and 2 is 406 not_acceptable (version 2: test/http/versions.test.ts)', async () => {
    for (const path of [...paths, '/api/devices/1/']) {
      for (const accept of [
        'application/json; version=3',
        'application/json;version=99',
        '*/*; version=3',
        'application/json; version=0',
      ]) {
        const r = await t.get(path, { headers: { accept } })
        if (r.status !== 406) throw new Error(`${path} with Accept ${accept}: ${r.status} ${r.text}`)
        expectError(r, 406, 'not_acceptable')
      }
    }
  })

  test('asking only for something other than JSON is 406', async () => {
    for (const accept of ['text/xml', 'text/html', 'application/xml, text/xml']) {
      expectError(await t.get('/api/devices/', { headers: { accept } }), 406, 'not_acceptable')
    }
  })

  test('weights: a range with q=0 is not acceptable, the most specific matching range decides (issue 27)', async () => {
    const served = [
      undefined,
      '*/*',
      'application/json',
      'application/json; version=1; charset=utf-8',
      'application/*;q=0.5',
      '*/*;q=0, application/json',
      'text/html;q=1, application/json;q=0.001',
      'application/json;q=1.000',
      'application/json; Q=0.5',
      'application/json ;  q=0.9 ; version=1',
      'application/json;q=0, application/json;q=1',
      'application/json;version=1;q=0.5, */*;q=0',
      // A range whose q is not a weight is skipped; another range still selects JSON.
      'application/json;q=abc, */*',
    ]
    const refused = [
      ['application/json;q=0', 'q=0'],
      ['application/json; q=0.000', 'q=0'],
      ['application/json; Q=0', 'q=0'],
      ['application/json ; q = 0', 'q=0'],
      ['text/html;q=1, */*;q=0', 'q=0'],
      ['application/json;q=0, */*', 'q=0'],
      ['application/json;q=0, application/*;q=1, */*;q=1', 'q=0'],
      ['application/*;q=0', 'q=0'],
      ['application/json;q=abc', 'weight'],
      ['application/json;q=', 'weight'],
      ['application/json;q', 'weight'],
      ['application/json;q=2', 'weight'],
      ['application/json;q=-1', 'weight'],
      ['application/json;q=1.5', 'weight'],
      ['application/json;q=0.5000', 'weight'],
      ['application/json;q=.5', 'weight'],
      ['*/*;q=0x1', 'weight'],
    ]
    const answers: [string | undefined, number][] = []
    for (const accept of served)
      answers.push([accept, (await t.get('/api/devices/', { headers: accept === undefined ? {} : { accept } })).status])
    expect(answers).toEqual(served.map((accept) => [accept, 200]))
    for (const [accept, why] of refused) {
      const r = await t.get('/api/devices/', { headers: { accept: accept! } })
      if (r.status !== 406) throw new Error(`Accept ${accept}: ${r.status} ${r.text}`)
      expectError(r, 406, 'not_acceptable')
      expect([accept, r.json.errors[0].detail]).toEqual([accept, expect.stringContaining(why!)])
    }
  })

  test('a POST with an unsupported version creates nothing', async () => {
    const body = deviceBody('versioned')
    expectError(
      await t.post('/api/devices/', body, { headers: { accept: 'application/json; version=3' } }),
      406,
      'not_acceptable',
    )
    expect((await t.get('/api/devices/')).json).toEqual([])
  })
})

describe('trailing slashes', () => {
  const t = testApp()
  afterAll(() => t.cleanup())

  test('list, detail and POST work with and without the slash, served directly', async () => {
    const a = await t.post('/api/devices', deviceBody('no-slash'))
    expect(a.status).toBe(201)
    const b = await t.post('/api/devices/', deviceBody('slash'))
    expect(b.status).toBe(201)
    for (const path of ['/api/devices', '/api/devices/']) {
      const r = await t.get(path)
      expect(r.status).toBe(200)
      expect(r.headers.get('location')).toBeNull()
      expect(r.json).toEqual([a.json, b.json])
    }
    for (const path of [`/api/devices/${a.json.id}`, `/api/devices/${a.json.id}/`]) {
      const r = await t.get(path)
      expect(r.status).toBe(200)
      expect(r.json).toEqual(a.json)
    }
    for (const resource of [
      'productions',
      'transcodingprofiles',
      'custommetadata',
      'custommetadatasets',
      'contenttypes',
      'videoassets',
      'importlogs',
      'assetholddurations',
    ]) {
      expect((await t.get(`/api/${resource}`)).status).toBe(200)
      expect((await t.get(`/api/${resource}/`)).status).toBe(200)
    }
  })
})

describe('request bodies', () => {
  const t = testApp()
  afterAll(() => t.cleanup())

  test('JSON body creates a record', async () => {
    const r = await t.post('/api/transcodingprofiles/', { name: 'json-profile', width: 1920, progressive: true })
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({ name: 'json-profile', width: 1920, progressive: true })
  })

  test('urlencoded form: booleans true/false/1/0, arrays as JSON text, numbers from digits', async () => {
    const path = dirs.make()
    const r = await t.request('POST', '/api/devices/', {
      form: {
        name: 'form-device',
        path,
        is_internal: 'true',
        is_archive: '1',
        allow_direct_writing: '0',
        autoshot_detection: 'false',
        write_permission_groups: ['editors', 'ingest'],
        protocol: 'smb',
      },
    })
    expect(r.status).toBe(201)
    expect(r.json).toEqual({
      id: r.json.id,
      name: 'form-device',
      display_name: 'form-device',
      path: `${path}/`,
      is_internal: true,
      is_archive: true,
      autoshot_detection: false,
      allow_direct_writing: false,
      recieve_xml_meta: false,
      protocol: 'smb',
      anonymous: false,
      server: null,
      username: null,
      password: null,
      transcoding_profile: null,
      archive_connector: null,
      passthrough_profiles: [],
      write_permission_groups: ['editors', 'ingest'],
    })
    const profile = await t.request('POST', '/api/transcodingprofiles/', {
      form: { name: 'form-profile', width: '1280', should_have_audio: '0' },
    })
    expect(profile.status).toBe(200)
    expect(profile.json).toMatchObject({ name: 'form-profile', width: 1280, should_have_audio: false })
  })

  test('multipart form data: booleans, arrays and objects as JSON text', async () => {
    const path = dirs.make()
    const form = new FormData()
    form.set('name', 'multipart-device')
    form.set('path', path)
    form.set('anonymous', '1')
    form.set('recieve_xml_meta', 'true')
    form.set('allow_direct_writing', 'false')
    form.set('write_permission_groups', '["one"]')
    const r = await t.request('POST', '/api/devices/', { raw: form })
    expect(r.status).toBe(201)
    expect(r.json).toMatchObject({
      name: 'multipart-device',
      path: `${path}/`,
      anonymous: true,
      recieve_xml_meta: true,
      allow_direct_writing: false,
      write_permission_groups: ['one'],
    })

    // An object field (meta_field_store) as JSON text, and an id from digits.
    const set = await t.post('/api/custommetadatasets/', { name: 'Shot', description: 'shot data', content_type: 4 })
    expect(set.status).toBe(201)
    expect(
      (await t.post('/api/custommetadata/', { key: 'shot.scene', value: 'Scene', custom_metadata_set: set.json.id }))
        .status,
    ).toBe(200)
    const production = await t.post('/api/productions/', { name: 'Multipart Show', storage_root: `${path}/show` })
    expect(production.status).toBe(201)
    const asset = new FormData()
    asset.set('name', 'clip')
    asset.set('path_file', `${path}/show/clip.mov`)
    asset.set('production', String(production.json.id))
    asset.set('is_archive', '0')
    asset.set('meta_field_store', JSON.stringify({ 'shot.scene': '12A' }))
    const created = await t.request('POST', '/api/videoassets/', { raw: asset })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({
      name: 'clip',
      production: production.json.id,
      is_archive: false,
      meta_field_store: { 'shot.scene': '12A' },
    })
  })

  test('form integers: whole decimal numbers only, never truncated', async () => {
    const ok = await t.request('POST', '/api/transcodingprofiles/', {
      form: { name: 'form-int', width: '1920', tracks: '0' },
    })
    expect(ok.json).toMatchObject({ width: 1920, tracks: 0 })
    for (const width of ['1.5', '2.9', 'abc', '', '-3']) {
      const r = await t.request('POST', '/api/transcodingprofiles/', { form: { name: `form-int-${width}`, width } })
      if (r.status !== 400) throw new Error(`width=${width}: ${r.status} ${r.text}`)
      expectError(r, 400, 'invalid', { pointer: '/width' })
    }
  })

  test('a form boolean that is not true/false/1/0 is 400 invalid at its pointer', async () => {
    for (const value of ['yes', 'TRUE1', '2']) {
      const r = await t.request('POST', '/api/devices/', {
        form: { name: `bad-bool-${value}`, path: '/tmp/bad-bool', is_internal: value },
      })
      expectError(r, 400, 'invalid', { pointer: '/is_internal' })
    }
  })

  test('form text that looks like JSON stays text in a text field', async () => {
    for (const name of ['[draft] camera', '[1]', '{x}']) {
      const r = await t.request('POST', '/api/transcodingprofiles/', { form: { name } })
      expect(r.status).toBe(200)
      expect(r.json.name).toBe(name)
    }
  })

  test('an array field holding text that is not JSON is 400 invalid, not 500', async () => {
    for (const value of ['[not json', 'editors', '{"a":1}']) {
      const r = await t.request('POST', '/api/devices/', {
        form: { name: 'bad-array', path: '/tmp/bad-array', write_permission_groups: value },
      })
      expectError(r, 400, 'invalid', { pointer: '/write_permission_groups' })
    }
  })

  test('malformed JSON is 400 parse_error', async () => {
    for (const raw of ['{bad', '{"name": "x",}', '[1, 2', 'nul', '\u00ff\u00fe']) {
      const r = await t.request('POST', '/api/devices/', { raw, headers: { 'content-type': 'application/json' } })
      expectError(r, 400, 'parse_error')
      expect(r.json.errors[0].title).toBe('Bad Request')
    }
    const invalidUtf8 = await t.request('POST', '/api/devices/', {
      raw: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
      headers: { 'content-type': 'application/json' },
    })
    expectError(invalidUtf8, 400, 'parse_error')
  })

  test('JSON that is not an object is 400, not 500', async () => {
    for (const raw of ['[]', '"text"', '42', 'null', 'true']) {
      const r = await t.request('POST', '/api/devices/', { raw, headers: { 'content-type': 'application/json' } })
      if (r.status !== 400) throw new Error(`${raw}: ${r.status} ${r.text}`)
      expect(r.json.errors.length).toBeGreaterThan(0)
    }
  })

  test('a non-empty body without a Content-Type, or of another type, is 415 unsupported_media_type', async () => {
    const body = JSON.stringify(deviceBody('no-type'))
    expectError(
      await t.request('POST', '/api/devices/', { raw: new TextEncoder().encode(body) }),
      415,
      'unsupported_media_type',
    )
    for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/xml', 'application/octet-stream']) {
      expectError(
        await t.request('POST', '/api/devices/', { raw: body, headers: { 'content-type': type } }),
        415,
        'unsupported_media_type',
      )
    }
    expect((await t.get('/api/devices/?path=' + encodeURIComponent(JSON.parse(body).path + '/'))).json).toEqual([])
  })

  test('an empty body is read as no fields (400 required), not 415', async () => {
    const r = await t.request('POST', '/api/transcodingprofiles/', { raw: '' })
    expectError(r, 400, 'required', { pointer: '/name' })
  })

  test('unknown fields are ignored', async () => {
    const r = await t.post('/api/transcodingprofiles/', { name: 'extra-fields', not_a_field: 1, id: 999 })
    expect(r.status).toBe(200)
    expect(r.json.id).not.toBe(999)
    expect(r.json).not.toHaveProperty('not_a_field')
  })

  describe('size limit of 1 MiB', () => {
    const MiB = 1024 * 1024
    /** A JSON device body of exactly `size` bytes (an ignored field pads it). */
    const sized = (name: string, size: number) => {
      const base = JSON.stringify({ name, path: '/tmp/sized', pad: '' })
      return base.replace('"pad":""', `"pad":"${'x'.repeat(size - base.length)}"`)
    }

    test('exactly 1 MiB is accepted', async () => {
      const raw = sized('exactly-one-mib', MiB)
      expect(raw.length).toBe(MiB)
      const r = await t.request('POST', '/api/devices/', { raw, headers: { 'content-type': 'application/json' } })
      expect(r.status).toBe(201)
    })

    test('over 1 MiB with Content-Length is 413 too_large', async () => {
      const raw = sized('too-big', MiB + 1)
      const r = await t.request('POST', '/api/devices/', {
        raw,
        headers: { 'content-type': 'application/json', 'content-length': String(raw.length) },
      })
      expectError(r, 413, 'too_large')
    })

    test('over 1 MiB without Content-Length (streamed) is 413 too_large, read no further than needed', async () => {
      let sent = 0
      const chunk = new Uint8Array(64 * 1024).fill(0x20)
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= 64 * MiB) return controller.close()
          sent += chunk.byteLength
          controller.enqueue(chunk)
        },
      })
      const request = new Request('http://localhost/api/devices/', {
        method: 'POST',
        headers: { authorization: `Token ${t.adminKey}`, 'content-type': 'application/json' },
        body: stream,
      })
      expect(request.headers.get('content-length')).toBeNull()
      const response = await t.app.handle(request)
      expectError({ status: response.status, text: '', json: await response.json() }, 413, 'too_large')
      expect(sent).toBeLessThan(8 * MiB)
    })

    test('over 1 MiB of form data is 413 too_large', async () => {
      const r = await t.request('POST', '/api/devices/', {
        form: { name: 'big-form', path: '/tmp/big', pad: 'y'.repeat(MiB) },
      })
      expectError(r, 413, 'too_large')
    })

    test('nothing over the limit was created', async () => {
      const names = (await t.get('/api/devices/')).json.map((d: { name: string }) => d.name)
      expect(names).not.toContain('too-big')
      expect(names).not.toContain('big-form')
    })
  })
})

describe('lists', () => {
  let t: TestApp
  const created: any[] = []
  beforeAll(async () => {
    t = testApp()
    for (let i = 0; i < 5; i++) {
      const r = await t.post('/api/devices/', deviceBody(`list-${i}`))
      expect(r.status).toBe(201)
      created.push(r.json)
    }
  })
  afterAll(() => t.cleanup())

  test('ordered by id ascending, with X-Total-Count', async () => {
    const r = await t.get('/api/devices/')
    expect(r.status).toBe(200)
    expect(r.json).toEqual(created)
    expect(r.json.map((d: { id: number }) => d.id)).toEqual([...created.map((d) => d.id)].sort((a, b) => a - b))
    expect(r.headers.get('x-total-count')).toBe('5')
  })

  test('limit and offset page through the list; X-Total-Count stays the filtered count', async () => {
    const cases: [string, any[]][] = [
      ['limit=2', created.slice(0, 2)],
      ['limit=2&offset=2', created.slice(2, 4)],
      ['limit=2&offset=4', created.slice(4)],
      ['offset=3', created.slice(3)],
      ['offset=5', []],
      ['offset=500', []],
      ['limit=500', created],
      ['limit=0', []],
      ['limit=0&offset=2', []],
      ['limit=1&offset=0', created.slice(0, 1)],
      ['limit=007', created],
    ]
    for (const [query, expected] of cases) {
      const r = await t.get(`/api/devices/?${query}`)
      expect(r.status).toBe(200)
      expect({ query, body: r.json }).toEqual({ query, body: expected })
      expect(r.headers.get('x-total-count')).toBe('5')
    }
  })

  test('a page carries Link with absolute prev and next only (on the Host); following next walks the list', async () => {
    const page = (offset: number, rel: string) =>
      `<http://localhost/api/devices/?limit=2&offset=${offset}>; rel="${rel}"`
    expect((await t.get('/api/devices/?limit=2&offset=2')).headers.get('link')).toBe(
      [page(0, 'prev'), page(4, 'next')].join(', '),
    )
    expect((await t.get('/api/devices/?limit=2')).headers.get('link')).toBe(page(2, 'next'))
    expect((await t.get('/api/devices/?limit=2&offset=4')).headers.get('link')).toBe(page(2, 'prev'))
    let url: string | undefined = 'http://localhost/api/devices/?limit=2'
    const walked: unknown[] = []
    while (url) {
      const r = await t.get(url.slice('http://localhost'.length))
      walked.push(...r.json)
      url = /<([^>]+)>; rel="next"/.exec(r.headers.get('link') ?? '')?.[1]
    }
    expect(walked).toEqual(created)
    // Filters stay in every link; a single page has none; an unpaged list has none.
    const path = encodeURIComponent(created[3].path)
    expect((await t.get(`/api/devices/?path=${path}&limit=1`)).headers.get('link')).toBeNull()
    expect((await t.get(`/api/devices/?path=${path}&limit=1&offset=1`)).headers.get('link')).toBe(
      `<http://localhost/api/devices/?path=${path}&limit=1&offset=0>; rel="prev"`,
    )
    expect((await t.get('/api/devices/')).headers.get('link')).toBeNull()
  })

  test('limit=0 answers exactly []', async () => {
    const r = await t.get('/api/devices/?limit=0')
    expect(r.text).toBe('[]')
  })

  test('a filter narrows both the list and X-Total-Count', async () => {
    const r = await t.get(`/api/devices/?path=${encodeURIComponent(created[3].path)}&limit=0`)
    expect(r.json).toEqual([])
    expect(r.headers.get('x-total-count')).toBe('1')
    const none = await t.get(`/api/devices/?path=${encodeURIComponent('/no/such/')}`)
    expect(none.json).toEqual([])
    expect(none.headers.get('x-total-count')).toBe('0')
  })

  test('bad limit or offset is 400 invalid naming the parameter', async () => {
    for (const parameter of ['limit', 'offset']) {
      for (const value of ['-1', 'abc', '1.5', '', '1e2', '+1', ' 1', '0x1']) {
        const r = await t.get(`/api/devices/?${parameter}=${encodeURIComponent(value)}`)
        if (r.status !== 400) throw new Error(`${parameter}=${value}: ${r.status} ${r.text}`)
        expectError(r, 400, 'invalid', { parameter })
      }
    }
  })

  test('both bad: one entry each', async () => {
    const r = await t.get('/api/devices/?limit=-1&offset=abc')
    expect(r.status).toBe(400)
    expect(r.json).toEqual({
      errors: [errorEntry(400, 'invalid', { parameter: 'limit' }), errorEntry(400, 'invalid', { parameter: 'offset' })],
    })
  })

  test('a huge limit or offset is not a 500', async () => {
    for (const query of ['limit=99999999999999999999', 'offset=99999999999999999999', 'limit=9223372036854775807']) {
      const r = await t.get(`/api/devices/?${query}`)
      expect(r.status).toBeLessThan(500)
      if (r.status === 200) expect(Array.isArray(r.json)).toBe(true)
      else expectError(r, 400, 'invalid', { parameter: query.split('=')[0]! })
    }
  })

  test('X-Total-Count follows new records through this app and through another connection', async () => {
    const query = '/api/devices/?limit=1'
    expect((await t.get(query)).headers.get('x-total-count')).toBe('5')
    expect((await t.get(query)).headers.get('x-total-count')).toBe('5') // now cached
    const r = await t.post('/api/devices/', deviceBody('list-5'))
    expect(r.status).toBe(201)
    created.push(r.json)
    expect((await t.get(query)).headers.get('x-total-count')).toBe('6')
    expect((await t.get('/api/devices/')).json).toEqual(created)

    // Another process (a CLI command, say) writes to the same file.
    writeElsewhere(
      t,
      "INSERT INTO devices (name, display_name, path, date_add) VALUES ('outside', 'outside', '/outside/', '2026-01-01T00:00:00.000000Z')",
    )
    expect((await t.get(query)).headers.get('x-total-count')).toBe('7')
    const all = await t.get('/api/devices/')
    expect(all.json.map((d: { name: string }) => d.name)).toEqual([...created.map((d) => d.name), 'outside'])
  })
})

describe('unpaged lists stream everything', () => {
  const t = testApp()
  afterAll(() => t.cleanup())
  const COUNT = 600

  test(`${COUNT} records come back whole, in id order, as one JSON array`, async () => {
    const ids: number[] = []
    for (let i = 0; i < COUNT; i++) {
      const r = await t.post('/api/transcodingprofiles/', { name: `profile-${String(i).padStart(4, '0')}` })
      if (r.status !== 200) throw new Error(r.text)
      ids.push(r.json.id)
    }
    const r = await t.get('/api/transcodingprofiles/')
    expect(r.status).toBe(200)
    expect(r.headers.get('x-total-count')).toBe(String(COUNT))
    const body = JSON.parse(r.text)
    expect(Array.isArray(body)).toBe(true)
    expect(body.map((p: { id: number }) => p.id)).toEqual(ids)
    expect(body.map((p: { name: string }) => p.name)).toEqual(
      ids.map((_, i) => `profile-${String(i).padStart(4, '0')}`),
    )
    expect(body[COUNT - 1]).toEqual((await t.get(`/api/transcodingprofiles/${ids[COUNT - 1]}/`)).json)

    const tail = await t.get('/api/transcodingprofiles/?offset=590')
    expect(tail.json.map((p: { id: number }) => p.id)).toEqual(ids.slice(590))
    expect(tail.headers.get('x-total-count')).toBe(String(COUNT))

    const page = await t.get('/api/transcodingprofiles/?limit=300&offset=256')
    expect(page.json.map((p: { id: number }) => p.id)).toEqual(ids.slice(256, 556))
  })

  test('an empty unpaged list is []', async () => {
    const r = await t.get('/api/importlogs/')
    expect(r.status).toBe(200)
    expect(r.text).toBe('[]')
    expect(r.headers.get('x-total-count')).toBe('0')
  })
})
