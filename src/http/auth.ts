// Token authentication (service.md sections 4 and 5). The Authorization header is read here and
// nowhere else: once per request, before the body is parsed, so a request without a valid key
// is refused before any of its input is looked at. Routes declare `auth: true` to receive the
// resolved user.
import { Elysia } from 'elysia'
import type { Principal, Users } from '../modules/users/service.ts'
import { AppError } from './errors.ts'
import { pathOf } from './head.ts'

const PUBLIC = [/^\/api\/health\/?$/, /^\/api\/docs(\/.*)?$/]

const notAuthenticated = () =>
  new AppError(401, 'not_authenticated', 'Authentication credentials were not provided.', {}, {
    headers: { 'WWW-Authenticate': 'Token' },
  })
const failed = (detail: string) =>
  new AppError(401, 'authentication_failed', detail, {}, { headers: { 'WWW-Authenticate': 'Token' } })

export function authenticate(users: Users, header: string | null): Principal {
  if (!header) throw notAuthenticated()
  const space = header.indexOf(' ')
  const scheme = space < 0 ? header : header.slice(0, space)
  if (scheme.toLowerCase() !== 'token') throw notAuthenticated()
  const rest = space < 0 ? '' : header.slice(space + 1)
  if (rest === '') throw failed('Invalid token header. No credentials provided.')
  if (rest.includes(' ')) throw failed('Invalid token header. Token string should not contain spaces.')
  const user = users.authenticate(rest)
  if (!user) throw failed('Invalid token.')
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
      if (!path.startsWith('/api/') || PUBLIC.some((p) => p.test(path))) return
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
