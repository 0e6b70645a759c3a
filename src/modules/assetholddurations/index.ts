// The asset hold duration routes.
import { t } from 'elysia'
import { ASSET_TYPES, CONTEXT_TYPES, assetHoldDurations } from '../../db/schema.ts'
import { oneOf } from '../../http/models.ts'
import { optionalEq, resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import { AssetHoldDuration, AssetHoldDurationCreate } from './model.ts'
import type { HoldDurations } from './service.ts'

export const assetHoldDurationsModule = (ctx: ModuleContext, service: HoldDurations) =>
  resourceRoutes(ctx, {
    prefix: '/assetholddurations',
    name: 'AssetHoldDuration',
    table: assetHoldDurations,
    models: { AssetHoldDuration, AssetHoldDurationCreate },
    toApi: (row) => row,
    filters: t.Object({ asset_type: t.Optional(oneOf(ASSET_TYPES)), context_type: t.Optional(oneOf(CONTEXT_TYPES)) }),
    where: (query) => [optionalEq(assetHoldDurations.asset_type, query.asset_type), optionalEq(assetHoldDurations.context_type, query.context_type)],
    create: {
      body: AssetHoldDurationCreate,
      status: 201,
      codename: 'browser.add_assetholdduration',
      run: (body) => service.create(body),
      description: 'Needs superuser or browser.add_assetholdduration. New assets of the type on that device (else production) get date_del = date_add + duration days. Nothing is deleted automatically.',
    },
  })
