// The baseline: raw Bun.serve and one prepared bun:sqlite statement returning the same rows and
// the same JSON as GET /api/videoassets/?limit=&offset=. No auth, no routing, no validation.
// Usage: bun bench/baseline.ts DB_FILE   (prints "listening PORT" on stdout)
import { Database } from 'bun:sqlite'

const file = process.argv[2]
if (!file) throw new Error('usage: bun bench/baseline.ts DB_FILE')
const db = new Database(file, { readonly: true, strict: true })
const page = db.prepare<Record<string, unknown>, [number, number]>(
  `SELECT id, name, description, production, status_asset, path_file, device, is_archive, is_production, meta_field_store
   FROM media_assets WHERE kind = 'video' ORDER BY id LIMIT ? OFFSET ?`,
)
const total = String(db.query<{ n: number }, []>("SELECT count(*) AS n FROM media_assets WHERE kind = 'video'").get()!.n)

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(request) {
    const url = new URL(request.url)
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
