// Project assets: create, copy, delete, link and unlink (api.md 4.1, service.md 6 and 7).
// Copy and delete only write rows here (the record and its task, in one transaction); the
// work on disk is done by copy.task.ts and delete.task.ts.
import { and, eq, inArray, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { MEDIA_KINDS, type MediaKind, devices, mediaAssetShares, mediaAssets, projectAssetLinks, projectAssets, tasks } from '../../db/schema.ts'
import { AppError, dateField, field, forbidden, invalid, noSuchRecord, notFound } from '../../http/errors.ts'
import { cleanPath, dirOnDevice, isInside, makeDirInside } from '../../storage/paths.ts'
import { bundleProblem, territoryProblem } from './bundles.ts'
import { identityOf } from '../../storage/fs.ts'
import { isMissingOrEmpty, totals } from '../../storage/fs.ts'
import type { Runner } from '../../tasks/runner.ts'
import { isoTimestamp } from '../../util/time.ts'
import type { HoldDurations } from '../assetholddurations/service.ts'
import { CONTENT_TYPE_IDS, type CustomMetadata } from '../custommetadata/service.ts'
import { mediaToApi } from '../mediaassets/model.ts'
import type { MediaAssets } from '../mediaassets/service.ts'
import { productionForWrite } from '../productions/lookup.ts'
import { canRead, canReadAsset, requirePerm, requireWrite } from '../users/access.ts'
import type { Principal } from '../users/service.ts'
import { type ProjectAssetCreate, type TaskRef, typeOf } from './model.ts'

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

export function createProjectAssets(db: Db, deps: { runner: Runner; holds: HoldDurations; metadata: CustomMetadata; media: MediaAssets }) {
  const linkedOf = db.select().from(mediaAssets).innerJoin(projectAssetLinks, eq(projectAssetLinks.asset_id, mediaAssets.id))
    .where(eq(projectAssetLinks.project_id, sql.placeholder('id'))).orderBy(mediaAssets.id).prepare()
  const allDevices = () => db.select().from(devices).all()

  /** The record as the user sees it: linked media assets the user cannot read are left out. */
  function toApi(row: Row, user: Principal) {
    const linked = { audio: [] as MediaApi[], image: [] as MediaApi[], video: [] as MediaApi[] }
    for (const { media_assets: a } of linkedOf.all({ id: row.id }))
      if (canReadAsset(db, user, a)) linked[a.kind].push(mediaToApi(a))
    return {
      id: row.id,
      audio_assets: linked.audio, image_assets: linked.image, video_assets: linked.video,
      name: row.name, description: row.description,
      date_crt: row.date_crt, date_add: row.date_add, date_mod: row.date_mod, date_del: row.date_del,
      meta_field_store: row.meta_field_store,
      status_asset: row.status_asset, status_asset_description: row.status_asset_description,
      status_editing: row.status_editing, status_approval: row.status_approval,
      path_file: row.path_file, bundle_root: row.bundle_root, type: row.type,
      is_archive: row.is_archive, is_production: row.is_production,
      files: { count: row.files_count, bytes: row.files_bytes },
      name_editor: row.name_editor, name_studio: row.name_studio, locked_by: row.locked_by,
      production: row.production, device: row.device,
    }
  }

  function readable(id: number, user: Principal): Row {
    const row = db.select().from(projectAssets).where(eq(projectAssets.id, id)).get()
    if (!row || !canRead(user, row.production)) throw notFound(NO_PROJECT)
    return row
  }

  /** A project folder on a device that may be one (bundles.ts); throws 400 invalid or 409. */
  function bundleOnDevice(value: string, pointer: string) {
    const { path, device } = field(pointer, () => dirOnDevice(allDevices(), value))
    checkBundle(path, device.path, pointer)
    return { path, device }
  }

  /**
   * Run again right before the insert, in the same synchronous stretch, so that two requests
   * that passed the first check while the other was awaiting the disk cannot both land.
   */
  function checkBundle(path: string, devicePath: string, pointer = '/bundle_root') {
    const problem = bundleProblem(db, path, devicePath)
    if (problem?.conflict) throw conflict(problem.detail)
    if (problem) throw invalid(pointer, problem.detail)
  }

  /** Territory (service.md 5): 403 for a folder of a production the user may not write to, else 400. */
  function checkTerritory(path: string, user: Principal, production: number, placing: boolean) {
    const problem = territoryProblem(db, path, user, production, placing)
    if (problem?.forbidden) throw forbidden(problem.detail)
    if (problem) throw invalid('/bundle_root', problem.detail)
  }

  const taskRef = (id: number): QueuedTask => ({ id, state: db.select({ state: tasks.state }).from(tasks).where(eq(tasks.id, id)).get()!.state })

  function dates(body: Pick<Body, 'date_crt'>) {
    return body.date_crt === undefined || body.date_crt === null ? body.date_crt : dateField('/date_crt', body.date_crt)
  }

  function pathFileIn(bundle: string, value: string | undefined): string {
    if (value === undefined || value === '') return ''
    const path = field('/path_file', () => cleanPath(value))
    if (!isInside(bundle, path)) throw invalid('/path_file', 'The project file must lie inside bundle_root.')
    return path
  }

  return {
    toApi,
    readable,

    async create(body: Body, user: Principal) {
      const production = productionForWrite(db, user, { id: body.production_id, name: body.production_name }, { id: 'production_id', name: 'production_name' })
      const { path, device } = bundleOnDevice(body.bundle_root, '/bundle_root')
      checkTerritory(path, user, production.id, true)
      const pathFile = pathFileIn(path, body.path_file)
      const dateCrt = dates(body)
      const store = body.meta_field_store ?? {}
      deps.metadata.validateStore(CONTENT_TYPE_IDS.projectasset, store, '/meta_field_store')
      try {
        makeDirInside(device.path, path)
      } catch (error) {
        throw invalid('/bundle_root', (error as Error).message)
      }
      const files = await totals(path)
      const now = isoTimestamp()
      checkBundle(path, device.path)
      return db.insert(projectAssets).values({
        name: body.name, description: body.description ?? '', date_crt: dateCrt ?? null, date_add: now, date_mod: now,
        date_del: deps.holds.dateDel('projectasset', device.name, production.name, now),
        meta_field_store: store, status_asset: 6, status_asset_description: 'ASSET_DONE',
        status_editing: body.status_editing ?? 0, status_approval: body.status_approval ?? 0,
        path_file: pathFile, bundle_root: path, type: body.type ?? typeOf(pathFile), is_archive: body.is_archive ?? false,
        is_production: true, files_count: files.count, files_bytes: files.bytes,
        name_editor: body.name_editor ?? '', name_studio: body.name_studio ?? '',
        production: production.id, device: device.id,
      }).returning().get()
    },

    /** The new project (status 0, not in production) and the task that copies its files. */
    async copy(body: Body & { copy_of: number }, share: boolean, user: Principal): Promise<{ row: Row; task: QueuedTask }> {
      requirePerm(user, 'browser.copy_projectasset')
      if (share) requirePerm(user, 'browser.share_production_asset')
      const source = db.select().from(projectAssets).where(eq(projectAssets.id, body.copy_of)).get()
      if (!source || !canRead(user, source.production)) throw invalid('/copy_of', NO_PROJECT)
      if (source.deleting) throw conflict('The source project asset is being deleted.')
      if (!source.is_production) throw invalid('/copy_of', 'The source project asset is not in production (its files are not online).')
      const production = productionForWrite(db, user, { id: body.production_id, name: body.production_name }, { id: 'production_id', name: 'production_name' })
      const target = bundleOnDevice(body.bundle_root, '/bundle_root')
      checkTerritory(target.path, user, production.id, true)
      if (target.path === source.bundle_root || isInside(source.bundle_root, target.path) || isInside(target.path, source.bundle_root))
        throw invalid('/bundle_root', 'The copy cannot be inside the source bundle, nor contain it.')
      if (!(await isMissingOrEmpty(target.path))) throw invalid('/bundle_root', 'The target folder exists and is not empty; a copy never overwrites.')
      const dateCrt = body.date_crt === undefined ? source.date_crt : dates(body)
      const pathFile = source.path_file ? target.path + source.path_file.slice(source.bundle_root.length) : ''
      // The folder the copy will read is the one there now: the task checks it still is.
      const sourceIdentity = identityOf(source.bundle_root)
      if (!sourceIdentity) throw invalid('/copy_of', 'The source project folder is missing or not a folder.')
      const sourceDevice = db.select().from(devices).where(eq(devices.id, source.device)).get()!
      const linked = db.select({ id: mediaAssets.id, production: mediaAssets.production }).from(projectAssetLinks)
        .innerJoin(mediaAssets, eq(mediaAssets.id, projectAssetLinks.asset_id)).where(eq(projectAssetLinks.project_id, source.id)).all()
      const now = isoTimestamp()
      checkBundle(target.path, target.device.path)
      if (db.select({ d: projectAssets.deleting }).from(projectAssets).where(eq(projectAssets.id, source.id)).get()?.d !== false)
        throw conflict('The source project asset is being deleted.')

      const { row, taskId } = db.transaction((tx) => {
        const row = tx.insert(projectAssets).values({
          name: body.name, description: body.description ?? source.description, date_crt: dateCrt ?? null,
          date_add: now, date_mod: now, date_del: deps.holds.dateDel('projectasset', target.device.name, production.name, now),
          meta_field_store: source.meta_field_store, status_asset: 0, status_asset_description: 'NEW',
          status_editing: source.status_editing, status_approval: body.status_approval ?? source.status_approval,
          path_file: pathFile, bundle_root: target.path, type: source.type, is_archive: source.is_archive, is_production: false,
          files_count: 0, files_bytes: 0, name_editor: body.name_editor ?? source.name_editor,
          name_studio: body.name_studio ?? source.name_studio, production: production.id, device: target.device.id, copy_of: source.id,
        }).returning().get()
        for (const asset of linked) {
          tx.insert(projectAssetLinks).values({ project_id: row.id, asset_id: asset.id }).run()
          if (share && asset.production !== production.id && canRead(user, asset.production))
            tx.insert(mediaAssetShares).values({ asset_id: asset.id, production_id: production.id }).onConflictDoNothing().run()
        }
        const task = deps.runner.enqueue(tx, {
          kind: 'copy', target: { projectasset: row.id }, production: production.id,
          params: {
            source: source.bundle_root, source_device: sourceDevice.path, target: target.path, device: target.device.path,
            user: user.id, identity: sourceIdentity,
          },
        })
        return { row, taskId: task.id }
      })
      return { row, task: taskRef(taskId) }
    },

    /**
     * Marks the project as being deleted and queues the removal of its folder (202); answers that
     * task, or the one already queued or running when the delete was asked for before.
     */
    remove(id: number, user: Principal): QueuedTask {
      const row = db.select().from(projectAssets).where(eq(projectAssets.id, id)).get()
      if (!row || !canRead(user, row.production)) throw new AppError(404, 'does_not_exist', NO_PROJECT)
      requireWrite(user, row.production)
      checkTerritory(row.bundle_root, user, row.production, false)
      // A delete would take catalogued files of another production with it (service.md 5).
      const foreign = deps.media.countUnder(row.bundle_root, row.production)
      if (foreign) throw conflict(`The project folder holds ${foreign} catalogued media file(s) of another production; a delete would remove them.`)
      const open = db.select().from(tasks).where(and(
        sql`json_extract(${tasks.target}, '$.projectasset') = ${id}`, inArray(tasks.state, ['queued', 'running']),
      )).all()
      const pending = open.find((t) => t.kind === 'delete')
      if (pending) return { id: pending.id, state: pending.state }
      const copyingFrom = db.select({ id: tasks.id }).from(tasks).where(and(
        eq(tasks.kind, 'copy'), inArray(tasks.state, ['queued', 'running']), sql`json_extract(${tasks.params}, '$.source') = ${row.bundle_root}`,
      )).get()
      if (copyingFrom) throw conflict(`The project asset is being copied (task ${copyingFrom.id}); delete it when the copy has ended.`)
      const now = isoTimestamp()
      const device = db.select().from(devices).where(eq(devices.id, row.device)).get()!
      const task = db.transaction((tx) => {
        tx.update(projectAssets).set({ deleting: true, is_production: false, date_del: now, date_mod: now }).where(eq(projectAssets.id, id)).run()
        return deps.runner.enqueue(tx, {
          kind: 'delete', target: { projectasset: id }, production: row.production,
          // The folder to remove is the one there now (null: already gone, and any folder made there
          // later is someone else's); the task checks it still is.
          params: { bundle_root: row.bundle_root, device: device.path, user: user.id, identity: identityOf(row.bundle_root) ?? null },
        })
      })
      for (const t of open) if (t.kind === 'copy') deps.runner.cancel(t.id, 'cancelled: the project asset is being deleted')
      return taskRef(task.id)
    },

    link(id: number, body: unknown, user: Principal, mode: 'link' | 'unlink') {
      const project = readable(id, user)
      requireWrite(user, project.production)
      if (project.deleting) throw conflict('The project asset is being deleted.')
      const b = (body ?? {}) as { asset_list?: unknown; silent_mode?: unknown }
      if (b === null || typeof b !== 'object' || Array.isArray(b)) throw AppError.plain(400, { detail: 'The body must be a JSON object with asset_list.' })
      if (b.asset_list === undefined) throw AppError.plain(400, { detail: 'asset_list is required.' })
      if (!Array.isArray(b.asset_list)) throw AppError.plain(400, { detail: 'asset_list must be an array of {asset_id, type} objects.' })
      // A boolean or nothing: "false" as text would have been read as true by a truthiness check,
      // and partial work a client did not ask for cannot be taken back.
      if (b.silent_mode !== undefined && b.silent_mode !== null && typeof b.silent_mode !== 'boolean')
        throw AppError.plain(400, { detail: 'silent_mode must be true or false.' })
      const silent = b.silent_mode === true
      const linkedIds = new Set(db.select({ id: projectAssetLinks.asset_id }).from(projectAssetLinks).where(eq(projectAssetLinks.project_id, id)).all().map((l) => l.id))

      const good: Ref[] = []
      const invalidAssets: unknown[] = []
      b.asset_list.forEach((raw, index) => {
        const problem = semanticError(raw, mode, linkedIds, user)
        if (!problem) return void good.push(raw as Ref)
        if (!silent) throw AppError.plain(422, { detail: `asset_list[${index}]: ${problem}` })
        const e = (raw ?? {}) as { asset_id?: unknown; type?: unknown }
        invalidAssets.push({ asset_id: e.asset_id ?? null, type: e.type ?? null })
      })

      const ref = (r: Ref) => ({ asset_id: r.asset_id, type: r.type })
      return db.transaction((tx) => {
        if (mode === 'unlink') {
          for (const r of good) tx.delete(projectAssetLinks).where(and(eq(projectAssetLinks.project_id, id), eq(projectAssetLinks.asset_id, r.asset_id))).run()
          touch(tx, id)
          return { unlinked_assets: good.map(ref), invalid_assets: invalidAssets }
        }
        const fresh: Ref[] = []
        const already: Ref[] = []
        for (const r of good) {
          if (linkedIds.has(r.asset_id)) already.push(r)
          else {
            tx.insert(projectAssetLinks).values({ project_id: id, asset_id: r.asset_id }).run()
            linkedIds.add(r.asset_id)
            fresh.push(r)
          }
        }
        touch(tx, id)
        return { newly_linked_assets: fresh.map(ref), already_linked_assets: already.map(ref), invalid_assets: invalidAssets }
      })
    },
  }

  function touch(tx: Pick<Db, 'update'>, id: number) {
    tx.update(projectAssets).set({ date_mod: isoTimestamp() }).where(eq(projectAssets.id, id)).run()
  }

  /** Why an asset_list entry cannot be linked or unlinked, or undefined when it can. */
  function semanticError(raw: unknown, mode: 'link' | 'unlink', linked: Set<number>, user: Principal): string | undefined {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return 'each entry is an object {asset_id, type}'
    const { asset_id, type } = raw as { asset_id?: unknown; type?: unknown }
    if (typeof type !== 'string' || !MEDIA_TYPES.includes(type as MediaType))
      return `unsupported type ${JSON.stringify(type ?? null)}; allowed types: ${MEDIA_TYPES.join(', ')}`
    if (typeof asset_id !== 'number' || !Number.isInteger(asset_id) || asset_id < 1) return 'asset_id must be a positive integer'
    const asset = db.select({ kind: mediaAssets.kind, production: mediaAssets.production }).from(mediaAssets).where(eq(mediaAssets.id, asset_id)).get()
    if (!asset || asset.kind !== type || !canReadAsset(db, user, { id: asset_id, production: asset.production })) return `no ${type} asset with id ${asset_id}`
    if (mode === 'unlink' && !linked.has(asset_id)) return `${type} asset ${asset_id} is not linked to this project`
    return undefined
  }
}

export type ProjectAssets = ReturnType<typeof createProjectAssets>
