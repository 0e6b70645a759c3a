// The technical facets as query parameters (codec, width, height, resolution, fps, duration_min,
// duration_max, timecode_from, timecode_to, audio_channels) of the media lists and of the search,
// and the media lists' orders (?ordering=): read and checked here, a bad value a 400 naming its
// parameter; written as conditions on db/facets.ts's expressions (docs/api.md, Media assets).
import { t } from 'elysia'
import { type Facet, facetSql } from '../../db/facets.ts'
import type { MediaKind } from '../../db/tables.ts'
import { invalidParameter } from '../../http/errors.ts'
import { idFilter } from '../../http/lists.ts'
import { oneOf } from '../../http/models.ts'
import { readTimecode } from '../../media/timecode.ts'

/** The facet parameters, as the lists and the search take them. */
export const FacetParameters = {
  codec: t.Optional(
    t.String({
      maxLength: 64,
      description:
        "Only assets of this codec, in any case: a video stream's (h264, prores, dnxhd), an audio file's first stream's (pcm_s24le, aac), an image's format (jpeg, png, tiff)",
    }),
  ),
  width: idFilter('Only assets of this width in pixels (video, image)'),
  height: idFilter('Only assets of this height in pixels (video, image)'),
  resolution: t.Optional(
    t.String({
      maxLength: 32,
      description: 'Only assets of this width and height, WIDTHxHEIGHT: 1920x1080 (video, image)',
    }),
  ),
  fps: t.Optional(
    t.String({
      maxLength: 32,
      description: 'Only videos of this frame rate, within 0.01: 23.976, 25, 29.97, or a fraction such as 30000/1001',
    }),
  ),
  duration_min: t.Optional(
    t.String({ maxLength: 32, description: 'Only assets at least this long, in seconds (video, audio): 10, 2.5' }),
  ),
  duration_max: t.Optional(
    t.String({ maxLength: 32, description: 'Only assets at most this long, in seconds (video, audio)' }),
  ),
  timecode_from: t.Optional(
    t.String({
      maxLength: 32,
      description: 'Only assets whose start timecode is this one or later, HH:MM:SS:FF (HH:MM:SS;FF for drop frame)',
    }),
  ),
  timecode_to: t.Optional(
    t.String({ maxLength: 32, description: 'Only assets whose start timecode is this one or earlier, HH:MM:SS:FF' }),
  ),
  audio_channels: idFilter('Only assets with this many audio channels, all their audio streams counted (video, audio)'),
}
export type FacetQuery = { [K in keyof typeof FacetParameters]?: string }

/** The facet filters of a request, checked: numbers as numbers, a codec lowercased, a timecode with `:` only. */
export type FacetFilter = {
  codec?: string
  width?: number
  height?: number
  fps?: number
  duration_min?: number
  duration_max?: number
  timecode_from?: string
  timecode_to?: string
  audio_channels?: number
}

/** How far a frame rate may be from the one asked for (23.976 finds 24000/1001). */
export const FPS_TOLERANCE = 0.01

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/
const FRACTION = /^(\d+)\/(\d+)$/
const RESOLUTION = /^(\d+)[xX×](\d+)$/

/** A decimal number of seconds or frames per second, or why not. */
function decimal(parameter: string, text: string, what: string): number {
  const value = DECIMAL.test(text.trim()) ? Number(text.trim()) : Number.NaN
  if (!Number.isFinite(value)) throw invalidParameter(parameter, `${parameter} must be ${what}.`)
  return value
}

/** A whole number of the digits idFilter let through; beyond any real value it stays beyond (nothing matches). */
const whole = (text: string) => Math.min(Number(text), Number.MAX_SAFE_INTEGER)

/** A start timecode as the index holds it (`;`, drop frame's, written `:`), or a 400 at `parameter`. */
function timecode(parameter: string, text: string): string {
  const read = readTimecode(text.trim(), undefined)
  if ('error' in read) throw invalidParameter(parameter, `${parameter}: ${read.error}`)
  return text.trim().replace(';', ':')
}

/** The facet filters of a query (undefined: none given). Each bad value is a 400 at its parameter. */
export function facetFilterOf(query: FacetQuery): FacetFilter | undefined {
  const f: FacetFilter = {}
  if (query.codec !== undefined) {
    const codec = query.codec.trim().toLowerCase()
    if (!codec || /[\u0000-\u001f\u007f]/.test(codec))
      throw invalidParameter('codec', 'codec must name a codec: h264, prores, pcm_s24le, jpeg...')
    f.codec = codec
  }
  if (query.width !== undefined) f.width = whole(query.width)
  if (query.height !== undefined) f.height = whole(query.height)
  if (query.resolution !== undefined) {
    const m = RESOLUTION.exec(query.resolution.trim())
    if (!m) throw invalidParameter('resolution', 'resolution must be WIDTHxHEIGHT in pixels, such as 1920x1080.')
    const [width, height] = [whole(m[1]!), whole(m[2]!)]
    // With width or height too: both must hold (a different one finds nothing).
    if ((f.width !== undefined && f.width !== width) || (f.height !== undefined && f.height !== height)) {
      f.width = -1
      f.height = -1
    } else {
      f.width = width
      f.height = height
    }
  }
  if (query.fps !== undefined) {
    const m = FRACTION.exec(query.fps.trim())
    const fps =
      m && Number(m[2]) > 0
        ? Number(m[1]) / Number(m[2])
        : decimal('fps', query.fps, 'a frame rate: 23.976, 25, 29.97 or a fraction such as 30000/1001')
    if (!(fps > 0)) throw invalidParameter('fps', 'fps must be a frame rate above 0.')
    f.fps = fps
  }
  if (query.duration_min !== undefined)
    f.duration_min = decimal('duration_min', query.duration_min, 'a number of seconds, such as 10 or 2.5')
  if (query.duration_max !== undefined)
    f.duration_max = decimal('duration_max', query.duration_max, 'a number of seconds, such as 60 or 90.5')
  if (query.timecode_from !== undefined) f.timecode_from = timecode('timecode_from', query.timecode_from)
  if (query.timecode_to !== undefined) f.timecode_to = timecode('timecode_to', query.timecode_to)
  if (query.audio_channels !== undefined) f.audio_channels = whole(query.audio_channels)
  return Object.keys(f).length ? f : undefined
}

/** A condition's SQL text and the values it binds, in order. */
export type Condition = { sql: string; params: (string | number)[] }

/**
 * The conditions of `f` on assets of `kind`, each on db/facets.ts's expression over `column`;
 * null: the kind has a facet asked for not at all (an audio asset has no width): nothing matches.
 */
export function facetConditions(kind: MediaKind, f: FacetFilter, column?: string): Condition[] | null {
  const out: Condition[] = []
  const on = (facet: Facet, sql: (e: string) => string, ...params: (string | number)[]) => {
    const expression = facetSql(kind, facet, column)
    if (expression === undefined) return false
    out.push({ sql: sql(expression), params })
    return true
  }
  const all = [
    f.codec === undefined || on('codec', (e) => `${e} = ?`, f.codec),
    f.width === undefined || on('width', (e) => `${e} = ?`, f.width),
    f.height === undefined || on('height', (e) => `${e} = ?`, f.height),
    f.fps === undefined || on('fps', (e) => `${e} BETWEEN ? AND ?`, f.fps - FPS_TOLERANCE, f.fps + FPS_TOLERANCE),
    f.duration_min === undefined || on('duration', (e) => `${e} >= ?`, f.duration_min),
    f.duration_max === undefined || on('duration', (e) => `${e} <= ?`, f.duration_max),
    f.timecode_from === undefined || on('timecode', (e) => `${e} >= ?`, f.timecode_from),
    f.timecode_to === undefined || on('timecode', (e) => `${e} <= ?`, f.timecode_to),
    f.audio_channels === undefined || on('audio_channels', (e) => `${e} = ?`, f.audio_channels),
  ]
  return all.every(Boolean) ? out : null
}

/** The orders of the media lists (?ordering=): a leading - for descending. */
export const MEDIA_ORDERINGS = [
  'id',
  '-id',
  'name',
  '-name',
  'date_add',
  '-date_add',
  'duration',
  '-duration',
  'timecode',
  '-timecode',
] as const
export type MediaOrdering = (typeof MEDIA_ORDERINGS)[number]

export const OrderingParameter = {
  ordering: t.Optional(
    oneOf(MEDIA_ORDERINGS, {
      description:
        'The order: id (the default), name (case folded), date_add, duration, timecode (the start timecode); a leading - for descending. ' +
        'Ties in id order (descending with -), so that pages follow on. Assets without a duration or timecode come first ascending, last descending; ' +
        'images have neither (by duration or timecode they are in id order, descending with -).',
    }),
  ),
}

/**
 * The ORDER BY of an ordering for a kind's list (SQL text of the module's own, never the
 * request's), with id as the tie-break in the same direction: the order of an index of
 * schema.ts or db/facets.ts, walked forwards or backwards.
 */
export function mediaOrderBy(kind: MediaKind, ordering: MediaOrdering | undefined): string {
  const name = (ordering ?? 'id').replace(/^-/, '')
  const desc = ordering?.startsWith('-') ? ' desc' : ''
  const key =
    name === 'name'
      ? '"name" COLLATE NOCASE'
      : name === 'date_add'
        ? '"date_add"'
        : name === 'duration' || name === 'timecode'
          ? facetSql(kind, name)
          : undefined
  return key === undefined ? `"id"${desc}` : `${key}${desc}, "id"${desc}`
}
