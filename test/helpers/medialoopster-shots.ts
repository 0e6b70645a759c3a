// What the published medialoopster Python client (pydantic v2; extra fields ignored) requires of
// the answers of get_videoasset_shots and get_videoasset_sequences: TypeAdapter(List[Shot]) and
// List[Sequence] over the whole JSON array of GET /videoassets/{id}/shots/ and /sequences/. Each
// field by what the client's model declares, checked strictly (an int is a JSON integer, not a
// numeric text pydantic's lax mode would take); thumbnail_url as pydantic's HttpUrl takes it: an
// absolute http or https URL with a host, at most 2083 characters. A record this finds no
// problem with, the client takes.

type Kind = 'int' | 'str' | 'str?' | 'bool' | 'str[]' | 'url' | 'shots'

/** The client's Shot: each field and its type (`str?`: str | None, may be missing). */
export const CLIENT_SHOT: Record<string, Kind> = {
  name: 'str',
  description: 'str?',
  timecode_start: 'int',
  timecode_end: 'int',
  duration: 'int',
  id: 'int',
  asset: 'int',
  licensor: 'str?',
  license: 'str?',
  location_city: 'str?',
  copyright: 'str?',
  ancestor: 'str?',
  keywords: 'str[]',
  path_thumbnail: 'str',
  is_compositing: 'bool',
  thumbnail_url: 'url',
}

/** The client's Sequence. */
export const CLIENT_SEQUENCE: Record<string, Kind> = {
  name: 'str',
  description: 'str?',
  timecode_start: 'int',
  timecode_end: 'int',
  duration: 'int',
  keywords: 'str[]',
  asset: 'int',
  shots: 'shots',
}

/** Fields with a default in the client's model: they may be missing. */
const DEFAULTED = new Set(['description', 'licensor', 'license', 'location_city', 'copyright', 'ancestor', 'keywords'])

function isHttpUrl(v: unknown): boolean {
  if (typeof v !== 'string' || v.length > 2083) return false
  try {
    const url = new URL(v)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

const fits: Record<Exclude<Kind, 'shots'>, (v: unknown) => boolean> = {
  int: Number.isInteger,
  str: (v) => typeof v === 'string',
  'str?': (v) => v === null || typeof v === 'string',
  bool: (v) => typeof v === 'boolean',
  'str[]': (v) => Array.isArray(v) && v.every((x) => typeof x === 'string'),
  url: isHttpUrl,
}

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v)

function problemsOf(model: Record<string, Kind>, record: unknown, at: string): string[] {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return [`${at}: an object expected`]
  const r = record as Record<string, unknown>
  return Object.entries(model).flatMap(([field, kind]) => {
    if (!(field in r)) return DEFAULTED.has(field) ? [] : [`${at}.${field}: missing`]
    const value = r[field]
    if (kind === 'shots')
      return Array.isArray(value)
        ? value.flatMap((s, i) => problemsOf(CLIENT_SHOT, s, `${at}.shots[${i}]`))
        : [`${at}.shots: a list expected, got ${typeOf(value)}`]
    return fits[kind](value) ? [] : [`${at}.${field}: ${kind} expected, got ${JSON.stringify(value)}`]
  })
}

/** What TypeAdapter(List[Shot]) would refuse in an answer: one line per problem; none when it takes it. */
export const clientShotsProblems = (answer: unknown): string[] =>
  Array.isArray(answer) ? answer.flatMap((r, i) => problemsOf(CLIENT_SHOT, r, `[${i}]`)) : ['a list expected']

/** What TypeAdapter(List[Sequence]) would refuse in an answer. */
export const clientSequencesProblems = (answer: unknown): string[] =>
  Array.isArray(answer) ? answer.flatMap((r, i) => problemsOf(CLIENT_SEQUENCE, r, `[${i}]`)) : ['a list expected']
