// The web page's routes: its HTML at `/` and at every path the page owns (routes.ts: a reload or a
// link opened in a new tab lands on the right view), its hashed files at /ui/NAME. Each answer in
// the best coding the client accepts, precompressed at build time (pagebuild.ts), with Vary.
//   HTML: Cache-Control no-cache (revalidated with its ETag: it names the current hashed files)
//   and the Content-Security-Policy below.
//   /ui/ files: immutable for a year; a new build has new names.
import { Elysia } from 'elysia'
import { PAGE_SECTIONS } from '../ui/routes.ts'
import { codingFor } from './docs.ts'
import { AppError, notFound } from './errors.ts'
import type { Page, PageFile } from './pagebuild.ts'

/**
 * Only this server's own files and API: no inline script or style (the page has none), no other
 * host, no plugin, no <base>, forms post here only, and no other site may frame the page.
 * `img-src`/`media-src` allow blob: for previews a view makes from a fetched file.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "img-src 'self' blob:",
  "media-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const HTML_HEADERS = {
  'cache-control': 'no-cache',
  'content-security-policy': PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
}
const ASSET_HEADERS = {
  'cache-control': 'public, max-age=31536000, immutable',
  'x-content-type-options': 'nosniff',
}

/** The page's routes over `page()`: the current files (built or embedded; pagebuild.ts pageLoader). */
export function pageRoutes(page: () => Promise<Page>) {
  // The HTML's ETag, a hash of its bytes, made once per build.
  const etags = new WeakMap<PageFile, Promise<string>>()
  const etagOf = (file: PageFile) => {
    let etag = etags.get(file)
    if (!etag)
      etags.set(file, (etag = file.identity.arrayBuffer().then((bytes) => `"${Bun.hash(bytes).toString(36)}"`)))
    return etag
  }
  const html = async ({ request }: { request: Request }) => {
    const files = await loadedPage(page)
    const file = files.get('index.html')!
    const etag = await etagOf(file)
    if (request.headers.get('if-none-match') === etag)
      return new Response(null, { status: 304, headers: { etag, ...HTML_HEADERS, vary: 'Accept-Encoding' } })
    return answer(request, file, { ...HTML_HEADERS, etag })
  }
  const app = new Elysia({ name: 'reelhouse.page' }).get('/', html, { detail: { hide: true } })
  for (const section of PAGE_SECTIONS)
    app.get(`/${section}`, html, { detail: { hide: true } }).get(`/${section}/*`, html, { detail: { hide: true } })
  return app.get(
    '/ui/:name',
    async ({ params, request }) => {
      const file = params.name === 'index.html' ? undefined : (await loadedPage(page)).get(params.name)
      if (!file) throw notFound('No such file of the page.')
      return answer(request, file, ASSET_HEADERS)
    },
    { detail: { hide: true } },
  )
}

async function loadedPage(page: () => Promise<Page>): Promise<Page> {
  try {
    return await page()
  } catch {
    // Only when run from source, with a page that never built: serve logged why.
    throw new AppError(503, 'unavailable', 'The web page did not build; the server log says why.')
  }
}

/** `file` in the coding the request accepts (Vary on every answer: a cache must not mix them up). */
function answer(request: Request, file: PageFile, headers: Record<string, string>) {
  const coding = codingFor(request.headers.get('accept-encoding'))
  const body = (coding && file[coding]) || file.identity
  return new Response(body, {
    headers: {
      'content-type': file.type,
      vary: 'Accept-Encoding',
      ...(body !== file.identity ? { 'content-encoding': coding! } : {}),
      ...headers,
    },
  })
}
