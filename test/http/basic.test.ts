// HTTP Basic (docs/api.md, Authentication): a user name with one of that user's keys or their
// password; every failure the same 401; verified passwords remembered by a hash that a new
// password changes; a name that keeps failing from one address, or an address failing for many
// names, slowed down without delaying anyone else (issue 25, point 5: never the user from
// another address).
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import http from 'node:http'
import { createApp } from '../../src/app.ts'
import { ADDRESS_FREE_FAILURES, type PasswordOptions, hashPassword } from '../../src/modules/users/passwords.ts'
import { createUsers } from '../../src/modules/users/service.ts'
import { type TestApp, readResponse, runAtOnce, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

// Hashing, media and whole-document checks are CPU work: the bound of a test here only ends one that
// hangs (bun's 5 s failed them on a busy machine). setDefaultTimeout applies to this file only.
setDefaultTimeout(120_000)

const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`
const FAILED = 'Invalid user name, password or key.'

/** testApp whose users verify and wait through the given functions (the app is built over them). */
function appWith(passwords: PasswordOptions) {
  const t = testApp()
  const users = createUsers(t.core.port, { passwords })
  const app = createApp({ ...t.core, users })
  const get = async (authorization: string, path = '/api/devices/') =>
    readResponse(await app.handle(new Request(`http://localhost${path}`, { headers: { authorization } })))
  return { t, users: runAtOnce(t.db, users), get }
}

/** Argon2id with the least work it takes (a hash carries its own cost): for the tests of the slow-down, which send dozens of attempts. */
const cheapHash = (password: string) =>
  Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: 8, timeCost: 1 })

/** Bun's verifier, counted. */
function countedVerify() {
  const calls: string[] = []
  const verify = (password: string, hash: string) => {
    calls.push(password)
    return Bun.password.verify(password, hash)
  }
  return { calls, verify }
}

describe('Basic with a key or a password', () => {
  const t = testApp()
  const anaKey = t.makeUser('ana')
  const bobKey = t.makeUser('bob')
  let ready: Promise<void> | undefined
  // Hashed once for the describe block (Argon2 takes a while), before the first test needs it.
  const setUp = () =>
    (ready ??= hashPassword('correct horse: battery').then((hash) => void t.users.setPassword('ana', hash)))
  afterAll(() => t.cleanup())
  const as = (authorization: string, path = '/api/devices/') => t.get(path, { headers: { authorization } })

  test("a user's key as the password: 200 as that user, the scheme in any letter case", async () => {
    for (const scheme of ['Basic', 'basic', 'BASIC']) {
      const r = await as(`${scheme} ${btoa(`ana:${anaKey}`)}`)
      expect({ status: r.status, json: r.json }).toEqual({ status: 200, json: [] })
    }
  })

  test("the user's password, a colon in it (only the first one separates the name): 200 as that user", async () => {
    await setUp()
    const r = await as(basic('ana:correct horse: battery'))
    expect({ status: r.status, json: r.json }).toEqual({ status: 200, json: [] })
    // The user is the one named: ana may not create devices, the admin may.
    const post = await t.post(
      '/api/devices/',
      { name: 'x', path: '/tmp' },
      { headers: { authorization: basic('ana:correct horse: battery') } },
    )
    expectError(post, 403, 'permission_denied')
  })

  test('a password in UTF-8 (what curl, browsers and requests send)', async () => {
    await t.users.setPassword('bob', await hashPassword('mot de passe: été'))
    expect((await as(basic('bob:mot de passe: été'))).status).toBe(200)
    await t.users.setPassword('bob', null)
  })

  test('wrong and malformed credentials: all the same 401 authentication_failed, challenged with Token only', async () => {
    await setUp()
    const headers = [
      basic('ana:wrong password'), // wrong password
      basic('ana:correct horse: battery '), // one character more
      basic('nobody:correct horse: battery'), // unknown user
      basic(`nobody:${anaKey}`), // unknown user with a real key
      basic(`ana:${bobKey}`), // another user's key
      basic(`bob:${anaKey}`), // ...the other way round
      basic(`bob:correct horse: battery`), // a user without a password, with another one's
      basic('bob:'), // ...with an empty one
      basic('ana:'), // an empty password
      basic(`:${anaKey}`), // no user name
      basic(`ANA:${anaKey}`), // names are case-sensitive
      basic(`ana${anaKey}`), // no colon
      basic(`${'x'.repeat(151)}:pw`), // a name no user can have
      'Basic', // nothing
      'Basic ', // empty
      'Basic  ' + btoa(`ana:${anaKey}`), // two spaces
      'Basic ' + btoa(`ana:${anaKey}`).replace(/=+$/, '') + '!', // not base64
      'Basic ' + btoa(`ana:${anaKey}`).replace(/=+$/, ''), // unpadded
      'Basic ' + Buffer.from([0x61, 0x6e, 0x61, 0x3a, 0xff, 0xfe]).toString('base64'), // not UTF-8
      'Basic ' + btoa(`ana:${anaKey}`) + ' extra', // extra words
    ]
    for (const header of headers) {
      const r = await as(header)
      expect({ header, status: r.status, body: r.json, challenge: r.headers.get('www-authenticate') }).toEqual({
        header,
        status: 401,
        body: { errors: [{ status: '401', code: 'authentication_failed', title: 'Unauthorized', detail: FAILED }] },
        challenge: 'Token',
      })
    }
  })

  test('a failed attempt is refused before its body is read, and creates nothing', async () => {
    const r = await t.post('/api/devices/', { name: 'sneaky' }, { headers: { authorization: basic('admin:guess') } })
    expectError(r, 401, 'authentication_failed')
    expect((await t.get('/api/devices/')).json).toEqual([])
  })

  test('health, ping and docs need no credentials: failing Basic ones are not looked at', async () => {
    for (const path of ['/api/health', '/api/ping/', '/api/docs/json'])
      expect((await as(basic('ana:wrong'), path)).status).toBeLessThan(300)
  })

  test('a revoked key no longer logs in, from the next request', async () => {
    const key = t.users.createKey('bob')
    expect((await as(basic(`bob:${key}`))).status).toBe(200)
    t.users.revokeKey(key)
    expectError(await as(basic(`bob:${key}`)), 401, 'authentication_failed')
  })
})

describe('verified passwords are remembered, keyed by the stored hash', () => {
  let app: ReturnType<typeof appWith> | undefined
  afterEach(() => app?.t.cleanup())

  test('a second request with the same password does not verify again; a wrong one still does', async () => {
    const counted = countedVerify()
    app = appWith({ verify: counted.verify })
    app.t.makeUser('ana')
    app.users.setPassword('ana', await hashPassword('pw-1'))
    expect((await app.get(basic('ana:pw-1'))).status).toBe(200)
    expect((await app.get(basic('ana:pw-1'))).status).toBe(200)
    expect((await app.get(basic('ana:pw-1'))).status).toBe(200)
    expect(counted.calls).toEqual(['pw-1'])
    expect((await app.get(basic('ana:pw-2'))).status).toBe(401)
    expect(counted.calls).toEqual(['pw-1', 'pw-2'])
  })

  test('a new password written to the catalogue by someone else (user passwd runs in another process) takes effect on the next request', async () => {
    const counted = countedVerify()
    app = appWith({ verify: counted.verify })
    app.t.makeUser('ana')
    app.users.setPassword('ana', await hashPassword('old'))
    expect((await app.get(basic('ana:old'))).status).toBe(200)
    // Straight into SQLite, as another process would: nothing in this app is told.
    const hash = await hashPassword('new')
    app.t.db.$client.run('UPDATE users SET password_hash = ? WHERE username = ?', [hash, 'ana'])
    expectError(await app.get(basic('ana:old')), 401, 'authentication_failed')
    expect((await app.get(basic('ana:new'))).status).toBe(200)
    app.t.db.$client.run('UPDATE users SET password_hash = NULL WHERE username = ?', ['ana'])
    expectError(await app.get(basic('ana:new')), 401, 'authentication_failed')
    // Every check after the first success was verified anew (the unknown-password one against a decoy).
    expect(counted.calls.filter((p) => p !== '-')).toEqual(['old', 'old', 'new'])
  })

  test('an unknown user and a user without a password cost a verification too (against a decoy hash), so the time does not tell them apart', async () => {
    const counted = countedVerify()
    app = appWith({ verify: counted.verify })
    app.t.makeUser('bob')
    expectError(await app.get(basic('nobody:pw')), 401, 'authentication_failed')
    expectError(await app.get(basic('bob:pw')), 401, 'authentication_failed')
    expect(counted.calls).toHaveLength(2)
  })
})

/** A wait that the test ends: each call is recorded, and pending until released. */
function heldWait() {
  const waits: { ms: number; release: () => void }[] = []
  let added: (() => void) | undefined
  const wait = (ms: number) =>
    new Promise<void>((release) => {
      waits.push({ ms, release })
      added?.()
    })
  /** Resolves once `count` waits have begun (never rejects: the test's own bound ends a hang). */
  const reached = (count: number) =>
    new Promise<void>((resolve) => {
      const check = () => waits.length >= count && resolve()
      added = () => check()
      check()
    })
  return { waits, wait, reached }
}

describe('repeated failures for one name are slowed down (all from one address: app.handle has none)', () => {
  let app: ReturnType<typeof appWith> | undefined
  afterEach(() => app?.t.cleanup())

  test("after 10 failures the next attempt for that name waits its turn, while another user's requests go through", async () => {
    const held = heldWait()
    const counted = countedVerify()
    // A clock that stands still, so that the turns are exact.
    app = appWith({ wait: held.wait, verify: counted.verify, now: () => 1_000_000 })
    const bobKey = app.t.makeUser('bob')
    app.t.makeUser('ana')
    app.users.setPassword('ana', await cheapHash('ana-pw'))
    app.users.setPassword('bob', await cheapHash('bob-pw'))

    for (let i = 0; i < 10; i++) expectError(await app.get(basic(`ana:guess ${i}`)), 401, 'authentication_failed')
    expect(held.waits).toEqual([])

    let answered = false
    const eleventh = app.get(basic('ana:guess 10')).then((r) => ((answered = true), r))
    const twelfth = app.get(basic('ana:ana-pw'))
    await Promise.resolve()
    // Each waits for its turn: one second after the previous one's.
    expect(held.waits.map((w) => w.ms)).toEqual([1000, 2000])

    // bob is not held: his password (verified by Argon2 now), his key over Basic and Token.
    expect((await app.get(basic('bob:bob-pw'))).status).toBe(200)
    expect((await app.get(basic(`bob:${bobKey}`))).status).toBe(200)
    expect((await app.get(`Token ${bobKey}`)).status).toBe(200)
    expect(answered).toBe(false)
    expect(counted.calls).not.toContain('guess 10')

    for (const w of held.waits) w.release()
    expectError(await eleventh, 401, 'authentication_failed')
    // The right password after its wait: it is still the password (a success does not end the slow-down).
    expect((await twelfth).status).toBe(200)
    const again = app.get(basic('ana:guess 11'))
    await Promise.resolve()
    expect(held.waits).toHaveLength(3)
    held.waits[2]!.release()
    expectError(await again, 401, 'authentication_failed')
  })

  test('a password verified before is not held: only someone who knows it can be remembered', async () => {
    const held = heldWait()
    app = appWith({ wait: held.wait })
    app.t.makeUser('ana')
    app.users.setPassword('ana', await cheapHash('ana-pw'))
    expect((await app.get(basic('ana:ana-pw'))).status).toBe(200)
    for (let i = 0; i < 10; i++) await app.get(basic(`ana:guess ${i}`))
    expect((await app.get(basic('ana:ana-pw'))).status).toBe(200)
    expect(held.waits).toEqual([])
  })

  test('a minute without failures ends the slow-down; a backlog of over 30 s is refused at once, unverified', async () => {
    const held = heldWait()
    const counted = countedVerify()
    let now = 1_000_000
    app = appWith({ wait: held.wait, verify: counted.verify, now: () => now })
    app.t.makeUser('ana')
    app.users.setPassword('ana', await cheapHash('ana-pw'))
    for (let i = 0; i < 10; i++) await app.get(basic(`ana:guess ${i}`))
    // 30 turns fill the backlog; the 31st would come after 31 s.
    const pending = Array.from({ length: 31 }, (_, i) => app!.get(basic(`ana:queued ${i}`)))
    await Promise.resolve()
    expect(held.waits.map((w) => w.ms)).toEqual(Array.from({ length: 30 }, (_, i) => (i + 1) * 1000))
    expectError(await pending[30]!, 401, 'authentication_failed')
    expect(counted.calls).not.toContain('queued 30')
    for (const w of held.waits) w.release()
    await Promise.all(pending)

    now += 60_000
    expect((await app.get(basic('ana:ana-pw'))).status).toBe(200)
    expect(held.waits).toHaveLength(30)
  })
})

describe('failures count per name and client address, and per address: never per name alone', () => {
  let app: ReturnType<typeof appWith> | undefined
  afterEach(() => app?.t.cleanup())

  test("a flood of wrong passwords for a name from one address slows that address's attempts for it, never the right password sent from another", async () => {
    const held = heldWait()
    app = appWith({ wait: held.wait, now: () => 1_000_000 })
    app.t.makeUser('ana')
    app.users.setPassword('ana', await cheapHash('ana-pw'))
    const attempt = (secret: string, address: string) => app!.users.authenticateBasic('ana', secret, address)

    for (let i = 0; i < 10; i++) expect(await attempt(`guess ${i}`, '192.0.2.66')).toBeUndefined()
    const guess = attempt('guess 10', '192.0.2.66')
    const own = attempt('ana-pw', '192.0.2.66')
    expect(held.waits.map((w) => w.ms)).toEqual([1000, 2000])

    // From another address: verified at once, right or wrong; no turn is taken.
    const elsewhere = [
      attempt('ana-pw', '192.0.2.10'),
      attempt('typo', '192.0.2.11'),
      attempt('ana-pw', '2001:db8::10'),
    ]
    expect(held.waits).toHaveLength(2)
    expect((await Promise.all(elsewhere)).map((user) => user?.username)).toEqual(['ana', undefined, 'ana'])

    for (const w of held.waits) w.release()
    expect(await guess).toBeUndefined()
    expect((await own)?.username).toBe('ana')
  })

  test(`an address failing for many names is slowed after ${ADDRESS_FREE_FAILURES} failures, whatever the names; other addresses are not`, async () => {
    const held = heldWait()
    // A verification that costs nothing: a hundred Argon2 runs would only slow the test.
    app = appWith({ wait: held.wait, now: () => 1_000_000, verify: async (password) => password === 'right' })
    app.t.makeUser('ana')
    app.users.setPassword('ana', await cheapHash('right'))
    const attempt = (name: string, secret: string, address: string) =>
      app!.users.authenticateBasic(name, secret, address)

    // A different name each time: no name from that address reaches its own 10.
    for (let i = 0; i < ADDRESS_FREE_FAILURES; i++)
      expect(await attempt(`user${i}`, 'guess', '192.0.2.66')).toBeUndefined()
    expect(held.waits).toEqual([])
    const next = attempt('someone', 'guess', '192.0.2.66')
    const own = attempt('ana', 'right', '192.0.2.66')
    expect(held.waits.map((w) => w.ms)).toEqual([1000, 2000])

    expect(await attempt('user0', 'guess', '192.0.2.10')).toBeUndefined()
    expect((await attempt('ana', 'right', '192.0.2.10'))?.username).toBe('ana')
    expect(held.waits).toHaveLength(2)

    for (const w of held.waits) w.release()
    expect(await next).toBeUndefined()
    expect((await own)?.username).toBe('ana')
  })
})

/** GET /api/devices/ with Basic over a connection of its own from `from`, a local address. */
function getFrom(port: number, from: string, credentials: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/devices/',
        localAddress: from,
        agent: false,
        headers: { authorization: basic(credentials) },
      },
      (response) => {
        response.resume()
        response.on('end', () => resolve(response.statusCode!))
      },
    )
    request.on('error', reject)
    request.end()
  })
}

// Every address of 127.0.0.0/8 is this machine's on Linux; macOS answers 127.0.0.1 alone.
describe.skipIf(process.platform !== 'linux')("over HTTP, the address is the connection's", () => {
  const held = heldWait()
  const t = testApp()
  const users = createUsers(t.core.port, { passwords: { wait: held.wait } })
  const server = createApp({ ...t.core, users }).listen({ hostname: '127.0.0.1', port: 0 })
  const port = server.server!.port!
  afterAll(async () => {
    for (const w of held.waits) w.release()
    await server.stop(true)
    t.cleanup()
  })

  test("during a flood of wrong passwords from 127.0.0.2, the right one from 127.0.0.1 is taken at once; the flood's own is slowed and refused as before", async () => {
    t.makeUser('ana')
    runAtOnce(t.db, users).setPassword('ana', await cheapHash('ana-pw'))

    for (let i = 0; i < 10; i++) expect(await getFrom(port, '127.0.0.2', `ana:guess ${i}`)).toBe(401)
    // 29 more guesses and the right password fill the 30 s backlog of turns...
    const flood = Array.from({ length: 29 }, (_, i) => getFrom(port, '127.0.0.2', `ana:guess ${10 + i}`))
    const own = getFrom(port, '127.0.0.2', 'ana:ana-pw')
    await held.reached(30)
    // ...so the next one from there is refused at once, unverified.
    expect(await getFrom(port, '127.0.0.2', 'ana:ana-pw')).toBe(401)

    // From 127.0.0.1, with every turn of the flood still held: answered, with no turn taken.
    const first = await Promise.race([
      getFrom(port, '127.0.0.1', 'ana:ana-pw').then((status) => ({ status })),
      held.reached(31).then(() => 'held'),
    ])
    expect(first).toEqual({ status: 200 })
    expect(held.waits).toHaveLength(30)

    for (const w of held.waits) w.release()
    expect(new Set(await Promise.all(flood))).toEqual(new Set([401]))
    expect(await own).toBe(200)
  })
})
