// The OpenAPI document of /api/docs/json (issue 8, point 2): valid for swagger-parser and for
// Redocly's recommended rules, every schema compiles with Ajv, every request body and response
// carries an example that fits its own schema, and the create examples work when sent as they
// are, and the error examples are the answers the server gives. Plus what a reader of the docs
// page relies on: the Bearer scheme, integer paging, deprecated aliases, the headers, the form
// variants, the one-of-two production fields, the API root and ping.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import SwaggerParser from '@apidevtools/swagger-parser'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { ALL_FORMS } from '../../src/http/auth.ts'
import {
  CREATE_ORDER,
  EXAMPLES,
  EXAMPLE_FILES,
  EXAMPLE_ROOT,
  EXAMPLE_USER,
  LOCATION_EXAMPLES,
  NAMED_EXAMPLES,
} from '../../src/http/examples.ts'
import { testApp, tempDir } from '../helpers/app.ts'
import { folders } from '../helpers/envelope.ts'

// Hashing, media and whole-document checks are CPU work: the bound of a test here only ends one that
// hangs (bun's 5 s failed them on a busy machine). setDefaultTimeout applies to this file only.
setDefaultTimeout(120_000)

type Json = Record<string, any>
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']

const t = testApp()
const dirs = folders()
let doc: Json
beforeAll(async () => {
  const r = await t.get('/api/docs/json', { key: null })
  expect(r.status).toBe(200)
  doc = r.json
})
afterAll(() => {
  t.cleanup()
  dirs.cleanup()
})

/** Every operation of the document, with where it is. */
function operations(): { method: string; path: string; op: Json }[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method: method.toUpperCase(), path, op: item[method] })),
  )
}

/** Every media type object of request bodies and responses, named for the messages. */
function mediaTypes(): { where: string; media: Json; status?: string }[] {
  const all: { where: string; media: Json; status?: string }[] = []
  for (const { method, path, op } of operations()) {
    for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json))
      all.push({ where: `${method} ${path} request ${type}`, media })
    for (const [status, response] of Object.entries((op.responses ?? {}) as Json))
      for (const [type, media] of Object.entries((response.content ?? {}) as Json))
        all.push({ where: `${method} ${path} ${status} ${type}`, media, status })
  }
  return all
}

/** The example of a media type: its one `example`, or the value of its first named one. */
const exampleIn = (media: Json): unknown =>
  'example' in media ? media.example : Object.values(media.examples as Json)[0].value

/** The example the document gives for one answer ("GET /api/devices/{id} 404"), of its JSON body. */
function documented(where: string): unknown {
  const [found] = mediaTypes().filter((m) => m.where === `${where} application/json`)
  if (!found) throw new Error(`no ${where} in the document`)
  return exampleIn(found.media)
}

/** Every place a key occurs in the document, as JSON pointers. */
function keysNamed(name: string, value: unknown = doc, at = ''): string[] {
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([k, v]) => [
    ...(k === name ? [`${at}/${k}`] : []),
    ...keysNamed(name, v, `${at}/${k}`),
  ])
}

/**
 * Ajv over the document's own components, so that a schema's "#/components/schemas/X" resolves
 * as in the document. Strict mode stays on: a keyword Ajv does not know (OpenAPI 3.0's
 * `nullable`, an unknown `format`) is an error, as it would be a silent no-op for a client's
 * validator. `components` is declared as a keyword (it holds the schemas). Only strictRequired
 * is off: it refuses `anyOf: [{required: [a]}, {required: [b]}]` (a `required` without its
 * `properties` beside it), the standard way to say "one of these two fields".
 */
function compiler() {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false })
  addFormats(ajv)
  ajv.addKeyword({ keyword: 'components' })
  ajv.addSchema({ $id: 'doc', components: doc.components })
  return ajv
}
/** A schema whose "#/components/..." references resolve into the document. */
const withBase = (schema: Json): Json =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'))

describe('the document is valid', () => {
  test('swagger-parser validates it', async () => {
    // validate() dereferences in place: a copy, so the other tests see the document as served.
    await SwaggerParser.validate(structuredClone(doc) as never)
  })

  test('redocly lint with the recommended rules finds no error (no network: telemetry and notices off)', async () => {
    const dir = dirs.make('reelhouse-openapi-')
    const file = join(dir, 'openapi.json')
    const config = join(dir, 'redocly.yaml')
    writeFileSync(file, JSON.stringify(doc))
    writeFileSync(config, 'extends:\n  - recommended\ntelemetry: off\n')
    const bin = join(import.meta.dir, '../../node_modules/.bin/redocly')
    const child = Bun.spawn([bin, 'lint', file, '--config', config, '--format', 'json'], {
      cwd: dir,
      stdout: 'pipe',
      stderr: 'pipe',
      env: {
        ...process.env,
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
        CI: 'true',
      },
    })
    const [out, err] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ])
    const start = out.indexOf('{')
    if (start < 0) throw new Error(`redocly printed no report: ${out}\n${err}`)
    const report = JSON.parse(out.slice(start)) as {
      totals: { errors: number }
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[]
    }
    const errors = report.problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)
    expect(errors).toEqual([])
    expect(report.totals.errors).toBe(0)
  }, 60_000)

  test('every component schema compiles with Ajv (draft 2020-12, strict)', () => {
    const ajv = compiler()
    const failures: string[] = []
    for (const name of Object.keys(doc.components.schemas)) {
      try {
        ajv.compile({ $ref: `doc#/components/schemas/${name}` })
        ajv.compile(withBase(doc.components.schemas[name]))
      } catch (error) {
        failures.push(`${name}: ${(error as Error).message}`)
      }
    }
    expect(failures).toEqual([])
  })

  test('no $id and no nullable anywhere (3.0 leftovers and Elysia model stamps)', () => {
    expect(keysNamed('$id')).toEqual([])
    expect(keysNamed('nullable')).toEqual([])
  })
})

describe('examples', () => {
  test('every request body and response with a body carries an example that fits its own schema', () => {
    const ajv = compiler()
    const problems: string[] = []
    for (const { where, media } of mediaTypes()) {
      const examples =
        'example' in media ? [media.example] : Object.values((media.examples ?? {}) as Json).map((e) => e.value)
      if (examples.length === 0) {
        problems.push(`${where}: no example`)
        continue
      }
      const validate = ajv.compile(withBase(media.schema))
      for (const example of examples)
        if (!validate(example)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`)
    }
    expect(problems).toEqual([])
  })

  test('the examples a model declares itself fit it too', () => {
    const ajv = compiler()
    const problems: string[] = []
    for (const [name, schema] of Object.entries(doc.components.schemas as Json)) {
      const validate = ajv.compile({ $ref: `doc#/components/schemas/${name}` })
      for (const example of schema.examples ?? [])
        if (!validate(example)) problems.push(`${name}: ${ajv.errorsText(validate.errors)}`)
    }
    expect(problems).toEqual([])
  })

  test('no example is a placeholder: no "string" values, and paths lie under the example device', () => {
    const strings: [string, string][] = []
    const collect = (v: unknown, key = '') => {
      if (typeof v === 'string') strings.push([key, v])
      else if (v && typeof v === 'object') Object.entries(v).forEach(([k, x]) => collect(x, Array.isArray(v) ? key : k))
    }
    for (const { media } of mediaTypes())
      collect(media.example ?? Object.values((media.examples ?? {}) as Json).map((e) => e.value))
    expect(strings.length).toBeGreaterThan(100)
    expect(strings.filter(([, s]) => s === 'string')).toEqual([])
    const paths = strings.filter(([key]) =>
      /^(path|path_file|path_proxy|asset_path|storage_root|proxy_root|bundle_root)$/.test(key),
    )
    expect(paths.length).toBeGreaterThan(20)
    expect(paths.filter(([, s]) => !s.startsWith(EXAMPLE_ROOT))).toEqual([])
  })

  test('the error envelope examples are real envelopes: status as text, the title of the status', () => {
    for (const { where, media, status } of mediaTypes()) {
      if (media.schema?.$ref !== '#/components/schemas/Error') continue
      const entry = media.example.errors[0]
      expect({ where, status: entry.status }).toEqual({ where, status })
    }
    expect(documented('GET /api/devices/{id} 404')).toEqual({
      errors: [{ status: '404', code: 'not_found', title: 'Not Found', detail: 'No device with this id.' }],
    })
    expect(documented('DELETE /api/projectassets/{id} 404')).toEqual({
      errors: [{ status: '404', code: 'does_not_exist', title: 'Not Found', detail: 'No project asset with this id.' }],
    })
    expect((documented('POST /api/devices 400') as Json).errors[0]).toMatchObject({
      status: '400',
      code: 'required',
      title: 'Validation Error',
      source: { pointer: '/name' },
    })
  })

  test('an error example is the answer the server gives: 403 naming the codename of the operation, 404, 401, 400 at limit', async () => {
    const ana = t.makeUser(EXAMPLE_USER)
    const cases: [string, Promise<{ json: unknown }>][] = [
      ['POST /api/devices 403', t.post('/api/devices/', EXAMPLES.DeviceCreate, { key: ana })],
      ['POST /api/productions 403', t.post('/api/productions/', EXAMPLES.ProductionCreate, { key: ana })],
      ['GET /api/devices/{id} 404', t.get('/api/devices/999/')],
      ['GET /api/videoassets/{id} 404', t.get('/api/videoassets/999/')],
      ['GET /api/devices 401', t.get('/api/devices/', { key: null })],
      ['GET /api/devices 400', t.get('/api/devices/?limit=abc')],
    ]
    for (const [where, answer] of cases)
      expect({ where, body: (await answer).json }).toEqual({ where, body: documented(where) })
  })

  test('"Try it out" with the create examples, then the link example, makes the example catalogue; the copy example its copy (device root moved to a temp folder)', async () => {
    const root = dirs.make('reelhouse-examples-') + '/'
    const moved = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll(EXAMPLE_ROOT, root))
    // What the server sets from the clock, and the files the example project holds on disk.
    const unclocked = (value: unknown) =>
      JSON.parse(JSON.stringify(value, (key, v) => (key === 'date_add' || key === 'date_mod' ? 'clock' : v)))
    for (const file of EXAMPLE_FILES) {
      const path = file.replace(EXAMPLE_ROOT, root)
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, 'essence')
    }
    const fresh = testApp(tempDir())
    try {
      for (const [path, name] of CREATE_ORDER) {
        const sent = documented(`POST ${path.replace(/\/$/, '')} request`)
        expect(sent).toEqual(EXAMPLES[name])
        const r = await fresh.post(path, moved(sent))
        if (r.status >= 300) throw new Error(`${path}: ${r.status} ${r.text}`)
        if (name === 'ProjectAssetCreate') {
          expect(unclocked({ ...r.json, files: 'on disk' })).toEqual(
            unclocked(moved({ ...(NAMED_EXAMPLES.ProjectAssetCreated!.create!.value as Json), files: 'on disk' })),
          )
          expect(r.headers.get('location')).toBe(LOCATION_EXAMPLES.create)
        }
      }
      const link = await fresh.post(
        '/api/projectassets/1/addasset/',
        documented('POST /api/projectassets/{id}/addasset request'),
      )
      expect(link.json).toEqual(documented('POST /api/projectassets/{id}/addasset 200'))

      // Each list holds its record example, whole.
      for (const [path, name] of CREATE_ORDER) {
        const record = name.replace(/Create$/, '')
        const list = await fresh.get(path)
        const files = (rows: Json[]) =>
          record === 'ProjectAsset' ? rows.map((row) => ({ ...row, files: 'on disk' })) : rows
        expect({ record, list: unclocked(files(list.json)) }).toEqual({
          record,
          list: unclocked(files([moved(EXAMPLES[record])])),
        })
      }

      const copy = NAMED_EXAMPLES.ProjectAssetCreated!.copy!.value as Json
      const r = await fresh.post('/api/projectassets/', moved(NAMED_EXAMPLES.ProjectAssetCreate!.copy!.value))
      expect(r.status).toBe(201)
      expect(unclocked(r.json)).toEqual(unclocked(moved(copy)))
      expect(r.headers.get('location')).toBe(LOCATION_EXAMPLES.copy)

      // A write the user may not make: the 403 of a project operation names write access to the production.
      const ana = fresh.makeUser(EXAMPLE_USER, { read: [1] })
      const refused = await fresh.request('DELETE', '/api/projectassets/1/', { key: ana })
      expect(refused.json).toEqual(documented('DELETE /api/projectassets/{id} 403'))
    } finally {
      fresh.cleanup()
    }
  })
})

describe('what the page shows', () => {
  test('Authorize takes the bare key: an HTTP bearer scheme beside the Token scheme, and HTTP basic, any one on every operation but health', () => {
    expect(doc.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      token: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'Authorization' }),
      basic: expect.objectContaining({ type: 'http', scheme: 'basic' }),
    })
    expect(doc.security).toEqual([{ bearer: [] }, { token: [] }, { basic: [] }])
    expect(doc.paths['/api/health'].get.security).toEqual([])
  })

  test('the header Swagger UI builds from the bearer scheme is accepted, and a malformed one names both forms', async () => {
    const ok = await t.get('/api/devices/', { headers: { authorization: `Bearer ${t.adminKey}` } })
    expect(ok.status).toBe(200)
    // The basic scheme's, with the key as the password.
    const basic = await t.get('/api/devices/', { headers: { authorization: `Basic ${btoa(`admin:${t.adminKey}`)}` } })
    expect(basic.status).toBe(200)
    const bad = await t.get('/api/devices/', { headers: { authorization: t.adminKey } })
    expect(bad.status).toBe(401)
    expect(bad.json.errors[0].detail).toBe(ALL_FORMS)
  })

  test('limit, offset and id filters are integers; path ids are integers', () => {
    const params = operations().flatMap(({ method, path, op }) =>
      ((op.parameters ?? []) as Json[]).map((p): Json => ({ where: `${method} ${path} ${p.name}`, ...p })),
    )
    const paging = params.filter((p) => p.name === 'limit' || p.name === 'offset')
    expect(paging.length).toBeGreaterThan(20)
    for (const p of paging)
      expect({ where: p.where, type: p.schema.type, minimum: p.schema.minimum }).toEqual({
        where: p.where,
        type: 'integer',
        minimum: 0,
      })
    for (const p of params.filter((p) => p.in === 'path'))
      expect({ where: p.where, schema: p.schema.type }).toEqual({ where: p.where, schema: 'integer' })
    expect(params.filter((p) => p.schema.pattern === '^[0-9]+$').map((p) => p.where)).toEqual([])
  })

  test('the /api/project/ aliases are listed deprecated in the one ProjectAsset section, not in a second one', () => {
    const aliases = operations().filter((o) => /^\/api\/project(\/|$)/.test(o.path))
    expect(aliases.length).toBeGreaterThan(5)
    for (const { method, path, op } of aliases)
      expect({ where: `${method} ${path}`, deprecated: op.deprecated, tags: op.tags }).toEqual({
        where: `${method} ${path}`,
        deprecated: true,
        tags: ['ProjectAsset'],
      })
    // Every tag an operation names is one of the document's sections, each said once.
    const sections = (doc.tags as Json[]).map((tag) => tag.name)
    expect(new Set(sections).size).toBe(sections.length)
    expect(
      [...new Set(operations().flatMap(({ op }) => op.tags as string[]))].filter((tag) => !sections.includes(tag)),
    ).toEqual([])
    expect(sections.filter((name) => name.startsWith('ProjectAsset'))).toEqual(['ProjectAsset'])
    for (const { op, path } of operations().filter((o) => /^\/api\/projectassets(\/|$)/.test(o.path)))
      expect({ path, deprecated: op.deprecated ?? false }).toEqual({
        path,
        deprecated: !/\/(add|unlink)$/.test(path) ? false : true,
      })
  })

  test('lists declare X-Total-Count and Link; 401s WWW-Authenticate; the 405 answer Allow', () => {
    const lists = operations().filter(({ op }) => (op.parameters ?? []).some((p: Json) => p.name === 'limit'))
    expect(lists.length).toBeGreaterThan(10)
    for (const { op } of lists) {
      expect(op.responses['200'].headers['X-Total-Count'].schema).toEqual({ type: 'integer', minimum: 0 })
      expect(op.responses['200'].headers.Link.schema).toEqual({ type: 'string' })
    }
    for (const { op } of operations().filter((o) => o.op.responses['401']))
      expect(op.responses['401'].headers['WWW-Authenticate'].schema).toEqual({ type: 'string', enum: ['Token'] })
    expect(doc.components.responses.MethodNotAllowed.headers.Allow.schema.type).toBe('string')
  })

  test('the API root and ping are documented: the root with a key and its example as served, ping without one and without a body', async () => {
    const root = doc.paths['/api'].get
    expect(root.security).toBeUndefined() // the document's: a key
    expect(root.responses['401']).toBeDefined()
    const served = await t.get('/api/')
    expect(Object.keys(root.responses['200'].content['application/json'].example)).toEqual(Object.keys(served.json))
    const ping = doc.paths['/api/ping'].get
    expect(ping.security).toEqual([])
    expect(Object.keys(ping.responses).sort()).toEqual(['204', '400', '406', '421', '431', '500'])
    expect(ping.responses['204'].content).toBeUndefined()
  })

  test('Link is described as absolute prev and next, and its example is that of one page: the same list, offsets a limit apart', () => {
    const link = doc.paths['/api/videoassets'].get.responses['200'].headers.Link
    expect(link.description).toContain('absolute')
    const rels = [...(link.example as string).matchAll(/<(http:\/\/[^>]+)>; rel="([a-z]+)"/g)].map((m) => ({
      rel: m[2],
      url: new URL(m[1]!),
    }))
    expect(rels.map((r) => r.rel)).toEqual(['prev', 'next'])
    const [prev, next] = rels.map((r) => r.url)
    expect(prev!.pathname).toBe('/api/videoassets/')
    expect(next!.pathname).toBe('/api/videoassets/')
    const limit = Number(prev!.searchParams.get('limit'))
    expect(Number(next!.searchParams.get('offset')) - Number(prev!.searchParams.get('offset'))).toBe(2 * limit)
    for (const u of [prev!, next!]) u.searchParams.delete('offset')
    expect(next!.search).toBe(prev!.search)
  })

  test('every answer declares X-Request-Id, and project create, copy and delete their Location (the task to follow)', async () => {
    for (const { method, path, op } of operations())
      for (const [status, response] of Object.entries(op.responses as Json))
        expect({ where: `${method} ${status} ${path}`, header: response.headers?.['X-Request-Id'] }).toEqual({
          where: `${method} ${status} ${path}`,
          header: { $ref: '#/components/headers/RequestId' },
        })
    expect(doc.paths['/api/projectassets'].post.responses['201'].headers.Location).toMatchObject({
      schema: { type: 'string' },
      examples: { create: { value: '/api/projectassets/1/' }, copy: { value: '/api/tasks/1/' } },
    })
    expect(doc.paths['/api/projectassets/{id}'].delete.responses['202'].headers.Location).toMatchObject({
      schema: { type: 'string' },
      example: '/api/tasks/2/',
    })
    expect(doc.paths['/api/devices'].post.responses['201'].headers.Location).toBeUndefined() // it sends none
  })

  test('project create and copy have an example each, of request and answer: the copy with copy_of, and its task', () => {
    const post = doc.paths['/api/projectassets'].post
    const answers = post.responses['201'].content['application/json'].examples
    expect(Object.keys(answers)).toEqual(['create', 'copy'])
    expect(answers.create.value.task).toBeUndefined()
    expect(answers.copy.value.task).toEqual({ id: 1, state: 'queued', url: '/api/tasks/1/' })
    const requests = post.requestBody.content['application/json'].examples
    expect(Object.keys(requests)).toEqual(['create', 'copy'])
    expect(requests.create.value.copy_of).toBeUndefined()
    expect(requests.copy.value.copy_of).toBe(1)
  })

  test('the 409 names both reasons: running work on the same project, and a delete that would take media of another production', () => {
    const conflict = doc.paths['/api/projectassets/{id}'].delete.responses['409'].description
    expect(conflict).toContain('running work on the same project')
    expect(conflict).toContain('catalogued media files of another production')
  })

  test('every operation can answer 500 with the envelope, and every error points to the docs of this repository', () => {
    for (const { method, path, op } of operations()) {
      expect({ where: `${method} ${path}`, schema: op.responses['500']?.content['application/json'].schema }).toEqual({
        where: `${method} ${path}`,
        schema: { $ref: '#/components/schemas/Error' },
      })
      for (const [status, response] of Object.entries(op.responses as Json))
        if (Number(status) >= 400) expect(response.description).toContain('See docs/api.md, section Errors')
    }
    // Only the project's own docs are named: not our development notes (api.md, service.md).
    expect(JSON.stringify(doc).match(/(\.\.\/shared|(?<!docs\/)api\.md|service\.md)[^"]{0,20}/g)).toBeNull()
  })

  test('bodies taking form data say so, with objects and arrays as JSON text; add, unlink and the archive activities take JSON only', () => {
    const forms = ['application/x-www-form-urlencoded', 'multipart/form-data']
    for (const { method, path, op } of operations()) {
      if (!op.requestBody) continue
      const types = Object.keys(op.requestBody.content)
      // The archive activities take a list of members: JSON only.
      if (/\/(add|unlink)(asset)?$|\/(archive|restore)activities$/.test(path))
        expect({ path, types }).toEqual({ path, types: ['application/json'] })
      else
        expect({ where: `${method} ${path}`, types }).toEqual({
          where: `${method} ${path}`,
          types: ['application/json', ...forms],
        })
    }
    const importBody = doc.paths['/api/asset/import'].post.requestBody.content
    for (const type of forms) expect(importBody[type].encoding.asset).toEqual({ contentType: 'application/json' })
    const device = doc.paths['/api/devices'].post.requestBody.content
    for (const type of forms)
      expect(device[type].encoding.passthrough_profiles).toEqual({ contentType: 'application/json' })
  })

  test('a production either by id or by name: anyOf on the media and project asset bodies', () => {
    const either = (a: string, b: string) => [{ required: [a] }, { required: [b] }]
    for (const kind of ['Audio', 'Image', 'Video'])
      expect(doc.components.schemas[`${kind}AssetCreate`].anyOf).toEqual(either('production', 'production_name'))
    expect(doc.components.schemas.ProjectAssetCreate.anyOf).toEqual(either('production_id', 'production_name'))
    // The import names its production only by name (api.md 4.10).
    expect(doc.components.schemas.AssetImport.required).toContain('production')
  })

  test('the page loads its scripts from this service and the document from /api/docs/json', async () => {
    const page = await t.get('/api/docs', { key: null })
    expect(page.status).toBe(200)
    expect(page.text).toContain('"url":"/api/docs/json"')
    expect(page.text).toContain('/api/docs/assets/swagger-ui-bundle.js')
    expect((await t.get('/api/docs/assets/swagger-ui-bundle.js', { key: null })).status).toBe(200)
  })
})
