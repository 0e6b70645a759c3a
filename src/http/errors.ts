// The one error type services throw, and the one place that turns any failure into the
// envelope of docs/api.md, Errors (docs/api.md, Errors).
import { STATUS_CODES } from 'node:http'
import type { TSchema } from '@sinclair/typebox'
import { ValueErrorType } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { PathError } from '../storage/paths.ts'
import { parseDate } from '../util/dates.ts'

export type ErrorEntry = {
  status: string
  code: string
  detail: string
  title: string
  source?: { pointer: string } | { parameter: string }
}

type Where = { pointer?: string; parameter?: string }

export class AppError extends Error {
  readonly status: number
  readonly entries: ErrorEntry[]
  /** A body other than the envelope, for the few answers api.md shapes differently. */
  readonly plainBody?: Record<string, unknown>
  /** Headers of the answer; as pairs when a name comes more than once (several Set-Cookie). */
  readonly headers?: Record<string, string> | [string, string][]

  constructor(
    status: number,
    code: string,
    detail: string,
    where: Where = {},
    extra: { headers?: Record<string, string> | [string, string][] } = {},
  ) {
    super(detail)
    this.status = status
    this.entries = [entry(status, code, detail, where)]
    this.headers = extra.headers
  }

  /** Several validation failures at once: one entry per field. */
  static many(status: number, entries: ErrorEntry[]): AppError {
    const error = new AppError(status, entries[0]?.code ?? 'invalid', entries[0]?.detail ?? '')
    error.entries.splice(0, 1, ...entries)
    return error
  }

  /** {detail} on add/unlink, {type, detail} on import 406. */
  static plain(status: number, body: Record<string, unknown>): AppError {
    const error = new AppError(status, 'plain', String(body.detail ?? ''))
    ;(error as { plainBody?: Record<string, unknown> }).plainBody = body
    return error
  }
}

/** 400 answers that are not about the fields of the request: their title is the reason phrase. */
const NOT_VALIDATION = new Set(['parse_error', 'invalid_host'])

export function entry(status: number, code: string, detail: string, where: Where = {}): ErrorEntry {
  const title = status === 400 && !NOT_VALIDATION.has(code) ? 'Validation Error' : reason(status)
  const e: ErrorEntry = { status: String(status), code, detail, title }
  if (where.pointer !== undefined) e.source = { pointer: where.pointer }
  else if (where.parameter !== undefined) e.source = { parameter: where.parameter }
  return e
}

export const reason = (status: number) => STATUS_CODES[status] ?? 'Error'

/** What a missing field is told. */
export const REQUIRED_DETAIL = 'This field is required.'
export const required = (pointer: string) => new AppError(400, 'required', REQUIRED_DETAIL, { pointer })
export const invalid = (pointer: string, detail: string) => new AppError(400, 'invalid', detail, { pointer })
export const invalidParameter = (parameter: string, detail: string) =>
  new AppError(400, 'invalid', detail, { parameter })
/**
 * A value checked by `check` at the field `pointer`: a PathError (or a date that does not parse)
 * becomes 400 invalid there. The one mapping of path and date problems to field errors.
 */
export function field<T>(pointer: string, check: () => T): T {
  try {
    return check()
  } catch (error) {
    if (error instanceof PathError) throw invalid(pointer, error.message)
    throw error
  }
}

/** A date of the forms of docs/api.md, Import at `pointer`, as a timestamp; 400 invalid otherwise. */
export function dateField(pointer: string, text: string): string {
  const parsed = parseDate(text)
  if (!parsed) throw invalid(pointer, 'Not a date: use YYYY[-MM[-DD]] or YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ].')
  return parsed
}

export const unique = (pointer: string, detail: string) => new AppError(400, 'unique', detail, { pointer })
export const notFound = (detail = 'Not found.') => new AppError(404, 'not_found', detail)
/** The 404 detail of a record that does not exist (or that the user cannot read), by model name: "ProjectAsset" says "No project asset with this id.". */
export const noSuchRecord = (model: string) =>
  `No ${model.replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase()} with this id.`
/** A feature medialoopster has and Reelhouse does not (the archive): 501, not a 404 that reads like a wrong URL. */
export const notImplemented = (detail: string) => new AppError(501, 'not_implemented', detail)
export const forbidden = (detail = 'You do not have permission to perform this action.') =>
  new AppError(403, 'permission_denied', detail)

/**
 * The most entries an error list answers; beyond them one entry says how many more there are. A
 * body of 30,000 bad members otherwise answered 6 MB of errors, one per member.
 */
export const MAX_ERROR_ENTRIES = 100

export function errorResponse(error: AppError): Response {
  const body = error.plainBody ?? { errors: listed(error.status, error.entries) }
  return Response.json(body, { status: error.status, headers: error.headers })
}

/** The entries an answer lists: all, or the first MAX_ERROR_ENTRIES and a `too_many_errors` entry counting the rest. */
function listed(status: number, entries: ErrorEntry[]): ErrorEntry[] {
  const more = entries.length - MAX_ERROR_ENTRIES
  if (more <= 0) return entries
  return [
    ...entries.slice(0, MAX_ERROR_ENTRIES),
    entry(
      status,
      'too_many_errors',
      `${more.toLocaleString('en-US')} more ${more === 1 ? 'error is' : 'errors are'} not listed (an answer lists at most ${MAX_ERROR_ENTRIES}).`,
    ),
  ]
}

type TypeBoxError = {
  type: number
  path: string
  message: string
  value?: unknown
  schema?: { enum?: unknown[]; anyOf?: { const?: unknown }[]; pattern?: string; description?: string }
}

/**
 * TypeBox failures become our codes: a missing property is `required`, anything else `invalid`,
 * one entry per field (the first failure of each path). Query strings are named by
 * `source.parameter`, bodies by JSON pointer.
 */
export function fromValidation(on: string, failures: TypeBoxError[]): AppError {
  if (on === 'params') return notFound()
  // A missing property shows either as ObjectRequiredProperty or as a type error on undefined.
  const missing = new Set(
    failures
      .filter((f) => f.path && (f.type === ValueErrorType.ObjectRequiredProperty || f.value === undefined))
      .map((f) => f.path),
  )
  const seen = new Set<string>()
  const entries: ErrorEntry[] = []
  for (const failure of failures) {
    if (seen.has(failure.path)) continue
    seen.add(failure.path)
    const isRequired = missing.has(failure.path)
    const code = isRequired ? 'required' : 'invalid'
    const parameter = on === 'query' ? failure.path.replace(/^\//, '') : undefined
    const detail = isRequired ? REQUIRED_DETAIL : describe(failure, parameter)
    const where = parameter !== undefined ? { parameter } : { pointer: failure.path || '/' }
    entries.push(entry(400, code, detail, where))
  }
  if (entries.length === 0) entries.push(entry(400, 'invalid', 'Invalid input.', {}))
  return AppError.many(400, entries)
}

/**
 * What a query parameter of decimal digits (limit, offset, an id filter: lists.ts) must hold. The
 * one spelling: describe() below and the OpenAPI document (which shows such a parameter as an
 * integer) recognise these parameters by it.
 */
export const DIGITS_PATTERN = '^[0-9]+$'
/** What such a parameter is told when it holds anything else. */
export const wholeNumberDetail = (parameter: string) =>
  `${parameter} must be a whole number (0 or more, in decimal digits).`

function describe(failure: TypeBoxError, parameter?: string): string {
  // "Expected string to match '^[0-9]+$'" says how it is checked, not what to send. No query
  // parameter is typed integer (they are digits, so that this message is the one they get).
  if (parameter && failure.schema?.pattern === DIGITS_PATTERN) return wholeNumberDetail(parameter)
  // A union of types says what it wants by its description (TypeBox's own words: "Expected union value").
  const description = failure.schema?.description
  if (
    failure.type === ValueErrorType.Union &&
    description &&
    !failure.schema?.anyOf?.every((s) => s.const !== undefined)
  )
    return `Expected ${description.charAt(0).toLowerCase()}${description.slice(1).replace(/\.$/, '')}.`
  const choices = failure.schema?.enum ?? failure.schema?.anyOf?.map((s) => s.const).filter((c) => c !== undefined)
  if (choices && choices.length > 0) return `Must be one of: ${choices.join(', ')}.`
  return `${failure.message}.`
}

/** A path of project assets (also version 0's /api/project/), whose DELETE answers 404 does_not_exist (docs/api.md, Project assets). */
export const isProjectPath = (path: string) => /^\/api\/(projectassets|project)(\/|$)/.test(path)

/** Which field a UNIQUE constraint protects, by "table.column" as SQLite names it. */
const UNIQUE_POINTERS: Record<string, string> = {
  'asset_hold_durations.asset_type': '/context',
}

/**
 * A constraint the database refused after a service's own check let the write through (a race
 * with another request or process), in the same envelope on both engines: a duplicate is 400
 * `unique` on the field, a reference to a record that is gone (or from one that still has
 * dependants) is 409 `conflict`. SQLite names the failure in its message ("UNIQUE constraint
 * failed: table.column"); PostgreSQL by SQLSTATE (23505, 23503) with the table and, in its detail,
 * the key's columns ("Key (column)=(value) already exists.").
 */
export function fromDatabase(error: unknown): AppError | undefined {
  const cause = ((error as { cause?: unknown })?.cause ?? error) as {
    code?: string
    errno?: string
    message?: string
    table?: string
    detail?: string
  }
  if (cause?.code === 'SQLITE_CONSTRAINT_UNIQUE') {
    const column = /UNIQUE constraint failed: ([\w.]+)/.exec(cause.message ?? '')?.[1] ?? ''
    return uniqueAt(column)
  }
  if (cause?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return referenceRefused()
  if (cause?.errno === '23505') {
    const column = /^Key \(([\w]+)/.exec(cause.detail ?? '')?.[1] ?? ''
    return uniqueAt(`${cause.table ?? ''}.${column}`)
  }
  if (cause?.errno === '23503') return referenceRefused()
  // Text PostgreSQL cannot keep, which SQLite takes: a NUL character (22021), or a value past
  // what an index entry holds (54000, about 2,700 bytes of a path or name). The request's value,
  // not the server: 400, nothing written (the statement failed whole).
  if (cause?.errno === '22021' || cause?.errno === '54000')
    return new AppError(
      400,
      'invalid',
      'A value holds text the catalogue cannot keep: a NUL character, or a value too long to index.',
    )
  return undefined
}

function uniqueAt(column: string): AppError {
  const pointer = UNIQUE_POINTERS[column] ?? '/' + (column.split('.')[1] ?? '')
  return unique(pointer, 'A record with this value already exists.')
}

const referenceRefused = () =>
  new AppError(409, 'conflict', 'A record this one refers to is gone, or another record still refers to this one.')

/**
 * A route hook (runs before validation) for bodies that need one of two fields, such as
 * production or production_name: when both are missing, the answer lists that field as
 * required together with every other failure of the body, one entry per field, instead of
 * reporting it alone after the others are fixed.
 */
export function requireOneOf(schema: TSchema, fields: [string, string]) {
  return ({ body }: { body: unknown }) => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return
    const given = body as Record<string, unknown>
    if (given[fields[0]] !== undefined || given[fields[1]] !== undefined) return
    const failures = [...Value.Errors(schema, given)]
    const missing = entry(400, 'required', `This field is required (or ${fields[1]}).`, { pointer: `/${fields[0]}` })
    const rest = failures.length ? fromValidation('body', failures as never).entries : []
    throw AppError.many(400, [...rest, missing])
  }
}
