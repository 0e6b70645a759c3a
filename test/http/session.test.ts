// The web page's sign-in (docs/api.md, Sessions): POST /api/session/ with a user name and a
// password or key sets an HttpOnly, SameSite=Strict cookie of a random 256-bit id stored only
// hashed; the cookie authenticates only requests that come from the page itself (Sec-Fetch-Site,
// Origin); sessions end on sign-out, after 12 idle hours, and when the password changes or a key
// is revoked; failed sign-ins share Basic's slow-down; no 401 ever challenges with Basic. Cookies
// planted by a page on another port of the host: a request counts only when exactly one of its
// session cookies names a live session, every removal covers /, /api and /api/, and over https
// the cookie is __Host-reelhouse_session, the only name taken there.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { HOST_SESSION_COOKIE, SESSION_COOKIE } from '../../src/http/auth.ts'
import { FREE_FAILURES, type PasswordOptions, hashPassword } from '../../src/modules/users/passwords.ts'
import { CODENAMES, createUsers } from '../../src/modules/users/service.ts'
import { IDLE_MS, TOUCH_EVERY_MS, hashSessionId } from '../../src/modules/users/sessions.ts'
import { isoTimestamp } from '../../src/util/time.ts'
import { type TestApp, readResponse, runAtOnce, seedProduction, testApp, writeElsewhere } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import { openEvents } from '../helpers/events.ts'

// Argon2 hashing is CPU work: the bound only ends a test that hangs.
setDefaultTimeout(60_000)

/** Argon2id with the least work it takes. */
const cheapHash = (password: string) =>
  Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: 8, timeCost: 1 })

/** The page's own requests: what a browser sends for a fetch from a page of this server. */
const SAME_ORIGIN = {
  'sec-fetch-site': 'same-origin',
  'sec-fetch-mode': 'cors',
  'sec-fetch-dest': 'empty',
  'x-requested-with': 'XMLHttpRequest',
}

/** A Set-Cookie value (of headers: the first, the session's own; removals of other places follow it): name, value and attributes. */
function cookieOf(from: Headers | string | null) {
  const setCookie = from instanceof Headers ? from.getSetCookie()[0] : from
  if (!setCookie) throw new Error('no Set-Cookie')
  const [pair, ...attributes] = setCookie.split(';').map((s) => s.trim())
  const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)]
  return { name, value, attributes }
}

function pageOf(t: TestApp) {
  /** Signs in from the page (JSON) and answers the session id of the cookie set. */
  async function signIn(username: string, password: string, headers: Record<string, string> = {}) {
    const r = await t.request('POST', '/api/session/', {
      key: null,
      body: { username, password },
      headers: { ...SAME_ORIGIN, origin: 'http://localhost', ...headers },
    })
    if (r.status !== 200) throw new Error(`sign-in: ${r.status} ${r.text}`)
    return cookieOf(r.headers).value
  }
  /** A request of the page with the cookie of `session`. */
  const as = (
    session: string,
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ) =>
    t.request(method, path, {
      key: null,
      body: options.body,
      headers: { ...SAME_ORIGIN, cookie: `other=1; ${SESSION_COOKIE}=${session}`, ...options.headers },
    })
  return { signIn, as }
}

describe('signing in', () => {
  const t = testApp()
  const { signIn, as } = pageOf(t)
  const anaKey = t.makeUser('ana', { perms: ['browser.change_device'] })
  let ready: Promise<void> | undefined
  const setUp = () => (ready ??= cheapHash('correct horse').then((hash) => void t.users.setPassword('ana', hash)))
  afterAll(() => t.cleanup())

  test('nobody signed in: GET answers 200 {"user": null}, never a 401, and no challenge', async () => {
    const r = await t.get('/api/session/', { key: null, headers: SAME_ORIGIN })
    expect({
      status: r.status,
      json: r.json,
      challenge: r.headers.get('www-authenticate'),
      cache: r.headers.get('cache-control'),
    }).toEqual({ status: 200, json: { user: null }, challenge: null, cache: 'no-store' })
    // Without the final slash too.
    expect((await t.get('/api/session', { key: null })).json).toEqual({ user: null })
  })

  test('a password (JSON) or a key (form data): 200 with who, and an HttpOnly, SameSite=Strict cookie of 256 random bits, stored only hashed', async () => {
    await setUp()
    const r = await t.request('POST', '/api/session/', {
      key: null,
      body: { username: 'ana', password: 'correct horse' },
      headers: { ...SAME_ORIGIN, origin: 'http://localhost' },
    })
    const cookie = cookieOf(r.headers)
    expect({ status: r.status, json: r.json, cookie: { ...cookie, value: cookie.value.length } }).toEqual({
      status: 200,
      json: {
        user: {
          id: expect.any(Number),
          username: 'ana',
          is_superuser: false,
          perms: ['browser.change_device'],
          productions: [],
        },
        via: 'session',
      },
      cookie: { name: SESSION_COOKIE, value: 43, attributes: ['Path=/', 'HttpOnly', 'SameSite=Strict'] },
    })
    expect(Buffer.from(cookie.value, 'base64url')).toHaveLength(32)
    const rows = t.db.$client.query<{ id_hash: string }, []>('SELECT id_hash FROM sessions').all()
    expect(rows.map((row) => row.id_hash)).toContain(hashSessionId(cookie.value))
    t.db.$client.run('PRAGMA wal_checkpoint(FULL)')
    const onDisk = [join(t.dataDir, 'reelhouse.db'), join(t.dataDir, 'reelhouse.db-wal')]
      .map((f) => readFileSync(f).toString('latin1'))
      .join('')
    expect(onDisk.includes(cookie.value)).toBe(false)

    const form = await t.request('POST', '/api/session', { key: null, form: { username: 'ana', password: anaKey } })
    expect({
      status: form.status,
      user: form.json.user.username,
      cookie: cookieOf(form.headers).value === cookie.value,
    }).toEqual({ status: 200, user: 'ana', cookie: false })
  })

  test("the cookie authenticates the page's requests: GET (Sec-Fetch-Site) and a write (Origin), and GET /api/session/ says who and how", async () => {
    const session = await signIn('ana', anaKey)
    expect((await as(session, 'GET', '/api/session/')).json).toEqual({
      user: {
        id: expect.any(Number),
        username: 'ana',
        is_superuser: false,
        perms: ['browser.change_device'],
        productions: [],
      },
      via: 'session',
    })
    expect((await as(session, 'GET', '/api/devices/')).status).toBe(200)
    // Without any Sec-Fetch-* or Origin (an older browser, a client holding the cookie itself).
    expect(
      (await t.get('/api/devices/', { key: null, headers: { cookie: `${SESSION_COOKIE}=${session}` } })).status,
    ).toBe(200)
    // A write of the page: Origin of this server; a typed-in URL: Sec-Fetch-Site none.
    const write = await as(session, 'POST', '/api/devices/', {
      body: { name: 'x', path: '/tmp/x' },
      headers: { origin: 'http://localhost' },
    })
    expectError(write, 403, 'permission_denied') // ana may not add devices: authenticated, then refused by her permissions
    expect(write.json.errors[0].detail).toContain('browser.add_device')
    expect((await as(session, 'GET', '/api/devices/', { headers: { 'sec-fetch-site': 'none' } })).status).toBe(200)
  })

  test('from another site or another port of the same host: 403 in the envelope, and the user stays signed in', async () => {
    const session = await signIn('ana', anaKey)
    const refusals: Record<string, string>[] = [
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-origin', origin: 'http://localhost:9999' },
      { 'sec-fetch-site': 'same-origin', origin: 'http://127.0.0.1' },
      { 'sec-fetch-site': 'same-origin', origin: 'null' },
    ]
    for (const headers of refusals) {
      for (const [method, path] of [
        ['GET', '/api/devices/'],
        ['GET', '/api/session/'],
        ['DELETE', '/api/session/'],
        ['POST', '/api/devices/'],
      ] as const) {
        const r = await as(session, method, path, {
          headers,
          body: method === 'POST' ? { name: 'evil', path: '/tmp/evil' } : undefined,
        })
        expectError(r, 403, 'permission_denied')
        expect(r.headers.get('set-cookie')).toBeNull()
      }
    }
    expect(t.db.$client.query("SELECT count(*) AS n FROM devices WHERE name = 'evil'").get()).toEqual({ n: 0 })
    expect((await as(session, 'GET', '/api/session/')).json.user.username).toBe('ana')
    // The page served over https (a reverse proxy keeping the Host): its Origin is taken, with the cookie of that scheme.
    const overHttps = { ...SAME_ORIGIN, origin: 'https://localhost', cookie: `${HOST_SESSION_COOKIE}=${session}` }
    expect((await t.get('/api/devices/', { key: null, headers: overHttps })).status).toBe(200)
  })

  test('a key or Basic behaves as without the cookie: the cookie is not looked at', async () => {
    const session = await signIn('ana', anaKey)
    const cross = {
      cookie: `${SESSION_COOKIE}=${session}`,
      'sec-fetch-site': 'cross-site',
      origin: 'http://evil.example',
    }
    const r = await t.get('/api/session/', { headers: cross })
    expect(r.json).toEqual({
      user: expect.objectContaining({ username: 'admin', is_superuser: true, perms: Object.keys(CODENAMES).sort() }),
      via: 'key',
    })
    const basic = await t.get('/api/session/', {
      key: null,
      headers: { ...cross, authorization: `Basic ${btoa(`ana:${anaKey}`)}` },
    })
    expect(basic.json).toEqual({ user: expect.objectContaining({ username: 'ana' }), via: 'basic' })
    // A bad key is a 401 here as everywhere, never {"user": null}.
    expectError(await t.get('/api/session/', { key: '0'.repeat(40) }), 401, 'authentication_failed')
    // Failing Basic from the page's own fetch, with its cookie: challenged with Token, never Basic (no login dialog).
    const page = { ...SAME_ORIGIN, cookie: `${SESSION_COOKIE}=${session}`, authorization: `Basic ${btoa('ana:wrong')}` }
    const failed = await t.get('/api/devices/', { key: null, headers: page })
    expectError(failed, 401, 'authentication_failed')
    expect(failed.headers.get('www-authenticate')).toBe('Token')
  })

  test('wrong credentials: 401 authentication_failed, the detail of Basic, challenged with Token only', async () => {
    await setUp()
    for (const [username, password] of [
      ['ana', 'wrong'],
      ['nobody', 'correct horse'],
      ['ana', ''],
      ['', ''],
      ['admin', anaKey],
    ]) {
      const r = await t.request('POST', '/api/session/', {
        key: null,
        body: { username, password },
        headers: SAME_ORIGIN,
      })
      expectError(r, 401, 'authentication_failed')
      expect({
        detail: r.json.errors[0].detail,
        challenge: r.headers.get('www-authenticate'),
        cookie: r.headers.get('set-cookie'),
      }).toEqual({ detail: 'Invalid user name, password or key.', challenge: 'Token', cookie: null })
    }
  })

  test('a sign-in from a page of another origin is refused (403) and makes no session', async () => {
    const before = t.db.$client.query('SELECT count(*) AS n FROM sessions').get()
    const r = await t.request('POST', '/api/session/', {
      key: null,
      body: { username: 'ana', password: anaKey },
      headers: { 'sec-fetch-site': 'same-site', origin: 'http://localhost:3000' },
    })
    expectError(r, 403, 'permission_denied')
    expect(t.db.$client.query('SELECT count(*) AS n FROM sessions').get()).toEqual(before)
  })

  test('bad bodies: the envelope, never a 500', async () => {
    expectError(await t.request('POST', '/api/session/', { key: null, body: { username: 'ana' } }), 400, 'required', {
      pointer: '/password',
    })
    expectError(
      await t.request('POST', '/api/session/', { key: null, body: { username: 5, password: 'x' } }),
      400,
      'invalid',
      { pointer: '/username' },
    )
    expectError(
      await t.request('POST', '/api/session/', {
        key: null,
        raw: '{"username":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'parse_error',
    )
    expectError(
      await t.request('POST', '/api/session/', { key: null, raw: 'x', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    )
    expectError(await t.request('PUT', '/api/session/', { key: null }), 405, 'method_not_allowed')
  })

  test('sign-out: 204, the cookie removed and the session gone; the cookie then gets a 401 that removes it, and GET says nobody', async () => {
    const session = await signIn('ana', anaKey)
    const out = await as(session, 'DELETE', '/api/session/', { headers: { origin: 'http://localhost' } })
    const removed = [
      `${HOST_SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure`,
      ...['/', '/api', '/api/'].map((path) => `${SESSION_COOKIE}=; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=0`),
    ]
    expect({ status: out.status, text: out.text, cookies: out.headers.getSetCookie() }).toEqual({
      status: 204,
      text: '',
      cookies: removed,
    })
    expect(
      t.db.$client.query('SELECT count(*) AS n FROM sessions WHERE id_hash = ?').get(hashSessionId(session)),
    ).toEqual({ n: 0 })
    const after = await as(session, 'GET', '/api/devices/')
    expectError(after, 401, 'authentication_failed')
    expect({ challenge: after.headers.get('www-authenticate'), cookies: after.headers.getSetCookie() }).toEqual({
      challenge: 'Token',
      cookies: removed,
    })
    const probe = await as(session, 'GET', '/api/session/')
    expect({ status: probe.status, json: probe.json, cookies: probe.headers.getSetCookie() }).toEqual({
      status: 200,
      json: { user: null },
      cookies: removed,
    })
    // Twice, or with no cookie at all: 204 all the same.
    expect((await as(session, 'DELETE', '/api/session/')).status).toBe(204)
    expect((await t.request('DELETE', '/api/session/', { key: null })).status).toBe(204)
  })

  test('a malformed cookie is no session: 401 on the API, nobody on GET /api/session/', async () => {
    for (const value of ['', 'abc', 'x'.repeat(43), `${'a'.repeat(42)}!`]) {
      expectError(await as(value, 'GET', '/api/devices/'), 401, 'authentication_failed')
      expect((await as(value, 'GET', '/api/session/')).json).toEqual({ user: null })
    }
  })
})

describe('when sessions end', () => {
  const t = testApp()
  const { signIn, as } = pageOf(t)
  afterAll(() => t.cleanup())
  const signedIn = async (session: string) => (await as(session, 'GET', '/api/session/')).json.user !== null

  test("revoking a key of the user (by key, by id, all of them) or changing the password ends all the user's sessions, no one else's", async () => {
    const key = t.makeUser('bo')
    const other = t.makeUser('cy')
    const cy = await signIn('cy', other)
    const revocations = [
      () => t.users.revokeKey(t.users.createKey('bo')),
      () => t.users.revokeKeyById(t.users.keysOf('bo').at(-1)!.id),
      async () => t.users.setPassword('bo', await cheapHash('new one')),
      () => t.users.setPassword('bo', null),
      () => t.users.revokeAll('bo'),
    ]
    for (const revoke of revocations) {
      if (!t.users.keysOf('bo').length) t.users.createKey('bo')
      const sessions = [await signIn('bo', key), await signIn('bo', key)]
      t.users.createKey('bo')
      expect(await Promise.all(sessions.map(signedIn))).toEqual([true, true])
      await revoke()
      expect(await Promise.all(sessions.map(signedIn))).toEqual([false, false])
    }
    expect(await signedIn(cy)).toBe(true)
  })

  test('another process (reelhouse token revoke) ending the sessions: seen on the next request', async () => {
    const key = t.makeUser('di')
    const session = await signIn('di', key)
    writeElsewhere(t, "DELETE FROM sessions WHERE user_id = (SELECT id FROM users WHERE username = 'di')")
    expectError(await as(session, 'GET', '/api/devices/'), 401, 'authentication_failed')
  })

  test('12 hours unused ends a session; a use moves that on, writing last_seen at most once a minute', async () => {
    const key = t.makeUser('ed')
    const session = await signIn('ed', key)
    const hash = hashSessionId(session)
    const lastSeen = () =>
      t.db.$client.query<{ last_seen: string }, [string]>('SELECT last_seen FROM sessions WHERE id_hash = ?').get(hash)
        ?.last_seen
    const setLastSeen = (msAgo: number) =>
      t.db.$client.run('UPDATE sessions SET last_seen = ? WHERE id_hash = ?', [
        isoTimestamp(new Date(Date.now() - msAgo)),
        hash,
      ])

    // Used within the minute: not written (a GET, which reads in one transaction, and a write).
    setLastSeen(TOUCH_EVERY_MS / 2)
    const recent = lastSeen()
    expect((await as(session, 'GET', '/api/devices/')).status).toBe(200)
    expect((await as(session, 'POST', '/api/session/', { body: {} })).status).toBe(400)
    expect(lastSeen()).toBe(recent)
    // Used after 11 hours: still signed in, and last_seen is now (after the GET's read transaction).
    setLastSeen(11 * 3_600_000)
    const before = isoTimestamp(new Date(Date.now() - 1000))
    expect((await as(session, 'GET', '/api/devices/')).status).toBe(200)
    expect(lastSeen()! >= before).toBe(true)
    // 12 hours and a second: ended.
    setLastSeen(IDLE_MS + 1000)
    expectError(await as(session, 'GET', '/api/devices/'), 401, 'authentication_failed')
    expect((await as(session, 'GET', '/api/session/')).json).toEqual({ user: null })
    // Sessions that ended are removed at the next sign-in.
    await signIn('ed', key)
    expect(lastSeen()).toBeUndefined()
  })

  test("a signed-in user's access as it is now: productions and permissions granted later are in the next answer", async () => {
    const { production } = await seedProduction(t, 'Film')
    const key = t.makeUser('fa')
    const session = await signIn('fa', key)
    expect((await as(session, 'GET', '/api/session/')).json.user.productions).toEqual([])
    t.users.grant('fa', String(production.id), 'write')
    t.users.addPerm('fa', 'browser.change_videoasset')
    expect((await as(session, 'GET', '/api/session/')).json.user).toMatchObject({
      productions: [{ id: production.id, level: 'write' }],
      perms: ['browser.change_videoasset'],
    })
    const admin = await signIn('admin', t.adminKey)
    expect((await as(admin, 'GET', '/api/session/')).json.user.productions).toEqual([
      { id: production.id, level: 'write' },
    ])
  })
})

describe('the cookie is __Host-reelhouse_session and Secure when the page is served over https', () => {
  test('--public-url https://..., or an https Origin of our own Host', async () => {
    const t = testApp(undefined, { app: { publicUrl: 'https://mam.example.com' } })
    try {
      t.makeUser('ana')
      const key = t.users.createKey('ana')
      const plain = await t.request('POST', '/api/session/', { key: null, body: { username: 'ana', password: key } })
      expect(cookieOf(plain.headers)).toMatchObject({
        name: HOST_SESSION_COOKIE,
        attributes: ['Path=/', 'HttpOnly', 'SameSite=Strict', 'Secure'],
      })
      // The public URL's origin is ours too (a proxy that passes another Host).
      const viaProxy = await t.request('POST', '/api/session/', {
        key: null,
        body: { username: 'ana', password: key },
        headers: { origin: 'https://mam.example.com' },
      })
      expect(viaProxy.status).toBe(200)
      const session = cookieOf(viaProxy.headers).value
      expect(
        (
          await t.get('/api/devices/', {
            key: null,
            headers: { cookie: `${HOST_SESSION_COOKIE}=${session}`, origin: 'https://mam.example.com' },
          })
        ).status,
      ).toBe(200)
      expect(
        (
          await t.get('/api/devices/', {
            key: null,
            headers: { cookie: `${HOST_SESSION_COOKIE}=${session}`, origin: 'https://mam.example.com:8443' },
          })
        ).status,
      ).toBe(403)
    } finally {
      t.cleanup()
    }
    const u = testApp()
    try {
      const https = await u.request('POST', '/api/session/', {
        key: null,
        body: { username: 'admin', password: u.adminKey },
        headers: { origin: 'https://localhost' },
      })
      expect(cookieOf(https.headers)).toMatchObject({
        name: HOST_SESSION_COOKIE,
        attributes: expect.arrayContaining(['Secure']),
      })
      const http = await u.request('POST', '/api/session/', {
        key: null,
        body: { username: 'admin', password: u.adminKey },
        headers: { origin: 'http://localhost' },
      })
      expect(cookieOf(http.headers)).toMatchObject({
        name: SESSION_COOKIE,
        attributes: ['Path=/', 'HttpOnly', 'SameSite=Strict'],
      })
    } finally {
      u.cleanup()
    }
  })
})

test('failed sign-ins count in the slow-down of Basic: after 10 for a name, the next Basic attempt for it waits its turn, and the other way round', async () => {
  const t = testApp()
  const waits: number[] = []
  const passwords: PasswordOptions = { wait: async (ms) => void waits.push(ms) }
  const users = createUsers(t.core.port, { passwords })
  const app = createApp({ ...t.core, users })
  const send = async (path: string, init: RequestInit) =>
    readResponse(await app.handle(new Request(`http://localhost${path}`, init)))
  const signIn = (password: string) =>
    send('/api/session/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'ana', password }),
    })
  try {
    runAtOnce(t.db, users).add('ana')
    runAtOnce(t.db, users).setPassword('ana', await cheapHash('right'))
    for (let i = 0; i < FREE_FAILURES; i++) expect((await signIn(`wrong ${i}`)).status).toBe(401)
    expect(waits).toEqual([])
    const basic = await send('/api/devices/', { headers: { authorization: `Basic ${btoa('ana:wrong again')}` } })
    expect({ status: basic.status, waited: waits.length }).toEqual({ status: 401, waited: 1 })
    expect((await signIn('wrong once more')).status).toBe(401)
    expect(waits).toHaveLength(2)
    // The right password still signs in (it waits its turn from this address, as Basic's would).
    expect((await signIn('right')).status).toBe(200)
  } finally {
    t.cleanup()
  }
})

test('an event stream opened with the cookie ends when the session is signed out', async () => {
  const t = testApp(undefined, { tasks: true })
  const server = t.app.listen({ port: 0, hostname: '127.0.0.1' }).server!
  const base = `http://127.0.0.1:${server.port}`
  try {
    const login = await fetch(`${base}/api/session/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ username: 'admin', password: t.adminKey }),
    })
    const session = cookieOf(login.headers).value
    const cookie = `${SESSION_COOKIE}=${session}`
    const stream = await openEvents(base, { cookie, 'sec-fetch-site': 'same-origin' })
    const out = await fetch(`${base}/api/session/`, { method: 'DELETE', headers: { cookie, origin: base } })
    expect(out.status).toBe(204)
    await stream.end('the end of the stream of a signed-out session', 10_000)
    expect(stream.error).toBeUndefined()
  } finally {
    t.core.events.close()
    await server.stop(true)
    await t.core.stop()
    t.cleanup()
  }
})

describe('planted cookies: a page on another port of the same host can set cookies for the host, whatever path it likes', () => {
  // Over real HTTP, so that what counts is what Bun sends: several Set-Cookie headers, each read
  // with getSetCookie(). Browsers send the cookie of the longer path first: a page of another port
  // that sets `reelhouse_session=<id>; path=/api/` puts its id before ours on every API request.
  const t = testApp()
  const server = t.app.listen({ port: 0, hostname: '127.0.0.1' }).server!
  const base = `http://127.0.0.1:${server.port}`
  afterAll(async () => {
    await server.stop(true)
    t.cleanup()
  })
  const anaKey = t.makeUser('ana')
  const bobKey = t.makeUser('bob')
  /** A well-formed id that names no session, and one that is not even well-formed. */
  const UNKNOWN = 'A'.repeat(43)
  const MALFORMED = 'planted'

  const parsed = (response: Response) => response.headers.getSetCookie().map((c) => cookieOf(c))
  /** Signs `username` in from the page (over https when `origin` says so): the Set-Cookie headers, parsed. */
  async function signIn(username: string, password: string, origin = base, cookie?: string) {
    const r = await fetch(`${base}/api/session/`, {
      method: 'POST',
      body: JSON.stringify({ username, password }),
      headers: {
        'content-type': 'application/json',
        'sec-fetch-site': 'same-origin',
        origin,
        ...(cookie ? { cookie } : {}),
      },
    })
    if (r.status !== 200) throw new Error(`sign-in: ${r.status} ${await r.text()}`)
    return parsed(r)
  }
  const idOf = async (username: string, password: string) => (await signIn(username, password))[0]!.value
  /** A request of the page (Sec-Fetch-Site same-origin) with these cookies, in this order. */
  const send = async (method: string, path: string, cookies: string[], headers: Record<string, string> = {}) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: {
        'sec-fetch-site': 'same-origin',
        'x-requested-with': 'XMLHttpRequest',
        cookie: cookies.join('; '),
        ...headers,
      },
    })
    return { ...(await readResponse(r)), cookies: r.headers.getSetCookie() }
  }
  const plain = (id: string) => `${SESSION_COOKIE}=${id}`
  const host = (id: string) => `${HOST_SESSION_COOKIE}=${id}`
  const cleared = (path: string, secure = false, name = SESSION_COOKIE) =>
    `${name}=; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`
  // __Host- is removed over http too: on localhost and 127.0.0.1 a page of another port can set it.
  const CLEARED = [cleared('/', true, HOST_SESSION_COOKIE), cleared('/'), cleared('/api'), cleared('/api/')]
  const CLEARED_HTTPS = [
    cleared('/', true, HOST_SESSION_COOKIE),
    cleared('/', true),
    cleared('/api', true),
    cleared('/api/', true),
  ]

  test('two cookies that both name live sessions (ours and one planted): 401 with the cookies cleared, in either order, never either user', async () => {
    const [ana, bob] = [await idOf('ana', anaKey), await idOf('bob', bobKey)]
    // Over http a __Host- cookie counts too (on 127.0.0.1 a page of another port can set one).
    for (const cookies of [
      [plain(bob), plain(ana)],
      [plain(ana), plain(bob)],
      [plain(bob), 'other=1', plain(ana)],
      [host(bob), plain(ana)],
    ]) {
      const r = await send('GET', '/api/devices/', cookies)
      expectError(r, 401, 'authentication_failed')
      expect({ challenge: r.headers.get('www-authenticate'), cookies: r.cookies }).toEqual({
        challenge: 'Token',
        cookies: CLEARED,
      })
      const who = await send('GET', '/api/session/', cookies)
      expect({ status: who.status, json: who.json, cookies: who.cookies }).toEqual({
        status: 200,
        json: { user: null },
        cookies: CLEARED,
      })
    }
    // Each of them alone still works: neither session was ended by the refusal.
    expect((await send('GET', '/api/session/', [plain(ana)])).json.user.username).toBe('ana')
    expect((await send('GET', '/api/session/', [plain(bob)])).json.user.username).toBe('bob')
  })

  test('one live session and planted cookies that name none: authenticated as the live one, in any order', async () => {
    const ana = await idOf('ana', anaKey)
    for (const cookies of [
      [plain(UNKNOWN), plain(ana)],
      [plain(ana), plain(UNKNOWN)],
      [plain(MALFORMED), plain(UNKNOWN), plain(ana)],
      [plain(ana), plain(ana)],
      [host(UNKNOWN), plain(ana)],
    ]) {
      const r = await send('GET', '/api/session/', cookies)
      expect({ status: r.status, json: r.json, cookies: r.cookies }).toEqual({
        status: 200,
        json: { user: expect.objectContaining({ username: 'ana' }), via: 'session' },
        cookies: [],
      })
      expect((await send('GET', '/api/devices/', cookies)).status).toBe(200)
    }
  })

  test('two cookies that name no live session: 401 with the cookies cleared', async () => {
    const ended = await idOf('ana', anaKey)
    t.users.sessions.end(ended)
    for (const cookies of [
      [plain(UNKNOWN), plain(ended)],
      [plain(MALFORMED), plain(UNKNOWN)],
    ]) {
      const r = await send('GET', '/api/devices/', cookies)
      expectError(r, 401, 'authentication_failed')
      expect(r.cookies).toEqual(CLEARED)
    }
  })

  test('every answer that removes the cookie removes it at /, /api and /api/ (and __Host- at /); the sign-in sets it at / and removes the others', async () => {
    const ana = await idOf('ana', anaKey)
    expect(await signIn('ana', anaKey, base, plain(UNKNOWN))).toEqual([
      {
        name: SESSION_COOKIE,
        value: expect.stringMatching(/^[\w-]{43}$/),
        attributes: ['Path=/', 'HttpOnly', 'SameSite=Strict'],
      },
      ...[cleared('/', true, HOST_SESSION_COOKIE), cleared('/api'), cleared('/api/')].map((c) => cookieOf(c)),
    ])
    // An ended or unknown session: 401 on the API, nobody on GET /api/session/; a sign-out.
    expect((await send('GET', '/api/devices/', [plain(UNKNOWN)])).cookies).toEqual(CLEARED)
    expect((await send('GET', '/api/session/', [plain(UNKNOWN)])).cookies).toEqual(CLEARED)
    const out = await send('DELETE', '/api/session/', [plain(UNKNOWN), plain(ana)], { origin: base })
    expect({ status: out.status, cookies: out.cookies }).toEqual({ status: 204, cookies: CLEARED })
    expect((await send('GET', '/api/session/', [plain(ana)])).json).toEqual({ user: null })
  })

  test('a sign-in over a planted cookie signs in as the user who signs in, and ends the planted session', async () => {
    const bob = await idOf('bob', bobKey)
    const cookies = await signIn('ana', anaKey, base, plain(bob))
    const ana = cookies[0]!.value
    // What the browser holds then: our cookie at /, the planted one removed at /api/ by the same answer.
    expect((await send('GET', '/api/session/', [plain(ana)])).json.user.username).toBe('ana')
    // Had the browser kept it, bob's session has ended all the same.
    expect((await send('GET', '/api/session/', [plain(bob), plain(ana)])).json.user.username).toBe('ana')
    expect((await send('GET', '/api/session/', [plain(bob)])).json).toEqual({ user: null })
  })

  test('over https the cookie is __Host-reelhouse_session (Secure, Path=/), and only that name counts', async () => {
    const https = `https://127.0.0.1:${server.port}`
    const signedIn = await signIn('ana', anaKey, https)
    expect(signedIn).toEqual([
      {
        name: HOST_SESSION_COOKIE,
        value: expect.stringMatching(/^[\w-]{43}$/),
        attributes: ['Path=/', 'HttpOnly', 'SameSite=Strict', 'Secure'],
      },
      ...[cleared('/', true), cleared('/api', true), cleared('/api/', true)].map((c) => cookieOf(c)),
    ])
    const ana = signedIn[0]!.value
    const bob = await idOf('bob', bobKey)
    // The page's own GET carries no Origin: its Referer (the page's Referrer-Policy is same-origin) says https.
    const page = { referer: `${https}/devices` }
    expect((await send('GET', '/api/session/', [host(ana)], page)).json.user.username).toBe('ana')
    expect((await send('GET', '/api/devices/', [host(ana)], { origin: https })).status).toBe(200)
    // A plain-named cookie, which any page of this host can set, does not count over https: not bob's, not even ana's own.
    expect((await send('GET', '/api/session/', [plain(bob), host(ana)], page)).json.user.username).toBe('ana')
    expect((await send('GET', '/api/session/', [plain(bob)], page)).json).toEqual({ user: null })
    expectError(await send('GET', '/api/devices/', [plain(ana)], page), 401, 'not_authenticated')
    // Clearing over https removes both names.
    const ended = await send('GET', '/api/devices/', [host(UNKNOWN)], page)
    expectError(ended, 401, 'authentication_failed')
    expect(ended.cookies).toEqual(CLEARED_HTTPS)
    const out = await send('DELETE', '/api/session/', [host(ana)], { origin: https })
    expect({ status: out.status, cookies: out.cookies }).toEqual({ status: 204, cookies: CLEARED_HTTPS })
  })

  test('--public-url https://...: the cookie is __Host- also for a client that sends no Origin', async () => {
    const u = testApp(undefined, { app: { publicUrl: 'https://mam.example.com' } })
    const listening = u.app.listen({ port: 0, hostname: '127.0.0.1' }).server!
    try {
      const r = await fetch(`http://127.0.0.1:${listening.port}/api/session/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: u.adminKey }),
      })
      const [cookie] = parsed(r)
      expect({ ...cookie, value: cookie!.value.length }).toEqual({
        name: HOST_SESSION_COOKIE,
        value: 43,
        attributes: ['Path=/', 'HttpOnly', 'SameSite=Strict', 'Secure'],
      })
      const who = await fetch(`http://127.0.0.1:${listening.port}/api/session/`, {
        headers: { cookie: host(cookie!.value) },
      })
      expect(((await who.json()) as { user: { username: string } }).user.username).toBe('admin')
    } finally {
      await listening.stop(true)
      u.cleanup()
    }
  })
})
