// The search baseline on PostgreSQL: bench/search-baseline.ts's twin, raw Bun.serve and Bun.SQL
// running the statements GET /api/search/ runs on PostgreSQL for a superuser
// (src/db/search/pg.ts: in one read-only repeatable-read transaction, the count of the word
// index's hits, then the page by ts_rank joined to its records), with the tsquery given ready-made
// (?tsquery=), and the same JSON. No auth, no routing, no validation, no reading of the user's
// text (the service asks the server for the words' lexemes first, one statement more), no look
// for parts of words (the service's trigram statements), and every search ranked, also those of
// more than 10,000 hits, which the service lists all words in the name first.
// Usage: bun bench/search-baseline-pg.ts DATABASE_URL   (prints "listening PORT" on stdout)
import { SQL } from 'bun'

const url = process.argv[2]
if (!url) throw new Error('usage: bun bench/search-baseline-pg.ts DATABASE_URL')
// The service's pool size (src/db/pg/open.ts POOL_SIZE).
const client = new SQL({ url, max: 20 })
const TYPES = ['videoasset', 'audioasset', 'imageasset', 'projectasset']
const COUNT = 'SELECT count(*) AS n FROM search.docs d WHERE d.tsv @@ $1::tsquery'
const PAGE = `SELECT d.doc AS doc, coalesce(m.name, p.name) AS name, coalesce(m.production, p.production) AS production,
    coalesce(m.path_file, p.bundle_root) AS path, coalesce(m.is_production, p.is_production) AS is_production,
    ts_rank(d.tsv, $1::tsquery, 1) AS rank
  FROM search.docs d LEFT JOIN media_assets m ON d.doc % 4 < 3 AND m.id = d.doc / 4
    LEFT JOIN project_assets p ON d.doc % 4 = 3 AND p.id = d.doc / 4
  WHERE d.tsv @@ $1::tsquery AND coalesce(m.id, p.id) IS NOT NULL
  ORDER BY rank DESC, d.doc DESC LIMIT $2 OFFSET $3`

type Row = { doc: string; name: string; production: string; path: string; is_production: boolean; rank: number }

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const url = new URL(request.url)
    const tsquery = url.searchParams.get('tsquery') ?? ''
    const limit = Number(url.searchParams.get('limit') ?? 50)
    const offset = Number(url.searchParams.get('offset') ?? 0)
    const { n, rows } = await client.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
      const [counted] = (await tx.unsafe(COUNT, [tsquery])) as { n: string }[]
      const n = Number(counted!.n)
      const rows = n ? ((await tx.unsafe(PAGE, [tsquery, limit, offset])) as Row[]) : []
      return { n, rows }
    })
    const hits = rows.map((row) => ({
      type: TYPES[Number(row.doc) % 4],
      id: Math.floor(Number(row.doc) / 4),
      name: row.name,
      production: Number(row.production),
      path: row.path,
      is_production: row.is_production,
      score: Math.round(row.rank * 1e6) / 1e6,
    }))
    return new Response(JSON.stringify(hits), {
      headers: { 'content-type': 'application/json', 'x-total-count': String(n) },
    })
  },
})
console.log(`listening ${server.port}`)
process.on('SIGTERM', () => {
  server.stop(true)
  void client.close().finally(() => process.exit(0))
})
