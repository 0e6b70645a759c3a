// The owner of media_assets: every read by path or identity and every write of the table goes
// through here (the import's create-or-update in assetimport/service.ts register() is the one
// writer left outside, in the import's own transaction; its keywords go through writeKeywords, as
// an edit's do), so the detail of which index serves a query lives in one place. The path index
// is (kind, path_file): a query by path says `kind IN (...)` to use it.
import { and, count, desc, eq, getTableColumns, inArray, isNotNull, isNull, max, min, ne, or, sql } from 'drizzle-orm'
import { type Db, catalogueVersionOf } from '../../db/client.ts'
import { inJsonList, jsonArray, jsonGroupArray } from '../../db/dialect.ts'
import { type Port, type Work, all, allOf, one, oneOf, run, runOf, statement, tx } from '../../db/port.ts'
import {
  MEDIA_KINDS,
  type MediaKind,
  type PictureVersions,
  devices,
  dismissedFiles,
  mediaAssets,
  productions,
  projectAssetLinks,
  projectAssets,
} from '../../db/tables.ts'
import { refuseReadOnly, type UpdateMode } from '../../http/edit.ts'
import { AppError, dateField, field, invalid, noSuchRecord, notFound, unique } from '../../http/errors.ts'
import {
  type FileStat,
  PathError,
  deviceFor,
  fileOnDevice,
  lastName,
  parentFolder,
  withFinalSep,
} from '../../storage/paths.ts'
import { existsSync } from 'node:fs'
import { close, nameText } from '../../storage/dirfd.ts'
import { removePicturesIn } from '../../media/pictures.ts'
import { needsNewName } from '../../media/proxyname.ts'
import { removeOpened } from '../../storage/remove.ts'
import { openParentInside } from '../../storage/roots.ts'
import { isoTimestamp, isoTimestampAfter } from '../../util/time.ts'
import type { Log } from '../../util/log.ts'
import type { HoldDurations } from '../assetholddurations/service.ts'
import { MAX_NAME, refuseTooManyKeywords } from '../assetimport/rules.ts'
import { CONTENT_TYPE_IDS, type CustomMetadata } from '../custommetadata/service.ts'
import { type Actor, type Hint, actorOf, historyOf, modifiedBy, system } from '../history/service.ts'
import { productionForWrite } from '../productions/lookup.ts'
import { projectToucher } from '../projectassets/bundles.ts'
import { canReadAsset, mediaReadableBy, requirePerm, requireWrite } from '../users/access.ts'
import type { Principal } from '../users/service.ts'
import type { Relocation } from '../../watch/reconcile.ts'
import { type KeywordWrite, keywordWriter } from './keywords.ts'
import {
  EDIT_CODENAMES,
  type MediaAssetCreate,
  type MediaAssetUpdate,
  type MediaRow,
  TITLES,
  mediaToApi,
} from './model.ts'

/**
 * The fields history records of a media asset, as the single record shows them (keywords and
 * projects included); date_mod is left out (it changes with every write, each row has its date).
 */
const FIELDS = [
  'name',
  'description',
  'production',
  'status_asset',
  'path_file',
  'device',
  'is_archive',
  'is_production',
  'meta_field_store',
  'status_approval',
  'date_crt',
  'date_add',
  'date_del',
  'keywords',
  'technical',
  'path_proxy',
  'projects',
] as const

/** Fields the service sets, with what a request that changes one is told (400 invalid at it). */
const READ_ONLY: Record<string, string> = {
  id: 'id is set by the service.',
  production:
    "An asset's production is not edited: import the file into the other production, or share the asset with it by a project copy.",
  status_asset: 'status_asset is set by the import task.',
  path_file:
    'path_file is not edited in place: a new path is a move of the file, which the watcher sees (move or rename the file on the device) or an import with move_asset makes.',
  device: 'device follows path_file (the device the file lies on); it is not edited.',
  is_production:
    'is_production is set by the service: true while the file is on online storage (the watcher keeps it).',
  date_mod: 'date_mod is set by the service on every change.',
  technical: 'technical holds probed or imported technical details; it is set by the import.',
  path_proxy: 'path_proxy is set by the import task that makes the proxy.',
  projects:
    'projects lists the linked project assets: link and unlink them through /api/projectassets/{id}/addasset/ and /unlinkasset/.',
  modified_by: 'modified_by is set by the service (the history).',
}

const conflict = (detail: string) => new AppError(409, 'conflict', detail)

/** The columns the service's own writes change (import task, watcher), as history records them. */
const OWN_FIELDS = ['status_asset', 'technical', 'path_proxy', 'is_production', 'path_file', 'device'] as const

/**
 * Where applyScan puts an asset it relocates before its new path: a relative name, which no
 * catalogued file has (every path_file is absolute, on a device), unique per asset. Not a NUL
 * character, which no file name holds either: PostgreSQL's text cannot hold one.
 */
const PARKED = (id: number) => `moving:${id}`

/** Rows a scan reads at a time (underForScanPaged): about 10 ms of work. */
const SCAN_PAGE = 2000

/** The columns an import writes of a new asset (the rest keep their defaults). */
const NEW_ASSET_COLUMNS = [
  'kind',
  'name',
  'description',
  'production',
  'device',
  'path_file',
  'is_archive',
  'is_production',
  'approval',
  'meta_field_store',
  'archive_details',
  'technical',
  'status_asset',
  'status_asset_description',
  'path_proxy',
  'date_crt',
  'date_add',
  'date_mod',
  'date_del',
  'file_dev',
  'file_ino',
  'file_stamp',
] as const
export type ImportedAsset = Record<(typeof NEW_ASSET_COLUMNS)[number], unknown>

export function createMediaAssets(port: Port, holds: HoldDurations, metadata: CustomMetadata, log?: Log) {
  const db = port.db
  const history = historyOf(db)
  const writeKeywords = keywordWriter(db)
  const p = (name: string) => sql.placeholder(name)
  // Statements are built when first run (statement(), or inside a work), after the process has
  // chosen its engine (db/tables.ts): the phrases of dialect.ts are that engine's.

  // A record's keywords ([category, keyword] pairs, put in order by detail()) and its linked
  // projects, as JSON array text made by the database: sub-selects of the record's own statement,
  // so that a single-record request runs one statement (three separately cost twice as much). The
  // pairs are not ordered here: SQLite's json_group_array with its own ORDER BY took 15 ms for
  // 1,000 keywords, sorting them in JavaScript well under one.
  const details = () => ({
    keywords_json: sql<string>`(SELECT ${jsonGroupArray(jsonArray(sql`c.name`, sql`k.name`))}
      FROM media_asset_keywords mk JOIN keywords k ON k.id = mk.keyword_id JOIN keyword_categories c ON c.id = k.category_id
      WHERE mk.asset_id = media_assets.id)`,
    projects_json: sql<string>`(SELECT ${jsonGroupArray(sql`l.project_id`, sql`l.project_id`)} FROM project_asset_links l WHERE l.asset_id = media_assets.id)`,
    modified_by: modifiedBy(sql`media_assets.kind || 'asset'`, sql`media_assets.id`),
  })
  const withDetails = statement(() =>
    db
      .select({ ...getTableColumns(mediaAssets), ...details() })
      .from(mediaAssets)
      .where(eq(mediaAssets.id, p('id'))),
  )
  const detailsOf = statement(() =>
    db
      .select(details())
      .from(mediaAssets)
      .where(eq(mediaAssets.id, p('id'))),
  )
  // Files whose asset a user deleted (the watcher does not import them again), by path or identity:
  // dev, ino and the stamp, as the watcher tells files apart (an inode the file system gives again,
  // after the user removed that file too, is another file; ext4 often does so at once). A file
  // known without its stamp, or a record kept without one, matches by dev and inode alone.
  const dismissedSelect = () => db.select({ id: dismissedFiles.id }).from(dismissedFiles)
  const anyDismissed = statement(() => dismissedSelect().limit(1))
  const dismissedByPath = statement(() =>
    dismissedSelect()
      .where(eq(dismissedFiles.path_file, p('path')))
      .limit(1),
  )
  const sameFile = (stamped: boolean) =>
    and(
      eq(dismissedFiles.file_dev, p('dev')),
      eq(dismissedFiles.file_ino, p('ino')),
      stamped ? or(isNull(dismissedFiles.file_stamp), eq(dismissedFiles.file_stamp, p('stamp'))) : undefined,
    )
  const dismissedByIdentity = statement(() =>
    dismissedSelect()
      .where(or(eq(dismissedFiles.path_file, p('path')), sameFile(false)))
      .limit(1),
  )
  const dismissedByStamp = statement(() =>
    dismissedSelect()
      .where(or(eq(dismissedFiles.path_file, p('path')), sameFile(true)))
      .limit(1),
  )
  const forgetDismissedAt = statement(() => db.delete(dismissedFiles).where(eq(dismissedFiles.path_file, p('path'))))
  const touchProject = projectToucher(db)
  // Told of each asset a DELETE removes, inside its transaction; what one answers runs once that
  // has committed (the shots' thumbnails: modules/shots/service.ts).
  const removing: ((row: MediaRow) => Work<(() => void) | undefined>)[] = []
  const allKinds = () => inArray(mediaAssets.kind, [...MEDIA_KINDS])
  // The lookups of every import and of every file a scan finds: prepared once on SQLite (drizzle
  // builds and SQLite compiles a statement per call otherwise, ten times the work of running it).
  // The paths under a folder: `dir` and `end` are values or placeholders (pathRangeEnd).
  const inRange = (dir: unknown, end: unknown) =>
    and(allKinds(), sql`${mediaAssets.path_file} >= ${dir}`, sql`${mediaAssets.path_file} < ${end}`)
  // Several assets may name one path: one in production at most (the partial unique index), and
  // any number whose file vanished from there. The one in production answers, else the newest.
  const pathOrder = () => [desc(mediaAssets.is_production), desc(mediaAssets.id)] as const
  const byPathOfKind = statement(() =>
    db
      .select()
      .from(mediaAssets)
      .where(and(eq(mediaAssets.kind, p('kind')), eq(mediaAssets.path_file, p('path'))))
      .orderBy(...pathOrder())
      .limit(1),
  )
  const byPathAnyKind = statement(() =>
    db
      .select()
      .from(mediaAssets)
      .where(and(allKinds(), eq(mediaAssets.path_file, p('path'))))
      .orderBy(...pathOrder())
      .limit(1),
  )
  const onlineAt = statement(() =>
    db
      .select({ id: mediaAssets.id })
      .from(mediaAssets)
      .where(
        and(eq(mediaAssets.path_file, p('path')), eq(mediaAssets.kind, p('kind')), eq(mediaAssets.is_production, true)),
      ),
  )
  const underDir = statement(() =>
    db
      .select()
      .from(mediaAssets)
      .where(inRange(p('dir'), p('end'))),
  )
  const rowById = statement(() =>
    db
      .select()
      .from(mediaAssets)
      .where(eq(mediaAssets.id, p('id'))),
  )
  const ownerOf = statement(() =>
    db
      .select({
        kind: mediaAssets.kind,
        production: mediaAssets.production,
        device: mediaAssets.device,
        is_production: mediaAssets.is_production,
      })
      .from(mediaAssets)
      .where(eq(mediaAssets.id, p('id'))),
  )
  const insertImported = statement(() =>
    db
      .insert(mediaAssets)
      .values(Object.fromEntries(NEW_ASSET_COLUMNS.map((c) => [c, p(c)])) as unknown as typeof mediaAssets.$inferInsert)
      .returning(),
  )
  const setStatusOf = statement(() =>
    db
      .update(mediaAssets)
      .set({ status_asset: sql`${p('status')}`, date_mod: sql`${p('now')}` })
      .where(eq(mediaAssets.id, p('id'))),
  )
  const parkPath = statement(() =>
    db
      .update(mediaAssets)
      .set({ path_file: sql`${p('path')}` })
      .where(eq(mediaAssets.id, p('id'))),
  )
  const currentPath = statement(() =>
    db
      .select({ path_file: mediaAssets.path_file, kind: mediaAssets.kind, is_archive: mediaAssets.is_archive })
      .from(mediaAssets)
      .where(eq(mediaAssets.id, p('id'))),
  )
  // Back to its old path; out of production when another asset took that path in production meanwhile.
  const unpark = statement(() =>
    db
      .update(mediaAssets)
      .set({
        path_file: sql`${p('from')}`,
        is_production: sql`${mediaAssets.is_production} AND NOT EXISTS (SELECT 1 FROM media_assets o
          WHERE o.path_file = ${p('from')} AND o.kind = ${p('kind')} AND o.is_production AND o.id != ${p('id')})`,
      })
      .where(eq(mediaAssets.id, p('id'))),
  )
  const setOffline = statement(() =>
    db
      .update(mediaAssets)
      .set({ is_production: false, date_mod: sql`${p('now')}` })
      .where(and(eq(mediaAssets.id, p('id')), eq(mediaAssets.is_production, true))),
  )
  const setOnlineOne = statement(() =>
    db
      .update(mediaAssets)
      .set({ is_production: true, date_mod: sql`${p('now')}` })
      .where(and(eq(mediaAssets.id, p('id')), eq(mediaAssets.is_production, false))),
  )
  const countUnderDir = statement(() =>
    db
      .select({ n: count() })
      .from(mediaAssets)
      .where(and(inRange(p('dir'), p('end')), ne(mediaAssets.production, p('production')))),
  )
  /** What a scan compares with the disk: the columns reconcile reads, not the metadata (100,000 rows on a share). */
  const scanFields = () => ({
    id: mediaAssets.id,
    path_file: mediaAssets.path_file,
    device: mediaAssets.device,
    is_archive: mediaAssets.is_archive,
    is_production: mediaAssets.is_production,
    file_dev: mediaAssets.file_dev,
    file_ino: mediaAssets.file_ino,
    file_stamp: mediaAssets.file_stamp,
    file_size: mediaAssets.file_size,
    file_mtime: mediaAssets.file_mtime,
    file_hash: mediaAssets.file_hash,
    kind: mediaAssets.kind,
  })
  const inoSpan = statement(() =>
    db
      .select({ lo: min(mediaAssets.file_ino), hi: max(mediaAssets.file_ino) })
      .from(mediaAssets)
      .where(eq(mediaAssets.file_dev, p('dev'))),
  )
  const identitiesOf = statement(() =>
    db
      .select(scanFields())
      .from(mediaAssets)
      .where(and(eq(mediaAssets.file_dev, p('dev')), inJsonList(mediaAssets.file_ino, p('inos')))),
  )
  // A scan of a catalogued share reads every row under it: as the driver answers them, each made
  // into its ScanRow here (scanRowOf). drizzle maps every column of every row of a builder's answer
  // through its generic decoders: 85 of a 700 ms start scan of 100,000 files, this 30.
  // Paths from `from` (past it, for a page after one path filled the last) to `end`, in pages of
  // `limit` along the path index where one is given.
  const scanUnder = (from: string, end: string, page?: { limit: number; past: boolean }) =>
    sql<RawScanRow>`SELECT id, path_file, device, is_archive, is_production, file_dev, file_ino, file_stamp, file_size, file_mtime, file_hash, kind
      FROM ${mediaAssets} WHERE ${and(
        allKinds(),
        page?.past ? sql`${mediaAssets.path_file} > ${from}` : sql`${mediaAssets.path_file} >= ${from}`,
        sql`${mediaAssets.path_file} < ${end}`,
      )}${page ? sql` ORDER BY ${mediaAssets.path_file} LIMIT ${page.limit}` : sql``}`
  const atPathForScan = statement(() =>
    db
      .select(scanFields())
      .from(mediaAssets)
      .where(and(allKinds(), eq(mediaAssets.path_file, p('path')))),
  )
  // Relink candidates: offline assets (not archive-only) with a fingerprint and a file of one of
  // these sizes; and the assets with one size and fingerprint (a copy's twins). Both read the size
  // index's entries only until a row matches (an image sequence has 100,000 files of one size).
  const offlineBySizeForScan = statement(() =>
    db
      .select(scanFields())
      .from(mediaAssets)
      .where(
        and(
          inJsonList(mediaAssets.file_size, p('sizes')),
          isNotNull(mediaAssets.file_hash),
          eq(mediaAssets.is_production, false),
          eq(mediaAssets.is_archive, false),
        ),
      ),
  )
  // Both flags spelled out (every value they take), so that the size index is searched on all four
  // columns: with the size alone, a drop of 20,000 clips of one size read them all for every file.
  const byContentForScan = statement(() =>
    db
      .select(scanFields())
      .from(mediaAssets)
      .where(
        and(
          eq(mediaAssets.file_size, p('size')),
          inArray(mediaAssets.is_production, [false, true]),
          inArray(mediaAssets.is_archive, [false, true]),
          eq(mediaAssets.file_hash, p('hash')),
        ),
      ),
  )
  const sizeKnown = statement(() =>
    db
      .select({ id: mediaAssets.id })
      .from(mediaAssets)
      .where(and(eq(mediaAssets.file_size, p('size')), isNotNull(mediaAssets.file_hash)))
      .limit(1),
  )
  const proxiesAmong = statement(() =>
    db
      .select({ path_proxy: mediaAssets.path_proxy })
      .from(mediaAssets)
      .where(and(inJsonList(mediaAssets.path_proxy, p('paths'), 'text'), ne(mediaAssets.path_proxy, ''))),
  )
  // One path (an import's): the partial index by equality, without a JSON array to read.
  const isProxyAt = statement(() =>
    db
      .select({ id: mediaAssets.id })
      .from(mediaAssets)
      .where(and(eq(mediaAssets.path_proxy, p('path')), ne(mediaAssets.path_proxy, '')))
      .limit(1),
  )
  const pathFileOf = statement(() =>
    db
      .select({ path_file: mediaAssets.path_file })
      .from(mediaAssets)
      .where(eq(mediaAssets.id, p('id'))),
  )
  const setFingerprint = statement(() =>
    db
      .update(mediaAssets)
      .set({ file_size: sql`${p('size')}`, file_mtime: sql`${p('mtime')}`, file_hash: sql`${p('hash')}` })
      .where(and(eq(mediaAssets.id, p('id')), eq(mediaAssets.file_dev, p('dev')), eq(mediaAssets.file_ino, p('ino')))),
  )
  // What history compares of the service's own writes (OWN_FIELDS), and whose asset it is: eight
  // columns, not the whole row, twice per write.
  const ownFieldsRow = statement(() =>
    db
      .select({
        kind: mediaAssets.kind,
        production: mediaAssets.production,
        status_asset: mediaAssets.status_asset,
        technical: mediaAssets.technical,
        path_proxy: mediaAssets.path_proxy,
        is_production: mediaAssets.is_production,
        path_file: mediaAssets.path_file,
        device: mediaAssets.device,
      })
      .from(mediaAssets)
      .where(eq(mediaAssets.id, p('id'))),
  )
  const range = (dir: string) => ({ dir, end: pathRangeEnd(dir) })

  /** The asset's technical with `hashes.xxh64` set (what a verified copy of its file read), the rest kept. */
  function* withHash(id: number, xxh64: string): Work<Record<string, unknown>> {
    const row = yield* one(
      db.select({ technical: mediaAssets.technical }).from(mediaAssets).where(eq(mediaAssets.id, id)),
    )
    const technical = (row?.technical ?? {}) as Record<string, unknown>
    const hashes = typeof technical.hashes === 'object' && technical.hashes !== null ? technical.hashes : {}
    return { ...technical, hashes: { ...hashes, xxh64 } }
  }

  /** The single-record answer; a row without its details (one just made) has them read. */
  function* detail(row: MediaRow | DetailedRow) {
    const details = 'keywords_json' in row ? row : (yield* oneOf(detailsOf, { id: row.id }))!
    const keywords: Record<string, string[]> = {}
    const pairs = JSON.parse(details.keywords_json) as [string, string][]
    pairs.sort(([c1, k1], [c2, k2]) => textOrder(c1, c2) || textOrder(k1, k2))
    for (const [category, keyword] of pairs) (keywords[category] ??= []).push(keyword)
    return {
      ...mediaToApi(row),
      date_crt: row.date_crt,
      date_add: row.date_add,
      date_mod: row.date_mod,
      date_del: row.date_del,
      keywords,
      technical: row.technical,
      path_proxy: row.path_proxy,
      projects: JSON.parse(details.projects_json) as number[],
      modified_by: details.modified_by,
      // Where the archive keeps it (api.md lists archive_details among an import's members; a
      // record's answer carries it too, so that the archive's result can be read back): {} when
      // the asset was never archived.
      archive_details: row.archive_details,
    }
  }

  /** The proxy_root of `production` and the path of the device it lies on ('' when it lies on none). */
  function* proxyRootOf(production: number): Work<ProxyFolder> {
    const proxyRoot =
      (yield* one(
        db.select({ proxy_root: productions.proxy_root }).from(productions).where(eq(productions.id, production)),
      ))?.proxy_root ?? ''
    if (!proxyRoot) return { proxyRoot, devicePath: '' }
    const all_ = yield* all(db.select({ id: devices.id, path: devices.path }).from(devices))
    return { proxyRoot, devicePath: deviceFor(all_, proxyRoot)?.path || '' }
  }

  /**
   * proxyFolderOf's, as of the catalogue's version `version` (SQLite's file version, read by a C
   * call without a statement: db/client.ts catalogueVersionOf). PostgreSQL has no such version to read
   * without a round trip to the server, which costs what the look-up itself costs: there the
   * folder is read every time.
   */
  const catalogueVersion = port.engine === 'sqlite' ? catalogueVersionOf(db) : undefined
  let folders: { version: number; of: Map<number, ProxyFolder> } = { version: -1, of: new Map() }

  /** The asset of this kind if the user can read it; else 404 (access rules: docs/api.md, Permissions). */
  function* readable(kind: MediaKind, id: number, user: Principal): Work<DetailedRow> {
    const row = yield* oneOf(withDetails, { id })
    if (!row || row.kind !== kind || !(yield* canReadAsset(db, user, row))) throw notFound(noSuchRecord(TITLES[kind]))
    return row
  }

  /**
   * keywords as a body gives them ({category: [keyword]}, a category null or [] to remove it),
   * checked with the import's rules: at most MAX_KEYWORDS categories and keywords in all (the
   * edit route asks that first, before the body is cleaned), names of 1 to MAX_NAME characters.
   */
  function checkKeywords(given: Record<string, unknown>): Record<string, string[]> {
    refuseTooManyKeywords(given, '/keywords')
    const out: Record<string, string[]> = {}
    for (const [category, list] of Object.entries(given)) {
      const pointer = `/keywords/${category.replace(/~/g, '~0').replace(/\//g, '~1')}`
      if (category.length === 0 || category.length > MAX_NAME)
        throw invalid(pointer, `A category name has 1 to ${MAX_NAME} characters.`)
      if (list === null) {
        out[category] = []
        continue
      }
      if (!Array.isArray(list) || !list.every((k) => typeof k === 'string' && k.length > 0 && k.length <= MAX_NAME))
        throw invalid(pointer, `A category holds a list of keywords, each of 1 to ${MAX_NAME} characters.`)
      out[category] = [...new Set(list as string[])]
    }
    return out
  }

  /**
   * One write of the service's own (import task, watcher): the row before, the write, the history
   * row. Inside the caller's transaction: each function below opens one around all its writes, a
   * savepoint where its caller has one open (the import task's last write, made with its end).
   */
  function* changed(id: number, by: Actor, write: () => Work<unknown>): Work<void> {
    const before = yield* oneOf(ownFieldsRow, { id })
    yield* write()
    const after = before && (yield* oneOf(ownFieldsRow, { id }))
    if (before && after)
      yield* history.updated(
        by,
        { resource: `${before.kind}asset`, id, production: before.production },
        before,
        after,
        OWN_FIELDS,
      )
  }

  /** The asset with this path: of one kind, or of any kind (the watcher's "already catalogued?"). */
  const byPath = (path: string, kind?: MediaKind): Work<MediaRow | undefined> =>
    kind ? oneOf(byPathOfKind, { kind, path }) : oneOf(byPathAnyKind, { path })

  return {
    byPath,

    /** The asset with its details in one statement (what detail() reads), or undefined. */
    byIdWithDetails: (id: number): Work<DetailedRow | undefined> => oneOf(withDetails, { id }),

    /** The single-record answer; a row without its details (one just made) has them read. */
    detail,

    /** The asset of this kind if `user` can read it, else the 404 its GET answers (what an edit asks first). */
    *find(kind: MediaKind, id: number, user: Principal): Work<MediaRow> {
      const row = yield* oneOf(rowById, { id })
      if (!row || row.kind !== kind || !(yield* canReadAsset(db, user, row))) throw notFound(noSuchRecord(TITLES[kind]))
      return row
    },

    /**
     * The media assets on each device (or on `device`) that the user can read, online
     * (is_production) and offline: the device status's counts. Devices with none are not in the map.
     */
    *countsByDevice(user: Principal, device?: number): Work<Map<number, { online: number; offline: number }>> {
      const rows = yield* all(
        db
          .select({
            device: mediaAssets.device,
            online: sql<number>`count(*) FILTER (WHERE ${mediaAssets.is_production})`.mapWith(Number),
            all: count(),
          })
          .from(mediaAssets)
          .where(and(device === undefined ? undefined : eq(mediaAssets.device, device), mediaReadableBy(user)))
          .groupBy(mediaAssets.device),
      )
      return new Map(rows.map((r) => [r.device, { online: r.online, offline: r.all - r.online }]))
    },

    /**
     * The proxy_root of a production and the path of its device (the pictures of a record
     * answered: mediaassets/pictures.ts). On SQLite kept until the catalogue's next commit
     * (fileVersion: a C call, no statement), so that one record's answer stays its own one
     * statement; read every time on PostgreSQL (see `folders`).
     */
    *proxyFolderOf(production: number): Work<ProxyFolder> {
      if (!catalogueVersion) return yield* proxyRootOf(production)
      const version = catalogueVersion()
      if (folders.version !== version) folders = { version, of: new Map() }
      let folder = folders.of.get(production)
      if (!folder) folders.of.set(production, (folder = yield* proxyRootOf(production)))
      return folder
    },

    /**
     * The proxy file of an asset the user can read (else 404, as the record), and the proxy_root
     * of its production, inside which alone it is served; path '' when the asset has none.
     */
    *proxyOf(kind: MediaKind, id: number, user: Principal): Work<{ path: string } & ProxyFolder> {
      const row = yield* readable(kind, id, user)
      return { path: row.path_proxy, ...(yield* proxyRootOf(row.production)) }
    },

    /**
     * PATCH/PUT (docs/api.md, Resources and docs/api.md): name, description, status_approval, date_crt,
     * date_add, date_del, is_archive, meta_field_store (PATCH merges keys, a null value removes
     * one; PUT replaces the store) and keywords (PATCH replaces the categories given, an empty
     * list or null removes one; PUT replaces them all). The rest is read-only (READ_ONLY).
     */
    *update(kind: MediaKind, id: number, body: typeof MediaAssetUpdate.static, user: Principal, mode: UpdateMode) {
      const row = yield* readable(kind, id, user)
      requirePerm(user, EDIT_CODENAMES[kind].change)
      requireWrite(user, row.production)
      const before = yield* detail(row)
      refuseReadOnly(body as Record<string, unknown>, before, READ_ONLY)
      const set: Partial<typeof mediaAssets.$inferInsert> = {}
      if (body.name !== undefined) set.name = body.name
      if (body.description !== undefined) set.description = body.description
      if (body.status_approval !== undefined) set.approval = body.status_approval
      if (body.is_archive !== undefined) set.is_archive = body.is_archive
      if (body.date_crt !== undefined)
        set.date_crt = body.date_crt === null ? null : dateField('/date_crt', body.date_crt)
      if (body.date_del !== undefined)
        set.date_del = body.date_del === null ? null : dateField('/date_del', body.date_del)
      if (body.date_add !== undefined) set.date_add = dateField('/date_add', body.date_add)
      if (body.meta_field_store !== undefined) {
        const given = body.meta_field_store
        const kept = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== null))
        yield* metadata.validateStore(CONTENT_TYPE_IDS[`${kind}asset`], kept, '/meta_field_store')
        const store: Record<string, unknown> = mode === 'patch' ? { ...row.meta_field_store } : {}
        for (const [k, v] of Object.entries(given)) if (v === null) delete store[k]
        set.meta_field_store = { ...store, ...kept }
      }
      const keywordsGiven = body.keywords === undefined ? undefined : checkKeywords(body.keywords)
      set.date_mod = isoTimestampAfter(row.date_mod)
      return yield* tx(function* () {
        yield* run(db.update(mediaAssets).set(set).where(eq(mediaAssets.id, id)))
        if (keywordsGiven) yield* writeKeywords(id, kind, keywordsGiven, mode === 'put' ? 'all' : 'categories')
        const after = yield* detail((yield* oneOf(withDetails, { id }))!)
        yield* history.updated(
          actorOf(user),
          { resource: `${kind}asset`, id, production: row.production },
          before,
          after,
          [...FIELDS, 'date_mod'],
        )
        return { ...after, modified_by: actorOf(user).user?.username ?? 'system' }
      })
    },

    /**
     * DELETE: the record goes with its links, keywords and shares (foreign keys cascade), and its
     * proxy and its pictures when they lie inside the production's proxy_root; the essence is never touched. The file
     * is remembered (dismissed_files), so the watcher does not import it again. 409 while an import
     * task works on the asset.
     */
    *remove(
      kind: MediaKind,
      id: number,
      user: Principal,
      openTasks: (target: Record<string, number>) => Work<number[]>,
    ): Work<void> {
      const row = yield* readable(kind, id, user)
      requirePerm(user, EDIT_CODENAMES[kind].delete)
      requireWrite(user, row.production)
      const open = yield* openTasks({ [`${kind}asset`]: id })
      if (open.length)
        throw conflict(
          `An import task works on this asset (task ${open.join(', ')}); delete it when the task has ended.`,
        )
      const before = yield* detail(row)
      // The proxy's folder is opened now, from the device root without following a link: a
      // proxy_root that leads through a link refuses the delete before anything changes (409),
      // and what is removed after the commit is the file in the folder opened here.
      const { proxyRoot, devicePath } = yield* proxyRootOf(row.production)
      let proxyAt: ReturnType<typeof openParentInside>
      try {
        proxyAt = row.path_proxy && devicePath ? openParentInside(devicePath, proxyRoot, row.path_proxy) : undefined
      } catch (error) {
        if (error instanceof PathError) throw conflict(`The proxy of this asset cannot be removed: ${error.message}`)
        throw error
      }
      const removed: ((() => void) | undefined)[] = []
      try {
        yield* tx(function* () {
          for (const listener of removing) removed.push(yield* listener(row))
          // The projects it was linked to lose it: each an unlink in its history (and its date_mod moves), as an unlink request makes.
          for (const project of before.projects) {
            const owner = yield* one(
              db
                .select({ production: projectAssets.production, date_mod: projectAssets.date_mod })
                .from(projectAssets)
                .where(eq(projectAssets.id, project)),
            )
            if (!owner) continue
            const linked = yield* all(
              db
                .select({ asset_id: projectAssetLinks.asset_id })
                .from(projectAssetLinks)
                .innerJoin(mediaAssets, eq(mediaAssets.id, projectAssetLinks.asset_id))
                .where(and(eq(projectAssetLinks.project_id, project), eq(mediaAssets.kind, kind)))
                .orderBy(projectAssetLinks.asset_id),
            )
            const old = linked.map((l) => l.asset_id)
            yield* touchProject(isoTimestampAfter(owner.date_mod), project)
            yield* history.record(actorOf(user), {
              resource: 'projectasset',
              id: project,
              action: 'unlink',
              production: owner.production,
              changes: { [`${kind}_assets`]: { old, new: old.filter((a) => a !== id) } },
            })
          }
          // Its row first, while its shares still say which productions saw it (the live event's readers).
          yield* history.record(actorOf(user), {
            resource: `${kind}asset`,
            id,
            action: 'delete',
            production: row.production,
            changes: history.snapshot(before, FIELDS, 'delete'),
          })
          yield* run(db.delete(mediaAssets).where(eq(mediaAssets.id, id)))
          yield* run(
            db.insert(dismissedFiles).values({
              kind,
              path_file: row.path_file,
              file_dev: row.file_dev,
              file_ino: row.file_ino,
              file_stamp: row.file_stamp,
              asset_id: id,
              date: isoTimestamp(),
            }),
          )
        })
      } catch (error) {
        if (proxyAt) close(proxyAt.parent)
        throw error
      }
      for (const after of removed) after?.()
      // After the commit: a proxy left behind by a failed removal is a stray file, a proxy removed
      // for a record that stayed would be a loss. Its pictures go with it (media/pictures.ts).
      if (proxyAt) removePicturesIn(proxyAt.parent, nameText(proxyAt.name))
      if (row.path_proxy && !(proxyAt && removeOpened(proxyAt)) && existsSync(row.path_proxy))
        log?.warn('the proxy of a deleted asset was not removed (not a regular file inside the proxy_root)', {
          asset: id,
          path: row.path_proxy,
        })
    },

    /**
     * Adds a listener of the assets DELETE removes: its work runs in the delete's transaction with
     * the row (its shots are still there to read); what it answers runs after the commit.
     */
    onRemove(listener: (row: MediaRow) => Work<(() => void) | undefined>) {
      removing.push(listener)
    },

    /** Whether the watcher leaves this file alone: a user deleted its asset (by path, or by identity under another name). */
    *dismissed(path: string, identity?: { dev: number; ino: number; stamp?: number }): Work<boolean> {
      // Most catalogues have no dismissed file: one look at the table.
      if (!(yield* oneOf(anyDismissed))) return false
      if (!identity) return (yield* oneOf(dismissedByPath, { path })) !== undefined
      const { dev, ino, stamp } = identity
      return stamp === undefined
        ? (yield* oneOf(dismissedByIdentity, { path, dev, ino })) !== undefined
        : (yield* oneOf(dismissedByStamp, { path, dev, ino, stamp })) !== undefined
    },

    /** An explicit import of the path: the decision is forgotten (inside the import's transaction). */
    *forgetDismissed(path: string): Work<void> {
      // Most catalogues have no dismissed file: one look at the table, no write.
      if (yield* oneOf(anyDismissed)) yield* runOf(forgetDismissedAt, { path })
    },

    /** An asset's keywords (an import adds them: `add`), its search document rebuilt once (keywords.ts). */
    writeKeywords: (id: number, kind: MediaKind, given: Record<string, string[]>, how: KeywordWrite): Work<void> =>
      writeKeywords(id, kind, given, how),

    /**
     * Assets whose file lies under the folder `dir` (ending with its separator), by a range on the
     * path index: every path starting with "dir/" sorts in ["dir/", "dir0") (pathRangeEnd).
     */
    under: (dir: string): Work<MediaRow[]> => allOf(underDir, range(dir)),

    /** under(), with only what a scan compares with the disk. */
    *underForScan(dir: string): Work<ScanRow[]> {
      const { end } = range(dir)
      return (yield* all(scanUnder(dir, end))).map(scanRowOf)
    },

    /**
     * underForScan() a page at a time, with `between()` awaited after each: one read of the 20,000
     * rows of a drop folder held every request for 60 to 80 ms, and a drop rescans its folder
     * often. A page ends at a path boundary (rows naming one path come together); what changes
     * between pages is what the scan checks against the disk anyway before applying anything.
     * Each page is a run of the port of its own, between which the event loop turns.
     */
    async underForScanPaged(
      dir: string,
      each: (r: ScanRow) => void,
      between: () => Promise<void>,
      pageSize = SCAN_PAGE,
    ): Promise<void> {
      const { end } = range(dir)
      let from = dir
      let past = false
      for (;;) {
        const page = await port.run(all(scanUnder(from, end, { limit: pageSize, past })))
        if (page.length < pageSize) {
          for (const r of page) each(scanRowOf(r))
          return
        }
        // The last path's rows may go on in the next page: they are read there, whole.
        const last = page[page.length - 1]!.path_file as string
        let cut = page.length
        while (cut > 0 && page[cut - 1]!.path_file === last) cut--
        if (cut === 0) {
          // One path fills the page (never in practice): its rows at once, then past it.
          for (const r of await port.run(allOf(atPathForScan, { path: last }))) each(r)
          from = last
          past = true
        } else {
          for (let i = 0; i < cut; i++) each(scanRowOf(page[i]!))
          from = last
          past = false
        }
        await between()
      }
    },

    /** Every asset naming exactly this path (a single file scanned), with what a scan compares. */
    atPathForScan: (path: string): Work<ScanRow[]> => allOf(atPathForScan, { path }),

    /** How many assets lie under `dir` that belong to a production other than `production`. */
    *countUnder(dir: string, exceptProduction: number): Work<number> {
      return (yield* oneOf(countUnderDir, { ...range(dir), production: exceptProduction }))!.n
    },

    /**
     * Assets recorded with one of these identities on disk (a file moved or renamed keeps it),
     * with what a scan compares; a thousand inodes per query (a scan of a new share asks for
     * every file it finds), each a run of the port of its own.
     */
    async byIdentities(
      files: readonly { dev: number; ino: number }[],
      between: () => Promise<void> = async () => {},
    ): Promise<ScanRow[]> {
      const byDev = new Map<number, number[]>()
      for (const f of files) {
        const inos = byDev.get(f.dev)
        if (inos) inos.push(f.ino)
        else byDev.set(f.dev, [f.ino])
      }
      const rows: ScanRow[] = []
      for (const [dev, every] of byDev) {
        // Only the inodes some asset of that file system may have (from the index's ends): a new
        // share of 100,000 files asks nothing when no asset lives there, instead of 100 queries.
        const span = await port.run(oneOf(inoSpan, { dev }))
        const lo = span?.lo
        const hi = span?.hi
        if (lo == null || hi == null) continue
        const inos = every.filter((ino) => ino >= lo && ino <= hi)
        // A thousand at a time, with `between` after each: a drop's 20,000 new files asked at once
        // held the loop for 40 to 100 ms at each rescan (bench/stall.ts).
        for (let i = 0; i < inos.length; i += 1000) {
          rows.push(...(await port.run(allOf(identitiesOf, { dev, inos: JSON.stringify(inos.slice(i, i + 1000)) }))))
          await between()
        }
      }
      return rows
    },

    /** Offline assets (not archive-only) with a fingerprint whose file had one of these sizes: relink candidates. */
    *offlineBySizes(sizes: ReadonlySet<number>): Work<ScanRow[]> {
      const every = [...sizes]
      const rows: ScanRow[] = []
      for (let i = 0; i < every.length; i += 1000)
        rows.push(...(yield* allOf(offlineBySizeForScan, { sizes: JSON.stringify(every.slice(i, i + 1000)) })))
      return rows
    },

    /** Whether some asset has a fingerprint of a file of this size (worth reading a new file's). */
    *sizeKnown(size: number): Work<boolean> {
      return (yield* oneOf(sizeKnown, { size })) !== undefined
    },

    /** The assets whose file has this size and fingerprint. */
    byContent: (size: number, hash: string): Work<ScanRow[]> => allOf(byContentForScan, { size, hash }),

    /** Which of these paths are some asset's proxy (never taken for input). */
    *proxiesAmong(paths: readonly string[]): Work<Set<string>> {
      const out = new Set<string>()
      for (let i = 0; i < paths.length; i += 1000)
        for (const r of yield* allOf(proxiesAmong, { paths: JSON.stringify(paths.slice(i, i + 1000)) }))
          out.add(r.path_proxy)
      return out
    },

    /** Whether `path` is some asset's proxy (proxiesAmong of one path). */
    *isProxy(path: string): Work<boolean> {
      return (yield* oneOf(isProxyAt, { path })) !== undefined
    },

    /** The asset's path_file (what a task's log line names), or undefined. */
    *pathOf(id: number): Work<string | undefined> {
      return (yield* oneOf(pathFileOf, { id }))?.path_file
    },

    /** Records fingerprints, each only if the asset still has the file it was read from. */
    *setFingerprints(
      list: readonly { id: number; dev: number; ino: number; size: number; mtimeMs: number; hash: string }[],
    ): Work<void> {
      if (!list.length) return
      yield* tx(function* () {
        for (const f of list)
          yield* runOf(setFingerprint, {
            size: f.size,
            mtime: f.mtimeMs,
            hash: f.hash,
            id: f.id,
            dev: f.dev,
            ino: f.ino,
          })
      })
    },

    /**
     * A scan's decisions, in one transaction (the caller's). Each names the path_file the scan read
     * (`from`; for online, `at`: where the asset is once relocated): an asset another scan changed
     * meanwhile (a scan awaits the disk between its read and its apply) is left, and its id
     * returned for the caller to look at again. Offline first (a vanished asset frees its path),
     * then the relocations in two steps (each first to a name no file can have, PARKED, so a swap
     * or rotation of names never meets the unique index half-done), then online; a path another
     * asset holds in production is not taken.
     */
    *applyScan(
      d: {
        offline: readonly { id: number; from: string; archive: boolean }[]
        online: readonly { id: number; at: string; archive: boolean }[]
        relocations: readonly ScanRelocation[]
      },
      by: Actor = system('watcher'),
    ): Work<{ changed: number[]; conflicts: number[] }> {
      const now = isoTimestamp()
      // Each change applied is written to the history, with the scan's transaction (the caller's).
      function* note(id: number, changes: Record<string, { old: unknown; new: unknown }>, hint?: Hint): Work<void> {
        const owner = yield* oneOf(ownerOf, { id })
        if (owner)
          yield* history.record(by, {
            resource: `${owner.kind}asset`,
            id,
            action: 'update',
            production: owner.production,
            changes,
            hint,
          })
      }
      const changed = new Set<number>()
      const conflicts = new Set<number>()
      // As the scan read it: its path, and archived or not (a re-import may have made it archive-only).
      function* asRead(id: number, path: string, archive: boolean): Work<boolean> {
        const row = yield* oneOf(currentPath, { id })
        return row !== undefined && row.path_file === path && row.is_archive === archive
      }
      /** Whether another asset than `id` is in production at `path`. */
      function* heldByAnother(path: string, kind: MediaKind, id: number): Work<boolean> {
        return (yield* allOf(onlineAt, { path, kind })).some((o) => o.id !== id)
      }
      for (const o of d.offline) {
        if (!(yield* asRead(o.id, o.from, o.archive))) changed.add(o.id)
        else if ((yield* runOf(setOffline, { now, id: o.id })).changes)
          yield* note(o.id, { is_production: { old: true, new: false } })
      }
      const relocations: ScanRelocation[] = []
      for (const r of d.relocations) {
        if (yield* asRead(r.id, r.from, r.archive)) relocations.push(r)
        else changed.add(r.id)
      }
      const was = new Map<number, { device: number; is_production: boolean } | undefined>()
      for (const r of relocations) was.set(r.id, yield* oneOf(ownerOf, { id: r.id }))
      for (const r of relocations) if (r.path !== r.from) yield* runOf(parkPath, { path: PARKED(r.id), id: r.id })
      for (const r of relocations) {
        if (yield* heldByAnother(r.path, r.kind, r.id)) {
          // Another asset stays in production at that path (an archived one is never taken
          // offline): this one goes back where it was, offline if that path is taken meanwhile.
          conflicts.add(r.id)
          if (r.path !== r.from) yield* runOf(unpark, { from: r.from, kind: r.kind, id: r.id })
          continue
        }
        yield* run(
          db
            .update(mediaAssets)
            .set({
              // In production: its file is there (checked just now), whatever another scan said meanwhile.
              is_production: true,
              path_file: r.path,
              device: r.device,
              file_dev: r.dev,
              file_ino: r.ino,
              file_stamp: r.stamp,
              // Content relinks bring their fingerprint; a rename keeps it; a new inode is read again.
              ...(r.hash !== undefined
                ? { file_size: r.size, file_mtime: r.mtimeMs, file_hash: r.hash }
                : r.by === 'identity'
                  ? {}
                  : { file_hash: null }),
              date_mod: now,
            })
            .where(eq(mediaAssets.id, r.id)),
        )
        const before = was.get(r.id)
        const changes: Record<string, { old: unknown; new: unknown }> = {}
        if (r.path !== r.from) changes.path_file = { old: r.from, new: r.path }
        if (before && before.device !== r.device) changes.device = { old: before.device, new: r.device }
        if (before && !before.is_production) changes.is_production = { old: false, new: true }
        if (Object.keys(changes).length) yield* note(r.id, changes, r.by === 'content' ? 'relinked' : undefined)
      }
      for (const o of d.online) {
        if (changed.has(o.id) || conflicts.has(o.id)) continue
        const row = yield* oneOf(currentPath, { id: o.id })
        if (!row || row.path_file !== o.at || row.is_archive !== o.archive) changed.add(o.id)
        else if (yield* heldByAnother(o.at, row.kind, o.id)) conflicts.add(o.id)
        else if ((yield* runOf(setOnlineOne, { now, id: o.id })).changes)
          yield* note(o.id, { is_production: { old: false, new: true } })
      }
      return { changed: [...changed], conflicts: [...conflicts] }
    },

    /**
     * A new asset as an import makes it, in the caller's transaction: the whole row as stored
     * (what history records of it, without reading it again). The import writes the history, the
     * keywords (writeKeywords) and its log beside it.
     */
    *insertImported(row: ImportedAsset): Work<MediaRow> {
      return (yield* oneOf(insertImported, row))!
    },

    /** An asset imported again: the import's fields over what it has (the caller writes the history). */
    *updateImported(id: number, set: Partial<typeof mediaAssets.$inferInsert>): Work<void> {
      yield* run(db.update(mediaAssets).set(set).where(eq(mediaAssets.id, id)))
    },

    /** The whole row (the import task's read), or undefined. */
    byId: (id: number): Work<MediaRow | undefined> => oneOf(rowById, { id }),

    /** status_asset (0 working, 6 done, -1 failed), as the import task moves it. */
    setStatus(id: number, status: number, by: Actor): Work<void> {
      return tx(() => changed(id, by, () => runOf(setStatusOf, { id, status, now: isoTimestamp() })))
    },

    /** Probed technical details, over what the asset has. */
    setTechnical(id: number, technical: Record<string, unknown>, by: Actor): Work<void> {
      return tx(() =>
        changed(id, by, () =>
          run(db.update(mediaAssets).set({ technical, date_mod: isoTimestamp() }).where(eq(mediaAssets.id, id))),
        ),
      )
    },

    /** The proxy made for the asset, and the versions of the pictures made with it (none: {}). */
    setProxy(id: number, path: string, by: Actor, pictures: PictureVersions = {}): Work<void> {
      return tx(() =>
        changed(id, by, () =>
          run(
            db
              .update(mediaAssets)
              .set({ path_proxy: path, pictures, date_mod: isoTimestamp() })
              .where(eq(mediaAssets.id, id)),
          ),
        ),
      )
    },

    /**
     * Proxies renamed (the proxy-name task), in one transaction (a savepoint in the caller's):
     * each path_proxy that still names `from` names `to`; one changed meanwhile is left.
     */
    *renameProxies(renamed: readonly { id: number; from: string; to: string }[], by: Actor): Work<void> {
      if (!renamed.length) return
      yield* tx(function* () {
        for (const r of renamed)
          yield* changed(r.id, by, () =>
            run(
              db
                .update(mediaAssets)
                .set({ path_proxy: r.to, date_mod: isoTimestamp() })
                .where(and(eq(mediaAssets.id, r.id), eq(mediaAssets.path_proxy, r.from))),
            ),
          )
      })
    },

    /** The productions with a proxy named by its asset's id directly in their proxy_root (the proxy-name task's look at start). */
    *productionsWithOldProxyNames(): Work<number[]> {
      // Proxies named by their asset's id (`<id>.<ext>`, `<id>_<n>.<ext>`): a LIKE over the
      // path_proxy index, separators made one; each last name is checked exactly below
      // (media/proxyname.ts). '!' escapes the `_` that LIKE would take for any character.
      const slashed = sql`replace(${mediaAssets.path_proxy}, '\\', '/')`
      const rows = yield* all(
        db
          .select({
            production: mediaAssets.production,
            id: mediaAssets.id,
            path_file: mediaAssets.path_file,
            path_proxy: mediaAssets.path_proxy,
            proxy_root: productions.proxy_root,
          })
          .from(mediaAssets)
          .innerJoin(productions, eq(productions.id, mediaAssets.production))
          .where(
            and(
              ne(mediaAssets.path_proxy, ''),
              or(
                sql`${slashed} LIKE ('%/' || ${mediaAssets.id} || '.%')`,
                sql`${slashed} LIKE ('%/' || ${mediaAssets.id} || '!_%.%') ESCAPE '!'`,
              ),
            ),
          ),
      )
      const found = new Set<number>()
      for (const r of rows)
        if (
          parentFolder(r.path_proxy) === withFinalSep(r.proxy_root) &&
          needsNewName(lastName(r.path_proxy), r.path_file, r.id)
        )
          found.add(r.production)
      return [...found].sort((a, b) => a - b)
    },

    /** A production's assets that have a proxy: id, kind, path_file, path_proxy (the proxy-name task's list). */
    proxiesOf: (production: number) =>
      all(
        db
          .select({
            id: mediaAssets.id,
            kind: mediaAssets.kind,
            path_file: mediaAssets.path_file,
            path_proxy: mediaAssets.path_proxy,
          })
          .from(mediaAssets)
          .where(and(eq(mediaAssets.production, production), ne(mediaAssets.path_proxy, '')))
          .orderBy(mediaAssets.id),
      ),

    /** Online (is_production) or offline; archive-only assets are left as they are. */
    *setOnline(ids: number[], online: boolean, by: Actor): Work<void> {
      if (!ids.length) return
      yield* tx(function* () {
        for (const id of ids)
          yield* changed(id, by, () =>
            run(
              db
                .update(mediaAssets)
                .set({ is_production: online, date_mod: isoTimestamp() })
                .where(and(eq(mediaAssets.id, id), eq(mediaAssets.is_production, !online))),
            ),
          )
      })
    },

    /**
     * The asset's essence was copied to an archive: is_archive true with its archive_details;
     * `online` false when the online file was removed (archive-only).
     */
    setArchived(id: number, details: Record<string, string>, online: boolean, xxh64: string, by: Actor): Work<void> {
      return tx(() =>
        changed(id, by, function* () {
          const technical = yield* withHash(id, xxh64)
          yield* run(
            db
              .update(mediaAssets)
              .set({
                is_archive: true,
                archive_details: details,
                is_production: online,
                technical,
                date_mod: isoTimestamp(),
              })
              .where(eq(mediaAssets.id, id)),
          )
        }),
      )
    },

    /** The archived file was copied back to `path` on `device`: online again, with the copy's identity. */
    setRestored(
      id: number,
      path: string,
      device: number,
      stat: Pick<FileStat, 'dev' | 'ino' | 'stamp'> | undefined,
      by: Actor,
      xxh64?: string,
    ): Work<void> {
      return tx(() =>
        changed(id, by, function* () {
          const technical = xxh64 ? yield* withHash(id, xxh64) : undefined
          yield* run(
            db
              .update(mediaAssets)
              .set({
                path_file: path,
                device,
                is_production: true,
                ...identityOfFile(stat),
                ...(technical ? { technical } : {}),
                date_mod: isoTimestamp(),
              })
              .where(eq(mediaAssets.id, id)),
          )
        }),
      )
    },

    /** The file is now at `path` on `device` (a move or rename), with its identity. */
    relocate(
      id: number,
      path: string,
      device: number,
      stat: Pick<FileStat, 'dev' | 'ino' | 'stamp'> | undefined,
      by: Actor,
    ): Work<void> {
      return tx(() =>
        changed(id, by, () =>
          run(
            db
              .update(mediaAssets)
              .set({ path_file: path, device, ...identityOfFile(stat), date_mod: isoTimestamp() })
              .where(eq(mediaAssets.id, id)),
          ),
        ),
      )
    },

    *create(kind: MediaKind, body: typeof MediaAssetCreate.static, user: Principal): Work<MediaRow> {
      const production = yield* productionForWrite(
        db,
        user,
        { id: body.production, name: body.production_name },
        { id: 'production', name: 'production_name' },
      )
      const allDevices = yield* all(db.select().from(devices))
      const file = field('/path_file', () => fileOnDevice(allDevices, body.path_file))
      const dateCrt = body.date_crt === undefined ? undefined : dateField('/date_crt', body.date_crt)
      const dateDel = body.date_del === undefined ? undefined : dateField('/date_del', body.date_del)
      const store = body.meta_field_store ?? {}
      yield* metadata.validateStore(CONTENT_TYPE_IDS[`${kind}asset`], store, '/meta_field_store')
      if (yield* byPath(file.path, kind))
        throw unique('/path_file', `A ${kind} asset with this path_file already exists.`)
      const now = isoTimestamp()
      return yield* tx(function* () {
        const row = (yield* one(
          db
            .insert(mediaAssets)
            .values({
              kind,
              name: body.name,
              description: body.description ?? '',
              production: production.id,
              device: file.device.id,
              path_file: file.path,
              is_archive: body.is_archive ?? false,
              is_production: body.is_production ?? true,
              meta_field_store: store,
              date_crt: dateCrt ?? null,
              date_add: now,
              date_mod: now,
              date_del: dateDel ?? (yield* holds.dateDel(`${kind}asset`, file.device.name, production.name, now)),
              // Recorded on every create, so a later move or rename is recognised (the watcher).
              ...identityOfFile(file.stat?.kind === 'file' ? file.stat : undefined),
            })
            .returning(),
        ))!
        yield* history.record(actorOf(user), {
          resource: `${kind}asset`,
          id: row.id,
          action: 'create',
          production: production.id,
          changes: history.snapshot(yield* detail(row), FIELDS, 'create'),
        })
        return row
      })
    },
  }
}

export type MediaAssets = ReturnType<typeof createMediaAssets>

/**
 * SQLite's order of text (BINARY: by its UTF-8 bytes, which is code point order). JavaScript's <
 * compares UTF-16 units, which agrees except that it puts U+E000 to U+FFFF after the surrogates of
 * U+10000 and up: only text with such a character is compared unit by unit.
 */
function textOrder(a: string, b: string): number {
  if (a === b) return 0
  if (!BEYOND_D7FF.test(a) || !BEYOND_D7FF.test(b)) return a < b ? -1 : 1
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    if (x >= 0xd800 && y >= 0xd800) {
      x += x >= 0xe000 ? -0x800 : 0x2000
      y += y >= 0xe000 ? -0x800 : 0x2000
    }
    return x - y
  }
  return a.length - b.length
}
const BEYOND_D7FF = /[\ud800-\uffff]/

/**
 * Where the paths below the folder `dir` (with its final separator) end in the path index: every
 * path starting with `dir` sorts in [dir, end), `end` being `dir` with its final separator made
 * the next character: "/mnt/a/" → "/mnt/a0" (Linux, macOS), "C:\a\" → "C:\a]" (Windows).
 */
export const pathRangeEnd = (dir: string): string =>
  dir.slice(0, -1) + String.fromCharCode(dir.charCodeAt(dir.length - 1) + 1)

/** A row with its keywords and linked projects as JSON arrays (byIdWithDetails). */
export type DetailedRow = MediaRow & { keywords_json: string; projects_json: string; modified_by: string | null }
export type ScanRow = Pick<
  MediaRow,
  | 'id'
  | 'path_file'
  | 'device'
  | 'is_archive'
  | 'is_production'
  | 'file_dev'
  | 'file_ino'
  | 'file_stamp'
  | 'file_size'
  | 'file_mtime'
  | 'file_hash'
  | 'kind'
>
/** A proxy_root and the path of the device it lies on ('' when none). */
export type ProxyFolder = { proxyRoot: string; devicePath: string }

/** A scan's row as the driver answers it (scanRowOf): SQLite's flags are 0 or 1, PostgreSQL's 64-bit integers may be text. */
type RawScanRow = Record<keyof ScanRow, unknown>

const numberOrNull = (value: unknown) => (value === null ? null : Number(value))

/** A ScanRow of a raw row: the same values from either engine. */
const scanRowOf = (r: RawScanRow): ScanRow => ({
  id: Number(r.id),
  path_file: r.path_file as string,
  device: Number(r.device),
  is_archive: r.is_archive === true || r.is_archive === 1,
  is_production: r.is_production === true || r.is_production === 1,
  file_dev: numberOrNull(r.file_dev),
  file_ino: numberOrNull(r.file_ino),
  file_stamp: numberOrNull(r.file_stamp),
  file_size: numberOrNull(r.file_size),
  file_mtime: numberOrNull(r.file_mtime),
  file_hash: r.file_hash as string | null,
  kind: r.kind as MediaKind,
})
/** A relocation as applyScan takes it: reconcile's, with where the row was and whether it is in production. */
export type ScanRelocation = Relocation & { from: string; kind: MediaKind; archive: boolean }

/** The identity columns of a file as found on disk (all null: none known). */
export const identityOfFile = (stat?: Pick<FileStat, 'dev' | 'ino' | 'stamp'>) =>
  stat
    ? { file_dev: stat.dev, file_ino: stat.ino, file_stamp: stat.stamp }
    : { file_dev: null, file_ino: null, file_stamp: null }

/**
 * Media assets put on another device, in the caller's transaction: a device made around their
 * folder takes them (?adopt=true), or gives them back when it goes. The devices service decides
 * and writes the history; the rows are written here, by the table's owner, in one statement.
 */
export function* moveToDevice(db: Db, ids: readonly number[], to: number, now = isoTimestamp()): Work<void> {
  if (!ids.length) return
  yield* run(
    db
      .update(mediaAssets)
      .set({ device: to, date_mod: now })
      .where(inJsonList(mediaAssets.id, JSON.stringify(ids))),
  )
}
