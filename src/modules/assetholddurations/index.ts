// The asset hold duration routes.
import { Elysia, t } from 'elysia'
import { ASSET_TYPES, CONTEXT_TYPES, assetHoldDurations } from '../../db/tables.ts'
import { oneOf } from '../../http/models.ts'
import { optionalEq, recordReader, resourceRoutes } from '../../http/resource.ts'
import { editRoutes } from '../../http/edit.ts'
import type { ModuleContext } from '../../http/context.ts'
import { AssetHoldDuration, AssetHoldDurationCreate, AssetHoldDurationUpdate } from './model.ts'
import type { HoldDurations } from './service.ts'

export const assetHoldDurationsModule = (ctx: ModuleContext, service: HoldDurations) =>
  new Elysia()
    .use(
      resourceRoutes(ctx, {
        prefix: '/assetholddurations',
        name: 'AssetHoldDuration',
        table: assetHoldDurations,
        models: { AssetHoldDuration, AssetHoldDurationCreate },
        toApi: (row) => row,
        filters: t.Object({
          asset_type: t.Optional(oneOf(ASSET_TYPES)),
          context_type: t.Optional(oneOf(CONTEXT_TYPES)),
        }),
        where: (query) => [
          optionalEq(assetHoldDurations.asset_type, query.asset_type),
          optionalEq(assetHoldDurations.context_type, query.context_type),
        ],
        create: {
          body: AssetHoldDurationCreate,
          status: 201,
          codename: 'browser.add_assetholdduration',
          run: (body, user) => ctx.port.run(service.create(body, user)),
          description:
            'Needs superuser or browser.add_assetholdduration. New assets of the type on that device (else production) get date_del = date_add + duration days. Nothing is deleted automatically.',
        },
      }),
    )
    .use(
      editRoutes(ctx, {
        prefix: '/assetholddurations',
        name: 'AssetHoldDuration',
        answer: 'AssetHoldDuration',
        body: AssetHoldDurationUpdate,
        whole: ['asset_type', 'context_type', 'context', 'duration'],
        codenames: { change: 'browser.change_assetholdduration', delete: 'browser.delete_assetholdduration' },
        update: (id, body, user) => ctx.port.run(service.update(id, body, user)),
        find: recordReader(ctx, { name: 'AssetHoldDuration', table: assetHoldDurations }),
        remove: (id, user) => ctx.port.run(service.remove(id, user)),
        notes: {
          update:
            'Any of asset_type, context_type, context and duration; the rule stays unique (400 unique at /context) and its context must name an existing device or production. Dates already set by the rule stay as they are.',
          delete: 'Nothing refers to a rule: the dates it set stay.',
        },
      }),
    )
