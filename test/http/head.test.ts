// The request line and headers checked before anything else reads them (issue 10, points 6 and
// 8), through app.handle: oversized headers and URLs the router cannot read. The same through a
// listening server, with raw Host headers and Bun's own limits, is in server.test.ts.
import { afterAll, describe, expect, test } from 'bun:test'
import { MAX_HEADER_BYTES } from '../../src/http/head.ts'
import { testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

const t = testApp()
afterAll(() => t.cleanup())

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)

describe('the request line and headers', () => {
  test(`headers over ${MAX_HEADER_BYTES} bytes: 431 headers_too_large, before the key is looked at`, async () => {
    expect((await t.get('/api/health', { headers: { 'x-filler': 'a'.repeat(MAX_HEADER_BYTES - 200) } })).status).toBe(
      200,
    )
    expectError(
      await t.get('/api/health', { headers: { 'x-filler': 'a'.repeat(MAX_HEADER_BYTES) } }),
      431,
      'headers_too_large',
    )
    expectError(
      await t.get('/api/devices/', { key: null, headers: { cookie: 'a'.repeat(MAX_HEADER_BYTES) } }),
      431,
      'headers_too_large',
    )
    expectError(await t.get(`/api/devices/?name=${'a'.repeat(MAX_HEADER_BYTES)}`), 431, 'headers_too_large')
  })

  test('a URL that is not http://HOST/path (no usable Host) is 400 invalid_host, before the key or the route', async () => {
    for (const url of ['https://example.com/api/health', 'https://x/api/devices/']) {
      const r = await t.app.handle(
        new Request(url, { method: 'POST', body: nested(100_000), headers: { 'content-type': 'application/json' } }),
      )
      expectError({ status: r.status, text: '', json: await r.json() }, 400, 'invalid_host')
    }
  })
})
