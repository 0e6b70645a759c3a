// Key authentication (service.md sections 4 and 5): `Authorization: Token <key>`, or `Bearer <key>`.
// The Authorization header is read here and nowhere else: once per request, before the body is
// parsed, so a request without a valid key is refused before any of its input is looked at.
// Routes declare `auth: true` to receive the resolved user.
import { Elysia } from 'elysia'
import { KEY_PATTERN, type Principal, type Users } from '../modules/users/service.ts'
import { AppError } from './errors.ts'
import { pathOf } from './head.ts'

const PUBLIC = [/^\/api\/health\/?$/, /^\/api\/docs(\/.*)?$/, /^\/api\/ping\/?$/]

/** What a malformed header is told: the two forms accepted (Bearer is what Swagger UI and most clients send). */
export const ACCEPTED_FORMS = 'Authorization must be "Token <key>" or "Bearer <key>" (40 hex characters).'
const SCHEMES = new Set(['token', 'bearer'])

// WWW-Authenticate stays "Token", the challenge service.md 4 names; Bearer is accepted beside it.
const notAuthenticated = (detail = `Authentication credentials were not provided. ${ACCEPTED_FORMS}`) =>
  new AppError(401, 'not_authenticated', detail, {}, { headers: { 'WWW-Authenticate': 'Token' } })
const failed = (detail: string) =>
  new AppError(401, 'authentication_failed', detail, {}, { headers: { 'WWW-Authenticate': 'Token' } })

/**
 * The scheme Token or Bearer (any letter case), one space, the key. Another scheme (a bare key
 * reads as one) is not_authenticated and a bad key after a known scheme authentication_failed
 * (service.md 4); both say which forms are accepted. Only a well-formed key that no one holds is
 * simply refused.
 */
export function authenticate(users: Users, header: string | null): Principal {
  if (!header) throw notAuthenticated()
  const space = header.indexOf(' ')
  const scheme = space < 0 ? header : header.slice(0, space)
  if (!SCHEMES.has(scheme.toLowerCase())) throw notAuthenticated(ACCEPTED_FORMS)
  const key = space < 0 ? '' : header.slice(space + 1)
  if (!KEY_PATTERN.test(key)) throw failed(ACCEPTED_FORMS)
  const user = users.authenticate(key)
  if (!user) throw failed('Unknown or revoked key.')
  return user
}

export function authPlugin(users: Users) {
  const principals = new WeakMap<Request, Principal>()
  return new Elysia({ name: 'reelhouse.auth' })
    .onRequest(({ request }) => {
      // Elysia registers this global hook once per instance that uses the plugin (the app and the
      // modules): authenticate once per request.
      if (principals.has(request)) return
      const path = pathOf(request.url)
      if (!(path.startsWith('/api/') || path === '/api') || PUBLIC.some((p) => p.test(path))) return
      principals.set(request, authenticate(users, request.headers.get('authorization')))
    })
    .macro({
      auth: {
        resolve({ request }) {
          const user = principals.get(request)
          if (!user) throw notAuthenticated()
          return { user }
        },
      },
    })
    .as('global')
}
