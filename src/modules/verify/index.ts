// POST /api/{audio,image,video}assets/{id}/verify/ and /api/projectassets/{id}/verify/ (docs/api.md,
// Media assets and Project assets, "Verifying the files"): queues a task (kind verify) that checks
// the asset's files against their ASC MHL history, or the hash the asset keeps, and answers 202
// with it, as a proxy remake and a shot detection answer. The work and the rules are service.ts's.
import { Elysia, t } from 'elysia'
import { type ModuleContext } from '../../http/context.ts'
import { andThen } from '../../db/port.ts'
import { IdParams, errors, sharedModels } from '../../http/models.ts'
import { TaskRef, taskAnswer } from '../tasks/model.ts'
import { VERIFY_CODENAMES, VERIFY_TITLES, type Verify, type VerifyKind } from './service.ts'

export const VerifyQueued = t.Object(
  { task: TaskRef },
  {
    description: 'The task that verifies the files (kind verify): follow it at task.url; its result says what differs',
    examples: [{ task: { id: 33, state: 'queued', url: '/api/tasks/33/' } }],
  },
)

export const verifyModule = (ctx: ModuleContext, verify: Verify, kind: VerifyKind) => {
  const codename = VERIFY_CODENAMES[kind]
  const what =
    kind === 'project'
      ? 'every file of the project folder (bundle_root) against the nearest ASC MHL history at the folder or above it on its device (a project copy writes one at its root)'
      : "the asset's file, and its archive copy when it has one, each against the nearest ASC MHL history above it that records it (a card's, the archive's; never above its device's folder), else against the hash the asset keeps (technical.hashes.xxh64)"
  return new Elysia({
    prefix: kind === 'project' ? '/projectassets' : `/${kind}assets`,
    tags: [VERIFY_TITLES[kind]],
  })
    .use(sharedModels)
    .use(ctx.auth)
    .model({ VerifyQueued })
    .post(
      '/:id/verify',
      ({ params, user, set }) =>
        andThen(ctx.port.run(verify.queue(kind, params.id, user)), (row) => {
          const task = taskAnswer(row)
          set.status = 202
          set.headers.location = task.url
          return { task }
        }),
      {
        auth: true,
        params: IdParams,
        // No body is read (as a proxy remake).
        parse: 'none',
        response: { 202: 'VerifyQueued', ...errors(403, 404, 409) },
        detail: {
          summary: `Verify the files of a ${VERIFY_TITLES[kind]} (extension)`,
          description:
            `Queues a task (kind verify) that hashes (xxh64) ${what}, and answers 202 with it ({task: {id, state, url}}, Location: the task; asked again while it waits: the same task). ` +
            "Nothing is written on disk. The task's result: verified (a count), failed ([{path, recorded, found}]), missing and new (paths), history (the ascmhl folder, or null), xxh64 (the main file's hash); " +
            'a media asset that kept no hash keeps the one found once its file verified against a history (kept: true). ' +
            `Needs superuser or ${codename} and write access to the production; 409 when there is no file to read. See docs/api.md, section ${kind === 'project' ? 'Project assets' : 'Media assets'}.`,
          'x-permission': codename,
        } as never,
      },
    )
}
