import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { importLogs } from '../../db/schema.ts'
import { optionalEq, resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import { canRead, readableBy } from '../users/access.ts'

export const ImportLog = t.Object({
  id: Type.Integer(),
  asset_type: t.String({ description: 'videoasset, audioasset or imageasset' }),
  asset_path: t.String({ description: 'The path the import request named' }),
  status: t.String(),
  error: t.String(),
  warning: t.Record(t.String(), t.String()),
  payload: t.String({ description: 'The import request, serialized' }),
  asset_config: t.Record(t.String(), t.Unknown()),
  asset_import_id: t.Nullable(Type.Integer()),
})

export const importLogsModule = (ctx: ModuleContext) =>
  resourceRoutes(ctx, {
    prefix: '/importlogs',
    name: 'ImportLog',
    table: importLogs,
    models: { ImportLog },
    toApi: ({ production: _p, date_add: _a, date_mod: _m, ...row }) => row,
    filters: t.Object({ asset_path: t.Optional(t.String({ description: 'The logs of the asset with this path' })) }),
    where: (query, user) => [optionalEq(importLogs.asset_path, query.asset_path), readableBy(user, importLogs.production)],
    canRead: (row, user) => row.production === null ? user.is_superuser : canRead(user, row.production),
  })
