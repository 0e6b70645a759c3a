// Asset hold durations: the rules, and date_del for new assets (service.md 6).
import { and, eq } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { ASSET_TYPES, assetHoldDurations, devices, productions } from '../../db/schema.ts'
import { invalid, unique } from '../../http/errors.ts'
import { addDays } from '../../util/time.ts'
import type { AssetHoldDurationCreate } from './model.ts'

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
