// POST /api/asset/import/ (docs/api.md, Import): JSON, or form data with `asset` as JSON text. Nulls
// are taken as absent and every failure of the body is reported at once (schema and rules), in
// a hook that runs before Elysia's own validation; the service does the rest.
import { Type } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import { AppError } from '../../http/errors.ts'
import { BODY_ERRORS, errors, sharedModels } from '../../http/models.ts'
import type { ModuleContext } from '../../http/context.ts'
import { type AssetImportBody, assetImportModels } from './model.ts'
import { dropNulls, normalizeImport, refuseTooManyKeywords, validateImport } from './rules.ts'
import type { ImportResult, Imports } from './service.ts'
import type { Principal } from '../users/principal.ts'
import { TaskRef, taskAnswer } from '../tasks/model.ts'

export const AssetImportResult = t.Object(
  {
    asset_path: t.String({ description: 'The path the request named' }),
    status: t.String({
      description: 'asset_creation_completed, or asset_update_completed for a path an asset of the kind has',
    }),
    warning: t.Record(t.String(), t.String()),
    error: t.String(),
    asset_import_id: Type.Integer({ description: 'The id of the asset' }),
    payload: t.String({ description: 'The request, serialized' }),
    asset_type: t.String({ description: 'videoasset, audioasset or imageasset' }),
    task: t.Optional(
      t.Object(TaskRef.properties, {
        description:
          'The task that moves (move_asset), probes and makes the proxy: follow its step and percent at url (an extension)',
      }),
    ),
  },
  {
    examples: [
      {
        asset_path: '/mnt/media/night-shift/video/A012C003.mov',
        status: 'asset_creation_completed',
        warning: {},
        error: '',
        asset_import_id: 42,
        payload: '{"type":"video",...}',
        asset_type: 'videoasset',
        task: { id: 18, state: 'queued', url: '/api/tasks/18/' },
      },
    ],
  },
)

export const PathRefusal = t.Object(
  { type: t.String(), detail: t.String() },
  {
    description: 'A bad path_file (docs/api.md, section Import); the ImportLog holds the same detail',
    examples: [{ type: 'path_file', detail: 'The path does not lie on any device.' }],
  },
)

export function assetImportModule(ctx: ModuleContext, imports: Imports) {
  /** The request as it came, for the ImportLog's payload. */
  const payloads = new WeakMap<Request, string>()
  /** The import registered through the port: the result itself on SQLite, a promise of it otherwise. */
  const registered = (body: AssetImportBody, user: Principal, request: Request) =>
    ctx.port.run(imports.register(normalizeImport(body), user, payloads.get(request) ?? JSON.stringify(body)))
  type Hooked = { body: AssetImportBody; user: Principal; request: Request; set: { status?: number | string } }
  return new Elysia({ prefix: '/asset', tags: ['Import'] })
    .use(sharedModels)
    .use(ctx.auth)
    .model({ ...assetImportModels, AssetImportResult, PathRefusal })
    .onParse(ctx.parseBody)
    .post(
      '/import',
      // Elysia awaits a handler or not by its source text (http/composed.ts): on SQLite the import
      // is registered in the call and the handler is never awaited; where the port answers
      // promises it awaits them.
      ctx.port.engine === 'sqlite'
        ? ({ body, user, request, set }: Hooked) => {
            const { task, ...result } = registered(body, user, request) as ImportResult
            set.status = 201
            return { ...result, task: taskAnswer(task) }
          }
        : async ({ body, user, request, set }: Hooked) => {
            const { task, ...result } = await registered(body, user, request)
            set.status = 201
            return { ...result, task: taskAnswer(task) }
          },
      {
        auth: true,
        body: 'AssetImport',
        parse: ['json', 'urlencoded', 'formdata'],
        transform(c) {
          // The cap first: a body of 40,000 categories is refused before it is copied and walked.
          refuseTooManyKeywords((c.body as { asset?: { keywords?: unknown } } | undefined)?.asset?.keywords)
          payloads.set(c.request, JSON.stringify(c.body))
          c.body = dropNulls(c.body)
          const failures = validateImport(c.body)
          if (failures.length) throw AppError.many(400, failures)
        },
        response: { 201: 'AssetImportResult', 406: 'PathRefusal', ...errors(...BODY_ERRORS, 403) },
        detail: {
          summary: 'Import a file as an asset',
          description:
            'Registers the asset (201 once the asset and its ImportLog exist), then moves (move_asset), probes and makes a proxy in a task ' +
            "(the answer's task: {id, state, url}; GET it for its step, move/probe/proxy, and percent) that writes its progress into the ImportLog: import_completed, or import_failed with error. A bad path_file " +
            "(also the service's own output: a file in a proxy_root, an asset's path_proxy, the data folder, .reelhouse-* names; " +
            "a file never imported: an editing application's cache, AppleDouble, a pattern of the production's ignore_patterns; " +
            "a camera card's file that is no clip's essence) " +
            'answers 406 {type, detail} and leaves an ImportLog. A file in the folders or the catalogue of a production you cannot write to is 403; ' +
            "one another production catalogues is never moved (400 at /move_asset), nor is a camera card's clip (a card moves whole, docs/cards.md). Importing a path an asset of the kind already has updates that asset.",
        },
      },
    )
}
