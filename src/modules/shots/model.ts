// The shapes of shots and sequences (docs/api.md, "Shots and sequences"): the records as the
// published medialoopster client's Shot and Sequence models read them (times in milliseconds,
// thumbnail_url absolute), with this service's extensions, and the bodies that make and change
// them (TypeBox; types derive from them).
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { IdParams, oneOf } from '../../http/models.ts'
import { DEFAULT_THRESHOLD, MAX_SHOTS, MAX_THRESHOLD, MIN_THRESHOLD } from '../../media/shots.ts'
import { TaskRef } from '../tasks/model.ts'

/** The longest time a shot may name (about 24.8 days, past any clip's length). */
export const MAX_MS = 2_147_483_647
export const MAX_NAME = 255
export const MAX_TEXT = 100_000
/** At most this many keywords on a shot or sequence. */
export const MAX_KEYWORDS = 1000

export const ORIGINS = ['detected', 'user'] as const

const ms = (description: string) => Type.Integer({ minimum: 0, description })
const licence = (what: string) => t.Nullable(t.String({ description: what }))

const EXAMPLE_SHOT = {
  id: 12,
  asset: 1,
  name: 'Shot 3',
  description: null,
  timecode_start: 4600,
  timecode_end: 7000,
  duration: 2400,
  keywords: ['harbour', 'night'],
  path_thumbnail: '/mnt/media/night-shift/proxies/A012C003_250114_R2KD.shots/12.jpg',
  thumbnail_url: 'http://127.0.0.1:8000/api/videoassets/1/shots/12/thumbnail/?v=5b1e0c9a47',
  is_compositing: false,
  licensor: null,
  license: null,
  location_city: null,
  copyright: null,
  ancestor: null,
  origin: 'detected',
  start_frame: 115,
  end_frame: 175,
  score: 0.413,
  date_add: '2025-01-15T10:14:52.210000Z',
  date_mod: '2025-01-15T10:14:52.210000Z',
}

export const Shot = t.Object(
  {
    id: Type.Integer(),
    asset: Type.Integer({ description: 'The video asset' }),
    name: t.String(),
    description: t.Nullable(t.String()),
    timecode_start: ms('Where the shot starts: milliseconds from the first frame of the file (its first frame)'),
    timecode_end: ms('Where it ends: milliseconds from the first frame, after its last frame'),
    duration: ms('timecode_end − timecode_start, in milliseconds'),
    keywords: t.Array(t.String()),
    path_thumbnail: t.String({
      description:
        "The thumbnail (a frame from the shot's middle) under the production's proxy_root, in the folder <proxy name>.shots beside the proxy; '' while it has none",
    }),
    thumbnail_url: t.String({
      format: 'uri',
      description:
        'The thumbnail as served (absolute; ?v= changes when another file is made): 404 while path_thumbnail is empty',
    }),
    is_compositing: t.Boolean(),
    licensor: licence('Licensing: who licenses the material'),
    license: licence('Licensing: the licence'),
    location_city: licence('Where it was shot'),
    copyright: licence('Licensing: the copyright holder'),
    ancestor: licence('Licensing: where the material comes from'),
    origin: oneOf(ORIGINS, {
      description: 'detected: made by shot detection (replaced by the next); user: made by a user (kept)',
    }),
    start_frame: t.Nullable(
      Type.Integer({ description: 'Its first frame, counted from 0; null when the frame rate is unknown' }),
    ),
    end_frame: t.Nullable(
      Type.Integer({ description: 'The frame after its last one; null when the frame rate is unknown' }),
    ),
    score: t.Nullable(
      t.Number({
        description:
          "The scene score (0–1: scdet's score over 100) of the cut that starts it; null for the first shot and for a user's",
      }),
    ),
    date_add: t.String(),
    date_mod: t.String(),
  },
  { examples: [EXAMPLE_SHOT] },
)

export const ShotList = t.Array(Shot, { examples: [[EXAMPLE_SHOT]] })

const name = t.String({ minLength: 1, maxLength: MAX_NAME })
const description = t.Nullable(t.String({ maxLength: MAX_TEXT }))
const keywords = t.Array(t.String({ minLength: 1, maxLength: MAX_NAME }), {
  maxItems: MAX_KEYWORDS,
  description: `Words to find the shot by, each of 1 to ${MAX_NAME} characters; at most ${MAX_KEYWORDS}`,
})
const licensing = {
  is_compositing: t.Optional(t.Boolean()),
  licensor: t.Optional(t.Nullable(t.String({ maxLength: MAX_NAME }))),
  license: t.Optional(t.Nullable(t.String({ maxLength: MAX_NAME }))),
  location_city: t.Optional(t.Nullable(t.String({ maxLength: MAX_NAME }))),
  copyright: t.Optional(t.Nullable(t.String({ maxLength: MAX_NAME }))),
  ancestor: t.Optional(t.Nullable(t.String({ maxLength: MAX_NAME }))),
}

/** A user's shot: a range of the clip with a name. */
export const ShotCreate = t.Object(
  {
    name,
    timecode_start: Type.Integer({ minimum: 0, maximum: MAX_MS, description: 'Milliseconds from the first frame' }),
    timecode_end: Type.Integer({
      minimum: 1,
      maximum: MAX_MS,
      description: 'Milliseconds from the first frame, after timecode_start (and not past the end of the clip)',
    }),
    description: t.Optional(description),
    keywords: t.Optional(keywords),
    ...licensing,
  },
  {
    examples: [{ name: 'Pan to the lighthouse', timecode_start: 5200, timecode_end: 6800, keywords: ['lighthouse'] }],
  },
)

const ReadOnly = (why: string) => t.Optional(t.Unknown({ description: `Read-only: ${why}` }))

/**
 * PATCH and PUT of a shot: the fields a user sets. The service's are listed too, so that a record
 * read and sent back is a valid body, and a change of one is told why (400 invalid at it).
 */
export const ShotUpdate = t.Object(
  {
    name: t.Optional(name),
    description: t.Optional(description),
    keywords: t.Optional(keywords),
    ...licensing,
    id: ReadOnly('set by the service'),
    asset: ReadOnly('a shot stays on its video asset'),
    timecode_start: ReadOnly('set when the shot is made (by detection, or by POST)'),
    timecode_end: ReadOnly('set when the shot is made (by detection, or by POST)'),
    duration: ReadOnly('follows timecode_start and timecode_end'),
    path_thumbnail: ReadOnly('set by shot detection'),
    thumbnail_url: ReadOnly('follows path_thumbnail'),
    origin: ReadOnly('set when the shot is made'),
    start_frame: ReadOnly('set when the shot is made'),
    end_frame: ReadOnly('set when the shot is made'),
    score: ReadOnly('set by shot detection'),
    date_add: ReadOnly('set when the shot is made'),
    date_mod: ReadOnly('set on every change'),
  },
  {
    examples: [
      {
        name: 'Harbour wide',
        description: 'Wide of the harbour at night',
        keywords: ['harbour', 'wide'],
        licensor: 'Harbour Lights Pictures',
      },
    ],
  },
)

const EXAMPLE_SEQUENCE = {
  id: 3,
  asset: 1,
  name: 'Sequence 2',
  description: null,
  timecode_start: 4600,
  timecode_end: 7000,
  duration: 2400,
  keywords: [],
  origin: 'detected',
  shots: [EXAMPLE_SHOT],
  date_add: '2025-01-15T10:14:52.210000Z',
  date_mod: '2025-01-15T10:14:52.210000Z',
}

export const Sequence = t.Object(
  {
    id: Type.Integer(),
    asset: Type.Integer({ description: 'The video asset' }),
    name: t.String(),
    description: t.Nullable(t.String()),
    timecode_start: ms('Where its first shot starts, in milliseconds from the first frame'),
    timecode_end: ms('Where its last shot ends, in milliseconds from the first frame'),
    duration: ms('timecode_end − timecode_start, in milliseconds'),
    keywords: t.Array(t.String()),
    origin: oneOf(ORIGINS, {
      description:
        'detected: a run of shots between black or silent gaps, made by shot detection (replaced by the next); user: made by a user (kept)',
    }),
    shots: t.Array(Shot, { description: 'Its shots, in order' }),
    date_add: t.String(),
    date_mod: t.String(),
  },
  { examples: [EXAMPLE_SEQUENCE] },
)

export const SequenceList = t.Array(Sequence, { examples: [[EXAMPLE_SEQUENCE]] })

const shotIds = t.Array(Type.Integer({ minimum: 1 }), {
  minItems: 1,
  maxItems: MAX_SHOTS,
  description: 'The ids of its shots (shots of this video asset, each once), in the order the sequence plays them',
})

export const SequenceCreate = t.Object(
  {
    name,
    description: t.Optional(description),
    keywords: t.Optional(keywords),
    shots: shotIds,
  },
  { examples: [{ name: 'Arrival', description: 'The boat comes in', shots: [11, 12] }] },
)

export const SequenceUpdate = t.Object(
  {
    name: t.Optional(name),
    description: t.Optional(description),
    keywords: t.Optional(keywords),
    shots: t.Optional(
      t.Array(
        t.Union([
          Type.Integer({ minimum: 1 }),
          t.Object({ id: Type.Integer({ minimum: 1 }) }, { description: 'A shot as answered: its id is read' }),
        ]),
        {
          minItems: 1,
          maxItems: MAX_SHOTS,
          description: `${shotIds.description}; or the shots as answered (their ids are read). A detected sequence's shots are set by detection: read-only there`,
        },
      ),
    ),
    id: ReadOnly('set by the service'),
    asset: ReadOnly('a sequence stays on its video asset'),
    timecode_start: ReadOnly('follows its shots'),
    timecode_end: ReadOnly('follows its shots'),
    duration: ReadOnly('follows its shots'),
    origin: ReadOnly('set when the sequence is made'),
    date_add: ReadOnly('set when the sequence is made'),
    date_mod: ReadOnly('set on every change'),
  },
  { examples: [{ name: 'Arrival (alt)', keywords: ['boat'], shots: [12, 11] }] },
)

export const DetectBody = t.Object(
  {
    threshold: t.Optional(
      t.Number({
        minimum: MIN_THRESHOLD,
        maximum: MAX_THRESHOLD,
        description: `scdet's scene threshold on its ${MIN_THRESHOLD}–${MAX_THRESHOLD} scale (default ${DEFAULT_THRESHOLD}): lower finds more cuts. Also as ?threshold=`,
      }),
    ),
  },
  { examples: [{ threshold: 8 }] },
)

export const DetectQuery = t.Object({
  threshold: t.Optional(
    t.String({
      pattern: '^[0-9]{1,3}(\\.[0-9]{1,6})?$',
      description: `As the body's threshold (${MIN_THRESHOLD} to ${MAX_THRESHOLD}); the body's wins`,
    }),
  ),
})

export const ShotsQueued = t.Object(
  { task: TaskRef },
  {
    description: 'The task that detects the shots (kind shots): follow it at task.url',
    examples: [{ task: { id: 32, state: 'queued', url: '/api/tasks/32/' } }],
  },
)

/** The asset and the shot of /videoassets/{id}/shots/{shot}/: both ids as every path spells one. */
export const ShotParams = t.Object({ id: IdParams.properties.id, shot: IdParams.properties.id })
export const SequenceParams = t.Object({ id: IdParams.properties.id, sequence: IdParams.properties.id })

export type ShotApi = typeof Shot.static
export type SequenceApi = typeof Sequence.static
