// What existing medialoopster clients use beyond api.md (issue 11, points 1, 2 and 4): the API
// root naming every list, ping, Link headers they follow through paged lists, unknown query
// parameters ignored, and "+" in a query read as a space. CORS is in cors.test.ts, and the same
// through a real serve with --public-url in test/cli/clients.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { EXAMPLES } from '../../src/http/examples.ts'
import { type TestApp, readResponse, testApp } from '../helpers/app.ts'
import { expectError, folders } from '../helpers/envelope.ts'

/** What the issue names, in the order the modules are mounted. */
const RESOURCES = [
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
  'projectassets',
  'tasks',
  'history',
]
const rootOn = (base: string) => Object.fromEntries(RESOURCES.map((name) => [name, `${base}/api/${name}/`]))

const dirs = folders()
let t: TestApp
let root: string
let show: { id: number }
let other: { id: number }
/** Video assets of Show, then of Other, created interleaved (so a filter has gaps to skip). */
const shown: { id: number; path_file: string }[] = []

beforeAll(async () => {
  t = testApp(dirs.make('reelhouse-data-'))
  root = dirs.make()
  expect((await t.post('/api/devices/', { name: 'disk', path: root })).status).toBe(201)
  show = (await t.post('/api/productions/', { name: 'Show', storage_root: `${root}/Show` })).json
  other = (await t.post('/api/productions/', { name: 'Other', storage_root: `${root}/Other` })).json
  for (let i = 0; i < 5; i++) {
    const mine = await t.post('/api/videoassets/', {
      name: `show ${i}`,
      path_file: `${root}/Show/clip ${i}.mov`,
      production: show.id,
    })
    expect(mine.status).toBe(201)
    shown.push(mine.json)
    if (i < 3)
      expect(
        (
          await t.post('/api/videoassets/', {
            name: `other ${i}`,
            path_file: `${root}/Other/clip ${i}.mov`,
            production: other.id,
          })
        ).status,
      ).toBe(201)
  }
  // One record in most other lists, so that records are compared too.
  expect(
    (await t.post('/api/audioassets/', { name: 'a', path_file: `${root}/Show/a.wav`, production: show.id })).status,
  ).toBe(201)
  expect(
    (await t.post('/api/imageassets/', { name: 'i', path_file: `${root}/Show/i.png`, production: show.id })).status,
  ).toBe(201)
  const set = await t.post('/api/custommetadatasets/', EXAMPLES.CustomMetadataSetCreate)
  expect(set.status).toBe(201)
  expect(
    (
      await t.post('/api/custommetadata/', {
        ...(EXAMPLES.CustomMetadataCreate as object),
        custom_metadata_set: set.json.id,
      })
    ).status,
  ).toBe(200)
  expect((await t.post('/api/transcodingprofiles/', EXAMPLES.TranscodingProfileCreate)).status).toBe(200)
})
afterAll(() => {
  t.cleanup()
  dirs.cleanup()
})

/** A request through another app over the same catalogue, to any URL (another Host, say). */
async function send(
  app: { handle(r: Request): Promise<Response> },
  url: string,
  headers: Record<string, string> = { authorization: `Token ${t.adminKey}` },
) {
  return readResponse(await app.handle(new Request(url, { headers })))
}

describe('the API root', () => {
  test('/api/ and /api name every list by its absolute URL on the Host the request was sent to', async () => {
    for (const path of ['/api/', '/api']) {
      const r = await t.get(path)
      expect({ path, status: r.status, body: r.json }).toEqual({ path, status: 200, body: rootOn('http://localhost') })
    }
    expect((await send(t.app, 'http://nas.local:8000/api/')).json).toEqual(rootOn('http://nas.local:8000'))
  })

  test('every URL in it answers 200 with a JSON array', async () => {
    for (const url of Object.values((await t.get('/api/')).json as Record<string, string>)) {
      const r = await send(t.app, url)
      expect({ url, status: r.status, array: Array.isArray(r.json) }).toEqual({ url, status: 200, array: true })
    }
  })

  test('it holds every collection of the app (a GET of /api/NAME/ and of /api/NAME/:id) but the version 0 alias /api/project/', async () => {
    const gets = new Set(t.app.routes.filter((r) => r.method === 'GET').map((r) => r.path))
    const lists = [...gets]
      .filter((path) => /^\/api\/[a-z]+\/$/.test(path) && gets.has(`${path}:id`))
      .map((path) => path.split('/')[2])
    expect(lists.filter((name) => name !== 'project').sort()).toEqual(Object.keys((await t.get('/api/')).json).sort())
  })

  test('behind --public-url its URLs are on that address, which every one of them reaches', async () => {
    const app = createApp(t.core, { publicUrl: 'https://media.example/reelhouse' })
    const r = await send(app, 'http://127.0.0.1:8000/api/')
    expect(r.json).toEqual(rootOn('https://media.example/reelhouse'))
    // What the proxy does: the public prefix becomes this server's address again.
    for (const url of Object.values(r.json as Record<string, string>))
      expect((await send(app, url.replace('https://media.example/reelhouse', 'http://127.0.0.1:8000'))).status).toBe(
        200,
      )
  })

  test('it needs a valid key like every other endpoint', async () => {
    for (const path of ['/api/', '/api']) {
      expectError(await t.get(path, { key: null }), 401, 'not_authenticated')
      expectError(await t.get(path, { key: 'f'.repeat(40) }), 401, 'authentication_failed')
    }
  })
})

describe('ping', () => {
  test('204 with no body, with and without the slash, with no key', async () => {
    for (const path of ['/api/ping/', '/api/ping']) {
      const r = await t.get(path, { key: null })
      expect({ path, status: r.status, text: r.text, type: r.headers.get('content-type') }).toEqual({
        path,
        status: 204,
        text: '',
        type: null,
      })
    }
  })

  test('any Authorization header is ignored: unknown, malformed, another scheme, or a valid key', async () => {
    const headers = [
      `Token ${'0'.repeat(40)}`,
      'Token nonsense',
      'Basic !!!',
      `Basic ${btoa('admin:wrong')}`,
      'Bearer',
      'x',
      `Token ${t.adminKey}`,
    ]
    for (const authorization of headers) {
      const r = await t.get('/api/ping/', { key: null, headers: { authorization } })
      expect({ authorization, status: r.status, text: r.text }).toEqual({ authorization, status: 204, text: '' })
    }
  })

  test('it only answers GET and HEAD: another method is 405 (after the key check, as everywhere)', async () => {
    expect((await t.request('HEAD', '/api/ping/', { key: null })).status).toBe(204)
    expectError(await t.request('POST', '/api/ping/', { key: null }), 405, 'method_not_allowed')
  })
})

describe('Link on paged lists', () => {
  const linkOf = (r: { headers: Headers }) =>
    Object.fromEntries(
      [...(r.headers.get('link') ?? '').matchAll(/<([^>]+)>; rel="([a-z]+)"/g)].map((m) => [m[2], m[1]]),
    )

  test('walking next with a filter and a parameter we do not know returns every record exactly once; prev walks back', async () => {
    const first = `http://localhost/api/videoassets/?production=${show.id}&with_sequences=true&limit=2`
    const pages: { url: string; ids: number[]; link: Record<string, string> }[] = []
    for (let url: string | undefined = first; url; url = pages.at(-1)!.link.next) {
      if (pages.length > 10) throw new Error('next never ends')
      const r = await send(t.app, url)
      expect(r.status).toBe(200)
      expect(r.headers.get('x-total-count')).toBe('5')
      pages.push({ url, ids: r.json.map((a: { id: number }) => a.id), link: linkOf(r) })
    }
    expect(pages.flatMap((p) => p.ids)).toEqual(shown.map((a) => a.id))
    // Absolute, with the filter and the unknown parameter kept; no prev first, no next last.
    const at = (offset: number) =>
      `http://localhost/api/videoassets/?production=${show.id}&with_sequences=true&limit=2&offset=${offset}`
    expect(pages.map((p) => p.link)).toEqual([{ next: at(2) }, { prev: at(0), next: at(4) }, { prev: at(2) }])
    const back: number[][] = []
    for (let url: string | undefined = pages.at(-1)!.url; url; url = linkOf(await send(t.app, url)).prev)
      back.push((await send(t.app, url)).json.map((a: { id: number }) => a.id))
    expect(back).toEqual(pages.map((p) => p.ids).reverse())
  })

  test('behind --public-url the links are on that address', async () => {
    const app = createApp(t.core, { publicUrl: 'https://media.example/reelhouse' })
    const r = await send(app, 'http://127.0.0.1:8000/api/videoassets/?limit=3&offset=3')
    expect(r.headers.get('link')).toBe(
      '<https://media.example/reelhouse/api/videoassets/?limit=3&offset=0>; rel="prev", <https://media.example/reelhouse/api/videoassets/?limit=3&offset=6>; rel="next"',
    )
  })

  test('the query is kept as it was written, limit and offset replaced wherever they stood', async () => {
    const r = await t.get(`/api/videoassets/?offset=1&name=a+b&limit=1&x=%2B&production=${show.id}`)
    expect(linkOf(r)).toEqual({
      prev: `http://localhost/api/videoassets/?name=a+b&x=%2B&production=${show.id}&limit=1&offset=0`,
      next: `http://localhost/api/videoassets/?name=a+b&x=%2B&production=${show.id}&limit=1&offset=2`,
    })
  })

  test('no Link on any unpaged list, nor with limit=0', async () => {
    for (const name of RESOURCES) {
      for (const query of ['', '?offset=1', '?limit=0']) {
        const r = await t.get(`/api/${name}/${query}`)
        expect({ name, query, status: r.status, link: r.headers.get('link') }).toEqual({
          name,
          query,
          status: 200,
          link: null,
        })
      }
    }
  })
})

describe('query strings', () => {
  test('parameters no route knows are ignored on every list and every record (the version 0 alias too)', async () => {
    const unknown = 'with_sequences=true&expand=everything&page=3'
    let records = 0
    for (const name of [...RESOURCES, 'project']) {
      const plain = await t.get(`/api/${name}/`)
      const extra = await t.get(`/api/${name}/?${unknown}`)
      expect({ name, status: extra.status, body: extra.json }).toEqual({ name, status: 200, body: plain.json })
      const id = plain.json[0]?.id ?? 1
      const one = await t.get(`/api/${name}/${id}/`)
      const oneExtra = await t.get(`/api/${name}/${id}/?${unknown}`)
      expect({ name, status: oneExtra.status, body: oneExtra.json }).toEqual({
        name,
        status: one.status,
        body: one.json,
      })
      if (one.status === 200) records++
    }
    // Not only 404s compared: most resources had a record.
    expect(records).toBeGreaterThanOrEqual(9)
  })

  test('"+" is a space and %2B a plus, in a filter', async () => {
    const spaced = await t.post('/api/videoassets/', {
      name: 'spaced',
      path_file: `${root}/Show/a b.mov`,
      production: show.id,
    })
    const plus = await t.post('/api/videoassets/', {
      name: 'plus',
      path_file: `${root}/Show/a+b.mov`,
      production: show.id,
    })
    expect([spaced.status, plus.status]).toEqual([201, 201])
    const folder = encodeURIComponent(`${root}/Show/`)
    const byPath = async (spelled: string) =>
      (await t.get(`/api/videoassets/?path_file=${folder}${spelled}`)).json.map((a: { id: number }) => a.id)
    expect(await byPath('a+b.mov')).toEqual([spaced.json.id])
    expect(await byPath('a%20b.mov')).toEqual([spaced.json.id])
    expect(await byPath('a%2Bb.mov')).toEqual([plus.json.id])
  })
})
