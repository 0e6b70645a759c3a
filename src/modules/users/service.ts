// Users, their keys, permission codenames and per-production access. Used by the HTTP auth and
// by the command line; no HTTP types here.
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { and, count as countRows, eq, inArray, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Port, type SqlitePort, type Work, all, allOf, one, oneOf, run, statement, tx } from '../../db/port.ts'
import { tableCache } from '../../db/tablecache.ts'
import {
  apiKeys,
  groupPermissions,
  groups,
  productionAccess,
  productions,
  userGroups,
  userPermissions,
  users,
} from '../../db/tables.ts'
import { isoTimestamp } from '../../util/time.ts'
import { type PasswordOptions, createPasswordCheck } from './passwords.ts'
import { hiddenPassword, historyOf, system } from '../history/service.ts'
import type { Principal } from './principal.ts'
import { createSessions } from './sessions.ts'

export type { Principal }

export class UserError extends Error {}

/**
 * The service itself as an actor: imports of watch-folder files (the device watcher) are made by
 * no user. It may do what a superuser may; the rules it passes are the same as for requests.
 */
export const SYSTEM: Principal = Object.freeze({
  id: 0,
  username: 'reelhouse',
  is_superuser: true,
  perms: new Set<string>(),
  groups: new Set<string>(),
  readable: new Set<number>(),
  writable: new Set<number>(),
})

/**
 * Every permission codename a route checks (docs/api.md, Permissions), with what it allows: the command line
 * lists them in `user --help` and refuses any other, since a misspelt one would grant nothing.
 * A superuser needs none of them.
 */
export const CODENAMES = {
  'browser.add_device': 'create devices',
  'browser.add_production': 'create productions (the creator gets write access to it)',
  'browser.add_transcodingprofile': 'create transcoding profiles',
  'browser.add_custommetadata': 'create custom metadata fields',
  'browser.add_custommetadataset': 'create custom metadata sets',
  'browser.add_assetholdduration': 'create asset hold durations',
  'browser.copy_projectasset': 'copy project assets (with write access to the target production)',
  'browser.share_production_asset': "share a production's assets with another production while copying",
  'browser.change_device': 'edit devices, and rescan them (reading scan tasks)',
  'browser.delete_device': 'delete devices nothing lies on',
  'browser.change_production': 'edit productions (with write access to the production)',
  'browser.delete_production': 'delete empty productions (with write access to the production)',
  'browser.change_transcodingprofile': 'edit transcoding profiles',
  'browser.delete_transcodingprofile': 'delete transcoding profiles no device uses',
  'browser.change_custommetadata': 'edit custom metadata fields',
  'browser.delete_custommetadata': 'delete custom metadata fields no record holds a value for',
  'browser.change_custommetadataset': 'edit custom metadata sets',
  'browser.delete_custommetadataset': 'delete custom metadata sets without fields',
  'browser.change_assetholdduration': 'edit asset hold durations',
  'browser.delete_assetholdduration': 'delete asset hold durations',
  'browser.change_audioasset': 'edit audio assets (with write access to the production)',
  'browser.delete_audioasset':
    'delete audio asset records and their proxies, never the essence (with write access to the production)',
  'browser.change_imageasset': 'edit image assets (with write access to the production)',
  'browser.delete_imageasset':
    'delete image asset records and their proxies, never the essence (with write access to the production)',
  'browser.change_videoasset': 'edit video assets (with write access to the production)',
  'browser.delete_videoasset':
    'delete video asset records and their proxies, never the essence (with write access to the production)',
  'browser.change_projectasset': 'edit project assets (with write access to the production)',
  'browser.archive_mediaasset':
    'archive media assets to an archive device and restore them (with write access to the production)',
} as const satisfies Record<string, string>

export type Codename = keyof typeof CODENAMES
export const isCodename = (value: string): value is Codename => Object.hasOwn(CODENAMES, value)

/**
 * Roles shipped as suggestions: `reelhouse group add editor` without --perm makes the group with
 * these codenames (docs/operations.md, Users, groups and roles). A suggestion, not a rule: the
 * group is an ordinary one afterwards, changed with `group perm add` and `group perm remove`.
 */
export const SUGGESTED_GROUPS: Record<string, { about: string; perms: Codename[] }> = {
  editor: {
    about: 'copies projects to an edit bay, edits the catalogue of the productions it may write to',
    perms: [
      'browser.copy_projectasset',
      'browser.change_projectasset',
      'browser.change_videoasset',
      'browser.change_audioasset',
      'browser.change_imageasset',
    ],
  },
  assistant: {
    about: 'an editor who also shares media between productions and removes catalogue records',
    perms: [
      'browser.copy_projectasset',
      'browser.share_production_asset',
      'browser.change_projectasset',
      'browser.change_videoasset',
      'browser.change_audioasset',
      'browser.change_imageasset',
      'browser.delete_videoasset',
      'browser.delete_audioasset',
      'browser.delete_imageasset',
    ],
  },
  producer: {
    about: 'makes and edits productions and their metadata fields',
    perms: [
      'browser.add_production',
      'browser.change_production',
      'browser.add_custommetadata',
      'browser.change_custommetadata',
      'browser.add_custommetadataset',
      'browser.change_custommetadataset',
      'browser.add_assetholdduration',
      'browser.change_assetholdduration',
    ],
  },
  engineer: {
    about: 'looks after storage: devices, rescans and transcoding profiles',
    perms: [
      'browser.add_device',
      'browser.change_device',
      'browser.delete_device',
      'browser.add_transcodingprofile',
      'browser.change_transcodingprofile',
      'browser.delete_transcodingprofile',
    ],
  },
}

export type UserSummary = {
  username: string
  is_superuser: boolean
  /** The user's own codenames; those of their groups are the groups' (GroupSummary). */
  perms: string[]
  groups: string[]
  productions: { id: number; name: string; level: 'read' | 'write' }[]
}

/** SHA-256 of the key, in hex. Bun's one-shot hash: a third of node:crypto's createHash, on every request with a key. */
export const hashKey = (key: string) => Bun.SHA256.hash(key, 'hex')
export const KEY_PATTERN = /^[0-9a-f]{40}$/
export const USERNAME_PATTERN = /^[\w.@+-]{1,150}$/
/** A group's name: what a device's write_permission_groups holds, so nothing that needs quoting. */
export const GROUPNAME_PATTERN = /^[\w.@+-]{1,150}$/

/** Which of these group names no group has (a device naming them lets nobody write through them). */
export function* unknownGroups(db: Db, names: readonly string[]): Work<string[]> {
  const rows = yield* all(
    db
      .select({ name: groups.name })
      .from(groups)
      .where(inArray(groups.name, [...names])),
  )
  const known = new Set(rows.map((g) => g.name))
  return [...new Set(names)].filter((n) => !known.has(n))
}

export type GroupSummary = { name: string; perms: string[]; members: string[] }
/** How many characters of a key `token list` shows (and the catalogue keeps) to tell keys apart. */
const KEY_PREFIX = 8

/**
 * What a check of the users service (a key, a password, a session) answers through the port `P`:
 * the value itself on SQLite, whose port answers every statement in the same call, so that a
 * request's check adds no await there; a value or a promise of it on another engine.
 */
export type Answer<P extends Port, T> = P extends SqlitePort ? T : T | Promise<T>

/**
 * Checks of credentials (authenticate, authenticateBasic, the sessions' resolve) answer through
 * `port` at once (Answer); everything else is work for the caller to run. passwords: how HTTP
 * Basic verifies and slows down (tests count verifications, hold the wait).
 */
export function createUsers<P extends Port>(port: P, options: { passwords?: PasswordOptions } = {}) {
  const db = port.db
  const answer = <T>(work: Work<T>) => port.run(work) as Answer<P, T>
  // Read for every key, password or session checked: built once (prepared on SQLite).
  const byHash = statement(() =>
    db
      .select({ id: users.id, username: users.username, is_superuser: users.is_superuser, key_hash: apiKeys.key_hash })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.user_id))
      .where(eq(apiKeys.key_hash, sql.placeholder('hash'))),
  )
  const byId = statement(() =>
    db
      .select({ id: users.id, username: users.username, is_superuser: users.is_superuser })
      .from(users)
      .where(eq(users.id, sql.placeholder('id'))),
  )
  const permsOf = statement(() =>
    db
      .select({ codename: userPermissions.codename })
      .from(userPermissions)
      .where(eq(userPermissions.user_id, sql.placeholder('id'))),
  )
  const groupsOf = statement(() =>
    db
      .select({ name: groups.name, codename: groupPermissions.codename })
      .from(userGroups)
      .innerJoin(groups, eq(groups.id, userGroups.group_id))
      .leftJoin(groupPermissions, eq(groupPermissions.group_id, groups.id))
      .where(eq(userGroups.user_id, sql.placeholder('id'))),
  )
  const accessOf = statement(() =>
    db
      .select({ production_id: productionAccess.production_id, level: productionAccess.level })
      .from(productionAccess)
      .where(eq(productionAccess.user_id, sql.placeholder('id'))),
  )
  const byName = statement(() =>
    db
      .select({
        id: users.id,
        username: users.username,
        is_superuser: users.is_superuser,
        password_hash: users.password_hash,
      })
      .from(users)
      .where(eq(users.username, sql.placeholder('name'))),
  )
  const passwordOf = statement(() =>
    db
      .select({ password_hash: users.password_hash })
      .from(users)
      .where(eq(users.id, sql.placeholder('id'))),
  )

  function* principal(user: { id: number; username: string; is_superuser: boolean }): Work<Principal> {
    const readable = new Set<number>()
    const writable = new Set<number>()
    // A superuser needs no codename and no group (groups only ever widen what a user may do).
    const perms = new Set<string>()
    const groupNames = new Set<string>()
    if (!user.is_superuser) {
      for (const a of yield* allOf(accessOf, { id: user.id })) {
        readable.add(a.production_id)
        if (a.level === 'write') writable.add(a.production_id)
      }
      for (const g of yield* allOf(groupsOf, { id: user.id })) {
        groupNames.add(g.name)
        if (g.codename !== null) perms.add(g.codename)
      }
      for (const p of yield* allOf(permsOf, { id: user.id })) perms.add(p.codename)
    }
    return { ...user, perms, groups: groupNames, readable, writable }
  }

  /** The user with this id and what they may do now, or undefined once deleted. */
  function* userById(id: number): Work<Principal | undefined> {
    const user = yield* oneOf(byId, { id })
    return user && (yield* principal(user))
  }

  function* findUser(name: string) {
    const user = yield* one(db.select().from(users).where(eq(users.username, name)))
    if (!user) throw new UserError(`no user named "${name}"`)
    return user
  }

  function* findGroup(name: string) {
    const group = yield* one(db.select().from(groups).where(eq(groups.name, name)))
    if (!group) throw new UserError(`no group named "${name}"; reelhouse group add ${name} makes it`)
    return group
  }

  /** A user joins a group (inside the caller's transaction); false when they were in it already. */
  function* join(userId: number, group: { id: number; name: string }): Work<boolean> {
    const { changes } = yield* run(
      db.insert(userGroups).values({ user_id: userId, group_id: group.id }).onConflictDoNothing(),
    )
    const added = changes > 0
    if (added)
      yield* history().record(system('cli'), {
        resource: 'user',
        id: userId,
        action: 'update',
        changes: { [`group.${group.name}`]: { old: false, new: true } },
      })
    return added
  }

  // Principals are kept on SQLite, where a change to what they are made of is known without a
  // statement (db/tablecache.ts): a request with a known key costs a map lookup, not three
  // queries (10 µs of a 50 µs request) nor a hash. PostgreSQL tells no such thing (other
  // processes and machines write the same tables): there every check asks the catalogue, so that
  // a key revoked anywhere is refused from the very next request.
  const principals =
    port.engine === 'sqlite'
      ? tableCache<Principal>(db, { name: 'auth_generation', tables: AUTH_TABLES, max: MAX_CACHED })
      : undefined
  // Where the cache is (SQLite), the port answers in the same call: the cache's maker runs there.
  const sqlite = port as unknown as SqlitePort
  /** The principal under `key` as a step of work: the cached one (SQLite) while valid, else made. */
  function* cached(key: string, make: () => Work<Principal | undefined>): Work<Principal | undefined> {
    if (!principals) return yield* make()
    return principals.get(key, () => sqlite.run(make()))
  }
  const history = () => historyOf(db)
  // A session's user, through the same cache as a key's (emptied whenever the auth tables change).
  const sessions = createSessions(port, (id) => cached(`user:${id}`, () => userById(id)))
  /** Keys made (true) or revoked (false), as one update row of their user (inside the caller's transaction). */
  function* keysChanged(userId: number, ids: number[], made: boolean): Work<void> {
    if (ids.length)
      yield* history().record(system('cli'), {
        resource: 'user',
        id: userId,
        action: 'update',
        changes: Object.fromEntries(ids.map((id) => [`key.${id}`, { old: !made, new: made }])),
      })
  }
  // On PostgreSQL nothing tells of a change without a statement: every stamp differs from the
  // last, and whoever compares them checks again each time.
  let stamps = 0

  /**
   * The user holding this key, or undefined. The catalogue is asked by the key's hash only. A key
   * found is kept in the principal cache (SQLite) under the key as presented (40 characters,
   * never the 64 of a hash nor a "user:" entry), emptied by the same changes: a key asked again
   * skips its SHA-256 as well as the statement (about 0.7 µs a request). The key is then held in
   * memory as long as its principal is, as a request holds it while it runs; an unknown key is
   * never kept.
   */
  function authenticate(key: string): Answer<P, Principal | undefined> {
    if (!KEY_PATTERN.test(key)) return undefined as Answer<P, undefined>
    // A cache hit makes one function (the maker), no generator, and runs no statement.
    const found = principals
      ? principals.get(key, () => sqlite.run(findByHash(hashKey(key))))
      : port.run(findByHash(hashKey(key)))
    return found as Answer<P, Principal | undefined>
  }

  function* findByHash(hash: string): Work<Principal | undefined> {
    const row = yield* oneOf(byHash, { hash })
    if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash))) return undefined
    return yield* principal(row)
  }

  function* stampOf(id: number): Work<string | null | undefined> {
    const row = yield* oneOf(passwordOf, { id })
    return row && (row.password_hash === null ? null : hashKey(row.password_hash))
  }

  function* holding(id: number, stamp: string | null): Work<Principal | undefined> {
    return (yield* stampOf(id)) === stamp ? yield* userById(id) : undefined
  }

  const passwords = createPasswordCheck(
    {
      names: USERNAME_PATTERN,
      find: (name) => port.run(oneOf(byName, { name })),
      byKey: authenticate,
      principal: (user) => port.run(principal(user)),
    },
    options.passwords,
  )

  return {
    /** The catalogue's engine: on SQLite the checks answer values, never promises (Answer). */
    engine: port.engine,

    authenticate,

    /**
     * The web page's sign-ins (sessions.ts). A new password and a revoked key end every session
     * of their user, in the transaction that makes the change.
     */
    sessions,

    /** The holder of the key with this hash (hashKey), or undefined: a key checked again without being kept (a long event stream). */
    byKeyHash: (hash: string) =>
      (principals ? principals.get(hash, () => sqlite.run(findByHash(hash))) : port.run(findByHash(hash))) as Answer<
        P,
        Principal | undefined
      >,

    /**
     * What a user's password is now, in a form that holds no secret (SHA-256 of its Argon2 hash;
     * null: none, undefined: no such user): a login by password checked again later compares it.
     */
    passwordStamp: (id: number) => answer(stampOf(id)),

    /**
     * The user with this id as they are now while their password is still the one `stamp` was
     * taken of (passwordStamp), else undefined: a login by password checked again.
     */
    byPasswordStamp: (id: number, stamp: string | null) => answer(holding(id, stamp)),

    /**
     * Changes whenever what a key stands for may have changed (what empties the key cache): on
     * SQLite a commit of another process, or a write to the auth tables here; elsewhere at every
     * call. Compared, never read.
     */
    authStamp: (): string => (principals ? principals.stamp() : `change ${++stamps}`),

    /** HTTP Basic: the user if the secret is one of their keys or their password (see passwords.ts). */
    authenticateBasic: passwords.check,

    /**
     * Sets (an Argon2id hash, see passwords.ts hashPassword) or, with null, removes a user's
     * password; false: there was none to remove. The user's history says a password was set,
     * changed or removed, as masks ("********" or null), never the password or its hash.
     */
    *setPassword(name: string, hash: string | null): Work<boolean> {
      const user = yield* findUser(name)
      if (hash === null && user.password_hash === null) return false
      yield* tx(function* () {
        yield* run(db.update(users).set({ password_hash: hash }).where(eq(users.id, user.id)))
        yield* sessions.endAllOf(user.id)
        yield* history().record(system('cli'), {
          resource: 'user',
          id: user.id,
          action: 'update',
          changes: { password: { old: hiddenPassword(user.password_hash), new: hiddenPassword(hash) } },
        })
      })
      return true
    },

    /** Throws the UserError of an unknown name (before `user passwd` asks for a password). */
    *requireUser(name: string): Work<void> {
      yield* findUser(name)
    },

    /** The user's current permissions, by id (tasks re-check them when they start); undefined once deleted. */
    principalById: userById,

    *count(): Work<number> {
      return (yield* one(db.select({ n: countRows() }).from(users)))?.n ?? 0
    },

    *add(name: string, opts: { superuser?: boolean; perms?: string[]; groups?: string[] } = {}) {
      if (!USERNAME_PATTERN.test(name))
        throw new UserError(`invalid user name "${name}": use letters, digits and @.+-_`)
      if (yield* one(db.select({ id: users.id }).from(users).where(eq(users.username, name))))
        throw new UserError(`user "${name}" already exists`)
      // Every group is looked up before anything is written: a misspelt one makes no user.
      const joined: { id: number; name: string }[] = []
      for (const group of new Set(opts.groups ?? [])) joined.push(yield* findGroup(group))
      return yield* tx(function* () {
        const user = (yield* one(
          db
            .insert(users)
            .values({ username: name, is_superuser: !!opts.superuser, date_add: isoTimestamp() })
            .returning(),
        ))!
        const perms = [...new Set(opts.perms ?? [])]
        for (const codename of perms) yield* run(db.insert(userPermissions).values({ user_id: user.id, codename }))
        yield* history().record(system('cli'), {
          resource: 'user',
          id: user.id,
          action: 'create',
          changes: {
            username: { old: null, new: name },
            is_superuser: { old: null, new: user.is_superuser },
            ...Object.fromEntries(perms.map((c) => [`perm.${c}`, { old: null, new: true }])),
          },
        })
        for (const group of joined) yield* join(user.id, group)
        return user
      })
    },

    *grant(name: string, production: string, level: 'read' | 'write') {
      const user = yield* findUser(name)
      const prod = yield* one(
        db
          .select()
          .from(productions)
          .where(/^\d+$/.test(production) ? eq(productions.id, Number(production)) : eq(productions.name, production)),
      )
      if (!prod) throw new UserError(`no production "${production}"`)
      yield* tx(function* () {
        const before =
          (yield* one(
            db
              .select({ level: productionAccess.level })
              .from(productionAccess)
              .where(and(eq(productionAccess.user_id, user.id), eq(productionAccess.production_id, prod.id))),
          ))?.level ?? null
        yield* run(
          db
            .insert(productionAccess)
            .values({ user_id: user.id, production_id: prod.id, level })
            .onConflictDoUpdate({ target: [productionAccess.user_id, productionAccess.production_id], set: { level } }),
        )
        // Who may work in a production is part of its record (members): the command line's grants
        // are in its history, as the service's own doing (`via` cli).
        if (before !== level)
          yield* history().record(system('cli'), {
            resource: 'production',
            id: prod.id,
            action: 'update',
            production: prod.id,
            changes: { [`access.${user.username}`]: { old: before, new: level } },
          })
      })
      return { user, production: prod }
    },

    /** Grants access without the name lookups (used when a user creates a production). */
    *grantById(userId: number, productionId: number, level: 'read' | 'write'): Work<void> {
      yield* run(
        db
          .insert(productionAccess)
          .values({ user_id: userId, production_id: productionId, level })
          .onConflictDoUpdate({ target: [productionAccess.user_id, productionAccess.production_id], set: { level } }),
      )
    },

    /**
     * A new key: 40 lowercase hex characters, returned once, stored as its hash. A key is the
     * user's credential, not a record of its own: its history row is an update of the user,
     * `key.<id>` (the id `token list` shows) from false to true, never the key or its hash.
     */
    *createKey(name: string): Work<string> {
      const user = yield* findUser(name)
      const key = randomBytes(20).toString('hex')
      yield* tx(function* () {
        const made = (yield* one(
          db
            .insert(apiKeys)
            .values({
              user_id: user.id,
              key_hash: hashKey(key),
              key_prefix: key.slice(0, KEY_PREFIX),
              date_add: isoTimestamp(),
            })
            .returning({ id: apiKeys.id }),
        ))!
        yield* keysChanged(user.id, [made.id], true)
      })
      return key
    },

    /** Every user with codenames and production access, by name: what `user list` shows. */
    *list(): Work<UserSummary[]> {
      const perms = yield* all(db.select().from(userPermissions).orderBy(userPermissions.codename))
      const memberships = yield* all(
        db
          .select({ user_id: userGroups.user_id, name: groups.name })
          .from(userGroups)
          .innerJoin(groups, eq(groups.id, userGroups.group_id))
          .orderBy(groups.name),
      )
      const access = yield* all(
        db
          .select({
            user_id: productionAccess.user_id,
            id: productions.id,
            name: productions.name,
            level: productionAccess.level,
          })
          .from(productionAccess)
          .innerJoin(productions, eq(productions.id, productionAccess.production_id))
          .orderBy(productions.name, productions.id),
      )
      return (yield* all(db.select().from(users).orderBy(users.username))).map((u) => ({
        username: u.username,
        is_superuser: u.is_superuser,
        perms: perms.filter((p) => p.user_id === u.id).map((p) => p.codename),
        groups: memberships.filter((m) => m.user_id === u.id).map((m) => m.name),
        productions: access.filter((a) => a.user_id === u.id).map(({ id, name, level }) => ({ id, name, level })),
      }))
    },

    /**
     * A new group with these codenames; without any, a suggested role's (SUGGESTED_GROUPS) when
     * the name is one, else none. Returns the codenames it was given.
     */
    *addGroup(name: string, perms: Codename[]): Work<string[]> {
      if (!GROUPNAME_PATTERN.test(name))
        throw new UserError(`invalid group name "${name}": use letters, digits and @.+-_`)
      if (yield* one(db.select({ id: groups.id }).from(groups).where(eq(groups.name, name))))
        throw new UserError(`group "${name}" already exists`)
      const given = [...new Set(perms.length ? perms : (SUGGESTED_GROUPS[name]?.perms ?? []))]
      yield* tx(function* () {
        const group = (yield* one(db.insert(groups).values({ name, date_add: isoTimestamp() }).returning()))!
        for (const codename of given) yield* run(db.insert(groupPermissions).values({ group_id: group.id, codename }))
        yield* history().record(system('cli'), {
          resource: 'group',
          id: group.id,
          action: 'create',
          changes: {
            name: { old: null, new: name },
            ...Object.fromEntries(given.map((c) => [`perm.${c}`, { old: null, new: true }])),
          },
        })
      })
      return given
    },

    /** Removes a group: its members lose its codenames, devices naming it no longer let them write. */
    *removeGroup(name: string): Work<void> {
      const group = yield* findGroup(name)
      yield* tx(function* () {
        yield* run(db.delete(groups).where(eq(groups.id, group.id)))
        yield* history().record(system('cli'), {
          resource: 'group',
          id: group.id,
          action: 'delete',
          changes: { name: { old: name, new: null } },
        })
      })
    },

    /** Every group with its codenames and members, by name: what `group list` shows. */
    *groups(): Work<GroupSummary[]> {
      const perms = yield* all(db.select().from(groupPermissions).orderBy(groupPermissions.codename))
      const members = yield* all(
        db
          .select({ group_id: userGroups.group_id, username: users.username })
          .from(userGroups)
          .innerJoin(users, eq(users.id, userGroups.user_id))
          .orderBy(users.username),
      )
      return (yield* all(db.select().from(groups).orderBy(groups.name))).map((g) => ({
        name: g.name,
        perms: perms.filter((p) => p.group_id === g.id).map((p) => p.codename),
        members: members.filter((m) => m.group_id === g.id).map((m) => m.username),
      }))
    },

    /** Gives a group a codename; false when it had it already. */
    *addGroupPerm(name: string, codename: Codename): Work<boolean> {
      const group = yield* findGroup(name)
      return yield* tx(function* () {
        const { changes } = yield* run(
          db.insert(groupPermissions).values({ group_id: group.id, codename }).onConflictDoNothing(),
        )
        const added = changes > 0
        if (added)
          yield* history().record(system('cli'), {
            resource: 'group',
            id: group.id,
            action: 'update',
            changes: { [`perm.${codename}`]: { old: false, new: true } },
          })
        return added
      })
    },

    /** Takes a codename from a group; false when it did not have it. */
    *removeGroupPerm(name: string, codename: string): Work<boolean> {
      const group = yield* findGroup(name)
      return yield* tx(function* () {
        const { changes } = yield* run(
          db
            .delete(groupPermissions)
            .where(and(eq(groupPermissions.group_id, group.id), eq(groupPermissions.codename, codename))),
        )
        const removed = changes > 0
        if (removed)
          yield* history().record(system('cli'), {
            resource: 'group',
            id: group.id,
            action: 'update',
            changes: { [`perm.${codename}`]: { old: true, new: false } },
          })
        return removed
      })
    },

    /** Puts a user in a group; false when they were in it already. */
    *joinGroup(name: string, groupName: string): Work<boolean> {
      const user = yield* findUser(name)
      const group = yield* findGroup(groupName)
      return yield* tx(() => join(user.id, group))
    },

    /** Takes a user out of a group; false when they were not in it. */
    *leaveGroup(name: string, groupName: string): Work<boolean> {
      const user = yield* findUser(name)
      const group = yield* findGroup(groupName)
      return yield* tx(function* () {
        const { changes } = yield* run(
          db.delete(userGroups).where(and(eq(userGroups.user_id, user.id), eq(userGroups.group_id, group.id))),
        )
        const removed = changes > 0
        if (removed)
          yield* history().record(system('cli'), {
            resource: 'user',
            id: user.id,
            action: 'update',
            changes: { [`group.${group.name}`]: { old: true, new: false } },
          })
        return removed
      })
    },

    /** Gives a codename; false when the user had it already. */
    *addPerm(name: string, codename: Codename): Work<boolean> {
      const user = yield* findUser(name)
      return yield* tx(function* () {
        const { changes } = yield* run(
          db.insert(userPermissions).values({ user_id: user.id, codename }).onConflictDoNothing(),
        )
        const added = changes > 0
        if (added)
          yield* history().record(system('cli'), {
            resource: 'user',
            id: user.id,
            action: 'update',
            changes: { [`perm.${codename}`]: { old: false, new: true } },
          })
        return added
      })
    },

    /** Takes a codename away; false when the user did not have it. */
    *removePerm(name: string, codename: string): Work<boolean> {
      const user = yield* findUser(name)
      return yield* tx(function* () {
        const { changes } = yield* run(
          db
            .delete(userPermissions)
            .where(and(eq(userPermissions.user_id, user.id), eq(userPermissions.codename, codename))),
        )
        const removed = changes > 0
        if (removed)
          yield* history().record(system('cli'), {
            resource: 'user',
            id: user.id,
            action: 'update',
            changes: { [`perm.${codename}`]: { old: true, new: false } },
          })
        return removed
      })
    },

    /**
     * A user's keys, oldest first, as `token list` shows them: id, creation time and the key's
     * first characters (for a key made before those were kept, its hash's). Never the key itself,
     * which is not stored.
     */
    *keysOf(name: string): Work<{ id: number; date_add: string; prefix: string | null; hash_prefix: string }[]> {
      const user = yield* findUser(name)
      const keys = yield* all(
        db
          .select({
            id: apiKeys.id,
            date_add: apiKeys.date_add,
            key_hash: apiKeys.key_hash,
            key_prefix: apiKeys.key_prefix,
          })
          .from(apiKeys)
          .where(eq(apiKeys.user_id, user.id))
          .orderBy(apiKeys.id),
      )
      return keys.map((k) => ({
        id: k.id,
        date_add: k.date_add,
        prefix: k.key_prefix,
        hash_prefix: k.key_hash.slice(0, KEY_PREFIX),
      }))
    },

    /**
     * Removes the key; false when no key is this one. No check of the key's shape: the command
     * line says what a key looks like (a usage error), and any other text has a hash that no
     * stored key has.
     */
    *revokeKey(key: string): Work<boolean> {
      return yield* tx(function* () {
        const gone = yield* all(
          db
            .delete(apiKeys)
            .where(eq(apiKeys.key_hash, hashKey(key)))
            .returning({ id: apiKeys.id, user_id: apiKeys.user_id }),
        )
        for (const k of gone) {
          yield* keysChanged(k.user_id, [k.id], false)
          yield* sessions.endAllOf(k.user_id)
        }
        return gone.length > 0
      })
    },

    /**
     * Removes the key with this id, the one `token list` shows (ids are unique across users), and
     * says whose it was; undefined when there is no such key.
     */
    *revokeKeyById(id: number): Work<string | undefined> {
      return yield* tx(function* () {
        const owner = yield* one(db.delete(apiKeys).where(eq(apiKeys.id, id)).returning({ user_id: apiKeys.user_id }))
        if (!owner) return undefined
        yield* keysChanged(owner.user_id, [id], false)
        yield* sessions.endAllOf(owner.user_id)
        return (yield* oneOf(byId, { id: owner.user_id }))?.username
      })
    },

    *revokeAll(name: string): Work<number> {
      const user = yield* findUser(name)
      return yield* tx(function* () {
        const gone = (yield* all(
          db.delete(apiKeys).where(eq(apiKeys.user_id, user.id)).returning({ id: apiKeys.id }),
        )).map((k) => k.id)
        yield* keysChanged(user.id, gone, false)
        if (gone.length) yield* sessions.endAllOf(user.id)
        return gone.length
      })
    },
  }
}

/** The users service on any engine (its checks' answers may be promises: Answer). */
export type Users = ReturnType<typeof createUsers<Port>>

const EVERY_CHANGE = ['INSERT', 'UPDATE', 'DELETE'] as const
/**
 * The tables a Principal is made of; a change to any of them may change who holds a key and what
 * they may do: the users service's writes, a production's creator given write access, a
 * production deleted with its access rows by ON DELETE CASCADE, the command line's in another
 * process. And the end of a session (sign-out), so that the event streams it opened are checked
 * again (authStamp); not its sign-in or its last_seen, which take nothing away.
 */
const AUTH_TABLES = [
  ['users', EVERY_CHANGE],
  ['api_keys', EVERY_CHANGE],
  ['user_permissions', EVERY_CHANGE],
  ['production_access', EVERY_CHANGE],
  ['groups', EVERY_CHANGE],
  ['group_permissions', EVERY_CHANGE],
  ['user_groups', EVERY_CHANGE],
  ['sessions', ['DELETE']],
] as const
/** Past this many keys in use, the cache starts over rather than grow with the keys table. */
const MAX_CACHED = 10_000
