// The shapes of markers (docs/api.md, Markers): the record as answered, the create and update
// bodies (TypeBox; types derive from them), and the colours a marker may have.
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { IdParams, eitherOf, oneOf } from '../../http/models.ts'

/**
 * The colours of editors' locators and markers: Avid's eight (which EDL locators name: red, green,
 * blue, cyan, magenta, yellow, white, black) and Premiere Pro's purple and orange. The first is
 * the default.
 */
export const MARKER_COLORS = [
  'red',
  'green',
  'blue',
  'cyan',
  'magenta',
  'yellow',
  'white',
  'black',
  'purple',
  'orange',
] as const
export type MarkerColor = (typeof MARKER_COLORS)[number]

/** The longest time a marker may name: about 24.8 days, past any asset's length. */
export const MAX_MS = 2_147_483_647
export const MAX_NOTE = 10_000

const TIMECODE =
  "Source timecode HH:MM:SS:FF (HH:MM:SS;FF drop frame) in the asset's own timecode: its first frame is its technical offset_string (or time_code), else 00:00:00:00"

export const Marker = t.Object({
  id: Type.Integer(),
  asset: Type.Integer({ description: 'The media asset the marker is on' }),
  start_ms: Type.Integer({ description: 'Milliseconds from the first frame of the file' }),
  end_ms: t.Nullable(
    Type.Integer({ description: 'Where the range ends (after its last frame), in milliseconds; null: a point' }),
  ),
  start_timecode: t.Optional(
    t.String({
      description:
        'The source timecode of the frame at start_ms (drop-frame labels at 29.97 and 59.94 when the asset counts so); absent when the asset has no frame rate',
    }),
  ),
  end_timecode: t.Optional(
    t.Nullable(
      t.String({
        description:
          'The source timecode of the frame after the range (its out point); null for a point; absent when the asset has no frame rate',
      }),
    ),
  ),
  note: t.String(),
  color: oneOf(MARKER_COLORS),
  user: t.String({ description: 'Who made the marker (their name as it was then; "system" for the service)' }),
  date_add: t.String(),
  date_mod: t.String(),
})

const timecode = (what: string) => t.String({ minLength: 1, maxLength: 32, description: `${TIMECODE}. ${what}` })
const ms = (what: string) => Type.Integer({ minimum: 0, maximum: MAX_MS, description: what })
const note = t.String({ minLength: 1, maxLength: MAX_NOTE, description: 'The note: not blank' })
const color = oneOf(MARKER_COLORS, { description: `One of ${MARKER_COLORS.join(', ')}` })

/** The fields both bodies take: start and end as timecode or as milliseconds. */
const times = {
  start: t.Optional(timecode('Or start_ms.')),
  end: t.Optional(t.Nullable(timecode('Or end_ms; null or absent: a point.'))),
  start_ms: t.Optional(ms('Milliseconds from the first frame; or start')),
  end_ms: t.Optional(t.Nullable(ms('Milliseconds from the first frame, after start; or end. Null: a point'))),
}

export const MarkerCreate = eitherOf(
  t.Object({
    ...times,
    note,
    color: t.Optional({ ...color, description: `${color.description}; default red` }),
  }),
  ['start', 'start_ms'],
)

const ReadOnly = (why: string) => t.Optional(t.Unknown({ description: `Read-only: ${why}` }))
/**
 * PATCH and PUT: the fields a user sets. Those the service sets are listed too, so that a record
 * read and sent back is a valid body and a change of one is told why (400 invalid at it).
 */
export const MarkerUpdate = t.Object({
  ...times,
  note: t.Optional(note),
  color: t.Optional(color),
  id: ReadOnly('set by the service'),
  asset: ReadOnly('a marker stays on its asset'),
  start_timecode: ReadOnly('follows start_ms; to set the start by timecode, send start'),
  end_timecode: ReadOnly('follows end_ms; to set the end by timecode, send end'),
  user: ReadOnly('who made the marker'),
  date_add: ReadOnly('set when the marker is made'),
  date_mod: ReadOnly('set on every change'),
})

/** The asset and the marker of /{kind}assets/{id}/markers/{marker}/: both ids as every path spells one. */
export const MarkerParams = t.Object({ id: IdParams.properties.id, marker: IdParams.properties.id })
