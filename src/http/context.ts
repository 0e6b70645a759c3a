import type { Db } from '../db/client.ts'
import type { Port } from '../db/port.ts'
import type { PageGuard, authPlugin } from './auth.ts'
import type { createBodyParser } from './body.ts'
import type { List } from './lists.ts'
import type { ApiVersion } from './versioning.ts'
import type { Principal } from '../modules/users/principal.ts'
import type { Users } from '../modules/users/service.ts'

/** What every HTTP module is built from (see app.ts). */
export type ModuleContext = {
  db: Db
  /**
   * The data-access port (db/port.ts) routes run a service's work through: `ctx.port.run(work)`
   * answers the value itself on SQLite and a promise of it on PostgreSQL (see andThen).
   */
  port: Port
  users: Users
  list: List
  auth: ReturnType<typeof authPlugin>
  /**
   * The body parser (http/body.ts), for a module to put before its routes that take a body:
   * `.onParse(ctx.parseBody)`, never on the app. Elysia awaits every route that has a parse
   * hook, a GET too; a GET without one runs without a turn of the microtask queue.
   */
  parseBody: ReturnType<typeof createBodyParser>
  /** The base of the absolute URLs handed out for a request (serve --public-url, else its Host), as lists' Link headers use. */
  baseOf: (request: Request) => string
  /** The API version the request's Accept header selected (http/versioning.ts); only productions differ by it. */
  apiVersion: (request: Request) => ApiVersion
  /**
   * The user the request authenticated as (http/auth.ts, settled before any route runs); for a
   * hook that runs before the `auth` macro resolves `user` (edit.ts updateGuard). Undefined: the
   * `auth` macro answers 401.
   */
  userOf: (request: Request) => Principal | undefined
  /** The client's address ('' in-process), by which failed password checks are slowed down (users/passwords.ts). */
  addressOf: (request: Request) => string
  /** Where the session cookie may come from, and whether it is Secure (http/auth.ts createPageGuard). */
  pageGuard: PageGuard
}
