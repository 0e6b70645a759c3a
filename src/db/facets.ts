// The technical facets of a media asset as SQL expressions over its `technical` JSON (what the
// probe wrote: src/media/probe.ts), said once: the media lists' indexes (schema.ts, migration
// 0024) are built on these very expressions, and the lists' filters and orders write them the
// same way, so that SQLite's planner finds the index (an index on an expression serves a query
// only when the query spells the expression alike). The search asks them of each hit's record.
// docs/api.md, Media assets, says what each facet is for each kind.
/** schema.ts's MEDIA_KINDS (schema.ts imports this file: the type is said here, not imported). */
type MediaKind = 'audio' | 'image' | 'video'

export const FACETS = ['codec', 'width', 'height', 'fps', 'duration', 'timecode', 'audio_channels'] as const
export type Facet = (typeof FACETS)[number]

/** `technical`'s member at a JSON path. */
const member = (column: string, path: string) => `json_extract(${column}, '${path}')`

/** Frames per second from the fraction text ("30000/1001") or a number ("25"); null when there is none or it is 0. */
function fpsValue(column: string): string {
  const fps = member(column, '$.fps')
  return (
    `(CASE WHEN instr(${fps}, '/') > 0 THEN CAST(substr(${fps}, 1, instr(${fps}, '/') - 1) AS REAL) / ` +
    `CAST(substr(${fps}, instr(${fps}, '/') + 1) AS REAL) ELSE CAST(${fps} AS REAL) END)`
  )
}

/** A start timecode with its separators evened (drop frame's `;`, some tools' `.` and `,`): labels compare as text. */
const evenTimecode = (text: string) => `replace(replace(replace(${text}, ';', ':'), '.', ':'), ',', ':')`

/** Audio streams whose channels are added up: more than a file has in practice. */
export const COUNTED_AUDIO_STREAMS = 8
/** The channels of all the audio streams (of the first COUNTED_AUDIO_STREAMS); null when none. */
function channels(column: string): string {
  const each = Array.from(
    { length: COUNTED_AUDIO_STREAMS },
    (_, i) => `coalesce(${member(column, `$.audio_streams[${i}].channels`)}, 0)`,
  )
  return `nullif(${each.join(' + ')}, 0)`
}

/**
 * The expression of a facet for a kind, over the column `column` (as written in the statement:
 * `"technical"` in the lists and their indexes, `m.technical` in the search); undefined: the kind
 * has no such facet (an audio asset has no width), and no asset of it matches a filter by it.
 *   codec: video_codec (video), the first audio stream's codec (audio), format (image);
 *   width, height: pixels; fps: frames per second as a number; duration: seconds (a video's
 *   frames over its rate, an audio file's duration); timecode: the start timecode, HH:MM:SS:FF;
 *   audio_channels: the channels of every audio stream added up.
 */
export function facetSql(kind: MediaKind, facet: Facet, column = '"technical"'): string | undefined {
  switch (facet) {
    case 'codec':
      return member(
        column,
        kind === 'video' ? '$.video_codec' : kind === 'audio' ? '$.audio_streams[0].codec' : '$.format',
      )
    case 'width':
    case 'height':
      return kind === 'audio' ? undefined : member(column, `$.${facet}`)
    case 'fps':
      return kind === 'video' ? fpsValue(column) : undefined
    case 'duration':
      if (kind === 'video') return `(${member(column, '$.duration')} / ${fpsValue(column)})`
      return kind === 'audio' ? `CAST(${member(column, '$.duration')} AS REAL)` : undefined
    case 'timecode':
      if (kind === 'image') return undefined
      return evenTimecode(member(column, kind === 'video' ? '$.offset_string' : '$.time_code'))
    case 'audio_channels':
      return kind === 'image' ? undefined : channels(column)
  }
}

/**
 * The facets each kind has an index for (led by the facet, then id and the lists' filter
 * columns), by index name: `media_assets_{kind}_{name}`. width_height serves width alone and both.
 */
export const FACET_INDEXES: Record<MediaKind, Record<string, readonly Facet[]>> = {
  video: {
    codec: ['codec'],
    width_height: ['width', 'height'],
    height: ['height'],
    fps: ['fps'],
    duration: ['duration'],
    timecode: ['timecode'],
    channels: ['audio_channels'],
  },
  audio: { codec: ['codec'], duration: ['duration'], timecode: ['timecode'], channels: ['audio_channels'] },
  image: { codec: ['codec'], width_height: ['width', 'height'], height: ['height'] },
}

/**
 * The columns after a facet in each of its indexes: id, then those the lists filter on (as their
 * own indexes hold), then kind: SQLite reads an index on an expression as covering only when it
 * holds every column the statement names, and the lists name kind (which the partial index's WHERE
 * implies, but that is not enough there).
 */
const LIST_COLUMNS = '`id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`'

/**
 * The facet indexes as migration 0024 creates them, by name: a test holds the catalogue's to
 * these, so that an expression changed here without a migration is caught (the lists' queries
 * would no longer find their index).
 */
export function facetIndexes(): { name: string; sql: string }[] {
  return (['audio', 'image', 'video'] as const).flatMap((kind) =>
    Object.entries(FACET_INDEXES[kind]).map(([name, facets]) => ({
      name: `media_assets_${kind}_${name}`,
      sql:
        `CREATE INDEX \`media_assets_${kind}_${name}\` ON \`media_assets\` ` +
        `(${facets.map((f) => facetSql(kind, f)).join(', ')}, ${LIST_COLUMNS}) WHERE kind = '${kind}'`,
    })),
  )
}
