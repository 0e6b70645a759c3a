// The search benchmark (part of npm run bench): GET /api/search/ over a catalogue of 1,000,000
// media assets (bench/search-seed.ts: names, paths, descriptions, keywords, custom metadata over
// 20 productions), against bench/search-baseline.ts (raw Bun.serve + bun:sqlite running the same
// FTS5 statements for a superuser), in the same run. Reelhouse runs twice, from source and as the
// compiled executable, each with its default request log.
//   - Latency a user feels: each query of QUERIES asked one at a time (limit=50, the first page),
//     BENCH_SEARCH_REPEATS times per round, the three servers in a rotated order each round; p50
//     and p95 per query and per class: up to 10,000 hits, and any query. As the admin (a
//     superuser) and as a reader of half the productions.
//   - Throughput: wrk, 16 connections, the queries in turn (bench/search.lua), per server.
//   - The index's size on disk (dbstat), beside the catalogue's.
// Targets: p95 < 50 ms for queries of up to 10,000 hits, < 150 ms for any query (Reelhouse,
// compiled executable, both users).
// Environment (all optional): BENCH_SEARCH_ASSETS (1000000), BENCH_SEARCH_ROUNDS (5),
// BENCH_SEARCH_REPEATS (10), BENCH_SEARCH_DATA=DIR (a folder this benchmark seeded before, reused:
// seeding a million assets takes minutes), BENCH_NO_DOC=1, BENCH_ENGINE=postgres (the same
// catalogue on a private PostgreSQL against bench/search-baseline-pg.ts instead: mainPostgres).
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { dbFile } from '../src/config.ts'
import { openDb } from '../src/db/client.ts'
import { createSearch } from '../src/db/search/sqlite.ts'
import { searchedTerms, toMatch } from '../src/modules/search/query.ts'
import type { SearchFilters } from '../src/modules/search/types.ts'
import type { Principal } from '../src/modules/users/principal.ts'
import { machine, median, pct, writeSection } from './doc.ts'
import { ROOT, benchScratch, children, envNumber, memory, runBench, spawnListening } from './procs.ts'
import { READER_PRODUCTIONS, seedSearchCatalogue } from './search-seed.ts'

const BUN = process.execPath
const cfg = {
  assets: envNumber('BENCH_SEARCH_ASSETS', 1_000_000),
  rounds: envNumber('BENCH_SEARCH_ROUNDS', 5),
  repeats: envNumber('BENCH_SEARCH_REPEATS', 10),
  data: process.env.BENCH_SEARCH_DATA,
  wrkSeconds: envNumber('BENCH_SEARCH_WRK_SECONDS', 10),
}
const TARGET = { smallP95: 50, anyP95: 150 }
/**
 * What editors type: clip ids, places, subjects, people, shot types, camera models, prefixes,
 * phrases, exclusions; and parts of words (docs/api.md, Search): a clip number without its
 * camera letter (`0713` inside `C0713`), the end of a word (`ighthouse`), a part many words hold
 * (`ouse`: lighthouse, warehouse, greenhouse), beside the whole word (`C0713`).
 */
const QUERIES = [
  'A042_C0713',
  'C0713',
  '0713',
  'ighthouse',
  'ouse',
  'Tórshavn funicular',
  '"golden hour" Nuuk',
  'Zofia Okafor',
  'ferry interview',
  'lighthouse',
  'lightho',
  'reykjavik',
  'Lisbon',
  'cafe',
  'Okafor',
  'interview',
  'interv -drone',
  'FX6',
  'drone',
  'night',
  'ha',
  'mov',
]

const scratch = benchScratch('reelhouse-bench-search-')

type Server = { label: string; base: string; pid: number; match: boolean; stop(): Promise<void> }

async function startServe(label: string, cli: string[], dataDir: string, more: string[] = []): Promise<Server> {
  const { proc, port } = await spawnListening(
    label,
    [...cli, 'serve', '--data', dataDir, '--host', '127.0.0.1', '--port', '0', ...more],
    {
      portOf: (line) => / serving .*api=http:\/\/127\.0\.0\.1:(\d+)\//.exec(line)?.[1],
      timeoutMs: 120_000,
      keep: 20,
      drop: /./,
    },
  )
  return { label, base: `http://127.0.0.1:${port}`, pid: proc.pid, match: false, stop: () => stopProc(proc) }
}
async function startBaseline(file: string): Promise<Server> {
  const { proc, port } = await spawnListening('baseline', [BUN, 'bench/search-baseline.ts', file], {
    portOf: (l) => /^listening (\d+)$/.exec(l.trim())?.[1],
  })
  return { label: 'baseline', base: `http://127.0.0.1:${port}`, pid: proc.pid, match: true, stop: () => stopProc(proc) }
}
async function stopProc(proc: ReturnType<typeof Bun.spawn>) {
  proc.kill('SIGTERM')
  await proc.exited
  children.delete(proc as never)
}

/** The path of a query on a server: the API's, or the baseline's with the FTS5 text made as the API makes it. */
function pathOf(server: Server, q: string) {
  if (!server.match) return `/api/search/?q=${encodeURIComponent(q)}&limit=50`
  const parsed = toMatch(q) as { match: string }
  return `/?match=${encodeURIComponent(`{name path keywords description meta} : (${parsed.match})`)}&limit=50`
}

async function ask(server: Server, path: string, key: string | undefined) {
  const t0 = performance.now()
  const r = await fetch(server.base + path, { headers: key ? { authorization: `Token ${key}` } : {} })
  const body = await r.text()
  const ms = performance.now() - t0
  if (r.status !== 200) throw new Error(`${server.label} ${path}: ${r.status} ${body.slice(0, 200)}`)
  return { ms, hits: Number(r.headers.get('x-total-count')), body }
}

async function wrk(server: Server, key: string | undefined): Promise<number> {
  return wrkPaths(server, QUERIES.map((q) => pathOf(server, q)).join('|'), key)
}

/** wrk's throughput on `paths` (separated by "|"), asked in turn by 16 connections. */
async function wrkPaths(server: Server, paths: string, key: string | undefined): Promise<number> {
  const proc = Bun.spawn(
    [
      'wrk',
      '-t1',
      '-c16',
      `-d${cfg.wrkSeconds}s`,
      '--timeout',
      '30s',
      '-s',
      join(import.meta.dir, 'search.lua'),
      server.base,
    ],
    {
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, BENCH_PATHS: paths, BENCH_KEY: key ?? '' },
    },
  )
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const line = out.split('\n').find((l) => l.startsWith('{'))
  if (!line) throw new Error(`wrk: ${out}`)
  const r = JSON.parse(line) as { requests: number; duration_us: number; errors: Record<string, number> }
  if (Object.values(r.errors).some((n) => n > 0))
    throw new Error(`wrk against ${server.label} saw errors ${JSON.stringify(r.errors)}`)
  return r.requests / (r.duration_us / 1e6)
}

/**
 * What looking for parts of words (the trigram index, docs/api.md, Search) adds to each query:
 * the search service in this process on the catalogue, each query with and without that look in
 * turn, `repeats` times each; p50 in ms of both, per user. In-process, so that the two differ by
 * that look alone, under whatever else the machine does at the time.
 */
function insideCost(file: string, repeats: number) {
  const db = openDb(file)
  const search = createSearch(db)
  const ids = db.$client
    .query<{ id: number }, []>('SELECT id FROM productions ORDER BY id')
    .all()
    .map((p) => p.id)
  const user = (superuser: boolean, readable: number[]): Principal => ({
    id: 0,
    username: superuser ? 'admin' : 'reader',
    is_superuser: superuser,
    perms: new Set(),
    groups: new Set(),
    readable: new Set(readable),
    writable: new Set(),
  })
  const users = { admin: user(true, []), reader: user(false, ids.slice(0, READER_PRODUCTIONS)) }
  const out = new Map<string, { with: number; without: number }>()
  try {
    for (const [name, u] of Object.entries(users))
      for (const q of QUERIES) {
        const parsed = toMatch(q) as { match: string; wanted: string; inside?: SearchFilters['inside'] }
        const withInside: SearchFilters = { match: parsed.match, wanted: parsed.wanted, inside: parsed.inside }
        const without: SearchFilters = { match: parsed.match, wanted: parsed.wanted }
        const a: number[] = []
        const b: number[] = []
        for (let i = 0; i <= repeats; i++)
          for (const [f, xs] of [
            [withInside, a],
            [without, b],
          ] as const) {
            const t0 = performance.now()
            search.search(u, f, 50, 0)
            // The first of each warms the pages up.
            if (i > 0) xs.push(performance.now() - t0)
          }
        out.set(`${name}\u0000${q}`, { with: median(a), without: median(b) })
      }
  } finally {
    search.close()
    db.$client.close()
  }
  return out
}

async function main(): Promise<boolean> {
  if (!Bun.which('wrk')) throw new Error('wrk is not installed (Debian: apt-get install wrk)')
  const host = machine()
  const exe = join(ROOT, 'dist', 'reelhouse')
  if (!existsSync(exe)) throw new Error('dist/reelhouse is missing: npm run build first')
  scratch.make()
  const source = join(scratch.path, 'source')
  const compiled = join(scratch.path, 'compiled')

  // The catalogue: seeded here, or a folder seeded before (its keys in bench-keys.json).
  let seedS = NaN
  let keys: { admin: string; reader: string }
  if (cfg.data && existsSync(join(cfg.data, 'bench-keys.json'))) {
    mkdirSync(source)
    copyFileSync(dbFile(cfg.data), dbFile(source))
    keys = JSON.parse(readFileSync(join(cfg.data, 'bench-keys.json'), 'utf8'))
    console.error(`catalogue of ${cfg.data} reused`)
  } else {
    const t0 = performance.now()
    keys = seedSearchCatalogue(source, cfg.assets)
    seedS = (performance.now() - t0) / 1000
    console.error(
      `seeded ${cfg.assets.toLocaleString('en-US')} assets (the index built by its triggers) in ${seedS.toFixed(0)} s`,
    )
    if (cfg.data) {
      mkdirSync(cfg.data, { recursive: true })
      copyFileSync(dbFile(source), dbFile(cfg.data))
      writeFileSync(join(cfg.data, 'bench-keys.json'), JSON.stringify(keys))
    }
  }
  mkdirSync(compiled)
  copyFileSync(dbFile(source), dbFile(compiled))
  const assets = (() => {
    const db = new Database(dbFile(source), { readonly: true })
    try {
      const n = db.query<{ n: number }, []>('SELECT count(*) AS n FROM media_assets').get()!.n
      const pages = db
        .query<{ name: string; bytes: number }, []>(
          "SELECT name, sum(pgsize) AS bytes FROM dbstat WHERE name LIKE 'search_index%' GROUP BY name",
        )
        .all()
      const sum = (trigram: boolean) =>
        pages.filter((p) => p.name.startsWith('search_index_trigram') === trigram).reduce((a, p) => a + p.bytes, 0)
      return { n, index: sum(false), trigram: sum(true), file: statSync(dbFile(source)).size }
    } finally {
      db.close()
    }
  })()
  // serve --data needs no admin.token: the keys were made by the seed.
  const servers = [
    await startServe('source', [BUN, 'src/main.ts'], source),
    await startServe('compiled', [exe], compiled),
    await startBaseline(dbFile(source)),
  ]
  const users = [
    ['admin', keys.admin],
    ['reader', keys.reader],
  ] as const
  // [server][user][query] latencies; hits per user and query.
  const lat = new Map<string, number[]>()
  const hits = new Map<string, number>()
  const k = (...parts: string[]) => parts.join('\u0000')
  // Warm-up: every query once on each server (the first reads pages from disk).
  for (const s of servers)
    for (const [u, key] of users)
      if (!(s.match && u === 'reader')) for (const q of QUERIES) await ask(s, pathOf(s, q), key)
  for (let round = 0; round < cfg.rounds; round++) {
    const order = servers.map((_, i) => servers[(i + round) % servers.length]!)
    for (const s of order) {
      for (const [u, key] of users) {
        // The baseline answers as a superuser only: it has no users.
        if (s.match && u === 'reader') continue
        for (const q of QUERIES) {
          for (let i = 0; i < cfg.repeats; i++) {
            const r = await ask(s, pathOf(s, q), key)
            const id = k(s.label, u, q)
            if (!lat.has(id)) lat.set(id, [])
            lat.get(id)!.push(r.ms)
            if (!s.match) hits.set(k(u, q), r.hits)
          }
        }
      }
    }
    console.error(`round ${round + 1}/${cfg.rounds} done`)
  }
  const rss = Object.fromEntries(servers.map((s) => [s.label, memory(s.pid).hwmMiB]))
  const throughput: Record<string, number> = {}
  for (const s of servers) throughput[s.label] = await wrk(s, keys.admin)
  const readerThroughput = await wrk(servers[1]!, keys.reader)
  for (const s of servers) await s.stop()
  const inside = insideCost(dbFile(source), 2 * cfg.repeats)
  // Other work on the machine shows in every number: the baseline runs the same statements in every run.
  const endLoad = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')

  // ---------------------------------------------------------------- results
  const n = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })
  const classP95 = (server: string, user: string, small: boolean) =>
    pct(
      QUERIES.filter((q) => !small || hits.get(k(user, q))! <= 10_000).flatMap(
        (q) => lat.get(k(server, user, q)) ?? [],
      ),
      95,
    )
  const verdict: { what: string; value: number; target: number }[] = []
  for (const server of ['compiled', 'source'])
    for (const [user] of users) {
      verdict.push({
        what: `${server}, ${user}: p95 of queries of up to 10,000 hits`,
        value: classP95(server, user, true),
        target: TARGET.smallP95,
      })
      verdict.push({
        what: `${server}, ${user}: p95 of any query`,
        value: classP95(server, user, false),
        target: TARGET.anyP95,
      })
    }
  const pass = verdict.every((v) => v.value < v.target)
  const mark = (ok: boolean) => (ok ? 'pass' : 'FAIL')
  const rows: [string, string, string, string][] = [
    ...verdict
      .filter((v) => v.what.startsWith('compiled'))
      .map((v): [string, string, string, string] => [
        `Search, ${v.what}`,
        `${n(v.value, 1)} ms`,
        `< ${v.target} ms`,
        mark(v.value < v.target),
      ]),
    ...verdict
      .filter((v) => v.what.startsWith('source'))
      .map((v): [string, string, string, string] => [
        `Search, ${v.what}`,
        `${n(v.value, 1)} ms`,
        `< ${v.target} ms`,
        mark(v.value < v.target),
      ]),
    [
      'Search, baseline (admin): p95 of queries of up to 10,000 hits; of any query',
      `${n(classP95('baseline', 'admin', true), 1)} ms; ${n(classP95('baseline', 'admin', false), 1)} ms`,
      '',
      '',
    ],
    [
      'Throughput, 16 connections, the queries in turn (admin): compiled / source / baseline',
      `${n(throughput.compiled!)} / ${n(throughput.source!)} / ${n(throughput.baseline!)} req/s`,
      '',
      '',
    ],
    ['Throughput, 16 connections, the reader (compiled)', `${n(readerThroughput)} req/s`, '', ''],
    [
      'Index size on disk: words / trigrams / the whole catalogue',
      `${n(assets.index / 2 ** 20)} / ${n(assets.trigram / 2 ** 20)} / ${n(assets.file / 2 ** 20)} MiB (${n(assets.n)} assets)`,
      '',
      '',
    ],
    [
      'Peak RSS: compiled / source / baseline',
      `${n(rss.compiled!)} / ${n(rss.source!)} / ${n(rss.baseline!)} MiB`,
      '',
      '',
    ],
  ]
  const perQuery = QUERIES.map((q) => {
    const cell = (server: string, user: string) => {
      const xs = lat.get(k(server, user, q))
      return xs ? `${n(median(xs), 1)} / ${n(pct(xs, 95), 1)}` : ''
    }
    return `| \`${q}\` | ${n(hits.get(k('admin', q))!)} | ${cell('compiled', 'admin')} | ${cell('source', 'admin')} | ${cell('baseline', 'admin')} | ${n(hits.get(k('reader', q))!)} | ${cell('compiled', 'reader')} |`
  })

  const insideRows = QUERIES.map((q) => {
    const cell = (user: string) => {
      const c = inside.get(`${user}\u0000${q}`)!
      return `${n(c.with, 1)} / ${n(c.without, 1)}`
    }
    return `| \`${q}\` | ${cell('admin')} | ${cell('reader')} |`
  })

  console.log('\nSearch benchmark')
  const w = Math.max(...rows.map((r) => r[0].length))
  for (const r of rows) console.log(`${r[0].padEnd(w)}  ${r[1].padEnd(30)} ${r[2].padEnd(9)} ${r[3]}`)
  console.log(perQuery.join('\n'))
  console.log(insideRows.join('\n'))

  if (process.env.BENCH_NO_DOC !== '1') {
    writeSection(
      join(ROOT, 'docs', 'benchmarks.md'),
      'search',
      `## Search: GET /api/search/ over ${n(assets.n)} assets

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load}; at the end: ${endLoad})
- Bun ${host.bun}; load tool ${host.wrk}
- Data: bench/search-seed.ts, ${n(assets.n)} media assets (3 in 5 video, 1 audio, 1 image) over 20
  productions: names of a subject, a place, a shot type and a number; paths of production, kind,
  day, card and clip (\`/srv/nas/show-07/video/2026-03-14/A042/A042_C0713_ferry_drone.mov\`);
  descriptions (6 in 10) naming mood, shot, subject, place and sometimes a person; keywords
  (Location, Mood, People); custom metadata of videos (camera, operator, scene).${
    Number.isNaN(seedS)
      ? ''
      : ` Seeded, with
  the index built by its triggers, in ${n(seedS)} s.`
  }

| Measure | Result | Target | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

Compare within one run: the baseline, whose statements no change of Reelhouse's touches, shows
how busy the machine was (the load average above counts every process on it).

Per query, the first page (limit=50), one request at a time: hits, then p50 / p95 in ms (${cfg.rounds} rounds of ${cfg.repeats} requests per
server and user, the servers' order rotated each round). The reader reads 10 of the 20 productions.

| Query | Hits (admin) | Compiled, admin | Source, admin | Baseline | Hits (reader) | Compiled, reader |
|---|---|---|---|---|---|---|
${perQuery.join('\n')}

What the look for parts of words adds: each query in the search service of this process, with it
and without it in turn (${2 * cfg.repeats} of each), p50 in ms of with / without. A query with no hits
inside words pays one look in the trigram index; one with hits there pays for finding them.

| Query | Admin: with / without | Reader: with / without |
|---|---|---|
${insideRows.join('\n')}

What is measured:

- **Reelhouse**: \`reelhouse serve\` (the compiled executable) and \`bun src/main.ts serve\`, each on
  its own copy of the catalogue, with the default request log; requests with \`Authorization:
  Token <key>\` of the admin (a superuser) or of the reader. Each answer is read whole.
- **Baseline**: bench/search-baseline.ts, raw \`Bun.serve\` and \`bun:sqlite\` on the same file,
  running the statements Reelhouse runs for a superuser (the count, then the page by bm25 joined to
  its records) with the FTS5 text given ready-made, and writing the same JSON. It ranks every
  search by bm25, also those of more than 10,000 hits, which Reelhouse lists all words in the
  name first, then newest first (docs/api.md, Search): the two differ there by design. It asks
  the word index only: the hits inside words (\`0713\`, \`ighthouse\`, \`ouse\`), which
  Reelhouse finds in its trigram index, it does not find (0 hits).
- **Parts of words**: every query of three or more letters and digits asks the trigram index
  too (the names and paths without the first letter of each word, migration 0024); a word found
  whole (\`interview\`, \`mov\`) costs that look beside the word index's.
- **Throughput**: \`wrk -t1 -c16 -d${cfg.wrkSeconds}s\` with bench/search.lua, the queries above in turn.
- **Index size**: the pages of the FTS5 indexes' tables (dbstat): the word index with its prefix
  indexes of 2 and 3 characters, and the trigram index.
`,
    )
  }
  if (process.env.BENCH_RESULTS)
    writeFileSync(process.env.BENCH_RESULTS, JSON.stringify({ bench: 'search', headline: rows.slice(0, 2) }))
  return pass
}

// ------------------------------------------------------------------ on PostgreSQL

/**
 * The tsquery src/db/search/pg.ts asks the word index for `q` (its `words`: the wanted words and
 * phrases AND-ed, the exclusions AND-ed as NOT), made from the lexemes the server makes of each
 * term, as pg.ts makes it; '' (no hit) where a wanted word makes no lexeme.
 */
async function tsqueryOf(client: import('bun').SQL, q: string): Promise<string> {
  const terms = searchedTerms(q)
  const rows = (await client.unsafe(
    `SELECT t.i::int AS i,
       coalesce((SELECT array_agg(u.lexeme ORDER BY p.pos) FROM unnest(to_tsvector('search.rh', search.words(t.text))) u
         CROSS JOIN LATERAL unnest(u.positions) AS p(pos)), '{}') AS lexemes
     FROM json_array_elements_text($1::json) WITH ORDINALITY AS t(text, i)`,
    [terms.map((t) => t.text)],
  )) as { i: number; lexemes: string[] }[]
  const operand = (lexeme: string) => `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`
  const phrase = (lexemes: string[], prefix: boolean) => {
    if (!lexemes.length) return null
    const parts = lexemes.map((l, i) => operand(l) + (i === lexemes.length - 1 && prefix ? ':*' : ''))
    return parts.length === 1 ? parts[0]! : `(${parts.join(' <-> ')})`
  }
  const planned = terms.map((t, i) => ({ ...t, tsquery: phrase(rows.find((r) => r.i === i + 1)!.lexemes, t.prefix) }))
  const wanted = planned.filter((t) => !t.exclude)
  if (!wanted.every((t) => t.tsquery !== null)) return ''
  const excluded = planned.filter((t) => t.exclude && t.tsquery !== null).map((t) => `!${t.tsquery}`)
  return [...wanted.map((t) => t.tsquery), ...excluded].join(' & ')
}

/**
 * BENCH_ENGINE=postgres: the catalogue seeded as above, copied into a private PostgreSQL
 * (bench/pg.ts), searched through the compiled executable run with --database, against
 * bench/search-baseline-pg.ts (raw Bun.serve + Bun.SQL running pg.ts's count and ranked page);
 * the same latencies, users and throughput as above, without the source run and the in-process
 * look for parts of words (SQLite's). Writes the section `search-postgres` of docs/benchmarks.md.
 */
async function mainPostgres(): Promise<boolean> {
  if (!Bun.which('wrk')) throw new Error('wrk is not installed (Debian: apt-get install wrk)')
  const pg = await import('./pg.ts')
  const { SQL } = await import('bun')
  const host = machine()
  const exe = join(ROOT, 'dist', 'reelhouse')
  if (!existsSync(exe)) throw new Error('dist/reelhouse is missing: npm run build first')
  try {
    scratch.make()
    const source = join(scratch.path, 'source')
    const served = join(scratch.path, 'served')
    let seedS = NaN
    let keys: { admin: string; reader: string }
    if (cfg.data && existsSync(join(cfg.data, 'bench-keys.json'))) {
      mkdirSync(source)
      copyFileSync(dbFile(cfg.data), dbFile(source))
      keys = JSON.parse(readFileSync(join(cfg.data, 'bench-keys.json'), 'utf8'))
    } else {
      const t0 = performance.now()
      keys = seedSearchCatalogue(source, cfg.assets)
      seedS = (performance.now() - t0) / 1000
    }
    console.error(`catalogue of ${cfg.assets} assets ready (seeded in ${seedS.toFixed(0)} s)`)
    const { url, seconds: copyS } = await pg.copyToPostgres(source)
    const settings = await pg.clusterSettings(url)
    console.error(`copied to PostgreSQL in ${copyS.toFixed(0)} s; ${settings}`)
    const client = new SQL(url)
    const tsqueries = new Map<string, string>()
    let sizes: { assets: number; docs: number; database: number }
    try {
      for (const q of QUERIES) tsqueries.set(q, await tsqueryOf(client, q))
      const [row] = (await client.unsafe(
        `SELECT (SELECT count(*) FROM media_assets) AS assets, pg_total_relation_size('search.docs') AS docs,
           pg_database_size(current_database()) AS database`,
      )) as { assets: string; docs: string; database: string }[]
      sizes = { assets: Number(row!.assets), docs: Number(row!.docs), database: Number(row!.database) }
    } finally {
      await client.close()
    }
    mkdirSync(served)
    const compiled = await startServe('compiled', [exe], served, ['--database', url])
    const { proc, port } = await spawnListening('baseline', [BUN, 'bench/search-baseline-pg.ts', url], {
      portOf: (l) => /^listening (\d+)$/.exec(l.trim())?.[1],
    })
    const baseline: Server = {
      label: 'baseline',
      base: `http://127.0.0.1:${port}`,
      pid: proc.pid,
      match: true,
      stop: () => stopProc(proc),
    }
    const servers = [compiled, baseline]
    const path = (s: Server, q: string) =>
      s.match
        ? `/?tsquery=${encodeURIComponent(tsqueries.get(q)!)}&limit=50`
        : `/api/search/?q=${encodeURIComponent(q)}&limit=50`
    const users = [
      ['admin', keys.admin],
      ['reader', keys.reader],
    ] as const
    const lat = new Map<string, number[]>()
    const hits = new Map<string, number>()
    const k = (...parts: string[]) => parts.join('\u0000')
    for (const s of servers)
      for (const [u, key] of users)
        if (!(s.match && u === 'reader')) for (const q of QUERIES) await ask(s, path(s, q), key)
    for (let round = 0; round < cfg.rounds; round++) {
      for (const s of servers.map((_, i) => servers[(i + round) % servers.length]!))
        for (const [u, key] of users) {
          if (s.match && u === 'reader') continue
          for (const q of QUERIES)
            for (let i = 0; i < cfg.repeats; i++) {
              const r = await ask(s, path(s, q), key)
              const id = k(s.label, u, q)
              if (!lat.has(id)) lat.set(id, [])
              lat.get(id)!.push(r.ms)
              hits.set(k(s.label, u, q), r.hits)
            }
        }
      console.error(`round ${round + 1}/${cfg.rounds} done`)
    }
    const rss = { compiled: memory(compiled.pid).hwmMiB, baseline: memory(baseline.pid).hwmMiB }
    const wrkOf = (s: Server, key: string) => wrkPaths(s, QUERIES.map((q) => path(s, q)).join('|'), key)
    const throughput = { compiled: await wrkOf(compiled, keys.admin), baseline: await wrkOf(baseline, keys.admin) }
    const readerThroughput = await wrkOf(compiled, keys.reader)
    for (const s of servers) await s.stop()
    const endLoad = loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')

    // -------------------------------------------------------------- results
    const n = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })
    const classP95 = (server: string, user: string, small: boolean) =>
      pct(
        QUERIES.filter((q) => !small || hits.get(k('compiled', user, q))! <= 10_000).flatMap(
          (q) => lat.get(k(server, user, q)) ?? [],
        ),
        95,
      )
    const mark = (ok: boolean) => (ok ? 'pass' : 'FAIL')
    const verdict = users.flatMap(([user]) => [
      {
        what: `${user}: p95 of queries of up to 10,000 hits`,
        value: classP95('compiled', user, true),
        target: TARGET.smallP95,
      },
      { what: `${user}: p95 of any query`, value: classP95('compiled', user, false), target: TARGET.anyP95 },
    ])
    const rows: [string, string, string, string][] = [
      ...verdict.map((v): [string, string, string, string] => [
        `Search, executable on PostgreSQL, ${v.what}`,
        `${n(v.value, 1)} ms`,
        `< ${v.target} ms`,
        mark(v.value < v.target),
      ]),
      [
        'Search, raw Bun.SQL baseline (admin): p95 of queries of up to 10,000 hits; of any query',
        `${n(classP95('baseline', 'admin', true), 1)} ms; ${n(classP95('baseline', 'admin', false), 1)} ms`,
        '',
        '',
      ],
      [
        'Throughput, 16 connections, the queries in turn (admin): executable / baseline (ratio)',
        `${n(throughput.compiled)} / ${n(throughput.baseline)} req/s (${n(throughput.compiled / throughput.baseline, 2)})`,
        '',
        '',
      ],
      ['Throughput, 16 connections, the reader (executable)', `${n(readerThroughput)} req/s`, '', ''],
      [
        'search.docs with its indexes / the whole database',
        `${n(sizes.docs / 2 ** 20)} / ${n(sizes.database / 2 ** 20)} MiB (${n(sizes.assets)} assets)`,
        '',
        '',
      ],
      ['Peak RSS: executable / baseline', `${n(rss.compiled)} / ${n(rss.baseline)} MiB`, '', ''],
    ]
    const cell = (server: string, user: string, q: string) => {
      const xs = lat.get(k(server, user, q))
      return xs ? `${n(median(xs), 1)} / ${n(pct(xs, 95), 1)}` : ''
    }
    const perQuery = QUERIES.map(
      (q) =>
        `| \`${q}\` | ${n(hits.get(k('compiled', 'admin', q))!)} | ${cell('compiled', 'admin', q)} | ${n(hits.get(k('baseline', 'admin', q))!)} | ${cell('baseline', 'admin', q)} | ${n(hits.get(k('compiled', 'reader', q))!)} | ${cell('compiled', 'reader', q)} |`,
    )
    console.log('\nSearch benchmark on PostgreSQL')
    const w = Math.max(...rows.map((r) => r[0].length))
    for (const r of rows) console.log(`${r[0].padEnd(w)}  ${r[1].padEnd(30)} ${r[2].padEnd(9)} ${r[3]}`)
    console.log(perQuery.join('\n'))
    if (process.env.BENCH_NO_DOC !== '1')
      writeSection(
        join(ROOT, 'docs', 'benchmarks.md'),
        'search-postgres',
        `### Search on PostgreSQL: GET /api/search/ over ${n(sizes.assets)} assets

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load}; at the end: ${endLoad})
- Bun ${host.bun}; load tool ${host.wrk}
- Database: ${settings}
- A private cluster (test/helpers/pg.ts) reached through a Unix socket, on the same machine: the server, the database, the baseline and the client share its ${host.cores} cores.
  fsync is off (the helper starts its clusters so; a facility's server keeps it on), which
  changes nothing a search costs: it only reads.
- Data: bench/search-seed.ts as above, ${n(sizes.assets)} media assets (BENCH_SEARCH_ASSETS=${cfg.assets}, not the
  SQLite run's million: seeding and copying that many takes longer than a run here may), copied by
  \`reelhouse migrate-to-postgres\` (which rebuilds the search documents) in ${n(copyS)} s, then
  \`VACUUM (ANALYZE)\` as autovacuum would do
- Settings: BENCH_ENGINE=postgres BENCH_SEARCH_ASSETS=${cfg.assets} BENCH_SEARCH_ROUNDS=${cfg.rounds}
  BENCH_SEARCH_REPEATS=${cfg.repeats} BENCH_SEARCH_WRK_SECONDS=${cfg.wrkSeconds}

| Measure | Result | Target (the SQLite run's) | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

${pg.sharedMachine(host.load, endLoad, host.cores)}

The targets are absolute latencies, the same as the SQLite run's, for the compiled executable;
they are met or missed on a catalogue ${n(1_000_000 / sizes.assets)} times smaller than that run's.

Per query, the first page (limit=50), one request at a time: hits, then p50 / p95 in ms (${cfg.rounds} rounds
of ${cfg.repeats} requests per server and user, the servers' order rotated each round):

| Query | Hits (admin) | Executable, admin | Baseline hits | Baseline | Hits (reader) | Executable, reader |
|---|---|---|---|---|---|---|
${perQuery.join('\n')}

What the baseline is: bench/search-baseline-pg.ts, raw \`Bun.serve\` and \`Bun.SQL\` (a pool of 20
sessions, the service's) running, in one read-only repeatable-read transaction as the service
does, src/db/search/pg.ts's count of the word index's hits and its page by \`ts_rank\` joined to
the records, with the tsquery made beforehand as pg.ts makes it, and writing the same JSON. It
makes no statement for the words' lexemes (the service's first), no look for parts of words (the
service's trigram count and page: \`0713\`, \`ighthouse\`, \`ouse\` have no hits there), and ranks
every search, also those of more than 10,000 hits, which the service lists name first, then
newest first: the two differ there by design, as on SQLite.
`,
      )
    if (process.env.BENCH_RESULTS)
      writeFileSync(process.env.BENCH_RESULTS, JSON.stringify({ bench: 'search-postgres', headline: rows.slice(0, 2) }))
    return verdict.every((v) => v.value < v.target)
  } finally {
    pg.stopCluster()
  }
}

void runBench(process.env.BENCH_ENGINE === 'postgres' ? mainPostgres : main, scratch.stopAll)
