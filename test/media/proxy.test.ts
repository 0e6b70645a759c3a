// makeProxy and rewrapProxy (src/media/proxy.ts) on real files; every result is read back with
// ffprobe. Without ffmpeg each test checks the refusal instead.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  copyFileSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { MediaError } from '../../src/media/ffmpeg.ts'
import {
  type MakeProxyOptions,
  TEMP_PREFIX,
  makeProxy,
  proxyArgs,
  rewrapProxy,
  timeLimitMs,
} from '../../src/media/proxy.ts'
import { BUILT_IN, encodingOf } from '../../src/media/profile.ts'
import { AT_FDCWD, DIR_FLAGS, cName, openat } from '../../src/storage/dirfd.ts'
import { CancelledError } from '../../src/storage/fs.ts'
import { type Media, ff, ffprobeJson, hasFfmpeg, makeMedia, disposableDir } from '../helpers/media.ts'

const temp = disposableDir()
let media: Media
let n = 0
/** A fresh, empty proxy folder. */
const proxyDir = () => {
  const dir = join(temp.path, `proxies-${n++}`)
  mkdirSync(dir)
  return dir
}
beforeAll(async () => {
  media = await makeMedia(temp.path, ['video', 'audio', 'png', 'long', 'notMedia'])
})
afterAll(() => temp[Symbol.dispose]())

const leftovers = (dir: string) => readdirSync(dir).filter((name) => name.startsWith(TEMP_PREFIX))
const streams = (json: { streams: Record<string, any>[] }) =>
  json.streams.map((s) =>
    s.codec_type === 'data'
      ? { type: 'data', tag: s.codec_tag_string }
      : { codec: s.codec_name, type: s.codec_type, ...(s.height ? { width: s.width, height: s.height } : {}) },
  )

/** Without ffmpeg: the call refuses with the missing text and writes nothing. */
async function refusesAsMissing(options: Omit<MakeProxyOptions, 'proxyDir'>, rewrap = false) {
  const dir = proxyDir()
  const error = await (rewrap
    ? rewrapProxy(ff, { ...options, kind: undefined, proxyDir: dir })
    : makeProxy(ff, { ...options, proxyDir: dir })
  ).catch((e) => e)
  expect(error).toBeInstanceOf(MediaError)
  expect({ code: error.code, message: error.message }).toEqual({ code: 'missing', message: ff.missing('ffmpeg')! })
  expect(readdirSync(dir)).toEqual([])
}
const without = (what: string) => `without ffmpeg: ${what} is refused, ffmpeg being missing`

test(
  hasFfmpeg
    ? 'video: an H.264/AAC MP4 scaled to the height asked, named by the caller, with progress'
    : without('a video proxy'),
  async () => {
    const options = { source: media.video, kind: 'video', baseName: '42' } as const
    if (!hasFfmpeg) return refusesAsMissing(options)
    const dir = proxyDir()
    const progress: number[] = []
    const path = await makeProxy(ff, {
      ...options,
      proxyDir: dir,
      height: 120,
      onProgress: (p) => p.fraction !== undefined && progress.push(p.fraction),
    })
    expect(path).toBe(join(dir, '42.mp4'))
    expect(readdirSync(dir)).toEqual(['42.mp4'])
    // The source's timecode comes along as a timecode track (tmcd), so the proxy's time matches the source's.
    const json = ffprobeJson(path)
    expect(streams(json)).toEqual([
      { codec: 'h264', type: 'video', width: 160, height: 120 },
      { codec: 'aac', type: 'audio' },
      { type: 'data', tag: 'tmcd' },
    ])
    expect(json.format).toMatchObject({ format_name: 'mov,mp4,m4a,3gp,3g2,mj2', tags: { major_brand: 'isom' } })
    expect(json.streams[0]!.tags.timecode).toBe('01:00:00:00')
    expect(progress.at(-1)).toBe(1)
  },
)

test(
  hasFfmpeg
    ? 'video: never upscaled (a 240-line source stays 240 at the default 540)'
    : without('a default-height proxy'),
  async () => {
    const options = { source: media.video, kind: 'video', baseName: 'clip.mp4' } as const
    if (!hasFfmpeg) return refusesAsMissing(options)
    const path = await makeProxy(ff, { ...options, proxyDir: proxyDir() })
    expect(path).toEndWith('/clip.mp4')
    expect(streams(ffprobeJson(path))[0]).toEqual({ codec: 'h264', type: 'video', width: 320, height: 240 })
  },
)

test(hasFfmpeg ? 'audio: AAC in .m4a' : without('an audio proxy'), async () => {
  const options = { source: media.audio, kind: 'audio', baseName: '7' } as const
  if (!hasFfmpeg) return refusesAsMissing(options)
  const path = await makeProxy(ff, { ...options, proxyDir: proxyDir() })
  expect(path).toEndWith('/7.m4a')
  expect(streams(ffprobeJson(path))).toEqual([{ codec: 'aac', type: 'audio' }])
})

test(hasFfmpeg ? 'image: a JPEG scaled to the height' : without('an image proxy'), async () => {
  const options = { source: media.png, kind: 'image', baseName: '9', height: 100 } as const
  if (!hasFfmpeg) return refusesAsMissing(options)
  const path = await makeProxy(ff, { ...options, proxyDir: proxyDir() })
  expect(path).toEndWith('/9.jpg')
  expect(streams(ffprobeJson(path))).toEqual([{ codec: 'mjpeg', type: 'video', width: 134, height: 100 }])
})

test(
  hasFfmpeg ? 'rewrap: the same H.264 and AAC streams, now in MP4, not re-encoded' : without('a rewrap'),
  async () => {
    const options = { source: media.video, kind: 'video', baseName: '42' } as const
    if (!hasFfmpeg) return refusesAsMissing(options, true)
    const path = await rewrapProxy(ff, { source: media.video, proxyDir: proxyDir(), baseName: '42' })
    expect(path).toEndWith('/42.mp4')
    const before = ffprobeJson(media.video).streams
    const after = ffprobeJson(path)
    expect(after.format.tags.major_brand).toBe('isom')
    // Bit-exact copies: same codecs, sizes, frame counts and bit rates (the timecode track is made anew from the timecode).
    const pick = (s: Record<string, any>) => ({
      type: s.codec_type,
      codec: s.codec_name ?? s.codec_tag_string,
      width: s.width,
      height: s.height,
      nb_frames: s.nb_frames,
      bit_rate: s.bit_rate,
    })
    expect(after.streams.map(pick)).toEqual(before.map(pick))
  },
)

test(
  hasFfmpeg
    ? 'a taken name is refused, before and after the work; the file there is untouched'
    : without('a proxy over a taken name'),
  async () => {
    const options = { source: media.png, kind: 'image', baseName: '5' } as const
    if (!hasFfmpeg) return refusesAsMissing(options)
    const dir = proxyDir()
    writeFileSync(join(dir, '5.jpg'), "someone else's")
    const error = await makeProxy(ff, { ...options, proxyDir: dir }).catch((e) => e)
    expect({ code: error.code, message: error.message }).toEqual({
      code: 'taken',
      message: `${join(dir, '5.jpg')} exists; a proxy never overwrites`,
    })
    // Taken while ffmpeg works (here: when it reports its end): placing refuses too.
    const late = proxyDir()
    const racing = await makeProxy(ff, {
      ...options,
      kind: 'video',
      source: media.video,
      proxyDir: late,
      onProgress: (p) => p.done && writeFileSync(join(late, '5.mp4'), "someone else's"),
    }).catch((e) => e)
    expect(racing.code).toBe('taken')
    expect(readdirSync(late)).toEqual(['5.mp4'])
    expect(readFileSync(join(late, '5.mp4'), 'utf8')).toBe("someone else's")
  },
)

test(hasFfmpeg ? 'ifTaken "number": name_1, name_2' : without('a numbered proxy name'), async () => {
  const options = { source: media.png, kind: 'image', baseName: '5', ifTaken: 'number' } as const
  if (!hasFfmpeg) return refusesAsMissing(options)
  const dir = proxyDir()
  writeFileSync(join(dir, '5.jpg'), 'x')
  expect(await makeProxy(ff, { ...options, proxyDir: dir })).toBe(join(dir, '5_1.jpg'))
  expect(await makeProxy(ff, { ...options, proxyDir: dir })).toBe(join(dir, '5_2.jpg'))
})

test(
  hasFfmpeg ? 'an abort mid-transcode stops ffmpeg and removes the hidden file' : without('an aborted proxy'),
  async () => {
    const options = { source: media.long, kind: 'video', baseName: 'long' } as const
    if (!hasFfmpeg) return refusesAsMissing(options)
    const dir = proxyDir()
    const controller = new AbortController()
    let sawTemp = false
    let reached = 0
    const error = await makeProxy(ff, {
      ...options,
      proxyDir: dir,
      signal: controller.signal,
      onProgress: (p) => {
        reached = Math.max(reached, p.seconds)
        if (p.done) return
        sawTemp = leftovers(dir).length === 1
        controller.abort('shutdown')
      },
    }).catch((e) => e)
    expect(error).toBeInstanceOf(CancelledError)
    expect(error.message).toBe('shutdown')
    expect(sawTemp).toBe(true)
    expect(readdirSync(dir)).toEqual([])
    // ffmpeg was stopped, not waited for: its output never reached the end of the 60 s clip.
    expect(reached).toBeLessThan(60)
  },
)

test(
  hasFfmpeg
    ? 'past its time limit a transcode is stopped, with a timeout error, and the hidden file removed'
    : without('a timed-out proxy'),
  async () => {
    const options = { source: media.long, kind: 'video', baseName: 'long' } as const
    if (!hasFfmpeg) return refusesAsMissing(options)
    const dir = proxyDir()
    const error = await makeProxy(ff, { ...options, proxyDir: dir, timeoutMs: 200 }).catch((e) => e)
    expect({ code: error.code, message: error.message }).toEqual({
      code: 'timeout',
      message: 'ffmpeg ran longer than 0.2 s and was stopped',
    })
    expect(readdirSync(dir)).toEqual([])
  },
)

test(
  hasFfmpeg
    ? "a source that is not media: ffmpeg's reason, and nothing left behind"
    : without('a proxy of a text file'),
  async () => {
    const options = { source: media.notMedia, kind: 'video', baseName: 'x' } as const
    if (!hasFfmpeg) return refusesAsMissing(options)
    const dir = proxyDir()
    const error = await makeProxy(ff, { ...options, proxyDir: dir }).catch((e) => e)
    expect({ code: error.code, message: error.message }).toEqual({
      code: 'failed',
      message: `ffmpeg failed: [mov,mp4,m4a,3gp,3g2,mj2] moov atom not found | file:${media.notMedia}: Invalid data found when processing input`,
    })
    expect(error.stderr).toContain('moov atom not found')
    expect(readdirSync(dir)).toEqual([])
  },
)

test(
  hasFfmpeg
    ? 'bad requests: a missing source, a missing folder, a name with a slash'
    : without('each bad proxy request'),
  async () => {
    const options = { source: media.png, kind: 'image', baseName: 'ok' } as const
    if (!hasFfmpeg) return refusesAsMissing(options)
    const gone = join(temp.path, 'gone.png')
    expect(
      await makeProxy(ff, { ...options, source: gone, proxyDir: proxyDir() }).catch((e) => [e.code, e.message]),
    ).toEqual(['not_found', `${gone} does not exist`])
    const noDir = join(temp.path, 'no-such-folder')
    expect(await makeProxy(ff, { ...options, proxyDir: noDir }).catch((e) => e.message)).toBe(
      `cannot write in the proxy folder ${noDir}: it does not exist`,
    )
    for (const baseName of ['../up', '.hidden', ''])
      expect(await makeProxy(ff, { ...options, baseName, proxyDir: proxyDir() }).catch((e) => e.message)).toStartWith(
        'a proxy name must be a plain file name',
      )
  },
)

test('the argument lists and time limits', () => {
  // The built-in default of a 1080i source with two mono tracks and a timecode: fields kept (x264
  // codes them in the source's order), every audio stream as it is, the timecode carried.
  const source = {
    video: { width: 1920, height: 1080, sar: '1:1', fieldOrder: 'tff' as const },
    audio: [1, 1],
    timecode: '10:00:00:00',
  }
  expect(proxyArgs('video', encodingOf(BUILT_IN), source)).toEqual([
    '-map',
    '0:V:0',
    '-map',
    '0:a?',
    '-c:a',
    'aac',
    '-vf',
    'scale=960:540:interl=1,setsar=1/1,format=yuv420p',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '23',
    '-pix_fmt',
    'yuv420p',
    '-flags',
    '+ilme+ildct',
    '-top',
    '1',
    '-timecode',
    '10:00:00:00',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
  ])
  // Not probed (no ffprobe): ffmpeg's scale works the size out.
  expect(proxyArgs('video', encodingOf(BUILT_IN))).toEqual([
    '-map',
    '0:V:0',
    '-map',
    '0:a?',
    '-c:a',
    'aac',
    '-vf',
    "scale=w=-2:h='2*trunc(min(540,ih)/2)',format=yuv420p",
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '23',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
  ])
  expect(timeLimitMs('transcode', 'video', 120)).toBe(60_000 + 1_200_000)
  expect(timeLimitMs('rewrap', 'audio', 120)).toBe(60_000 + 240_000)
  expect(timeLimitMs('transcode', 'image', undefined)).toBe(60_000)
  expect(timeLimitMs('transcode', 'video', undefined)).toBe(6 * 3600_000)
})

test(
  hasFfmpeg
    ? 'openSource: made from the descriptor opened for each run, though the path now names a text file'
    : without('a proxy by descriptor'),
  async () => {
    const path = join(temp.path, 'swapped.mov')
    if (hasFfmpeg) copyFileSync(media.video, path)
    else writeFileSync(path, 'no ffmpeg made the clip') // refused before it is read
    const kept = join(temp.path, 'swapped-away.mov')
    // The checked file, opened afresh each time it is asked for (as the import task does).
    const opened: number[] = []
    const openSource = () => {
      const fd = openSync(kept, 'r')
      opened.push(fd)
      return fd
    }
    renameSync(path, kept)
    const options = { source: path, openSource, kind: 'video', baseName: 'fd' } as const
    if (!hasFfmpeg) return refusesAsMissing(options)
    writeFileSync(path, 'not a clip')
    const made = await makeProxy(ff, { ...options, proxyDir: proxyDir(), height: 120 })
    expect(streams(ffprobeJson(made))[0]).toEqual({ codec: 'h264', type: 'video', width: 160, height: 120 })
    // ffprobe (the duration) and ffmpeg each had a descriptor of their own, closed after the run.
    expect(opened).toHaveLength(2)
    // Closed: fstat fails, or (the number taken again meanwhile by another open in this process) it
    // names another file than the source.
    const source = statSync(kept)
    for (const fd of opened) {
      let now: ReturnType<typeof fstatSync> | undefined
      try {
        now = fstatSync(fd)
      } catch {
        now = undefined
      }
      expect(now === undefined || now.dev !== source.dev || now.ino !== source.ino).toBe(true)
    }
  },
)

test(
  hasFfmpeg
    ? 'the proxy folder swapped for a link after it was opened: ffmpeg writes, and the proxy is named, in the folder opened; nothing goes through the link'
    : without('a proxy into an opened folder'),
  async () => {
    const options = { source: media.video, kind: 'video', baseName: '7' } as const
    if (!hasFfmpeg) return refusesAsMissing(options)
    const dir = proxyDir()
    const outside = proxyDir()
    const moved = `${dir}-opened`
    const path = await makeProxy(ff, {
      ...options,
      proxyDir: dir,
      height: 120,
      // The caller's opener; then someone renames the folder away and puts a link in its place.
      openProxyDir: () => {
        const fd = openat(AT_FDCWD, cName(dir), DIR_FLAGS)
        renameSync(dir, moved)
        symlinkSync(outside, dir)
        return fd
      },
    })
    expect({ path, opened: readdirSync(moved), outside: readdirSync(outside) }).toEqual({
      path: join(dir, '7.mp4'),
      opened: ['7.mp4'],
      outside: [],
    })
    expect(streams(ffprobeJson(join(moved, '7.mp4')))[0]).toEqual({
      codec: 'h264',
      type: 'video',
      width: 160,
      height: 120,
    })
  },
)
