// HTTP Basic's check of a user name and a secret: one of that user's keys, or their password.
// A key is looked up by its hash, as for Token. A password costs an Argon2id verification
// (about 0.1 s of a core, off the main thread), so a success is remembered for a while, and
// failures are slowed down per (user name, client address) and per client address, never per
// name alone: a name's guesser then slows their own attempts, never the user's from elsewhere.
// No HTTP types here: the header is read, and the address found, in http/auth.ts.
import { createHash, randomBytes } from 'node:crypto'
import { andThen } from '../../db/port.ts'
import type { Principal } from './principal.ts'

/** How long a verified (user, password) is taken without Argon2 again. */
export const REMEMBER_MS = 5 * 60_000
/** Verified checks remembered at most: enough for every client of a team, small in memory (~1 MB). */
const MAX_REMEMBERED = 10_000
/** Failures of one name from one address allowed at full speed... */
export const FREE_FAILURES = 10
/**
 * ...and of one address, whatever the names: a guesser trying many names from one address is
 * slowed too. Higher, so that the users behind one address (an office's router, a proxy on the
 * same machine) may mistype their passwords a few times each before they slow one another.
 */
export const ADDRESS_FREE_FAILURES = 100
/** ...until this long passes without another failure of that name there (or of that address)... */
export const FAILURE_WINDOW_MS = 60_000
/** ...and meanwhile each further attempt for it gets a turn this long after the previous one. */
export const SLOW_DOWN_MS = 1000
/**
 * An attempt whose turn would come later than this is refused at once, unverified: a flood of
 * attempts then costs neither a pending request each for minutes nor Argon2.
 */
const MAX_BACKLOG_MS = 30_000
/**
 * Counts kept at most, of names at an address and of addresses (the attacker chooses both; a
 * failure touches two): ~6 MB.
 */
const MAX_TRACKED = 20_000

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

/** What the catalogue answers: the value itself where it answers at once (SQLite), else a promise of it. */
type Answer<T> = T | Promise<T>

export function createPasswordCheck(
  deps: {
    /** What a user name may be: another name is refused at once, and not tracked. */
    names: RegExp
    find(name: string): Answer<Candidate | undefined>
    /** The holder of a key (undefined for anything else, a key or not). */
    byKey(key: string): Answer<Principal | undefined>
    principal(user: Omit<Candidate, 'password_hash'>): Answer<Principal>
  },
  {
    verify = (password, hash) => Bun.password.verify(password, hash),
    wait = (ms) => Bun.sleep(ms),
    now = Date.now,
  }: PasswordOptions = {},
) {
  // Keyed by SHA-256 of user id, stored hash and password: no password is held in memory, and
  // a new password (`user passwd`, also from another process) or `--clear` changes the stored
  // hash, so what was remembered for the old one is never found again.
  const remembered = new Map<string, number>()
  // Keyed by `name\0address` (a name from an address) and by `address` alone (no user name holds
  // a NUL, so the two never meet). Least recently failed first (an entry is moved to the end on
  // each failure), so that eviction drops the counts no one adds to. Pushing out one under attack
  // takes MAX_TRACKED / 2 failures elsewhere, each costing its sender an Argon2 verification.
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

  /** The failures counted under this key, or undefined once a window has passed without one. */
  function failuresOf(key: string, at: number): Failures | undefined {
    const f = failures.get(key)
    if (f && at - f.last >= FAILURE_WINDOW_MS) {
      failures.delete(key)
      return undefined
    }
    return f
  }

  function count(key: string, at: number) {
    const f = failuresOf(key, at) ?? { count: 0, last: at, turn: at }
    f.count++
    f.last = at
    failures.delete(key)
    failures.set(key, f)
  }

  function fail(pair: string, address: string) {
    const at = now()
    count(pair, at)
    count(address, at)
    // Expired counts leave from the front as new failures come; the cap holds in any case.
    for (const [oldest, g] of failures) {
      if (failures.size <= MAX_TRACKED && at - g.last < FAILURE_WINDOW_MS) break
      failures.delete(oldest)
    }
  }

  /**
   * Waits for the attempt's turn when its name at its address, or its address, is being slowed
   * down: one turn after the later of theirs, taken in both. False: that backlog is full, refuse.
   */
  async function turn(pair: string, address: string): Promise<boolean> {
    const at = now()
    let f = failuresOf(pair, at)
    if (f && f.count < FREE_FAILURES) f = undefined
    let g = failuresOf(address, at)
    if (g && g.count < ADDRESS_FREE_FAILURES) g = undefined
    if (!f && !g) return true
    const next = Math.max(at, f?.turn ?? at, g?.turn ?? at) + SLOW_DOWN_MS
    if (next - at > MAX_BACKLOG_MS) return false
    if (f) f.turn = next
    if (g) g.turn = next
    await wait(next - at)
    return true
  }

  async function verifyPassword(
    name: string,
    address: string,
    user: Candidate | undefined,
    secret: string,
  ): Promise<Principal | undefined> {
    const pair = `${name}\0${address}`
    if (await turn(pair, address)) {
      const hash = user?.password_hash
      if (hash && secret && (await verify(secret, hash))) {
        remember(rememberKey(user, secret))
        // A success does not clear the failures: behind one address they may be someone else's.
        return await principal(user)
      }
      if (!hash || !secret) await verify('-', await (decoy ??= hashPassword(randomBytes(16).toString('hex'))))
    }
    fail(pair, address)
    return undefined
  }

  return {
    /**
     * The user, or undefined when the name and secret do not match. Synchronous when the secret
     * is a key of theirs or a password verified in the last minutes and the catalogue answers at
     * once (SQLite); a promise otherwise.
     * address: the client's (its IP address as the socket has it); '' when it is not known (a
     * request handed to the app in-process), which then counts as one address.
     */
    check(name: string, secret: string, address = ''): Answer<Principal | undefined> {
      // No user can have such a name: nothing to look up, slow down or track.
      if (!deps.names.test(name)) return undefined
      return andThen(deps.find(name), (user): Answer<Principal | undefined> => {
        if (!user) return verifyPassword(name, address, user, secret)
        return andThen(deps.byKey(secret), (holder) => {
          if (holder?.id === user.id) return holder
          if (user.password_hash) {
            const key = rememberKey(user, secret)
            const until = remembered.get(key)
            // Not slowed down: only someone who knows the password can be remembered.
            if (until !== undefined) {
              if (until > now()) return principal(user)
              remembered.delete(key)
            }
          }
          return verifyPassword(name, address, user, secret)
        })
      })
    },
  }
}

export type PasswordCheck = ReturnType<typeof createPasswordCheck>
