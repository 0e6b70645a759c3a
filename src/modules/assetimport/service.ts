// The ingest road (docs/api.md, Import, docs/api.md, Import): one function from "a file" to "a catalogued
// asset". The HTTP endpoint calls register() with a validated request and the user; the device
// watcher will call it with a request it builds and SYSTEM. Everything a request can be refused
// for is checked before anything is written, then one transaction writes the asset (created, or
// updated when an asset of the kind has the path), its keywords, the ImportLog and the import
// task. A bad path_file is the one refusal that leaves a trace: its ImportLog is committed, then
// the 406 is answered.
//
// Whose a file is comes before anything is said of it (docs/api.md, Import): a file in another production's
// folders, or one another production catalogues as any kind (a shared upload device holds the
// files of several), needs write access to that production too, and is never moved from under
// that production's assets. To a user who cannot read that production both refusals read alike,
// as for any file they may not import. What the service wrote itself (proxies, the data folder,
// its temporary names) is never input, as for the watcher.
import { eq, sql } from 'drizzle-orm'
import { type Db, dataFolderOf } from '../../db/client.ts'
import { type Port, type Work, one, oneOf, statement, tx } from '../../db/port.ts'
import { CONTENT_TYPE_IDS, type MediaKind, devices, mediaAssets, productions } from '../../db/tables.ts'
import { AppError, field, forbidden, invalid } from '../../http/errors.ts'
import {
  PathError,
  type PathRules,
  below,
  fileOnDevice,
  folderBelow,
  isInside,
  realOf,
  relParts,
  rulesFor,
} from '../../storage/paths.ts'
import { neverImported } from '../../watch/ingest.ts'
import { ignoreRules } from '../../watch/patterns.ts'
import { type CardImport, cardAtImport } from './cards.ts'
import { requireFileWork } from '../../storage/platform.ts'
import type { Runner } from '../../tasks/runner.ts'
import { isoTimestamp } from '../../util/time.ts'
import type { HoldDurations } from '../assetholddurations/service.ts'
import type { CustomMetadata } from '../custommetadata/service.ts'
import type { Devices } from '../devices/service.ts'
import { IMPORT_STATUS, type ImportLogs } from '../importlogs/service.ts'
import { type MediaAssets, identityOfFile } from '../mediaassets/service.ts'
import { ownOutputFolders } from '../productions/lookup.ts'
import { territoryProblem } from '../projectassets/bundles.ts'
import { canRead, canWrite, requireWrite } from '../users/access.ts'
import { actorOf, historyOf, system } from '../history/service.ts'
import type { Principal } from '../users/service.ts'
import { type ImportRequest, refuseTooManyKeywords } from './rules.ts'
import { TIMECODE_MEMBERS } from './probed.ts'
import type { ImportParams } from '../../tasks/kinds.ts'
import { heldImportAssets, heldImportOf } from '../../tasks/queries.ts'

export type { ImportParams }

export type ImportResult = {
  asset_path: string
  status: string
  warning: Record<string, string>
  error: string
  asset_import_id: number
  payload: string
  asset_type: string
  /** The task that moves, probes and makes the proxy (its url added by the controller). */
  task: { id: number; state: 'queued' | 'running' | 'done' | 'failed' }
}

/**
 * Where move_asset puts a file (docs/api.md, Import): into the production's own area,
 * `STORAGE_ROOT/<video|audio|image>/`, when the device moved to is the device that holds the
 * production's storage_root (the device with the longest path that is a prefix of it, as for any
 * path: a device nested inside another is not the outer one's); on any other device
 * `DEVICE/PRODUCTION_CODENAME/<kind>/`. A production's media lands where the production lives,
 * not in a folder beside it (docs/watcher.md, Laying out drop folders).
 */
export function moveFolder(
  allDevices: readonly { id: number; path: string }[],
  device: { id: number; path: string },
  production: { codename: string; storage_root: string },
  kind: MediaKind,
  rules: PathRules = PLATFORM_RULES,
): string {
  const root = rules.cleanDir(production.storage_root)
  return rules.deviceFor(allDevices, root)?.id === device.id
    ? folderBelow(root, [kind], rules.sep)
    : folderBelow(device.path, [production.codename, kind], rules.sep)
}

/** The path rules of the platform the service runs on (moveFolder's; another platform's in its tests). */
const PLATFORM_RULES = rulesFor(process.platform)

/**
 * The assets whose file an import task is moving or will move: they show is_production false
 * until the file is in place, and the watcher leaves their is_production to the task. Read once
 * per scan, from the queued and running tasks (the tasks_state index).
 */
export function* assetsBeingMoved(db: Db): Work<Set<number>> {
  return yield* heldImportAssets(db)
}

/** The columns an import sets, as history records them (by the record's names: approval is status_approval). */
const IMPORTED_FIELDS = [
  'name',
  'description',
  'path_file',
  'device',
  'is_archive',
  'is_production',
  'status_approval',
  'meta_field_store',
  'archive_details',
  'technical',
  'status_asset',
  'path_proxy',
  'date_crt',
  'date_add',
  'date_del',
] as const

/** A row with its fields named as the record shows them, for history. */
const named = <R extends { approval: number }>(row: R) => ({ ...row, status_approval: row.approval })

/** How long the real paths of the service's own folders are kept at most (ownRealFolders). */
const OWN_REAL_MS = 1000

const VIDEO_MEMBERS = [
  'annotation_markers',
  'display_aspect_ratio',
  'duration',
  'format',
  'fps',
  'height',
  'width',
  'offset_frames',
  'offset_string',
] as const

export function createImports(
  port: Port,
  deps: {
    media: MediaAssets
    devices: Devices
    holds: HoldDurations
    metadata: CustomMetadata
    logs: ImportLogs
    runner: Runner
  },
) {
  const db = port.db
  // The statements every import runs, built once (prepared on SQLite): built by drizzle and
  // compiled by SQLite on each call they were most of an import's time (bench/import-profile.ts).
  const p = (name: string) => sql.placeholder(name)
  const productionByName = statement(() =>
    db
      .select()
      .from(productions)
      .where(eq(productions.name, p('name'))),
  )
  const productionById = statement(() =>
    db
      .select()
      .from(productions)
      .where(eq(productions.id, p('id'))),
  )
  // The queue's own statement (tasks/queries.ts).
  const heldMoveOf = heldImportOf(db)
  /**
   * Whether a queued or running import moves the asset's file. An asset is held only while
   * offline: an online one needs no look at the queue (most re-imports).
   */
  function* beingMoved(asset: { id: number; is_production: boolean }): Work<boolean> {
    return !asset.is_production && (yield* oneOf(heldMoveOf, { asset: asset.id })) !== undefined
  }

  /**
   * The real paths of the folders whose files are the service's own output (ownOutputFolders),
   * kept while that list stands rather than resolved again on every request, for folders that
   * rarely change. Made again when a proxy_root is set or changed (the list differs), and at
   * most OWN_REAL_MS after it was made, for a folder replaced on disk since (a link put where a
   * proxy_root was).
   */
  let ownReal: { key: string; at: number; dirs: { dir: string; real: string }[] } | undefined
  function* ownRealFolders(): Work<{ dir: string; real: string }[]> {
    const folders = yield* ownOutputFolders(db)
    const key = folders.join('\0')
    const now = Date.now()
    if (!ownReal || ownReal.key !== key || now - ownReal.at > OWN_REAL_MS)
      ownReal = { key, at: now, dirs: folders.map((dir) => ({ dir, real: realOf(dir) })) }
    return ownReal.dirs
  }

  /**
   * Why a file (by its real path) is the service's own output, or undefined: it lies in a
   * production's proxy_root or in the data folder (ownOutputFolders, the watcher's rule), or it is
   * an asset's path_proxy wherever that lies. A move would take a proxy from its asset, or the
   * catalogue from the service.
   */
  function* ownOutput(path: string, real: string): Work<string | undefined> {
    const data = dataFolderOf(db)
    for (const { dir, real: dirReal } of yield* ownRealFolders()) {
      if (isInside(dirReal, real))
        return dir === data
          ? "path_file lies in the service's data folder."
          : "path_file lies in a production's proxy_root: the service's own proxies are never imported."
    }
    if (yield* deps.media.isProxy(path))
      return "path_file is an asset's proxy (its path_proxy): the service's own proxies are never imported."
    return undefined
  }

  /**
   * The 403 for a path_file that `owner`, another production, holds (in its folders, or in its
   * catalogue): named to a user who can read it; to the others one answer, whatever holds it.
   */
  const notYours = (actor: Principal, owner: number, how: string) =>
    forbidden(
      canRead(actor, owner)
        ? `path_file ${how} production ${owner}; you need write access to production ${owner}.`
        : 'You may not import this path_file: it belongs to a production you do not have write access to.',
    )

  /**
   * A 406 that leaves its ImportLog behind (docs/api.md, Import): the log is written first, outside
   * the import's transaction (which it never reaches), so it is committed with its own statement.
   */
  function* refusePath(req: ImportRequest, payload: string, production: number, detail: string): Work<never> {
    yield* deps.logs.append({
      asset_type: `${req.type}asset`,
      asset_path: req.asset.asset_meta.path_file,
      status: detail,
      error: detail,
      payload,
      asset_import_id: null,
      production,
    })
    throw AppError.plain(406, { type: 'path_file', detail })
  }

  return {
    /**
     * Registers the import. `payload` is the request as it came (for the ImportLog). Throws
     * AppError: 400 (production, destination, metadata), 403 (permissions, territory), 406
     * (path_file, with its log written).
     *
     * `newOnly` (the watcher's own imports): only a file no asset of that kind has is imported;
     * AlreadyCatalogued when one has it by the time the import is written. A watch-folder file
     * may become an asset's between the scan's look and this write (another scan relinked a
     * moved clip to it): a re-import would put the watcher's bare request (its file name, empty
     * metadata) over that asset's record.
     */
    *register(
      req: ImportRequest,
      actor: Principal,
      payload: string,
      options?: { newOnly: true; card?: CardImport },
    ): Work<ImportResult> {
      requireFileWork() // the import task probes, moves and makes proxies
      const kind = req.type
      const meta = req.asset.asset_meta
      // Every category and keyword is a row or two written in the one transaction: bounded
      // together, so one request cannot hold the catalogue (and every other request) for seconds,
      // also with thousands of categories and no keywords.
      refuseTooManyKeywords(req.asset.keywords)
      const byId = typeof req.production === 'number'
      const production = byId
        ? yield* oneOf(productionById, { id: req.production })
        : yield* oneOf(productionByName, { name: req.production as string })
      if (!production || !canRead(actor, production.id))
        throw invalid('/production', `No production with this ${byId ? 'id' : 'name'}.`)
      requireWrite(actor, production.id)
      let destination: { id: number; name: string } | undefined
      if (req.move_asset) {
        const id = req.asset_destination === undefined ? production[`${kind}asset_device`] : undefined
        destination = yield* one(
          db
            .select({ id: devices.id, name: devices.name })
            .from(devices)
            .where(id !== undefined ? eq(devices.id, id) : eq(devices.name, req.asset_destination!)),
        )
        if (!destination) throw invalid('/asset_destination', 'No device with this name.')
      }
      yield* deps.metadata.validateStore(
        CONTENT_TYPE_IDS[`${kind}asset`],
        meta.meta_field_store,
        '/asset/asset_meta/meta_field_store',
      )

      // path_file (docs/api.md, Import): absolute, on a device, no link on the way; a regular file that
      // exists unless the asset is archive-only. Anything else is the 406 with its log.
      const archiveOnly = meta.is_archive && !meta.is_production
      const allDevices = yield* deps.devices.list()
      let file
      try {
        file = fileOnDevice(allDevices, meta.path_file)
      } catch (error) {
        if (error instanceof PathError) return yield* refusePath(req, payload, production.id, error.message)
        throw error
      }
      // A move takes the asset out of production until its file is in place (clients wait for
      // is_production true); the task puts it back. An archive-only asset has no file to move.
      const moves = destination !== undefined && meta.is_production
      // Territory (docs/api.md, Permissions) before anything is said of the file: a file in another
      // production's folders needs write access there too (and a 406 would tell whether it exists).
      // The same for the folder a move puts it in (moveFolder: the production's own storage_root,
      // or DEVICE/CODENAME/<kind>/ on another device).
      const territory = yield* territoryProblem(db, file.path, actor, production.id, false)
      if (territory) throw notYours(actor, territory.production!, 'lies inside the folders of')
      const destinationDir =
        destination && moveFolder(allDevices, allDevices.find((d) => d.id === destination.id)!, production, kind)
      const foreignDestination =
        destinationDir && (yield* territoryProblem(db, destinationDir, actor, production.id, false))
      if (foreignDestination) throw forbidden(foreignDestination.detail)
      // Another production's assets at the path, of any kind (offline ones too: they name it):
      // that production's write access is needed, and even with it the file is not moved away
      // from them. (The same kind of asset is refused below whoever asks: a re-import never moves
      // an asset between productions.)
      const owners = new Set<number>()
      for (const { id } of yield* deps.media.atPathForScan(file.path)) {
        const owner = (yield* deps.media.byId(id))?.production
        if (owner !== undefined && owner !== production.id) owners.add(owner)
      }
      for (const owner of owners) if (!canWrite(actor, owner)) throw notYours(actor, owner, 'is catalogued by')
      if (owners.size > 0 && moves)
        throw invalid(
          '/move_asset',
          `path_file is catalogued by production ${[...owners].join(', ')} too; a move would take the file from its assets. Import it without move_asset.`,
        )
      // The service's own output is never input (docs/watcher.md, as for the watcher).
      const own = yield* ownOutput(file.path, file.real ?? realOf(file.path))
      if (own) return yield* refusePath(req, payload, production.id, own)
      if (!archiveOnly && file.stat?.kind !== 'file')
        return yield* refusePath(
          req,
          payload,
          production.id,
          file.stat
            ? 'path_file is not a regular file.'
            : 'path_file does not exist (it must be an existing file unless the asset is archived only).',
        )

      // Never input either (docs/cards.md, Ignored files): an editing application's cache, AppleDouble
      // and desktop files, and what the production's own ignore patterns name. Then camera cards: a
      // file of a card that is not a clip's essence is not an asset (its clip is), and a clip is
      // imported with its card's facts; a card moves whole, which only the watcher does.
      let card: CardImport | undefined
      const rel = below(file.device.path, file.path)
      if (rel !== undefined) {
        const names = relParts(rel)
        const never = neverImported(rel)
        if (never) return yield* refusePath(req, payload, production.id, `path_file is never imported: ${never}.`)
        const pattern = ignoreRules(production.ignore_patterns).match(names)
        if (pattern)
          return yield* refusePath(
            req,
            payload,
            production.id,
            `path_file matches the production's ignore pattern ${JSON.stringify(pattern)}: it is never imported.`,
          )
        const found = archiveOnly ? undefined : (options?.card ?? cardAtImport(file.device.path, names))
        if (found && 'reason' in found)
          return yield* refusePath(
            req,
            payload,
            production.id,
            `path_file is ${found.reason}; it is not imported as an asset of its own${found.essence ? ` (its clip's asset is ${found.essence})` : ''}.`,
          )
        card = found
        if (card && moves && !card.move)
          throw invalid(
            '/move_asset',
            'path_file is a clip of a camera card, and a card is moved whole, never clip by clip (docs/cards.md): drop the card into the watch folder of a production whose move_uploads is true, or import it without move_asset.',
          )
      }

      // path_proxy is read by a rewrap and copied into the proxy folder: the same gate as path_file,
      // so a request cannot have the service copy a file from off the devices or from another
      // production's folders.
      const proxyPath =
        meta.path_proxy === undefined
          ? undefined
          : field('/asset/asset_meta/path_proxy', () => fileOnDevice(allDevices, meta.path_proxy!)).path
      if (proxyPath) {
        const foreign = yield* territoryProblem(db, proxyPath, actor, production.id, false)
        if (foreign) throw forbidden(foreign.detail)
      }
      const now = isoTimestamp()
      const technical: Record<string, unknown> =
        kind === 'video'
          ? Object.fromEntries(VIDEO_MEMBERS.filter((m) => meta[m] !== undefined).map((m) => [m, meta[m]]))
          : { ...req.asset.technical_details }
      // A timecode the request gives is the user's: it replaces the asset's whole timecode, and
      // later imports keep it (probed.ts).
      const timecodeGiven = TIMECODE_MEMBERS[kind].some((m) => technical[m] !== undefined)
      const withoutTimecode = (current: Record<string, unknown>) =>
        timecodeGiven
          ? Object.fromEntries(Object.entries(current).filter(([k]) => !TIMECODE_MEMBERS[kind].includes(k)))
          : current
      if (timecodeGiven) technical.timecode_source = 'request'
      // The card's facts (docs/cards.md): a clip imported again takes them anew.
      if (card?.facts) technical.card = card.facts
      /**
       * The columns an import writes, over what the asset at this path (if any) already has. An
       * asset whose file a queued or running task moves (`held`, read before: beingMoved) stays
       * out of production until it is done.
       */
      const valuesOver = (
        existing: { description: string; date_crt: string | null; path_proxy: string } | undefined,
        held: boolean,
      ) => ({
        name: meta.name,
        description: meta.description ?? existing?.description ?? '',
        is_archive: meta.is_archive,
        approval: meta.approval,
        is_production: meta.is_production && !moves && !held,
        meta_field_store: meta.meta_field_store,
        archive_details: req.asset.archive_details as Record<string, unknown>,
        status_asset: 0,
        status_asset_description: meta.status_asset_description ?? 'NEW',
        date_crt: meta.date_crt ?? existing?.date_crt ?? null,
        date_mod: now,
        path_proxy: proxyPath ?? existing?.path_proxy ?? '',
        device: file.device.id,
        ...identityOfFile(file.stat?.kind === 'file' ? file.stat : undefined),
      })

      // One transaction writes it all (the asset, its keywords and history, the log, the task).
      const { assetId, status, taskId } = yield* tx(function* () {
        // Looked up once, inside the transaction that writes: of 20 identical requests at once,
        // one creates the asset and the others update it. A refusal here has written nothing.
        const current = yield* deps.media.byPath(file.path, kind)
        if (current && options?.newOnly) throw new AlreadyCatalogued(current.id)
        if (current && current.production !== production.id)
          throw invalid(
            '/production',
            `A ${kind} asset with this path_file belongs to another production; a re-import never moves an asset between productions.`,
          )
        const held = meta.is_production && !moves && current !== undefined && (yield* beingMoved(current))
        const values = valuesOver(current, held)
        // The history row of the import: what it set over the asset, or the new asset. The watcher's
        // own imports are the system's; an import a user asks for is theirs (and forgets a delete's
        // "do not import this file again": the user asks for it).
        const by = actor.id === 0 ? system(options?.newOnly ? 'watcher' : 'import') : actorOf(actor, 'import')
        if (!options?.newOnly) yield* deps.media.forgetDismissed(file.path)
        const inserted = current
          ? undefined
          : // date_add: when the asset was first added, so a re-import leaves it; a hold duration counts from it.
            yield* deps.media.insertImported({
              ...values,
              kind,
              production: production.id,
              path_file: file.path,
              technical,
              date_add: meta.date_add ?? now,
              date_del:
                meta.date_del ??
                (yield* deps.holds.dateDel(`${kind}asset`, file.device.name, production.name, meta.date_add ?? now)),
            })
        if (current)
          yield* deps.media.updateImported(current.id, {
            ...values,
            technical: { ...withoutTimecode(current.technical), ...technical },
            date_del: meta.date_del ?? current.date_del,
          })
        const assetId = current?.id ?? inserted!.id
        // Added to those the asset has (a category with no keyword attaches nothing, makes no row;
        // the asset's own row stays as written).
        yield* deps.media.writeKeywords(assetId, kind, req.asset.keywords, 'add')
        const after = named(inserted ?? (yield* deps.media.byId(assetId))!)
        if (current)
          yield* historyOf(db).updated(
            by,
            { resource: `${kind}asset`, id: assetId, production: production.id },
            named(current),
            after,
            IMPORTED_FIELDS,
          )
        else
          yield* historyOf(db).record(by, {
            resource: `${kind}asset`,
            id: assetId,
            action: 'create',
            production: production.id,
            changes: historyOf(db).snapshot(after, IMPORTED_FIELDS, 'create'),
          })
        const status = current ? IMPORT_STATUS.updated : IMPORT_STATUS.created
        const logId = yield* deps.logs.append({
          asset_type: `${kind}asset`,
          asset_path: meta.path_file,
          status,
          payload,
          asset_import_id: assetId,
          production: production.id,
          asset_config: {
            move_asset: req.move_asset,
            rewrap_proxy: req.rewrap_proxy,
            ...(destination ? { asset_destination: destination.name } : {}),
          },
        })
        const params: ImportParams = {
          asset: assetId,
          kind,
          logs: [logId],
          rewrap_proxy: req.rewrap_proxy,
          ...(moves
            ? {
                move: {
                  device: destination!.id,
                  held: true as const,
                  ...(card?.move
                    ? {
                        card: {
                          from: card.move.from,
                          to: card.move.to,
                          files: card.move.files,
                          own: card.move.own,
                          ...(card.move.arrivedWithHistory !== undefined
                            ? { arrivedWithHistory: card.move.arrivedWithHistory }
                            : {}),
                        },
                      }
                    : {}),
                },
              }
            : {}),
          given: kind === 'video' ? Object.keys(technical) : Object.keys(req.asset.technical_details),
          ...(actor.id ? { user: actor.id } : {}),
        }
        // One queued import per asset and options: a second request while the first waits joins
        // it, and the task advances both logs.
        const key = `import:${assetId}:${destination?.id ?? ''}:${req.rewrap_proxy}`
        const task = yield* deps.runner.enqueue({
          kind: 'import',
          target: { [`${kind}asset`]: assetId },
          production: production.id,
          params,
          key,
          // The queued task advances this log too, and keeps what this request gave from the probe.
          merge: (queued, added) => ({
            ...queued,
            logs: [...queued.logs, ...added.logs],
            given: [...new Set([...queued.given, ...added.given])],
          }),
        })
        return { assetId, status, taskId: task.id }
      })
      // The task that moves, probes and makes the proxy, to follow (GET /api/tasks/{id}/): queued,
      // new or merged into a queued one (the runner claims it in a microtask, after this answer is made).
      return {
        asset_path: meta.path_file,
        status,
        warning: {},
        error: '',
        asset_import_id: assetId,
        payload,
        asset_type: `${kind}asset`,
        task: { id: taskId, state: 'queued' },
      }
    },
  }
}

export type Imports = ReturnType<typeof createImports>

/** register() with `newOnly`: an asset has the file already (nothing was written). */
export class AlreadyCatalogued extends Error {
  constructor(readonly asset: number) {
    super(`asset ${asset} has this file already`)
  }
}
