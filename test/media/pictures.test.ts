// Pictures made by the proxy's own ffmpeg run (src/media/pictures.ts, docs/media.md "Pictures"):
// each file read back with ffprobe (its size) and ffmpeg (how bright a part of it is), on clips
// made here with ffmpeg: a poster that is not the black frame at 10 % of a clip that starts
// black, a strip whose index counts the tiles ffmpeg really drew, an image's thumbnail and an
// audio file's waveform, and their names beside the proxy's (never over another file).
// Without ffmpeg the tests of the plans alone run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createFfmpeg } from '../../src/media/ffmpeg.ts'
import {
  PICTURE_TEMP,
  fitBox,
  picturePlan,
  sharingProxyScale,
  stripCount,
  stripInterval,
} from '../../src/media/pictures.ts'
import { TEMP_PREFIX, makeProxyWithPictures, rewrapProxyWithPictures } from '../../src/media/proxy.ts'
import { disposableDir, ff, ffprobeJson, hasFfmpeg } from '../helpers/media.ts'

const temp = disposableDir()
afterAll(() => temp[Symbol.dispose]())
let n = 0
const proxyDir = () => {
  const dir = join(temp.path, `proxies-${n++}`)
  mkdirSync(dir)
  return dir
}
const make = (...args: string[]) => ff.run('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...args], { timeoutMs: 60_000 })
const lavfi = (graph: string) => ['-f', 'lavfi', '-i', graph]
const h264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']
/** Several ffmpeg runs each: time for a machine busy with other tests (the limit is not what is tested). */
const SLOW = 120_000

/** Width and height of a picture, as ffprobe reads it. */
const sizeOf = (path: string) => {
  const v = ffprobeJson(path).streams[0]!
  return { width: v.width as number, height: v.height as number }
}

/** The mean luma (0–255, full range) of the part `crop` (w:h:x:y) of a picture, or of all of it. */
function brightness(path: string, crop?: string): number {
  const r = Bun.spawnSync([
    ff.paths.ffmpeg!,
    '-v',
    'info',
    '-i',
    path,
    '-vf',
    `${crop ? `crop=${crop},` : ''}format=yuvj420p,signalstats,metadata=print:key=lavfi.signalstats.YAVG`,
    '-f',
    'null',
    '-',
  ])
  const m = /lavfi\.signalstats\.YAVG=([\d.]+)/.exec(r.stderr.toString())
  if (!m) throw new Error(`no YAVG for ${path}: ${r.stderr.toString().slice(-500)}`)
  return Number(m[1])
}

const clips: Record<string, string> = {}
beforeAll(async () => {
  if (!hasFfmpeg) return
  const at = (name: string) => (clips[name] = join(temp.path, name))
  await Promise.all([
    // 20 s: black for the first 4 s (10 % in is 2 s, black), then a test picture.
    make(
      ...lavfi('color=black:s=320x240:r=25:d=4'),
      ...lavfi('testsrc=s=320x240:r=25:d=16'),
      '-filter_complex',
      '[0][1]concat=n=2:v=1:a=0',
      ...h264,
      at('A001C003.mov'),
    ),
    // Black from start to end: the poster is the frame at 10 %, black, rather than none.
    make(...lavfi('color=black:s=320x240:r=25:d=5'), ...h264, at('black.mp4')),
    // 25 s of a test picture: 13 tiles every 2 s (0 to 24 s) in a grid of 10 × 2.
    make(...lavfi('testsrc=s=640x360:r=25:d=25'), ...h264, at('strip.mp4')),
    // Interlaced (top field first), 4:3 pixels of 720 × 576 (16:9 on screen).
    make(
      ...lavfi('testsrc=s=720x576:r=25:d=3'),
      '-vf',
      'setsar=64/45,interlace',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-flags',
      '+ilme+ildct',
      '-top',
      '1',
      at('fields.mov'),
    ),
    // 3 s, small: for the tests of names, where the pictures only need to be made.
    make(...lavfi('testsrc=s=160x120:r=25:d=3'), ...h264, at('short.mp4')),
    make(...lavfi('testsrc=s=1200x1600'), '-frames:v', '1', at('portrait.png')),
    make(...lavfi('sine=frequency=440:sample_rate=48000:d=3'), '-c:a', 'pcm_s16le', at('tone.wav')),
  ])
}, SLOW)

describe('the plans', () => {
  test('sizes fit their box, keep the shape on screen and are never larger than the source', () => {
    expect(fitBox(1920, 1080, [480, 270])).toEqual({ width: 480, height: 270 })
    expect(fitBox(320, 240, [480, 270])).toEqual({ width: 320, height: 240 })
    expect(fitBox(1080, 1920, [160, 160])).toEqual({ width: 90, height: 160 })
    expect(fitBox(1920, 1080, [160, 160])).toEqual({ width: 160, height: 90 })
    // 720 × 576 with 64:45 pixels is 1024 × 576 on screen.
    const plan = picturePlan('video', {
      duration: 3,
      video: { width: 720, height: 576, sar: '64:45', fieldOrder: 'tff' },
      audio: [],
    })!
    expect(plan.graph).toContain('field=type=top,scale=480:270')
    expect(plan.index).toMatchObject({ tile_width: 160, tile_height: 90 })
  })

  test.skipIf(!hasFfmpeg)(
    "the poster's candidates: five in the first second from 10 % in, then one a second to the window's end",
    () => {
      const plan = picturePlan('video', {
        duration: 30,
        video: { width: 1920, height: 1080, fieldOrder: 'progressive' },
        audio: [],
      })!
      const select = /\[p\](select='[^']*')/.exec(plan.graph)![1]!
      // The frames ffmpeg's select lets through of 30 s at 25 fps (the window: 3 s to 12 s).
      const r = Bun.spawnSync([
        ff.paths.ffmpeg!,
        ...['-v', 'info', '-f', 'lavfi', '-i', 'testsrc=s=64x36:r=25:d=30'],
        ...['-vf', `${select},showinfo`, '-f', 'null', '-'],
      ])
      const times = [...r.stderr.toString().matchAll(/pts_time:([\d.]+)/g)].map((m) => Number(m[1]))
      expect(times).toEqual([3, 3.2, 3.4, 3.6, 3.8, 4.8, 5.8, 6.8, 7.8, 8.8, 9.8, 10.8, 11.8])
    },
  )

  test('a tile every 2 s up to 240 s, then longer intervals: never more than 120 tiles', () => {
    expect([10, 240, 241, 600, 3600, 7200].map(stripInterval)).toEqual([2, 2, 3, 5, 30, 60])
    for (const s of [1, 10, 241, 3599, 86_400]) expect(stripCount(s, stripInterval(s))).toBeLessThanOrEqual(120)
    // ffmpeg's fps filter (round=near): a frame at 0, 2, 4… whose slot the clip passes the middle of.
    expect([0.04, 1, 2.9, 3.1, 25].map((s) => stripCount(s, 2))).toEqual([1, 1, 1, 2, 13])
  })

  test("an image's thumbnail is made of the proxy's scaled picture: its -vf moves into the graph, split after it", () => {
    const video = { width: 6000, height: 4000, fieldOrder: 'progressive' as const }
    const proxy = ['-map', '0:V:0', '-frames:v', '1', '-vf', 'scale=810:540,setsar=1/1', '-c:v', 'mjpeg']
    const { plan, args } = sharingProxyScale(picturePlan('image', { video, audio: [] })!, proxy)
    expect(args).toEqual(['-map', '[proxy]', '-frames:v', '1', '-c:v', 'mjpeg'])
    expect(plan.graph).toStartWith('[0:V:0]scale=810:540,setsar=1/1,split=2[proxy][shared];[shared]scale=')
    // A video's plan reads the source itself: its arguments stay as they are.
    const clip = picturePlan('video', { duration: 5, video, audio: [] })!
    expect(sharingProxyScale(clip, proxy)).toEqual({ plan: clip, args: proxy })
  })

  test('nothing to make a picture of: no plan (no duration, no picture, no sound)', () => {
    const video = { width: 320, height: 240, fieldOrder: 'progressive' as const }
    expect(picturePlan('video', { video, audio: [] })).toBeUndefined()
    expect(picturePlan('video', { duration: 5, audio: [2] })).toBeUndefined()
    expect(picturePlan('audio', { duration: 5, audio: [] })).toBeUndefined()
    expect(picturePlan('image', undefined)).toBeUndefined()
    expect(picturePlan('image', { video, audio: [] })?.outputs.map((o) => o.key)).toEqual(['thumb'])
  })
})

describe.skipIf(!hasFfmpeg)('made with the proxy, in its run', () => {
  test(
    'a clip that starts black: the poster is a picture, not the black frame at 10 %; the strip and its index beside it',
    async () => {
      const dir = proxyDir()
      const made = await makeProxyWithPictures(ff, {
        source: clips['A001C003.mov']!,
        kind: 'video',
        proxyDir: dir,
        baseName: 'A001C003',
        pictures: true,
      })
      expect(made).toEqual({
        path: join(dir, 'A001C003.mp4'),
        pictures: {
          poster: join(dir, 'A001C003.poster.jpg'),
          strip: join(dir, 'A001C003.strip.jpg'),
          index: join(dir, 'A001C003.strip.json'),
        },
      })
      expect(sizeOf(made.pictures.poster!)).toEqual({ width: 320, height: 240 })
      // The test picture is bright; black is 0.
      expect(brightness(made.pictures.poster!)).toBeGreaterThan(60)
      const index = JSON.parse(readFileSync(made.pictures.index!, 'utf8'))
      expect(index).toEqual({ interval_ms: 2000, count: 10, columns: 10, rows: 1, tile_width: 160, tile_height: 120 })
      expect(sizeOf(made.pictures.strip!)).toEqual({ width: 1600, height: 120 })
      // Tiles 0 and 1 (0 s, 2 s) are black, tile 2 (4 s) the picture.
      expect(brightness(made.pictures.strip!, '160:120:160:0')).toBeLessThan(10)
      expect(brightness(made.pictures.strip!, '160:120:320:0')).toBeGreaterThan(60)
      // Nothing hidden is left: neither the proxy's nor a picture's.
      expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([])
    },
    SLOW,
  )

  test(
    'a clip black throughout: the frame at 10 % is the poster all the same',
    async () => {
      const dir = proxyDir()
      const made = await makeProxyWithPictures(ff, {
        source: clips['black.mp4']!,
        kind: 'video',
        proxyDir: dir,
        baseName: 'black',
        pictures: true,
      })
      expect(Object.keys(made.pictures).sort()).toEqual(['index', 'poster', 'strip'])
      expect(made.warning).toBeUndefined()
      expect(brightness(made.pictures.poster!)).toBeLessThan(10)
    },
    SLOW,
  )

  test(
    'the index counts the tiles ffmpeg drew: 13 of a 10 × 2 grid, the 14th cell empty',
    async () => {
      const dir = proxyDir()
      const made = await makeProxyWithPictures(ff, {
        source: clips['strip.mp4']!,
        kind: 'video',
        proxyDir: dir,
        baseName: 'strip',
        pictures: true,
      })
      const index = JSON.parse(readFileSync(made.pictures.index!, 'utf8'))
      expect(index).toEqual({ interval_ms: 2000, count: 13, columns: 10, rows: 2, tile_width: 160, tile_height: 90 })
      expect(sizeOf(made.pictures.strip!)).toEqual({ width: 1600, height: 180 })
      expect(sizeOf(made.pictures.poster!)).toEqual({ width: 480, height: 270 })
      // Tile 12 (row 1, column 2) is drawn; tile 13 is the grid's black.
      expect(brightness(made.pictures.strip!, '160:90:320:90')).toBeGreaterThan(60)
      expect(brightness(made.pictures.strip!, '160:90:480:90')).toBeLessThan(5)
    },
    SLOW,
  )

  test(
    'interlaced 4:3-pixel video: pictures of one field, in the shape on screen (16:9)',
    async () => {
      const made = await makeProxyWithPictures(ff, {
        source: clips['fields.mov']!,
        kind: 'video',
        proxyDir: proxyDir(),
        baseName: 'fields',
        pictures: true,
      })
      expect(sizeOf(made.pictures.poster!)).toEqual({ width: 480, height: 270 })
      expect(JSON.parse(readFileSync(made.pictures.index!, 'utf8'))).toMatchObject({ tile_width: 160, tile_height: 90 })
    },
    SLOW,
  )

  test(
    "an image's thumbnail fits 480 × 480; an audio file's waveform is a 960 × 160 PNG",
    async () => {
      const dir = proxyDir()
      const image = await makeProxyWithPictures(ff, {
        source: clips['portrait.png']!,
        kind: 'image',
        proxyDir: dir,
        baseName: 'portrait',
        pictures: true,
      })
      expect(image.pictures).toEqual({ thumb: join(dir, 'portrait.thumb.jpg') })
      expect(sizeOf(image.pictures.thumb!)).toEqual({ width: 360, height: 480 })
      const audio = await makeProxyWithPictures(ff, {
        source: clips['tone.wav']!,
        kind: 'audio',
        proxyDir: dir,
        baseName: 'tone',
        pictures: true,
      })
      expect(audio.path).toBe(join(dir, 'tone.m4a'))
      expect(audio.pictures).toEqual({ wave: join(dir, 'tone.wave.png') })
      expect(ffprobeJson(audio.pictures.wave!).streams[0]).toMatchObject({ codec_name: 'png', width: 960, height: 160 })
      // The sine's waveform is drawn (not an empty picture).
      expect(statSync(audio.pictures.wave!).size).toBeGreaterThan(300)
    },
    SLOW,
  )

  test(
    "a rewrap's pictures are made of the old proxy it copies",
    async () => {
      const dir = proxyDir()
      const first = await makeProxyWithPictures(ff, {
        source: clips['short.mp4']!,
        kind: 'video',
        proxyDir: dir,
        baseName: 'old',
      })
      expect(first.pictures).toEqual({})
      const made = await rewrapProxyWithPictures(ff, {
        source: first.path,
        proxyDir: dir,
        baseName: 'new',
        pictures: true,
      })
      expect(Object.keys(made.pictures).sort()).toEqual(['index', 'poster', 'strip'])
    },
    SLOW,
  )
})

describe.skipIf(!hasFfmpeg)('names', () => {
  test(
    "'number': a name whose pictures' names are taken is passed over for the second name, then numbered ones",
    async () => {
      const dir = proxyDir()
      writeFileSync(join(dir, 'A001C003.strip.json'), 'someone else’s\n')
      const options = {
        source: clips['short.mp4']!,
        kind: 'video' as const,
        proxyDir: dir,
        baseName: 'A001C003',
        fallbackName: 'A001C003_7',
        ifTaken: 'number' as const,
        pictures: true,
      }
      expect((await makeProxyWithPictures(ff, options)).path).toBe(join(dir, 'A001C003_7.mp4'))
      const third = await makeProxyWithPictures(ff, options)
      expect(third.path).toBe(join(dir, 'A001C003_7_1.mp4'))
      expect(third.pictures.poster).toBe(join(dir, 'A001C003_7_1.poster.jpg'))
      expect(readFileSync(join(dir, 'A001C003.strip.json'), 'utf8')).toBe('someone else’s\n')
      // Without pictures the first name is free for a proxy.
      expect((await makeProxyWithPictures(ff, { ...options, pictures: false })).path).toBe(join(dir, 'A001C003.mp4'))
    },
    SLOW,
  )

  test(
    "'refuse': a picture whose name is taken is left out with a warning; the file there stays",
    async () => {
      const dir = proxyDir()
      writeFileSync(join(dir, 'clip.poster.jpg'), 'not ours\n')
      const made = await makeProxyWithPictures(ff, {
        source: clips['short.mp4']!,
        kind: 'video',
        proxyDir: dir,
        baseName: 'clip',
        pictures: true,
      })
      expect(made.path).toBe(join(dir, 'clip.mp4'))
      expect(Object.keys(made.pictures).sort()).toEqual(['index', 'strip'])
      expect(made.warning).toContain('clip.poster.jpg: the name is taken')
      expect(readFileSync(join(dir, 'clip.poster.jpg'), 'utf8')).toBe('not ours\n')
      expect(readdirSync(dir).filter((f) => f.startsWith(PICTURE_TEMP) || f.startsWith(TEMP_PREFIX))).toEqual([])
    },
    SLOW,
  )

  test(
    "'replace' (a remake): new pictures over the old ones; an old picture not made again goes",
    async () => {
      const dir = proxyDir()
      const options = {
        source: clips['short.mp4']!,
        kind: 'video' as const,
        proxyDir: dir,
        baseName: 'clip',
        pictures: true,
      }
      const first = await makeProxyWithPictures(ff, options)
      const before = statSync(first.pictures.poster!).ino
      const again = await makeProxyWithPictures(ff, { ...options, ifTaken: 'replace' })
      expect(again.pictures).toEqual(first.pictures)
      expect(statSync(again.pictures.poster!).ino).not.toBe(before)
      // A remake into the same name of a clip with no picture in it (an audio-less, video-less run is
      // impossible here; a rewrap without ffprobe is): the old pictures are not left to show the old proxy.
      const probeless = join(temp.path, 'probeless')
      mkdirSync(probeless)
      symlinkSync(ff.paths.ffmpeg!, join(probeless, 'ffmpeg'))
      const onlyFfmpeg = await createFfmpeg({ dir: probeless })
      const blind = await makeProxyWithPictures(onlyFfmpeg, { ...options, ifTaken: 'replace' })
      expect(blind.pictures).toEqual({})
      expect(blind.warning).toBe('no pictures: ffprobe could not tell what the source holds')
      expect(readdirSync(dir).sort()).toEqual(['clip.mp4'])
    },
    SLOW,
  )
})

test.skipIf(!hasFfmpeg)(
  'without ffprobe the proxy is made all the same, without pictures, and says why',
  async () => {
    const dir = proxyDir()
    const only = join(temp.path, 'only-ffmpeg')
    mkdirSync(only)
    writeFileSync(join(only, 'ffmpeg'), `#!/bin/sh\nexec '${ff.paths.ffmpeg}' "$@"\n`)
    chmodSync(join(only, 'ffmpeg'), 0o755)
    const made = await makeProxyWithPictures(await createFfmpeg({ dir: only }), {
      source: clips['short.mp4']!,
      kind: 'video',
      proxyDir: dir,
      baseName: 'clip',
      pictures: true,
    })
    expect(made).toEqual({
      path: join(dir, 'clip.mp4'),
      pictures: {},
      warning: 'no pictures: ffprobe could not tell what the source holds',
    })
    expect(readdirSync(dir)).toEqual(['clip.mp4'])
  },
  SLOW,
)
