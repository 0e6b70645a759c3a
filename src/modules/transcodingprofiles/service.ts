// Transcoding profiles: the only writer of transcoding_profiles (docs/api.md, Transcoding profiles, docs/api.md, Resources).
import { and, eq, getTableColumns, ne, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Work, all, one, run, tx } from '../../db/port.ts'
import { transcodingProfiles } from '../../db/tables.ts'
import { overlay, refuseReadOnly } from '../../http/edit.ts'
import { AppError, invalid, noSuchRecord, notFound, unique } from '../../http/errors.ts'
import { BUILT_IN, type ProfileFields, profileProblem } from '../../media/profile.ts'
import { actorOf, historyOf } from '../history/service.ts'
import { requirePerm } from '../users/access.ts'
import type { Principal } from '../users/service.ts'

type Row = typeof transcodingProfiles.$inferSelect
const FIELDS = Object.keys(getTableColumns(transcodingProfiles)).filter((k) => k !== 'id') as (keyof Row)[]

/**
 * A profile ffmpeg cannot make is refused when it is created or changed (400 invalid at the field;
 * media/profile.ts says what is made), not discovered at the first import. Unset fields are the
 * table's defaults, which are the built-in default's.
 */
function refuseUnmakeable(profile: Partial<ProfileFields>) {
  const problem = profileProblem({ ...BUILT_IN, ...profile })
  if (problem) throw invalid(problem.pointer, `ffmpeg cannot make this proxy: ${problem.detail}.`)
}

export function createTranscodingProfiles(db: Db) {
  const history = historyOf(db)
  function* get(id: number): Work<Row> {
    const row = yield* one(db.select().from(transcodingProfiles).where(eq(transcodingProfiles.id, id)))
    if (!row) throw notFound(noSuchRecord('TranscodingProfile'))
    return row
  }
  function* nameFree(name: string, except?: number): Work<void> {
    const taken = yield* one(
      db
        .select({ id: transcodingProfiles.id })
        .from(transcodingProfiles)
        .where(
          and(
            eq(transcodingProfiles.name, name),
            except === undefined ? undefined : ne(transcodingProfiles.id, except),
          ),
        )
        .limit(1),
    )
    if (taken) throw unique('/name', 'A transcoding profile with this name already exists.')
  }
  return {
    *create(body: Partial<Row> & { name: string }, user: Principal): Work<Row> {
      yield* nameFree(body.name)
      refuseUnmakeable(body)
      return yield* tx(function* () {
        const row = (yield* one(db.insert(transcodingProfiles).values(body).returning()))!
        yield* history.created(actorOf(user), { resource: 'transcodingprofile', id: row.id }, row, FIELDS)
        return row
      })
    },

    *update(id: number, body: Partial<Row>, user: Principal): Work<Row> {
      const row = yield* get(id)
      requirePerm(user, 'browser.change_transcodingprofile')
      refuseReadOnly(body, row, { id: 'id is set by the service.' })
      const next = overlay(row, body, FIELDS)
      if (next.name !== row.name) yield* nameFree(next.name, id)
      refuseUnmakeable(next)
      return yield* tx(function* () {
        const after = (yield* one(
          db.update(transcodingProfiles).set(next).where(eq(transcodingProfiles.id, id)).returning(),
        ))!
        yield* history.updated(actorOf(user), { resource: 'transcodingprofile', id }, row, after, FIELDS)
        return after
      })
    },

    /** 409 while a device uses the profile (as its transcoding_profile or among its passthrough_profiles). */
    *remove(id: number, user: Principal): Work<void> {
      const row = yield* get(id)
      requirePerm(user, 'browser.delete_transcodingprofile')
      // SQLite-only: json_each reads the passthrough_profiles JSON array.
      const using = yield* all(
        sql<{
          name: string
        }>`SELECT name FROM devices WHERE transcoding_profile = ${id} OR EXISTS (SELECT 1 FROM json_each(passthrough_profiles) WHERE value = ${id}) ORDER BY id`,
      )
      if (using.length)
        throw new AppError(
          409,
          'conflict',
          `${using.length} device${using.length === 1 ? ' uses' : 's use'} this transcoding profile (${using.map((d) => `"${d.name}"`).join(', ')}).`,
        )
      yield* tx(function* () {
        yield* run(db.delete(transcodingProfiles).where(eq(transcodingProfiles.id, id)))
        yield* history.deleted(actorOf(user), { resource: 'transcodingprofile', id }, row, FIELDS)
      })
    },
  }
}

export type TranscodingProfiles = ReturnType<typeof createTranscodingProfiles>
