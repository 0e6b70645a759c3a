// The three routes most catalogue resources have: list (paged or streamed, with exact filters),
// one record by id, and create. A module states what differs; the HTTP shape stays the same.
import type { TObject, TSchema } from '@sinclair/typebox'
import { type SQL, eq, sql } from 'drizzle-orm'
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core'
import { Elysia, t } from 'elysia'
import { type Work, andThen, oneOf as oneOfStatement, statement } from '../db/port.ts'
import { type ModuleContext } from './context.ts'
import type { ApiVersion } from './versioning.ts'
import type { Principal } from '../modules/users/principal.ts'
import { requirePerm } from '../modules/users/access.ts'
import { noSuchRecord, notFound, requireOneOf } from './errors.ts'
import { type ListAnswer, type ListColumn, Paging } from './lists.ts'
import { BODY_ERRORS, IdParams, eitherFields, errors, oneOf, listOf, sharedModels } from './models.ts'

type Table = SQLiteTable & { id: SQLiteColumn }

export type ResourceSpec<T extends Table, Q extends TObject, B extends TSchema> = {
  prefix: string
  /** Name of the record model, also used as OpenAPI tag and in messages. */
  name: string
  table: T
  models: Record<string, TSchema>
  /** The record as answered to `user` in API `version` (only productions differ by version). */
  toApi: (row: T['$inferSelect'], user: Principal, version: ApiVersion) => unknown
  /**
   * The records of rows when making them reads the catalogue (a production's grants and devices):
   * port work for a whole page at once, used by the list, GET /{id}/ and the create's answer in
   * toApi's place. toApi can then only say what a record is made of, since it cannot read.
   */
  records?: (rows: T['$inferSelect'][], user: Principal, version: ApiVersion) => Work<unknown[]>
  /**
   * A list's record when it is a row as read: these columns, in this order (booleans and JSON
   * decoded). The row then goes to JSON as it is, without toApi: an object fewer per row.
   * test/http/list-records.test.ts holds every such list to toApi's record. Default: all columns,
   * each row through toApi.
   */
  listRecord?: readonly ListColumn[]
  /**
   * With listRecord: the record a request asks for instead (the media lists' ?pictures=true), as
   * its columns and what completes each row (lists.ts ListSpec.complete); undefined: listRecord.
   */
  listVariant?: (
    query: Q['static'],
    request: Request,
  ) => { columns: readonly ListColumn[]; complete: (row: Record<string, unknown>) => void } | undefined
  /** Extra list query parameters and the conditions they make (also the visibility rule). */
  filters: Q
  /** The list's ORDER BY for a query (lists.ts ListSpec.order); default: by id. */
  order?: (query: Q['static']) => string | undefined
  /** The list route's description; default: in id order. */
  listDescription?: string
  where: (query: Q['static'], user: Principal) => (SQL | undefined)[]
  /** One record's visibility: a record the user cannot read answers 404. */
  canRead?: (row: T['$inferSelect'], user: Principal) => boolean
  /**
   * Reads one record for GET /{id}/ when the module reads more than the row (its details, in the
   * same statement); default: the row by id, through the port. The row is then handed to canRead
   * and detail. A promise of it where the read is awaited (PostgreSQL).
   */
  byId?: (id: number) => T['$inferSelect'] | undefined | Promise<T['$inferSelect'] | undefined>
  /** Extra fields of the single-record answer (api.md: "may carry more fields"); `request` for absolute URLs (ctx.baseOf). */
  detail?: (row: T['$inferSelect'], user: Principal, version: ApiVersion, request: Request) => unknown
  create?: {
    body: B
    status: 200 | 201
    /** Codename needed unless superuser; omitted when the service checks access itself. */
    codename?: string
    /**
     * The new row; a promise of it where the service must await something first (the devices' look
     * at the folder) or runs its work on PostgreSQL (ctx.port.run).
     */
    run: (body: B['static'], user: Principal, request: Request) => T['$inferSelect'] | Promise<T['$inferSelect']>
    /** The create's query parameters, when it takes any. */
    query?: TObject
    /** The answer's model when it carries more than the record (a model of `models`); default: the record's. */
    answer?: string
    description: string
  }
}

export function resourceRoutes<T extends Table, Q extends TObject, B extends TSchema>(
  ctx: ModuleContext,
  spec: ResourceSpec<T, Q, B>,
) {
  const { name, table } = spec
  const createName = `${name}Create`
  /** Single-record answers use the <name>Detail model when the module adds fields. */
  const single = spec.detail ? `${name}Detail` : name
  const one = recordReader(ctx, spec)
  /** One record as answered: of spec.records where the module reads (the value itself on SQLite), else of toApi. */
  const answerOf = (row: T['$inferSelect'], user: Principal, request: Request) =>
    spec.records
      ? andThen(ctx.port.run(spec.records([row], user, ctx.apiVersion(request))), (records: unknown[]) => records[0])
      : (spec.detail ?? spec.toApi)(row, user, ctx.apiVersion(request), request)

  const list = (query: Q['static'], user: Principal, request: Request) =>
    ctx.list(
      {
        table,
        where: () => spec.where(query, user),
        route: spec.prefix,
        user,
        order: spec.order?.(query),
        ...(spec.listRecord
          ? (spec.listVariant?.(query, request) ?? { columns: spec.listRecord })
          : spec.records
            ? { records: (rows: T['$inferSelect'][]) => spec.records!(rows, user, ctx.apiVersion(request)) }
            : { toApi: versioned(spec.toApi, user, ctx.apiVersion(request)) }),
      },
      query,
      request,
    )

  // The list route's handler makes its Response of the list's answer, made outside it (lists.ts
  // ListAnswer says why): on SQLite the answer is there at once and the handler is never awaited;
  // where the list answers a promise (PostgreSQL) the handler awaits it.
  const routes = new Elysia({ prefix: spec.prefix, tags: [name] })
    .use(sharedModels)
    .use(ctx.auth)
    .model({ ...spec.models, [`${name}List`]: listOf(spec.models[name]!) })
    .get(
      '/',
      ctx.port.engine === 'sqlite'
        ? ({ query, user, request }) => {
            const answer = list(query as Q['static'], user, request) as ListAnswer
            return new Response(answer.body, answer)
          }
        : async ({ query, user, request }) => {
            const answer = await list(query as Q['static'], user, request)
            return new Response(answer.body, answer)
          },
      {
        auth: true,
        query: t.Object({ ...Paging, ...spec.filters.properties }),
        response: { 200: `${name}List`, ...errors(400) },
        detail: {
          summary: `List ${name} records`,
          description:
            spec.listDescription ??
            'Ordered by id. Without limit the whole list is streamed. X-Total-Count holds the number of matching records.',
        },
      },
    )
    // Elysia awaits a handler or not by its source text (composed.ts; Bun prints `const x = f();
    // return x` as `return f()`, which counts). On SQLite the row is read at once, and the handler
    // is a plain call that is never awaited; where the port answers promises the handler awaits.
    .get(
      '/:id',
      ctx.port.engine === 'sqlite'
        ? ({ params, user, request }) => answerOf(one(params.id, user) as T['$inferSelect'], user, request)
        : async ({ params, user, request }) => answerOf(await one(params.id, user), user, request),
      {
        auth: true,
        params: IdParams,
        response: { 200: single, ...errors(404) },
        detail: { summary: `One ${name} record` },
      },
    )

  if (!spec.create) return routes
  const create = spec.create
  // Two fields of which one is required (models.ts eitherOf), reported with the body's other failures.
  const either = eitherFields(create.body)
  return routes.onParse(ctx.parseBody).post(
    '/',
    async ({ body, user, set, request }) => {
      if (create.codename) requirePerm(user, create.codename)
      set.status = create.status
      return answerOf(await create.run(body as B['static'], user, request), user, request)
    },
    {
      auth: true,
      body: createName,
      // Documents the accepted types; the app's own parser (http/body.ts) runs first and does the work.
      parse: ['json', 'urlencoded', 'formdata'],
      ...(either ? { transform: requireOneOf(create.body, either) } : {}),
      ...(create.query ? { query: create.query } : {}),
      response: { [create.status]: create.answer ?? single, ...errors(...BODY_ERRORS, 403) },
      detail: {
        summary: `Create a ${name} record`,
        description: `${create.description} JSON or form data (objects and arrays as JSON text).`,
        // The codename, for a client to read and for the document's 403 example (http/openapi.ts).
        ...(create.codename ? { 'x-permission': create.codename } : {}),
      },
    },
  )
}

/**
 * One record as GET /{id}/ reads it: the row, or 404 when there is none or `user` cannot read it.
 * Also what an update asks first (edit.ts EditSpec.find), with the same parts of the spec. The
 * row itself where it is read at once (SQLite), else a promise of it.
 */
export function recordReader<T extends Table>(
  ctx: ModuleContext,
  spec: {
    name: string
    table: T
    byId?: (id: number) => T['$inferSelect'] | undefined | Promise<T['$inferSelect'] | undefined>
    canRead?: (row: T['$inferSelect'], user: Principal) => boolean
  },
) {
  const byId = spec.byId ?? preparedById<T>(ctx, spec.table)
  return (id: number, user: Principal): T['$inferSelect'] | Promise<T['$inferSelect']> =>
    andThen(byId(id), (row) => {
      if (!row || (spec.canRead && !spec.canRead(row, user))) throw notFound(noSuchRecord(spec.name))
      return row
    })
}

/** A list's toApi for one request: its user and API version bound. */
const versioned =
  <R>(toApi: (row: R, user: Principal, version: ApiVersion) => unknown, user: Principal, version: ApiVersion) =>
  (row: R) =>
    toApi(row, user, version)

/**
 * The row by id, through the port as a statement prepared once on SQLite: drizzle builds the SQL
 * and SQLite compiles it on every unprepared call, about ten times the work of running it (it was
 * most of a single-record request).
 */
function preparedById<T extends Table>(ctx: ModuleContext, table: T) {
  const byId = statement<T['$inferSelect']>(() =>
    ctx.db
      .select()
      .from(table as SQLiteTable)
      .where(eq(table.id, sql.placeholder('id'))),
  )
  return (id: number) => ctx.port.run(oneOfStatement(byId, { id }))
}

export const optionalEq = <C extends SQLiteColumn>(column: C, value: unknown) =>
  value === undefined ? undefined : eq(column, value as never)

/**
 * An equality with its value written into the SQL text instead of bound: SQLite uses a partial
 * index (the media asset lists' one per kind, db/schema.ts) only when the statement's own text
 * implies the index's WHERE. For values from a fixed set only (the text is quoted, not checked).
 */
export const literalEq = (column: SQLiteColumn, value: string) =>
  sql`${column} = ${sql.raw(`'${value.replaceAll("'", "''")}'`)}`

/** A yes/no list filter, spelled as booleans in form data are (true/false/1/0); anything else is a 400 at it. */
export const flagFilter = (description: string) => t.Optional(oneOf(['true', 'false', '1', '0'], { description }))

/** The condition of a flagFilter on a boolean column. */
export const flagEq = (column: SQLiteColumn, value: string | undefined) =>
  value === undefined ? undefined : eq(column, value === 'true' || value === '1')

/** The condition of an idFilter (lists.ts): its digits, bound as the number they are. */
export const idEq = (column: SQLiteColumn, value: string | undefined) =>
  value === undefined ? undefined : eq(column, Number(value))
