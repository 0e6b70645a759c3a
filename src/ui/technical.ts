// An asset's technical details (its `technical`: what the import probed or was given; docs/media.md,
// What is probed) as the asset page lists them: each member under a label an editor reads
// ("Frame rate", not `fps`), its value in the units people use (23.976 fps, 12.4 Mb/s, 48 kHz,
// durations as timecode at the asset's rate), width and height as one resolution. A member this
// file does not know keeps its value, under its key made readable ("Scan type" for `scan_type`).
// Plain TypeScript, no DOM: unit-tested under bun test.
import {
  bitRateText,
  clockText,
  formatBytes,
  formatDate,
  parseTimestamp,
  rateText,
  readRate,
  sampleRateText,
  timecodeText,
} from './format.ts'

/**
 * One line of the list: a label and a value, or a label and several (the audio streams); `date`,
 * the timestamp as the record has it, when the value is one (shown as every date is).
 */
export type TechnicalRow = { key: string; label: string; value: string; items?: string[]; date?: string }

const LABELS: Record<string, string> = {
  duration: 'Duration',
  fps: 'Frame rate',
  frame_rate: 'Frame rate',
  r_frame_rate: 'Frame rate',
  avg_frame_rate: 'Average frame rate',
  width: 'Width',
  height: 'Height',
  display_aspect_ratio: 'Display aspect ratio',
  sample_aspect_ratio: 'Pixel aspect ratio',
  offset_string: 'Start timecode',
  offset_frames: 'Start timecode in frames',
  time_code: 'Start timecode',
  timecode: 'Start timecode',
  timecode_source: 'Timecode from',
  video_codec: 'Video codec',
  video_profile: 'Video profile',
  codec: 'Codec',
  codec_name: 'Codec',
  codec_long_name: 'Codec (full name)',
  profile: 'Profile',
  bit_depth: 'Bit depth',
  bits_per_raw_sample: 'Bit depth',
  bits_per_sample: 'Bit depth',
  pix_fmt: 'Pixel format',
  field_order: 'Field order',
  color_primaries: 'Colour primaries',
  color_transfer: 'Transfer characteristics',
  color_trc: 'Transfer characteristics',
  color_space: 'Colour space',
  color_range: 'Colour range',
  rotation: 'Rotation',
  variable_frame_rate: 'Variable frame rate',
  audio_streams: 'Audio streams',
  annotation_markers: 'Markers',
  bit_rate: 'Bit rate',
  sample_rate: 'Sample rate',
  channels: 'Channels',
  channel_layout: 'Channel layout',
  size: 'File size',
  name: 'Name',
  filename: 'File name',
  nb_streams: 'Streams',
  nb_Streams: 'Streams',
  format_name: 'Format',
  formate_name: 'Format',
  format_long_name: 'Format (full name)',
  start_time: 'Start time',
  major_brand: 'Major brand',
  minor_version: 'Minor version',
  compatible_brands: 'Compatible brands',
  create_time: 'Recorded',
  creation_time: 'Recorded',
  encoder: 'Encoder',
  orientation: 'Orientation',
  index: 'Stream',
}

/** A key no label is known for, made readable: `scan_type` → "Scan type", `colourSpace` → "Colour space". */
export function readableKey(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.\s]+/g, ' ')
    .trim()
    .toLowerCase()
  return words ? `${words[0]!.toUpperCase()}${words.slice(1)}` : key
}

/** The label of a member of `technical`. */
export const technicalLabel = (key: string, kind?: string) =>
  key === 'format' ? (kind === 'video' ? 'Container' : 'Format') : (LABELS[key] ?? readableKey(key))

/** A number from a number or its text (ffprobe writes many as text: `"0.000000"`, `"128000"`). */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value)
  return undefined
}

const FIELD_ORDERS: Record<string, string> = {
  progressive: 'Progressive',
  tff: 'Interlaced, top field first',
  bff: 'Interlaced, bottom field first',
}
const TRANSFERS: Record<string, string> = { smpte2084: 'PQ (smpte2084)', 'arib-std-b67': 'HLG (arib-std-b67)' }
/** EXIF orientations: how the picture is turned for showing. */
const ORIENTATIONS: Record<number, string> = {
  1: 'Upright',
  2: 'Mirrored',
  3: 'Turned 180°',
  4: 'Mirrored top to bottom',
  5: 'Mirrored and turned 90° counterclockwise',
  6: 'Turned 90° clockwise',
  7: 'Mirrored and turned 90° clockwise',
  8: 'Turned 90° counterclockwise',
}
const DATE_KEYS = new Set(['create_time', 'creation_time'])
const TIMECODE_SOURCES: Record<string, string> = { file: 'the file', request: 'the import request' }

/** Any value as text: yes or no, numbers as written, a list joined, an object as `label value` pairs. */
function plain(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—'
  if (typeof value === 'boolean') return value ? 'Yes' : 'No'
  if (typeof value === 'string' || typeof value === 'number') return String(value)
  if (Array.isArray(value)) return value.length ? value.map(plain).join(', ') : 'None'
  if (typeof value === 'object')
    return Object.entries(value)
      .map(([k, v]) => `${technicalLabel(k)} ${plain(v)}`)
      .join(', ')
  return String(value)
}

/** What the asset's duration and timecodes are counted at: its frame rate, and whether its timecode is drop frame. */
type Context = { kind?: string; rate?: ReturnType<typeof readRate>; drop: boolean }

/** The value of member `key` in the units people use; `plain` when it has none of its own. */
function valueOf(key: string, value: unknown, at: Context): string {
  const n = numberOf(value)
  switch (key) {
    case 'duration':
      // A video's duration is in frames (at fps); an audio's in seconds, as ffprobe writes it.
      if (n === undefined) return plain(value)
      if (at.kind === 'video') return at.rate ? timecodeText(n, at.rate, at.drop) : `${n.toLocaleString('en')} frames`
      return clockText(n)
    case 'start_time':
      return n === undefined ? plain(value) : clockText(n)
    case 'fps':
    case 'frame_rate':
    case 'r_frame_rate':
    case 'avg_frame_rate': {
      const rate = readRate(value)
      return rate ? rateText(rate) : plain(value)
    }
    case 'bit_rate':
      return n === undefined ? plain(value) : bitRateText(n)
    case 'sample_rate':
      return n === undefined ? plain(value) : sampleRateText(n)
    case 'size':
      return n === undefined ? plain(value) : `${formatBytes(n)} (${n.toLocaleString('en')} bytes)`
    case 'bit_depth':
    case 'bits_per_raw_sample':
    case 'bits_per_sample':
      return n === undefined ? plain(value) : `${n} bit`
    case 'width':
    case 'height':
      return n === undefined ? plain(value) : `${n} px`
    case 'rotation':
      return n === undefined ? plain(value) : n === 0 ? 'None' : `${n}° clockwise`
    case 'field_order':
      return FIELD_ORDERS[String(value)] ?? plain(value)
    case 'color_transfer':
    case 'color_trc':
      return TRANSFERS[String(value)] ?? plain(value)
    case 'orientation':
      return n !== undefined && ORIENTATIONS[n] ? `${ORIENTATIONS[n]} (EXIF ${n})` : plain(value)
    case 'timecode_source':
      return TIMECODE_SOURCES[String(value)] ?? plain(value)
    case 'create_time':
    case 'creation_time':
      return typeof value === 'string' ? formatDate(value) : plain(value)
    case 'annotation_markers':
      return Array.isArray(value) && value.length === 0 ? 'None' : plain(value)
  }
  // A length in milliseconds or seconds named so by its key.
  if (n !== undefined && /(^|_)ms$/.test(key)) return clockText(n / 1000)
  return plain(value)
}

/** An audio stream as one line: "Stream 1: pcm_s24le, 2 channels (stereo), 48 kHz, 24 bit". */
function streamText(stream: Record<string, unknown>, at: Context): string {
  const { index, codec, channels, channel_layout, sample_rate, bit_depth, ...rest } = stream
  const parts: string[] = []
  if (codec !== undefined && codec !== null) parts.push(String(codec))
  const count = numberOf(channels)
  if (count !== undefined)
    parts.push(
      `${count} ${count === 1 ? 'channel' : 'channels'}${channel_layout ? ` (${String(channel_layout)})` : ''}`,
    )
  else if (channel_layout) parts.push(String(channel_layout))
  const rate = numberOf(sample_rate)
  if (rate !== undefined) parts.push(sampleRateText(rate))
  const depth = numberOf(bit_depth)
  if (depth !== undefined) parts.push(`${depth} bit`)
  for (const [k, v] of Object.entries(rest)) parts.push(`${technicalLabel(k).toLowerCase()} ${valueOf(k, v, at)}`)
  const text = parts.join(', ') || '—'
  return index === undefined || index === null ? text : `Stream ${String(index)}: ${text}`
}

/**
 * The lines of an asset's technical details, in the record's order: width and height as one
 * "Resolution 1920 × 1080" where the width is, a list of objects (the audio streams) as one line each.
 */
export function technicalRows(technical: Record<string, unknown>, kind?: string): TechnicalRow[] {
  const at: Context = {
    kind,
    rate: readRate(technical.fps),
    drop: typeof technical.offset_string === 'string' && technical.offset_string.includes(';'),
  }
  const width = numberOf(technical.width)
  const height = numberOf(technical.height)
  const resolution = width !== undefined && height !== undefined
  const rows: TechnicalRow[] = []
  for (const [key, value] of Object.entries(technical)) {
    if (resolution && key === 'height') continue
    if (resolution && key === 'width') {
      rows.push({ key: 'resolution', label: 'Resolution', value: `${width} × ${height}` })
      continue
    }
    const label = technicalLabel(key, kind)
    if (
      Array.isArray(value) &&
      value.length > 0 &&
      value.every((v) => v && typeof v === 'object' && !Array.isArray(v))
    ) {
      const items = value.map((item) =>
        key === 'audio_streams'
          ? streamText(item as Record<string, unknown>, at)
          : Object.entries(item as object)
              .map(([k, v]) => `${technicalLabel(k)} ${valueOf(k, v, at)}`)
              .join(', '),
      )
      rows.push({ key, label, value: items.join('; '), items })
      continue
    }
    const date = DATE_KEYS.has(key) && typeof value === 'string' && parseTimestamp(value) ? value : undefined
    rows.push({ key, label, value: valueOf(key, value, at), ...(date ? { date } : {}) })
  }
  return rows
}
