// The list benchmark (part of npm run bench): what an editing tool asks for most, against raw
// Bun.serve + prepared bun:sqlite statements answering the same bytes (bench/baseline.ts), both
// loaded by wrk in the same run: the first page (limit=50 and limit=1) and one record by random id,
// each from the executable users get (dist/reelhouse, built here) with its default request log
// (stderr to a file, as a service manager keeps it) and from the source run with --quiet, in the
// same rounds; pages at offsets spread over the whole table; the unpaged list's peak RSS; the key
// check with 1 key and with 100,000 keys (those three from the source run). Prints a summary and
// writes docs/benchmarks.md; with BENCH_RESULTS=FILE it also writes its headline rows there as
// JSON (bench/run.ts prints them with the others').
// Environment (all optional): BENCH_ASSETS (100000), BENCH_KEYS (100000), BENCH_DURATION (s, 10),
// BENCH_ROUNDS (5), BENCH_CONNECTIONS (32), BENCH_THREADS (1), BENCH_WARMUP (s, 3),
// BENCH_NO_DOC=1 (do not write docs/benchmarks.md), BENCH_ENGINE=postgres (the same catalogue
// on a private PostgreSQL against bench/baseline-pg.ts instead: mainPostgres).
// Exit status: 0 all targets met, 1 a target missed or a check failed.
import { type Subprocess, spawnSync } from 'bun'
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { dbFile } from '../src/config.ts'
import { openDb } from '../src/db/client.ts'
import { sqlitePort } from '../src/db/port.ts'
import { createUsers } from '../src/modules/users/service.ts'
import { machine, writeSection } from './doc.ts'
import {
  children,
  envNumber,
  memory,
  onInterrupt,
  resetPeak,
  ROOT,
  runBench,
  spawnListening,
  spawnLogging,
  stopChildren,
} from './procs.ts'
import { addKeys, seedCatalogue } from './seed.ts'

const BUN = process.execPath
const LUA = join(import.meta.dir, 'paged.lua')
const FIXED = join(import.meta.dir, 'fixed.lua')
const RECORD = join(import.meta.dir, 'record.lua')
const num = envNumber
const cfg = {
  assets: num('BENCH_ASSETS', 100_000),
  keys: num('BENCH_KEYS', 100_000),
  duration: num('BENCH_DURATION', 8),
  rounds: num('BENCH_ROUNDS', 5),
  connections: num('BENCH_CONNECTIONS', 32),
  threads: num('BENCH_THREADS', 1),
  warmup: num('BENCH_WARMUP', 3),
}
const TARGET = { first50: 0.9, first1: 0.7, record: 0.9, uniform: 1.5, rssMiB: 150, keyRatio: 0.9 }
const LIST = '/api/videoassets/'

// ------------------------------------------------------------------ processes and cleanup

let tmp: string | undefined

async function stopAll() {
  await stopChildren(3000)
  if (tmp) rmSync(tmp, { recursive: true, force: true })
  tmp = undefined
}
onInterrupt(stopAll, () => tmp ?? 'nothing')

type Server = { name: string; proc: Subprocess; base: string }

/** Spawns a server and waits for the line that names its port. */
async function start(name: string, cmd: string[], portOf: (line: string) => string | undefined): Promise<Server> {
  const { proc, port } = await spawnListening(name, cmd, { portOf })
  return { name, proc, base: `http://127.0.0.1:${port}` }
}

const servingPort = (line: string) => / serving .*api=http:\/\/127\.0\.0\.1:(\d+)\//.exec(line)?.[1]
const startReelhouse = (name: string, dataDir: string) =>
  start(
    name,
    [BUN, 'src/main.ts', 'serve', '--data', dataDir, '--host', '127.0.0.1', '--port', '0', '--quiet'],
    servingPort,
  )

/** The executable, as users run it: no --quiet, its log (a line per request) written to `logFile`. */
async function startExecutable(exe: string, dataDir: string, logFile: string, more: string[] = []): Promise<Server> {
  const name = 'Reelhouse executable'
  const { proc, port } = await spawnLogging(
    name,
    [exe, 'serve', '--data', dataDir, '--host', '127.0.0.1', '--port', '0', ...more],
    { portOf: servingPort, logFile },
  )
  return { name, proc, base: `http://127.0.0.1:${port}` }
}

/**
 * dist/reelhouse built now from this checkout (`bun build.ts`), copied into `dir` so that another
 * build while this runs (a test's) does not change what is measured.
 */
function buildExecutable(dir: string): string {
  const built = spawnSync([BUN, 'build.ts'], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' })
  if (built.exitCode !== 0) throw new Error(`bun build.ts failed:\n${built.stderr}`)
  const exe = join(dir, 'reelhouse')
  copyFileSync(join(ROOT, 'dist', 'reelhouse'), exe)
  chmodSync(exe, 0o755)
  return exe
}

/** The lines in a file, counted as it is read (the request log of a run holds millions). */
async function lineCount(file: string): Promise<number> {
  let lines = 0
  for await (const chunk of Bun.file(file).stream())
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
  return lines
}
const startBaseline = (dbPath: string) =>
  start(
    'raw Bun.serve + bun:sqlite',
    [BUN, 'bench/baseline.ts', dbPath],
    (line) => /^listening (\d+)$/.exec(line.trim())?.[1],
  )

async function stop(server: Server) {
  server.proc.kill('SIGTERM')
  await server.proc.exited
  children.delete(server.proc)
}

// ------------------------------------------------------------------ wrk

type WrkResult = {
  requests: number
  duration_us: number
  bytes: number
  errors: Record<'connect' | 'read' | 'write' | 'status' | 'timeout', number>
  latency_us: { mean: number; stdev: number; p50: number; p90: number; p99: number; max: number }
}
type Load = { requests: number; rps: number; p50ms: number; p99ms: number; meanMs: number }

const wrkArgs = (seconds: number, url: string, lua = LUA) => [
  'wrk',
  `-t${cfg.threads}`,
  `-c${cfg.connections}`,
  `-d${seconds}s`,
  '-s',
  lua,
  url,
]

async function wrk(url: string, seconds: number, env: Record<string, string>, lua = LUA): Promise<Load> {
  const proc = Bun.spawn(wrkArgs(seconds, url, lua), {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, ...env },
  })
  children.add(proc)
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  children.delete(proc)
  const line = out.split('\n').find((l) => l.startsWith('{'))
  if (code !== 0 || !line) throw new Error(`wrk failed (${code}):\n${out}\n${err}`)
  const r = JSON.parse(line) as WrkResult
  const bad = Object.entries(r.errors).filter(([, n]) => n > 0)
  if (bad.length)
    throw new Error(`wrk against ${url} saw errors ${JSON.stringify(r.errors)}; responses must all be 2xx`)
  return {
    requests: r.requests,
    rps: r.requests / (r.duration_us / 1e6),
    p50ms: r.latency_us.p50 / 1000,
    p99ms: r.latency_us.p99 / 1000,
    meanMs: r.latency_us.mean / 1000,
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** A number as the tables show it: 12,345 or 0.83. */
const n = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })

type Target = { label: string; url: string; env: Record<string, string>; lua?: string }

/** Warms each target up, then runs `rounds` rounds, the order rotated each round. */
async function compare(targets: Target[], total: number, rounds: number): Promise<Map<string, Load[]>> {
  const results = new Map<string, Load[]>(targets.map((t) => [t.label, []]))
  for (const t of targets) await wrk(t.url, cfg.warmup, { ...t.env, BENCH_TOTAL: String(total) }, t.lua)
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const t = targets[(i + round) % targets.length]!
      const load = await wrk(t.url, cfg.duration, { ...t.env, BENCH_TOTAL: String(total) }, t.lua)
      results.get(t.label)!.push(load)
      console.error(
        `  round ${round + 1} ${t.label.padEnd(28)} ${load.rps.toFixed(0).padStart(6)} req/s  p50 ${load.p50ms.toFixed(1)} ms  p99 ${load.p99ms.toFixed(1)} ms`,
      )
    }
  }
  return results
}

/** The ratio a/b of each round (both ran back to back), then their median: steadier than a
 * ratio of medians when other work on the machine comes and goes. */
const pairedRatio = (a: Load[], b: Load[]) => median(a.map((l, i) => l.rps / b[i]!.rps))

const summarize = (loads: Load[]) => ({
  rps: median(loads.map((l) => l.rps)),
  p50ms: median(loads.map((l) => l.p50ms)),
  p99ms: median(loads.map((l) => l.p99ms)),
  all: loads.map((l) => Math.round(l.rps)),
})

// ------------------------------------------------------------------ checks

async function get(url: string, key?: string) {
  const response = await fetch(url, { headers: key ? { authorization: `Token ${key}` } : {} })
  return { status: response.status, total: response.headers.get('x-total-count'), text: await response.text() }
}

async function sameBodies(app: Server, raw: Server, key: string) {
  for (const id of [1, 4242, Math.floor(cfg.assets / 2), cfg.assets]) {
    const [a, b] = await Promise.all([get(`${app.base}${LIST}${id}/`, key), get(`${raw.base}/record/${id}/`)])
    if (a.status !== 200) throw new Error(`${app.name} ${LIST}${id}/: status ${a.status}: ${a.text.slice(0, 200)}`)
    if (a.text !== b.text)
      throw new Error(
        `${app.name}: records differ from the baseline's at id ${id}:\n${a.text.slice(0, 400)}\n${b.text.slice(0, 400)}`,
      )
  }
  for (const [limit, offset] of [
    [1, 0],
    [50, 0],
    [50, 1],
    [50, 12_345],
    [50, Math.floor(cfg.assets / 2)],
    [50, cfg.assets - 50],
    [50, cfg.assets - 10],
  ] as const) {
    const q = `?limit=${limit}&offset=${offset}`
    const [a, b] = await Promise.all([get(app.base + LIST + q, key), get(raw.base + '/' + q)])
    if (a.status !== 200) throw new Error(`${app.name} ${LIST}${q}: status ${a.status}: ${a.text.slice(0, 200)}`)
    if (a.text !== b.text)
      throw new Error(
        `${app.name}: bodies differ from the baseline's at offset ${offset}:\n${a.text.slice(0, 300)}\n${b.text.slice(0, 300)}`,
      )
    if (a.total !== String(cfg.assets) || b.total !== a.total)
      throw new Error(`X-Total-Count ${a.total} / ${b.total}, expected ${cfg.assets}`)
  }
}

/** The whole list, read as fast as the client can; returns its size and checks its content. */
async function unpaged(server: Server, key: string) {
  const started = performance.now()
  const response = await fetch(server.base + LIST, { headers: { authorization: `Token ${key}` } })
  if (response.status !== 200) throw new Error(`unpaged list: status ${response.status}`)
  const total = response.headers.get('x-total-count')
  const chunks: Uint8Array[] = []
  let bytes = 0
  for await (const chunk of response.body!) {
    chunks.push(chunk)
    bytes += chunk.byteLength
  }
  const seconds = (performance.now() - started) / 1000
  const items = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number }[]
  if (items.length !== cfg.assets || total !== String(cfg.assets))
    throw new Error(`unpaged list: ${items.length} items, X-Total-Count ${total}; expected ${cfg.assets}`)
  for (let i = 1; i < items.length; i++)
    if (items[i]!.id <= items[i - 1]!.id) throw new Error('unpaged list not in id order')
  return { bytes, seconds, chunked: response.headers.get('content-length') === null }
}

/** The whole list through curl reading at `rate` bytes/s: the server must not buffer ahead. */
function unpagedSlow(server: Server, key: string, rate: string) {
  const r = spawnSync([
    'curl',
    '-sS',
    '--limit-rate',
    rate,
    '-o',
    '/dev/null',
    '-w',
    '%{http_code} %{size_download} %{time_total}',
    '-H',
    `Authorization: Token ${key}`,
    server.base + LIST,
  ])
  const [status, size, time] = r.stdout.toString().split(' ')
  if (r.exitCode !== 0 || status !== '200') throw new Error(`curl --limit-rate: ${r.exitCode} ${r.stdout} ${r.stderr}`)
  return { bytes: Number(size), seconds: Number(time) }
}

/** users.authenticate in-process, alternating the two catalogues; microseconds per call. */
function keyCheckInProcess(dirs: string[], key: string, calls = 20_000, rounds = 5) {
  const dbs = dirs.map((d) => openDb(dbFile(d)))
  try {
    const users = dbs.map((db) => createUsers(sqlitePort(db)))
    const times: number[][] = dirs.map(() => [])
    for (const u of users) for (let i = 0; i < 2000; i++) if (!u.authenticate(key)) throw new Error('key not accepted')
    for (let r = 0; r < rounds; r++) {
      users.forEach((u, i) => {
        const t0 = performance.now()
        for (let c = 0; c < calls; c++) u.authenticate(key)
        times[i]!.push(((performance.now() - t0) * 1000) / calls)
      })
    }
    const plan = dbs[1]!.$client
      .query<{ detail: string }, [string]>(
        'EXPLAIN QUERY PLAN SELECT u.id FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?',
      )
      .all('x')
      .map((p) => p.detail)
    const keyCounts = dbs.map(
      (db) => db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM api_keys').get()!.n,
    )
    return { us: times.map(median), keyCounts, plan }
  } finally {
    for (const db of dbs) db.$client.close()
  }
}

// ------------------------------------------------------------------ main

async function main() {
  if (!Bun.which('wrk')) throw new Error('wrk is not installed (Debian: apt-get install wrk)')
  if (!Bun.which('curl')) throw new Error('curl is not installed')
  const host = machine()
  console.error(
    `machine: ${host.cpu}, ${host.cores} cores, ${host.ramGiB.toFixed(1)} GiB, Linux ${host.kernel}, bun ${host.bun}; load ${host.load}`,
  )

  tmp = mkdtempSync(join(tmpdir(), 'reelhouse-bench-'))
  const oneKey = join(tmp, 'one-key')
  const manyKeys = join(tmp, 'many-keys')
  // The executable's own copy of the catalogue: a second serve is refused on a folder in use.
  const forExe = join(tmp, 'executable')
  let t0 = performance.now()
  const exe = buildExecutable(tmp)
  console.error(`built the executable in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  t0 = performance.now()
  const key = seedCatalogue(oneKey, cfg.assets)
  console.error(`seeded ${cfg.assets} video assets in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  mkdirSync(forExe)
  copyFileSync(dbFile(oneKey), dbFile(forExe))
  t0 = performance.now()
  mkdirSync(manyKeys)
  copyFileSync(dbFile(oneKey), dbFile(manyKeys))
  addKeys(manyKeys, cfg.keys)
  console.error(`copied the catalogue and added ${cfg.keys} keys in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

  // Unpaged list on a fresh server: nothing but startup and the streamed list in its peak RSS.
  const fresh = await startReelhouse('Reelhouse (fresh, unpaged)', oneKey)
  await Bun.sleep(500)
  const idle = memory(fresh.proc.pid)
  const fast = await unpaged(fresh, key)
  const afterFast = memory(fresh.proc.pid)
  resetPeak(fresh.proc.pid)
  const slowRate = '4M'
  const slow = unpagedSlow(fresh, key, slowRate)
  const afterSlow = memory(fresh.proc.pid)
  if (slow.bytes !== fast.bytes)
    throw new Error(`unpaged list: ${slow.bytes} bytes through curl, ${fast.bytes} through fetch`)
  await stop(fresh)
  console.error(
    `unpaged: ${(fast.bytes / 2 ** 20).toFixed(1)} MiB in ${fast.seconds.toFixed(2)} s; idle RSS ${idle.rssMiB.toFixed(0)} MiB, peak ${afterFast.hwmMiB.toFixed(0)} MiB; slow client peak ${afterSlow.hwmMiB.toFixed(0)} MiB`,
  )

  // Paged list: Reelhouse (1 key), Reelhouse (100k keys), baseline; the executable for the first pages.
  const app = await startReelhouse('Reelhouse, 1 key', oneKey)
  const appMany = await startReelhouse(`Reelhouse, ${cfg.keys + 1} keys`, manyKeys)
  const logFile = join(tmp, 'executable.log')
  const compiled = await startExecutable(exe, forExe, logFile)
  const raw = await startBaseline(dbFile(oneKey))
  for (const server of [app, appMany, compiled]) await sameBodies(server, raw, key)
  const unauthorized = await get(`${app.base}${LIST}?limit=1`)
  if (unauthorized.status !== 401) throw new Error(`without a key the list answered ${unauthorized.status}`)
  console.error(
    'bodies of Reelhouse (source and executable) and the baseline are byte-identical at 6 offsets; no key: 401',
  )

  const withKey = { BENCH_PATH: LIST, BENCH_KEY: key }
  const targets: Target[] = [
    { label: 'raw', url: raw.base, env: { BENCH_PATH: '/' } },
    { label: 'app', url: app.base, env: withKey },
    { label: 'appMany', url: appMany.base, env: withKey },
  ]
  console.error(
    `paged, offset uniform over 0..${cfg.assets - 50}: wrk ${wrkArgs(cfg.duration, 'URL', relative(ROOT, LUA)).slice(1).join(' ')}, ${cfg.rounds} rounds`,
  )
  const paged = await compare(targets, cfg.assets, cfg.rounds)
  // What users feel first: the first page and one record, from the executable (its request log
  // on) and from the source run (--quiet) in the same rounds. The same request every time for the
  // pages; ids drawn by a fixed-seed generator for the records.
  const pair = (rawPath: string, appPath: string, lua: string): Target[] => [
    { label: 'raw', url: raw.base, env: { BENCH_PATH: rawPath }, lua },
    { label: 'compiled', url: compiled.base, env: { BENCH_PATH: appPath, BENCH_KEY: key }, lua },
    { label: 'app', url: app.base, env: { BENCH_PATH: appPath, BENCH_KEY: key }, lua },
  ]
  console.error('first page, limit=50')
  const first50 = await compare(pair('/?limit=50&offset=0', `${LIST}?limit=50&offset=0`, FIXED), cfg.assets, cfg.rounds)
  console.error('first page, limit=1')
  const first1 = await compare(pair('/?limit=1&offset=0', `${LIST}?limit=1&offset=0`, FIXED), cfg.assets, cfg.rounds)
  console.error('one record, random ids')
  const records = await compare(pair('/record/', LIST, RECORD), cfg.assets, cfg.rounds)
  const loadedPeak = {
    app: memory(app.proc.pid).hwmMiB,
    compiled: memory(compiled.proc.pid).hwmMiB,
    raw: memory(raw.proc.pid).hwmMiB,
  }
  await stop(app)
  await stop(appMany)
  await stop(compiled)
  await stop(raw)
  // The executable's log was on: every request of the rounds has its line (stopped, it has written them all).
  const measured = [first50, first1, records].flatMap((m) => m.get('compiled')!).reduce((a, l) => a + l.requests, 0)
  const logged = await lineCount(logFile)
  if (logged < measured) throw new Error(`the executable's log holds ${logged} lines for ${measured} requests measured`)
  console.error(
    `the executable's request log: ${n(logged)} lines for ${n(measured)} requests measured (and the warm-ups')`,
  )

  const keyCheck = keyCheckInProcess([oneKey, manyKeys], key)

  // ---------------------------------------------------------------- results
  const p = {
    raw: summarize(paged.get('raw')!),
    app: summarize(paged.get('app')!),
    appMany: summarize(paged.get('appMany')!),
  }
  const ratio = pairedRatio(paged.get('app')!, paged.get('raw')!)
  const keyRatio = pairedRatio(paged.get('appMany')!, paged.get('app')!)
  /** `side` against the baseline of the same rounds: 'compiled' (the executable) or 'app' (the source run). */
  const felt = (loads: Map<string, Load[]>, side: 'compiled' | 'app' = 'compiled') => ({
    raw: summarize(loads.get('raw')!),
    app: summarize(loads.get(side)!),
    ratio: pairedRatio(loads.get(side)!, loads.get('raw')!),
  })
  const f50 = felt(first50)
  const f1 = felt(first1)
  const rec = felt(records)
  const source = { f50: felt(first50, 'app'), f1: felt(first1, 'app'), rec: felt(records, 'app') }
  const keyUsRatio = keyCheck.us[1]! / keyCheck.us[0]!
  const peak = Math.max(afterFast.hwmMiB, afterSlow.hwmMiB)
  const pass = {
    first50: f50.ratio >= TARGET.first50,
    first1: f1.ratio >= TARGET.first1,
    record: rec.ratio >= TARGET.record,
    uniform: ratio >= TARGET.uniform,
    rss: peak < TARGET.rssMiB,
    key: keyRatio >= TARGET.keyRatio && keyUsRatio <= 1 / TARGET.keyRatio,
  }
  const mark = (ok: boolean) => (ok ? 'pass' : 'FAIL')

  const vs = (x: ReturnType<typeof felt>) =>
    `${n(x.ratio, 2)} (${n(x.app.rps)} against ${n(x.raw.rps)} req/s; p50 ${n(x.app.p50ms, 1)} against ${n(x.raw.p50ms, 1)} ms)`
  /** What users feel first: the headline (npm run bench prints it with the copy's), from the executable. */
  const headline: [string, string, string, string][] = [
    [
      'First page, `?limit=50&offset=0`: executable (request log on) / raw',
      vs(f50),
      `>= ${TARGET.first50}`,
      mark(pass.first50),
    ],
    [
      'First page, `?limit=1&offset=0`: executable (request log on) / raw',
      vs(f1),
      `>= ${TARGET.first1}`,
      mark(pass.first1),
    ],
    [
      'One record, `/api/videoassets/{id}/`, random ids: executable (request log on) / raw',
      vs(rec),
      `>= ${TARGET.record}`,
      mark(pass.record),
    ],
    [
      `Key check: ${n(keyCheck.keyCounts[1]!)} keys / 1 key (paged load)`,
      n(keyRatio, 2),
      `>= ${TARGET.keyRatio}`,
      mark(keyRatio >= TARGET.keyRatio),
    ],
  ]
  /** The same from the source run (--quiet), in the same rounds: no target, for comparison. */
  const sourceRows: [string, string, string, string][] = [
    ['First page, `?limit=50&offset=0`: source run (--quiet) / raw', vs(source.f50), '', ''],
    ['First page, `?limit=1&offset=0`: source run (--quiet) / raw', vs(source.f1), '', ''],
    ['One record, random ids: source run (--quiet) / raw', vs(source.rec), '', ''],
  ]
  const rows: [string, string, string, string][] = [
    [
      'Paged list, offsets uniform over the table, raw Bun.serve + bun:sqlite (naive LIMIT/OFFSET)',
      `${n(p.raw.rps)} req/s (p50 ${n(p.raw.p50ms, 1)} ms, p99 ${n(p.raw.p99ms, 1)} ms)`,
      '',
      '',
    ],
    [
      'Paged list, offsets uniform over the table, Reelhouse, 1 key',
      `${n(p.app.rps)} req/s (p50 ${n(p.app.p50ms, 1)} ms, p99 ${n(p.app.p99ms, 1)} ms)`,
      '',
      '',
    ],
    [
      'Reelhouse / naive baseline (median of per-round ratios)',
      n(ratio, 2),
      `>= ${TARGET.uniform}`,
      mark(pass.uniform),
    ],
    [
      `Unpaged list of ${n(cfg.assets)}, peak RSS of the server`,
      `${n(afterFast.hwmMiB, 1)} MiB (client at full speed, ${n(fast.bytes / 2 ** 20, 1)} MiB in ${n(fast.seconds, 2)} s); ${n(afterSlow.hwmMiB, 1)} MiB (client at ${slowRate}B/s, ${n(slow.seconds, 1)} s)`,
      `< ${TARGET.rssMiB} MiB`,
      mark(pass.rss),
    ],
    ['Server RSS idle after start (included above)', `${n(idle.rssMiB, 1)} MiB`, '', ''],
    [
      `Paged list, Reelhouse, ${n(keyCheck.keyCounts[1]!)} keys`,
      `${n(p.appMany.rps)} req/s (p50 ${n(p.appMany.p50ms, 1)} ms, p99 ${n(p.appMany.p99ms, 1)} ms)`,
      '',
      '',
    ],
    [
      `Key check: throughput ${n(keyCheck.keyCounts[1]!)} keys / 1 key (median of per-round ratios)`,
      n(keyRatio, 2),
      `>= ${TARGET.keyRatio}`,
      mark(keyRatio >= TARGET.keyRatio),
    ],
    [
      'Key check in-process (users.authenticate)',
      `${n(keyCheck.us[0]!, 1)} µs with 1 key, ${n(keyCheck.us[1]!, 1)} µs with ${n(keyCheck.keyCounts[1]!)} (x${n(keyUsRatio, 2)})`,
      `<= x${n(1 / TARGET.keyRatio, 2)}`,
      mark(keyUsRatio <= 1 / TARGET.keyRatio),
    ],
  ]

  console.log('\nReelhouse benchmarks')
  console.log(
    `${host.date}; ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB; Linux ${host.kernel}; bun ${host.bun}; ${host.wrk}`,
  )
  const all = [...headline, ...sourceRows, ...rows]
  const w = [Math.max(...all.map((r) => r[0].length)), Math.max(...all.map((r) => r[1].length))]
  for (const r of all) console.log(`${r[0].padEnd(w[0]!)}  ${r[1].padEnd(w[1]!)}  ${r[2].padEnd(9)} ${r[3]}`)
  console.log(
    `rounds (req/s): uniform offsets: baseline ${p.raw.all.join(', ')}; Reelhouse ${p.app.all.join(', ')}; ${n(cfg.keys + 1)} keys ${p.appMany.all.join(', ')}`,
  )
  const perRound = (x: ReturnType<typeof felt>, s: ReturnType<typeof felt>) =>
    `baseline ${x.raw.all.join(', ')}; executable ${x.app.all.join(', ')}; source ${s.app.all.join(', ')}`
  console.log(`rounds (req/s): limit=50 first page: ${perRound(f50, source.f50)}`)
  console.log(`rounds (req/s): limit=1 first page: ${perRound(f1, source.f1)}`)
  console.log(`rounds (req/s): one record: ${perRound(rec, source.rec)}`)
  if (process.env.BENCH_RESULTS) writeFileSync(process.env.BENCH_RESULTS, JSON.stringify({ bench: 'lists', headline }))
  console.log(
    `peak RSS after the load runs: Reelhouse ${n(loadedPeak.app, 1)} MiB (source), ${n(loadedPeak.compiled, 1)} MiB (executable), baseline ${n(loadedPeak.raw, 1)} MiB`,
  )

  if (process.env.BENCH_NO_DOC !== '1') {
    const section = `## Lists and keys: first pages, one record, spread offsets against raw Bun.serve + bun:sqlite; unpaged list; key check

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load})
- Bun ${host.bun}; load tool ${host.wrk}
- Data: ${n(cfg.assets)} video assets in one production on one device; superuser key

What users feel first, from the executable with its request log on (the targets), and from the
source run with --quiet in the same rounds:

| Measure | Result | Target | |
|---|---|---|---|
${[...headline, ...sourceRows].map((r) => `| ${r.join(' | ')} |`).join('\n')}

Offsets spread over the table, the unpaged list, the key check:

| Measure | Result | Target | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

Per-round throughput (req/s; the tables show medians): first page limit=50: ${perRound(f50, source.f50)}.
limit=1: ${perRound(f1, source.f1)}. One record: ${perRound(rec, source.rec)}.
Spread offsets: baseline ${p.raw.all.join(', ')}; Reelhouse ${p.app.all.join(', ')}; Reelhouse with
${n(cfg.keys + 1)} keys ${p.appMany.all.join(', ')}.

What is measured:

- **First pages and one record**: \`GET ${LIST}?limit=50&offset=0\` and \`?limit=1&offset=0\` (the same
  request each time, bench/fixed.lua) and \`GET ${LIST}{id}/\` with ids uniform over 1..${n(cfg.assets)}
  (bench/record.lua), against bench/baseline.ts answering the same bytes from prepared statements
  (\`/?limit=&offset=\`; \`/record/{id}/\`: the row, its keywords, its projects, who changed it
  last). Reelhouse is measured twice in the same rounds, the servers' order rotated each
  round: the executable users get (dist/reelhouse, built by \`bun build.ts\` at the start of the
  run), started as a service is, without --quiet, its log (a line per request) written to a file;
  and \`bun src/main.ts serve --quiet\`. The executable's log is checked to hold a line for every request measured
  (${n(logged)} lines). Same wrk settings, rounds and ratios as below.
- **The baseline's page**: bench/baseline.ts reads its page as the lists do, \`LIMIT +? OFFSET ?\`
  (src/http/lists.ts \`PAGE\`): the unary plus keeps SQLite's planner from reading the bound LIMIT,
  which would make it compile the statement again on every request (18 µs of a 1-row page; runs
  before Nov 29 measured against a baseline written \`LIMIT ?\`, and set lower targets). What is
  left between the two is the service's own work per request (auth, validation, the count, the
  headers, the log).
- **Paged list, spread offsets**: \`GET ${LIST}?limit=50&offset=N\` with \`Authorization: Token <key>\` against the
  real server (\`bun src/main.ts serve\`, its own process), and the same request against
  bench/baseline.ts, raw \`Bun.serve\` with one prepared \`bun:sqlite\` statement
  (\`SELECT <the 10 list fields> FROM media_assets WHERE kind = 'video' ORDER BY id LIMIT +? OFFSET ?\`)
  that answers the same bytes (checked at 6 offsets before the load) and no authentication. N is
  uniform over 0..${n(cfg.assets - 50)}, from a fixed-seed generator (bench/paged.lua), so both
  servers see the same sequence. Command, per target and round, after a ${cfg.warmup} s warm-up:
  \`${wrkArgs(cfg.duration, '<url>', relative(ROOT, LUA)).join(' ')}\`; ${cfg.rounds} rounds, the order rotated each
  round. Ratios are the median of the per-round ratios (the two runs of a round are back to back).
  wrk and the server share the machine's ${host.cores} cores.
- **Unpaged list**: \`GET ${LIST}\` (no limit) on a freshly started server, read whole by a client
  at full speed (checked: ${n(cfg.assets)} items in id order, \`X-Total-Count\` ${n(cfg.assets)}), then by
  \`curl --limit-rate ${slowRate}\`; peak RSS is the server's \`VmHWM\` from /proc (it includes
  startup; reset with /proc/PID/clear_refs before the slow read).
- **Key check**: the paged load above against a second server whose catalogue holds
  ${n(cfg.keys)} more keys (random hashes) besides the admin's, and \`users.authenticate\`
  timed in-process on both catalogues. The key is found by its hash through a unique index:
  ${keyCheck.plan.map((d) => `\`${d}\``).join(', ')}.
`
    writeSection(join(ROOT, 'docs', 'benchmarks.md'), 'lists', section)
    console.error('wrote docs/benchmarks.md')
  }
  return Object.values(pass).every(Boolean)
}

// ------------------------------------------------------------------ on PostgreSQL

/**
 * BENCH_ENGINE=postgres: the catalogue seeded as above, copied into a private PostgreSQL
 * (bench/pg.ts), served by the executable with --database, against bench/baseline-pg.ts (raw
 * Bun.serve + Bun.SQL running the service's statements): the first pages, one record and the
 * spread offsets as above, and the unpaged list's peak RSS. No source run and no key check of
 * 100,000 keys: the executable is what is shipped, and a key is looked up by the same unique
 * index whatever the number of keys. Writes the section `lists-postgres` of docs/benchmarks.md.
 * The targets are the SQLite run's ratios; on PostgreSQL the baseline pays the database's round
 * trips too, so a ratio says what the service adds to them, and a miss is reported as a miss.
 */
async function mainPostgres() {
  if (!Bun.which('wrk')) throw new Error('wrk is not installed (Debian: apt-get install wrk)')
  const pg = await import('./pg.ts')
  const host = machine()
  console.error(
    `machine: ${host.cpu}, ${host.cores} cores, ${host.ramGiB.toFixed(1)} GiB, Linux ${host.kernel}, bun ${host.bun}; load ${host.load}`,
  )
  try {
    tmp = mkdtempSync(join(tmpdir(), 'reelhouse-bench-'))
    const sqliteDir = join(tmp, 'sqlite')
    const forExe = join(tmp, 'executable')
    let t0 = performance.now()
    const exe = buildExecutable(tmp)
    console.error(`built the executable in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    t0 = performance.now()
    const key = seedCatalogue(sqliteDir, cfg.assets)
    console.error(`seeded ${cfg.assets} video assets in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    const { url, seconds: copyS } = await pg.copyToPostgres(sqliteDir)
    const settings = await pg.clusterSettings(url)
    console.error(`copied to PostgreSQL in ${copyS.toFixed(1)} s; ${settings}`)
    mkdirSync(forExe)
    const database = ['--database', url]

    // The unpaged list on a freshly started executable: its peak RSS is startup and the list.
    const logFile = join(tmp, 'executable.log')
    const fresh = await startExecutable(exe, forExe, join(tmp, 'fresh.log'), database)
    await Bun.sleep(500)
    const idle = memory(fresh.proc.pid)
    const whole = await unpaged(fresh, key)
    const afterWhole = memory(fresh.proc.pid)
    await stop(fresh)
    console.error(
      `unpaged: ${(whole.bytes / 2 ** 20).toFixed(1)} MiB in ${whole.seconds.toFixed(2)} s; idle RSS ${idle.rssMiB.toFixed(0)} MiB, peak ${afterWhole.hwmMiB.toFixed(0)} MiB`,
    )

    const compiled = await startExecutable(exe, forExe, logFile, database)
    const raw = await start(
      'raw Bun.serve + Bun.SQL',
      [BUN, 'bench/baseline-pg.ts', url],
      (line) => /^listening (\d+)$/.exec(line.trim())?.[1],
    )
    await sameBodies(compiled, raw, key)
    const unauthorized = await get(`${compiled.base}${LIST}?limit=1`)
    if (unauthorized.status !== 401) throw new Error(`without a key the list answered ${unauthorized.status}`)
    console.error(
      'bodies of the executable and the baseline are byte-identical at 6 offsets and 4 records; no key: 401',
    )

    const pair = (rawPath: string, appPath: string, lua: string): Target[] => [
      { label: 'raw', url: raw.base, env: { BENCH_PATH: rawPath }, lua },
      { label: 'compiled', url: compiled.base, env: { BENCH_PATH: appPath, BENCH_KEY: key }, lua },
    ]
    console.error('first page, limit=50')
    const first50 = await compare(
      pair('/?limit=50&offset=0', `${LIST}?limit=50&offset=0`, FIXED),
      cfg.assets,
      cfg.rounds,
    )
    console.error('first page, limit=1')
    const first1 = await compare(pair('/?limit=1&offset=0', `${LIST}?limit=1&offset=0`, FIXED), cfg.assets, cfg.rounds)
    console.error('one record, random ids')
    const records = await compare(pair('/record/', LIST, RECORD), cfg.assets, cfg.rounds)
    console.error(`paged, offset uniform over 0..${cfg.assets - 50}`)
    const spread = await compare(pair('/', LIST, LUA), cfg.assets, cfg.rounds)
    const loadedPeak = { compiled: memory(compiled.proc.pid).hwmMiB, raw: memory(raw.proc.pid).hwmMiB }
    await stop(compiled)
    await stop(raw)
    const measured = [first50, first1, records, spread]
      .flatMap((m) => m.get('compiled')!)
      .reduce((a, l) => a + l.requests, 0)
    const logged = await lineCount(logFile)
    if (logged < measured)
      throw new Error(`the executable's log holds ${logged} lines for ${measured} requests measured`)
    const endLoad = machine().load

    // -------------------------------------------------------------- results
    const felt = (loads: Map<string, Load[]>) => ({
      raw: summarize(loads.get('raw')!),
      app: summarize(loads.get('compiled')!),
      ratio: pairedRatio(loads.get('compiled')!, loads.get('raw')!),
    })
    const f50 = felt(first50)
    const f1 = felt(first1)
    const rec = felt(records)
    const spr = felt(spread)
    const pass = {
      first50: f50.ratio >= TARGET.first50,
      first1: f1.ratio >= TARGET.first1,
      record: rec.ratio >= TARGET.record,
      rss: afterWhole.hwmMiB < TARGET.rssMiB,
    }
    const mark = (ok: boolean) => (ok ? 'pass' : 'FAIL')
    const vs = (x: ReturnType<typeof felt>) =>
      `${n(x.ratio, 2)} (${n(x.app.rps)} against ${n(x.raw.rps)} req/s; p50 ${n(x.app.p50ms, 1)} against ${n(x.raw.p50ms, 1)} ms)`
    const rows: [string, string, string, string][] = [
      [
        'First page, `?limit=50&offset=0`: executable (request log on) / raw Bun.SQL',
        vs(f50),
        `>= ${TARGET.first50}`,
        mark(pass.first50),
      ],
      [
        'First page, `?limit=1&offset=0`: executable (request log on) / raw Bun.SQL',
        vs(f1),
        `>= ${TARGET.first1}`,
        mark(pass.first1),
      ],
      [
        'One record, `/api/videoassets/{id}/`, random ids: executable (request log on) / raw Bun.SQL',
        vs(rec),
        `>= ${TARGET.record}`,
        mark(pass.record),
      ],
      ['Paged list, offsets uniform over the table: executable / raw Bun.SQL (both plain OFFSET)', vs(spr), '', ''],
      [
        `Unpaged list of ${n(cfg.assets)}, peak RSS of the executable (client at full speed)`,
        `${n(afterWhole.hwmMiB, 1)} MiB (${n(whole.bytes / 2 ** 20, 1)} MiB in ${n(whole.seconds, 2)} s; idle after start ${n(idle.rssMiB, 1)} MiB)`,
        `< ${TARGET.rssMiB} MiB`,
        mark(pass.rss),
      ],
    ]
    const perRound = (x: Map<string, Load[]>) =>
      `baseline ${summarize(x.get('raw')!).all.join(', ')}; executable ${summarize(x.get('compiled')!).all.join(', ')}`

    console.log('\nReelhouse list benchmark on PostgreSQL')
    console.log(`${host.date}; ${settings}`)
    const w = [Math.max(...rows.map((r) => r[0].length)), Math.max(...rows.map((r) => r[1].length))]
    for (const r of rows) console.log(`${r[0].padEnd(w[0]!)}  ${r[1].padEnd(w[1]!)}  ${r[2].padEnd(9)} ${r[3]}`)
    console.log(`rounds (req/s): limit=50: ${perRound(first50)}; limit=1: ${perRound(first1)}`)
    console.log(`rounds (req/s): one record: ${perRound(records)}; spread offsets: ${perRound(spread)}`)
    console.log(
      `peak RSS after the load runs: executable ${n(loadedPeak.compiled, 1)} MiB, baseline ${n(loadedPeak.raw, 1)} MiB; load average at the end ${endLoad}`,
    )
    if (process.env.BENCH_RESULTS)
      writeFileSync(process.env.BENCH_RESULTS, JSON.stringify({ bench: 'lists-postgres', headline: rows.slice(0, 3) }))

    if (process.env.BENCH_NO_DOC !== '1') {
      const section = `### Lists on PostgreSQL: first pages, one record, spread offsets against raw Bun.serve + Bun.SQL; unpaged list

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load}; at the end: ${endLoad})
- Bun ${host.bun}; load tool ${host.wrk}
- Database: ${settings}
- A private cluster (test/helpers/pg.ts) reached through a Unix socket, on the same machine: the server, the database, the baseline and wrk share its ${host.cores} cores.
  fsync is off (the helper starts its clusters so): a facility's server keeps it on, which
  changes nothing a read costs here (every statement of these routes reads).
- Data: ${n(cfg.assets)} video assets in one production on one device (bench/seed.ts, the SQLite run's
  catalogue), copied by \`reelhouse migrate-to-postgres\` in ${n(copyS, 1)} s, then \`VACUUM (ANALYZE)\`
  as autovacuum would do; superuser key
- Settings: BENCH_ENGINE=postgres BENCH_ASSETS=${cfg.assets} BENCH_DURATION=${cfg.duration} BENCH_ROUNDS=${cfg.rounds}
  BENCH_WARMUP=${cfg.warmup}, ${cfg.connections} connections

| Measure | Result | Target (the SQLite run's) | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

${pg.sharedMachine(host.load, endLoad, host.cores)}

Per-round throughput (req/s; the table shows medians): first page limit=50: ${perRound(first50)}.
limit=1: ${perRound(first1)}. One record: ${perRound(records)}. Spread offsets: ${perRound(spread)}.

What the ratios are against: bench/baseline-pg.ts, raw \`Bun.serve\` and \`Bun.SQL\` (a pool of
20 sessions, the service's) answering the same bytes (checked at 7 pages and 4 records before the
load), with the statements the service runs on PostgreSQL, in drizzle's text: a page is the page
(\`... where "media_assets"."kind" = 'video' order by "id" limit $1 [offset $2]\`) and its count
(\`select count(*) ...\`), sent at once on two sessions; a record is the service's one statement
for the row with its keywords, projects and last editor. No auth. What is left between the two
is the service's own work per request, which on PostgreSQL includes round trips the baseline
does not make: the key check (a statement on every request), and for a record the production's
proxy folder and the devices (two statements, src/modules/mediaassets/service.ts proxyRootOf).
The targets are the SQLite run's, set against raw bun:sqlite, where a statement is a function
call; against a baseline that waits for the database's round trips too, a ratio means something
else, and a miss is shown as one. The executable's log (a line per request) was checked to hold
a line for every request measured (${n(logged)} lines). Same wrk scripts as above; ${cfg.rounds} rounds of
${cfg.duration} s after a ${cfg.warmup} s warm-up, the order rotated each round, ratios the median of the
per-round ratios. The spread offsets use a plain OFFSET on both sides (the service's deep pages
on PostgreSQL are its plain OFFSET). Peak RSS after the load runs: executable ${n(loadedPeak.compiled, 1)} MiB,
baseline ${n(loadedPeak.raw, 1)} MiB. The unpaged list on PostgreSQL is read in one statement and held
while it is sent (src/http/lists.ts postgresLists says why), so its peak grows with the list.
`
      writeSection(join(ROOT, 'docs', 'benchmarks.md'), 'lists-postgres', section)
      console.error('wrote docs/benchmarks.md')
    }
    return Object.values(pass).every(Boolean)
  } finally {
    await stopAll()
    pg.stopCluster()
  }
}

await runBench(process.env.BENCH_ENGINE === 'postgres' ? mainPostgres : main, stopAll)
