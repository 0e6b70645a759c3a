// The search baseline: raw Bun.serve and bun:sqlite running the same FTS5 statements as
// GET /api/search/ for a superuser (the count, then the page joined to its records), with the
// query already in FTS5 syntax (?match=), and the same JSON. No auth, no routing, no validation,
// no parsing of the user's text.
// Usage: bun bench/search-baseline.ts DB_FILE   (prints "listening PORT" on stdout)
import { Database } from 'bun:sqlite'

const file = process.argv[2]
if (!file) throw new Error('usage: bun bench/search-baseline.ts DB_FILE')
const db = new Database(file, { readonly: true, strict: true })
const TYPES = ['videoasset', 'audioasset', 'imageasset', 'projectasset']
const count = db.prepare<{ n: number }, [string]>('SELECT count(*) AS n FROM search_index s WHERE search_index MATCH ?')
const page = db.prepare<
  { r: number; rank: number; name: string; production: number; path: string; is_production: number },
  [string, number, number]
>(
  `SELECT s.rowid AS r, bm25(search_index, 10.0, 4.0, 5.0, 2.0, 1.0, 0.0) AS rank, coalesce(m.name, p.name) AS name, coalesce(m.production, p.production) AS production,
     coalesce(m.path_file, p.bundle_root) AS path, coalesce(m.is_production, p.is_production) AS is_production
   FROM search_index s LEFT JOIN media_assets m ON s.rowid % 4 < 3 AND m.id = s.rowid / 4
     LEFT JOIN project_assets p ON s.rowid % 4 = 3 AND p.id = s.rowid / 4
   WHERE search_index MATCH ? AND coalesce(m.id, p.id) IS NOT NULL ORDER BY rank, s.rowid DESC LIMIT ? OFFSET ?`,
)

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(request) {
    const url = new URL(request.url)
    const match = url.searchParams.get('match') ?? ''
    const limit = Number(url.searchParams.get('limit') ?? 50)
    const offset = Number(url.searchParams.get('offset') ?? 0)
    const n = count.get(match)!.n
    const hits = page.all(match, limit, offset).map((row) => ({
      type: TYPES[row.r % 4],
      id: Math.floor(row.r / 4),
      name: row.name,
      production: row.production,
      path: row.path,
      is_production: row.is_production === 1,
      score: Math.round(-row.rank * 1000) / 1000,
    }))
    return new Response(JSON.stringify(hits), {
      headers: { 'content-type': 'application/json', 'x-total-count': String(n) },
    })
  },
})
console.log(`listening ${server.port}`)
