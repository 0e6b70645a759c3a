// The import baseline: raw Bun.serve doing the same work as POST /api/asset/import/ for a video
// import that names an existing file, with prepared bun:sqlite statements and nothing else: parse
// the JSON body, find the production by name and the device by the longest path prefix, lstat
// the file, then one transaction that writes the same rows as Reelhouse (media_assets,
// import_logs, tasks, with the same column values but the timestamps) and answers 201 with the
// same members. Then the follow-up task, as Reelhouse runs it without ffmpeg: claim the oldest
// queued task, mark the asset done (status 6), the ImportLog import_completed with the two
// ffmpeg warnings, and the task done. No auth, no routing, no schema validation, no hold
// durations, territory or custom metadata checks.
// Usage: bun bench/import-baseline.ts DB_FILE   (prints "listening PORT" on stdout)
import { lstatSync } from 'node:fs'
import { stampOf } from '../src/storage/paths.ts'
import { openBaselineDb } from './baseline-db.ts'

const file = process.argv[2]
if (!file) throw new Error('usage: bun bench/import-baseline.ts DB_FILE')
const db = openBaselineDb(file)

const now = () => new Date().toISOString().replace('Z', '000Z')
const VIDEO_MEMBERS = [
  'annotation_markers',
  'display_aspect_ratio',
  'duration',
  'format',
  'fps',
  'height',
  'width',
  'offset_frames',
  'offset_string',
]
// The warnings Reelhouse's task writes when ffmpeg is absent (bench/import.ts passes its texts).
const WARNING = JSON.stringify({
  probe: process.env.BENCH_WARNING_PROBE ?? 'ffprobe was not found',
  proxy: process.env.BENCH_WARNING_PROXY ?? 'ffmpeg was not found',
})

const productionByName = db.prepare<{ id: number; name: string }, [string]>(
  'SELECT id, name FROM productions WHERE name = ?',
)
const allDevices = db.prepare<{ id: number; path: string }, []>('SELECT id, path FROM devices')
const assetByPath = db.prepare<{ id: number }, [string, string]>(
  'SELECT id FROM media_assets WHERE kind = ? AND path_file = ?',
)
const insertAsset = db.prepare<
  { id: number },
  [
    string,
    string,
    string,
    number,
    number,
    string,
    number,
    string,
    string | null,
    string,
    string,
    number,
    number,
    number,
  ]
>(
  `INSERT INTO media_assets (kind, name, description, production, device, status_asset, status_asset_description, path_file,
     path_proxy, is_archive, is_production, approval, meta_field_store, technical, archive_details, date_crt, date_add, date_mod,
     date_del, file_dev, file_ino, file_stamp)
   VALUES (?, ?, ?, ?, ?, 0, 'NEW', ?, '', 0, 1, ?, '{}', ?, '{}', ?, ?, ?, NULL, ?, ?, ?) RETURNING id`,
)
const insertLog = db.prepare<{ id: number }, [string, string, string, string, number, number, string, string]>(
  `INSERT INTO import_logs (asset_type, asset_path, status, error, warning, payload, asset_config, asset_import_id, production, date_add, date_mod)
   VALUES (?, ?, 'asset_creation_completed', '', '{}', ?, ?, ?, ?, ?, ?) RETURNING id`,
)
const insertTask = db.prepare<{ id: number }, [string, number, string, string, string]>(
  `INSERT INTO tasks (kind, target, production, params, key, date_add) VALUES ('import', ?, ?, ?, ?, ?)
   ON CONFLICT DO NOTHING RETURNING id`,
)
const register = db.transaction(
  (a: {
    kind: string
    name: string
    description: string
    production: number
    device: number
    path: string
    approval: number
    technical: string
    dev: number
    ino: number
    stamp: number
    payload: string
  }) => {
    const t = now()
    const assetId = insertAsset.get(
      a.kind,
      a.name,
      a.description,
      a.production,
      a.device,
      a.path,
      a.approval,
      a.technical,
      null,
      t,
      t,
      a.dev,
      a.ino,
      a.stamp,
    )!.id
    const logId = insertLog.get(
      `${a.kind}asset`,
      a.path,
      a.payload,
      '{"move_asset":false,"rewrap_proxy":false}',
      assetId,
      a.production,
      t,
      t,
    )!.id
    // user: who asked; in Reelhouse the key's user, the admin (id 1). The baseline checks no key.
    const params = JSON.stringify({
      asset: assetId,
      kind: a.kind,
      logs: [logId],
      rewrap_proxy: false,
      given: Object.keys(JSON.parse(a.technical)),
      user: 1,
    })
    insertTask.get(JSON.stringify({ [`${a.kind}asset`]: assetId }), a.production, params, `import:${assetId}::false`, t)
    return assetId
  },
)

// The follow-up task (Reelhouse's import task with no ffmpeg): run after the response, in
// microtasks, oldest queued first, until none is left.
const claim = db.prepare<{ id: number; params: string }, [string]>(
  `UPDATE tasks SET state = 'running', key = NULL, date_start = ? WHERE id = (SELECT id FROM tasks WHERE state = 'queued' ORDER BY id LIMIT 1)
   RETURNING id, params`,
)
const assetDone = db.prepare<unknown, [string, number]>(
  'UPDATE media_assets SET status_asset = 6, date_mod = ? WHERE id = ?',
)
const logDone = db.prepare<unknown, [string, string, number]>(
  "UPDATE import_logs SET status = 'import_completed', error = '', warning = ?, date_mod = ? WHERE id = ?",
)
const taskDone = db.prepare<unknown, [string, number]>(
  "UPDATE tasks SET state = 'done', error = '', date_end = ? WHERE id = ?",
)
const complete = db.transaction((task: { id: number; params: string }) => {
  const params = JSON.parse(task.params) as { asset: number; logs: number[] }
  const t = now()
  assetDone.run(t, params.asset)
  for (const log of params.logs) logDone.run(WARNING, t, log)
  taskDone.run(t, task.id)
})
let draining = false
function drain() {
  draining = false
  for (let task = claim.get(now()); task; task = claim.get(now())) complete(task)
}

const refuse = (status: number, detail: string) => Response.json({ type: 'path_file', detail }, { status })

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(request) {
    const body = (await request.json()) as {
      type: string
      production: string
      asset: {
        asset_meta: Record<string, unknown> & {
          name: string
          path_file: string
          description?: string
          approval?: number
        }
      }
    }
    const payload = JSON.stringify(body)
    const meta = body.asset.asset_meta
    const production = productionByName.get(body.production)
    if (!production) return Response.json({ detail: 'No production with this name.' }, { status: 400 })
    const path = meta.path_file
    let device: { id: number; path: string } | undefined
    for (const d of allDevices.all())
      if (path.startsWith(d.path) && (!device || d.path.length > device.path.length)) device = d
    if (!device) return refuse(406, 'The path does not lie on any device.')
    let stat
    try {
      stat = lstatSync(path)
    } catch {
      return refuse(406, 'path_file does not exist.')
    }
    if (!stat.isFile()) return refuse(406, 'path_file is not a regular file.')
    if (assetByPath.get(body.type, path))
      return Response.json({ detail: 'this baseline creates assets only' }, { status: 409 })
    // As Reelhouse stores it: a video's annotation_markers default to [] (rules.ts normalizeImport).
    const technical: Record<string, unknown> = {}
    for (const m of VIDEO_MEMBERS)
      if (m === 'annotation_markers' ? body.type === 'video' : meta[m] !== undefined) technical[m] = meta[m] ?? []
    const assetId = register({
      kind: body.type,
      name: meta.name,
      description: meta.description ?? '',
      production: production.id,
      device: device.id,
      path,
      approval: meta.approval ?? 0,
      technical: JSON.stringify(technical),
      dev: stat.dev,
      ino: stat.ino,
      stamp: stampOf(stat),
      payload,
    })
    if (!draining) {
      draining = true
      queueMicrotask(drain)
    }
    return Response.json(
      {
        asset_path: path,
        status: 'asset_creation_completed',
        warning: {},
        error: '',
        asset_import_id: assetId,
        payload,
        asset_type: `${body.type}asset`,
      },
      { status: 201 },
    )
  },
})
console.log(`listening ${server.port}`)
process.on('SIGTERM', () => {
  server.stop(true)
  db.close()
  process.exit(0)
})
