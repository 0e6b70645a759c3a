// The drop baseline (bench/drop.ts): one Bun process that does what Reelhouse must do for a drop,
// and nothing else. It walks the drop folder, lstats every file, reads its content fingerprint
// (the same bytes Reelhouse's import reads), and writes, 500 files a transaction with prepared
// bun:sqlite statements, the rows Reelhouse writes for a dropped file, with the same columns and
// values but the timestamps: the media asset (the search index's triggers add its document), its
// history row, the ImportLog and the queued import task; then, as the import task ends without
// ffmpeg, the asset's status 6 with its history row, the fingerprint, the ImportLog's
// import_completed with the two warnings, and the task done with its result. No settle time, no
// watcher, no identity checks, no HTTP.
// Usage: bun bench/drop-baseline.ts DB_FILE DROP_FOLDER   (prints {files, cpuMs, peakMiB} on stdout)
import { lstatSync, readFileSync, readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fingerprintAll } from '../src/storage/fingerprint.ts'
import { stampOf } from '../src/storage/paths.ts'
import { openBaselineDb } from './baseline-db.ts'

const [file, dropFolder] = process.argv.slice(2)
if (!file || !dropFolder) throw new Error('usage: bun bench/drop-baseline.ts DB_FILE DROP_FOLDER')
const db = openBaselineDb(file)

const now = () => new Date().toISOString().replace('Z', '000Z')
const WARNING = JSON.stringify({
  probe: process.env.BENCH_WARNING_PROBE ?? 'ffprobe was not found',
  proxy: process.env.BENCH_WARNING_PROXY ?? 'ffmpeg was not found',
})
const BATCH = 500

// The one device and production of the bench's catalogue: the device whose path holds the drop.
const drop = dropFolder.endsWith('/') ? dropFolder : dropFolder + '/'
const device = db
  .query<{ id: number; name: string; path: string }, []>('SELECT id, name, path FROM devices')
  .all()
  .filter((d) => drop.startsWith(d.path))
  .sort((a, b) => b.path.length - a.path.length)[0]
if (!device) throw new Error('the drop lies on no device')
const production = db
  .query<{ id: number }, [number]>('SELECT id FROM productions WHERE upload_device = ? ORDER BY id LIMIT 1')
  .get(device.id)
if (!production) throw new Error('no production watches the device')

const insertAsset = db.prepare<
  { id: number },
  [string, number, number, string, string, string, number, number, number]
>(
  `INSERT INTO media_assets (kind, name, description, production, device, status_asset, status_asset_description, path_file,
     path_proxy, is_archive, is_production, approval, meta_field_store, technical, archive_details, date_crt, date_add, date_mod,
     date_del, file_dev, file_ino, file_stamp)
   VALUES ('video', ?, '', ?, ?, 0, 'NEW', ?, '', 0, 1, 0, '{}', '{}', '{}', NULL, ?, ?, NULL, ?, ?, ?) RETURNING id`,
)
const insertHistory = db.prepare<unknown, [string, string, number, string, string, number]>(
  "INSERT INTO history (date, user_id, username, via, resource, resource_id, action, changes, production) VALUES (?, NULL, NULL, ?, 'videoasset', ?, ?, ?, ?)",
)
const insertLog = db.prepare<{ id: number }, [string, string, number, number, string, string]>(
  `INSERT INTO import_logs (asset_type, asset_path, status, error, warning, payload, asset_config, asset_import_id, production, date_add, date_mod)
   VALUES ('videoasset', ?, 'asset_creation_completed', '', '{}', ?, '{"move_asset":false,"rewrap_proxy":false}', ?, ?, ?, ?) RETURNING id`,
)
const insertTask = db.prepare<{ id: number }, [string, number, string, string, string]>(
  `INSERT INTO tasks (kind, target, production, params, key, date_add) VALUES ('import', ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
)
const assetDone = db.prepare<unknown, [number, number, string, string, number]>(
  'UPDATE media_assets SET status_asset = 6, file_size = ?, file_mtime = ?, file_hash = ?, date_mod = ? WHERE id = ?',
)
const logDone = db.prepare<unknown, [string, string, number]>(
  "UPDATE import_logs SET status = 'import_completed', error = '', warning = ?, date_mod = ? WHERE id = ?",
)
const taskDone = db.prepare<unknown, [string, string, string, number]>(
  "UPDATE tasks SET state = 'done', key = NULL, error = '', step = 'probe', date_start = ?, date_end = ?, result = ? WHERE id = ?",
)

type Found = { path: string; dev: number; ino: number; stamp: number; size: number; mtimeMs: number }

/** What Reelhouse's history says of a new asset (the imported fields, each from null). */
function created(path: string, name: string, t: string) {
  const fields: [string, unknown][] = [
    ['name', name],
    ['description', ''],
    ['path_file', path],
    ['device', device!.id],
    ['is_archive', false],
    ['is_production', true],
    ['status_approval', 0],
    ['meta_field_store', {}],
    ['archive_details', {}],
    ['technical', {}],
    ['status_asset', 0],
    ['path_proxy', ''],
    ['date_crt', null],
    ['date_add', t],
    ['date_del', null],
  ]
  return JSON.stringify(Object.fromEntries(fields.map(([k, v]) => [k, { old: null, new: v }])))
}

const writeBatch = db.transaction((files: Found[], hashes: Map<Found, string>) => {
  for (const f of files) {
    const t = now()
    const name = basename(f.path).replace(/\.[^.]+$/, '')
    const id = insertAsset.get(name, production.id, device.id, f.path, t, t, f.dev, f.ino, f.stamp)!.id
    insertHistory.run(t, 'watcher', id, 'create', created(f.path, name, t), production.id)
    const payload = JSON.stringify({ watch_folder: device.name, path_file: f.path })
    const log = insertLog.get(f.path, payload, id, production.id, t, t)!.id
    const params = JSON.stringify({ asset: id, kind: 'video', logs: [log], rewrap_proxy: false, given: [] })
    const task = insertTask.get(JSON.stringify({ videoasset: id }), production.id, params, `import:${id}::false`, t)!.id
    // The import task's end (no ffmpeg): status, fingerprint, log, task, and the status's history.
    const hash = hashes.get(f) ?? null
    assetDone.run(f.size, f.mtimeMs, hash as string, t, id)
    insertHistory.run(t, 'import', id, 'update', '{"status_asset":{"old":0,"new":6}}', production.id)
    logDone.run(WARNING, t, log)
    taskDone.run(t, t, JSON.stringify({ asset: id, asset_type: 'videoasset', path_file: f.path }), task)
  }
})

let files = 0
const pending: Found[] = []
async function flush() {
  const hashes = await fingerprintAll(pending)
  writeBatch(pending, hashes)
  files += pending.length
  pending.length = 0
}
async function walk(dir: string) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry)
    const s = lstatSync(path)
    if (s.isDirectory()) await walk(path)
    else if (s.isFile()) {
      pending.push({ path, dev: s.dev, ino: s.ino, stamp: stampOf(s), size: s.size, mtimeMs: s.mtimeMs })
      if (pending.length === BATCH) await flush()
    }
  }
}
await walk(dropFolder)
if (pending.length) await flush()
db.close()
const cpu = process.cpuUsage()
const peakKiB = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN)
console.log(JSON.stringify({ files, cpuMs: (cpu.user + cpu.system) / 1000, peakMiB: peakKiB / 1024 }))
