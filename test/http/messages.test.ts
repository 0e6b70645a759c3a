// Messages that say how to fix it (issue 8, point 4): a 403 names what is missing (the codename,
// or write access to which production), JSON sent as a form (curl -d without a Content-Type) is
// a 415 that says which header to send, a malformed JSON body is one sentence that says "JSON"
// once, and a limit, offset or id filter that is not a number says it must be a whole number.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

let t: TestApp
let root: string
let show: { id: number; name: string }
let other: { id: number; name: string }

beforeAll(async () => {
  t = testApp()
  const seeded = await seedProduction(t, 'Show')
  root = seeded.root
  show = seeded.production
  const o = await t.post('/api/productions/', { name: 'Other', storage_root: `${root}/Other` })
  expect(o.status).toBe(201)
  other = o.json
})

afterAll(() => t.cleanup())

const detailOf = (r: { json: any }) => r.json.errors[0].detail as string
const count = async (path: string) => Number((await t.get(`${path}?limit=0`)).headers.get('x-total-count'))

describe('a 403 names what is missing', () => {
  test('a codename', async () => {
    const key = t.makeUser('no-perms')
    const cases = [
      ['/api/devices/', { name: 'd', path: `${root}/d` }, 'browser.add_device'],
      ['/api/productions/', { name: 'P', storage_root: `${root}/P` }, 'browser.add_production'],
      ['/api/transcodingprofiles/', { name: 'x' }, 'browser.add_transcodingprofile'],
    ] as const
    for (const [path, body, codename] of cases) {
      const r = await t.post(path, body, { key })
      expectError(r, 403, 'permission_denied')
      expect([path, detailOf(r)]).toEqual([
        path,
        `You need the permission ${codename} (an admin gives it with: reelhouse user perm add no-perms ${codename}).`,
      ])
    }
  })

  test('the permission a copy needs', async () => {
    const source = await t.post('/api/projectassets/', {
      name: 'Src',
      bundle_root: `${root}/Show/src`,
      production_id: show.id,
    })
    expect(source.status).toBe(201)
    const key = t.makeUser('copier', { write: [show.id] })
    const r = await t.post(
      '/api/projectassets/',
      { name: 'C', bundle_root: `${root}/Show/c`, production_id: show.id, copy_of: source.json.id },
      { key },
    )
    expectError(r, 403, 'permission_denied')
    expect(detailOf(r)).toBe(
      'You need the permission browser.copy_projectasset (an admin gives it with: reelhouse user perm add copier browser.copy_projectasset).',
    )
  })

  test('write access to production N', async () => {
    const key = t.makeUser('reader', { read: [show.id], write: [other.id] })
    const writes = [
      ['POST', '/api/projectassets/', { name: 'P', bundle_root: `${root}/Show/p`, production_id: show.id }],
      ['POST', '/api/videoassets/', { name: 'v', path_file: `${root}/Show/v.mov`, production: show.id }],
    ] as const
    for (const [method, path, body] of writes) {
      const r = await t.request(method, path, { key, body })
      expectError(r, 403, 'permission_denied')
      expect([path, detailOf(r)]).toEqual([
        path,
        `You need write access to production ${show.id} (an admin gives it with: reelhouse user grant reader --production ${show.id} --write).`,
      ])
    }
    // A folder of a production the user can read but not write, inside one they can write.
    const nested = await t.post('/api/productions/?nest=true', { name: 'Nested', storage_root: `${root}/Other/nested` })
    expect(nested.status).toBe(201)
    const reader = t.makeUser('nested-reader', { read: [nested.json.id], write: [other.id] })
    const r = await t.post(
      '/api/projectassets/',
      { name: 'N', bundle_root: `${root}/Other/nested/p`, production_id: other.id },
      { key: reader },
    )
    expectError(r, 403, 'permission_denied')
    expect(detailOf(r)).toContain(`you need write access to production ${nested.json.id}`)
    // To a user who cannot read that production, it is not named.
    const blind = t.makeUser('nested-blind', { write: [other.id] })
    const hidden = await t.post(
      '/api/projectassets/',
      { name: 'N', bundle_root: `${root}/Other/nested/q`, production_id: other.id },
      { key: blind },
    )
    expectError(hidden, 403, 'permission_denied')
    expect(detailOf(hidden)).not.toContain(String(nested.json.id))
  })
})

describe('JSON sent as a form: 415 that names the header to send', () => {
  const json = JSON.stringify({ name: 'curl-disk', path: '/tmp/curl-disk' })

  test('curl -d (application/x-www-form-urlencoded), or no Content-Type: 415, nothing made', async () => {
    const before = await count('/api/devices/')
    const types: Record<string, string>[] = [
      { 'content-type': 'application/x-www-form-urlencoded' },
      {},
      { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    ]
    for (const headers of types) {
      for (const raw of [json, `  ${json}`, '[1]', '{"name": ']) {
        const r = await t.request('POST', '/api/devices/', { raw, headers })
        expectError(r, 415, 'unsupported_media_type')
        expect(detailOf(r)).toContain('send Content-Type: application/json')
      }
    }
    // add/unlink, whose bodies are checked by the service: the same answer.
    const addasset = await t.request('POST', '/api/projectassets/1/addasset/', {
      raw: '{"asset_list": []}',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expectError(addasset, 415, 'unsupported_media_type')
    expect(detailOf(addasset)).toContain('send Content-Type: application/json')
    expect(await count('/api/devices/')).toBe(before)
  })

  test('a real form still creates, and the same JSON with its Content-Type too', async () => {
    const form = await t.request('POST', '/api/devices/', { form: { name: 'form-disk', path: `${root}/form` } })
    expect(form.status).toBe(201)
    const asJson = await t.request('POST', '/api/devices/', {
      raw: json,
      headers: { 'content-type': 'application/json' },
    })
    expect(asJson.status).toBe(201)
  })
})

describe('malformed JSON: one sentence, the prefix said once', () => {
  test('each failure names what is wrong after one "not valid JSON"', async () => {
    const bodies = ['{"a":', '{a:1}', 'nul', '{"name": "x",}', '{"a" 1}']
    for (const raw of bodies) {
      for (const path of ['/api/devices/', '/api/projectassets/1/addasset/']) {
        const r = await t.request('POST', path, { raw, headers: { 'content-type': 'application/json' } })
        expectError(r, 400, 'parse_error')
        const detail = detailOf(r)
        expect([raw, detail]).toEqual([
          raw,
          expect.stringMatching(/^The request body is not valid JSON: [a-z].*[^.]\.$/),
        ])
        expect([raw, detail.match(/json/gi)]).toEqual([raw, ['JSON']])
      }
    }
    const notUtf8 = await t.request('POST', '/api/devices/', {
      raw: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]),
      headers: { 'content-type': 'application/json' },
    })
    expectError(notUtf8, 400, 'parse_error')
    expect(detailOf(notUtf8)).toBe('The request body is not valid JSON: it is not UTF-8 text.')
  })
})

describe('limit, offset and id filters that are not numbers', () => {
  test('say the parameter must be a whole number', async () => {
    for (const path of ['/api/devices/', '/api/tasks/', '/api/projectassets/'])
      for (const parameter of ['limit', 'offset'])
        for (const value of ['abc', '-1', '1.5', '1e3']) {
          const r = await t.get(`${path}?${parameter}=${value}`)
          expectError(r, 400, 'invalid', { parameter })
          expect(detailOf(r)).toBe(`${parameter} must be a whole number (0 or more, in decimal digits).`)
        }
  })
})
