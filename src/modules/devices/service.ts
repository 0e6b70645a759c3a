import { asc, eq } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { devices, transcodingProfiles } from '../../db/schema.ts'
import { field, invalid, notFound } from '../../http/errors.ts'
import { cleanDir, reservedProblem } from '../../storage/paths.ts'
import { isoTimestamp } from '../../util/time.ts'
import { projectHolding } from '../projectassets/bundles.ts'
import type { DeviceCreate } from './model.ts'

export function createDevices(db: Db, hooks: { created?: (device: typeof devices.$inferSelect) => void } = {}) {
  // Read by every import and import task (path lookups): prepared once.
  const everyDevice = db.select().from(devices).orderBy(asc(devices.id)).prepare()
  return {
    get(id: number) {
      const row = db.select().from(devices).where(eq(devices.id, id)).get()
      if (!row) throw notFound('No device with this id.')
      return row
    },

    /** Every device, for path lookups (a handful of rows). */
    all() {
      return everyDevice.all()
    },

    create(body: typeof DeviceCreate.static) {
      const path = field('/path', () => cleanDir(body.path))
      const reserved = reservedProblem(path)
      if (reserved) throw invalid('/path', reserved)
      const holder = projectHolding(db, path)
      if (holder !== undefined) throw invalid('/path', `The path lies inside the folder of project asset ${holder}; deleting that project would remove the device.`)
      if (body.transcoding_profile != null) {
        const exists = db.select({ id: transcodingProfiles.id }).from(transcodingProfiles)
          .where(eq(transcodingProfiles.id, body.transcoding_profile)).get()
        if (!exists) throw invalid('/transcoding_profile', 'No transcoding profile with this id.')
      }
      for (const [i, id] of (body.passthrough_profiles ?? []).entries()) {
        const exists = db.select({ id: transcodingProfiles.id }).from(transcodingProfiles).where(eq(transcodingProfiles.id, id)).get()
        if (!exists) throw invalid(`/passthrough_profiles/${i}`, 'No transcoding profile with this id.')
      }
      const device = db
        .insert(devices)
        .values({ ...body, path, display_name: body.display_name || body.name, date_add: isoTimestamp() })
        .returning()
        .get()
      hooks.created?.(device) // the watcher watches it from now on
      return device
    },
  }
}

export type Devices = ReturnType<typeof createDevices>
