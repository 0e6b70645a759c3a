// Helpers for the tests of POST /api/asset/import/ (api.md 4.10, service.md 9): request bodies,
// an app whose core looks for ffmpeg in a chosen folder (createCore's ffmpegDir, the --ffmpeg DIR
// of `serve`), a gate that holds ffmpeg and ffprobe back until the test lets them run, and small
// readers of the ImportLogs, assets and tasks an import leaves.
import { expect } from 'bun:test'
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { createCore } from '../../src/core.ts'
import { type Log, silentLog } from '../../src/util/log.ts'
import { type RequestOptions, type TestApp, readResponse, tempDir } from './app.ts'
import { OTHER_TMP } from './temp.ts'
import { ff, hasFfmpeg } from './media.ts'

export const IMPORT = '/api/asset/import/'

const made: string[] = []
/**
 * tempDir(), remembered for removeScratch(). tempDir's own removal at process exit does not
 * happen under `bun test` (bun 1.4 runs no 'exit' listeners there), and a 300 MB file left on
 * a file left in memory (/dev/shm) is memory lost, so these tests remove what they make in afterAll.
 */
export function scratchDir(prefix = 'reelhouse-import-', parent?: string) {
  const dir = tempDir(prefix, parent)
  made.push(dir)
  return dir
}
/** Removes every folder scratchDir made. */
export function removeScratch() {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
}

export type Kind = 'video' | 'audio' | 'image'
type Json = Record<string, any>

/** A body of the kind for `path`: asset_meta members, then other asset members, then top-level members merged in. */
export function importBody(path: string, meta: Json = {}, asset: Json = {}, top: Json = {}): Json {
  return {
    type: 'video',
    production: 'Show',
    ...top,
    asset: { asset_meta: { name: 'clip', path_file: path, ...meta }, ...asset },
  }
}

/** What an archive-only video must carry (api.md 4.10 rules 2 and 3). */
export const ARCHIVE = {
  archive_handle: '10023',
  archive_type: 'archive_std',
  original_path: '/Volumes/Archive/clip.mov',
}
export const ARCHIVED_ONLY_VIDEO = { duration: 50, fps: '25', height: 240, width: 320 }

/** The one request sender of these tests: through an app's handle, with the given key (or none). */
export type Sender = (method: string, path: string, options?: RequestOptions) => ReturnType<TestApp['request']>

/**
 * The 201 answer of an import, whole: api.md 4.10's seven members and nothing else. The payload
 * is the request as it came (compared parsed, so key order and spacing do not matter).
 */
export function expectImported(
  reply: { status: number; json: any; text: string },
  body: unknown,
  status: 'asset_creation_completed' | 'asset_update_completed',
  kind: Kind = 'video',
) {
  if (reply.status !== 201) throw new Error(`expected 201, got ${reply.status}: ${reply.text}`)
  const path = (body as Json).asset?.asset_meta?.path_file
  expect(reply.json).toEqual({
    asset_path: path,
    status,
    warning: {},
    error: '',
    asset_import_id: expect.any(Number),
    payload: expect.any(String),
    asset_type: `${kind}asset`,
    task: {
      id: expect.any(Number),
      state: expect.stringMatching(/^(queued|running|done|failed)$/),
      url: `/api/tasks/${reply.json.task?.id}/`,
    },
  })
  expect(JSON.parse(reply.json.payload)).toEqual(body)
  return reply.json.asset_import_id as number
}

/**
 * testApp's core and app again over the same catalogue, with createCore's `ffmpegDir`: the app
 * `t` gives users, keys and the database (its own runner is never started); this one answers the
 * requests and runs the tasks. testApp builds its core in ten lines that take no ffmpeg option.
 */
export function appWithFfmpegDir(
  t: TestApp,
  ffmpegDir: string | undefined,
  options: { start?: boolean; concurrency?: number; log?: Log } = {},
) {
  const core = createCore(t.db, { log: options.log ?? silentLog, concurrency: options.concurrency ?? 2, ffmpegDir })
  const app = createApp(core)
  // Started unless a test queues tasks first and changes the world before they run.
  if (options.start !== false) core.start()
  /** Like TestApp.request, for JSON and raw bodies. */
  const request: Sender = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers }
    const key = options.key === undefined ? t.adminKey : options.key
    if (key !== null) headers.authorization = `Token ${key}`
    let body: string | Uint8Array | FormData | Blob | undefined = options.raw
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    return readResponse(await app.handle(new Request(`http://localhost${path}`, { method, headers, body })))
  }
  return {
    core,
    runner: core.runner,
    request,
    get: (path: string, o?: RequestOptions) => request('GET', path, o),
    post: (path: string, body: unknown, o?: RequestOptions) => request('POST', path, { ...o, body }),
    stop: () => core.stop(),
  }
}

/** An empty folder: where the core finds no ffmpeg and no ffprobe. */
export const emptyFfmpegDir = () => scratchDir('reelhouse-no-ffmpeg-')

/**
 * ffmpeg and ffprobe that answer -version at once but otherwise wait, polling, until the gate
 * file exists (at most 30 s), then run the real binary: a test can see the ImportLog at the
 * status the task reached before it probes (asset_move_completed) and then let it go on.
 */
export function gatedFfmpeg() {
  const dir = scratchDir('reelhouse-gated-ffmpeg-')
  const gate = join(dir, 'open')
  for (const name of ['ffmpeg', 'ffprobe'] as const) {
    const real = ff.paths[name]
    if (!real) continue
    writeFileSync(
      join(dir, name),
      `#!/bin/sh
if [ "$1" != -version ]; then
  n=0
  while [ ! -e '${gate}' ] && [ $n -lt 3000 ]; do sleep 0.01; n=$((n+1)); done
fi
exec '${real}' "$@"
`,
    )
    chmodSync(join(dir, name), 0o755)
  }
  return { dir, open: () => writeFileSync(gate, ''), close: () => Bun.spawnSync(['rm', '-f', gate]) }
}

/** A small real clip at `path` (a copy of makeMedia's), or, on a machine without ffmpeg, bytes with its name. */
export function placeClip(from: string | undefined, path: string) {
  mkdirSync(join(path, '..'), { recursive: true })
  if (hasFfmpeg && from) copyFileSync(from, path)
  else writeFileSync(path, 'not really a clip\n')
  return path
}

/** A file with some text in it, its folders made. */
export function placeFile(path: string, text = 'essence\n') {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, text)
  return path
}

export const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

/** The device number of the file system a path is on. */
export const deviceOf = (path: string) => statSync(path).dev

/** A folder on another file system than the tests' folders (OTHER_TMP) when the machine has one; else beside them. */
export function otherFileSystemDir(prefix: string) {
  return { dir: scratchDir(prefix, OTHER_TMP), cross: OTHER_TMP !== undefined }
}

/** The ImportLogs of a path (GET /api/importlogs/?asset_path=...), as the admin sees them. */
export async function logsOf(send: Sender, path: string, key?: string) {
  const r = await send('GET', `/api/importlogs/?asset_path=${encodeURIComponent(path)}`, { key })
  if (r.status !== 200) throw new Error(`importlogs: ${r.status} ${r.text}`)
  return r.json as Json[]
}

/** Every ImportLog (GET /api/importlogs/). */
export async function allLogs(send: Sender) {
  const r = await send('GET', '/api/importlogs/?limit=1000')
  if (r.status !== 200) throw new Error(`importlogs: ${r.status} ${r.text}`)
  return r.json as Json[]
}

/** The single-record answer of an asset. */
export async function assetOf(send: Sender, id: number, kind: Kind = 'video') {
  const r = await send('GET', `/api/${kind}assets/${id}/`)
  if (r.status !== 200) throw new Error(`${kind}asset ${id}: ${r.status} ${r.text}`)
  return r.json as Json
}

/** The assets of a kind with this path_file (the list filter). */
export async function assetsAt(send: Sender, path: string, kind: Kind = 'video') {
  const r = await send('GET', `/api/${kind}assets/?path_file=${encodeURIComponent(path)}`)
  if (r.status !== 200) throw new Error(`${kind}assets: ${r.status} ${r.text}`)
  return r.json as Json[]
}

/** The import tasks working for an asset (GET /api/tasks/?kind=import). */
export async function importTasksOf(send: Sender, id: number, kind: Kind = 'video') {
  const r = await send('GET', '/api/tasks/?kind=import&ordering=id&limit=1000')
  if (r.status !== 200) throw new Error(`tasks: ${r.status} ${r.text}`)
  return (r.json as Json[]).filter((task) => task.target[`${kind}asset`] === id)
}

/** One ImportLog row as the API shows it, whole. */
export function logRow(fields: {
  asset_path: string
  status: string
  error?: unknown
  warning?: unknown
  payload?: unknown
  asset_config?: unknown
  asset_import_id: number | null
  asset_type?: string
}) {
  return {
    id: expect.any(Number),
    asset_type: fields.asset_type ?? 'videoasset',
    asset_path: fields.asset_path,
    status: fields.status,
    error: fields.error ?? '',
    warning: fields.warning ?? {},
    payload: fields.payload ?? expect.any(String),
    asset_config: fields.asset_config ?? expect.any(Object),
    asset_import_id: fields.asset_import_id,
  }
}
