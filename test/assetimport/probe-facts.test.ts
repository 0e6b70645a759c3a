// Issue 26 points 1 and 2 through the HTTP API: each clip of the corpus (helpers/corpus.ts) is
// imported with POST /api/asset/import/ and its record read back with GET; `technical` holds
// the file's timecode and format facts, exactly. Then a timecode a user gave, kept by a
// re-import and a rescan; and once against the compiled executable.
//
// The app here finds ffprobe but no ffmpeg (a folder with only ffprobe): the import probes and
// skips the proxy with a warning, so the clips cost no transcoding. Without ffmpeg on the
// machine these tests are skipped (the warning path is test/assetimport/task.test.ts's).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, renameSync, symlinkSync } from 'node:fs'
import { basename, join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { type CorpusClip, CORPUS_FILES, corpus, hasFfmpeg } from '../helpers/corpus.ts'
import {
  IMPORT,
  type Kind,
  appWithFfmpegDir,
  assetOf,
  expectImported,
  importBody,
  placeClip,
  removeScratch,
  scratchDir,
} from '../helpers/imports.ts'
import { ff, ffprobeJson } from '../helpers/media.ts'
import { call, compiledExecutable, killAll, startServe } from '../helpers/process.ts'
import { tempDir } from '../helpers/temp.ts'
import { waitFor } from '../helpers/wait.ts'
import { runSync } from '../../src/db/port.ts'

setDefaultTimeout(120_000)

const MOV = 'mov,mp4,m4a,3gp,3g2,mj2'
const ALL = Object.keys(CORPUS_FILES) as CorpusClip[]

let base: TestApp
let app: ReturnType<typeof appWithFfmpegDir>
let root: string
let clips: Record<CorpusClip, string>

beforeAll(async () => {
  if (!hasFfmpeg) return
  base = testApp(undefined, { tasks: false })
  ;({ root } = await seedProduction(base))
  const probeOnly = scratchDir('reelhouse-ffprobe-only-')
  symlinkSync(ff.paths.ffprobe!, join(probeOnly, 'ffprobe'))
  app = appWithFfmpegDir(base, probeOnly)
  clips = await corpus(ALL)
})

afterAll(async () => {
  await killAll()
  if (!hasFfmpeg) return
  await app.stop()
  base.cleanup()
  removeScratch()
})

let n = 0
/** A copy of a corpus clip on the device. */
const place = (clip: CorpusClip) => placeClip(clips[clip], join(root, 'incoming', `${++n}-${basename(clips[clip])}`))

/** Imports `path` as `kind` (asset_meta and technical_details members as given), runs its task, answers the record's technical. */
async function imported(
  path: string,
  kind: Kind = 'video',
  meta: Record<string, unknown> = {},
  technical_details?: Record<string, unknown>,
) {
  const body = importBody(path, meta, technical_details ? { technical_details } : {}, { type: kind })
  const id = expectImported(await app.post(IMPORT, body), body, 'asset_creation_completed', kind)
  await app.runner.idle()
  const asset = await assetOf(app.request, id, kind)
  expect(asset.status_asset).toBe(6)
  return { id, body, technical: asset.technical as Record<string, any> }
}

/** The members of an H.264 4:2:0 8-bit progressive clip with square pixels (libx264 ultrafast: Constrained Baseline). */
const H264 = {
  video_codec: 'h264',
  video_profile: 'Constrained Baseline',
  bit_depth: 8,
  pix_fmt: 'yuv420p',
  field_order: 'progressive',
  sample_aspect_ratio: '1:1',
  rotation: 0,
  variable_frame_rate: false,
  audio_streams: [],
}
const pcm = (index: number, bits: 16 | 24, channels: number, channel_layout: string | null) => ({
  index,
  codec: `pcm_s${bits}le`,
  channels,
  channel_layout,
  sample_rate: 48000,
  bit_depth: bits,
})

describe.skipIf(!hasFfmpeg)('what an import reads from each clip (docs/media.md "What is probed")', () => {
  test('23.976 ProRes 422 HQ MOV: tmcd 01:00:00:00 is 86400 frames on base 24; 10-bit 4:2:2, a stereo 24-bit track', async () => {
    const { technical } = await imported(place('prores2398'))
    expect(technical).toEqual({
      annotation_markers: [],
      duration: 24,
      fps: '24000/1001',
      width: 320,
      height: 240,
      format: MOV,
      display_aspect_ratio: '4:3',
      offset_string: '01:00:00:00',
      offset_frames: 86400,
      timecode_source: 'file',
      video_codec: 'prores',
      video_profile: 'HQ',
      bit_depth: 10,
      pix_fmt: 'yuv422p10le',
      field_order: 'progressive',
      sample_aspect_ratio: '1:1',
      rotation: 0,
      variable_frame_rate: false,
      audio_streams: [pcm(1, 24, 2, 'stereo')],
    })
  })

  test('29.97 H.264 MOV with drop-frame timecode: 00:59:59;28 kept with its ";", 107890 frames', async () => {
    const { technical } = await imported(place('h264DropFrame'))
    expect(technical).toEqual({
      annotation_markers: [],
      duration: 30,
      fps: '30000/1001',
      width: 320,
      height: 240,
      format: MOV,
      display_aspect_ratio: '4:3',
      offset_string: '00:59:59;28',
      offset_frames: 107890,
      timecode_source: 'file',
      ...H264,
    })
  })

  test('25i MPEG-2 MXF: the material package timecode 10:00:00:00 is 900000 frames; top field first, 4:2:2 profile', async () => {
    const { technical } = await imported(place('mxf25i'))
    expect(technical).toEqual({
      annotation_markers: [],
      duration: 25,
      fps: '25/1',
      width: 720,
      height: 576,
      format: 'mxf',
      display_aspect_ratio: '5:4',
      offset_string: '10:00:00:00',
      offset_frames: 900000,
      timecode_source: 'file',
      video_codec: 'mpeg2video',
      video_profile: '4:2:2',
      bit_depth: 8,
      pix_fmt: 'yuv422p',
      field_order: 'tff',
      sample_aspect_ratio: '1:1',
      rotation: 0,
      variable_frame_rate: false,
      audio_streams: [pcm(1, 16, 1, null)],
    })
  })

  test('1440×1080 anamorphic MP4: sample aspect 4:3, display 16:9; no timecode, so no offset members', async () => {
    const { technical } = await imported(place('anamorphic'))
    expect(technical).toEqual({
      annotation_markers: [],
      duration: 13,
      fps: '25/1',
      width: 1440,
      height: 1080,
      format: MOV,
      display_aspect_ratio: '16:9',
      ...H264,
      sample_aspect_ratio: '4:3',
    })
  })

  test('four mono tracks: four audio_streams in stream order, as a video and as an audio asset', async () => {
    const path = place('fourMono')
    const tracks = [1, 2, 3, 4].map((i) => pcm(i, 24, 1, null))
    const { technical } = await imported(path)
    expect(technical).toEqual({
      annotation_markers: [],
      duration: 25,
      fps: '25/1',
      width: 320,
      height: 240,
      format: MOV,
      display_aspect_ratio: '4:3',
      ...H264,
      audio_streams: tracks,
    })
    const audio = await imported(path, 'audio')
    expect(audio.technical).toMatchObject({ nb_Streams: 5, start_time: '0.000000', audio_streams: tracks })
    expect(audio.technical.time_code).toBeUndefined()
  })

  test('HDR: BT.2020 primaries and the PQ transfer (smpte2084), HEVC Main 10', async () => {
    const { technical } = await imported(place('hdrPq'))
    expect(technical).toEqual({
      annotation_markers: [],
      duration: 25,
      fps: '25/1',
      width: 320,
      height: 240,
      format: MOV,
      display_aspect_ratio: '4:3',
      ...H264,
      video_codec: 'hevc',
      video_profile: 'Main 10',
      bit_depth: 10,
      pix_fmt: 'yuv420p10le',
      color_primaries: 'bt2020',
      color_transfer: 'smpte2084',
    })
  })

  test("a phone's clip turned by its display matrix: rotation 90 (clockwise; ffprobe's side data says -90)", async () => {
    const path = place('phoneRotated')
    const side = ffprobeJson(path).streams[0]!.side_data_list
    expect(side).toEqual([expect.objectContaining({ side_data_type: 'Display Matrix', rotation: -90 })])
    const { technical } = await imported(path)
    expect(technical).toEqual({
      annotation_markers: [],
      duration: 30,
      fps: '30/1',
      width: 320,
      height: 240,
      format: MOV,
      display_aspect_ratio: '4:3',
      ...H264,
      rotation: 90,
    })
  })

  test('variable frame rate: r_frame_rate 30/1, average 600/29: variable_frame_rate true, fps the average', async () => {
    const path = place('vfr')
    const stream = ffprobeJson(path).streams[0]!
    expect([stream.r_frame_rate, stream.avg_frame_rate]).toEqual(['30/1', '600/29'])
    const { technical } = await imported(path)
    expect(technical).toEqual({
      annotation_markers: [],
      duration: 40,
      fps: '600/29',
      width: 320,
      height: 240,
      format: MOV,
      display_aspect_ratio: '4:3',
      ...H264,
      variable_frame_rate: true,
    })
  })

  test('broadcast WAV, stereo, no iXML: time_reference 172824000 at 48 kHz is 01:00:00:12 at 25 fps', async () => {
    const path = place('bwfStereo')
    const { technical } = await imported(path, 'audio')
    const { format } = ffprobeJson(path)
    expect(format.tags.time_reference).toBe('172824000')
    expect(technical).toEqual({
      name: basename(path),
      filename: path,
      nb_Streams: 1,
      formate_name: 'wav',
      format_long_name: 'WAV / WAVE (Waveform Audio)',
      size: format.size,
      // ffprobe gives a WAV no start time: a broadcast WAV's is its time_reference in seconds.
      start_time: '3600.500000',
      duration: '1.000000',
      bit_rate: format.bit_rate,
      encoder: format.tags.encoder,
      time_code: '01:00:00:12',
      timecode_source: 'file',
      audio_streams: [pcm(0, 24, 2, 'stereo')],
      // The bext chunk's members that are not empty (ffmpeg writes only the time reference).
      bext: { time_reference: 172824000 },
    })
  })

  test('broadcast WAV, mono, iXML 30000/1001 DF: time_reference 28800000 (600 s) is 17982 frames, 00:10:00;00', async () => {
    const { technical } = await imported(place('bwfMono'), 'audio')
    expect(technical).toMatchObject({
      time_code: '00:10:00;00',
      timecode_source: 'file',
      audio_streams: [pcm(0, 16, 1, null)],
    })
    // ffprobe gives a WAV no start time: its bext time_reference over the sample rate, 600 s.
    expect(technical.start_time).toBe('600.000000')
    // An iXML with no PROJECT, SCENE, TAKE, TAPE or NOTE adds no ixml member.
    expect(technical.ixml).toBeUndefined()
  })

  test('a JPEG with EXIF Orientation 6: width, height, format and orientation', async () => {
    const { technical } = await imported(place('jpegExif'), 'image')
    expect(technical).toEqual({ width: 320, height: 240, format: 'jpeg', orientation: 6 })
  })

  test('the ProRes MOV as an audio asset: time_code from its tmcd track, start_time as ffprobe gives it', async () => {
    const { technical } = await imported(place('prores2398'), 'audio')
    expect(technical).toMatchObject({
      time_code: '01:00:00:00',
      start_time: '0.000000',
      nb_Streams: 3,
      audio_streams: [pcm(1, 24, 2, 'stereo')],
    })
  })
})

describe.skipIf(!hasFfmpeg)('a timecode a user gave is kept', () => {
  test("an offset_string given without fps is counted at the file's rate; a re-import and a rescan keep it, a new one replaces it", async () => {
    const path = place('h264DropFrame')
    const first = await imported(path, 'video', { offset_string: '01:00:00;00' })
    // 01:00:00;00 at 29.97 drop frame: 108000 − 2 × (60 − 6).
    expect(first.technical).toMatchObject({
      offset_string: '01:00:00;00',
      offset_frames: 107892,
      timecode_source: 'request',
    })
    const reimport = async (meta: Record<string, unknown> = {}) => {
      const body = importBody(path, meta)
      expectImported(await app.post(IMPORT, body), body, 'asset_update_completed')
      await app.runner.idle()
      return (await assetOf(app.request, first.id)).technical
    }
    expect(await reimport()).toMatchObject({
      offset_string: '01:00:00;00',
      offset_frames: 107892,
      timecode_source: 'request',
      video_codec: 'h264',
    })

    // A full scan of the device after the file was renamed: the asset follows it, its timecode stays.
    const moved = join(root, 'incoming', 'renamed', basename(path))
    mkdirSync(join(moved, '..'), { recursive: true })
    renameSync(path, moved)
    const device = (await base.get('/api/devices/')).json[0].id as number
    runSync(
      base.db,
      app.runner.enqueue({ kind: 'scan', target: { device }, production: null, params: { device, paths: null } }),
    )
    await app.runner.idle()
    const after = await assetOf(app.request, first.id)
    expect(after.path_file).toBe(moved)
    expect(after.technical).toMatchObject({
      offset_string: '01:00:00;00',
      offset_frames: 107892,
      timecode_source: 'request',
    })
    renameSync(moved, path)
    runSync(
      base.db,
      app.runner.enqueue({ kind: 'scan', target: { device }, production: null, params: { device, paths: null } }),
    )
    await app.runner.idle()

    // offset_frames given: it is the user's, and the string goes with the old timecode.
    expect(await reimport({ offset_frames: 1000 })).toMatchObject({ offset_frames: 1000, timecode_source: 'request' })
    expect((await assetOf(app.request, first.id)).technical.offset_string).toBeUndefined()
    expect(await reimport()).toMatchObject({ offset_frames: 1000, timecode_source: 'request' })
  })

  test('a timecode read from the file is read again by a re-import; an audio time_code given is kept', async () => {
    const path = place('prores2398')
    const { id, technical } = await imported(path)
    expect(technical).toMatchObject({ offset_string: '01:00:00:00', offset_frames: 86400, timecode_source: 'file' })
    // The fps given now counts the file's timecode at 25: 90000.
    const body = importBody(path, { fps: '25' })
    expectImported(await app.post(IMPORT, body), body, 'asset_update_completed')
    await app.runner.idle()
    expect((await assetOf(app.request, id)).technical).toMatchObject({
      fps: '25/1',
      offset_string: '01:00:00:00',
      offset_frames: 90000,
      timecode_source: 'file',
    })

    const wav = place('bwfStereo')
    const audio = await imported(wav, 'audio', {}, { time_code: '11:00:00:00' })
    expect(audio.technical).toMatchObject({ time_code: '11:00:00:00', timecode_source: 'request' })
    const again = importBody(wav, {}, {}, { type: 'audio' })
    expectImported(await app.post(IMPORT, again), again, 'asset_update_completed', 'audio')
    await app.runner.idle()
    expect((await assetOf(app.request, audio.id, 'audio')).technical).toMatchObject({
      time_code: '11:00:00:00',
      timecode_source: 'request',
    })
  })
})

describe.skipIf(!hasFfmpeg)('the compiled executable', () => {
  test('imports the 23.976 ProRes clip: offset 01:00:00:00 = 86400 frames, video_codec prores', async () => {
    const [binary, clip] = await Promise.all([compiledExecutable(), corpus(['prores2398'])])
    const data = join(tempDir('reelhouse-e2e-probe-'), 'data')
    const disk = tempDir('reelhouse-e2e-disk-')
    const server = await startServe(data, { cli: [binary], cwd: disk })
    try {
      const key = (await server.proc.waitFor('stdout', /^([0-9a-f]{40})$/m))[1]!
      expect((await call(server, 'POST', '/devices/', key, { name: 'disk', path: disk })).status).toBe(201)
      expect(
        (await call(server, 'POST', '/productions/', key, { name: 'Show', storage_root: join(disk, 'Show') })).status,
      ).toBe(201)
      const path = placeClip(clip.prores2398, join(disk, 'incoming', 'a001.mov'))
      const reply = await call(server, 'POST', '/asset/import/', key, importBody(path))
      expect(reply.status).toBe(201)
      const id = reply.json.asset_import_id as number
      let asset: any
      await waitFor(
        async () => {
          asset = (await call(server, 'GET', `/videoassets/${id}/`, key)).json
          return asset.status_asset !== 0
        },
        'the import to end',
        { ms: 60_000, everyMs: 50 },
      )
      expect({
        status_asset: asset.status_asset,
        offset_frames: asset.technical.offset_frames,
        offset_string: asset.technical.offset_string,
        video_codec: asset.technical.video_codec,
      }).toEqual({ status_asset: 6, offset_frames: 86400, offset_string: '01:00:00:00', video_codec: 'prores' })
    } finally {
      await server.proc.stop('SIGTERM')
    }
  })
})
