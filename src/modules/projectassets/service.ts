// Project assets: create, copy, delete, link and unlink (docs/api.md, Project assets, docs/api.md, Resources; docs/projects.md).
// Copy and delete only write rows here (the record and its task, in one transaction); the
// work on disk is done by copy.task.ts and delete.task.ts.
import { and, eq, inArray, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { inJsonList } from '../../db/dialect.ts'
import { type Port, type Work, all, allOf, one, oneOf, run, statement, tx } from '../../db/port.ts'
import {
  MEDIA_KINDS,
  type MediaKind,
  devices,
  mediaAssetShares,
  mediaAssets,
  projectAssetLinks,
  projectAssets,
} from '../../db/tables.ts'
import { AppError, dateField, field, forbidden, invalid, noSuchRecord, notFound } from '../../http/errors.ts'
import { cleanPath, dirOnDevice, isInside, makeDirInside, restOf } from '../../storage/paths.ts'
import { requireFileWork } from '../../storage/platform.ts'
import { bundleProblem, territoryProblem } from './bundles.ts'
import { identityOf } from '../../storage/fs.ts'
import { isMissingOrEmpty, totals } from '../../storage/fs.ts'
import { openCopyFrom, openTasksOfProject, taskState } from '../../tasks/queries.ts'
import type { Runner } from '../../tasks/runner.ts'
import { isoTimestamp, isoTimestampAfter } from '../../util/time.ts'
import type { HoldDurations } from '../assetholddurations/service.ts'
import { CONTENT_TYPE_IDS, type CustomMetadata } from '../custommetadata/service.ts'
import { mediaToApi } from '../mediaassets/model.ts'
import type { MediaAssets } from '../mediaassets/service.ts'
import { requireOnline } from '../devices/online.ts'
import { productionForWrite } from '../productions/lookup.ts'
import { canRead, requirePerm, requireWrite } from '../users/access.ts'
import type { Principal } from '../users/service.ts'
import { type ProjectAssetCreate, type ProjectAssetUpdate, type TaskRef, typeOf } from './model.ts'
import { type Actor, type Changes, actorOf, historyOf, modifiedBy } from '../history/service.ts'
import { refuseReadOnly, type UpdateMode } from '../../http/edit.ts'

type Row = typeof projectAssets.$inferSelect
type Body = typeof ProjectAssetCreate.static
const MEDIA_TYPES = MEDIA_KINDS
type MediaType = MediaKind
type Ref = { asset_id: number; type: MediaType }
/** The task a copy or delete queued: model.ts's TaskRef but for its url, which the controller adds. */
export type QueuedTask = Omit<typeof TaskRef.static, 'url'>
/** The 404 of a project the user cannot see; also the copy's 400 at copy_of. */
const NO_PROJECT = noSuchRecord('ProjectAsset')
type MediaApi = ReturnType<typeof mediaToApi>

const conflict = (detail: string) => new AppError(409, 'conflict', detail)

/** The fields history records of a project asset (links have rows of their own). */
const FIELDS = [
  'name',
  'description',
  'date_crt',
  'date_add',
  'date_del',
  'meta_field_store',
  'status_asset',
  'status_asset_description',
  'status_editing',
  'status_approval',
  'path_file',
  'bundle_root',
  'type',
  'is_archive',
  'is_production',
  'name_editor',
  'name_studio',
  'locked_by',
  'production',
  'device',
] as const

/** Fields the service sets, with what a request that changes one is told (400 invalid at it). */
const READ_ONLY: Record<string, string> = {
  id: 'id is set by the service.',
  bundle_root:
    "bundle_root is not edited in place: a new folder is a move of the project's files, which the watcher sees; copy the project (copy_of) to place it elsewhere.",
  status_asset: 'status_asset is set by the service (copies and deletes).',
  status_asset_description: 'status_asset_description is set by the service.',
  is_production: 'is_production is set by the service (copies, deletes, the watcher).',
  files: 'files counts the files of the bundle; it is set by the service.',
  production: "A project's production is not edited: copy the project into the other production.",
  device: 'device follows bundle_root; it is not edited.',
  date_mod: 'date_mod is set by the service on every change.',
  audio_assets: 'Linked assets change through /addasset/ and /unlinkasset/.',
  image_assets: 'Linked assets change through /addasset/ and /unlinkasset/.',
  video_assets: 'Linked assets change through /addasset/ and /unlinkasset/.',
  modified_by: 'modified_by is set by the service (the history).',
}

/**
 * `port`: the data-access port the service's work runs on where it must run it itself (create and
 * copy, which await the disk between their reads and their writes); everything else is work for
 * the caller to run.
 */
export function createProjectAssets(
  port: Port,
  deps: { runner: Runner; holds: HoldDurations; metadata: CustomMetadata; media: MediaAssets },
) {
  const db = port.db
  const history = historyOf(db)
  // Read for every record answered: built once (prepared on SQLite).
  const modifiedByOf = statement(() =>
    db
      .select({ who: modifiedBy(sql`'projectasset'`, sql`${projectAssets.id}`) })
      .from(projectAssets)
      .where(eq(projectAssets.id, sql.placeholder('id'))),
  )
  // The media assets linked to any of a set of projects (their ids as a JSON list: one statement
  // for a list's whole page, prepared once whatever the page's length), in asset id order.
  const linkedOf = statement(() =>
    db
      .select({ project: projectAssetLinks.project_id, asset: mediaAssets })
      .from(mediaAssets)
      .innerJoin(projectAssetLinks, eq(projectAssetLinks.asset_id, mediaAssets.id))
      .where(inJsonList(projectAssetLinks.project_id, sql.placeholder('ids')))
      .orderBy(mediaAssets.id),
  )
  const sharesOf = statement(() =>
    db
      .select({ production: mediaAssetShares.production_id })
      .from(mediaAssetShares)
      .where(eq(mediaAssetShares.asset_id, sql.placeholder('id'))),
  )
  // The shares of a set of media assets (their ids as a JSON list).
  const sharesOfAll = statement(() =>
    db
      .select({ asset: mediaAssetShares.asset_id, production: mediaAssetShares.production_id })
      .from(mediaAssetShares)
      .where(inJsonList(mediaAssetShares.asset_id, sql.placeholder('ids'))),
  )
  const allDevices = () => all(db.select().from(devices))

  /** canReadAsset's rule (users/access.ts): an asset of a readable production, or shared with one. */
  function* assetReadable(user: Principal, asset: { id: number; production: number }): Work<boolean> {
    if (canRead(user, asset.production)) return true
    return (yield* allOf(sharesOf, { id: asset.id })).some((share) => canRead(user, share.production))
  }

  /**
   * The records of projects as the user sees them: linked media assets the user cannot read are
   * left out. Read for all of them at once, in one statement (two where a linked asset is of a
   * production the user cannot read, for its shares): a list's page takes one or two statements,
   * not one or more per record.
   */
  function* toApiAll(rows: readonly Row[], user: Principal) {
    if (rows.length === 0) return []
    const links = yield* allOf(linkedOf, { ids: JSON.stringify(rows.map((row) => row.id)) })
    // canReadAsset's rule (users/access.ts): an asset of a readable production, or shared with one.
    const unsure = [
      ...new Set(links.filter(({ asset }) => !canRead(user, asset.production)).map(({ asset }) => asset.id)),
    ]
    const shared = new Set<number>()
    if (unsure.length)
      for (const share of yield* allOf(sharesOfAll, { ids: JSON.stringify(unsure) }))
        if (canRead(user, share.production)) shared.add(share.asset)
    const linkedTo = new Map<number, { audio: MediaApi[]; image: MediaApi[]; video: MediaApi[] }>()
    for (const row of rows) linkedTo.set(row.id, { audio: [], image: [], video: [] })
    for (const { project, asset } of links)
      if (canRead(user, asset.production) || shared.has(asset.id))
        linkedTo.get(project)?.[asset.kind].push(mediaToApi(asset))
    return rows.map((row) => recordOf(row, linkedTo.get(row.id)!))
  }

  /** The record of one project as the user sees it (toApiAll). */
  function* toApi(row: Row, user: Principal) {
    return (yield* toApiAll([row], user))[0]!
  }

  /** A project's record, with the media assets linked to it that the user can read. */
  function recordOf(row: Row, linked: { audio: MediaApi[]; image: MediaApi[]; video: MediaApi[] }) {
    return {
      id: row.id,
      audio_assets: linked.audio,
      image_assets: linked.image,
      video_assets: linked.video,
      name: row.name,
      description: row.description,
      date_crt: row.date_crt,
      date_add: row.date_add,
      date_mod: row.date_mod,
      date_del: row.date_del,
      meta_field_store: row.meta_field_store,
      status_asset: row.status_asset,
      status_asset_description: row.status_asset_description,
      status_editing: row.status_editing,
      status_approval: row.status_approval,
      path_file: row.path_file,
      bundle_root: row.bundle_root,
      type: row.type,
      is_archive: row.is_archive,
      is_production: row.is_production,
      files: { count: row.files_count, bytes: row.files_bytes },
      name_editor: row.name_editor,
      name_studio: row.name_studio,
      locked_by: row.locked_by,
      production: row.production,
      device: row.device,
    }
  }

  function* readable(id: number, user: Principal): Work<Row> {
    const row = yield* one(db.select().from(projectAssets).where(eq(projectAssets.id, id)))
    if (!row || !canRead(user, row.production)) throw notFound(NO_PROJECT)
    return row
  }

  /** A project folder on a device that may be one (bundles.ts); throws 400 invalid or 409. */
  function* bundleOnDevice(value: string, pointer: string) {
    const known = yield* allDevices()
    const { path, device } = field(pointer, () => dirOnDevice(known, value))
    yield* checkBundle(path, device.path, pointer)
    return { path, device }
  }

  /**
   * Run again right before the insert, in the same port run as its transaction, so that two
   * requests that passed the first check while the other was awaiting the disk cannot both land:
   * on SQLite the check and the insert are one synchronous stretch. On PostgreSQL another request
   * can still write between the two; there the unique bundle_root refuses the same folder twice,
   * but not a folder nested in another's.
   */
  function* checkBundle(path: string, devicePath: string, pointer = '/bundle_root'): Work<void> {
    const problem = yield* bundleProblem(db, path, devicePath)
    if (problem?.conflict) throw conflict(problem.detail)
    if (problem) throw invalid(pointer, problem.detail)
  }

  /** Territory (docs/api.md, Permissions): 403 for a folder of a production the user may not write to, else 400. */
  function* checkTerritory(
    path: string,
    user: Principal,
    production: number,
    placing: false | 'create' | 'copy',
  ): Work<void> {
    const problem = yield* territoryProblem(db, path, user, production, placing)
    if (problem?.forbidden) throw forbidden(problem.detail)
    if (problem) throw invalid('/bundle_root', problem.detail)
  }

  function* taskRef(id: number): Work<QueuedTask> {
    return { id, state: yield* taskState(db, id) }
  }

  function dates(body: Pick<Body, 'date_crt'>) {
    return body.date_crt === undefined || body.date_crt === null ? body.date_crt : dateField('/date_crt', body.date_crt)
  }

  function pathFileIn(bundle: string, value: string | undefined): string {
    if (value === undefined || value === '') return ''
    const path = field('/path_file', () => cleanPath(value))
    if (!isInside(bundle, path)) throw invalid('/path_file', 'The project file must lie inside bundle_root.')
    return path
  }

  /** The links of a project as history shows them: {video_assets: {old: [ids], new: [ids]}}, only the kinds that changed. */
  function* linkChanges(before: number[], after: number[]): Work<Changes> {
    const ids = [...new Set([...before, ...after])]
    const kinds = new Map<number, MediaKind>()
    if (ids.length)
      for (const a of yield* all(
        db.select({ id: mediaAssets.id, kind: mediaAssets.kind }).from(mediaAssets).where(inArray(mediaAssets.id, ids)),
      ))
        kinds.set(a.id, a.kind)
    const changes: Changes = {}
    for (const kind of MEDIA_KINDS) {
      const old = before.filter((i) => kinds.get(i) === kind).sort((a, b) => a - b)
      const now = after.filter((i) => kinds.get(i) === kind).sort((a, b) => a - b)
      if (old.join() !== now.join()) changes[`${kind}_assets`] = { old, new: now }
    }
    return changes
  }

  /** The single record: the list's, and who changed it last (modified_by). */
  function* detail(row: Row, user: Principal) {
    const record = yield* toApi(row, user)
    return { ...record, modified_by: (yield* oneOf(modifiedByOf, { id: row.id }))?.who ?? null }
  }

  /** The single record of the project with this id, as `user` may read it (404 otherwise). */
  function* get(id: number, user: Principal) {
    return yield* detail(yield* readable(id, user), user)
  }

  return {
    toApi,
    toApiAll,
    detail,
    readable,
    get,

    /**
     * PATCH/PUT: the fields a user sets (READ_ONLY lists the rest). meta_field_store merges on
     * PATCH (a null value removes a key) and is replaced on PUT. 409 while the project is being
     * deleted.
     */
    *update(id: number, body: typeof ProjectAssetUpdate.static, user: Principal, mode: UpdateMode) {
      const row = yield* readable(id, user)
      requirePerm(user, 'browser.change_projectasset')
      requireWrite(user, row.production)
      if (row.deleting) throw conflict('The project asset is being deleted.')
      refuseReadOnly(body as Record<string, unknown>, yield* detail(row, user), READ_ONLY)
      const set: Partial<typeof projectAssets.$inferInsert> = {}
      for (const f of [
        'name',
        'description',
        'status_editing',
        'status_approval',
        'type',
        'is_archive',
        'name_editor',
        'name_studio',
        'locked_by',
      ] as const)
        if (body[f] !== undefined) (set as Record<string, unknown>)[f] = body[f]
      if (body.date_crt !== undefined)
        set.date_crt = body.date_crt === null ? null : dateField('/date_crt', body.date_crt)
      if (body.date_del !== undefined)
        set.date_del = body.date_del === null ? null : dateField('/date_del', body.date_del)
      if (body.date_add !== undefined) set.date_add = dateField('/date_add', body.date_add)
      if (body.path_file !== undefined) set.path_file = pathFileIn(row.bundle_root, body.path_file)
      if (body.meta_field_store !== undefined) {
        const given = body.meta_field_store
        const kept = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== null))
        yield* deps.metadata.validateStore(CONTENT_TYPE_IDS.projectasset, kept, '/meta_field_store')
        const store: Record<string, unknown> = mode === 'patch' ? { ...row.meta_field_store } : {}
        for (const [k, v] of Object.entries(given)) if (v === null) delete store[k]
        set.meta_field_store = { ...store, ...kept }
      }
      set.date_mod = isoTimestampAfter(row.date_mod)
      return yield* tx(function* () {
        const after = (yield* one(db.update(projectAssets).set(set).where(eq(projectAssets.id, id)).returning()))!
        yield* history.updated(
          actorOf(user),
          { resource: 'projectasset', id, production: row.production },
          row,
          after,
          [...FIELDS, 'date_mod'],
        )
        return yield* detail(after, user)
      })
    },

    /** Online or offline (the watcher: the bundle folder vanished or came back), with history. */
    *setOnline(ids: number[], online: boolean, by: Actor): Work<void> {
      yield* tx(function* () {
        for (const id of ids) {
          const row = yield* one(db.select().from(projectAssets).where(eq(projectAssets.id, id)))
          if (!row || row.is_production === online) continue
          yield* run(
            db
              .update(projectAssets)
              .set({ is_production: online, date_mod: isoTimestamp() })
              .where(eq(projectAssets.id, id)),
          )
          yield* history.record(by, {
            resource: 'projectasset',
            id,
            action: 'update',
            production: row.production,
            changes: { is_production: { old: !online, new: online } },
          })
        }
      })
    },

    /**
     * A project made where its folder is: the folder is made and counted on disk between two runs
     * of work (the checks, then the insert), so the service runs them itself.
     */
    async create(body: Body, user: Principal): Promise<Row> {
      requireFileWork() // the project's folder is made and counted
      const { production, path, device, pathFile, dateCrt, store } = await port.run(
        (function* () {
          const production = yield* productionForWrite(
            db,
            user,
            { id: body.production_id, name: body.production_name },
            { id: 'production_id', name: 'production_name' },
          )
          const { path, device } = yield* bundleOnDevice(body.bundle_root, '/bundle_root')
          yield* checkTerritory(path, user, production.id, 'create')
          const pathFile = pathFileIn(path, body.path_file)
          const dateCrt = dates(body)
          const store = body.meta_field_store ?? {}
          yield* deps.metadata.validateStore(CONTENT_TYPE_IDS.projectasset, store, '/meta_field_store')
          return { production, path, device, pathFile, dateCrt, store }
        })(),
      )
      try {
        makeDirInside(device.path, path)
      } catch (error) {
        throw invalid('/bundle_root', (error as Error).message)
      }
      const files = await totals(path)
      const now = isoTimestamp()
      return port.run(
        (function* () {
          yield* checkBundle(path, device.path)
          return yield* tx(function* () {
            const dateDel = yield* deps.holds.dateDel('projectasset', device.name, production.name, now)
            const row = (yield* one(
              db
                .insert(projectAssets)
                .values({
                  name: body.name,
                  description: body.description ?? '',
                  date_crt: dateCrt ?? null,
                  date_add: now,
                  date_mod: now,
                  date_del: dateDel,
                  meta_field_store: store,
                  status_asset: 6,
                  status_asset_description: 'ASSET_DONE',
                  status_editing: body.status_editing ?? 0,
                  status_approval: body.status_approval ?? 0,
                  path_file: pathFile,
                  bundle_root: path,
                  type: body.type ?? typeOf(pathFile),
                  is_archive: body.is_archive ?? false,
                  is_production: true,
                  files_count: files.count,
                  files_bytes: files.bytes,
                  name_editor: body.name_editor ?? '',
                  name_studio: body.name_studio ?? '',
                  production: production.id,
                  device: device.id,
                })
                .returning(),
            ))!
            yield* history.record(actorOf(user), {
              resource: 'projectasset',
              id: row.id,
              action: 'create',
              production: row.production,
              changes: history.snapshot(row, FIELDS, 'create'),
            })
            return row
          })
        })(),
      )
    },

    /**
     * The new project (status 0, not in production) and the task that copies its files. The
     * disk is looked at between two runs of work (the checks, then the writes), so the service
     * runs them itself.
     */
    async copy(
      body: Body & { copy_of: number },
      share: boolean,
      user: Principal,
    ): Promise<{ row: Row; task: QueuedTask }> {
      requireFileWork()
      requirePerm(user, 'browser.copy_projectasset')
      if (share) requirePerm(user, 'browser.share_production_asset')
      const { source, production, target } = await port.run(
        (function* () {
          const source = yield* one(db.select().from(projectAssets).where(eq(projectAssets.id, body.copy_of)))
          if (!source || !canRead(user, source.production)) throw invalid('/copy_of', NO_PROJECT)
          if (source.deleting) throw conflict('The source project asset is being deleted.')
          if (!source.is_production)
            throw invalid('/copy_of', 'The source project asset is not in production (its files are not online).')
          const production = yield* productionForWrite(
            db,
            user,
            { id: body.production_id, name: body.production_name },
            { id: 'production_id', name: 'production_name' },
          )
          const target = yield* bundleOnDevice(body.bundle_root, '/bundle_root')
          yield* checkTerritory(target.path, user, production.id, 'copy')
          return { source, production, target }
        })(),
      )
      if (
        target.path === source.bundle_root ||
        isInside(source.bundle_root, target.path) ||
        isInside(target.path, source.bundle_root)
      )
        throw invalid('/bundle_root', 'The copy cannot be inside the source bundle, nor contain it.')
      // The device's folder must be there now, as for a rescan: a 409 at once, not a task that fails later.
      await requireOnline(
        target.device,
        'there is nowhere to copy to',
        `The device ${target.device.id} ("${target.device.name}", ${target.device.path})`,
      )
      if (!(await isMissingOrEmpty(target.path)))
        throw invalid('/bundle_root', 'The target folder exists and is not empty; a copy never overwrites.')
      const dateCrt = body.date_crt === undefined ? source.date_crt : dates(body)
      const pathFile = source.path_file ? target.path + restOf(source.bundle_root, source.path_file) : ''
      // The folder the copy will read is the one there now: the task checks it still is.
      const sourceIdentity = identityOf(source.bundle_root)
      if (!sourceIdentity) throw invalid('/copy_of', 'The source project folder is missing or not a folder.')
      return port.run(
        (function* () {
          const sourceDevice = (yield* one(db.select().from(devices).where(eq(devices.id, source.device))))!
          const linked = yield* all(
            db
              .select({ id: mediaAssets.id, production: mediaAssets.production })
              .from(projectAssetLinks)
              .innerJoin(mediaAssets, eq(mediaAssets.id, projectAssetLinks.asset_id))
              .where(eq(projectAssetLinks.project_id, source.id)),
          )
          const now = isoTimestamp()
          yield* checkBundle(target.path, target.device.path)
          const still = yield* one(
            db.select({ d: projectAssets.deleting }).from(projectAssets).where(eq(projectAssets.id, source.id)),
          )
          if (still?.d !== false) throw conflict('The source project asset is being deleted.')

          const { row, taskId } = yield* tx(function* () {
            const dateDel = yield* deps.holds.dateDel('projectasset', target.device.name, production.name, now)
            const row = (yield* one(
              db
                .insert(projectAssets)
                .values({
                  name: body.name,
                  description: body.description ?? source.description,
                  date_crt: dateCrt ?? null,
                  date_add: now,
                  date_mod: now,
                  date_del: dateDel,
                  meta_field_store: source.meta_field_store,
                  status_asset: 0,
                  status_asset_description: 'NEW',
                  status_editing: source.status_editing,
                  status_approval: body.status_approval ?? source.status_approval,
                  path_file: pathFile,
                  bundle_root: target.path,
                  type: source.type,
                  is_archive: source.is_archive,
                  is_production: false,
                  files_count: 0,
                  files_bytes: 0,
                  name_editor: body.name_editor ?? source.name_editor,
                  name_studio: body.name_studio ?? source.name_studio,
                  production: production.id,
                  device: target.device.id,
                  copy_of: source.id,
                })
                .returning(),
            ))!
            yield* history.record(actorOf(user), {
              resource: 'projectasset',
              id: row.id,
              action: 'create',
              production: row.production,
              changes: { ...history.snapshot(row, FIELDS, 'create'), copy_of: { old: null, new: source.id } },
            })
            if (linked.length)
              yield* history.record(actorOf(user), {
                resource: 'projectasset',
                id: row.id,
                action: 'link',
                production: row.production,
                changes: yield* linkChanges(
                  [],
                  linked.map((a) => a.id),
                ),
              })
            for (const asset of linked) {
              yield* run(db.insert(projectAssetLinks).values({ project_id: row.id, asset_id: asset.id }))
              if (share && asset.production !== production.id && canRead(user, asset.production))
                yield* run(
                  db
                    .insert(mediaAssetShares)
                    .values({ asset_id: asset.id, production_id: production.id })
                    .onConflictDoNothing(),
                )
            }
            // The runner queues the task inside this transaction.
            const task = yield* deps.runner.enqueue({
              kind: 'copy',
              target: { projectasset: row.id },
              production: production.id,
              params: {
                source: source.bundle_root,
                source_device: sourceDevice.path,
                target: target.path,
                device: target.device.path,
                user: user.id,
                identity: sourceIdentity,
              },
            })
            return { row, taskId: task.id }
          })
          // Read in the same run as the commit: the runner claims the task in a later microtask.
          return { row, task: yield* taskRef(taskId) }
        })(),
      )
    },

    /**
     * Marks the project as being deleted and queues the removal of its folder (202); answers that
     * task, or the one already queued or running when the delete was asked for before.
     */
    *remove(id: number, user: Principal): Work<QueuedTask> {
      requireFileWork()
      const row = yield* one(db.select().from(projectAssets).where(eq(projectAssets.id, id)))
      if (!row || !canRead(user, row.production)) throw new AppError(404, 'does_not_exist', NO_PROJECT)
      requireWrite(user, row.production)
      yield* checkTerritory(row.bundle_root, user, row.production, false)
      // A delete would take catalogued files of another production with it (docs/api.md, Permissions).
      const foreign = yield* deps.media.countUnder(row.bundle_root, row.production)
      if (foreign)
        throw conflict(
          `The project folder holds ${foreign} catalogued media file(s) of another production; a delete would remove them.`,
        )
      const open = yield* openTasksOfProject(db, id)
      const pending = open.find((t) => t.kind === 'delete')
      if (pending) return { id: pending.id, state: pending.state }
      const copyingFrom = yield* openCopyFrom(db, row.bundle_root)
      if (copyingFrom)
        throw conflict(`The project asset is being copied (task ${copyingFrom.id}); delete it when the copy has ended.`)
      const now = isoTimestamp()
      const device = (yield* one(db.select().from(devices).where(eq(devices.id, row.device))))!
      // The folder to remove is the one there now (null: already gone, and any folder made there
      // later is someone else's); the task checks it still is. Looked at before the transaction,
      // whose body runs statements only.
      const identity = identityOf(row.bundle_root) ?? null
      const task = yield* tx(function* () {
        yield* run(
          db
            .update(projectAssets)
            .set({ deleting: true, is_production: false, date_del: now, date_mod: now })
            .where(eq(projectAssets.id, id)),
        )
        yield* history.updated(
          actorOf(user),
          { resource: 'projectasset', id, production: row.production },
          row,
          { ...row, is_production: false, date_del: now },
          FIELDS,
        )
        // The runner queues the task inside this transaction.
        return yield* deps.runner.enqueue({
          kind: 'delete',
          target: { projectasset: id },
          production: row.production,
          params: { bundle_root: row.bundle_root, device: device.path, user: user.id, identity },
        })
      })
      for (const t of open)
        if (t.kind === 'copy') deps.runner.cancel(t.id, 'cancelled: the project asset is being deleted')
      return yield* taskRef(task.id)
    },

    *link(id: number, body: unknown, user: Principal, mode: 'link' | 'unlink') {
      const project = yield* readable(id, user)
      requireWrite(user, project.production)
      if (project.deleting) throw conflict('The project asset is being deleted.')
      const b = (body ?? {}) as { asset_list?: unknown; silent_mode?: unknown }
      if (b === null || typeof b !== 'object' || Array.isArray(b))
        throw AppError.plain(400, { detail: 'The body must be a JSON object with asset_list.' })
      if (b.asset_list === undefined) throw AppError.plain(400, { detail: 'asset_list is required.' })
      if (!Array.isArray(b.asset_list))
        throw AppError.plain(400, { detail: 'asset_list must be an array of {asset_id, type} objects.' })
      // A boolean or nothing: "false" as text would have been read as true by a truthiness check,
      // and partial work a client did not ask for cannot be taken back.
      if (b.silent_mode !== undefined && b.silent_mode !== null && typeof b.silent_mode !== 'boolean')
        throw AppError.plain(400, { detail: 'silent_mode must be true or false.' })
      const silent = b.silent_mode === true
      const linkedIds = new Set(
        (yield* all(
          db
            .select({ id: projectAssetLinks.asset_id })
            .from(projectAssetLinks)
            .where(eq(projectAssetLinks.project_id, id)),
        )).map((l) => l.id),
      )

      const good: Ref[] = []
      const invalidAssets: unknown[] = []
      for (const [index, raw] of (b.asset_list as unknown[]).entries()) {
        const problem = yield* semanticError(raw, mode, linkedIds, user)
        if (!problem) {
          good.push(raw as Ref)
          continue
        }
        if (!silent) throw AppError.plain(422, { detail: `asset_list[${index}]: ${problem}` })
        const e = (raw ?? {}) as { asset_id?: unknown; type?: unknown }
        invalidAssets.push({ asset_id: e.asset_id ?? null, type: e.type ?? null })
      }

      const ref = (r: Ref) => ({ asset_id: r.asset_id, type: r.type })
      const before = [...linkedIds]
      // One history row per request that changed the links: each kind's linked ids before and after.
      function* noteLinks(): Work<void> {
        const changes = yield* linkChanges(before, [...linkedIds])
        if (Object.keys(changes).length)
          yield* history.record(actorOf(user), {
            resource: 'projectasset',
            id,
            action: mode,
            production: project.production,
            changes,
          })
      }
      return yield* tx(function* () {
        if (mode === 'unlink') {
          for (const r of good) {
            yield* run(
              db
                .delete(projectAssetLinks)
                .where(and(eq(projectAssetLinks.project_id, id), eq(projectAssetLinks.asset_id, r.asset_id))),
            )
            linkedIds.delete(r.asset_id)
          }
          yield* touch(id, project.date_mod)
          yield* noteLinks()
          return { unlinked_assets: good.map(ref), invalid_assets: invalidAssets }
        }
        const fresh: Ref[] = []
        const already: Ref[] = []
        for (const r of good) {
          if (linkedIds.has(r.asset_id)) already.push(r)
          else {
            yield* run(db.insert(projectAssetLinks).values({ project_id: id, asset_id: r.asset_id }))
            linkedIds.add(r.asset_id)
            fresh.push(r)
          }
        }
        yield* touch(id, project.date_mod)
        yield* noteLinks()
        return {
          newly_linked_assets: fresh.map(ref),
          already_linked_assets: already.map(ref),
          invalid_assets: invalidAssets,
        }
      })
    },
  }

  /** date_mod moves (past `previous`, the record's as read, even within the clock's millisecond). */
  function* touch(id: number, previous: string): Work<void> {
    yield* run(
      db
        .update(projectAssets)
        .set({ date_mod: isoTimestampAfter(previous) })
        .where(eq(projectAssets.id, id)),
    )
  }

  /** Why an asset_list entry cannot be linked or unlinked, or undefined when it can. */
  function* semanticError(
    raw: unknown,
    mode: 'link' | 'unlink',
    linked: Set<number>,
    user: Principal,
  ): Work<string | undefined> {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return 'each entry is an object {asset_id, type}'
    const { asset_id, type } = raw as { asset_id?: unknown; type?: unknown }
    if (typeof type !== 'string' || !MEDIA_TYPES.includes(type as MediaType))
      return `unsupported type ${JSON.stringify(type ?? null)}; allowed types: ${MEDIA_TYPES.join(', ')}`
    if (typeof asset_id !== 'number' || !Number.isInteger(asset_id) || asset_id < 1)
      return 'asset_id must be a positive integer'
    const asset = yield* one(
      db
        .select({ kind: mediaAssets.kind, production: mediaAssets.production })
        .from(mediaAssets)
        .where(eq(mediaAssets.id, asset_id)),
    )
    if (!asset || asset.kind !== type || !(yield* assetReadable(user, { id: asset_id, production: asset.production })))
      return `no ${type} asset with id ${asset_id}`
    if (mode === 'unlink' && !linked.has(asset_id)) return `${type} asset ${asset_id} is not linked to this project`
    return undefined
  }
}

export type ProjectAssets = ReturnType<typeof createProjectAssets>

/** A project asset on a device as the watcher's scan judges it (projectsOnDevice). */
export type ProjectOnDevice = Pick<Row, 'id' | 'bundle_root' | 'is_production' | 'is_archive' | 'deleting'>

/**
 * The project assets on a device, as the watcher's scan judges them (docs/watcher.md): a project
 * whose bundle folder vanished goes offline, one whose folder is back comes online, one being
 * deleted is left alone.
 */
export function* projectsOnDevice(db: Db, device: number): Work<ProjectOnDevice[]> {
  return yield* all(
    db
      .select({
        id: projectAssets.id,
        bundle_root: projectAssets.bundle_root,
        is_production: projectAssets.is_production,
        is_archive: projectAssets.is_archive,
        deleting: projectAssets.deleting,
      })
      .from(projectAssets)
      .where(eq(projectAssets.device, device)),
  )
}

/**
 * Online or offline without history: the scan's write when it is built without this service (tests
 * of the scan alone). The service's setOnline is the same write, with history.
 */
export function* setOnlineUnrecorded(db: Db, ids: number[], online: boolean): Work<void> {
  yield* run(
    db
      .update(projectAssets)
      .set({ is_production: online, date_mod: isoTimestamp() })
      .where(inArray(projectAssets.id, ids)),
  )
}
