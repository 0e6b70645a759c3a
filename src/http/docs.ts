// The interactive docs: the Swagger UI page (/api/docs), the OpenAPI document it shows
// (/api/docs/json, built by openapi.ts) and the page's scripts and styles, embedded in the
// executable so /api/docs works with no network (the page would otherwise load them from a CDN).
import { SwaggerUIRender } from '@elysiajs/openapi/swagger'
import { Elysia } from 'elysia'
import { VERSION } from '../version.ts'
import { notFound } from './errors.ts'
import { openApiDocument } from './openapi.ts'
import bundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import css from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }

const assets: Record<string, { file: string; type: string }> = {
  'swagger-ui-bundle.js': { file: bundle, type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { file: css, type: 'text/css; charset=utf-8' },
}

const INFO = {
  title: 'Reelhouse API',
  version: VERSION,
  description:
    'Media asset manager. Every endpoint but health and docs needs a key: `Authorization: Token <key>` or `Bearer <key>` ' +
    '(Authorize: paste the bare key under bearer). Errors use one envelope; see docs/api.md, section Errors. A known path ' +
    'with a method it does not serve answers 405 with an Allow header (components/responses/MethodNotAllowed).',
}

// Absolute: the page is served at /api/docs and /api/docs/, where a relative URL would differ.
const page = SwaggerUIRender(INFO, {
  url: '/api/docs/json',
  dom_id: '#swagger-ui',
  cdn: '/api/docs/assets/swagger-ui-bundle.js',
  theme: '/api/docs/assets/swagger-ui.css',
  autoDarkMode: true,
  persistAuthorization: true,
} as never)

export function apiDocs() {
  let document: unknown
  const docs: Elysia = new Elysia({ name: 'reelhouse.docs' })
  return docs
    .get('/api/docs', () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { detail: { hide: true } })
    // Built at the first request, when every route exists; they do not change afterwards.
    .get('/api/docs/json', () => (document ??= openApiDocument(docs, INFO)), { detail: { hide: true } })
    .get(
      '/api/docs/assets/:name',
      ({ params }) => {
        const asset = assets[params.name]
        if (!asset) throw notFound('No such docs asset.')
        return new Response(Bun.file(asset.file), { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' } })
      },
      { detail: { hide: true } },
    )
}
