// The interactive docs' scripts and styles, embedded in the executable so /api/docs works with
// no network (the OpenAPI plugin would otherwise load them from a CDN).
import { Elysia } from 'elysia'
import { notFound } from './errors.ts'
import bundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import css from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }

const assets: Record<string, { file: string; type: string }> = {
  'swagger-ui-bundle.js': { file: bundle, type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { file: css, type: 'text/css; charset=utf-8' },
}

export const docsAssets = new Elysia({ name: 'reelhouse.docs-assets' }).get(
  '/api/docs/assets/:name',
  ({ params }) => {
    const asset = assets[params.name]
    if (!asset) throw notFound('No such docs asset.')
    return new Response(Bun.file(asset.file), { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' } })
  },
  { detail: { hide: true } },
)
