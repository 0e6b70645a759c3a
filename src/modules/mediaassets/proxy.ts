// POST /api/{audio,image,video}assets/{id}/proxy/ (docs/api.md, docs/media.md "Remaking
// proxies"): queues a new proxy of the asset with the transcoding profile that applies now, and
// answers 202 with its task. The old proxy stays in place until the new one is complete.
import { Elysia, t } from 'elysia'
import type { MediaKind } from '../../db/tables.ts'
import { type ModuleContext } from '../../http/context.ts'
import { andThen } from '../../db/port.ts'
import { IdParams, errors, sharedModels } from '../../http/models.ts'
import type { Proxies } from '../assetimport/proxy.task.ts'
import { TaskRef, taskAnswer } from '../tasks/model.ts'
import { EDIT_CODENAMES, TITLES } from './model.ts'

export const ProxyQueued = t.Object(
  { task: TaskRef },
  {
    description: 'The task that makes the proxy (kind proxy): follow it at task.url',
    examples: [{ task: { id: 31, state: 'queued', url: '/api/tasks/31/' } }],
  },
)

export const remakeProxyModule = (ctx: ModuleContext, proxies: Proxies, kind: MediaKind) =>
  new Elysia({ prefix: `/${kind}assets`, tags: [TITLES[kind]] })
    .use(sharedModels)
    .use(ctx.auth)
    .model({ ProxyQueued })
    .post(
      '/:id/proxy',
      // The task queued through the port: at once on SQLite (the handler stays a plain call), once
      // its promise settles on PostgreSQL.
      ({ params, user, set }) => {
        return andThen(ctx.port.run(proxies.queue(kind, params.id, user)), (queued) => {
          const task = taskAnswer(queued)
          set.status = 202
          set.headers.location = task.url
          return { task }
        })
      },
      {
        auth: true,
        params: IdParams,
        // No body is read (as a task's cancel).
        parse: 'none',
        response: { 202: 'ProxyQueued', ...errors(403, 404, 409) },
        detail: {
          summary: `Make the proxy of a ${TITLES[kind]} again (extension)`,
          description:
            "Queues a task (kind proxy) that makes the proxy anew with the transcoding profile that applies now (the device's transcoding_profile, " +
            'else the default_profile, else the built-in default; docs/media.md) and answers 202 with it ({task: {id, state, url}}, Location: the task; ' +
            'asked again while it waits: the same task). The new proxy is written under a hidden name and replaces the old one only when complete: ' +
            'until then, and after a failed remake, path_proxy and its file stay as they were. No body. ' +
            `Needs superuser or ${EDIT_CODENAMES[kind].change} and write access to the production; 409 when the asset has no file in production (archive-only or offline).`,
          'x-permission': EDIT_CODENAMES[kind].change,
        } as never,
      },
    )
