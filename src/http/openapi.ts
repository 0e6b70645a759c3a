// The OpenAPI document served at /api/docs/json. @elysiajs/openapi's generator builds it from the
// routes and the TypeBox models they name; finishDocument then corrects and completes, in this one
// place, what the generator writes and offers no option for (its mapJsonSchema hook only sees
// non-TypeBox validators):
//
// - Elysia's .model() stamps every registered schema with a fragment-only `$id`
//   ("#/components/schemas/Device"), once per object, so a schema registered under several
//   names (the media asset kinds) carries the first name everywhere it is inlined. Swagger UI
//   resolves references against that base and breaks; the names are the components' keys.
// - Elysia's t.Nullable keeps OpenAPI 3.0's `nullable` beside the 3.1 type array the generator
//   writes; in 3.1 it is no keyword at all.
// - Elysia's t.Integer is the number or its text (`format: "integer"`, not a JSON Schema format),
//   and so is a path's id (models.ts IdParams, its text in canonical digits: ID_FORMAT);
//   the list routes take limit, offset and id filters as decimal digits, so that lists.ts words
//   their errors. A parameter's schema describes its value: an integer, in all cases.
// - Swagger UI 5 shows no schema-level `examples` of a 3.1 document (swagger-api/swagger-ui#10503):
//   every body and answer gets its media type `example` (or named `examples`, where one operation
//   does two things: project create and copy), from examples.ts or its schema.
// - A union of literals is typed as strings whatever they are (approval: 0 | 1), paths are
//   spelled both with and without their final slash, and an answer with no body (t.Void) gets
//   a schema in place of its media types.
// - What all operations share is said once: the 500, the envelope's descriptions and examples,
//   the headers (X-Total-Count, Link, WWW-Authenticate, Allow), and the form encodings of body.ts.
//   An error example is the answer of that operation: its 403 names the codename the route's
//   `x-permission` holds (resource.ts) or else write access, its 404 the record of its tag.
import { STATUS_CODES } from 'node:http'
import { toOpenAPISchema } from '@elysiajs/openapi'
import type { AnyElysia } from 'elysia'
import { KEY_FORM } from './auth.ts'
import { MAX_BODY_BYTES } from './body.ts'
import { DIGITS_PATTERN } from './errors.ts'
import { ID_FORMAT } from './models.ts'
import {
  DETAIL_EXAMPLES,
  EXAMPLES,
  INLINE_EXAMPLES,
  LOCATION_EXAMPLES,
  NAMED_EXAMPLES,
  QUERY_EXAMPLES,
  errorExample,
} from './examples.ts'

type Json = Record<string, any>

const ERRORS_DOC = 'See docs/api.md, section Errors.'
const ENVELOPE = '#/components/schemas/Error'
const FORMS = ['application/x-www-form-urlencoded', 'multipart/form-data']
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']

/** What each error status means here, for the response descriptions. */
const ERROR_MEANINGS: Record<number, string> = {
  400: 'A field is missing or invalid (one entry per field, with source.pointer or source.parameter), the JSON is malformed, or the Host header is missing.',
  401: 'No key, or a malformed, unknown or revoked one, or Basic credentials (or a sign-in) that do not match, or a session that has ended. Send `Authorization: Token <key>`, `Bearer <key>` or `Basic <base64 of user:password>`.',
  403: "The key's user lacks the permission codename or the production access this needs; the detail names it. Or the session cookie came from another page than this server's (docs/api.md, section Sessions).",
  404: 'No record with this id, or one the user cannot read.',
  405: 'The path does not serve this method; Allow lists those it does.',
  406: 'Accept asks for another API version than 1 or 2, or for something other than JSON.',
  409: 'The operation clashes with running work on the same project (a copy or a delete), or a delete would remove catalogued media files of another production that lie in the project folder; or a record to be deleted or changed is still referred to (the detail names what: "12 video assets lie on this device"), or an import task works on the asset.',
  413: `The body is larger than ${MAX_BODY_BYTES} bytes (1 MiB).`,
  415: 'The body is of a type this operation does not take.',
  416: 'The Range asked for holds no byte of the file; Content-Range names its size (bytes */SIZE).',
  421: 'The service listens on loopback only and the Host names another server (a page whose name was pointed at this machine); serve --allow-host adds a name.',
  422: 'An asset_list entry cannot be linked or unlinked (without silent_mode); nothing changed.',
  431: 'The request line and headers are larger than 16 KiB.',
  500: 'A bug in Reelhouse, logged with the request id the detail names.',
  501: 'A medialoopster feature Reelhouse does not have (the archive); nothing was done.',
}

const TAGS: Record<string, string> = {
  service: 'The service: its health and ping (no key needed), and the API root naming every list.',
  Device: 'Storage devices: the folders the service reads and writes.',
  Production:
    'Productions: a storage root on a device, the media assets and project assets in it, and who may read or write them.',
  TranscodingProfile: 'Proxy and delivery encoding settings.',
  CustomMetadata: 'Custom metadata fields (keys of meta_field_store), each in a set.',
  CustomMetadataSet: 'Sets of custom metadata fields, attached to an asset kind.',
  ContentType: 'The four asset kinds, by id.',
  AudioAsset: 'Audio files catalogued in a production.',
  ImageAsset: 'Still images catalogued in a production.',
  VideoAsset: 'Video files catalogued in a production.',
  ImportLog: 'One log per import request: its payload, status and errors.',
  Marker:
    'Markers (an extension of the medialoopster API): notes at a timecode or over a range of a media asset, by a user, with their CSV and EDL exports.',
  Shot: "Shots and sequences of video assets: medialoopster's Shot and Sequence records, found by shot detection (ffmpeg's scdet, black and silent gaps) or made by users, with a thumbnail per shot.",
  Import: 'Import an existing file as a media asset (probe and proxy in a task).',
  AssetHoldDuration: 'How long new assets are held before they are due for deletion.',
  ProjectAsset:
    'Editing projects: a bundle folder, its project file and linked media assets; copy and delete run as tasks. The same operations under /api/project/ are kept for version 0 clients and listed here as deprecated: use /api/projectassets/.',
  Task: 'Copies, deletes, imports and scans, with their progress.',
  Archive:
    "medialoopster's archive and restore activities: not available in Reelhouse, which has no archive connector (501 not_implemented).",
  History:
    'Who changed which field of which record, and when (an extension of the medialoopster API): every create, update, delete and link change, newest first.',
  Search: 'Full-text search over media and project assets, best first (an extension of the medialoopster API).',
  Session:
    "Sign-in of the web page (an extension of the medialoopster API): a session cookie that only this server's own page may use.",
  Event:
    'The live event stream (Server-Sent Events; an extension of the medialoopster API): tasks, assets, projects and import logs as they change.',
}

/** The generated document, finished; built once per app (the routes do not change). */
export function openApiDocument(app: AnyElysia, info: { title: string; version: string; description: string }): Json {
  // A JSON copy: the generator's output shares objects with the live TypeBox schemas.
  // staticFile false: a path with a dot is a route here (the marker exports, markers.csv and .edl), not a file.
  const generated = JSON.parse(JSON.stringify(toOpenAPISchema(app, { staticFile: false }))) as {
    paths: Json
    components: { schemas: Json }
  }
  return finishDocument({
    openapi: '3.1.0',
    info,
    // Relative: the document describes the server that serves it, whatever its address.
    servers: [{ url: '/', description: 'This server' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    security: [{ bearer: [] }, { token: [] }, { basic: [] }],
    paths: generated.paths,
    components: {
      schemas: generated.components.schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: `Paste the bare key (${KEY_FORM}); it is sent as \`Authorization: Bearer <key>\`.`,
        },
        token: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'The whole header value: `Token <key>`.',
        },
        basic: {
          type: 'http',
          scheme: 'basic',
          description:
            "HTTP Basic, as medialoopster clients log in: a user name and that user's password (`reelhouse user passwd`) or one of their keys. Every failure is the same 401 authentication_failed. See docs/api.md, section Authentication.",
        },
      },
      headers: {
        RequestId: {
          description:
            "The request id, also in the server log line of the request and in a 500's detail (an incoming X-Request-Id of 8 to 64 characters [A-Za-z0-9._:@-] is kept)",
          schema: { type: 'string' },
          example: '3f9c1a7e5b2d4c80',
        },
      },
      responses: {
        MethodNotAllowed: {
          description: `A known path with a method it does not serve (405 method_not_allowed). ${ERRORS_DOC}`,
          headers: {
            Allow: {
              description: 'The methods the path serves',
              schema: { type: 'string' },
              example: 'GET, HEAD, DELETE',
            },
            'X-Request-Id': { $ref: '#/components/headers/RequestId' },
          },
          content: {
            'application/json': {
              schema: { $ref: ENVELOPE },
              example: errorExample(405, { method: 'PUT', path: '', paged: false }),
            },
          },
        },
      },
    },
  })
}

export function finishDocument(doc: Json): Json {
  const schemas = doc.components.schemas as Json
  for (const schema of Object.values(schemas)) tidy(schema)
  // One spelling per path, without the final slash: every path answers with and without it
  // (docs/api.md), and the generator wrote both kinds (/api/devices/ beside /api/devices/{id}).
  doc.paths = Object.fromEntries(
    Object.entries(doc.paths as Json).map(([path, item]) => [path.replace(/(.)\/$/, '$1'), item]),
  )

  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const method of METHODS.filter((m) => item[m])) {
      const op = item[method] as Json
      const where = `${method.toUpperCase()} ${path}`
      for (const parameter of (op.parameters ?? []) as Json[]) {
        tidy(parameter.schema)
        if (parameter.in === 'query' && isDigits(parameter.schema)) parameter.schema = wholeNumber(parameter.schema)
        const example = QUERY_EXAMPLES.find((e) => e.operation.test(where))?.parameters[parameter.name as string]
        if (parameter.in === 'query' && example !== undefined) parameter.example ??= example
      }
      const paged = (op.parameters ?? []).some((p: Json) => p.name === 'limit')
      const inline = INLINE_EXAMPLES.find((e) => e.operation.test(where))

      // A body the generator cannot render (a union of a member and a list of members comes out
      // with no media types) names its model in x-json-body, and is shown as that JSON.
      if (op['x-json-body']) {
        op.requestBody = {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${op['x-json-body']}` } } },
        }
        delete op['x-json-body']
      }
      let firstRequired: string | undefined
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json)) {
        tidy(media.schema)
        const schema = resolve(schemas, media.schema)
        firstRequired ??= schema.required?.[0]
        setExample(media, exampleOf(schemas, media.schema) ?? inline?.request)
        if (FORMS.includes(type)) media.encoding = jsonTextFields(schema)
      }

      const content = Object.keys(op.requestBody?.content ?? {})
      const jsonOnly = content.length > 0 && !content.some((type) => FORMS.includes(type))
      op.responses ??= {}
      op.responses['500'] ??= { content: { 'application/json': { schema: { $ref: ENVELOPE } } } }
      for (const [code, response] of Object.entries(op.responses as Json)) {
        const status = Number(code)
        // t.Void (ping's 204) comes out as a schema where the media types belong: no body.
        if (response.content?.type === 'void') delete response.content
        // A text answer of another type than text/plain (the event stream) says it with contentMediaType.
        const text = response.content?.['text/plain']
        if (text?.schema?.contentMediaType) response.content = { [text.schema.contentMediaType]: text }
        for (const media of Object.values((response.content ?? {}) as Json)) {
          tidy(media.schema)
          setExample(
            media,
            media.schema?.$ref === ENVELOPE
              ? errorExample(status, {
                  method: method.toUpperCase(),
                  path,
                  firstRequired,
                  paged,
                  jsonOnly,
                  permission: op['x-permission'],
                  resource: op.tags?.[0],
                })
              : media.schema?.$ref === '#/components/schemas/DetailError'
                ? DETAIL_EXAMPLES[code]
                : (exampleOf(schemas, media.schema) ?? inline?.responses?.[code]),
          )
        }
        if (status >= 400)
          response.description = `${STATUS_CODES[status]}. ${ERROR_MEANINGS[status] ?? ''} ${ERRORS_DOC}`.replace(
            / {2,}/g,
            ' ',
          )
        response.headers = { ...response.headers, 'X-Request-Id': { $ref: '#/components/headers/RequestId' } }
        // Project create, copy and delete name where to go next (src/modules/projectassets).
        if ((status === 201 || status === 202) && /^\/api\/project(assets)?($|\/\{id\}$)/.test(path))
          response.headers.Location = {
            description:
              'A create: the new project. A copy or delete: the task that does the work (GET it until its state is done or failed)',
            schema: { type: 'string' },
            ...(method === 'delete'
              ? { example: LOCATION_EXAMPLES.delete }
              : { examples: { create: { value: LOCATION_EXAMPLES.create }, copy: { value: LOCATION_EXAMPLES.copy } } }),
          }
        if (status === 401)
          response.headers = {
            ...response.headers,
            'WWW-Authenticate': {
              description: 'The challenge: Token (Bearer and Basic are accepted too)',
              schema: { type: 'string', enum: ['Token'] },
            },
          }
        if (status === 200 && paged)
          response.headers = {
            ...response.headers,
            'X-Total-Count': {
              description: 'The number of records matching the filters, whatever limit and offset',
              schema: { type: 'integer', minimum: 0 },
            },
            Link: {
              description:
                'With a limit above 0: the previous and the next page (RFC 8288) as absolute URLs (on serve --public-url, else on the Host of the request), keeping every other query parameter; no prev on the first page, no next on the last. See docs/api.md, section Lists.',
              schema: { type: 'string' },
              example:
                '<http://127.0.0.1:8000/api/videoassets/?production=1&limit=20&offset=0>; rel="prev", <http://127.0.0.1:8000/api/videoassets/?production=1&limit=20&offset=40>; rel="next"',
            },
          }
      }
    }
  }
  return doc
}

/** Drops `$id` and `nullable`, and keeps the number of Elysia's number-or-text unions, throughout a schema. */
function tidy(schema: unknown): void {
  if (!schema || typeof schema !== 'object') return
  if (Array.isArray(schema)) return schema.forEach(tidy)
  const s = schema as Json
  delete s.$id
  delete s.nullable
  const numeric =
    Array.isArray(s.anyOf) &&
    s.anyOf.length === 2 &&
    s.anyOf.find(
      (m: Json) => m.type === 'string' && (m.format === 'integer' || m.format === 'numeric' || m.format === ID_FORMAT),
    )
  if (numeric) {
    const number = s.anyOf.find((m: Json) => m !== numeric)
    delete s.anyOf
    Object.assign(s, number, s.description ? { description: s.description } : {})
  }
  // The generator types every union of literals as strings, approval's 0 | 1 too.
  if (Array.isArray(s.enum) && s.enum.every((v: unknown) => Number.isInteger(v))) s.type = 'integer'
  for (const key of ['properties', 'patternProperties', '$defs'])
    if (s[key]) Object.values(s[key] as Json).forEach(tidy)
  for (const key of ['items', 'additionalProperties', 'not', 'anyOf', 'oneOf', 'allOf', 'prefixItems']) tidy(s[key])
}

const isDigits = (s: Json) => s?.type === 'string' && s.pattern === DIGITS_PATTERN
const wholeNumber = ({ description }: Json) => ({
  type: 'integer',
  minimum: 0,
  ...(description ? { description } : {}),
})

/** A component by its reference, or the schema itself when inline. */
const resolve = (schemas: Json, schema: Json): Json =>
  schema?.$ref ? (schemas[schema.$ref.split('/').pop()] ?? {}) : (schema ?? {})

/** A media type's example: one `example`, or the named `examples` of a model with several (examples.ts). */
function setExample(media: Json, example: unknown): void {
  const named = NAMED_EXAMPLES[media.schema?.$ref?.split('/').pop() ?? '']
  if (named) media.examples = named
  else media.example = example
}

/** examples.ts's example for a named schema (a <Name>List is [<Name>]), else the schema's own first example. */
function exampleOf(schemas: Json, schema: Json | undefined): unknown {
  const name = schema?.$ref?.split('/').pop() as string | undefined
  if (name && name in EXAMPLES) return EXAMPLES[name]
  if (name?.endsWith('List') && name.slice(0, -4) in EXAMPLES) return [EXAMPLES[name.slice(0, -4)]]
  return resolve(schemas, schema as Json).examples?.[0]
}

/** In form data an object or array field is JSON text (body.ts): said by each field's encoding. */
function jsonTextFields(schema: Json): Json {
  const isStructured = (s: Json): boolean =>
    s.type === 'object' || s.type === 'array' || (s.anyOf ?? []).some(isStructured) || !!s.$ref
  return Object.fromEntries(
    Object.entries((schema.properties ?? {}) as Json)
      .filter(([, field]) => isStructured(field))
      .map(([name]) => [name, { contentType: 'application/json' }]),
  )
}
