// What ffprobe says about a file, in the members docs/api.md, Import names: a video's asset_meta
// (duration in frames, fps as fraction text, width, height, format, display_aspect_ratio), an
// audio asset's technical_details, an image's size and format; and beside them the members
// docs/media.md names as an extension: the file's timecode (offset_string, offset_frames; an
// audio file's time_code, from a broadcast WAV's time_reference when no tag has one) and format
// facts (codec, profile, bit depth, field order, colour, rotation, audio streams); and a WAV's
// bext and iXML, read by bwf.ts (docs/media.md, Broadcast WAV), with its start_time.
//
// The file is named to ffprobe as `file:<absolute path>` and only the file protocol is allowed,
// so a path that looks like an option (`-i`), a URL or a protocol (`concat:`, `subfile,`) is
// read as the local file it is, and a playlist inside it cannot make ffprobe open the network.
import { closeSync, openSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { pathOf } from '../storage/paths.ts'
import { type Bext, type BwfChunks, type Ixml, readBwf } from './bwf.ts'
import { type Ffmpeg, INPUT, MediaError } from './ffmpeg.ts'
import { type Fraction, bwfTimecode, readTimecode } from './timecode.ts'

/** The media file's path resolved, and its name, by the platform's rules (win32 on Windows). */
const { basename, resolve } = pathOf

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
  /** The file's first timecode as the file spells it ("01:00:00:00", "00:59:59;28"); none: left out. */
  offset_string?: string
  /** That timecode in frames from midnight on the timecode base (SMPTE drop-frame counting for `;`). */
  offset_frames?: number
} & VideoFacts

/** The extension members of a video's technical (docs/media.md "What is probed"). */
export type VideoFacts = {
  /** ffprobe's codec_name of the video stream: "prores", "h264", "mpeg2video". */
  video_codec: string
  /** ffprobe's profile: "HQ", "High", "4:2:2"; left out when none. */
  video_profile?: string
  /** Bits per sample: bits_per_raw_sample, else read from pix_fmt ("yuv422p10le" → 10, else 8). */
  bit_depth?: number
  pix_fmt?: string
  /** From ffprobe's field_order: "progressive", "tff" (tt, bt) or "bff" (bb, tb); left out when unknown. */
  field_order?: 'progressive' | 'tff' | 'bff'
  /** "1:1" when ffprobe gives none (square pixels, as display_aspect_ratio assumes). */
  sample_aspect_ratio: string
  /** ffprobe's color_primaries ("bt709", "bt2020") and color_transfer ("smpte2084" PQ, "arib-std-b67" HLG); left out when unknown. */
  color_primaries?: string
  color_transfer?: string
  /** Degrees a player turns the picture clockwise (0, 90, 180, 270): the display matrix, else the rotate tag; 0 when none. */
  rotation: number
  /** True when the stream's average and real (r_frame_rate) rates differ by more than 0.1 % (not by the field rate of an interlaced stream). */
  variable_frame_rate: boolean
  audio_streams: AudioStream[]
}

/** One audio stream of a file, in stream order; null where ffprobe does not say. */
export type AudioStream = {
  /** ffprobe's stream index in the file. */
  index: number
  codec: string
  channels: number
  channel_layout: string | null
  sample_rate: number
  bit_depth: number | null
}

/**
 * docs/api.md, Import's audio technical_details. All strings but nb_Streams, and all but the first six
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
  /**
   * Tag timecode of the file, or else of its first stream that has one (a QuickTime tmcd track);
   * else a broadcast WAV's time_reference over its sample rate, as frames of its iXML
   * TIMECODE_RATE (drop frame when its TIMECODE_FLAG says DF), else of 25 fps.
   */
  time_code?: string
  /**
   * A vendor's Final Cut tag: the first tag whose name is `com.<vendor>.final…`, e.g.
   * com.apple.finalcutstudio.media.uuid (api.md writes the member with the vendor word replaced).
   */
  com_vendor_final?: string
  /** The file's audio streams (the extension docs/media.md names). */
  audio_streams: AudioStream[]
  /** A broadcast WAV's bext chunk (docs/media.md, Broadcast WAV): its fields that are not empty. */
  bext?: Bext
  /** A WAV's iXML PROJECT, SCENE, TAKE, TAPE and NOTE, those it has. */
  ixml?: Ixml
}

export type ImageInfo = {
  width: number
  height: number
  /** The image codec: "png", "jpeg", "tiff", "webp"... (format_name would say "image2" or "png_pipe"). */
  format: string
  /** The EXIF Orientation (1-8) when the file has one. */
  orientation?: number
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
   * `warn`: told what of a WAV's own chunks could not be read (a damaged bext or iXML, left out);
   * the probe goes on.
   */
  options: { timeoutMs?: number; signal?: AbortSignal; fd?: number; warn?: (message: string) => void } = {},
): Promise<ProbeResult<K>> {
  if (!ff.available.ffprobe) throw new MediaError('missing', ff.missing('ffprobe')!)
  const file = resolve(path)
  if (options.fd === undefined) await regularFile(file)
  const input = options.fd === undefined ? file : INPUT
  const { stdout } = await ff
    .run(
      'ffprobe',
      [
        '-v',
        'error',
        '-protocol_whitelist',
        'file',
        '-print_format',
        'json',
        '-show_format',
        '-show_streams',
        // An image's EXIF Orientation is a tag of its decoded frame, not of its stream.
        ...(kind === 'image' ? ['-show_entries', 'frame_tags=Orientation', '-read_intervals', '%+#1'] : []),
        `file:${input}`,
      ],
      { timeoutMs: options.timeoutMs ?? PROBE_TIMEOUT_MS, signal: options.signal, input: options.fd, inputPath: file },
    )
    .catch((error) => {
      // ffprobe's "Invalid data found when processing input" and the like: not media it knows.
      if (error instanceof MediaError && error.code === 'failed')
        throw new MediaError(
          'not_media',
          `${file} is not a media file ffprobe can read (${error.message.replace(/^ffprobe failed: /, '').replace(`file:${input}: `, '')})`,
          error.stderr,
        )
      throw error
    })
  let json: FfprobeJson
  try {
    json = JSON.parse(stdout) as FfprobeJson
  } catch {
    throw new MediaError('not_media', `ffprobe's answer about ${file} is not JSON`)
  }
  // A WAV's own chunks (bwf.ts): its bext and iXML, which ffprobe reports in part or not at all.
  // A damaged one gives what could be read, and a warning for the import's log.
  let bwf: BwfChunks | undefined
  if (kind === 'audio') {
    bwf = readBwfOf(options.fd ?? file)
    if (bwf.warnings.length) options.warn?.(`${basename(file)}: ${bwf.warnings.join('; ')}.`)
  }
  return interpret(kind, json, file, { ixml: bwf?.ixml_text, bwf })
}

/** readBwf of a descriptor, or of a path opened for the read. */
function readBwfOf(source: number | string): BwfChunks {
  let fd: number
  try {
    fd = typeof source === 'number' ? source : openSync(source, 'r')
  } catch (error) {
    return { warnings: [`the file could not be opened (${(error as NodeJS.ErrnoException).code ?? 'error'})`] }
  }
  try {
    return readBwf(fd)
  } finally {
    if (typeof source !== 'number') closeSync(fd)
  }
}

/** The file must be there and be a regular file (ffprobe would wait forever on a FIFO). */
async function regularFile(file: string) {
  const s = await stat(file).catch((error: NodeJS.ErrnoException) => {
    throw new MediaError(
      'not_found',
      error.code === 'ENOENT' ? `${file} does not exist` : `${file} cannot be read: ${error.code ?? error.message}`,
    )
  })
  if (!s.isFile()) throw new MediaError('not_found', `${file} is not a regular file`)
}

// ffprobe's JSON, as much of it as is read here.
export type FfprobeStream = {
  index?: number
  codec_type?: string
  codec_name?: string
  codec_tag_string?: string
  profile?: string
  pix_fmt?: string
  bits_per_raw_sample?: string
  bits_per_sample?: number
  field_order?: string
  color_primaries?: string
  color_transfer?: string
  sample_rate?: string
  channels?: number
  channel_layout?: string
  side_data_list?: { side_data_type?: string; rotation?: number }[]
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
  /** An image's first frame, asked for its tags only. */
  frames?: { tags?: Record<string, string> }[]
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

/**
 * ffprobe's JSON → the members of `kind` (pure; the tests feed it odd JSON directly). `ixml`: a
 * WAV's iXML chunk, which ffprobe does not report; `bwf`: a WAV's chunks as bwf.ts read them.
 */
export function interpret<K extends MediaKind>(
  kind: K,
  json: FfprobeJson,
  file: string,
  extra: { ixml?: string; bwf?: BwfChunks } = {},
): ProbeResult<K> {
  const streams = json.streams ?? []
  const format = json.format ?? {}
  if (kind === 'audio') {
    if (!streams.some((s) => s.codec_type === 'audio')) throw new MediaError('not_media', `${file} has no audio stream`)
    return audioInfo(json, file, extra.ixml, extra.bwf) as ProbeResult<K>
  }
  // A cover picture inside a music file is a "video" stream too; it does not make a video.
  const picture =
    streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic && s.width && s.height) ??
    (kind === 'image' ? streams.find((s) => s.codec_type === 'video' && s.width && s.height) : undefined)
  if (!picture) throw new MediaError('not_media', `${file} has no ${kind === 'video' ? 'video stream' : 'picture'}`)
  const width = picture.width!
  const height = picture.height!
  if (kind === 'image') {
    const image: ImageInfo = {
      width,
      height,
      format: IMAGE_CODECS[picture.codec_name ?? ''] ?? picture.codec_name ?? format.format_name ?? '',
    }
    const orientation = Number(lowerKeys(json.frames?.[0]?.tags).orientation ?? lowerKeys(picture.tags).orientation)
    if (Number.isInteger(orientation) && orientation >= 1 && orientation <= 8) image.orientation = orientation
    return image as ProbeResult<K>
  }

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
    ...fileTimecode(json, fps.text),
    ...videoFacts(picture, streams),
  }
  return info as ProbeResult<K>
}

/**
 * The file's first timecode: the format's tag (an MXF's material package), else a QuickTime tmcd
 * track's, else the first stream's that has one; with its frames from midnight at `fps` when the
 * label fits that rate (a label that does not is kept, without frames).
 */
function fileTimecode(json: FfprobeJson, fps: string): { offset_string?: string; offset_frames?: number } {
  const streams = json.streams ?? []
  const label =
    lowerKeys(json.format?.tags).timecode ??
    streams
      .filter((s) => s.codec_tag_string === 'tmcd')
      .map((s) => lowerKeys(s.tags).timecode)
      .find(Boolean) ??
    streams.map((s) => lowerKeys(s.tags).timecode).find(Boolean)
  if (!label) return {}
  const read = readTimecode(label, ratio(fps), { lenient: true })
  if ('error' in read) return /^\d{2}:\d{2}:\d{2}[:;.,]\d{2}$/.test(label) ? { offset_string: label } : {}
  return { offset_string: label, ...(read.frames !== undefined ? { offset_frames: read.frames } : {}) }
}

function videoFacts(picture: FfprobeStream, streams: FfprobeStream[]): VideoFacts {
  const sar = ratio(picture.sample_aspect_ratio)
  const facts: VideoFacts = {
    video_codec: picture.codec_name ?? '',
    video_profile: picture.profile,
    bit_depth: bitDepth(picture),
    pix_fmt: picture.pix_fmt,
    field_order: FIELD_ORDER[picture.field_order ?? ''],
    sample_aspect_ratio: sar ? `${sar.num}:${sar.den}` : '1:1',
    color_primaries: known(picture.color_primaries),
    color_transfer: known(picture.color_transfer),
    rotation: rotationOf(picture),
    variable_frame_rate: variableRate(picture),
    audio_streams: audioStreams(streams),
  }
  for (const key of Object.keys(facts) as (keyof VideoFacts)[]) if (facts[key] === undefined) delete facts[key]
  return facts
}

/** ffprobe's field_order (coded order, then display order) → which field is shown first. */
const FIELD_ORDER: Record<string, VideoFacts['field_order']> = {
  progressive: 'progressive',
  tt: 'tff',
  bt: 'tff',
  bb: 'bff',
  tb: 'bff',
}

const known = (text: string | undefined) => (text && text !== 'unknown' && text !== 'unspecified' ? text : undefined)

function bitDepth(stream: FfprobeStream): number | undefined {
  const raw = Number(stream.bits_per_raw_sample)
  if (Number.isInteger(raw) && raw > 0) return raw
  if (!stream.pix_fmt) return undefined
  const m = /p(\d+)(?:le|be)$/.exec(stream.pix_fmt)
  return m ? Number(m[1]) : 8
}

/**
 * Clockwise degrees, 0-359. ffprobe's display-matrix rotation is libavutil's counterclockwise
 * angle (a phone's portrait clip says -90); the old rotate tag is clockwise already.
 */
function rotationOf(stream: FfprobeStream): number {
  const matrix = stream.side_data_list?.find(
    (d) => d.side_data_type === 'Display Matrix' && typeof d.rotation === 'number',
  )
  const tag = Number(lowerKeys(stream.tags).rotate)
  const clockwise = matrix ? -matrix.rotation! : Number.isFinite(tag) ? tag : 0
  return ((Math.round(clockwise) % 360) + 360) % 360
}

function variableRate(stream: FfprobeStream): boolean {
  const real = ratio(stream.r_frame_rate)
  const average = ratio(stream.avg_frame_rate)
  if (!real || !average) return false
  const r = real.num / real.den
  const a = average.num / average.den
  const close = (x: number, y: number) => Math.abs(x - y) <= y * 0.001
  if (close(a, r)) return false
  // An interlaced stream's r_frame_rate may count fields: 50/1 for 25i.
  const interlaced =
    stream.field_order !== undefined && stream.field_order !== 'progressive' && stream.field_order !== 'unknown'
  return !(interlaced && close(r, 2 * a))
}

function audioStreams(streams: FfprobeStream[]): AudioStream[] {
  return streams
    .filter((s) => s.codec_type === 'audio')
    .map((s, i) => {
      const depth = Number(s.bits_per_raw_sample) || s.bits_per_sample || 0
      return {
        index: s.index ?? i,
        codec: s.codec_name ?? '',
        channels: s.channels ?? 0,
        channel_layout: s.channel_layout ?? null,
        sample_rate: Number(s.sample_rate) || 0,
        bit_depth: depth > 0 ? depth : null,
      }
    })
}

/** An iXML's TIMECODE_RATE ("24000/1001", "25", "29.97") and whether TIMECODE_FLAG says DF. */
export function ixmlRate(ixml: string | undefined): { rate: Fraction; drop: boolean } | undefined {
  const text = /<TIMECODE_RATE>\s*([^<]*?)\s*<\/TIMECODE_RATE>/i.exec(ixml ?? '')?.[1]
  if (!text) return undefined
  let rate = ratio(text)
  const decimal = /^(\d+)(?:\.(\d+))?$/.exec(text)
  if (!rate && decimal) rate = ratio(`${decimal[1]}${decimal[2] ?? ''}/${10 ** (decimal[2]?.length ?? 0)}`)
  if (!rate) return undefined
  // 29.97 written as a decimal is the NTSC rate.
  const value = rate.num / rate.den
  const ntsc = [
    [24000, 1001],
    [30000, 1001],
    [60000, 1001],
  ].find(([n, d]) => rate!.den !== d && Math.abs(value - n! / d!) < 0.001)
  if (ntsc) rate = { num: ntsc[0]!, den: ntsc[1]! }
  return { rate, drop: /<TIMECODE_FLAG>\s*DF\s*<\/TIMECODE_FLAG>/i.test(ixml ?? '') }
}

const IMAGE_CODECS: Record<string, string> = { mjpeg: 'jpeg', jpegls: 'jpeg-ls' }

function audioInfo(json: FfprobeJson, file: string, ixml?: string, chunks?: BwfChunks): AudioInfo {
  const format = json.format ?? {}
  const tags = lowerKeys(format.tags)
  const streamTimecode = (json.streams ?? []).map((s) => lowerKeys(s.tags).timecode).find(Boolean)
  // A broadcast WAV's bext time_reference: samples since midnight (the chunk as read, else ffprobe's tag).
  const reference =
    chunks?.bext?.time_reference ?? (tags.time_reference === undefined ? NaN : Number(tags.time_reference))
  const sampleRate =
    Number((json.streams ?? []).find((s) => s.codec_type === 'audio')?.sample_rate) || chunks?.sample_rate || 0
  const speed = ixmlRate(ixml)
  const referenced = Number.isSafeInteger(reference) && reference >= 0 && sampleRate > 0
  const bwf = referenced ? bwfTimecode(reference, sampleRate, speed?.rate, speed?.drop) : undefined
  const vendorFinal = Object.entries(tags).find(([key]) => /^com\.[^.]+\.final/.test(key))?.[1]
  const info: AudioInfo = {
    name: basename(file),
    filename: file,
    nb_Streams: format.nb_streams ?? json.streams?.length ?? 0,
    formate_name: format.format_name ?? '',
    format_long_name: format.format_long_name ?? '',
    size: format.size ?? '',
    // ffprobe gives a WAV none: a broadcast WAV's is its time_reference in seconds, written as ffprobe writes them.
    start_time: referenced ? (reference / sampleRate).toFixed(6) : format.start_time,
    duration: format.duration,
    bit_rate: format.bit_rate,
    major_brand: tags.major_brand,
    minor_version: tags.minor_version,
    compatible_brands: tags.compatible_brands,
    create_time: tags.creation_time,
    encoder: tags.encoder ?? tags.encoded_by,
    time_code: tags.timecode ?? streamTimecode ?? bwf,
    com_vendor_final: vendorFinal,
    audio_streams: audioStreams(json.streams ?? []),
    bext: chunks?.bext && Object.keys(chunks.bext).length ? chunks.bext : undefined,
    ixml: chunks?.ixml,
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
  [24000, 1001],
  [24, 1],
  [25, 1],
  [30000, 1001],
  [30, 1],
  [48, 1],
  [50, 1],
  [60000, 1001],
  [60, 1],
  [120, 1],
  [15, 1],
  [12, 1],
  [100, 1],
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
