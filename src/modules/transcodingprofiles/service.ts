// Transcoding profiles: the only writer of transcoding_profiles (docs/api.md, Transcoding profiles, docs/api.md, Resources).
import { and, eq, getTableColumns, ne } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { transcodingProfiles } from '../../db/schema.ts'
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
  function get(id: number): Row {
    const row = db.select().from(transcodingProfiles).where(eq(transcodingProfiles.id, id)).get()
    if (!row) throw notFound(noSuchRecord('TranscodingProfile'))
    return row
  }
  function nameFree(name: string, except?: number) {
    if (
      db
        .select({ id: transcodingProfiles.id })
        .from(transcodingProfiles)
        .where(
          and(
            eq(transcodingProfiles.name, name),
            except === undefined ? undefined : ne(transcodingProfiles.id, except),
          ),
        )
        .get()
    )
      throw unique('/name', 'A transcoding profile with this name already exists.')
  }
  return {
    create(body: Partial<Row> & { name: string }, user: Principal): Row {
      nameFree(body.name)
      refuseUnmakeable(body)
      return db.transaction(() => {
        const row = db.insert(transcodingProfiles).values(body).returning().get()
        history.created(actorOf(user), { resource: 'transcodingprofile', id: row.id }, row, FIELDS)
        return row
      })
    },

    update(id: number, body: Partial<Row>, user: Principal): Row {
      const row = get(id)
      requirePerm(user, 'browser.change_transcodingprofile')
      refuseReadOnly(body, row, { id: 'id is set by the service.' })
      const next = overlay(row, body, FIELDS)
      if (next.name !== row.name) nameFree(next.name, id)
      refuseUnmakeable(next)
      return db.transaction(() => {
        const after = db.update(transcodingProfiles).set(next).where(eq(transcodingProfiles.id, id)).returning().get()!
        history.updated(actorOf(user), { resource: 'transcodingprofile', id }, row, after, FIELDS)
        return after
      })
    },

    /** 409 while a device uses the profile (as its transcoding_profile or among its passthrough_profiles). */
    remove(id: number, user: Principal) {
      const row = get(id)
      requirePerm(user, 'browser.delete_transcodingprofile')
      const using = db.$client
        .query<{ name: string }, [number, number]>(
          'SELECT name FROM devices WHERE transcoding_profile = ? OR EXISTS (SELECT 1 FROM json_each(passthrough_profiles) WHERE value = ?) ORDER BY id',
        )
        .all(id, id)
      if (using.length)
        throw new AppError(
          409,
          'conflict',
          `${using.length} device${using.length === 1 ? ' uses' : 's use'} this transcoding profile (${using.map((d) => `"${d.name}"`).join(', ')}).`,
        )
      db.transaction(() => {
        db.delete(transcodingProfiles).where(eq(transcodingProfiles.id, id)).run()
        history.deleted(actorOf(user), { resource: 'transcodingprofile', id }, row, FIELDS)
      })
    },
  }
}

export type TranscodingProfiles = ReturnType<typeof createTranscodingProfiles>
