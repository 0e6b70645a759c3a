// Phase 6, ingest: new files in a watch folder are imported once they stopped growing
// (docs/watcher.md), through the same register() as POST /api/asset/import/, by the service itself
// (SYSTEM). Never a file that is an asset's proxy, nor while a start scan that may find it to be a
// moved asset is due; a file with the content of an asset still in place on another device is held.
// Then the files no asset has are remembered, names not UTF-8 get a failed ImportLog, and files not
// decided are said. Hands on (Ingested) the counts for the report.
import type { Db } from '../../db/client.ts'
import { type Work, all, tx } from '../../db/port.ts'
import { devices, productions } from '../../db/tables.ts'
import { AppError } from '../../http/errors.ts'
import { AlreadyCatalogued, moveFolder } from '../../modules/assetimport/service.ts'
import { IMPORT_STATUS } from '../../modules/importlogs/service.ts'
import { SYSTEM } from '../../modules/users/service.ts'
import { baseName, below, relParts } from '../../storage/paths.ts'
import { removeEmptyFolders } from '../../storage/file.ts'
import { openForWriting } from '../../storage/writers.ts'
import { kindOf } from '../ingest.ts'
import type { DiskEntry, IngestCandidate } from '../reconcile.ts'
import { type IgnoreRules, ignoreRules } from '../patterns.ts'
import type { Applied } from './apply.ts'
import { type Candidate, type Upload, finishCard, settledCards, sortOutCards } from './cards.ts'
import type { Decided } from './decide.ts'
import type { Gathered } from './gather.ts'
import { movesUpload } from './owner.ts'
import { type ScanRun, eachInSlices, look, readFingerprints } from './run.ts'
import type { Verified } from './verify.ts'
import type { Walked } from './walk.ts'

/** How often a held file (an asset's content, its original still in place) is looked at again. */
const HELD_LOOK_MS = 30_000

export type Ingested = {
  imported: number
  /** Files not imported yet: still settling, imports not open yet, or held open by a writer. */
  waiting: string[]
  /** Files held: the content of an asset whose file is still in place on another device. */
  held: { path: string; asset: number }[]
}

type Run = ScanRun & Walked & Gathered & Decided & Verified & Applied

export async function ingest(run: Run): Promise<Ingested> {
  const { deps, device, outcome } = run
  const waiting: string[] = []
  const uploads = await run.port.run(uploadsOf(run.db))
  const ignored = ignoredBy(run, uploads)
  // The files of camera cards apart: a card is imported whole, once all of it has settled (cards.ts).
  // Those a card does not take (outside its layout, not its own) are any files (plain).
  const { plain, cards } = sortOutCards(run, outcome.ingest, uploads)
  const proxies = await proxiesAmong(run, [...cards.values()].flat())
  const settledCardList = cards.size
    ? await run.port.run(
        settledCards(
          run,
          cards,
          {
            uploads,
            open: deps.importsOpen?.() ?? true,
            *state(file) {
              if ((yield* deps.media.atPathForScan(file.path)).length > 0) return 'catalogued'
              if (proxies.has(file.path) || (yield* deps.media.dismissed(file.path, file)) || ignored(file))
                return 'unwanted'
              return 'new'
            },
            *catalogued(path) {
              return (yield* deps.media.atPathForScan(path)).length > 0
            },
          },
          waiting,
          plain,
        ),
      )
    : []
  let settled = await settledFiles(run, plain, ignored, waiting)
  const cardFiles = settledCardList.flatMap((c) => c.clips.map((x) => x.file))
  const held = await holdMoves(run, [...settled, ...cardFiles])
  const heldPaths = new Set(held.map((h) => h.path))
  if (held.length) settled = settled.filter((f) => !heldPaths.has(f.path))
  if (held.length)
    deps.later(
      device.id,
      held.map((h) => h.path),
      HELD_LOOK_MS,
    )
  // A production's cards go where its videos go (moveFolder): STORAGE_ROOT/video/, or DEVICE/CODENAME/video/.
  const deviceList = [...run.roots].map(([id, path]) => ({ id, path }))
  const placeOf = (p: Upload) => {
    const root = run.roots.get(p.videoasset_device)
    if (root === undefined) return undefined
    const parent = moveFolder(deviceList, { id: p.videoasset_device, path: root }, p, 'video')
    return { device: p.videoasset_device, root, parent }
  }
  // A card with a clip held (moved here from another file system, its original still in place) waits whole.
  const candidates: Candidate[] = settled.map((file) => ({ file }))
  for (const card of settledCardList) {
    if (card.clips.some((c) => heldPaths.has(c.file.path))) continue
    candidates.push(...finishCard(run, card, uploads, placeOf))
  }
  ignored.said()
  const { imported, ingested } = await importSettled(run, candidates, uploads, waiting)
  releaseUnusedCardFolders(run, candidates, ingested)
  deps.recent.remember(
    outcome.strangers.filter((e) => !ingested.has(e.path)),
    run.now,
  )
  if (run.undecodable.size) await run.port.run(logUndecodable(run))
  for (const a of outcome.ambiguous)
    deps.log.warn('a file was not relinked: nothing was guessed', {
      path: a.path,
      assets: a.assets.join(','),
      reason: a.reason,
    })
  if (waiting.length) deps.later(device.id, waiting, deps.settleMs)
  return { imported, waiting, held }
}

/**
 * A card's folder made for a move none of whose clips was imported after all (another scan took
 * them meanwhile, a refusal): removed again while empty, so no empty `A001_1` is left behind.
 */
function releaseUnusedCardFolders(run: Run, candidates: readonly Candidate[], ingested: ReadonlySet<string>) {
  const folders = new Map<string, { device: number; used: boolean }>()
  for (const c of candidates) {
    const move = c.card?.move
    if (!move) continue
    const at = folders.get(move.to) ?? { device: move.device, used: false }
    at.used ||= ingested.has(c.file.path)
    folders.set(move.to, at)
  }
  for (const [to, { device, used }] of folders) {
    const root = run.roots.get(device)
    const rel = root === undefined ? undefined : below(root, to)
    if (used || root === undefined || !rel) continue
    try {
      removeEmptyFolders(root, [rel])
    } catch {
      // Left as it is: an empty folder is no harm.
    }
  }
}

/** Which of `files` are some asset's proxy: a thousand paths a query, with turns between. */
async function proxiesAmong(run: Run, files: readonly IngestCandidate[]): Promise<Set<string>> {
  const proxies = new Set<string>()
  for (let i = 0; i < files.length; i += 1000) {
    const chunk = files.slice(i, i + 1000).map((f) => f.path)
    for (const p of await run.port.run(run.deps.media.proxiesAmong(chunk))) proxies.add(p)
    await run.breathe()
  }
  return proxies
}

/**
 * Whether a production's own ignore patterns name a new file (docs/cards.md, Ignored files): its
 * path from its device's root, against the patterns of the production it would go to. `said()`
 * writes one log line for the scan (how many, and the first with its pattern), not one per file.
 */
function ignoredBy(run: Run, uploads: ReadonlyMap<number, Upload>) {
  const rules = new Map<number, IgnoreRules>()
  let count = 0
  let first: { path: string; production: number; pattern: string } | undefined
  const test = (file: IngestCandidate): boolean => {
    const p = uploads.get(file.production)
    if (!p?.ignore_patterns.length) return false
    let r = rules.get(p.id)
    if (!r) rules.set(p.id, (r = ignoreRules(p.ignore_patterns)))
    const root = run.roots.get(file.device)
    const rel = root === undefined ? undefined : below(root, file.path)
    const pattern = rel === undefined ? undefined : r.match(relParts(rel))
    if (pattern === undefined) return false
    count++
    first ??= { path: file.path, production: p.id, pattern }
    return true
  }
  const said = () => {
    if (first)
      run.deps.log.info("files are not imported: their production's ignore_patterns name them", { count, ...first })
  }
  return Object.assign(test, { said })
}

/** The new files that stopped growing (settled) and may be imported now; the others go to `waiting`. */
async function settledFiles(
  run: Run,
  files: readonly IngestCandidate[],
  ignored: (file: IngestCandidate) => boolean,
  waiting: string[],
): Promise<IngestCandidate[]> {
  const { deps } = run
  const { media } = deps
  const proxies = await proxiesAmong(run, files)
  const open = deps.importsOpen?.() ?? true
  // A drop of 20,000 files is 20,000 lookups and then 20,000 imports written one by one: done in
  // slices (see the run's `slice`), so that requests are answered meanwhile.
  const settled: IngestCandidate[] = []
  await eachInSlices(run, files, function* (file) {
    // Our own, or catalogued meanwhile (any kind, online or not): never twice. (The scan's light
    // rows at the path, not whole records: this is asked once per file of a drop.)
    if (proxies.has(file.path) || (yield* media.atPathForScan(file.path)).length > 0) return
    // A file whose asset a user deleted (at this path, or moved here since): not imported again.
    if (yield* media.dismissed(file.path, file)) return
    // A file the production's own patterns ignore.
    if (ignored(file)) return
    if (deps.settle.observe(file.path, { size: file.size, mtimeMs: file.mtimeMs }, run.now) === 'settled' && open)
      settled.push(file)
    else waiting.push(file.path)
  })
  return settled
}

/**
 * A settled file with the content of an asset whose file is still in place on another device is
 * most likely that asset being moved across file systems (`mv` copies everything before it
 * deletes anything): it is held, not imported, and becomes the asset when the original goes (a
 * vanishing asset looks at the files seen lately). A copy on the same device is a copy.
 */
async function holdMoves(run: Run, settled: readonly IngestCandidate[]) {
  const { deps } = run
  const { media } = deps
  const held: { path: string; asset: number }[] = []
  const candidates: IngestCandidate[] = []
  // Asked once per size in a scan: a drop's clips often share a few sizes, and one look reads
  // every entry of the size without a fingerprint (they sort first in the size index) before it
  // finds one with: 51 ms for one look during a drop of 20,000 files.
  const sizesKnown = new Map<number, boolean>()
  await eachInSlices(run, settled, function* (f) {
    let known = sizesKnown.get(f.size)
    if (known === undefined) sizesKnown.set(f.size, (known = yield* media.sizeKnown(f.size)))
    if (known) candidates.push(f)
  })
  if (!candidates.length) return held
  const entries = candidates.map(
    (f): DiskEntry => ({
      path: f.path,
      device: f.device,
      kind: 'file',
      dev: f.dev,
      ino: f.ino,
      stamp: 0,
      size: f.size,
      mtimeMs: f.mtimeMs,
    }),
  )
  const hashes = await readFingerprints(run, entries)
  await eachInSlices(run, entries, function* (e) {
    const hash = hashes.get(e)
    if (!hash) return
    for (const twin of yield* media.byContent(e.size, hash)) {
      if (!twin.is_production) continue
      const s = look(twin.path_file)
      const present = s?.isFile() === true && s.dev === twin.file_dev && s.ino === twin.file_ino
      // In place on this device: a copy. In place elsewhere: a move under way. Gone: that asset
      // moved here; the scan of its path (asked for now) takes it offline and relinks it to this file.
      // (By file system, not device id: two devices may share one, and one may span several.)
      if (present && twin.file_dev === e.dev) continue
      if (!present) deps.later(twin.device, [twin.path_file], 0)
      held.push({ path: e.path, asset: twin.id })
      break
    }
  })
  return held
}

/** What an import of the scan needs besides the file. */
type ImportContext = {
  /** Files a writer still holds open: waiting, not imported. */
  writing: ReadonlySet<string>
  uploads: ReadonlyMap<number, Upload>
  /** Device names by id (a card's move names the device its folder was made on). */
  deviceNames: ReadonlyMap<number, string>
  waiting: string[]
}

/**
 * One transaction per slice, not one per file (group commit): each import's writes are a
 * savepoint inside it (register's own transaction nests), so a refusal still undoes only its
 * file. Committed one by one, every import wrote the same hot pages again (the newest rows,
 * the task queue's and history's index leaves): 56 WAL pages an import, and a commit each
 * (docs/benchmarks.md, stall). The transaction never spans a wait of the scan's own: the slice
 * ends before the next turn, and the cancel check is made between slices, outside it. On SQLite
 * the port runs the slice in the same call (no await inside it); on PostgreSQL its statements are
 * awaited on the transaction's connection, and the slice's time still bounds it.
 */
async function importSettled(
  run: Run,
  settled: readonly Candidate[],
  uploads: ReadonlyMap<number, Upload>,
  waiting: string[],
) {
  const { port, db, deps, device, slice } = run
  const ingested = new Set<string>()
  let imported = 0
  if (!settled.length) return { imported, ingested }
  const names = await port.run(all(db.select({ id: devices.id, name: devices.name }).from(devices)))
  const ctx: ImportContext = {
    // A writer that paused for longer than the settle time still holds the file open (Linux tells).
    writing: openForWriting(new Set(settled.filter((c) => !c.card).map((c) => c.file.path))),
    uploads,
    deviceNames: new Map(names.map((d) => [d.id, d.name])),
    waiting,
  }
  function* importSlice(from: number): Work<{ next: number; done: string[] }> {
    const done: string[] = []
    let i = from
    for (; i < settled.length && (i === from || !slice.spent()); i++) {
      const path = yield* importOne(run, ctx, settled[i]!)
      if (path) done.push(path)
    }
    return { next: i, done }
  }
  for (let i = 0; i < settled.length; ) {
    if (slice.due()) await slice.tick()
    let outcome: { next: number; done: string[] }
    try {
      const from = i
      // The value itself on SQLite (no await per slice), a promise on PostgreSQL.
      const answer = port.run(tx(() => importSlice(from)))
      outcome = answer instanceof Promise ? await answer : answer
    } catch (error) {
      // The catalogue refused a write (disk full, I/O): the slice was rolled back whole. Its files
      // and those not tried yet are looked at again later (the scan itself fails with the error).
      deps.later(
        device.id,
        settled.slice(i).map((c) => c.file.path),
        deps.settleMs,
      )
      throw error
    }
    const { next, done } = outcome
    for (const path of done) ingested.add(path)
    imported += done.length
    i = next
  }
  return { imported, ingested }
}

/** The productions new files go to, by id. */
function* uploadsOf(db: Db): Work<Map<number, Upload>> {
  const rows = yield* all(
    db
      .select({
        id: productions.id,
        name: productions.name,
        codename: productions.codename,
        storage_root: productions.storage_root,
        proxy_root: productions.proxy_root,
        upload_root: productions.upload_root,
        upload_device: productions.upload_device,
        videoasset_device: productions.videoasset_device,
        move_uploads: productions.move_uploads,
        ignore_patterns: productions.ignore_patterns,
      })
      .from(productions),
  )
  return new Map(rows.map((p) => [p.id, p]))
}

/** Imports `file` (a savepoint of the slice's transaction); its path when it became an asset. */
function* importOne(run: Run, ctx: ImportContext, { file, name, card }: Candidate): Work<string | undefined> {
  const { deps } = run
  if (ctx.writing.has(file.path)) {
    ctx.waiting.push(file.path)
    return
  }
  deps.settle.forget(file.path)
  const production = ctx.uploads.get(file.production)
  if (production === undefined) return
  // A card's clip moves with its card (its move decided for the whole card), or not at all.
  const destination = card?.move ? ctx.deviceNames.get(card.move.device) : undefined
  const request = {
    type: file.kind,
    production: production.name,
    rewrap_proxy: false,
    move_asset: card ? destination !== undefined : movesUpload(production, file.path),
    ...(destination !== undefined ? { asset_destination: destination } : {}),
    asset: {
      asset_meta: {
        name: name ?? baseName(file.path).replace(/\.[^.]+$/, ''),
        path_file: file.path,
        is_archive: false,
        is_production: true,
        approval: 0 as const,
        meta_field_store: {},
      },
      technical_details: {},
      archive_details: {},
      keywords: {},
    },
  }
  try {
    // Only as a new asset: one that has the file by now (relinked to it meanwhile) keeps its record.
    yield* deps.imports.register(
      request,
      SYSTEM,
      JSON.stringify({ watch_folder: run.device.name, path_file: file.path }),
      { newOnly: true, ...(card ? { card } : {}) },
    )
    return file.path
  } catch (error) {
    if (error instanceof AlreadyCatalogued) return
    // A refusal (the file went away: 406) is logged; a later scan tries again if it is back.
    if (!(error instanceof AppError)) throw error
    deps.log.warn('watch folder file not imported', { path: file.path, reason: error.message })
  }
}

/**
 * Names not UTF-8: said once per folder and scan; in a watch folder, a media file's name gets
 * a failed ImportLog (once), so that a drop that never arrives says why.
 */
function* logUndecodable(run: Run): Work<void> {
  const { deps, device, logged } = run
  for (const [folder, names] of run.undecodable) {
    deps.log.warn('names in this folder are not valid UTF-8 and cannot be catalogued; rename them', {
      folder,
      count: names.length,
      first: names[0]!,
    })
    for (const shown of names) {
      const path = folder + shown
      const production = run.ingestInto(path, device.id)
      const kind = kindOf(shown)
      if (production === undefined || kind === undefined || logged.has(path) || !deps.logs) continue
      if (logged.size >= 10_000) logged.clear()
      logged.add(path)
      const error =
        'the file name is not valid UTF-8 (shown here with U+FFFD where its bytes are not): rename the file to import it'
      yield* deps.logs.append({
        asset_type: `${kind}asset`,
        asset_path: path,
        status: IMPORT_STATUS.failed,
        error,
        payload: JSON.stringify({ watch_folder: device.name, path_file: path }),
        asset_import_id: null,
        production,
      })
    }
  }
}
