// The import benchmark (part of npm run bench): POST /api/asset/import/ of files that already
// exist, without ffmpeg, against bench/import-baseline.ts (raw Bun.serve + prepared bun:sqlite
// statements writing the same rows and running the same follow-up task), both loaded by wrk
// with bench/import.lua in the same run. Each round starts each server on a fresh catalogue
// (the order of the two rotated each round), measures one import at a time (1 connection: the
// latency a user feels), then BENCH_IMPORTS imports over 16 connections, timed until the last
// import task is done; the server's peak RSS over the imports is its VmHWM, reset once the setup
// is done (Reelhouse scans the new devices first). Verdict: the median of
// Reelhouse's rates (tasks finished) >= 2,000 imports/s, the median of the per-round ratios
// Reelhouse / baseline (tasks finished) >= 0.8, the median of the per-round ratios of server CPU
// per import <= 1.5, one import at a time no more than 0.5 ms slower at the median (p50), and
// peak RSS < 200 MiB in every round; and the first rows the two wrote are the same (checked
// after every round).
// Environment (all optional): BENCH_IMPORTS (100000), BENCH_IMPORT_ROUNDS (5),
// BENCH_IMPORT_CONNECTIONS (16), BENCH_IMPORT_LOW (2000 imports at 1 connection, after
// BENCH_IMPORT_LOW_WARMUP, 500), BENCH_IMPORT_CPU_PROF=DIR (run Reelhouse with --cpu-prof into
// DIR), BENCH_NO_DOC=1 (do not write docs/benchmarks.md), BENCH_ENGINE=postgres (the executable
// on a private PostgreSQL against bench/import-baseline-pg.ts instead: mainPostgres).
// Exit status: 0 all targets met, 1 a target missed or a check failed.
import { Database } from 'bun:sqlite'
import { type Subprocess, spawnSync } from 'bun'
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { dbFile } from '../src/config.ts'
import { openDb } from '../src/db/client.ts'
import { migrate } from '../src/db/migrate.ts'
import { createFfmpeg } from '../src/media/ffmpeg.ts'
import { isoTimestamp } from '../src/util/time.ts'
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
  stopChildren,
} from './procs.ts'

const BUN = process.execPath
const LUA = join(import.meta.dir, 'import.lua')
const num = envNumber
const cfg = {
  imports: num('BENCH_IMPORTS', 100_000),
  rounds: num('BENCH_IMPORT_ROUNDS', 5),
  connections: num('BENCH_IMPORT_CONNECTIONS', 16),
  low: num('BENCH_IMPORT_LOW', 2000),
  lowWarmup: num('BENCH_IMPORT_LOW_WARMUP', 500),
  cpuProf: process.env.BENCH_IMPORT_CPU_PROF,
}
/**
 * What the profile showed and what was done about it, written into docs/benchmarks.md with each
 * run (the percentages are of the profiled server's time, its start and setup included).
 */
const WHERE_THE_CPU_WENT = `**Where the CPU went.** Profiled (\`BENCH_IMPORT_CPU_PROF\`, 6,000 imports) on 2026-11-29
before the changes below, when a run of the same day measured 2,577 µs of CPU per import to the
baseline's 734 (0.54 of its rate with tasks done, the tasks 9 s behind the answers); shares of
the profiled server's time, its start and setup included:
- *registering* 36 %: its transaction 28 % (its statements 17 %, the COMMIT 10 %); the
  own-output check 2.2 % (a realpath of every production's proxy_root and of the data folder on
  every request); forgetting a dismissed file 2.1 % (a DELETE built by drizzle per request,
  although the table was empty);
- *the task runner* 32 %: each task claimed in a transaction and ended in another (the ends'
  transactions 18 %: the last write 6 %, half of it drizzle savepoints and two whole-row reads
  for one status; the claim 6 %; the COMMITs 5 %), its "task done" line written with a write(2)
  of its own (3.6 %), and two slots taking one task at a time, so the tasks fell behind;
- the request around it (Elysia, the request log, the key check) most of the rest.

What changed: imports are *grouped* tasks: a free slot claims up to 32 queued imports in one
transaction, runs them side by side (a move, ffprobe and ffmpeg take turns in the group), and
the ends of those that finish together are committed together, each in a savepoint of its own
(a failing task fails alone); the runner reads the queue with one prepared statement, and its
"task done" lines for imports go out a turn at a time. Registering runs in one transaction begun
by prepared statements, answers the task's state without reading it back, keeps the real paths
of the service's own folders until the list changes (or a second has passed), and looks at
dismissed_files only when it has rows; the media service's own writes (the import's status, its
fingerprint) join the transaction they are made in instead of opening savepoints, and read eight
columns, not the whole row, for their history. An import now takes one commit of its own (its
request's) and a share of its group's claim and end.

Profiled again after those changes, with the fingerprint's and the realpath's below (6,000 imports,
1,991 µs of CPU per import under the profiler to the baseline's 923): the asset's INSERT 10.7 % of
the server's time (6.6 % in the run without the search index), the request's COMMIT 11.5 %, the
ImportLog's INSERT 5 %, the request log 12 %, the key check 4.5 %, the runner's ends and claims 17
%. The import writes an asset's search document once, with its INSERT: the task's two later writes
(its status, its fingerprint) set no column the index reads and fire no trigger, so the index costs
an import what it costs the baseline's. Then: a wake-up of the runner with every slot taken begins
no transaction; the fingerprint of a file of at most 64 KiB is read synchronously (an open, a stat,
a read and a close, where each was a round trip through the thread pool); fileOnDevice takes one
realpath where the folder's real path is its own (two before); the own-proxy check is one indexed
lookup, and the task's log line reads path_file alone. What remains above the baseline: the request
path outside the import (Elysia, the request log and the key check: about 18 % of the server's
time), and what the baseline does not do: a history row per write, the events' bookkeeping, the
checks of territory and of the service's own output. Claiming queued imports in the next turn of
the event loop (setImmediate) rather than in a microtask, so that the 201 is written first, was
tried and left out: at one connection the 1,000 imports' p50 moved by less than the run-to-run
spread (1.38 ms above the baseline's with it, 1.52 without, in two runs of the same minute), and
imports sent in one turn then share one slot where each took its own.`

const TARGET = { rate: 2000, ratio: 0.8, cpu: 1.5, lowP50Ms: 0.5, index: 0.85, rssMiB: 200 }
const IMPORT = '/api/asset/import/'
const PRODUCTION = 'Bench'
/** Files per folder, as import.lua names them. */
const PER_DIR = 1000
/** Room for wrk's extra requests: those in flight when it stops, and the one it makes to check the script. */
const SLACK = 1000
const LOW_FIRST = cfg.imports + SLACK
const FILES = LOW_FIRST + cfg.lowWarmup + SLACK + cfg.low + SLACK

// ------------------------------------------------------------------ processes and cleanup

let tmp: string | undefined

async function stopAll() {
  await stopChildren(5000)
  if (tmp) rmSync(tmp, { recursive: true, force: true })
  tmp = undefined
}
onInterrupt(stopAll, () => tmp ?? 'nothing')

type Server = {
  label: 'app' | 'bare' | 'raw'
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  base: string
  db: string
  key?: string
  tail: string[]
}

/**
 * Spawns a server and waits for the line that names its port. `tail` keeps its last lines (shown
 * when a run fails) without the two lines Reelhouse logs per task.
 */
async function start(
  label: Server['label'],
  cmd: string[],
  db: string,
  portOf: (line: string) => string | undefined,
  env: Record<string, string> = {},
): Promise<Server> {
  const { proc, port, lines } = await spawnListening(label, cmd, {
    portOf,
    env,
    keep: 40,
    drop: / info task (started|done) |^\s*$/,
  })
  return { label, proc, base: `http://127.0.0.1:${port}`, db, tail: lines }
}

async function stop(server: Server) {
  server.proc.kill('SIGTERM')
  const exited = await Promise.race([server.proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)])
  if (!exited) server.proc.kill('SIGKILL')
  await server.proc.exited
  children.delete(server.proc)
}

/**
 * The search index's triggers dropped from a running server's catalogue (migrations 0016, 0021
 * and 0024 made them: the word index's and the trigram index's): its writes then cost what they
 * cost before the index. SQLite prepares the server's
 * statements again once it sees the schema changed.
 */
function dropSearchIndex(file: string) {
  const db = new Database(file)
  try {
    db.run('PRAGMA busy_timeout = 5000')
    const triggers = db
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_search_%'")
      .all()
    if (!triggers.length) throw new Error('the catalogue has no search index triggers to drop')
    for (const { name } of triggers) db.run(`DROP TRIGGER "${name}"`)
  } finally {
    db.close()
  }
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ')
  // utime and stime are fields 14 and 15 of stat (11 and 12 after the state), in clock ticks.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}
const CLOCK_TICKS = Number(spawnSync(['getconf', 'CLK_TCK']).stdout.toString().trim()) || 100

// ------------------------------------------------------------------ the two servers

/**
 * The devices and the production both servers import into: the files on `online`, and the
 * production's upload device (a watch folder: Reelhouse's watcher imports new files there by
 * itself) an empty second device, so that only the benchmark's requests import the files.
 */
const place = (dev: string, uploads: string) => ({
  devices: [
    { name: 'online', path: dev },
    { name: 'uploads', path: uploads },
  ],
  production: { name: PRODUCTION, storage_root: `${dev}show/`, upload_device: 2 },
})

/**
 * Reelhouse on a fresh catalogue in `dataDir`, its devices and production made through the API;
 * with `pg`, on the PostgreSQL catalogue at `pg.url`, run from the executable `pg.exe`.
 */
async function startReelhouse(
  dataDir: string,
  dev: string,
  uploads: string,
  ffmpegDir: string,
  pg?: { exe: string; url: string },
): Promise<Server> {
  const prof = cfg.cpuProf ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${resolve(cfg.cpuProf)}`] : []
  // Profiled, it is the source run, on either engine: the profile then names the source's files.
  const cli = pg && !cfg.cpuProf ? [pg.exe] : [BUN, ...prof, 'src/main.ts']
  const server = await start(
    'app',
    [
      ...cli,
      'serve',
      '--data',
      dataDir,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--ffmpeg',
      ffmpegDir,
      '--quiet',
      ...(pg ? ['--database', pg.url] : []),
    ],
    pg ? pg.url : dbFile(dataDir),
    (line) => / serving .*api=http:\/\/127\.0\.0\.1:(\d+)\//.exec(line)?.[1],
  )
  server.key = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim()
  const { devices, production } = place(dev, uploads)
  for (const [path, body] of [
    ...devices.map((d) => ['/api/devices/', d] as const),
    ['/api/productions/', production] as const,
  ]) {
    const r = await fetch(server.base + path, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { authorization: `Token ${server.key}`, 'content-type': 'application/json', accept: 'application/json' },
    })
    if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`)
  }
  return server
}

/** A catalogue made by the real migrations, with the rows the two POSTs above make, then the baseline over it. */
async function startBaseline(
  dataDir: string,
  dev: string,
  uploads: string,
  warnings: { probe: string; proxy: string },
): Promise<Server> {
  const db = openDb(dbFile(dataDir))
  try {
    migrate(db)
    const { devices, production } = place(dev, uploads)
    const now = isoTimestamp()
    const client = db.$client
    const ids = devices.map(
      (d) =>
        client
          .query<{ id: number }, [string, string, string, string]>(
            'INSERT INTO devices (name, display_name, path, date_add) VALUES (?, ?, ?, ?) RETURNING id',
          )
          .get(d.name, d.name, d.path, now)!.id,
    )
    const id = ids[0]!
    client
      .query(`INSERT INTO productions (name, codename, storage_root, proxy_root, upload_device, audioasset_device, imageasset_device,
        videoasset_device, date_add) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(
        production.name,
        production.name.toLowerCase(),
        production.storage_root,
        `${production.storage_root}proxies/`,
        production.upload_device,
        id,
        id,
        id,
        now,
      )
  } finally {
    db.$client.close()
  }
  return start(
    'raw',
    [BUN, 'bench/import-baseline.ts', dbFile(dataDir)],
    dbFile(dataDir),
    (line) => /^listening (\d+)$/.exec(line.trim())?.[1],
    {
      BENCH_WARNING_PROBE: warnings.probe,
      BENCH_WARNING_PROXY: warnings.proxy,
    },
  )
}

// ------------------------------------------------------------------ load

type WrkResult = {
  requests: number
  duration_us: number
  errors: Record<'connect' | 'read' | 'write' | 'status' | 'timeout', number>
  latency_us: { mean: number; p50: number; p90: number; p99: number; max: number }
}

type Run = {
  /** Imports registered (ImportLogs written) in the run. */
  imports: number
  /** Imports registered per second, from the start of wrk to the last ImportLog. */
  requestRate: number
  /** Import tasks finished per second, from the start of wrk to the last task done. */
  taskRate: number
  p50ms: number
  p99ms: number
  /** Seconds from the last ImportLog to the last task done. */
  taskTailS: number
  /** Milliseconds from each task's date_add to its date_end, median and p99. */
  lagP50ms: number
  lagP99ms: number
  /** CPU time of the server per import (user + system), microseconds. */
  cpuUs: number
}

const wrkArgs = (connections: number, url: string) => [
  'wrk',
  '-t1',
  `-c${connections}`,
  '-d600s',
  '--timeout',
  '10s',
  '-s',
  LUA,
  url,
]

/**
 * `count` imports of the files numbered from `first` over `connections` connections. The
 * catalogue is polled (a read-only connection, every 5 ms) for the ImportLogs written and the
 * import tasks not yet done: wrk is stopped (SIGINT) once `count` ImportLogs exist, and the run
 * ends once no task is queued or running.
 */
async function load(server: Server, root: string, first: number, count: number, connections: number): Promise<Run> {
  const db = new Database(server.db, { readonly: true })
  const lastLog = db.query<{ n: number | null }, []>('SELECT max(id) AS n FROM import_logs')
  const pending = db.query<{ n: number }, []>("SELECT count(*) AS n FROM tasks WHERE state IN ('queued', 'running')")
  const failed = db.query<{ n: number }, [number]>(
    "SELECT count(*) AS n FROM tasks WHERE id > ? AND kind = 'import' AND state = 'failed'",
  )
  const importTasks = db.query<{ n: number }, [number]>(
    "SELECT count(*) AS n FROM tasks WHERE id > ? AND kind = 'import'",
  )
  const lastTask = db.query<{ n: number | null }, []>('SELECT max(id) AS n FROM tasks')
  try {
    const logsBefore = lastLog.get()!.n ?? 0
    const tasksBefore = lastTask.get()!.n ?? 0
    const env = {
      ...process.env,
      BENCH_ROOT: root,
      BENCH_PRODUCTION: PRODUCTION,
      BENCH_PATH: IMPORT,
      BENCH_KEY: server.key ?? '',
      BENCH_FIRST: String(first),
      BENCH_COUNT: String(count),
      BENCH_THREADS: '1',
    }
    const cpu0 = cpuSeconds(server.proc.pid)
    const t0 = performance.now()
    const proc = Bun.spawn(wrkArgs(connections, server.base), { stdout: 'pipe', stderr: 'pipe', env })
    children.add(proc)
    const output = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    let tRequests = 0
    let registered = 0
    for (;;) {
      const now = performance.now()
      registered = (lastLog.get()!.n ?? 0) - logsBefore
      if (!tRequests && registered >= count) {
        tRequests = now
        proc.kill('SIGINT')
      }
      if (tRequests && pending.get()!.n === 0) break
      if (proc.exitCode !== null && !tRequests) {
        const [out, err] = await output
        throw new Error(`wrk ended after ${registered} of ${count} imports:\n${out}\n${err}`)
      }
      if (now - t0 > 900_000) throw new Error(`${server.label}: ${registered} of ${count} imports after 900 s`)
      await Bun.sleep(5)
    }
    const tTasks = performance.now()
    const cpu = cpuSeconds(server.proc.pid) - cpu0
    const [out, err, code] = await output
    children.delete(proc)
    const line = out.split('\n').find((l) => l.startsWith('{'))
    if (!line) throw new Error(`wrk failed (${code}):\n${out}\n${err}`)
    const r = JSON.parse(line) as WrkResult
    const bad = Object.entries(r.errors).filter(([, n]) => n > 0)
    if (bad.length)
      throw new Error(
        `wrk against ${server.label} saw errors ${JSON.stringify(r.errors)}; every import must answer 201. The server's last lines:\n${server.tail.join('\n')}`,
      )
    // One snapshot: a request wrk left in flight may still commit (its ImportLog and task together) between two reads.
    const [imports, tasks, failures] = db.transaction((): [number, number, number] => [
      (lastLog.get()!.n ?? 0) - logsBefore,
      importTasks.get(tasksBefore)!.n,
      failed.get(tasksBefore)!.n,
    ])()
    if (tasks !== imports || failures)
      throw new Error(`${server.label}: ${imports} imports, ${tasks} tasks, ${failures} failed`)
    const lags = db
      .query<{ ms: number }, [number]>(
        "SELECT (julianday(date_end) - julianday(date_add)) * 86400000 AS ms FROM tasks WHERE id > ? AND kind = 'import' AND state = 'done' ORDER BY ms",
      )
      .all(tasksBefore)
      .map((x) => x.ms)
    const pct = (p: number) => lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))]!
    return {
      imports,
      requestRate: registered / ((tRequests - t0) / 1000),
      taskRate: imports / ((tTasks - t0) / 1000),
      p50ms: r.latency_us.p50 / 1000,
      p99ms: r.latency_us.p99 / 1000,
      taskTailS: (tTasks - tRequests) / 1000,
      lagP50ms: pct(50),
      lagP99ms: pct(99),
      cpuUs: (cpu / imports) * 1e6,
    }
  } finally {
    db.close()
  }
}

/** Waits until no task of any kind is queued or running (Reelhouse scans each new device); returns the seconds waited. */
async function settle(server: Server): Promise<number> {
  const db = new Database(server.db, { readonly: true })
  const pending = db.query<{ n: number }, []>("SELECT count(*) AS n FROM tasks WHERE state IN ('queued', 'running')")
  const t0 = performance.now()
  // Reelhouse queues a device's start scan once its watcher has walked the device (GET /api/health).
  const watching = async () => {
    if (server.label !== 'app') return true
    const health = (await (await fetch(`${server.base}/api/health`)).json()) as { watch?: { ready: boolean }[] }
    return (health.watch ?? []).every((w) => w.ready)
  }
  try {
    // Twice in a row, 100 ms apart: every watcher ready and no task queued or running.
    for (let quiet = 0; quiet < 2; await Bun.sleep(100)) {
      quiet = pending.get()!.n === 0 && (await watching()) ? quiet + 1 : 0
      if (performance.now() - t0 > 600_000) throw new Error(`${server.label}: tasks still pending after 600 s`)
    }
    // Then the memory the setup freed goes back (the scan's garbage is collected as it ends; the
    // allocator returns the pages within a second): until the RSS has not fallen for 500 ms, 3 s at most.
    for (
      let low = Infinity, flat = 0, t = performance.now();
      flat < 5 && performance.now() - t < 3000;
      await Bun.sleep(100)
    ) {
      const now = memory(server.proc.pid).rssMiB
      flat = now < low - 1 ? 0 : flat + 1
      low = Math.min(low, now)
    }
    return (performance.now() - t0) / 1000
  } finally {
    db.close()
  }
}

// ------------------------------------------------------------------ checks

/** The rows of the first imports in both catalogues (timestamps left out); the tables whose rows differ. */
function sameRows(appDb: string, rawDb: string, n = 5) {
  const read = (file: string) => {
    const db = new Database(file, { readonly: true })
    try {
      const rows = (sql: string) => JSON.stringify(db.query(sql).all())
      return {
        media_assets:
          rows(`SELECT id, kind, name, description, production, device, status_asset, status_asset_description, path_file, path_proxy,
          is_archive, is_production, approval, meta_field_store, technical, archive_details, date_crt, date_del, file_dev, file_ino, file_stamp
          FROM media_assets ORDER BY id LIMIT ${n}`),
        import_logs:
          rows(`SELECT id, asset_type, asset_path, status, error, warning, payload, asset_config, asset_import_id, production
          FROM import_logs ORDER BY id LIMIT ${n}`),
        // Import tasks only, without their ids: Reelhouse's scans of the new devices come first.
        tasks:
          rows(`SELECT kind, state, target, production, params, bytes_done, bytes_total, files_done, files_total, error, attempts, key
          FROM tasks WHERE kind = 'import' ORDER BY id LIMIT ${n}`),
      }
    } finally {
      db.close()
    }
  }
  const a = read(appDb)
  const b = read(rawDb)
  const differ = (Object.keys(a) as (keyof typeof a)[]).filter((table) => a[table] !== b[table])
  for (const table of differ)
    console.error(`${table} rows differ between Reelhouse and the baseline:\n${a[table]}\n${b[table]}`)
  return differ
}

// ------------------------------------------------------------------ main

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

type Round = {
  low: Run
  loaded: Run
  /** RSS once started and set up (devices, production; Reelhouse's scans of the devices done). */
  idleMiB: number
  /** Peak RSS from the start to then. */
  setupPeakMiB: number
  /** Peak RSS from then to the end of the imports (VmHWM reset after the setup). */
  peakMiB: number
}

async function main() {
  if (!Bun.which('wrk')) throw new Error('wrk is not installed (Debian: apt-get install wrk)')
  const host = machine()
  console.error(
    `machine: ${host.cpu}, ${host.cores} cores, ${host.ramGiB.toFixed(1)} GiB, Linux ${host.kernel}, bun ${host.bun}; load ${host.load}`,
  )

  tmp = mkdtempSync(join(tmpdir(), 'reelhouse-bench-import-'))
  const dev = join(tmp, 'dev') + '/'
  const uploads = join(tmp, 'uploads') + '/'
  mkdirSync(uploads)
  const root = join(dev, 'show', 'footage')
  const noFfmpeg = join(tmp, 'no-ffmpeg')
  mkdirSync(noFfmpeg)
  let t0 = performance.now()
  for (let i = 0; i < FILES; i++) {
    const dir = join(root, `d${String(Math.floor(i / PER_DIR)).padStart(3, '0')}`)
    if (i % PER_DIR === 0) mkdirSync(dir, { recursive: true })
    closeSync(openSync(join(dir, `clip_${String(i).padStart(6, '0')}.mov`), 'w'))
  }
  console.error(
    `made ${FILES} empty files in ${Math.ceil(FILES / PER_DIR)} folders in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )
  // The warnings Reelhouse's import task writes without ffmpeg, for the baseline to write the same.
  const ff = await createFfmpeg({ dir: noFfmpeg })
  const warnings = { probe: ff.missing('ffprobe'), proxy: ff.missing('ffmpeg') }
  if (!warnings.probe || !warnings.proxy) throw new Error(`${noFfmpeg} is empty, yet ffmpeg was found`)

  const results: Record<Server['label'], Round[]> = { app: [], bare: [], raw: [] }
  const rowsDiffer = new Set<string>()
  const settled: number[] = []
  for (let round = 0; round < cfg.rounds; round++) {
    // Three servers, their order rotated each round: Reelhouse, Reelhouse without the search index
    // (its triggers dropped once it has migrated its catalogue: what the index costs an import),
    // and the baseline.
    const labels: Server['label'][] = ['app', 'bare', 'raw']
    const order = labels.map((_, i) => labels[(i + round) % labels.length]!)
    const dbs: Partial<Record<Server['label'], string>> = {}
    for (const label of order) {
      const dataDir = join(tmp, `round${round + 1}-${label}`)
      const server =
        label === 'raw'
          ? await startBaseline(dataDir, dev, uploads, warnings as { probe: string; proxy: string })
          : await startReelhouse(dataDir, dev, uploads, noFfmpeg)
      if (label === 'bare') dropSearchIndex(server.db)
      dbs[label] = server.db
      const waited = await settle(server)
      if (label !== 'raw') settled.push(waited)
      const idle = memory(server.proc.pid)
      resetPeak(server.proc.pid)
      await load(server, root, LOW_FIRST, cfg.lowWarmup, 1)
      const low = await load(server, root, LOW_FIRST + cfg.lowWarmup + SLACK, cfg.low, 1)
      const loaded = await load(server, root, 0, cfg.imports, cfg.connections)
      const peak = memory(server.proc.pid)
      await stop(server)
      results[label].push({ low, loaded, idleMiB: idle.rssMiB, setupPeakMiB: idle.hwmMiB, peakMiB: peak.hwmMiB })
      console.error(
        `  round ${round + 1} ${label === 'app' ? 'Reelhouse' : label === 'bare' ? 'no index ' : 'baseline '}  ${loaded.imports} imports: ${loaded.requestRate.toFixed(0).padStart(6)}/s answered, ` +
          `${loaded.taskRate.toFixed(0).padStart(6)}/s tasks done (tail ${loaded.taskTailS.toFixed(2)} s); c${cfg.connections} p50 ${loaded.p50ms.toFixed(1)} ms p99 ${loaded.p99ms.toFixed(1)} ms; ` +
          `c1 p50 ${low.p50ms.toFixed(2)} ms p99 ${low.p99ms.toFixed(2)} ms; ${loaded.cpuUs.toFixed(0)} µs CPU/import; RSS ${idle.rssMiB.toFixed(0)} MiB at the start (setup peak ${idle.hwmMiB.toFixed(0)}), peak ${peak.hwmMiB.toFixed(0)} MiB`,
      )
    }
    for (const table of sameRows(dbs.app!, dbs.raw!)) rowsDiffer.add(table)
    for (const label of order) rmSync(join(tmp, `round${round + 1}-${label}`), { recursive: true, force: true })
  }

  // ---------------------------------------------------------------- results
  const { app, bare, raw } = results
  const ratio = median(app.map((r, i) => r.loaded.taskRate / raw[i]!.loaded.taskRate))
  const indexRatio = median(app.map((r, i) => r.loaded.taskRate / bare[i]!.loaded.taskRate))
  const requestRatio = median(app.map((r, i) => r.loaded.requestRate / raw[i]!.loaded.requestRate))
  const cpuRatio = median(app.map((r, i) => r.loaded.cpuUs / raw[i]!.loaded.cpuUs))
  const lowGapMs = median(app.map((r) => r.low.p50ms)) - median(raw.map((r) => r.low.p50ms))
  const m = (rounds: Round[], f: (r: Round) => number) => median(rounds.map(f))
  const rate = m(app, (r) => r.loaded.taskRate)
  const peak = Math.max(...app.map((r) => r.peakMiB))
  const pass = {
    rate: rate >= TARGET.rate,
    ratio: ratio >= TARGET.ratio,
    cpu: cpuRatio <= TARGET.cpu,
    low: lowGapMs <= TARGET.lowP50Ms,
    index: indexRatio >= TARGET.index,
    rss: peak < TARGET.rssMiB,
    rows: rowsDiffer.size === 0,
  }
  const mark = (ok: boolean) => (ok ? 'pass' : 'FAIL')
  const n = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })
  const N = n(cfg.imports)
  const C = cfg.connections

  const rows: [string, string, string, string][] = [
    [
      `${N} imports at ${C} connections, baseline (raw Bun.serve + bun:sqlite)`,
      `${n(m(raw, (r) => r.loaded.taskRate))} imports/s with tasks done (${n(m(raw, (r) => r.loaded.requestRate))}/s answered)`,
      '',
      '',
    ],
    [
      `${N} imports at ${C} connections, Reelhouse`,
      `${n(rate)} imports/s with tasks done (${n(m(app, (r) => r.loaded.requestRate))}/s answered)`,
      `>= ${n(TARGET.rate)}/s`,
      mark(pass.rate),
    ],
    [
      'Reelhouse / baseline, tasks done (median of per-round ratios)',
      n(ratio, 2),
      `>= ${TARGET.ratio}`,
      mark(pass.ratio),
    ],
    ['Reelhouse / baseline, answered (median of per-round ratios)', n(requestRatio, 2), '', ''],
    [
      `${N} imports at ${C} connections, Reelhouse without the search index`,
      `${n(m(bare, (r) => r.loaded.taskRate))} imports/s with tasks done`,
      '',
      '',
    ],
    [
      'Search index cost: Reelhouse / Reelhouse without the index, tasks done (median of per-round ratios)',
      n(indexRatio, 2),
      `>= ${TARGET.index}`,
      mark(pass.index),
    ],
    [
      `One import at a time (1 connection, ${n(cfg.low)} imports), Reelhouse`,
      `p50 ${n(
        m(app, (r) => r.low.p50ms),
        2,
      )} ms, p99 ${n(
        m(app, (r) => r.low.p99ms),
        2,
      )} ms; task done ${n(
        m(app, (r) => r.low.lagP50ms),
        1,
      )} ms after it was queued (p99 ${n(
        m(app, (r) => r.low.lagP99ms),
        1,
      )} ms)`,
      '',
      '',
    ],
    [
      `One import at a time (1 connection, ${n(cfg.low)} imports), baseline`,
      `p50 ${n(
        m(raw, (r) => r.low.p50ms),
        2,
      )} ms, p99 ${n(
        m(raw, (r) => r.low.p99ms),
        2,
      )} ms; task done ${n(
        m(raw, (r) => r.low.lagP50ms),
        1,
      )} ms after it was queued (p99 ${n(
        m(raw, (r) => r.low.lagP99ms),
        1,
      )} ms)`,
      '',
      '',
    ],
    [
      `Latency at ${C} connections, Reelhouse / baseline`,
      `p50 ${n(
        m(app, (r) => r.loaded.p50ms),
        1,
      )} / ${n(
        m(raw, (r) => r.loaded.p50ms),
        1,
      )} ms, p99 ${n(
        m(app, (r) => r.loaded.p99ms),
        1,
      )} / ${n(
        m(raw, (r) => r.loaded.p99ms),
        1,
      )} ms`,
      '',
      '',
    ],
    [
      `Server CPU time per import at ${C} connections (user + system), Reelhouse / baseline`,
      `${n(m(app, (r) => r.loaded.cpuUs))} / ${n(m(raw, (r) => r.loaded.cpuUs))} µs`,
      '',
      '',
    ],
    [
      'Server CPU per import, Reelhouse / baseline (median of per-round ratios)',
      n(cpuRatio, 2),
      `<= ${TARGET.cpu}`,
      mark(pass.cpu),
    ],
    [
      'One import at a time, p50: Reelhouse - baseline',
      `${n(lowGapMs, 2)} ms`,
      `<= ${TARGET.lowP50Ms} ms`,
      mark(pass.low),
    ],
    [
      `Peak RSS of the Reelhouse server during ${n(cfg.lowWarmup + cfg.low + cfg.imports)} imports (highest of the rounds)`,
      `${n(peak, 1)} MiB`,
      `< ${TARGET.rssMiB} MiB`,
      mark(pass.rss),
    ],
    [
      'RSS of the Reelhouse server when the imports start (median); its peak before (highest)',
      `${n(
        m(app, (r) => r.idleMiB),
        1,
      )} MiB; ${n(Math.max(...app.map((r) => r.setupPeakMiB)), 1)} MiB`,
      '',
      '',
    ],
    [
      'Baseline: peak RSS during the imports; RSS when they start',
      `${n(Math.max(...raw.map((r) => r.peakMiB)), 1)} MiB; ${n(
        m(raw, (r) => r.idleMiB),
        1,
      )} MiB`,
      '',
      '',
    ],
  ]
  const perRound = (rounds: Round[], f: (r: Round) => number) => rounds.map((r) => n(f(r))).join(', ')
  const roundLines = [
    `tasks done (imports/s): baseline ${perRound(raw, (r) => r.loaded.taskRate)}; Reelhouse ${perRound(app, (r) => r.loaded.taskRate)}; ratios ${app.map((r, i) => n(r.loaded.taskRate / raw[i]!.loaded.taskRate, 2)).join(', ')}`,
    `tasks done without the search index (imports/s): ${perRound(bare, (r) => r.loaded.taskRate)}; with / without ${app.map((r, i) => n(r.loaded.taskRate / bare[i]!.loaded.taskRate, 2)).join(', ')}`,
    `answered (imports/s): baseline ${perRound(raw, (r) => r.loaded.requestRate)}; Reelhouse ${perRound(app, (r) => r.loaded.requestRate)}`,
    `server CPU per import (µs): baseline ${perRound(raw, (r) => r.loaded.cpuUs)}; Reelhouse ${perRound(app, (r) => r.loaded.cpuUs)}`,
    `peak RSS during the imports (MiB): baseline ${perRound(raw, (r) => r.peakMiB)}; Reelhouse ${perRound(app, (r) => r.peakMiB)}`,
    `Reelhouse RSS when the imports start / peak before (MiB): ${app.map((r) => `${n(r.idleMiB)} / ${n(r.setupPeakMiB)}`).join(', ')}`,
    `last task done after the last answer (s): baseline ${raw.map((r) => n(r.loaded.taskTailS, 2)).join(', ')}; Reelhouse ${app.map((r) => n(r.loaded.taskTailS, 2)).join(', ')}`,
  ]

  console.log('\nImport benchmark')
  console.log(
    `${host.date}; ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB; Linux ${host.kernel}; bun ${host.bun}; ${host.wrk}`,
  )
  const w = [Math.max(...rows.map((r) => r[0].length)), Math.max(...rows.map((r) => r[1].length))]
  for (const r of rows) console.log(`${r[0].padEnd(w[0]!)}  ${r[1].padEnd(w[1]!)}  ${r[2].padEnd(11)} ${r[3]}`)
  for (const l of roundLines) console.log(`per round, ${l}`)
  const rowCheck = pass.rows
    ? 'are equal but for timestamps'
    : `DIFFER in ${[...rowsDiffer].join(', ')}: the baseline no longer writes what Reelhouse writes (update bench/import-baseline.ts)`
  console.log(`rows of the first imports in the two catalogues ${rowCheck}`)

  if (process.env.BENCH_NO_DOC !== '1' && !cfg.cpuProf) {
    const section = `## Import: POST /api/asset/import/ against raw Bun.serve + bun:sqlite

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load})
- Bun ${host.bun}; load tool ${host.wrk}
- Data: ${n(FILES)} empty files, ${n(PER_DIR)} to a folder, on one device; one production; no ffmpeg; superuser key

| Measure | Result | Target | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

Per round (the table shows medians; round i of one server and of the other ran back to back):
${roundLines.map((l) => `- ${l}`).join('\n')}

What is measured:

- **Reelhouse**: \`bun src/main.ts serve --ffmpeg <empty folder>\` in its own process, on a fresh
  catalogue each round, its device and production made through the API. Each request is
  \`POST ${IMPORT}\` with \`Authorization: Token <key>\` and a video import of a different existing
  file (bench/import.lua: name, path_file, description, width, height, duration). The server
  answers 201 once the asset, its ImportLog and its \`import\` task are written; the task then
  finds no ffmpeg, writes the two warnings into the ImportLog (\`import_completed\`) and marks the
  asset done.
- **Reelhouse without the search index**: the same server, whose catalogue's search index
  triggers (migration 0016) are dropped once it has started: each import's writes then leave the
  FTS5 index alone. The ratio of the two rates is what the index costs an import (target: at most
  15 % fewer imports per second with it).
- **Baseline**: bench/import-baseline.ts, raw \`Bun.serve\` on a catalogue made by the same
  migrations with the same device and production: parses the body, finds the production and the
  device, \`lstat\`s the file, writes the asset, the ImportLog and the task in one transaction
  with prepared statements and answers the same members; then runs the task the same way (the
  oldest queued first: asset status 6, ImportLog \`import_completed\` with the same warnings, task
  done). No authentication, schema validation, hold durations or custom metadata checks. After
  every round the first rows of \`media_assets\`, \`import_logs\` and \`tasks\` of the two catalogues
  are compared: they ${rowCheck}.
- **Devices**: the files lie on one device; the production's upload device (a watch folder,
  whose new files Reelhouse's watcher imports by itself) is a second, empty one. Reelhouse
  watches both and scans each when it is created, once its watcher has walked it; the load starts
  once every watcher is ready and no task is queued or running, twice in a row 100 ms apart, and
  the server's RSS has not fallen for 500 ms (sampled every 100 ms, at most 3 s: what the setup freed
  goes back to the system). The scan of the ${n(FILES)} files and the rest of the setup took
  ${n(median(settled), 1)} s, median; the RSS then and the setup's peak are shown in the table.
- **Rates**: ${N} imports per server and round, \`${wrkArgs(C, '<url>').join(' ').replace(LUA, relative(ROOT, LUA))}\`, stopped once
  ${N} ImportLogs exist (the catalogue is polled every 5 ms through a read-only connection).
  *Answered*: ImportLogs written per second from the start of wrk; *tasks done*: import tasks
  done per second from the start of wrk until none is queued or running (the verdict). Every
  answer was 201 and no task failed.
- **One import at a time**: before the load, on the same server, ${n(cfg.lowWarmup)} imports at 1 connection
  (warm-up, not counted), then ${n(cfg.low)} measured: wrk's latency of the 201, and from the tasks table
  the time from a task's \`date_add\` to its \`date_end\` (millisecond timestamps).
- **Peak RSS**: the server's \`VmHWM\` from /proc, reset (/proc/PID/clear_refs) once the setup is
  done, read after the round: both low-load runs and the ${N} imports. What the server holds
  when they start (RSS then, and the peak of the setup before) is shown beside it.
- ${cfg.rounds} rounds, the order of the two servers alternating; wrk, the server and the polling
  share the machine's ${host.cores} cores. *Server CPU* is the server's user + system time over the
  loaded run (/proc/PID/stat) divided by the imports: it varies less than the rates when other
  work on the machine comes and goes.
- To see where Reelhouse's time goes: \`BENCH_IMPORT_CPU_PROF=DIR BENCH_IMPORT_ROUNDS=1 bun bench/import.ts\`
  runs it under \`bun --cpu-prof\` (the profile is written into DIR when the server stops; this
  file is then left alone).

${WHERE_THE_CPU_WENT}
`
    writeSection(join(ROOT, 'docs', 'benchmarks.md'), 'import', section)
    console.error('wrote docs/benchmarks.md')
  }
  return pass.rate && pass.ratio && pass.cpu && pass.low && pass.index && pass.rss && pass.rows
}

// ------------------------------------------------------------------ on PostgreSQL

/** A fresh database of the private cluster (bench/pg.ts), migrated, with the rows the two POSTs make; then the baseline over it. */
async function startBaselinePg(
  dev: string,
  uploads: string,
  warnings: { probe: string; proxy: string },
): Promise<Server> {
  const { freshDatabase } = await import('../test/helpers/pg.ts')
  const { migratePostgres } = await import('../src/db/pg/migrate.ts')
  const { SQL } = await import('bun')
  const { url } = await freshDatabase()
  await migratePostgres(url)
  const client = new SQL(url)
  try {
    const { devices, production } = place(dev, uploads)
    const now = isoTimestamp()
    const ids: string[] = []
    for (const d of devices) {
      const [row] = (await client.unsafe(
        'INSERT INTO devices (name, display_name, path, date_add) VALUES ($1, $2, $3, $4) RETURNING id',
        [d.name, d.name, d.path, now],
      )) as { id: string }[]
      ids.push(row!.id)
    }
    const id = Number(ids[0])
    await client.unsafe(
      `INSERT INTO productions (name, codename, storage_root, proxy_root, upload_device, audioasset_device, imageasset_device,
        videoasset_device, date_add) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        production.name,
        production.name.toLowerCase(),
        production.storage_root,
        `${production.storage_root}proxies/`,
        production.upload_device,
        id,
        id,
        id,
        now,
      ],
    )
  } finally {
    await client.close()
  }
  return start(
    'raw',
    [BUN, 'bench/import-baseline-pg.ts', url],
    url,
    (line) => /^listening (\d+)$/.exec(line.trim())?.[1],
    {
      BENCH_WARNING_PROBE: warnings.probe,
      BENCH_WARNING_PROXY: warnings.proxy,
    },
  )
}

/** load()'s run on a PostgreSQL catalogue (server.db its URL), polled through a session of its own every 5 ms. */
async function loadPg(server: Server, root: string, first: number, count: number, connections: number): Promise<Run> {
  const { SQL } = await import('bun')
  const client = new SQL({ url: server.db, max: 1 })
  const value = async (query: string, params: unknown[] = []) =>
    Number(((await client.unsafe(query, params)) as { n: string | null }[])[0]!.n ?? 0)
  const lastLog = () => value('SELECT max(id) AS n FROM import_logs')
  const pending = () => value("SELECT count(*) AS n FROM tasks WHERE state IN ('queued', 'running')")
  try {
    const logsBefore = await lastLog()
    const tasksBefore = await value('SELECT max(id) AS n FROM tasks')
    const env = {
      ...process.env,
      BENCH_ROOT: root,
      BENCH_PRODUCTION: PRODUCTION,
      BENCH_PATH: IMPORT,
      BENCH_KEY: server.key ?? '',
      BENCH_FIRST: String(first),
      BENCH_COUNT: String(count),
      BENCH_THREADS: '1',
    }
    const cpu0 = cpuSeconds(server.proc.pid)
    const t0 = performance.now()
    const proc = Bun.spawn(wrkArgs(connections, server.base), { stdout: 'pipe', stderr: 'pipe', env })
    children.add(proc)
    const output = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    let tRequests = 0
    let registered = 0
    for (;;) {
      const now = performance.now()
      registered = (await lastLog()) - logsBefore
      if (!tRequests && registered >= count) {
        tRequests = now
        proc.kill('SIGINT')
      }
      if (tRequests && (await pending()) === 0) break
      if (proc.exitCode !== null && !tRequests) {
        const [out, err] = await output
        throw new Error(`wrk ended after ${registered} of ${count} imports:\n${out}\n${err}`)
      }
      if (now - t0 > 900_000) throw new Error(`${server.label}: ${registered} of ${count} imports after 900 s`)
      await Bun.sleep(5)
    }
    const tTasks = performance.now()
    const cpu = cpuSeconds(server.proc.pid) - cpu0
    const [out, err, code] = await output
    children.delete(proc)
    const line = out.split('\n').find((l) => l.startsWith('{'))
    if (!line) throw new Error(`wrk failed (${code}):\n${out}\n${err}`)
    const r = JSON.parse(line) as WrkResult
    if (Object.values(r.errors).some((n) => n > 0))
      throw new Error(
        `wrk against ${server.label} saw errors ${JSON.stringify(r.errors)}; every import must answer 201. The server's last lines:\n${server.tail.join('\n')}`,
      )
    // One snapshot: a request wrk left in flight may still commit (its ImportLog and task together) between two reads.
    const [counted] = (await client.unsafe(
      `SELECT (SELECT max(id) FROM import_logs) AS logs,
         (SELECT count(*) FROM tasks WHERE id > $1 AND kind = 'import') AS tasks,
         (SELECT count(*) FROM tasks WHERE id > $1 AND kind = 'import' AND state = 'failed') AS failed`,
      [tasksBefore],
    )) as { logs: string; tasks: string; failed: string }[]
    const imports = Number(counted!.logs) - logsBefore
    if (Number(counted!.tasks) !== imports || Number(counted!.failed))
      throw new Error(`${server.label}: ${imports} imports, ${counted!.tasks} tasks, ${counted!.failed} failed`)
    const lags = (
      (await client.unsafe(
        `SELECT extract(epoch FROM date_end::timestamptz - date_add::timestamptz) * 1000 AS ms FROM tasks
         WHERE id > $1 AND kind = 'import' AND state = 'done' ORDER BY ms`,
        [tasksBefore],
      )) as { ms: string }[]
    ).map((x) => Number(x.ms))
    const pct = (p: number) => lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))]!
    return {
      imports,
      requestRate: registered / ((tRequests - t0) / 1000),
      taskRate: imports / ((tTasks - t0) / 1000),
      p50ms: r.latency_us.p50 / 1000,
      p99ms: r.latency_us.p99 / 1000,
      taskTailS: (tTasks - tRequests) / 1000,
      lagP50ms: pct(50),
      lagP99ms: pct(99),
      cpuUs: (cpu / imports) * 1e6,
    }
  } finally {
    await client.close()
  }
}

/** settle()'s wait on a PostgreSQL catalogue: every watcher ready and no task pending, twice 100 ms apart; then the RSS flat. */
async function settlePg(server: Server): Promise<number> {
  const { SQL } = await import('bun')
  const client = new SQL({ url: server.db, max: 1 })
  const t0 = performance.now()
  const watching = async () => {
    if (server.label !== 'app') return true
    const health = (await (await fetch(`${server.base}/api/health`)).json()) as { watch?: { ready: boolean }[] }
    return (health.watch ?? []).every((w) => w.ready)
  }
  const pending = async () =>
    Number(
      (
        (await client.unsafe("SELECT count(*) AS n FROM tasks WHERE state IN ('queued', 'running')")) as { n: string }[]
      )[0]!.n,
    )
  try {
    for (let quiet = 0; quiet < 2; await Bun.sleep(100)) {
      quiet = (await pending()) === 0 && (await watching()) ? quiet + 1 : 0
      if (performance.now() - t0 > 600_000) throw new Error(`${server.label}: tasks still pending after 600 s`)
    }
    for (
      let low = Infinity, flat = 0, t = performance.now();
      flat < 5 && performance.now() - t < 3000;
      await Bun.sleep(100)
    ) {
      const now = memory(server.proc.pid).rssMiB
      flat = now < low - 1 ? 0 : flat + 1
      low = Math.min(low, now)
    }
    return (performance.now() - t0) / 1000
  } finally {
    await client.close()
  }
}

/** sameRows() on two PostgreSQL catalogues (their URLs). */
async function sameRowsPg(appUrl: string, rawUrl: string, n = 5) {
  const { SQL } = await import('bun')
  const read = async (url: string) => {
    const client = new SQL({ url, max: 1 })
    try {
      const rows = async (query: string) => JSON.stringify(await client.unsafe(query))
      return {
        media_assets:
          await rows(`SELECT id, kind, name, description, production, device, status_asset, status_asset_description, path_file, path_proxy,
          is_archive, is_production, approval, meta_field_store, technical, archive_details, date_crt, date_del, file_dev, file_ino, file_stamp
          FROM media_assets ORDER BY id LIMIT ${n}`),
        import_logs:
          await rows(`SELECT id, asset_type, asset_path, status, error, warning, payload, asset_config, asset_import_id, production
          FROM import_logs ORDER BY id LIMIT ${n}`),
        tasks:
          await rows(`SELECT kind, state, target, production, params, bytes_done, bytes_total, files_done, files_total, error, attempts, key
          FROM tasks WHERE kind = 'import' ORDER BY id LIMIT ${n}`),
      }
    } finally {
      await client.close()
    }
  }
  const a = await read(appUrl)
  const b = await read(rawUrl)
  const differ = (Object.keys(a) as (keyof typeof a)[]).filter((table) => a[table] !== b[table])
  for (const table of differ)
    console.error(`${table} rows differ between Reelhouse and the baseline:\n${a[table]}\n${b[table]}`)
  return differ
}

/**
 * BENCH_ENGINE=postgres: the same rounds as main() with the compiled executable (dist/reelhouse,
 * built beforehand) run with --database on a fresh database of a private PostgreSQL (bench/pg.ts)
 * each round, against bench/import-baseline-pg.ts (raw Bun.serve + Bun.SQL writing the same rows
 * and running the same task) on another; no run without the search index. Writes the section
 * `import-postgres` of docs/benchmarks.md. Server CPU is the server process's only: the
 * database's own processes do part of the work on this engine, for both.
 */
async function mainPostgres() {
  if (!Bun.which('wrk')) throw new Error('wrk is not installed (Debian: apt-get install wrk)')
  const pg = await import('./pg.ts')
  const { freshDatabase, postgresCluster } = await import('../test/helpers/pg.ts')
  const exe = join(ROOT, 'dist', 'reelhouse')
  if (!Bun.file(exe).size) throw new Error('dist/reelhouse is missing: npm run build first')
  const host = machine()
  console.error(
    `machine: ${host.cpu}, ${host.cores} cores, ${host.ramGiB.toFixed(1)} GiB, Linux ${host.kernel}, bun ${host.bun}; load ${host.load}`,
  )
  try {
    tmp = mkdtempSync(join(tmpdir(), 'reelhouse-bench-import-'))
    const dev = join(tmp, 'dev') + '/'
    const uploads = join(tmp, 'uploads') + '/'
    mkdirSync(uploads)
    const root = join(dev, 'show', 'footage')
    const noFfmpeg = join(tmp, 'no-ffmpeg')
    mkdirSync(noFfmpeg)
    for (let i = 0; i < FILES; i++) {
      const dir = join(root, `d${String(Math.floor(i / PER_DIR)).padStart(3, '0')}`)
      if (i % PER_DIR === 0) mkdirSync(dir, { recursive: true })
      closeSync(openSync(join(dir, `clip_${String(i).padStart(6, '0')}.mov`), 'w'))
    }
    const ff = await createFfmpeg({ dir: noFfmpeg })
    const warnings = { probe: ff.missing('ffprobe'), proxy: ff.missing('ffmpeg') }
    if (!warnings.probe || !warnings.proxy) throw new Error(`${noFfmpeg} is empty, yet ffmpeg was found`)
    await postgresCluster()
    let settings = ''
    const results: Record<'app' | 'raw', Round[]> = { app: [], raw: [] }
    const rowsDiffer = new Set<string>()
    for (let round = 0; round < cfg.rounds; round++) {
      const labels = ['app', 'raw'] as const
      const order = labels.map((_, i) => labels[(i + round) % labels.length]!)
      const urls: Partial<Record<'app' | 'raw', string>> = {}
      for (const label of order) {
        let server: Server
        if (label === 'raw') server = await startBaselinePg(dev, uploads, warnings as { probe: string; proxy: string })
        else {
          const { url } = await freshDatabase()
          server = await startReelhouse(join(tmp, `round${round + 1}-app`), dev, uploads, noFfmpeg, { exe, url })
        }
        urls[label] = server.db
        settings ||= await pg.clusterSettings(server.db)
        await settlePg(server)
        const idle = memory(server.proc.pid)
        resetPeak(server.proc.pid)
        await loadPg(server, root, LOW_FIRST, cfg.lowWarmup, 1)
        const low = await loadPg(server, root, LOW_FIRST + cfg.lowWarmup + SLACK, cfg.low, 1)
        const loaded = await loadPg(server, root, 0, cfg.imports, cfg.connections)
        const peak = memory(server.proc.pid)
        await stop(server)
        results[label].push({ low, loaded, idleMiB: idle.rssMiB, setupPeakMiB: idle.hwmMiB, peakMiB: peak.hwmMiB })
        console.error(
          `  round ${round + 1} ${label === 'app' ? 'Reelhouse' : 'baseline '}  ${loaded.imports} imports: ${loaded.requestRate.toFixed(0).padStart(6)}/s answered, ` +
            `${loaded.taskRate.toFixed(0).padStart(6)}/s tasks done (tail ${loaded.taskTailS.toFixed(2)} s); c${cfg.connections} p50 ${loaded.p50ms.toFixed(1)} ms p99 ${loaded.p99ms.toFixed(1)} ms; ` +
            `c1 p50 ${low.p50ms.toFixed(2)} ms p99 ${low.p99ms.toFixed(2)} ms; ${loaded.cpuUs.toFixed(0)} µs CPU/import; peak ${peak.hwmMiB.toFixed(0)} MiB`,
        )
      }
      for (const table of await sameRowsPg(urls.app!, urls.raw!)) rowsDiffer.add(table)
    }
    const endLoad = machine().load

    // -------------------------------------------------------------- results
    const { app, raw } = results
    const m = (rounds: Round[], f: (r: Round) => number) => median(rounds.map(f))
    const ratio = median(app.map((r, i) => r.loaded.taskRate / raw[i]!.loaded.taskRate))
    const requestRatio = median(app.map((r, i) => r.loaded.requestRate / raw[i]!.loaded.requestRate))
    const cpuRatio = median(app.map((r, i) => r.loaded.cpuUs / raw[i]!.loaded.cpuUs))
    const lowGapMs = m(app, (r) => r.low.p50ms) - m(raw, (r) => r.low.p50ms)
    const rate = m(app, (r) => r.loaded.taskRate)
    const peak = Math.max(...app.map((r) => r.peakMiB))
    const pass = {
      rate: rate >= TARGET.rate,
      ratio: ratio >= TARGET.ratio,
      cpu: cpuRatio <= TARGET.cpu,
      low: lowGapMs <= TARGET.lowP50Ms,
      rss: peak < TARGET.rssMiB,
      rows: rowsDiffer.size === 0,
    }
    const mark = (ok: boolean) => (ok ? 'pass' : 'FAIL')
    const n = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })
    const N = n(cfg.imports)
    const C = cfg.connections
    const lowOf = (rounds: Round[]) =>
      `p50 ${n(
        m(rounds, (r) => r.low.p50ms),
        2,
      )} ms, p99 ${n(
        m(rounds, (r) => r.low.p99ms),
        2,
      )} ms; task done ${n(
        m(rounds, (r) => r.low.lagP50ms),
        1,
      )} ms after it was queued`
    const rows: [string, string, string, string][] = [
      [
        `${N} imports at ${C} connections, baseline (raw Bun.serve + Bun.SQL)`,
        `${n(m(raw, (r) => r.loaded.taskRate))} imports/s with tasks done (${n(m(raw, (r) => r.loaded.requestRate))}/s answered)`,
        '',
        '',
      ],
      [
        `${N} imports at ${C} connections, Reelhouse executable on PostgreSQL`,
        `${n(rate)} imports/s with tasks done (${n(m(app, (r) => r.loaded.requestRate))}/s answered)`,
        `>= ${n(TARGET.rate)}/s`,
        mark(pass.rate),
      ],
      [
        'Reelhouse / raw Bun.SQL baseline, tasks done (median of per-round ratios)',
        n(ratio, 2),
        `>= ${TARGET.ratio}`,
        mark(pass.ratio),
      ],
      ['Reelhouse / raw Bun.SQL baseline, answered (median of per-round ratios)', n(requestRatio, 2), '', ''],
      [`One import at a time (1 connection, ${n(cfg.low)} imports), Reelhouse`, lowOf(app), '', ''],
      [`One import at a time (1 connection, ${n(cfg.low)} imports), baseline`, lowOf(raw), '', ''],
      [
        `Server process CPU per import at ${C} connections, Reelhouse / baseline (not the database's)`,
        `${n(m(app, (r) => r.loaded.cpuUs))} / ${n(m(raw, (r) => r.loaded.cpuUs))} µs (ratio ${n(cpuRatio, 2)})`,
        `<= ${TARGET.cpu}`,
        mark(pass.cpu),
      ],
      [
        'One import at a time, p50: Reelhouse - baseline',
        `${n(lowGapMs, 2)} ms`,
        `<= ${TARGET.lowP50Ms} ms`,
        mark(pass.low),
      ],
      [
        `Peak RSS of the Reelhouse server during ${n(cfg.lowWarmup + cfg.low + cfg.imports)} imports (highest of the rounds)`,
        `${n(peak, 1)} MiB`,
        `< ${TARGET.rssMiB} MiB`,
        mark(pass.rss),
      ],
    ]
    const perRound = (rounds: Round[], f: (r: Round) => number) => rounds.map((r) => n(f(r))).join(', ')
    const roundLines = [
      `tasks done (imports/s): baseline ${perRound(raw, (r) => r.loaded.taskRate)}; Reelhouse ${perRound(app, (r) => r.loaded.taskRate)}`,
      `answered (imports/s): baseline ${perRound(raw, (r) => r.loaded.requestRate)}; Reelhouse ${perRound(app, (r) => r.loaded.requestRate)}`,
      `server process CPU per import (µs): baseline ${perRound(raw, (r) => r.loaded.cpuUs)}; Reelhouse ${perRound(app, (r) => r.loaded.cpuUs)}`,
      `last task done after the last answer (s): baseline ${raw.map((r) => n(r.loaded.taskTailS, 2)).join(', ')}; Reelhouse ${app.map((r) => n(r.loaded.taskTailS, 2)).join(', ')}`,
    ]
    const rowCheck = pass.rows
      ? 'are equal but for timestamps'
      : `DIFFER in ${[...rowsDiffer].join(', ')} (the run prints both sides' rows: the service or bench/import-baseline-pg.ts writes something the other does not)`
    console.log('\nImport benchmark on PostgreSQL')
    console.log(`${host.date}; ${settings}`)
    const w = [Math.max(...rows.map((r) => r[0].length)), Math.max(...rows.map((r) => r[1].length))]
    for (const r of rows) console.log(`${r[0].padEnd(w[0]!)}  ${r[1].padEnd(w[1]!)}  ${r[2].padEnd(11)} ${r[3]}`)
    for (const l of roundLines) console.log(`per round, ${l}`)
    console.log(`rows of the first imports in the two catalogues ${rowCheck}; load average at the end ${endLoad}`)
    if (process.env.BENCH_NO_DOC !== '1' && !cfg.cpuProf) {
      const section = `### Import on PostgreSQL: POST /api/asset/import/ against raw Bun.serve + Bun.SQL

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load}; at the end: ${endLoad})
- Bun ${host.bun}; load tool ${host.wrk}
- Database: ${settings}
- A private cluster (test/helpers/pg.ts) reached through a Unix socket, on the same machine: the server, the database, the baseline, wrk and the polling share its ${host.cores} cores.
  **fsync and synchronous_commit are off** (the helper starts its clusters so): a commit does not
  wait for the disk here, where a facility's server, with both on, waits for its WAL to be
  flushed on every commit; both sides commit on every import, so both would be slower there.
- Data: ${n(FILES)} empty files, ${n(PER_DIR)} to a folder, on one device; one production; no ffmpeg; superuser key;
  a fresh database per server and round
- Settings: BENCH_ENGINE=postgres BENCH_IMPORTS=${cfg.imports} BENCH_IMPORT_ROUNDS=${cfg.rounds}
  BENCH_IMPORT_LOW=${cfg.low} BENCH_IMPORT_LOW_WARMUP=${cfg.lowWarmup} (the SQLite run's 100,000 imports take longer
  than a run here may)

| Measure | Result | Target (the SQLite run's) | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

${pg.sharedMachine(host.load, endLoad, host.cores)}

Per round (the table shows medians; round i of one server and of the other ran back to back):
${roundLines.map((l) => `- ${l}`).join('\n')}

What is measured: as on SQLite above, with the compiled executable (dist/reelhouse) run with
\`--database\` on a fresh database, its devices and production made through the API, against
bench/import-baseline-pg.ts on another fresh database made by the same migrations with the same
rows: raw \`Bun.serve\` and \`Bun.SQL\` (the service's pool size, 20) doing the same work with the
same statements in PostgreSQL's form (one transaction of three INSERTs per import; then, one
task after another, a claim and a transaction of three UPDATEs). The catalogue is polled through
a session of its own every 5 ms. The first rows of \`media_assets\`, \`import_logs\` and \`tasks\`
of the two catalogues ${rowCheck}. No run without the search index (its triggers are
PostgreSQL's own here). *Server process CPU* counts the server's process alone, not the
PostgreSQL backends that run its statements, for both; the targets are the SQLite run's, set
against raw bun:sqlite, and shown as met or missed.
`
      writeSection(join(ROOT, 'docs', 'benchmarks.md'), 'import-postgres', section)
      console.error('wrote docs/benchmarks.md')
    }
    return Object.values(pass).every(Boolean)
  } finally {
    await stopAll()
    pg.stopCluster()
  }
}

await runBench(process.env.BENCH_ENGINE === 'postgres' ? mainPostgres : main, stopAll)
