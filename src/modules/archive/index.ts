// The archive and restore activities, /archiveactivities/ and /restoreactivities/
// (docs/api.md, Archive and restore): medialoopster's clients post a list of assets (or one) to
// archive to, or restore from, an archive device. Each asset gets one task (kind archive or
// restore), answered 202 with the tasks; the work and the rules are in service.ts.
import { Elysia, t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { type ModuleContext } from '../../http/context.ts'
import { andThen } from '../../db/port.ts'
import { errors, sharedModels } from '../../http/models.ts'
import { TaskRef, taskAnswer } from '../tasks/model.ts'
import { ARCHIVE_CODENAME, type Archive } from './service.ts'

const ArchiveItem = t.Object({
  content_type_id: Type.Integer({
    description: 'The kind of the asset (GET /api/contenttypes/): videoasset, audioasset or imageasset',
  }),
  asset_id: Type.Integer(),
  archive_type: t.String({ description: 'archive_std, archive_ltfs, or archive_awps (501: needs Archiware P5)' }),
  archive_connector: t.Union([Type.Integer(), t.String()], {
    description: 'The archive device (is_archive true), by id or by name',
  }),
  purge: t.Optional(
    t.Boolean({
      description: 'Remove the online file once its checked archive copy exists: the asset becomes archive-only',
    }),
  ),
})

const RestoreItem = t.Object({
  content_type_id: Type.Integer(),
  asset_id: Type.Integer(),
  path: t.Optional(
    t.String({
      description: "Where to restore the file, inside the production's storage_root (default: original_path)",
    }),
  ),
})

export const ArchiveBody = t.Union([ArchiveItem, t.Array(ArchiveItem, { minItems: 1 })], {
  description: 'One asset to archive, or a list of them',
  examples: [[{ content_type_id: 4, asset_id: 7, archive_type: 'archive_std', archive_connector: 'vault' }]],
})
export const RestoreBody = t.Union([RestoreItem, t.Array(RestoreItem, { minItems: 1 })], {
  description: 'One asset to restore, or a list of them',
  examples: [[{ content_type_id: 4, asset_id: 7 }]],
})
export const ActivitiesQueued = t.Object(
  { tasks: t.Array(TaskRef) },
  {
    description: 'The tasks queued, one per asset, in the order they run: follow each at its url',
    examples: [{ tasks: [{ id: 41, state: 'queued', url: '/api/tasks/41/' }] }],
  },
)

const listOf = <T>(body: T | T[]): T[] => (Array.isArray(body) ? body : [body])

export function archiveModule(ctx: ModuleContext, archive: Archive) {
  const answer = (
    tasks: { id: number; state: 'queued' | 'running' | 'done' | 'failed' }[],
    set: { status?: unknown },
  ) => {
    set.status = 202
    return { tasks: tasks.map(taskAnswer) }
  }
  return new Elysia({ tags: ['Archive'] })
    .use(sharedModels)
    .use(ctx.auth)
    .model({ ActivitiesQueued, ArchiveBody, RestoreBody })
    .onParse(ctx.parseBody)
    .post(
      '/archiveactivities',
      ({ body, user, set }) =>
        andThen(ctx.port.run(archive.archive(listOf(body), user)), (tasks) => answer(tasks, set)),
      {
        auth: true,
        body: 'ArchiveBody',
        response: { 202: 'ActivitiesQueued', ...errors(400, 403, 409, 413, 415, 501) },
        detail: {
          summary: 'Archive assets to an archive device',
          'x-json-body': 'ArchiveBody',
          description:
            'Queues one task (kind archive) per asset: the essence is copied, checked by read-back, to <device>/<production codename>/<path relative to its device>, ' +
            'never overwriting, with an ASC MHL generation in <device>/<production codename>/ascmhl/; then is_archive is true and archive_details is set. ' +
            'purge: true removes the online file afterwards (is_production false). archive_awps answers 501 (needs Archiware P5). ' +
            `Needs superuser or ${ARCHIVE_CODENAME} and write access to the production.`,
          'x-permission': ARCHIVE_CODENAME,
        } as never,
      },
    )
    .post(
      '/restoreactivities',
      ({ body, user, set }) =>
        andThen(ctx.port.run(archive.restore(listOf(body), user)), (tasks) => answer(tasks, set)),
      {
        auth: true,
        body: 'RestoreBody',
        response: { 202: 'ActivitiesQueued', ...errors(400, 403, 413, 415) },
        detail: {
          summary: 'Restore archived assets',
          'x-json-body': 'RestoreBody',
          description:
            'Queues one task (kind restore) per asset: the file is copied, checked, from archive_details.archive_handle to original_path (or path), never overwriting; ' +
            'then is_production is true. Restores from an LTFS tape are queued in the order of the files on the tape (the ltfs.startblock attribute), else by path. ' +
            `Needs superuser or ${ARCHIVE_CODENAME} and write access to the production.`,
          'x-permission': ARCHIVE_CODENAME,
        } as never,
      },
    )
}
