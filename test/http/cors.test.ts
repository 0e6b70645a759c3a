// CORS (issue 11, point 7): off by default; with allowOrigins (serve --allow-origin), preflights
// from those origins answer 204 without a key, and every answer to them, errors included, names
// the origin and exposes the headers clients read. Any other origin gets no CORS header.
import { afterAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { readResponse, testApp } from '../helpers/app.ts'
import { expectError, folders } from '../helpers/envelope.ts'

const PANEL = 'https://panel.example:8443'
const OTHER = 'https://elsewhere.example'

const dirs = folders()
const t = testApp(dirs.make('reelhouse-data-'))
const corsApp = createApp(t.core, { allowOrigins: [PANEL, 'http://localhost:3000'] })
afterAll(() => {
  t.cleanup()
  dirs.cleanup()
})

type App = { handle(r: Request): Promise<Response> }
const send = async (app: App, method: string, path: string, headers: Record<string, string>) =>
  readResponse(await app.handle(new Request(`http://localhost${path}`, { method, headers })))
const preflight = (app: App, path: string, origin: string, method = 'POST') =>
  send(app, 'OPTIONS', path, {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': 'authorization, content-type',
  })
const withKey = (origin: string) => ({ origin, authorization: `Token ${t.adminKey}` })

/** The Access-Control-* headers and Vary of an answer. */
const corsHeaders = (r: { headers: Headers }) =>
  Object.fromEntries([...r.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary'))

const EXPOSED = {
  'access-control-allow-origin': PANEL,
  'access-control-expose-headers': 'X-Total-Count, Link, X-Request-Id, Location',
  vary: 'Origin',
}

describe('with --allow-origin', () => {
  test('a page for the panel is a Response at once with the headers and its request id, and a preflight has its request id', async () => {
    const out = corsApp.fetch(new Request('http://localhost/api/devices/?limit=1', { headers: withKey(PANEL) }))
    expect(out instanceof Response).toBe(true)
    const page = out as Response
    expect(corsHeaders(page)).toEqual(EXPOSED)
    expect(page.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/)
    expect(Array.isArray(await page.json())).toBe(true)
    const r = await preflight(corsApp, '/api/devices/', PANEL)
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/)
  })

  test('a preflight from the origin answers 204 with no body and no key, on every API path', async () => {
    const paths = [
      '/api/',
      '/api',
      '/api/ping/',
      '/api/devices/',
      '/api/devices/1/',
      '/api/projectassets/3/addasset/',
      '/api/asset/import/',
      '/api/no-such-thing/',
    ]
    for (const path of paths) {
      const r = await preflight(corsApp, path, PANEL)
      expect({ path, status: r.status, text: r.text, headers: corsHeaders(r) }).toEqual({
        path,
        status: 204,
        text: '',
        headers: {
          'access-control-allow-origin': PANEL,
          'access-control-allow-methods': 'GET, POST, PATCH, PUT, DELETE, HEAD',
          'access-control-allow-headers': 'Authorization, Content-Type, Accept',
          'access-control-max-age': '600',
          vary: 'Origin',
        },
      })
    }
    // Each allowed origin is answered with itself, never with the list.
    expect(
      (await preflight(corsApp, '/api/devices/', 'http://localhost:3000', 'GET')).headers.get(
        'access-control-allow-origin',
      ),
    ).toBe('http://localhost:3000')
  })

  test('answers to the origin name it and expose X-Total-Count, Link, X-Request-Id and Location', async () => {
    const r = await send(corsApp, 'GET', '/api/devices/?limit=1', withKey(PANEL))
    expect(r.status).toBe(200)
    expect(corsHeaders(r)).toEqual(EXPOSED)
    expect(r.headers.get('x-total-count')).toBe('0')
  })

  test('error answers carry them too, so that the page can read why: 401, 404, 400, 405', async () => {
    const replies = [
      [await send(corsApp, 'GET', '/api/devices/', { origin: PANEL }), 401, 'not_authenticated'],
      [
        await send(corsApp, 'GET', '/api/devices/', { origin: PANEL, authorization: 'Token nonsense' }),
        401,
        'authentication_failed',
      ],
      [await send(corsApp, 'GET', '/api/devices/999/', withKey(PANEL)), 404, 'not_found'],
      [await send(corsApp, 'GET', '/api/devices/?limit=x', withKey(PANEL)), 400, 'invalid'],
      [await send(corsApp, 'PUT', '/api/devices/', withKey(PANEL)), 405, 'method_not_allowed'],
    ] as const
    for (const [r, status, code] of replies)
      expect({ status: r.status, code: r.json.errors[0].code, headers: corsHeaders(r) }).toEqual({
        status,
        code,
        headers: EXPOSED,
      })
  })

  test('another origin, or none, gets no Access-Control header (only Vary: Origin), and its preflight is no 204', async () => {
    for (const headers of [
      withKey(OTHER),
      withKey('https://panel.example'),
      { authorization: `Token ${t.adminKey}` },
    ]) {
      const r = await send(corsApp, 'GET', '/api/devices/', headers)
      expect({ headers, status: r.status, cors: corsHeaders(r) }).toEqual({
        headers,
        status: 200,
        cors: { vary: 'Origin' },
      })
    }
    // Treated as any OPTIONS request: the key is checked first, then the method is not served.
    const refused = await preflight(corsApp, '/api/devices/', OTHER)
    expectError(refused, 401, 'not_authenticated')
    expect(corsHeaders(refused)).toEqual({ vary: 'Origin' })
  })

  test('an OPTIONS without Access-Control-Request-Method is no preflight: 405 as before, readable by the page', async () => {
    const r = await send(corsApp, 'OPTIONS', '/api/devices/', withKey(PANEL))
    expectError(r, 405, 'method_not_allowed')
    expect(corsHeaders(r)).toEqual(EXPOSED)
  })
})

describe('without --allow-origin (the default)', () => {
  test('no CORS header for any origin, and a preflight is refused as any OPTIONS request is', async () => {
    const r = await send(t.app, 'GET', '/api/devices/?limit=1', withKey(PANEL))
    expect(r.status).toBe(200)
    expect(corsHeaders(r)).toEqual({})
    const denied = await preflight(t.app, '/api/devices/', PANEL)
    expectError(denied, 401, 'not_authenticated')
    expect(corsHeaders(denied)).toEqual({})
    const withKeyDenied = await send(t.app, 'OPTIONS', '/api/devices/', {
      ...withKey(PANEL),
      'access-control-request-method': 'GET',
    })
    expectError(withKeyDenied, 405, 'method_not_allowed')
    expect(corsHeaders(withKeyDenied)).toEqual({})
  })
})
