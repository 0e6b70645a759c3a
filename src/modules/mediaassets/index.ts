// The media asset routes (/audioassets/, /imageassets/, /videoassets/): one controller per kind.
import { sql } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import type { Work } from '../../db/port.ts'
import { type MediaKind, mediaAssets } from '../../db/tables.ts'
import { type UpdateMode, editRoutes, refuseReadOnly } from '../../http/edit.ts'
import { noSuchRecord, notFound } from '../../http/errors.ts'
import { flagFilter, literalEq, optionalEq, resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import type { Principal } from '../users/service.ts'
import { canReadAsset, mediaReadableBy } from '../users/access.ts'
import {
  AssetListFilters,
  EDIT_CODENAMES,
  MediaAssetListed,
  MediaAssetCreate,
  MediaAssetDetail,
  MediaAssetUpdate,
  TITLES,
  MediaListFilters,
  assetListWhere,
  listColumns,
  listColumnsWithPictures,
  mediaFacetWhere,
  mediaListWhere,
  type MediaRow,
  mediaToApi,
} from './model.ts'
import { mediaOrderBy } from './facets.ts'
import type { MediaAssets } from './service.ts'
import { PICTURE_READ_ONLY, completeListRow, pictureFields } from './pictures.ts'
import { refuseTooManyKeywords } from '../assetimport/rules.ts'

/** openTasks: the open (queued or running) tasks working on a target (tasks/runner.ts). */
export const mediaAssetsModule = (
  ctx: ModuleContext,
  service: MediaAssets,
  kind: MediaKind,
  openTasks: (target: Record<string, number>) => Work<number[]>,
) => {
  /**
   * The single-record answer with the picture fields (which look at the proxy folder), for a user
   * who can read the asset, else the 404 of a record that is not there. The GET's visibility is
   * asked here, where it may read the asset's shares through the port: the resource's canRead,
   * which cannot, only asks the kind.
   */
  function* recordAnswer(row: MediaRow, user: Principal, request: Request) {
    if (!(yield* canReadAsset(ctx.db, user, row))) throw notFound(noSuchRecord(TITLES[kind]))
    return { ...(yield* service.detail(row)), ...(yield* pictureFields(service, kind, row, ctx.baseOf(request))) }
  }

  /** PATCH and PUT: the update, with the picture fields as the record answers them. */
  function* update(
    id: number,
    body: typeof MediaAssetUpdate.static,
    user: Principal,
    mode: UpdateMode,
    request: Request,
  ): Work<unknown> {
    // The picture fields are the service's: one sent back as it is read is accepted, another value refused.
    const row = yield* service.byId(id)
    const pictures = row && row.kind === kind && (yield* canReadAsset(ctx.db, user, row))
    const current = pictures ? yield* pictureFields(service, kind, row, ctx.baseOf(request)) : undefined
    if (current) refuseReadOnly(body as Record<string, unknown>, current, PICTURE_READ_ONLY)
    const updated = yield* service.update(kind, id, body, user, mode)
    return {
      ...updated,
      ...(current ?? (yield* pictureFields(service, kind, (yield* service.byId(id))!, ctx.baseOf(request)))),
    }
  }

  return new Elysia()
    .use(
      resourceRoutes(ctx, {
        prefix: `/${kind}assets`,
        name: TITLES[kind],
        table: mediaAssets,
        models: {
          [TITLES[kind]]: MediaAssetListed,
          [`${TITLES[kind]}Create`]: MediaAssetCreate,
          [`${TITLES[kind]}Detail`]: MediaAssetDetail,
        },
        toApi: mediaToApi,
        listRecord: listColumns,
        // The picture fields only when asked: api.md's list record stays as clients compare it.
        listVariant: (query, request) =>
          query.pictures === 'true' || query.pictures === '1'
            ? { columns: listColumnsWithPictures, complete: completeListRow(kind, ctx.baseOf(request)) }
            : undefined,
        filters: t.Object({
          path_file: t.Optional(t.String({ description: 'Only the asset with this path_file' })),
          ...AssetListFilters,
          ...MediaListFilters,
          pictures: flagFilter(
            "Each record also carries the picture fields (true, 1): poster_url, thumbnail_url, path_thumbnail, is_proxy_available (a proxy is recorded), and a video's strip_url, made of the catalogue without a look at the disk",
          ),
        }),
        where: (query, user) => {
          const [production, ...flags] = assetListWhere(mediaAssets, query)
          const [device, approval] = mediaListWhere(mediaAssets, query)
          const facets = mediaFacetWhere(kind, query)
          const byPath = query.path_file !== undefined
          const ordered = query.ordering !== undefined && query.ordering !== 'id' && query.ordering !== '-id'
          return [
            literalEq(mediaAssets.kind, kind),
            optionalEq(mediaAssets.path_file, query.path_file),
            // With a path, the path index finds the few assets there; `+production` and `+device` keep
            // SQLite from walking the production's or the device's index instead (the path index is
            // not unique: offline assets may share a path, so the planner no longer knows a path is one row).
            // Likewise with a facet or an order other than id: the facet's or the order's index
            // (db/facets.ts, schema.ts) holds both columns, so that a rare codec of a large production
            // is found there, and a page by name is read in order, without reading and sorting
            // every asset of the production.
            production && (byPath || facets.length || ordered)
              ? sql`+${mediaAssets.production} = ${Number(query.production)}`
              : production,
            device && (byPath || facets.length || ordered)
              ? sql`+${mediaAssets.device} = ${Number(query.device)}`
              : device,
            ...flags,
            approval,
            ...facets,
            mediaReadableBy(user),
          ]
        },
        order: (query) => mediaOrderBy(kind, query.ordering),
        listDescription:
          'Ordered by id, or by ?ordering= (name, date_add, duration, timecode; - for descending; ties by id). Filters combine: ' +
          'path_file, production, is_archive, is_production, device, status_approval, and the technical facets codec, width, height, ' +
          'resolution (1920x1080), fps (within 0.01), duration_min and duration_max (seconds), timecode_from and timecode_to ' +
          '(the start timecode, HH:MM:SS:FF) and audio_channels. Without limit the whole list is streamed. X-Total-Count holds the number of matching records. ' +
          'Example: ?codec=prores&resolution=1920x1080&fps=23.976&ordering=-date_add&limit=50.',
        byId: (id) => ctx.port.run(service.byIdWithDetails(id)),
        canRead: (row) => row.kind === kind,
        // The value itself on SQLite (the GET stays a plain call there), a promise on PostgreSQL.
        detail: (row, user, _version, request) => ctx.port.run(recordAnswer(row, user, request)),
        create: {
          body: MediaAssetCreate,
          status: 201,
          run: (body, user) => ctx.port.run(service.create(kind, body, user)),
          description: `Registers an existing ${kind} file without the import pipeline. Needs write access to the production.`,
        },
      }),
    )
    .use(
      editRoutes(ctx, {
        prefix: `/${kind}assets`,
        name: TITLES[kind],
        answer: `${TITLES[kind]}Detail`,
        body: MediaAssetUpdate,
        whole: ['name'],
        codenames: EDIT_CODENAMES[kind],
        update: (id, body, user, mode, request) => ctx.port.run(update(id, body, user, mode, request)),
        find: (id, user) => ctx.port.run(service.find(kind, id, user)),
        // The import's cap on keywords, asked before a body of thousands of them is cleaned.
        refuse: (body) =>
          refuseTooManyKeywords((body as { keywords?: unknown } | null | undefined)?.keywords, '/keywords'),
        remove: (id, user) => ctx.port.run(service.remove(kind, id, user, openTasks)),
        notes: {
          update:
            'Needs write access to the production too. Writable: name, description, status_approval (0 or 1), date_crt, date_add and date_del ' +
            '(the import\'s date forms, e.g. "2031-01-01"; null clears date_crt and date_del), is_archive, meta_field_store (validated as on ' +
            'import; PATCH merges keys and a null value removes one, PUT replaces the store) and keywords ({category: [keyword]}; PATCH replaces ' +
            'the categories given, null or [] removes one; PUT replaces all; as on import, at most 1,000 categories and keywords in all, each ' +
            'category counting one and each keyword one, names of 1 to 255 characters). date_mod changes on every update. path_file is not edited in place: ' +
            'a new path is a move (400 invalid saying so), which the watcher sees or an import with move_asset makes.',
          delete:
            'Needs write access to the production too. Removes the record with its project links, keywords and shares, and its proxy file and pictures when ' +
            "they lie inside the production's proxy_root. The essence (path_file) is never touched: removing files is a project delete. The " +
            'watcher does not import the file again (by path or identity); an explicit import does. allow_partial=true is accepted and changes ' +
            'nothing. 409 conflict while an import task works on the asset.',
        },
      }),
    )
}
