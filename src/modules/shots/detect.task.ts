// The `shots` task (docs/media.md, "Shots and sequences"): one ffmpeg run over a video asset finds
// its shots, black and silent gaps and thumbnail candidates (media/shots.ts), and the task's end
// replaces the asset's detected shots and sequences (shots/service.ts replaceDetected), in one
// transaction with the task's own end.
//
// What is read: the catalogued file (opened and checked to be that file, as an import reads it:
// assetimport/proxy.task.ts openCatalogued), because shots are times of the source and a proxy
// may have another frame rate; the proxy when the file cannot be (offline, archive-only, no video
// stream ffmpeg can decode, such as a camera raw format, or a run on it that fails).
//
// Where it writes: a work folder `.reelhouse-shots-<asset>-<random>` made in the production's
// proxy_root (reached from its device's root without a link), named in the task's params before
// ffmpeg starts so that a restart removes what a crash left; the chosen candidates are linked to
// `<proxy name>.shots/<shot id>.jpg` beside the proxy (never over another file: a stale file of
// that name, left by a detection whose end was rolled back, is removed first), and the work
// folder goes once the end has committed. An asset with no proxy gets its shots without
// thumbnails (the next detection after its proxy is made gives them).
import { randomBytes } from 'node:crypto'
import { closeSync } from 'node:fs'
import { eq } from 'drizzle-orm'
import { type Port, type Work, afterCommit, one } from '../../db/port.ts'
import { productions } from '../../db/tables.ts'
import type { Ffmpeg } from '../../media/ffmpeg.ts'
import { MediaError } from '../../media/ffmpeg.ts'
import { SHOTS_SUFFIX } from '../../media/pictures.ts'
import {
  type Candidate,
  type ShotSource,
  type VideoFacts,
  detectShots,
  sequencesOf,
  shotFacts,
  shotsOf,
  thumbnailFor,
} from '../../media/shots.ts'
import {
  AT_REMOVEDIR,
  DIR_FLAGS,
  DT,
  E,
  O,
  cName,
  close,
  errnoName,
  linkat,
  listDir,
  mkdirat,
  openat,
  statNumbersOf,
  unlinkat,
} from '../../storage/dirfd.ts'
import { describe } from '../../storage/errors.ts'
import { CancelledError } from '../../storage/fs.ts'
import { lastName, parentFolder, pathOf, withFinalSep } from '../../storage/paths.ts'
import { openFileInside } from '../../storage/read.ts'
import { openProxyFolder } from '../../storage/roots.ts'
import type { Handler, TaskOf } from '../../tasks/runner.ts'
import { openCatalogued, readyProxyFolder } from '../assetimport/proxy.task.ts'
import type { Devices } from '../devices/service.ts'
import { type Actor, actorOf, system } from '../history/service.ts'
import { EDIT_CODENAMES } from '../mediaassets/model.ts'
import type { MediaAssets, ProxyFolder } from '../mediaassets/service.ts'
import { canWrite } from '../users/access.ts'
import type { Users } from '../users/service.ts'
import { namesForLog } from '../../tasks/names.ts'
import type { ShotRow, Shots } from './service.ts'

export const WORK_PREFIX = '.reelhouse-shots-'

type ShotsDeps = { media: MediaAssets; shots: Shots; devices: Devices; users: Users; ffmpeg: () => Promise<Ffmpeg> }

/** What a shots task's log lines name: the asset and its file (by id alone until read: namesForLog). */
export const shotsSubject = (port: Port, media: MediaAssets) => {
  const pathOf = namesForLog<string | undefined>(port)
  return (task: TaskOf<'shots'>) => {
    const asset = task.params.asset
    const path = pathOf(asset, () => media.pathOf(asset))
    return { videoasset: asset, ...(path && { path: path.value ?? '(the asset is gone)' }) }
  }
}

/**
 * Removes the work folder `name` of the open proxy folder: the files in it (the run's prints and
 * candidates, a few thousand at most: an hour of video has 7,200 candidates), then the folder.
 * At once, not a slice at a time: the task's end is followed by nothing of its own. Nothing is
 * followed: a link in the folder's place is removed itself, a folder inside it is left (and the
 * folder with it).
 */
function removeWork(folder: number, name: string) {
  const fd = openat(folder, cName(name), DIR_FLAGS)
  if (fd === -E.ELOOP || fd === -E.ENOTDIR) {
    unlinkat(folder, cName(name), 0)
    return
  }
  if (fd < 0) return
  try {
    const entries = listDir(fd)
    if (typeof entries !== 'number') for (const e of entries) if (e.type !== DT.DIR) unlinkat(fd, e.name, 0)
  } finally {
    close(fd)
  }
  unlinkat(folder, cName(name), AT_REMOVEDIR)
}

/** What the import's probe recorded of the file (docs/media.md, What is probed), when it has all the run needs. */
export function factsOf(technical: Record<string, unknown>): VideoFacts | undefined {
  const m = typeof technical.fps === 'string' ? /^(\d+)\/(\d+)$/.exec(technical.fps) : null
  if (!m || Number(m[1]) <= 0 || Number(m[2]) <= 0 || !Array.isArray(technical.audio_streams)) return undefined
  if (typeof technical.video_codec !== 'string' || !technical.video_codec) return undefined
  const fps = { num: Number(m[1]), den: Number(m[2]) }
  const frames = technical.duration
  return {
    fps,
    duration: typeof frames === 'number' && frames > 0 ? (frames * fps.den) / fps.num : undefined,
    hasAudio: technical.audio_streams.length > 0,
  }
}

export function shotsHandler(port: Port, deps: ShotsDeps): Handler<'shots'> {
  const { media } = deps
  const db = port.db
  return async ({ task, signal, progress, save, report }) => {
    const params = task.params
    const askedBy = params.user === undefined ? undefined : await port.run(deps.users.principalById(params.user))
    const by: Actor = askedBy ? actorOf(askedBy, 'task') : system('task')
    if (params.user !== undefined && !askedBy) throw new Error('the user who asked for the detection no longer exists')
    const asset = await port.run(media.byId(params.asset))
    if (!asset || asset.kind !== 'video') throw new Error('the asset is gone')
    // Checked again as the task starts (docs/api.md, Permissions).
    if (askedBy && !canWrite(askedBy, asset.production))
      throw new Error(
        `the user who asked for the detection no longer has write access to production ${asset.production}`,
      )
    if (askedBy && !askedBy.is_superuser && !askedBy.perms.has(EDIT_CODENAMES.video.change))
      throw new Error(`the user who asked for the detection no longer has ${EDIT_CODENAMES.video.change}`)
    const named = (more: Record<string, unknown> = {}) =>
      report({
        asset: asset.id,
        asset_type: 'videoasset',
        path_file: asset.path_file,
        threshold: params.threshold,
        ...more,
      })
    named()

    const ff = await deps.ffmpeg()
    const missing = ff.missing()
    if (missing) throw new Error(missing)
    const production = (await port.run(one(db.select().from(productions).where(eq(productions.id, asset.production)))))!
    const allDevices = await port.run(deps.devices.list())
    const proxyDir = production.proxy_root
    const { proxyRoot, devicePath } = await port.run(media.proxyFolderOf(asset.production))

    // The inputs: the catalogued file, else the proxy (the header).
    const warnings: string[] = []
    let file: ShotSource | undefined
    if (asset.is_production)
      try {
        closeSync(openCatalogued(allDevices, asset))
        file = { path: asset.path_file, open: () => openCatalogued(allDevices, asset) }
      } catch (error) {
        warnings.push(`the file cannot be read (${describe(error)})`)
      }
    const openProxy = () => {
      const opened = devicePath ? openFileInside(devicePath, proxyRoot, asset.path_proxy) : undefined
      if (!opened) throw new Error('the proxy is not a regular file inside the proxy_root')
      return opened.fd
    }
    let proxy: ShotSource | undefined
    if (asset.path_proxy)
      try {
        closeSync(openProxy())
        proxy = { path: asset.path_proxy, open: openProxy }
      } catch (error) {
        warnings.push(`the proxy cannot be read (${describe(error)})`)
      }
    const inputs: { source: ShotSource; what: 'file' | 'proxy'; known?: VideoFacts }[] = [
      ...(file ? [{ source: file, what: 'file' as const, known: factsOf(asset.technical) }] : []),
      ...(proxy ? [{ source: proxy, what: 'proxy' as const }] : []),
    ]
    if (!inputs.length)
      throw new Error(
        `nothing to detect shots in: ${warnings.join('; ') || 'the file is offline and there is no proxy'}`,
      )

    // The proxy folder, and the thumbnails' folder beside the proxy when it lies in it.
    const proxyDevice = readyProxyFolder(allDevices, proxyDir)
    const folder = openProxyFolder(proxyDevice.path, proxyDir)
    let thumbs: { fd: number; name: string } | undefined
    let work: { fd: number; name: string } | undefined
    let closed = false
    const cleanup = () => {
      if (closed) return
      closed = true
      if (thumbs) close(thumbs.fd)
      if (work) {
        close(work.fd)
        try {
          removeWork(folder, work.name)
        } catch {
          // Left for the next start of this task (its name is in the params) or for whoever looks.
        }
      }
      close(folder)
    }
    try {
      // What a run before a restart left.
      if (params.work) removeWork(folder, params.work)
      const proxyName =
        asset.path_proxy && parentFolder(asset.path_proxy) === withFinalSep(proxyDir) ? lastName(asset.path_proxy) : ''
      if (proxyName) {
        const dot = proxyName.lastIndexOf('.')
        const name = (dot > 0 ? proxyName.slice(0, dot) : proxyName) + SHOTS_SUFFIX
        const made = mkdirat(folder, cName(name), 0o755)
        const fd = made === 0 || made === -E.EEXIST ? openat(folder, cName(name), DIR_FLAGS) : made
        if (fd >= 0) thumbs = { fd, name }
        else
          warnings.push(`no thumbnails: ${pathOf.join(proxyDir, name)} cannot be used as a folder (${errnoName(-fd)})`)
      } else if (!asset.path_proxy) warnings.push('no thumbnails: the asset has no proxy yet (they go beside it)')

      /**
       * A fresh work folder, named in the params first: the name is committed before the folder
       * is made (awaited on PostgreSQL), so that a restart finds and removes what a crash left.
       */
      const makeWork = async () => {
        if (work) {
          close(work.fd)
          removeWork(folder, work.name)
          work = undefined
        }
        const name = `${WORK_PREFIX}${asset.id}-${randomBytes(8).toString('hex')}`
        await save({ ...params, work: name })
        const made = mkdirat(folder, cName(name), 0o700)
        if (made < 0) throw new Error(`cannot make a work folder in ${proxyDir}: ${errnoName(-made)}`)
        const fd = openat(folder, cName(name), DIR_FLAGS)
        if (fd < 0) throw new Error(`cannot open the work folder in ${proxyDir}: ${errnoName(-fd)}`)
        work = { fd, name }
        return work
      }

      progress({ step: 'detect', percent: 0 })
      let result: { d: Awaited<ReturnType<typeof detectShots>>; what: 'file' | 'proxy' } | undefined
      for (const input of inputs) {
        // The file's facts as its import probed them (ffprobe's start costs a tenth of a second), else asked.
        const facts: VideoFacts | undefined = input.known ?? (await shotFacts(ff, input.source, signal))
        if (!facts) {
          warnings.push(`the ${input.what} has no video stream ffmpeg can decode`)
          continue
        }
        const at = await makeWork()
        try {
          const d = await detectShots(ff, {
            source: input.source,
            facts,
            threshold: params.threshold,
            work: { fd: at.fd, path: pathOf.join(proxyDir, at.name) },
            thumbnails: thumbs !== undefined,
            signal,
            onProgress: (fraction) => progress({ percent: fraction * 100 }),
          })
          result = { d, what: input.what }
          break
        } catch (error) {
          if (error instanceof CancelledError) throw error
          // Too many shots is the threshold's doing, not the input's.
          if (!(error instanceof MediaError) || /more than \d+ shots/.test(error.message)) throw error
          warnings.push(`the ${input.what} could not be read through (${describe(error)})`)
        }
      }
      if (!result) throw new Error(`no shots were detected: ${warnings.join('; ')}`)
      const { d } = result
      const spans = shotsOf(d)
      const frameMs = Math.ceil((1000 * d.fps.den) / d.fps.num)
      const runs = sequencesOf(spans, d.gaps, frameMs + 1)
      progress({ percent: 100 })
      const warning = warnings.length ? warnings.join('; ') : undefined
      named({
        read: result.what,
        shots: spans.length,
        sequences: runs.length,
        gaps: d.gaps.length,
        ...(warning ? { warning } : {}),
      })

      const rate = d.fps.num / d.fps.den
      /** Links the candidate nearest the shot's middle to `<id>.jpg` in the thumbnails' folder; its path, or ''. */
      const place = (row: ShotRow): string => {
        if (!thumbs || !work) return ''
        const span = {
          startFrame: row.start_frame ?? Math.round((row.start_ms * rate) / 1000),
          endFrame: row.end_frame ?? Math.round((row.end_ms * rate) / 1000),
        }
        const chosen: Candidate | undefined = thumbnailFor(span, d.candidates)
        if (!chosen) return ''
        const name = cName(`${row.id}.jpg`)
        let linked = linkat(work.fd, cName(chosen.name), thumbs.fd, name)
        if (linked === -E.EEXIST) {
          // A stale file of a shot id given again (its detection's end rolled back): it goes first.
          const fd = openat(thumbs.fd, name, O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
          const regular = fd >= 0 && statNumbersOf(fd).isFile()
          if (fd >= 0) close(fd)
          if (regular && unlinkat(thumbs.fd, name, 0) === 0)
            linked = linkat(work.fd, cName(chosen.name), thumbs.fd, name)
        }
        return linked === 0 ? pathOf.join(proxyDir, thumbs.name, `${row.id}.jpg`) : ''
      }

      const assetId = asset.id
      /** The task's end: the detected shots and sequences replaced, the files tidied once that commits. */
      function* end(): Work<void> {
        let ended: { removed: string[]; folder: ProxyFolder }
        try {
          ended = yield* deps.shots.replaceDetected(
            assetId,
            { spans, runs },
            { folder: thumbs ? pathOf.join(proxyDir, thumbs.name) : '', place },
            by,
          )
        } catch (error) {
          cleanup()
          throw error
        }
        yield* afterCommit(() => {
          cleanup()
          deps.shots.removeThumbnails(ended.folder, ended.removed)
        })
      }
      // Port work: the runner yields it inside the transaction of the task's own end
      // (tasks/runner.ts LastWrite), on either engine.
      return end
    } catch (error) {
      cleanup()
      if (error instanceof CancelledError) throw error
      throw new Error(describe(error))
    }
  }
}
