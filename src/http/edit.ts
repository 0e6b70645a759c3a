// The edit routes most catalogue resources have beside resource.ts's list, read and create:
// PATCH and PUT /{id}/ (an update: 200 with the whole record) and DELETE /{id}/ (204). A module
// states its body and its service's two operations; permissions, visibility and history are the
// service's (it reads the record first: one the user cannot read is a 404 before any 403).
import type { TObject } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import type { ModuleContext } from './context.ts'
import type { Principal } from '../modules/users/service.ts'
import { AppError, REQUIRED_DETAIL, entry } from './errors.ts'
import { BODY_ERRORS, IdParams, errors, oneOf, sharedModels } from './models.ts'

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
  /** The record as answered (`request`: for its API version). */
  update: (id: number, body: B['static'], user: Principal, mode: UpdateMode, request: Request) => unknown
  /**
   * Asked of the body as parsed, before it is copied, cleaned and validated: a cap that makes a
   * huge body cheap to refuse (throws AppError). The body may be anything JSON or a form gives.
   */
  refuse?: (body: unknown) => void
  /** The update's query parameters, when it takes any. */
  query?: TObject
  /** Absent: the resource has its own DELETE (project assets). */
  remove?: (id: number, user: Principal) => void
  /** What the update and delete descriptions add (what is writable, what a delete refuses). */
  notes: { update: string; delete?: string }
}

/** DELETE's query: medialoopster clients send allow_partial=true; it is accepted and changes nothing. */
export const DeleteQuery = t.Object({
  allow_partial: t.Optional(oneOf(['true', 'false', '1', '0'], { description: 'Accepted for medialoopster clients; changes nothing (a delete is whole or refused)' })),
})

export function editRoutes<B extends TObject>(ctx: ModuleContext, spec: EditSpec<B>) {
  const { name } = spec
  const bodyName = `${name}Update`
  const whole = (body: Record<string, unknown>) => {
    const missing = spec.whole.filter((f) => body[f] === undefined)
    if (missing.length) throw AppError.many(400, missing.map((f) => entry(400, 'required', REQUIRED_DETAIL, { pointer: `/${f}` })))
  }
  const hook = (mode: UpdateMode) => ({
    auth: true as const,
    params: IdParams,
    body: bodyName,
    parse: ['json', 'urlencoded', 'formdata'] as ('json' | 'urlencoded' | 'formdata')[],
    ...(spec.refuse ? { transform: (c: { body: unknown }) => spec.refuse!(c.body) } : {}),
    ...(spec.query ? { query: spec.query } : {}),
    response: { 200: spec.answer, ...errors(...BODY_ERRORS, 403, 404, 409) },
    detail: {
      summary: mode === 'patch' ? `Update fields of a ${name} record (extension)` : `Replace a ${name} record (extension)`,
      description:
        (mode === 'patch'
          ? 'Changes the fields given and answers 200 with the whole record. '
          : `The whole record: as PATCH, and ${spec.whole.join(', ')} must be given (400 required otherwise); fields not given keep their values. `) +
        `${spec.notes.update} Fields set by the service are read-only: one sent with another value than the record's is a 400 invalid at its pointer ` +
        `(the same value is accepted, so a record read, changed and sent back is a valid body). Needs superuser or ${spec.codenames.change}. ` +
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
    .patch('/:id', (c) => {
      const { params, body, user, request } = c as unknown as EditContext
      return spec.update(params.id, body as B['static'], user, 'patch', request) as never
    }, hook('patch') as never)
    .put('/:id', (c) => {
      const { params, body, user, request } = c as unknown as EditContext
      whole(body)
      return spec.update(params.id, body as B['static'], user, 'put', request) as never
    }, hook('put') as never)
  if (!spec.remove) return routes
  const remove = spec.remove
  return routes.delete(
    '/:id',
    ({ params, user, set }) => {
      remove(params.id, user)
      set.status = 204
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
export function refuseReadOnly(body: Record<string, unknown>, current: Record<string, unknown>, fields: Record<string, string>) {
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

/** Equal as JSON values (object keys in any order). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}
