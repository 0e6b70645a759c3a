// Request bodies: JSON, urlencoded and multipart forms, nothing else; at most 1 MiB; malformed
// JSON, or JSON nested deeper than MAX_JSON_DEPTH, is a 400 parse_error; JSON text sent as a form
// or with no Content-Type (curl -d) is a 415 that says which header to send. In form data a field
// holding an object or array is JSON text, and every value arrives as text, so form bodies are
// converted to the route's schema (booleans from true/false/1/0, numbers from digits) before
// Elysia validates them.
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { AppError } from './errors.ts'

export const MAX_BODY_BYTES = 1024 * 1024

/**
 * The deepest nesting of arrays and objects a JSON text may have (docs/api.md, Request bodies). No body of
 * this API nests more than a few levels; deeper text is refused before JSON.parse, as parsing,
 * cleaning and validating it are all recursive: 100,000 levels blocked the server for seconds and
 * overflowed the stack.
 */
export const MAX_JSON_DEPTH = 64

/**
 * Bodies from this size on are parsed one at a time, each in a turn of the event loop of its own
 * (JSON.parse of 0.8 MB takes 15 to 20 ms and cannot be cut): four at once were parsed back to
 * back while every other request waited (bench/stall.ts); now a request waits for one at most.
 */
const BIG_BODY = 256 * 1024
let parsing: Promise<unknown> = Promise.resolve()
function oneAtATime<T>(parse: () => T): Promise<T> {
  const turn = parsing.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(parse)
  parsing = turn.catch(() => {})
  return turn
}

const tooLarge = () => new AppError(413, 'too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`)

export type SchemaLookup = (method: string, route: string) => TSchema | undefined

export function createBodyParser(schemaFor: SchemaLookup) {
  return async function parseBody({ request, route }: { request: Request; route: string }) {
    const length = request.headers.get('content-length')
    const declared = Number(length ?? 0)
    if (declared > MAX_BODY_BYTES) throw tooLarge()
    // A body of a declared length (within the limit) is read whole, in one native step; the
    // HTTP framing gives no more than that length. Only a chunked body is read piece by piece,
    // counting, since nothing says in advance how large it is.
    const bytes =
      length !== null && declared >= 0 ? new Uint8Array(await request.arrayBuffer()) : await readLimited(request)
    if (bytes.byteLength > MAX_BODY_BYTES) throw tooLarge()
    if (bytes.byteLength === 0) return {}

    const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
    if (type === 'application/json' || type.endsWith('+json')) {
      const value = bytes.byteLength >= BIG_BODY ? await oneAtATime(() => parseJson(bytes)) : parseJson(bytes)
      // Routes without a body schema (add/unlink) check their body themselves: their errors are {detail}.
      const schema = schemaFor(request.method, route)
      return schema && !takesList(schema) ? jsonObject(value) : value
    }
    // curl -d sends its text as a form unless told otherwise: a "form" that is JSON text was meant
    // as JSON, and read as a form it would only give missing fields. No form encoder writes a raw { or [.
    if (
      (type === 'application/x-www-form-urlencoded' || type === '') &&
      looksLikeJson(new TextDecoder().decode(bytes.subarray(0, 64)))
    )
      throw new AppError(
        415,
        'unsupported_media_type',
        type
          ? `The body is JSON but was sent as ${type} (what curl -d sends unless told): send Content-Type: application/json.`
          : 'The body is JSON but was sent without a Content-Type: send Content-Type: application/json.',
      )
    if (type === 'application/x-www-form-urlencoded' || type === 'multipart/form-data') {
      const form = await new Response(bytes, { headers: { 'content-type': request.headers.get('content-type')! } })
        .formData()
        .catch(() => {
          throw new AppError(400, 'parse_error', 'The form data could not be parsed.')
        })
      return fromForm(form, schemaFor(request.method, route))
    }
    throw new AppError(
      415,
      'unsupported_media_type',
      type
        ? `Unsupported media type "${type}" in request; use application/json or form data.`
        : 'A request body needs a Content-Type header: application/json or form data.',
    )
  }
}

async function readLimited(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of request.body) {
    size += chunk.byteLength
    if (size > MAX_BODY_BYTES) throw tooLarge()
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

function parseJson(bytes: Uint8Array): unknown {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new AppError(400, 'parse_error', 'The request body is not valid JSON: it is not UTF-8 text.')
  }
  refuseDeepJson(text)
  try {
    return JSON.parse(text)
  } catch (error) {
    // The engine's message starts with its own "JSON Parse error:"; one sentence, said once.
    const why = (error as Error).message.replace(/^\s*JSON\s*Parse\s*error:?\s*/i, '').replace(/\.$/, '')
    throw new AppError(
      400,
      'parse_error',
      `The request body is not valid JSON: ${why.charAt(0).toLowerCase()}${why.slice(1)}.`,
    )
  }
}

function refuseDeepJson(text: string) {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH))
    throw new AppError(400, 'parse_error', `JSON nested deeper than ${MAX_JSON_DEPTH} levels.`)
}

// " \ [ ] { }
const QUOTE = 0x22,
  BACKSLASH = 0x5c,
  OPEN_ARRAY = 0x5b,
  CLOSE_ARRAY = 0x5d,
  OPEN_OBJECT = 0x7b,
  CLOSE_OBJECT = 0x7d

/**
 * Whether a JSON text opens more than `max` arrays or objects inside one another: one pass over
 * the characters, no recursion, brackets inside strings (escapes included) not counted. Text that
 * is not JSON may pass; JSON.parse refuses it next.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--
  }
  return false
}

/** Every body of this API is an object (but those whose schema takes a list); an array, string, number or null at the top is refused
 * here, before Elysia would fold it into an object (an array's items becoming fields "0", "1"). */
/** Whether a route's body schema takes a list at the top (the archive activities take one asset or a list of them). */
const takesList = (schema: TSchema): boolean =>
  schema.type === 'array' || (Array.isArray(schema.anyOf) && schema.anyOf.some((s: TSchema) => s.type === 'array'))

function jsonObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new AppError(400, 'invalid', 'The request body must be a JSON object.', { pointer: '' })
  return value as Record<string, unknown>
}

function fromForm(
  form: { forEach(cb: (value: unknown, key: string) => void): void },
  schema: TSchema | undefined,
): Record<string, unknown> {
  const text: Record<string, unknown> = {}
  const kept: Record<string, unknown> = {}
  form.forEach((value, key) => {
    if (typeof value !== 'string') return // file parts carry nothing this API reads
    const field = (schema as Shape | undefined)?.properties?.[key]
    // JSON text only where the route wants an object or array: a name like "[draft] 1" stays text.
    if (schema ? field !== undefined && (has(field, 'object') || has(field, 'array')) : looksLikeJson(value))
      kept[key] = tryJson(value)
    // Integers: whole decimal numbers become numbers here (Value.Convert would truncate "1.5" to 1,
    // and a numeric string checked by Elysia loses its pointer); anything else stays text. A field
    // that takes text or an integer (import's production: a name, or an id) keeps form text as
    // text: what a form always meant there.
    else if (field !== undefined && has(field, 'integer') && !has(field, 'string'))
      kept[key] = /^-?\d+$/.test(value) ? Number(value) : value
    else text[key] = value
  })
  // Kept fields skip Value.Convert, which would also wrap unparsable text into an array ("[x" → ["[x"]);
  // validation then names them as invalid.
  return { ...(schema ? (Value.Convert(schema, text) as Record<string, unknown>) : text), ...kept }
}

const looksLikeJson = (text: string) => /^\s*[[{]/.test(text)

type Shape = { type?: unknown; anyOf?: Shape[]; properties?: Record<string, Shape> }
const has = (s: Shape, type: string): boolean => s.type === type || (s.anyOf ?? []).some((x) => has(x, type))

/** Form fields holding JSON text obey the same depth limit as JSON bodies (a parse_error). */
function tryJson(text: string): unknown {
  refuseDeepJson(text)
  try {
    return JSON.parse(text)
  } catch {
    return text // left as text: validation then names the field as invalid
  }
}
