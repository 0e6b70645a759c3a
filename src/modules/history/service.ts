// The change history: the only writer of the `history` table. Every other service yields
// record() or updated() inside the transaction of its own write, so a change and its row commit
// together or not at all. Rows are never changed or removed.
import { type SQL, and, eq, inArray, isNull, or, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Work, runOf, statement } from '../../db/port.ts'
import { type HISTORY_ACTIONS, type HISTORY_VIA, history, mediaAssetShares } from '../../db/tables.ts'
import { sameValue } from '../../util/values.ts'
import { isoTimestamp } from '../../util/time.ts'
import type { Principal } from '../users/principal.ts'

export type Via = (typeof HISTORY_VIA)[number]
export type Action = (typeof HISTORY_ACTIONS)[number]
export type Changes = Record<string, { old: unknown; new: unknown }>

/** Who makes a change: a user (through a door: api, cli, import), or the service itself (user null) moved by `via`. */
export type Actor = { user: { id: number; username: string } | null; via: Via }

/** The service itself (SYSTEM, id 0) is no user: its changes are the system's, with the door as the reason. */
export const actorOf = (user: Pick<Principal, 'id' | 'username'>, via: Via = 'api'): Actor =>
  user.id === 0 ? { user: null, via } : { user: { id: user.id, username: user.username }, via }
export const system = (via: Via): Actor => ({ user: null, via })

/** Resources every user can read (docs/api.md, Permissions): their history is shown to everyone. */
export const PUBLIC_RESOURCES = [
  'device',
  'transcodingprofile',
  'custommetadata',
  'custommetadataset',
  'assetholdduration',
] as const
export const MEDIA_RESOURCES = ['audioasset', 'imageasset', 'videoasset'] as const
/** Every resource history names (the filter's values). */
export const RESOURCES = [
  ...PUBLIC_RESOURCES,
  ...MEDIA_RESOURCES,
  'projectasset',
  'production',
  'user',
  'group',
  'marker',
  'shot',
  'sequence',
] as const
export type Resource = (typeof RESOURCES)[number]

/**
 * What a change was, where its fields alone do not tell (for its live event, modules/events): a
 * scan's relink of an asset found by its content, a copy's project completed.
 */
export type Hint = 'relinked' | 'copied'

/** One row as record() is given it. */
export type Entry = {
  resource: Resource
  id: number
  action: Action
  changes?: Changes
  production?: number | null
  hint?: Hint
}

/**
 * Told every row recorded, inside the transaction that writes it (so that what it reads is read
 * with the change, and what it sends can wait for the commit). It must not throw. It is work,
 * yielded by record() right after the row's insert: its reads run on the writer's transaction on
 * either engine (on PostgreSQL a read outside it would see the catalogue without the change), and
 * what it sends it queues with afterCommit.
 */
export type Listener = (e: Entry) => Work<void>

/** The one spelling of a device password in history (never the password: whether one is set). */
export const hiddenPassword = (password: string | null) => (password === null ? null : '********')

/** The fields of `fields` whose values differ between `before` and `after`, as {old, new}. */
export function diff(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  fields: readonly string[],
): Changes {
  const changes: Changes = {}
  for (const f of fields)
    if (!sameValue(before[f], after[f])) changes[f] = { old: before[f] ?? null, new: after[f] ?? null }
  return changes
}

const kept = new WeakMap<Db, History>()
/** The history of this catalogue (one per connection: its statement is prepared once). */
export function historyOf(db: Db): History {
  let h = kept.get(db)
  if (!h) kept.set(db, (h = createHistory(db)))
  return h
}

/** The values of `fields` of a record as {old: null, new} (a create) or {old, new: null} (a delete). */
function snapshot(values: Record<string, unknown>, fields: readonly string[], as: 'create' | 'delete'): Changes {
  return Object.fromEntries(
    fields.map((f) => [
      f,
      as === 'create' ? { old: null, new: values[f] ?? null } : { old: values[f] ?? null, new: null },
    ]),
  )
}

function createHistory(db: Db) {
  // Prepared once per catalogue on SQLite. The columns and values are those of every history row:
  // `changes` goes through the column's JSON encoding, as the object it is.
  const insert = statement(() =>
    db.insert(history).values({
      date: sql.placeholder('date'),
      user_id: sql.placeholder('user_id'),
      username: sql.placeholder('username'),
      via: sql.placeholder('via'),
      resource: sql.placeholder('resource'),
      resource_id: sql.placeholder('resource_id'),
      action: sql.placeholder('action'),
      changes: sql.placeholder('changes'),
      production: sql.placeholder('production'),
    }),
  )
  const listeners: Listener[] = []
  function* record(by: Actor, e: Entry): Work<void> {
    yield* runOf(insert, {
      date: isoTimestamp(),
      user_id: by.user?.id ?? null,
      username: by.user?.username ?? null,
      via: by.via,
      resource: e.resource,
      resource_id: e.id,
      action: e.action,
      changes: e.changes ?? {},
      production: e.production ?? null,
    })
    for (const listener of listeners) yield* listener(e)
  }
  return {
    /** One row; yield it inside the transaction of the change it describes. */
    record,

    /** Adds a listener of every row recorded from now on (the live events); returns its removal. */
    listen(listener: Listener): () => void {
      listeners.push(listener)
      return () => {
        const at = listeners.indexOf(listener)
        if (at >= 0) listeners.splice(at, 1)
      }
    },

    /**
     * An update: the row of the fields of `fields` that differ, and `extra` (a change the values
     * shown do not tell, such as one password for another); none: no row. Returns the changes.
     * Yield it inside the transaction of the update.
     */
    *updated(
      by: Actor,
      e: { resource: Resource; id: number; production?: number | null; hint?: Hint },
      before: Record<string, unknown>,
      after: Record<string, unknown>,
      fields: readonly string[],
      extra: Changes = {},
    ): Work<Changes> {
      const changes = { ...diff(before, after, fields), ...extra }
      if (Object.keys(changes).length) yield* record(by, { ...e, action: 'update', changes })
      return changes
    },

    /** A create: the row with the record's `fields` as {old: null, new}. Inside the create's transaction. */
    *created(
      by: Actor,
      e: { resource: Resource; id: number; production?: number | null },
      values: Record<string, unknown>,
      fields: readonly string[],
    ): Work<void> {
      yield* record(by, { ...e, action: 'create', changes: snapshot(values, fields, 'create') })
    },

    /** A delete: the row with the record's `fields` as {old, new: null}. Inside the delete's transaction. */
    *deleted(
      by: Actor,
      e: { resource: Resource; id: number; production?: number | null },
      values: Record<string, unknown>,
      fields: readonly string[],
    ): Work<void> {
      yield* record(by, { ...e, action: 'delete', changes: snapshot(values, fields, 'delete') })
    },

    /** The values of `fields` of a record as {old: null, new} (a create) or {old, new: null} (a delete). */
    snapshot,
  }
}

export type History = ReturnType<typeof createHistory>

/**
 * The rows `user` may see (docs/api.md, Permissions for what is readable): history of devices, profiles and
 * custom metadata to everyone; of a production, its assets and projects where the user can read
 * that production (the one the record belonged to when the row was written), media assets also
 * where they are shared with a readable production now; of users, their own only. Undefined for
 * superusers.
 */
export function historyReadableBy(user: Principal): SQL | undefined {
  if (user.is_superuser) return undefined
  const ids = [...user.readable]
  return or(
    inArray(history.resource, [...PUBLIC_RESOURCES]),
    and(eq(history.resource, 'user'), eq(history.resource_id, user.id)),
    ...(ids.length
      ? [
          inArray(history.production, ids),
          and(
            inArray(history.resource, [...MEDIA_RESOURCES]),
            sql`exists (SELECT 1 FROM ${mediaAssetShares} WHERE ${mediaAssetShares.asset_id} = ${history.resource_id} AND ${inArray(mediaAssetShares.production_id, ids)})`,
          ),
        ]
      : []),
  )
}

/** The user filter: a user name; `system` also names the service's own changes. */
export const byUserName = (name: string) =>
  name === 'system' ? or(isNull(history.username), eq(history.username, name))! : eq(history.username, name)

/**
 * `modified_by` of a single record: who wrote its newest history row ("system" for the service),
 * null for a record last changed before history was kept. A sub-select for the record's own
 * statement (the index history_resource finds it).
 */
export const modifiedBy = (resource: SQL, id: SQL) =>
  sql<
    string | null
  >`(SELECT coalesce(h.username, 'system') FROM history h WHERE h.resource = ${resource} AND h.resource_id = ${id} ORDER BY h.id DESC LIMIT 1)`
