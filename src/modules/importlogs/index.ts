import { Type } from '@sinclair/typebox'
import { sql } from 'drizzle-orm'
import { t } from 'elysia'
import { importLogs } from '../../db/tables.ts'
import { oneOf } from '../../http/models.ts'
import { idFilter } from '../../http/lists.ts'
import { idEq, optionalEq, resourceRoutes } from '../../http/resource.ts'
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

/**
 * The orders the list may be asked in (?ordering=): id order (the default, as every list), newest
 * first, and failed first (a non-empty error), newest first within each. SQL of the table's own
 * columns; `"error" <> ''` is spelled as migration 0018's indexes spell it, so pages are read
 * from them.
 */
const ORDERINGS = { id: '"id"', '-id': '"id" desc', '-failed': `"error" <> '' desc, "id" desc` } as const
const ORDERING_NAMES = Object.keys(ORDERINGS) as [keyof typeof ORDERINGS, ...(keyof typeof ORDERINGS)[]]

export const importLogsModule = (ctx: ModuleContext) =>
  resourceRoutes(ctx, {
    prefix: '/importlogs',
    name: 'ImportLog',
    table: importLogs,
    models: { ImportLog },
    toApi: ({ production: _p, date_add: _a, date_mod: _m, ...row }) => row,
    filters: t.Object({
      asset_path: t.Optional(t.String({ description: 'The logs of the asset with this path' })),
      asset_import_id: idFilter('The logs of the imports of this asset (by id), wherever its file lay then'),
      ordering: t.Optional(
        oneOf(ORDERING_NAMES, {
          description:
            'The order: id (the default, oldest first), -id (newest first), -failed (failed logs first, those with an error; newest first within each)',
        }),
      ),
    }),
    where: (query, user) => [
      optionalEq(importLogs.asset_path, query.asset_path),
      // With a path, `+` keeps SQLite on the path's index (which holds asset_import_id too).
      query.asset_path !== undefined && query.asset_import_id !== undefined
        ? sql`+${importLogs.asset_import_id} = ${Number(query.asset_import_id)}`
        : idEq(importLogs.asset_import_id, query.asset_import_id),
      readableBy(user, importLogs.production),
    ],
    order: (query) => ORDERINGS[query.ordering ?? 'id'],
    listDescription:
      'In id order; ordering=-id for newest first, ordering=-failed for failed logs (an error) first, newest first within each. ' +
      'Filters asset_path and asset_import_id. Without limit the whole list is streamed. X-Total-Count holds the number of matching records.',
    canRead: (row, user) => (row.production === null ? user.is_superuser : canRead(user, row.production)),
  })
