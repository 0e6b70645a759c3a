// The watch benchmark (part of npm run bench): a device of 100,000 files in 1,000 folders, watched
// by a real `serve` process (its own process, so its RSS is the server's alone).
//
// 1. Start scan of a FRESH device: every round a new data folder (a copy of one with a user and a
//    production on a small other device), `serve`, then POST /api/devices/ for the big folder;
//    the scan of a created device starts then. Not a watch folder, so nothing is imported. The
//    scan's time is its task's date_end − date_start (GET /api/tasks/?kind=scan).
// 2. Start scan of a CATALOGUED device (the common restart: every file has its row, nothing
//    changed): one data folder whose device was created through the API and whose 100,000 media
//    assets were inserted straight into SQLite (the columns MediaAssets.create writes, with the
//    files' device and inode), the server stopped; every round starts `serve` on it and times
//    the start scan of that device the same way. The rows are steady state, as after a service
//    has seen its device before: file_size, file_mtime and file_hash are filled as the service
//    fills them (fingerprintAll of src/storage/fingerprint.ts, with each file's lstat size and
//    mtimeMs), not by a warm-up serve. Every round's scan must say fingerprinted: 0 (a check).
//    Each round of 1 and 2 runs `find DEVICE -printf '%s %T@ %i\n'` (the baseline: a walk with
//    one lstat per entry, what the scan's walk does) right before or after the scan, alternating;
//    the figure is the median of the per-round ratios scan/find.
// 3. Fingerprinting 100,000 new files: the same catalogue with file_size, file_mtime and
//    file_hash NULL (what an upgrade to fingerprints, or a catalogue from before them, starts
//    with), a copy per round. Fingerprinting time = that start scan's task duration minus the
//    steady-state start scan's (the catalogued folder), both in the same round; the scan must say
//    fingerprinted: 100,000, and the hashes it stored must equal the ones the bench put in the
//    catalogued folder (a check). Baselines in the same round, reading the same bytes:
//    `find DEVICE -type f -exec head -c 2097152 {} + > /dev/null` and one Bun process reading
//    each file's first and last MiB (open, fstat, read, close; the paths known, no walk). Order
//    per round: baselines then scans, next round the reverse. Figures: the median of per-round
//    ratios. The files are a few bytes each: every read is of the whole file.
// 4. Latency: `serve` on the catalogued device, which is the watch folder of a production, first
//    watched by events, then with --poll. Changes, in turn: create a new clip (shown when its
//    asset exists: imported once settled, --settle 1), rename a catalogued clip (shown when its
//    asset's path_file is the new name), delete a catalogued clip (shown when its asset is
//    offline). With events one at a time, each after the previous showed; with polling one
//    every BENCH_WATCH_POLL_PACE_MS without waiting (one at a time would take 200 × several
//    seconds), each timed on its own. Latency: from the change on disk to the API answering it.
//    A change the API shows as another one (a deleted clip's asset moved onto a new file that got
//    its inode; a rename taken for a delete) is counted apart, a check that fails the run.
// 5. Relink of a folder of 1,000 files moved across file systems: two devices, one in the temp
//    folder and one in /dev/shm (skipped, with the reason printed, when they are one file
//    system), each the watch folder of a production; 1,000 clips (64 KiB + n bytes, distinct)
//    catalogued in a folder of the first, inserted with their fingerprints. One `serve`, watching
//    both by events; each round `mv`s the folder to the other device (there and back) and times
//    from the mv's end until GET /api/videoassets/?production= shows all 1,000 assets online at
//    their new paths. Checked each round: the same asset ids, every one at its new path on the
//    new device, no asset more (nothing imported), and the scans' `relinked` adding up to 1,000.
//    Baseline: `cp -r` of the folder to a scratch folder on the destination's file system (the
//    byte copy the mv itself does), right before the mv; the mv's own time is shown too.
// 6. Peak RSS: VmHWM of each server (start scans, fingerprinting, watching, the changes, the
//    relinks) from /proc.
// Where the time and memory go: bench/watch-profile.ts.
//
// Environment (all optional): BENCH_WATCH_FILES (100000), BENCH_WATCH_FOLDERS (1000),
// BENCH_WATCH_ROUNDS (5), BENCH_WATCH_CHANGES (200), BENCH_WATCH_POLL_CHANGES (200),
// BENCH_WATCH_POLL_INTERVAL (s, 10: serve's default), BENCH_WATCH_POLL_PACE_MS (500),
// BENCH_WATCH_RELINK_FILES (1000, at most BENCH_WATCH_FILES), BENCH_WATCH_RELINK_KIB (64),
// BENCH_WATCH_RELINK_WATCH (1; 0: the relink devices are no watch folders, nothing is imported),
// BENCH_WATCH_TMP (a folder for the device and data folders; default the system's),
// BENCH_WATCH_SHM (/dev/shm: where the second file system's device goes),
// BENCH_WATCH_KEEP=1 (keep those folders, to look at the catalogue afterwards), BENCH_NO_DOC=1,
// BENCH_WATCH_DOC (a file to write the section to instead of docs/benchmarks.md: a trial run's).
// The events figures need about files + folders free inotify watches (chokidar takes one per file).
// Exit status: 0 all targets met, 1 a target missed, a check failed or the run failed.
import { type Subprocess, spawnSync } from 'bun'
import {
  closeSync,
  cpSync,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { dbFile } from '../src/config.ts'
import { openDb } from '../src/db/client.ts'
import { isoTimestamp } from '../src/util/time.ts'
import { FINGERPRINT_EDGE, fingerprintAll } from '../src/storage/fingerprint.ts'
import { stampOf } from '../src/storage/paths.ts'
import { machine, writeSection } from './doc.ts'
import { children, envNumber, memory, onInterrupt, ROOT, runBench, spawnListening, stopChildren } from './procs.ts'

const num = envNumber
const cfg = {
  files: num('BENCH_WATCH_FILES', 100_000),
  folders: num('BENCH_WATCH_FOLDERS', 1000),
  rounds: num('BENCH_WATCH_ROUNDS', 5),
  changes: num('BENCH_WATCH_CHANGES', 200),
  pollChanges: num('BENCH_WATCH_POLL_CHANGES', 200),
  pollInterval: num('BENCH_WATCH_POLL_INTERVAL', 10),
  pollPaceMs: num('BENCH_WATCH_POLL_PACE_MS', 500),
  relinkFiles: Math.min(num('BENCH_WATCH_RELINK_FILES', 1000), num('BENCH_WATCH_FILES', 100_000)),
  relinkKiB: num('BENCH_WATCH_RELINK_KIB', 64),
  /** 0: neither relink device is a watch folder (nothing can be imported; the relink alone). */
  relinkWatch: num('BENCH_WATCH_RELINK_WATCH', 1) !== 0,
  shm: process.env.BENCH_WATCH_SHM ?? '/dev/shm',
}
const TARGET = { ratio: 3, rssMiB: 300, eventsP95: 1.5, pollSlack: 2 }
const KINDS = ['create', 'rename', 'delete'] as const
type Kind = (typeof KINDS)[number]

// ------------------------------------------------------------------ processes and cleanup

let tmp: string | undefined
/** The second file system's folder (section 5), in cfg.shm. */
let shm: string | undefined

async function stopAll() {
  await stopChildren(5000)
  for (const dir of [tmp, shm])
    if (dir && process.env.BENCH_WATCH_KEEP !== '1') rmSync(dir, { recursive: true, force: true })
  tmp = undefined
  shm = undefined
}
onInterrupt(stopAll, () => [tmp, shm].filter(Boolean).join(' and ') || 'nothing')

type Server = { proc: Subprocess<'ignore', 'pipe', 'pipe'>; base: string; key: string; log: string[] }

/** `serve` on dataDir, its own process; resolves once it listens. Its log is kept (the last lines). */
async function serve(dataDir: string, flags: string[] = []): Promise<Server> {
  const noFfmpeg = join(tmp!, 'no-ffmpeg')
  mkdirSync(noFfmpeg, { recursive: true })
  const cmd = [
    process.execPath,
    'src/main.ts',
    'serve',
    '--data',
    dataDir,
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--ffmpeg',
    noFfmpeg,
    '--settle',
    '1',
    '--quiet',
    ...flags,
  ]
  const {
    proc,
    port,
    lines: log,
  } = await spawnListening('serve', cmd, {
    portOf: (line) => / serving .*api=http:\/\/127\.0\.0\.1:(\d+)\//.exec(line)?.[1],
    timeoutMs: 60_000,
  })
  const key = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim()
  return { proc, base: `http://127.0.0.1:${port}`, key, log }
}

async function stop(server: Server) {
  server.proc.kill('SIGTERM')
  const code = await server.proc.exited
  children.delete(server.proc)
  if (code !== 0) throw new Error(`serve exited with ${code}:\n${server.log.slice(-30).join('\n')}`)
}

// ------------------------------------------------------------------ the API

async function api(server: Server, method: string, path: string, body?: unknown) {
  const response = await fetch(server.base + path, {
    method,
    headers: {
      authorization: `Token ${server.key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  let json: any // checked where used
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: response.status, json, text }
}

/** X-Total-Count of a list (limit=0: no records sent). */
async function total(server: Server, path: string): Promise<number> {
  const response = await fetch(`${server.base}${path}${path.includes('?') ? '&' : '?'}limit=0`, {
    headers: { authorization: `Token ${server.key}` },
  })
  await response.text()
  const count = response.headers.get('x-total-count')
  if (response.status !== 200 || count === null)
    throw new Error(`GET ${path}: ${response.status}, X-Total-Count ${count}`)
  return Number(count)
}

async function created(server: Server, path: string, body: unknown): Promise<{ id: number }> {
  const r = await api(server, 'POST', path, body)
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`)
  return r.json
}

/** Waits for `check` to return something, every `everyMs`, at most `timeoutMs`. */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 50,
): Promise<T> {
  const end = performance.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (performance.now() > end) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`)
    await Bun.sleep(everyMs)
  }
}

type TaskRow = {
  id: number
  state: string
  target: { device?: number }
  date_add: string
  date_start: string | null
  date_end: string | null
  result: Record<string, number>
  error: string
}

async function scanTasks(server: Server): Promise<TaskRow[]> {
  const r = await api(server, 'GET', '/api/tasks/?kind=scan')
  if (r.status !== 200) throw new Error(`GET /api/tasks/?kind=scan: ${r.status} ${r.text}`)
  return r.json
}

/** The first scan task of `device` after task `after`, once it has ended. */
async function scanOf(
  server: Server,
  device: number,
  after: number,
): Promise<TaskRow & { seconds: number; queuedSeconds: number }> {
  const task = await until(
    `the scan of device ${device}`,
    async () =>
      (await scanTasks(server)).find(
        (t) => t.target.device === device && t.id > after && (t.state === 'done' || t.state === 'failed'),
      ),
    600_000,
    100,
  )
  if (task.state !== 'done') throw new Error(`scan task ${task.id} failed: ${task.error}`)
  return {
    ...task,
    seconds: (Date.parse(task.date_end!) - Date.parse(task.date_start!)) / 1000,
    queuedSeconds: (Date.parse(task.date_start!) - Date.parse(task.date_add)) / 1000,
  }
}

/** Waits until no scan task is queued or running (the start scans of the small device). */
const scansIdle = (server: Server) =>
  until(
    'the scans to end',
    async () => ((await scanTasks(server)).every((t) => t.state === 'done' || t.state === 'failed') ? true : undefined),
    600_000,
    100,
  )

/** Waits until the watcher reports `device` ready (its first walk done, changes reported). */
const watchReady = (server: Server, device: number) =>
  until(
    `the watcher of device ${device}`,
    async () => {
      const health = (await (await fetch(`${server.base}/api/health`)).json()) as {
        watch?: { device: number; mode: string; ready: boolean; reason?: string }[]
      }
      const w = health.watch?.find((d) => d.device === device)
      return w?.ready ? w : undefined
    },
    600_000,
    100,
  )

/**
 * The figures "with events" need the device watched by events. Chokidar takes one inotify watch per
 * file and per folder, so another process holding many (a second serve watching a big device)
 * leaves too few: then the device is polled, and this benchmark stops rather than mislabel it.
 */
function eventsOnly(w: { mode: string; reason?: string }) {
  if (w.mode !== 'events')
    throw new Error(
      `the device is watched by ${w.mode} (${w.reason}); it needs about ${cfg.files + cfg.folders} free inotify watches ` +
        '(fs.inotify.max_user_watches, shared by every process of the user)',
    )
}

// ------------------------------------------------------------------ the device

const folderName = (f: number) => `reel-${String(f).padStart(4, '0')}`
const fileName = (n: number) => `clip-${String(n).padStart(6, '0')}.mov`
/** File n lives in folder n % folders. */
const filePath = (device: string, n: number) => `${device}${folderName(n % cfg.folders)}/${fileName(n)}`

function makeDevice(device: string) {
  for (let f = 0; f < cfg.folders; f++) mkdirSync(device + folderName(f), { recursive: true })
  for (let n = 0; n < cfg.files; n++) writeFileSync(filePath(device, n), `clip ${n}\n`)
}

/** find DEVICE -printf '%s %T@ %i\n', output to /dev/null; seconds. */
function find(device: string): number {
  const start = performance.now()
  const r = spawnSync(['find', device, '-printf', '%s %T@ %i\n'], { stdout: 'ignore', stderr: 'pipe' })
  const seconds = (performance.now() - start) / 1000
  if (r.exitCode !== 0) throw new Error(`find failed: ${r.stderr.toString()}`)
  return seconds
}

/** `find DEVICE -type f -exec head -c 2097152 {} + > /dev/null`: the bytes a fingerprint reads, by a walk and head; seconds. */
function headAll(device: string): number {
  const start = performance.now()
  const r = spawnSync(['find', device, '-type', 'f', '-exec', 'head', '-c', String(2 * FINGERPRINT_EDGE), '{}', '+'], {
    stdout: 'ignore',
    stderr: 'pipe',
  })
  const seconds = (performance.now() - start) / 1000
  if (r.exitCode !== 0) throw new Error(`find -exec head failed: ${r.stderr.toString()}`)
  return seconds
}

/**
 * The same bytes in this one process, the paths known: open, fstat, the first MiB and the last
 * (the whole file up to 2 MiB), close, one file after the other; seconds.
 */
function readAll(paths: readonly string[]): number {
  const buffer = Buffer.allocUnsafe(2 * FINGERPRINT_EDGE)
  const start = performance.now()
  for (const path of paths) {
    const fd = openSync(path, 'r')
    try {
      const size = fstatSync(fd).size
      const spans =
        size <= 2 * FINGERPRINT_EDGE
          ? [[0, 0, size]]
          : [
              [0, 0, FINGERPRINT_EDGE],
              [FINGERPRINT_EDGE, size - FINGERPRINT_EDGE, FINGERPRINT_EDGE],
            ]
      for (const [at, position, length] of spans) {
        for (let done = 0; done < length!; ) {
          const n = readSync(fd, buffer, at! + done, length! - done, position! + done)
          if (n === 0) throw new Error(`${path} is shorter than it was`)
          done += n
        }
      }
    } finally {
      closeSync(fd)
    }
  }
  return (performance.now() - start) / 1000
}

/** What lstat says of a file, as the scan's walk records it. */
type OnDisk = { path: string; dev: number; ino: number; stamp: number; size: number; mtimeMs: number }
const onDisk = (paths: readonly string[]): OnDisk[] =>
  paths.map((path) => {
    const s = lstatSync(path)
    return { path, dev: s.dev, ino: s.ino, stamp: stampOf(s), size: s.size, mtimeMs: s.mtimeMs }
  })

/** Each file's fingerprint as the service reads it: fingerprintAll, with the lstat's size and mtimeMs. */
async function fingerprintsOf(files: readonly OnDisk[]): Promise<Map<OnDisk, string>> {
  const read = await fingerprintAll(files)
  if (read.size !== files.length)
    throw new Error(`${files.length - read.size} of ${files.length} files could not be fingerprinted`)
  return read
}

/**
 * Registers `files` as video assets of `production` on `device`, straight into SQLite (the
 * server is stopped): the columns MediaAssets.create writes, with each file's device and inode as
 * create records them, and with `prints` its fingerprint (file_size, file_mtime, file_hash) as a
 * scan records it: steady state. Without, those stay NULL (to be fingerprinted). POST
 * /api/videoassets/ 100,000 times would take minutes and measure nothing of the watcher.
 * Returns the assets' ids, in the order of `files`.
 */
function catalogue(
  dataDir: string,
  files: readonly OnDisk[],
  device: number,
  production: number,
  prints?: Map<OnDisk, string>,
): number[] {
  const db = openDb(dbFile(dataDir))
  try {
    const client = db.$client
    const insert = client.prepare(
      `INSERT INTO media_assets (kind, name, description, production, device, path_file, is_archive, is_production,
         meta_field_store, technical, archive_details, date_add, date_mod, file_dev, file_ino, file_stamp, file_size, file_mtime, file_hash)
       VALUES ('video', ?, '', ?, ?, ?, 0, 1, '{}', '{}', '{}', ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    const now = isoTimestamp()
    const ids: number[] = []
    client.transaction(() => {
      for (const f of files) {
        const hash = prints?.get(f) ?? null
        const r = insert.run(
          basename(f.path).replace(/\.mov$/, ''),
          production,
          device,
          f.path,
          now,
          now,
          f.dev,
          f.ino,
          f.stamp,
          hash === null ? null : f.size,
          hash === null ? null : f.mtimeMs,
          hash,
        )
        ids.push(Number(r.lastInsertRowid))
      }
    })()
    client.run('PRAGMA wal_checkpoint(TRUNCATE)')
    return ids
  } finally {
    db.$client.close()
  }
}

/** The fingerprint columns of a data folder's media assets, "id size mtime hash" by id. */
function storedPrints(dataDir: string): Map<number, string> {
  const db = openDb(dbFile(dataDir))
  try {
    const rows = db.$client.query('SELECT id, file_size, file_mtime, file_hash FROM media_assets').all() as {
      id: number
      file_size: number | null
      file_mtime: number | null
      file_hash: string | null
    }[]
    return new Map(rows.map((r) => [r.id, `${r.file_size} ${r.file_mtime} ${r.file_hash}`]))
  } finally {
    db.$client.close()
  }
}

const fsType = (path: string) =>
  spawnSync(['df', '--output=fstype', path]).stdout.toString().split('\n')[1]?.trim() || '?'

// ------------------------------------------------------------------ statistics

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b)
const median = (xs: number[]) => {
  const s = sorted(xs)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
/** Nearest-rank percentile. */
const pct = (xs: number[], p: number) => sorted(xs)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)]!

// ------------------------------------------------------------------ latency

/** `wrong`: the API showed something else than the change (see Plan.shown); not counted in the latencies. */
type Latency = { kind: Kind; seconds: number; wrong?: string }

/** Victims for renames and deletes: catalogued files in a fixed-seed shuffled order, each used once. */
function victims() {
  const order = Array.from({ length: cfg.files }, (_, i) => i)
  let seed = 42
  for (let i = order.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    const j = seed % (i + 1)
    ;[order[i], order[j]] = [order[j]!, order[i]!]
  }
  let next = 0
  return () => order[next++]!
}

type Asset = { id: number; name: string; path_file: string; is_production: boolean }
/**
 * `shown` says 'yes' when the API shows the change, a sentence when it shows something else for
 * good (the change taken for another one), undefined while it shows nothing yet.
 */
type Plan = { kind: Kind; path: string; make: () => void; shown: (s: Server) => Promise<'yes' | string | undefined> }

/** The i-th change of a phase, ready to make: for renames and deletes, the asset is looked up first (untimed). */
async function plan(server: Server, device: string, phase: string, i: number, victim: () => number): Promise<Plan> {
  const kind = KINDS[i % KINDS.length]!
  if (kind === 'create') {
    const name = `new-${phase}-${String(i).padStart(4, '0')}`
    const path = `${device}${folderName((i * 7) % cfg.folders)}/${name}.mov`
    const q = `/api/videoassets/?path_file=${encodeURIComponent(path)}`
    return {
      kind,
      path,
      make: () => writeFileSync(path, Buffer.alloc(4096, i % 251)),
      shown: async (s) => {
        const asset = ((await api(s, 'GET', q)).json as Asset[])[0]
        if (!asset) return undefined
        // An import names the asset after the file; another name is an older asset moved onto it.
        return asset.name === name ? 'yes' : `the new file got the asset of ${asset.name} instead of being imported`
      },
    }
  }
  const path = filePath(device, victim())
  const found = await api(server, 'GET', `/api/videoassets/?path_file=${encodeURIComponent(path)}`)
  const asset = (found.json as Asset[])[0]
  if (!asset?.is_production) throw new Error(`${path} has no online asset: ${found.text}`)
  const record = `/api/videoassets/${asset.id}/`
  if (kind === 'rename') {
    const to = path.replace(/\.mov$/, `-${phase}.mov`)
    return {
      kind,
      path,
      make: () => renameSync(path, to),
      shown: async (s) => {
        const now = (await api(s, 'GET', record)).json as Asset
        if (now.path_file === to && now.is_production) return 'yes'
        if (now.path_file !== path) return `the asset moved to ${now.path_file}, not to ${to}`
        return now.is_production ? undefined : "the renamed file's asset went offline"
      },
    }
  }
  return {
    kind,
    path,
    make: () => unlinkSync(path),
    shown: async (s) => {
      const now = (await api(s, 'GET', record)).json as Asset
      if (now.path_file !== path) return `the deleted file's asset moved onto ${now.path_file}`
      return now.is_production ? undefined : 'yes'
    },
  }
}

/** Makes the change and times it until the API shows it (checked every `everyMs`). */
async function timed(server: Server, p: Plan, everyMs: number, timeoutMs: number): Promise<Latency> {
  p.make()
  const start = performance.now()
  let answer: string
  try {
    answer = await until(`the API to show the ${p.kind} of ${p.path}`, () => p.shown(server), timeoutMs, everyMs)
  } catch (error) {
    throw new Error(`${(error as Error).message}; the server's last log lines:\n${server.log.slice(-40).join('\n')}`)
  }
  const seconds = (performance.now() - start) / 1000
  if (answer !== 'yes') console.error(`  WRONG: ${p.kind} of ${p.path}: ${answer}`)
  return answer === 'yes' ? { kind: p.kind, seconds } : { kind: p.kind, seconds, wrong: answer }
}

function summary(all: Latency[]) {
  const latencies = all.filter((l) => !l.wrong)
  const of = (xs: number[]) => ({ n: xs.length, p50: median(xs), p95: pct(xs, 95), max: Math.max(...xs) })
  return {
    all: of(latencies.map((l) => l.seconds)),
    wrong: all.filter((l) => l.wrong),
    ...(Object.fromEntries(
      KINDS.map((k) => [k, of(latencies.filter((l) => l.kind === k).map((l) => l.seconds))]),
    ) as Record<Kind, ReturnType<typeof of>>),
  }
}

// ------------------------------------------------------------------ relink across file systems

type RelinkRound = {
  direction: string
  cp: number
  mv: number
  shown: number
  relinked: number
  moved: number
  imported: number
  offline: number
  wrong: string[]
}
type Relink =
  | { skipped: string }
  | { rounds: RelinkRound[]; hwm: number; fs: [string, string]; startPrinted: number | undefined }

/**
 * Section 5: a folder of cfg.relinkFiles catalogued clips moved with `mv` between a device in the
 * temp folder and one in cfg.shm, there and back, while one `serve` watches both by events.
 */
async function relinkCase(template: string, home: string): Promise<Relink> {
  if (!existsSync(cfg.shm)) return { skipped: `${cfg.shm} does not exist` }
  shm = realpathSync(mkdtempSync(join(cfg.shm, 'reelhouse-bench-watch-')))
  if (lstatSync(shm).dev === lstatSync(tmp!).dev)
    return { skipped: `${tmp} and ${shm} are one file system (${fsType(tmp!)})` }
  const dir = join(tmp!, 'relink')
  cpSync(template, dir, { recursive: true })
  const sides = [
    { name: 'temp', root: `${tmp}/relink-a/`, scratch: `${tmp}/relink-scratch/`, id: 0 },
    { name: 'shm', root: `${shm}/relink-b/`, scratch: `${shm}/relink-scratch/`, id: 0 },
  ]
  for (const side of sides) mkdirSync(side.root, { recursive: true })

  // Two devices, each the watch folder of a production: a clip not relinked would be imported.
  let s = await serve(dir)
  await scansIdle(s)
  for (const side of sides)
    side.id = (await created(s, '/api/devices/', { name: `relink-${side.name}`, path: side.root })).id
  const watched = (side: number) => (cfg.relinkWatch ? { upload_device: sides[side]!.id } : {})
  const moves = await created(s, '/api/productions/', { name: 'Moves', storage_root: `${home}moves`, ...watched(0) })
  await created(s, '/api/productions/', { name: 'Moves too', storage_root: `${home}moves-too`, ...watched(1) })
  await scansIdle(s)
  const before = Math.max(0, ...(await scanTasks(s)).map((t) => t.id))
  await stop(s)

  // The clips, made while no server runs, catalogued with their fingerprints.
  mkdirSync(`${sides[0]!.root}batch`)
  const names = Array.from({ length: cfg.relinkFiles }, (_, n) => `clip-${String(n).padStart(4, '0')}.mov`)
  for (const [n, name] of names.entries()) {
    const bytes = Buffer.alloc(cfg.relinkKiB * 1024 + n, n % 251)
    bytes.write(`clip ${n}\n`)
    writeFileSync(`${sides[0]!.root}batch/${name}`, bytes)
  }
  const files = onDisk(names.map((name) => `${sides[0]!.root}batch/${name}`))
  const ids = catalogue(dir, files, sides[0]!.id, moves.id, await fingerprintsOf(files))
  const nameOf = new Map(ids.map((id, i) => [id, names[i]!]))

  s = await serve(dir)
  const start = await scanOf(s, sides[0]!.id, before)
  if (
    start.result.seen !== cfg.relinkFiles ||
    start.result.offline ||
    start.result.imported ||
    start.result.relinked ||
    start.result.moved
  )
    throw new Error(`relink: the start scan of the first device: ${JSON.stringify(start.result)}`)
  for (const side of sides) eventsOnly(await watchReady(s, side.id))
  await scansIdle(s)

  /** Sentences for what is not as it should be once the folder is at `to` (empty: all is). */
  const check = async (to: (typeof sides)[number]): Promise<string[]> => {
    const list = (await api(s, 'GET', `/api/videoassets/?production=${moves.id}`)).json as (Asset & {
      device: number
    })[]
    const wrong: string[] = []
    if (list.length !== ids.length) wrong.push(`${list.length} assets in the production, not ${ids.length}`)
    const away = list.filter(
      (a) =>
        !nameOf.has(a.id) ||
        !a.is_production ||
        a.device !== to.id ||
        a.path_file !== `${to.root}batch/${nameOf.get(a.id)}`,
    )
    if (away.length)
      wrong.push(`${away.length} assets not online at their new paths, for example ${JSON.stringify(away[0])}`)
    return wrong
  }

  const rounds: RelinkRound[] = []
  for (let r = 0; r < cfg.rounds; r++) {
    const from = sides[r % 2]!
    const to = sides[(r + 1) % 2]!
    // The baseline: the same bytes copied to the same file system, outside any device.
    rmSync(to.scratch, { recursive: true, force: true })
    mkdirSync(to.scratch)
    let t = performance.now()
    const copy = spawnSync(['cp', '-r', `${from.root}batch`, to.scratch], { stdout: 'ignore', stderr: 'pipe' })
    const cp = (performance.now() - t) / 1000
    if (copy.exitCode !== 0) throw new Error(`cp -r failed: ${copy.stderr.toString()}`)
    rmSync(to.scratch, { recursive: true, force: true })

    const after = Math.max(0, ...(await scanTasks(s)).map((x) => x.id))
    t = performance.now()
    const move = spawnSync(['mv', `${from.root}batch`, to.root], { stdout: 'ignore', stderr: 'pipe' })
    const mvEnd = performance.now()
    if (move.exitCode !== 0) throw new Error(`mv failed: ${move.stderr.toString()}`)
    const assets = async () =>
      (await Promise.all(['video', 'audio', 'image'].map((k) => total(s, `/api/${k}assets/`)))).reduce(
        (x, y) => x + y,
        0,
      )
    // Done when every asset is at its new path; never done once a clip was imported as a new asset
    // (its asset holds the path for good): that round fails at once, as does one taking 120 s.
    let shown = NaN
    const wrong: string[] = []
    try {
      const outcome = await until(
        `all ${ids.length} assets at their new paths on ${to.name}`,
        async () => ((await assets()) > ids.length ? 'imported' : (await check(to)).length ? undefined : 'done'),
        120_000,
        50,
      )
      if (outcome === 'done') shown = (performance.now() - mvEnd) / 1000
    } catch (error) {
      wrong.push((error as Error).message)
    }
    // Later scans (settled files, rechecks) have their turn; then nothing may have changed.
    await Bun.sleep(2000)
    await scansIdle(s)
    wrong.push(...(await check(to)))
    const all = await assets()
    if (all !== ids.length)
      wrong.push(`${all} media assets in all, not ${ids.length}: ${all - ids.length} clips were imported as new assets`)
    const sum = (field: string) => (tasks: TaskRow[]) => tasks.reduce((x, task) => x + (task.result[field] ?? 0), 0)
    const done = (await scanTasks(s)).filter((x) => x.id > after)
    const [relinked, moved, imported, offline] = ['relinked', 'moved', 'imported', 'offline'].map((f) =>
      sum(f)(done),
    ) as [number, number, number, number]
    if (relinked !== ids.length)
      wrong.push(
        `the scans relinked ${relinked}, not ${ids.length} (moved ${moved}, offline ${offline}, imported ${imported})`,
      )
    // An import over a relinked asset's path is a re-import of its record, not a new asset: the count above does not see it.
    if (imported)
      wrong.push(`the scans imported ${imported} files (each a re-import over a moved clip's record, or a new asset)`)
    for (const w of wrong) console.error(`  WRONG: relink round ${r + 1}: ${w}`)
    const round = {
      direction: `${from.name} to ${to.name}`,
      cp,
      mv: (mvEnd - t) / 1000,
      shown,
      relinked,
      moved,
      imported,
      offline,
      wrong,
    }
    rounds.push(round)
    console.error(
      `  relink round ${r + 1} (${round.direction}): mv end to API ${Number.isFinite(shown) ? `${shown.toFixed(3)} s` : 'never'}; mv ${round.mv.toFixed(3)} s; cp -r ${cp.toFixed(3)} s${Number.isFinite(shown) ? ` (x${(shown / cp).toFixed(2)})` : ''}; ` +
        `scans: relinked ${relinked}, moved ${moved}, offline ${offline}, imported ${imported} in ${done.length} scans`,
    )
    // The catalogue is not as the next round expects it: no more rounds.
    if (wrong.length) {
      const warnings = s.log.filter((l) => / (warn|error) /.test(l) && !/ffmpeg was not found/.test(l)).slice(-10)
      console.error(
        `  relink: stopped after round ${r + 1}${warnings.length ? `; the server's last warnings:\n${warnings.join('\n')}` : ''}`,
      )
      break
    }
  }
  const hwm = memory(s.proc.pid).hwmMiB
  await stop(s)
  return { rounds, hwm, fs: [fsType(sides[0]!.root), fsType(sides[1]!.root)], startPrinted: start.result.fingerprinted }
}

// ------------------------------------------------------------------ main

async function main() {
  const host = machine()
  tmp = realpathSync(mkdtempSync(join(process.env.BENCH_WATCH_TMP ?? tmpdir(), 'reelhouse-bench-watch-')))
  const device = `${tmp}/device/`
  const home = `${tmp}/home/`
  mkdirSync(home, { recursive: true })
  let t0 = performance.now()
  makeDevice(device)
  console.error(
    `device: ${cfg.files} files in ${cfg.folders} folders made in ${((performance.now() - t0) / 1000).toFixed(1)} s (${device})`,
  )

  // The template data folder: the admin, a small device with a production on it.
  const template = join(tmp, 'template')
  let s = await serve(template)
  const homeDevice = await created(s, '/api/devices/', { name: 'home', path: home })
  await created(s, '/api/productions/', { name: 'Home', storage_root: `${home}home` })
  await scansIdle(s)
  await stop(s)

  // ---------------------------------------------------------------- 1. fresh device
  type Round = { find: number; scan: number; queued: number; wall: number; hwm: number }
  const fresh: Round[] = []
  for (let r = 0; r < cfg.rounds; r++) {
    const findFirst = r % 2 === 0
    const findBefore = findFirst ? find(device) : undefined
    const dir = join(tmp, `fresh-${r}`)
    cpSync(template, dir, { recursive: true })
    s = await serve(dir)
    await scansIdle(s)
    const posted = performance.now()
    const big = await created(s, '/api/devices/', { name: 'big', path: device })
    const task = await scanOf(s, big.id, 0)
    const wall = (performance.now() - posted) / 1000
    if (task.result.seen !== cfg.files || task.result.imported !== 0)
      throw new Error(`fresh scan: ${JSON.stringify(task.result)}`)
    eventsOnly(await watchReady(s, big.id))
    await scansIdle(s)
    const hwm = memory(s.proc.pid).hwmMiB
    await stop(s)
    rmSync(dir, { recursive: true, force: true })
    const f = findBefore ?? find(device)
    fresh.push({ find: f, scan: task.seconds, queued: task.queuedSeconds, wall, hwm })
    console.error(
      `  fresh round ${r + 1}: find ${f.toFixed(3)} s, scan ${task.seconds.toFixed(3)} s (x${(task.seconds / f).toFixed(2)}), POST to done ${wall.toFixed(2)} s, peak RSS ${hwm.toFixed(0)} MiB`,
    )
  }

  // ---------------------------------------------------------------- 2. catalogued device
  const cat = join(tmp, 'catalogued')
  cpSync(template, cat, { recursive: true })
  s = await serve(cat)
  await scansIdle(s)
  const big = await created(s, '/api/devices/', { name: 'big', path: device })
  await scanOf(s, big.id, 0)
  // The big device is the watch folder of this production: new files there are imported (section 4).
  const watchProduction = await created(s, '/api/productions/', {
    name: 'Watch',
    storage_root: `${home}watch`,
    upload_device: big.id,
  })
  await scansIdle(s)
  // Every scan from here on is a start scan of a later serve.
  const setupTask = Math.max(0, ...(await scanTasks(s)).map((t) => t.id))
  let lastTask = setupTask
  await stop(s)
  // The same data folder, its assets to be catalogued without fingerprints (section 3).
  const unprinted = join(tmp, 'unprinted')
  cpSync(cat, unprinted, { recursive: true })
  const paths = Array.from({ length: cfg.files }, (_, n) => filePath(device, n))
  t0 = performance.now()
  const files = onDisk(paths)
  const filePrints = await fingerprintsOf(files)
  const t1 = performance.now()
  catalogue(cat, files, big.id, watchProduction.id, filePrints)
  catalogue(unprinted, files, big.id, watchProduction.id)
  const catPrints = storedPrints(cat)
  console.error(
    `catalogued ${cfg.files} assets in SQLite in ${((performance.now() - t0) / 1000).toFixed(1)} s (their fingerprints read in ${((t1 - t0) / 1000).toFixed(1)} s)`,
  )

  /** `serve` on `dir` until its start scan of the big device is done and it watches by events; its peak RSS. */
  async function startScan(dir: string, after: number) {
    const started = performance.now()
    const server = await serve(dir)
    const task = await scanOf(server, big.id, after)
    const wall = (performance.now() - started) / 1000
    eventsOnly(await watchReady(server, big.id))
    await scansIdle(server)
    const hwm = memory(server.proc.pid).hwmMiB
    await stop(server)
    return { task, wall, hwm }
  }
  /** What a start scan of the catalogued device must say but `fingerprinted` (checked apart). */
  const unchanged = (what: string, result: Record<string, number>) => {
    const { seen, offline, online, moved, relinked, imported } = result
    if (seen !== cfg.files || offline || online || moved || relinked || imported)
      throw new Error(`${what}: ${JSON.stringify(result)}`)
  }
  /** `fingerprinted` of every steady-state start scan (sections 2 and 3): 0 each (a check). */
  const steadyPrinted: (number | undefined)[] = []
  const steadyScan = async () => {
    const { task, wall, hwm } = await startScan(cat, lastTask)
    lastTask = task.id
    unchanged('catalogued scan', task.result)
    steadyPrinted.push(task.result.fingerprinted)
    if (task.result.fingerprinted !== 0)
      console.error(
        `  WRONG: the steady-state start scan fingerprinted ${task.result.fingerprinted} files, not 0: ${JSON.stringify(task.result)}`,
      )
    return { task, wall, hwm }
  }

  const restart: Round[] = []
  for (let r = 0; r < cfg.rounds; r++) {
    const findFirst = r % 2 === 0
    const findBefore = findFirst ? find(device) : undefined
    const { task, wall, hwm } = await steadyScan()
    const f = findBefore ?? find(device)
    restart.push({ find: f, scan: task.seconds, queued: task.queuedSeconds, wall, hwm })
    console.error(
      `  catalogued round ${r + 1}: find ${f.toFixed(3)} s, scan ${task.seconds.toFixed(3)} s (x${(task.seconds / f).toFixed(2)}), spawn to done ${wall.toFixed(2)} s, peak RSS ${hwm.toFixed(0)} MiB, fingerprinted ${task.result.fingerprinted}`,
    )
  }

  // ---------------------------------------------------------------- 3. fingerprinting new files
  // Per round: the steady-state start scan (the catalogued folder) and the start scan of a copy of
  // the catalogue without fingerprints; the difference is the fingerprinting. Baselines: the same
  // bytes read by find -exec head, and by one Bun process. Baselines first, next round last.
  type Printing = {
    steady: number
    unprinted: number
    prints: number
    head: number
    read: number
    hwm: number
    fingerprinted: number | undefined
    mismatched: number
  }
  const printing: Printing[] = []
  for (let r = 0; r < cfg.rounds; r++) {
    const dir = join(tmp, `unprinted-${r}`)
    cpSync(unprinted, dir, { recursive: true })
    const round: Partial<Printing> = {}
    const steps: Record<'head' | 'read' | 'steady' | 'unprinted', () => Promise<void>> = {
      head: async () => void (round.head = headAll(device)),
      read: async () => void (round.read = readAll(paths)),
      steady: async () => {
        const { task, hwm } = await steadyScan()
        round.steady = task.seconds
        round.hwm = Math.max(round.hwm ?? 0, hwm)
      },
      unprinted: async () => {
        const { task, hwm } = await startScan(dir, setupTask)
        unchanged('scan of the catalogue without fingerprints', task.result)
        round.fingerprinted = task.result.fingerprinted
        if (round.fingerprinted !== cfg.files)
          console.error(
            `  WRONG: the start scan of the catalogue without fingerprints fingerprinted ${round.fingerprinted} files, not ${cfg.files}: ${JSON.stringify(task.result)}`,
          )
        round.unprinted = task.seconds
        round.hwm = Math.max(round.hwm ?? 0, hwm)
      },
    }
    const order =
      r % 2 === 0
        ? (['head', 'read', 'steady', 'unprinted'] as const)
        : (['unprinted', 'steady', 'read', 'head'] as const)
    for (const step of order) await steps[step]()
    // The service's fingerprints are the ones this bench put in the catalogued folder.
    const stored = storedPrints(dir)
    round.mismatched = [...catPrints].filter(([id, print]) => stored.get(id) !== print).length
    if (round.mismatched) {
      const [id, print] = [...catPrints].find(([i, p]) => stored.get(i) !== p)!
      console.error(
        `  WRONG: ${round.mismatched} assets' fingerprints differ from the bench's, for example asset ${id}: service ${stored.get(id)}, bench ${print}`,
      )
    }
    rmSync(dir, { recursive: true, force: true })
    const p = { ...round, prints: round.unprinted! - round.steady! } as Printing
    printing.push(p)
    console.error(
      `  fingerprinting round ${r + 1} (${order.join(', ')}): scan ${p.unprinted.toFixed(3)} s − steady ${p.steady.toFixed(3)} s = ${p.prints.toFixed(3)} s; ` +
        `find -exec head ${p.head.toFixed(3)} s (x${(p.prints / p.head).toFixed(2)}), one process ${p.read.toFixed(3)} s (x${(p.prints / p.read).toFixed(2)}), peak RSS ${p.hwm.toFixed(0)} MiB`,
    )
  }

  // ---------------------------------------------------------------- 4. latency
  const victim = victims()

  // With events: one change at a time, each after the previous one showed.
  s = await serve(cat)
  let task = await scanOf(s, big.id, lastTask)
  lastTask = task.id
  eventsOnly(await watchReady(s, big.id))
  const events: Latency[] = []
  for (let i = 0; i < cfg.changes; i++) {
    const p = await plan(s, device, 'events', i, victim)
    events.push(await timed(s, p, 20, 60_000))
    if ((i + 1) % 50 === 0)
      console.error(
        `  events: ${i + 1} changes, p95 so far ${pct(
          events.map((l) => l.seconds),
          95,
        ).toFixed(2)} s`,
      )
  }
  const eventsMem = memory(s.proc.pid)
  await stop(s)

  // By polling (--poll): one change every pollPaceMs, each timed on its own.
  s = await serve(cat, ['--poll', '--poll-interval', String(cfg.pollInterval)])
  task = await scanOf(s, big.id, lastTask)
  lastTask = task.id
  t0 = performance.now()
  const pollMode = await watchReady(s, big.id)
  const pollReady = (performance.now() - t0) / 1000
  if (pollMode.mode !== 'polling') throw new Error(`the device is watched by ${pollMode.mode}`)
  const plans: Plan[] = []
  for (let i = 0; i < cfg.pollChanges; i++) plans.push(await plan(s, device, 'poll', i, victim))
  const pending: Promise<Latency>[] = []
  const paceStart = performance.now()
  for (const [i, p] of plans.entries()) {
    await Bun.sleep(Math.max(0, paceStart + i * cfg.pollPaceMs - performance.now()))
    pending.push(timed(s, p, 200, 60_000 + cfg.pollInterval * 3000))
  }
  const polled = await Promise.all(pending)
  const pollMem = memory(s.proc.pid)
  await stop(s)

  // ---------------------------------------------------------------- 5. relink across file systems
  const relink = await relinkCase(template, home)
  if ('skipped' in relink) console.error(`relink across file systems: skipped: ${relink.skipped}`)

  // ---------------------------------------------------------------- results
  const ratios = (rounds: Round[]) => rounds.map((r) => r.scan / r.find)
  const freshRatio = median(ratios(fresh))
  const restartRatio = median(ratios(restart))
  const ev = summary(events)
  const po = summary(polled)
  const relinked = 'rounds' in relink ? relink : undefined
  const printHwm = Math.max(...printing.map((r) => r.hwm))
  const peak = Math.max(
    ...fresh.map((r) => r.hwm),
    ...restart.map((r) => r.hwm),
    printHwm,
    eventsMem.hwmMiB,
    pollMem.hwmMiB,
    relinked?.hwm ?? 0,
  )
  const prints = {
    seconds: median(printing.map((r) => r.prints)),
    head: median(printing.map((r) => r.prints / r.head)),
    read: median(printing.map((r) => r.prints / r.read)),
  }
  // Medians of the rounds whose assets all came back (a failed round has no time).
  const relinkTimed = relinked?.rounds.filter((r) => Number.isFinite(r.shown)) ?? []
  const relinkRatio = relinkTimed.length ? median(relinkTimed.map((r) => r.shown / r.cp)) : NaN
  const pollTarget = cfg.pollInterval + TARGET.pollSlack
  const pass = {
    fresh: freshRatio <= TARGET.ratio,
    restart: restartRatio <= TARGET.ratio,
    rss: peak < TARGET.rssMiB,
    events: ev.all.p95 < TARGET.eventsP95,
    poll: po.all.p95 < pollTarget,
    // Not a target of the issue but a check: a change the API shows as another change is wrong data.
    correct: ev.wrong.length + po.wrong.length === 0,
    // Checks too: a steady-state scan reads no file; a scan without fingerprints reads every one,
    // and stores what the bench read; every moved clip is relinked, nothing imported.
    steady: steadyPrinted.every((x) => x === 0) && (relinked?.startPrinted ?? 0) === 0,
    printed: printing.every((r) => r.fingerprinted === cfg.files && r.mismatched === 0),
    relinked: relinked ? relinked.rounds.every((r) => !r.wrong.length) : true,
  }
  const mark = (ok: boolean) => (ok ? 'pass' : 'FAIL')
  const n = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })
  const secs = (xs: number[]) => xs.map((x) => n(x, 2)).join(', ')
  const kinds = (s: ReturnType<typeof summary>) => KINDS.map((k) => `${k} ${n(s[k].p95, 2)}`).join(', ')
  const wrongs = (s: ReturnType<typeof summary>) =>
    `${s.wrong.length}${s.wrong.length ? ` (${KINDS.map((k) => `${k} ${s.wrong.filter((l) => l.kind === k).length}`).join(', ')})` : ''}`

  const rows: [string, string, string, string][] = [
    [
      `Start scan, fresh device (${n(cfg.files)} files new), median`,
      `${n(median(fresh.map((r) => r.scan)), 2)} s; find ${n(median(fresh.map((r) => r.find)), 2)} s`,
      '',
      '',
    ],
    [
      'Fresh device: scan / find (median of per-round ratios)',
      n(freshRatio, 2),
      `<= ${TARGET.ratio}`,
      mark(pass.fresh),
    ],
    [
      'Fresh device: POST /api/devices/ to scan done (watcher walk, then the scan), median',
      `${n(median(fresh.map((r) => r.wall)), 2)} s`,
      '',
      '',
    ],
    [
      `Start scan, catalogued device (${n(cfg.files)} assets, nothing changed), median`,
      `${n(median(restart.map((r) => r.scan)), 2)} s; find ${n(median(restart.map((r) => r.find)), 2)} s`,
      '',
      '',
    ],
    [
      'Catalogued device: scan / find (median of per-round ratios)',
      n(restartRatio, 2),
      `<= ${TARGET.ratio}`,
      mark(pass.restart),
    ],
    [
      'Catalogued device: serve spawned to scan done (start, watcher walk, then the scan), median',
      `${n(median(restart.map((r) => r.wall)), 2)} s`,
      '',
      '',
    ],
    [
      'Steady-state start scans: files fingerprinted (each scan)',
      `${steadyPrinted.map((x) => String(x)).join(', ')}${relinked ? `; relink device: ${relinked.startPrinted}` : ''}`,
      '0',
      mark(pass.steady),
    ],
    [
      `Fingerprinting ${n(cfg.files)} new files (start scan without fingerprints − steady start scan), median`,
      `${n(prints.seconds, 2)} s (${n(median(printing.map((r) => r.unprinted)), 2)} s − ${n(median(printing.map((r) => r.steady)), 2)} s); find -exec head ${n(median(printing.map((r) => r.head)), 2)} s; one Bun process ${n(median(printing.map((r) => r.read)), 2)} s`,
      'informative',
      '',
    ],
    ['Fingerprinting / find -exec head -c 2 MiB (median of per-round ratios)', n(prints.head, 2), 'informative', ''],
    [
      'Fingerprinting / one Bun process reading the same bytes (median of per-round ratios)',
      n(prints.read, 2),
      'informative',
      '',
    ],
    [
      "Fingerprinting: files fingerprinted by each scan; fingerprints equal to the bench's",
      `${printing.map((r) => String(r.fingerprinted)).join(', ')}; ${printing.every((r) => r.mismatched === 0) ? 'all equal' : `${printing.map((r) => r.mismatched).join(', ')} differ`}`,
      `${n(cfg.files)}; all`,
      mark(pass.printed),
    ],
    ...(relinked
      ? ([
          [
            `Relink of a folder of ${n(cfg.relinkFiles)} files moved across file systems: mv end to API, median`,
            relinkTimed.length
              ? `${n(median(relinkTimed.map((r) => r.shown)), 2)} s (mv ${n(median(relinkTimed.map((r) => r.mv)), 2)} s; cp -r ${n(median(relinkTimed.map((r) => r.cp)), 2)} s)${relinkTimed.length < cfg.rounds ? `, ${relinkTimed.length} of ${cfg.rounds} rounds` : ''}`
              : 'never: see the check below',
            'informative',
            '',
          ],
          [
            'Relink: mv end to API / cp -r (median of per-round ratios)',
            relinkTimed.length ? n(relinkRatio, 2) : '-',
            'informative',
            '',
          ],
          [
            'Relink: every asset online at its new path, nothing imported, all relinked',
            relinked.rounds.every((r) => !r.wrong.length)
              ? `yes, ${relinked.rounds.length} rounds`
              : `no: ${relinked.rounds.flatMap((r) => r.wrong).length} problems`,
            'yes',
            mark(pass.relinked),
          ],
        ] as [string, string, string, string][])
      : ([
          [
            `Relink of a folder of ${n(cfg.relinkFiles)} files moved across file systems`,
            `skipped: ${(relink as { skipped: string }).skipped.replaceAll(tmp!, '…')}`,
            'informative',
            '',
          ],
        ] as [string, string, string, string][])),
    [
      'Peak RSS of the server (VmHWM), highest of all servers',
      `${n(peak, 0)} MiB (events: ${n(eventsMem.hwmMiB, 0)}, ${n(eventsMem.rssMiB, 0)} after the changes; polling: ${n(pollMem.hwmMiB, 0)}, fresh scans: ${n(Math.max(...fresh.map((r) => r.hwm)), 0)}, restarts: ${n(Math.max(...restart.map((r) => r.hwm)), 0)}, fingerprinting: ${n(printHwm, 0)}${relinked ? `, relinks: ${n(relinked.hwm, 0)}` : ''})`,
      `< ${TARGET.rssMiB} MiB`,
      mark(pass.rss),
    ],
    [
      `Change to API, events, p95 of ${ev.all.n}`,
      `${n(ev.all.p95, 2)} s (p50 ${n(ev.all.p50, 2)} s, max ${n(ev.all.max, 2)} s)`,
      `< ${TARGET.eventsP95} s`,
      mark(pass.events),
    ],
    ['Events, p95 by kind', kinds(ev), '', ''],
    [
      `Change to API, polling every ${cfg.pollInterval} s, p95 of ${po.all.n}`,
      `${n(po.all.p95, 2)} s (p50 ${n(po.all.p50, 2)} s, max ${n(po.all.max, 2)} s)`,
      `< ${pollTarget} s`,
      mark(pass.poll),
    ],
    ['Polling, p95 by kind', kinds(po), '', ''],
    [
      'Changes the API showed as another change (not in the latencies above)',
      `events ${wrongs(ev)}; polling ${wrongs(po)}`,
      '0',
      mark(pass.correct),
    ],
  ]

  console.log('\nReelhouse watch benchmark')
  console.log(
    `${host.date}; ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB; Linux ${host.kernel}; bun ${host.bun}; load ${host.load}`,
  )
  const w = [Math.max(...rows.map((r) => r[0].length)), Math.max(...rows.map((r) => r[1].length))]
  for (const r of rows) console.log(`${r[0].padEnd(w[0]!)}  ${r[1].padEnd(w[1]!)}  ${r[2].padEnd(9)} ${r[3]}`)
  const roundsText = [
    `Fresh device, per round (s): find ${secs(fresh.map((r) => r.find))}; scan ${secs(fresh.map((r) => r.scan))}; ratios ${secs(ratios(fresh))}; POST to scan done ${secs(fresh.map((r) => r.wall))}.`,
    `Catalogued device, per round (s): find ${secs(restart.map((r) => r.find))}; scan ${secs(restart.map((r) => r.scan))}; ratios ${secs(ratios(restart))}; process spawned to scan done ${secs(restart.map((r) => r.wall))}.`,
    `Fingerprinting, per round (s): scan without fingerprints ${secs(printing.map((r) => r.unprinted))}; steady scan ${secs(printing.map((r) => r.steady))}; difference ${secs(printing.map((r) => r.prints))}; find -exec head ${secs(printing.map((r) => r.head))}; one Bun process ${secs(printing.map((r) => r.read))}; ratios to head ${secs(printing.map((r) => r.prints / r.head))}, to one process ${secs(printing.map((r) => r.prints / r.read))}.`,
    ...(relinked
      ? [
          `Relink, per round (s): ${relinked.rounds.map((r) => `${r.direction}: mv end to API ${Number.isFinite(r.shown) ? n(r.shown, 2) : 'never'}, mv ${n(r.mv, 2)}, cp -r ${n(r.cp, 2)}, ratio ${Number.isFinite(r.shown) ? n(r.shown / r.cp, 2) : '-'}`).join('; ')}. ` +
            `Scans after each mv: relinked ${relinked.rounds.map((r) => r.relinked).join(', ')}; moved ${relinked.rounds.map((r) => r.moved).join(', ')}; imported ${relinked.rounds.map((r) => r.imported).join(', ')}.`,
        ]
      : []),
    ...(relinked?.rounds.some((r) => r.wrong.length)
      ? [
          `Relink problems, for example: ${relinked.rounds
            .flatMap((r) => r.wrong)
            .slice(0, 3)
            .map((w) => w.replaceAll(tmp!, '…').replaceAll(shm ?? '\u0000', '…'))
            .join('; ')}.`,
        ]
      : []),
    `Latency p50 by kind (s): events ${KINDS.map((k) => `${k} ${n(ev[k].p50, 2)}`).join(', ')}; polling ${KINDS.map((k) => `${k} ${n(po[k].p50, 2)}`).join(', ')}. Polling: the device was ready ${n(pollReady, 1)} s after the start scan.`,
  ]
  const examples = [...ev.wrong, ...po.wrong].slice(0, 3).map((l) => `${l.kind}: ${l.wrong}`)
  if (examples.length)
    roundsText.push(
      `Changes shown as another change, for example: ${examples.map((e) => e.replaceAll(tmp!, '…')).join('; ')}.`,
    )
  for (const line of roundsText) console.log(line)

  if (process.env.BENCH_NO_DOC !== '1') {
    const section = `## Watcher: start scan against find, fingerprinting, relinks across file systems, peak RSS, change-to-API latency

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load})
- Bun ${host.bun}; ${spawnSync(['find', '--version']).stdout.toString().split('\n')[0]}; file system ${spawnSync(['df', '--output=fstype', tmp]).stdout.toString().split('\n')[1]?.trim() ?? '?'}
- Data: one device of ${n(cfg.files)} files in ${n(cfg.folders)} folders (\`reel-NNNN/clip-NNNNNN.mov\`, a few bytes each)${relinked ? `; for the relinks, ${n(cfg.relinkFiles)} clips of ${n(cfg.relinkKiB)} KiB + n bytes moved between ${relinked.fs[0]} (the temp folder) and ${relinked.fs[1]} (${cfg.shm})` : ''}

| Measure | Result | Target | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

${roundsText.join('\n')}

What is measured (bench/watch.ts):

- **The server** is \`bun src/main.ts serve --data DIR --port 0 --ffmpeg EMPTYDIR --settle 1\` in its
  own process (\`--poll --poll-interval ${cfg.pollInterval}\` for the polling figures), driven over HTTP
  with the admin key of DIR/admin.token. Peak RSS is its \`VmHWM\` from /proc/PID/status, read while it
  still watches: after the start scan and the watcher's first walk, after the changes, and after the
  relinks.
- **Start scan**: the \`scan\` task of the device (\`GET /api/tasks/?kind=scan\`), timed by its own
  \`date_start\` and \`date_end\`; its \`result\` is checked (${n(cfg.files)} files seen, nothing offline,
  moved or imported). As for users, the scan is queued once the watcher's first walk of the same
  tree is done (docs/watcher.md), so the two do not overlap; the time from the request (or the
  start) to the scan's end, walk included, is shown beside it.
  *Fresh*: every round a new data folder (the admin and a production on another, small device),
  then \`POST /api/devices/\` for the folder: the scan of a created device starts then; not a watch
  folder, so nothing is imported. *Catalogued*, the common restart: the device created through the
  API, then its ${n(cfg.files)} video assets inserted straight into SQLite while the server was stopped
  (the columns \`MediaAssets.create\` writes: kind, name, description, production, device,
  path_file, is_archive, is_production, meta_field_store, technical, archive_details, date_add,
  date_mod, and each file's file_dev, file_ino and file_stamp as lstat gives them; 100,000 POSTs would take
  minutes and measure nothing of the watcher); every round starts \`serve\` on it and times the start
  scan. The rows are in steady state, as after a start that has seen the device before: file_size,
  file_mtime and file_hash are filled as a scan fills them (\`fingerprintAll\` of
  src/storage/fingerprint.ts, with each file's lstat size and mtimeMs), and every steady-state scan
  must say \`fingerprinted: 0\` (a check).
  **Baseline**: \`find DEVICE -printf '%s %T@ %i\\n' > /dev/null\` (one lstat per entry, as the
  scan's walk), run right before the scan in odd rounds and right after it in even ones, with no
  server running; ${cfg.rounds} rounds; the ratio is the median of the per-round ratios. Both read a
  warm page cache.
- **Fingerprinting new files**: the same catalogue with file_size, file_mtime and file_hash NULL
  (as after an upgrade to fingerprints), a new copy every round. The fingerprinting time is that
  start scan's task duration minus the steady-state start scan's, both in the same round (the
  walk and the reconcile are the same in both); its scan must say \`fingerprinted: ${n(cfg.files)}\` and
  the hashes it stored must equal the ones the bench put in the catalogued folder (checks).
  **Baselines**, reading the same bytes in the same round: \`find DEVICE -type f -exec head -c 2097152
  {} + > /dev/null\` (a walk, then head over batches of files) and one Bun process reading each file
  as the fingerprint does (open, fstat, the first and the last MiB, close; one file after the other,
  the paths known, no walk). Baselines first in odd rounds, last in even ones; the ratios are the
  medians of the per-round ratios. The files are a few bytes each: every read is of the whole file,
  so this measures the cost per file (open, stat, read, hash, close, the row's update), not bytes.
  No target is stated for it (informative).
- **Relink across file systems**: ${
      relinked
        ? `two devices, \`relink-a\` in the temp folder (${relinked.fs[0]})
  and \`relink-b\` in ${cfg.shm} (${relinked.fs[1]}),`
        : `two devices, one in the temp folder and one in ${cfg.shm}
  (skipped in this run: they were one file system or ${cfg.shm} was missing),`
    }
  ${cfg.relinkWatch ? 'each the watch folder (upload device) of a production, so a clip not relinked would be imported.' : 'neither a watch folder (BENCH_WATCH_RELINK_WATCH=0: nothing can be imported, the relink alone is timed).'}
  ${n(cfg.relinkFiles)} clips (${n(cfg.relinkKiB)} KiB + n bytes, distinct) in a folder of the first, inserted as
  assets with their fingerprints while no server ran. One \`serve\` watches both by events; every
  round \`mv\`s the folder to the other device (there, then back) and times from the end of the mv
  (copy, then removal of the original) until \`GET /api/videoassets/?production=\` (asked every 50 ms)
  shows every asset online at its new path on the new device. Checked every round, 2 s later and
  once no scan is queued or running: the same assets (ids), each at its new path, no media asset
  more (nothing imported), and the \`relinked\` of the scans since the mv adding up to
  ${n(cfg.relinkFiles)}. **Baseline**: \`cp -r\` of the folder to a scratch folder on the destination's file
  system outside both devices (the byte copy the mv itself does), right before the mv; the ratio is
  the median of the per-round ratios. No target is stated for it (informative).
- **Latency**: \`serve\` on the catalogued device, which is also the watch folder (upload device) of a
  production. Changes, in turn: *create* a 4 KiB \`.mov\` (shown when \`GET /api/videoassets/?path_file=\`
  finds its asset: imported once it stayed unchanged for \`--settle 1\` s), *rename* a catalogued clip
  in its folder (shown when \`GET /api/videoassets/ID/\` has the new \`path_file\`), *delete* a catalogued
  clip (shown when that record is \`is_production: false\`). Timed from the moment the change is made
  on disk to the first answer showing it (asked every 20 ms with events, every 200 ms when polling).
  With events, ${cfg.changes} changes one at a time, each after the previous one showed. When polling,
  ${cfg.pollChanges} changes one every ${cfg.pollPaceMs} ms without waiting (one after the other would take
  ${cfg.pollChanges} × several seconds), so they fall at every point of the poll cycle; each is timed on its own.
- **Changes shown as another change** are counted apart and left out of the latencies: a create
  whose path shows an older asset (named after another file: a deleted clip's asset moved onto the
  new file, because the file system gave the new file the deleted one's inode and the scan took
  the pair for a rename), a delete whose asset moved to another path, a rename whose asset went
  offline or elsewhere.
- Where the scan's time and the memory go, step by step and with the watcher alone:
  \`bun bench/watch-profile.ts\` (prints, writes nothing).
`
    // BENCH_WATCH_DOC: another file to write the section to (to look at a trial run's).
    const doc = process.env.BENCH_WATCH_DOC ?? join(ROOT, 'docs', 'benchmarks.md')
    writeSection(doc, 'watch', section)
    console.error(`wrote ${doc} (watch)`)
  }
  return Object.values(pass).every(Boolean)
}

await runBench(main, stopAll)
