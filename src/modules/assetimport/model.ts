// The body of POST /api/asset/import/ (docs/api.md, Import, docs/api.md, Import) as TypeBox schemas: the types of
// every member. What a schema cannot say (the three states, date, fps and timecode formats, what
// depends on the kind) is in rules.ts, which also turns a valid body into one ImportRequest.
//
// One schema serves the three kinds: the video members of asset_meta are typed for every kind
// (and ignored for audio and image), and technical_details has the audio members (it must be
// empty for image and video, rules.ts). Integers are strict JSON integers (Type.Integer, not
// Elysia's t.Integer, which also takes numeric text). The top-level booleans are plain booleans,
// so the form-data parser converts true/false/1/0 for them; `asset` is an object, so in form data
// it is JSON text.
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { oneOf } from '../../http/models.ts'

export const ASSET_KINDS = ['video', 'audio', 'image'] as const
export type AssetKind = (typeof ASSET_KINDS)[number]
export const ARCHIVE_TYPES = ['archive_std', 'archive_ltfs', 'archive_awps'] as const
export type ArchiveType = (typeof ARCHIVE_TYPES)[number]

const DATE_FORMS =
  'YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ] (a T may stand for the space; no TZ is UTC)'
const Text = t.String({ maxLength: 255 })

export const AnnotationMarker = t.Object(
  {
    time: Type.Integer({ minimum: 0, description: 'Position in frames from the start of the essence' }),
    text: t.String({ maxLength: 100_000 }),
    user: t.Optional(t.String({ maxLength: 255, description: 'Username of the author' })),
  },
  { description: 'A note at a frame', examples: [{ time: 1250, text: 'Boom in shot', user: 'editor1' }] },
)

const MetaValue = t.Union([t.String(), t.Number(), t.Boolean(), t.Null()])

/** The members of asset_meta: the common ones of every kind, then those of video. */
export const AssetImportMeta = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 255, description: 'Required' }),
    description: t.Optional(t.String({ maxLength: 100_000 })),
    date_crt: t.Optional(
      t.String({
        maxLength: 64,
        description: `Creation date of the essence: ${DATE_FORMS}. Stored as a UTC timestamp`,
      }),
    ),
    date_add: t.Optional(
      t.String({
        maxLength: 64,
        description: `When the asset was added to the catalogue, the same forms as date_crt. Default: now. Ignored on a re-import (an asset is added once)`,
      }),
    ),
    date_mod: t.Optional(t.Unknown({ description: 'Set by the service; a value sent is ignored' })),
    date_del: t.Optional(
      t.String({
        maxLength: 64,
        description: `Due-for-deletion date, the same forms as date_crt. Default: from the asset hold durations`,
      }),
    ),
    status_asset_description: t.Optional(t.String({ maxLength: 255 })),
    is_archive: t.Optional(t.Boolean({ default: false, description: 'The essence is archived' })),
    is_production: t.Optional(t.Boolean({ default: true, description: 'The essence is on online storage' })),
    path_file: t.String({
      description:
        'Required. Path of the essence as seen by the service; a bad path answers 406 {type: "path_file", detail}',
    }),
    path_proxy: t.Optional(t.String({ maxLength: 4096, description: 'Previously made preview material' })),
    approval: t.Optional(t.Union([t.Literal(0), t.Literal(1)], { default: 0, description: '0 or 1' })),
    meta_field_store: t.Optional(
      t.Record(t.String(), MetaValue, {
        description: 'Custom metadata, key to value (fields of a set attached to the asset kind)',
      }),
    ),
    // Video only.
    annotation_markers: t.Optional(t.Array(AnnotationMarker, { maxItems: 10_000, description: 'Video only' })),
    display_aspect_ratio: t.Optional(t.String({ maxLength: 32, description: 'Video only, e.g. 16:9' })),
    duration: t.Optional(
      Type.Integer({ minimum: 0, description: 'Video only: length in frames; required when archived only' }),
    ),
    format: t.Optional(t.String({ maxLength: 255, description: 'Video only: container format name' })),
    fps: t.Optional(
      t.Union([t.String({ maxLength: 64 }), t.Number()], {
        description:
          'Video only: frames per second, an integer, a decimal or a fraction ("25", "29.97", "30000/1001", or a JSON number); stored as fraction text. Required when archived only',
      }),
    ),
    height: t.Optional(Type.Integer({ minimum: 1, description: 'Video only: pixels; required when archived only' })),
    width: t.Optional(Type.Integer({ minimum: 1, description: 'Video only: pixels; required when archived only' })),
    offset_frames: t.Optional(Type.Integer({ minimum: 0, description: 'Video only: time origin in frames' })),
    offset_string: t.Optional(
      t.String({
        maxLength: 16,
        description:
          'Video only: time origin as SMPTE timecode HH:MM:SS:FF, or HH:MM:SS;FF for drop frame; ignored when offset_frames is set',
      }),
    ),
  },
  {
    description: 'Asset metadata: common members, then the video members',
    examples: [
      {
        name: 'A012C003_250114_R2KD',
        description: 'Night exterior, take 3',
        date_crt: '2025-01-14 21:40:05+01:00',
        is_archive: false,
        is_production: true,
        path_file: '/mnt/media/night-shift/video/A012C003_250114_R2KD.mov',
        approval: 0,
        meta_field_store: { 'camera.model': 'ARRI Alexa 35', 'scene.number': 12 },
        fps: '25',
        width: 3840,
        height: 2160,
        duration: 4512,
        offset_string: '21:40:05:12',
      },
    ],
  },
)

const TechText = t.Optional(t.String({ maxLength: 4096 }))

export const AssetImportTechnicalDetails = t.Object(
  {
    name: TechText,
    filename: TechText,
    nb_Streams: t.Optional(Type.Integer({ minimum: 0 })),
    formate_name: TechText,
    format_long_name: TechText,
    start_time: TechText,
    duration: TechText,
    size: TechText,
    bit_rate: TechText,
    major_brand: TechText,
    minor_version: TechText,
    compatible_brands: TechText,
    create_time: TechText,
    encoder: TechText,
    time_code: TechText,
    com_vendor_final: TechText,
  },
  {
    description:
      'Audio: these members (all text but nb_Streams). Image: an empty object. Video: absent or empty (video is probed)',
    examples: [
      {
        name: 'interview_01',
        filename: '/mnt/media/night-shift/audio/interview_01.wav',
        nb_Streams: 1,
        formate_name: 'wav',
        format_long_name: 'WAV / WAVE (Waveform Audio)',
        start_time: '0.000000',
        duration: '1834.250000',
        size: '352176044',
        bit_rate: '1536000',
        encoder: 'Lavf60.16.100',
      },
    ],
  },
)

export const AssetImportArchiveDetails = t.Object(
  {
    archive_handle: t.Optional(t.String({ minLength: 1, maxLength: 255, description: 'Required when is_archive' })),
    archive_type: t.Optional(oneOf(ARCHIVE_TYPES, { description: 'Required when is_archive (never defaulted)' })),
    original_path: t.Optional(t.String({ minLength: 1, maxLength: 4096, description: 'Required when is_archive' })),
    tape_barcode: t.Optional(Text),
    tape_label: t.Optional(Text),
    tape_name: t.Optional(Text),
    vendor_archive_index: t.Optional(
      t.String({ minLength: 1, maxLength: 255, description: 'Required when archive_type is archive_awps' }),
    ),
  },
  {
    description: 'Where the archived essence is',
    examples: [
      {
        archive_handle: '10023',
        archive_type: 'archive_awps',
        original_path: '/Volumes/Projects/NightShift/A012C003.mov',
        vendor_archive_index: 'Default-Archive',
        tape_barcode: 'NS0042L8',
      },
    ],
  },
)

export const AssetImportKeywords = t.Record(
  t.String(),
  t.Array(t.String({ minLength: 1, maxLength: 255 }), { maxItems: 10_000 }),
  {
    description: 'Category name to keyword names; a missing category or keyword is created (per asset kind)',
    examples: [{ Location: ['Harbour', 'Night'], People: ['Mara Lind'] }],
  },
)

export const AssetImportAsset = t.Object(
  {
    asset_meta: AssetImportMeta,
    technical_details: t.Optional(AssetImportTechnicalDetails),
    archive_details: t.Optional(AssetImportArchiveDetails),
    keywords: t.Optional(AssetImportKeywords),
  },
  { description: 'In form data: JSON text' },
)

export const AssetImport = t.Object(
  {
    type: oneOf(ASSET_KINDS, { description: 'Asset kind' }),
    production: t.Union([t.String({ minLength: 1, maxLength: 255 }), Type.Integer({ minimum: 1 })], {
      description:
        'An existing production: its name (text, always; in form data too, even all digits), or its id (a JSON integer)',
    }),
    date_add: t.Optional(
      t.String({ maxLength: 64, description: `As asset_meta.date_add, which wins when both are given` }),
    ),
    rewrap_proxy: t.Optional(
      t.Boolean({
        default: false,
        description:
          'true: rewrap the existing proxy (only when path_proxy is set and readable); false: make a new proxy',
      }),
    ),
    move_asset: t.Optional(
      t.Boolean({
        default: false,
        description:
          "true: move the essence into the production's area on asset_destination: STORAGE_ROOT/<video|audio|image>/ on the device that holds the storage_root, DEVICE/CODENAME/<kind>/ on another device",
      }),
    ),
    asset_destination: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 255,
        description:
          "Name of an existing device; used only when move_asset is true (otherwise ignored). Default: the production's device for the kind",
      }),
    ),
    asset: AssetImportAsset,
  },
  {
    description:
      'Imports an existing file as an asset (docs/api.md, section Import). JSON null for an optional member means the member is absent',
    examples: [
      {
        type: 'video',
        production: 'Night Shift',
        rewrap_proxy: false,
        move_asset: false,
        asset: {
          asset_meta: {
            name: 'A012C003_250114_R2KD',
            path_file: '/mnt/media/night-shift/video/A012C003_250114_R2KD.mov',
            date_crt: '2025-01-14',
            fps: '30000/1001',
            width: 1920,
            height: 1080,
            offset_string: '01:00:00;00',
            annotation_markers: [{ time: 1250, text: 'Boom in shot', user: 'editor1' }],
          },
          keywords: { Location: ['Harbour', 'Night'] },
        },
      },
      {
        type: 'audio',
        production: 3,
        date_add: '2025-01-15 08:00:00+01:00',
        asset: {
          asset_meta: {
            name: 'interview_01',
            path_file: '/mnt/archive/night-shift/interview_01.wav',
            is_archive: true,
            is_production: false,
          },
          technical_details: { nb_Streams: 1, formate_name: 'wav', duration: '1834.250000' },
          archive_details: {
            archive_handle: '10023',
            archive_type: 'archive_ltfs',
            original_path: '/Volumes/Audio/interview_01.wav',
            tape_barcode: 'NS0042L8',
          },
        },
      },
    ],
  },
)

export type AssetImportBody = typeof AssetImport.static

/** Registered with .model() under these names (the OpenAPI components). */
export const assetImportModels = {
  AssetImport,
  AssetImportAsset,
  AssetImportMeta,
  AssetImportTechnicalDetails,
  AssetImportArchiveDetails,
  AssetImportKeywords,
  AssetImportAnnotationMarker: AnnotationMarker,
}
