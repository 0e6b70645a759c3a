// Proxies and the transcoding profile through the API (issue 26, points 3 and 5): the profile
// that applies (the device's, else the default one, else the built-in default) makes the import's
// proxy; a profile ffmpeg cannot make is refused when it is created or changed; POST
// /api/{kind}assets/{id}/proxy/ remakes a proxy, which replaces the old one only when complete;
// `reelhouse proxies remake` queues one task per asset, which the running runner takes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { TEMP_PREFIX } from '../../src/media/proxy.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import { IMPORT, appWithFfmpegDir, importBody, placeClip, removeScratch, scratchDir } from '../helpers/imports.ts'
import { type Media, ff, ffprobeJson, hasFfmpeg, makeMedia } from '../helpers/media.ts'
import { runCli } from '../helpers/process.ts'
import { waitFor } from '../helpers/wait.ts'
import { runSync } from '../../src/db/port.ts'

let base: TestApp
/** The app whose core finds ffmpeg in `gate`'s folder: its requests queue the tasks its runner runs. */
let t: ReturnType<typeof appWithFfmpegDir> & { dataDir: string; db: TestApp['db'] }
let root: string
let device: { id: number }
let show: { id: number; name: string; proxy_root: string }
let media: Media

/**
 * ffprobe as it is, and an ffmpeg that waits while the gate is shut (at most 30 s) before it runs
 * the real one: a remake can be held with its hidden file made and ffmpeg not yet done.
 */
function ffmpegGate() {
  const dir = scratchDir('reelhouse-proxy-gate-')
  const shut = join(dir, 'shut')
  if (hasFfmpeg) {
    symlinkSync(ff.paths.ffprobe!, join(dir, 'ffprobe'))
    writeFileSync(
      join(dir, 'ffmpeg'),
      `#!/bin/sh
if [ "$1" != -version ]; then
  n=0
  while [ -e '${shut}' ] && [ $n -lt 3000 ]; do sleep 0.01; n=$((n+1)); done
fi
exec '${ff.paths.ffmpeg}' "$@"
`,
    )
    chmodSync(join(dir, 'ffmpeg'), 0o755)
  }
  return { dir, shut: () => writeFileSync(shut, ''), open: () => Bun.spawnSync(['rm', '-f', shut]) }
}
const gate = ffmpegGate()

beforeAll(async () => {
  base = testApp(undefined, { tasks: false })
  ;({ root, device, production: show } = await seedProduction(base))
  t = { ...appWithFfmpegDir(base, gate.dir), dataDir: base.dataDir, db: base.db }
  media = await makeMedia(scratchDir('reelhouse-proxies-media-'), ['video'])
})
afterAll(async () => {
  gate.open()
  await t.stop()
  base.cleanup()
  removeScratch()
})

let n = 0
/** Imports a copy of `from` and waits for its task; answers the asset. */
async function imported(from: string) {
  const path = placeClip(from, join(root, 'incoming', `${++n}-${basename(from)}`))
  const r = await t.post(IMPORT, importBody(path))
  expect(r.status).toBe(201)
  await t.runner.idle()
  return asset(r.json.asset_import_id)
}
const asset = async (id: number) => (await t.get(`/api/videoassets/${id}/`)).json
const task = async (id: number) => (await t.get(`/api/tasks/${id}/`)).json
const videoOf = (path: string) => ffprobeJson(path).streams.find((s: Record<string, any>) => s.codec_type === 'video')!
const identity = (path: string) => {
  const s = statSync(path)
  return { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs }
}
const leftovers = () => readdirSync(show.proxy_root).filter((name) => name.startsWith(TEMP_PREFIX))

describe('transcoding profiles ffmpeg cannot make', () => {
  test('are refused when created (400 invalid at the field), and nothing is stored', async () => {
    const before = (await t.get('/api/transcodingprofiles/')).json.length
    const cases: [Record<string, unknown>, string][] = [
      [{ codec_name: 'prores', video_container: 'mp4' }, '/video_container'],
      [{ codec_name: 'dnxhd', video_container: 'mxf', audio_codec_name: 'aac' }, '/audio_codec_name'],
      [{ codec_name: 'h264', codec_profile: 'main', pix_fmt: 'yuv422p10le' }, '/pix_fmt'],
      [{ tracks: 4 }, '/channels_per_track'],
      [{ codec_name: 'theora' }, '/codec_name'],
    ]
    for (const [fields, pointer] of cases)
      expectError(await t.post('/api/transcodingprofiles/', { name: `bad ${pointer}`, ...fields }), 400, 'invalid', {
        pointer,
      })
    expect((await t.get('/api/transcodingprofiles/')).json.length).toBe(before)
  })

  test('are refused when changed, and the profile stays as it was', async () => {
    const made = await t.post('/api/transcodingprofiles/', { name: 'H.264 720', height: 720 })
    expect(made.status).toBe(200)
    const r = await t.request('PATCH', `/api/transcodingprofiles/${made.json.id}/`, {
      body: { audio_codec_name: 'pcm_s24le' },
    })
    expectError(r, 400, 'invalid', { pointer: '/audio_codec_name' })
    expect(r.json.errors[0].detail).toContain('mp4')
    expect((await t.get(`/api/transcodingprofiles/${made.json.id}/`)).json).toEqual(made.json)
    // With mov, the same audio is made.
    expect(
      (
        await t.request('PATCH', `/api/transcodingprofiles/${made.json.id}/`, {
          body: { audio_codec_name: 'pcm_s24le', video_container: 'mov' },
        })
      ).status,
    ).toBe(200)
  })
})

describe.skipIf(!hasFfmpeg)('the profile that applies makes the proxy; a remake replaces it when complete', () => {
  let assetId: number
  let oldProxy: string

  test('an import with no profile: the built-in default (H.264 in MP4)', async () => {
    const a = await imported(media.video)
    assetId = a.id
    oldProxy = a.path_proxy
    // Named after the source (docs/media.md, Proxy names): 1-clip.mov → 1-clip.mp4.
    expect(oldProxy).toBe(join(show.proxy_root, basename(a.path_file).replace(/\.mov$/, '.mp4')))
    expect(videoOf(oldProxy).codec_name).toBe('h264')
  })

  test('POST .../proxy/: 202 with a proxy task; the default profile now applies (ProRes in mov); the old proxy of another name goes', async () => {
    const profile = await t.post('/api/transcodingprofiles/', {
      name: 'ProRes proxy',
      codec_name: 'prores',
      codec_profile: 'proxy',
      default_profile: true,
    })
    expect(profile.status).toBe(200)
    const r = await t.request('POST', `/api/videoassets/${assetId}/proxy/`)
    expect(r.status).toBe(202)
    expect(r.json).toEqual({
      task: {
        id: expect.any(Number),
        state: expect.stringMatching(/^(queued|running)$/),
        url: `/api/tasks/${r.json.task.id}/`,
      },
    })
    expect(r.headers.get('location')).toBe(r.json.task.url)
    await t.runner.idle()
    const done = await task(r.json.task.id)
    expect(done).toMatchObject({
      kind: 'proxy',
      state: 'done',
      target: { videoasset: assetId },
      step: 'proxy',
      percent: 100,
    })
    const a = await asset(assetId)
    // The same name in the new container: the old proxy's pictures were its own, the new ones took their names.
    expect(a.path_proxy).toBe(oldProxy.replace(/\.mp4$/, '.mov'))
    expect(done.result).toEqual({
      asset: assetId,
      asset_type: 'videoasset',
      path_file: a.path_file,
      path_proxy: a.path_proxy,
    })
    expect(videoOf(a.path_proxy)).toMatchObject({ codec_name: 'prores', profile: 'Proxy' })
    expect(existsSync(oldProxy)).toBe(false)
    oldProxy = a.path_proxy
  })

  test("the device's transcoding_profile wins over the default one, at import", async () => {
    const small = (
      await t.post('/api/transcodingprofiles/', { name: 'H.264 mov 120', video_container: 'mov', height: 120 })
    ).json
    expect(
      (await t.request('PATCH', `/api/devices/${device.id}/`, { body: { transcoding_profile: small.id } })).status,
    ).toBe(200)
    try {
      const a = await imported(media.video)
      expect(a.path_proxy).toEndWith('.mov')
      expect(videoOf(a.path_proxy)).toMatchObject({ codec_name: 'h264', height: 120, width: 160 })
    } finally {
      expect(
        (await t.request('PATCH', `/api/devices/${device.id}/`, { body: { transcoding_profile: null } })).status,
      ).toBe(200)
    }
  })

  test('a failed remake leaves the old proxy and path_proxy as they were, and nothing hidden behind', async () => {
    const before = identity(oldProxy)
    // The essence's bytes are no longer media (the same file: the task opens what is catalogued).
    const path = (await asset(assetId)).path_file
    const essence = Bun.file(path)
    const saved = new Uint8Array(await essence.arrayBuffer())
    writeFileSync(path, 'not a movie any more\n'.repeat(100))
    try {
      const r = await t.request('POST', `/api/videoassets/${assetId}/proxy/`)
      expect(r.status).toBe(202)
      await t.runner.idle()
      const failed = await task(r.json.task.id)
      expect(failed).toMatchObject({ kind: 'proxy', state: 'failed', error: expect.stringContaining('ffmpeg failed') })
      expect((await asset(assetId)).path_proxy).toBe(oldProxy)
      expect(identity(oldProxy)).toEqual(before)
      expect(leftovers()).toEqual([])
    } finally {
      writeFileSync(path, saved)
    }
  })

  test('while a remake works, the old proxy is untouched and the new one is a hidden file; once complete it takes the name', async () => {
    const old = (await asset(assetId)).path_proxy as string
    const before = identity(old)
    gate.shut()
    let r: Awaited<ReturnType<typeof t.request>>
    try {
      r = await t.request('POST', `/api/videoassets/${assetId}/proxy/`)
      expect(r.status).toBe(202)
      // ffmpeg is held: the task runs, its hidden file is made, the old proxy is as it was.
      await waitFor(() => leftovers().length === 1, 'the hidden file of the remake')
      expect((await task(r.json.task.id)).state).toBe('running')
      expect((await asset(assetId)).path_proxy).toBe(old)
      expect(identity(old)).toEqual(before)
    } finally {
      gate.open()
    }
    await t.runner.idle()
    expect((await task(r.json.task.id)).state).toBe('done')
    // The same name, now another file (renamed over the old one), and nothing hidden left.
    expect((await asset(assetId)).path_proxy).toBe(old)
    expect(identity(old).ino).not.toBe(before.ino)
    expect(videoOf(old).codec_name).toBe('prores')
    expect(leftovers()).toEqual([])
  })
})

describe('POST .../proxy/ refusals', () => {
  test('an asset that is not there: 404; one of another kind: 404; without write access: 403', async () => {
    expectError(await t.request('POST', '/api/videoassets/999999/proxy/'), 404, 'not_found')
    const path = placeClip(undefined, join(root, 'incoming', 'refusals.mov'))
    const made = await t.post('/api/videoassets/', { name: 'r', path_file: path, production: show.id })
    expect(made.status).toBe(201)
    expectError(await t.request('POST', `/api/audioassets/${made.json.id}/proxy/`), 404, 'not_found')
    const reader = base.makeUser('proxy-reader', { perms: ['browser.change_videoasset'], read: [show.id] })
    expectError(
      await t.request('POST', `/api/videoassets/${made.json.id}/proxy/`, { key: reader }),
      403,
      'permission_denied',
    )
    expect(runSync(t.db, t.runner.openFor({ videoasset: made.json.id }))).toEqual([])
  })
})

describe.skipIf(!hasFfmpeg)('reelhouse proxies remake', () => {
  test('queues a proxy task per asset of the production; the running runner takes them from the other process', async () => {
    const assets = (await t.get(`/api/videoassets/?production=${show.id}`)).json.filter(
      (a: { is_production: boolean }) => a.is_production,
    )
    const r = await runCli(['proxies', 'remake', '--production', show.name, '--data', t.dataDir])
    expect([r.code, r.stderr.split('\n').filter((l) => !l.startsWith('data='))]).toEqual([0, ['']])
    expect(r.stdout).toStartWith(`queued ${assets.length} proxy task(s) for production ${show.name} (id ${show.id})`)
    // Taken within a second or so of the commit, with no request to the app in between.
    const open = () =>
      (
        t.db.$client
          .query("SELECT count(*) AS n FROM tasks WHERE kind = 'proxy' AND state IN ('queued', 'running')")
          .get() as { n: number }
      ).n
    await waitFor(() => open() === 0, 'the queued remakes to run', { ms: 60_000 })
    const ended = t.db.$client
      .query(
        "SELECT state, json_extract(target, '$.videoasset') AS asset FROM tasks WHERE kind = 'proxy' ORDER BY id DESC LIMIT ?",
      )
      .all(assets.length) as { state: string; asset: number }[]
    // Each asset's remake is done, but the one whose file is text (refusals' asset), which fails.
    expect(Object.fromEntries(ended.map((e) => [e.asset, e.state]))).toEqual(
      Object.fromEntries(assets.map((a: { id: number; name: string }) => [a.id, a.name === 'r' ? 'failed' : 'done'])),
    )
  })

  test('a production or profile that is not there: one line, exit 1; no --production: exit 2', async () => {
    const none = await runCli(['proxies', 'remake', '--production', 'Nope', '--data', t.dataDir])
    expect([none.code, none.stderr.trim().split('\n').at(-1)]).toEqual([1, 'reelhouse: no production named "Nope"'])
    const noProfile = await runCli([
      'proxies',
      'remake',
      '--production',
      show.name,
      '--profile',
      'Nope',
      '--data',
      t.dataDir,
    ])
    expect([noProfile.code, noProfile.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      'reelhouse: no transcoding profile named "Nope"',
    ])
    const usage = await runCli(['proxies', 'remake', '--data', t.dataDir])
    expect([usage.code, usage.stderr.trim()]).toEqual([
      2,
      'reelhouse: proxies remake needs --production NAME_OR_ID; see reelhouse proxies remake --help',
    ])
  })
})
