// The media asset routes (/audioassets/, /imageassets/, /videoassets/): one controller per kind.
import { sql } from 'drizzle-orm'
import { t } from 'elysia'
import { type MediaKind, mediaAssets } from '../../db/schema.ts'
import { literalEq, optionalEq, resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import { canReadAsset, mediaReadableBy } from '../users/access.ts'
import { AssetListFilters, MediaAsset, MediaAssetCreate, MediaAssetDetail, TITLES, assetListWhere, fields, mediaToApi } from './model.ts'
import type { MediaAssets } from './service.ts'

export const mediaAssetsModule = (ctx: ModuleContext, service: MediaAssets, kind: MediaKind) =>
  resourceRoutes(ctx, {
    prefix: `/${kind}assets`,
    name: TITLES[kind],
    table: mediaAssets,
    models: { [TITLES[kind]]: MediaAsset, [`${TITLES[kind]}Create`]: MediaAssetCreate, [`${TITLES[kind]}Detail`]: MediaAssetDetail },
    toApi: mediaToApi,
    listRecord: Object.keys(fields),
    filters: t.Object({ path_file: t.Optional(t.String({ description: 'Only the asset with this path_file' })), ...AssetListFilters }),
    where: (query, user) => {
      const [production, ...flags] = assetListWhere(mediaAssets, query)
      return [
        literalEq(mediaAssets.kind, kind), optionalEq(mediaAssets.path_file, query.path_file),
        // With a path, the path index finds the few assets there; `+production` keeps SQLite from
        // walking the production's index instead (the path index is not unique: offline assets
        // may share a path, so the planner no longer knows a path is one row).
        production && query.path_file !== undefined ? sql`+${mediaAssets.production} = ${Number(query.production)}` : production,
        ...flags, mediaReadableBy(user),
      ]
    },
    byId: service.byIdWithDetails,
    canRead: (row, user) => row.kind === kind && canReadAsset(ctx.db, user, row),
    detail: (row) => service.detail(row),
    create: {
      body: MediaAssetCreate,
      status: 201,
      run: (body, user) => service.create(kind, body, user),
      description: `Registers an existing ${kind} file without the import pipeline. Needs write access to the production.`,
    },
  })
