// Verifying an asset's files (docs/api.md, Media assets and Project assets, "Verifying the files"):
// POST /api/{kind}assets/{id}/verify/ queues a task (kind verify) that hashes the asset's files
// and compares them with what was recorded of them (check.ts):
// - a project: every file of its bundle folder against the nearest ASC MHL history at the bundle
//   or above it on its device (a project copy writes one at the bundle's root);
// - a media asset: its file in production and its archive copy (archive_details.archive_handle),
//   each against the nearest history above it that records it (a card's, the archive's), walking
//   up to its device's folder and never above; where none records it, against the hash the asset
//   keeps (technical.hashes.xxh64, written by a move that copied the file). With neither, the task
//   fails saying so.
// Nothing is written on disk. The catalogue gets one write: an asset that kept no hash keeps the
// hash of its file once the file verified against a history (never a hash that failed: that is
// the damage, not what the file should hold), through the media service's technical update, so
// the history shows who asked for it.
import { fstatSync } from 'node:fs'
import { eq } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Port, type Work, all, one, tx } from '../../db/port.ts'
import { devices, projectAssets } from '../../db/tables.ts'
import { AppError, noSuchRecord, notFound } from '../../http/errors.ts'
import { close } from '../../storage/dirfd.ts'
import { CancelledError, describe } from '../../storage/errors.ts'
import { hashFile } from '../../storage/hash.ts'
import { MHL_FOLDER, MhlError } from '../../storage/mhl.ts'
import { below, deviceFor, fileOnDevice, lastName, parentFolder } from '../../storage/paths.ts'
import { requireFileWork } from '../../storage/platform.ts'
import { openFileInside } from '../../storage/read.ts'
import type { VerifyParams } from '../../tasks/kinds.ts'
import type { Handler, Runner, TaskOf } from '../../tasks/runner.ts'
import { openCatalogued } from '../assetimport/proxy.task.ts'
import { namesForLog } from '../../tasks/names.ts'
import { type Actor, actorOf, system } from '../history/service.ts'
import { EDIT_CODENAMES, type MediaRow, TITLES } from '../mediaassets/model.ts'
import type { MediaAssets } from '../mediaassets/service.ts'
import { canRead, canReadAsset, canWrite, requirePerm, requireWrite } from '../users/access.ts'
import type { Principal, Users } from '../users/service.ts'
import {
  type FolderReport,
  type Mismatch,
  VerifyError,
  checkFolder,
  joinRel,
  nearestHistory,
  openDevice,
} from './check.ts'

export type VerifyKind = VerifyParams['kind']
export const VERIFY_KINDS: readonly VerifyKind[] = ['audio', 'image', 'video', 'project']

/**
 * What asking for a verification needs, besides write access to the asset's production: the
 * codename of an update of that kind. Not read access alone: the task reads every byte of the
 * asset's files (a project's whole bundle, a camera file of hundreds of gigabytes) from the
 * production's storage, which is the load of a proxy remake, and it writes into the record (the
 * hash an asset did not keep yet goes into its technical, in the history as the user's change).
 * Both are what an update of the asset may do, so a verification needs what an update needs.
 */
export const VERIFY_CODENAMES: Record<VerifyKind, string> = {
  audio: EDIT_CODENAMES.audio.change,
  image: EDIT_CODENAMES.image.change,
  video: EDIT_CODENAMES.video.change,
  project: 'browser.change_projectasset',
}

/** The model name of each kind, as its 404 says it. */
export const VERIFY_TITLES: Record<VerifyKind, string> = { ...TITLES, project: 'ProjectAsset' }

/** How many paths each list of a result holds at most; `truncated` gives the whole count of a list that was cut. */
export const LISTED = 100

/** What a verify task's result holds (docs/api.md, Media assets, "Verifying the files"). */
export type VerifyResult = {
  /** Files found as recorded. */
  verified: number
  failed: Mismatch[]
  missing: string[]
  /** A project's files that no history records (always empty for a media asset). */
  new: string[]
  /** Files recorded with other hash formats only (md5, xxh128, ...): not checked. */
  unverifiable?: { path: string; formats: string[] }[]
  /** Files that could not be read, with the reason. */
  unreadable?: { path: string; error: string }[]
  /** The `ascmhl/` folder the asset's main file (a project: its bundle) was checked against; null: technical.hashes.xxh64. */
  history: string | null
  /** A media asset's files, each with what it was checked against (an `ascmhl/` folder, or technical.hashes.xxh64). */
  checked?: { path: string; against: string }[]
  /** The xxh64 found of the main file (a media asset's file, or its archive copy when offline; a project's path_file), or null. */
  xxh64: string | null
  /** True when the asset kept no hash and now keeps the one found (its file verified). */
  kept?: true
  /** The whole count of each list cut to LISTED. */
  truncated?: Record<string, number>
}

type Deps = { media: MediaAssets; runner: Runner }

export function createVerify(db: Db, deps: Deps) {
  const { media, runner } = deps
  return {
    /**
     * POST /api/{kind}assets/{id}/verify/: queues a verification of the asset's files (a second
     * request while one waits joins it). 404 for an asset the user cannot read (or of another
     * kind), 403 without the codename or write access, 409 when there is nothing to read.
     */
    *queue(kind: VerifyKind, id: number, user: Principal): Work<TaskOf<'verify'>> {
      requireFileWork()
      let production: number
      if (kind === 'project') {
        const row = yield* one(db.select().from(projectAssets).where(eq(projectAssets.id, id)))
        if (!row || !canRead(user, row.production)) throw notFound(noSuchRecord(VERIFY_TITLES.project))
        requirePerm(user, VERIFY_CODENAMES.project)
        requireWrite(user, row.production)
        if (row.deleting)
          throw new AppError(409, 'conflict', 'The project asset is being deleted: there is nothing to verify.')
        production = row.production
      } else {
        const row = yield* media.byId(id)
        if (!row || row.kind !== kind || !(yield* canReadAsset(db, user, row)))
          throw notFound(noSuchRecord(TITLES[kind]))
        requirePerm(user, VERIFY_CODENAMES[kind])
        requireWrite(user, row.production)
        if (!row.is_production && !archiveHandleOf(row))
          throw new AppError(
            409,
            'conflict',
            'The asset has no file in production (offline) and no archive copy: there is nothing to verify.',
          )
        production = row.production
      }
      // The runner writes the task (or merges it with one queued) on the same connection, inside this transaction.
      const { id: taskId } = yield* tx(function* () {
        return yield* runner.enqueue({
          kind: 'verify',
          target: { [`${kind}asset`]: id },
          production,
          params: { asset: id, kind, user: user.id },
          key: `verify:${kind}:${id}`,
          merge: (queued, added) => ({ ...queued, ...added }),
        })
      })
      return (yield* runner.get(taskId)) as TaskOf<'verify'>
    },
  }
}

export type Verify = ReturnType<typeof createVerify>

/** The archive copy of an archived asset (archive/service.ts writes it), or undefined. */
const archiveHandleOf = (row: MediaRow): string | undefined => {
  const handle = (row.archive_details as Record<string, unknown>).archive_handle
  return row.is_archive && typeof handle === 'string' && handle ? handle : undefined
}

/** The xxh64 an asset keeps in technical.hashes (a move's, an archive's, a verification's), or undefined. */
export function keptHash(technical: Record<string, unknown>): string | undefined {
  const hashes = technical.hashes
  const value = hashes && typeof hashes === 'object' ? (hashes as Record<string, unknown>).xxh64 : undefined
  return typeof value === 'string' && /^[0-9a-fA-F]{16}$/.test(value) ? value.toLowerCase() : undefined
}

/** Lists cut to LISTED, with the whole counts of those cut. */
function cut<T extends Record<string, unknown>>(result: T): T & { truncated?: Record<string, number> } {
  const truncated: Record<string, number> = {}
  const out: Record<string, unknown> = { ...result }
  for (const [key, value] of Object.entries(result))
    if (Array.isArray(value) && value.length > LISTED) {
      truncated[key] = value.length
      out[key] = value.slice(0, LISTED)
    }
  return (Object.keys(truncated).length ? { ...out, truncated } : out) as T & { truncated?: Record<string, number> }
}

type TaskDeps = { media: MediaAssets; users: Users }

export function verifyHandler(port: Port, deps: TaskDeps): Handler<'verify'> {
  const { media } = deps
  const { db } = port
  return async ({ task, signal, progress, report }) => {
    const p = task.params
    const askedBy = p.user === undefined ? undefined : await port.run(deps.users.principalById(p.user))
    if (p.user !== undefined && !askedBy) throw new Error('the user who asked for the verification no longer exists')
    const by: Actor = askedBy ? actorOf(askedBy, 'task') : system('task')
    // Checked again as the task starts (docs/api.md, Permissions): what the request needed.
    const allowed = (production: number) => {
      if (!askedBy) return
      if (!canWrite(askedBy, production))
        throw new Error(
          `the user who asked for the verification no longer has write access to production ${production}`,
        )
      const codename = VERIFY_CODENAMES[p.kind]
      if (!askedBy.is_superuser && !askedBy.perms.has(codename))
        throw new Error(`the user who asked for the verification no longer has ${codename}`)
    }
    const every = await port.run(all(db.select().from(devices)))
    try {
      if (p.kind === 'project') {
        const row = await port.run(one(db.select().from(projectAssets).where(eq(projectAssets.id, p.asset))))
        if (!row) throw new Error('the project asset is gone')
        allowed(row.production)
        if (row.deleting) throw new Error('the project asset is being deleted')
        report({ asset: row.id, asset_type: 'projectasset', bundle_root: row.bundle_root })
        const device = every.find((d) => d.id === row.device)
        if (!device) throw new Error('the project folder lies on no device')
        const nearest = nearestHistory(device.path, row.bundle_root)
        if (!nearest)
          throw new Error(
            `no ASC MHL history at ${row.bundle_root} or above it on its device: nothing to verify against (a project copy writes one at its root)`,
          )
        const root = openDevice(device.path, nearest.at)
        let checked: FolderReport
        try {
          progress({ step: 'verify', percent: 0 })
          checked = await checkFolder(root, nearest.root, nearest.rel, {
            signal,
            onProgress: (n) =>
              progress({
                files_done: n.files,
                files_total: n.filesTotal,
                bytes_done: n.bytes,
                percent: n.filesTotal ? (n.files / n.filesTotal) * 100 : 100,
              }),
          })
        } finally {
          close(root)
        }
        // Paths as the project's folder names them.
        const inBundle = (path: string) =>
          nearest.rel && path.startsWith(`${nearest.rel}/`) ? path.slice(nearest.rel.length + 1) : path
        const projectFile = row.path_file ? below(row.bundle_root, row.path_file) : undefined
        const main = projectFile && checked.found.find((f) => inBundle(f.path) === projectFile.replaceAll('\\', '/'))
        const result: VerifyResult = {
          verified: checked.verified.length,
          failed: checked.failed.map((f) => ({ ...f, path: inBundle(f.path) })),
          missing: checked.missing.map(inBundle),
          new: checked.new.map(inBundle),
          ...(checked.unverifiable.length
            ? { unverifiable: checked.unverifiable.map((u) => ({ ...u, path: inBundle(u.path) })) }
            : {}),
          ...(checked.unreadable.length
            ? { unreadable: checked.unreadable.map((u) => ({ ...u, path: inBundle(u.path) })) }
            : {}),
          history: checked.history,
          xxh64: main ? main.xxh64 : null,
        }
        report(cut(result))
        return
      }

      const asset = await port.run(media.byId(p.asset))
      if (!asset || asset.kind !== p.kind) throw new Error('the asset is gone')
      allowed(asset.production)
      report({ asset: asset.id, asset_type: `${asset.kind}asset`, path_file: asset.path_file })
      const handle = archiveHandleOf(asset)
      const files: { path: string; open: () => number | undefined }[] = []
      if (asset.is_production)
        files.push({
          path: asset.path_file,
          open: () => (fileOnDevice(every, asset.path_file).stat ? openCatalogued(every, asset) : undefined),
        })
      if (handle)
        files.push({
          path: handle,
          open: () => {
            const device = deviceFor(every, handle)
            if (!device) throw new Error(`${handle} lies on no device`)
            return openFileInside(device.path, device.path, handle)?.fd
          },
        })
      if (!files.length) throw new Error('the asset has no file in production (offline) and no archive copy')
      const kept = keptHash(asset.technical)
      // What each file is checked against: the nearest history that records it, else the kept hash.
      const plans = files.map((file) => {
        const device = deviceFor(every, file.path)
        if (!device) throw new Error(`${file.path} lies on no device`)
        const nearest = nearestHistory(device.path, parentFolder(file.path), lastName(file.path))
        if (!nearest && kept === undefined)
          throw new Error(
            `no ASC MHL history between ${file.path} and its device's folder records it, and the asset keeps no technical.hashes.xxh64: nothing to verify against`,
          )
        return { ...file, nearest }
      })

      const result: VerifyResult = {
        verified: 0,
        failed: [],
        missing: [],
        new: [],
        history: plans[0]!.nearest?.history ? ascmhlOf(plans[0]!.nearest.root) : null,
        checked: plans.map((plan) => ({
          path: plan.path,
          against: plan.nearest ? ascmhlOf(plan.nearest.root) : 'technical.hashes.xxh64',
        })),
        xxh64: null,
      }
      const unverifiable: { path: string; formats: string[] }[] = []
      let mainVerifiedByHistory = false
      progress({ step: 'verify', files_done: 0, files_total: plans.length, percent: 0 })
      let bytesBefore = 0
      for (const [i, plan] of plans.entries()) {
        const fd = plan.open()
        if (fd === undefined) {
          result.missing.push(plan.path)
          progress({ files_done: i + 1 })
          continue
        }
        let found: string
        try {
          const size = fstatSync(fd).size
          progress({ bytes_total: bytesBefore + size })
          found = (
            await hashFile(fd, {
              signal,
              onProgress: (bytes) =>
                progress({ bytes_done: bytesBefore + bytes, percent: size ? (bytes / size) * 100 : 100 }),
            })
          ).xxh64
          bytesBefore += size
        } finally {
          close(fd)
        }
        progress({ files_done: i + 1 })
        if (i === 0) result.xxh64 = found
        const expected = plan.nearest?.expected
        if (expected && expected.recorded === undefined) {
          unverifiable.push({ path: plan.path, formats: expected.formats })
          continue
        }
        const recorded = expected?.recorded ?? kept!
        if (recorded === found) {
          result.verified++
          if (i === 0 && plan.nearest) mainVerifiedByHistory = true
        } else result.failed.push({ path: plan.path, recorded, found })
      }
      if (unverifiable.length) result.unverifiable = unverifiable
      const keep = kept === undefined && mainVerifiedByHistory ? result.xxh64 : undefined
      if (keep) result.kept = true
      report(result)
      if (!keep) return
      const path = asset.path_file
      // The last write, with the task's end: only while the asset still keeps no hash and has that file.
      return function* () {
        const now = yield* media.byId(asset.id)
        if (!now || now.path_file !== path || keptHash(now.technical) !== undefined) return
        const hashes = now.technical.hashes
        yield* media.setTechnical(
          now.id,
          {
            ...now.technical,
            hashes: { ...(hashes && typeof hashes === 'object' ? hashes : {}), xxh64: keep },
          },
          by,
        )
      }
    } catch (error) {
      if (error instanceof CancelledError) throw error
      if (signal.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
      if (error instanceof MhlError || error instanceof VerifyError) throw new Error(error.message)
      throw new Error(describe(error))
    }
  }
}

/** The `ascmhl/` folder of a history's root. */
const ascmhlOf = (root: string) => joinRel(root, MHL_FOLDER)

/** What a verify task's log lines name: the asset and its file or folder (by id alone until read: namesForLog). */
export const verifySubject = (port: Port, media: MediaAssets) => {
  const folderOf = namesForLog<string | undefined>(port)
  const pathOf = namesForLog<string | undefined>(port)
  return (task: TaskOf<'verify'>) => {
    const { kind, asset } = task.params
    if (kind === 'project') {
      const folder = folderOf(asset, function* () {
        const row = yield* one(
          port.db
            .select({ bundle_root: projectAssets.bundle_root })
            .from(projectAssets)
            .where(eq(projectAssets.id, asset)),
        )
        return row?.bundle_root
      })
      return { projectasset: asset, ...(folder && { folder: folder.value ?? '(the project is gone)' }) }
    }
    const path = pathOf(asset, () => media.pathOf(asset))
    return { [`${kind}asset`]: asset, ...(path && { path: path.value ?? '(the asset is gone)' }) }
  }
}
