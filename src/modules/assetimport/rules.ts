// The request side of an import (docs/api.md, Import, docs/api.md, Import), pure: no database, no disk, no
// Elysia context. An HTTP import and (later) a watcher import both go
//
//   dropNulls → validateImport (TypeBox types + checkImport's rules, every failure at once)
//             → normalizeImport (defaults, fps as a fraction, timestamps, offset_frames)
//
// or in one call, parseImport. What needs the disk (path_file: 406) or the database (production,
// asset_destination, meta_field_store keys) is the service's.
//
// Choices where the contract is silent:
// - technical_details: members only for audio. For image api.md says "an empty object"; for
//   video it names none (the file is probed). Both take it absent or `{}`; any member there is
//   400 `invalid` at /asset/technical_details, rather than details silently dropped.
// - date_del takes the forms of date_crt (parseDate): YYYY[-MM[-DD]], or a date and time; both
//   dates become UTC timestamps (start of the period for a partial date), as everywhere else.
// - fps: "25" → "25/1"; a decimal keeps its digits over a power of ten ("29.97" → "2997/100",
//   "25.0" → "25/1", "23.976" → "23976/1000"); a fraction is kept, leading zeros dropped. A JSON
//   number is read as its shortest decimal text. Numerator and denominator are positive safe
//   integers.
// - offset_string: HH 00-23, MM and SS 00-59, FF below the timecode base when fps is known (the
//   base is fps rounded up: 25 for 25, 30 for 29.97). `;` (drop frame) needs an NTSC rate (a
//   non-integer fps whose base is a multiple of 30: 29.97, 59.94), and the labels drop frame
//   skips (frames 0-1 at 29.97, 0-3 at 59.94, of each minute but every tenth) are invalid. When
//   offset_frames is given, offset_string is ignored: not checked, not passed on. When fps is
//   not given, offset_string is checked for its form and passed on, offset_frames left for the
//   service to derive once it knows the rate.
// - The video members of asset_meta are checked for every kind (one schema) and passed on for
//   video only.
// - vendor_archive_index is required, like the other archive members, in states 2 and 3 when
//   archive_type is archive_awps; the archive_details of an asset that is not archived are
//   checked for types only and passed on as given.
// - production: a JSON integer is the production's id, text is always its name (also "12": a
//   production may be named so, and form data, being text, names it the same way as before).
// - date_add (asset_meta's, else the top level's) takes the forms of date_crt; it sets the date
//   of a new asset only (a re-import keeps the date the asset was first added: the service's).
// - A missing member hides the failures inside it: no asset gives one `/asset` required entry,
//   not also `/asset/asset_meta/name` and `/asset/asset_meta/path_file`. Entries are listed in
//   the order of the members in the schema, whichever check found them.
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { AppError, type ErrorEntry, entry, fromValidation } from '../../http/errors.ts'
import { parseDate } from '../../util/dates.ts'
import { readTimecode } from '../../media/timecode.ts'
import {
  ASSET_KINDS,
  AssetImport,
  type AssetImportTechnicalDetails,
  type ArchiveType,
  type AssetImportBody,
  type AssetKind,
} from './model.ts'

/** Keyword categories and keywords of one request together (each is a row or two written). */
export const MAX_KEYWORDS = 1000

/** The longest keyword and category name (the model's maxLength of a keyword), on import and edit. */
export const MAX_NAME = 255

/**
 * 400 at `pointer` (the import's /asset/keywords; an asset edit's /keywords) for more than
 * MAX_KEYWORDS categories and keywords in all: each category counts one, and each of its
 * keywords one. Counted on whatever was sent (a category that is not a list counts one), so
 * that a route asks it first, before the body is copied, cleaned and validated: 40,000
 * categories took 60 ms of those per request, with every other request waiting (bench/stall.ts).
 */
export function refuseTooManyKeywords(keywords: unknown, pointer = '/asset/keywords') {
  if (keywords === null || typeof keywords !== 'object') return
  let n = 0
  for (const key in keywords) {
    const list = (keywords as Record<string, unknown>)[key]
    n += 1 + (Array.isArray(list) ? list.length : 0)
    if (n > MAX_KEYWORDS)
      throw AppError.many(400, [
        entry(400, 'invalid', `At most ${MAX_KEYWORDS} categories and keywords in all.`, { pointer }),
      ])
  }
}

export type MetaValue = string | number | boolean | null
export type AnnotationMarker = { time: number; text: string; user?: string }

/** The audio members of 4.10 as the model declares them (the probe's AudioInfo fills the same ones). */
export type AudioTechnicalDetails = typeof AssetImportTechnicalDetails.static

export type ArchiveDetails = {
  /** Present when is_archive (states 2 and 3). */
  archive_handle?: string
  /** Present when is_archive; never defaulted. */
  archive_type?: ArchiveType
  /** Present when is_archive. */
  original_path?: string
  tape_barcode?: string
  tape_label?: string
  tape_name?: string
  /** Present when is_archive and archive_type is archive_awps. */
  vendor_archive_index?: string
}

/** One import, whether it came over HTTP or from the device watcher: defaults applied, formats normalized. */
export type ImportRequest = {
  type: AssetKind
  /** A production's name (text) or id (number); its existence is the service's to check. */
  production: string | number
  rewrap_proxy: boolean
  move_asset: boolean
  /** A device name; only when move_asset is true (otherwise dropped). */
  asset_destination?: string
  asset: {
    asset_meta: {
      name: string
      description?: string
      /** UTC timestamp, 2025-01-14T00:00:00.000000Z. */
      date_crt?: string
      /** UTC timestamp (asset_meta's, else the top level's); absent: now. For a new asset only. */
      date_add?: string
      /** UTC timestamp; absent: the service applies the hold durations. */
      date_del?: string
      status_asset_description?: string
      is_archive: boolean
      is_production: boolean
      /** As given; the service checks it against the devices and the disk (406). */
      path_file: string
      path_proxy?: string
      approval: 0 | 1
      meta_field_store: Record<string, MetaValue>
      // Video only; absent for audio and image.
      annotation_markers?: AnnotationMarker[]
      display_aspect_ratio?: string
      duration?: number
      format?: string
      /** Fraction text, "25/1", "30000/1001". */
      fps?: string
      height?: number
      width?: number
      /** Given, or derived from offset_string when fps is known. */
      offset_frames?: number
      /** Only when offset_frames was not given. */
      offset_string?: string
    }
    /** The audio members for audio; {} for image and video. */
    technical_details: AudioTechnicalDetails
    /** {} when not given. */
    archive_details: ArchiveDetails
    /** Category → keywords, each listed once. */
    keywords: Record<string, string[]>
  }
}

const META = '/asset/asset_meta'
/** A member name as a JSON Pointer segment (RFC 6901): ~ and / escaped. */
const pointerKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')
const ARCHIVE = '/asset/archive_details'
const ARCHIVE_REQUIRED = ['archive_handle', 'archive_type', 'original_path'] as const
const ARCHIVED_ONLY_VIDEO = ['duration', 'fps', 'height', 'width'] as const

type Json = Record<string, unknown>
const record = (value: unknown): Json | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined

// ---------------------------------------------------------------------------------------------
// Nulls

/**
 * A JSON null for a member means the member is absent (client libraries send "description": null):
 * null members are removed at every level, except the values of meta_field_store, where null is a
 * value. A required member sent as null is then reported `required`. Array items are kept as they
 * are (a null keyword is invalid). Returns a copy; the body is not changed.
 */
export function dropNulls<T>(body: T): T {
  return strip(body, '') as T
}

function strip(value: unknown, path: string): unknown {
  if (Array.isArray(value)) return value.map((item) => strip(item, `${path}/*`))
  const object = record(value)
  if (!object) return value
  if (path === '/asset/asset_meta/meta_field_store') return { ...object }
  const out: Json = {}
  for (const [key, member] of Object.entries(object)) if (member !== null) out[key] = strip(member, `${path}/${key}`)
  return out
}

// ---------------------------------------------------------------------------------------------
// Formats

export type Fraction = { num: number; den: number }

/** fps as a fraction: an integer, a decimal or a fraction, as text or a JSON number; positive. */
export function readFps(value: unknown): Fraction | undefined {
  let text: string
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) return undefined
    text = String(value) // shortest round-trip text; 1e-7 and 1e+21 are refused below
  } else if (typeof value === 'string') text = value.trim()
  else return undefined
  const m = /^(?:(\d+)(?:\.(\d+))?|(\d+)\/(\d+))$/.exec(text)
  if (!m) return undefined
  let num: number, den: number
  if (m[3] !== undefined) {
    num = Number(m[3])
    den = Number(m[4])
  } else {
    const decimals = (m[2] ?? '').replace(/0+$/, '')
    num = Number(m[1]! + decimals)
    den = 10 ** decimals.length
  }
  if (!Number.isSafeInteger(num) || !Number.isSafeInteger(den) || num <= 0 || den <= 0) return undefined
  return { num, den }
}

export const fpsText = (fps: Fraction) => `${fps.num}/${fps.den}`

/** SMPTE timecode to frames (src/media/timecode.ts: the probe reads a file's timecode with it too). */
export { readTimecode }

const NOT_A_RATE = 'Not a frame rate: use a positive integer, decimal or fraction ("25", "29.97", "30000/1001").'
const NOT_A_DATE = 'Not a date: use YYYY[-MM[-DD]] or YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ].'

// ---------------------------------------------------------------------------------------------
// Rules

/**
 * What the schema cannot say: the three states of docs/api.md, Import with their required members, the
 * formats of dates, fps and timecode, technical_details by kind, keyword category names. Every
 * failure at once, one entry per field. Tolerant of any input: a member of the wrong JSON type is
 * skipped here (the schema reports it), and a member that is not a boolean counts as its default.
 */
export function checkImport(body: unknown): ErrorEntry[] {
  const found = new Map<string, ErrorEntry>()
  const required = (pointer: string, detail = 'This field is required.') => {
    if (!found.has(pointer)) found.set(pointer, entry(400, 'required', detail, { pointer }))
  }
  const invalid = (pointer: string, detail: string) => {
    if (!found.has(pointer)) found.set(pointer, entry(400, 'invalid', detail, { pointer }))
  }

  const top = record(body)
  if (!top) return []
  const asset = record(top.asset)
  const meta = record(asset?.asset_meta)
  const archive = record(asset?.archive_details)
  const kind = ASSET_KINDS.find((k) => k === top.type)

  // 1. Always.
  for (const key of ['type', 'production'] as const) if (top[key] === undefined) required(`/${key}`)
  for (const key of ['name', 'path_file'] as const) if (meta?.[key] === undefined) required(`${META}/${key}`)

  // 2 and 3. Archived (and online, or archive only).
  const isArchive = meta?.is_archive === true
  const isProduction = meta?.is_production !== false
  if (isArchive) {
    const why = isProduction
      ? 'Required when is_archive is true.'
      : 'Required when is_archive is true and is_production false.'
    for (const key of ARCHIVE_REQUIRED) if (archive?.[key] === undefined) required(`${ARCHIVE}/${key}`, why)
    if (archive?.archive_type === 'archive_awps' && archive.vendor_archive_index === undefined)
      required(`${ARCHIVE}/vendor_archive_index`, 'Required when archive_type is archive_awps.')
    if (!isProduction && kind === 'video')
      for (const key of ARCHIVED_ONLY_VIDEO)
        if (meta?.[key] === undefined)
          required(
            `${META}/${key}`,
            'Required for a video that is archived only (is_archive true, is_production false).',
          )
  }

  if (typeof top.date_add === 'string' && parseDate(top.date_add) === undefined) invalid('/date_add', NOT_A_DATE)
  if (meta) {
    for (const key of ['date_crt', 'date_add', 'date_del'] as const)
      if (typeof meta[key] === 'string' && parseDate(meta[key]) === undefined) invalid(`${META}/${key}`, NOT_A_DATE)

    const fpsGiven = typeof meta.fps === 'string' || typeof meta.fps === 'number'
    const fps = fpsGiven ? readFps(meta.fps) : undefined
    if (fpsGiven && !fps) invalid(`${META}/fps`, NOT_A_RATE)

    if (typeof meta.offset_string === 'string' && meta.offset_frames === undefined) {
      const timecode = readTimecode(meta.offset_string, fps)
      if ('error' in timecode) invalid(`${META}/offset_string`, timecode.error)
    }
  }

  const technical = record(asset?.technical_details)
  if ((kind === 'image' || kind === 'video') && technical && Object.keys(technical).length > 0)
    invalid(
      '/asset/technical_details',
      kind === 'image'
        ? 'Must be an empty object for an image asset.'
        : 'Not taken for a video asset (the file is probed): leave it out or send {}.',
    )

  // A category's name is its key, which the schema does not bound: 255 characters, as a keyword's.
  const keywords = record(asset?.keywords)
  if (keywords && Object.hasOwn(keywords, '')) invalid('/asset/keywords/', 'A keyword category needs a name.')
  for (const category of keywords ? Object.keys(keywords) : [])
    if (category.length > MAX_NAME)
      invalid(
        `/asset/keywords/${pointerKey(category)}`,
        `A keyword category's name has at most ${MAX_NAME} characters.`,
      )

  return [...found.values()]
}

const importCheck = TypeCompiler.Compile(AssetImport)

/**
 * Every failure of a body (after dropNulls) at once: the schema's (through fromValidation, as the
 * app's onError renders them) and checkImport's, one entry per pointer (the schema's when both
 * name one), in the order of the members in the schema; an entry inside a member that is itself
 * reported is left out. Empty when the body is good.
 */
export function validateImport(body: unknown): ErrorEntry[] {
  // The compiled check answers a good body at once; the interpreted walk that lists every
  // failure (ten times slower) runs only for a body that has one.
  const failures = importCheck.Check(body) ? [] : [...Value.Errors(AssetImport, body)]
  const typed = failures.length > 0 ? fromValidation('body', failures as never).entries.map(clearer) : []
  const byPointer = new Map<string, ErrorEntry>()
  for (const e of [...typed, ...checkImport(body)]) {
    const pointer = pointerOf(e)
    if (!byPointer.has(pointer)) byPointer.set(pointer, e)
  }
  const pointers = [...byPointer.keys()]
  const inside = (p: string, q: string) => q !== '/' && p.startsWith(`${q}/`)
  return [...byPointer]
    .filter(([p]) => !pointers.some((q) => inside(p, q)))
    .map(([p, e]) => ({ e, rank: rankOf(p) }))
    .sort((a, b) => compareRanks(a.rank, b.rank))
    .map(({ e }) => e)
}

type Shape = { properties?: Record<string, Shape>; items?: Shape; patternProperties?: Record<string, Shape> }

/**
 * Where a pointer's field stands in the schema: the position of each member among its object's
 * members, an array index, or 0 for a record key (left in the order found). Entries are listed in
 * this order, so the schema's failures and the rules' read as one list, in the order of the body.
 */
function rankOf(pointer: string): number[] {
  const rank: number[] = []
  let shape: Shape | undefined = AssetImport as Shape
  for (const segment of pointer.split('/').slice(1)) {
    if (segment === '' && pointer === '/') break
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~')
    if (shape?.properties) {
      const at = Object.keys(shape.properties).indexOf(key)
      rank.push(at < 0 ? Number.MAX_SAFE_INTEGER : at)
      shape = shape.properties[key]
    } else if (shape?.items) {
      rank.push(/^\d+$/.test(key) ? Number(key) : Number.MAX_SAFE_INTEGER)
      shape = shape.items
    } else {
      rank.push(0)
      shape = shape?.patternProperties ? Object.values(shape.patternProperties)[0] : undefined
    }
  }
  return rank
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return a.length - b.length
}

/** TypeBox says "Expected union value." for the unions of the body; say what they take. */
function clearer(e: ErrorEntry): ErrorEntry {
  if (e.code !== 'invalid') return e
  const pointer = pointerOf(e)
  if (pointer === `${META}/fps`) return { ...e, detail: NOT_A_RATE }
  if (pointer === '/production')
    return {
      ...e,
      detail: "The production's name (text of 1 to 255 characters) or its id (a whole number, 1 or more).",
    }
  if (pointer.startsWith(`${META}/meta_field_store/`))
    return { ...e, detail: 'A custom metadata value is text, a number, true, false or null.' }
  return e
}

const pointerOf = (e: ErrorEntry) => (e.source && 'pointer' in e.source ? e.source.pointer : '')

/**
 * A valid body (validateImport found nothing) as one ImportRequest: defaults applied (is_archive
 * false, is_production true, approval 0, rewrap_proxy false, move_asset false), dates as
 * timestamps, fps as fraction text, offset_frames from offset_string when only that is given
 * and fps is known, date_add in asset_meta (the top level's when asset_meta has none), unknown
 * members and ignored ones (date_mod, asset_destination without move_asset, video members of
 * other kinds) left out.
 */
export function normalizeImport(input: AssetImportBody): ImportRequest {
  // A copy without unknown members (a watcher's body has not been through Elysia's cleaning).
  const body = Value.Clean(AssetImport, Value.Clone(input)) as AssetImportBody
  const { asset } = body
  const meta = asset.asset_meta
  const video = body.type === 'video'
  const fps = video && meta.fps !== undefined ? readFps(meta.fps) : undefined
  const dateAdd = meta.date_add ?? body.date_add

  const assetMeta: ImportRequest['asset']['asset_meta'] = {
    name: meta.name,
    ...given({ description: meta.description }),
    ...given({ date_crt: meta.date_crt === undefined ? undefined : parseDate(meta.date_crt) }),
    ...given({ date_add: dateAdd === undefined ? undefined : parseDate(dateAdd) }),
    ...given({ date_del: meta.date_del === undefined ? undefined : parseDate(meta.date_del) }),
    ...given({ status_asset_description: meta.status_asset_description }),
    is_archive: meta.is_archive ?? false,
    is_production: meta.is_production ?? true,
    path_file: meta.path_file,
    ...given({ path_proxy: meta.path_proxy }),
    approval: meta.approval ?? 0,
    meta_field_store: { ...meta.meta_field_store },
  }
  if (video) {
    let offsetFrames = meta.offset_frames
    let offsetString: string | undefined
    if (offsetFrames === undefined && meta.offset_string !== undefined) {
      offsetString = meta.offset_string
      const timecode = readTimecode(meta.offset_string, fps)
      if ('frames' in timecode) offsetFrames = timecode.frames
    }
    Object.assign(assetMeta, {
      annotation_markers: (meta.annotation_markers ?? []).map((m) => ({
        time: m.time,
        text: m.text,
        ...given({ user: m.user }),
      })),
      ...given({
        display_aspect_ratio: meta.display_aspect_ratio,
        duration: meta.duration,
        format: meta.format,
        fps: fps && fpsText(fps),
        height: meta.height,
        width: meta.width,
        offset_frames: offsetFrames,
        offset_string: offsetString,
      }),
    })
  }

  const keywords: Record<string, string[]> = {}
  for (const [category, names] of Object.entries(asset.keywords ?? {})) keywords[category] = [...new Set(names)]

  return {
    type: body.type,
    production: body.production,
    rewrap_proxy: body.rewrap_proxy ?? false,
    move_asset: body.move_asset ?? false,
    ...(body.move_asset === true ? given({ asset_destination: body.asset_destination }) : {}),
    asset: {
      asset_meta: assetMeta,
      technical_details: body.type === 'audio' ? given({ ...asset.technical_details }) : {},
      archive_details: given({ ...asset.archive_details }) as ArchiveDetails,
      keywords,
    },
  }
}

/**
 * The whole road in one call: nulls dropped, everything checked (400 AppError with one entry per
 * field), normalized.
 */
export function parseImport(body: unknown): ImportRequest {
  const cleaned = dropNulls(body)
  const failures = validateImport(cleaned)
  if (failures.length > 0) throw AppError.many(400, failures)
  return normalizeImport(cleaned as AssetImportBody)
}

/** The members whose value is not undefined. */
function given<T extends object>(members: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(members).filter(([, v]) => v !== undefined)) as never
}
