// Proxies made as the transcoding profile says (issue 26, points 3 and 4), read back with
// ffprobe. The built-in default is checked against what Premiere Pro and DaVinci Resolve need to
// attach a proxy (docs/media.md): the source's frame rate, field order, duration (within one
// frame), pixel aspect ratio, timecode track and audio layout, H.264 in MP4 at 540 lines or the
// source's height if smaller. Then each profile field is shown to change the proxy: one proxy
// per field, compared with the built-in default's proxy of the same clip.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { BUILT_IN, type ProfileFields } from '../../src/media/profile.ts'
import { makeProxy } from '../../src/media/proxy.ts'
import { type CorpusClip, corpus } from '../helpers/corpus.ts'
import { disposableDir, ff, ffprobeJson, hasFfmpeg } from '../helpers/media.ts'

const temp = disposableDir()
let n = 0
let clips: Record<CorpusClip | 'eightChannels' | 'tenChannels', string>

beforeAll(async () => {
  if (!hasFfmpeg) return
  const made = await corpus([
    'mxf25i',
    'anamorphic',
    'fourMono',
    'prores2398',
    'h264DropFrame',
    'phoneRotated',
    'bwfStereo',
  ] as const)
  // 1 s of 320×240 H.264 at 25 fps with one 8-channel 24-bit PCM stream (a recorder's poly file in a movie).
  const eightChannels = join(temp.path, 'eight-channels.mov')
  await ff.run(
    'ffmpeg',
    [
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=25',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:sample_rate=48000',
      '-t',
      '1',
      '-filter_complex',
      '[1:a]pan=7.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0|c6=c0|c7=c0[a]',
      '-map',
      '0:v',
      '-map',
      '[a]',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'pcm_s24le',
      eightChannels,
    ],
    { timeoutMs: 60_000 },
  )
  // The same with ten channels in its one stream: wider than AAC takes.
  const tenChannels = join(temp.path, 'ten-channels.mov')
  const tones = Array.from({ length: 10 }, (_, i) => [
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=${300 + 50 * i}:sample_rate=48000`,
  ]).flat()
  await ff.run(
    'ffmpeg',
    [
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=25',
      ...tones,
      '-t',
      '1',
      '-filter_complex',
      `${Array.from({ length: 10 }, (_, i) => `[${i + 1}:a]`).join('')}amerge=inputs=10[a]`,
      '-map',
      '0:v',
      '-map',
      '[a]',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'pcm_s24le',
      tenChannels,
    ],
    { timeoutMs: 60_000 },
  )
  clips = { ...(made as Record<CorpusClip, string>), eightChannels, tenChannels }
})
afterAll(() => temp[Symbol.dispose]())

/** A proxy of `source` made with the built-in default changed by `fields`. */
async function proxyOf(source: string, fields: Partial<ProfileFields> = {}) {
  const dir = join(temp.path, `proxies-${n++}`)
  mkdirSync(dir)
  return makeProxy(ff, { source, kind: 'video', baseName: 'p', proxyDir: dir, profile: { ...BUILT_IN, ...fields } })
}

type Stream = Record<string, any>
const rate = (r: string) => {
  const [a, b] = r.split('/').map(Number)
  return a! / (b ?? 1)
}
const sar = (s: Stream) => (!s.sample_aspect_ratio || s.sample_aspect_ratio === '0:1' ? '1:1' : s.sample_aspect_ratio)
const fieldOrder = (s: Stream) =>
  s.field_order === 'tt' || s.field_order === 'tb'
    ? 'tff'
    : s.field_order === 'bb' || s.field_order === 'bt'
      ? 'bff'
      : 'progressive'
const timecodeOf = (json: { format: Stream; streams: Stream[] }) =>
  json.format.tags?.timecode ?? json.streams.find((s) => s.tags?.timecode)?.tags.timecode

/** What point 4 compares: the same for a source and its proxy, but for the codec, the container and the height. */
function attachFacts(path: string) {
  const json = ffprobeJson(path)
  const video = json.streams.find((s: Stream) => s.codec_type === 'video')!
  return {
    frame_rate: video.r_frame_rate,
    field_order: fieldOrder(video),
    sample_aspect_ratio: sar(video),
    timecode: timecodeOf(json),
    audio: json.streams.filter((s: Stream) => s.codec_type === 'audio').map((s: Stream) => `${s.channels}ch`),
  }
}

/** Runs `jobs` two at a time (the suite's machines have two cores). */
async function twoAtATime<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = []
  let next = 0
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++
      out[i] = await jobs[i]!()
    }
  }
  await Promise.all([worker(), worker()])
  return out
}

describe.skipIf(!hasFfmpeg)('the built-in default attaches in Premiere Pro and DaVinci Resolve', () => {
  const cases: [string, CorpusClip | 'eightChannels', { height: number; width: number }][] = [
    ['25i MPEG-2 MXF with timecode: fields kept, top first', 'mxf25i', { width: 676, height: 540 }],
    ['1440×1080 anamorphic MP4: 4:3 pixels kept', 'anamorphic', { width: 720, height: 540 }],
    ['four mono tracks: four mono tracks', 'fourMono', { width: 320, height: 240 }],
    ['eight channels in one stream: eight channels in one stream', 'eightChannels', { width: 320, height: 240 }],
    ['23.976 ProRes with a timecode track and a stereo track', 'prores2398', { width: 320, height: 240 }],
    ['29.97 drop-frame timecode', 'h264DropFrame', { width: 320, height: 240 }],
  ]
  const proxies: string[] = []
  beforeAll(async () => {
    proxies.push(
      ...(await twoAtATime(
        cases.map(
          ([, clip]) =>
            () =>
              proxyOf(clips[clip]),
        ),
      )),
    )
  })
  cases.forEach(([name, clip, size], i) => {
    test(name, () => {
      const source = clips[clip]
      const proxy = proxies[i]!
      expect(proxy).toEndWith('/p.mp4')
      const json = ffprobeJson(proxy)
      const video = json.streams.find((s: Stream) => s.codec_type === 'video')!
      // H.264 in MP4, at 540 lines or the source's height if smaller.
      expect({
        format: json.format.format_name,
        brand: json.format.tags?.major_brand,
        codec: video.codec_name,
        width: video.width,
        height: video.height,
      }).toEqual({ format: 'mov,mp4,m4a,3gp,3g2,mj2', brand: 'isom', codec: 'h264', ...size })
      const facts = attachFacts(source)
      expect(attachFacts(proxy)).toEqual(facts)
      // A timecode track (tmcd) where the source has a timecode.
      expect(json.streams.some((s: Stream) => s.codec_type === 'data' && s.codec_tag_string === 'tmcd')).toBe(
        facts.timecode !== undefined,
      )
      // Every audio track AAC.
      expect(json.streams.filter((s: Stream) => s.codec_type === 'audio').map((s: Stream) => s.codec_name)).toEqual(
        facts.audio.map(() => 'aac'),
      )
      // The duration within one frame.
      const frame = 1 / rate(facts.frame_rate)
      expect(Math.abs(Number(json.format.duration) - Number(ffprobeJson(source).format.duration))).toBeLessThanOrEqual(
        frame + 1e-6,
      )
    })
  })
})

test.skipIf(!hasFfmpeg)(
  "a phone's quarter-turned clip: an upright proxy of the turned size, not squeezed into the stored one",
  async () => {
    const json = ffprobeJson(await proxyOf(clips.phoneRotated))
    const video = json.streams.find((s: Stream) => s.codec_type === 'video')!
    // The source stores 320×240 and turns it by a quarter; ffmpeg turns the frames, the proxy keeps their shape.
    expect({
      width: video.width,
      height: video.height,
      sar: sar(video),
      rotation: video.side_data_list?.[0]?.rotation,
    }).toEqual({ width: 240, height: 320, sar: '1:1', rotation: undefined })
  },
)

test.skipIf(!hasFfmpeg)(
  'a stream wider than the 8 channels AAC takes: dealt into streams of 8 (10 channels: 8 and 2), not refused',
  async () => {
    const json = ffprobeJson(await proxyOf(clips.tenChannels))
    expect(
      json.streams.filter((s: Stream) => s.codec_type === 'audio').map((s: Stream) => [s.codec_name, s.channels]),
    ).toEqual([
      ['aac', 8],
      ['aac', 2],
    ])
  },
)

test.skipIf(!hasFfmpeg)(
  "an audio file's proxy: AAC in .m4a at the profile's sample_rate, its sound kept whatever should_have_audio says",
  async () => {
    const dir = join(temp.path, `proxies-${n++}`)
    mkdirSync(dir)
    const path = await makeProxy(ff, {
      source: clips.bwfStereo,
      kind: 'audio',
      baseName: 'a',
      proxyDir: dir,
      profile: { ...BUILT_IN, codec_name: 'prores', should_have_audio: false, sample_rate: 44100 },
    })
    expect(path).toEndWith('/a.m4a')
    expect(
      ffprobeJson(path).streams.map((s: Stream) => [s.codec_type, s.codec_name, s.channels, s.sample_rate]),
    ).toEqual([['audio', 'aac', 2, '44100']])
  },
)

/** What a field can change in a proxy, read with ffprobe. */
function facts(path: string) {
  const json = ffprobeJson(path)
  const video = json.streams.find((s: Stream) => s.codec_type === 'video')
  return {
    container: path.slice(path.lastIndexOf('.') + 1),
    format: json.format.format_name as string,
    brand: json.format.tags?.major_brand as string | undefined,
    codec: video?.codec_name,
    profile: video?.profile,
    pix_fmt: video?.pix_fmt,
    width: video?.width,
    height: video?.height,
    field_order: video && fieldOrder(video),
    frame_rate: video?.r_frame_rate,
    bit_rate: Number(video?.bit_rate),
    audio: json.streams
      .filter((s: Stream) => s.codec_type === 'audio')
      .map((s: Stream) => ({ codec: s.codec_name, channels: s.channels, sample_rate: s.sample_rate })),
  }
}

describe.skipIf(!hasFfmpeg)('every profile field changes the proxy', () => {
  type Facts = ReturnType<typeof facts>
  /**
   * Each group: fields of a profile, and what its proxy of the 25i clip (or, with `four`, of the
   * four mono tracks) then shows instead of the built-in default's. Fields whose effects do not
   * meet share a proxy, so that the whole list costs a few runs of ffmpeg.
   */
  const groups: { fields: Partial<ProfileFields>; four?: true; shows: Partial<Facts> }[] = [
    {
      fields: { codec_name: 'prores' },
      shows: { container: 'mov', codec: 'prores', profile: 'Proxy', pix_fmt: 'yuv422p10le' },
    },
    { fields: { codec_name: 'prores', codec_profile: 'lt' }, shows: { codec: 'prores', profile: 'LT' } },
    {
      fields: { codec_name: 'dnxhd', codec_profile: 'dnxhr_lb', video_container: 'mxf' },
      shows: {
        container: 'mxf',
        format: 'mxf',
        codec: 'dnxhd',
        profile: 'DNXHR LB',
        pix_fmt: 'yuv422p',
        audio: [{ codec: 'pcm_s16le', channels: 1, sample_rate: '48000' }],
      },
    },
    {
      fields: {
        video_container: 'mov',
        audio_codec_name: 'pcm',
        bits_per_sample: 24,
        sample_rate: 44100,
        video_data_rate: '30k',
      },
      shows: { container: 'mov', brand: 'qt  ', audio: [{ codec: 'pcm_s24le', channels: 1, sample_rate: '44100' }] },
    },
    {
      fields: { width: 320, pix_fmt: 'yuv422p', should_have_audio: false },
      shows: { width: 320, height: 256, pix_fmt: 'yuv422p', profile: 'High 4:2:2', audio: [] },
    },
    {
      fields: { height: 288, frame_rate: '50', progressive: true, codec_profile: 'baseline' },
      shows: {
        height: 288,
        width: 360,
        frame_rate: '50/1',
        field_order: 'progressive',
        profile: 'Constrained Baseline',
      },
    },
    {
      fields: { passthrough: true, video_container: 'mov' },
      shows: { container: 'mov', codec: 'mpeg2video', width: 720, height: 576 },
    },
    {
      fields: { tracks: 2, channels_per_track: 2 },
      four: true,
      shows: { audio: Array(2).fill({ codec: 'aac', channels: 2, sample_rate: '48000' }) },
    },
    {
      fields: { tracks: 1, channels_per_track: 8 },
      four: true,
      shows: { audio: [{ codec: 'aac', channels: 8, sample_rate: '48000' }] },
    },
  ]
  let base: Facts
  let baseFour: Facts
  let made: Facts[]
  beforeAll(async () => {
    const all = await twoAtATime([
      () => proxyOf(clips.mxf25i),
      () => proxyOf(clips.fourMono),
      ...groups.map((g) => () => proxyOf(g.four ? clips.fourMono : clips.mxf25i, g.fields)),
    ])
    const read = all.map(facts)
    base = read[0]!
    baseFour = read[1]!
    made = read.slice(2)
  })

  test('the built-in default of the 25i clip and of the four mono tracks, for comparison', () => {
    expect(base).toEqual({
      container: 'mp4',
      format: 'mov,mp4,m4a,3gp,3g2,mj2',
      brand: 'isom',
      codec: 'h264',
      profile: 'High',
      pix_fmt: 'yuv420p',
      width: 676,
      height: 540,
      field_order: 'tff',
      frame_rate: '25/1',
      bit_rate: expect.any(Number),
      audio: [{ codec: 'aac', channels: 1, sample_rate: '48000' }],
    })
    expect(baseFour.audio).toEqual(Array(4).fill({ codec: 'aac', channels: 1, sample_rate: '48000' }))
  })

  groups.forEach((group, i) => {
    test(
      Object.entries(group.fields)
        .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
        .join(', '),
      () => {
        const facts = made[i]!
        expect(facts).toMatchObject(group.shows)
        // Each fact shown differs from the default's proxy of the same clip.
        const before = group.four ? baseFour : base
        for (const key of Object.keys(group.shows) as (keyof Facts)[])
          expect([key, facts[key]]).not.toEqual([key, before[key]])
      },
    )
  })

  test('video_data_rate "30k": what the encoder aims at, far below the default quality of the same size', () => {
    expect(made[3]!.width).toBe(base.width)
    expect(made[3]!.bit_rate).toBeLessThan(Math.min(60_000, base.bit_rate / 2))
  })
})
