// The shapes of /api/session/: who is signed in, and the sign-in's body.
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { oneOf } from '../../http/models.ts'

export const SessionUser = t.Object({
  id: Type.Integer(),
  username: t.String(),
  is_superuser: t.Boolean(),
  perms: t.Array(t.String(), {
    description:
      'The permission codenames the user holds (a superuser holds every one), e.g. browser.change_device: may edit and rescan devices',
  }),
  productions: t.Array(t.Object({ id: Type.Integer(), level: oneOf(['read', 'write']) }), {
    description: 'The productions the user may read or write, by id (a superuser: every production, write)',
  }),
})

export const Session = t.Object(
  {
    user: t.Union([SessionUser, t.Null()], {
      description: 'Who the request authenticated as; null: nobody (no cookie, or a session that has ended)',
    }),
    via: t.Optional(
      oneOf(['session', 'key', 'basic'], {
        description: 'How: the session cookie, a key (Token, Bearer) or Basic; absent when nobody',
      }),
    ),
  },
  {
    examples: [
      {
        user: {
          id: 3,
          username: 'ana',
          is_superuser: false,
          perms: ['browser.change_device', 'browser.change_videoasset'],
          productions: [
            { id: 1, level: 'write' },
            { id: 2, level: 'read' },
          ],
        },
        via: 'session',
      },
    ],
  },
)

export const SignIn = t.Object(
  {
    username: t.String({ description: 'The user name' }),
    password: t.String({ description: "The user's password (reelhouse user passwd), or one of the user's keys" }),
  },
  { examples: [{ username: 'ana', password: 'correct horse battery staple' }] },
)

export type SessionAnswer = typeof Session.static
