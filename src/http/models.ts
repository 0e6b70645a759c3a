// Shapes shared by every module's OpenAPI description: the error envelope, the two plain error
// bodies api.md names, and the id path parameter.
import { FormatRegistry, type TArray, type TModule, type TObject, type TSchema, Type } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'

export const ErrorEnvelope = t.Object(
  {
    errors: t.Array(
      t.Object({
        status: t.String({ description: 'HTTP status code as text' }),
        code: t.String({
          description:
            'required, invalid, unique, parse_error, invalid_host, misdirected_request, not_authenticated, authentication_failed, permission_denied, not_found, does_not_exist, method_not_allowed, not_acceptable, conflict, too_large, headers_too_large, unsupported_media_type, server_error, not_implemented; too_many_errors ends a list cut at 100 entries, saying how many more there are',
        }),
        detail: t.String(),
        title: t.String({ description: "HTTP reason phrase; 'Validation Error' for 400 validation errors" }),
        source: t.Optional(
          t.Union([
            t.Object({ pointer: t.String({ description: 'JSON pointer into the body' }) }),
            t.Object({ parameter: t.String() }),
          ]),
        ),
      }),
    ),
  },
  { description: 'The error envelope (docs/api.md, section Errors)' },
)

export const DetailError = t.Object({ detail: t.String() }, { description: 'Plain error body of add/unlink' })

export const sharedModels = new Elysia({ name: 'reelhouse.models' }).model({ Error: ErrorEnvelope, DetailError })

/**
 * An id as a path spells it (docs/api.md, Ids, timestamps, methods): decimal digits without sign,
 * spaces or leading zeros, at most 2^53 - 1; undefined for any other text. `0x1`, `1e0`, `+1`,
 * `01`, ` 1` and `1.0` name no record (JavaScript's Number reads each of them as 1), nor do 0
 * and negative numbers.
 */
export function recordId(text: unknown): number | undefined {
  if (typeof text !== 'string' || !/^[1-9][0-9]{0,15}$/.test(text)) return undefined
  const id = Number(text)
  return Number.isSafeInteger(id) ? id : undefined
}

/** The string format of an id in a path (recordId); openapi.ts shows such a parameter as the integer it is. */
export const ID_FORMAT = 'record-id'
if (!FormatRegistry.Has(ID_FORMAT)) FormatRegistry.Set(ID_FORMAT, (text) => recordId(text) !== undefined)

// The text of the path (or a number, as Elysia's t.Integer takes either), read as recordId reads
// it; any other text fails validation, which answers 404 (errors.ts fromValidation): an id that
// cannot exist answers as one that does not.
export const IdParams = t.Object({
  id: t
    .Transform(
      t.Union([t.String({ format: ID_FORMAT }), Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })], {
        description: 'Record id (positive, in decimal digits)',
      }),
    )
    .Decode((id) => Number(id))
    .Encode((id) => id),
})

/**
 * OpenAPI response entries for the error statuses a route can answer: always 400 (invalid_host),
 * 401, 406, 421 (misdirected_request) and 431 (headers_too_large).
 */
export function errors(...statuses: number[]): Record<number, 'Error'> {
  return Object.fromEntries([400, 401, 406, 421, 431, ...statuses].map((s) => [s, 'Error' as const]))
}

/** The ones every body-taking route can answer. */
export const BODY_ERRORS = [400, 413, 415] as const

/**
 * One of fixed values. Elysia's UnionEnum carries a default (its first value), which Elysia
 * fills in when the field is absent: an optional filter or flag would silently take that value.
 */
export function oneOf<const V extends readonly [string, ...string[]]>(
  values: V,
  options: { description?: string } = {},
) {
  const schema = t.UnionEnum(values, options)
  delete (schema as { default?: unknown }).default
  return schema
}

/**
 * An object body that needs one of two fields, such as its production by id or by name. The pair
 * is declared as JSON Schema says it (anyOf of two `required`), so the OpenAPI document shows it.
 * TypeBox does not check anyOf on an object: the route's requireOneOf hook (errors.ts) does, and
 * reports the missing pair together with the body's other failures.
 */
export function eitherOf<T extends TObject>(schema: T, fields: readonly [string, string]): T {
  return { ...schema, anyOf: fields.map((field) => ({ required: [field] })) }
}

/** The two fields of an eitherOf schema, if it is one. */
export function eitherFields(schema: TSchema): [string, string] | undefined {
  const pair = (schema.anyOf as { required?: string[] }[] | undefined)?.map((s) => s.required?.[0])
  return pair?.length === 2 && pair[0] && pair[1] ? [pair[0], pair[1]] : undefined
}

/** The list model of `schema` (t.Array of it), one object per schema (see the model cache below). */
const arrays = new WeakMap<TSchema, TSchema>()
export function listOf<T extends TSchema>(schema: T) {
  let list = arrays.get(schema)
  if (!list) arrays.set(schema, (list = t.Array(schema)))
  return list as TArray<T>
}

/**
 * Elysia keeps a route group's models as one TypeBox Module and makes a new one, each of its
 * schemas computed again, at every .model() and every .use() of a group that has models. With
 * our ~30 groups, each using the shared models and registering its own, creating the app is
 * quadratic in the models: 80 of a warm createApp's 110 ms of CPU went there, and the test suite
 * makes about 600 apps in its processes. A Module depends only on its definitions, and ours are
 * constants, so the Module made for the same names and the same schema objects is made once per
 * process and shared; from the third app on, creating one costs about 30 ms. serve makes one app
 * and gains nothing here. The key is the names and each schema's identity (a number given to
 * each object), so a group with another schema under a known name gets a Module of its own; the
 * map stops growing once every group's definitions were seen (lists come from listOf for that).
 * A TModule is never changed once made: Elysia replaces it, and Import copies what it takes.
 */
const ids = new WeakMap<object, number>()
let lastId = 0
const idOf = (schema: object) => {
  let id = ids.get(schema)
  if (id === undefined) ids.set(schema, (id = ++lastId))
  return id
}
type Defs = Record<string, TSchema>
const modules = new Map<string, TModule<Defs>>()
// Typed loosely on purpose: TypeBox's own signature makes the checker recurse too deep here.
const typebox = t as unknown as { Module(defs: Defs): TModule<Defs> }
const makeModule = typebox.Module
typebox.Module = (defs) => {
  const key = Object.getOwnPropertyNames(defs)
    .map((name) => `${name}:${idOf(defs[name]!)}`)
    .join(' ')
  let made = modules.get(key)
  if (!made) modules.set(key, (made = makeModule(defs)))
  return made
}
