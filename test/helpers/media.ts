// Small real media made with ffmpeg for the media tests, and whether this machine has ffmpeg.
// REELHOUSE_TEST_NO_FFMPEG=1 makes the suite behave as on a machine without it (ffmpeg and
// ffprobe are then looked for on an empty PATH), so both paths can be checked on one machine.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createFfmpeg } from '../../src/media/ffmpeg.ts'

export const ff = await createFfmpeg(process.env.REELHOUSE_TEST_NO_FFMPEG === '1' ? { searchPath: '' } : {})
export const hasFfmpeg = ff.available.ffmpeg && ff.available.ffprobe

export { disposableDir } from './temp.ts'

export type Media = {
  /** 2 s, 320×240 H.264 at 25 fps with a mono AAC track, a timecode track and a creation time (QuickTime). */
  video: string
  /** 1 s, 320×240 at 30000/1001 fps (MP4, no audio). */
  ntsc: string
  /** 2 s of a 440 Hz sine in AAC (.m4a, with a creation time). */
  audio: string
  /** 2 s of a sine as 16-bit WAV. */
  wav: string
  png: string
  jpeg: string
  /** 60 s of 640×480 video, made by repeating a 2 s clip without re-encoding: slow to transcode, quick to make. */
  long: string
  /** Text with a media-like name. */
  notMedia: string
}

const lavfi = (graph: string) => ['-f', 'lavfi', '-i', graph]

/**
 * Writes the media into `dir` (all, or those in `only`). Without ffmpeg only `notMedia` is
 * written; the other paths are named but not there (tests then check the "missing" path and
 * never read them).
 */
export async function makeMedia(dir: string, only?: (keyof Media)[]): Promise<Media> {
  const media: Media = {
    video: join(dir, 'clip.mov'),
    ntsc: join(dir, 'ntsc.mp4'),
    audio: join(dir, 'tone.m4a'),
    wav: join(dir, 'tone.wav'),
    png: join(dir, 'still.png'),
    jpeg: join(dir, 'still.jpg'),
    long: join(dir, 'long.mp4'),
    notMedia: join(dir, 'notes.mp4'),
  }
  writeFileSync(media.notMedia, 'These are notes, not a movie.\n'.repeat(100))
  if (!hasFfmpeg) return media
  const make = (...args: string[]) =>
    ff.run('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...args], { timeoutMs: 30_000 })
  const creation = ['-metadata', 'creation_time=2024-05-01T10:00:00Z']
  const shortLong = join(dir, 'long-2s.mp4')
  const recipes: Record<Exclude<keyof Media, 'notMedia'>, () => Promise<unknown>> = {
    video: () =>
      make(
        ...lavfi('testsrc=size=320x240:rate=25'),
        ...lavfi('sine=frequency=440:sample_rate=48000'),
        '-t',
        '2',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        '-shortest',
        ...creation,
        '-timecode',
        '01:00:00:00',
        media.video,
      ),
    ntsc: () =>
      make(
        ...lavfi('testsrc=size=320x240:rate=30000/1001'),
        '-t',
        '1',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-pix_fmt',
        'yuv420p',
        media.ntsc,
      ),
    audio: () =>
      make(...lavfi('sine=frequency=440:sample_rate=48000'), '-t', '2', '-c:a', 'aac', ...creation, media.audio),
    wav: () => make(...lavfi('sine=frequency=440:sample_rate=48000'), '-t', '2', '-c:a', 'pcm_s16le', media.wav),
    png: () => make(...lavfi('testsrc=size=320x240'), '-frames:v', '1', media.png),
    jpeg: () => make(...lavfi('testsrc=size=320x240'), '-frames:v', '1', media.jpeg),
    long: () =>
      make(...lavfi('testsrc=size=640x480:rate=25'), '-t', '2', '-c:v', 'mpeg4', '-q:v', '5', shortLong).then(() =>
        make('-stream_loop', '29', '-i', shortLong, '-c', 'copy', media.long),
      ),
  }
  const wanted = (Object.keys(recipes) as (keyof typeof recipes)[]).filter((name) => !only || only.includes(name))
  await Promise.all(wanted.map((name) => recipes[name]()))
  return media
}

/** ffprobe's own JSON about a file, read without going through src/media. */
export function ffprobeJson(path: string): { streams: Record<string, any>[]; format: Record<string, any> } {
  const result = Bun.spawnSync([
    ff.paths.ffprobe!,
    '-v',
    'error',
    '-print_format',
    'json',
    '-show_format',
    '-show_streams',
    path,
  ])
  if (result.exitCode !== 0) throw new Error(`ffprobe ${path}: ${result.stderr.toString()}`)
  return JSON.parse(result.stdout.toString())
}

/**
 * A folder holding stand-ins for ffmpeg and ffprobe: shell scripts that answer -version and
 * otherwise do what their first argument says (for the child-process tests, which need no real
 * ffmpeg). `broken` names binaries whose -version fails.
 */
export function fakeFfmpegDir(parent: string, broken: string[] = []): string {
  const dir = join(parent, `fake-${broken.join('-') || 'ok'}`)
  mkdirSync(dir)
  for (const name of ['ffmpeg', 'ffprobe']) {
    const path = join(dir, name)
    writeFileSync(
      path,
      `#!/bin/sh
if [ "$1" = -version ]; then
  ${broken.includes(name) ? 'echo "cannot load libavcodec" >&2; exit 127' : `echo "${name} version fake"; exit 0`}
fi
case "$1" in
  loud) head -c 100000 /dev/zero | tr '\\0' x >&2; echo >&2; echo "the last line" >&2; exit 3 ;;
  lines) printf 'one\\ntwo\\nthree' ;;
  sleep) exec sleep 3600 ;;
  stubborn) trap '' TERM; echo started; while :; do sleep 0.05; done ;;
esac
`,
    )
    chmodSync(path, 0o755)
  }
  return dir
}
