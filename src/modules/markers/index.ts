// The marker routes of each media kind (docs/api.md, Markers): /{kind}assets/{id}/markers/ (a
// paged list in time order, and POST), /{kind}assets/{id}/markers/{marker}/ (GET, PATCH, PUT,
// DELETE), and the exports /{kind}assets/{id}/markers.csv and .edl. Readable as the asset is
// (404 otherwise); permissions and history are the service's.
import { eq } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import type { Work } from '../../db/port.ts'
import { type MediaKind, markers } from '../../db/tables.ts'
import { type ModuleContext } from '../../http/context.ts'
import { andThen } from '../../db/port.ts'
import { UNKNOWN_FIELDS_NOTE, updateGuard } from '../../http/edit.ts'
import { AppError, requireOneOf } from '../../http/errors.ts'
import { Paging, type PagingQuery } from '../../http/lists.ts'
import { BODY_ERRORS, IdParams, errors, listOf, recordId, sharedModels } from '../../http/models.ts'
import { EDIT_CODENAMES, TITLES } from '../mediaassets/model.ts'
import type { Principal } from '../users/principal.ts'
import { exportFileName, markersCsv, markersEdl } from './exports.ts'
import { MARKER_COLORS, Marker, MarkerCreate, MarkerParams, MarkerUpdate } from './model.ts'
import type { Markers } from './service.ts'

/** The section of the OpenAPI document (http/openapi.ts TAGS). */
export const MARKER_TAG = 'Marker'

const CSV_EXAMPLE =
  '\uFEFFTimecode In,Timecode Out,Duration,Note,Color,User\r\n' +
  '21:40:07:12,21:40:07:12,00:00:00:00,Boom dips into frame,red,ana\r\n' +
  '21:40:12:00,21:40:15:05,00:00:03:05,"Best take: hold, then pan",green,mara\r\n'
const EDL_EXAMPLE = [
  'TITLE: A012C003_250114_R2KD',
  'FCM: NON-DROP FRAME',
  '',
  '001  A012C003 V     C        21:40:07:12 21:40:07:13 21:40:07:12 21:40:07:13',
  '* FROM CLIP NAME: A012C003_250114_R2KD.mov',
  '* LOC: 21:40:07:12 RED     Boom dips into frame',
  '',
  '002  A012C003 V     C        21:40:12:00 21:40:15:05 21:40:12:00 21:40:15:05',
  '* FROM CLIP NAME: A012C003_250114_R2KD.mov',
  '* LOC: 21:40:12:00 GREEN   Best take: hold, then pan',
  '',
].join('\r\n')

type Context = {
  params: { id: number; marker: number }
  body: Record<string, unknown>
  user: Principal
  request: Request
}

export function markersModule(ctx: ModuleContext, service: Markers, kind: MediaKind) {
  const title = TITLES[kind]
  const noun = title.replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase()
  const change = EDIT_CODENAMES[kind].change
  const permissions = `Needs write access to the ${noun}'s production; a marker of another user also needs browser.change_${kind}asset (superusers need nothing).`
  // Unknown fields of an update (http/edit.ts): the record is looked up first (below), so find does nothing more.
  const unknownFields = updateGuard(ctx, { name: 'Marker', body: MarkerUpdate, find: () => undefined })
  const needsStart = requireOneOf(MarkerCreate, ['start', 'start_ms'])

  /** The asset, and the marker where one is named, read as the route's handler reads them. */
  function* found(asset: number, marker: number | undefined, user: Principal): Work<void> {
    const on = yield* service.asset(kind, asset, user)
    if (marker !== undefined) yield* service.marker(on, marker)
  }

  /** Before validation: an asset (and marker) that is not there, or not readable, is a 404 whatever the body holds. */
  function check(params: Record<string, unknown>, body: unknown, request: Request) {
    const asset = recordId(params.id)
    const user = ctx.userOf(request)
    if (asset === undefined || !user) return
    const creating = params.marker === undefined
    const marker = creating ? undefined : recordId(params.marker)
    return andThen(ctx.port.run(found(asset, marker, user)), () => {
      if (creating) needsStart({ body })
      else if (marker !== undefined) return unknownFields({ params: { id: params.marker }, body, request })
    })
  }
  type Hooked = { params: Record<string, unknown>; body: unknown; request: Request }
  // Elysia awaits a hook or not by its source text (http/composed.ts): on SQLite the look-up
  // answers at once and the hook is a plain call; where the port answers promises it is async, so
  // that the 404 comes before the body is validated (as http/edit.ts updateGuard).
  const lookUp =
    ctx.port.engine === 'sqlite'
      ? function lookUp({ params, body, request }: Hooked) {
          check(params, body, request)
        }
      : async function lookUp({ params, body, request }: Hooked) {
          await check(params, body, request)
        }

  const attachment = (name: string, type: string, text: string) =>
    new Response(text, {
      headers: {
        'content-type': type,
        'content-disposition': `attachment; filename="${name}"`,
        'cache-control': 'private, no-cache',
        'x-content-type-options': 'nosniff',
      },
    })

  const hook = (mode: 'patch' | 'put') => ({
    auth: true as const,
    params: MarkerParams,
    body: 'MarkerUpdate',
    parse: ['json', 'urlencoded', 'formdata'] as ('json' | 'urlencoded' | 'formdata')[],
    transform: lookUp,
    response: { 200: 'Marker', ...errors(...BODY_ERRORS, 403, 404) },
    detail: {
      summary:
        mode === 'patch'
          ? `Update fields of a marker of a ${title} (extension)`
          : `Replace a marker of a ${title} (extension)`,
      description:
        (mode === 'patch'
          ? 'Changes the fields given and answers 200 with the whole marker. '
          : 'As PATCH, and note and a start (start or start_ms) must be given (400 required otherwise); fields not given keep their values. ') +
        'start and end as timecode, or start_ms and end_ms; end or end_ms null makes the marker a point. Fields set by the service are read-only: one sent with ' +
        `another value than the record's is a 400 invalid at its pointer. ${UNKNOWN_FIELDS_NOTE} ${permissions} ` +
        'JSON or form data. Written to the history (resource marker) and sent as a marker event.',
      'x-permission': change,
    } as never,
  })

  return (
    new Elysia({ prefix: `/${kind}assets`, tags: [MARKER_TAG] })
      .use(sharedModels)
      .use(ctx.auth)
      .model({ Marker, MarkerCreate, MarkerUpdate, MarkerList: listOf(Marker) })
      .get(
        '/:id/markers',
        ({ params, query, user, request }) => {
          return andThen(ctx.port.run(service.asset(kind, params.id, user)), (on) => {
            const page = ctx.list(
              {
                table: markers,
                where: () => [eq(markers.asset_id, on.id)],
                route: `/${kind}assets/:id/markers`,
                user,
                order: '"start_ms", "id"',
                toApi: service.toApi(on),
              },
              // Named as a filter, so that the list's WHERE (which holds the asset) is never kept for the route (lists.ts).
              { ...query, asset: String(on.id) } as PagingQuery,
              request,
            )
            return andThen(page, (answer) => new Response(answer.body, answer))
          })
        },
        {
          auth: true,
          params: IdParams,
          query: t.Object(Paging),
          response: { 200: 'MarkerList', ...errors(404) },
          detail: {
            summary: `The markers of a ${title} (extension)`,
            description: `In time order (start_ms, then id). Without limit the whole list. X-Total-Count holds their number. Readable as the ${noun} is: one you cannot read is 404.`,
          },
        },
      )
      .get(
        '/:id/markers.csv',
        ({ params, user }) => {
          return andThen(ctx.port.run(service.forExport(kind, params.id, user)), ({ on, rows }) => {
            const csv = markersCsv(on, rows)
            return attachment(exportFileName(on, 'csv'), 'text/csv; charset=utf-8; header=present', csv)
          })
        },
        {
          auth: true,
          params: IdParams,
          response: {
            200: t.String({
              contentMediaType: 'text/csv',
              description: 'The markers as CSV (UTF-8 with a byte order mark, CRLF lines)',
              examples: [CSV_EXAMPLE],
            }),
            ...errors(404),
          },
          detail: {
            summary: `The markers of a ${title} as CSV (extension)`,
            description:
              'An attachment (Content-Disposition names <asset name>.markers.csv) with the columns Timecode In, Timecode Out, Duration, Note, Color, User, one line per marker in time order: ' +
              'source timecode as the asset counts (a point: Out is In, Duration 00:00:00:00); without a frame rate HH:MM:SS.mmm. Served whatever Accept says. See docs/api.md, section Markers.',
          },
        },
      )
      .get(
        '/:id/markers.edl',
        ({ params, user }) => {
          return andThen(ctx.port.run(service.forExport(kind, params.id, user)), ({ on, rows }) => {
            const { clock } = on
            if (!clock.fps)
              throw new AppError(
                409,
                'conflict',
                `This ${noun} has no frame rate, and an EDL counts frames: export its markers as CSV (markers.csv) instead.`,
              )
            const edl = markersEdl({ ...on, clock: { ...clock, fps: clock.fps } }, rows)
            return attachment(exportFileName(on, 'edl'), 'text/plain; charset=utf-8', edl)
          })
        },
        {
          auth: true,
          params: IdParams,
          response: {
            200: t.String({
              contentMediaType: 'text/plain',
              description: 'A CMX 3600 EDL with a locator per marker (CRLF lines)',
              examples: [EDL_EXAMPLE],
            }),
            ...errors(404, 409),
          },
          detail: {
            summary: `The markers of a ${title} as an EDL with locators (extension)`,
            description:
              'An attachment (<asset name>.markers.edl): a CMX 3600 EDL with TITLE, FCM (DROP FRAME or NON-DROP FRAME as the asset counts), and per marker one event ' +
              '(reel from the file name, source and record in and out the marker, a point one frame), its FROM CLIP NAME and a locator line `* LOC: <timecode> <COLOR> <note>`, ' +
              'which Premiere Pro and DaVinci Resolve import as markers. 409 when the asset has no frame rate (use the CSV). Served whatever Accept says. See docs/api.md, section Markers.',
          },
        },
      )
      .get(
        '/:id/markers/:marker',
        ({ params, user }) => {
          return ctx.port.run(service.get(kind, params.id, params.marker, user))
        },
        {
          auth: true,
          params: MarkerParams,
          response: { 200: 'Marker', ...errors(404) },
          detail: { summary: `One marker of a ${title} (extension)` },
        },
      )
      // Only the routes that take a body parse one (context.ts parseBody).
      .onParse(ctx.parseBody)
      .post(
        '/:id/markers',
        ({ params, body, user, set }) => {
          set.status = 201
          return ctx.port.run(service.create(kind, params.id, body as typeof MarkerCreate.static, user))
        },
        {
          auth: true,
          params: IdParams,
          body: 'MarkerCreate',
          parse: ['json', 'urlencoded', 'formdata'],
          transform: lookUp,
          response: { 201: 'Marker', ...errors(...BODY_ERRORS, 403, 404) },
          detail: {
            summary: `Add a marker to a ${title} (extension)`,
            description:
              "A note at a point or over a range: start (source timecode, HH:MM:SS:FF or HH:MM:SS;FF for drop frame, in the asset's own timecode) or start_ms; " +
              `optionally end or end_ms (after the start; none: a point); note (not blank); color, one of ${MARKER_COLORS.join(', ')} (default red). ` +
              `A time past the asset's end, an end before the start, a timecode that does not fit the asset's rate: 400 at the field. ${permissions.split(';')[0]}. ` +
              'JSON or form data. Written to the history (resource marker) and sent as a marker event.',
          },
        },
      )
      .patch(
        '/:id/markers/:marker',
        (c) => {
          const { params, body, user } = c as unknown as Context
          return ctx.port.run(service.update(kind, params.id, params.marker, body as never, user, 'patch')) as never
        },
        hook('patch') as never,
      )
      .put(
        '/:id/markers/:marker',
        (c) => {
          const { params, body, user } = c as unknown as Context
          return ctx.port.run(service.update(kind, params.id, params.marker, body as never, user, 'put')) as never
        },
        hook('put') as never,
      )
      .delete(
        '/:id/markers/:marker',
        ({ params, user, set }) => {
          return andThen(ctx.port.run(service.remove(kind, params.id, params.marker, user)), () => {
            set.status = 204
          })
        },
        {
          auth: true,
          params: MarkerParams,
          response: { 204: t.Void({ description: 'Deleted' }), ...errors(403, 404) },
          detail: {
            summary: `Delete a marker of a ${title} (extension)`,
            description: `${permissions} Answers 204 with no body. Written to the history and sent as a marker event.`,
            'x-permission': change,
          } as never,
        },
      )
  )
}
