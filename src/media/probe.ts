// What ffprobe says about a file, in the members api.md 4.10 names: a video's asset_meta
// (duration in frames, fps as fraction text, width, height, format, display_aspect_ratio), an
// audio asset's technical_details, an image's size and format.
//
// The file is named to ffprobe as `file:<absolute path>` and only the file protocol is allowed,
// so a path that looks like an option (`-i`), a URL or a protocol (`concat:`, `subfile,`) is
// read as the local file it is, and a playlist inside it cannot make ffprobe open the network.
import { stat } from 'node:fs/promises'
import { basename, resolve } from 'node:path'
import { type Ffmpeg, INPUT, MediaError } from './ffmpeg.ts'

export type MediaKind = 'video' | 'audio' | 'image'

export type VideoInfo = {
  /** Length in frames: round(duration in seconds × fps). */
  duration: number
  /** Frames per second as fraction text: "25/1", "30000/1001". */
  fps: string
  width: number
  height: number
  /** ffprobe's format_name, e.g. "mov,mp4,m4a,3gp,3g2,mj2". */
  format: string
  /** e.g. "16:9"; from width, height and the sample aspect ratio when ffprobe gives none. */
  display_aspect_ratio: string
}

/**
 * api.md 4.10's audio technical_details. All strings but nb_Streams, and all but the first six
 * optional: a member ffprobe does not report is left out rather than set to "", so merging
 * these over (or under) values a client sent never replaces a value with nothing.
 */
export type AudioInfo = {
  /** The file's name. */
  name: string
  /** The path probed. */
  filename: string
  nb_Streams: number
  /** ffprobe's format_name (the member's spelling is api.md's). */
  formate_name: string
  format_long_name: string
  /** Bytes, as ffprobe writes it. */
  size: string
  /** Seconds, as ffprobe writes them ("0.000000", "2.000000"). */
  start_time?: string
  duration?: string
  /** Bits per second. */
  bit_rate?: string
  /** The rest come from the file's tags (names matched ignoring case). */
  major_brand?: string
  minor_version?: string
  compatible_brands?: string
  /** Tag creation_time. */
  create_time?: string
  /** Tag encoder, or encoded_by. */
  encoder?: string
  /** Tag timecode of the file, or else of its first stream that has one (a QuickTime tmcd track). */
  time_code?: string
  /**
   * A vendor's Final Cut tag: the first tag whose name is `com.<vendor>.final…`, e.g.
   * com.apple.finalcutstudio.media.uuid (api.md writes the member with the vendor word replaced).
   */
  com_vendor_final?: string
}

export type ImageInfo = {
  width: number
  height: number
  /** The image codec: "png", "jpeg", "tiff", "webp"... (format_name would say "image2" or "png_pipe"). */
  format: string
}

export type ProbeResult<K extends MediaKind> = K extends 'video' ? VideoInfo : K extends 'audio' ? AudioInfo : ImageInfo

/** ffprobe reads headers, and a little more for some formats; far less than this. */
export const PROBE_TIMEOUT_MS = 30_000

export async function probe<K extends MediaKind>(
  ff: Ffmpeg,
  path: string,
  kind: K,
  /**
   * `fd`: `path` opened and checked by the caller (the file catalogued): ffprobe reads that
   * descriptor, not whatever the path names by the time it runs; `path` is what the result says.
   */
  options: { timeoutMs?: number; signal?: AbortSignal; fd?: number } = {},
): Promise<ProbeResult<K>> {
  if (!ff.available.ffprobe) throw new MediaError('missing', ff.missing('ffprobe')!)
  const file = resolve(path)
  if (options.fd === undefined) await regularFile(file)
  const input = options.fd === undefined ? file : INPUT
  const { stdout } = await ff.run('ffprobe', [
    '-v', 'error', '-protocol_whitelist', 'file',
    '-print_format', 'json', '-show_format', '-show_streams',
    `file:${input}`,
  ], { timeoutMs: options.timeoutMs ?? PROBE_TIMEOUT_MS, signal: options.signal, input: options.fd }).catch((error) => {
    // ffprobe's "Invalid data found when processing input" and the like: not media it knows.
    if (error instanceof MediaError && error.code === 'failed')
      throw new MediaError('not_media', `${file} is not a media file ffprobe can read (${error.message.replace(/^ffprobe failed: /, '').replace(`file:${input}: `, '')})`, error.stderr)
    throw error
  })
  let json: FfprobeJson
  try {
    json = JSON.parse(stdout) as FfprobeJson
  } catch {
    throw new MediaError('not_media', `ffprobe's answer about ${file} is not JSON`)
  }
  return interpret(kind, json, file)
}

/** The file must be there and be a regular file (ffprobe would wait forever on a FIFO). */
async function regularFile(file: string) {
  const s = await stat(file).catch((error: NodeJS.ErrnoException) => {
    throw new MediaError('not_found', error.code === 'ENOENT' ? `${file} does not exist` : `${file} cannot be read: ${error.code ?? error.message}`)
  })
  if (!s.isFile()) throw new MediaError('not_found', `${file} is not a regular file`)
}

// ffprobe's JSON, as much of it as is read here.
export type FfprobeStream = {
  codec_type?: string
  codec_name?: string
  width?: number
  height?: number
  sample_aspect_ratio?: string
  display_aspect_ratio?: string
  r_frame_rate?: string
  avg_frame_rate?: string
  duration?: string
  disposition?: { attached_pic?: number }
  tags?: Record<string, string>
}
export type FfprobeJson = {
  streams?: FfprobeStream[]
  format?: {
    filename?: string
    nb_streams?: number
    format_name?: string
    format_long_name?: string
    start_time?: string
    duration?: string
    size?: string
    bit_rate?: string
    tags?: Record<string, string>
  }
}

/** ffprobe's JSON → the members of `kind` (pure; the tests feed it odd JSON directly). */
export function interpret<K extends MediaKind>(kind: K, json: FfprobeJson, file: string): ProbeResult<K> {
  const streams = json.streams ?? []
  const format = json.format ?? {}
  if (kind === 'audio') {
    if (!streams.some((s) => s.codec_type === 'audio')) throw new MediaError('not_media', `${file} has no audio stream`)
    return audioInfo(json, file) as ProbeResult<K>
  }
  // A cover picture inside a music file is a "video" stream too; it does not make a video.
  const picture = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic && s.width && s.height)
    ?? (kind === 'image' ? streams.find((s) => s.codec_type === 'video' && s.width && s.height) : undefined)
  if (!picture) throw new MediaError('not_media', `${file} has no ${kind === 'video' ? 'video stream' : 'picture'}`)
  const width = picture.width!
  const height = picture.height!
  if (kind === 'image') return { width, height, format: IMAGE_CODECS[picture.codec_name ?? ''] ?? picture.codec_name ?? format.format_name ?? '' } as ProbeResult<K>

  const fps = frameRate(picture.r_frame_rate, picture.avg_frame_rate)
  if (!fps) throw new MediaError('not_media', `${file}: ffprobe reports no frame rate for its video stream`)
  // The video stream's own length when the container keeps one (MP4, MOV); else the file's (MKV).
  const seconds = number(picture.duration) ?? number(format.duration)
  if (seconds === undefined) throw new MediaError('not_media', `${file}: ffprobe reports no duration`)
  const info: VideoInfo = {
    duration: Math.round(seconds * fps.value),
    fps: fps.text,
    width,
    height,
    format: format.format_name ?? '',
    display_aspect_ratio: displayAspectRatio(width, height, picture.sample_aspect_ratio, picture.display_aspect_ratio),
  }
  return info as ProbeResult<K>
}

const IMAGE_CODECS: Record<string, string> = { mjpeg: 'jpeg', jpegls: 'jpeg-ls' }

function audioInfo(json: FfprobeJson, file: string): AudioInfo {
  const format = json.format ?? {}
  const tags = lowerKeys(format.tags)
  const streamTimecode = (json.streams ?? []).map((s) => lowerKeys(s.tags).timecode).find(Boolean)
  const vendorFinal = Object.entries(tags).find(([key]) => /^com\.[^.]+\.final/.test(key))?.[1]
  const info: AudioInfo = {
    name: basename(file),
    filename: file,
    nb_Streams: format.nb_streams ?? json.streams?.length ?? 0,
    formate_name: format.format_name ?? '',
    format_long_name: format.format_long_name ?? '',
    size: format.size ?? '',
    start_time: format.start_time,
    duration: format.duration,
    bit_rate: format.bit_rate,
    major_brand: tags.major_brand,
    minor_version: tags.minor_version,
    compatible_brands: tags.compatible_brands,
    create_time: tags.creation_time,
    encoder: tags.encoder ?? tags.encoded_by,
    time_code: tags.timecode ?? streamTimecode,
    com_vendor_final: vendorFinal,
  }
  for (const key of Object.keys(info) as (keyof AudioInfo)[]) if (info[key] === undefined) delete info[key]
  return info
}

const lowerKeys = (tags: Record<string, string> | undefined): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(tags ?? {}).map(([k, v]) => [k.toLowerCase(), v]))

const number = (text: string | undefined) => {
  const n = text === undefined || text === 'N/A' ? NaN : Number(text)
  return Number.isFinite(n) && n >= 0 ? n : undefined
}

type Ratio = { num: number; den: number }

/** "a/b" or "a:b" with both parts positive, reduced; undefined for "0/0", "0:1", "N/A". */
export function ratio(text: string | undefined): Ratio | undefined {
  const m = /^(\d+)[/:](\d+)$/.exec(text ?? '')
  if (!m) return undefined
  const num = Number(m[1])
  const den = Number(m[2])
  if (!num || !den) return undefined
  const g = gcd(num, den)
  return { num: num / g, den: den / g }
}

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a)

/** Rates an editor would name; an average within 0.1 % of one of them is taken as that rate. */
const STANDARD_RATES: readonly Ratio[] = [
  [24000, 1001], [24, 1], [25, 1], [30000, 1001], [30, 1], [48, 1], [50, 1], [60000, 1001], [60, 1],
  [120, 1], [15, 1], [12, 1], [100, 1],
].map(([num, den]) => ({ num: num!, den: den! }))

/**
 * The frame rate of a video stream from ffprobe's r_frame_rate (the rate every timestamp fits)
 * and avg_frame_rate (frames / duration). They agree for ordinary files, and then r is the exact
 * fraction. Where they differ, r is a timebase artefact (interlaced 25i says 50/1, a phone's
 * variable-rate clip says 90000/1) and the average is the truth, snapped to a standard rate when
 * it is within 0.1 % of one (a 29.97 clip's average is seldom exactly 30000/1001).
 */
export function frameRate(r: string | undefined, avg: string | undefined): { text: string; value: number } | undefined {
  const real = ratio(r)
  const average = ratio(avg)
  const value = (x: Ratio) => x.num / x.den
  const close = (a: Ratio, b: Ratio) => Math.abs(value(a) - value(b)) <= value(b) * 0.001
  const pick = (x: Ratio) => ({ text: `${x.num}/${x.den}`, value: value(x) })
  if (real && (!average || close(average, real))) return pick(real)
  if (average) return pick(STANDARD_RATES.find((s) => close(average, s)) ?? average)
  return undefined
}

/**
 * ffprobe's display_aspect_ratio when it gives a real one; else width × sample aspect : height
 * (square pixels when the sample aspect is unknown, "0:1"), reduced: 1920×1080 → "16:9",
 * 720×576 at 64:45 → "16:9".
 */
export function displayAspectRatio(width: number, height: number, sar?: string, dar?: string): string {
  const given = ratio(dar)
  if (given) return `${given.num}:${given.den}`
  const pixel = ratio(sar) ?? { num: 1, den: 1 }
  const num = width * pixel.num
  const den = height * pixel.den
  const g = gcd(num, den)
  return `${num / g}:${den / g}`
}
