import { Elysia, t } from 'elysia'
import { projectAssets } from '../../db/tables.ts'
import { AppError, REQUIRED_DETAIL, entry, requireOneOf } from '../../http/errors.ts'
import { UNKNOWN_FIELDS_NOTE, updateGuard } from '../../http/edit.ts'
import { type ListAnswer, Paging, type PagingQuery, slashPath } from '../../http/lists.ts'
import { BODY_ERRORS, IdParams, errors, listOf, sharedModels } from '../../http/models.ts'
import { optionalEq } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import { type AssetListQuery, AssetListFilters, assetListWhere } from '../mediaassets/model.ts'
import { readableBy } from '../users/access.ts'
import type { Principal } from '../users/service.ts'
import {
  CopyQuery,
  DeleteAccepted,
  LinkResult,
  ProjectAsset,
  ProjectAssetCreate,
  ProjectAssetCreated,
  ProjectAssetDetail,
  ProjectAssetUpdate,
  type TaskRef,
  UnlinkResult,
  linkBodyDoc,
} from './model.ts'
import type { ProjectAssets, QueuedTask } from './service.ts'

type ProjectAssetQuery = AssetListQuery & PagingQuery & { bundle_root?: string }

const LINK_PATHS = { link: ['/:id/addasset', '/:id/add'], unlink: ['/:id/unlinkasset', '/:id/unlink'] } as const

/** Link and unlink take JSON only: form data or another type is a 415 in the envelope. */
function requireJson(request: Request) {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (type !== 'application/json')
    throw new AppError(
      415,
      'unsupported_media_type',
      'addasset and unlinkasset take a JSON body (Content-Type: application/json).',
    )
}

/** PATCH and PUT of a project asset (an extension of the medialoopster API); `guard`: edit.ts updateGuard. */
const updateHook = (mode: 'patch' | 'put', legacy: boolean, guard: ReturnType<typeof updateGuard>) => ({
  auth: true as const,
  params: IdParams,
  body: 'ProjectAssetUpdate' as const,
  parse: ['json', 'urlencoded', 'formdata'] as ('json' | 'urlencoded' | 'formdata')[],
  transform: guard,
  response: { 200: 'ProjectAssetDetail' as const, ...errors(...BODY_ERRORS, 403, 404, 409) },
  detail: {
    summary: mode === 'patch' ? 'Update fields of a project asset (extension)' : 'Replace a project asset (extension)',
    deprecated: legacy,
    description:
      (mode === 'patch'
        ? 'Changes the fields given; answers 200 with the whole record. '
        : 'As PATCH, with name required; fields not given keep their values. ') +
      'Needs superuser or browser.change_projectasset, and write access to the production. Writable: name, description, date_crt, date_add, ' +
      'date_del, meta_field_store (PATCH merges, a null value removes a key; PUT replaces), status_editing, status_approval, path_file ' +
      '(inside bundle_root), type, is_archive, name_editor, name_studio, locked_by. bundle_root is not edited in place (a move: 400 invalid ' +
      'saying so); the other fields the service sets are read-only (400 invalid at the field when sent with another value). date_mod changes ' +
      `on every update; the update is written to the history. ${UNKNOWN_FIELDS_NOTE} 409 while the project is being deleted. JSON or form data.`,
    'x-permission': 'browser.change_projectasset',
  } as never,
})

/** A queued task as a copy or delete answers it, with the address to follow it at. */
const taskAnswer = (task: QueuedTask): typeof TaskRef.static => ({ ...task, url: `/api/tasks/${task.id}/` })

type Removing = {
  params: { id: number }
  user: Principal
  set: { status?: number | string; headers: Record<string, unknown> }
}

/** A delete's 202: the work goes on; Location names where to watch it (the task). */
function accepted(set: Removing['set'], queued: QueuedTask): typeof TaskRef.static {
  const task = taskAnswer(queued)
  set.status = 202
  set.headers.location = task.url
  return task
}

/**
 * Served under /projectassets and under the version-0 path /project. The aliases share the
 * ProjectAsset tag, marked deprecated: Swagger UI lists them struck through in the one section,
 * so a version 0 client still finds its paths without a second copy of the section.
 */
export function projectAssetsModule(ctx: ModuleContext, service: ProjectAssets, prefix: '/projectassets' | '/project') {
  const legacy = prefix === '/project'
  const guard = updateGuard(ctx, {
    name: 'ProjectAsset',
    body: ProjectAssetUpdate,
    find: (id, user) => ctx.port.run(service.readable(id, user)),
  })
  const list = (query: ProjectAssetQuery, user: Principal, request: Request) =>
    ctx.list(
      {
        table: projectAssets,
        where: () => [
          optionalEq(projectAssets.bundle_root, slashPath('bundle_root', query.bundle_root)),
          ...assetListWhere(projectAssets, query),
          readableBy(user, projectAssets.production),
        ],
        route: '/projectassets',
        user,
        // The records of a page, with their linked media assets read for the whole page at once
        // (http/lists.ts runs it: in the same call on SQLite, awaited on PostgreSQL).
        records: (rows) => service.toApiAll(rows, user),
      },
      query,
      request,
    )
  let routes = new Elysia({ prefix, tags: ['ProjectAsset'] })
    .use(sharedModels)
    .use(ctx.auth)
    .model({
      ProjectAsset,
      ProjectAssetDetail,
      ProjectAssetList: listOf(ProjectAsset),
      ProjectAssetCreate,
      ProjectAssetCreated,
      ProjectAssetUpdate,
      DeleteAccepted,
      LinkResult,
      UnlinkResult,
    })
    .get(
      '/',
      // The Response made here, of the list's answer made outside: see src/http/lists.ts ListAnswer.
      // Awaited only where the list answers a promise (PostgreSQL).
      ctx.port.engine === 'sqlite'
        ? ({ query, user, request }) => {
            const answer = list(query, user, request) as ListAnswer
            return new Response(answer.body, answer)
          }
        : async ({ query, user, request }) => {
            const answer = await list(query, user, request)
            return new Response(answer.body, answer)
          },
      {
        auth: true,
        query: t.Object({
          ...Paging,
          bundle_root: t.Optional(
            t.String({ description: 'Only the project with this bundle_root (must end with a slash)' }),
          ),
          ...AssetListFilters,
        }),
        response: { 200: 'ProjectAssetList', ...errors(400) },
        detail: { summary: 'List project assets', deprecated: legacy },
      },
    )
    .get('/:id', ({ params, user }) => ctx.port.run(service.get(params.id, user)), {
      auth: true,
      params: IdParams,
      response: { 200: 'ProjectAssetDetail', ...errors(404) },
      detail: { summary: 'One project asset', deprecated: legacy },
    })
    // The routes below take a body (and DELETE reads any it is sent the same way).
    .onParse(ctx.parseBody)
    .post(
      '/',
      async ({ body, query, user, set }) => {
        const share = query.share_linked_assets === '1' || query.share_linked_assets === 'true'
        const made =
          body.copy_of === undefined
            ? { row: await service.create(body, user) }
            : await service.copy({ ...body, copy_of: body.copy_of }, share, user)
        set.status = 201
        // A create's 201 names the project it made. A copy's names its task: the body already is
        // the new project (with its id), and what a client does next is follow the copy until the
        // files are there, so the header points at that (as the delete's 202 does); the task is
        // also in the body.
        const project = await ctx.port.run(service.detail(made.row, user))
        if (!('task' in made)) {
          set.headers.location = `/api/projectassets/${made.row.id}/`
          return project
        }
        const task = taskAnswer(made.task)
        set.headers.location = task.url
        return { ...project, task }
      },
      {
        auth: true,
        body: 'ProjectAssetCreate',
        parse: ['json', 'urlencoded', 'formdata'],
        transform: requireOneOf(ProjectAssetCreate, ['production_id', 'production_name']),
        query: CopyQuery,
        response: { 201: 'ProjectAssetCreated', ...errors(...BODY_ERRORS, 403, 409) },
        detail: {
          summary: 'Create a project asset, or copy one (copy_of)',
          deprecated: legacy,
          description:
            'Create: the bundle folder is created on disk if missing; status_asset 6. Copy (copy_of): needs browser.copy_projectasset ' +
            '(and browser.share_production_asset with share_linked_assets=1), read access to the source and write access to the target ' +
            "production; answers 201 with status_asset 0 and is_production false, and copies the files in a task: the answer's task " +
            "member ({id, state, url}; follow it at url, GET /api/tasks/{id}/), which Location names too (a create's Location names the project). " +
            'The copy becomes status 6 and is_production true when complete, or -1 with the reason, leaving no partial folder.',
        },
      },
    )
    .patch(
      '/:id',
      ({ params, body, user }) => ctx.port.run(service.update(params.id, body, user, 'patch')),
      updateHook('patch', legacy, guard),
    )
    .put(
      '/:id',
      ({ params, body, user }) => {
        if (body.name === undefined)
          throw AppError.many(400, [entry(400, 'required', REQUIRED_DETAIL, { pointer: '/name' })])
        return ctx.port.run(service.update(params.id, body, user, 'put'))
      },
      updateHook('put', legacy, guard),
    )
    .delete(
      '/:id',
      // Elysia awaits a handler or not by its source text (http/composed.ts): on SQLite the task is
      // queued in the call and the handler is never awaited; where the port answers promises it
      // awaits them.
      ctx.port.engine === 'sqlite'
        ? ({ params, user, set }: Removing) => {
            const task = accepted(set, ctx.port.run(service.remove(params.id, user)) as QueuedTask)
            return { task }
          }
        : async ({ params, user, set }: Removing) => {
            const task = accepted(set, await ctx.port.run(service.remove(params.id, user)))
            return { task }
          },
      {
        auth: true,
        params: IdParams,
        response: { 202: 'DeleteAccepted', ...errors(403, 404, 409) },
        detail: {
          summary: 'Delete a project asset and its folder',
          deprecated: legacy,
          description:
            'Answers 202 at once with the task that removes the folder ({task: {id, state, url}}, Location: the task; asked again while pending: the same task). Until the bundle folder is removed the record shows date_del and is_production false; then it answers 404 (code does_not_exist on DELETE). Linked media assets stay. A running copy of the project is cancelled first.',
        },
      },
    )

  for (const mode of ['link', 'unlink'] as const) {
    for (const path of LINK_PATHS[mode]) {
      routes = routes.post(
        path,
        ({ params, body, user, request }) => {
          requireJson(request)
          // One handler serves both result shapes; the response model of each route documents its own.
          return ctx.port.run(service.link(params.id, body, user, mode)) as never
        },
        {
          auth: true,
          params: IdParams,
          response: {
            200: mode === 'link' ? 'LinkResult' : 'UnlinkResult',
            400: 'DetailError',
            422: 'DetailError',
            ...errors(403, 404, 409, 413, 415),
          },
          detail: {
            summary: `${mode === 'link' ? 'Link media assets to' : 'Unlink media assets from'} a project`,
            deprecated: legacy || !path.endsWith('asset'),
            requestBody: linkBodyDoc,
            description:
              'JSON only. Without silent_mode the first semantic error (unsupported type, missing or unreadable asset, or for unlink an asset not linked) answers 422 {detail} and nothing changes; with it, such entries are listed in invalid_assets and the rest is done.',
          } as never,
        },
      ) as unknown as typeof routes
    }
  }
  return routes
}
