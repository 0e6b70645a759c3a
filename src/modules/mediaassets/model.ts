// The media asset shapes of docs/api.md, Media assets and docs/api.md, Resources (TypeBox; types derive from them).
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import type { MediaKind, mediaAssets } from '../../db/tables.ts'
import { type SQL, eq, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import { type ListColumn, idFilter } from '../../http/lists.ts'
import { eitherOf, oneOf } from '../../http/models.ts'
import { flagEq, flagFilter, idEq } from '../../http/resource.ts'
import {
  FacetParameters,
  type FacetQuery,
  type MediaOrdering,
  OrderingParameter,
  facetConditions,
  facetFilterOf,
} from './facets.ts'

export const fields = {
  id: Type.Integer(),
  name: t.String(),
  description: t.String(),
  production: Type.Integer({ description: 'Production id' }),
  status_asset: Type.Integer({ description: '0 NEW, 6 ASSET_DONE, -1 ERROR' }),
  path_file: t.String(),
  device: Type.Integer({ description: 'Device id' }),
  is_archive: t.Boolean(),
  is_production: t.Boolean({ description: 'True while the essence is on online storage' }),
  meta_field_store: t.Record(t.String(), t.Unknown(), { description: 'Custom metadata, key to value' }),
  status_approval: Type.Integer({ description: "1 approved, 0 pending (the import's approval; PATCH sets it)" }),
}
export const MediaAsset = t.Object(fields)
/**
 * A list's record as read (resource.ts listRecord): the columns of `fields`, in its order;
 * status_approval is the column `approval`.
 */
export const listColumns = Object.keys(fields).map(
  (name): ListColumn => (name === 'status_approval' ? ['status_approval', 'approval'] : name),
)
/** The list's columns with the two its picture fields are made of (pictures.ts completeListRow). */
export const listColumnsWithPictures: readonly ListColumn[] = [...listColumns, 'path_proxy', 'pictures']
/**
 * The pictures made with the proxy (docs/api.md, Pictures; mediaassets/pictures.ts), as the
 * medialoopster client names them: in a list's rows (made of columns) and in a record's answer
 * (made with a look at the disk).
 */
const pictureSchema = {
  poster_url: t.String({
    description:
      'The poster frame (video), thumbnail (image) or waveform picture (audio): GET .../poster/ as an absolute URL with its version (?v=); empty when there is none',
  }),
  thumbnail_url: t.String({ description: 'The same picture as poster_url (the medialoopster client reads both)' }),
  path_thumbnail: t.String({ description: "That picture's file, beside path_proxy; empty when there is none" }),
  is_proxy_available: t.Boolean({
    description:
      "Whether there is a proxy to play (GET .../proxy/): a record's answer looks at the file; a list's row says a proxy is recorded",
  }),
  strip_url: t.Optional(
    t.String({
      description:
        "Video assets only: the thumbnail strip's index, GET /api/videoassets/{id}/strip/index/ as an absolute URL with its version; empty when there is none",
    }),
  ),
}
/** A list's record: the fields, then, with ?pictures=true, the picture fields (pictures.ts completeListRow). */
export const MediaAssetListed = t.Object({
  ...fields,
  ...Object.fromEntries(
    Object.entries(pictureSchema).map(([name, schema]) => [
      name,
      t.Optional({ ...schema, description: `With ?pictures=true. ${schema.description}` }),
    ]),
  ),
})
export const MediaAssetDetail = t.Object({
  ...fields,
  date_crt: t.Nullable(t.String()),
  date_add: t.String(),
  date_mod: t.String(),
  date_del: t.Nullable(
    t.String({ description: 'Due-for-deletion date (hold durations); nothing is deleted automatically' }),
  ),
  keywords: t.Record(t.String(), t.Array(t.String()), { description: 'category: [keyword]' }),
  technical: t.Record(t.String(), t.Unknown()),
  path_proxy: t.String(),
  projects: t.Array(Type.Integer(), { description: 'Ids of linked project assets' }),
  modified_by: t.Nullable(
    t.String({
      description:
        'Who made the last change (a user name, or "system" for the service); null: none since history is kept',
    }),
  ),
  archive_details: t.Record(t.String(), t.Unknown(), {
    description:
      'Where the archive keeps the asset (archive_handle, archive_type, original_path, and the optional tape_barcode, tape_label, tape_name, vendor_archive_index); {} when it was never archived',
  }),
  ...pictureSchema,
})

const ReadOnly = (why: string) => t.Optional(t.Unknown({ description: `Read-only: ${why}` }))
const DateText = t.String({ maxLength: 64, description: 'YYYY[-MM[-DD]] or YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ]' })
/**
 * PATCH/PUT (an extension of the medialoopster API): the fields a user sets. Those the service sets
 * are listed so that a request changing one is told why (400 invalid at it), not silently ignored.
 */
export const MediaAssetUpdate = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 255 })),
  description: t.Optional(t.String({ maxLength: 100_000 })),
  status_approval: t.Optional(Type.Integer({ minimum: 0, maximum: 1, description: '1 approved, 0 pending' })),
  date_crt: t.Optional(t.Nullable(DateText)),
  date_add: t.Optional(DateText),
  date_del: t.Optional(t.Nullable({ ...DateText, description: 'Due-for-deletion date; null: none' })),
  is_archive: t.Optional(t.Boolean()),
  meta_field_store: t.Optional(
    t.Record(t.String(), t.Unknown(), {
      description: 'PATCH merges: keys given are set, a null value removes the key. PUT replaces the store.',
    }),
  ),
  keywords: t.Optional(
    t.Record(t.String(), t.Unknown(), {
      description:
        '{category: [keyword]}. PATCH replaces the categories given (null or [] removes one); PUT replaces all. At most 1,000 categories and keywords in all (each category counts one, each keyword one); names of 1 to 255 characters.',
    }),
  ),
  id: ReadOnly('set by the service'),
  production: ReadOnly('not edited'),
  status_asset: ReadOnly('set by the import task'),
  path_file: ReadOnly('a new path is a move (the watcher, or an import with move_asset)'),
  device: ReadOnly('follows path_file'),
  is_production: ReadOnly('set by the service (the watcher)'),
  date_mod: ReadOnly('set on every change'),
  technical: ReadOnly('set by the import'),
  path_proxy: ReadOnly('set by the import task'),
  projects: ReadOnly('link and unlink through the project'),
  modified_by: ReadOnly('set by the service'),
  archive_details: ReadOnly('set by archiving (POST /api/archiveactivities/) and restoring'),
  poster_url: ReadOnly('made with the proxy'),
  thumbnail_url: ReadOnly('made with the proxy'),
  path_thumbnail: ReadOnly('made with the proxy'),
  is_proxy_available: ReadOnly('whether the proxy file is there'),
  strip_url: ReadOnly('made with the proxy'),
})
export const MediaAssetCreate = eitherOf(
  t.Object({
    name: t.String({ minLength: 1, maxLength: 255 }),
    path_file: t.String({ minLength: 1, maxLength: 4096, description: 'Absolute, must lie on a device' }),
    production: t.Optional(Type.Integer({ minimum: 1, description: 'Production id; wins over production_name' })),
    production_name: t.Optional(t.String({ minLength: 1, maxLength: 255 })),
    description: t.Optional(t.String({ maxLength: 100_000 })),
    is_archive: t.Optional(t.Boolean()),
    is_production: t.Optional(t.Boolean()),
    meta_field_store: t.Optional(t.Record(t.String(), t.Unknown())),
    date_crt: t.Optional(
      t.String({ maxLength: 64, description: 'YYYY[-MM[-DD]] or YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ]' }),
    ),
    date_del: t.Optional(t.String({ maxLength: 64, description: 'As date_crt; default from the hold durations' })),
  }),
  ['production', 'production_name'],
)

/**
 * The filters medialoopster clients send on every asset list (the three media kinds and project
 * assets), beside each list's own; all of them combine. An id and two yes/no values: a bad one is
 * a 400 at its parameter, never ignored (the client would take the whole list for the filtered one).
 */
export const AssetListFilters = {
  production: idFilter('Only assets of this production (by id)'),
  is_archive: flagFilter('Only archived (true, 1) or not archived (false, 0) assets'),
  is_production: flagFilter('Only assets online (true, 1) or not online (false, 0)'),
}
export type AssetListQuery = { production?: string; is_archive?: string; is_production?: string }

/**
 * The media lists' own filters beyond medialoopster's (the web page's catalogue: a device's
 * offline assets, the assets pending approval; technical facets, facets.ts) and their order
 * (?ordering=). Not on the project list.
 */
export const MediaListFilters = {
  device: idFilter('Only assets whose file lies on this device (by id)'),
  status_approval: t.Optional(oneOf(['0', '1'], { description: 'Only approved (1) or pending (0) assets' })),
  ...FacetParameters,
  ...OrderingParameter,
}
export type MediaListQuery = { device?: string; status_approval?: string; ordering?: MediaOrdering } & FacetQuery

/** The conditions of MediaListFilters on media_assets (the order apart: facets.ts mediaOrderBy). */
export const mediaListWhere = (table: { device: SQLiteColumn; approval: SQLiteColumn }, query: MediaListQuery) => [
  idEq(table.device, query.device),
  query.status_approval === undefined ? undefined : eq(table.approval, Number(query.status_approval)),
]

/**
 * The conditions of the facet filters on a kind's list: each on its expression as the facet's
 * index has it (its JSON paths written in the text, the values bound). A facet the kind does not
 * have (an audio asset's width) matches nothing. A bad value is a 400 at its parameter.
 */
export function mediaFacetWhere(kind: MediaKind, query: FacetQuery): SQL[] {
  const filter = facetFilterOf(query)
  if (!filter) return []
  const conditions = facetConditions(kind, filter)
  if (conditions === null) return [sql`0`]
  return conditions.map((c) => {
    const pieces = c.sql.split('?')
    return sql.join(pieces.flatMap((text, i) => (i === 0 ? [sql.raw(text)] : [sql`${c.params[i - 1]}`, sql.raw(text)])))
  })
}

/** The conditions of AssetListFilters on a table with the three columns. */
export const assetListWhere = (
  table: { production: SQLiteColumn; is_archive: SQLiteColumn; is_production: SQLiteColumn },
  query: AssetListQuery,
) => [
  idEq(table.production, query.production),
  flagEq(table.is_archive, query.is_archive),
  flagEq(table.is_production, query.is_production),
]

export type MediaRow = typeof mediaAssets.$inferSelect
export const mediaToApi = (row: MediaRow) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  production: row.production,
  status_asset: row.status_asset,
  path_file: row.path_file,
  device: row.device,
  is_archive: row.is_archive,
  is_production: row.is_production,
  meta_field_store: row.meta_field_store,
  status_approval: row.approval,
})

export const TITLES: Record<MediaKind, string> = { audio: 'AudioAsset', image: 'ImageAsset', video: 'VideoAsset' }

/** The codenames of updates and deletes, by kind (spelled out: `user --help` lists what the code checks). */
export const EDIT_CODENAMES: Record<MediaKind, { change: string; delete: string }> = {
  audio: { change: 'browser.change_audioasset', delete: 'browser.delete_audioasset' },
  image: { change: 'browser.change_imageasset', delete: 'browser.delete_imageasset' },
  video: { change: 'browser.change_videoasset', delete: 'browser.delete_videoasset' },
}
