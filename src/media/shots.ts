// Shot detection (docs/media.md, "Shots and sequences"): one ffmpeg run over a video finds its
// cuts, its black and its silent stretches, and writes thumbnail candidates, in a work folder the
// caller opened (storage/roots.ts) and removes afterwards. The source is decoded once; the filter
// graph splits its frames into three branches:
// - the cuts: `scdet` (scene scores on its 0–100 scale; a frame scoring at or above the threshold
//   starts a shot), each cut frame printed (`metadata=print`) and written as a JPEG;
// - the black: every 16th line of every frame, whole (four `field` filters, each taking every
//   other line by doubling the line stride: no pixel is copied), tested by `blackframe` (98 % of
//   those pixels at or below luma 32); the black frames printed. A nearest-neighbour `scale` to
//   1/16 in each direction looked at fewer pixels, but swscale's pass over every frame made the
//   run ~12 % slower than ffmpeg's scdet pass alone; the lines cost next to nothing
//   (bench/shots.ts);
// - the candidates: every frame of each half second (frame numbers n·K), printed and written as
//   a JPEG of at most 320 × 180 (the shape the picture has on screen);
// and the first audio stream goes through `silencedetect` (−50 dB for 0.5 s). Prints go to text
// files in the work folder (ffmpeg 5.1's `metadata=print` writes a file, and prints nothing at
// all for a `key` unless the log level is info), read once ffmpeg ends.
//
// A shot's thumbnail is the candidate nearest its middle frame inside it (a shot shorter than
// half a second: its own first frame, the cut). Times are milliseconds from the first frame of
// the video stream, frames counted from 0 there; the pure functions below make shots and
// sequences of what the run found.
import { readFileSync } from 'node:fs'
import { CancelledError } from '../storage/fs.ts'
import { O, cName, close, openat } from '../storage/dirfd.ts'
import { pathOf } from '../storage/paths.ts'
import { type Ffmpeg, INPUT, MediaError, OUTPUT_DIR } from './ffmpeg.ts'
import type { Fraction } from './timecode.ts'

/** scdet's threshold, on its 0–100 scale: its own default. */
export const DEFAULT_THRESHOLD = 10
export const MIN_THRESHOLD = 1
export const MAX_THRESHOLD = 100
/** A black or silent stretch of at least this long splits sequences. */
export const GAP_SECONDS = 0.5
/** blackframe: a frame is black when this % of its (sampled) pixels are at or below BLACK_LUMA. */
export const BLACK_AMOUNT = 98
export const BLACK_LUMA = 32
/** silencedetect's noise floor. */
export const SILENCE_DB = -50
/** More cuts than this fail the run: a threshold that low finds noise, not shots. */
export const MAX_SHOTS = 5000
/** Thumbnail candidates: one frame every this long. */
const SAMPLE_SECONDS = 0.5
/** Thumbnails fit this box (as shown: the pixel aspect ratio applied). */
const THUMB_BOX = [320, 180] as const
const IDLE_MS = 120_000

/** The source as the run opens it: a checked descriptor opened afresh (the catalogued file), else by path. */
export type ShotSource = { path: string; open?: () => number }

/** What ffprobe says of the source that the run needs; undefined from shotFacts when it has no video to decode. */
export type VideoFacts = {
  fps: Fraction
  /** Seconds, when known (progress and the time limit). */
  duration?: number
  hasAudio: boolean
}

/** A stretch of black or silence, in milliseconds from the first frame. */
export type Gap = { startMs: number; endMs: number; kind: 'black' | 'silence' }

/** A JPEG the run wrote in the work folder, and the frame it shows. */
export type Candidate = { name: string; frame: number; ms: number }

export type Detection = {
  fps: Fraction
  /** Frames decoded. */
  frames: number
  durationMs: number
  /** Where each shot after the first starts: its first frame, in ms, and scdet's score (0–100). */
  cuts: { frame: number; ms: number; score: number }[]
  gaps: Gap[]
  candidates: Candidate[]
}

/** A shot as detection makes it: frames [startFrame, endFrame), milliseconds [startMs, endMs). */
export type ShotSpan = {
  startFrame: number
  endFrame: number
  startMs: number
  endMs: number
  /** The score (0–1) of the cut that starts it; null for the first. */
  score: number | null
}

const fraction = (text: unknown): Fraction | undefined => {
  const m = typeof text === 'string' ? /^(\d+)\/(\d+)$/.exec(text) : null
  if (!m || Number(m[1]) <= 0 || Number(m[2]) <= 0) return undefined
  return { num: Number(m[1]), den: Number(m[2]) }
}

/** Runs with the source: by its path, or as a descriptor opened for this run and closed after it. */
async function withSource<T>(source: ShotSource, run: (name: string, input?: number) => Promise<T>): Promise<T> {
  if (!source.open) return run(source.path)
  const fd = source.open()
  try {
    return await run(INPUT, fd)
  } finally {
    close(fd)
  }
}

/**
 * The source's first video stream (not a cover picture) as the run needs it; undefined when it
 * has none ffmpeg knows how to decode (no codec name), or ffprobe cannot read the file.
 */
export async function shotFacts(ff: Ffmpeg, source: ShotSource, signal?: AbortSignal): Promise<VideoFacts | undefined> {
  let json: { format?: { duration?: string }; streams?: Record<string, any>[] }
  try {
    const { stdout } = await withSource(source, (name, input) =>
      ff.run(
        'ffprobe',
        [
          '-v',
          'error',
          '-protocol_whitelist',
          'file',
          '-of',
          'json',
          '-show_entries',
          'format=duration:stream=codec_type,codec_name,r_frame_rate,avg_frame_rate,duration:stream_disposition=attached_pic',
          `file:${name}`,
        ],
        { timeoutMs: 30_000, signal, input, inputPath: source.path },
      ),
    )
    json = JSON.parse(stdout)
  } catch (error) {
    if (error instanceof CancelledError) throw error
    return undefined
  }
  const streams = json.streams ?? []
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic)
  if (!video || !video.codec_name || video.codec_name === 'none') return undefined
  const fps = fraction(video.r_frame_rate) ?? fraction(video.avg_frame_rate)
  if (!fps) return undefined
  const seconds = Number(video.duration ?? json.format?.duration)
  return {
    fps,
    duration: Number.isFinite(seconds) && seconds > 0 ? seconds : undefined,
    hasAudio: streams.some((s) => s.codec_type === 'audio'),
  }
}

/**
 * A value for a filter's option inside a filter graph (ffmpeg-filters, "Notes on filtergraph
 * escaping"): escaped for the option (\ ' :), then for the graph (\ ' [ ] , ;).
 */
export function filterValue(text: string): string {
  return text.replace(/[\\':]/g, '\\$&').replace(/[\\'[\],;]/g, '\\$&')
}

/** The files the run prints into in the work folder, by what they hold. */
const PRINTS = { black: 'black.txt', cuts: 'cuts.txt', samples: 'samples.txt', silence: 'silence.txt' } as const

/** Every frame of each SAMPLE_SECONDS: frame numbers that are multiples of this. */
export const sampleEvery = (fps: Fraction) => Math.max(1, Math.round((fps.num / fps.den) * SAMPLE_SECONDS))

/**
 * The filter graph of a run (the header). `dir` names the work folder in filter options (already
 * escaped: filterValue); without `thumbnails` no JPEG is written.
 */
export function shotGraph(o: {
  threshold: number
  every: number
  audio: boolean
  thumbnails: boolean
  dir: string
}): string {
  const print = (name: keyof typeof PRINTS) => `metadata=mode=print:file=${o.dir}/${PRINTS[name]}`
  // Fit THUMB_BOX as the picture is shown (sar applied; an unknown sar is square), in even sizes.
  const [bw, bh] = THUMB_BOX
  const sar = 'if(sar,sar,1)'
  const k = `min(1,min(${bw}/(iw*${sar}),${bh}/ih))`
  const thumb = `scale=w='max(2,trunc(${k}*iw*${sar}/2)*2)':h='max(2,trunc(${k}*ih/2)*2)',setsar=1,format=yuvj420p`
  const end = (label: string) => (o.thumbnails ? `,${thumb}[${label}]` : ',nullsink')
  return [
    '[0:V:0]split=3[d][b][s]',
    `[b]field=top,field=top,field=top,field=top,blackframe=amount=${BLACK_AMOUNT}:threshold=${BLACK_LUMA},${print('black')}[n]`,
    `[d]scdet=threshold=${o.threshold},metadata=mode=select:key=lavfi.scd.time,${print('cuts')}${end('c')}`,
    `[s]select='not(mod(n,${o.every}))',metadata=mode=add:key=reelhouse.sample:value=1,${print('samples')}${end('t')}`,
    ...(o.audio
      ? [`[0:a:0]silencedetect=noise=${SILENCE_DB}dB:duration=${GAP_SECONDS},a${print('silence')},anullsink`]
      : []),
  ].join(';')
}

/** A block of `metadata=print`: the frame's header (its number in the printing filter's input, its time) and its keys. */
export type Printed = { n: number; t: number; keys: Record<string, string> }

/** The blocks of a `metadata=print` file. */
export function parsePrints(text: string): Printed[] {
  const blocks: Printed[] = []
  let current: Printed | undefined
  for (const line of text.split('\n')) {
    const header = /^frame:(\d+)\s+pts:\S+\s+pts_time:(\S+)/.exec(line)
    if (header) {
      current = { n: Number(header[1]), t: Number(header[2]), keys: {} }
      blocks.push(current)
      continue
    }
    const eq = line.indexOf('=')
    if (current && eq > 0) current.keys[line.slice(0, eq)] = line.slice(eq + 1).trimEnd()
  }
  return blocks
}

const pad = (n: number) => String(n).padStart(6, '0')

/**
 * Runs the detection on `source` (its facts from shotFacts). The work folder (`work.fd`, open;
 * `work.path` its path) receives the prints and, with `thumbnails`, the candidates; the caller
 * removes it. Rejects with MediaError (ffmpeg failed or ran too long, too many cuts) or
 * CancelledError.
 */
export async function detectShots(
  ff: Ffmpeg,
  o: {
    source: ShotSource
    facts: VideoFacts
    threshold: number
    work: { fd: number; path: string }
    thumbnails: boolean
    signal?: AbortSignal
    onProgress?: (fraction: number) => void
    /** Name the work folder by its path even where the system can name it below a descriptor (tests). */
    byPath?: boolean
  },
): Promise<Detection> {
  if (!ff.available.ffmpeg) throw new MediaError('missing', ff.missing('ffmpeg')!)
  if (o.signal?.aborted) throw new CancelledError(String(o.signal.reason ?? 'cancelled'))
  const below = OUTPUT_DIR && !o.byPath ? OUTPUT_DIR : undefined
  const dir = below ?? o.work.path
  const every = sampleEvery(o.facts.fps)
  const graph = shotGraph({
    threshold: o.threshold,
    every,
    audio: o.facts.hasAudio,
    thumbnails: o.thumbnails,
    dir: filterValue(dir),
  })
  // An image2 pattern reads % as its own: the folder's name keeps its percent signs.
  const pattern = (prefix: string) => `${dir.replaceAll('%', '%%')}${below ? '/' : pathOf.sep}${prefix}%06d.jpg`
  const jpeg = (label: string, prefix: string) => [
    '-map',
    `[${label}]`,
    '-c:v',
    'mjpeg',
    '-q:v',
    '4',
    '-f',
    'image2',
    '-start_number',
    '0',
    pattern(prefix),
  ]
  let frames = 0
  const duration = o.facts.duration
  await withSource(o.source, (name, input) =>
    ff.run(
      'ffmpeg',
      [
        '-nostdin',
        '-hide_banner',
        '-v',
        'error',
        '-nostats',
        '-progress',
        'pipe:1',
        '-protocol_whitelist',
        'file',
        '-i',
        `file:${name}`,
        '-filter_complex',
        graph,
        // Frames as decoded, none repeated or dropped (an image sequence would be filled up to the rate).
        '-vsync',
        'passthrough',
        // First: every frame passes here, so -progress counts them all.
        '-map',
        '[n]',
        '-f',
        'null',
        '-',
        ...(o.thumbnails ? [...jpeg('c', 'c'), ...jpeg('t', 's')] : []),
      ],
      {
        // As a transcode's (media/proxy.ts): 60 s + 10 × the duration, 6 hours when it is unknown.
        timeoutMs: duration === undefined ? 6 * 3600_000 : 60_000 + Math.ceil(duration * 10_000),
        idleMs: IDLE_MS,
        signal: o.signal,
        input,
        inputPath: o.source.path,
        outputDir: below ? o.work.fd : undefined,
        onLine: (line) => {
          const [key, value] = line.split('=', 2)
          if (key === 'frame') frames = Number(value) || frames
          else if (key === 'out_time_us' && duration && Number(value) >= 0)
            o.onProgress?.(Math.min(1, Number(value) / 1e6 / duration))
        },
      },
    ),
  )
  if (o.signal?.aborted) throw new CancelledError(String(o.signal.reason ?? 'cancelled'))
  const read = (name: keyof typeof PRINTS) => parsePrints(readIn(o.work.fd, PRINTS[name]))
  return detectionOf({
    fps: o.facts.fps,
    frames,
    black: read('black'),
    cuts: read('cuts'),
    samples: read('samples'),
    silence: o.facts.hasAudio ? read('silence') : [],
    thumbnails: o.thumbnails,
  })
}

/** A print file of the open work folder ('' when ffmpeg wrote none: nothing was printed). */
function readIn(folder: number, name: string): string {
  const fd = openat(folder, cName(name), O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
  if (fd < 0) return ''
  try {
    return readFileSync(fd, 'utf8')
  } finally {
    close(fd)
  }
}

/** What the prints say, in frames and milliseconds from the first frame (pure: tested on its own). */
export function detectionOf(p: {
  fps: Fraction
  frames: number
  black: Printed[]
  cuts: Printed[]
  samples: Printed[]
  silence: Printed[]
  thumbnails: boolean
}): Detection {
  const rate = p.fps.num / p.fps.den
  const first = p.samples[0]
  if (!first) throw new MediaError('not_media', 'ffmpeg decoded no frame of the video stream')
  const t0 = first.t
  const ms = (t: number) => Math.max(0, Math.round((t - t0) * 1000))
  const frameAt = (t: number) => Math.max(0, Math.round((t - t0) * rate))
  const frameMs = (frame: number) => Math.round((frame * 1000) / rate)
  // -progress counts the frames; a run that ended before its last report falls back on the samples.
  const last = p.samples[p.samples.length - 1]!
  const frames = p.black.reduce((n, b) => Math.max(n, b.n + 1), Math.max(p.frames, frameAt(last.t) + 1))
  const durationMs = frameMs(frames)

  const cuts = p.cuts
    .map((c) => ({ frame: frameAt(c.t), ms: ms(c.t), score: Number(c.keys['lavfi.scd.score'] ?? 0) }))
    .filter((c, i, all) => c.frame > 0 && c.frame < frames && (i === 0 || c.frame > all[i - 1]!.frame))
  if (cuts.length + 1 > MAX_SHOTS)
    throw new MediaError(
      'failed',
      `more than ${MAX_SHOTS} shots were found: the threshold is too low for this video (raise it)`,
    )

  const gaps: Gap[] = []
  // Black: runs of consecutive black frames lasting GAP_SECONDS or more.
  const black = p.black.filter((b) => b.keys['lavfi.blackframe.pblack'] !== undefined)
  for (let i = 0; i < black.length; ) {
    let j = i
    while (j + 1 < black.length && black[j + 1]!.n === black[j]!.n + 1) j++
    const count = black[j]!.n - black[i]!.n + 1
    if (count / rate >= GAP_SECONDS - 1e-6)
      gaps.push({ startMs: ms(black[i]!.t), endMs: ms(black[j]!.t) + Math.round(1000 / rate), kind: 'black' })
    i = j + 1
  }
  // Silence: silencedetect's starts and ends (seconds on the file's clock); one still open at the end lasts to it.
  let open: number | undefined
  for (const s of p.silence) {
    const start = s.keys['lavfi.silence_start']
    const end = s.keys['lavfi.silence_end']
    if (start !== undefined) open = Number(start)
    if (end !== undefined && open !== undefined) {
      gaps.push({ startMs: ms(open), endMs: ms(Number(end)), kind: 'silence' })
      open = undefined
    }
  }
  if (open !== undefined) gaps.push({ startMs: ms(open), endMs: durationMs, kind: 'silence' })

  const candidates: Candidate[] = p.thumbnails
    ? [
        ...p.samples.map((s, i) => ({ name: `s${pad(i)}.jpg`, frame: frameAt(s.t), ms: ms(s.t) })),
        ...p.cuts.map((c, i) => ({ name: `c${pad(i)}.jpg`, frame: frameAt(c.t), ms: ms(c.t) })),
      ]
    : []
  return { fps: p.fps, frames, durationMs, cuts, gaps: gaps.sort((a, b) => a.startMs - b.startMs), candidates }
}

/** The shots of a detection: from each cut to the next, the first from frame 0, the last to the end. */
export function shotsOf(d: Pick<Detection, 'frames' | 'durationMs' | 'cuts'>): ShotSpan[] {
  const starts = [{ frame: 0, ms: 0, score: null as number | null }, ...d.cuts.map((c) => ({ ...c, score: c.score }))]
  return starts.map((s, i) => {
    const next = starts[i + 1]
    return {
      startFrame: s.frame,
      endFrame: next?.frame ?? d.frames,
      startMs: s.ms,
      endMs: next?.ms ?? d.durationMs,
      score: s.score === null ? null : Math.round(Math.min(100, s.score) * 10) / 1000,
    }
  })
}

/**
 * The detected sequences (docs/api.md, "Shots and sequences"): runs of shots between black or
 * silent gaps. A cut that lies within a gap (or at its edge, within `toleranceMs`) ends a
 * sequence; a shot black for at least 90 % of its length is a gap itself and in no sequence.
 * Answers the shots' indices, per sequence, in order; a clip with no gap is one sequence.
 */
export function sequencesOf(
  shots: readonly { startMs: number; endMs: number }[],
  gaps: readonly Gap[],
  toleranceMs: number,
): number[][] {
  const blackOf = (s: { startMs: number; endMs: number }) =>
    gaps
      .filter((g) => g.kind === 'black')
      .reduce((sum, g) => sum + Math.max(0, Math.min(g.endMs, s.endMs) - Math.max(g.startMs, s.startMs)), 0)
  const splitAt = (ms: number) => gaps.some((g) => g.startMs - toleranceMs <= ms && ms <= g.endMs + toleranceMs)
  const out: number[][] = []
  let run: number[] = []
  shots.forEach((shot, i) => {
    const length = shot.endMs - shot.startMs
    if (length > 0 && blackOf(shot) >= 0.9 * length) {
      if (run.length) out.push(run)
      run = []
      return
    }
    if (run.length && splitAt(shot.startMs)) {
      out.push(run)
      run = []
    }
    run.push(i)
  })
  if (run.length) out.push(run)
  return out
}

/**
 * The thumbnail of frames [startFrame, endFrame): the candidate inside them nearest their middle
 * frame; undefined when none lies inside.
 */
export function thumbnailFor(
  span: { startFrame: number; endFrame: number },
  candidates: readonly Candidate[],
): Candidate | undefined {
  const middle = (span.startFrame + span.endFrame - 1) / 2
  let best: Candidate | undefined
  for (const c of candidates) {
    if (c.frame < span.startFrame || c.frame >= span.endFrame) continue
    if (!best || Math.abs(c.frame - middle) < Math.abs(best.frame - middle)) best = c
  }
  return best
}
