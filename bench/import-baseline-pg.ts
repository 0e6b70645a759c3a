// The import baseline on PostgreSQL: bench/import-baseline.ts's twin, raw Bun.serve and Bun.SQL
// doing the same work as POST /api/asset/import/ of a server run with --database, for a video
// import that names an existing file: parse the JSON body, find the production by name and the
// device by the longest path prefix, lstat the file, then one transaction that writes the same
// rows as Reelhouse (media_assets, import_logs, tasks, with the same column values but the
// timestamps) and answers 201 with the same members. Then the follow-up task, as Reelhouse runs
// it without ffmpeg: claim the oldest queued task, mark the asset done (status 6), the ImportLog
// import_completed with the two ffmpeg warnings, and the task done, one task after another. No
// auth, no routing, no schema validation, no hold durations, territory or custom metadata checks.
// Statements go through `unsafe` with their parameters, as drizzle's bun-sql driver sends them;
// a json column is given its value as an object, which Bun's client writes as JSON, as the
// service's columns do (src/db/schema.pg.ts jsonColumn). The pool is the service's size.
// Usage: bun bench/import-baseline-pg.ts DATABASE_URL   (prints "listening PORT" on stdout)
import { lstatSync } from 'node:fs'
import { SQL } from 'bun'
import { stampOf } from '../src/storage/paths.ts'

const url = process.argv[2]
if (!url) throw new Error('usage: bun bench/import-baseline-pg.ts DATABASE_URL')
const client = new SQL({ url, max: 20 })

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
const WARNING = {
  probe: process.env.BENCH_WARNING_PROBE ?? 'ffprobe was not found',
  proxy: process.env.BENCH_WARNING_PROXY ?? 'ffmpeg was not found',
}

const INSERT_ASSET = `INSERT INTO media_assets (kind, name, description, production, device, status_asset, status_asset_description,
    path_file, path_proxy, is_archive, is_production, approval, meta_field_store, technical, archive_details, date_crt, date_add,
    date_mod, date_del, file_dev, file_ino, file_stamp)
  VALUES ($1, $2, $3, $4, $5, 0, 'NEW', $6, '', false, true, $7, '{}', $8, '{}', NULL, $9, $10, NULL, $11, $12, $13) RETURNING id`
const INSERT_LOG = `INSERT INTO import_logs (asset_type, asset_path, status, error, warning, payload, asset_config, asset_import_id,
    production, date_add, date_mod)
  VALUES ($1, $2, 'asset_creation_completed', '', '{}', $3, $4, $5, $6, $7, $8) RETURNING id`
const INSERT_TASK = `INSERT INTO tasks (kind, target, production, params, key, date_add) VALUES ('import', $1, $2, $3, $4, $5)
  ON CONFLICT DO NOTHING RETURNING id`
const CLAIM = `UPDATE tasks SET state = 'running', key = NULL, date_start = $1
  WHERE id = (SELECT id FROM tasks WHERE state = 'queued' ORDER BY id LIMIT 1) RETURNING id, params`
const ASSET_DONE = 'UPDATE media_assets SET status_asset = 6, date_mod = $1 WHERE id = $2'
const LOG_DONE =
  "UPDATE import_logs SET status = 'import_completed', error = '', warning = $1, date_mod = $2 WHERE id = $3"
const TASK_DONE = "UPDATE tasks SET state = 'done', error = '', date_end = $1 WHERE id = $2"

type Import = {
  kind: string
  name: string
  description: string
  production: number
  device: number
  path: string
  approval: number
  technical: Record<string, unknown>
  dev: number
  ino: number
  stamp: number
  payload: string
}

const register = (a: Import) =>
  client.begin(async (tx) => {
    const t = now()
    const [asset] = (await tx.unsafe(INSERT_ASSET, [
      a.kind,
      a.name,
      a.description,
      a.production,
      a.device,
      a.path,
      a.approval,
      a.technical,
      t,
      t,
      a.dev,
      a.ino,
      a.stamp,
    ])) as { id: string }[]
    const assetId = Number(asset!.id)
    const [log] = (await tx.unsafe(INSERT_LOG, [
      `${a.kind}asset`,
      a.path,
      a.payload,
      { move_asset: false, rewrap_proxy: false },
      assetId,
      a.production,
      t,
      t,
    ])) as { id: string }[]
    // user: who asked; in Reelhouse the key's user, the admin (id 1). The baseline checks no key.
    const params = {
      asset: assetId,
      kind: a.kind,
      logs: [Number(log!.id)],
      rewrap_proxy: false,
      given: Object.keys(a.technical),
      user: 1,
    }
    await tx.unsafe(INSERT_TASK, [{ [`${a.kind}asset`]: assetId }, a.production, params, `import:${assetId}::false`, t])
    return assetId
  })

// The follow-up task (Reelhouse's import task with no ffmpeg): after the response, oldest queued
// first, one at a time, until none is left. `wanted` is set by every registration: a task
// committed while the last claim was finding none is claimed by another pass.
let draining = false
let wanted = false
async function drain() {
  try {
    while (wanted) {
      wanted = false
      for (;;) {
        const [task] = (await client.unsafe(CLAIM, [now()])) as {
          id: string
          params: { asset: number; logs: number[] }
        }[]
        if (!task) break
        await client.begin(async (tx) => {
          const t = now()
          await tx.unsafe(ASSET_DONE, [t, task.params.asset])
          for (const log of task.params.logs) await tx.unsafe(LOG_DONE, [WARNING, t, log])
          await tx.unsafe(TASK_DONE, [t, Number(task.id)])
        })
      }
    }
  } finally {
    draining = false
  }
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
    const [production] = (await client.unsafe('SELECT id, name FROM productions WHERE name = $1', [
      body.production,
    ])) as {
      id: string
    }[]
    if (!production) return Response.json({ detail: 'No production with this name.' }, { status: 400 })
    const path = meta.path_file
    let device: { id: string; path: string } | undefined
    for (const d of (await client.unsafe('SELECT id, path FROM devices')) as { id: string; path: string }[])
      if (path.startsWith(d.path) && (!device || d.path.length > device.path.length)) device = d
    if (!device) return refuse(406, 'The path does not lie on any device.')
    let stat
    try {
      stat = lstatSync(path)
    } catch {
      return refuse(406, 'path_file does not exist.')
    }
    if (!stat.isFile()) return refuse(406, 'path_file is not a regular file.')
    const [existing] = (await client.unsafe('SELECT id FROM media_assets WHERE kind = $1 AND path_file = $2', [
      body.type,
      path,
    ])) as unknown[]
    if (existing) return Response.json({ detail: 'this baseline creates assets only' }, { status: 409 })
    // As Reelhouse stores it: a video's annotation_markers default to [] (rules.ts normalizeImport).
    const technical: Record<string, unknown> = {}
    for (const m of VIDEO_MEMBERS)
      if (m === 'annotation_markers' ? body.type === 'video' : meta[m] !== undefined) technical[m] = meta[m] ?? []
    const assetId = await register({
      kind: body.type,
      name: meta.name,
      description: meta.description ?? '',
      production: Number(production.id),
      device: Number(device.id),
      path,
      approval: meta.approval ?? 0,
      technical,
      dev: stat.dev,
      ino: stat.ino,
      stamp: stampOf(stat),
      payload,
    })
    wanted = true
    if (!draining) {
      draining = true
      queueMicrotask(() => void drain())
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
  void client.close().finally(() => process.exit(0))
})
