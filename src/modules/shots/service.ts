// Shots and sequences of video assets (docs/api.md, "Shots and sequences"): the only writer of
// the `shots`, `sequences` and `sequence_shots` tables. Shots are detected (the `shots` task,
// detect.task.ts, replaces an asset's detected shots and sequences at its end) or made by a user;
// sequences are runs of detected shots between black or silent gaps, or a user's choice of shots.
// Every user change writes its history row (resources `shot` and `sequence`, the asset's
// production) in its own transaction, and the history's listener makes the live `shot` event of
// it (modules/events); a detection writes one row on the video asset (the ids of its detected
// shots and sequences, before and after), an `asset` event.
//
// Thumbnails live in the folder `<proxy name>.shots/` beside the asset's proxy, one `<shot
// id>.jpg` per shot (media/pictures.ts SHOTS_SUFFIX), written by a detection; they go with their
// shot, with a detection that replaces it, and with the asset. A proxy renamed since (a remake
// under another name) leaves them where they are, served from there, until the next detection
// puts them beside the new name.
import { createHash } from 'node:crypto'
import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Work, all, allOf, one, oneOf, run, statement, tx } from '../../db/port.ts'
import { devices, mediaAssetShares, mediaAssets, sequenceShots, sequences, shots } from '../../db/tables.ts'
import { refuseReadOnly } from '../../http/edit.ts'
import { AppError, REQUIRED_DETAIL, entry, invalid, noSuchRecord, notFound } from '../../http/errors.ts'
import { SHOTS_SUFFIX } from '../../media/pictures.ts'
import { DEFAULT_THRESHOLD, type ShotSpan } from '../../media/shots.ts'
import { AT_REMOVEDIR, close, unlinkat } from '../../storage/dirfd.ts'
import { removeFileInside } from '../../storage/remove.ts'
import { openParentInside } from '../../storage/roots.ts'
import { PathError } from '../../storage/paths.ts'
import { requireFileWork } from '../../storage/platform.ts'
import type { Runner, TaskOf } from '../../tasks/runner.ts'
import type { Log } from '../../util/log.ts'
import { isoTimestamp, isoTimestampAfter } from '../../util/time.ts'
import { type Actor, type Entry, actorOf, historyOf } from '../history/service.ts'
import { EDIT_CODENAMES, type MediaRow, TITLES } from '../mediaassets/model.ts'
import type { MediaAssets, ProxyFolder } from '../mediaassets/service.ts'
import { canRead, requirePerm, requireWrite } from '../users/access.ts'
import type { Principal } from '../users/principal.ts'
import {
  MAX_KEYWORDS,
  type SequenceApi,
  type SequenceCreate,
  type SequenceUpdate,
  type ShotApi,
  type ShotCreate,
  type ShotUpdate,
} from './model.ts'

export type ShotRow = typeof shots.$inferSelect
export type SequenceRow = typeof sequences.$inferSelect

/** The fields history records of a shot (a create's and a delete's values; an update's changes). */
const SHOT_FIELDS = [
  'asset',
  'name',
  'description',
  'timecode_start',
  'timecode_end',
  'keywords',
  'is_compositing',
  'licensor',
  'license',
  'location_city',
  'copyright',
  'ancestor',
  'origin',
] as const
const SEQUENCE_FIELDS = ['asset', 'name', 'description', 'keywords', 'shots', 'origin'] as const

/** What a PATCH may change of a shot. */
const SHOT_WRITABLE = [
  'name',
  'description',
  'keywords',
  'is_compositing',
  'licensor',
  'license',
  'location_city',
  'copyright',
  'ancestor',
] as const

const SHOT_READ_ONLY: Record<string, string> = {
  id: 'id is set by the service.',
  asset: 'A shot stays on its video asset.',
  timecode_start: 'timecode_start is set when the shot is made (by detection, or by POST .../shots/).',
  timecode_end: 'timecode_end is set when the shot is made (by detection, or by POST .../shots/).',
  duration: 'duration follows timecode_start and timecode_end.',
  path_thumbnail: 'path_thumbnail is set by shot detection.',
  thumbnail_url: 'thumbnail_url follows path_thumbnail.',
  origin: 'origin is set when the shot is made.',
  start_frame: 'start_frame is set when the shot is made.',
  end_frame: 'end_frame is set when the shot is made.',
  score: 'score is set by shot detection.',
  date_add: 'date_add is set when the shot is made.',
  date_mod: 'date_mod is set on every change.',
}
const SEQUENCE_READ_ONLY: Record<string, string> = {
  id: 'id is set by the service.',
  asset: 'A sequence stays on its video asset.',
  timecode_start: 'timecode_start follows its shots.',
  timecode_end: 'timecode_end follows its shots.',
  duration: 'duration follows its shots.',
  origin: 'origin is set when the sequence is made.',
  date_add: 'date_add is set when the sequence is made.',
  date_mod: 'date_mod is set on every change.',
}

const conflict = (detail: string) => new AppError(409, 'conflict', detail)
const defaultShotName = (n: number) => `Shot ${n}`
const defaultSequenceName = (n: number) => `Sequence ${n}`

/** The asset a shot is on, as the service needs it. */
export type VideoAsset = MediaRow

/** The version a thumbnail URL carries: its file is never replaced under its name, so its path names it. */
export const thumbnailVersion = (path: string) => createHash('sha1').update(path).digest('hex').slice(0, 10)

/** Keywords as stored: each once, in the order given. */
const keywordsOf = (list: readonly string[] | undefined, pointer: string): string[] => {
  if (!list) return []
  if (list.length > MAX_KEYWORDS) throw invalid(pointer, `At most ${MAX_KEYWORDS} keywords.`)
  return [...new Set(list)]
}

export function createShots(db: Db, deps: { media: MediaAssets; runner: Runner; log?: Log }) {
  const { media, runner } = deps
  const history = historyOf(db)
  const p = (name: string) => sql.placeholder(name)
  // Every route of shots and sequences reads its asset first: prepared once.
  const assetById = statement<VideoAsset>(() =>
    db
      .select()
      .from(mediaAssets)
      .where(eq(mediaAssets.id, p('id'))),
  )
  const sharesOf = statement(() =>
    db
      .select({ production: mediaAssetShares.production_id })
      .from(mediaAssetShares)
      .where(eq(mediaAssetShares.asset_id, p('id'))),
  )
  const autoshotOf = statement(() =>
    db
      .select({ autoshot_detection: devices.autoshot_detection })
      .from(devices)
      .where(eq(devices.id, p('id'))),
  )
  const membersOf = statement(() =>
    db
      .select({ sequence_id: sequenceShots.sequence_id, shot_id: sequenceShots.shot_id })
      .from(sequenceShots)
      .innerJoin(sequences, eq(sequences.id, sequenceShots.sequence_id))
      .where(eq(sequences.asset_id, p('asset')))
      .orderBy(sequenceShots.sequence_id, sequenceShots.position),
  )
  const membersOfOne = statement(() =>
    db
      .select({ shot_id: sequenceShots.shot_id })
      .from(sequenceShots)
      .where(eq(sequenceShots.sequence_id, p('sequence')))
      .orderBy(sequenceShots.position),
  )
  /** The shots of a sequence, in its order. */
  function* membersOfSequence(id: number): Work<number[]> {
    return (yield* allOf(membersOfOne, { sequence: id })).map((m) => m.shot_id)
  }

  /** canReadAsset's rule (users/access.ts): of a readable production, or shared with one. */
  function* readable(user: Principal, row: { id: number; production: number }): Work<boolean> {
    if (canRead(user, row.production)) return true
    return (yield* allOf(sharesOf, { id: row.id })).some((share) => canRead(user, share.production))
  }

  /** The video asset with this id if `user` may read it, else the 404 its GET answers. */
  function* asset(id: number, user: Principal): Work<VideoAsset> {
    const row = yield* oneOf(assetById, { id })
    if (!row || row.kind !== 'video' || !(yield* readable(user, row))) throw notFound(noSuchRecord(TITLES.video))
    return row
  }

  /** The asset, readable and writable by `user` (browser.change_videoasset and write access to its production). */
  function* writable(id: number, user: Principal): Work<VideoAsset> {
    const row = yield* asset(id, user)
    requirePerm(user, EDIT_CODENAMES.video.change)
    requireWrite(user, row.production)
    return row
  }

  function* shot(on: VideoAsset, id: number): Work<ShotRow> {
    const row = yield* one(db.select().from(shots).where(eq(shots.id, id)))
    if (!row || row.asset_id !== on.id) throw notFound(noSuchRecord('Shot'))
    return row
  }

  function* sequence(on: VideoAsset, id: number): Work<SequenceRow> {
    const row = yield* one(db.select().from(sequences).where(eq(sequences.id, id)))
    if (!row || row.asset_id !== on.id) throw notFound(noSuchRecord('Sequence'))
    return row
  }

  /** The record as answered, with its thumbnail's URL on `base` (ctx.baseOf). */
  function toApi(base: string) {
    return (row: ShotRow): ShotApi => {
      const path = row.path_thumbnail
      return {
        id: row.id,
        asset: row.asset_id,
        name: row.name,
        description: row.description,
        timecode_start: row.start_ms,
        timecode_end: row.end_ms,
        duration: row.end_ms - row.start_ms,
        keywords: row.keywords,
        path_thumbnail: path,
        thumbnail_url: `${base}/api/videoassets/${row.asset_id}/shots/${row.id}/thumbnail/${path ? `?v=${thumbnailVersion(path)}` : ''}`,
        is_compositing: row.is_compositing,
        licensor: row.licensor,
        license: row.license,
        location_city: row.location_city,
        copyright: row.copyright,
        ancestor: row.ancestor,
        origin: row.origin,
        start_frame: row.start_frame,
        end_frame: row.end_frame,
        score: row.score,
        date_add: row.date_add,
        date_mod: row.date_mod,
      }
    }
  }

  /** The sequences of an asset as answered, their shots read once for all of them. */
  function* sequencesToApi(on: Pick<VideoAsset, 'id'>, base: string): Work<(row: SequenceRow) => SequenceApi> {
    const shotApi = toApi(base)
    const byId = new Map((yield* all(db.select().from(shots).where(eq(shots.asset_id, on.id)))).map((r) => [r.id, r]))
    const members = new Map<number, number[]>()
    for (const m of yield* allOf(membersOf, { asset: on.id })) {
      const list = members.get(m.sequence_id)
      if (list) list.push(m.shot_id)
      else members.set(m.sequence_id, [m.shot_id])
    }
    return (row: SequenceRow): SequenceApi => ({
      id: row.id,
      asset: row.asset_id,
      name: row.name,
      description: row.description,
      timecode_start: row.start_ms,
      timecode_end: row.end_ms,
      duration: row.end_ms - row.start_ms,
      keywords: row.keywords,
      origin: row.origin,
      shots: (members.get(row.id) ?? []).flatMap((id) => {
        const s = byId.get(id)
        return s ? [shotApi(s)] : []
      }),
      date_add: row.date_add,
      date_mod: row.date_mod,
    })
  }

  /** A shot's values as history records them. */
  const recordedShot = (row: ShotRow) => ({
    asset: row.asset_id,
    name: row.name,
    description: row.description,
    timecode_start: row.start_ms,
    timecode_end: row.end_ms,
    keywords: row.keywords,
    is_compositing: row.is_compositing,
    licensor: row.licensor,
    license: row.license,
    location_city: row.location_city,
    copyright: row.copyright,
    ancestor: row.ancestor,
    origin: row.origin,
  })
  const recordedSequence = (row: SequenceRow, members: number[]) => ({
    asset: row.asset_id,
    name: row.name,
    description: row.description,
    keywords: row.keywords,
    shots: members,
    origin: row.origin,
  })

  /** The asset's length in milliseconds, when its technical details say (frames over the frame rate). */
  function lengthMs(on: VideoAsset): number | undefined {
    const fps = fpsOf(on)
    const frames = on.technical.duration
    return fps && typeof frames === 'number' && frames > 0 ? Math.round((frames * 1000) / fps) : undefined
  }

  /** Writes a sequence's members in order and its times from them (the caller's transaction). */
  function* setMembers(id: number, ids: readonly number[]): Work<void> {
    yield* run(db.delete(sequenceShots).where(eq(sequenceShots.sequence_id, id)))
    if (ids.length)
      yield* run(
        db.insert(sequenceShots).values(ids.map((shot_id, position) => ({ sequence_id: id, shot_id, position }))),
      )
    const rows = ids.length
      ? yield* all(
          db
            .select()
            .from(shots)
            .where(inArray(shots.id, [...ids])),
        )
      : []
    if (rows.length)
      yield* run(
        db
          .update(sequences)
          .set({
            start_ms: Math.min(...rows.map((r) => r.start_ms)),
            end_ms: Math.max(...rows.map((r) => r.end_ms)),
          })
          .where(eq(sequences.id, id)),
      )
  }

  /** The shots a body names, each a shot of this asset, each once (400 at the one that is not). */
  function* shotIdsOf(on: VideoAsset, ids: readonly number[]): Work<number[]> {
    const seen = new Set<number>()
    const found = new Set(
      (yield* all(
        db
          .select({ id: shots.id })
          .from(shots)
          .where(and(eq(shots.asset_id, on.id), inArray(shots.id, [...new Set(ids)]))),
      )).map((r) => r.id),
    )
    ids.forEach((id, i) => {
      if (seen.has(id)) throw invalid(`/shots/${i}`, `Shot ${id} is named twice: a sequence holds each shot once.`)
      if (!found.has(id)) throw invalid(`/shots/${i}`, `No shot ${id} on this video asset.`)
      seen.add(id)
    })
    return [...ids]
  }

  /**
   * Removes thumbnail files (after a commit): only regular files inside the production's
   * proxy_root, `folder` (media.proxyFolderOf, read by the work before its commit: what runs
   * after a commit runs no statement, which on PostgreSQL would answer a promise).
   */
  function removeThumbnails(folder: ProxyFolder, paths: readonly string[]) {
    if (!paths.length) return
    const { proxyRoot, devicePath } = folder
    if (!proxyRoot || !devicePath) return
    for (const path of new Set(paths)) {
      try {
        removeFileInside(devicePath, proxyRoot, path)
      } catch (error) {
        if (!(error instanceof PathError)) throw error
        deps.log?.warn('a shot thumbnail was not removed', { path, error: error.message })
        return
      }
    }
  }

  /** The thumbnails of an asset's shots. */
  function* thumbnailsOf(assetId: number): Work<string[]> {
    const rows = yield* all(db.select({ path: shots.path_thumbnail }).from(shots).where(eq(shots.asset_id, assetId)))
    return rows.flatMap((s) => (s.path ? [s.path] : []))
  }

  // An asset deleted takes its shots (foreign keys) and their thumbnails with it. The media
  // service runs its listeners' work inside its delete's transaction, before the row goes, so
  // the shots are still there to read.
  media.onRemove(function* (row) {
    if (row.kind !== 'video') return undefined
    const paths = yield* thumbnailsOf(row.id)
    if (!paths.length) return undefined
    const folder = yield* media.proxyFolderOf(row.production)
    return () => {
      removeThumbnails(folder, paths)
      removeEmptyFolders(folder, paths)
    }
  })

  /**
   * The thumbnails' folders (`<proxy name>.shots`), each removed if it is empty now (an asset
   * deleted); `folder` as removeThumbnails takes it.
   */
  function removeEmptyFolders(folder: ProxyFolder, paths: readonly string[]) {
    const { proxyRoot, devicePath } = folder
    if (!proxyRoot || !devicePath) return
    const folders = new Set(paths.map((p) => p.slice(0, Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\')))))
    for (const folder of folders) {
      if (!folder.endsWith(SHOTS_SUFFIX)) continue
      try {
        const at = openParentInside(devicePath, proxyRoot, folder)
        if (!at) continue
        try {
          unlinkat(at.parent, at.name, AT_REMOVEDIR)
        } finally {
          close(at.parent)
        }
      } catch (error) {
        if (!(error instanceof PathError)) throw error
      }
    }
  }

  /** A queued detection of `on`: one per asset (a second request while it waits joins it, its threshold winning). */
  const newTask = (on: VideoAsset, threshold: number, user?: number) => ({
    kind: 'shots' as const,
    target: { videoasset: on.id },
    production: on.production,
    params: { asset: on.id, threshold, ...(user === undefined ? {} : { user }) },
    key: `shots:${on.id}`,
    merge: (queued: TaskOf<'shots'>['params'], added: TaskOf<'shots'>['params']) => ({ ...queued, ...added }),
  })

  return {
    asset,
    shot,
    sequence,
    toApi,
    sequencesToApi,

    /** One shot of an asset as answered; 404 for an asset `user` cannot read or a shot not on it. */
    *getShot(assetId: number, id: number, user: Principal, base: string): Work<ShotApi> {
      const on = yield* asset(assetId, user)
      return toApi(base)(yield* shot(on, id))
    },

    /** The answer of each sequence of an asset `user` can read (404 otherwise), for its list. */
    *sequencesOf(assetId: number, user: Principal, base: string): Work<(row: SequenceRow) => SequenceApi> {
      return yield* sequencesToApi(yield* asset(assetId, user), base)
    },

    /** One sequence of an asset as answered; 404 for an asset `user` cannot read or a sequence not on it. */
    *getSequence(assetId: number, id: number, user: Principal, base: string): Work<SequenceApi> {
      const on = yield* asset(assetId, user)
      return (yield* sequencesToApi(on, base))(yield* sequence(on, id))
    },

    /** The shot's thumbnail ('' for none) and the proxy_root it lies in, for a user who can read the asset (else 404). */
    *thumbnailOfShot(
      assetId: number,
      shotId: number,
      user: Principal,
    ): Work<{ path: string; proxyRoot: string; devicePath: string }> {
      const on = yield* asset(assetId, user)
      const { path_thumbnail: path } = yield* shot(on, shotId)
      return { path, ...(yield* media.proxyFolderOf(on.production)) }
    },

    /**
     * POST /videoassets/{id}/shots/detect/: queues a detection with `threshold` (scdet's scale)
     * and answers its task. Needs what an edit of the asset needs; 409 when there is nothing to
     * detect in (the file offline or archive-only, and no proxy).
     */
    *queueDetect(assetId: number, user: Principal, threshold = DEFAULT_THRESHOLD): Work<TaskOf<'shots'>> {
      requireFileWork()
      const on = yield* writable(assetId, user)
      if (!on.is_production && !on.path_proxy)
        throw conflict(
          'The video asset has no file in production (archive-only or offline) and no proxy: there is nothing to detect shots in.',
        )
      // The runner writes the task (and merges it with one queued) on the same connection, inside this transaction.
      const { id } = yield* tx(function* () {
        return yield* runner.enqueue(newTask(on, threshold, user.id))
      })
      return (yield* runner.get(id)) as TaskOf<'shots'>
    },

    /**
     * After an import or a proxy remake made the asset's proxy (in that task's last write): a
     * detection is queued when the asset's device asks for it (autoshot_detection).
     */
    *autoshot(done: { id: number; kind: string }): Work<void> {
      if (done.kind !== 'video') return
      const on = yield* oneOf(assetById, { id: done.id })
      if (!on || on.kind !== 'video' || !(yield* oneOf(autoshotOf, { id: on.device }))?.autoshot_detection) return
      yield* runner.enqueue(newTask(on, DEFAULT_THRESHOLD))
    },

    /** A user's shot over [timecode_start, timecode_end). */
    *create(assetId: number, body: typeof ShotCreate.static, user: Principal, base: string): Work<ShotApi> {
      const on = yield* writable(assetId, user)
      if (body.timecode_end <= body.timecode_start)
        throw invalid('/timecode_end', 'timecode_end must come after timecode_start.')
      const length = lengthMs(on)
      if (length !== undefined && body.timecode_end > length)
        throw invalid('/timecode_end', `timecode_end lies past the end of the clip (${length} ms long).`)
      const fps = fpsOf(on)
      const now = isoTimestamp()
      const row = yield* tx(function* () {
        const made = (yield* one(
          db
            .insert(shots)
            .values({
              asset_id: on.id,
              name: body.name,
              description: body.description ?? null,
              start_ms: body.timecode_start,
              end_ms: body.timecode_end,
              start_frame: fps ? Math.round((body.timecode_start * fps) / 1000) : null,
              end_frame: fps ? Math.round((body.timecode_end * fps) / 1000) : null,
              origin: 'user',
              keywords: keywordsOf(body.keywords, '/keywords'),
              is_compositing: body.is_compositing ?? false,
              licensor: body.licensor ?? null,
              license: body.license ?? null,
              location_city: body.location_city ?? null,
              copyright: body.copyright ?? null,
              ancestor: body.ancestor ?? null,
              date_add: now,
              date_mod: now,
            })
            .returning(),
        ))!
        yield* history.created(
          actorOf(user),
          { resource: 'shot', id: made.id, production: on.production },
          recordedShot(made),
          SHOT_FIELDS,
        )
        return made
      })
      return toApi(base)(row)
    },

    /** PATCH: the fields given; PUT: name must be given (fields not given keep their values). */
    *update(
      assetId: number,
      id: number,
      body: typeof ShotUpdate.static,
      user: Principal,
      mode: 'patch' | 'put',
      base: string,
    ): Work<ShotApi> {
      const on = yield* writable(assetId, user)
      const row = yield* shot(on, id)
      if (mode === 'put' && body.name === undefined)
        throw AppError.many(400, [entry(400, 'required', REQUIRED_DETAIL, { pointer: '/name' })])
      refuseReadOnly(body as Record<string, unknown>, toApi(base)(row), SHOT_READ_ONLY)
      const set: Partial<typeof shots.$inferInsert> = {}
      for (const field of SHOT_WRITABLE) {
        const value = body[field]
        if (value === undefined) continue
        if (field === 'keywords') set.keywords = keywordsOf(value as string[], '/keywords')
        else (set as Record<string, unknown>)[field] = value
      }
      const next = { ...row, ...set }
      const after = yield* tx(function* () {
        const changes = yield* history.updated(
          actorOf(user),
          { resource: 'shot', id, production: on.production },
          recordedShot(row),
          recordedShot(next),
          SHOT_FIELDS,
        )
        if (!Object.keys(changes).length) return row
        return (yield* one(
          db
            .update(shots)
            .set({ ...set, date_mod: isoTimestampAfter(row.date_mod) })
            .where(eq(shots.id, id))
            .returning(),
        ))!
      })
      return toApi(base)(after)
    },

    /** DELETE of a user's shot (a detected one is replaced by the next detection: 409); its sequences lose it. */
    *remove(assetId: number, id: number, user: Principal): Work<void> {
      const on = yield* writable(assetId, user)
      const row = yield* shot(on, id)
      if (row.origin !== 'user')
        throw conflict(
          'A detected shot is not deleted: the next detection replaces it (POST .../shots/detect/ with another threshold), and its edits with it. Only shots made by a user are deleted.',
        )
      const thumbnail = row.path_thumbnail ? [row.path_thumbnail] : []
      const folder = thumbnail.length ? yield* media.proxyFolderOf(on.production) : undefined
      yield* tx(function* () {
        // The sequences that hold it, with their shots before it goes.
        const holding: { id: number; before: number[] }[] = []
        for (const r of yield* all(
          db.select({ id: sequenceShots.sequence_id }).from(sequenceShots).where(eq(sequenceShots.shot_id, id)),
        ))
          holding.push({ id: r.id, before: yield* membersOfSequence(r.id) })
        yield* history.deleted(
          actorOf(user),
          { resource: 'shot', id, production: on.production },
          recordedShot(row),
          SHOT_FIELDS,
        )
        yield* run(db.delete(shots).where(eq(shots.id, id)))
        for (const held of holding) {
          const left = held.before.filter((s) => s !== id)
          const was = (yield* one(db.select().from(sequences).where(eq(sequences.id, held.id))))!
          yield* setMembers(held.id, left)
          yield* run(
            db
              .update(sequences)
              .set({ date_mod: isoTimestampAfter(was.date_mod) })
              .where(eq(sequences.id, held.id)),
          )
          yield* history.updated(
            actorOf(user),
            { resource: 'sequence', id: held.id, production: on.production },
            { shots: held.before },
            { shots: left },
            ['shots'],
          )
        }
      })
      if (folder) removeThumbnails(folder, thumbnail)
    },

    /** A user's sequence of shots of this asset. */
    *createSequence(
      assetId: number,
      body: typeof SequenceCreate.static,
      user: Principal,
      base: string,
    ): Work<SequenceApi> {
      const on = yield* writable(assetId, user)
      const ids = yield* shotIdsOf(on, body.shots)
      const now = isoTimestamp()
      const row = yield* tx(function* () {
        const made = (yield* one(
          db
            .insert(sequences)
            .values({
              asset_id: on.id,
              name: body.name,
              description: body.description ?? null,
              start_ms: 0,
              end_ms: 0,
              origin: 'user',
              keywords: keywordsOf(body.keywords, '/keywords'),
              date_add: now,
              date_mod: now,
            })
            .returning(),
        ))!
        yield* setMembers(made.id, ids)
        yield* history.created(
          actorOf(user),
          { resource: 'sequence', id: made.id, production: on.production },
          recordedSequence(made, ids),
          SEQUENCE_FIELDS,
        )
        return (yield* one(db.select().from(sequences).where(eq(sequences.id, made.id))))!
      })
      return (yield* sequencesToApi(on, base))(row)
    },

    *updateSequence(
      assetId: number,
      id: number,
      body: typeof SequenceUpdate.static,
      user: Principal,
      mode: 'patch' | 'put',
      base: string,
    ): Work<SequenceApi> {
      const on = yield* writable(assetId, user)
      const row = yield* sequence(on, id)
      if (mode === 'put' && body.name === undefined)
        throw AppError.many(400, [entry(400, 'required', REQUIRED_DETAIL, { pointer: '/name' })])
      const current = (yield* sequencesToApi(on, base))(row)
      const members = yield* membersOfSequence(id)
      refuseReadOnly(body as Record<string, unknown>, current, SEQUENCE_READ_ONLY)
      // shots as ids, or as the records answered (a sequence read and sent back): the same list is no change.
      const given = body.shots?.map((s) => (typeof s === 'number' ? s : s.id))
      if (given && row.origin === 'detected' && !sameIds(given, members))
        throw invalid(
          '/shots',
          "A detected sequence's shots are set by shot detection: make a sequence of your own (POST .../sequences/) to choose them.",
        )
      const ids = given === undefined || row.origin === 'detected' ? members : yield* shotIdsOf(on, given)
      const next = {
        ...row,
        name: body.name ?? row.name,
        description: body.description === undefined ? row.description : body.description,
        keywords: body.keywords === undefined ? row.keywords : keywordsOf(body.keywords, '/keywords'),
      }
      const after = yield* tx(function* () {
        const changes = yield* history.updated(
          actorOf(user),
          { resource: 'sequence', id, production: on.production },
          recordedSequence(row, members),
          recordedSequence(next, ids),
          SEQUENCE_FIELDS,
        )
        if (!Object.keys(changes).length) return row
        yield* run(
          db
            .update(sequences)
            .set({
              name: next.name,
              description: next.description,
              keywords: next.keywords,
              date_mod: isoTimestampAfter(row.date_mod),
            })
            .where(eq(sequences.id, id)),
        )
        if (changes.shots) yield* setMembers(id, ids)
        return (yield* one(db.select().from(sequences).where(eq(sequences.id, id))))!
      })
      return (yield* sequencesToApi(on, base))(after)
    },

    /** DELETE of a user's sequence (a detected one is replaced by the next detection: 409). */
    *removeSequence(assetId: number, id: number, user: Principal): Work<void> {
      const on = yield* writable(assetId, user)
      const row = yield* sequence(on, id)
      if (row.origin !== 'user')
        throw conflict(
          'A detected sequence is not deleted: the next detection replaces it. Only sequences made by a user are deleted.',
        )
      const members = yield* membersOfSequence(id)
      yield* tx(function* () {
        yield* history.deleted(
          actorOf(user),
          { resource: 'sequence', id, production: on.production },
          recordedSequence(row, members),
          SEQUENCE_FIELDS,
        )
        yield* run(db.delete(sequences).where(eq(sequences.id, id)))
      })
    },

    /**
     * A detection's end (detect.task.ts), in the caller's transaction (the task's end; a savepoint
     * inside it): the asset's detected shots become `spans` and its detected sequences `runs`
     * (indices into spans). A detected shot whose frames are those of a new one is kept (its id,
     * edits and thumbnail), the others go; a detected sequence of exactly the same shots is kept
     * too. A user's sequence that held a shot that went holds the new shots over its material
     * instead (overlapping it by half the shorter of the two). `place(row)` gives a shot its
     * thumbnail in the folder `folder` (beside the proxy as it is named now; '' for none) and
     * answers its path, or '': every shot without one, and every shot whose thumbnail lies
     * elsewhere (beside a proxy's earlier name). Answers the thumbnails to remove once this has
     * committed, and the proxy folder they lie in (read here, for removeThumbnails after the commit).
     */
    *replaceDetected(
      assetId: number,
      d: { spans: readonly ShotSpan[]; runs: readonly number[][] },
      thumbnails: { folder: string; place: (row: ShotRow) => string },
      by: Actor,
    ): Work<{ removed: string[]; folder: ProxyFolder; production: number; shots: number; sequences: number }> {
      return yield* tx(function* () {
        const on = yield* oneOf(assetById, { id: assetId })
        if (!on || on.kind !== 'video') throw new Error('the asset is gone')
        const now = isoTimestamp()
        const every = yield* all(
          db.select().from(shots).where(eq(shots.asset_id, on.id)).orderBy(asc(shots.start_ms), asc(shots.id)),
        )
        const oldDetected = every.filter((s) => s.origin === 'detected')
        const byFrames = new Map(oldDetected.map((s, i) => [`${s.start_frame}:${s.end_frame}`, { row: s, index: i }]))
        const oldSequences = yield* all(
          db.select().from(sequences).where(eq(sequences.asset_id, on.id)).orderBy(asc(sequences.id)),
        )
        const oldMembers = new Map<number, number[]>()
        for (const m of yield* allOf(membersOf, { asset: on.id })) {
          const list = oldMembers.get(m.sequence_id)
          if (list) list.push(m.shot_id)
          else oldMembers.set(m.sequence_id, [m.shot_id])
        }

        // The shots: kept where the frames are the same, else made.
        const kept = new Set<number>()
        const rows: ShotRow[] = []
        for (const [i, span] of d.spans.entries()) {
          const same = byFrames.get(`${span.startFrame}:${span.endFrame}`)
          if (same) {
            kept.add(same.row.id)
            const renamed = same.row.name === defaultShotName(same.index + 1) ? defaultShotName(i + 1) : same.row.name
            if (renamed === same.row.name && same.row.score === span.score) rows.push(same.row)
            else
              rows.push(
                (yield* one(
                  db
                    .update(shots)
                    .set({ name: renamed, score: span.score })
                    .where(eq(shots.id, same.row.id))
                    .returning(),
                ))!,
              )
            continue
          }
          rows.push(
            (yield* one(
              db
                .insert(shots)
                .values({
                  asset_id: on.id,
                  name: defaultShotName(i + 1),
                  start_ms: span.startMs,
                  end_ms: span.endMs,
                  start_frame: span.startFrame,
                  end_frame: span.endFrame,
                  score: span.score,
                  origin: 'detected',
                  date_add: now,
                  date_mod: now,
                })
                .returning(),
            ))!,
          )
        }
        const gone = oldDetected.filter((s) => !kept.has(s.id))
        const goneIds = new Set(gone.map((s) => s.id))

        // A user's sequence keeps its material: a shot that goes gives way to the new ones over it.
        const userSequences = oldSequences.filter((q) => q.origin === 'user')
        const remapped: { row: SequenceRow; old: number[]; ids: number[] }[] = []
        for (const q of userSequences) {
          const old = oldMembers.get(q.id) ?? []
          if (!old.some((id) => goneIds.has(id))) continue
          const ids: number[] = []
          for (const id of old) {
            const was = gone.find((s) => s.id === id)
            const instead = was ? rows.filter((r) => sameMaterial(r, was)) : [{ id }]
            for (const r of instead) if (!ids.includes(r.id)) ids.push(r.id)
          }
          remapped.push({ row: q, old, ids })
        }

        if (gone.length) yield* run(db.delete(shots).where(inArray(shots.id, [...goneIds])))
        for (const { row, old, ids } of remapped) {
          yield* setMembers(row.id, ids)
          yield* run(
            db
              .update(sequences)
              .set({ date_mod: isoTimestampAfter(row.date_mod) })
              .where(eq(sequences.id, row.id)),
          )
          yield* history.updated(
            by,
            { resource: 'sequence', id: row.id, production: on.production },
            { shots: old },
            { shots: ids },
            ['shots'],
          )
        }

        // The detected sequences: kept when of exactly the same shots, else made.
        const runs = d.runs.map((run) => run.map((i) => rows[i]!.id))
        const oldDetectedSequences = oldSequences.filter((q) => q.origin === 'detected')
        const keptSequences = new Set<number>()
        const sequenceIds: number[] = []
        for (const [n, ids] of runs.entries()) {
          const same = oldDetectedSequences.find(
            (q) => !keptSequences.has(q.id) && sameIds(oldMembers.get(q.id) ?? [], ids),
          )
          if (same) {
            keptSequences.add(same.id)
            const index = oldDetectedSequences.indexOf(same)
            if (same.name === defaultSequenceName(index + 1) && index !== n)
              yield* run(
                db
                  .update(sequences)
                  .set({ name: defaultSequenceName(n + 1) })
                  .where(eq(sequences.id, same.id)),
              )
            sequenceIds.push(same.id)
            continue
          }
          const made = (yield* one(
            db
              .insert(sequences)
              .values({
                asset_id: on.id,
                name: defaultSequenceName(n + 1),
                start_ms: 0,
                end_ms: 0,
                origin: 'detected',
                date_add: now,
                date_mod: now,
              })
              .returning({ id: sequences.id }),
          ))!
          yield* setMembers(made.id, ids)
          sequenceIds.push(made.id)
        }
        const goneSequences = oldDetectedSequences.filter((q) => !keptSequences.has(q.id)).map((q) => q.id)
        if (goneSequences.length) yield* run(db.delete(sequences).where(inArray(sequences.id, goneSequences)))

        // Thumbnails for every shot without one (new shots, and a user's made since the last
        // detection), and beside the proxy's name now for those beside an earlier one.
        const removed = gone.flatMap((s) => (s.path_thumbnail ? [s.path_thumbnail] : []))
        const users = every.filter((s) => s.origin === 'user')
        const inFolder = (path: string) =>
          thumbnails.folder !== '' &&
          path.length > thumbnails.folder.length &&
          path.startsWith(thumbnails.folder) &&
          '/\\'.includes(path[thumbnails.folder.length]!)
        for (const row of [...rows, ...users]) {
          if (row.path_thumbnail && (!thumbnails.folder || inFolder(row.path_thumbnail))) continue
          const path = thumbnails.place(row)
          if (!path) continue
          yield* run(db.update(shots).set({ path_thumbnail: path }).where(eq(shots.id, row.id)))
          if (row.path_thumbnail) removed.push(row.path_thumbnail)
        }

        // One history row on the asset: the detected shots and sequences before and after.
        const changes = {
          shots: { old: oldDetected.map((s) => s.id), new: rows.map((r) => r.id) },
          sequences: { old: oldDetectedSequences.map((q) => q.id), new: sequenceIds },
        }
        if (!sameIds(changes.shots.old, changes.shots.new) || !sameIds(changes.sequences.old, changes.sequences.new))
          yield* history.record(by, {
            resource: 'videoasset',
            id: on.id,
            action: 'update',
            production: on.production,
            changes,
          })
        return {
          removed,
          folder: removed.length ? yield* media.proxyFolderOf(on.production) : { proxyRoot: '', devicePath: '' },
          production: on.production,
          shots: rows.length,
          sequences: runs.length,
        }
      })
    },

    /**
     * Removes thumbnails of shots that went (after the commit that took them), and their folders
     * once empty; `folder`: the proxy folder replaceDetected answered with them.
     */
    removeThumbnails(folder: ProxyFolder, paths: readonly string[]) {
      removeThumbnails(folder, paths)
      removeEmptyFolders(folder, paths)
    },
  }
}

export type Shots = ReturnType<typeof createShots>

/**
 * Whether two shots show the same material: they overlap by at least half of the shorter one (a
 * shot split in two is each half; two merged are the one; a cut moved by a frame is the same).
 */
const sameMaterial = (a: { start_ms: number; end_ms: number }, b: { start_ms: number; end_ms: number }) =>
  Math.min(a.end_ms, b.end_ms) - Math.max(a.start_ms, b.start_ms) >=
  0.5 * Math.min(a.end_ms - a.start_ms, b.end_ms - b.start_ms)

const sameIds = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((x, i) => x === b[i])

/** The asset's frame rate from its technical details ("25/1", "30000/1001"), as a number. */
export function fpsOf(on: Pick<VideoAsset, 'technical'>): number | undefined {
  const m = typeof on.technical.fps === 'string' ? /^(\d+)\/(\d+)$/.exec(on.technical.fps) : null
  if (!m || Number(m[1]) <= 0 || Number(m[2]) <= 0) return undefined
  return Number(m[1]) / Number(m[2])
}

/**
 * The live event of a shot's or sequence's history row (modules/events): its type, id, asset,
 * and what happened; undefined when the asset is gone. Read in the row's transaction: a create's
 * and a delete's row names the asset, an update's record is still there.
 */
export function* shotEvent(
  db: Db,
  e: Entry,
): Work<
  { type: 'shot' | 'sequence'; id: number; asset: number; action: 'created' | 'updated' | 'deleted' } | undefined
> {
  if (e.resource !== 'shot' && e.resource !== 'sequence') return undefined
  const named = e.changes?.asset?.new ?? e.changes?.asset?.old
  const table = e.resource === 'shot' ? shots : sequences
  const assetId =
    typeof named === 'number'
      ? named
      : (yield* one(db.select({ asset_id: table.asset_id }).from(table).where(eq(table.id, e.id))))?.asset_id
  if (assetId === undefined) return undefined
  const action = e.action === 'create' ? 'created' : e.action === 'delete' ? 'deleted' : 'updated'
  return { type: e.resource, id: e.id, asset: assetId, action }
}
