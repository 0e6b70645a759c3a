import { Type } from '@sinclair/typebox'
import { sql } from 'drizzle-orm'
import { t } from 'elysia'
import { TASK_KINDS, TASK_STATES, TASK_TARGETS, tasks } from '../../db/schema.ts'
import { idFilter } from '../../http/lists.ts'
import { oneOf } from '../../http/models.ts'
import { optionalEq, resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import { canRead, readableBy } from '../users/access.ts'

export const Task = t.Object({
  id: Type.Integer(),
  kind: oneOf(TASK_KINDS),
  state: oneOf(TASK_STATES),
  target: t.Record(t.String(), Type.Integer(), { description: 'e.g. {"projectasset": 7}' }),
  bytes_done: Type.Integer(),
  bytes_total: Type.Integer(),
  files_done: Type.Integer(),
  files_total: Type.Integer({ description: 'Regular files' }),
  error: t.String(),
  date_add: t.String(),
  date_start: t.Nullable(t.String()),
  date_end: t.Nullable(t.String()),
  result: t.Record(t.String(), t.Unknown(), {
    description: 'What the work found; a scan: counts (seen, offline, online, moved, relinked, saved_anew, imported, waiting, fingerprinted), and lists when there are any (ambiguous, held)',
  }),
})

/** ?projectasset=7, ?device=2...: the tasks whose target names that record (filters combine). */
const targetFilters = Object.fromEntries(TASK_TARGETS.map((kind) => [kind, idFilter(`Only tasks working on this ${kind} (by id)`)])) as {
  [K in (typeof TASK_TARGETS)[number]]: ReturnType<typeof idFilter>
}
const byTarget = (query: Partial<Record<(typeof TASK_TARGETS)[number], string>>) =>
  TASK_TARGETS.map((kind) => {
    const id = query[kind]
    // A number, not the digits as text: json_extract answers an integer, which never equals text.
    return id === undefined ? undefined : sql`json_extract(${tasks.target}, ${`$.${kind}`}) = ${Number(id)}`
  })

export const tasksModule = (ctx: ModuleContext) =>
  resourceRoutes(ctx, {
    prefix: '/tasks',
    name: 'Task',
    table: tasks,
    models: { Task },
    toApi: ({ params: _p, attempts: _a, production: _r, key: _k, ...row }) => row,
    filters: t.Object({ state: t.Optional(oneOf(TASK_STATES)), kind: t.Optional(oneOf(TASK_KINDS)), ...targetFilters }),
    where: (query, user) => [optionalEq(tasks.state, query.state), optionalEq(tasks.kind, query.kind), ...byTarget(query), readableBy(user, tasks.production)],
    canRead: (row, user) => (row.production === null ? user.is_superuser : canRead(user, row.production)),
  })
