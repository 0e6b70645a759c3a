// Composes the HTTP modules over the given dependencies. No I/O of its own: a test builds it
// over a temporary database and calls app.handle(request).
import { openapi } from '@elysiajs/openapi'
import type { TSchema } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import type { Db } from './db/client.ts'
import { authPlugin } from './http/auth.ts'
import { createBodyParser } from './http/body.ts'
import { docsAssets } from './http/docs.ts'
import { AppError, errorResponse, fromSqlite, fromValidation } from './http/errors.ts'
import { checkHead, pathOf } from './http/head.ts'
import { createLists } from './http/lists.ts'
import { checkAccept } from './http/versioning.ts'
import { assetHoldDurationsModule, createHoldDurations } from './modules/assetholddurations/index.ts'
import { contentTypesModule } from './modules/contenttypes/index.ts'
import { customMetadataModule } from './modules/custommetadata/index.ts'
import { createCustomMetadata } from './modules/custommetadata/service.ts'
import { devicesModule } from './modules/devices/index.ts'
import { importLogsModule } from './modules/importlogs/index.ts'
import { createMediaAssets, mediaAssetsModule } from './modules/mediaassets/index.ts'
import { createProductions, productionsModule } from './modules/productions/index.ts'
import { projectAssetsModule } from './modules/projectassets/index.ts'
import { createProjectAssets } from './modules/projectassets/service.ts'
import { tasksModule } from './modules/tasks/index.ts'
import { transcodingProfilesModule } from './modules/transcodingprofiles/index.ts'
import { type Runner, createRunner } from './tasks/runner.ts'
import { copyHandler } from './tasks/copy.ts'
import { deleteHandler } from './tasks/delete.ts'
import { createDevices } from './modules/devices/service.ts'
import type { ModuleContext } from './modules/context.ts'
import { createUsers } from './modules/users/service.ts'
import { type Log, silentLog } from './util/log.ts'
import { VERSION } from './version.ts'

export type AppDeps = { db: Db; log?: Log; runner?: Runner }

export function createApp({ db, log = silentLog, runner = createTaskRunner(db, log) }: AppDeps) {
  const users = createUsers(db)
  const ctx: ModuleContext = { db, users, list: createLists(db), auth: authPlugin(users), runner }
  const devices = createDevices(db)
  const holds = createHoldDurations(db)
  const metadata = createCustomMetadata(db)
  const media = createMediaAssets(db, holds, metadata)
  const projects = createProjectAssets(db, { runner, holds, metadata })
  const bodySchemas = new Map<string, TSchema>()
  let requestCounter = 0
  let methodsByPath: { pattern: RegExp; methods: Set<string> }[] | undefined

  /** A bug: logged with an id, which the answer names, never the error itself (service.md 4). */
  function serverError(error: unknown, request?: Request): Response {
    const id = `${Date.now().toString(36)}-${(++requestCounter).toString(36)}`
    const where = request ? { method: request.method, path: pathOf(request.url) } : {}
    log.error('request failed', { request_id: id, ...where, error: String((error as Error)?.stack ?? error) })
    return errorResponse(new AppError(500, 'server_error', `Internal error; request id ${id}. The server log has the details.`))
  }

  // normalize 'typebox': Elysia's default cleaner (exact-mirror) runs before validation and
  // rebuilds a record or array field from whatever was sent (meta_field_store: 5 became {},
  // "abc" became {"0":"a",...}); TypeBox's Clean drops unknown fields and leaves wrong types
  // for validation to refuse.
  const app = new Elysia({
    normalize: 'typebox',
    // Elysia finds the path at the first "/" from offset 11 of the URL, past any "http://h.io",
    // which cuts into the path when the Host is shorter (Host: nas answered 404 everywhere, and
    // the router saw another path than the auth hook): https://github.com/elysiajs/elysia/issues/748.
    // Offset 7 is the end of "http://", the only scheme Bun.serve gives us (no TLS; checkHead
    // refuses any other URL), and pathOf reads the path the same way.
    handler: { standardHostname: false },
    serve: {
      // Bun would answer bodies over its own limit (128 MiB) with a bare 413 before our parser
      // answers 413 too_large in the envelope; what is not read of a body is discarded.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      // Whatever escapes Elysia's own handling (say, a thrown null) would get Bun's default page,
      // which in development mode shows the stack: the envelope instead.
      development: false,
      error: (error) => serverError(error),
    },
  })
    .onError({ as: 'global' }, ({ code, error, request }) => {
      if (error instanceof AppError) return errorResponse(error)
      if (code === 'PARSE' && error.cause instanceof AppError) return errorResponse(error.cause)
      // An answer that does not fit its own schema is our bug, not the client's.
      if (code === 'VALIDATION' && error.type === 'response') return serverError(error, request)
      // An id that cannot exist answers like one that does not; DELETE says does_not_exist (api.md 4.1).
      if (code === 'VALIDATION' && error.type === 'params' && request.method === 'DELETE')
        return errorResponse(new AppError(404, 'does_not_exist', 'Not found.'))
      if (code === 'VALIDATION') return errorResponse(fromValidation(error.type, error.all as never))
      if (code === 'PARSE') return errorResponse(new AppError(400, 'parse_error', 'The request body could not be parsed.'))
      if (code === 'NOT_FOUND') return errorResponse(notFoundOrNotAllowed(request))
      const sqlite = fromSqlite(error)
      if (sqlite) return errorResponse(sqlite)
      return serverError(error, request)
    })
    // First of all hooks: the line and headers are checked before auth or routing reads them.
    .onRequest(({ request }) => checkHead(request))
    .use(ctx.auth)
    .onRequest(({ request }) => {
      const path = pathOf(request.url)
      if (path.startsWith('/api/') && !path.startsWith('/api/docs')) checkAccept(request.headers.get('accept'))
    })
    .onParse(createBodyParser((method, route) => bodySchemas.get(`${method} ${route}`)))
    .use(docsAssets)
    .use(
      openapi({
        path: '/api/docs',
        provider: 'swagger-ui',
        // url: absolute, as the plugin's relative default resolves to /api/api/docs/json from /api/docs.
        swagger: { url: '/api/docs/json', cdn: '/api/docs/assets/swagger-ui-bundle.js', theme: '/api/docs/assets/swagger-ui.css', persistAuthorization: true } as never,
        documentation: {
          info: { title: 'Reelhouse API', version: VERSION, description: 'Media asset manager. Every endpoint but health and docs needs `Authorization: Token <key>`.' },
          components: { securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token <40 hex characters>' } } },
          security: [{ token: [] }],
        },
      }),
    )
    .get('/api/health', () => ({ status: 'ok' as const, version: VERSION }), {
      response: t.Object({ status: t.Literal('ok'), version: t.String() }),
      detail: { summary: 'Service health (no key needed)', tags: ['service'], security: [] },
    })
    .group('/api', (api) =>
      api
        .use(devicesModule(ctx, devices))
        .use(productionsModule(ctx, createProductions(db, devices, users)))
        .use(transcodingProfilesModule(ctx))
        .use(customMetadataModule(ctx, metadata))
        .use(contentTypesModule(ctx))
        .use(mediaAssetsModule(ctx, media, 'audio'))
        .use(mediaAssetsModule(ctx, media, 'image'))
        .use(mediaAssetsModule(ctx, media, 'video'))
        .use(importLogsModule(ctx))
        .use(assetHoldDurationsModule(ctx, holds))
        .use(projectAssetsModule(ctx, projects, '/projectassets'))
        .use(projectAssetsModule(ctx, projects, '/project'))
        .use(tasksModule(ctx)),
    )

  for (const route of app.routes) {
    const body = route.hooks?.body
    const schema = typeof body === 'string' ? (app as unknown as { definitions: { type: Record<string, TSchema> } }).definitions.type[body] : body
    if (schema) bodySchemas.set(`${route.method} ${route.path}`, schema as TSchema)
  }

  function notFoundOrNotAllowed(request: Request): AppError {
    methodsByPath ??= routePatterns(app.routes)
    const path = pathOf(request.url).replace(/(.)\/$/, '$1')
    const allowed = methodsByPath.find((r) => r.pattern.test(path))?.methods
    if (allowed && !allowed.has(request.method)) {
      return new AppError(405, 'method_not_allowed', `Method "${request.method}" not allowed.`, {}, { headers: { Allow: [...allowed].join(', ') } })
    }
    return new AppError(404, 'not_found', 'Not found.')
  }

  return app
}

function routePatterns(routes: { method: string; path: string }[]) {
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


/** The task runner with every kind of work the service does; started by serve, not here. */
export function createTaskRunner(db: Db, log: Log, concurrency = 2): Runner {
  const users = createUsers(db)
  return createRunner(db, { concurrency, log, handlers: { copy: copyHandler(db, users), delete: deleteHandler(db, users) } })
}
