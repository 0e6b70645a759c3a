// Asset hold durations: the rules, and date_del for new assets (docs/api.md, Resources).
import { and, eq, ne, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Work, all, one, oneOf, run, statement, tx } from '../../db/port.ts'
import { ASSET_TYPES, CONTEXT_TYPES, assetHoldDurations, devices, productions } from '../../db/tables.ts'
import { overlay, refuseReadOnly } from '../../http/edit.ts'
import { invalid, noSuchRecord, notFound, unique } from '../../http/errors.ts'
import { addDays } from '../../util/time.ts'
import { type Actor, actorOf, historyOf } from '../history/service.ts'
import { requirePerm } from '../users/access.ts'
import type { Principal } from '../users/service.ts'
import type { AssetHoldDurationCreate, AssetHoldDurationUpdate } from './model.ts'

const FIELDS = ['asset_type', 'context_type', 'context', 'duration'] as const

type AssetType = (typeof ASSET_TYPES)[number]

export function createHoldDurations(db: Db) {
  const history = historyOf(db)
  // Asked twice for every asset made (dateDel): prepared once.
  const rule = statement(() =>
    db
      .select({ duration: assetHoldDurations.duration })
      .from(assetHoldDurations)
      .where(
        and(
          eq(assetHoldDurations.asset_type, sql.placeholder('assetType')),
          eq(assetHoldDurations.context_type, sql.placeholder('contextType')),
          eq(assetHoldDurations.context, sql.placeholder('context')),
        ),
      ),
  )
  return {
    /** date_del for a new asset: date_add + the device rule's days, else the production rule's, else none. */
    *dateDel(assetType: AssetType, deviceName: string, productionName: string, dateAdd: string): Work<string | null> {
      const days =
        (yield* oneOf(rule, { assetType, contextType: 'device', context: deviceName }))?.duration ??
        (yield* oneOf(rule, { assetType, contextType: 'production', context: productionName }))?.duration
      return days === undefined ? null : addDays(dateAdd, days)
    },

    *create(
      body: typeof AssetHoldDurationCreate.static,
      user: Principal,
    ): Work<typeof assetHoldDurations.$inferSelect> {
      yield* check(body)
      return yield* tx(function* () {
        const row = (yield* one(db.insert(assetHoldDurations).values(body).returning()))!
        yield* history.created(actorOf(user), { resource: 'assetholdduration', id: row.id }, row, FIELDS)
        return row
      })
    },

    /** PATCH/PUT: any of the four fields; the rule stays unique and its context must exist. */
    *update(
      id: number,
      body: typeof AssetHoldDurationUpdate.static,
      user: Principal,
    ): Work<typeof assetHoldDurations.$inferSelect> {
      const row = yield* get(id)
      requirePerm(user, 'browser.change_assetholdduration')
      refuseReadOnly(body, row, { id: 'id is set by the service.' })
      const next = overlay(row, body, FIELDS)
      yield* check(next, id)
      return yield* tx(function* () {
        const after = (yield* one(
          db.update(assetHoldDurations).set(next).where(eq(assetHoldDurations.id, id)).returning(),
        ))!
        yield* history.updated(actorOf(user), { resource: 'assetholdduration', id }, row, after, FIELDS)
        return after
      })
    },

    /** Nothing refers to a rule (the dates it set stay): always removable. */
    *remove(id: number, user: Principal): Work<void> {
      const row = yield* get(id)
      requirePerm(user, 'browser.delete_assetholdduration')
      yield* tx(function* () {
        yield* run(db.delete(assetHoldDurations).where(eq(assetHoldDurations.id, id)))
        yield* history.deleted(actorOf(user), { resource: 'assetholdduration', id }, row, FIELDS)
      })
    },

    /** The rules naming a device or production that was renamed follow it (inside the rename's transaction). */
    *renameContext(contextType: (typeof CONTEXT_TYPES)[number], from: string, to: string, by: Actor): Work<void> {
      const rows = yield* all(
        db
          .select()
          .from(assetHoldDurations)
          .where(and(eq(assetHoldDurations.context_type, contextType), eq(assetHoldDurations.context, from))),
      )
      for (const row of rows) {
        yield* run(db.update(assetHoldDurations).set({ context: to }).where(eq(assetHoldDurations.id, row.id)))
        yield* history.updated(by, { resource: 'assetholdduration', id: row.id }, row, { ...row, context: to }, FIELDS)
      }
    },

    /** How many rules name this device or production (a delete of it is refused while any do). */
    *naming(contextType: (typeof CONTEXT_TYPES)[number], name: string): Work<number> {
      const rules = yield* all(
        db
          .select({ id: assetHoldDurations.id })
          .from(assetHoldDurations)
          .where(and(eq(assetHoldDurations.context_type, contextType), eq(assetHoldDurations.context, name))),
      )
      return rules.length
    },
  }

  function* get(id: number): Work<typeof assetHoldDurations.$inferSelect> {
    const row = yield* one(db.select().from(assetHoldDurations).where(eq(assetHoldDurations.id, id)))
    if (!row) throw notFound(noSuchRecord('AssetHoldDuration'))
    return row
  }

  /** The context exists, and no other rule has the same asset type and context. */
  function* check(
    rule: Pick<typeof assetHoldDurations.$inferSelect, 'asset_type' | 'context_type' | 'context'>,
    except?: number,
  ): Work<void> {
    const table = rule.context_type === 'device' ? devices : productions
    if (!(yield* one(db.select({ id: table.id }).from(table).where(eq(table.name, rule.context)).limit(1))))
      throw invalid('/context', `No ${rule.context_type} named "${rule.context}".`)
    const taken = yield* one(
      db
        .select({ id: assetHoldDurations.id })
        .from(assetHoldDurations)
        .where(
          and(
            eq(assetHoldDurations.asset_type, rule.asset_type),
            eq(assetHoldDurations.context_type, rule.context_type),
            eq(assetHoldDurations.context, rule.context),
            except === undefined ? undefined : ne(assetHoldDurations.id, except),
          ),
        )
        .limit(1),
    )
    if (taken) throw unique('/context', 'A hold duration for this asset type and context already exists.')
  }
}

export type HoldDurations = ReturnType<typeof createHoldDurations>
