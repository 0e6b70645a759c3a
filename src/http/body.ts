// Request bodies: JSON, urlencoded and multipart forms, nothing else; at most 1 MiB; malformed
// JSON is a 400 parse_error. In form data a field holding an object or array is JSON text, and
// every value arrives as text, so form bodies are converted to the route's schema (booleans
// from true/false/1/0, numbers from digits) before Elysia validates them.
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { AppError } from './errors.ts'

export const MAX_BODY_BYTES = 1024 * 1024

const tooLarge = () => new AppError(413, 'too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`)

export type SchemaLookup = (method: string, route: string) => TSchema | undefined

export function createBodyParser(schemaFor: SchemaLookup) {
  return async function parseBody({ request, route }: { request: Request; route: string }) {
    const declared = Number(request.headers.get('content-length') ?? 0)
    if (declared > MAX_BODY_BYTES) throw tooLarge()
    const bytes = await readLimited(request)
    if (bytes.byteLength === 0) return {}

    const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
    if (type === 'application/json' || type.endsWith('+json')) return parseJson(bytes)
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
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (error) {
    throw new AppError(400, 'parse_error', `JSON parse error: ${(error as Error).message}`)
  }
}

function fromForm(form: { forEach(cb: (value: unknown, key: string) => void): void }, schema: TSchema | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  form.forEach((value, key) => {
    if (typeof value !== 'string') return // file parts carry nothing this API reads
    body[key] = looksLikeJson(value) ? tryJson(value) : value
  })
  return schema ? (Value.Convert(schema, body) as Record<string, unknown>) : body
}

const looksLikeJson = (text: string) => /^\s*[[{]/.test(text)

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text // left as text: validation then names the field as invalid
  }
}
