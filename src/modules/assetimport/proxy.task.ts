// Remaking proxies (docs/media.md, "Remaking proxies"): a `proxy` task makes an asset's proxy
// again with the transcoding profile that applied when it was asked for (POST
// /api/{kind}assets/{id}/proxy/, or `reelhouse proxies remake` for a production's assets, one
// task per asset, run as the task concurrency allows). The new proxy is written under a hidden
// name and renamed over the old one only when complete (media/proxy.ts, ifTaken 'replace'):
// until then the old proxy and path_proxy stay as they are, and a failed remake leaves them so.
// The profile is read again when the task runs (a changed profile is what is made); one deleted
// since gives way to the profile that applies then.
import { closeSync, constants, fstatSync, lstatSync, openSync } from 'node:fs'
import { and, asc, eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Port, type Work, afterCommit, all, allOf, one, statement, tx } from '../../db/port.ts'
import {
  type MediaKind,
  devices,
  mediaAssetShares,
  mediaAssets,
  productions,
  transcodingProfiles,
} from '../../db/tables.ts'
import { AppError, noSuchRecord, notFound } from '../../http/errors.ts'
import type { Ffmpeg } from '../../media/ffmpeg.ts'
import { BUILT_IN, type ProfileFields, encodingOf, profileProblem } from '../../media/profile.ts'
import { CONTAINER_EXT, PROXY_EXT, type ProxyProgress, makeProxyWithPictures } from '../../media/proxy.ts'
import { proxyNames } from '../../media/proxyname.ts'
import { removeCompanions } from '../../media/pictures.ts'
import { CancelledError } from '../../storage/fs.ts'
import {
  type PathRules,
  SEP,
  aliasProblem,
  asFolder,
  deviceFor,
  fileOnDevice,
  isInside,
  lastName,
  makeDirInside,
  parentFolder,
  withFinalSep,
} from '../../storage/paths.ts'
import { requireFileWork } from '../../storage/platform.ts'
import { removeFileInside } from '../../storage/remove.ts'
import { describe } from '../../storage/errors.ts'
import type { ProxyParams } from '../../tasks/kinds.ts'
import { queueWithoutRunner } from '../../tasks/queries.ts'
import type { Handler, Runner, TaskOf } from '../../tasks/runner.ts'
import { type Actor, actorOf, system } from '../history/service.ts'
import type { MediaAssets } from '../mediaassets/service.ts'
import { EDIT_CODENAMES, TITLES } from '../mediaassets/model.ts'
import { canRead, canWrite, requirePerm, requireWrite } from '../users/access.ts'
import type { Principal, Users } from '../users/service.ts'
import { namesForLog } from '../../tasks/names.ts'
import { openProxyFolder } from '../../storage/roots.ts'
import { pictureVersionsOf } from '../mediaassets/pictures.ts'

type ProfileRow = typeof transcodingProfiles.$inferSelect

/** The transcoding profile that applies to a file on `deviceId`: the device's, else the default one; undefined: the built-in default. */
export function* profileFor(db: Db, deviceId: number): Work<ProfileRow | undefined> {
  const device = yield* one(db.select().from(devices).where(eq(devices.id, deviceId)))
  const own = device?.transcoding_profile
    ? yield* one(db.select().from(transcodingProfiles).where(eq(transcodingProfiles.id, device.transcoding_profile)))
    : undefined
  return (
    own ??
    (yield* one(
      db
        .select()
        .from(transcodingProfiles)
        .where(eq(transcodingProfiles.default_profile, true))
        .orderBy(asc(transcodingProfiles.id))
        .limit(1),
    ))
  )
}

/**
 * The profile to make a proxy with, and a warning when it cannot be used: a profile stored before
 * profiles were checked (or by another program) that ffmpeg cannot make gives way to the built-in
 * default, with a warning, rather than failing every import.
 */
export function usableProfile(profile: ProfileRow | undefined): { profile?: ProfileFields; warning?: string } {
  if (!profile) return {}
  const problem = profileProblem(profile)
  if (!problem) return { profile }
  return {
    warning: `the transcoding profile "${profile.name}" cannot be made (${problem.pointer.slice(1)}: ${problem.detail}); the built-in default was used`,
  }
}

/**
 * The production's proxy folder made ready for a proxy (the import's and the proxy task's): on a
 * device, made where missing, and reached with no link on the way. Answers its device.
 */
export function readyProxyFolder(
  allDevices: Parameters<typeof deviceFor>[0],
  proxyDir: string,
): NonNullable<ReturnType<typeof deviceFor>> {
  const proxyDevice = deviceFor(allDevices, proxyDir)
  if (!proxyDevice) throw new Error('the proxy root of the production lies on no device')
  makeDirInside(proxyDevice.path, proxyDir)
  const alias = aliasProblem(proxyDevice.path, proxyDir)
  if (alias) throw new Error(`the proxy folder: ${alias}`)
  return proxyDevice
}

/**
 * The asset's file, opened (no link followed, never waiting on a FIFO) and checked to be the file
 * catalogued (device and inode; the path gate's when none is recorded): ffprobe and ffmpeg read
 * that descriptor, not whatever the path names by then.
 */
export function openCatalogued(
  allDevices: Parameters<typeof fileOnDevice>[0],
  a: { path_file: string; file_dev: number | null; file_ino: number | null },
): number {
  const file = fileOnDevice(allDevices, a.path_file)
  if (file.stat?.kind !== 'file') throw new Error('path_file is no longer a regular file')
  const want = a.file_dev !== null && a.file_ino !== null ? { dev: a.file_dev, ino: a.file_ino } : file.stat
  let fd: number
  try {
    fd = openSync(a.path_file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    throw new Error(`path_file cannot be opened: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
  const s = fstatSync(fd)
  if (s.isFile() && s.dev === want.dev && s.ino === want.ino) return fd
  closeSync(fd)
  throw new Error(
    s.isFile()
      ? 'path_file is no longer the file that was imported (another file is in its place)'
      : 'path_file is no longer a regular file',
  )
}

/** A queued remake of `asset`: one per asset (a second request while it waits joins it). */
function newTask(asset: { id: number; kind: MediaKind; production: number }, params: ProxyParams) {
  return {
    kind: 'proxy' as const,
    target: { [`${asset.kind}asset`]: asset.id },
    production: asset.production,
    params,
    key: `proxy:${asset.id}`,
  }
}

/**
 * Writes proxy tasks without a runner (the command line, in its own process): a serve running on
 * the catalogue sees the commit and takes them (tasks/runner.ts), else the next serve does.
 * A queued remake of the same asset is kept instead (the unique key). Answers the tasks' ids.
 */
export function* queueRemakes(
  db: Db,
  production: string,
  profileName?: string,
): Work<{ production: { id: number; name: string }; queued: number[]; skipped: number }> {
  const prod =
    (yield* one(db.select().from(productions).where(eq(productions.name, production)))) ??
    (/^[1-9]\d{0,15}$/.test(production)
      ? yield* one(
          db
            .select()
            .from(productions)
            .where(eq(productions.id, Number(production))),
        )
      : undefined)
  if (!prod) throw new AppError(404, 'not_found', `no production named ${JSON.stringify(production)}`)
  let profile: number | undefined
  if (profileName !== undefined) {
    const row = yield* one(db.select().from(transcodingProfiles).where(eq(transcodingProfiles.name, profileName)))
    if (!row) throw new AppError(404, 'not_found', `no transcoding profile named ${JSON.stringify(profileName)}`)
    const problem = profileProblem(row)
    if (problem)
      throw new AppError(
        400,
        'invalid',
        `the transcoding profile "${row.name}" cannot be made: ${problem.pointer.slice(1)}: ${problem.detail}`,
      )
    profile = row.id
  }
  return yield* tx(function* () {
    // Assets with a file to make a proxy of: in production, not archive-only.
    const assets = yield* all(
      db
        .select({
          id: mediaAssets.id,
          kind: mediaAssets.kind,
          production: mediaAssets.production,
          device: mediaAssets.device,
        })
        .from(mediaAssets)
        .where(and(eq(mediaAssets.production, prod.id), eq(mediaAssets.is_production, true)))
        .orderBy(asc(mediaAssets.id)),
    )
    const queued: number[] = []
    let skipped = 0
    for (const a of assets) {
      const chosen = profile ?? (yield* profileFor(db, a.device))?.id ?? null
      const t = newTask(a, { asset: a.id, kind: a.kind, profile: chosen })
      // The queue's own insert (tasks/queries.ts), in this transaction.
      const id = yield* queueWithoutRunner(db, t)
      if (id !== undefined) queued.push(id)
      else skipped++
    }
    return { production: { id: prod.id, name: prod.name }, queued, skipped }
  })
}

export function createProxies(port: Port, deps: { media: MediaAssets; runner: Runner }) {
  const db = port.db
  const sharesOf = statement(() =>
    db
      .select({ production: mediaAssetShares.production_id })
      .from(mediaAssetShares)
      .where(eq(mediaAssetShares.asset_id, sql.placeholder('id'))),
  )
  /** canReadAsset's rule (users/access.ts): an asset of a readable production, or shared with one. */
  function* readable(user: Principal, asset: { id: number; production: number }): Work<boolean> {
    if (canRead(user, asset.production)) return true
    return (yield* allOf(sharesOf, { id: asset.id })).some((share) => canRead(user, share.production))
  }
  return {
    /**
     * POST /api/{kind}assets/{id}/proxy/: queues a remake with the profile that applies now. Needs
     * what an update needs (the change codename and write access); 409 for an asset with no file
     * in production (archive-only or offline).
     */
    *queue(kind: MediaKind, id: number, user: Principal): Work<TaskOf<'proxy'>> {
      requireFileWork()
      const row = yield* deps.media.byId(id)
      if (!row || row.kind !== kind || !(yield* readable(user, row))) throw notFound(noSuchRecord(TITLES[kind]))
      requirePerm(user, EDIT_CODENAMES[kind].change)
      requireWrite(user, row.production)
      if (!row.is_production)
        throw new AppError(
          409,
          'conflict',
          'The asset has no file in production (archive-only or offline): there is nothing to make a proxy of.',
        )
      const profile = yield* profileFor(db, row.device)
      const { id: taskId } = yield* tx(function* () {
        return yield* deps.runner.enqueue({
          ...newTask(row, { asset: id, kind, profile: profile?.id ?? null, user: user.id }),
          merge: (queued, added) => ({ ...queued, ...added }),
        })
      })
      return (yield* deps.runner.get(taskId)) as TaskOf<'proxy'>
    },
  }
}

export type Proxies = ReturnType<typeof createProxies>

/** What a proxy task's log lines name: the asset and its file (by id alone until read: namesForLog). */
export const proxySubject = (port: Port, media: MediaAssets) => {
  const pathOf = namesForLog<string | undefined>(port)
  return (task: TaskOf<'proxy'>) => {
    const asset = task.params.asset
    const path = pathOf(asset, () => media.pathOf(asset))
    return { [`${task.params.kind}asset`]: asset, ...(path && { path: path.value ?? '(the asset is gone)' }) }
  }
}

type ProxyDeps = {
  media: MediaAssets
  users: Users
  ffmpeg: () => Promise<Ffmpeg>
  /**
   * Told, in the remake's last write, of the asset whose proxy it made (the shots service queues a
   * detection: autoshot_detection). Work it answers is done in that write's transaction.
   */
  proxied?: (asset: { id: number; kind: MediaKind }) => void | Work<void>
}

export function proxyHandler(port: Port, deps: ProxyDeps): Handler<'proxy'> {
  const db = port.db
  const { media } = deps
  return async ({ task, signal, progress, report }) => {
    const params = task.params
    const askedBy = params.user === undefined ? undefined : await port.run(deps.users.principalById(params.user))
    const by: Actor = askedBy ? actorOf(askedBy, 'task') : system('task')
    // Checked again as the task starts (docs/api.md, Permissions): the user who asked may still write there.
    if (params.user !== undefined && !askedBy) throw new Error('the user who asked for the proxy no longer exists')
    const asset = await port.run(media.byId(params.asset))
    if (!asset) throw new Error('the asset is gone')
    if (askedBy && !canWrite(askedBy, asset.production))
      throw new Error(`the user who asked for the proxy no longer has write access to production ${asset.production}`)
    if (!asset.is_production) throw new Error('the asset has no file in production (archive-only or offline)')
    report({
      asset: asset.id,
      asset_type: `${asset.kind}asset`,
      path_file: asset.path_file,
      ...(asset.path_proxy ? { path_proxy: asset.path_proxy } : {}),
    })
    const ff = await deps.ffmpeg()
    const missing = ff.missing('ffmpeg')
    if (missing) throw new Error(missing)
    const { production, allDevices, chosen } = await port.run(
      (function* () {
        const production = (yield* one(db.select().from(productions).where(eq(productions.id, asset.production))))!
        const allDevices = yield* all(db.select().from(devices))
        // The profile asked for, read now; one deleted since: the one that applies now.
        const asked =
          params.profile !== null
            ? yield* one(db.select().from(transcodingProfiles).where(eq(transcodingProfiles.id, params.profile)))
            : undefined
        return { production, allDevices, chosen: asked ?? (yield* profileFor(db, asset.device)) }
      })(),
    )
    const proxyDir = production.proxy_root
    const proxyDevice = readyProxyFolder(allDevices, proxyDir)
    closeSync(openCatalogued(allDevices, asset)) // checked now, and again for each run of ffprobe and ffmpeg

    const { profile, warning } = usableProfile(chosen)
    if (warning) report({ asset: asset.id, asset_type: `${asset.kind}asset`, path_file: asset.path_file, warning })
    // The old proxy's name when it lies in the proxy folder with the new extension (it and its
    // pictures are replaced in one rename each); else a new name after the source, as an import
    // gives one, which never replaces a file (another clip's proxy may have that name).
    const ext =
      asset.kind === 'video' ? CONTAINER_EXT[encodingOf(profile ?? BUILT_IN).container] : PROXY_EXT[asset.kind]
    const old = asset.path_proxy
    const kept = reusableProxyName(old, proxyDir, ext)
    const names = proxyNames(asset.path_file, asset.id)
    // The old proxy's pictures are the asset's own: a new proxy of its stem takes their names.
    const ownStem = ownStemOf(old, proxyDir)
    progress({ step: 'proxy', percent: 0 })
    const onProgress = (p: ProxyProgress) => {
      if (p.fraction !== undefined) progress({ percent: p.fraction * 100 })
    }
    let made: Awaited<ReturnType<typeof makeProxyWithPictures>>
    try {
      made = await makeProxyWithPictures(ff, {
        proxyDir,
        openProxyDir: () => openProxyFolder(proxyDevice.path, proxyDir),
        baseName: kept ?? names.first,
        fallbackName: kept ? undefined : names.fallback,
        ifTaken: kept ? 'replace' : 'number',
        pictures: true,
        ownStem,
        signal,
        onProgress,
        kind: asset.kind,
        profile,
        source: asset.path_file,
        openSource: () => openCatalogued(allDevices, asset),
      })
    } catch (error) {
      if (error instanceof CancelledError) throw error
      throw new Error(describe(error))
    }
    progress({ percent: 100 })
    const warnings = [warning, made.warning].filter(Boolean).join('; ')
    report({
      asset: asset.id,
      asset_type: `${asset.kind}asset`,
      path_file: asset.path_file,
      path_proxy: made.path,
      ...(warnings ? { warning: warnings } : {}),
    })
    // The last write, work the runner does with the task's end in one transaction (tasks/runner.ts Handler).
    return function* () {
      yield* media.setProxy(asset.id, made.path, by, pictureVersionsOf(asset.kind, made.pictures))
      const told = deps.proxied?.({ id: asset.id, kind: asset.kind })
      if (told) yield* told
      // An old proxy of another name (another container) goes once path_proxy names the new one
      // is committed (never when the end rolls back: the asset would name a file gone), with its
      // pictures; only regular files inside the proxy root are ever removed. In a microtask of
      // its own: the files are not removed inside the commit's call.
      if (old && old !== made.path && isInside(asFolder(proxyDir), old))
        yield* afterCommit(() =>
          queueMicrotask(() => removeOld(proxyDevice.path, proxyDir, old, stemOf(made.path) !== ownStem)),
        )
    }
  }
}

/**
 * The old proxy's file name when a remake may replace it: it lies directly in the folder
 * `proxyDir` with the extension `ext` and is not hidden; else undefined. Paths as the platform
 * whose separator is `sep` writes them.
 */
export function reusableProxyName(old: string, proxyDir: string, ext: string, sep: PathRules['sep'] = SEP) {
  const name = lastName(old, sep)
  return old && parentFolder(old, sep) === withFinalSep(proxyDir, sep) && old.endsWith(ext) && !name.startsWith('.')
    ? name
    : undefined
}

/** reusableProxyName, else the asset's id (the name before proxies were named after their source). */
export function remadeProxyName(
  old: string,
  proxyDir: string,
  ext: string,
  assetId: number,
  sep: PathRules['sep'] = SEP,
): string {
  return reusableProxyName(old, proxyDir, ext, sep) ?? String(assetId)
}

/** The stem of the old proxy when it lies directly in the proxy folder (its pictures beside it are the asset's). */
function ownStemOf(old: string, proxyDir: string): string | undefined {
  if (!old || parentFolder(old) !== withFinalSep(proxyDir)) return undefined
  return stemOf(old)
}

/** A path's last name without its extension. */
const stemOf = (path: string) => {
  const name = lastName(path)
  const dot = name.lastIndexOf('.')
  return dot > 0 ? name.slice(0, dot) : name
}

/** Removes the old proxy and, unless the new one took their names (`pictures` false), its pictures. */
function removeOld(devicePath: string, root: string, path: string, pictures: boolean) {
  try {
    if (lstatSync(path, { throwIfNoEntry: false })?.isFile()) removeFileInside(devicePath, root, path)
    if (pictures) removeCompanions(devicePath, root, path)
  } catch {
    // A stray old proxy is left; the asset names the new one.
  }
}
