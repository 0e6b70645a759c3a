// The work after an import's 201 (docs/api.md, Import), as an `import` task whose progress goes into
// the request's ImportLog(s): move the essence (move_asset), probe it, make or rewrap its proxy,
// then `import_completed`, or `import_failed` with the error. A missing ffmpeg or ffprobe is a
// warning, never a failure. Safe points for a restart: the move is planned and its plan saved in
// the task before any file changes, and moveFile resumes a plan wherever a crash left it, so the
// file is at exactly one of its two paths and path_file follows it; probing and the proxy are
// simply done again.
import { closeSync, lstatSync, statSync } from 'node:fs'
import { eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Port, type Work, oneOf, statement, tx } from '../../db/port.ts'
import { type MediaKind, productions } from '../../db/tables.ts'
import type { Ffmpeg } from '../../media/ffmpeg.ts'
import { probe } from '../../media/probe.ts'
import { MHL_FOLDER, newGeneration } from '../../storage/mhl.ts'
import { type Made, type ProxyProgress, makeProxyWithPictures, rewrapProxyWithPictures } from '../../media/proxy.ts'
import { proxyNames } from '../../media/proxyname.ts'
import { SMALL_FILE, fingerprintFile, fingerprintSmallFile } from '../../storage/fingerprint.ts'
import {
  type MovePlan,
  type MoveResult,
  destinationPath,
  moveFile,
  planMove,
  removeEmptyFolders,
} from '../../storage/file.ts'
import { waitingStep, whileInUse } from '../../storage/busy.ts'
import { CancelledError } from '../../storage/fs.ts'
import {
  baseName as baseNameOf,
  below,
  deviceFor,
  dirName,
  fileOnDevice,
  relParts,
  splitRel,
  stampOf,
  trimSep,
} from '../../storage/paths.ts'
import { describe } from '../../storage/errors.ts'
import { type Handler, SHUTDOWN, type TaskOf, grouped } from '../../tasks/runner.ts'
import type { ImportParams } from '../../tasks/kinds.ts'
import { IMPORT_STATUS, type ImportLogs } from '../importlogs/service.ts'
import type { Devices } from '../devices/service.ts'
import type { MediaAssets } from '../mediaassets/service.ts'
import { territoryProblem } from '../projectassets/bundles.ts'
import { type Actor, actorOf, system } from '../history/service.ts'
import { canWrite } from '../users/access.ts'
import type { Principal, Users } from '../users/service.ts'
import { namesForLog } from '../../tasks/names.ts'
import { moveFolder } from './service.ts'
import { openCatalogued, profileFor, readyProxyFolder, usableProfile } from './proxy.task.ts'
import { mergeProbed } from './probed.ts'
import { openProxyFolder } from '../../storage/roots.ts'
import { pictureVersionsOf } from '../mediaassets/pictures.ts'

/** How many queued imports a free slot of the runner takes at once. */
export const IMPORT_GROUP = 32

type ImportDeps = {
  media: MediaAssets
  devices: Devices
  logs: ImportLogs
  users: Users
  ffmpeg: () => Promise<Ffmpeg>
  /**
   * Told, in the import's last write, of an asset whose proxy it made (the shots service queues a
   * detection: autoshot_detection). Work it answers is done in that write's transaction.
   */
  proxied?: (asset: { id: number; kind: MediaKind }) => void | Work<void>
}

/** Whose writes an import's are: the user's who asked, or the service's (a watch-folder file). */
function actorFor(deps: Pick<ImportDeps, 'users'>, params: ImportParams, askedBy: Principal | undefined): Actor {
  return askedBy ? actorOf(askedBy, 'import') : system('import')
}

/**
 * The end of an import that did not complete: its logs say `import_failed` with the reason, the
 * asset status -1. A move that did not happen (or did: path_file follows the file) leaves the
 * file online where path_file says: in production again, as before the import. A file gone from
 * there stays out, as the watcher would have it.
 */
function* importFailed(
  deps: Pick<ImportDeps, 'media' | 'logs'>,
  params: ImportParams,
  reason: string,
  warning: Record<string, string>,
  by: Actor,
): Work<void> {
  yield* deps.logs.advance(params.logs, { status: IMPORT_STATUS.failed, error: reason, warning })
  yield* deps.media.setStatus(params.asset, -1, by)
  if (params.move?.held) {
    const path = (yield* deps.media.byId(params.asset))?.path_file
    if (path !== undefined && isRegularFile(path)) yield* deps.media.setOnline([params.asset], true, by)
  }
}

/**
 * A moved file's place in the catalogue, once moveFile has ended (ran or resumed): path_file
 * follows the file, and a held asset is in production again. Never a throw in between. A move
 * that copied the bytes (across file systems) read them and checked the copy by hash: that hash
 * goes into the asset's technical as `hashes.xxh64`, kept by later probes (probed.ts keeps
 * members it does not know). A rename reads no bytes and leaves `hashes` as it was: the hash
 * says what the file held when it was last copied, not what it holds now.
 */
function settleMove(
  media: MediaAssets,
  asset: { id: number; path_file: string },
  moved: { path: string; xxh64?: string },
  device: number,
  held: boolean,
  by: Actor,
): Work<void> {
  const placed = moved.path !== asset.path_file ? lstatSync(moved.path) : undefined
  return tx(function* () {
    if (placed)
      yield* media.relocate(
        asset.id,
        moved.path,
        device,
        { dev: placed.dev, ino: placed.ino, stamp: stampOf(placed) },
        by,
      )
    if (moved.xxh64) {
      const technical = (yield* media.byId(asset.id))?.technical ?? {}
      const hashes = typeof technical.hashes === 'object' && technical.hashes !== null ? technical.hashes : {}
      yield* media.setTechnical(asset.id, { ...technical, hashes: { ...hashes, xxh64: moved.xxh64 } }, by)
    }
    if (held) yield* media.setOnline([asset.id], true, by)
  })
}

/**
 * A queued import cancelled before it ran: its logs and asset say so (importFailed). One that
 * an earlier process was running when it stopped (`ran`) may have a move under way: the move's
 * own crash rules apply, so its saved plan is run to its end (the file is then at exactly one
 * of its two paths, and path_file follows it), never left half done.
 */
export function importAbandon(port: Port, deps: ImportDeps) {
  // Work the runner does inside the transaction that ends the task (tasks/runner.ts Abandon).
  return function* (task: TaskOf<'import'>, ran: boolean, reason: string): Work<void | (() => Promise<void>)> {
    const params = task.params
    const by = actorFor(
      deps,
      params,
      params.user === undefined ? undefined : yield* deps.users.principalById(params.user),
    )
    yield* importFailed(deps, params, reason, {}, by)
    const plan = params.move?.plan as MovePlan | undefined
    if (!ran || !plan) return
    // A card's move: the file under way is finished; only its essence (the last file) is the asset's.
    const card = params.move?.card
    const essence = !card || (card.done ?? 0) >= card.files.length - 1
    return async () => {
      const asset = await port.run(deps.media.byId(params.asset))
      if (!asset) return
      const moved = await moveFile(plan)
      if (essence)
        await port.run(settleMove(deps.media, asset, moved, params.move!.device, params.move!.held === true, by))
    }
  }
}

/** What a task's log lines name: the asset and its file where it is now (by id alone until read: namesForLog). */
export const importSubject = (port: Port, media: MediaAssets) => {
  const pathOf = namesForLog<string | undefined>(port)
  return (task: TaskOf<'import'>) => {
    const asset = task.params.asset
    const path = pathOf(asset, () => media.pathOf(asset))
    return { [`${task.params.kind}asset`]: asset, ...(path && { path: path.value ?? '(the asset is gone)' }) }
  }
}

export function importHandler(port: Port, deps: ImportDeps): Handler<'import'> {
  const db = port.db
  const { media } = deps
  // The asset is read and written through the media service (the table's owner).
  const assetOf = (id: number) => port.run(media.byId(id))
  const productionQuery = statement(() =>
    db
      .select()
      .from(productions)
      .where(eq(productions.id, sql.placeholder('id'))),
  )

  // Imports are claimed a group at a time: without ffmpeg and without a move an import is a few
  // reads and writes, and a group's ends take one commit. Moves and ffmpeg take turns in the group.
  return grouped(async ({ task, signal, progress, save, report, exclusive }) => {
    const params = task.params
    const warning: Record<string, string> = {}
    const logs = deps.logs
    const advance = (status: string) => port.run(logs.advance(params.logs, { status }))
    // Its writes are the import's: of the user who asked, or of the service (a watch-folder file).
    // The user is read once, for both this and the checks below.
    const askedBy = params.user === undefined ? undefined : await port.run(deps.users.principalById(params.user))
    const by = actorFor(deps, params, askedBy)
    /** Whether this import made the asset's proxy (then `proxied` is told at its end). */
    let madeProxy = false
    /** The file's content fingerprint, once read. */
    let fingerprint: { id: number; dev: number; ino: number; size: number; mtimeMs: number; hash: string } | undefined
    /** The task's result names the asset and its file (where it is now), and its proxy once made. */
    const named = (a: { id: number; path_file: string; path_proxy: string }) =>
      report({
        asset: a.id,
        asset_type: `${params.kind}asset`,
        path_file: a.path_file,
        ...(a.path_proxy ? { path_proxy: a.path_proxy } : {}),
      })
    try {
      const found = await assetOf(params.asset)
      if (!found) throw new Error('the asset is gone')
      let asset = found
      named(asset)
      const { production, allDevices } = await port.run(
        (function* () {
          const production = (yield* oneOf(productionQuery, { id: found.production }))!
          return { production, allDevices: yield* deps.devices.list() }
        })(),
      )
      // Archive-only assets have no file to move, probe or make a proxy of. One being moved shows
      // is_production false until its file is in place (register held it), but has one.
      const online = asset.is_production || params.move?.held === true
      const moveDevice = params.move && allDevices.find((d) => d.id === params.move!.device)
      if (params.move && !moveDevice) throw new Error('the device to move to is gone')
      // Everything is checked again when the task starts or resumes (docs/api.md, Permissions): the user who
      // asked may still write there, and the file (and where a move puts it) is still theirs to touch.
      const refusal = await port.run(
        recheck(db, {
          user: params.user,
          asker: askedBy,
          production: production.id,
          paths: [
            asset.path_file,
            ...(moveDevice ? [moveFolder(allDevices, moveDevice, production, params.kind)] : []),
          ],
        }),
      )
      if (refusal) throw new Error(`refusing to go on: ${refusal}`)
      /** path_file passes the path gate again, opened and checked to be the file catalogued (proxy.task.ts). */
      const openSame = (a: NonNullable<typeof asset>) => openCatalogued(allDevices, a)

      /** The move, the probe and the proxy: the work that may take long (bytes copied, ffmpeg). */
      const steps = async () => {
        if (online && params.move?.card) {
          // A clip of a camera card: its files (and for one clip the card's own) go to the card's new
          // folder under their own names and relative places, the essence last (docs/cards.md).
          const target = moveDevice!
          const source = allDevices.find((d) => d.id === asset!.device)
          if (!source) throw new Error('the device to move from is gone')
          const moved = await moveCardFiles({
            params,
            asset,
            source,
            target,
            signal,
            save,
            progress,
            taken: async (path) => {
              const there = await port.run(media.byPath(path))
              return there && there.id !== asset.id ? there.id : undefined
            },
          })
          await port.run(settleMove(media, asset, moved, target.id, params.move.held === true, by))
          removeCardFolders(source.path, params.move.card)
          await advance(IMPORT_STATUS.moved)
          asset = (await assetOf(asset.id))!
          named(asset)
        } else if (online && params.move) {
          const target = moveDevice!
          const source = allDevices.find((d) => d.id === asset!.device)
          if (!source) throw new Error('the device to move from is gone')
          let plan = params.move.plan as MovePlan | undefined
          if (!plan) {
            plan = planMove({
              source: asset.path_file,
              sourceRoot: source.path,
              targetRoot: target.path,
              targetDir: moveFolder(allDevices, target, production, params.kind),
              expect:
                asset.file_dev !== null && asset.file_ino !== null
                  ? { dev: asset.file_dev, ino: asset.file_ino }
                  : undefined,
            })
            // A name another asset has in the catalogue (an archived file, say) is not free either.
            const taken = await port.run(media.byPath(destinationPath(plan)))
            if (taken && taken.id !== asset.id)
              throw new Error(`asset ${taken.id} is catalogued at ${destinationPath(plan)}; nothing was moved`)
            // Nor is a file another production catalogued since the 201 (register refuses a move of
            // one): its assets would be left naming nothing. Which production is not said (the log
            // is read by this production's users).
            const owner = asset.production
            const path = asset.path_file
            const others = await port.run(
              (function* () {
                const productions: number[] = []
                for (const r of yield* media.atPathForScan(path))
                  productions.push((yield* media.byId(r.id))?.production ?? owner)
                return productions
              })(),
            )
            if (others.some((production) => production !== owner))
              throw new Error('another production catalogues this file too; nothing was moved')
            // The plan is committed before any file changes: a restart resumes from it.
            await save({ ...params, move: { ...params.move, plan } })
          }
          let current: MovePlan = plan
          const record = (next: MovePlan) => {
            current = next
            return save({ ...params, move: { ...params.move!, plan: next } })
          }
          // Bytes copied when the move crosses file systems; a rename within one is done at once.
          const size = plan.file.size
          progress({ step: 'move', bytes_done: 0, bytes_total: size, percent: 0 })
          // A file another program holds (an editor's open project) makes the move wait and try
          // again, resuming from what it recorded (storage/busy.ts); it never copies instead.
          const heldPath = asset.path_file
          const moved = await whileInUse(
            () =>
              moveFile(current, {
                signal,
                record,
                onProgress: (bytes, total) =>
                  progress({
                    bytes_done: bytes,
                    bytes_total: total,
                    percent: total > 0 ? Math.min(100, (bytes / total) * 100) : null,
                  }),
              }),
            {
              signal,
              path: (error) =>
                error.path && !error.path.startsWith('.reelhouse-move-') && error.path !== current.source.rel
                  ? current.target.root + error.path
                  : heldPath,
              onWait: (path) => progress({ step: waitingStep(path) }),
              onRetry: () => progress({ step: 'move' }),
            },
          )
          progress({ bytes_done: size, bytes_total: size, percent: 100 })
          // The file is there now: path_file follows it, whatever else happens (never a throw in
          // between), and the asset is in production again, which is what clients wait for.
          await port.run(settleMove(media, asset, moved, target.id, params.move.held === true, by))
          await advance(IMPORT_STATUS.moved)
          asset = (await assetOf(asset.id))!
          named(asset)
        }

        // A camera raw essence (R3D, ARRIRAW, BRAW, CinemaDNG): ffprobe and ffmpeg read none of them.
        const raw = (asset.technical.card as { raw?: boolean } | undefined)?.raw === true
        if (online && raw) {
          warning.probe = `${baseNameOf(asset.path_file)} is camera raw, which ffprobe cannot read: nothing was probed (docs/cards.md)`
          warning.proxy = 'camera raw: no proxy was made (docs/cards.md)'
        }
        if (online && !raw) {
          progress({ step: 'probe', percent: null })
          // The content fingerprint (storage/fingerprint.ts), read once the file is where it stays:
          // the asset is recognised by it when it next turns up on another file system.
          // Written with the import's last write (one commit less per import); setFingerprints
          // writes it only if the asset still has the file it was read from.
          const st = asset.file_dev !== null ? lstatSync(asset.path_file, { throwIfNoEntry: false }) : undefined
          if (st?.isFile() && st.dev === asset.file_dev && st.ino === asset.file_ino) {
            const seen = { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }
            const hash =
              seen.size <= SMALL_FILE
                ? fingerprintSmallFile(asset.path_file, seen)
                : await fingerprintFile(asset.path_file, seen)
            if (hash !== undefined) fingerprint = { id: asset.id, ...seen, hash }
          }
          const ff = await deps.ffmpeg()
          // Probing fills what the request left out.
          const missingProbe = ff.missing('ffprobe')
          if (missingProbe) warning.probe = missingProbe
          else {
            const fd = openSame(asset)
            let info: Record<string, unknown>
            try {
              // A damaged WAV chunk (bext, iXML) is left out with a warning, never a failure.
              const warn = (message: string) => (warning.bwf = message)
              info = (await probe(ff, asset.path_file, params.kind, { signal, fd, warn })) as Record<string, unknown>
            } finally {
              closeSync(fd)
            }
            // What the requests gave wins; a timecode a user set is kept (probed.ts).
            await port.run(
              media.setTechnical(asset.id, mergeProbed(params.kind, asset.technical, info, params.given), by),
            )
            await advance(IMPORT_STATUS.probed)
          }

          const missingFfmpeg = ff.missing('ffmpeg')
          if (missingFfmpeg) warning.proxy = missingFfmpeg
          else {
            const proxyDir = production.proxy_root
            const proxyDevice = readyProxyFolder(allDevices, proxyDir)
            // The source is still the file.
            closeSync(openSame(asset)) // checked now, and again for each run of ffprobe and ffmpeg
            progress({ step: 'proxy', percent: 0 })
            // ffmpeg's -progress position over the clip's duration (an image: at its end).
            const onProgress = (p: ProxyProgress) => {
              if (p.fraction !== undefined) progress({ percent: p.fraction * 100 })
            }
            // Named after the source (media/proxyname.ts), so that editing tools attach it by name;
            // its pictures are made by the same ffmpeg run (media/pictures.ts).
            const names = proxyNames(asset.path_file, asset.id)
            const common = {
              proxyDir,
              openProxyDir: () => openProxyFolder(proxyDevice.path, proxyDir),
              baseName: names.first,
              fallbackName: names.fallback,
              ifTaken: 'number' as const,
              pictures: true,
              signal,
              onProgress,
            }
            let made: Made
            if (params.rewrap_proxy && asset.path_proxy && readable(asset.path_proxy) && params.kind !== 'image') {
              made = await rewrapProxyWithPictures(ff, { ...common, source: asset.path_proxy, kind: params.kind })
            } else {
              if (params.rewrap_proxy)
                warning.rewrap = 'path_proxy is not set or not readable; a new proxy was made instead.'
              const source = asset
              // The device's transcoding profile, else the default one, else the built-in default (docs/media.md).
              const { profile, warning: unusable } = usableProfile(await port.run(profileFor(db, asset.device)))
              if (unusable) warning.profile = unusable
              made = await makeProxyWithPictures(ff, {
                ...common,
                source: source.path_file,
                openSource: () => openSame(source),
                kind: params.kind,
                profile,
              })
            }
            // A picture that could not be made is a warning; the proxy stands (docs/media.md, Pictures).
            if (made.warning) warning.pictures = made.warning
            const proxy = made.path
            await port.run(media.setProxy(asset.id, proxy, by, pictureVersionsOf(params.kind, made.pictures)))
            madeProxy = true
            progress({ percent: 100 })
            await advance(IMPORT_STATUS.proxied)
            named((await assetOf(asset.id))!)
          }
        }
      }
      const ff = await deps.ffmpeg()
      // Only work that may take long waits for its turn in the group; an import with nothing of it
      // (no move, no ffmpeg or ffprobe) runs beside the others.
      const heavy = online && (params.move !== undefined || !ff.missing('ffprobe') || !ff.missing('ffmpeg'))
      await (heavy && exclusive ? exclusive(steps) : steps())

      // The last write, work the runner does with the task's end in one transaction
      // (tasks/runner.ts Handler).
      const done = asset.id
      const read = fingerprint
      return function* () {
        if (read) yield* media.setFingerprints([read])
        yield* media.setStatus(done, 6, by)
        yield* logs.advance(params.logs, { status: IMPORT_STATUS.completed, error: '', warning })
        if (madeProxy) {
          const told = deps.proxied?.({ id: done, kind: params.kind })
          if (told) yield* told
        }
      }
    } catch (error) {
      // A shutdown leaves the task to resume from its safe point; anything else ends the import.
      if (error instanceof CancelledError && signal.reason === SHUTDOWN) throw error
      const reason = error instanceof CancelledError ? String(signal.reason) : describe(error)
      await port.run(importFailed(deps, params, reason, warning, by))
      throw new Error(reason)
    }
  }, IMPORT_GROUP)
}

/**
 * Moves a card clip's files (params.move.card) one by one, each planned (exact: under its own name,
 * or not at all) and its plan recorded before the disk changes, as a single file's move is; a
 * resume goes on from the file recorded. A file of the card other than the essence that is gone
 * meanwhile is passed over; the essence, last, must be there. Answers the essence's move.
 */
async function moveCardFiles(c: {
  params: ImportParams
  asset: { path_file: string; file_dev: number | null; file_ino: number | null }
  source: { path: string }
  target: { path: string }
  signal: AbortSignal
  save: (params: ImportParams) => void | Promise<void>
  progress: (p: Record<string, unknown>) => void
  /** The asset other than this one catalogued at a path, if any. */
  taken: (path: string) => Promise<number | undefined>
}): Promise<MoveResult> {
  const move = c.params.move!
  const card = move.card!
  let plan = move.plan as MovePlan | undefined
  let done = card.done ?? 0
  const copied: Record<string, string> = { ...card.copied }
  let historyWritten = card.historyWritten === true
  const record = async (next: MovePlan | undefined, at: number) => {
    await c.save({
      ...c.params,
      move: { ...move, plan: next, card: { ...card, done: at, copied, ...(historyWritten ? { historyWritten } : {}) } },
    })
  }
  // Bytes to copy when the move crosses file systems: the sizes of the files still to move.
  let total = 0
  for (const rel of card.files.slice(done)) total += lstatSync(card.from + rel, { throwIfNoEntry: false })?.size ?? 0
  let before = 0
  c.progress({ step: 'move', bytes_done: 0, bytes_total: total, percent: 0 })
  for (; done < card.files.length; done++) {
    const rel = card.files[done]!
    const last = done === card.files.length - 1
    if (!plan) {
      try {
        plan = planMove({
          source: card.from + rel,
          sourceRoot: c.source.path,
          targetRoot: c.target.path,
          targetDir: card.to + dirName(rel),
          exact: true,
          expect:
            last && c.asset.file_dev !== null && c.asset.file_ino !== null
              ? { dev: c.asset.file_dev, ino: c.asset.file_ino }
              : undefined,
        })
      } catch (error) {
        if (!last && (error as NodeJS.ErrnoException).code === 'ENOENT') continue // gone meanwhile: nothing to move
        throw error
      }
      if (last) {
        const other = await c.taken(destinationPath(plan))
        if (other !== undefined)
          throw new Error(`asset ${other} is catalogued at ${destinationPath(plan)}; nothing was moved`)
      }
      await record(plan, done)
    }
    let current: MovePlan = plan
    const heldPath = card.from + rel
    const size = plan.file.size
    const moved = await whileInUse(
      () =>
        moveFile(current, {
          signal: c.signal,
          record: (next) => {
            current = next
            return record(next, done)
          },
          onProgress: (bytes) =>
            c.progress({
              bytes_done: before + bytes,
              bytes_total: total,
              percent: total > 0 ? Math.min(100, ((before + bytes) / total) * 100) : null,
            }),
        }),
      {
        signal: c.signal,
        path: (error) =>
          error.path && !error.path.startsWith('.reelhouse-move-') && error.path !== current.source.rel
            ? current.target.root + error.path
            : heldPath,
        onWait: (path) => c.progress({ step: waitingStep(path) }),
        onRetry: () => c.progress({ step: 'move' }),
      },
    )
    before += size
    if (moved.xxh64) copied[rel] = moved.xxh64
    if (last) {
      c.progress({ bytes_done: total, bytes_total: total, percent: 100 })
      // Once: a resume after the generation was written (a crash before the task's end) writes none.
      if (!historyWritten && recordCardHistory(card, copied, c.progress)) {
        historyWritten = true
        await record(current, done)
      }
      return moved
    }
    plan = undefined
    await record(undefined, done + 1)
  }
  throw new Error('the card move has no essence to move')
}

/**
 * The ASC MHL generation of a card clip's files copied across file systems (docs/cards.md): a
 * `transfer` generation at the card's new folder listing each copied file with the hash its
 * verified copy read, so that every copied card carries its history (`ascmhl/` at its root; one
 * generation per clip, as each clip is its own import). A rename copies no bytes and has nothing
 * to record. A card that came with a history of its own (a DIT tool's offload) keeps it as it
 * came, no generation of ours added: whether it did was decided once, when the card's imports were
 * registered (arrivedWithHistory), not by each clip from the source, which its own files leave.
 * A history that cannot be written does not undo the move: the task's progress says why. True
 * when a generation was written.
 */
function recordCardHistory(
  card: NonNullable<NonNullable<ImportParams['move']>['card']>,
  copied: Record<string, string>,
  progress: (p: Record<string, unknown>) => void,
): boolean {
  const files = card.files.filter((rel) => copied[rel] !== undefined)
  if (!files.length) return false
  const root = card.to.replace(/[\\/]+$/, '')
  if (card.arrivedWithHistory) return false
  // Imports registered before the card's params said it: the source as it is now.
  if (
    card.arrivedWithHistory === undefined &&
    (lstatSync(card.from + MHL_FOLDER, { throwIfNoEntry: false }) ||
      card.files.some((f) => splitRel(f)[0] === MHL_FOLDER))
  )
    return false
  try {
    newGeneration(
      root,
      files.map((rel) => {
        const s = statSync(card.to + rel)
        return { path: splitRel(rel).join('/'), size: s.size, lastModified: new Date(s.mtimeMs), xxh64: copied[rel]! }
      }),
      { process: 'transfer', comment: `move of ${splitRel(card.files.at(-1)!).join('/')} into the production` },
    )
    return true
  } catch (error) {
    progress({ history_problem: `the card's ASC MHL history was not written: ${describe(error)}` })
    return false
  }
}

/**
 * The card's folders where it was dropped, once empty: each folder of the files moved, up to the
 * card's own folder (when it had one; never the watch folder it lay in). Each clip's import tries;
 * the one that empties a folder removes it.
 */
function removeCardFolders(sourceRoot: string, card: NonNullable<NonNullable<ImportParams['move']>['card']>) {
  const base = below(sourceRoot, card.from)
  if (base === undefined) return
  const folders = new Set<string>()
  for (const rel of card.files) for (let d = dirName(rel); d !== ''; d = dirName(d)) folders.add(base + d)
  const own = trimSep(base)
  if (card.own && own !== '') folders.add(own)
  const deepestFirst = [...folders].sort((a, b) => relParts(b).length - relParts(a).length)
  try {
    removeEmptyFolders(sourceRoot, deepestFirst)
  } catch {
    // Left as they are: an empty folder is no harm.
  }
}

/** A regular file at `path` itself (a link is not followed). */
function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path).isFile()
  } catch {
    return false
  }
}

function readable(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** The user who asked (none: the watcher) still exists, may write to the production, and to every path's owners. */
function* recheck(
  db: Db,
  t: { user?: number; asker: Principal | undefined; production: number; paths: string[] },
): Work<string | undefined> {
  if (t.user === undefined) return undefined
  const user = t.asker
  if (!user) return 'the user who asked for the import no longer exists'
  if (!canWrite(user, t.production))
    return `the user who asked for the import no longer has write access to production ${t.production}`
  for (const path of t.paths) {
    const foreign = yield* territoryProblem(db, path, user, t.production, false)
    if (foreign) return foreign.detail
  }
  return undefined
}
