import { and, asc, eq, ne } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { devices, transcodingProfiles } from '../../db/schema.ts'
import { overlay, refuseReadOnly } from '../../http/edit.ts'
import { AppError, field, invalid, notFound, unique } from '../../http/errors.ts'
import { cleanDir, reservedProblem, samePath } from '../../storage/paths.ts'
import { isoTimestamp } from '../../util/time.ts'
import type { HoldDurations } from '../assetholddurations/service.ts'
import { actorOf, hiddenPassword, historyOf } from '../history/service.ts'
import { projectHolding } from '../projectassets/bundles.ts'
import { requirePerm } from '../users/access.ts'
import type { Principal } from '../users/service.ts'
import type { DeviceCreate, DeviceRow, DeviceUpdate } from './model.ts'

/** The fields history records (the password as whether one is set: hiddenPassword). */
const FIELDS = [
  'name', 'display_name', 'path', 'is_internal', 'is_archive', 'autoshot_detection', 'allow_direct_writing', 'recieve_xml_meta', 'protocol',
  'anonymous', 'server', 'username', 'password', 'transcoding_profile', 'archive_connector', 'passthrough_profiles', 'write_permission_groups',
] as const
const WRITABLE = FIELDS
/** A device as history shows it: never its password. */
const shown = (row: DeviceRow) => ({ ...row, password: hiddenPassword(row.password) })

export type DeviceHooks = {
  created?: (device: DeviceRow) => void
  /** Its path or protocol changed: watched anew. */
  changed?: (device: DeviceRow) => void
  removed?: (id: number) => void
}

export function createDevices(db: Db, holds: HoldDurations, hooks: DeviceHooks = {}) {
  // Read by every import and import task (path lookups): prepared once.
  const everyDevice = db.select().from(devices).orderBy(asc(devices.id)).prepare()
  const history = historyOf(db)
  const count = (sql: string, ...params: (string | number)[]) => db.$client.query<{ n: number }, (string | number)[]>(sql).get(...params)!.n

  /** What lies on the device or refers to it, in words ("12 video assets lie on this device"); empty: nothing. */
  function references(device: DeviceRow): string[] {
    const reasons: string[] = []
    const kinds = db.$client.query<{ kind: string; n: number }, [number]>('SELECT kind, count(*) AS n FROM media_assets WHERE device = ? GROUP BY kind ORDER BY kind').all(device.id)
    for (const { kind, n } of kinds) reasons.push(`${n} ${kind} asset${n === 1 ? '' : 's'} lie${n === 1 ? 's' : ''} on this device`)
    const projects = count('SELECT count(*) AS n FROM project_assets WHERE device = ?', device.id)
    if (projects) reasons.push(`${projects} project asset${projects === 1 ? '' : 's'} lie${projects === 1 ? 's' : ''} on this device`)
    const users = db.$client.query<{ name: string; how: string }, [number, number, number, number, string, string, string, string]>(
      `SELECT name, CASE WHEN upload_device = ?1 THEN 'upload_device' WHEN audioasset_device = ?2 THEN 'audioasset_device'
         WHEN imageasset_device = ?3 THEN 'imageasset_device' WHEN videoasset_device = ?4 THEN 'videoasset_device'
         WHEN substr(storage_root, 1, length(?5)) = ?6 THEN 'storage_root' ELSE 'proxy_root' END AS how
       FROM productions WHERE ?1 IN (upload_device, audioasset_device, imageasset_device, videoasset_device)
         OR substr(storage_root, 1, length(?5)) = ?6 OR substr(proxy_root, 1, length(?7)) = ?8 ORDER BY id`,
    ).all(device.id, device.id, device.id, device.id, device.path, device.path, device.path, device.path)
    for (const p of users) reasons.push(`production "${p.name}" uses this device (${p.how})`)
    const rules = holds.naming('device', device.name)
    if (rules) reasons.push(`${rules} asset hold duration${rules === 1 ? ' names' : 's name'} this device`)
    return reasons
  }

  function checkProfiles(body: { transcoding_profile?: number | null; passthrough_profiles?: number[] }) {
    if (body.transcoding_profile != null) {
      const exists = db.select({ id: transcodingProfiles.id }).from(transcodingProfiles)
        .where(eq(transcodingProfiles.id, body.transcoding_profile)).get()
      if (!exists) throw invalid('/transcoding_profile', 'No transcoding profile with this id.')
    }
    for (const [i, id] of (body.passthrough_profiles ?? []).entries()) {
      const exists = db.select({ id: transcodingProfiles.id }).from(transcodingProfiles).where(eq(transcodingProfiles.id, id)).get()
      if (!exists) throw invalid(`/passthrough_profiles/${i}`, 'No transcoding profile with this id.')
    }
  }

  /** A device path: absolute, cleaned, not a reserved folder nor inside a project folder. */
  function devicePath(value: string, id?: number) {
    const path = field('/path', () => cleanDir(value))
    const reserved = reservedProblem(path)
    if (reserved) throw invalid('/path', reserved)
    // The same path written alike is the table's unique constraint; written in another case, it
    // is the same folder where the system ignores case (macOS, Windows), which no constraint sees.
    const twin = everyDevice.all().find((d) => d.id !== id && d.path !== path && samePath(d.path, path))
    if (twin) throw unique('/path', `Device ${twin.id} has this path (${twin.path}): names on this system compare without regard to case.`)
    const holder = projectHolding(db, path)
    if (holder !== undefined) throw invalid('/path', `The path lies inside the folder of project asset ${holder}; deleting that project would remove the device.`)
    return path
  }

  return {
    get(id: number) {
      const row = db.select().from(devices).where(eq(devices.id, id)).get()
      if (!row) throw notFound('No device with this id.')
      return row
    },

    /** What refers to the device, in words (a delete and a path change are refused while any). */
    references,

    /** Every device, for path lookups (a handful of rows). */
    all() {
      return everyDevice.all()
    },

    create(body: typeof DeviceCreate.static, user: Principal) {
      const path = devicePath(body.path)
      checkProfiles(body)
      const device = db.transaction(() => {
        const device = db
          .insert(devices)
          .values({ ...body, path, display_name: body.display_name || body.name, date_add: isoTimestamp() })
          .returning()
          .get()
        history.created(actorOf(user), { resource: 'device', id: device.id }, shown(device), FIELDS)
        return device
      })
      hooks.created?.(device) // the watcher watches it from now on
      return device
    },

    /**
     * PATCH/PUT. A new path is refused (409) while anything lies on the device (its assets,
     * projects and productions name paths under the old one); a new name carries the hold
     * durations naming the device along. The password "********" (as answered) keeps the stored one.
     */
    update(id: number, body: typeof DeviceUpdate.static, user: Principal) {
      const row = this.get(id)
      requirePerm(user, 'browser.change_device')
      refuseReadOnly(body, row, { id: 'id is set by the service.' })
      const next = overlay(row, body, WRITABLE)
      if (body.password === '********') next.password = row.password
      if (body.path !== undefined) next.path = devicePath(body.path, id)
      checkProfiles({ transcoding_profile: body.transcoding_profile, passthrough_profiles: body.passthrough_profiles })
      if (next.name !== row.name && db.select({ id: devices.id }).from(devices).where(and(eq(devices.name, next.name), ne(devices.id, id))).get())
        throw unique('/name', 'A device with this name already exists.')
      if (next.path !== row.path) {
        if (db.select({ id: devices.id }).from(devices).where(and(eq(devices.path, next.path), ne(devices.id, id))).get())
          throw unique('/path', 'A device with this path already exists.')
        const using = references(row).filter((r) => !r.includes('hold duration'))
        if (using.length) throw new AppError(409, 'conflict', `The path of a device changes only while nothing lies on it: ${using.join('; ')}.`)
      }
      const after = db.transaction(() => {
        const after = db.update(devices).set(next).where(eq(devices.id, id)).returning().get()!
        const by = actorOf(user)
        // One password for another shows as "********" both times: said all the same, never the passwords.
        const newPassword = row.password !== null && after.password !== null && row.password !== after.password
        history.updated(by, { resource: 'device', id }, shown(row), shown(after), FIELDS, newPassword ? { password: { old: '********', new: '********' } } : {})
        if (after.name !== row.name) holds.renameContext('device', row.name, after.name, by)
        return after
      })
      if (after.path !== row.path || after.protocol !== row.protocol) hooks.changed?.(after)
      return after
    },

    /** 409 while anything lies on the device or refers to it, naming what. */
    remove(id: number, user: Principal) {
      const row = this.get(id)
      requirePerm(user, 'browser.delete_device')
      const using = references(row)
      if (using.length) throw new AppError(409, 'conflict', `The device is in use: ${using.join('; ')}.`)
      db.transaction(() => {
        db.delete(devices).where(eq(devices.id, id)).run()
        history.deleted(actorOf(user), { resource: 'device', id }, shown(row), FIELDS)
      })
      hooks.removed?.(id)
    },
  }
}

export type Devices = ReturnType<typeof createDevices>
