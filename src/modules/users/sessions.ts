// Sign-ins of the web page (docs/api.md, "Sessions"): a random 256-bit id that the browser holds
// in an HttpOnly cookie, of which only the SHA-256 is stored (as keys are). A session ends when
// it has gone unused for IDLE_MS, when it is signed out, and when its user's password changes or
// a key of theirs is revoked (service.ts deletes the rows in the same transaction). The users
// folder owns the table; no HTTP types here: the cookie is read and written in http/auth.ts and
// modules/session/.
import { randomBytes } from 'node:crypto'
import { afterCommit, committed } from '../../db/aftercommit.ts'
import type { Db } from '../../db/client.ts'
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
 * principalOf: the user as they are now (the users service's cache: a session's request costs
 * one lookup of its row, and the principal only when the auth tables changed).
 */
export function createSessions(
  db: Db,
  principalOf: (userId: number) => Principal | undefined,
  now: () => number = Date.now,
) {
  const client = db.$client
  const insert = client.prepare<unknown, [number, string, string, string]>(
    'INSERT INTO sessions (user_id, id_hash, date_add, last_seen) VALUES (?, ?, ?, ?)',
  )
  const byHash = client.prepare<{ user_id: number; last_seen: string }, [string]>(
    'SELECT user_id, last_seen FROM sessions WHERE id_hash = ?',
  )
  const touch = client.prepare<unknown, [string, string]>('UPDATE sessions SET last_seen = ? WHERE id_hash = ?')
  const remove = client.prepare<unknown, [string]>('DELETE FROM sessions WHERE id_hash = ?')
  const removeIdle = client.prepare<unknown, [string]>('DELETE FROM sessions WHERE last_seen < ?')
  const removeOf = client.prepare<unknown, [number]>('DELETE FROM sessions WHERE user_id = ?')

  const cutoff = (at: number) => isoTimestamp(new Date(at - IDLE_MS))
  const startTx = committed(client, (userId: number, hash: string, at: number) => {
    removeIdle.run(cutoff(at))
    const stamp = isoTimestamp(new Date(at))
    insert.run(userId, hash, stamp, stamp)
  })

  /** The session's row while it has not ended, by the hash of its id. */
  function live(hash: string, at: number) {
    const row = byHash.get(hash)
    return row && row.last_seen >= cutoff(at) ? row : undefined
  }

  return {
    /** A new session of this user: its id, for the cookie (never stored). Sessions that have ended go now. */
    start(userId: number): string {
      const id = randomBytes(32).toString('base64url')
      startTx.immediate(userId, hashSessionId(id), now())
      return id
    },

    /**
     * The user of the session with this id (as the cookie carries it), or undefined when there is
     * no such session or it has ended. A use moves its expiry on: last_seen is written when it is
     * older than TOUCH_EVERY_MS, after the request's read transaction (a GET reads in one,
     * db/client.ts, and must not write inside it), or at once outside one.
     */
    resolve(id: string): Principal | undefined {
      if (!SESSION_ID_PATTERN.test(id)) return undefined
      const hash = hashSessionId(id)
      const at = now()
      const row = live(hash, at)
      if (!row) return undefined
      const user = principalOf(row.user_id)
      if (!user) return undefined
      if (Date.parse(row.last_seen) < at - TOUCH_EVERY_MS) {
        const stamp = isoTimestamp(new Date(at))
        afterCommit(db, () => touch.run(stamp, hash))
      }
      return user
    },

    /**
     * The check made again for a request that lasts (an event stream): the user while the session
     * has not ended, without moving its expiry (an open stream is not a use). Keeps only the hash.
     */
    recheckOf(id: string): () => Principal | undefined {
      const hash = hashSessionId(id)
      return () => {
        const row = live(hash, now())
        return row && principalOf(row.user_id)
      }
    },

    /** Signs out: the session is gone (nothing happens for an id that is none). */
    end(id: string) {
      if (SESSION_ID_PATTERN.test(id)) remove.run(hashSessionId(id))
    },

    /** Every session of the user ends (a new password, a revoked key); run inside the caller's transaction. */
    endAllOf(userId: number): number {
      return removeOf.run(userId).changes
    },
  }
}

export type Sessions = ReturnType<typeof createSessions>
