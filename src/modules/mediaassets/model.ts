// The media asset shapes of api.md 2.7 and service.md 6 (TypeBox; types derive from them).
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import type { MediaKind, mediaAssets } from '../../db/schema.ts'
import { eitherOf } from '../../http/models.ts'

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
}
export const MediaAsset = t.Object(fields)
export const MediaAssetDetail = t.Object({
  ...fields,
  date_crt: t.Nullable(t.String()),
  date_add: t.String(),
  date_mod: t.String(),
  date_del: t.Nullable(t.String({ description: 'Due-for-deletion date (hold durations); nothing is deleted automatically' })),
  keywords: t.Record(t.String(), t.Array(t.String()), { description: 'category: [keyword]' }),
  technical: t.Record(t.String(), t.Unknown()),
  path_proxy: t.String(),
  projects: t.Array(Type.Integer(), { description: 'Ids of linked project assets' }),
})
export const MediaAssetCreate = eitherOf(t.Object({
  name: t.String({ minLength: 1, maxLength: 255 }),
  path_file: t.String({ minLength: 1, maxLength: 4096, description: 'Absolute, must lie on a device' }),
  production: t.Optional(Type.Integer({ minimum: 1, description: 'Production id; wins over production_name' })),
  production_name: t.Optional(t.String({ minLength: 1, maxLength: 255 })),
  description: t.Optional(t.String({ maxLength: 100_000 })),
  is_archive: t.Optional(t.Boolean()),
  is_production: t.Optional(t.Boolean()),
  meta_field_store: t.Optional(t.Record(t.String(), t.Unknown())),
  date_crt: t.Optional(t.String({ maxLength: 64, description: 'YYYY[-MM[-DD]] or YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ]' })),
  date_del: t.Optional(t.String({ maxLength: 64, description: 'As date_crt; default from the hold durations' })),
}), ['production', 'production_name'])

export type MediaRow = typeof mediaAssets.$inferSelect
export const mediaToApi = (row: MediaRow) => ({
  id: row.id, name: row.name, description: row.description, production: row.production, status_asset: row.status_asset,
  path_file: row.path_file, device: row.device, is_archive: row.is_archive, is_production: row.is_production,
  meta_field_store: row.meta_field_store,
})

export const TITLES: Record<MediaKind, string> = { audio: 'AudioAsset', image: 'ImageAsset', video: 'VideoAsset' }
