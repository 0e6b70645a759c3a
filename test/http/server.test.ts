// A listening server reached with raw requests (issue 10, points 6 and 8): the Host header as
// clients really send it (a short NAS name, an IP, none), headers and bodies over the limits that
// Bun's own HTTP layer enforces. Every answer that comes from Reelhouse is the envelope; the one
// Bun sends alone (headers over its own limit) is named as such.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { HTTP_HEADER_LIMIT, MAX_HEADER_BYTES } from '../../src/http/head.ts'
import { errorEntry, folders } from '../helpers/envelope.ts'
import { type RawReply, type Server, killAll, rawRequest, startServe } from '../helpers/process.ts'

const dirs = folders()
afterAll(async () => {
  await killAll()
  dirs.cleanup()
})

/** A request as bytes: request line, Host (or none), other headers, body. */
function http(line: string, host: string | null, headers: Record<string, string> = {}, body = '') {
  const lines = [
    line,
    ...(host === null ? [] : [`Host: ${host}`]),
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    'Connection: close',
  ]
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
  return `${lines.join('\r\n')}\r\n\r\n${body}`
}

const error = (reply: RawReply) => ({ status: reply.status, json: reply.json })
const envelope = (status: number, code: string) => ({ status, json: { errors: [errorEntry(status, code)] } })

describe('serve on a free port', () => {
  let server: Server
  let key: string
  const send = (request: string) => rawRequest(server.port, request)

  beforeAll(async () => {
    server = await startServe(join(dirs.make('reelhouse-raw-'), 'data'))
    key = (await server.proc.waitFor('stdout', /^([0-9a-f]{40})$/m))[1]!
  })
  afterAll(async () => {
    expect(await server.proc.stop('SIGTERM')).toBe(0)
  })

  // Elysia used to find the path from offset 11 of "http://HOST/path" (elysia issue 748): with a
  // Host of 1 to 3 characters it cut into the path, so every path with a final slash was 404, and
  // "/zzz/api/devices/" reached the devices route while the auth hook saw a path outside /api/.
  const HOSTS = ['x', 'ab', 'nas', 'localhost', '127.0.0.1', '192.168.1.20', '[::1]'].flatMap((h) => [h, `${h}:8000`])

  test.each(HOSTS)('Host: %s routes on the real path', async (host) => {
    const health = await send(http('GET /api/health HTTP/1.1', host))
    expect({ status: health.status, json: health.json }).toEqual({
      status: 200,
      json: { status: 'ok', version: expect.any(String) },
    })
    for (const path of ['/api/devices/', '/api/devices']) {
      const list = await send(http(`GET ${path} HTTP/1.1`, host, { Authorization: `Token ${key}` }))
      expect({ path, status: list.status, json: list.json }).toEqual({ path, status: 200, json: [] })
    }
    expect(error(await send(http('GET /api/nothing/ HTTP/1.1', host, { Authorization: `Token ${key}` })))).toEqual(
      envelope(404, 'not_found'),
    )
  })

  test.each(HOSTS)(
    'Host: %s, no key: a POST is 401 before its body is parsed, and /zzz/api/... is no API path',
    async (host) => {
      const deep = '['.repeat(100_000) + ']'.repeat(100_000)
      const headers = { 'Content-Type': 'application/json' }
      expect(error(await send(http('POST /api/devices/ HTTP/1.1', host, headers, deep)))).toEqual(
        envelope(401, 'not_authenticated'),
      )
      expect(error(await send(http('POST /api/devices HTTP/1.1', host, headers, deep)))).toEqual(
        envelope(401, 'not_authenticated'),
      )
      expect(error(await send(http('POST /zzz/api/devices/ HTTP/1.1', host, headers, '{}')))).toEqual(
        envelope(404, 'not_found'),
      )
    },
  )

  test('no usable Host (HTTP/1.0 without one, or an empty one): 400 invalid_host, not another path', async () => {
    expect(error(await send(http('GET /api/health HTTP/1.0', null)))).toEqual(envelope(400, 'invalid_host'))
    expect(
      error(await send(http('POST /zzzzzz/api/devices/ HTTP/1.0', null, { 'Content-Type': 'application/json' }, '{}'))),
    ).toEqual(envelope(400, 'invalid_host'))
    expect(error(await send(http('GET /api/devices/ HTTP/1.1', '', { Authorization: `Token ${key}` })))).toEqual(
      envelope(400, 'invalid_host'),
    )
  })

  test(`headers over ${MAX_HEADER_BYTES} bytes: 431 headers_too_large in the envelope, up to Bun's own limit`, async () => {
    const big = (size: number) => http('GET /api/health HTTP/1.1', 'nas', { 'X-Filler': 'a'.repeat(size) })
    expect((await send(big(MAX_HEADER_BYTES - 500))).status).toBe(200)
    expect(error(await send(big(MAX_HEADER_BYTES + 100)))).toEqual(envelope(431, 'headers_too_large'))
    expect(error(await send(big(HTTP_HEADER_LIMIT - 1000)))).toEqual(envelope(431, 'headers_too_large'))
    expect(error(await send(http(`GET /api/devices/?name=${'a'.repeat(MAX_HEADER_BYTES)} HTTP/1.1`, 'nas')))).toEqual(
      envelope(431, 'headers_too_large'),
    )
    // Beyond Bun's limit its HTTP parser answers alone, before any of our code runs (docs/api.md).
    expect(await send(big(HTTP_HEADER_LIMIT + 1000))).toMatchObject({ status: 431, text: '' })
  })

  test("a body declared over 128 MiB (Bun's own limit) is our 413 too_large", async () => {
    const request = http('POST /api/devices/ HTTP/1.1', 'nas', {
      Authorization: `Token ${key}`,
      'Content-Type': 'application/json',
      'Content-Length': String(10 * 2 ** 30),
    })
    expect(error(await send(request))).toEqual(envelope(413, 'too_large'))
  })
})
