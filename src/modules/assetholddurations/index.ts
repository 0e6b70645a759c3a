import { Type } from '@sinclair/typebox'
import { and, eq } from 'drizzle-orm'
import { t } from 'elysia'
import type { Db } from '../../db/client.ts'
import { ASSET_TYPES, CONTEXT_TYPES, assetHoldDurations, devices, productions } from '../../db/schema.ts'
import { invalid, unique } from '../../http/errors.ts'
import { oneOf } from '../../http/models.ts'
import { optionalEq, resourceRoutes } from '../../http/resource.ts'
import { addDays } from '../../util/time.ts'
import type { ModuleContext } from '../context.ts'

export const AssetHoldDuration = t.Object({
  id: Type.Integer(),
  asset_type: oneOf(ASSET_TYPES),
  context_type: oneOf(CONTEXT_TYPES),
  context: t.String({ description: 'Name of the device or production' }),
  duration: Type.Integer({ description: 'Days' }),
})

export const AssetHoldDurationCreate = t.Object({
  asset_type: oneOf(ASSET_TYPES),
  context_type: oneOf(CONTEXT_TYPES),
  context: t.String({ minLength: 1, maxLength: 255, description: 'Name of an existing device or production' }),
  duration: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Days, a whole number >= 0' }),
})

type AssetType = (typeof ASSET_TYPES)[number]

export function createHoldDurations(db: Db) {
  const rule = db.$client.query<{ duration: number }, [string, string, string]>(
    'SELECT duration FROM asset_hold_durations WHERE asset_type = ? AND context_type = ? AND context = ?',
  )
  return {
    /** date_del for a new asset: date_add + the device rule's days, else the production rule's, else none. */
    dateDel(assetType: AssetType, deviceName: string, productionName: string, dateAdd: string): string | null {
      const days = rule.get(assetType, 'device', deviceName)?.duration ?? rule.get(assetType, 'production', productionName)?.duration
      return days === undefined ? null : addDays(dateAdd, days)
    },

    create(body: typeof AssetHoldDurationCreate.static) {
      const table = body.context_type === 'device' ? devices : productions
      if (!db.select({ id: table.id }).from(table).where(eq(table.name, body.context)).get())
        throw invalid('/context', `No ${body.context_type} named "${body.context}".`)
      const taken = db.select({ id: assetHoldDurations.id }).from(assetHoldDurations).where(and(
        eq(assetHoldDurations.asset_type, body.asset_type),
        eq(assetHoldDurations.context_type, body.context_type),
        eq(assetHoldDurations.context, body.context),
      )).get()
      if (taken) throw unique('/context', 'A hold duration for this asset type and context already exists.')
      return db.insert(assetHoldDurations).values(body).returning().get()
    },
  }
}

export type HoldDurations = ReturnType<typeof createHoldDurations>

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
