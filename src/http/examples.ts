// The examples of the OpenAPI document: one small catalogue told once, so that the examples
// agree with each other. The "Night Shift" production lives on the device "media" at
// /mnt/media/; its clips, sound and stills are media assets 1 to 3, linked to project asset 1.
// Posting the create examples in the order of CREATE_ORDER to a fresh server (with /mnt/media
// and the files present), then the link example to project asset 1, makes these very records,
// and the copy example then makes project asset 2 and its task; test/http/openapi.test.ts does
// that on a temporary folder, and checks that every example fits its schema.
//
// The error details are made by the functions the server makes them with (auth.ts, errors.ts,
// users/access.ts), so that an example cannot drift from the answer it shows.
import { AWPS_NOT_AVAILABLE } from '../modules/archive/service.ts'
import { permissionNeeded, writeAccessNeeded } from '../modules/users/access.ts'
import { VERSION } from '../version.ts'
import { NO_CREDENTIALS } from './auth.ts'
import { MAX_BODY_BYTES } from './body.ts'
import { REQUIRED_DETAIL, entry, isProjectPath, noSuchRecord, wholeNumberDetail } from './errors.ts'
import { MAX_HEADER_BYTES } from './head.ts'
import { UNSUPPORTED_VERSION } from './versioning.ts'

const ROOT = '/mnt/media/'
const SHOW = `${ROOT}night-shift/`
const CLIP = `${SHOW}video/A012C003_250114_R2KD.mov`
const SOUND = `${SHOW}audio/interview_01.wav`
const STILL = `${SHOW}stills/poster_v3.tif`
const BUNDLE = `${SHOW}projects/reel-1/`
/** Where the copy example puts its copy of project asset 1. */
const GRADE_BUNDLE = `${SHOW}projects/reel-1-grade/`

const device = {
  id: 1,
  name: 'media',
  display_name: 'Media SAN',
  path: ROOT,
  is_internal: true,
  is_archive: false,
  autoshot_detection: false,
  allow_direct_writing: true,
  recieve_xml_meta: false,
  protocol: 'file',
  anonymous: false,
  server: null,
  username: null,
  password: null,
  transcoding_profile: 1,
  archive_connector: null,
  passthrough_profiles: [],
  write_permission_groups: [],
}

const profileFields = {
  name: 'ProRes Proxy 1080p',
  codec_name: 'prores_ks',
  codec_profile: 'proxy',
  video_container: 'mov',
  frame_rate: '25',
  video_data_rate: '45M',
  width: 1920,
  height: 1080,
  display_aspect_ratio: '16:9',
  pix_fmt: 'yuv422p10le',
  progressive: true,
  passthrough: false,
  default_profile: true,
  interlaced: 'tff',
  ar_conversion: 'box',
  should_have_audio: true,
  audio_codec_name: 'pcm_s24le',
  audio_container: 'mov',
  audio_codec_profile: '',
  audio_data_rate: '',
  tracks: 2,
  channels_per_track: 1,
  bits_per_sample: 24,
  sample_rate: 48000,
}

const production = {
  id: 1,
  name: 'Night Shift',
  codename: 'night-shift',
  company: 'Harbour Lights Pictures',
  storage_root: SHOW,
  proxy_root: `${SHOW}proxies/`,
  proxy_url: '',
  upload_root: null,
  move_uploads: false,
  ignore_patterns: [],
  // As the admin who created it reads it: every right, and no member (superusers are not listed).
  can_write: true,
  can_delete_assets: true,
  san_mount: '',
  export_type: '',
  default_approval_status: 0,
  direct_attached_site: 1,
  network_attached_site: [],
  members: [],
  member_groups: [],
  upload_device: device,
  audioasset_device: device,
  imageasset_device: device,
  videoasset_device: device,
  projectasset_device: null,
}
/** The same production in API version 2: its devices by id. */
const productionVersion2 = {
  ...production,
  upload_device: device.id,
  audioasset_device: device.id,
  imageasset_device: device.id,
  videoasset_device: device.id,
}

const added = '2025-01-15T08:12:44.512000Z'
const media = (
  id: number,
  name: string,
  path_file: string,
  description: string,
  meta_field_store: Record<string, unknown>,
) => ({
  id,
  name,
  description,
  production: 1,
  status_asset: 6,
  path_file,
  device: 1,
  is_archive: false,
  is_production: true,
  meta_field_store,
  status_approval: 0,
})
const video = media(1, 'A012C003_250114_R2KD', CLIP, 'Night exterior, harbour, take 3', {
  'camera.model': 'ARRI Alexa 35',
})
const audio = media(2, 'interview_01', SOUND, 'Harbour master interview, boom and lav', {})
const image = media(3, 'poster_v3', STILL, 'One-sheet, third version', {})
/** The pictures made with the proxy (docs/api.md, Pictures), as served at http://127.0.0.1:8000. */
const picturesOf = (kind: 'audio' | 'image' | 'video', id: number, path_proxy: string) => {
  const poster = `http://127.0.0.1:8000/api/${kind}assets/${id}/poster/?v=3f1a9c0b7e`
  const picture = { video: '.poster.jpg', image: '.thumb.jpg', audio: '.wave.png' }[kind]
  return {
    poster_url: poster,
    thumbnail_url: poster,
    path_thumbnail: path_proxy.slice(0, path_proxy.lastIndexOf('.')) + picture,
    is_proxy_available: true,
    ...(kind === 'video' ? { strip_url: `http://127.0.0.1:8000/api/videoassets/${id}/strip/index/?v=8c2e4d61a0` } : {}),
  }
}
const detail = (
  asset: typeof video,
  path_proxy: string,
  technical: Record<string, unknown>,
  keywords: Record<string, string[]>,
  kind: 'audio' | 'image' | 'video',
) => ({
  ...asset,
  date_crt: '2025-01-14T20:40:05.000000Z',
  date_add: added,
  date_mod: added,
  date_del: null,
  keywords,
  technical,
  path_proxy,
  projects: [1],
  modified_by: 'admin',
  archive_details: {},
  ...picturesOf(kind, asset.id, path_proxy),
})

const projectFields = {
  name: 'Reel 1 rough cut',
  bundle_root: BUNDLE,
  path_file: `${BUNDLE}reel-1.prproj`,
  description: 'Assembly of the night exteriors',
  name_editor: 'Mara Lind',
  name_studio: 'Suite 2',
}

/** The copy of project asset 1 (the copy example), under way: the first task of the catalogue. */
const task = {
  id: 1,
  kind: 'copy',
  state: 'running',
  target: { projectasset: 2 },
  step: '',
  percent: null,
  bytes_done: 1_073_741_824,
  bytes_total: 4_294_967_296,
  files_done: 3,
  files_total: 14,
  error: '',
  date_add: '2025-01-16T10:02:11.020000Z',
  date_start: '2025-01-16T10:02:11.031000Z',
  date_end: null,
  result: {},
}

const searchHit = {
  type: 'videoasset',
  id: video.id,
  name: video.name,
  production: 1,
  path: CLIP,
  is_production: true,
  score: 12.41,
}
const project = {
  id: 1,
  audio_assets: [audio],
  image_assets: [image],
  video_assets: [video],
  ...projectFields,
  date_crt: null,
  date_add: '2025-01-15T09:30:00.123000Z',
  date_mod: '2025-01-15T11:05:42.871000Z',
  date_del: null,
  meta_field_store: {},
  status_asset: 6,
  status_asset_description: 'ASSET_DONE',
  status_editing: 0,
  status_approval: 0,
  type: 'premiere',
  is_archive: false,
  is_production: true,
  files: { count: 14, bytes: 52_428_800 },
  locked_by: null,
  production: 1,
  device: 1,
}

const projectCreate = { ...projectFields, production_name: 'Night Shift' }
const copyCreate = { copy_of: 1, name: 'Reel 1 grade', bundle_root: GRADE_BUNDLE, production_name: 'Night Shift' }
/** A history row: an approval through the API (PATCH /api/videoassets/1/ {"status_approval": 1}). */
const historyEntry = {
  id: 42,
  date: '2025-01-16T14:20:31.208000Z',
  user: 'ana',
  via: 'api',
  resource: 'videoasset',
  resource_id: 1,
  action: 'update',
  changes: {
    status_approval: { old: 0, new: 1 },
    date_mod: { old: '2025-01-15T10:12:03.500000Z', new: '2025-01-16T14:20:31.208000Z' },
  },
  production: 1,
}

/** A marker on the clip (docs/api.md, Markers): a point, by the user the 403 examples name. */
const marker = {
  id: 1,
  asset: video.id,
  start_ms: 2480,
  end_ms: null,
  start_timecode: '21:40:07:12',
  end_timecode: null,
  note: 'Boom dips into frame',
  color: 'red',
  user: 'ana',
  date_add: '2025-01-16T15:02:09.114000Z',
  date_mod: '2025-01-16T15:02:09.114000Z',
}

/** What the create answers: the project as it is read, before any media asset is linked to it. */
const created = {
  ...project,
  audio_assets: [],
  image_assets: [],
  video_assets: [],
  date_mod: project.date_add,
  modified_by: 'admin',
}
/** What the copy answers: the new project (not in production until its files are there), links copied, and its task. */
const copied = {
  ...project,
  id: 2,
  name: copyCreate.name,
  bundle_root: GRADE_BUNDLE,
  path_file: `${GRADE_BUNDLE}reel-1.prproj`,
  date_add: '2025-01-16T10:02:11.020000Z',
  date_mod: '2025-01-16T10:02:11.020000Z',
  status_asset: 0,
  status_asset_description: 'NEW',
  is_production: false,
  files: { count: 0, bytes: 0 },
  modified_by: 'admin',
  task: { id: task.id, state: 'queued', url: `/api/tasks/${task.id}/` },
}

/** Examples by component name (a `<Name>List` takes `[<Name>]` unless it has its own). */
export const EXAMPLES: Record<string, unknown> = {
  // As served at http://127.0.0.1:8000 (serve's default address); --public-url changes the base.
  ApiRoot: Object.fromEntries(
    [
      'devices',
      'productions',
      'transcodingprofiles',
      'custommetadata',
      'custommetadatasets',
      'contenttypes',
      'audioassets',
      'imageassets',
      'videoassets',
      'importlogs',
      'assetholddurations',
      'projectassets',
      'tasks',
      'history',
    ].map((name) => [name, `http://127.0.0.1:8000/api/${name}/`]),
  ),
  Device: device,
  DeviceCreate: {
    name: 'media',
    path: ROOT,
    display_name: 'Media SAN',
    is_internal: true,
    protocol: 'file',
    transcoding_profile: 1,
  },
  TranscodingProfile: { id: 1, ...profileFields },
  TranscodingProfileCreate: profileFields,
  Production: production,
  ProductionVersion1: production,
  ProductionVersion2: productionVersion2,
  ProductionCreate: {
    name: 'Night Shift',
    storage_root: SHOW,
    codename: 'night-shift',
    company: 'Harbour Lights Pictures',
  },
  CustomMetadataSet: {
    id: 1,
    name: 'Camera report',
    description: "Fields of the camera department's report",
    content_type: 4,
  },
  CustomMetadataSetCreate: {
    name: 'Camera report',
    description: "Fields of the camera department's report",
    content_type: 4,
  },
  CustomMetadata: {
    id: 1,
    key: 'camera.model',
    value: 'Camera model',
    order: 1,
    custom_metadata_set: 1,
    validation_rule: null,
  },
  CustomMetadataCreate: { key: 'camera.model', value: 'Camera model', custom_metadata_set: 1 },
  ContentType: { id: 4, name: 'videoasset' },
  VideoAsset: video,
  AudioAsset: audio,
  ImageAsset: image,
  VideoAssetDetail: detail(
    video,
    `${SHOW}proxies/video/A012C003_250114_R2KD.mp4`,
    {
      annotation_markers: [],
      duration: 4512,
      fps: '25/1',
      width: 3840,
      height: 2160,
      format: 'mov,mp4,m4a,3gp,3g2,mj2',
      display_aspect_ratio: '16:9',
      offset_string: '21:40:05:00',
      offset_frames: 1950125,
      timecode_source: 'file',
      video_codec: 'prores',
      video_profile: 'HQ',
      bit_depth: 10,
      pix_fmt: 'yuv422p10le',
      field_order: 'progressive',
      sample_aspect_ratio: '1:1',
      rotation: 0,
      variable_frame_rate: false,
      audio_streams: [
        { index: 1, codec: 'pcm_s24le', channels: 2, channel_layout: 'stereo', sample_rate: 48000, bit_depth: 24 },
      ],
    },
    { Location: ['Harbour', 'Night'] },
    'video',
  ),
  AudioAssetDetail: detail(
    audio,
    `${SHOW}proxies/audio/interview_01.mp3`,
    {
      name: 'interview_01.wav',
      filename: SOUND,
      nb_Streams: 1,
      formate_name: 'wav',
      format_long_name: 'WAV / WAVE (Waveform Audio)',
      start_time: '36000.000000',
      duration: '1834.250000',
      time_code: '10:00:00:00',
      timecode_source: 'file',
      audio_streams: [
        { index: 0, codec: 'pcm_s24le', channels: 1, channel_layout: null, sample_rate: 48000, bit_depth: 24 },
      ],
      // A broadcast WAV's bext and iXML (docs/media.md, Broadcast WAV): searched with the asset.
      bext: {
        description: 'sSCENE=14 sTAKE=2 sTAPE=NS0115',
        originator: 'Sound Devices 888',
        originator_reference: 'USSDVA3F9C1A7E5B2D',
        origination_date: '2025-01-15',
        origination_time: '10:00:00',
        time_reference: 1_728_000_000,
      },
      ixml: { project: 'Night Shift', scene: '14', take: '2', tape: 'NS0115', note: 'harbour master, lav and boom' },
    },
    { People: ['Harbour master'] },
    'audio',
  ),
  ImageAssetDetail: detail(image, `${SHOW}proxies/stills/poster_v3.jpg`, { width: 4961, height: 7016 }, {}, 'image'),
  VideoAssetCreate: {
    name: video.name,
    path_file: CLIP,
    production_name: 'Night Shift',
    description: video.description,
    date_crt: '2025-01-14 21:40:05+01:00',
    meta_field_store: video.meta_field_store,
  },
  AudioAssetCreate: {
    name: audio.name,
    path_file: SOUND,
    production_name: 'Night Shift',
    description: audio.description,
  },
  ImageAssetCreate: { name: image.name, path_file: STILL, production: 1, description: image.description },
  ProjectAsset: project,
  ProjectAssetDetail: { ...project, modified_by: 'ana' },
  ProjectAssetCreate: projectCreate,
  // Updates (PATCH and PUT, extensions of the medialoopster API): what a client changes.
  DeviceUpdate: { display_name: 'Media SAN (main)', is_internal: true },
  ProductionUpdate: { company: 'Harbour Lights Pictures Ltd', proxy_url: 'https://proxies.example/night-shift/' },
  TranscodingProfileUpdate: { width: 1920, height: 1080, progressive: true },
  CustomMetadataUpdate: { value: 'Camera body', validation_rule: '^[A-Z0-9 -]+$' },
  CustomMetadataSetUpdate: { description: "Fields of the camera department's daily report" },
  AssetHoldDurationUpdate: { duration: 60 },
  VideoAssetUpdate: { status_approval: 1, date_del: '2031-01-01', meta_field_store: { 'camera.model': 'ALEXA 35' } },
  AudioAssetUpdate: { description: 'Harbour master, interview 1 (clean)', keywords: { People: ['Harbour master'] } },
  ImageAssetUpdate: { name: 'poster_v4', status_approval: 1 },
  ProjectAssetUpdate: { name_editor: 'Ana Lima', status_approval: 1, meta_field_store: {} },
  SearchHit: searchHit,
  SearchHits: [
    searchHit,
    {
      type: 'projectasset',
      id: project.id,
      name: project.name,
      production: 1,
      path: project.bundle_root,
      is_production: true,
      score: 6.02,
    },
  ],
  HistoryEntry: historyEntry,
  HistoryList: [
    historyEntry,
    {
      ...historyEntry,
      id: 41,
      date: '2025-01-15T10:12:03.500000Z',
      action: 'create',
      via: 'import',
      changes: { name: { old: null, new: 'A012C003_250114_R2KD' } },
    },
  ],
  DeleteAccepted: { task: { id: 2, state: 'queued', url: '/api/tasks/2/' } },
  LinkResult: {
    newly_linked_assets: [
      { asset_id: 1, type: 'video' },
      { asset_id: 2, type: 'audio' },
      { asset_id: 3, type: 'image' },
    ],
    already_linked_assets: [],
    invalid_assets: [],
  },
  UnlinkResult: { unlinked_assets: [{ asset_id: 2, type: 'audio' }], invalid_assets: [] },
  ImportLog: {
    id: 1,
    asset_type: 'videoasset',
    asset_path: CLIP,
    status: 'import_completed',
    error: '',
    warning: {},
    payload: JSON.stringify({
      type: 'video',
      production: 'Night Shift',
      asset: { asset_meta: { name: video.name, path_file: CLIP } },
    }),
    asset_config: { move_asset: false, rewrap_proxy: false },
    asset_import_id: 1,
  },
  Task: task,
  AssetHoldDuration: { id: 1, asset_type: 'videoasset', context_type: 'device', context: 'media', duration: 90 },
  AssetHoldDurationCreate: { asset_type: 'videoasset', context_type: 'device', context: 'media', duration: 90 },
  // A marker on the clip (25 fps, its first frame 21:40:05:00): 2480 ms in is its frame 62.
  Marker: marker,
  MarkerCreate: { start: marker.start_timecode, note: marker.note, color: marker.color },
  MarkerUpdate: { end: '21:40:08:00', note: 'Boom dips into frame until the pan', color: 'yellow' },
}

export type NamedExample = { summary: string; value: unknown }

/**
 * Models whose one operation does two things, by component name: one named example each
 * (OpenAPI `examples`, which Swagger UI offers in a list) instead of a single `example`.
 */
export const NAMED_EXAMPLES: Record<string, Record<string, NamedExample>> = {
  Production: {
    version1: { summary: 'API version 1 (the default): the devices as records', value: production },
    version2: {
      summary:
        'API version 2 (Accept: application/json; version=2, or serve --default-api-version 2): the devices by id',
      value: productionVersion2,
    },
  },
  ProjectAssetCreate: {
    create: { summary: 'Create a project asset', value: projectCreate },
    copy: { summary: 'Copy project asset 1 (copy_of)', value: copyCreate },
  },
  ProjectAssetCreated: {
    create: { summary: 'A create: the project as it is read', value: created },
    copy: { summary: 'A copy: the new project and the task copying its files', value: copied },
  },
}

/** The Location of project create, copy and delete: the new project, or the task to follow. */
export const LOCATION_EXAMPLES = {
  create: `/api/projectassets/${project.id}/`,
  copy: copied.task.url,
  delete: (EXAMPLES.DeleteAccepted as { task: { url: string } }).task.url,
}

/** Bodies and answers not described by a named model, by "METHOD /path" of the operation. */
export const INLINE_EXAMPLES: { operation: RegExp; request?: unknown; responses?: Record<string, unknown> }[] = [
  { operation: /^GET \/api\/health$/, responses: { 200: { status: 'ok', version: VERSION } } },
  {
    operation: /^POST \/api\/project(assets)?\/\{id\}\/add(asset)?$/,
    request: {
      asset_list: [
        { asset_id: 1, type: 'video' },
        { asset_id: 2, type: 'audio' },
        { asset_id: 3, type: 'image' },
      ],
      silent_mode: false,
    },
  },
  {
    operation: /^POST \/api\/project(assets)?\/\{id\}\/unlink(asset)?$/,
    request: { asset_list: [{ asset_id: 2, type: 'audio' }], silent_mode: false },
  },
]

/**
 * Query parameters' examples, by "METHOD /path" of the operation: the media lists' technical
 * facets and orders, and the search's words and facets (docs/api.md, Media assets and Search), as
 * the example catalogue would be asked for its clip A012C003 (ProRes UHD at 25 fps, 180.48 s from 21:40:05:00).
 */
const FACET_EXAMPLES = {
  codec: 'prores',
  width: '3840',
  height: '2160',
  resolution: '3840x2160',
  fps: '25',
  duration_min: '60',
  duration_max: '300.5',
  timecode_from: '21:00:00:00',
  timecode_to: '21:59:59:24',
  audio_channels: '2',
}
export const QUERY_EXAMPLES: { operation: RegExp; parameters: Record<string, string> }[] = [
  { operation: /^GET \/api\/(audio|image|video)assets$/, parameters: { ...FACET_EXAMPLES, ordering: '-date_add' } },
  { operation: /^GET \/api\/search$/, parameters: { ...FACET_EXAMPLES, q: 'C003', type: 'videoasset' } },
]

/** The order in which the create examples make the catalogue above (each needs the ones before). */
export const CREATE_ORDER = [
  ['/api/transcodingprofiles/', 'TranscodingProfileCreate'],
  ['/api/devices/', 'DeviceCreate'],
  ['/api/productions/', 'ProductionCreate'],
  ['/api/custommetadatasets/', 'CustomMetadataSetCreate'],
  ['/api/custommetadata/', 'CustomMetadataCreate'],
  ['/api/videoassets/', 'VideoAssetCreate'],
  ['/api/audioassets/', 'AudioAssetCreate'],
  ['/api/imageassets/', 'ImageAssetCreate'],
  ['/api/projectassets/', 'ProjectAssetCreate'],
  ['/api/assetholddurations/', 'AssetHoldDurationCreate'],
] as const

/** The files the media examples name, for a server that should accept them as they are. */
export const EXAMPLE_ROOT = ROOT
export const EXAMPLE_FILES = [CLIP, SOUND, STILL]

/** The user the 403 examples refuse (a user with no permissions and no production access). */
export const EXAMPLE_USER = 'ana'

/**
 * What the operation is, as far as its error examples differ: `permission` is the codename it
 * needs (else it needs write access to the production), `resource` the model whose record a
 * 404 does not find.
 */
export type ErrorContext = {
  method: string
  path: string
  firstRequired?: string
  paged: boolean
  jsonOnly?: boolean
  permission?: string
  resource?: string
}

/**
 * An error envelope example for one status of one operation, made by errors.ts's own entry(),
 * so that its title follows the same rule as a real answer's.
 */
export function errorExample(status: number, op: ErrorContext): { errors: unknown[] } {
  const one = (code: string, detail: string, where: { pointer?: string; parameter?: string } = {}) => ({
    errors: [entry(status, code, detail, where)],
  })
  switch (status) {
    case 400:
      if (op.firstRequired) return one('required', REQUIRED_DETAIL, { pointer: `/${op.firstRequired}` })
      if (op.paged) return one('invalid', wholeNumberDetail('limit'), { parameter: 'limit' })
      return one('invalid_host', 'The request needs a Host header naming this server.')
    case 401:
      return one('not_authenticated', NO_CREDENTIALS)
    case 403:
      return one(
        'permission_denied',
        op.permission ? permissionNeeded(EXAMPLE_USER, op.permission) : writeAccessNeeded(EXAMPLE_USER, production.id),
      )
    case 404: {
      const detail = op.resource ? noSuchRecord(op.resource) : 'Not found.'
      // does_not_exist is the project delete's own code (docs/api.md, Project assets); every other DELETE says not_found.
      return op.method === 'DELETE' && isProjectPath(op.path) ? one('does_not_exist', detail) : one('not_found', detail)
    }
    case 405:
      return one('method_not_allowed', 'Method "PUT" not allowed.')
    case 406:
      return one('not_acceptable', UNSUPPORTED_VERSION)
    case 409:
      return op.method === 'DELETE'
        ? one('conflict', 'The project asset is being copied (task 2); delete it when the copy has ended.')
        : one('conflict', 'The source project asset is being deleted.')
    case 413:
      return one('too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`)
    case 415:
      return op.jsonOnly
        ? one('unsupported_media_type', 'addasset and unlinkasset take a JSON body (Content-Type: application/json).')
        : one(
            'unsupported_media_type',
            'Unsupported media type "text/plain" in request; use application/json or form data.',
          )
    case 421:
      return one(
        'misdirected_request',
        'This server listens on loopback only and answers to the names of this machine, not to "evil.example"; serve --allow-host adds a name.',
      )
    case 431:
      return one('headers_too_large', `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes.`)
    case 501:
      return one('not_implemented', AWPS_NOT_AVAILABLE)
    default:
      return one('server_error', 'Internal error; request id 3f9c1a7e5b2d4c80. The server log has the details.')
  }
}

/** The {detail} bodies of link and unlink (docs/api.md, section Errors), by status. */
export const DETAIL_EXAMPLES: Record<string, unknown> = {
  400: { detail: 'asset_list is required.' },
  422: { detail: 'asset_list[1]: unsupported type "text"; allowed types: audio, image, video' },
}
