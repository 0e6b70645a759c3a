// Archive and restore activities (/archiveactivities/, /restoreactivities/): medialoopster moves
// assets to and from an archive (LTO, a P5 archive) through them, and its clients post there.
// Reelhouse has no archive connector: both answer 501 not_implemented in the envelope, saying
// that the feature is not available, rather than the 404 an unknown path gets, which reads
// like a wrong URL. The body is not read (parse 'none'): whatever a client sends, the answer
// is the same, and nothing is done.
import { Elysia } from 'elysia'
import type { ModuleContext } from '../../http/context.ts'
import { notImplemented } from '../../http/errors.ts'
import { errors, sharedModels } from '../../http/models.ts'

/** The detail of both 501s (also the OpenAPI example's). */
export const ARCHIVE_NOT_AVAILABLE =
  'Archiving is not available: Reelhouse has no archive connector, so assets cannot be archived to or restored from an archive. Nothing was done.'

export function archiveModule(ctx: ModuleContext) {
  const refuse = () => {
    throw notImplemented(ARCHIVE_NOT_AVAILABLE)
  }
  const route = (what: string) => ({
    auth: true as const,
    parse: 'none' as const,
    response: { ...errors(501) },
    detail: {
      summary: `${what} (not available)`,
      description:
        'Always 501 not_implemented: Reelhouse has no archive connector. The body is not read; nothing is done.',
    },
  })
  return new Elysia({ tags: ['Archive'] })
    .use(sharedModels)
    .use(ctx.auth)
    .post('/archiveactivities', refuse, route('Archive assets'))
    .post('/restoreactivities', refuse, route('Restore archived assets'))
}
