// One log line per request (docs/operations.md, "Logs"): method, path, status, duration, user and
// request id. The id is also sent back as X-Request-Id, and a 500 names the same one, so a
// client's report leads to its line and to the error logged with it.
//
// What the line never holds: the query string (no route takes a secret there, but a client could
// put one there by mistake), headers (the key is in Authorization) and bodies (device passwords).
import { randomBytes } from 'node:crypto'
import type { Log } from '../util/log.ts'
import { pathOf } from './head.ts'

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
export function createRequestLog(log: Log, { quiet = false, userOf = (_: Request): string | undefined => undefined } = {}) {
  const pending = new WeakMap<Request, Pending>()
  const newId = idMaker()

  return {
    /** The request's id; undefined for a request that never reached the app's hooks. */
    idOf: (request: Request) => pending.get(request)?.id,

    /** First hook of all: the id and the start time; the id is sent back on every answer. */
    start({ request, set }: { request: Request; set: { headers: Record<string, unknown> } }) {
      const incoming = request.headers.get('x-request-id')
      const id = incoming && INCOMING_ID.test(incoming) ? incoming : newId()
      pending.set(request, { id, at: performance.now() })
      set.headers['x-request-id'] = id
    },

    /**
     * Around Elysia's fetch (its wrap, as the Basic check in auth.ts): the line once the answer
     * is made, with the status of the Response actually sent (an error's too). An after-response
     * hook would do the same later, but Elysia keeps every request's context alive until its
     * turn comes: under load (16 connections of imports) that doubled the server's peak memory
     * (350 against 176 MB in bench/import-profile.ts). For a streamed list, the answer is made
     * when its first rows are ready.
     */
    around<H extends (request: Request) => unknown>(handle: H, _request: Request): H {
      if (quiet) return handle
      return ((request: Request) => {
        const out = handle(request)
        return out instanceof Promise ? out.then((response) => line(request, response)) : line(request, out)
      }) as H
    },
  }

  function line(request: Request, response: unknown): unknown {
    const entry = pending.get(request)
    if (entry)
      log.info('request', {
        method: request.method,
        path: pathOf(request.url),
        status: response instanceof Response ? response.status : 200,
        ms: Math.round((performance.now() - entry.at) * 10) / 10,
        user: userOf(request) ?? '-',
        request_id: entry.id,
      })
    return response
  }
}

export type RequestLog = ReturnType<typeof createRequestLog>
