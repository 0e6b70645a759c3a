// Where one request's time goes (issue "speed users feel", point 1; run by hand, not by run.ts):
// the benchmark catalogue (100,000 video assets, bench/seed.ts), the app in this process, and
// requests sent through app.handle (no network, no wrk), timed whole and stage by stage: each
// stage is the same work the request does, called alone (the key check, the count's cache
// check, the page's query, the rows to JSON, the Response). What is left over is Elysia's
// routing, hooks, validation and our glue. Prints µs per request, median of 5 alternating rounds.
// Writes its section of docs/benchmarks.md (BENCH_NO_DOC=1: only prints).
// Usage: bun bench/request-profile.ts   (BENCH_PROFILE_ASSETS, BENCH_PROFILE_N)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app.ts'
import { dbFile } from '../src/config.ts'
import { createCore } from '../src/core.ts'
import { dataVersionOf, fileVersion, openDb } from '../src/db/client.ts'
import { mediaToApi } from '../src/modules/mediaassets/model.ts'
import { silentLog } from '../src/util/log.ts'
import { machine, writeSection } from './doc.ts'
import { ROOT, envNumber } from './procs.ts'
import { seedCatalogue } from './seed.ts'

const ASSETS = envNumber('BENCH_PROFILE_ASSETS', 100_000)
const N = envNumber('BENCH_PROFILE_N', 4_000)
const ROUNDS = 5

const dir = mkdtempSync(join(tmpdir(), 'reelhouse-request-profile-'))
try {
  const key = seedCatalogue(dir, ASSETS)
  const db = openDb(dbFile(dir))
  const core = createCore(db, { log: silentLog, concurrency: 1 })
  const app = createApp(core, { quiet: true })
  const headers = { authorization: `Token ${key}` }
  const version = dataVersionOf(db)
  const begin = db.$client.prepare('BEGIN')
  const commit = db.$client.prepare('COMMIT')
  const request = (path: string) => () =>
    app.handle(new Request(`http://127.0.0.1:8000${path}`, { headers })).then((r) => r.arrayBuffer())

  const FIELDS =
    'id, name, description, production, status_asset, path_file, device, is_archive, is_production, meta_field_store'
  // LIMIT +? as the lists write it (src/http/lists.ts PAGE); the plain LIMIT ? for comparison: SQLite
  // compiles that one again whenever its LIMIT is bound.
  const page = db.$client.query(`SELECT ${FIELDS} FROM media_assets WHERE kind = 'video' ORDER BY id LIMIT +? OFFSET 0`)
  const plainPage = db.$client.query(
    `SELECT ${FIELDS} FROM media_assets WHERE kind = 'video' ORDER BY id LIMIT ? OFFSET 0`,
  )
  const rows50 = page.all(50) as Record<string, unknown>[]
  const json = (rows: Record<string, unknown>[]) =>
    JSON.stringify(
      rows.map((r) =>
        mediaToApi({
          ...r,
          is_archive: !!r.is_archive,
          is_production: !!r.is_production,
          meta_field_store: JSON.parse(r.meta_field_store as string),
        } as never),
      ),
    )
  const body50 = json(rows50)

  const stages: Record<string, () => unknown> = {
    'GET /api/health (no key)': () =>
      app.handle(new Request('http://127.0.0.1:8000/api/health')).then((r) => r.arrayBuffer()),
    'GET ?limit=1&offset=0': request('/api/videoassets/?limit=1&offset=0'),
    'GET ?limit=50&offset=0': request('/api/videoassets/?limit=50&offset=0'),
    'GET /api/videoassets/{id}/': request('/api/videoassets/4242/'),
    'stage: key check (users.authenticate)': () => core.users.authenticate(key),
    'stage: one record with its details (1 statement)': () => core.port.run(core.media.byIdWithDetails(4242)),
    'stage: read transaction with its one check (BEGIN, PRAGMA data_version, COMMIT)': () => {
      begin.run()
      version.refresh()
      version.get()
      commit.run()
    },
    'stage: freshness of the key and the count besides (two file versions, no statement)': () =>
      fileVersion(db.$client) + fileVersion(db.$client, 'temp'),
    'stage: page query, 1 row': () => page.all(1),
    'stage: page query, 50 rows': () => page.all(50),
    'stage: page query, 1 row, written LIMIT ? (compiled again each time)': () => plainPage.all(1),
    'stage: 50 rows to JSON': () => json(rows50),
    'stage: Response of 50 rows, read': () =>
      new Response(body50, { headers: { 'content-type': 'application/json' } }).arrayBuffer(),
  }
  const samples = new Map<string, number[]>(Object.keys(stages).map((k) => [k, []]))
  for (const run of Object.values(stages)) for (let i = 0; i < 500; i++) await run() // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order each round, as the wrk benchmarks do.
    const order = round % 2 ? Object.entries(stages).reverse() : Object.entries(stages)
    for (const [name, run] of order) {
      const start = performance.now()
      for (let i = 0; i < N; i++) await run()
      samples.get(name)!.push(((performance.now() - start) / N) * 1000)
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const result = [...samples].map(([name, xs]) => [name, median(xs)] as const)
  console.log(`${ASSETS} video assets, ${N} calls x ${ROUNDS} rounds, µs per call (median of rounds)`)
  for (const [name, us] of result) console.log(`${us.toFixed(1).padStart(8)}  ${name}`)
  if (process.env.BENCH_NO_DOC !== '1') {
    const host = machine()
    const rows = result.map(([name, us]) => `| ${name} | ${us.toFixed(1)} |`).join('\n')
    writeSection(
      join(ROOT, 'docs', 'benchmarks.md'),
      'request-profile',
      `## Where one request's time goes, now (in-process, bench/request-profile.ts)

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, Linux ${host.kernel} (load average at start: ${host.load}); Bun ${host.bun}
- Data: ${ASSETS.toLocaleString('en')} video assets (bench/seed.ts); superuser key; requests through app.handle (no network)

| Request or stage | µs per call (median of ${ROUNDS} alternating rounds of ${N.toLocaleString('en')}) |
|---|---|
${rows}

Each stage is the work the request does, called alone: the key check, the read transaction
with the one statement that checks what is kept (\`PRAGMA data_version\`; the key check and the
count's cache compare the two file versions besides, without a statement), the page's query,
the rows to JSON, a Response read whole. A GET of a page or a record with a known key runs four
statements: BEGIN, \`PRAGMA data_version\`, its own, COMMIT (seven and six before Nov 29;
test/http/statements.test.ts counts them). What a request costs beyond the sum of its stages
is Elysia's routing, hooks and validation, and our glue. The same table as of Nov 22, before the
work on a first page's fixed costs, is the next section.
Run by hand (\`bun bench/request-profile.ts\`), not by \`npm run bench\`.
`,
    )
    console.error('wrote docs/benchmarks.md')
  }
  db.$client.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
process.exit(0)
