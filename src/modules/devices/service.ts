import { and, asc, count as countRows, eq, gte, lt, ne, or, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import type { Db } from '../../db/client.ts'
import { type Port, type Work, all, allOf, one, run, statement, tx } from '../../db/port.ts'
import {
  type MediaKind,
  devices,
  mediaAssets,
  productions,
  projectAssets,
  transcodingProfiles,
} from '../../db/tables.ts'
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

export function createDevices(db: Db, port: Port, holds: HoldDurations, hooks: DeviceHooks = {}, log: Log = silentLog) {
  // Read by every import and import task (path lookups): prepared once.
  const everyDevice = statement(() => db.select().from(devices).orderBy(asc(devices.id)))
  const history = historyOf(db)
  // The records in a folder (by the path index, as a scan reads them) and on a device.
  const mediaColumns = {
    id: mediaAssets.id,
    kind: mediaAssets.kind,
    production: mediaAssets.production,
    device: mediaAssets.device,
    path: mediaAssets.path_file,
  }
  const projectColumns = {
    id: projectAssets.id,
    production: projectAssets.production,
    device: projectAssets.device,
    path: projectAssets.bundle_root,
  }
  const mediaIn = statement<Move['media'][number] & { path: string }>(() =>
    db
      .select(mediaColumns)
      .from(mediaAssets)
      .where(and(gte(mediaAssets.path_file, sql.placeholder('from')), lt(mediaAssets.path_file, sql.placeholder('to'))))
      .orderBy(mediaAssets.id),
  )
  const projectsIn = statement<Move['projects'][number] & { path: string }>(() =>
    db
      .select(projectColumns)
      .from(projectAssets)
      .where(
        and(
          gte(projectAssets.bundle_root, sql.placeholder('from')),
          lt(projectAssets.bundle_root, sql.placeholder('to')),
        ),
      )
      .orderBy(projectAssets.id),
  )
  const mediaOn = statement<Move['media'][number] & { path: string }>(() =>
    db
      .select(mediaColumns)
      .from(mediaAssets)
      .where(eq(mediaAssets.device, sql.placeholder('device')))
      .orderBy(mediaAssets.id),
  )
  const projectsOn = statement<Move['projects'][number] & { path: string }>(() =>
    db
      .select(projectColumns)
      .from(projectAssets)
      .where(eq(projectAssets.device, sql.placeholder('device')))
      .orderBy(projectAssets.id),
  )
  const everyProduction = statement<ProductionRoots>(() =>
    db
      .select({
        id: productions.id,
        name: productions.name,
        storage_root: productions.storage_root,
        proxy_root: productions.proxy_root,
        upload_root: productions.upload_root,
        upload_device: productions.upload_device,
        audioasset_device: productions.audioasset_device,
        imageasset_device: productions.imageasset_device,
        videoasset_device: productions.videoasset_device,
      })
      .from(productions)
      .orderBy(productions.id),
  )

  /** The device a folder at `path` lies on but for device `except`: the one with the longest path strictly around it. */
  function* around(path: string, except?: number): Work<DeviceRow | undefined> {
    const rows = yield* allOf(everyDevice)
    return deviceFor(
      rows.filter((d) => d.id !== except && isInside(d.path, path)),
      path,
    )
  }

  /** A production's roots in `folder`, and its fields that follow them onto a device there (those on `from`). */
  function* productionsIn(folder: string, from: (device: number) => boolean): Work<Move['productions']> {
    const inFolder = (root: string | null) => root !== null && below(folder, root) !== undefined
    const out: Move['productions'] = []
    for (const row of yield* allOf(everyProduction)) {
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
  function* takeOver(path: string, except?: number): Work<Move | undefined> {
    const outer = yield* around(path, except)
    if (!outer) return undefined
    const aroundIds = new Set(
      (yield* allOf(everyDevice)).filter((d) => d.id !== except && isInside(d.path, path)).map((d) => d.id),
    )
    const range = { from: path, to: pathRangeEnd(path) }
    const media = (yield* allOf(mediaIn, range)).filter((r) => aroundIds.has(r.device)).map(({ path: _, ...r }) => r)
    const projects = (yield* allOf(projectsIn, range))
      .filter((r) => aroundIds.has(r.device))
      .map(({ path: _, ...r }) => r)
    const productions = yield* productionsIn(path, (d) => aroundIds.has(d))
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
  function* hand(move: Move, to: number, by: Actor): Work<HandoverCount> {
    const now = isoTimestamp()
    // Each table's row is written by its owner's function; the history of the handover here.
    yield* moveToDevice(
      db,
      move.media.map((m) => m.id),
      to,
      now,
    )
    yield* moveProjectsToDevice(
      db,
      move.projects.map((p) => p.id),
      to,
      now,
    )
    for (const m of move.media) {
      yield* history.record(by, {
        resource: `${m.kind}asset`,
        id: m.id,
        action: 'update',
        production: m.production,
        changes: { device: { old: m.device, new: to } },
      })
    }
    for (const p of move.projects) {
      yield* history.record(by, {
        resource: 'projectasset',
        id: p.id,
        action: 'update',
        production: p.production,
        changes: { device: { old: p.device, new: to } },
      })
    }
    for (const { row, fields } of move.productions) {
      if (!fields.length) continue
      yield* setProductionDevices(db, row.id, fields, to)
      yield* history.record(by, {
        resource: 'production',
        id: row.id,
        action: 'update',
        production: row.id,
        changes: Object.fromEntries(fields.map((f) => [f, { old: row[f], new: to }])),
      })
    }
    return countOf(move)
  }

  /**
   * What a delete of `device` gives back to the device around it (its records all lie in that
   * one's folder too), and what keeps it from going all the same (records outside that folder,
   * a production that chose it by itself, hold durations naming it). No device around it: references().
   */
  function* giveBack(device: DeviceRow): Work<{ move?: Move; using: string[] }> {
    const outer = yield* around(device.path, device.id)
    if (!outer) return { using: yield* references(device) }
    const using: string[] = []
    const inOuter = (path: string) => below(outer.path, path) !== undefined
    const media = yield* allOf(mediaOn, { device: device.id })
    const projects = yield* allOf(projectsOn, { device: device.id })
    const strayMedia = media.filter((m) => !inOuter(m.path)).length
    if (strayMedia)
      using.push(`${plural(strayMedia, 'media asset')} outside the folder of device ${outer.id} lie on this device`)
    const strayProjects = projects.filter((p) => !inOuter(p.path)).length
    if (strayProjects)
      using.push(
        `${plural(strayProjects, 'project asset')} outside the folder of device ${outer.id} lie on this device`,
      )
    const productions = yield* productionsIn(device.path, (d) => d === device.id)
    for (const row of yield* allOf(everyProduction)) {
      const follows = productions.find((p) => p.row.id === row.id)?.fields ?? []
      const chosen = [...ASSET_DEVICES, 'upload_device' as const].filter(
        (f) => row[f] === device.id && !follows.includes(f),
      )
      if (chosen.length) using.push(`production "${row.name}" uses this device (${chosen.join(', ')})`)
    }
    const rules = yield* holds.naming('device', device.name)
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
  function* references(device: DeviceRow): Work<string[]> {
    const reasons: string[] = []
    const kinds = yield* all(
      db
        .select({ kind: mediaAssets.kind, n: countRows() })
        .from(mediaAssets)
        .where(eq(mediaAssets.device, device.id))
        .groupBy(mediaAssets.kind)
        .orderBy(mediaAssets.kind),
    )
    for (const { kind, n } of kinds)
      reasons.push(`${n} ${kind} asset${n === 1 ? '' : 's'} lie${n === 1 ? 's' : ''} on this device`)
    const projects =
      (yield* one(db.select({ n: countRows() }).from(projectAssets).where(eq(projectAssets.device, device.id))))?.n ?? 0
    if (projects)
      reasons.push(
        `${projects} project asset${projects === 1 ? '' : 's'} lie${projects === 1 ? 's' : ''} on this device`,
      )
    // A root lies on the device when it starts with the device's path: its first characters (code
    // points, as both engines' substr counts them) are that path.
    const length = [...device.path].length
    const startsWith = (column: SQLiteColumn) => sql`substr(${column}, 1, ${length}) = ${device.path}`
    const users = yield* all(
      db
        .select({
          name: productions.name,
          how: sql<string>`CASE WHEN ${productions.upload_device} = ${device.id} THEN 'upload_device'
            WHEN ${productions.audioasset_device} = ${device.id} THEN 'audioasset_device'
            WHEN ${productions.imageasset_device} = ${device.id} THEN 'imageasset_device'
            WHEN ${productions.videoasset_device} = ${device.id} THEN 'videoasset_device'
            WHEN ${startsWith(productions.storage_root)} THEN 'storage_root' ELSE 'proxy_root' END`,
        })
        .from(productions)
        .where(
          or(
            eq(productions.upload_device, device.id),
            eq(productions.audioasset_device, device.id),
            eq(productions.imageasset_device, device.id),
            eq(productions.videoasset_device, device.id),
            startsWith(productions.storage_root),
            startsWith(productions.proxy_root),
          ),
        )
        .orderBy(productions.id),
    )
    for (const p of users) reasons.push(`production "${p.name}" uses this device (${p.how})`)
    const rules = yield* holds.naming('device', device.name)
    if (rules) reasons.push(`${rules} asset hold duration${rules === 1 ? ' names' : 's name'} this device`)
    return reasons
  }

  function* checkProfiles(body: { transcoding_profile?: number | null; passthrough_profiles?: number[] }): Work<void> {
    const exists = (id: number) =>
      one(
        db
          .select({ id: transcodingProfiles.id })
          .from(transcodingProfiles)
          .where(eq(transcodingProfiles.id, id))
          .limit(1),
      )
    if (body.transcoding_profile != null && !(yield* exists(body.transcoding_profile)))
      throw invalid('/transcoding_profile', 'No transcoding profile with this id.')
    for (const [i, id] of (body.passthrough_profiles ?? []).entries())
      if (!(yield* exists(id))) throw invalid(`/passthrough_profiles/${i}`, 'No transcoding profile with this id.')
  }

  /** A device path: absolute, cleaned, not a reserved folder nor inside a project folder. */
  function* devicePath(value: string, id?: number): Work<string> {
    const path = field('/path', () => cleanDir(value))
    const reserved = reservedProblem(path)
    if (reserved) throw invalid('/path', reserved)
    // The same path written alike is the table's unique constraint; written in another case, it
    // is the same folder where the system ignores case (macOS, Windows), which no constraint sees.
    const twin = (yield* allOf(everyDevice)).find((d) => d.id !== id && d.path !== path && samePath(d.path, path))
    if (twin)
      throw unique(
        '/path',
        `Device ${twin.id} has this path (${twin.path}): names on this system compare without regard to case.`,
      )
    const holder = yield* projectHolding(db, path)
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
  function* warnOfWriters(device: DeviceRow): Work<void> {
    const named = device.write_permission_groups
    if (!named.length) return
    const missing = yield* unknownGroups(db, named)
    if (device.allow_direct_writing && !missing.length) return
    log.warn(
      device.allow_direct_writing
        ? 'a device names groups that do not exist (yet): they let nobody copy onto it until made (reelhouse group add NAME)'
        : 'a device names write_permission_groups but allow_direct_writing is false: they let nobody copy onto it',
      { device: device.id, name: device.name, groups: missing.length ? missing : named },
    )
  }

  function* get(id: number): Work<DeviceRow> {
    const row = yield* one(db.select().from(devices).where(eq(devices.id, id)))
    if (!row) throw notFound('No device with this id.')
    return row
  }

  /** The checks of a create once its folder has been looked at, and its write (create() below). */
  function* made(
    body: typeof DeviceCreate.static,
    user: Principal,
    adopt: boolean,
  ): Work<{ device: DeviceRow; adopted: HandoverCount | undefined; path: string }> {
    const path = yield* devicePath(body.path)
    yield* checkProfiles(body)
    const taken = yield* takeOver(path)
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
    const { device, adopted } = yield* tx(function* () {
      const device = (yield* one(
        db
          .insert(devices)
          .values({ ...body, path, display_name: body.display_name || body.name, date_add: isoTimestamp() })
          .returning(),
      ))!
      const adopted = taken ? yield* hand(taken, device.id, by) : undefined
      yield* history.record(by, {
        resource: 'device',
        id: device.id,
        action: 'create',
        changes: {
          ...history.snapshot(shown(device), FIELDS, 'create'),
          ...(adopted ? { adopted: { old: null, new: adopted } } : {}),
        },
      })
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
    yield* warnOfWriters(device)
    return { device, adopted, path }
  }

  return {
    get,

    /** What refers to the device, in words (a delete and a path change are refused while any). */
    references,

    /** Every device, for path lookups (a handful of rows). */
    *list(): Work<DeviceRow[]> {
      return yield* allOf(everyDevice)
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
      // The folder is looked at first (at most 2 s), outside the port's work: the checks and the
      // write then run as one work, with no pause between them on SQLite.
      const look = await folderSpace(field('/path', () => cleanDir(body.path)))
      const { device, adopted, path } = await port.run(made(body, user, adopt))
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
    *update(id: number, body: typeof DeviceUpdate.static, user: Principal): Work<DeviceRow> {
      const row = yield* get(id)
      requirePerm(user, 'browser.change_device')
      refuseReadOnly(body, row, { id: 'id is set by the service.' })
      const next = overlay(row, body, WRITABLE)
      if (body.password === '********') next.password = row.password
      if (body.path !== undefined) next.path = yield* devicePath(body.path, id)
      yield* checkProfiles({
        transcoding_profile: body.transcoding_profile,
        passthrough_profiles: body.passthrough_profiles,
      })
      const other = (where: ReturnType<typeof eq>) =>
        one(
          db
            .select({ id: devices.id })
            .from(devices)
            .where(and(where, ne(devices.id, id)))
            .limit(1),
        )
      if (next.name !== row.name && (yield* other(eq(devices.name, next.name))))
        throw unique('/name', 'A device with this name already exists.')
      if (next.path !== row.path) {
        if (yield* other(eq(devices.path, next.path))) throw unique('/path', 'A device with this path already exists.')
        const using = (yield* references(row)).filter((r) => !r.includes('hold duration'))
        if (using.length)
          throw new AppError(
            409,
            'conflict',
            `The path of a device changes only while nothing lies on it: ${using.join('; ')}.`,
          )
        // Nor does it move onto records of the device around its new folder (only a create with ?adopt=true takes them over).
        const taken = yield* takeOver(next.path, id)
        if (taken)
          throw new AppError(
            409,
            'conflict',
            `The new path lies inside device ${taken.outer.id} ("${taken.outer.name}", ${taken.outer.path}) and holds what is catalogued on that device: ` +
              `${moveInWords(countOf(taken))}. The device would take them over; only a device created there with ?adopt=true (POST /api/devices/?adopt=true) does.`,
          )
      }
      const after = yield* tx(function* () {
        const after = (yield* one(db.update(devices).set(next).where(eq(devices.id, id)).returning()))!
        const by = actorOf(user)
        // One password for another shows as "********" both times: said all the same, never the passwords.
        const newPassword = row.password !== null && after.password !== null && row.password !== after.password
        yield* history.updated(
          by,
          { resource: 'device', id },
          shown(row),
          shown(after),
          FIELDS,
          newPassword ? { password: { old: '********', new: '********' } } : {},
        )
        if (after.name !== row.name) yield* holds.renameContext('device', row.name, after.name, by)
        return after
      })
      if (after.path !== row.path || after.protocol !== row.protocol) hooks.changed?.(after)
      if (
        after.allow_direct_writing !== row.allow_direct_writing ||
        JSON.stringify(after.write_permission_groups) !== JSON.stringify(row.write_permission_groups)
      )
        yield* warnOfWriters(after)
      return after
    },

    /**
     * 409 while anything lies on the device or refers to it, naming what; but a device inside
     * another one's folder gives what lies on it back to that device (the undo of ?adopt=true):
     * its records, and the production fields that followed its folder. What moved back is in the
     * history (each record's, and the device's delete as `returned`) and the log.
     */
    *remove(id: number, user: Principal): Work<HandoverCount | undefined> {
      const row = yield* get(id)
      requirePerm(user, 'browser.delete_device')
      const { move, using } = yield* giveBack(row)
      if (using.length) throw new AppError(409, 'conflict', `The device is in use: ${using.join('; ')}.`)
      const by = actorOf(user)
      const returned = yield* tx(function* () {
        const returned = move ? yield* hand(move, move.outer.id, by) : undefined
        yield* run(db.delete(devices).where(eq(devices.id, id)))
        yield* history.record(by, {
          resource: 'device',
          id,
          action: 'delete',
          changes: {
            ...history.snapshot(shown(row), FIELDS, 'delete'),
            ...(returned ? { returned: { old: null, new: returned } } : {}),
          },
        })
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
