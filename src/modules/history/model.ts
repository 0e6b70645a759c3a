// The history's shapes (TypeBox; types derive from them).
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { HISTORY_ACTIONS, HISTORY_VIA, type history } from '../../db/tables.ts'
import { idFilter } from '../../http/lists.ts'
import { oneOf } from '../../http/models.ts'
import { RESOURCES } from './service.ts'

export const HistoryEntry = t.Object({
  id: Type.Integer(),
  date: t.String({ description: 'When the change was made (UTC)' }),
  user: t.String({
    description: 'Who made it: a user name, or "system" for the service itself (via says what moved it)',
  }),
  via: oneOf(HISTORY_VIA, {
    description:
      'api (a request), cli (the command line), import (an asset import), watcher (the device watcher and its scans), task (a copy, delete or import task)',
  }),
  resource: oneOf(RESOURCES, { description: 'The model name of the record' }),
  resource_id: Type.Integer(),
  action: oneOf(HISTORY_ACTIONS),
  changes: t.Record(t.String(), t.Object({ old: t.Unknown(), new: t.Unknown() }), {
    description:
      'Each changed field with its old and new value (create: old null; delete: new null). A device password shows as "********" or null, never itself.',
  }),
  production: t.Nullable(
    Type.Integer({
      description:
        'The production the record belonged to; null for devices, profiles, custom metadata, hold durations, users',
    }),
  ),
})

export const HistoryQuery = t.Object({
  resource: t.Optional(oneOf(RESOURCES, { description: 'Only rows of this kind of record' })),
  id: idFilter('Only rows of the record with this id (with resource)'),
  user: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 150,
      description: 'Only changes made by this user; system: by the service itself',
    }),
  ),
})

export type HistoryRow = typeof history.$inferSelect
export const historyToApi = (row: HistoryRow): typeof HistoryEntry.static => ({
  id: row.id,
  date: row.date,
  user: row.username ?? 'system',
  via: row.via,
  resource: row.resource as (typeof RESOURCES)[number],
  resource_id: row.resource_id,
  action: row.action,
  changes: row.changes,
  production: row.production,
})
