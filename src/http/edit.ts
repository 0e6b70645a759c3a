// The edit routes most catalogue resources have beside resource.ts's list, read and create:
// PATCH and PUT /{id}/ (an update: 200 with the whole record) and DELETE /{id}/ (204). A module
// states its body and its service's two operations; permissions, visibility and history are the
// service's (it reads the record first: one the user cannot read is a 404 before any 403).
import type { TObject, TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { Elysia, t } from 'elysia'
import { type ModuleContext } from './context.ts'
import { andThen } from '../db/port.ts'
import type { Principal } from '../modules/users/principal.ts'
import { AppError, REQUIRED_DETAIL, entry, fromValidation } from './errors.ts'
import { sameValue } from '../util/values.ts'
import { BODY_ERRORS, IdParams, errors, oneOf, recordId, sharedModels } from './models.ts'

type EditContext = { params: { id: number }; body: Record<string, unknown>; user: Principal; request: Request }

/** How an update takes its body: PATCH the fields given; PUT the whole record (its required fields present). */
export type UpdateMode = 'patch' | 'put'

export type EditSpec<B extends TObject> = {
  prefix: string
  /** Name of the record model (the OpenAPI tag); the body is registered as <name>Update. */
  name: string
  /** The answer's model: the single-record one (<name> or <name>Detail). */
  answer: string
  body: B
  /** The fields a PUT must carry (those create requires that can be edited). */
  whole: readonly string[]
  /** The codenames, for the OpenAPI document (x-permission) and the descriptions. */
  codenames: { change: string; delete?: string }
  /** The record as answered (`request`: for its API version), or a promise of it (ctx.port.run on PostgreSQL). */
  update: (id: number, body: B['static'], user: Principal, mode: UpdateMode, request: Request) => unknown
  /**
   * The record if `user` may read it, else the 404 its GET answers: asked before the body is
   * validated (updateGuard), so that a missing record is a 404 whatever the body holds. A promise
   * of it (a rejected one for the 404) where the read is awaited.
   */
  find: (id: number, user: Principal) => unknown
  /**
   * Asked of the body as parsed, before it is copied, cleaned and validated: a cap that makes a
   * huge body cheap to refuse (throws AppError). The body may be anything JSON or a form gives.
   */
  refuse?: (body: unknown) => void
  /** The update's query parameters, when it takes any. */
  query?: TObject
  /** Absent: the resource has its own DELETE (project assets). A promise where the delete is awaited. */
  remove?: (id: number, user: Principal) => unknown
  /** What the update and delete descriptions add (what is writable, what a delete refuses). */
  notes: { update: string; delete?: string }
}

/** DELETE's query: medialoopster clients send allow_partial=true; it is accepted and changes nothing. */
export const DeleteQuery = t.Object({
  allow_partial: t.Optional(
    oneOf(['true', 'false', '1', '0'], {
      description: 'Accepted for medialoopster clients; changes nothing (a delete is whole or refused)',
    }),
  ),
})

export function editRoutes<B extends TObject>(ctx: ModuleContext, spec: EditSpec<B>) {
  const { name } = spec
  const bodyName = `${name}Update`
  const whole = (body: Record<string, unknown>) => {
    const missing = spec.whole.filter((f) => body[f] === undefined)
    if (missing.length)
      throw AppError.many(
        400,
        missing.map((f) => entry(400, 'required', REQUIRED_DETAIL, { pointer: `/${f}` })),
      )
  }
  const guard = updateGuard(ctx, spec)
  const hook = (mode: UpdateMode) => ({
    auth: true as const,
    params: IdParams,
    body: bodyName,
    parse: ['json', 'urlencoded', 'formdata'] as ('json' | 'urlencoded' | 'formdata')[],
    transform: guard,
    ...(spec.query ? { query: spec.query } : {}),
    response: { 200: spec.answer, ...errors(...BODY_ERRORS, 403, 404, 409) },
    detail: {
      summary:
        mode === 'patch' ? `Update fields of a ${name} record (extension)` : `Replace a ${name} record (extension)`,
      description:
        (mode === 'patch'
          ? 'Changes the fields given and answers 200 with the whole record. '
          : `The whole record: as PATCH, and ${spec.whole.join(', ')} must be given (400 required otherwise); fields not given keep their values. `) +
        `${spec.notes.update} Fields set by the service are read-only: one sent with another value than the record's is a 400 invalid at its pointer ` +
        `(the same value is accepted, so a record read, changed and sent back is a valid body). ${UNKNOWN_FIELDS_NOTE} Needs superuser or ${spec.codenames.change}. ` +
        'JSON or form data (objects and arrays as JSON text). Every update is written to the history (GET /api/history/).',
      'x-permission': spec.codenames.change,
    } as never,
  })
  const routes = new Elysia({ prefix: spec.prefix, tags: [name] })
    .use(sharedModels)
    .use(ctx.auth)
    .model({ [bodyName]: spec.body })
    .onParse(ctx.parseBody)
    // The hooks are built by one function for both methods, which Elysia's inference cannot follow:
    // the context is typed here as the hooks make it (IdParams, the body model, the auth macro).
    .patch(
      '/:id',
      (c) => {
        const { params, body, user, request } = c as unknown as EditContext
        return spec.update(params.id, body as B['static'], user, 'patch', request) as never
      },
      hook('patch') as never,
    )
    .put(
      '/:id',
      (c) => {
        const { params, body, user, request } = c as unknown as EditContext
        whole(body)
        return spec.update(params.id, body as B['static'], user, 'put', request) as never
      },
      hook('put') as never,
    )
  if (!spec.remove) return routes
  const remove = spec.remove
  return routes.delete(
    '/:id',
    // 204 once the delete is done: in the same call on SQLite, when its promise settles otherwise.
    ({ params, user, set }) => {
      return andThen(remove(params.id, user), () => {
        set.status = 204
      })
    },
    {
      auth: true,
      params: IdParams,
      query: DeleteQuery,
      response: { 204: t.Void({ description: 'Deleted' }), ...errors(403, 404, 409) },
      detail: {
        summary: `Delete a ${name} record (extension)`,
        description: `${spec.notes.delete ?? ''} Needs superuser or ${spec.codenames.delete}. Answers 204 with no body. Deleted ids are never given to another record. The delete is written to the history.`,
        'x-permission': spec.codenames.delete,
      } as never,
    },
  )
}

/** What an update's description says of unknown fields (edit routes and project assets alike). */
export const UNKNOWN_FIELDS_NOTE =
  'A field the record does not have is a 400 invalid at its pointer, naming the writable fields, and nothing is changed (Django REST framework would ignore it).'

/**
 * The transform hook of every PATCH and PUT /{id}/ (docs/api.md, Editing and removing records):
 * it runs before Elysia validates the body, which would first drop the fields the schema does not
 * name (app.ts, normalize). In this order:
 *
 * - an id not in canonical digits (models.ts recordId) is left to the params' validation: 404;
 * - the record is read as `find` reads it: missing or unreadable, the 404 comes before any 400;
 * - `refuse`, the cap that makes a huge body cheap to refuse (EditSpec.refuse);
 * - a field the body holds that is no field of the record (no property of the update schema, which
 *   lists every field the record answers, the read-only ones too) is a 400 invalid at its
 *   pointer, naming the writable fields, together with the body's other failures: nothing is
 *   changed. JSON and form data alike (body.ts keeps a form's unknown fields as text).
 *
 * Without a user (no valid credentials) it asks nothing: the `auth` macro answers 401.
 * The hook's own text stays a plain call: Elysia awaits a hook whose text reads `=> f(` (composed.ts).
 */
export function updateGuard(
  ctx: ModuleContext,
  spec: {
    name: string
    body: TObject
    find: (id: number, user: Principal) => unknown
    refuse?: (body: unknown) => void
  },
) {
  const properties = spec.body.properties as Record<string, TSchema>
  const known = new Set(Object.keys(properties))
  const writable = Object.keys(properties).filter(
    (field) => !String(properties[field]!.description ?? '').startsWith('Read-only'),
  )
  const record = spec.name.replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase()
  const detail = (field: string) =>
    `Unknown field "${field}": a ${record} has no such field (nothing was changed). Writable fields: ${writable.join(', ')}.`
  function check(idText: unknown, body: unknown, request: Request) {
    const id = recordId(idText)
    const user = ctx.userOf(request)
    if (id === undefined || !user) return
    return andThen(spec.find(id, user), () => checkBody(body))
  }
  function checkBody(body: unknown) {
    spec.refuse?.(body)
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return
    const unknown = Object.keys(body).filter((field) => !known.has(field))
    if (unknown.length === 0) return
    const failures = [...Value.Errors(spec.body, body)]
    const others = failures.length ? fromValidation('body', failures as never).entries : []
    throw AppError.many(400, [
      ...others,
      ...unknown.map((field) => entry(400, 'invalid', detail(field), { pointer: `/${pointerKey(field)}` })),
    ])
  }
  type Hooked = { params: Record<string, unknown>; body: unknown; request: Request }
  // Elysia awaits a hook or not by its source text (composed.ts): on SQLite `find` answers at once
  // and the hook is a plain call, never awaited; where the port answers promises it is async, so
  // that Elysia waits for the 404 or 400 before it validates the body.
  if (ctx.port.engine === 'sqlite')
    return function updateGuard({ params, body, request }: Hooked) {
      check(params.id, body, request)
    }
  return async function updateGuard({ params, body, request }: Hooked) {
    await check(params.id, body, request)
  }
}

/** A field name as a JSON Pointer segment (RFC 6901: ~ and / escaped). */
const pointerKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

/** The record as an update makes it: `row` with each of `fields` that the body gives. */
export function overlay<R extends object>(row: R, body: Record<string, unknown>, fields: readonly string[]): R {
  const next = { ...row } as Record<string, unknown>
  for (const f of fields) if (body[f] !== undefined) next[f] = body[f]
  return next as R
}

/**
 * Pointers-and-values check of read-only fields: a value other than the record's is a 400 invalid.
 * Form data carries text only: there a read-only field's text passes when it spells the record's
 * value ("7", "true" or "1", "[]", JSON text of an object), so a record sent back as a form passes too.
 */
export function refuseReadOnly(
  body: Record<string, unknown>,
  current: Record<string, unknown>,
  fields: Record<string, string>,
) {
  const failures = []
  for (const [field, why] of Object.entries(fields))
    if (body[field] !== undefined && !sameValue(body[field], current[field]) && !spells(body[field], current[field]))
      failures.push(entry(400, 'invalid', why, { pointer: `/${field}` }))
  if (failures.length) throw AppError.many(400, failures)
}

/** Whether form text spells a value that is not text (a number, a boolean, null, an array or object). */
function spells(text: unknown, value: unknown): boolean {
  if (typeof text !== 'string' || typeof value === 'string' || value === undefined) return false
  if (typeof value === 'boolean' && (text === '1' || text === '0')) return value === (text === '1')
  try {
    return sameValue(JSON.parse(text), value)
  } catch {
    return false
  }
}
