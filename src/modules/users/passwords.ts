// HTTP Basic's check of a user name and a secret: one of that user's keys, or their password.
// A key is looked up by its hash, as for Token. A password costs an Argon2id verification
// (about 0.1 s of a core, off the main thread), so a success is remembered for a while, and a
// name that keeps failing is slowed down. No HTTP types here: the header is read in http/auth.ts.
import { createHash, randomBytes } from 'node:crypto'
import type { Principal } from './service.ts'

/** How long a verified (user, password) is taken without Argon2 again. */
export const REMEMBER_MS = 5 * 60_000
/** Verified checks remembered at most: enough for every client of a team, small in memory (~1 MB). */
const MAX_REMEMBERED = 10_000
/** Failures of one name allowed at full speed... */
export const FREE_FAILURES = 10
/** ...until this long passes without another failure of that name... */
export const FAILURE_WINDOW_MS = 60_000
/** ...and meanwhile each further attempt for that name gets a turn this long after the previous one. */
export const SLOW_DOWN_MS = 1000
/**
 * An attempt whose turn would come later than this is refused at once, unverified: a flood of
 * attempts for one name then costs neither a pending request each for minutes nor Argon2.
 */
const MAX_BACKLOG_MS = 30_000
/** Names tracked at most (the attacker chooses them): ~3 MB. */
const MAX_TRACKED = 10_000

export const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: 'argon2id' })

/** A user as Basic needs them: who they are, and their password's hash if they have one. */
export type Candidate = { id: number; username: string; is_superuser: boolean; password_hash: string | null }

export type PasswordOptions = {
  /** Argon2 verification (default Bun.password.verify, which runs off the main thread). */
  verify?: (password: string, hash: string) => Promise<boolean>
  /** The slow-down's wait (default an async timer: it never blocks the event loop). */
  wait?: (ms: number) => Promise<void>
  now?: () => number
}

type Failures = { count: number; last: number; turn: number }

export function createPasswordCheck(
  deps: {
    /** What a user name may be: another name is refused at once, and not tracked. */
    names: RegExp
    find(name: string): Candidate | undefined
    /** The holder of a key (undefined for anything else, a key or not). */
    byKey(key: string): Principal | undefined
    principal(user: Omit<Candidate, 'password_hash'>): Principal
  },
  { verify = (password, hash) => Bun.password.verify(password, hash), wait = (ms) => Bun.sleep(ms), now = Date.now }: PasswordOptions = {},
) {
  // Keyed by SHA-256 of user id, stored hash and password: no password is held in memory, and
  // a new password (`user passwd`, also from another process) or `--clear` changes the stored
  // hash, so what was remembered for the old one is never found again.
  const remembered = new Map<string, number>()
  // Least recently failed first (an entry is moved to the end on each failure), so that
  // eviction drops the names no one is trying. Pushing out a name under attack takes
  // MAX_TRACKED failures of other names, each costing its sender an Argon2 verification.
  const failures = new Map<string, Failures>()
  // Unknown users and users without a password are verified against this, so that the time an
  // answer takes does not tell which names exist or have a password.
  let decoy: Promise<string> | undefined

  // Without the hash: a Principal travels further (request logs, tasks) than this file.
  const principal = ({ id, username, is_superuser }: Candidate) => deps.principal({ id, username, is_superuser })

  const rememberKey = (user: Candidate, secret: string) =>
    createHash('sha256').update(`${user.id}\0${user.password_hash}\0${secret}`).digest('hex')

  function remember(key: string) {
    remembered.delete(key)
    remembered.set(key, now() + REMEMBER_MS)
    for (const oldest of remembered.keys()) {
      if (remembered.size <= MAX_REMEMBERED) break
      remembered.delete(oldest)
    }
  }

  /** The name's failures, or undefined once a window has passed without one. */
  function failuresOf(name: string, at: number): Failures | undefined {
    const f = failures.get(name)
    if (f && at - f.last >= FAILURE_WINDOW_MS) {
      failures.delete(name)
      return undefined
    }
    return f
  }

  function fail(name: string) {
    const at = now()
    const f = failuresOf(name, at) ?? { count: 0, last: at, turn: at }
    f.count++
    f.last = at
    failures.delete(name)
    failures.set(name, f)
    // Expired names leave from the front as new failures come; the cap holds in any case.
    for (const [oldest, g] of failures) {
      if (failures.size <= MAX_TRACKED && at - g.last < FAILURE_WINDOW_MS) break
      failures.delete(oldest)
    }
  }

  /** Waits for the name's turn when it is being slowed down; false: the backlog is full, refuse. */
  async function turn(name: string): Promise<boolean> {
    const at = now()
    const f = failuresOf(name, at)
    if (!f || f.count < FREE_FAILURES) return true
    const next = Math.max(at, f.turn) + SLOW_DOWN_MS
    if (next - at > MAX_BACKLOG_MS) return false
    f.turn = next
    await wait(next - at)
    return true
  }

  async function verifyPassword(name: string, user: Candidate | undefined, secret: string): Promise<Principal | undefined> {
    if (await turn(name)) {
      const hash = user?.password_hash
      if (hash && secret && (await verify(secret, hash))) {
        remember(rememberKey(user, secret))
        // A success does not clear the name's failures: they may be someone else's guesses.
        return principal(user)
      }
      if (!hash || !secret) await verify('-', await (decoy ??= hashPassword(randomBytes(16).toString('hex'))))
    }
    fail(name)
    return undefined
  }

  return {
    /**
     * The user, or undefined when the name and secret do not match. Synchronous when the secret
     * is a key of theirs or a password verified in the last minutes; a promise otherwise.
     */
    check(name: string, secret: string): Principal | undefined | Promise<Principal | undefined> {
      // No user can have such a name: nothing to look up, slow down or track.
      if (!deps.names.test(name)) return undefined
      const user = deps.find(name)
      if (user) {
        const holder = deps.byKey(secret)
        if (holder?.id === user.id) return holder
      }
      if (user?.password_hash) {
        const key = rememberKey(user, secret)
        const until = remembered.get(key)
        // Not slowed down: only someone who knows the password can be remembered.
        if (until !== undefined) {
          if (until > now()) return principal(user)
          remembered.delete(key)
        }
      }
      return verifyPassword(name, user, secret)
    },
  }
}

export type PasswordCheck = ReturnType<typeof createPasswordCheck>
