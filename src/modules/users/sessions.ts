// Sign-ins of the web page (docs/api.md, "Sessions"): a random 256-bit id that the browser holds
// in an HttpOnly cookie, of which only the SHA-256 is stored (as keys are). A session ends when
// it has gone unused for IDLE_MS, when it is signed out, and when its user's password changes or
// a key of theirs is revoked (service.ts deletes the rows in the same transaction). The users
// folder owns the table; no HTTP types here: the cookie is read and written in http/auth.ts and
// modules/session/.
import { randomBytes } from 'node:crypto'
import { eq, lt, sql } from 'drizzle-orm'
import { type Port, type Work, afterCommit, oneOf, runOf, statement, tx } from '../../db/port.ts'
import { sessions } from '../../db/tables.ts'
import { isoTimestamp } from '../../util/time.ts'
import type { Principal } from './principal.ts'

/** A session unused this long has ended (sliding: every use moves it on). */
export const IDLE_MS = 12 * 3_600_000
/**
 * last_seen is written at most this often per session: a page that makes a request a second
 * writes the catalogue once a minute, not once a request. The expiry is then up to a minute early.
 */
export const TOUCH_EVERY_MS = 60_000
/** A session id as the cookie carries it: 32 random bytes in base64url, without padding. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/

export const hashSessionId = (id: string) => Bun.SHA256.hash(id, 'hex')

export type SessionStart = { id: string; user: Principal }

/**
 * principalOf: the user as they are now (the users service's cache on SQLite: a session's request
 * costs one lookup of its row, and the principal only when the auth tables changed). The checks
 * made for a request (resolve, recheckOf) answer through `port` at once: the value itself on
 * SQLite, a promise of it on PostgreSQL; the rest is work for the caller to run.
 */
export function createSessions(
  port: Port,
  principalOf: (userId: number) => Work<Principal | undefined>,
  now: () => number = Date.now,
) {
  const db = port.db
  // Built once (prepared on SQLite): the look-up runs for every request with the cookie.
  const insert = statement(() =>
    db.insert(sessions).values({
      user_id: sql.placeholder('user'),
      id_hash: sql.placeholder('hash'),
      date_add: sql.placeholder('at'),
      last_seen: sql.placeholder('at'),
    }),
  )
  const byHash = statement(() =>
    db
      .select({ user_id: sessions.user_id, last_seen: sessions.last_seen })
      .from(sessions)
      .where(eq(sessions.id_hash, sql.placeholder('hash'))),
  )
  const touch = statement(() =>
    db
      .update(sessions)
      .set({ last_seen: sql`${sql.placeholder('at')}` })
      .where(eq(sessions.id_hash, sql.placeholder('hash'))),
  )
  const remove = statement(() => db.delete(sessions).where(eq(sessions.id_hash, sql.placeholder('hash'))))
  const removeIdle = statement(() => db.delete(sessions).where(lt(sessions.last_seen, sql.placeholder('cutoff'))))
  const removeOf = statement(() => db.delete(sessions).where(eq(sessions.user_id, sql.placeholder('user'))))

  const cutoff = (at: number) => isoTimestamp(new Date(at - IDLE_MS))

  /** The session's row while it has not ended, by the hash of its id. */
  function* live(hash: string, at: number) {
    const row = yield* oneOf(byHash, { hash })
    return row && row.last_seen >= cutoff(at) ? row : undefined
  }

  function* resolved(hash: string, at: number): Work<Principal | undefined> {
    const row = yield* live(hash, at)
    if (!row) return undefined
    const user = yield* principalOf(row.user_id)
    if (!user) return undefined
    if (Date.parse(row.last_seen) < at - TOUCH_EVERY_MS) {
      const values = { at: isoTimestamp(new Date(at)), hash }
      // On SQLite a GET reads in one read transaction (db/client.ts readSnapshotOf), which must
      // not write: the touch waits for its end (at once outside one). PostgreSQL runs no
      // transaction around a request's check, and the write is part of it (once a minute a session).
      if (port.engine === 'sqlite') yield* afterCommit(() => port.run(runOf(touch, values)))
      else yield* runOf(touch, values)
    }
    return user
  }

  function* rechecked(hash: string, at: number): Work<Principal | undefined> {
    const row = yield* live(hash, at)
    return row && (yield* principalOf(row.user_id))
  }

  return {
    /** A new session of this user: its id, for the cookie (never stored). Sessions that have ended go now. */
    *start(userId: number): Work<string> {
      const id = randomBytes(32).toString('base64url')
      const at = now()
      yield* tx(function* () {
        yield* runOf(removeIdle, { cutoff: cutoff(at) })
        yield* runOf(insert, { user: userId, hash: hashSessionId(id), at: isoTimestamp(new Date(at)) })
      })
      return id
    },

    /**
     * The user of the session with this id (as the cookie carries it), or undefined when there is
     * no such session or it has ended. A use moves its expiry on: last_seen is written when it is
     * older than TOUCH_EVERY_MS, after the request's read transaction (a GET reads in one on
     * SQLite, db/client.ts, and must not write inside it), or at once outside one.
     */
    resolve(id: string): Principal | undefined | Promise<Principal | undefined> {
      if (!SESSION_ID_PATTERN.test(id)) return undefined
      return port.run(resolved(hashSessionId(id), now()))
    },

    /**
     * The check made again for a request that lasts (an event stream): the user while the session
     * has not ended, without moving its expiry (an open stream is not a use). Keeps only the hash.
     */
    recheckOf(id: string): () => Principal | undefined | Promise<Principal | undefined> {
      const hash = hashSessionId(id)
      return () => port.run(rechecked(hash, now()))
    },

    /** Signs out: the session is gone (nothing happens for an id that is none). */
    *end(id: string): Work<void> {
      if (SESSION_ID_PATTERN.test(id)) yield* runOf(remove, { hash: hashSessionId(id) })
    },

    /** Every session of the user ends (a new password, a revoked key); run inside the caller's transaction. */
    *endAllOf(userId: number): Work<number> {
      return (yield* runOf(removeOf, { user: userId })).changes
    },
  }
}

export type Sessions = ReturnType<typeof createSessions>
