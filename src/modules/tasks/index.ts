// GET /api/tasks/ (newest first, filters, orderings), GET /api/tasks/{id}/, and
// POST /api/tasks/{id}/cancel/. The queue and its SQL are src/tasks/'s (runner.ts, queries.ts); this
// module says who may see and cancel which task.
import { Elysia, t } from 'elysia'
import { TASK_KINDS, TASK_STATES, TASK_TARGETS, tasks } from '../../db/tables.ts'
import { AppError, forbidden, noSuchRecord, notFound } from '../../http/errors.ts'
import { idFilter } from '../../http/lists.ts'
import { IdParams, errors, oneOf } from '../../http/models.ts'
import { resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import { readableConditions, stateAndKindConditions, targetConditions } from '../../tasks/queries.ts'
import type { Runner, TaskRow } from '../../tasks/runner.ts'
import { canRead, canWrite, readableBy } from '../users/access.ts'
import type { Principal } from '../users/service.ts'
import { TASK_ORDERINGS, TASK_ORDERING_NAMES, Task, taskToApi as toApi } from './model.ts'

/** ?projectasset=7, ?device=2...: the tasks whose target names that record (filters combine). */
const targetFilters = Object.fromEntries(
  TASK_TARGETS.map((kind) => [kind, idFilter(`Only tasks working on this ${kind} (by id)`)]),
) as {
  [K in (typeof TASK_TARGETS)[number]]: ReturnType<typeof idFilter>
}

/**
 * Tasks are readable as their target is; a task of no production by superusers, and a scan (of a
 * device) by those who may rescan one too (POST /api/devices/{id}/scan/: browser.change_device).
 */
const SCANNER = 'browser.change_device'
const readable = (row: TaskRow, user: Principal) =>
  row.production === null
    ? user.is_superuser || (row.kind === 'scan' && user.perms.has(SCANNER))
    : canRead(user, row.production)
/** The list's condition of `readable`. */
const readableWhere = (user: Principal) =>
  readableConditions((production) => readableBy(user, production), !user.is_superuser && user.perms.has(SCANNER))
/** Who may cancel: a superuser, or the user who started the task while they may write to its production. */
const mayCancel = (row: TaskRow, user: Principal) =>
  user.is_superuser ||
  (row.production !== null && (row.params as { user?: unknown }).user === user.id && canWrite(user, row.production))

const conflict = (detail: string) => new AppError(409, 'conflict', detail)

export const tasksModule = (ctx: ModuleContext, runner: Runner) =>
  resourceRoutes(ctx, {
    prefix: '/tasks',
    name: 'Task',
    // Read as the routes are made (tables.ts: the engine's table), never kept in a module's constant.
    table: tasks,
    models: { Task },
    toApi,
    filters: t.Object({
      state: t.Optional(oneOf(TASK_STATES)),
      kind: t.Optional(oneOf(TASK_KINDS)),
      ...targetFilters,
      ordering: t.Optional(
        oneOf(TASK_ORDERING_NAMES, {
          description:
            'The order: -id (the default, newest first), id (oldest first), and ±date_add, ±date_start, ±date_end (- for descending; tasks without that date come last)',
        }),
      ),
    }),
    where: (query, user) => [...stateAndKindConditions(query), ...targetConditions(query), readableWhere(user)],
    order: (query) => TASK_ORDERINGS[query.ordering ?? '-id'],
    listDescription:
      'Newest first (ordering=-id); ordering=id for oldest first, or by date_add, date_start, date_end (a leading - for descending). ' +
      'Filters state, kind and the target (projectasset, videoasset, device, ...). Without limit the whole list is streamed. X-Total-Count holds the number of matching records.',
    canRead: readable,
  }).post(
    '/:id/cancel',
    async ({ params, user }) => {
      const row = await ctx.port.run(runner.get(params.id))
      if (!row || !readable(row, user)) throw notFound(noSuchRecord('Task'))
      if (!mayCancel(row, user))
        throw forbidden(
          'Only a superuser, or the user who started the task while they have write access to its production, may cancel it.',
        )
      const answer = await runner.cancelByUser(params.id, { by: user.username })
      if ('refused' in answer) {
        if (answer.refused === 'not_found') throw notFound(noSuchRecord('Task'))
        if (answer.refused === 'not_cancellable')
          throw conflict(
            `Task ${params.id} is a delete, which is not cancelled: its folder is already being removed and cannot be put back.`,
          )
        throw conflict(
          `Task ${params.id} has already ended (${answer.task!.state} at ${answer.task!.date_end ?? 'an unknown time'}); there is nothing to cancel.`,
        )
      }
      return toApi(answer)
    },
    {
      auth: true,
      params: IdParams,
      parse: 'none',
      response: { 200: 'Task', ...errors(403, 404, 409) },
      detail: {
        summary: 'Cancel a queued or running task (extension)',
        description:
          'Stops the task and answers it, ended failed with error "cancelled" (a running task is answered once it has reached its next safe ' +
          'point; one that takes longer than 10 s is answered still running, and ends soon after). A copy removes its hidden staging folder ' +
          'and leaves its project "ERROR: cancelled" (status_asset -1); an import stops without leaving a half-moved file (a move in progress ' +
          'is undone, or finished when an earlier process had got that far) and its ImportLog says import_failed; a scan stops, and the ' +
          'device is scanned again at the next rescan. A superuser, or the user who started the task while they have write access to its ' +
          'production, may cancel it; others 403, or 404 when they cannot read the task. 409 conflict for a task that has already ended, ' +
          'and for a delete (which cannot be undone halfway). No body is read.',
      },
    },
  )
