// /api/session/ (docs/api.md, "Sessions"): the web page signs in with a user name and a password
// or key (POST), learns who is signed in (GET, which never answers 401 for want of credentials:
// the page asks it before anyone has signed in), and signs out (DELETE). The cookie rules, and
// the check that a request with the cookie comes from our own page, are http/auth.ts's.
import { Elysia, t } from 'elysia'
import {
  clearedSessionCookies,
  credentialsOf,
  hasSessionCookie,
  sessionIdsOf,
  signInFailed,
  signedInCookies,
} from '../../http/auth.ts'
import { type Work, allOf, statement } from '../../db/port.ts'
import { productions } from '../../db/tables.ts'
import { type ModuleContext } from '../../http/context.ts'
import { andThen } from '../../db/port.ts'
import { BODY_ERRORS, errors, sharedModels } from '../../http/models.ts'
import { CODENAMES, type Principal } from '../users/service.ts'
import { Session, type SessionAnswer, SignIn } from './model.ts'

const EVERY_CODENAME = Object.keys(CODENAMES).sort()

type Described = NonNullable<SessionAnswer['user']>
/** What a handler sets of its answer (Elysia's `set`). */
type Answering = { headers: Record<string, unknown>; status?: unknown }

export function sessionModule(ctx: ModuleContext) {
  const { users, pageGuard: page } = ctx
  const productionIds = statement(() => ctx.db.select({ id: productions.id }).from(productions).orderBy(productions.id))

  /** The user as the page needs them to decide what to show (a superuser: every production, read here). */
  function* describe(user: Principal): Work<Described> {
    return {
      id: user.id,
      username: user.username,
      is_superuser: user.is_superuser,
      perms: user.is_superuser ? EVERY_CODENAME : [...user.perms].sort(),
      productions: user.is_superuser
        ? (yield* allOf(productionIds)).map(({ id }) => ({ id, level: 'write' as const }))
        : [...user.readable]
            .sort((a, b) => a - b)
            .map((id) => ({ id, level: user.writable.has(id) ? ('write' as const) : ('read' as const) })),
    }
  }

  /** The sessions the browser's cookies named end (a planted one too), and a new one of `user` starts. */
  function* signIn(old: string[], user: Principal): Work<{ id: string; described: Described }> {
    for (const id of old) yield* users.sessions.end(id)
    const id = yield* users.sessions.start(user.id)
    return { id, described: yield* describe(user) }
  }

  function* endEach(ids: string[]): Work<void> {
    for (const id of ids) yield* users.sessions.end(id)
  }

  /** Signs out (DELETE): a value, or a promise where the port answers promises. */
  function signOut(request: Request, set: Answering) {
    if (!hasSessionCookie(request)) {
      set.status = 204
      return
    }
    // Another page may not sign the user out either.
    page.check(request)
    const secure = page.secure(request)
    return andThen(ctx.port.run(endEach(sessionIdsOf(request, secure))), () => {
      set.headers['set-cookie'] = clearedSessionCookies(secure)
      set.status = 204
    })
  }

  // Elysia awaits a handler or not by its source text (http/composed.ts: an `async`, or a call's
  // result returned, counts): on SQLite the port answers at once and these handlers return no
  // call's result; where it answers promises they are async.
  const sqlite = ctx.port.engine === 'sqlite'

  return new Elysia({ prefix: '/session', tags: ['Session'] })
    .use(sharedModels)
    .use(ctx.auth)
    .model({ Session, SignIn })
    .get(
      '/',
      sqlite
        ? ({ user, request, set }) => {
            set.headers['cache-control'] = 'no-store'
            if (user) return { user: ctx.port.run(describe(user)) as Described, via: credentialsOf(request) }
            // Cookies of no live session, or of more than one (the hook took none): the browser forgets them.
            if (hasSessionCookie(request)) set.headers['set-cookie'] = clearedSessionCookies(page.secure(request))
            return { user: null }
          }
        : async ({ user, request, set }) => {
            set.headers['cache-control'] = 'no-store'
            if (user) return { user: await ctx.port.run(describe(user)), via: credentialsOf(request) }
            if (hasSessionCookie(request)) set.headers['set-cookie'] = clearedSessionCookies(page.secure(request))
            return { user: null }
          },
      {
        maybeAuth: true,
        response: { 200: 'Session', ...errors(403) },
        detail: {
          summary: 'Who is signed in (extension)',
          description:
            'Answers 200 with the user the request authenticated as (by the session cookie, a key or Basic) and how, or `{"user": null}` when ' +
            'it carries no credentials, its session has ended, or its cookies name more than one live session (the cookie is then removed at ' +
            '/, /api and /api/): never a 401 for want of credentials, so a page ' +
            'can ask before anyone signs in. A malformed, unknown or revoked key or failed Basic is 401 as everywhere; the cookie sent from ' +
            "another page than this server's is 403 (docs/api.md, section Sessions).",
        },
      },
    )
    .onParse(ctx.parseBody)
    .post(
      '/',
      async ({ body, request, set }) => {
        // Against a page of another site signing this browser into an account of its choosing.
        page.check(request)
        // The check of Basic, slowed down the same way and counted in the same failures (users/passwords.ts).
        const user = await users.authenticateBasic(body.username, body.password, ctx.addressOf(request))
        if (!user) throw signInFailed()
        // The sessions the browser's cookies named end (a planted one too), and the answer removes
        // every other place of the cookie, where another page of this host could have set one.
        const secure = page.secure(request)
        return andThen(ctx.port.run(signIn(sessionIdsOf(request, secure), user)), ({ id, described }) => {
          set.headers['set-cookie'] = signedInCookies(id, secure)
          set.headers['cache-control'] = 'no-store'
          return { user: described, via: 'session' as const }
        })
      },
      {
        body: 'SignIn',
        parse: ['json', 'urlencoded', 'formdata'],
        response: { 200: 'Session', ...errors(...BODY_ERRORS, 403) },
        detail: {
          summary: 'Sign in (extension)',
          description:
            "The web page's sign-in: `username` and `password`, where the password may also be one of the user's keys (form fields of these " +
            'names, so password managers fill them in; JSON works too). Answers 200 with who is signed in and sets the cookie ' +
            '`reelhouse_session` (HttpOnly, SameSite=Strict, Path=/), over https `__Host-reelhouse_session` (the same and Secure): a random ' +
            '256-bit id of which only the SHA-256 is stored. Further Set-Cookie headers remove the cookie at /api and /api/ (and over https ' +
            "the plain name at /), where a page on another port of this host could have planted one, and the sessions the request's cookies " +
            "named end. The session ends after 12 hours unused, on sign-out, and when the user's password changes or a key " +
            'of theirs is revoked. Wrong credentials: 401 authentication_failed, the same answer and the same slow-down as Basic. A sign-in ' +
            "sent from another page than this server's: 403. The cookie then authenticates every request of this server's own page " +
            '(docs/api.md, section Sessions).',
          security: [],
        } as never,
      },
    )
    .delete(
      '/',
      sqlite
        ? ({ request, set }) => {
            signOut(request, set)
          }
        : async ({ request, set }) => {
            await signOut(request, set)
          },
      {
        maybeAuth: true,
        response: { 204: t.Void({ description: 'Signed out' }), ...errors(403) },
        detail: {
          summary: 'Sign out (extension)',
          description:
            "Ends the sessions the cookies name and removes the cookie (at /, /api and /api/); 204 with no body, also when there was no session (signing out twice). From another page than this server's: 403, and the session goes on.",
        },
      },
    )
}
