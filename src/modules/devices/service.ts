import { and, asc, eq, ne } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { runSync } from '../../db/port.ts'
import { type MediaKind, devices, transcodingProfiles } from '../../db/schema.ts'
import { overlay, refuseReadOnly } from '../../http/edit.ts'
import { AppError, field, invalid, notFound, unique } from '../../http/errors.ts'
import { below, cleanDir, deviceFor, isInside, reservedProblem, samePath } from '../../storage/paths.ts'
import { folderSpace } from '../../storage/space.ts'
import { type Log, silentLog } from '../../util/log.ts'
import { isoTimestamp } from '../../util/time.ts'
import type { HoldDurations } from '../assetholddurations/service.ts'
import { type Actor, actorOf, hiddenPassword, historyOf } from '../history/service.ts'
import { moveToDevice, pathRangeEnd } from '../mediaassets/service.ts'
import { moveProjectsToDevice, projectHolding } from '../projectassets/bundles.ts'
import { setProductionDevices } from '../productions/lookup.ts'
import { requirePerm } from '../users/access.ts'
import { type Principal, unknownGroups } from '../users/service.ts'
import type { DeviceCreate, DeviceRow, DeviceUpdate, Handover } from './model.ts'

/** The fields history records (the password as whether one is set: hiddenPassword). */
const FIELDS = [
  'name',
  'display_name',
  'path',
  'is_internal',
  'is_archive',
  'autoshot_detection',
  'allow_direct_writing',
  'recieve_xml_meta',
  'protocol',
  'anonymous',
  'server',
  'username',
  'password',
  'transcoding_profile',
  'archive_connector',
  'passthrough_profiles',
  'write_permission_groups',
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

/** A production's device fields that follow its folders when a device is put around them or taken away. */
const ASSET_DEVICES = ['audioasset_device', 'imageasset_device', 'videoasset_device'] as const
type ProductionField = (typeof ASSET_DEVICES)[number] | 'upload_device'
type ProductionRoots = {
  id: number
  name: string
  storage_root: string
  proxy_root: string
  upload_root: string | null
} & Record<ProductionField, number>

/**
 * Catalogued records that change device between a device and the device around it: onto a new
 * device made in the outer one's folder (?adopt=true), or back when it is deleted. `productions`:
 * those with a root in the folder, with the device fields that change.
 */
type Move = {
  outer: DeviceRow
  media: { id: number; kind: MediaKind; production: number; device: number }[]
  projects: { id: number; production: number; device: number }[]
  productions: { row: ProductionRoots; fields: ProductionField[] }[]
}

/** Records moved, counted as the answer says them (model.ts Handover). */
export type HandoverCount = typeof Handover.static

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** A move in words: "5 video assets, 1 project asset and the roots of 1 production". */
function moveInWords(count: HandoverCount): string {
  const parts = [
    ...(['video', 'audio', 'image'] as const)
      .filter((k) => count[`${k}assets`])
      .map((k) => plural(count[`${k}assets`], `${k} asset`)),
    ...(count.projectassets ? [plural(count.projectassets, 'project asset')] : []),
    ...(count.productions ? [`the roots of ${plural(count.productions, 'production')}`] : []),
  ]
  return parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : (parts[0] ?? 'nothing')
}

export function createDevices(db: Db, holds: HoldDurations, hooks: DeviceHooks = {}, log: Log = silentLog) {
  // Read by every import and import task (path lookups): prepared once.
  const everyDevice = db.select().from(devices).orderBy(asc(devices.id)).prepare()
  const history = historyOf(db)
  const count = (sql: string, ...params: (string | number)[]) =>
    db.$client.query<{ n: number }, (string | number)[]>(sql).get(...params)!.n
  // The records in a folder (by the path index, as a scan reads them) and on a device.
  const mediaIn = db.$client.query<Move['media'][number] & { path: string }, [string, string]>(
    'SELECT id, kind, production, device, path_file AS path FROM media_assets WHERE path_file >= ? AND path_file < ? ORDER BY id',
  )
  const projectsIn = db.$client.query<Move['projects'][number] & { path: string }, [string, string]>(
    'SELECT id, production, device, bundle_root AS path FROM project_assets WHERE bundle_root >= ? AND bundle_root < ? ORDER BY id',
  )
  const mediaOn = db.$client.query<Move['media'][number] & { path: string }, [number]>(
    'SELECT id, kind, production, device, path_file AS path FROM media_assets WHERE device = ? ORDER BY id',
  )
  const projectsOn = db.$client.query<Move['projects'][number] & { path: string }, [number]>(
    'SELECT id, production, device, bundle_root AS path FROM project_assets WHERE device = ? ORDER BY id',
  )
  const everyProduction = db.$client.query<ProductionRoots, []>(
    'SELECT id, name, storage_root, proxy_root, upload_root, upload_device, audioasset_device, imageasset_device, videoasset_device FROM productions ORDER BY id',
  )

  /** The device a folder at `path` lies on but for device `except`: the one with the longest path strictly around it. */
  const around = (path: string, except?: number) =>
    deviceFor(
      everyDevice.all().filter((d) => d.id !== except && isInside(d.path, path)),
      path,
    )

  /** A production's roots in `folder`, and its fields that follow them onto a device there (those on `from`). */
  function productionsIn(folder: string, from: (device: number) => boolean): Move['productions'] {
    const inFolder = (root: string | null) => root !== null && below(folder, root) !== undefined
    const out: Move['productions'] = []
    for (const row of everyProduction.all()) {
      if (![row.storage_root, row.proxy_root, row.upload_root].some(inFolder)) continue
      const fields: ProductionField[] = []
      // The asset devices say where imports put files (a device holding storage_root: into it);
      // upload_device is the device of the drop folder. A whole device as watch folder stays.
      if (inFolder(row.storage_root)) fields.push(...ASSET_DEVICES.filter((f) => from(row[f])))
      if (inFolder(row.upload_root) && from(row.upload_device)) fields.push('upload_device')
      out.push({ row, fields })
    }
    return out
  }

  /** What a device at `path` would take over from the devices around it (their records in its folder); undefined: nothing. */
  function takeOver(path: string, except?: number): Move | undefined {
    const outer = around(path, except)
    if (!outer) return undefined
    const aroundIds = new Set(
      everyDevice
        .all()
        .filter((d) => d.id !== except && isInside(d.path, path))
        .map((d) => d.id),
    )
    const end = pathRangeEnd(path)
    const media = mediaIn
      .all(path, end)
      .filter((r) => aroundIds.has(r.device))
      .map(({ path: _, ...r }) => r)
    const projects = projectsIn
      .all(path, end)
      .filter((r) => aroundIds.has(r.device))
      .map(({ path: _, ...r }) => r)
    const productions = productionsIn(path, (d) => aroundIds.has(d))
    return media.length || projects.length || productions.length ? { outer, media, projects, productions } : undefined
  }

  const countOf = (move: Move): HandoverCount => ({
    device: move.outer.id,
    videoassets: move.media.filter((m) => m.kind === 'video').length,
    audioassets: move.media.filter((m) => m.kind === 'audio').length,
    imageassets: move.media.filter((m) => m.kind === 'image').length,
    projectassets: move.projects.length,
    productions: move.productions.length,
  })

  /** Puts the records of `move` on device `to`, each change in the history by `by`; inside the caller's transaction. */
  function hand(move: Move, to: number, by: Actor): HandoverCount {
    const now = isoTimestamp()
    // Each table's row is written by its owner's function; the history of the handover here.
    moveToDevice(
      db,
      move.media.map((m) => m.id),
      to,
      now,
    )
    moveProjectsToDevice(
      db,
      move.projects.map((p) => p.id),
      to,
      now,
    )
    for (const m of move.media) {
      runSync(
        db,
        history.record(by, {
          resource: `${m.kind}asset`,
          id: m.id,
          action: 'update',
          production: m.production,
          changes: { device: { old: m.device, new: to } },
        }),
      )
    }
    for (const p of move.projects) {
      runSync(
        db,
        history.record(by, {
          resource: 'projectasset',
          id: p.id,
          action: 'update',
          production: p.production,
          changes: { device: { old: p.device, new: to } },
        }),
      )
    }
    for (const { row, fields } of move.productions) {
      if (!fields.length) continue
      runSync(db, setProductionDevices(db, row.id, fields, to))
      runSync(
        db,
        history.record(by, {
          resource: 'production',
          id: row.id,
          action: 'update',
          production: row.id,
          changes: Object.fromEntries(fields.map((f) => [f, { old: row[f], new: to }])),
        }),
      )
    }
    return countOf(move)
  }

  /**
   * What a delete of `device` gives back to the device around it (its records all lie in that
   * one's folder too), and what keeps it from going all the same (records outside that folder,
   * a production that chose it by itself, hold durations naming it). No device around it: references().
   */
  function giveBack(device: DeviceRow): { move?: Move; using: string[] } {
    const outer = around(device.path, device.id)
    if (!outer) return { using: references(device) }
    const using: string[] = []
    const inOuter = (path: string) => below(outer.path, path) !== undefined
    const media = mediaOn.all(device.id)
    const projects = projectsOn.all(device.id)
    const strayMedia = media.filter((m) => !inOuter(m.path)).length
    if (strayMedia)
      using.push(`${plural(strayMedia, 'media asset')} outside the folder of device ${outer.id} lie on this device`)
    const strayProjects = projects.filter((p) => !inOuter(p.path)).length
    if (strayProjects)
      using.push(
        `${plural(strayProjects, 'project asset')} outside the folder of device ${outer.id} lie on this device`,
      )
    const productions = productionsIn(device.path, (d) => d === device.id)
    for (const row of everyProduction.all()) {
      const follows = productions.find((p) => p.row.id === row.id)?.fields ?? []
      const chosen = [...ASSET_DEVICES, 'upload_device' as const].filter(
        (f) => row[f] === device.id && !follows.includes(f),
      )
      if (chosen.length) using.push(`production "${row.name}" uses this device (${chosen.join(', ')})`)
    }
    const rules = runSync(db, holds.naming('device', device.name))
    if (rules) using.push(`${rules} asset hold duration${rules === 1 ? ' names' : 's name'} this device`)
    const move = {
      outer,
      media: media.map(({ path: _, ...m }) => m),
      projects: projects.map(({ path: _, ...p }) => p),
      productions,
    }
    return { move: move.media.length || move.projects.length || productions.length ? move : undefined, using }
  }

  /** What lies on the device or refers to it, in words ("12 video assets lie on this device"); empty: nothing. */
  function references(device: DeviceRow): string[] {
    const reasons: string[] = []
    const kinds = db.$client
      .query<{ kind: string; n: number }, [number]>(
        'SELECT kind, count(*) AS n FROM media_assets WHERE device = ? GROUP BY kind ORDER BY kind',
      )
      .all(device.id)
    for (const { kind, n } of kinds)
      reasons.push(`${n} ${kind} asset${n === 1 ? '' : 's'} lie${n === 1 ? 's' : ''} on this device`)
    const projects = count('SELECT count(*) AS n FROM project_assets WHERE device = ?', device.id)
    if (projects)
      reasons.push(
        `${projects} project asset${projects === 1 ? '' : 's'} lie${projects === 1 ? 's' : ''} on this device`,
      )
    const users = db.$client
      .query<{ name: string; how: string }, [number, number, number, number, string, string, string, string]>(
        `SELECT name, CASE WHEN upload_device = ?1 THEN 'upload_device' WHEN audioasset_device = ?2 THEN 'audioasset_device'
         WHEN imageasset_device = ?3 THEN 'imageasset_device' WHEN videoasset_device = ?4 THEN 'videoasset_device'
         WHEN substr(storage_root, 1, length(?5)) = ?6 THEN 'storage_root' ELSE 'proxy_root' END AS how
       FROM productions WHERE ?1 IN (upload_device, audioasset_device, imageasset_device, videoasset_device)
         OR substr(storage_root, 1, length(?5)) = ?6 OR substr(proxy_root, 1, length(?7)) = ?8 ORDER BY id`,
      )
      .all(device.id, device.id, device.id, device.id, device.path, device.path, device.path, device.path)
    for (const p of users) reasons.push(`production "${p.name}" uses this device (${p.how})`)
    const rules = runSync(db, holds.naming('device', device.name))
    if (rules) reasons.push(`${rules} asset hold duration${rules === 1 ? ' names' : 's name'} this device`)
    return reasons
  }

  function checkProfiles(body: { transcoding_profile?: number | null; passthrough_profiles?: number[] }) {
    if (body.transcoding_profile != null) {
      const exists = db
        .select({ id: transcodingProfiles.id })
        .from(transcodingProfiles)
        .where(eq(transcodingProfiles.id, body.transcoding_profile))
        .get()
      if (!exists) throw invalid('/transcoding_profile', 'No transcoding profile with this id.')
    }
    for (const [i, id] of (body.passthrough_profiles ?? []).entries()) {
      const exists = db
        .select({ id: transcodingProfiles.id })
        .from(transcodingProfiles)
        .where(eq(transcodingProfiles.id, id))
        .get()
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
    if (twin)
      throw unique(
        '/path',
        `Device ${twin.id} has this path (${twin.path}): names on this system compare without regard to case.`,
      )
    const holder = projectHolding(db, path)
    if (holder !== undefined)
      throw invalid(
        '/path',
        `The path lies inside the folder of project asset ${holder}; deleting that project would remove the device.`,
      )
    return path
  }

  /**
   * A warn line when the groups a device names let nobody copy onto it: groups that do not exist
   * (yet), or any while allow_direct_writing is off. Not a refusal (a device may be set up before
   * its groups, as medialoopster's seed names groups), and not in the answer, which stays the
   * Device record its clients compare.
   */
  function warnOfWriters(device: DeviceRow) {
    const named = device.write_permission_groups
    if (!named.length) return
    const missing = unknownGroups(db, named)
    if (device.allow_direct_writing && !missing.length) return
    log.warn(
      device.allow_direct_writing
        ? 'a device names groups that do not exist (yet): they let nobody copy onto it until made (reelhouse group add NAME)'
        : 'a device names write_permission_groups but allow_direct_writing is false: they let nobody copy onto it',
      { device: device.id, name: device.name, groups: missing.length ? missing : named },
    )
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

    /**
     * POST. A folder inside another device's that holds catalogued records of it (media assets,
     * project assets, a production's roots) is 409 unless `adopt`: then they move onto the new
     * device (each in the history) and `adopted` counts them. A folder not there (yet) is taken,
     * with a `warning` (by field, as the import's; absent otherwise) and a line in the log.
     */
    async create(
      body: typeof DeviceCreate.static,
      user: Principal,
      adopt = false,
    ): Promise<DeviceRow & { warning?: Record<string, string>; adopted?: HandoverCount }> {
      // The folder is looked at first (at most 2 s): the checks and the write then run with no pause between them.
      const look = await folderSpace(field('/path', () => cleanDir(body.path)))
      const path = devicePath(body.path)
      checkProfiles(body)
      const taken = takeOver(path)
      if (taken && !adopt) {
        const { outer } = taken
        throw new AppError(
          409,
          'conflict',
          `The folder lies inside device ${outer.id} ("${outer.name}", ${outer.path}) and holds what is catalogued on that device: ${moveInWords(countOf(taken))}. ` +
            `A new device there would take them over; to do so on purpose, send the request again with ?adopt=true (deleting the new device later gives them back to device ${outer.id}).`,
        )
      }
      const by = actorOf(user)
      const { device, adopted } = db.transaction(() => {
        const device = db
          .insert(devices)
          .values({ ...body, path, display_name: body.display_name || body.name, date_add: isoTimestamp() })
          .returning()
          .get()
        const adopted = taken && hand(taken, device.id, by)
        runSync(
          db,
          history.record(by, {
            resource: 'device',
            id: device.id,
            action: 'create',
            changes: {
              ...history.snapshot(shown(device), FIELDS, 'create'),
              ...(adopted ? { adopted: { old: null, new: adopted } } : {}),
            },
          }),
        )
        return { device, adopted }
      })
      hooks.created?.(device) // the watcher watches it from now on
      if (adopted) {
        const { device: from, ...counts } = adopted
        log.info('a new device took over catalogued records of the device around it (?adopt=true)', {
          device: device.id,
          path,
          from_device: from,
          ...counts,
        })
      }
      warnOfWriters(device)
      const warning: Record<string, string> = {}
      if (!look.online) {
        log.warn('a device was created on a folder that is not there (yet); it is offline until the folder is there', {
          device: device.id,
          name: device.name,
          path,
          reason: look.reason,
        })
        warning.path = `The folder ${path} is not there (yet): ${look.reason}. The device is offline until it is (GET /api/devices/${device.id}/status/ tells).`
      }
      return { ...device, ...(Object.keys(warning).length ? { warning } : {}), ...(adopted ? { adopted } : {}) }
    },

    /**
     * PATCH/PUT. A new path is refused (409) while anything lies on the device (its assets,
     * projects and productions name paths under the old one), and where it would take over what
     * is catalogued on the device around it (takeOver; only a create adopts); a new name carries the hold
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
      if (
        next.name !== row.name &&
        db
          .select({ id: devices.id })
          .from(devices)
          .where(and(eq(devices.name, next.name), ne(devices.id, id)))
          .get()
      )
        throw unique('/name', 'A device with this name already exists.')
      if (next.path !== row.path) {
        if (
          db
            .select({ id: devices.id })
            .from(devices)
            .where(and(eq(devices.path, next.path), ne(devices.id, id)))
            .get()
        )
          throw unique('/path', 'A device with this path already exists.')
        const using = references(row).filter((r) => !r.includes('hold duration'))
        if (using.length)
          throw new AppError(
            409,
            'conflict',
            `The path of a device changes only while nothing lies on it: ${using.join('; ')}.`,
          )
        // Nor does it move onto records of the device around its new folder (only a create with ?adopt=true takes them over).
        const taken = takeOver(next.path, id)
        if (taken)
          throw new AppError(
            409,
            'conflict',
            `The new path lies inside device ${taken.outer.id} ("${taken.outer.name}", ${taken.outer.path}) and holds what is catalogued on that device: ` +
              `${moveInWords(countOf(taken))}. The device would take them over; only a device created there with ?adopt=true (POST /api/devices/?adopt=true) does.`,
          )
      }
      const after = db.transaction(() => {
        const after = db.update(devices).set(next).where(eq(devices.id, id)).returning().get()!
        const by = actorOf(user)
        // One password for another shows as "********" both times: said all the same, never the passwords.
        const newPassword = row.password !== null && after.password !== null && row.password !== after.password
        runSync(
          db,
          history.updated(
            by,
            { resource: 'device', id },
            shown(row),
            shown(after),
            FIELDS,
            newPassword ? { password: { old: '********', new: '********' } } : {},
          ),
        )
        if (after.name !== row.name) runSync(db, holds.renameContext('device', row.name, after.name, by))
        return after
      })
      if (after.path !== row.path || after.protocol !== row.protocol) hooks.changed?.(after)
      if (
        after.allow_direct_writing !== row.allow_direct_writing ||
        JSON.stringify(after.write_permission_groups) !== JSON.stringify(row.write_permission_groups)
      )
        warnOfWriters(after)
      return after
    },

    /**
     * 409 while anything lies on the device or refers to it, naming what; but a device inside
     * another one's folder gives what lies on it back to that device (the undo of ?adopt=true):
     * its records, and the production fields that followed its folder. What moved back is in the
     * history (each record's, and the device's delete as `returned`) and the log.
     */
    remove(id: number, user: Principal) {
      const row = this.get(id)
      requirePerm(user, 'browser.delete_device')
      const { move, using } = giveBack(row)
      if (using.length) throw new AppError(409, 'conflict', `The device is in use: ${using.join('; ')}.`)
      const by = actorOf(user)
      const returned = db.transaction(() => {
        const returned = move && hand(move, move.outer.id, by)
        db.delete(devices).where(eq(devices.id, id)).run()
        runSync(
          db,
          history.record(by, {
            resource: 'device',
            id,
            action: 'delete',
            changes: {
              ...history.snapshot(shown(row), FIELDS, 'delete'),
              ...(returned ? { returned: { old: null, new: returned } } : {}),
            },
          }),
        )
        return returned
      })
      hooks.removed?.(id)
      if (returned) {
        const { device: to, ...counts } = returned
        log.info('a deleted device gave its catalogued records back to the device around it', {
          device: id,
          path: row.path,
          to_device: to,
          ...counts,
        })
      }
      return returned
    },
  }
}

export type Devices = ReturnType<typeof createDevices>
