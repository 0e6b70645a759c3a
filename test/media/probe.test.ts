// probe (src/media/probe.ts) on real files, checked against ffprobe's own JSON for the same file;
// the pure parts (frame rate, aspect ratio, odd JSON) without ffmpeg.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { closeSync, copyFileSync, mkdirSync, openSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MediaError } from '../../src/media/ffmpeg.ts'
import { displayAspectRatio, frameRate, interpret, probe } from '../../src/media/probe.ts'
import { type Media, ff, ffprobeJson, hasFfmpeg, makeMedia, disposableDir } from '../helpers/media.ts'

// Hashing, media and whole-document checks are CPU work: the bound of a test here only ends one that
// hangs (bun's 5 s failed them on a busy machine). setDefaultTimeout applies to this file only.
setDefaultTimeout(120_000)

const temp = disposableDir()
let media: Media
beforeAll(async () => {
  media = await makeMedia(temp.path, ['video', 'ntsc', 'audio', 'wav', 'png', 'jpeg', 'notMedia'])
})
afterAll(() => temp[Symbol.dispose]())

/** Without ffmpeg every probe refuses with the missing text. */
async function refusesAsMissing(run: () => Promise<unknown>) {
  const error = (await run().catch((e) => e)) as MediaError
  expect(error).toBeInstanceOf(MediaError)
  expect({ code: error.code, message: error.message }).toEqual({ code: 'missing', message: ff.missing('ffprobe')! })
}

/** The members api.md 4.10 names of a video (the rest is the extension docs/media.md names). */
const apiMembers = ({ duration, fps, width, height, format, display_aspect_ratio }: Record<string, unknown>) => ({
  duration,
  fps,
  width,
  height,
  format,
  display_aspect_ratio,
})

const without = (what: string) => `without ffmpeg: ${what} is refused, ffprobe being missing`

test(
  hasFfmpeg ? 'a 2 s 25 fps clip: 50 frames, 25/1, 320×240, 4:3, as ffprobe reports it' : without('a video probe'),
  async () => {
    if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, media.video, 'video'))
    const raw = ffprobeJson(media.video)
    const stream = raw.streams.find((s) => s.codec_type === 'video')!
    expect(apiMembers(await probe(ff, media.video, 'video'))).toEqual({
      duration: Math.round(Number(stream.duration) * 25),
      fps: stream.r_frame_rate,
      width: stream.width,
      height: stream.height,
      format: raw.format.format_name,
      display_aspect_ratio: stream.display_aspect_ratio,
    })
    expect(await probe(ff, media.video, 'video')).toEqual({
      duration: 50,
      fps: '25/1',
      width: 320,
      height: 240,
      format: 'mov,mp4,m4a,3gp,3g2,mj2',
      display_aspect_ratio: '4:3',
      offset_string: '01:00:00:00',
      offset_frames: 90000,
      video_codec: 'h264',
      video_profile: stream.profile,
      bit_depth: 8,
      pix_fmt: 'yuv420p',
      field_order: 'progressive',
      sample_aspect_ratio: '1:1',
      rotation: 0,
      variable_frame_rate: false,
      audio_streams: [
        { index: 1, codec: 'aac', channels: 1, channel_layout: 'mono', sample_rate: 48000, bit_depth: null },
      ],
    })
  },
)

test(
  hasFfmpeg ? 'a 1 s clip at 30000/1001 fps: 30 frames, fps as the fraction' : without('an NTSC-rate probe'),
  async () => {
    if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, media.ntsc, 'video'))
    const stream = ffprobeJson(media.ntsc).streams[0]!
    const info = await probe(ff, media.ntsc, 'video')
    expect(stream.avg_frame_rate).toBe('30000/1001')
    expect({ fps: info.fps, duration: info.duration }).toEqual({
      fps: '30000/1001',
      duration: Math.round((Number(stream.duration) * 30000) / 1001),
    })
    expect(info.duration).toBe(30)
  },
)

test(
  hasFfmpeg ? "audio technical_details: each member is ffprobe's value, tags included" : without('an audio probe'),
  async () => {
    if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, media.audio, 'audio'))
    const { format } = ffprobeJson(media.audio)
    expect(await probe(ff, media.audio, 'audio')).toEqual({
      name: 'tone.m4a',
      filename: media.audio,
      nb_Streams: format.nb_streams,
      formate_name: format.format_name,
      format_long_name: format.format_long_name,
      start_time: format.start_time,
      duration: format.duration,
      size: format.size,
      bit_rate: format.bit_rate,
      major_brand: format.tags.major_brand,
      minor_version: format.tags.minor_version,
      compatible_brands: format.tags.compatible_brands,
      create_time: '2024-05-01T10:00:00.000000Z',
      encoder: format.tags.encoder,
      audio_streams: [
        { index: 0, codec: 'aac', channels: 1, channel_layout: 'mono', sample_rate: 48000, bit_depth: null },
      ],
    })
  },
)

test(
  hasFfmpeg
    ? 'audio: members ffprobe does not report are left out (WAV), time_code from a timecode track'
    : without('a WAV probe'),
  async () => {
    if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, media.wav, 'audio'))
    const { format } = ffprobeJson(media.wav)
    const wav = await probe(ff, media.wav, 'audio')
    expect(wav).toEqual({
      name: 'tone.wav',
      filename: media.wav,
      nb_Streams: 1,
      formate_name: 'wav',
      format_long_name: format.format_long_name,
      duration: '2.000000',
      size: format.size,
      bit_rate: format.bit_rate,
      encoder: format.tags.encoder,
      audio_streams: [
        { index: 0, codec: 'pcm_s16le', channels: 1, channel_layout: null, sample_rate: 48000, bit_depth: 16 },
      ],
    })
    // toEqual passes over members set to undefined; the keys show they are absent.
    expect(Object.keys(wav).sort()).toEqual([
      'audio_streams',
      'bit_rate',
      'duration',
      'encoder',
      'filename',
      'format_long_name',
      'formate_name',
      'name',
      'nb_Streams',
      'size',
    ])
    // The clip's audio, probed as an audio asset: the timecode sits on its tracks, not on the file.
    const clip = await probe(ff, media.video, 'audio')
    expect({ time_code: clip.time_code, nb_Streams: clip.nb_Streams, major_brand: clip.major_brand }).toEqual({
      time_code: '01:00:00:00',
      nb_Streams: 3,
      major_brand: 'qt  ',
    })
  },
)

test(hasFfmpeg ? 'images: size and codec, PNG and JPEG' : without('an image probe'), async () => {
  if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, media.png, 'image'))
  const png = ffprobeJson(media.png).streams[0]!
  expect(await probe(ff, media.png, 'image')).toEqual({ width: png.width, height: png.height, format: 'png' })
  expect(await probe(ff, media.jpeg, 'image')).toEqual({ width: 320, height: 240, format: 'jpeg' })
})

test(
  hasFfmpeg ? "a file that is not media: not_media, with ffprobe's reason" : without('probing a text file'),
  async () => {
    if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, media.notMedia, 'video'))
    const error = await probe(ff, media.notMedia, 'video').catch((e) => e)
    expect(error).toBeInstanceOf(MediaError)
    expect({ code: error.code, message: error.message }).toEqual({
      code: 'not_media',
      message: `${media.notMedia} is not a media file ffprobe can read ([mov,mp4,m4a,3gp,3g2,mj2] moov atom not found | Invalid data found when processing input)`,
    })
  },
)

test(
  hasFfmpeg ? 'the wrong kind: audio has no video stream, an image has no duration' : without('probing the wrong kind'),
  async () => {
    if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, media.audio, 'video'))
    expect(await probe(ff, media.audio, 'video').catch((e) => e.message)).toBe(`${media.audio} has no video stream`)
    expect(await probe(ff, media.png, 'audio').catch((e) => e.message)).toBe(`${media.png} has no audio stream`)
    expect(await probe(ff, media.png, 'video').catch((e) => e.message)).toBe(
      `${media.png}: ffprobe reports no duration`,
    )
  },
)

test(hasFfmpeg ? 'a missing file or a folder: not_found' : without('probing a missing file'), async () => {
  if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, join(temp.path, 'gone.mov'), 'video'))
  const gone = join(temp.path, 'gone.mov')
  expect(await probe(ff, gone, 'video').catch((e) => [e.code, e.message])).toEqual([
    'not_found',
    `${gone} does not exist`,
  ])
  const folder = join(temp.path, 'folder.mov')
  mkdirSync(folder)
  expect(await probe(ff, folder, 'video').catch((e) => [e.code, e.message])).toEqual([
    'not_found',
    `${folder} is not a regular file`,
  ])
})

test(
  hasFfmpeg ? 'a name that looks like an option or a protocol is read as a file' : without('probing an odd name'),
  async () => {
    if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, media.video, 'video'))
    const odd = join(temp.path, 'concat:-i')
    await Bun.write(odd, Bun.file(media.video))
    expect((await probe(ff, odd, 'video')).duration).toBe(50)
  },
)

test(hasFfmpeg ? 'an aborted probe rejects without running' : without('an aborted probe'), async () => {
  if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, media.video, 'video', { signal: AbortSignal.abort() }))
  expect(
    (await probe(ff, media.video, 'video', { signal: AbortSignal.abort('stop') }).catch((e) => e)).constructor.name,
  ).toBe('CancelledError')
})

test('frame rate: r_frame_rate when the average agrees; else the average, snapped to a standard rate', () => {
  expect(frameRate('25/1', '25/1')).toEqual({ text: '25/1', value: 25 })
  expect(frameRate('30000/1001', '30000/1001')?.text).toBe('30000/1001')
  // Interlaced 25i: r counts fields.
  expect(frameRate('50/1', '25/1')?.text).toBe('25/1')
  // A phone's variable-rate clip: r is the timebase, the average is almost 29.97.
  expect(frameRate('90000/1', '53946/1800')?.text).toBe('30000/1001')
  // An average that is no standard rate stays as it is.
  expect(frameRate('90000/1', '17/1')?.text).toBe('17/1')
  expect(frameRate('24/1', '0/0')?.text).toBe('24/1')
  expect(frameRate('0/0', '0/0')).toBeUndefined()
  expect(frameRate(undefined, 'N/A')).toBeUndefined()
})

test("display aspect ratio: ffprobe's when real, else from size and sample aspect", () => {
  expect(displayAspectRatio(1920, 1080, '1:1', '16:9')).toBe('16:9')
  expect(displayAspectRatio(1920, 1080, '0:1', '0:1')).toBe('16:9')
  expect(displayAspectRatio(1920, 1080)).toBe('16:9')
  expect(displayAspectRatio(720, 576, '64:45', '0:1')).toBe('16:9')
  expect(displayAspectRatio(720, 576, '16:15')).toBe('4:3')
  expect(displayAspectRatio(1440, 1080, '4:3')).toBe('16:9')
  expect(displayAspectRatio(4096, 2160, 'N/A')).toBe('256:135')
})

test('odd ffprobe JSON: MKV-style duration on the file only, a cover picture is no video, vendor tags', () => {
  const mkv = {
    streams: [
      {
        codec_type: 'video',
        width: 1920,
        height: 1080,
        sample_aspect_ratio: '0:1',
        r_frame_rate: '24000/1001',
        avg_frame_rate: '24000/1001',
      },
    ],
    format: { format_name: 'matroska,webm', duration: '10.010000' },
  }
  expect(interpret('video', mkv, '/x.mkv')).toEqual({
    duration: 240,
    fps: '24000/1001',
    width: 1920,
    height: 1080,
    format: 'matroska,webm',
    display_aspect_ratio: '16:9',
    video_codec: '',
    sample_aspect_ratio: '1:1',
    rotation: 0,
    variable_frame_rate: false,
    audio_streams: [],
  })
  const song = {
    streams: [
      { codec_type: 'audio' },
      {
        codec_type: 'video',
        codec_name: 'mjpeg',
        width: 500,
        height: 500,
        disposition: { attached_pic: 1 },
        r_frame_rate: '90000/1',
      },
    ],
    format: {
      nb_streams: 2,
      format_name: 'mp3',
      format_long_name: 'MP2/3',
      size: '100',
      tags: { ENCODER: 'LAME', 'com.apple.finalcutstudio.media.uuid': 'abc' },
    },
  }
  expect(() => interpret('video', song, '/x.mp3')).toThrow('/x.mp3 has no video stream')
  expect(interpret('image', song, '/x.mp3')).toEqual({ width: 500, height: 500, format: 'jpeg' })
  expect(interpret('audio', song, '/music/x.mp3')).toEqual({
    name: 'x.mp3',
    filename: '/music/x.mp3',
    nb_Streams: 2,
    formate_name: 'mp3',
    format_long_name: 'MP2/3',
    size: '100',
    encoder: 'LAME',
    com_vendor_final: 'abc',
    audio_streams: [{ index: 0, codec: '', channels: 0, channel_layout: null, sample_rate: 0, bit_depth: null }],
  })
})

test(
  hasFfmpeg
    ? 'with the descriptor of the file checked: what it reads is that file, though its path now names a text file'
    : without('a probe by descriptor'),
  async () => {
    const path = join(temp.path, 'swapped.mov')
    if (hasFfmpeg) copyFileSync(media.video, path)
    else writeFileSync(path, 'no ffmpeg made the clip') // refused before it is read
    const fd = openSync(path, 'r')
    try {
      if (!hasFfmpeg) return refusesAsMissing(() => probe(ff, path, 'video', { fd }))
      // Renamed away and a text file put in its place by name after the open.
      renameSync(path, join(temp.path, 'swapped-away.mov'))
      writeFileSync(path, 'not a clip')
      expect(await probe(ff, path, 'video', { fd })).toMatchObject({
        duration: 50,
        fps: '25/1',
        width: 320,
        height: 240,
      })
      // Without the descriptor the same path is read as what it names now.
      expect(((await probe(ff, path, 'video').catch((e) => e)) as MediaError).code).toBe('not_media')
    } finally {
      closeSync(fd)
    }
  },
)
