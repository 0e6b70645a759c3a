// One log line per request (docs/operations.md, "Logs"): method, path, status, duration, user and
// request id. The id is also sent back as X-Request-Id, and a 500 names the same one, so a
// client's report leads to its line and to the error logged with it.
//
// What the line never holds: the query string (no route takes a secret there, but a client could
// put one there by mistake), headers (the key is in Authorization) and bodies (device passwords).
import { randomBytes } from 'node:crypto'
import type { Log } from '../util/log.ts'
import { pathOf, setHeaders } from './head.ts'

/**
 * An id a reverse proxy made (nginx's $request_id, a load balancer's) is kept, so that its log
 * and ours share it; anything else is replaced, so that no client can write what it likes into
 * the log through this header.
 */
const INCOMING_ID = /^[A-Za-z0-9._:@-]{8,64}$/

type Pending = { id: string; at: number }

/**
 * 16 random hex characters per id, cut from a pool filled 128 ids at a time: a call of
 * randomBytes per request cost 1.7 µs, a quarter of a whole /api/health request in-process.
 */
function idMaker() {
  let pool = ''
  let at = 0
  return () => {
    if (at === pool.length) {
      pool = randomBytes(8 * 128).toString('hex')
      at = 0
    }
    at += 16
    return pool.slice(at - 16, at)
  }
}

/** userOf: the user a request authenticated as (auth.ts), for the line. */
export function createRequestLog(
  log: Log,
  { quiet = false, userOf = (_: Request): string | undefined => undefined } = {},
) {
  const pending = new WeakMap<Request, Pending>()
  const newId = idMaker()
  // The lines go out in batches, at the end of each turn of the event loop (util/log.ts).
  const line = log.infoBatched ?? log.info

  return {
    /** The request's id; undefined for a request that never reached the app's fetch. */
    idOf: (request: Request) => pending.get(request)?.id,

    /**
     * Around Elysia's fetch (its wrap, as the Basic check in auth.ts): the id and the start time
     * first, then, once the answer is made, X-Request-Id on it and the line, with the status of
     * the Response actually sent (an error's too). For a streamed list, the answer is made when
     * its first rows are ready.
     *
     * Both are done here and not in hooks. An after-response hook would write the line later, but
     * Elysia keeps every request's context alive until its turn comes: under load (16
     * connections of imports) that doubled the server's peak memory (350 against 176 MB in
     * bench/import-profile.ts). And a header put in Elysia's `set.headers` makes it rebuild every
     * Response a handler returns (a new Response over the old one's body stream, to merge the
     * headers): a list's page, made as a string, was then sent as a stream. Set on the answer
     * itself, the header costs one call (8 µs of a 50-row page in-process).
     */
    around<H extends (request: Request) => unknown>(handle: H, request: Request): H {
      const incoming = request.headers.get('x-request-id')
      const entry = {
        id: incoming && INCOMING_ID.test(incoming) ? incoming : newId(),
        at: quiet ? 0 : performance.now(),
      }
      pending.set(request, entry)
      return ((r: Request) => {
        const out = handle(r)
        return out instanceof Promise ? out.then((response) => done(r, entry, response)) : done(r, entry, out)
      }) as H
    },
  }

  function done(request: Request, entry: Pending, response: unknown): unknown {
    const answer = response instanceof Response ? setHeaders(response, { 'x-request-id': entry.id }) : response
    if (!quiet)
      line('request', {
        method: request.method,
        path: pathOf(request.url),
        status: answer instanceof Response ? answer.status : 200,
        ms: Math.round((performance.now() - entry.at) * 10) / 10,
        user: userOf(request) ?? '-',
        request_id: entry.id,
      })
    return answer
  }
}

export type RequestLog = ReturnType<typeof createRequestLog>
