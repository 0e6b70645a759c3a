// The whole catalogue. Property names equal column names and, where a column is shown by the
// API, the API's field name, so rows from drizzle and rows from a raw streamed statement have
// the same shape and one serializer per resource serves both.
import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

/** ISO 8601 UTC text with microseconds, e.g. 2026-11-21T09:30:00.123456Z (see util/time.ts). */
const timestamp = (name: string) => text(name)
const bool = (name: string) => integer(name, { mode: 'boolean' })
const json = <T>(name: string) => text(name, { mode: 'json' }).$type<T>()
/**
 * Every integer id is AUTOINCREMENT: a deleted record's id is never handed out again (plain
 * INTEGER PRIMARY KEY reuses the highest one), so no client cache, task target or log line can
 * take a new record for the old one (migration 0007).
 */
const id = () => integer('id').primaryKey({ autoIncrement: true })

// ---------------------------------------------------------------- users, keys, access

export const users = sqliteTable('users', {
  id: id(),
  username: text('username').notNull().unique(),
  is_superuser: bool('is_superuser').notNull().default(false),
  date_add: timestamp('date_add').notNull(),
  /**
   * Argon2id hash (PHC string, parameters included) of the password HTTP Basic accepts beside
   * the user's keys; null: no password, Basic takes only a key. Set by `user passwd`.
   */
  password_hash: text('password_hash'),
})

export const userPermissions = sqliteTable(
  'user_permissions',
  {
    user_id: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codename: text('codename').notNull(),
  },
  (t) => [primaryKey({ columns: [t.user_id, t.codename] })],
)

/**
 * Groups of users, as the command line manages them (`reelhouse group add`, `user add --group`):
 * a role ("editor") is a group carrying codenames, so a user given the group holds them all. A
 * device names, by group name, who may copy projects onto it (devices.write_permission_groups).
 */
export const groups = sqliteTable('groups', {
  id: id(),
  name: text('name').notNull().unique(),
  date_add: timestamp('date_add').notNull(),
})

export const groupPermissions = sqliteTable(
  'group_permissions',
  {
    group_id: integer('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    codename: text('codename').notNull(),
  },
  (t) => [primaryKey({ columns: [t.group_id, t.codename] })],
)

export const userGroups = sqliteTable(
  'user_groups',
  {
    user_id: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    group_id: integer('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.user_id, t.group_id] }), index('user_groups_group').on(t.group_id)],
)

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: id(),
    user_id: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** SHA-256 of the key, hex. The key itself is never stored. */
    key_hash: text('key_hash').notNull(),
    date_add: timestamp('date_add').notNull(),
    /**
     * The key's first 8 characters, so that `token list` can show which key is which to the one
     * who holds it. 32 of its 160 bits: the other 128 keep it as unguessable as ever. Null for
     * keys made before it was kept.
     */
    key_prefix: text('key_prefix'),
  },
  (t) => [uniqueIndex('api_keys_key_hash').on(t.key_hash), index('api_keys_user').on(t.user_id)],
)

export const productionAccess = sqliteTable(
  'production_access',
  {
    user_id: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    production_id: integer('production_id')
      .notNull()
      .references(() => productions.id, { onDelete: 'cascade' }),
    level: text('level', { enum: ['read', 'write'] }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.user_id, t.production_id] })],
)

/**
 * Sign-ins of the web page (POST /api/session/): the browser holds a random 256-bit id in an
 * HttpOnly cookie; only its SHA-256 is kept here. A session ends when it has not been used for
 * 12 hours (last_seen, refreshed at most once a minute), on sign-out, and when its user's
 * password changes or a key of theirs is revoked (modules/users/sessions.ts).
 */
export const sessions = sqliteTable(
  'sessions',
  {
    id: id(),
    user_id: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** SHA-256 of the session id, hex. The id itself is only in the browser's cookie. */
    id_hash: text('id_hash').notNull(),
    date_add: timestamp('date_add').notNull(),
    last_seen: timestamp('last_seen').notNull(),
  },
  (t) => [uniqueIndex('sessions_id_hash').on(t.id_hash), index('sessions_user').on(t.user_id)],
)

// ---------------------------------------------------------------- storage and productions

export const transcodingProfiles = sqliteTable('transcoding_profiles', {
  id: id(),
  name: text('name').notNull().unique(),
  codec_name: text('codec_name').notNull().default(''),
  codec_profile: text('codec_profile').notNull().default(''),
  video_container: text('video_container').notNull().default(''),
  frame_rate: text('frame_rate').notNull().default(''),
  video_data_rate: text('video_data_rate').notNull().default(''),
  width: integer('width').notNull().default(0),
  height: integer('height').notNull().default(0),
  display_aspect_ratio: text('display_aspect_ratio').notNull().default(''),
  pix_fmt: text('pix_fmt').notNull().default(''),
  progressive: bool('progressive').notNull().default(false),
  passthrough: bool('passthrough').notNull().default(false),
  default_profile: bool('default_profile').notNull().default(false),
  interlaced: text('interlaced').notNull().default('tff'),
  ar_conversion: text('ar_conversion').notNull().default('box'),
  should_have_audio: bool('should_have_audio').notNull().default(true),
  audio_codec_name: text('audio_codec_name').notNull().default(''),
  audio_container: text('audio_container').notNull().default(''),
  audio_codec_profile: text('audio_codec_profile').notNull().default(''),
  audio_data_rate: text('audio_data_rate').notNull().default(''),
  tracks: integer('tracks').notNull().default(0),
  channels_per_track: integer('channels_per_track').notNull().default(0),
  bits_per_sample: integer('bits_per_sample').notNull().default(0),
  sample_rate: integer('sample_rate').notNull().default(0),
})

/**
 * How a device is reached: `file` and `copy` (a local folder too: medialoopster's documented
 * samples name it) are watched by events, the network ones by polling (docs/watcher.md). A text
 * column with no CHECK: a value added here needs no migration.
 */
export const PROTOCOLS = ['file', 'copy', 'smb', 'nfs', 'afp'] as const

export const devices = sqliteTable('devices', {
  id: id(),
  name: text('name').notNull().unique(),
  display_name: text('display_name').notNull(),
  /** Absolute, normalized, ends with a slash. */
  path: text('path').notNull().unique(),
  is_internal: bool('is_internal').notNull().default(false),
  is_archive: bool('is_archive').notNull().default(false),
  autoshot_detection: bool('autoshot_detection').notNull().default(false),
  allow_direct_writing: bool('allow_direct_writing').notNull().default(true),
  recieve_xml_meta: bool('recieve_xml_meta').notNull().default(false),
  protocol: text('protocol', { enum: PROTOCOLS }).notNull().default('file'),
  anonymous: bool('anonymous').notNull().default(false),
  server: text('server'),
  username: text('username'),
  /** Kept to mount the share; never sent back (responses show ********). */
  password: text('password'),
  transcoding_profile: integer('transcoding_profile').references(() => transcodingProfiles.id),
  archive_connector: text('archive_connector'),
  passthrough_profiles: json<number[]>('passthrough_profiles').notNull().default(sql`'[]'`),
  write_permission_groups: json<string[]>('write_permission_groups').notNull().default(sql`'[]'`),
  date_add: timestamp('date_add').notNull(),
})

export const productions = sqliteTable('productions', {
  id: id(),
  name: text('name').notNull().unique(),
  codename: text('codename').notNull().unique(),
  company: text('company').notNull().default(''),
  storage_root: text('storage_root').notNull(),
  proxy_root: text('proxy_root').notNull(),
  proxy_url: text('proxy_url').notNull().default(''),
  upload_device: integer('upload_device')
    .notNull()
    .references(() => devices.id),
  audioasset_device: integer('audioasset_device')
    .notNull()
    .references(() => devices.id),
  imageasset_device: integer('imageasset_device')
    .notNull()
    .references(() => devices.id),
  videoasset_device: integer('videoasset_device')
    .notNull()
    .references(() => devices.id),
  date_add: timestamp('date_add').notNull(),
  /** The production's drop folder (ends with /), on its upload_device; null: the whole upload_device is its watch folder (migration 0014). */
  upload_root: text('upload_root'),
  /** The watcher moves the files it imports from the watch folder into the production's area, as move_asset does (migration 0015). */
  move_uploads: bool('move_uploads').notNull().default(false),
  /**
   * The production's own ignore patterns (globs, matched without case against a file's path relative to
   * its device's root): files they name are never imported, by the watcher or by an import (migration 0026).
   */
  ignore_patterns: json<string[]>('ignore_patterns').notNull().default(sql`'[]'`),
})

// ---------------------------------------------------------------- custom metadata

/** Fixed rows (1 projectasset, 2 audioasset, 3 imageasset, 4 videoasset), seeded by migration. */
export const contentTypes = sqliteTable('content_types', {
  id: id(),
  name: text('name').notNull().unique(),
})

export const customMetadataSets = sqliteTable('custom_metadata_sets', {
  id: id(),
  name: text('name').notNull(),
  description: text('description').notNull(),
  content_type: integer('content_type')
    .notNull()
    .references(() => contentTypes.id),
})

export const customMetadata = sqliteTable(
  'custom_metadata',
  {
    id: id(),
    key: text('key').notNull().unique(),
    value: text('value').notNull(),
    order: integer('order').notNull(),
    custom_metadata_set: integer('custom_metadata_set')
      .notNull()
      .references(() => customMetadataSets.id),
    validation_rule: text('validation_rule'),
  },
  (t) => [index('custom_metadata_set').on(t.custom_metadata_set)],
)

// ---------------------------------------------------------------- assets

export const MEDIA_KINDS = ['audio', 'image', 'video'] as const
/** The versions of an asset's pictures (mediaassets/pictures.ts versionOf), as media_assets.pictures keeps them. */
export type PictureVersions = { poster?: string; strip?: string }
export type MediaKind = (typeof MEDIA_KINDS)[number]

/** Audio, image and video assets share one table (and one id space), told apart by kind. */
export const mediaAssets = sqliteTable(
  'media_assets',
  {
    id: id(),
    kind: text('kind', { enum: MEDIA_KINDS }).notNull(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    production: integer('production')
      .notNull()
      .references(() => productions.id),
    device: integer('device')
      .notNull()
      .references(() => devices.id),
    status_asset: integer('status_asset').notNull().default(6),
    status_asset_description: text('status_asset_description').notNull().default('ASSET_DONE'),
    path_file: text('path_file').notNull(),
    path_proxy: text('path_proxy').notNull().default(''),
    is_archive: bool('is_archive').notNull().default(false),
    is_production: bool('is_production').notNull().default(true),
    approval: integer('approval').notNull().default(0),
    meta_field_store: json<Record<string, unknown>>('meta_field_store').notNull().default(sql`'{}'`),
    /** Probed or imported technical details. */
    technical: json<Record<string, unknown>>('technical').notNull().default(sql`'{}'`),
    archive_details: json<Record<string, unknown>>('archive_details').notNull().default(sql`'{}'`),
    date_crt: timestamp('date_crt'),
    date_add: timestamp('date_add').notNull(),
    date_mod: timestamp('date_mod').notNull(),
    date_del: timestamp('date_del'),
    /** Identity on disk, for the watcher to tell a move from a delete. */
    file_dev: integer('file_dev'),
    file_ino: integer('file_ino'),
    /**
     * The file's birth time in ms (statx), or its modification time where the file system keeps
     * no birth time (see storage/paths.ts stampOf). File systems hand a freed inode to the next
     * new file at once, so (dev, ino) alone would take an unrelated new file for a moved one.
     */
    file_stamp: real('file_stamp'),
    /**
     * The content fingerprint (storage/fingerprint.ts) and the size and mtime of the file it was
     * read from: a file with no known identity whose size and fingerprint match an asset whose
     * file vanished is that asset moved (across file systems, a restore). Read again only when
     * the size, mtime or identity changed.
     */
    file_size: integer('file_size'),
    file_mtime: real('file_mtime'),
    file_hash: text('file_hash'),
    /**
     * The versions of the pictures the proxy run made (mediaassets/pictures.ts versionOf), by
     * picture (`poster`, and a video's `strip`); {} for none: a list's rows name their pictures'
     * URLs from it without a look at the disk.
     */
    pictures: json<PictureVersions>('pictures').notNull().default(sql`'{}'`),
  },
  (t) => [
    // The lists' indexes (migration 0010, http/lists.ts): a page's ids are found by skipping
    // index entries, never table rows, for every filter a list takes (device and approval since
    // 0019, the web page's catalogue). One per kind, partial and
    // led by id, so that the unfiltered list walks it without comparing a key per entry (three
    // times faster than an index on (kind, id)); each insert still writes one of the three.
    ...MEDIA_KINDS.map((kind) =>
      index(`media_assets_${kind}_list`)
        .on(t.id, t.production, t.is_archive, t.is_production, t.device, t.approval)
        .where(sql.raw(`kind = '${kind}'`)),
    ),
    // path_file first: led by kind, SQLite would take it for the lists' "kind = 'video'" and sort.
    // Unique among files in production only: an asset whose file vanished keeps the path it was
    // last seen at, while the file now at that path may be another asset's (a rotation of names).
    // Not unique, so SQLite's planner no longer knows a path means one row: the flags the lists
    // filter on are in it, so that a path filter with a production or flag still walks this index
    // (and reads no table row to check them) rather than the production's.
    index('media_assets_path_kind').on(
      t.path_file,
      t.kind,
      t.production,
      t.is_archive,
      t.is_production,
      t.device,
      t.approval,
    ),
    uniqueIndex('media_assets_online_path').on(t.path_file, t.kind).where(sql`is_production = 1`),
    // Relink by content: the assets with a file of this size and fingerprint, offline ones apart
    // (an image sequence has thousands of files of one size: found without reading their rows).
    index('media_assets_size').on(t.file_size, t.is_production, t.is_archive, t.file_hash),
    // Our own output is never input: a file that is an asset's proxy is never imported.
    index('media_assets_proxy').on(t.path_proxy).where(sql`path_proxy != ''`),
    // A production's assets in id order with the flags beside them: its pages skip here.
    index('media_assets_production').on(
      t.production,
      t.kind,
      t.id,
      t.is_archive,
      t.is_production,
      t.device,
      t.approval,
    ),
    // A device's assets (its status counts them; the list filters by it) in id order, flags beside.
    index('media_assets_device').on(t.device, t.kind, t.id, t.production, t.is_archive, t.is_production, t.approval),
    // A file found by the watcher under a new name is the same asset when its identity matches.
    index('media_assets_identity').on(t.file_dev, t.file_ino),
    // The media lists' orders by name (case folded) and date_add (migration 0024), per kind: then id
    // and the columns the lists filter on, so that an ordered page walks an index in its order.
    // Beside these, 0024 makes the indexes of the technical facets (db/facets.ts facetIndexes), on
    // expressions over `technical` that drizzle-kit cannot describe (it splits them at commas).
    ...MEDIA_KINDS.flatMap((kind) => [
      index(`media_assets_${kind}_name`)
        .on(sql`${t.name} COLLATE NOCASE`, t.id, t.production, t.is_archive, t.is_production, t.device, t.approval)
        .where(sql.raw(`kind = '${kind}'`)),
      index(`media_assets_${kind}_date_add`)
        .on(t.date_add, t.id, t.production, t.is_archive, t.is_production, t.device, t.approval)
        .where(sql.raw(`kind = '${kind}'`)),
    ]),
  ],
)

/**
 * Files whose asset a user deleted (DELETE /api/{kind}assets/{id}/): the watcher does not import
 * them again from a watch folder, whether found at that path or by their identity under another
 * name. An explicit import of the path forgets the decision. Owned by mediaassets/service.ts.
 */
export const dismissedFiles = sqliteTable(
  'dismissed_files',
  {
    id: id(),
    kind: text('kind', { enum: MEDIA_KINDS }).notNull(),
    path_file: text('path_file').notNull(),
    file_dev: integer('file_dev'),
    file_ino: integer('file_ino'),
    file_stamp: real('file_stamp'),
    /** The deleted asset's id (ids are never reused). */
    asset_id: integer('asset_id').notNull(),
    date: timestamp('date').notNull(),
  },
  (t) => [index('dismissed_files_path').on(t.path_file), index('dismissed_files_identity').on(t.file_dev, t.file_ino)],
)

/** A media asset made visible to another production (copy with share_linked_assets). */
export const mediaAssetShares = sqliteTable(
  'media_asset_shares',
  {
    asset_id: integer('asset_id')
      .notNull()
      .references(() => mediaAssets.id, { onDelete: 'cascade' }),
    production_id: integer('production_id')
      .notNull()
      .references(() => productions.id, { onDelete: 'cascade' }),
  },
  (t) => [
    primaryKey({ columns: [t.asset_id, t.production_id] }),
    index('media_asset_shares_production').on(t.production_id),
  ],
)

export const projectAssets = sqliteTable(
  'project_assets',
  {
    id: id(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    date_crt: timestamp('date_crt'),
    date_add: timestamp('date_add').notNull(),
    date_mod: timestamp('date_mod').notNull(),
    date_del: timestamp('date_del'),
    meta_field_store: json<Record<string, unknown>>('meta_field_store').notNull().default(sql`'{}'`),
    status_asset: integer('status_asset').notNull().default(6),
    status_asset_description: text('status_asset_description').notNull().default('ASSET_DONE'),
    status_editing: integer('status_editing').notNull().default(0),
    status_approval: integer('status_approval').notNull().default(0),
    path_file: text('path_file').notNull().default(''),
    /** Absolute, normalized, ends with a slash. */
    bundle_root: text('bundle_root').notNull(),
    type: text('type').notNull().default('generic'),
    is_archive: bool('is_archive').notNull().default(false),
    is_production: bool('is_production').notNull().default(true),
    files_count: integer('files_count').notNull().default(0),
    files_bytes: integer('files_bytes').notNull().default(0),
    name_editor: text('name_editor').notNull().default(''),
    name_studio: text('name_studio').notNull().default(''),
    locked_by: text('locked_by'),
    production: integer('production')
      .notNull()
      .references(() => productions.id),
    device: integer('device')
      .notNull()
      .references(() => devices.id),
    /** The project this one was copied from, if any. */
    copy_of: integer('copy_of'),
    /** Set by DELETE: the bundle folder is being removed; the row goes when it is gone. */
    deleting: bool('deleting').notNull().default(false),
  },
  (t) => [
    uniqueIndex('project_assets_bundle_root').on(t.bundle_root),
    // The list's indexes (http/lists.ts): pages skip index entries, with or without a production.
    index('project_assets_production').on(t.production, t.id, t.is_archive, t.is_production),
    index('project_assets_list').on(t.id, t.production, t.is_archive, t.is_production),
  ],
)

export const projectAssetLinks = sqliteTable(
  'project_asset_links',
  {
    project_id: integer('project_id')
      .notNull()
      .references(() => projectAssets.id, { onDelete: 'cascade' }),
    asset_id: integer('asset_id')
      .notNull()
      .references(() => mediaAssets.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.project_id, t.asset_id] }), index('project_asset_links_asset').on(t.asset_id)],
)

// ---------------------------------------------------------------- shots, sequences, markers

/**
 * A shot of a video asset: a run of frames between two cuts, detected (ffmpeg's scene scores) or
 * made by a user. Times are milliseconds from the first frame of the file, as medialoopster's Shot
 * carries them; `start_frame` and `end_frame` (end exclusive) keep the detection frame-exact.
 */
export const shots = sqliteTable(
  'shots',
  {
    id: id(),
    asset_id: integer('asset_id')
      .notNull()
      .references(() => mediaAssets.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    start_ms: integer('start_ms').notNull(),
    end_ms: integer('end_ms').notNull(),
    start_frame: integer('start_frame'),
    end_frame: integer('end_frame'),
    /** The scene score of the cut that starts it (0..1); null: the first shot, or a user's. */
    score: real('score'),
    origin: text('origin', { enum: ['detected', 'user'] })
      .notNull()
      .default('detected'),
    keywords: json<string[]>('keywords').notNull().default(sql`'[]'`),
    /** The shot's thumbnail under the production's proxy_root; '' while none is made. */
    path_thumbnail: text('path_thumbnail').notNull().default(''),
    is_compositing: bool('is_compositing').notNull().default(false),
    licensor: text('licensor'),
    license: text('license'),
    location_city: text('location_city'),
    copyright: text('copyright'),
    ancestor: text('ancestor'),
    date_add: timestamp('date_add').notNull(),
    date_mod: timestamp('date_mod').notNull(),
  },
  (t) => [index('shots_asset').on(t.asset_id, t.start_ms)],
)

/** Shots grouped: detected (a run between black or silent gaps) or made by a user. */
export const sequences = sqliteTable(
  'sequences',
  {
    id: id(),
    asset_id: integer('asset_id')
      .notNull()
      .references(() => mediaAssets.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    start_ms: integer('start_ms').notNull(),
    end_ms: integer('end_ms').notNull(),
    origin: text('origin', { enum: ['detected', 'user'] })
      .notNull()
      .default('detected'),
    keywords: json<string[]>('keywords').notNull().default(sql`'[]'`),
    date_add: timestamp('date_add').notNull(),
    date_mod: timestamp('date_mod').notNull(),
  },
  (t) => [index('sequences_asset').on(t.asset_id, t.start_ms)],
)

export const sequenceShots = sqliteTable(
  'sequence_shots',
  {
    sequence_id: integer('sequence_id')
      .notNull()
      .references(() => sequences.id, { onDelete: 'cascade' }),
    shot_id: integer('shot_id')
      .notNull()
      .references(() => shots.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
  },
  (t) => [primaryKey({ columns: [t.sequence_id, t.shot_id] }), index('sequence_shots_shot').on(t.shot_id)],
)

/**
 * A note at a point or over a range of an asset, by a user (the player's markers; exported as
 * CSV and as an EDL's locators). Times in milliseconds from the first frame of the file; a point
 * has end_ms null.
 */
export const markers = sqliteTable(
  'markers',
  {
    id: id(),
    asset_id: integer('asset_id')
      .notNull()
      .references(() => mediaAssets.id, { onDelete: 'cascade' }),
    start_ms: integer('start_ms').notNull(),
    end_ms: integer('end_ms'),
    note: text('note').notNull(),
    /** A colour name as editors' locators have them (red, green, blue, ...). */
    color: text('color').notNull().default('red'),
    user_id: integer('user_id').references(() => users.id, { onDelete: 'set null' }),
    /** The user's name when made, kept after the user is gone. */
    username: text('username').notNull(),
    date_add: timestamp('date_add').notNull(),
    date_mod: timestamp('date_mod').notNull(),
  },
  (t) => [index('markers_asset').on(t.asset_id, t.start_ms)],
)

// ---------------------------------------------------------------- keywords

export const keywordCategories = sqliteTable(
  'keyword_categories',
  {
    id: id(),
    kind: text('kind', { enum: MEDIA_KINDS }).notNull(),
    name: text('name').notNull(),
  },
  (t) => [uniqueIndex('keyword_categories_kind_name').on(t.kind, t.name)],
)

export const keywords = sqliteTable(
  'keywords',
  {
    id: id(),
    category_id: integer('category_id')
      .notNull()
      .references(() => keywordCategories.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
  },
  (t) => [uniqueIndex('keywords_category_name').on(t.category_id, t.name)],
)

export const mediaAssetKeywords = sqliteTable(
  'media_asset_keywords',
  {
    asset_id: integer('asset_id')
      .notNull()
      .references(() => mediaAssets.id, { onDelete: 'cascade' }),
    keyword_id: integer('keyword_id')
      .notNull()
      .references(() => keywords.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.asset_id, t.keyword_id] })],
)

/**
 * Media assets whose search document the keyword-link triggers leave alone (migration 0021): the
 * keyword writer (modules/mediaassets/keywords.ts) lists an asset here while it writes the
 * asset's links, then removes it and rebuilds the document once, all in one transaction. Empty
 * between transactions.
 */
export const searchDeferred = sqliteTable('search_deferred', {
  asset_id: integer('asset_id').primaryKey(),
})

// ---------------------------------------------------------------- logs, rules, tasks

export const importLogs = sqliteTable(
  'import_logs',
  {
    id: id(),
    asset_type: text('asset_type').notNull(),
    asset_path: text('asset_path').notNull(),
    status: text('status').notNull(),
    error: text('error').notNull().default(''),
    warning: json<Record<string, string>>('warning').notNull().default(sql`'{}'`),
    payload: text('payload').notNull(),
    asset_config: json<Record<string, unknown>>('asset_config').notNull().default(sql`'{}'`),
    asset_import_id: integer('asset_import_id'),
    /** For visibility: logs are readable where their production is. */
    production: integer('production').references(() => productions.id),
    date_add: timestamp('date_add').notNull(),
    date_mod: timestamp('date_mod').notNull(),
  },
  (t) => [
    // The list's indexes (http/lists.ts): pages skip index entries, visibility checked there too.
    index('import_logs_asset_path').on(t.asset_path, t.id, t.production, t.asset_import_id),
    // A production's logs (also a reader's list failed first, ?ordering=-failed).
    index('import_logs_production').on(t.production, sql`${t.error} <> ''`, t.id),
    index('import_logs_list').on(t.id, t.production),
    // ?ordering=-failed (failed first, then newest): the expression as the list's ORDER BY spells it.
    index('import_logs_failed').on(sql`${t.error} <> ''`, t.id, t.production),
    index('import_logs_asset_path_failed').on(
      t.asset_path,
      sql`${t.error} <> ''`,
      t.id,
      t.production,
      t.asset_import_id,
    ),
    // ?asset_import_id= (an asset's page lists its imports, wherever the file lay then), in both
    // orders; with asset_path too, the path's indexes (which hold it) serve.
    index('import_logs_asset').on(t.asset_import_id, t.id, t.production),
    index('import_logs_asset_failed').on(t.asset_import_id, sql`${t.error} <> ''`, t.id, t.production),
  ],
)

export const ASSET_TYPES = ['audioasset', 'imageasset', 'videoasset', 'projectasset'] as const

/** The fixed content types (docs/api.md, Resources; seeded by migration 0001), by asset type. */
export const CONTENT_TYPE_IDS = {
  projectasset: 1,
  audioasset: 2,
  imageasset: 3,
  videoasset: 4,
} as const satisfies Record<(typeof ASSET_TYPES)[number], number>
export const CONTENT_TYPE_NAMES = [
  'projectasset',
  'audioasset',
  'imageasset',
  'videoasset',
] as const satisfies readonly (keyof typeof CONTENT_TYPE_IDS)[]
export const CONTEXT_TYPES = ['device', 'production'] as const

export const assetHoldDurations = sqliteTable(
  'asset_hold_durations',
  {
    id: id(),
    asset_type: text('asset_type', { enum: ASSET_TYPES }).notNull(),
    context_type: text('context_type', { enum: CONTEXT_TYPES }).notNull(),
    context: text('context').notNull(),
    /** Days. */
    duration: integer('duration').notNull(),
  },
  (t) => [uniqueIndex('asset_hold_durations_rule').on(t.asset_type, t.context_type, t.context)],
)

export const TASK_KINDS = [
  'archive',
  'copy',
  'delete',
  'import',
  'proxy',
  'proxyname',
  'restore',
  'scan',
  'shots',
  'verify',
] as const
export const TASK_STATES = ['queued', 'running', 'done', 'failed'] as const
/** What a task works on, the keys of its target: a project (copy, delete), an imported asset, a scanned device. */
export const TASK_TARGETS = ['projectasset', 'audioasset', 'imageasset', 'videoasset', 'device'] as const
export type TaskTarget = { [K in (typeof TASK_TARGETS)[number]]?: number }

/** The persisted work queue: a task is a row first and work second. */
export const tasks = sqliteTable(
  'tasks',
  {
    id: id(),
    kind: text('kind', { enum: TASK_KINDS }).notNull(),
    state: text('state', { enum: TASK_STATES }).notNull().default('queued'),
    /** e.g. {"projectasset": 7} */
    target: json<TaskTarget>('target').notNull(),
    /** The production of the target, for visibility (tasks are readable as their target is). */
    production: integer('production'),
    /** What the runner needs to (re)start the work from a safe point. */
    params: json<Record<string, unknown>>('params').notNull().default(sql`'{}'`),
    bytes_done: integer('bytes_done').notNull().default(0),
    bytes_total: integer('bytes_total').notNull().default(0),
    files_done: integer('files_done').notNull().default(0),
    files_total: integer('files_total').notNull().default(0),
    error: text('error').notNull().default(''),
    attempts: integer('attempts').notNull().default(0),
    date_add: timestamp('date_add').notNull(),
    date_start: timestamp('date_start'),
    date_end: timestamp('date_end'),
    /**
     * Work that must not be queued twice (one scan per device, one import per path): a second
     * enqueue with the key of a queued task merges into it. Null for work that never merges.
     */
    key: text('key'),
    /** What the work found, for the tasks API (a scan: files seen, offline, online, moved, imported). */
    result: json<Record<string, unknown>>('result').notNull().default(sql`'{}'`),
    /** The step the work is in, or ended in (an import: move, probe, proxy); '' for work of one step. */
    step: text('step').notNull().default(''),
    /** How far the step is, 0 to 100, when the work can tell (a proxy: ffmpeg's position in the clip). */
    percent: real('percent'),
  },
  (t) => [
    // The queue's order and the list's indexes (http/lists.ts): pages skip index entries for every
    // filter, the target's json_extract included (a target is a few bytes of JSON).
    // The dates too, for the list's orders by date (?ordering=-date_end, ...).
    index('tasks_state').on(t.state, t.id, t.kind, t.production, t.target, t.date_end, t.date_start, t.date_add),
    index('tasks_list').on(t.id, t.state, t.kind, t.production, t.target, t.date_end, t.date_start, t.date_add),
    uniqueIndex('tasks_key_queued').on(t.key).where(sql`state = 'queued'`),
  ],
)

// ---------------------------------------------------------------- history

export const HISTORY_ACTIONS = ['create', 'update', 'delete', 'link', 'unlink'] as const
/** Which door a write came through: a request, the command line, an import, the watcher, a task. */
export const HISTORY_VIA = ['api', 'cli', 'import', 'watcher', 'task'] as const

/**
 * Who changed what and when: one row per create, update, delete or link change of a catalogue
 * record, written in the transaction of the change itself (modules/history/service.ts, its only
 * writer). No foreign keys: history outlives the records and users it names.
 */
export const history = sqliteTable(
  'history',
  {
    id: id(),
    date: timestamp('date').notNull(),
    /** The user who made the change; null: the service itself (`via` says what moved it). */
    user_id: integer('user_id'),
    /** The user's name when the change was made; null for the service (shown as "system"). */
    username: text('username'),
    via: text('via', { enum: HISTORY_VIA }).notNull(),
    /** A model name: videoasset, projectasset, device, production, user, ... */
    resource: text('resource').notNull(),
    resource_id: integer('resource_id').notNull(),
    action: text('action', { enum: HISTORY_ACTIONS }).notNull(),
    /** {field: {old, new}}; device passwords are never written here. */
    changes: json<Record<string, { old: unknown; new: unknown }>>('changes').notNull().default(sql`'{}'`),
    /** The production the record belonged to, for visibility; null: readable by all (devices, profiles, ...). */
    production: integer('production'),
  },
  (t) => [
    // The list's indexes (http/lists.ts): each holds every column a page's WHERE reads (the
    // filters and the visibility rule), so that deep pages skip index entries, never rows.
    index('history_list').on(t.id, t.production, t.resource, t.resource_id, t.username),
    index('history_resource').on(t.resource, t.resource_id, t.id, t.production, t.username),
    index('history_user').on(t.username, t.id, t.production, t.resource, t.resource_id),
  ],
)
