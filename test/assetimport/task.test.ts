// The work after an import's 201 (service.md 9), run by the task runner over real media made
// with ffmpeg: probing (checked against ffprobe's own JSON), proxies in the production's
// proxy_root (checked with ffprobe), rewraps, a file that is not media, a machine without
// ffmpeg, and move_asset within a file system and across two.
//
// The app's core finds ffmpeg in a folder of gated stand-ins (helpers/imports.ts gatedFfmpeg)
// that run the real binaries: the gate is open except where a test wants to see the ImportLog
// at the status the task reached before it probes. On a machine without ffmpeg
// (REELHOUSE_TEST_NO_FFMPEG=1) each test that needs it is replaced by one of the warning path,
// named so; the no-ffmpeg test runs everywhere.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, symlinkSync } from 'node:fs'
import { basename, join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import {
  IMPORT,
  type Kind,
  appWithFfmpegDir,
  assetOf,
  assetsAt,
  emptyFfmpegDir,
  expectImported,
  gatedFfmpeg,
  importBody,
  importTasksOf,
  logRow,
  logsOf,
  otherFileSystemDir,
  placeClip,
  placeFile,
  removeScratch,
  scratchDir,
  sha256,
} from '../helpers/imports.ts'
import { type Media, ff, ffprobeJson, hasFfmpeg, makeMedia } from '../helpers/media.ts'
import { waitFor } from '../helpers/wait.ts'
import { OTHER_TMP } from '../helpers/temp.ts'

/** With ffmpeg, the test; without, a test of the warning path in its place, saying so in its name. */
function withFfmpeg(name: string, fn: () => Promise<void>) {
  if (hasFfmpeg) return test(name, fn)
  test(`without ffmpeg, instead of "${name}": the import completes with warnings {probe, proxy}`, withoutFfmpeg)
}

let base: TestApp
let app: ReturnType<typeof appWithFfmpegDir>
let gate: ReturnType<typeof gatedFfmpeg>
let root: string
let device: { id: number; name: string }
let show: { id: number; proxy_root: string; codename: string; storage_root: string }
let media: Media
/** Made now: the name of the cross-device test says whether it crosses file systems. */
const far = otherFileSystemDir('reelhouse-far-disk-')
let farDevice: { id: number; name: string }

beforeAll(async () => {
  base = testApp(undefined, { tasks: false })
  ;({ root, device, production: show } = await seedProduction(base))
  farDevice = (await base.post('/api/devices/', { name: 'far-disk', path: far.dir })).json
  gate = gatedFfmpeg()
  gate.open()
  app = appWithFfmpegDir(base, gate.dir)
  media = await makeMedia(scratchDir('reelhouse-media-'), ['video', 'ntsc', 'audio', 'png'])
})

afterAll(async () => {
  await app.stop()
  base.cleanup()
  removeScratch()
})

let n = 0
/** A copy of one of the made media on the device, outside every production's folders. */
const place = (from: string, name = `${++n}-${basename(from)}`) => placeClip(from, join(root, 'incoming', name))

/** Imports, waits for every task to end, answers the asset id. */
async function imported(body: Record<string, any>, kind: Kind = 'video') {
  const id = expectImported(await app.post(IMPORT, body), body, 'asset_creation_completed', kind)
  await app.runner.idle()
  return id
}

const streamOf = (path: string, type: 'video' | 'audio') =>
  ffprobeJson(path).streams.find((s) => s.codec_type === type)!
/** The picture and sound streams of a file (a timecode track, a data stream, is left out). */
const codecs = (path: string) =>
  ffprobeJson(path)
    .streams.filter((s) => s.codec_type === 'video' || s.codec_type === 'audio')
    .map((s) => `${s.codec_type}:${s.codec_name}`)

/** The video members api.md 4.10 names, worked out from ffprobe's own JSON of the file. */
function videoMembersOf(path: string) {
  const json = ffprobeJson(path)
  const v = json.streams.find((s) => s.codec_type === 'video')!
  const [num, den] = (v.r_frame_rate as string).split('/').map(Number) as [number, number]
  return {
    duration: Math.round((Number(v.duration) * num) / den),
    fps: v.r_frame_rate,
    width: v.width,
    height: v.height,
    format: json.format.format_name,
    display_aspect_ratio: v.display_aspect_ratio && v.display_aspect_ratio !== '0:1' ? v.display_aspect_ratio : '4:3',
  }
}

/**
 * The members docs/media.md adds for a 320×240 H.264 clip of makeMedia (test/assetimport/
 * probe-facts.test.ts checks them on every kind of file).
 */
const h264Facts = (path: string, audio_streams: unknown[] = []) => ({
  video_codec: 'h264',
  video_profile: streamOf(path, 'video').profile,
  bit_depth: 8,
  pix_fmt: 'yuv420p',
  field_order: 'progressive',
  sample_aspect_ratio: '1:1',
  rotation: 0,
  variable_frame_rate: false,
  audio_streams,
})
const aacMono = (index: number) => ({
  index,
  codec: 'aac',
  channels: 1,
  channel_layout: 'mono',
  sample_rate: 48000,
  bit_depth: null,
})

/** A proxy of the asset: inside the production's proxy_root, there, with these streams. */
function expectProxy(path: string, streams: string[]) {
  expect(path.startsWith(show.proxy_root)).toBe(true)
  expect(existsSync(path)).toBe(true)
  expect(codecs(path)).toEqual(streams)
}

describe('probing and proxies', () => {
  withFfmpeg(
    'video at 25 fps: import_completed; duration in frames, fps, size, format, aspect as ffprobe says; an H.264/AAC proxy',
    async () => {
      const path = place(media.video)
      const id = await imported(importBody(path))
      expect(await logsOf(app.request, path)).toEqual([
        logRow({ asset_path: path, status: 'import_completed', asset_import_id: id }),
      ])
      const asset = await assetOf(app.request, id)
      const probed = videoMembersOf(path)
      expect(probed).toMatchObject({ duration: 50, fps: '25/1', width: 320, height: 240 })
      expect(asset).toMatchObject({ status_asset: 6, path_file: path })
      // The clip's timecode track says 01:00:00:00: 90000 frames at 25.
      expect(asset.technical).toEqual({
        ...probed,
        annotation_markers: [],
        offset_string: '01:00:00:00',
        offset_frames: 90000,
        timecode_source: 'file',
        ...h264Facts(path, [aacMono(1)]),
      })
      expectProxy(asset.path_proxy, ['video:h264', 'audio:aac'])
      expect((await importTasksOf(app.request, id)).map((t) => t.state)).toEqual(['done'])
    },
  )

  withFfmpeg('video at 30000/1001 fps: fps kept as that fraction, duration in frames at that rate', async () => {
    const path = place(media.ntsc)
    const id = await imported(importBody(path))
    const asset = await assetOf(app.request, id)
    const probed = videoMembersOf(path)
    expect(probed).toMatchObject({ fps: '30000/1001', duration: 30 })
    expect(asset.technical).toEqual({ ...probed, annotation_markers: [], ...h264Facts(path) })
    expectProxy(asset.path_proxy, ['video:h264'])
  })

  withFfmpeg("audio: technical_details are ffprobe's format members and tags; an AAC proxy (.m4a)", async () => {
    const path = place(media.audio)
    const id = await imported(importBody(path, {}, {}, { type: 'audio' }), 'audio')
    const { format } = ffprobeJson(path)
    const tags = format.tags ?? {}
    const expected = Object.fromEntries(
      Object.entries({
        name: basename(path),
        filename: path,
        nb_Streams: format.nb_streams,
        formate_name: format.format_name,
        format_long_name: format.format_long_name,
        start_time: format.start_time,
        duration: format.duration,
        size: format.size,
        bit_rate: format.bit_rate,
        major_brand: tags.major_brand,
        minor_version: tags.minor_version,
        compatible_brands: tags.compatible_brands,
        create_time: tags.creation_time,
        encoder: tags.encoder,
        audio_streams: [aacMono(0)],
      }).filter(([, v]) => v !== undefined),
    )
    expect(expected).toMatchObject({
      formate_name: 'mov,mp4,m4a,3gp,3g2,mj2',
      create_time: '2024-05-01T10:00:00.000000Z',
    })
    const asset = await assetOf(app.request, id, 'audio')
    expect(asset.technical).toEqual(expected)
    expect(asset.path_proxy.endsWith('.m4a')).toBe(true)
    expectProxy(asset.path_proxy, ['audio:aac'])
    expect(await logsOf(app.request, path)).toEqual([
      logRow({ asset_type: 'audioasset', asset_path: path, status: 'import_completed', asset_import_id: id }),
    ])
  })

  withFfmpeg('image: width, height and format; a JPEG proxy', async () => {
    const path = place(media.png)
    const id = await imported(importBody(path, {}, {}, { type: 'image' }), 'image')
    const asset = await assetOf(app.request, id, 'image')
    const v = streamOf(path, 'video')
    expect(asset.technical).toEqual({ width: v.width, height: v.height, format: 'png' })
    expectProxy(asset.path_proxy, ['video:mjpeg'])
  })

  withFfmpeg('members the request gives are kept; probing fills only the others (video and audio)', async () => {
    const video = place(media.video)
    const id = await imported(
      importBody(video, { width: 1920, fps: '24', format: 'given-format', display_aspect_ratio: '16:9' }),
    )
    const probed = videoMembersOf(video)
    // The file's timecode, 01:00:00:00, is counted at the fps the request gave: 86400 frames at 24.
    expect((await assetOf(app.request, id)).technical).toEqual({
      annotation_markers: [],
      width: 1920,
      fps: '24/1',
      format: 'given-format',
      display_aspect_ratio: '16:9',
      height: probed.height,
      duration: probed.duration,
      offset_string: '01:00:00:00',
      offset_frames: 86400,
      timecode_source: 'file',
      ...h264Facts(video, [aacMono(1)]),
    })
    const audio = place(media.audio)
    const audioId = await imported(
      importBody(audio, {}, { technical_details: { encoder: 'mine', duration: '99.000000' } }, { type: 'audio' }),
      'audio',
    )
    const technical = (await assetOf(app.request, audioId, 'audio')).technical
    expect(technical).toMatchObject({
      encoder: 'mine',
      duration: '99.000000',
      filename: audio,
      formate_name: 'mov,mp4,m4a,3gp,3g2,mj2',
    })
  })

  withFfmpeg(
    'rewrap_proxy with a readable path_proxy: the proxy is rewrapped, keeping the codec of the old proxy (MPEG-4, not H.264)',
    async () => {
      const old = join(root, 'incoming', `${++n}-old-proxy.avi`)
      await ff.run(
        'ffmpeg',
        [
          '-nostdin',
          '-v',
          'error',
          '-f',
          'lavfi',
          '-i',
          'testsrc=size=160x120:rate=25',
          '-t',
          '1',
          '-c:v',
          'mpeg4',
          old,
        ],
        { timeoutMs: 30_000 },
      )
      const path = place(media.video)
      const body = importBody(path, { path_proxy: old }, {}, { rewrap_proxy: true })
      const id = await imported(body)
      const asset = await assetOf(app.request, id)
      expect(asset.path_proxy).not.toBe(old)
      expectProxy(asset.path_proxy, ['video:mpeg4'])
      expect(streamOf(asset.path_proxy, 'video')).toMatchObject({ width: 160, height: 120 })
      expect(existsSync(old)).toBe(true)
      expect(await logsOf(app.request, path)).toEqual([
        logRow({ asset_path: path, status: 'import_completed', asset_import_id: id, warning: {} }),
      ])
    },
  )

  withFfmpeg(
    'rewrap_proxy without path_proxy, or with one that is not there: a new proxy and a rewrap warning',
    async () => {
      for (const meta of [{}, { path_proxy: join(root, 'incoming', 'no-such-proxy.mp4') }]) {
        const path = place(media.video)
        const id = await imported(importBody(path, meta, {}, { rewrap_proxy: true }))
        expectProxy((await assetOf(app.request, id)).path_proxy, ['video:h264', 'audio:aac'])
        expect(await logsOf(app.request, path)).toEqual([
          logRow({
            asset_path: path,
            status: 'import_completed',
            asset_import_id: id,
            warning: { rewrap: expect.stringMatching(/\S/) },
          }),
        ])
      }
    },
  )

  withFfmpeg(
    'a file that is not media, named .mov: import_failed with the error, the asset status_asset -1, the task failed',
    async () => {
      const path = placeFile(join(root, 'incoming', `${++n}-notes.mov`), 'These are notes, not a movie.\n'.repeat(100))
      const id = await imported(importBody(path))
      expect(await logsOf(app.request, path)).toEqual([
        logRow({ asset_path: path, status: 'import_failed', error: expect.stringMatching(/\S/), asset_import_id: id }),
      ])
      expect((await assetOf(app.request, id)).status_asset).toBe(-1)
      expect((await importTasksOf(app.request, id)).map((t) => [t.state, t.error !== ''])).toEqual([['failed', true]])
    },
  )
})

test('without ffmpeg (createCore ffmpegDir naming an empty folder): import_completed with warnings {probe, proxy}, no proxy', () =>
  withoutFfmpeg())

async function withoutFfmpeg() {
  const lone = testApp(undefined, { tasks: false })
  const bare = appWithFfmpegDir(lone, emptyFfmpegDir())
  try {
    const { root: disk } = await seedProduction(lone)
    const path = placeClip(hasFfmpeg ? media.video : undefined, join(disk, 'incoming', 'clip.mov'))
    const body = importBody(path, { width: 320 })
    const id = expectImported(await bare.post(IMPORT, body), body, 'asset_creation_completed')
    await bare.runner.idle()
    expect(await logsOf(bare.request, path)).toEqual([
      logRow({
        asset_path: path,
        status: 'import_completed',
        asset_import_id: id,
        warning: { probe: expect.stringMatching(/ffprobe/), proxy: expect.stringMatching(/ffmpeg/) },
      }),
    ])
    expect(await assetOf(bare.request, id)).toMatchObject({
      status_asset: 6,
      path_proxy: '',
      technical: { annotation_markers: [], width: 320 },
    })
    expect(Object.keys((await assetOf(bare.request, id)).technical).sort()).toEqual(['annotation_markers', 'width'])
  } finally {
    await bare.stop()
    lone.cleanup()
  }
}

test('the file at path_file replaced by another between the request and the task: the move refuses it (import_failed), the newcomer stays put', async () => {
  // A paused world: the request queues the task, the disk changes, then the runner starts.
  const paused = testApp(undefined, { tasks: false })
  try {
    const { root: disk, production: own } = await seedProduction(paused)
    const path = placeFile(join(disk, 'incoming', 'swapped.mov'), 'the original\n')
    const id = expectImported(
      await paused.post(IMPORT, importBody(path, {}, {}, { move_asset: true })),
      importBody(path, {}, {}, { move_asset: true }),
      'asset_creation_completed',
    )
    renameSync(path, `${path}.old`)
    placeFile(path, 'a newcomer\n')
    paused.runner.start()
    await paused.runner.idle()
    expect(await logsOf(paused.request, path)).toEqual([
      logRow({ asset_path: path, status: 'import_failed', error: expect.stringMatching(/\S/), asset_import_id: id }),
    ])
    expect(readFileSync(path, 'utf8')).toBe('a newcomer\n')
    expect(existsSync(join(own.storage_root, 'video', 'swapped.mov'))).toBe(false)
    expect(await assetOf(paused.request, id)).toMatchObject({ path_file: path, status_asset: -1 })
  } finally {
    await paused.runner.stop()
    paused.cleanup()
  }
})

describe('move_asset', () => {
  /** Where a move puts a kind on the device that holds the production's storage_root: inside it. */
  const ownFolder = (kind: Kind = 'video') => join(show.storage_root, kind)
  /** Where a move puts a kind on any other device: DEVICE/CODENAME/<kind>/. */
  const deviceFolder = (disk: string, kind: Kind = 'video') => join(disk, show.codename, kind)

  withFfmpeg(
    "within the device holding the production's storage_root: the file goes to STORAGE_ROOT/video/<name> (not DEVICE/<codename>/video/), path_file follows, the ImportLog passes asset_move_completed",
    async () => {
      const name = `${++n}-moved.mov`
      const path = place(media.video, name)
      const hash = sha256(path)
      const body = importBody(path, {}, {}, { move_asset: true })
      gate.close()
      let id: number
      try {
        id = expectImported(await app.post(IMPORT, body), body, 'asset_creation_completed')
        // ffprobe waits at the gate, so the task stops right after the move.
        await waitFor(
          async () => (await logsOf(app.request, path))[0]!.status === 'asset_move_completed',
          'the move to be logged',
          { ms: 20_000 },
        )
      } finally {
        gate.open()
      }
      const target = join(ownFolder(), name)
      expect([existsSync(path), existsSync(target), existsSync(deviceFolder(root))]).toEqual([false, true, false])
      expect((await assetOf(app.request, id)).path_file).toBe(target)
      await app.runner.idle()
      expect(sha256(target)).toBe(hash)
      expect(await logsOf(app.request, path)).toEqual([
        logRow({
          asset_path: path,
          status: 'import_completed',
          asset_import_id: id,
          asset_config: { move_asset: true, rewrap_proxy: false, asset_destination: device.name },
        }),
      ])
      const asset = await assetOf(app.request, id)
      expect(asset).toMatchObject({ path_file: target, device: device.id, status_asset: 6 })
      // A rename within one file system reads no bytes: no hash is kept.
      expect(asset.technical.hashes).toBeUndefined()
      expect(await assetsAt(app.request, path)).toEqual([])
      expect(await assetsAt(app.request, target)).toEqual([expect.objectContaining({ id })])
      expectProxy(asset.path_proxy, ['video:h264', 'audio:aac'])
    },
  )

  withFfmpeg('a name that is taken in the target folder: name_1.mov, the other file untouched', async () => {
    const name = `${++n}-taken.mov`
    const squatter = placeFile(join(ownFolder(), name), 'someone else\n')
    const path = place(media.video, name)
    const hash = sha256(path)
    const id = await imported(importBody(path, {}, {}, { move_asset: true }))
    const target = join(ownFolder(), name.replace(/\.mov$/, '_1.mov'))
    expect(await assetOf(app.request, id)).toMatchObject({ path_file: target, status_asset: 6 })
    expect([existsSync(path), sha256(target)]).toEqual([false, hash])
    expect(readFileSync(squatter, 'utf8')).toBe('someone else\n')
  })

  const across = () =>
    far.cross
      ? `onto a device on another file system (${OTHER_TMP})`
      : 'onto another device (both on one file system here: the machine has no second one)'
  withFfmpeg(
    `asset_destination ${across()}: copied across, the source removed, the content identical, its hash kept`,
    async () => {
      const name = `${++n}-far.mov`
      const path = place(media.video, name)
      const hash = sha256(path)
      const xxh64 = Bun.hash.xxHash64(readFileSync(path), 0n).toString(16).padStart(16, '0')
      const id = await imported(importBody(path, {}, {}, { move_asset: true, asset_destination: 'far-disk' }))
      // far-disk does not hold the production's storage_root: DEVICE/CODENAME/video/.
      const target = join(deviceFolder(far.dir), name)
      expect([existsSync(path), existsSync(target)]).toEqual([false, true])
      expect(sha256(target)).toBe(hash)
      const asset = await assetOf(app.request, id)
      expect(asset).toMatchObject({ path_file: target, device: farDevice.id, status_asset: 6 })
      // The bytes were read and the copy checked by hash only where the move copied them; probing kept the hash.
      expect({ hashes: asset.technical.hashes, probed: asset.technical.width !== undefined }).toEqual({
        hashes: far.cross ? { xxh64 } : undefined,
        probed: true,
      })
      expect(readdirSync(deviceFolder(far.dir)).filter((f) => f.startsWith('.reelhouse-'))).toEqual([])
      expect(await logsOf(app.request, path)).toEqual([
        logRow({
          asset_path: path,
          status: 'import_completed',
          asset_import_id: id,
          asset_config: { move_asset: true, rewrap_proxy: false, asset_destination: 'far-disk' },
        }),
      ])
    },
  )

  withFfmpeg(
    'DEVICE/<codename> a symbolic link out of the device: import_failed, the file stays where it was, nothing written through the link',
    async () => {
      const linked = scratchDir('reelhouse-linked-disk-')
      const elsewhere = scratchDir('reelhouse-elsewhere-')
      symlinkSync(elsewhere, join(linked, show.codename))
      expect((await app.post('/api/devices/', { name: 'linked-disk', path: linked })).status).toBe(201)
      const path = place(media.video)
      const id = await imported(importBody(path, {}, {}, { move_asset: true, asset_destination: 'linked-disk' }))
      expect(await logsOf(app.request, path)).toEqual([
        logRow({ asset_path: path, status: 'import_failed', error: expect.stringMatching(/\S/), asset_import_id: id }),
      ])
      expect(existsSync(path)).toBe(true)
      expect(readdirSync(elsewhere)).toEqual([])
      expect(await assetOf(app.request, id)).toMatchObject({ path_file: path, device: device.id, status_asset: -1 })
    },
  )

  for (const [kind, clip] of [
    ['audio', 'audio'],
    ['image', 'png'],
  ] as const) {
    withFfmpeg(
      `an ${kind} file, also with asset_destination naming the device that holds storage_root: STORAGE_ROOT/${kind}/<name>`,
      async () => {
        for (const top of [{}, { asset_destination: device.name }]) {
          const path = place(media[clip])
          const id = await imported(importBody(path, {}, {}, { type: kind, move_asset: true, ...top }), kind)
          const target = join(ownFolder(kind), basename(path))
          expect([existsSync(path), existsSync(target), existsSync(deviceFolder(root, kind))]).toEqual([
            false,
            true,
            false,
          ])
          expect(await assetOf(app.request, id, kind)).toMatchObject({
            path_file: target,
            device: device.id,
            status_asset: 6,
          })
        }
      },
    )
  }

  test('devices nested in one another: the device that holds storage_root is the one with the longest path, not any device whose path is a prefix', async () => {
    // A world of its own: outer device /X/, a device nested in it /X/inner/ holding the storage_root
    // of Nested; a move onto the outer device goes to /X/<codename>/video/, onto the inner one into
    // the storage_root.
    const lone = testApp(undefined, { tasks: false })
    const bare = appWithFfmpegDir(lone, emptyFfmpegDir())
    try {
      const outer = scratchDir('reelhouse-outer-disk-')
      const inner = join(outer, 'inner')
      mkdirSync(inner)
      expect((await bare.post('/api/devices/', { name: 'outer', path: outer })).status).toBe(201)
      expect((await bare.post('/api/devices/', { name: 'inner', path: inner })).status).toBe(201)
      const made = await bare.post('/api/productions/', { name: 'Nested', storage_root: join(inner, 'Nested') })
      expect(made.status).toBe(201)
      const nested = made.json
      for (const [destination, folder] of [
        ['outer', join(outer, nested.codename, 'video')],
        ['inner', join(nested.storage_root, 'video')],
      ] as const) {
        const path = placeFile(join(outer, 'incoming', `${destination}.mov`), `to ${destination}\n`)
        const body = importBody(
          path,
          {},
          {},
          { production: 'Nested', move_asset: true, asset_destination: destination },
        )
        expectImported(await bare.post(IMPORT, body), body, 'asset_creation_completed')
        await bare.runner.idle()
        expect(readFileSync(join(folder, `${destination}.mov`), 'utf8')).toBe(`to ${destination}\n`)
      }
    } finally {
      await bare.stop()
      lone.cleanup()
    }
  })
})
