// GET /api/history/: who changed what, newest first, paged like every list.
import { and, eq, sql } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import { type Work, one, oneOf, statement } from '../../db/port.ts'
import { history } from '../../db/tables.ts'
import { type ModuleContext } from '../../http/context.ts'
import { andThen } from '../../db/port.ts'
import { type ListAnswer, Paging } from '../../http/lists.ts'
import { noSuchRecord, notFound } from '../../http/errors.ts'
import { IdParams, errors, listOf, sharedModels } from '../../http/models.ts'
import { idEq, optionalEq } from '../../http/resource.ts'
import type { Principal } from '../users/service.ts'
import { HistoryEntry, HistoryQuery, historyToApi } from './model.ts'
import { byUserName, historyReadableBy } from './service.ts'

type Query = typeof HistoryQuery.static & { limit?: string; offset?: string }

export function historyModule(ctx: ModuleContext) {
  const byId = statement(() =>
    ctx.db
      .select()
      .from(history)
      .where(eq(history.id, sql.placeholder('id'))),
  )
  /** One row's visibility: the list's rule (historyReadableBy), asked of that row. */
  function* readable(row: { id: number }, user: Principal): Work<boolean> {
    const rule = historyReadableBy(user)
    if (!rule) return true
    const seen = yield* one(
      ctx.db
        .select({ id: history.id })
        .from(history)
        .where(and(eq(history.id, row.id), rule)),
    )
    return seen !== undefined
  }
  /** The row with this id if `user` may read it, else 404 (as the record's own is). */
  function* entry(id: number, user: Principal): Work<typeof history.$inferSelect> {
    const row = yield* oneOf(byId, { id })
    if (!row || !(yield* readable(row, user))) throw notFound(noSuchRecord('HistoryEntry'))
    return row
  }
  const list = (query: Query, user: Principal, request: Request) =>
    ctx.list(
      {
        table: history,
        where: () => [
          optionalEq(history.resource, query.resource),
          idEq(history.resource_id, query.id),
          query.user === undefined ? undefined : byUserName(query.user),
          historyReadableBy(user),
        ],
        route: '/history',
        user,
        toApi: historyToApi,
        descending: true,
      },
      query,
      request,
    )
  return new Elysia({ prefix: '/history', tags: ['History'] })
    .use(sharedModels)
    .use(ctx.auth)
    .model({ HistoryEntry, HistoryList: listOf(HistoryEntry) })
    .get(
      '/',
      // The Response made here, of the list's answer made outside: see src/http/lists.ts ListAnswer.
      // Awaited only where the list answers a promise (PostgreSQL).
      ctx.port.engine === 'sqlite'
        ? ({ query, user, request }) => {
            const answer = list(query, user, request) as ListAnswer
            return new Response(answer.body, answer)
          }
        : async ({ query, user, request }) => {
            const answer = await list(query, user, request)
            return new Response(answer.body, answer)
          },
      {
        auth: true,
        query: t.Object({ ...Paging, ...HistoryQuery.properties }),
        response: { 200: 'HistoryList', ...errors(400) },
        detail: {
          summary: 'The change history, newest first (extension)',
          description:
            'Every create, update, delete and link change of a catalogue record, through the API, the command line, an import or the ' +
            "watcher, with who made it and each changed field's old and new value. Newest first; limit/offset, X-Total-Count and Link " +
            'as every list. Rows of records the user cannot read are left out. Example: /api/history/?resource=videoasset&id=7.',
        },
      },
    )
    .get('/:id', ({ params, user }) => andThen(ctx.port.run(entry(params.id, user)), historyToApi), {
      auth: true,
      params: IdParams,
      response: { 200: 'HistoryEntry', ...errors(404) },
      detail: {
        summary: 'One history row (extension)',
        description: 'A row of a record the user cannot read answers 404, as the record does.',
      },
    })
}
