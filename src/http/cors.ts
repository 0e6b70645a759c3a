// Cross-origin calls from browser pages, such as an editing application's panel served from
// another origin (docs/operations.md, "Browser panels and CORS"). Off unless serve names origins
// (--allow-origin): without these headers a browser lets no page of another origin read an
// answer, which is the safe default for a service that holds keys.
//
// Runs before authentication: a browser sends its preflight OPTIONS without the Authorization
// header the real request will carry, and a page can only read a 401 (to tell the user the key
// is wrong) when that answer carries these headers too.
import { setHeaders } from './head.ts'

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

/**
 * CORS around the app (a wrap, as the request log): the headers are put on the answer itself,
 * not in Elysia's `set.headers`, where any header makes Elysia rebuild every Response a handler
 * returns around its body stream (requestlog.ts says more). None: CORS is off.
 * methods: the methods of the API's routes (known once the app is composed, hence a function).
 */
export function corsWrap(origins: readonly string[], methods: () => string[]) {
  const allowed = new Set(origins)
  if (!allowed.size) return undefined
  let allowMethods: string | undefined
  return <H extends (request: Request) => unknown>(handle: H, request: Request): H => {
    const origin = request.headers.get('origin')
    const from = origin !== null && allowed.has(origin) ? origin : undefined
    // A preflight: OPTIONS naming the method to come. Any path (a 404 is then answered to the
    // real request, which the page can read), no key, no body.
    if (from && request.method === 'OPTIONS' && request.headers.has('access-control-request-method')) {
      allowMethods ??= [...new Set([...methods(), 'HEAD'])].join(', ')
      const preflight = new Response(null, {
        status: 204,
        headers: {
          vary: 'Origin',
          'access-control-allow-origin': from,
          'access-control-allow-methods': allowMethods,
          'access-control-allow-headers': ALLOW_HEADERS,
          'access-control-max-age': MAX_AGE,
        },
      })
      return (() => preflight) as unknown as H
    }
    return ((r: Request) => {
      const out = handle(r)
      return out instanceof Promise ? out.then((response) => withCors(response, from)) : withCors(out, from)
    }) as H
  }
}

/**
 * Every answer depends on Origin once CORS is on: a cache must not give one origin's answer
 * (with or without these headers) to a page of another. An allowed origin may read it.
 */
function withCors(response: unknown, from: string | undefined): unknown {
  if (!(response instanceof Response)) return response
  const headers: Record<string, string> = {}
  const vary = response.headers.get('vary')
  if (!vary) headers.vary = 'Origin'
  else if (!/(^|,)\s*origin\s*(,|$)/i.test(vary)) headers.vary = `${vary}, Origin`
  if (from) {
    headers['access-control-allow-origin'] = from
    headers['access-control-expose-headers'] = EXPOSE_HEADERS
  }
  return setHeaders(response, headers)
}
