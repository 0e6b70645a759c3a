// Proxies made by the compiled executable (issue 26, points 4 and 5): dist/reelhouse serves an
// empty data folder; a clip with four mono tracks is imported and its proxy, read with ffprobe,
// has four mono tracks; POST /api/videoassets/{id}/proxy/ remakes it, and so does
// `reelhouse proxies remake` run beside the serve (its tasks are taken from the other process).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { corpusClip } from '../helpers/corpus.ts'
import { ffprobeJson, hasFfmpeg } from '../helpers/media.ts'
import {
  call,
  compiledExecutable,
  killAll,
  runCli,
  type Server,
  startServe,
  TEST_TIMEOUT_MS,
} from '../helpers/process.ts'
import { waitFor } from '../helpers/wait.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

const dirs: string[] = []
const dir = (prefix: string) => {
  const d = tempDir(prefix)
  dirs.push(d)
  return d
}
afterAll(async () => {
  await killAll()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe.skipIf(!hasFfmpeg)('the compiled executable makes proxies that keep the audio layout', () => {
  let binary: string
  let cwd: string
  let server: Server
  let data: string
  let key: string
  let media: string
  let asset: number

  beforeAll(async () => {
    binary = await compiledExecutable()
    cwd = dir('reelhouse-proxies-cwd-')
    data = join(dir('reelhouse-proxies-e2e-'), 'data')
    media = dir('reelhouse-proxies-media-')
    server = await startServe(data, { cli: [binary], cwd })
    key = readFileSync(join(data, 'admin.token'), 'utf8').trim()
    expect((await call(server, 'POST', '/devices/', key, { name: 'media', path: media })).status).toBe(201)
    mkdirSync(join(media, 'show', 'incoming'), { recursive: true })
    expect(
      (await call(server, 'POST', '/productions/', key, { name: 'Show', storage_root: join(media, 'show') })).status,
    ).toBe(201)
  }, 180_000)

  /** The task at url, once it has ended. */
  async function ended(url: string) {
    let task: Record<string, any> = {}
    await waitFor(async () => {
      task = (await call(server, 'GET', url.replace(/^\/api/, ''), key)).json
      return task.state === 'done' || task.state === 'failed'
    }, `${url} to end`)
    return task
  }
  const audioOf = (path: string) =>
    ffprobeJson(path)
      .streams.filter((s) => s.codec_type === 'audio')
      .map((s) => [s.codec_name, s.channels])
  const fourMono = [
    ['aac', 1],
    ['aac', 1],
    ['aac', 1],
    ['aac', 1],
  ]

  test('an import of four mono tracks: a proxy with four mono tracks', async () => {
    const path = join(media, 'show', 'incoming', 'four-mono.mov')
    copyFileSync(await corpusClip('fourMono'), path)
    const r = await call(server, 'POST', '/asset/import/', key, {
      type: 'video',
      production: 'Show',
      asset: { asset_meta: { name: 'four', path_file: path } },
    })
    expect(r.status).toBe(201)
    asset = r.json.asset_import_id
    expect((await ended(r.json.task.url)).state).toBe('done')
    const proxy = (await call(server, 'GET', `/videoassets/${asset}/`, key)).json.path_proxy
    // Named after the source (docs/media.md, Proxy names).
    expect(proxy).toEndWith('/four-mono.mp4')
    expect(audioOf(proxy)).toEqual(fourMono)
  })

  test('POST /api/videoassets/{id}/proxy/: 202, and the proxy made again in its place', async () => {
    const proxy = (await call(server, 'GET', `/videoassets/${asset}/`, key)).json.path_proxy
    const before = statSync(proxy).ino
    const r = await call(server, 'POST', `/videoassets/${asset}/proxy/`, key)
    expect(r.status).toBe(202)
    expect((await ended(r.json.task.url)).state).toBe('done')
    expect((await call(server, 'GET', `/videoassets/${asset}/`, key)).json.path_proxy).toBe(proxy)
    expect(statSync(proxy).ino).not.toBe(before)
    expect(audioOf(proxy)).toEqual(fourMono)
  })

  test('reelhouse proxies remake beside the serve: its task is taken and done', async () => {
    const r = await runCli(['proxies', 'remake', '--production', 'Show', '--data', data], { cli: [binary], cwd })
    expect(r.code).toBe(0)
    const id = Number(r.stdout.match(/\(tasks (\d+)\)/)?.[1])
    expect(id).toBeGreaterThan(0)
    expect(await ended(`/api/tasks/${id}/`)).toMatchObject({
      kind: 'proxy',
      state: 'done',
      target: { videoasset: asset },
    })
  })
})
