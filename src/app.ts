// Composes the HTTP modules over the core's services (src/core.ts). No I/O of its own: a test
// builds the core over a temporary database and calls app.handle(request).
import type { TSchema } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import type { Core } from './core.ts'
import { dataVersionOf, readSnapshotOf } from './db/client.ts'
import { authPlugin, createPageGuard } from './http/auth.ts'
import type { Principal } from './modules/users/service.ts'
import { createBodyParser } from './http/body.ts'
import { apiDocs } from './http/docs.ts'
import { pageRoutes } from './http/page.ts'
import type { Page } from './http/pagebuild.ts'
import { createFailures } from './http/failures.ts'
import { corsWrap } from './http/cors.ts'
import { baseUrlOf, checkHead, pathOf } from './http/head.ts'
import { createHostCheck } from './http/hosts.ts'
import { createLists } from './http/lists.ts'
import { errors, sharedModels } from './http/models.ts'
import { createRequestLog } from './http/requestlog.ts'
import { type ApiVersion, checkAccept, checkEventStreamAccept } from './http/versioning.ts'
import { archiveModule } from './modules/archive/index.ts'
import { assetHoldDurationsModule } from './modules/assetholddurations/index.ts'
import { assetImportModule } from './modules/assetimport/index.ts'
import { contentTypesModule } from './modules/contenttypes/index.ts'
import { customMetadataModule } from './modules/custommetadata/index.ts'
import { devicesModule } from './modules/devices/index.ts'
import { eventsModule } from './modules/events/index.ts'
import { historyModule } from './modules/history/index.ts'
import { importLogsModule } from './modules/importlogs/index.ts'
import { markersModule } from './modules/markers/index.ts'
import { mediaAssetsModule } from './modules/mediaassets/index.ts'
import { remakeProxyModule } from './modules/mediaassets/proxy.ts'
import { proxyFileModule, proxyHeadWrap } from './modules/mediaassets/proxyfile.ts'
import { picturesModule } from './modules/mediaassets/pictures.ts'
import { searchModule } from './modules/search/index.ts'
import { shotsModule } from './modules/shots/index.ts'
import { sessionModule } from './modules/session/index.ts'
import { productionsModule } from './modules/productions/index.ts'
import { projectAssetsModule } from './modules/projectassets/index.ts'
import { tasksModule } from './modules/tasks/index.ts'
import { transcodingProfilesModule } from './modules/transcodingprofiles/index.ts'
import { verifyModule } from './modules/verify/index.ts'
import type { ModuleContext } from './http/context.ts'
import { VERSION } from './version.ts'

const ApiRoot = t.Record(t.String({ pattern: '^[a-z]+$' }), t.String({ format: 'uri' }), {
  description:
    'Each resource by name, with the absolute URL of its list (on serve --public-url when given, else on the Host the request was sent to).',
})

export type AppOptions = {
  /** No line per request (serve --quiet); errors are logged all the same. */
  quiet?: boolean
  /** serve --public-url, without a final slash: the base of the absolute URLs the API hands out. */
  publicUrl?: string
  /** serve --allow-origin: origins whose pages may call the API (CORS); none: CORS off. */
  allowOrigins?: readonly string[]
  /**
   * serve --host, the address listened on: on loopback only, a Host that is not one of this
   * machine's names is refused (http/hosts.ts). Undefined (in-process tests): no check.
   */
  host?: string
  /** serve --allow-host: more names the Host may be. */
  allowHosts?: readonly string[]
  /** serve --default-api-version: the version of a request whose Accept names none (default 1). */
  defaultApiVersion?: ApiVersion
  /** The web page's files (serve: embedded or built from src/ui); none: no page routes (most tests). */
  pageFiles?: () => Promise<Page>
}

export function createApp(
  core: Core,
  { quiet = false, publicUrl, allowOrigins = [], host, allowHosts, defaultApiVersion = 1, pageFiles }: AppOptions = {},
) {
  const { db, users, runner, devices, holds, metadata, media, productions, projects, imports } = core
  const principals = new WeakMap<Request, Principal>()
  // The API version of each request that asked for another than the default (most ask for none).
  const versions = new WeakMap<Request, ApiVersion>()
  const bodySchemas = new Map<string, TSchema>()
  const baseOf = baseUrlOf(publicUrl)
  const cors = corsWrap(allowOrigins, () => routes().map((route) => route.method))
  // SQLite's per-request machinery (db/client.ts): PostgreSQL's own snapshots and visibility need
  // none of it, and its statements run on pooled sessions, not one connection.
  const sqlite =
    core.port.engine === 'sqlite' ? { version: dataVersionOf(db), snapshot: readSnapshotOf(db) } : undefined
  const parseBody = createBodyParser((method, route) => bodySchemas.get(`${method} ${route}`))
  const hosts = createHostCheck({ listen: host, publicUrl, allowHosts })
  // The socket's address, known to the server once the app listens (none in-process).
  const addressOf = (request: Request) => app.server?.requestIP(request)?.address ?? ''
  const pageGuard = createPageGuard(publicUrl)
  const auth = authPlugin(users, principals, { addressOf, admits: hosts?.admits, page: pageGuard })
  const ctx: ModuleContext = {
    db,
    port: core.port,
    users,
    list: createLists(core.port, baseOf),
    auth,
    parseBody,
    baseOf,
    addressOf,
    pageGuard,
    apiVersion: (request) => versions.get(request) ?? defaultApiVersion,
    userOf: (request) => principals.get(request),
  }
  const requests = createRequestLog(core.log, { quiet, userOf: (request) => principals.get(request)?.username })
  const failures = createFailures(core.log, () => app.routes, requests.idOf)
  // Typed here: the hooks below read the routes of the app they are part of.
  const routes = (): Route[] => app.routes

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
      error: (error) => failures.serverError(error),
    },
  })
    .onError({ as: 'global' }, ({ code, error, request }) => failures.onError({ code, error, request }))
    // Innermost: a proxy file's HEAD keeps the Content-Length of its GET (mediaassets/proxyfile.ts).
    .wrap(proxyHeadWrap as Parameters<Elysia['wrap']>[0])
    // Each request sees every commit another process made before it started, and a request that
    // only reads does so in one read transaction (db/client.ts).
    .use((app) =>
      sqlite
        ? app.wrap((handle, request) => {
            sqlite.version.refresh()
            if (request.method !== 'GET' && request.method !== 'HEAD') return handle
            return ((r: Request) => sqlite.snapshot.run(() => handle(r))) as typeof handle
          })
        : app,
    )
    // Around everything: whatever any hook answers carries the request id.
    // CORS (when serve names origins), inside the request log: a preflight is logged and has its
    // id; before auth: a preflight has no key, and a 401 must carry the headers to be read.
    .use((app) => (cors ? app.wrap(cors as Parameters<Elysia['wrap']>[0]) : app))
    .wrap(requests.around as Parameters<Elysia['wrap']>[0])
    // First of the checks: the line and headers are checked before auth or routing reads them,
    // and the Host before anything builds on it (the docs page, the API root's URLs).
    // A block, not `=> checkHead(request)`: Elysia awaits every hook whose source returns a call
    // (compose.mjs isAsync), which costs each request a turn of the microtask queue.
    .onRequest(({ request }) => {
      checkHead(request)
      hosts?.check(request)
    })
    .use(ctx.auth)
    .onRequest(({ request }) => {
      // No Accept, or */* (what curl and wrk send): every path is served, in the default version.
      const accept = request.headers.get('accept')
      if (accept === null || accept === '*/*') return
      const path = pathOf(request.url)
      if ((path.startsWith('/api/') || path === '/api') && !path.startsWith('/api/docs')) {
        // The event stream is not JSON and has no versions (EventSource asks for text/event-stream).
        // No `return` of a call in this hook: Elysia would await it on every request (see above).
        if (EVENTS_PATH.test(path)) checkEventStreamAccept(accept)
        // Nor is a proxy file or a picture: it is served whatever a media element's Accept says (video/*, image/*).
        // Nor are the marker exports (CSV and EDL files).
        else if (
          !(
            (PROXY_FILE_PATH.test(path) || MARKER_EXPORT_PATH.test(path) || SHOT_THUMBNAIL_PATH.test(path)) &&
            (request.method === 'GET' || request.method === 'HEAD')
          )
        ) {
          const version = checkAccept(accept, defaultApiVersion)
          if (version !== defaultApiVersion) versions.set(request, version)
        }
      }
    })
    .use(apiDocs())
    // The web page at / and the paths it owns (src/ui/routes.ts), its files under /ui/.
    .use((app) => (pageFiles ? app.use(pageRoutes(pageFiles)) : app))
    .use(sharedModels)
    .model({ ApiRoot })
    .get(
      '/api/health',
      ({ set }) => {
        // Takes its context (and says it is JSON) so that Elysia never serves it as a static
        // response: the compiled executable answered it outside the hooks (no X-Request-Id, no log
        // line) once no after-response hook forced every route through them.
        set.headers['content-type'] = 'application/json'
        // Each watched device's mode, when there are any (the answer is otherwise unchanged: docs/api.md, Conventions).
        const watch = core.watch?.status() ?? []
        return { status: 'ok' as const, version: VERSION, ...(watch.length ? { watch } : {}) }
      },
      {
        response: t.Object({
          status: t.Literal('ok'),
          version: t.String(),
          watch: t.Optional(
            t.Array(
              t.Object({
                device: t.Integer(),
                mode: t.UnionEnum(['events', 'polling', 'unavailable']),
                ready: t.Boolean({ description: 'Changes are being reported (the first walk of the folder is done)' }),
                reason: t.Optional(t.String()),
              }),
              {
                description:
                  "How each device is watched: events, polling (a network protocol, --poll, or the system's inotify limit reached), or unavailable (its folder is missing), with the reason",
              },
            ),
          ),
        }),
        detail: { summary: 'Service health (no key needed)', tags: ['service'], security: [] },
      },
    )
    // medialoopster clients check the connection with it before they log in: no key, and any
    // Authorization header is ignored (src/http/auth.ts, PUBLIC).
    .get(
      '/api/ping/',
      ({ set }) => {
        set.status = 204
      },
      {
        // No 401: the Authorization header is not read (errors() would add it).
        response: {
          204: t.Void({ description: 'The service answers' }),
          400: 'Error',
          406: 'Error',
          421: 'Error',
          431: 'Error',
        },
        detail: {
          summary: 'Connection check (no key needed)',
          description: 'Answers 204 with no body, whatever the Authorization header says.',
          tags: ['service'],
          security: [],
        },
      },
    )
    // Where clients find each resource: name to the absolute URL of its list.
    .get(
      '/api/',
      ({ request }) => {
        const base = baseOf(request)
        return Object.fromEntries(listNames(routes()).map((name) => [name, `${base}/api/${name}/`]))
      },
      {
        auth: true,
        response: { 200: 'ApiRoot', ...errors() },
        detail: { summary: 'The API root: the URL of every list', tags: ['service'] },
      },
    )
    .group('/api', (api) =>
      api
        .use(devicesModule(ctx, devices, core.deviceStatus))
        .use(productionsModule(ctx, productions))
        .use(transcodingProfilesModule(ctx))
        .use(customMetadataModule(ctx, metadata))
        .use(contentTypesModule(ctx))
        .use(mediaAssetsModule(ctx, media, 'audio', (target) => runner.openFor(target)))
        .use(mediaAssetsModule(ctx, media, 'image', (target) => runner.openFor(target)))
        .use(mediaAssetsModule(ctx, media, 'video', (target) => runner.openFor(target)))
        .use(remakeProxyModule(ctx, core.proxies, 'audio'))
        .use(remakeProxyModule(ctx, core.proxies, 'image'))
        .use(remakeProxyModule(ctx, core.proxies, 'video'))
        .use(verifyModule(ctx, core.verify, 'audio'))
        .use(verifyModule(ctx, core.verify, 'image'))
        .use(verifyModule(ctx, core.verify, 'video'))
        .use(proxyFileModule(ctx, media, 'audio'))
        .use(proxyFileModule(ctx, media, 'image'))
        .use(proxyFileModule(ctx, media, 'video'))
        .use(picturesModule(ctx, media, 'audio'))
        .use(picturesModule(ctx, media, 'image'))
        .use(picturesModule(ctx, media, 'video'))
        .use(shotsModule(ctx, core.shots))
        .use(markersModule(ctx, core.markers, 'audio'))
        .use(markersModule(ctx, core.markers, 'image'))
        .use(markersModule(ctx, core.markers, 'video'))
        .use(importLogsModule(ctx))
        .use(assetImportModule(ctx, imports))
        .use(assetHoldDurationsModule(ctx, holds))
        .use(projectAssetsModule(ctx, projects, '/projectassets'))
        .use(projectAssetsModule(ctx, projects, '/project'))
        .use(verifyModule(ctx, core.verify, 'project'))
        .use(tasksModule(ctx, runner))
        .use(historyModule(ctx))
        .use(eventsModule(ctx, core.events))
        .use(searchModule(ctx, core.search))
        .use(archiveModule(ctx, core.archive))
        .use(sessionModule(ctx)),
    )

  for (const route of app.routes) {
    const body = route.hooks?.body
    const schema =
      typeof body === 'string'
        ? (app as unknown as { definitions: { type: Record<string, TSchema> } }).definitions.type[body]
        : body
    if (schema) bodySchemas.set(`${route.method} ${route.path}`, schema as TSchema)
  }

  return app
}

const EVENTS_PATH = /^\/api\/events\/?$/
const PROXY_FILE_PATH = /^\/api\/(audio|image|video)assets\/[^/]+\/(proxy|poster|strip)\/?$/
// A shot's thumbnail (an <img> asks for image/*).
const SHOT_THUMBNAIL_PATH = /^\/api\/videoassets\/[^/]+\/shots\/[^/]+\/thumbnail\/?$/
const MARKER_EXPORT_PATH = /^\/api\/(audio|image|video)assets\/[^/]+\/markers\.(csv|edl)\/?$/

type Route = { method: string; path: string; hooks?: { query?: unknown; detail?: { deprecated?: boolean } } }

/**
 * The resources of the API root, read from the routes so that a resource added later is in it:
 * each GET /api/<name>/ that takes limit (a list), leaving out deprecated paths (/api/project/,
 * the version 0 spelling of /api/projectassets/). In the order the modules are mounted.
 */
export function listNames(routes: readonly Route[]): string[] {
  // A collection has its records at /api/NAME/:id too: a paged answer that is no collection (the
  // search's hits, which need a q) is not named, since a client walking the root expects each URL
  // to answer a list of records.
  const records = new Set(
    routes.flatMap((route) => (route.method === 'GET' ? [/^\/api\/([a-z]+)\/:id\/?$/.exec(route.path)?.[1]] : [])),
  )
  return routes.flatMap((route) => {
    const name = /^\/api\/([a-z]+)\/$/.exec(route.path)?.[1]
    const query = route.hooks?.query as { properties?: Record<string, unknown> } | undefined
    return route.method === 'GET' &&
      name &&
      records.has(name) &&
      query?.properties?.limit &&
      !route.hooks?.detail?.deprecated
      ? [name]
      : []
  })
}
