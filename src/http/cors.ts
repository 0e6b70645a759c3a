// Cross-origin calls from browser pages, such as an editing application's panel served from
// another origin (docs/operations.md, "Browser panels and CORS"). Off unless serve names origins
// (--allow-origin): without these headers a browser lets no page of another origin read an
// answer, which is the safe default for a service that holds keys.
//
// Runs before authentication: a browser sends its preflight OPTIONS without the Authorization
// header the real request will carry, and a page can only read a 401 (to tell the user the key
// is wrong) when that answer carries these headers too.
import { Elysia } from 'elysia'

/** What a panel sends beyond the headers browsers allow by themselves. */
const ALLOW_HEADERS = 'Authorization, Content-Type, Accept'
/** What a page may read of an answer beyond the few headers browsers always expose. */
const EXPOSE_HEADERS = 'X-Total-Count, Link, X-Request-Id, Location'
/**
 * Seconds a browser may keep a preflight's answer. Short enough that a restart with other origins
 * or a new version's methods is seen within minutes; a panel still sends one preflight per path
 * and method a few times an hour, not before every request.
 */
const MAX_AGE = '600'

type Reply = { status?: number | string; headers: Record<string, string | number> }

/** methods: the methods of the API's routes (known once the app is composed, hence a function). */
export function corsPlugin(origins: readonly string[], methods: () => string[]) {
  const allowed = new Set(origins)
  let allowMethods: string | undefined
  const plugin = new Elysia({ name: 'reelhouse.cors' })
  if (!allowed.size) return plugin
  return plugin
    .onRequest(({ request, set }: { request: Request; set: Reply }) => {
      // Every answer depends on Origin once CORS is on: a cache must not give one origin's
      // answer (with or without these headers) to a page of another.
      set.headers.vary = 'Origin'
      const origin = request.headers.get('origin')
      if (origin === null || !allowed.has(origin)) return
      set.headers['access-control-allow-origin'] = origin
      // A preflight: OPTIONS naming the method to come. Any path (a 404 is then answered to the
      // real request, which the page can read), no key, no body.
      if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method')) {
        allowMethods ??= [...new Set([...methods(), 'HEAD'])].join(', ')
        set.status = 204
        set.headers['access-control-allow-methods'] = allowMethods
        set.headers['access-control-allow-headers'] = ALLOW_HEADERS
        set.headers['access-control-max-age'] = MAX_AGE
        return new Response(null, { status: 204 })
      }
      set.headers['access-control-expose-headers'] = EXPOSE_HEADERS
    })
    .as('global')
}
