// Where the start scan's time and the server's memory go (a helper of bench/watch.ts, run by
// hand): builds a device of BENCH_WATCH_FILES files in BENCH_WATCH_FOLDERS folders and a
// catalogue in a temporary folder, then, in this process and without the watcher, times (a) the
// scan task itself through the task runner, and (b) each step of scan.task.ts replayed with the
// same calls: the walk, the catalogue queries, the identity lookups, reconcile, the transaction;
// fresh (no rows) and catalogued (a row per file, with its identity). Then, each in a process of
// its own, the watcher alone (watcher.ts, by events and by polling): time to ready and peak RSS.
// Prints tables; writes nothing.
// Usage: bun bench/watch-profile.ts   (BENCH_WATCH_FILES, BENCH_WATCH_FOLDERS, BENCH_WATCH_ROUNDS)
import { spawnSync } from 'bun'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createCore } from '../src/core.ts'
import { openDb } from '../src/db/client.ts'
import { migrate } from '../src/db/migrate.ts'
import { listTree } from '../src/storage/fs.ts'
import { excluded } from '../src/watch/ingest.ts'
import { reconcile, type DiskEntry } from '../src/watch/reconcile.ts'
import { isoTimestamp } from '../src/util/time.ts'
import { silentLog } from '../src/util/log.ts'
import { createWatcher } from '../src/watch/watcher.ts'
import { stampOf } from '../src/storage/paths.ts'
import { envNumber } from './procs.ts'
import { runSync } from '../src/db/port.ts'

const num = envNumber
const FILES = num('BENCH_WATCH_FILES', 100_000)
const FOLDERS = num('BENCH_WATCH_FOLDERS', 1000)
const ROUNDS = num('BENCH_WATCH_ROUNDS', 3)

const hwm = () => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024
const resetPeak = () => writeFileSync('/proc/self/clear_refs', '5')

// The watcher alone, in a child process: bun bench/watch-profile.ts --watcher events|poll DEVICE
if (process.argv[2] === '--watcher') {
  const t = performance.now()
  const w = createWatcher({
    onEvent: () => {},
    exclude: excluded,
    poll: process.argv[3] === 'poll',
    pollIntervalMs: 10_000,
    log: silentLog,
  })
  w.watch({ id: 1, path: process.argv[4]!, protocol: 'file' })
  for (;;) {
    await Bun.sleep(50)
    const st = w.status()[0]!
    if (st.ready) {
      // Polling reports ready one interval after chokidar's walk (watcher.ts); that wait is not work.
      const seconds = (performance.now() - t) / 1000 - (st.mode === 'polling' ? 10 : 0)
      console.log(
        `  watcher alone, ${st.mode}: first walk ${seconds.toFixed(1)} s, peak RSS ${hwm().toFixed(0)} MiB${st.reason ? ` (${st.reason})` : ''}`,
      )
      break
    }
  }
  await w.close()
  process.exit(0)
}

// A child (--scan KIND DEVICE) works on its parent's device, in a temporary folder of its own.
const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'reelhouse-watch-profile-')))
const device = process.argv[2] === '--scan' ? process.argv[4]! : `${tmp}/device/`
const folder = (f: number) => `reel-${String(f).padStart(4, '0')}`
const file = (n: number) => `${device}${folder(n % FOLDERS)}/clip-${String(n).padStart(6, '0')}.mov`
if (process.argv[2] !== '--scan') {
  for (let f = 0; f < FOLDERS; f++) mkdirSync(device + folder(f), { recursive: true })
  for (let n = 0; n < FILES; n++) writeFileSync(file(n), `clip ${n}\n`)
}

function catalogueWith(rows: boolean) {
  const dir = mkdtempSync(join(tmp, 'data-'))
  const db = openDb(join(dir, 'reelhouse.db'))
  migrate(db)
  const c = db.$client
  const now = isoTimestamp()
  const dev = c
    .query<{ id: number }, [string, string, string, string]>(
      'INSERT INTO devices (name, display_name, path, date_add) VALUES (?, ?, ?, ?) RETURNING id',
    )
    .get('big', 'big', device, now)!.id
  mkdirSync(`${tmp}/home`, { recursive: true })
  const home = c
    .query<{ id: number }, [string, string, string, string]>(
      'INSERT INTO devices (name, display_name, path, date_add) VALUES (?, ?, ?, ?) RETURNING id',
    )
    .get('home', 'home', `${tmp}/home/`, now)!.id
  const prod = c
    .query<{ id: number }, [string, string, string, string, number, number, number, number, string]>(
      `INSERT INTO productions (name, codename, storage_root, proxy_root, upload_device, audioasset_device, imageasset_device, videoasset_device, date_add)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    )
    .get('Home', 'home', `${tmp}/home/h/`, `${tmp}/home/h/proxies/`, home, home, home, home, now)!.id
  if (rows) {
    const insert =
      c.prepare(`INSERT INTO media_assets (kind, name, description, production, device, path_file, is_archive, is_production,
      meta_field_store, technical, archive_details, date_add, date_mod, file_dev, file_ino, file_stamp) VALUES ('video', ?, '', ?, ?, ?, 0, 1, '{}', '{}', '{}', ?, ?, ?, ?, ?)`)
    c.transaction(() => {
      for (let n = 0; n < FILES; n++) {
        const s = lstatSync(file(n))
        insert.run(`clip ${n}`, prod, dev, file(n), now, now, s.dev, s.ino, stampOf(s))
      }
    })()
  }
  return { db, dev }
}

const ms = (t: number) => performance.now() - t

async function profile(label: string, rows: boolean) {
  const { db, dev } = catalogueWith(rows)
  Bun.gc(true)
  const before = hwm()
  resetPeak()
  const core = createCore(db, { concurrency: 2 })
  core.start()
  const results: Record<string, number[]> = {}
  const add = (k: string, v: number) => (results[k] ??= []).push(v)
  for (let r = 0; r < ROUNDS; r++) {
    // The find baseline.
    let t = performance.now()
    spawnSync(['find', device, '-printf', '%s %T@ %i\n'], { stdout: 'ignore' })
    add('find', ms(t))
    // (a) the real scan task.
    t = performance.now()
    runSync(
      db,
      core.runner.enqueue({
        kind: 'scan',
        target: { device: dev },
        production: null,
        params: { device: dev, paths: null },
      }),
    )
    await core.runner.idle()
    add('scan task (runner)', ms(t))
    if (r === 0) add('peak RSS after the first scan task (MiB)', hwm())
    // (b) its steps, replayed.
    const media = core.media
    t = performance.now()
    const entries = await listTree(device, undefined, { skip: (r) => excluded(r), live: true })
    add('1 walk: listTree (opendir + lstatSync per entry)', ms(t))
    t = performance.now()
    const disk: DiskEntry[] = entries
      .filter((e) => e.kind === 'file' || e.kind === 'dir')
      .map((e) => {
        const path = e.rel ? device + e.rel : device
        return {
          path: e.kind === 'dir' && !path.endsWith('/') ? path + '/' : path,
          device: dev,
          kind: e.kind as 'file' | 'dir',
          dev: e.dev,
          ino: e.ino,
          stamp: e.stamp,
          size: e.size,
          mtimeMs: e.mtimeMs,
        }
      })
    add('2 disk entries', ms(t))
    t = performance.now()
    const under = runSync(db, media.underForScan(device))
    add(`3 media.underForScan(root) (${under.length} rows)`, ms(t))
    t = performance.now()
    const catalogued = new Set(under.map((r) => r.path_file))
    const uncatalogued = disk.filter((e) => e.kind === 'file' && !catalogued.has(e.path))
    const extra = await media.byIdentities(uncatalogued)
    add(
      `4 byIdentities of the uncatalogued files (${uncatalogued.length}, ${Math.ceil(uncatalogued.length / 1000)} queries)`,
      ms(t),
    )
    t = performance.now()
    const out = reconcile(
      disk,
      {
        media: under,
        projects: [],
      },
      {
        scope: [device],
        roots: new Map([[dev, device]]),
        rootPresent: () => existsSync(device),
        ingestInto: () => undefined,
        diskFiltered: true,
      },
    )
    add('5 reconcile', ms(t))
    t = performance.now()
    db.transaction(() => {
      const byId = new Map(under.map((r) => [r.id, r]))
      runSync(
        db,
        media.applyScan({
          offline: out.offline.map((id) => ({ id, from: byId.get(id)!.path_file, archive: false })),
          online: out.online.map((id) => ({ id, at: byId.get(id)!.path_file, archive: false })),
          relocations: out.relocations.map((r) => ({
            ...r,
            from: byId.get(r.id)!.path_file,
            kind: 'video' as const,
            archive: false,
          })),
        }),
      )
    })
    add(`6 transaction (${out.relocations.length} relocations)`, ms(t))
    // (c) the scan task with the watcher's first walk beside it in the same process, as serve runs them.
    const watcher = createWatcher({
      onEvent: () => {},
      exclude: excluded,
      poll: false,
      pollIntervalMs: 10_000,
      log: silentLog,
    })
    t = performance.now()
    watcher.watch({ id: dev, path: device, protocol: 'file' })
    runSync(
      db,
      core.runner.enqueue({
        kind: 'scan',
        target: { device: dev },
        production: null,
        params: { device: dev, paths: null },
      }),
    )
    await core.runner.idle()
    add('scan task with the watcher starting beside it (as in serve)', ms(t))
    while (!watcher.status()[0]?.ready) await Bun.sleep(20)
    add('  the watcher ready (its first walk done)', ms(t))
    await watcher.close()
  }
  await core.stop()
  db.$client.close()
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log(
    `\n${label}: ${FILES} files in ${FOLDERS} folders, median of ${ROUNDS} (ms); RSS before the scans ${before.toFixed(0)} MiB`,
  )
  for (const [k, v] of Object.entries(results))
    console.log(`  ${k.padEnd(62)} ${med(v).toFixed(0).padStart(7)}   (${v.map((x) => x.toFixed(0)).join(', ')})`)
}

// Each case in a process of its own, so that each peak RSS is that case's alone.
const child = (...args: string[]) =>
  spawnSync([process.execPath, import.meta.path, ...args], { stdout: 'inherit', stderr: 'inherit' })
try {
  if (process.argv[2] === '--scan') {
    await profile(
      process.argv[3] === 'fresh' ? 'fresh device (no rows)' : 'catalogued device (a row per file)',
      process.argv[3] !== 'fresh',
    )
  } else {
    child('--scan', 'fresh', device)
    child('--scan', 'catalogued', device)
    console.log('\nthe watcher alone (each in its own process)')
    for (const mode of ['events', 'poll']) child('--watcher', mode, device)
  }
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
