// The baseline: raw Bun.serve and prepared bun:sqlite statements returning the same rows and the
// same JSON as GET /api/videoassets/?limit=&offset= (at /) and GET /api/videoassets/{id}/ (at
// /record/{id}/). No auth, no routing, no validation.
// Usage: bun bench/baseline.ts DB_FILE   (prints "listening PORT" on stdout)
// The page is read as the lists read it, `LIMIT +? OFFSET ?` (src/http/lists.ts PAGE): the unary
// plus hides the bound LIMIT from SQLite's planner, which would otherwise compile the statement
// again on every request (18 µs of a 1-row page here). What is left between this server and the
// service is the service's own work per request. The OFFSET is naive: it steps over every row
// skipped, as plain code's does, which the service's deep pages avoid (lists.ts `keyed`).
import { Database } from 'bun:sqlite'
import { statSync } from 'node:fs'

const file = process.argv[2]
if (!file) throw new Error('usage: bun bench/baseline.ts DB_FILE')
const db = new Database(file, { readonly: true, strict: true })
const page = db.prepare<Record<string, unknown>, [number, number]>(
  `SELECT id, name, description, production, status_asset, path_file, device, is_archive, is_production, meta_field_store,
     approval AS status_approval
   FROM media_assets WHERE kind = 'video' ORDER BY id LIMIT +? OFFSET ?`,
)
const total = String(
  db.query<{ n: number }, []>("SELECT count(*) AS n FROM media_assets WHERE kind = 'video'").get()!.n,
)
// One record, as GET /api/videoassets/{id}/ answers it: the row, its keywords, its projects, who
// changed it last.
const record = db.prepare<Record<string, unknown>, [number]>(
  `SELECT id, name, description, production, status_asset, path_file, device, is_archive, is_production, meta_field_store,
     approval, date_crt, date_add, date_mod, date_del, technical, path_proxy, archive_details
   FROM media_assets WHERE id = ? AND kind = 'video'`,
)
const keywordsOf = db.prepare<{ category: string; keyword: string }, [number]>(
  `SELECT c.name AS category, k.name AS keyword FROM media_asset_keywords mk JOIN keywords k ON k.id = mk.keyword_id
   JOIN keyword_categories c ON c.id = k.category_id WHERE mk.asset_id = ? ORDER BY c.name, k.name`,
)
const projectsOf = db.prepare<{ project_id: number }, [number]>(
  'SELECT project_id FROM project_asset_links WHERE asset_id = ? ORDER BY project_id',
)
const lastChange = db.prepare<{ username: string }, [number]>(
  "SELECT coalesce(username, 'system') AS username FROM history WHERE resource = 'videoasset' AND resource_id = ? ORDER BY id DESC LIMIT 1",
)

/** Whether a regular file is at `path` (a stat, as the service looks for a proxy and its pictures). */
const isFile = (path: string) => {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}
const picture = (proxy: string, suffix: string) => proxy.slice(0, proxy.lastIndexOf('.')) + suffix

/**
 * A video's picture fields as the service answers them where its proxy's pictures are not made
 * (the bench's catalogue): the proxy looked for, the poster and the strip too. A picture that is
 * there would need its URL and version, which this baseline does not make: it stops the bench.
 */
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

function oneRecord(id: number): Response {
  const r = record.get(id)
  if (!r) return new Response('{"errors":[]}', { status: 404, headers: { 'content-type': 'application/json' } })
  const keywords: Record<string, string[]> = {}
  for (const { category, keyword } of keywordsOf.all(id)) (keywords[category] ??= []).push(keyword)
  const body = {
    id: r.id,
    name: r.name,
    description: r.description,
    production: r.production,
    status_asset: r.status_asset,
    path_file: r.path_file,
    device: r.device,
    is_archive: r.is_archive === 1,
    is_production: r.is_production === 1,
    meta_field_store: JSON.parse(r.meta_field_store as string),
    status_approval: r.approval,
    date_crt: r.date_crt,
    date_add: r.date_add,
    date_mod: r.date_mod,
    date_del: r.date_del,
    keywords,
    technical: JSON.parse(r.technical as string),
    path_proxy: r.path_proxy,
    projects: projectsOf.all(id).map((p) => p.project_id),
    modified_by: lastChange.get(id)?.username ?? null,
    archive_details: JSON.parse(r.archive_details as string),
    ...pictureFields(r.path_proxy as string),
  }
  return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } })
}

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(request) {
    const url = new URL(request.url)
    if (url.pathname.startsWith('/record/')) return oneRecord(Number(url.pathname.slice('/record/'.length, -1)))
    const limit = Number(url.searchParams.get('limit') ?? 50)
    const offset = Number(url.searchParams.get('offset') ?? 0)
    const rows = page.all(limit, offset)
    let body = '['
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      r.is_archive = r.is_archive === 1
      r.is_production = r.is_production === 1
      r.meta_field_store = JSON.parse(r.meta_field_store as string)
      body += (i ? ',' : '') + JSON.stringify(r)
    }
    return new Response(body + ']', { headers: { 'content-type': 'application/json', 'x-total-count': total } })
  },
})
console.log(`listening ${server.port}`)
process.on('SIGTERM', () => {
  server.stop(true)
  db.close()
  process.exit(0)
})
