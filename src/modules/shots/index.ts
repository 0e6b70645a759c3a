// The routes of shots and sequences (docs/api.md, "Shots and sequences"), under each video asset:
// /videoassets/{id}/shots/ (a list in time order, and POST of a user's shot),
// /videoassets/{id}/shots/detect/ (POST: a detection, 202 with its task),
// /videoassets/{id}/shots/{shot}/ (GET, PATCH, PUT, DELETE), .../{shot}/thumbnail/ (the JPEG),
// /videoassets/{id}/sequences/ (a list, and POST) and /videoassets/{id}/sequences/{sequence}/
// (GET, PATCH, PUT, DELETE). Readable as the asset is (404 otherwise); permissions and history
// are the service's.
import { eq } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import type { Work } from '../../db/port.ts'
import { sequences, shots } from '../../db/tables.ts'
import { type ModuleContext } from '../../http/context.ts'
import { andThen } from '../../db/port.ts'
import { UNKNOWN_FIELDS_NOTE, updateGuard } from '../../http/edit.ts'
import { AppError, notFound } from '../../http/errors.ts'
import { Paging, type PagingQuery } from '../../http/lists.ts'
import { BODY_ERRORS, IdParams, errors, recordId, sharedModels } from '../../http/models.ts'
import { DEFAULT_THRESHOLD, MAX_THRESHOLD, MIN_THRESHOLD } from '../../media/shots.ts'
import { PathError } from '../../storage/paths.ts'
import { type OpenFile, openFileInside } from '../../storage/read.ts'
import { serveOpenFile } from '../mediaassets/proxyfile.ts'
import { EDIT_CODENAMES } from '../mediaassets/model.ts'
import { taskAnswer } from '../tasks/model.ts'
import type { Principal } from '../users/principal.ts'
import {
  DetectBody,
  DetectQuery,
  Sequence,
  SequenceCreate,
  SequenceList,
  SequenceParams,
  SequenceUpdate,
  Shot,
  ShotCreate,
  ShotList,
  ShotParams,
  ShotUpdate,
  ShotsQueued,
} from './model.ts'
import { type Shots, thumbnailVersion } from './service.ts'

/** The section of the OpenAPI document (http/openapi.ts TAGS). */
export const SHOT_TAG = 'Shot'

const CHANGE = EDIT_CODENAMES.video.change
const PERMISSIONS = `Needs superuser or ${CHANGE}, and write access to the video asset's production.`
/** A copy of a thumbnail asked for by its current version may be kept for good: its URL changes with its file. */
const IMMUTABLE = 'private, max-age=31536000, immutable'
const REVALIDATE = 'private, no-cache'

type Context<P> = { params: P; body: Record<string, unknown>; user: Principal; request: Request }

export function shotsModule(ctx: ModuleContext, service: Shots) {
  const unknownShot = updateGuard(ctx, { name: 'Shot', body: ShotUpdate, find: () => undefined })
  const unknownSequence = updateGuard(ctx, { name: 'Sequence', body: SequenceUpdate, find: () => undefined })

  /** The asset, and the shot or sequence where one is named, read as the route's handler reads them. */
  function* found(what: 'shot' | 'sequence', assetId: number, id: number | undefined, user: Principal): Work<void> {
    const on = yield* service.asset(assetId, user)
    if (id === undefined) return
    if (what === 'shot') yield* service.shot(on, id)
    else yield* service.sequence(on, id)
  }

  /** Before validation: an asset (and record) that is not there, or not readable, is a 404 whatever the body holds. */
  function check(
    what: 'shot' | 'sequence' | 'asset',
    params: Record<string, unknown>,
    body: unknown,
    request: Request,
  ) {
    const assetId = recordId(params.id)
    const user = ctx.userOf(request)
    if (assetId === undefined || !user) return
    if (what === 'asset') return ctx.port.run(service.asset(assetId, user))
    const id = recordId(params[what])
    return andThen(ctx.port.run(found(what, assetId, id, user)), () => {
      if (id === undefined) return
      if (what === 'shot') return unknownShot({ params: { id: params.shot }, body, request })
      return unknownSequence({ params: { id: params.sequence }, body, request })
    })
  }
  type Hooked = { params: Record<string, unknown>; body: unknown; request: Request }
  // Elysia awaits a hook or not by its source text (http/composed.ts): on SQLite the look-up
  // answers at once and the hook is a plain call; where the port answers promises it is async, so
  // that the 404 comes before the body is validated (as http/edit.ts updateGuard).
  const lookUp = (what: 'shot' | 'sequence' | 'asset') =>
    ctx.port.engine === 'sqlite'
      ? function lookUp({ params, body, request }: Hooked) {
          check(what, params, body, request)
        }
      : async function lookUp({ params, body, request }: Hooked) {
          await check(what, params, body, request)
        }

  const edit = (what: 'shot' | 'sequence', mode: 'patch' | 'put') => ({
    auth: true as const,
    params: what === 'shot' ? ShotParams : SequenceParams,
    body: what === 'shot' ? 'ShotUpdate' : 'SequenceUpdate',
    parse: ['json', 'urlencoded', 'formdata'] as ('json' | 'urlencoded' | 'formdata')[],
    transform: lookUp(what),
    response: { 200: what === 'shot' ? 'Shot' : 'Sequence', ...errors(...BODY_ERRORS, 403, 404) },
    detail: {
      summary:
        mode === 'patch'
          ? `Update fields of a ${what} of a VideoAsset (extension)`
          : `Replace a ${what} of a VideoAsset (extension)`,
      description:
        (mode === 'patch'
          ? `Changes the fields given and answers 200 with the whole ${what}. `
          : 'As PATCH, and name must be given (400 required otherwise); fields not given keep their values. ') +
        (what === 'shot'
          ? 'Writable: name, description, keywords (a list of words), is_compositing and the licensing fields (licensor, license, location_city, copyright, ancestor). '
          : "Writable: name, description, keywords, and a user's sequence's shots (ids of shots of the asset, each once, in order; or the shots as answered). " +
            "A detected sequence's shots are detection's (400 when they differ). ") +
        `Fields set by the service are read-only: one sent with another value than the record's is a 400 invalid at its pointer. ${UNKNOWN_FIELDS_NOTE} ` +
        `${PERMISSIONS} JSON or form data. Written to the history (resource ${what}) and sent as a shot event. ` +
        "A detected shot's or sequence's edits last while the next detection finds the same one (the same frames, the same shots).",
      'x-permission': CHANGE,
    } as never,
  })

  /** The list of `table` rows of the asset, in time order (ctx.list: limit and offset, or all of them). */
  const listOf = <R>(
    table: typeof shots | typeof sequences,
    assetId: number,
    query: PagingQuery,
    user: Principal,
    request: Request,
    toApi: (row: R) => unknown,
  ) => {
    const column = table === shots ? shots.asset_id : sequences.asset_id
    return ctx.list(
      {
        table,
        where: () => [eq(column, assetId)],
        route: `/videoassets/:id/${table === shots ? 'shots' : 'sequences'}`,
        user,
        order: '"start_ms", "id"',
        toApi: toApi as never,
      },
      // Named as a filter, so that the list's WHERE (which holds the asset) is never kept for the route (lists.ts).
      { ...query, asset: String(assetId) } as PagingQuery,
      request,
    )
  }

  /** The thumbnail of a shot, open; 404 (409 for a proxy_root behind a link) otherwise. */
  function openThumbnail({ path, proxyRoot, devicePath }: { path: string; proxyRoot: string; devicePath: string }): {
    file: OpenFile
    path: string
  } {
    if (!path) throw notFound('This shot has no thumbnail yet (shot detection makes it: POST .../shots/detect/).')
    let file: OpenFile | undefined
    try {
      file = devicePath ? openFileInside(devicePath, proxyRoot, path) : undefined
    } catch (error) {
      if (error instanceof PathError)
        throw new AppError(409, 'conflict', `The thumbnails of this video asset are not served: ${error.message}`)
      throw error
    }
    if (!file)
      throw notFound("This shot's thumbnail is missing, or not a regular file inside its production's proxy_root.")
    return { file, path }
  }

  /** The threshold a detection asks for: the body's, else ?threshold=, else the default (400 out of range). */
  function thresholdOf(body: unknown, query: { threshold?: string }): number {
    const given = (body as { threshold?: number } | undefined)?.threshold
    const threshold = given ?? (query.threshold === undefined ? DEFAULT_THRESHOLD : Number(query.threshold))
    if (!(threshold >= MIN_THRESHOLD && threshold <= MAX_THRESHOLD))
      throw new AppError(
        400,
        'invalid',
        `threshold is a number from ${MIN_THRESHOLD} to ${MAX_THRESHOLD} (scdet's scene score).`,
        { parameter: 'threshold' },
      )
    return threshold
  }

  // Elysia awaits a handler or not by its source text (http/composed.ts): `return f(`, `=> f(`,
  // `async` and `await` make it awaited. The routes that answer at once on SQLite keep a handler
  // without them there, and take an async one where the port answers promises.
  const sqlite = ctx.port.engine === 'sqlite'
  /** What a port run answered, on SQLite: the value itself (the handlers chosen for SQLite only). */
  const now = <T>(value: T | Promise<T>) => value as T

  const bytes = (description: string) =>
    t.String({ contentMediaType: 'image/jpeg', description, examples: ['(the bytes of the thumbnail, image/jpeg)'] })

  return (
    new Elysia({ prefix: '/videoassets', tags: [SHOT_TAG] })
      .use(sharedModels)
      .use(ctx.auth)
      .model({
        Shot,
        ShotList,
        ShotCreate,
        ShotUpdate,
        Sequence,
        SequenceList,
        SequenceCreate,
        SequenceUpdate,
        ShotsDetect: DetectBody,
        ShotsQueued,
      })
      .get(
        '/:id/shots',
        sqlite
          ? ({ params, query, user, request }) => {
              ctx.port.run(service.asset(params.id, user))
              const answer = now(listOf(shots, params.id, query, user, request, service.toApi(ctx.baseOf(request))))
              return new Response(answer.body, answer)
            }
          : async ({ params, query, user, request }) => {
              await ctx.port.run(service.asset(params.id, user))
              const answer = await listOf(shots, params.id, query, user, request, service.toApi(ctx.baseOf(request)))
              return new Response(answer.body, answer)
            },
        {
          auth: true,
          params: IdParams,
          query: t.Object(Paging),
          response: { 200: 'ShotList', ...errors(404) },
          detail: {
            summary: 'The shots of a VideoAsset',
            description:
              "medialoopster's Shot records, in time order (timecode_start, then id): detected ones (shot detection: POST .../shots/detect/, or autoshot_detection of the asset's device) " +
              "and users' (POST). Without limit all of them (what the medialoopster client reads); X-Total-Count holds their number. Readable as the video asset is: one you cannot read is 404.",
          },
        },
      )
      .get(
        '/:id/shots/:shot',
        ({ params, user, request }) => ctx.port.run(service.getShot(params.id, params.shot, user, ctx.baseOf(request))),
        {
          auth: true,
          params: ShotParams,
          response: { 200: 'Shot', ...errors(404) },
          detail: { summary: 'One shot of a VideoAsset (extension)' },
        },
      )
      .get(
        '/:id/shots/:shot/thumbnail',
        ({ params, user, request }) => {
          return andThen(ctx.port.run(service.thumbnailOfShot(params.id, params.shot, user)), (thumbnail) => {
            const { file, path } = openThumbnail(thumbnail)
            const asked = new URL(request.url).searchParams.get('v')
            return serveOpenFile(file, request, {
              type: 'image/jpeg',
              cacheControl: asked !== null && asked === thumbnailVersion(path) ? IMMUTABLE : REVALIDATE,
            })
          })
        },
        {
          auth: true,
          params: ShotParams,
          query: t.Object({
            v: t.Optional(
              t.String({
                maxLength: 64,
                description:
                  'The version thumbnail_url names: when it is the current one, the answer may be kept for good',
              }),
            ),
          }),
          response: {
            200: bytes("The shot's thumbnail"),
            206: bytes('The byte range asked for'),
            304: t.Void({ description: 'Not modified: If-None-Match holds the ETag' }),
            ...errors(404, 409, 416),
          },
          detail: {
            summary: "A shot's thumbnail (extension)",
            description:
              "A frame from the shot's middle (a JPEG of at most 320 × 180), as thumbnail_url names it. Served as the proxy is: readable as the video asset is (404 otherwise), " +
              "only a regular file inside the production's proxy_root reached without a link (409 when the proxy_root leads through one), ETag and Last-Modified, one byte range, " +
              '304 on If-None-Match. With ?v= the current version the answer says Cache-Control: private, max-age=31536000, immutable; else private, no-cache. ' +
              '404 while the shot has none (path_thumbnail empty).',
          },
        },
      )
      .get(
        '/:id/sequences',
        sqlite
          ? ({ params, query, user, request }) => {
              const toApi = now(ctx.port.run(service.sequencesOf(params.id, user, ctx.baseOf(request))))
              const answer = now(listOf(sequences, params.id, query, user, request, toApi))
              return new Response(answer.body, answer)
            }
          : async ({ params, query, user, request }) => {
              const toApi = await ctx.port.run(service.sequencesOf(params.id, user, ctx.baseOf(request)))
              const answer = await listOf(sequences, params.id, query, user, request, toApi)
              return new Response(answer.body, answer)
            },
        {
          auth: true,
          params: IdParams,
          query: t.Object(Paging),
          response: { 200: 'SequenceList', ...errors(404) },
          detail: {
            summary: 'The sequences of a VideoAsset',
            description:
              "medialoopster's Sequence records with their shots (and an id), in time order: detected ones (the runs of shots between black or silent gaps of at least 0.5 s) " +
              "and users' (POST). Without limit all of them; X-Total-Count holds their number. Readable as the video asset is: one you cannot read is 404.",
          },
        },
      )
      .get(
        '/:id/sequences/:sequence',
        ({ params, user, request }) => {
          return ctx.port.run(service.getSequence(params.id, params.sequence, user, ctx.baseOf(request)))
        },
        {
          auth: true,
          params: SequenceParams,
          response: { 200: 'Sequence', ...errors(404) },
          detail: { summary: 'One sequence of a VideoAsset (extension)' },
        },
      )
      // Only the routes that take a body parse one (context.ts parseBody).
      .onParse(ctx.parseBody)
      .post(
        '/:id/shots/detect',
        sqlite
          ? ({ params, body, query, user, set }) => {
              const row = now(ctx.port.run(service.queueDetect(params.id, user, thresholdOf(body, query))))
              const task = taskAnswer(row)
              set.status = 202
              set.headers.location = task.url
              return { task }
            }
          : async ({ params, body, query, user, set }) => {
              const row = await ctx.port.run(service.queueDetect(params.id, user, thresholdOf(body, query)))
              const task = taskAnswer(row)
              set.status = 202
              set.headers.location = task.url
              return { task }
            },
        {
          auth: true,
          params: IdParams,
          query: DetectQuery,
          body: 'ShotsDetect',
          parse: ['json', 'urlencoded', 'formdata'],
          transform: lookUp('asset'),
          response: { 202: 'ShotsQueued', ...errors(...BODY_ERRORS, 403, 404, 409) },
          detail: {
            summary: 'Detect the shots of a VideoAsset (extension)',
            description:
              `Queues a task (kind shots) that finds the clip's cuts with ffmpeg's scdet (threshold: the body's or ?threshold=, ${MIN_THRESHOLD} to ${MAX_THRESHOLD} on scdet's scale, default ${DEFAULT_THRESHOLD}; lower finds more), ` +
              'its black and silent gaps (blackframe, silencedetect: at least 0.5 s each), and a thumbnail per shot, and answers 202 with it ({task: {id, state, url}}, Location: the task; asked again ' +
              "while it waits: the same task, with the threshold asked last). At its end the detected shots and sequences are replaced in one transaction; users' shots and sequences stay. " +
              `No body is needed. ${PERMISSIONS} 409 when the asset has no file in production and no proxy. See docs/media.md, section Shots and sequences.`,
            'x-permission': CHANGE,
          } as never,
        },
      )
      .post(
        '/:id/shots',
        ({ params, body, user, set, request }) => {
          set.status = 201
          return ctx.port.run(service.create(params.id, body as typeof ShotCreate.static, user, ctx.baseOf(request)))
        },
        {
          auth: true,
          params: IdParams,
          body: 'ShotCreate',
          parse: ['json', 'urlencoded', 'formdata'],
          transform: lookUp('asset'),
          response: { 201: 'Shot', ...errors(...BODY_ERRORS, 403, 404) },
          detail: {
            summary: "Add a user's shot to a VideoAsset (extension)",
            description:
              'name, timecode_start and timecode_end (milliseconds from the first frame; the end after the start and not past the end of the clip), and optionally description, keywords, ' +
              "is_compositing and the licensing fields. A user's shot stays when detection runs again; its thumbnail is made by the next detection. " +
              `${PERMISSIONS} JSON or form data. Written to the history (resource shot) and sent as a shot event.`,
            'x-permission': CHANGE,
          } as never,
        },
      )
      .patch(
        '/:id/shots/:shot',
        (context) => {
          const { params, body, user, request } = context as unknown as Context<{ id: number; shot: number }>
          return ctx.port.run(
            service.update(params.id, params.shot, body as never, user, 'patch', ctx.baseOf(request)),
          ) as never
        },
        edit('shot', 'patch') as never,
      )
      .put(
        '/:id/shots/:shot',
        (context) => {
          const { params, body, user, request } = context as unknown as Context<{ id: number; shot: number }>
          return ctx.port.run(
            service.update(params.id, params.shot, body as never, user, 'put', ctx.baseOf(request)),
          ) as never
        },
        edit('shot', 'put') as never,
      )
      .delete(
        '/:id/shots/:shot',
        sqlite
          ? ({ params, user, set }) => {
              ctx.port.run(service.remove(params.id, params.shot, user))
              set.status = 204
            }
          : async ({ params, user, set }) => {
              await ctx.port.run(service.remove(params.id, params.shot, user))
              set.status = 204
            },
        {
          auth: true,
          params: ShotParams,
          response: { 204: t.Void({ description: 'Deleted' }), ...errors(403, 404, 409) },
          detail: {
            summary: "Delete a user's shot of a VideoAsset (extension)",
            description:
              `A shot made by a user goes, with its thumbnail; the sequences that held it lose it. A detected shot is 409 conflict (the next detection replaces it). ${PERMISSIONS} ` +
              'Answers 204 with no body. Written to the history and sent as a shot event.',
            'x-permission': CHANGE,
          } as never,
        },
      )
      .post(
        '/:id/sequences',
        ({ params, body, user, set, request }) => {
          set.status = 201
          return ctx.port.run(
            service.createSequence(params.id, body as typeof SequenceCreate.static, user, ctx.baseOf(request)),
          )
        },
        {
          auth: true,
          params: IdParams,
          body: 'SequenceCreate',
          parse: ['json', 'urlencoded', 'formdata'],
          transform: lookUp('asset'),
          response: { 201: 'Sequence', ...errors(...BODY_ERRORS, 403, 404) },
          detail: {
            summary: "Make a user's sequence of shots of a VideoAsset (extension)",
            description:
              'name, shots (ids of shots of this video asset, each once, in the order the sequence plays them; 400 at the one that is not), and optionally description and keywords. ' +
              "A user's sequence stays when detection runs again: a detected shot of it that detection replaces gives way to the new shots over the same frames. " +
              `${PERMISSIONS} JSON or form data. Written to the history (resource sequence) and sent as a shot event.`,
            'x-permission': CHANGE,
          } as never,
        },
      )
      .patch(
        '/:id/sequences/:sequence',
        (context) => {
          const { params, body, user, request } = context as unknown as Context<{ id: number; sequence: number }>
          return ctx.port.run(
            service.updateSequence(params.id, params.sequence, body as never, user, 'patch', ctx.baseOf(request)),
          ) as never
        },
        edit('sequence', 'patch') as never,
      )
      .put(
        '/:id/sequences/:sequence',
        (context) => {
          const { params, body, user, request } = context as unknown as Context<{ id: number; sequence: number }>
          return ctx.port.run(
            service.updateSequence(params.id, params.sequence, body as never, user, 'put', ctx.baseOf(request)),
          ) as never
        },
        edit('sequence', 'put') as never,
      )
      .delete(
        '/:id/sequences/:sequence',
        sqlite
          ? ({ params, user, set }) => {
              ctx.port.run(service.removeSequence(params.id, params.sequence, user))
              set.status = 204
            }
          : async ({ params, user, set }) => {
              await ctx.port.run(service.removeSequence(params.id, params.sequence, user))
              set.status = 204
            },
        {
          auth: true,
          params: SequenceParams,
          response: { 204: t.Void({ description: 'Deleted' }), ...errors(403, 404, 409) },
          detail: {
            summary: "Delete a user's sequence of a VideoAsset (extension)",
            description: `A sequence made by a user goes (its shots stay). A detected sequence is 409 conflict (the next detection replaces it). ${PERMISSIONS} Answers 204 with no body.`,
            'x-permission': CHANGE,
          } as never,
        },
      )
  )
}
