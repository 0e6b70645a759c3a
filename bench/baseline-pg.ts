// The list baseline on PostgreSQL: bench/baseline.ts's twin, raw Bun.serve and Bun.SQL answering
// the same bytes as GET /api/videoassets/?limit=&offset= (at /) and GET /api/videoassets/{id}/ (at
// /record/{id}/) of a server run with --database. No auth, no routing, no validation.
// Usage: bun bench/baseline-pg.ts DATABASE_URL   (prints "listening PORT" on stdout)
// A page runs the two statements the service runs on PostgreSQL (src/http/lists.ts
// postgresLists), in the text drizzle writes for them, at once on two sessions of the pool: the
// page (`limit $1`, `limit $1 offset $2` past the first page), and the count, made on every
// request as the service makes it. A record runs the service's one statement for the row with
// its keywords, projects and last editor as sub-selects. Statements go through `unsafe` with
// their parameters, as drizzle's bun-sql driver sends them; the pool is the service's size
// (src/db/pg/open.ts POOL_SIZE), so that neither side waits for a session the other would have.
import { statSync } from 'node:fs'
import { SQL } from 'bun'

const url = process.argv[2]
if (!url) throw new Error('usage: bun bench/baseline-pg.ts DATABASE_URL')
const client = new SQL({ url, max: 20 })

const FIELDS = `select "id", "name", "description", "production", "status_asset", "path_file", "device", "is_archive",
  "is_production", "meta_field_store", "approval" from "media_assets" where "media_assets"."kind" = 'video' order by "id"`
const FIRST = `${FIELDS} limit $1`
const LATER = `${FIELDS} limit $1 offset $2`
const COUNT = `select count(*) from "media_assets" where "media_assets"."kind" = 'video'`
const RECORD = `select "id", "kind", "name", "description", "production", "device", "status_asset", "path_file", "path_proxy",
  "is_archive", "is_production", "approval", "meta_field_store", "technical", "archive_details", "date_crt", "date_add",
  "date_mod", "date_del",
  (SELECT coalesce(json_agg(json_build_array(c.name, k.name)), '[]'::json)::text
    FROM media_asset_keywords mk JOIN keywords k ON k.id = mk.keyword_id JOIN keyword_categories c ON c.id = k.category_id
    WHERE mk.asset_id = media_assets.id) AS keywords_json,
  (SELECT coalesce(json_agg(l.project_id ORDER BY l.project_id), '[]'::json)::text FROM project_asset_links l
    WHERE l.asset_id = media_assets.id) AS projects_json,
  (SELECT coalesce(h.username, 'system') FROM history h WHERE h.resource = media_assets.kind || 'asset'
    AND h.resource_id = media_assets.id ORDER BY h.id DESC LIMIT 1) AS modified_by
  from "media_assets" where "media_assets"."id" = $1`

type Row = Record<string, unknown>

/** Whether a regular file is at `path` (a stat, as the service looks for a proxy and its pictures). */
const isFile = (path: string) => {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}
const picture = (proxy: string, suffix: string) => proxy.slice(0, proxy.lastIndexOf('.')) + suffix

/** As bench/baseline.ts's: the picture fields where the proxy's pictures are not made. */
function pictureFields(proxy: string) {
  if (proxy && (isFile(picture(proxy, '.poster.jpg')) || isFile(picture(proxy, '.strip.jpg'))))
    throw new Error(`the baseline answers no pictures, and ${proxy} has some`)
  return {
    poster_url: '',
    thumbnail_url: '',
    path_thumbnail: '',
    is_proxy_available: proxy ? isFile(proxy) : false,
    strip_url: '',
  }
}

const json = (body: string, headers: Record<string, string> = {}, status = 200) =>
  new Response(body, { status, headers: { 'content-type': 'application/json', ...headers } })

async function oneRecord(id: number): Promise<Response> {
  const [r] = (await client.unsafe(RECORD, [id])) as Row[]
  if (!r || r.kind !== 'video') return json('{"errors":[]}', {}, 404)
  // By category, then keyword, as the service sorts them (it also orders characters beyond
  // U+D7FF by code point, which no name of the benchmark's catalogue holds).
  const pairs = (JSON.parse(r.keywords_json as string) as [string, string][]).sort(([c1, k1], [c2, k2]) =>
    c1 < c2 ? -1 : c1 > c2 ? 1 : k1 < k2 ? -1 : k1 > k2 ? 1 : 0,
  )
  const keywords: Record<string, string[]> = {}
  for (const [category, keyword] of pairs) (keywords[category] ??= []).push(keyword)
  const body = {
    ...listFields(r),
    date_crt: r.date_crt,
    date_add: r.date_add,
    date_mod: r.date_mod,
    date_del: r.date_del,
    keywords,
    technical: r.technical,
    path_proxy: r.path_proxy,
    projects: JSON.parse(r.projects_json as string) as number[],
    modified_by: r.modified_by ?? null,
    archive_details: r.archive_details,
    ...pictureFields(r.path_proxy as string),
  }
  return json(JSON.stringify(body))
}

/** A list item's fields, which a record begins with. Bun's client reads a bigint column as text; the service's columns read it as a number. */
const listFields = (r: Row) => ({
  id: Number(r.id),
  name: r.name,
  description: r.description,
  production: Number(r.production),
  status_asset: r.status_asset,
  path_file: r.path_file,
  device: Number(r.device),
  is_archive: r.is_archive,
  is_production: r.is_production,
  meta_field_store: r.meta_field_store,
  status_approval: r.approval,
})

async function page(limit: number, offset: number): Promise<Response> {
  const [rows, counted] = await Promise.all([
    client.unsafe(offset ? LATER : FIRST, offset ? [limit, offset] : [limit]) as Promise<Row[]>,
    client.unsafe(COUNT) as Promise<{ count: string }[]>,
  ])
  let body = '['
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!
    const out = listFields(r)
    body += (i ? ',' : '') + JSON.stringify(out)
  }
  return json(`${body}]`, { 'x-total-count': String(counted[0]!.count) })
}

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(request) {
    const url = new URL(request.url)
    if (url.pathname.startsWith('/record/')) return oneRecord(Number(url.pathname.slice('/record/'.length, -1)))
    return page(Number(url.searchParams.get('limit') ?? 50), Number(url.searchParams.get('offset') ?? 0))
  },
})
console.log(`listening ${server.port}`)
process.on('SIGTERM', () => {
  server.stop(true)
  void client.close().finally(() => process.exit(0))
})
