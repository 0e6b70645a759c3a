// Shots and sequences of a video asset (/videoassets/{id}/shots/ and /sequences/), which
// medialoopster makes by shot detection and clients such as the published Python client read.
// Reelhouse detects no shots yet: both answer an empty list, so that a client's loop over them
// runs through, and a 404 for an asset that does not exist or that the user cannot read, as the
// asset's own route does. The day detection comes, these routes answer what it found.
import { Elysia, t } from 'elysia'
import type { ModuleContext } from '../../http/context.ts'
import { noSuchRecord, notFound } from '../../http/errors.ts'
import { IdParams, errors, sharedModels } from '../../http/models.ts'
import { canReadAsset } from '../users/access.ts'
import type { MediaAssets } from './service.ts'
import { TITLES } from './model.ts'

const NONE_YET = 'Always empty: Reelhouse has no shot detection yet (docs/api.md, Media assets).'

export function videoShotsModule(ctx: ModuleContext, service: MediaAssets) {
  const name = TITLES.video
  /** The asset must be a video asset the user can read, else 404 as GET /videoassets/{id}/ answers. */
  const readable = (id: number, user: Parameters<typeof canReadAsset>[1]) => {
    const row = service.byId(id)
    if (!row || row.kind !== 'video' || !canReadAsset(ctx.db, user, row)) throw notFound(noSuchRecord(name))
    return [] as never[]
  }
  const route = (what: 'shots' | 'sequences') => ({
    auth: true as const,
    params: IdParams,
    response: { 200: t.Array(t.Unknown(), { maxItems: 0, description: NONE_YET, examples: [[]] }), ...errors(404) },
    detail: {
      summary: `The ${what} of a video asset`,
      description: `An empty list until Reelhouse detects ${what} (medialoopster makes them by shot detection); 404 when the video asset does not exist or cannot be read.`,
    },
  })
  return new Elysia({ prefix: '/videoassets', tags: [name] })
    .use(sharedModels)
    .use(ctx.auth)
    .get('/:id/shots', ({ params, user }) => readable(params.id, user), route('shots'))
    .get('/:id/sequences', ({ params, user }) => readable(params.id, user), route('sequences'))
}
