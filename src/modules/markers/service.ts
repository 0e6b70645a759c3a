// Markers (docs/api.md, Markers): notes at a point or over a range of a media asset, by a user.
// The only writer of the `markers` table; every change writes its history row (resource
// `marker`, the asset's production) in its own transaction, and the history's listener makes
// the live `marker` event of it (modules/events). A marker's times are milliseconds from the
// first frame; with a frame rate they are shown, and may be given, as the asset's source
// timecode (clock.ts). The notes are in the table's `note` column, for the search to index.
import { eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Work, all, allOf, one, oneOf, run, statement, tx } from '../../db/port.ts'
import { type MediaKind, markers, mediaAssetShares, mediaAssets } from '../../db/tables.ts'
import { refuseReadOnly } from '../../http/edit.ts'
import { AppError, REQUIRED_DETAIL, entry, forbidden, invalid, noSuchRecord, notFound } from '../../http/errors.ts'
import { isoTimestamp, isoTimestampAfter } from '../../util/time.ts'
import { type Entry, actorOf, diff, historyOf } from '../history/service.ts'
import { EDIT_CODENAMES, TITLES } from '../mediaassets/model.ts'
import { canRead, permissionNeeded, requireWrite } from '../users/access.ts'
import type { Principal } from '../users/principal.ts'
import { type Clock, clockOf, clockText, endFrame, endMs, frameOfLabel, labelOf, startFrame, startMs } from './clock.ts'
import type { ExportAsset } from './exports.ts'
import type { MarkerColor, MarkerCreate, MarkerUpdate } from './model.ts'

export type MarkerRow = typeof markers.$inferSelect

/** The asset a marker is on, as markers need it: who may read and write it, and its clock. */
export type MarkerAsset = ExportAsset & { kind: MediaKind; production: number }

/** The fields history records of a marker (a create's and a delete's values; an update's changes of the last four). */
const RECORDED = ['asset', 'user', 'start_ms', 'end_ms', 'note', 'color'] as const
const CHANGED = ['start_ms', 'end_ms', 'note', 'color'] as const

type Body = typeof MarkerUpdate.static
type Times = { start_ms: number; end_ms: number | null }

export function createMarkers(db: Db) {
  const history = historyOf(db)
  // Every marker route reads its asset first: prepared once. `technical` as stored, not decoded
  // by the column: text that does not parse makes an asset without a clock, not a failure.
  const assetById = statement(() =>
    db
      .select({
        id: mediaAssets.id,
        kind: mediaAssets.kind,
        name: mediaAssets.name,
        production: mediaAssets.production,
        path_file: mediaAssets.path_file,
        technical: sql<unknown>`${mediaAssets.technical}`,
      })
      .from(mediaAssets)
      .where(eq(mediaAssets.id, sql.placeholder('id'))),
  )
  const sharesOf = statement(() =>
    db
      .select({ production: mediaAssetShares.production_id })
      .from(mediaAssetShares)
      .where(eq(mediaAssetShares.asset_id, sql.placeholder('id'))),
  )

  /** canReadAsset's rule (users/access.ts): of a readable production, or shared with one. */
  function* readable(user: Principal, row: { id: number; production: number }): Work<boolean> {
    if (canRead(user, row.production)) return true
    return (yield* allOf(sharesOf, { id: row.id })).some((share) => canRead(user, share.production))
  }

  /** The asset of `kind` with this id if `user` may read it, else the 404 its GET answers. */
  function* asset(kind: MediaKind, id: number, user: Principal): Work<MarkerAsset> {
    const row = yield* oneOf(assetById, { id })
    if (!row || row.kind !== kind || !(yield* readable(user, row))) throw notFound(noSuchRecord(TITLES[kind]))
    let technical: Record<string, unknown> = {}
    try {
      // Text on SQLite; PostgreSQL's driver hands a JSON column over parsed.
      const parsed = (typeof row.technical === 'string' ? JSON.parse(row.technical) : row.technical) as unknown
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) technical = parsed as Record<string, unknown>
    } catch {
      // Unreadable technical details: an asset without a clock.
    }
    return { ...row, clock: clockOf(kind, technical) }
  }

  /** The marker with this id on that asset, else 404. */
  function* marker(on: MarkerAsset, id: number): Work<MarkerRow> {
    const row = yield* one(db.select().from(markers).where(eq(markers.id, id)))
    if (!row || row.asset_id !== on.id) throw notFound(noSuchRecord('Marker'))
    return row
  }

  /** The record as answered, for markers of this asset. */
  function toApi(on: MarkerAsset) {
    const { clock } = on
    return (row: MarkerRow) => ({
      id: row.id,
      asset: row.asset_id,
      start_ms: row.start_ms,
      end_ms: row.end_ms,
      ...(clock.fps
        ? {
            start_timecode: labelOf({ ...clock, fps: clock.fps }, startFrame(clock.fps, row.start_ms)),
            end_timecode:
              row.end_ms === null ? null : labelOf({ ...clock, fps: clock.fps }, endFrame(clock.fps, row.end_ms)),
          }
        : {}),
      note: row.note,
      color: row.color as MarkerColor,
      user: row.username,
      date_add: row.date_add,
      date_mod: row.date_mod,
    })
  }

  /** A marker as answered. */
  type Answer = ReturnType<ReturnType<typeof toApi>>

  /**
   * Who may change a marker: write access to the asset's production, and for a marker of another
   * user (or of none: the service's, or of a user since removed) also browser.change_<kind>asset.
   */
  function requireChange(user: Principal, on: MarkerAsset, row?: MarkerRow) {
    requireWrite(user, on.production)
    if (!row || user.is_superuser || row.user_id === user.id) return
    const codename = EDIT_CODENAMES[on.kind].change
    if (!user.perms.has(codename))
      throw forbidden(
        `This marker is ${row.username}'s: changing another user's marker needs more than write access. ${permissionNeeded(user.username, codename)}`,
      )
  }

  /** The values of a row as history records them. */
  const recorded = (row: MarkerRow) => ({
    asset: row.asset_id,
    user: row.username,
    start_ms: row.start_ms,
    end_ms: row.end_ms,
    note: row.note,
    color: row.color,
  })

  return {
    asset,
    marker,
    toApi,

    /** The asset of `kind` with this id (if `user` may read it) and its markers in time order, for the exports. */
    *forExport(kind: MediaKind, assetId: number, user: Principal): Work<{ on: MarkerAsset; rows: MarkerRow[] }> {
      const on = yield* asset(kind, assetId, user)
      const rows = yield* all(
        db.select().from(markers).where(eq(markers.asset_id, on.id)).orderBy(markers.start_ms, markers.id),
      )
      return { on, rows }
    },

    /** One marker of an asset as answered; 404 for an asset `user` cannot read or a marker not on it. */
    *get(kind: MediaKind, assetId: number, id: number, user: Principal): Work<Answer> {
      const on = yield* asset(kind, assetId, user)
      return toApi(on)(yield* marker(on, id))
    },

    *create(kind: MediaKind, assetId: number, body: typeof MarkerCreate.static, user: Principal): Work<Answer> {
      const on = yield* asset(kind, assetId, user)
      requireChange(user, on)
      const times = timesOf(on.clock, body, undefined)
      const note = noteOf(body.note)
      const now = isoTimestamp()
      const row = yield* tx(function* () {
        const made = (yield* one(
          db
            .insert(markers)
            .values({
              asset_id: on.id,
              ...times,
              note,
              color: body.color ?? 'red',
              // The service's own principal (id 0) is no user row.
              user_id: user.id === 0 ? null : user.id,
              username: user.id === 0 ? 'system' : user.username,
              date_add: now,
              date_mod: now,
            })
            .returning(),
        ))!
        yield* history.created(
          actorOf(user),
          { resource: 'marker', id: made.id, production: on.production },
          recorded(made),
          RECORDED,
        )
        return made
      })
      return toApi(on)(row)
    },

    /** PATCH: the fields given; PUT: note and a start must be given (fields not given keep their values). */
    *update(
      kind: MediaKind,
      assetId: number,
      id: number,
      body: Body,
      user: Principal,
      mode: 'patch' | 'put',
    ): Work<Answer> {
      const on = yield* asset(kind, assetId, user)
      const row = yield* marker(on, id)
      requireChange(user, on, row)
      if (mode === 'put') {
        const missing = [
          ...(body.start === undefined && body.start_ms === undefined ? ['start'] : []),
          ...(body.note === undefined ? ['note'] : []),
        ]
        if (missing.length)
          throw AppError.many(
            400,
            missing.map((f) =>
              entry(
                400,
                'required',
                f === 'start' ? `${REQUIRED_DETAIL.slice(0, -1)} (or start_ms).` : REQUIRED_DETAIL,
                {
                  pointer: `/${f}`,
                },
              ),
            ),
          )
      }
      const current = toApi(on)(row)
      refuseReadOnly(body as Record<string, unknown>, current, {
        id: 'id is set by the service.',
        asset: 'A marker stays on its asset: make a new one on the other asset.',
        start_timecode: 'start_timecode follows start_ms: to set the start by timecode, send start.',
        end_timecode: 'end_timecode follows end_ms: to set the end by timecode, send end.',
        user: 'user is who made the marker.',
        date_add: 'date_add is set when the marker is made.',
        date_mod: 'date_mod is set on every change.',
      })
      const times = timesOf(on.clock, body, row)
      const next: MarkerRow = {
        ...row,
        ...times,
        note: body.note === undefined ? row.note : noteOf(body.note),
        color: body.color ?? row.color,
      }
      const after = yield* tx(function* () {
        const changes = diff(recorded(row), recorded(next), CHANGED)
        if (!Object.keys(changes).length) return row
        const written = (yield* one(
          db
            .update(markers)
            .set({
              start_ms: next.start_ms,
              end_ms: next.end_ms,
              note: next.note,
              color: next.color,
              date_mod: isoTimestampAfter(row.date_mod),
            })
            .where(eq(markers.id, id))
            .returning(),
        ))!
        yield* history.record(actorOf(user), {
          resource: 'marker',
          id,
          action: 'update',
          changes,
          production: on.production,
        })
        return written
      })
      return toApi(on)(after)
    },

    *remove(kind: MediaKind, assetId: number, id: number, user: Principal): Work<void> {
      const on = yield* asset(kind, assetId, user)
      const row = yield* marker(on, id)
      requireChange(user, on, row)
      yield* tx(function* () {
        yield* run(db.delete(markers).where(eq(markers.id, id)))
        yield* history.deleted(
          actorOf(user),
          { resource: 'marker', id, production: on.production },
          recorded(row),
          RECORDED,
        )
      })
    },
  }
}

export type Markers = ReturnType<typeof createMarkers>

/** A note as stored: as given, but not blank. */
function noteOf(note: string): string {
  if (!note.trim()) throw invalid('/note', 'The note must not be blank.')
  return note
}

/**
 * The times a body gives, over those of `row` (an update) or none (a create), checked against the
 * asset: the start by timecode (`start`) or in milliseconds (`start_ms`), both only when they name
 * the same frame; the same for the end, whose null makes a point; the start within the asset, the
 * end after the start and not past the asset's end. An end on the start's frame (by timecode) or
 * at the start (in milliseconds) makes a point.
 */
function timesOf(clock: Clock, body: Body, row: MarkerRow | undefined): Times {
  const fps = clock.fps
  const tc = fps && { ...clock, fps }
  const length = () =>
    tc
      ? `its first frame is ${labelOf(tc, 0)}${clock.frames === undefined ? '' : `, its end ${labelOf(tc, clock.frames)}`}`
      : `it is ${clockText(clock.ms ?? 0)} long`
  const startPast = (ms: number) =>
    tc && clock.frames !== undefined
      ? startFrame(tc.fps, ms) >= clock.frames
      : clock.ms !== undefined && ms > 0 && ms >= clock.ms
  const endPast = (ms: number) =>
    tc && clock.frames !== undefined ? endFrame(tc.fps, ms) > clock.frames : clock.ms !== undefined && ms > clock.ms

  /** A timecode field as a frame (from the first), or the 400 at it. */
  const frameAt = (field: 'start' | 'end', text: string): number => {
    if (!tc)
      throw invalid(
        `/${field}`,
        `This asset has no frame rate, so its markers have no timecode: give ${field}_ms (milliseconds from its start).`,
      )
    const read = frameOfLabel(tc, text)
    if ('error' in read) throw invalid(`/${field}`, read.error)
    return read.frame
  }

  let start = row?.start_ms ?? 0
  let startBy: string | undefined
  if (body.start !== undefined) {
    const frame = frameAt('start', body.start)
    if (body.start_ms !== undefined && startFrame(tc!.fps, body.start_ms) !== frame)
      throw invalid(
        '/start_ms',
        `start (${body.start}) and start_ms (${body.start_ms}) name different frames: send one.`,
      )
    start = body.start_ms ?? startMs(tc!.fps, frame)
    startBy = '/start'
  } else if (body.start_ms !== undefined) {
    start = body.start_ms
    startBy = '/start_ms'
  }
  if (startBy && startPast(start))
    throw invalid(
      startBy,
      `The start (${body.start ?? (tc ? labelOf(tc, startFrame(tc.fps, start)) : `${start} ms`)}) lies past the end of the asset: ${length()}.`,
    )

  let end = row?.end_ms ?? null
  let endBy: string | undefined
  if (typeof body.end === 'string') {
    const frame = frameAt('end', body.end)
    if (body.end_ms !== undefined && (body.end_ms === null || endFrame(tc!.fps, body.end_ms) !== frame))
      throw invalid('/end_ms', `end (${body.end}) and end_ms (${body.end_ms}) name different frames: send one.`)
    const from = startFrame(tc!.fps, start)
    if (frame < from) throw invalid('/end', `The end (${body.end}) comes before the start (${labelOf(tc!, from)}).`)
    if (endPast(endMs(tc!.fps, frame)))
      throw invalid('/end', `The end (${body.end}) lies past the end of the asset: ${length()}.`)
    end = frame === from ? null : (body.end_ms ?? endMs(tc!.fps, frame))
    endBy = '/end'
  } else if (body.end === null) {
    if (body.end_ms !== undefined && body.end_ms !== null)
      throw invalid('/end_ms', 'end is null (a point) and end_ms is not: send one of them.')
    end = null
  } else if (body.end_ms !== undefined) {
    end = body.end_ms
    endBy = '/end_ms'
    if (end !== null) {
      if (end < start) throw invalid('/end_ms', `end_ms (${end}) comes before the start (${start} ms).`)
      if (endPast(end)) throw invalid('/end_ms', `end_ms (${end}) lies past the end of the asset: ${length()}.`)
    }
  }
  if (end !== null && end <= start) {
    // An end given on the start makes a point; an end kept that the new start reached is refused.
    if (endBy) end = null
    else
      throw invalid(
        startBy ?? '/start_ms',
        `The start now lies at or after the marker's end (end_ms ${end}): move the end too, or send end: null for a point.`,
      )
  }
  return { start_ms: start, end_ms: end }
}

/**
 * The live event of a marker's history row (modules/events): its id, its asset and the asset's
 * type, and what happened; undefined when the asset is no longer there. Read inside the row's
 * transaction: a create's and a delete's row names the asset, an update's marker is still there.
 */
export function* markerEvent(
  db: Db,
  e: Entry,
): Work<{ id: number; asset: number; type: string; action: 'created' | 'updated' | 'deleted' } | undefined> {
  const named = e.changes?.asset?.new ?? e.changes?.asset?.old
  const assetId =
    typeof named === 'number'
      ? named
      : (yield* one(db.select({ asset_id: markers.asset_id }).from(markers).where(eq(markers.id, e.id))))?.asset_id
  if (assetId === undefined) return undefined
  const kind = (yield* one(db.select({ kind: mediaAssets.kind }).from(mediaAssets).where(eq(mediaAssets.id, assetId))))
    ?.kind
  if (!kind) return undefined
  const action = e.action === 'create' ? 'created' : e.action === 'delete' ? 'deleted' : 'updated'
  return { id: e.id, asset: assetId, type: `${kind}asset`, action }
}
