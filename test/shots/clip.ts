// A clip of known cuts for the shot tests, made with ffmpeg's lavfi: five solid colours at 25 fps
// (320 × 240), one of them black, with a tone that falls silent around one cut; and a clip with
// no cut and no gap. Solid colours, so that a thumbnail's colour says which shot it shows, each
// of another brightness than the one before (scdet compares the luma only: black to pure blue
// scores 9.8, below its default threshold of 10).
import { join } from 'node:path'
import { ff } from '../helpers/media.ts'

export const FPS = 25
/** The shots of the clip: colour (RGB), first frame, frame after the last. */
export const SEGMENTS = [
  { color: 'red', rgb: [255, 0, 0], start: 0, end: 50 },
  { color: 'lime', rgb: [0, 255, 0], start: 50, end: 90 },
  { color: 'black', rgb: [0, 0, 0], start: 90, end: 115 },
  { color: 'white', rgb: [255, 255, 255], start: 115, end: 175 },
  { color: 'purple', rgb: [128, 0, 128], start: 175, end: 205 },
] as const
/** Where the cuts are: the first frame of each shot but the first. */
export const CUTS = SEGMENTS.slice(1).map((s) => s.start)
/** The tone is silent from 6.6 s to 7.4 s: around the cut at 7.0 s (frame 175). */
export const SILENCE = [6.6, 7.4] as const
/** The sequences detection makes of it: runs of shots (indices) between the black and the silence. */
export const SEQUENCES = [[0, 1], [3], [4]]

const make = (...args: string[]) => ff.run('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...args], { timeoutMs: 60_000 })

/** The clip of SEGMENTS (H.264 and AAC in a QuickTime file), written in `dir` as `name`. */
export async function cutsClip(dir: string, name = 'A001C003_250114_R2KD.mov'): Promise<string> {
  const path = join(dir, name)
  const inputs = SEGMENTS.flatMap((s) => [
    '-f',
    'lavfi',
    '-i',
    `color=c=${s.color}:size=320x240:rate=${FPS}:duration=${(s.end - s.start) / FPS}`,
  ])
  const seconds = SEGMENTS[SEGMENTS.length - 1]!.end / FPS
  await make(
    ...inputs,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
    '-filter_complex',
    `${SEGMENTS.map((_, i) => `[${i}:v]`).join('')}concat=n=${SEGMENTS.length}:v=1:a=0,format=yuv420p[v];` +
      `[${SEGMENTS.length}:a]volume=enable='between(t,${SILENCE[0]},${SILENCE[1]})':volume=0[a]`,
    '-map',
    '[v]',
    '-map',
    '[a]',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    '-timecode',
    '10:00:00:00',
    path,
  )
  return path
}

/** 3 s of testsrc with a steady tone: no cut, no gap. */
export async function steadyClip(dir: string, name = 'B002_steady.mov'): Promise<string> {
  const path = join(dir, name)
  await make(
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=320x240:rate=${FPS}:duration=3`,
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=48000:duration=3',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    path,
  )
  return path
}

/** The mean colour (RGB) of a picture file, as ffmpeg scales it to one pixel. */
export async function meanColor(path: string): Promise<number[]> {
  const child = Bun.spawn(
    [
      ff.paths.ffmpeg!,
      '-v',
      'error',
      '-i',
      path,
      '-vf',
      'scale=1:1:flags=area',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-',
    ],
    { stdout: 'pipe', stderr: 'pipe' },
  )
  const bytes = new Uint8Array(await new Response(child.stdout).arrayBuffer())
  await child.exited
  return [...bytes.slice(0, 3)]
}

/** Whether two colours are alike (JPEG and YUV round a solid colour by a few steps). */
export const near = (a: readonly number[], b: readonly number[], by = 40) =>
  a.every((x, i) => Math.abs(x - b[i]!) <= by)
