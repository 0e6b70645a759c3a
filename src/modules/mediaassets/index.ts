import { Type } from '@sinclair/typebox'
import { and, eq } from 'drizzle-orm'
import { t } from 'elysia'
import type { Db } from '../../db/client.ts'
import { type MediaKind, devices, mediaAssets } from '../../db/schema.ts'
import { invalid, unique } from '../../http/errors.ts'
import { optionalEq, resourceRoutes } from '../../http/resource.ts'
import { PathError, cleanPath, deviceFor } from '../../storage/paths.ts'
import { parseDate } from '../../util/dates.ts'
import { isoTimestamp } from '../../util/time.ts'
import type { HoldDurations } from '../assetholddurations/index.ts'
import type { ModuleContext } from '../context.ts'
import { CONTENT_TYPE_IDS, type CustomMetadata } from '../custommetadata/service.ts'
import { productionForWrite } from '../productions/lookup.ts'
import { canReadAsset, mediaReadableBy } from '../users/access.ts'
import type { Principal } from '../users/service.ts'

const fields = {
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
export const MediaAssetCreate = t.Object({
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
})

type Row = typeof mediaAssets.$inferSelect
export const mediaToApi = (row: Row) => ({
  id: row.id, name: row.name, description: row.description, production: row.production, status_asset: row.status_asset,
  path_file: row.path_file, device: row.device, is_archive: row.is_archive, is_production: row.is_production,
  meta_field_store: row.meta_field_store,
})

const TITLES: Record<MediaKind, string> = { audio: 'AudioAsset', image: 'ImageAsset', video: 'VideoAsset' }

export function createMediaAssets(db: Db, holds: HoldDurations, metadata: CustomMetadata) {
  const keywordsOf = db.$client.query<{ category: string; keyword: string }, [number]>(
    `SELECT c.name AS category, k.name AS keyword FROM media_asset_keywords mk JOIN keywords k ON k.id = mk.keyword_id
     JOIN keyword_categories c ON c.id = k.category_id WHERE mk.asset_id = ? ORDER BY c.name, k.name`,
  )
  const projectsOf = db.$client.query<{ project_id: number }, [number]>(
    'SELECT project_id FROM project_asset_links WHERE asset_id = ? ORDER BY project_id',
  )
  return {
    detail(row: Row) {
      const keywords: Record<string, string[]> = {}
      for (const { category, keyword } of keywordsOf.all(row.id)) (keywords[category] ??= []).push(keyword)
      return {
        ...mediaToApi(row),
        date_crt: row.date_crt, date_add: row.date_add, date_mod: row.date_mod, date_del: row.date_del,
        keywords, technical: row.technical, path_proxy: row.path_proxy,
        projects: projectsOf.all(row.id).map((p) => p.project_id),
      }
    },

    create(kind: MediaKind, body: typeof MediaAssetCreate.static, user: Principal) {
      const production = productionForWrite(db, user, { id: body.production, name: body.production_name }, { id: 'production', name: 'production_name' })
      let path: string
      try {
        path = cleanPath(body.path_file)
      } catch (error) {
        throw invalid('/path_file', (error as PathError).message)
      }
      if (path.endsWith('/')) throw invalid('/path_file', 'path_file names a file, not a folder.')
      const device = deviceFor(db.select().from(devices).all(), path)
      if (!device) throw invalid('/path_file', 'The path does not lie on any device.')
      if (path + '/' === device.path) throw invalid('/path_file', 'path_file names a file, not a folder.')
      const dates: Record<'date_crt' | 'date_del', string | undefined> = { date_crt: undefined, date_del: undefined }
      for (const key of ['date_crt', 'date_del'] as const) {
        if (body[key] === undefined) continue
        dates[key] = parseDate(body[key]!)
        if (!dates[key]) throw invalid(`/${key}`, 'Not a date: use YYYY[-MM[-DD]] or YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ].')
      }
      const store = body.meta_field_store ?? {}
      metadata.validateStore(CONTENT_TYPE_IDS[`${kind}asset`], store, '/meta_field_store')
      if (db.select({ id: mediaAssets.id }).from(mediaAssets).where(and(eq(mediaAssets.kind, kind), eq(mediaAssets.path_file, path))).get())
        throw unique('/path_file', `A ${kind} asset with this path_file already exists.`)
      const now = isoTimestamp()
      return db.insert(mediaAssets).values({
        kind, name: body.name, description: body.description ?? '', production: production.id, device: device.id, path_file: path,
        is_archive: body.is_archive ?? false, is_production: body.is_production ?? true, meta_field_store: store,
        date_crt: dates.date_crt ?? null, date_add: now, date_mod: now,
        date_del: dates.date_del ?? holds.dateDel(`${kind}asset`, device.name, production.name, now),
      }).returning().get()
    },
  }
}

export type MediaAssets = ReturnType<typeof createMediaAssets>

export const mediaAssetsModule = (ctx: ModuleContext, service: MediaAssets, kind: MediaKind) =>
  resourceRoutes(ctx, {
    prefix: `/${kind}assets`,
    name: TITLES[kind],
    table: mediaAssets,
    models: { [TITLES[kind]]: MediaAsset, [`${TITLES[kind]}Create`]: MediaAssetCreate, [`${TITLES[kind]}Detail`]: MediaAssetDetail },
    toApi: mediaToApi,
    listColumns: Object.keys(fields),
    filters: t.Object({ path_file: t.Optional(t.String({ description: 'Only the asset with this path_file' })) }),
    where: (query, user) => [eq(mediaAssets.kind, kind), optionalEq(mediaAssets.path_file, query.path_file), mediaReadableBy(user)],
    canRead: (row, user) => row.kind === kind && canReadAsset(ctx.db, user, row),
    detail: (row) => service.detail(row),
    create: {
      body: MediaAssetCreate,
      status: 201,
      run: (body, user) => service.create(kind, body, user),
      oneOf: ['production', 'production_name'],
      description: `Registers an existing ${kind} file without the import pipeline. Needs write access to the production.`,
    },
  })
