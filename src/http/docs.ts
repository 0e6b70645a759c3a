// The interactive docs: the Swagger UI page (/api/docs), the OpenAPI document it shows
// (/api/docs/json, built by openapi.ts) and the page's scripts and styles, embedded in the
// executable so /api/docs works with no network (the page would otherwise load them from a CDN).
// The assets go brotli- or gzip-compressed to a client that accepts it: the bundle is 1.73 MB,
// about 400 KB in brotli, which a slow link feels.
import { brotliCompressSync, constants } from 'node:zlib'
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

type Coding = 'br' | 'gzip'
/**
 * Each asset in each coding, made at the first request that asks for it and then kept: a server
 * whose docs nobody opens compresses nothing. Brotli at quality 6, not the default 11: 11 takes
 * about 5 s for the bundle, all of it holding the event loop, for 359 KB instead of 400 KB; 6
 * takes about 70 ms, once. Gzip at level 9 (459 KB, about 60 ms).
 */
const compressed = new Map<string, Uint8Array>()
const compress: Record<Coding, (data: Uint8Array<ArrayBuffer>) => Uint8Array> = {
  br: (data) =>
    brotliCompressSync(data, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
    }),
  gzip: (data) => Bun.gzipSync(data, { level: 9 }),
}

/**
 * The coding to send for an Accept-Encoding header: br when it is accepted, else gzip, else none
 * (identity). Accepted: named, or covered by `*`, with a q other than 0 (RFC 9110 section 12.5.3;
 * `br;q=0` means not br). Among accepted codings ours is the order above, whatever their q: both
 * are smaller than identity, and brotli is the smaller of the two. No header: identity, as most
 * servers do, though the RFC allows any coding then.
 */
export function codingFor(acceptEncoding: string | null): Coding | undefined {
  if (!acceptEncoding) return undefined
  const q = new Map<string, number>()
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...params] = part.split(';').map((p) => p.trim())
    if (!name) continue
    let weight = 1
    for (const param of params) {
      const m = /^q\s*=\s*(.*)$/i.exec(param)
      if (m) weight = Number(m[1])
    }
    // A q that is no number counts as 0: the client meant to weigh the coding down, not up.
    q.set(name.toLowerCase(), Number.isNaN(weight) ? 0 : weight)
  }
  const accepted = (coding: string) => (q.get(coding) ?? q.get('*') ?? 0) > 0
  if (accepted('br')) return 'br'
  if (accepted('gzip') || accepted('x-gzip')) return 'gzip'
  return undefined
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
  return (
    docs
      .get('/api/docs', () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }), {
        detail: { hide: true },
      })
      // Built at the first request, when every route exists; they do not change afterwards.
      .get('/api/docs/json', () => (document ??= openApiDocument(docs, INFO)), { detail: { hide: true } })
      .get(
        '/api/docs/assets/:name',
        async ({ params, request }) => {
          const asset = assets[params.name]
          if (!asset) throw notFound('No such docs asset.')
          // Vary on every answer, the identity one too: a cache must not hand one client's coding to another.
          const headers: Record<string, string> = {
            'content-type': asset.type,
            'cache-control': 'public, max-age=86400',
            vary: 'Accept-Encoding',
          }
          const coding = codingFor(request.headers.get('accept-encoding'))
          if (!coding) return new Response(Bun.file(asset.file), { headers })
          const key = `${coding} ${params.name}`
          let body = compressed.get(key)
          if (!body) compressed.set(key, (body = compress[coding](await Bun.file(asset.file).bytes())))
          headers['content-encoding'] = coding
          return new Response(body, { headers })
        },
        { detail: { hide: true } },
      )
  )
}
