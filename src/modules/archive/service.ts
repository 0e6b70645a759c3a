// Archiving and restoring media assets (docs/api.md, Archive and restore). A request is checked
// here and queued as one task per asset; the task (archive, restore) copies the essence, checked
// by read-back (storage/archive.ts), and only then changes the catalogue.
//
// Where an archived file goes: <archive device>/<production codename>/<the file's path relative
// to its own device>, so two productions, or two devices of one production, never collide; the
// ASC MHL history of that production's archive is <archive device>/<production codename>/ascmhl/.
//
// `archive_connector` names the archive device by its id (a number, or digits as text) or by its
// name: medialoopster's clients send the connector they were configured with, which here is the
// device. archive_awps (Archiware P5) needs P5's own connector: 501.
import { closeSync, constants, fstatSync, openSync, readdirSync, statSync } from 'node:fs'
import { eq } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Port, type Work, all, one, tx } from '../../db/port.ts'
import { type MediaKind, contentTypes, devices, productions } from '../../db/tables.ts'
import { AppError, notImplemented } from '../../http/errors.ts'
import { type ArchiveCopyOptions, type VerifiedCopy, copyVerifiedTo, sidecarNames } from '../../storage/archive.ts'
import { describe } from '../../storage/errors.ts'
import { ltfsStartBlock } from '../../storage/dirfd.ts'
import { CancelledError } from '../../storage/fs.ts'
import { MHL_FOLDER, newGeneration } from '../../storage/mhl.ts'
import {
  asFolder,
  below,
  deviceFor,
  fileOnDevice,
  isInside,
  lastName,
  parentFolder,
  relParts,
} from '../../storage/paths.ts'
import { requireFileWork } from '../../storage/platform.ts'
import { removeFileInside } from '../../storage/remove.ts'
import type { ArchiveParams, RestoreParams } from '../../tasks/kinds.ts'
import type { Handler, Runner, TaskOf } from '../../tasks/runner.ts'
import { type Actor, actorOf, system } from '../history/service.ts'
import { openCatalogued } from '../assetimport/proxy.task.ts'
import type { MediaAssets } from '../mediaassets/service.ts'
import { namesForLog } from '../../tasks/names.ts'
import { canReadAsset, canWrite, requirePerm, requireWrite } from '../users/access.ts'
import type { Principal, Users } from '../users/service.ts'

/** The codename archiving and restoring need (with write access to the asset's production). */
export const ARCHIVE_CODENAME = 'browser.archive_mediaasset'

export const ARCHIVE_TYPES = ['archive_std', 'archive_ltfs', 'archive_awps'] as const
export type ArchiveType = (typeof ARCHIVE_TYPES)[number]

export const AWPS_NOT_AVAILABLE =
  'archive_awps needs an Archiware P5 server and its connector, which Reelhouse does not have; archive to a device with archive_std or archive_ltfs. Nothing was done.'

export type ArchiveRequest = {
  content_type_id: number
  asset_id: number
  archive_type: string
  archive_connector: string | number
  purge?: boolean
}
export type RestoreRequest = { content_type_id: number; asset_id: number; path?: string }

const KIND_OF_TYPE: Record<string, MediaKind> = { videoasset: 'video', audioasset: 'audio', imageasset: 'image' }

type DeviceRow = typeof devices.$inferSelect

const bad = (detail: string, pointer?: string) =>
  new AppError(400, 'invalid', detail, pointer ? { pointer } : undefined)

export function createArchive(db: Db, deps: { media: MediaAssets; runner: Runner }) {
  const { media, runner } = deps

  /** The asset a request item names, readable and writable by `user`, or a 400 pointing at the item. */
  function* assetOf(item: { content_type_id: number; asset_id: number }, at: string, user: Principal) {
    const type = yield* one(db.select().from(contentTypes).where(eq(contentTypes.id, item.content_type_id)))
    const kind = type && KIND_OF_TYPE[type.name]
    if (!kind)
      throw bad(
        'content_type_id names no media asset kind (videoasset, audioasset, imageasset).',
        `${at}/content_type_id`,
      )
    const row = yield* media.byId(item.asset_id)
    if (!row || row.kind !== kind || !(yield* canReadAsset(db, user, row)))
      throw bad(`No ${type.name} with id ${item.asset_id}.`, `${at}/asset_id`)
    requirePerm(user, ARCHIVE_CODENAME)
    requireWrite(user, row.production)
    return { row, kind }
  }

  /** The archive device `connector` names among `every` device, or a 400 pointing at it. */
  function archiveDevice(every: DeviceRow[], connector: string | number, at: string) {
    const text = String(connector)
    const device = /^[1-9]\d{0,15}$/.test(text)
      ? every.find((d) => d.id === Number(text))
      : every.find((d) => d.name === text)
    if (!device) throw bad(`No device ${JSON.stringify(text)} (give an archive device's id or name).`, at)
    if (!device.is_archive) throw bad(`The device ${device.name} is not an archive device (is_archive false).`, at)
    return device
  }

  function* queue<K extends 'archive' | 'restore'>(
    tasks: { kind: K; target: Record<string, number>; production: number; params: never; key: string }[],
  ): Work<TaskOf<K>[]> {
    // The runner writes each task on the same connection, inside this transaction: all or none.
    const ids = yield* tx(function* () {
      const queued: number[] = []
      for (const t of tasks) queued.push((yield* runner.enqueue(t as never)).id)
      return queued
    })
    const rows: TaskOf<K>[] = []
    for (const id of ids) rows.push((yield* runner.get(id)) as TaskOf<K>)
    return rows
  }

  return {
    /** POST /api/archiveactivities/: checks every item, then queues one archive task per asset. */
    *archive(items: ArchiveRequest[], user: Principal): Work<TaskOf<'archive'>[]> {
      requireFileWork()
      const every = yield* all(db.select().from(devices))
      const planned = []
      for (const [i, item] of items.entries()) {
        const at = `/${i}`
        if (!(ARCHIVE_TYPES as readonly string[]).includes(item.archive_type))
          throw bad(`archive_type must be one of ${ARCHIVE_TYPES.join(', ')}.`, `${at}/archive_type`)
        const { row, kind } = yield* assetOf(item, at, user)
        if (item.archive_type === 'archive_awps') throw notImplemented(AWPS_NOT_AVAILABLE)
        const device = archiveDevice(every, item.archive_connector, `${at}/archive_connector`)
        if (!row.is_production)
          throw new AppError(
            409,
            'conflict',
            'The asset has no file in production (archive-only or offline): there is nothing to archive.',
            { pointer: `${at}/asset_id` },
          )
        const params: ArchiveParams = {
          asset: row.id,
          kind,
          device: device.id,
          archive_type: item.archive_type as ArchiveParams['archive_type'],
          purge: item.purge === true,
          user: user.id,
        }
        planned.push({
          kind: 'archive' as const,
          target: { [`${kind}asset`]: row.id },
          production: row.production,
          params: params as never,
          key: `archive:${row.id}`,
        })
      }
      return yield* queue(planned)
    },

    /** POST /api/restoreactivities/: checks every item, then queues one restore task per asset. */
    *restore(items: RestoreRequest[], user: Principal): Work<TaskOf<'restore'>[]> {
      requireFileWork()
      const every = yield* all(db.select().from(devices))
      const planned = []
      for (const [i, item] of items.entries()) {
        const at = `/${i}`
        const { row, kind } = yield* assetOf(item, at, user)
        const details = row.archive_details as Record<string, string>
        if (!row.is_archive || !details.archive_handle)
          throw bad('The asset is not archived: there is nothing to restore.', `${at}/asset_id`)
        const production = (yield* one(db.select().from(productions).where(eq(productions.id, row.production))))!
        let path = details.original_path || row.path_file
        if (item.path !== undefined) {
          try {
            path = fileOnDevice(every, item.path).path
          } catch (error) {
            throw bad(`path: ${(error as Error).message}`, `${at}/path`)
          }
          if (!isInside(asFolder(production.storage_root), path))
            throw bad("path must lie inside the production's storage_root.", `${at}/path`)
        }
        const params: RestoreParams = { asset: row.id, kind, path, user: user.id }
        planned.push({
          kind: 'restore' as const,
          target: { [`${kind}asset`]: row.id },
          production: row.production,
          params: params as never,
          key: `restore:${row.id}`,
          startblock: ltfsStartBlock(details.archive_handle),
          handle: details.archive_handle,
        })
      }
      // Restores from tape run in the order of the files on the tape (the LTFS startblock
      // attribute) so the drive winds one way; where no file gives one, in the order of the
      // paths. The runner takes queued tasks in the order they were written.
      planned.sort((a, b) =>
        a.startblock !== undefined && b.startblock !== undefined
          ? a.startblock - b.startblock
          : a.startblock !== undefined
            ? -1
            : b.startblock !== undefined
              ? 1
              : a.handle < b.handle
                ? -1
                : a.handle > b.handle
                  ? 1
                  : 0,
      )
      return yield* queue(planned.map(({ startblock: _s, handle: _h, ...t }) => t))
    },
  }
}

export type Archive = ReturnType<typeof createArchive>

type TaskDeps = { media: MediaAssets; users: Users }

/**
 * What an archive or a restore task checks as it starts (and starts again after a restart): its
 * asset is still there, and the user who asked still exists and may still write its production.
 */
function* startOf(p: { asset: number; user?: number }, deps: TaskDeps, what: 'archive' | 'restore') {
  const askedBy = p.user === undefined ? undefined : yield* deps.users.principalById(p.user)
  if (p.user !== undefined && !askedBy) throw new Error(`the user who asked for the ${what} no longer exists`)
  const asset = yield* deps.media.byId(p.asset)
  if (!asset) throw new Error('the asset is gone')
  if (askedBy && !canWrite(askedBy, asset.production))
    throw new Error(`the user who asked for the ${what} no longer has write access to production ${asset.production}`)
  const by: Actor = askedBy ? actorOf(askedBy, 'task') : system('task')
  return { asset, by }
}

/**
 * Copies the sidecars of the file at `from` (sidecarsBeside) beside `to` on the device at
 * `devicePath`, each checked as the file was (copyVerifiedTo). A sidecar gone since it was listed,
 * or no regular file, is passed over. A failed copy throws with the sidecar's target path.
 */
async function copySidecars(from: string, to: string, devicePath: string, options: ArchiveCopyOptions) {
  const copied: { name: string; copy: VerifiedCopy }[] = []
  for (const name of sidecarsBeside(from)) {
    let fd: number
    try {
      fd = openSync(parentFolder(from) + name, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    } catch {
      continue // gone since it was listed
    }
    const target = parentFolder(to) + name
    try {
      if (!fstatSync(fd).isFile()) continue
      copied.push({ name, copy: await copyVerifiedTo(fd, devicePath, target, options) })
    } catch (error) {
      throw Object.assign(error as Error, { sidecar: target })
    } finally {
      closeSync(fd)
    }
  }
  return copied
}

/** The archive task: copy, checked, to the archive device; history; then the catalogue; then, with purge, the online file. */
export function archiveHandler(port: Port, deps: TaskDeps): Handler<'archive'> {
  const { media } = deps
  const { db } = port
  return async ({ task, signal, progress, report }) => {
    const p = task.params
    const { asset, by, every, production } = await port.run(
      (function* () {
        const { asset, by } = yield* startOf(p, deps, 'archive')
        if (!asset.is_production) throw new Error('the asset has no file in production (archive-only or offline)')
        const every = yield* all(db.select().from(devices))
        const production = yield* one(db.select().from(productions).where(eq(productions.id, asset.production)))
        return { asset, by, every, production: production! }
      })(),
    )
    const archive = every.find((d) => d.id === p.device)
    if (!archive?.is_archive) throw new Error('the archive device is gone or no longer an archive device')
    const own = deviceFor(every, asset.path_file)
    const rel = own && below(own.path, asset.path_file)
    if (!own || !rel) throw new Error('path_file lies on no device')
    const root = asFolder(archive.path + production.codename)
    const handle = root + relParts(rel).join('/')
    report({ asset: asset.id, asset_type: `${asset.kind}asset`, path_file: asset.path_file, archive_handle: handle })
    const tag = String(task.id)
    const source = openCatalogued(every, asset)
    let copied: VerifiedCopy
    try {
      const total = fstatSync(source).size
      progress({ step: 'copy', percent: 0 })
      // With purge the online file goes on the strength of this copy: it is on the disk first.
      copied = await copyVerifiedTo(source, archive.path, handle, {
        signal,
        tag,
        durable: p.purge,
        onProgress: (bytes) => progress({ percent: total ? (bytes / total) * 100 : 100 }),
      })
    } catch (error) {
      throw archiveFailure(error, handle, p.archive_type)
    } finally {
      closeSync(source)
    }
    // The clip's sidecars (its camera XML, XMP, subtitles: storage/archive.ts sidecarNames) go
    // with it into the same folder, each checked the same way.
    progress({ step: 'sidecars' })
    let sidecars: { name: string; copy: VerifiedCopy }[]
    try {
      sidecars = await copySidecars(asset.path_file, handle, archive.path, { signal, tag, durable: p.purge })
    } catch (error) {
      throw archiveFailure(error, (error as { sidecar?: string }).sidecar ?? handle, p.archive_type)
    }
    progress({ step: 'history', percent: 100 })
    const written = newGeneration(
      root,
      [
        { path: handle, copy: copied },
        ...sidecars.map((c) => ({ path: parentFolder(handle) + c.name, copy: c.copy })),
      ].map(({ path, copy }) => ({
        path: path.slice(root.length),
        size: copy.size,
        lastModified: new Date(statSync(path).mtimeMs),
        xxh64: copy.xxh64,
      })),
      { process: 'transfer', comment: `archive of ${asset.kind}asset ${asset.id}` },
    )
    const details = { archive_handle: handle, archive_type: p.archive_type, original_path: asset.path_file }
    report({
      asset: asset.id,
      asset_type: `${asset.kind}asset`,
      archive_handle: handle,
      xxh64: copied.xxh64,
      sidecars: sidecars.map((c) => c.name),
      manifest: `${MHL_FOLDER}/${written.file}`,
      ...(copied.adopted ? { adopted: true } : {}),
    })
    // Purge: the online file goes only once its checked copy is on the archive, and only when it
    // is still the file catalogued (another file put in its place is not ours to remove); then
    // the catalogue says archive-only. A file that cannot be removed leaves the asset online.
    // Its sidecars go after it (they are on the archive too).
    let purged = false
    if (p.purge) {
      try {
        closeSync(openCatalogued(every, asset))
        purged = removeFileInside(own.path, own.path, asset.path_file)
        if (purged)
          for (const c of sidecars) removeFileInside(own.path, own.path, parentFolder(asset.path_file) + c.name)
      } catch (error) {
        report({ asset: asset.id, asset_type: `${asset.kind}asset`, warning: `not purged: ${describe(error)}` })
      }
    }
    return () => media.setArchived(asset.id, details, !purged, copied.xxh64, by)
  }
}

/** The restore task: copy, checked, from archive_handle back into the production; then the catalogue. */
export function restoreHandler(port: Port, deps: TaskDeps): Handler<'restore'> {
  const { media } = deps
  const { db } = port
  return async ({ task, signal, progress, report }) => {
    const p = task.params
    const { asset, by, every } = await port.run(
      (function* () {
        return { ...(yield* startOf(p, deps, 'restore')), every: yield* all(db.select().from(devices)) }
      })(),
    )
    const handle = (asset.archive_details as Record<string, string>).archive_handle
    if (!asset.is_archive || !handle) throw new Error('the asset is not archived')
    const from = fileOnDevice(every, handle)
    if (from.stat?.kind !== 'file') throw new Error(`${handle} is not a file on the archive device`)
    const to = fileOnDevice(every, p.path)
    report({ asset: asset.id, asset_type: `${asset.kind}asset`, archive_handle: handle, path_file: to.path })
    let source: number
    try {
      source = openSync(handle, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    } catch (error) {
      throw new Error(`${handle} cannot be opened: ${describe(error)}`)
    }
    const tag = String(task.id)
    let copied: VerifiedCopy
    try {
      const total = fstatSync(source).size
      progress({ step: 'copy', percent: 0 })
      // A file already at the path with the archive's bytes (an asset archived and still online,
      // a restore that died after its copy) is taken as it is: nothing is overwritten.
      copied = await copyVerifiedTo(source, to.device.path, to.path, {
        signal,
        tag,
        onProgress: (bytes) => progress({ percent: total ? (bytes / total) * 100 : 100 }),
      })
    } catch (error) {
      if (error instanceof CancelledError) throw error
      if ((error as NodeJS.ErrnoException).code === 'EEXIST')
        throw new Error(`${to.path} already exists with other bytes than the archive's; it is not overwritten`)
      throw new Error(describe(error))
    } finally {
      closeSync(source)
    }
    // The sidecars archived with it come back beside it (those already there with the same bytes stay).
    progress({ step: 'sidecars' })
    let sidecars: string[]
    try {
      sidecars = (await copySidecars(handle, to.path, to.device.path, { signal, tag })).map((c) => c.name)
    } catch (error) {
      if (error instanceof CancelledError) throw error
      throw new Error(`the sidecar ${lastName((error as { sidecar: string }).sidecar)}: ${describe(error)}`)
    }
    report({
      asset: asset.id,
      asset_type: `${asset.kind}asset`,
      path_file: to.path,
      xxh64: copied.xxh64,
      sidecars,
      ...(copied.adopted ? { adopted: true } : {}),
    })
    return () => media.setRestored(asset.id, to.path, to.device.id, copied, by, copied.xxh64)
  }
}

/** The sidecars beside the file at `path` (storage/archive.ts sidecarNames); none when its folder cannot be listed. */
function sidecarsBeside(path: string): string[] {
  try {
    return sidecarNames(lastName(path), readdirSync(parentFolder(path)))
  } catch {
    return []
  }
}

/** A failed archive copy in words; a file in the way is named with what the archive type promises. */
function archiveFailure(error: unknown, path: string, type: string): Error {
  if (error instanceof CancelledError) return error
  if ((error as NodeJS.ErrnoException).code === 'EEXIST')
    return new Error(
      type === 'archive_ltfs'
        ? `${path} already exists on the tape with other bytes; a file on tape is never rewritten`
        : `${path} already exists on the archive device with other bytes; it is not overwritten`,
    )
  return new Error(describe(error))
}

/** What archive and restore tasks' log lines name: the asset and its file (by id alone until read: namesForLog). */
export const archiveSubject = (port: Port, media: MediaAssets) => {
  const pathOf = namesForLog<string | undefined>(port)
  return (task: TaskOf<'archive'> | TaskOf<'restore'>) => {
    const { kind, asset } = task.params
    const path = pathOf(asset, () => media.pathOf(asset))
    return { [`${kind}asset`]: asset, ...(path && { path: path.value ?? '(the asset is gone)' }) }
  }
}
