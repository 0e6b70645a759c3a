// The docs assets sent compressed (issue 27, point 6): brotli when the client accepts it, else
// gzip, else as they are, with Vary and the length of what is sent; through a listening server,
// so that Content-Length is the one on the wire. The compiled executable: test/cli/e2e.test.ts.
import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import { brotliDecompressSync } from 'node:zlib'
import { codingFor } from '../../src/http/docs.ts'
import { testApp } from '../helpers/app.ts'

const t = testApp()
let server: ReturnType<typeof Bun.serve>
beforeAll(() => {
  server = Bun.serve({ port: 0, fetch: (request) => t.app.handle(request) })
})
afterAll(() => {
  server.stop(true)
  t.cleanup()
})

/** The asset as sent: fetch's own decompression off, so the body is the bytes on the wire. */
async function asset(name: string, acceptEncoding: string | undefined, method = 'GET') {
  // Without the header fetch would send its own Accept-Encoding; an empty value is no coding.
  const r = await fetch(`http://127.0.0.1:${server.port}/api/docs/assets/${name}`, {
    method,
    headers: { 'accept-encoding': acceptEncoding ?? '' },
    decompress: false,
  })
  const body = new Uint8Array(await r.arrayBuffer())
  return {
    status: r.status,
    encoding: r.headers.get('content-encoding'),
    vary: r.headers.get('vary'),
    length: r.headers.get('content-length'),
    body,
  }
}

const decode = (encoding: string | null, body: Uint8Array<ArrayBuffer>) =>
  encoding === 'br' ? new Uint8Array(brotliDecompressSync(body)) : encoding === 'gzip' ? Bun.gunzipSync(body) : body

describe.each([['swagger-ui-bundle.js'], ['swagger-ui.css']])('%s', (name) => {
  let identity: Uint8Array
  beforeAll(async () => {
    identity = (await asset(name, undefined)).body
  })

  test.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['identity', null],
    ['gzip;q=0, br', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['BR;Q=0.0, gzip;q=0.5', 'gzip'],
    ['gzip, deflate', 'gzip'],
    ['gzip, deflate, br, zstd', 'br'],
    ['*', 'br'],
    ['*;q=0, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', null],
    ['deflate', null],
    [undefined, null],
  ])('Accept-Encoding %p: sent as %p, the same bytes once decoded', async (accept, expected) => {
    const r = await asset(name, accept)
    expect({ status: r.status, encoding: r.encoding, vary: r.vary, length: r.length }).toEqual({
      status: 200,
      encoding: expected,
      vary: 'Accept-Encoding',
      length: String(r.body.length),
    })
    expect(Buffer.from(decode(r.encoding, r.body)).equals(Buffer.from(identity))).toBe(true)
    if (expected) expect(r.body.length).toBeLessThan(identity.length / 3)
  })

  test('HEAD: the headers of the GET, with the length of the body that GET sends, and no body', async () => {
    for (const accept of ['br', 'gzip', undefined]) {
      const get = await asset(name, accept)
      const head = await asset(name, accept, 'HEAD')
      expect({ ...head, body: head.body.length }).toEqual({ ...get, body: 0 })
    }
  })
})

test('the bundle is over 1 MB as it is and about 460 KB gzipped', async () => {
  expect((await asset('swagger-ui-bundle.js', undefined)).body.length).toBeGreaterThan(1_500_000)
  expect((await asset('swagger-ui-bundle.js', 'gzip')).body.length).toBeLessThan(480_000)
})

test('each coding is made once and then kept', async () => {
  await asset('swagger-ui-bundle.js', 'gzip')
  const gzip = spyOn(Bun, 'gzipSync')
  try {
    const [a, b] = [await asset('swagger-ui-bundle.js', 'gzip'), await asset('swagger-ui-bundle.js', 'gzip')]
    expect(gzip).not.toHaveBeenCalled()
    expect(Buffer.from(a.body).equals(Buffer.from(b.body))).toBe(true)
  } finally {
    gzip.mockRestore()
  }
})

test('codingFor: q values with spaces, x-gzip, junk', () => {
  expect(['br ; q=1', 'gzip ;q = 0.001', 'x-gzip', 'br;q=abc, gzip', ' , ,', ''].map(codingFor)).toEqual([
    'br',
    'gzip',
    'gzip',
    'gzip',
    undefined,
    undefined,
  ])
})
