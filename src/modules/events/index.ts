// GET /api/events/: the live events as Server-Sent Events (docs/api.md, "Events"). The streams
// and who sees what are the events service's (service.ts); this route authenticates like every
// other (the Authorization header only: a key in the URL would land in logs and histories) and
// hands the stream to Bun.
import { Elysia, t } from 'elysia'
import { recheckOf } from '../../http/auth.ts'
import type { ModuleContext } from '../../http/context.ts'
import { errors, sharedModels } from '../../http/models.ts'
import type { Events } from './service.ts'

/**
 * Seconds a stream's connection may stay silent once it has ended (dropped, or the server
 * stopping) before Bun closes it: a client that has stopped reading must not hold its socket.
 * While it runs no timeout applies; its keep-alive comments are its sign of life to proxies.
 */
const ENDED_GRACE_S = 10

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  // No cache and no proxy buffering (nginx holds a proxied answer back by default otherwise).
  'cache-control': 'no-store',
  'x-accel-buffering': 'no',
}

/** An example of the stream as a client reads it (the OpenAPI document's). */
export const STREAM_EXAMPLE = [
  'id: 1767225600000000',
  '',
  'id: 1767225600000001',
  'event: project',
  'data: {"id":8,"action":"created"}',
  '',
  'id: 1767225600000002',
  'event: task',
  'data: {"id":18,"kind":"copy","state":"running","target":{"projectasset":8},"step":"","percent":null,"bytes_done":1048576,"bytes_total":73400320,"files_done":3,"files_total":41,"error":""}',
  '',
  ': keep-alive',
  '',
  'id: 1767225600000003',
  'event: task',
  'data: {"id":18,"kind":"copy","state":"done","target":{"projectasset":8},"step":"","percent":null,"bytes_done":73400320,"bytes_total":73400320,"files_done":41,"files_total":41,"error":""}',
  '',
  'id: 1767225600000004',
  'event: project',
  'data: {"id":8,"action":"copied"}',
  '',
  '',
].join('\n')

export function eventsModule(ctx: ModuleContext, events: Events) {
  return new Elysia({ prefix: '/events', tags: ['Event'] })
    .use(sharedModels)
    .use(ctx.auth)
    .get(
      '/',
      ({ request, user, server }) => {
        // A HEAD gets the headers and no stream: Bun would never read, nor end, one.
        if (request.method === 'HEAD') return new Response(null, { headers: SSE_HEADERS })
        server?.timeout(request, 0)
        const stream = events.stream({
          user,
          recheck: recheckOf(ctx.users, request, user),
          lastEventId: request.headers.get('last-event-id'),
          onEnd: (reason) => {
            if (reason !== 'cancelled') server?.timeout(request, ENDED_GRACE_S)
          },
        })
        return new Response(stream, { headers: SSE_HEADERS })
      },
      {
        auth: true,
        headers: t.Object({
          'last-event-id': t.Optional(
            t.String({
              description:
                'The id of the last event the client has (EventSource sends it when it reconnects): the events after it are sent first, or a reset event when it is no longer held',
            }),
          ),
        }),
        response: {
          200: t.String({
            contentMediaType: 'text/event-stream',
            description:
              'Server-Sent Events, open until the client or the server ends it (docs/api.md, section Events)',
            examples: [STREAM_EXAMPLE],
          }),
          ...errors(),
        },
        detail: {
          summary: 'The live event stream (Server-Sent Events; extension)',
          description:
            'A text/event-stream of what changes, as it commits: `task` (progress and end of copies, deletes, imports, proxies and scans: ' +
            '`{id, kind, state, target, step, percent, bytes_done, bytes_total, files_done, files_total, error}`, at most 4 a second per task, the end always), ' +
            '`asset` (`{type, id, action}`, action created, updated, deleted, offline, online, moved or relinked), `project` (`{id, action}`, ' +
            'action created, copied, updated, deleted, offline, online, linked or unlinked), `importlog` (`{id, asset_path, status}`) and `marker` ' +
            '(`{id, asset, type, action}`, action created, updated or deleted). ' +
            'Only events about records the user can read are sent. Each event has an increasing `id`; a client that reconnects with ' +
            '`Last-Event-ID` gets what it missed from the last 10,000 events, or a `reset` event first when that id is no longer held (reload). ' +
            'A comment line every 15 s keeps proxies from closing a quiet stream; a client that falls more than the held events behind gets ' +
            '`event: dropped` and the end of the stream. The key goes in the Authorization header, never in the URL (a `?key=` is not read). ' +
            'See docs/api.md, section Events.',
        },
      },
    )
}
