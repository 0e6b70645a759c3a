// Authentication (docs/api.md, Errors; docs/api.md, Permissions): `Authorization: Token <key>` or `Bearer <key>`,
// or HTTP Basic with a user name and one of their keys or their password (what medialoopster
// clients send), or the web page's session cookie (docs/api.md, "Sessions"). The Authorization
// and Cookie headers are read here and nowhere else: once per request, before the body is
// parsed, so a request without valid credentials is refused before any of its input is looked
// at. Routes declare `auth: true` to receive the resolved user.
import { Elysia } from 'elysia'
import { KEY_PATTERN, type Principal, type Users, hashKey } from '../modules/users/service.ts'
import { SESSION_ID_PATTERN } from '../modules/users/sessions.ts'
import { andThen } from '../db/port.ts'
import { AppError } from './errors.ts'
import { pathOf } from './head.ts'

const PUBLIC = [/^\/api\/health\/?$/, /^\/api\/ping\/?$/, /^\/api\/docs(\/.*)?$/]
/** The first letter after /api/ of the public paths and the session's: only their paths are matched against the patterns. */
const [D, H, P, S] = ['d', 'h', 'p', 's'].map((c) => c.charCodeAt(0))
/** Whether a path needs credentials: the API (its root too), but health, ping and docs. */
const needsAuth = (path: string) => {
  if (!path.startsWith('/api/')) return path === '/api'
  const first = path.charCodeAt(5)
  return !((first === D || first === H || first === P) && PUBLIC.some((p) => p.test(path)))
}
/**
 * The session's own path: its GET and DELETE answer without credentials too (who is signed in:
 * nobody; signing out twice), and its POST takes them in the body (a sign-in), not in headers.
 */
export const SESSION_PATH = /^\/api\/session\/?$/
/** Whether the request's credentials are read: those of every path that needs them, and of the session's GET and DELETE. */
const readsCredentials = (request: Request, path = pathOf(request.url)) =>
  path.charCodeAt(5) === S && SESSION_PATH.test(path) ? request.method !== 'POST' : needsAuth(path)

/** What a key is (users/service.ts KEY_PATTERN): keys are made lowercase, and an uppercase one is refused, not folded. */
export const KEY_FORM = '40 lowercase hex characters'
/** What a malformed key is told: the two forms that take one (Bearer is what Swagger UI and most clients send). */
export const ACCEPTED_FORMS = `Authorization must be "Token <key>" or "Bearer <key>" (${KEY_FORM}).`
/** What a request without a known scheme is told: every form accepted. */
export const ALL_FORMS = `Authorization must be "Token <key>" or "Bearer <key>" (${KEY_FORM}), or "Basic <base64 of user:password or user:key>".`
/** What a request without an Authorization header is told. */
export const NO_CREDENTIALS = `Authentication credentials were not provided. ${ALL_FORMS}`
/**
 * Every failed Basic attempt gets this, whatever was wrong (the user, the secret, the encoding):
 * which part was wrong would tell a guesser which names exist or have a password.
 */
export const BASIC_FAILED = 'Invalid user name, password or key.'
const SCHEMES = new Set(['token', 'bearer'])

// Every 401 challenges with "Token", the challenge docs/api.md, Errors names, and never with Basic,
// although Basic is accepted: a browser answers a Basic challenge with its own login dialog,
// which would pop up over a panel that calls the API from a page (with a wrong password, or with
// none yet). The clients that use Basic send it unasked (medialoopster's, curl -u, requests'
// auth=), so they do not need the challenge.
// The web page relies on this too: a failed sign-in or an ended session never opens the dialog.
const CHALLENGE = { headers: { 'WWW-Authenticate': 'Token' } }
const notAuthenticated = (detail = NO_CREDENTIALS) => new AppError(401, 'not_authenticated', detail, {}, CHALLENGE)
const failed = (detail: string) => new AppError(401, 'authentication_failed', detail, {}, CHALLENGE)
/** A failed sign-in (POST /api/session/): the same answer as a failed Basic attempt, for the same reason. */
export const signInFailed = () => failed(BASIC_FAILED)

// ---------------------------------------------------------------- the session cookie
//
// Cookies are kept per host, not per port or scheme: a page served on another port of this host
// (any local dev server) cannot send requests that count (createPageGuard), but it can set
// cookies that the browser then sends here, at any path, under any name (a `__Host-` one only at
// Path=/ and from a page the browser counts as secure: https, or localhost and 127.0.0.1 over
// http too). The browser sends the cookie of the longer path first, so a `reelhouse_session` set
// at `/api/` comes before ours on every API request. Hence:
// - over https only `__Host-reelhouse_session` counts, which a page of plain http cannot set;
//   over http both names do;
// - a request is authenticated when exactly one of the ids its cookies carry names a live
//   session, and refused when more than one does (ours and a planted one: neither is guessed);
// - every answer that removes the cookie removes both names wherever ours can be shadowed:
//   `__Host-` at `/`, the plain name at `/`, `/api` and `/api/`; the sign-in answer does so
//   for every place but the one it sets.

/** The cookie that carries the web page's session id over http (HttpOnly: no script of any page reads it). */
export const SESSION_COOKIE = 'reelhouse_session'
/** Its name over https: the browser takes it only with Secure and Path=/ and without Domain, and only from a secure page. */
export const HOST_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`
export const SESSION_ENDED =
  'Your session has ended (signed out, unused for 12 hours, or your password or keys changed): sign in again.'
/** What a request is told whose cookies name more than one live session (one of them set by another page of this host). */
export const SESSION_AMBIGUOUS =
  'The request carried session cookies of more than one live session (a page on another port of this host may have set one): they were removed; sign in again.'
/** Where a planted cookie of our name shadows ours on the API's requests (a longer path goes first), besides our own Path=/. */
const SHADOWING_PATHS = ['/api', '/api/']

const cookieName = (secure: boolean) => (secure ? HOST_SESSION_COOKIE : SESSION_COOKIE)
const setCookie = (name: string, value: string, path: string, secure: boolean, extra = '') =>
  `${name}=${value}; Path=${path}; HttpOnly; SameSite=Strict${extra}${secure ? '; Secure' : ''}`
const removal = (name: string, path: string, secure: boolean) => setCookie(name, '', path, secure, '; Max-Age=0')

/** The Set-Cookie value of a new session: `__Host-reelhouse_session` and Secure when the page was reached over https (PageGuard.secure). */
export const sessionCookie = (id: string, secure: boolean) => setCookie(cookieName(secure), id, '/', secure)

/**
 * The Set-Cookie values that remove the cookie (sign-out, an ended session, cookies of more than
 * one session): `__Host-` at `/` (always Secure, as the prefix requires: over http a browser takes
 * it only on localhost and 127.0.0.1, where a page of another port could have set one), and the
 * plain name at `/`, `/api` and `/api/`.
 */
export const clearedSessionCookies = (secure: boolean): string[] => [
  removal(HOST_SESSION_COOKIE, '/', true),
  ...['/', ...SHADOWING_PATHS].map((path) => removal(SESSION_COOKIE, path, secure)),
]

/** The Set-Cookie values of a sign-in: the new session's cookie first, and every other place of the cookie removed. */
export const signedInCookies = (id: string, secure: boolean): string[] => {
  const own = `${cookieName(secure)}=; Path=/;`
  return [sessionCookie(id, secure), ...clearedSessionCookies(secure).filter((c) => !c.startsWith(own))]
}

/** The values of the request's cookies of these names, in the order sent. */
function cookieValues(request: Request, names: readonly string[]): string[] {
  const header = request.headers.get('cookie')
  if (header === null || !header.includes(SESSION_COOKIE)) return []
  const values: string[] = []
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq >= 0 && names.includes(part.slice(0, eq).trim())) values.push(part.slice(eq + 1).trim())
  }
  return values
}

const BOTH_NAMES = [SESSION_COOKIE, HOST_SESSION_COOKIE] as const
const HOST_NAME_ONLY = [HOST_SESSION_COOKIE] as const

/**
 * The session ids of the cookies that count, each once, in the order sent. Over https (`secure`):
 * `__Host-reelhouse_session` only, since the plain name can be set by any page of this host. Over
 * http: both names (ours is the plain one; a `__Host-` one comes from a browser that took the
 * connection as secure: behind a proxy the request does not reveal, or on localhost, where a page
 * of another port may have set it), under the same rule of one live session.
 */
export const sessionIdsOf = (request: Request, secure: boolean): string[] => [
  ...new Set(cookieValues(request, secure ? HOST_NAME_ONLY : BOTH_NAMES)),
]

/** Whether the request carries a session cookie of either name (one to remove when it does not sign in). */
export const hasSessionCookie = (request: Request): boolean => cookieValues(request, BOTH_NAMES).length > 0

/**
 * Where a request with the session cookie may come from: the page this server serves, and
 * nothing else. A SameSite=Strict cookie is still sent by the browser to this server from a page
 * on another port of the same host (ports do not make another site), and from a page of another
 * site in some navigations; so every request that the cookie authenticates (and every sign-in,
 * against signing a browser into someone else's account) must say, when the browser says at all:
 * - `Sec-Fetch-Site`: `same-origin`, or `none` (the user typed the URL or opened a bookmark);
 * - `Origin`: this server's own origin: `http://` or `https://` with the request's Host (the
 *   authority the browser reached; one port serves one scheme), or the origin of --public-url.
 * Clients that send neither (curl, scripts) are not browsers and are not refused for it.
 */
export function createPageGuard(publicUrl?: string) {
  const publicOrigin =
    publicUrl === undefined ? undefined : URL.canParse(publicUrl) ? new URL(publicUrl).origin : undefined
  /** The Host of the request's URL (Bun builds it from the header: lower case, no default port). */
  const hostOf = (request: Request) => {
    const url = request.url
    const end = url.indexOf('/', 7)
    return end < 0 ? url.slice(7) : url.slice(7, end)
  }
  /** Why the request does not come from our page, or undefined when nothing says it does not. */
  function problem(request: Request): string | undefined {
    const site = request.headers.get('sec-fetch-site')
    if (site !== null && site !== 'same-origin' && site !== 'none')
      return `it came from another site (Sec-Fetch-Site: ${site})`
    const origin = request.headers.get('origin')
    if (origin !== null) {
      const o = origin.toLowerCase()
      const host = hostOf(request)
      if (o !== `http://${host}` && o !== `https://${host}` && o !== publicOrigin)
        return `it came from a page of another origin (${origin.slice(0, 200)})`
    }
    return undefined
  }
  return {
    /** Throws 403 permission_denied when the request says it came from another page than ours. */
    check(request: Request) {
      const why = problem(request)
      if (why)
        throw new AppError(
          403,
          'permission_denied',
          `The session cookie is taken only from Reelhouse's own page, and ${why}. Another client sends a key in the Authorization header.`,
        )
    },
    /**
     * Whether the page was reached over https, as the browser says: by the request's Origin, else
     * by its Referer (the page's own GETs carry no Origin but its address: its Referrer-Policy is
     * same-origin), else --public-url's scheme (a client that sends neither). Over https the
     * cookie is `__Host-reelhouse_session` and Secure, and only that name counts.
     */
    secure(request: Request): boolean {
      const said = request.headers.get('origin') ?? request.headers.get('referer')
      return said !== null
        ? said.slice(0, 8).toLowerCase() === 'https://'
        : publicOrigin?.startsWith('https://') === true
    },
  }
}

export type PageGuard = ReturnType<typeof createPageGuard>

/** How the request authenticated (what GET /api/session/ answers as `via`). */
export function credentialsOf(request: Request): 'key' | 'basic' | 'session' | undefined {
  const header = request.headers.get('authorization')
  if (header !== null) return isBasic(header) ? 'basic' : 'key'
  return hasSessionCookie(request) ? 'session' : undefined
}

/**
 * "Basic " in any letter case. Read a character at a time, so that a Token or Bearer header is
 * told apart without a string made (Token's first letter, Bearer's sixth).
 */
const isBasic = (header: string) =>
  (header.charCodeAt(0) | 32) === 98 && header.charCodeAt(5) === 32 && header.slice(1, 5).toLowerCase() === 'asic'
/** RFC 4648 base64, padded (as curl, browsers and Python's requests send it); Buffer would skip anything else. */
const BASE64 =
  /^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$|^[A-Za-z0-9+/]{2}==$|^[A-Za-z0-9+/]{3}=$/
const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** user-id and password of `Basic <base64(user:password)>` (RFC 7617: the user-id has no colon), or undefined. */
export function basicCredentials(header: string): [string, string] | undefined {
  const encoded = header.slice(6)
  if (!BASE64.test(encoded)) return undefined
  let text: string
  try {
    text = UTF8.decode(Buffer.from(encoded, 'base64'))
  } catch {
    return undefined
  }
  const colon = text.indexOf(':')
  return colon < 0 ? undefined : [text.slice(0, colon), text.slice(colon + 1)]
}

/** What authPlugin's session lookup answers for cookies that name more than one live session. */
const AMBIGUOUS = Symbol('ambiguous')

/** What authenticate answers for Basic, which authPlugin checks before the hooks run. */
export const BASIC = Symbol('basic')

/** The key's holder, or 401 for a key no one holds. */
function holder(user: Principal | undefined): Principal {
  if (!user) throw failed('Unknown or revoked key.')
  return user
}

/**
 * The scheme Token or Bearer (any letter case), one space, the key. Another scheme (a bare key
 * reads as one) is not_authenticated and a bad key after a known scheme authentication_failed
 * (docs/api.md, Errors); both say which forms are accepted. Only a well-formed key that no one holds is
 * simply refused. Basic, in any letter case: BASIC. The holder at once where the catalogue answers
 * at once (SQLite), else a promise of them.
 */
export function authenticate(users: Users, header: string | null): Principal | typeof BASIC | Promise<Principal> {
  if (!header) throw notAuthenticated()
  const space = header.indexOf(' ')
  const scheme = space < 0 ? header : header.slice(0, space)
  if (!SCHEMES.has(scheme.toLowerCase())) {
    if (scheme.toLowerCase() === 'basic') return BASIC
    throw notAuthenticated(ALL_FORMS)
  }
  const key = space < 0 ? '' : header.slice(space + 1)
  if (!KEY_PATTERN.test(key)) throw failed(ACCEPTED_FORMS)
  const user = users.authenticate(key)
  // Tested here rather than through andThen: no function is made for a request's key on SQLite.
  if (user instanceof Promise) return user.then(holder)
  return holder(user)
}

/** A check made again: the user as they are now, or undefined; a promise of it where the catalogue answers promises. */
export type Recheck = () => Principal | undefined | Promise<Principal | undefined>

/**
 * The first of `items` that `test` holds for, or undefined: at once while the tests answer at
 * once, else a promise of it (the items after a promised answer are tested once it settles).
 */
function firstOf<T>(
  items: readonly T[],
  test: (item: T) => boolean | Promise<boolean>,
  from = 0,
): T | undefined | Promise<T | undefined> {
  for (let i = from; i < items.length; i++) {
    const item = items[i]!
    const holds = test(item)
    if (holds instanceof Promise) return holds.then((yes) => (yes ? item : firstOf(items, test, i + 1)))
    if (holds) return item
  }
  return undefined
}

/** The recheck chosen: itself where it was chosen at once, else one that waits for the choice. */
function chosenRecheck(chosen: Recheck | undefined | Promise<Recheck | undefined>): Recheck {
  if (!(chosen instanceof Promise)) return chosen ?? (() => undefined)
  return () => chosen.then((recheck) => recheck?.())
}

/**
 * The check made again, for a request that lasts (an event stream), of the credentials it came
 * with: the user as they are now (their access may have changed), or undefined once the key is
 * revoked, the password changed or the user removed. It keeps no secret: a key's hash, or the
 * stamp of the stored password hash (users.passwordStamp). Read here, as every Authorization header is.
 */
export function recheckOf(users: Users, request: Request, user: Principal): Recheck {
  if (!request.headers.has('authorization') && hasSessionCookie(request)) {
    // The one live session among the cookies was the user's (authPlugin); it is still theirs, or the stream ends.
    const rechecks = cookieValues(request, BOTH_NAMES).map((id) => users.sessions.recheckOf(id))
    return chosenRecheck(firstOf(rechecks, (recheck) => andThen(recheck(), (now) => now?.id === user.id)))
  }
  const header = request.headers.get('authorization') ?? ''
  const basic = isBasic(header) ? basicCredentials(header) : undefined
  const key = basic ? basic[1] : header.slice(header.indexOf(' ') + 1)
  // Basic with a password (what else passed authPlugin's check): the stamp is taken as the stream opens.
  const byPassword = (): Recheck => {
    const stamp = users.passwordStamp(user.id)
    return () => andThen(stamp, (taken) => (taken === undefined ? undefined : users.byPasswordStamp(user.id, taken)))
  }
  if (!KEY_PATTERN.test(key)) return byPassword()
  const hash = hashKey(key)
  const byKey: Recheck = () => andThen(users.byKeyHash(hash), (now) => (now?.id === user.id ? now : undefined))
  // A key of theirs (Token, Bearer, or Basic with a key), or Basic with a password shaped like a key.
  return chosenRecheck(andThen(users.authenticate(key), (found) => (found?.id === user.id ? byKey : byPassword())))
}

export type AuthOptions = {
  /**
   * The client's address, by which password failures are slowed down (passwords.ts); '' when it
   * is not known (app.handle in tests). Read for Basic requests only.
   */
  addressOf?: (request: Request) => string
  /**
   * False for a request the app refuses for its Host (http/hosts.ts): it gets no password check,
   * so that a page of another site, its name pointed at this machine, neither costs Argon2 nor
   * adds to the slow-down of the logins made from this machine.
   */
  admits?: (request: Request) => boolean
  /** Where a request with the session cookie may come from (createPageGuard); default: no --public-url. */
  page?: PageGuard
}

/** principals: who each request authenticated as, shared with the request log (app.ts). */
export function authPlugin(
  users: Users,
  principals = new WeakMap<Request, Principal>(),
  { addressOf = () => '', admits, page = createPageGuard() }: AuthOptions = {},
) {
  /** Outcomes of Basic checks, made before the hooks run; an Error is thrown by the hook (a 500 when it is not ours). */
  const basics = new WeakMap<Request, Principal | Error>()

  /** The outcome of the Basic check made for this request; none: the credentials were malformed. */
  function basicOutcome(request: Request): Principal {
    const outcome = basics.get(request)
    if (outcome instanceof Error) throw outcome
    if (!outcome) throw failed(BASIC_FAILED)
    return outcome
  }
  const settle = (request: Request, outcome: Principal | undefined) => {
    if (outcome) basics.set(request, outcome)
  }
  const settleError = (request: Request, error: unknown) => {
    basics.set(request, error instanceof Error ? error : new Error(String(error)))
  }

  /**
   * A password check may have to wait for Argon2 (or the slow-down), and Elysia awaits an
   * onRequest hook on every request or on none: an async hook would add an await to every
   * Token request. So a Basic request is checked first, here, around the whole handler; the
   * hook then only reads the outcome, and every other request goes straight on. Elysia's wrap
   * (a function around its fetch) is marked internal in its source: test/http/basic.test.ts
   * (app.handle) and test/cli/e2e.test.ts (the executable's server) fail if it stops running.
   */
  function checkBasicFirst<H extends (request: Request) => unknown>(handle: H, request: Request): H {
    const header = request.headers.get('authorization')
    if (header === null || !isBasic(header) || !readsCredentials(request)) return handle
    if (admits && !admits(request)) return handle
    const credentials = basicCredentials(header)
    if (!credentials) return handle
    let outcome: ReturnType<Users['authenticateBasic']>
    try {
      outcome = users.authenticateBasic(credentials[0], credentials[1], addressOf(request))
    } catch (error) {
      settleError(request, error)
      return handle
    }
    if (!(outcome instanceof Promise)) {
      settle(request, outcome)
      return handle
    }
    return ((r: Request) =>
      outcome
        .then(
          (user) => settle(r, user),
          (error) => settleError(r, error),
        )
        .then(() => handle(r))) as H
  }

  /**
   * The user of the one live session among the cookies' ids; AMBIGUOUS when more than one is
   * live (ours and one another page of this host set: neither is taken); undefined when none is.
   * Liveness is checked without a use, so that only the session taken has its expiry moved on.
   * At once where the catalogue answers at once (SQLite), else a promise.
   */
  function sessionUser(
    ids: string[],
  ): Principal | typeof AMBIGUOUS | undefined | Promise<Principal | typeof AMBIGUOUS | undefined> {
    if (ids.length === 1) return users.sessions.resolve(ids[0]!)
    const checked = ids
      .filter((id) => SESSION_ID_PATTERN.test(id))
      .map((id) => andThen(users.sessions.recheckOf(id)(), (now) => (now === undefined ? undefined : id)))
    const settled = checked.some((c) => c instanceof Promise)
      ? Promise.all(checked)
      : (checked as (string | undefined)[])
    return andThen(settled, (found) => {
      const live = found.filter((id) => id !== undefined)
      if (live.length > 1) return AMBIGUOUS
      return live.length === 1 ? users.sessions.resolve(live[0]!) : undefined
    })
  }

  /**
   * Who the request is, kept in `principals` for the routes. Elysia registers the global hook
   * once per instance that uses the plugin (the app and the modules): authenticate once per
   * request. At once where the catalogue answers at once (SQLite), else a promise.
   */
  function identify(request: Request): void | Promise<void> {
    if (principals.has(request)) return
    const path = pathOf(request.url)
    if (!readsCredentials(request, path)) return
    const header = request.headers.get('authorization')
    // The cookie counts only without an Authorization header: a client that sends a key or
    // Basic is answered as it always was, whatever cookies its browser holds.
    if (header === null) {
      const secure = page.secure(request)
      const ids = sessionIdsOf(request, secure)
      if (ids.length > 0) {
        // Refused before the session is looked at: another page learns nothing, and the user stays signed in.
        page.check(request)
        return andThen(sessionUser(ids), (user) => {
          if (user !== undefined && user !== AMBIGUOUS) {
            principals.set(request, user)
            return
          }
          if (SESSION_PATH.test(path)) return
          const headers: [string, string][] = [
            ['WWW-Authenticate', CHALLENGE.headers['WWW-Authenticate']],
            ...clearedSessionCookies(secure).map((c): [string, string] => ['Set-Cookie', c]),
          ]
          throw new AppError(
            401,
            'authentication_failed',
            user === AMBIGUOUS ? SESSION_AMBIGUOUS : SESSION_ENDED,
            {},
            { headers },
          )
        })
      }
      // Nobody is signed in: the session's GET says so, its DELETE has nothing to do.
      if (SESSION_PATH.test(path)) return
    }
    const user = authenticate(users, header)
    if (user instanceof Promise)
      return user.then((held) => {
        principals.set(request, held)
      })
    principals.set(request, user === BASIC ? basicOutcome(request) : user)
  }

  return (
    new Elysia({ name: 'reelhouse.auth' })
      .wrap(checkBasicFirst as Parameters<Elysia['wrap']>[0])
      // Elysia awaits a hook or not by its source text (http/composed.ts): on SQLite the check
      // answers at once and the hook is a plain call, not awaited on every request; where the
      // catalogue answers promises it is async.
      .onRequest(
        users.engine === 'sqlite'
          ? ({ request }) => {
              identify(request)
            }
          : async ({ request }) => {
              await identify(request)
            },
      )
      .macro({
        auth: {
          resolve({ request }) {
            const user = principals.get(request)
            if (!user) throw notAuthenticated()
            return { user }
          },
        },
        /** The user when the request authenticated, else undefined (the session's GET and DELETE). */
        maybeAuth: {
          resolve({ request }) {
            return { user: principals.get(request) }
          },
        },
      })
      .as('global')
  )
}
