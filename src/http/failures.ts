// What a failed request answers (docs/api.md, Errors): the one place that turns every kind of error,
// ours (AppError), the framework's (validation, parse, not found) and SQLite's, into the
// envelope of docs/api.md, Errors, and the one place that logs a bug with its request id.
import { AppError, errorResponse, fromDatabase, fromValidation, isProjectPath, notImplemented } from './errors.ts'
import { pathOf } from './head.ts'
import type { Log } from '../util/log.ts'
import { FileWorkUnavailable } from '../storage/platform.ts'

type Route = { method: string; path: string }
type Failure = { code: unknown; error: any; request: Request }

/** idOf: the request's id (src/http/requestlog.ts), which its error line and 500 answer name. */
export function createFailures(
  log: Log,
  routes: () => Route[],
  idOf: (request: Request) => string | undefined = () => undefined,
) {
  let requestCounter = 0
  let methodsByPath: { pattern: RegExp; methods: Set<string> }[] | undefined

  /** A bug: logged with an id, which the answer names, never the error itself. */
  function serverError(error: unknown, request?: Request): Response {
    // Bun's last-resort handler has no request: an id of its own.
    const id = (request && idOf(request)) ?? `${Date.now().toString(36)}-${(++requestCounter).toString(36)}`
    const where = request ? { method: request.method, path: pathOf(request.url) } : {}
    log.error('request failed', { request_id: id, ...where, error: String((error as Error)?.stack ?? error) })
    return errorResponse(
      new AppError(500, 'server_error', `Internal error; request id ${id}. The server log has the details.`),
    )
  }

  /** 405 with Allow when the path exists for other methods, else 404. */
  function notFoundOrNotAllowed(request: Request): AppError {
    methodsByPath ??= routePatterns(routes())
    const path = pathOf(request.url).replace(/(.)\/$/, '$1')
    const allowed = methodsByPath.find((r) => r.pattern.test(path))?.methods
    if (allowed && !allowed.has(request.method)) {
      return new AppError(
        405,
        'method_not_allowed',
        `Method "${request.method}" not allowed.`,
        {},
        { headers: { Allow: [...allowed].join(', ') } },
      )
    }
    return new AppError(404, 'not_found', 'Not found.')
  }

  return {
    serverError,
    /** Elysia's onError handler. */
    onError({ code, error, request }: Failure): Response {
      if (error instanceof AppError) return errorResponse(error)
      if (code === 'PARSE' && error.cause instanceof AppError) return errorResponse(error.cause)
      // An answer that does not fit its own schema is our bug, not the client's.
      if (code === 'VALIDATION' && error.type === 'response') return serverError(error, request)
      // An id that cannot exist answers like one that does not; a project's DELETE says does_not_exist
      // (docs/api.md, Project assets), every other DELETE not_found, as for an id that could exist.
      if (
        code === 'VALIDATION' &&
        error.type === 'params' &&
        request.method === 'DELETE' &&
        isProjectPath(pathOf(request.url))
      )
        return errorResponse(new AppError(404, 'does_not_exist', 'Not found.'))
      if (code === 'VALIDATION') return errorResponse(fromValidation(error.type, error.all))
      if (code === 'PARSE')
        return errorResponse(new AppError(400, 'parse_error', 'The request body could not be parsed.'))
      if (code === 'NOT_FOUND') return errorResponse(notFoundOrNotAllowed(request))
      // File work this platform does not do (a system or processor with no folder-handle layer:
      // storage/platform.ts): said in the platform's words; nothing was done.
      if (error instanceof FileWorkUnavailable) return errorResponse(notImplemented(error.message))
      const refused = fromDatabase(error)
      if (refused) return errorResponse(refused)
      return serverError(error, request)
    },
  }
}

function routePatterns(routes: Route[]) {
  const byPattern = new Map<string, Set<string>>()
  for (const r of routes) {
    const source = '^' + r.path.replace(/(.)\/$/, '$1').replace(/:[^/]+/g, '[^/]+') + '$'
    const set = byPattern.get(source) ?? new Set<string>()
    set.add(r.method)
    if (r.method === 'GET') set.add('HEAD')
    byPattern.set(source, set)
  }
  return [...byPattern].map(([source, methods]) => ({ pattern: new RegExp(source), methods }))
}
