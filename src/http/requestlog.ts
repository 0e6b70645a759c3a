// One log line per request (docs/operations.md, "Logs"): method, path, status, duration, user and
// request id. The id is also sent back as X-Request-Id, and a 500 names the same one, so a
// client's report leads to its line and to the error logged with it.
//
// What the line never holds: the query string (no route takes a secret there, but a client could
// put one there by mistake), headers (the key is in Authorization) and bodies (device passwords).
import { randomBytes } from 'node:crypto'
import { StatusMap } from 'elysia'
import type { Log } from '../util/log.ts'
import { pathOf } from './head.ts'

/**
 * An id a reverse proxy made (nginx's $request_id, a load balancer's) is kept, so that its log
 * and ours share it; anything else is replaced, so that no client can write what it likes into
 * the log through this header.
 */
const INCOMING_ID = /^[A-Za-z0-9._:@-]{8,64}$/

type Pending = { id: string; at: number; status?: number }

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

export function createRequestLog(log: Log, { quiet = false } = {}) {
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
     * The answer the error handler made: its status, which Elysia's after-response hook does not
     * see for errors (its `set.status` stays at 200 there).
     */
    answered(request: Request, response: Response): Response {
      const entry = pending.get(request)
      if (entry) entry.status = response.status
      return response
    },

    /** After the answer went out: the line. */
    finish(context: { request: Request; set: { status?: number | string }; response?: unknown; user?: { username: string } }) {
      const entry = pending.get(context.request)
      if (!entry || quiet) return
      const status = entry.status ?? (context.response instanceof Response ? context.response.status : statusOf(context.set.status))
      log.info('request', {
        method: context.request.method,
        path: pathOf(context.request.url),
        status,
        ms: Math.round((performance.now() - entry.at) * 10) / 10,
        user: context.user?.username ?? '-',
        request_id: entry.id,
      })
    },
  }
}

const statusOf = (status: number | string | undefined) =>
  typeof status === 'number' ? status : (StatusMap as Record<string, number>)[status ?? ''] ?? 200

export type RequestLog = ReturnType<typeof createRequestLog>
