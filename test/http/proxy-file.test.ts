// GET /api/{video,audio,image}assets/{id}/proxy/ (docs/api.md, Playing a proxy): the proxy file
// with Range (206, 416), If-Range, conditional GETs, validators and the type by extension;
// readable as the record is; only a regular file inside the production's proxy_root, reached
// without following a link; the stream owns its descriptor and never holds the file whole.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SESSION_COOKIE } from '../../src/http/auth.ts'
import { readResponse, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import { waitFor } from '../helpers/wait.ts'

const t = testApp()
afterAll(() => t.cleanup())
const outside = tempDir('reelhouse-outside-')
afterAll(() => rmSync(outside, { recursive: true, force: true }))

const { root, production } = await seedProduction(t, 'Show')
const { production: other } = await seedProduction(t, 'Other')
const proxyRoot: string = production.proxy_root
mkdirSync(proxyRoot, { recursive: true })

/** 3 MiB and a bit of bytes that differ from one position to the next: several chunks of a stream. */
const CONTENT = Buffer.from(Array.from({ length: 3 * 1024 * 1024 + 123 }, (_, i) => (i * 7 + (i >> 8)) & 0xff))

let clips = 0
/** An asset of `kind` in `production`, its proxy set to `proxy` (what an import writes when it made one). */
async function asset(kind: 'video' | 'audio' | 'image', proxy: string, prod = production) {
  const path = join(root, 'Show', `clip${++clips}.mov`)
  writeFileSync(path, 'essence')
  const r = await t.post(`/api/${kind}assets/`, { name: `clip ${clips}`, path_file: path, production: prod.id })
  if (r.status !== 201) throw new Error(r.text)
  t.db.$client.run('UPDATE media_assets SET path_proxy = ? WHERE id = ?', [proxy, r.json.id])
  return r.json.id as number
}

const video = await asset('video', join(proxyRoot, 'v.mp4'))
writeFileSync(join(proxyRoot, 'v.mp4'), CONTENT)
const get = (path: string, headers: Record<string, string> = {}, key?: string) => t.get(path, { headers, key })
const bytesOf = async (path: string, headers: Record<string, string> = {}) => {
  const response = await t.app.handle(
    new Request(`http://localhost${path}`, { headers: { authorization: `Token ${t.adminKey}`, ...headers } }),
  )
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) }
}

describe('the whole file and ranges', () => {
  test('200: the bytes, with type, length, Accept-Ranges, a strong ETag and Last-Modified; with and without the final slash, whatever Accept asks for', async () => {
    for (const path of [`/api/videoassets/${video}/proxy`, `/api/videoassets/${video}/proxy/`]) {
      for (const accept of [undefined, 'video/*', '*/*', 'application/json']) {
        const r = await bytesOf(path, accept ? { accept } : {})
        expect({
          status: r.status,
          equal: r.body.equals(CONTENT),
          type: r.headers.get('content-type'),
          length: r.headers.get('content-length'),
          ranges: r.headers.get('accept-ranges'),
          etag: /^"[0-9a-z-]+"$/.test(r.headers.get('etag')!),
          modified: Date.parse(r.headers.get('last-modified')!) > 0,
          cache: r.headers.get('cache-control'),
          sniff: r.headers.get('x-content-type-options'),
        }).toEqual({
          status: 200,
          equal: true,
          type: 'video/mp4',
          length: String(CONTENT.length),
          ranges: 'bytes',
          etag: true,
          modified: true,
          cache: 'private, no-cache',
          sniff: 'nosniff',
        })
      }
    }
  })

  test('206 for one range: START-END, START-, -SUFFIX, an END past the end; Content-Range and the bytes of it', async () => {
    const size = CONTENT.length
    const cases: [string, number, number][] = [
      ['bytes=10-19', 10, 19],
      ['bytes=0-0', 0, 0],
      [`bytes=${size - 3}-`, size - 3, size - 1],
      ['bytes=-5', size - 5, size - 1],
      [`bytes=1000-${size + 5000}`, 1000, size - 1],
      [`bytes=-${size * 2}`, 0, size - 1],
      ['BYTES=300000-2000000', 300000, 2000000],
    ]
    for (const [range, start, end] of cases) {
      const r = await bytesOf(`/api/videoassets/${video}/proxy/`, { range })
      expect({
        range,
        status: r.status,
        contentRange: r.headers.get('content-range'),
        length: r.headers.get('content-length'),
        equal: r.body.equals(CONTENT.subarray(start, end + 1)),
      }).toEqual({
        range,
        status: 206,
        contentRange: `bytes ${start}-${end}/${size}`,
        length: String(end - start + 1),
        equal: true,
      })
    }
  })

  test('416 for a range of no byte, in the envelope with Content-Range: bytes */SIZE', async () => {
    for (const range of [
      `bytes=${CONTENT.length}-`,
      `bytes=${CONTENT.length + 10}-${CONTENT.length + 20}`,
      'bytes=-0',
      'bytes=99999999999999999999-',
    ]) {
      const r = await get(`/api/videoassets/${video}/proxy/`, { range })
      expectError(r, 416, 'range_not_satisfiable')
      expect({ range, contentRange: r.headers.get('content-range') }).toEqual({
        range,
        contentRange: `bytes */${CONTENT.length}`,
      })
    }
  })

  test('several ranges, another unit or a malformed Range: the whole file (200)', async () => {
    for (const range of ['bytes=0-1,5-6', 'items=0-5', 'bytes=abc', 'bytes=9-5', 'bytes=-', 'bytes']) {
      const r = await bytesOf(`/api/videoassets/${video}/proxy/`, { range })
      expect({
        range,
        status: r.status,
        equal: r.body.equals(CONTENT),
        contentRange: r.headers.get('content-range'),
      }).toEqual({ range, status: 200, equal: true, contentRange: null })
    }
  })

  test('If-Range: the current ETag or Last-Modified gives the range; another one (the file changed) the whole file', async () => {
    const whole = await bytesOf(`/api/videoassets/${video}/proxy/`)
    const etag = whole.headers.get('etag')!
    const modified = whole.headers.get('last-modified')!
    const status = async (ifRange: string) =>
      (await bytesOf(`/api/videoassets/${video}/proxy/`, { range: 'bytes=0-9', 'if-range': ifRange })).status
    expect([
      await status(etag),
      await status(modified),
      await status('"other"'),
      await status(`W/${etag}`),
      await status('Thu, 01 Jan 1970 00:00:00 GMT'),
    ]).toEqual([206, 206, 200, 200, 200])
  })

  test('If-None-Match with the ETag, or If-Modified-Since not before Last-Modified: 304 without a body', async () => {
    const whole = await bytesOf(`/api/videoassets/${video}/proxy/`)
    const etag = whole.headers.get('etag')!
    for (const headers of [
      { 'if-none-match': etag } as Record<string, string>,
      { 'if-none-match': `"x", W/${etag}` },
      { 'if-none-match': '*' },
      { 'if-modified-since': whole.headers.get('last-modified')! },
    ]) {
      const r = await bytesOf(`/api/videoassets/${video}/proxy/`, headers)
      expect({ status: r.status, length: r.body.length, etag: r.headers.get('etag') }).toEqual({
        status: 304,
        length: 0,
        etag,
      })
    }
    expect((await bytesOf(`/api/videoassets/${video}/proxy/`, { 'if-none-match': '"other"' })).status).toBe(200)
  })

  test('the type follows the extension: audio/mp4, image/jpeg; an unknown one is application/octet-stream', async () => {
    writeFileSync(join(proxyRoot, 'a.m4a'), 'audio')
    writeFileSync(join(proxyRoot, 'i.JPG'), 'image')
    writeFileSync(join(proxyRoot, 'x.bin'), 'other')
    const audio = await asset('audio', join(proxyRoot, 'a.m4a'))
    const image = await asset('image', join(proxyRoot, 'i.JPG'))
    const odd = await asset('video', join(proxyRoot, 'x.bin'))
    const types = [
      await get(`/api/audioassets/${audio}/proxy`),
      await get(`/api/imageassets/${image}/proxy`),
      await get(`/api/videoassets/${odd}/proxy`),
    ]
    expect(types.map((r) => [r.status, r.headers.get('content-type'), r.text])).toEqual([
      [200, 'audio/mp4', 'audio'],
      [200, 'image/jpeg', 'image'],
      [200, 'application/octet-stream', 'other'],
    ])
  })

  test('HEAD: the headers of the GET and no body; an empty proxy: 200 of length 0', async () => {
    const server = t.app.listen({ port: 0, hostname: '127.0.0.1' }).server!
    try {
      const head = await readResponse(
        await fetch(`http://127.0.0.1:${server.port}/api/videoassets/${video}/proxy/`, {
          method: 'HEAD',
          headers: { authorization: `Token ${t.adminKey}`, range: 'bytes=0-99' },
        }),
      )
      expect({
        status: head.status,
        text: head.text,
        length: head.headers.get('content-length'),
        range: head.headers.get('content-range'),
      }).toEqual({ status: 206, text: '', length: '100', range: `bytes 0-99/${CONTENT.length}` })
    } finally {
      await server.stop(true)
    }
    writeFileSync(join(proxyRoot, 'empty.mp4'), '')
    const empty = await asset('video', join(proxyRoot, 'empty.mp4'))
    const r = await get(`/api/videoassets/${empty}/proxy/`)
    expect({ status: r.status, text: r.text, length: r.headers.get('content-length') }).toEqual({
      status: 200,
      text: '',
      length: '0',
    })
    expectError(await get(`/api/videoassets/${empty}/proxy/`, { range: 'bytes=0-' }), 416, 'range_not_satisfiable')
  })
})

describe('who may read it, and which files', () => {
  test("readable as the record: a user who cannot read the production gets 404, one who can 200; another kind's path 404", async () => {
    const reader = t.makeUser('reader', { read: [production.id] })
    const stranger = t.makeUser('stranger', { read: [other.id] })
    expect((await get(`/api/videoassets/${video}/proxy/`, {}, reader)).status).toBe(200)
    expectError(await get(`/api/videoassets/${video}/proxy/`, {}, stranger), 404, 'not_found')
    expectError(await get(`/api/audioassets/${video}/proxy/`), 404, 'not_found')
    expectError(await get('/api/videoassets/999999/proxy/'), 404, 'not_found')
    expectError(await get('/api/videoassets/abc/proxy/'), 404, 'not_found')
    expectError(await get(`/api/videoassets/${video}/proxy/`, {}, null as unknown as string), 401, 'not_authenticated')
  })

  test('the page plays it with its session cookie (a media element sends no Origin; Sec-Fetch-Site same-origin)', async () => {
    const login = await t.request('POST', '/api/session/', {
      key: null,
      body: { username: 'admin', password: t.adminKey },
    })
    const cookie = `${SESSION_COOKIE}=${/=([^;]*)/.exec(login.headers.get('set-cookie')!)![1]}`
    const media = {
      cookie,
      'sec-fetch-site': 'same-origin',
      'sec-fetch-mode': 'no-cors',
      'sec-fetch-dest': 'video',
      accept: '*/*',
      range: 'bytes=0-',
    }
    const r = await t.get(`/api/videoassets/${video}/proxy/`, { key: null, headers: media })
    expect({ status: r.status, range: r.headers.get('content-range') }).toEqual({
      status: 206,
      range: `bytes 0-${CONTENT.length - 1}/${CONTENT.length}`,
    })
    expectError(
      await t.get(`/api/videoassets/${video}/proxy/`, {
        key: null,
        headers: { ...media, 'sec-fetch-site': 'same-site' },
      }),
      403,
      'permission_denied',
    )
  })

  test('no proxy, a proxy gone, or one that is a folder: 404 in the envelope', async () => {
    const none = await asset('video', '')
    expectError(await get(`/api/videoassets/${none}/proxy/`), 404, 'not_found')
    const gone = await asset('video', join(proxyRoot, 'gone.mp4'))
    expectError(await get(`/api/videoassets/${gone}/proxy/`), 404, 'not_found')
    mkdirSync(join(proxyRoot, 'folder.mp4'))
    const folder = await asset('video', join(proxyRoot, 'folder.mp4'))
    expectError(await get(`/api/videoassets/${folder}/proxy/`), 404, 'not_found')
  })

  test("never a file outside the production's proxy_root: a path outside, with .., through a linked file or a linked folder", async () => {
    writeFileSync(join(outside, 'secret.mp4'), 'secret')
    writeFileSync(join(root, 'Show', 'essence.mp4'), 'essence, not a proxy')
    symlinkSync(join(outside, 'secret.mp4'), join(proxyRoot, 'link.mp4'))
    symlinkSync(outside, join(proxyRoot, 'linked-folder'))
    const paths = [
      join(outside, 'secret.mp4'),
      join(root, 'Show', 'essence.mp4'),
      `${proxyRoot}../essence.mp4`,
      `${proxyRoot}sub/../../essence.mp4`,
      join(proxyRoot, 'link.mp4'),
      join(proxyRoot, 'linked-folder', 'secret.mp4'),
      // The proxy_root of another production.
      join(other.proxy_root, 'v.mp4'),
    ]
    mkdirSync(other.proxy_root, { recursive: true })
    writeFileSync(join(other.proxy_root, 'v.mp4'), 'of the other production')
    for (const path of paths) {
      const id = await asset('video', path)
      const r = await get(`/api/videoassets/${id}/proxy/`)
      expect({
        path,
        status: r.status,
        code: r.json?.errors?.[0]?.code,
        secret: /secret|essence|other production/.test(r.text),
      }).toEqual({ path, status: 404, code: 'not_found', secret: false })
    }
  })
})

describe('a proxy_root that leads outside its device through a symbolic link', () => {
  // The red team's attack: the production's proxy_root (or the storage root above it) swapped for a
  // link to a folder outside every device, after the root was checked. The outside proxy named as the
  // asset's is neither served nor removed; both answers say why, in the words a proxy remake uses.
  test('GET answers 409 and DELETE answers 409, for the proxy_root and for the storage root above it; the outside files stay', async () => {
    for (const swapped of ['proxy_root', 'storage_root'] as const) {
      const { production: linked } = await seedProduction(t, `Linked ${swapped}`)
      const away = tempDir('reelhouse-away-')
      t.owned.push(away)
      const target = swapped === 'proxy_root' ? linked.proxy_root : linked.storage_root
      const proxyPath = join(linked.proxy_root, 'p.mp4')
      const outsideProxy = swapped === 'proxy_root' ? join(away, 'p.mp4') : join(away, 'proxies', 'p.mp4')
      mkdirSync(join(outsideProxy, '..'), { recursive: true })
      writeFileSync(outsideProxy, 'the outside file')
      const id = await asset('video', proxyPath, linked)
      rmSync(target, { recursive: true, force: true })
      symlinkSync(away, target.replace(/\/$/, ''))
      const served = await get(`/api/videoassets/${id}/proxy/`)
      expectError(served, 409, 'conflict')
      expect({
        swapped,
        outside: served.text.includes('the outside file'),
        says: /leads outside its device through a symbolic link/.test(served.text),
      }).toEqual({ swapped, outside: false, says: true })
      const removed = await t.request('DELETE', `/api/videoassets/${id}/`)
      expectError(removed, 409, 'conflict')
      expect({
        swapped,
        says: /leads outside its device through a symbolic link/.test(removed.text),
        kept: readFileSync(outsideProxy, 'utf8'),
        record: (await get(`/api/videoassets/${id}/`)).status,
      }).toEqual({ swapped, says: true, kept: 'the outside file', record: 200 })
    }
  })
})

describe('the stream', () => {
  const openFds = () => readdirSync('/proc/self/fd').length

  test('the descriptor is closed once the body is read, and when the client goes away early', async () => {
    const before = openFds()
    for (let i = 0; i < 5; i++) await bytesOf(`/api/videoassets/${video}/proxy/`)
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.app.handle(
          new Request(`http://localhost/api/videoassets/${video}/proxy/`, {
            headers: { authorization: `Token ${t.adminKey}` },
          }),
        ),
      ),
    )
    expect(openFds()).toBeGreaterThanOrEqual(before + 5)
    for (const response of responses) {
      const reader = response.body!.getReader()
      await reader.read()
      await reader.cancel()
    }
    // The runtime sends the file by the descriptor's own name; the descriptor is closed a few seconds after (storage/read.ts fileBody).
    await waitFor(() => openFds() <= before, 'the descriptors closed', { ms: 30_000 })
  }, 60_000)

  test('over HTTP: a player reading a range from the middle gets exactly those bytes, then goes away', async () => {
    const server = t.app.listen({ port: 0, hostname: '127.0.0.1' }).server!
    try {
      const url = `http://127.0.0.1:${server.port}/api/videoassets/${video}/proxy/`
      const part = await fetch(url, {
        headers: { authorization: `Token ${t.adminKey}`, range: 'bytes=1048570-2097160' },
      })
      expect({
        status: part.status,
        equal: Buffer.from(await part.arrayBuffer()).equals(CONTENT.subarray(1048570, 2097161)),
      }).toEqual({ status: 206, equal: true })
      // A body of known length: players and download managers see the size (not a chunked stream).
      for (const range of [undefined, 'bytes=0-', 'bytes=10-19', 'bytes=-5']) {
        const r = await fetch(url, { headers: { authorization: `Token ${t.adminKey}`, ...(range ? { range } : {}) } })
        const body = Buffer.from(await r.arrayBuffer())
        expect({
          range,
          length: r.headers.get('content-length'),
          chunked: r.headers.get('transfer-encoding'),
          got: body.length,
        }).toEqual({
          range,
          length: String(body.length),
          chunked: null,
          got: range === 'bytes=10-19' ? 10 : range === 'bytes=-5' ? 5 : CONTENT.length,
        })
      }
      const controller = new AbortController()
      const early = await fetch(url, { headers: { authorization: `Token ${t.adminKey}` }, signal: controller.signal })
      await early.body!.getReader().read()
      controller.abort()
      const whole = await readResponse(await fetch(url, { headers: { authorization: `Token ${t.adminKey}` } }))
      expect(whole.text.length).toBe(CONTENT.length)
    } finally {
      await server.stop(true)
    }
  })
})
