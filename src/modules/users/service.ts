// Users, their keys, permission codenames and per-production access. Used by the HTTP auth and
// by the command line; no HTTP types here.
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { type Db, dataVersionOf, fileVersion, readSnapshotOf } from '../../db/client.ts'
import { runSync } from '../../db/port.ts'
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
export function unknownGroups(db: Db, names: readonly string[]): string[] {
  const known = new Set(
    db
      .select({ name: groups.name })
      .from(groups)
      .where(inArray(groups.name, [...names]))
      .all()
      .map((g) => g.name),
  )
  return [...new Set(names)].filter((n) => !known.has(n))
}

export type GroupSummary = { name: string; perms: string[]; members: string[] }
/** How many characters of a key `token list` shows (and the catalogue keeps) to tell keys apart. */
const KEY_PREFIX = 8

/** passwords: how HTTP Basic verifies and slows down (tests count verifications, hold the wait). */
export function createUsers(db: Db, options: { passwords?: PasswordOptions } = {}) {
  const byHash = db
    .select({ id: users.id, username: users.username, is_superuser: users.is_superuser, key_hash: apiKeys.key_hash })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.user_id))
    .where(eq(apiKeys.key_hash, sql.placeholder('hash')))
    .prepare()
  const byId = db
    .select({ id: users.id, username: users.username, is_superuser: users.is_superuser })
    .from(users)
    .where(eq(users.id, sql.placeholder('id')))
    .prepare()
  const permsOf = db
    .select({ codename: userPermissions.codename })
    .from(userPermissions)
    .where(eq(userPermissions.user_id, sql.placeholder('id')))
    .prepare()
  const groupsOf = db
    .select({ name: groups.name, codename: groupPermissions.codename })
    .from(userGroups)
    .innerJoin(groups, eq(groups.id, userGroups.group_id))
    .leftJoin(groupPermissions, eq(groupPermissions.group_id, groups.id))
    .where(eq(userGroups.user_id, sql.placeholder('id')))
    .prepare()
  const accessOf = db
    .select({ production_id: productionAccess.production_id, level: productionAccess.level })
    .from(productionAccess)
    .where(eq(productionAccess.user_id, sql.placeholder('id')))
    .prepare()
  const byName = db
    .select({
      id: users.id,
      username: users.username,
      is_superuser: users.is_superuser,
      password_hash: users.password_hash,
    })
    .from(users)
    .where(eq(users.username, sql.placeholder('name')))
    .prepare()

  function principal(user: { id: number; username: string; is_superuser: boolean }): Principal {
    const readable = new Set<number>()
    const writable = new Set<number>()
    if (!user.is_superuser) {
      for (const a of accessOf.all({ id: user.id })) {
        readable.add(a.production_id)
        if (a.level === 'write') writable.add(a.production_id)
      }
    }
    // A superuser needs no codename and no group (groups only ever widen what a user may do).
    const perms = new Set<string>()
    const groupNames = new Set<string>()
    if (!user.is_superuser) {
      for (const g of groupsOf.all({ id: user.id })) {
        groupNames.add(g.name)
        if (g.codename !== null) perms.add(g.codename)
      }
      for (const p of permsOf.all({ id: user.id })) perms.add(p.codename)
    }
    return { ...user, perms, groups: groupNames, readable, writable }
  }

  function findUser(name: string) {
    const user = db.select().from(users).where(eq(users.username, name)).get()
    if (!user) throw new UserError(`no user named "${name}"`)
    return user
  }

  function findGroup(name: string) {
    const group = db.select().from(groups).where(eq(groups.name, name)).get()
    if (!group) throw new UserError(`no group named "${name}"; reelhouse group add ${name} makes it`)
    return group
  }

  /** A user joins a group (inside the caller's transaction); false when they were in it already. */
  function join(userId: number, group: { id: number; name: string }): boolean {
    const added =
      db.$client.query('INSERT OR IGNORE INTO user_groups (user_id, group_id) VALUES (?, ?)').run(userId, group.id)
        .changes > 0
    if (added)
      runSync(
        db,
        history().record(system('cli'), {
          resource: 'user',
          id: userId,
          action: 'update',
          changes: { [`group.${group.name}`]: { old: false, new: true } },
        }),
      )
    return added
  }

  const principals = principalCache(db)
  const history = () => historyOf(db)
  // A session's user, through the same cache as a key's (emptied whenever the auth tables change).
  const sessions = createSessions(db, (id) =>
    principals.get(`user:${id}`, () => {
      const user = byId.get({ id })
      return user && principal(user)
    }),
  )
  /** Keys made (true) or revoked (false), as one update row of their user (inside the caller's transaction). */
  const keysChanged = (userId: number, ids: number[], made: boolean) => {
    if (ids.length)
      runSync(
        db,
        history().record(system('cli'), {
          resource: 'user',
          id: userId,
          action: 'update',
          changes: Object.fromEntries(ids.map((id) => [`key.${id}`, { old: !made, new: made }])),
        }),
      )
  }

  /**
   * The user holding this key, or undefined. The catalogue is asked by the key's hash only. A key
   * found is kept in the principal cache under the key as presented (40 characters, never the
   * 64 of a hash nor a "user:" entry), emptied by the same changes: a key asked again skips its
   * SHA-256 as well as the statement (about 0.7 µs a request). The key is then held in memory as
   * long as its principal is, as a request holds it while it runs; an unknown key is never kept.
   */
  function authenticate(key: string): Principal | undefined {
    if (!KEY_PATTERN.test(key)) return undefined
    return principals.get(key, () => findByHash(hashKey(key)))
  }

  function findByHash(hash: string): Principal | undefined {
    const row = byHash.get({ hash })
    if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash))) return undefined
    return principal(row)
  }

  const byKeyHash = (hash: string): Principal | undefined => principals.get(hash, () => findByHash(hash))
  const passwordOf = db
    .select({ password_hash: users.password_hash })
    .from(users)
    .where(eq(users.id, sql.placeholder('id')))
    .prepare()

  const passwords = createPasswordCheck(
    { names: USERNAME_PATTERN, find: (name) => byName.get({ name }), byKey: authenticate, principal },
    options.passwords,
  )

  return {
    authenticate,

    /**
     * The web page's sign-ins (sessions.ts). A new password and a revoked key end every session
     * of their user, in the transaction that makes the change.
     */
    sessions,

    /** The holder of the key with this hash (hashKey), or undefined: a key checked again without being kept (a long event stream). */
    byKeyHash,

    /**
     * What a user's password is now, in a form that holds no secret (SHA-256 of its Argon2 hash;
     * null: none, undefined: no such user): a login by password checked again later compares it.
     */
    passwordStamp(id: number): string | null | undefined {
      const row = passwordOf.get({ id })
      return row && (row.password_hash === null ? null : hashKey(row.password_hash))
    },

    /**
     * Changes whenever what a key stands for may have changed (what empties the key cache below):
     * a commit of another process, or a write to the auth tables here. Compared, never read.
     */
    authStamp: () => principals.stamp(),

    /** HTTP Basic: the user if the secret is one of their keys or their password (see passwords.ts). */
    authenticateBasic: passwords.check,

    /**
     * Sets (an Argon2id hash, see passwords.ts hashPassword) or, with null, removes a user's
     * password; false: there was none to remove. The user's history says a password was set,
     * changed or removed, as masks ("********" or null), never the password or its hash.
     */
    setPassword(name: string, hash: string | null): boolean {
      const user = findUser(name)
      if (hash === null && user.password_hash === null) return false
      db.transaction(() => {
        db.update(users).set({ password_hash: hash }).where(eq(users.id, user.id)).run()
        sessions.endAllOf(user.id)
        runSync(
          db,
          history().record(system('cli'), {
            resource: 'user',
            id: user.id,
            action: 'update',
            changes: { password: { old: hiddenPassword(user.password_hash), new: hiddenPassword(hash) } },
          }),
        )
      })
      return true
    },

    /** Throws the UserError of an unknown name (before `user passwd` asks for a password). */
    requireUser(name: string) {
      findUser(name)
    },

    /** The user's current permissions, by id (tasks re-check them when they start); undefined once deleted. */
    principalById(id: number): Principal | undefined {
      const user = byId.get({ id })
      return user && principal(user)
    },

    count: () => db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM users').get()!.n,

    add(name: string, opts: { superuser?: boolean; perms?: string[]; groups?: string[] } = {}) {
      if (!USERNAME_PATTERN.test(name))
        throw new UserError(`invalid user name "${name}": use letters, digits and @.+-_`)
      if (db.select({ id: users.id }).from(users).where(eq(users.username, name)).get())
        throw new UserError(`user "${name}" already exists`)
      // Every group is looked up before anything is written: a misspelt one makes no user.
      const joined = [...new Set(opts.groups ?? [])].map(findGroup)
      return db.transaction((tx) => {
        const user = tx
          .insert(users)
          .values({ username: name, is_superuser: !!opts.superuser, date_add: isoTimestamp() })
          .returning()
          .get()
        const perms = [...new Set(opts.perms ?? [])]
        for (const codename of perms) tx.insert(userPermissions).values({ user_id: user.id, codename }).run()
        runSync(
          db,
          history().record(system('cli'), {
            resource: 'user',
            id: user.id,
            action: 'create',
            changes: {
              username: { old: null, new: name },
              is_superuser: { old: null, new: user.is_superuser },
              ...Object.fromEntries(perms.map((c) => [`perm.${c}`, { old: null, new: true }])),
            },
          }),
        )
        for (const group of joined) join(user.id, group)
        return user
      })
    },

    grant(name: string, production: string, level: 'read' | 'write') {
      const user = findUser(name)
      const prod = /^\d+$/.test(production)
        ? db
            .select()
            .from(productions)
            .where(eq(productions.id, Number(production)))
            .get()
        : db.select().from(productions).where(eq(productions.name, production)).get()
      if (!prod) throw new UserError(`no production "${production}"`)
      db.transaction(() => {
        const before =
          db
            .select({ level: productionAccess.level })
            .from(productionAccess)
            .where(and(eq(productionAccess.user_id, user.id), eq(productionAccess.production_id, prod.id)))
            .get()?.level ?? null
        db.insert(productionAccess)
          .values({ user_id: user.id, production_id: prod.id, level })
          .onConflictDoUpdate({ target: [productionAccess.user_id, productionAccess.production_id], set: { level } })
          .run()
        // Who may work in a production is part of its record (members): the command line's grants
        // are in its history, as the service's own doing (`via` cli).
        if (before !== level)
          runSync(
            db,
            historyOf(db).record(system('cli'), {
              resource: 'production',
              id: prod.id,
              action: 'update',
              production: prod.id,
              changes: { [`access.${user.username}`]: { old: before, new: level } },
            }),
          )
      })
      return { user, production: prod }
    },

    /** Grants access without the name lookups (used when a user creates a production). */
    grantById(userId: number, productionId: number, level: 'read' | 'write') {
      db.insert(productionAccess)
        .values({ user_id: userId, production_id: productionId, level })
        .onConflictDoUpdate({ target: [productionAccess.user_id, productionAccess.production_id], set: { level } })
        .run()
    },

    /**
     * A new key: 40 lowercase hex characters, returned once, stored as its hash. A key is the
     * user's credential, not a record of its own: its history row is an update of the user,
     * `key.<id>` (the id `token list` shows) from false to true, never the key or its hash.
     */
    createKey(name: string): string {
      const user = findUser(name)
      const key = randomBytes(20).toString('hex')
      db.transaction(() => {
        const made = db
          .insert(apiKeys)
          .values({
            user_id: user.id,
            key_hash: hashKey(key),
            key_prefix: key.slice(0, KEY_PREFIX),
            date_add: isoTimestamp(),
          })
          .returning({ id: apiKeys.id })
          .get()
        keysChanged(user.id, [made.id], true)
      })
      return key
    },

    /** Every user with codenames and production access, by name: what `user list` shows. */
    list(): UserSummary[] {
      const perms = db.select().from(userPermissions).orderBy(userPermissions.codename).all()
      const memberships = db
        .select({ user_id: userGroups.user_id, name: groups.name })
        .from(userGroups)
        .innerJoin(groups, eq(groups.id, userGroups.group_id))
        .orderBy(groups.name)
        .all()
      const access = db
        .select({
          user_id: productionAccess.user_id,
          id: productions.id,
          name: productions.name,
          level: productionAccess.level,
        })
        .from(productionAccess)
        .innerJoin(productions, eq(productions.id, productionAccess.production_id))
        .orderBy(productions.name, productions.id)
        .all()
      return db
        .select()
        .from(users)
        .orderBy(users.username)
        .all()
        .map((u) => ({
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
    addGroup(name: string, perms: Codename[]): string[] {
      if (!GROUPNAME_PATTERN.test(name))
        throw new UserError(`invalid group name "${name}": use letters, digits and @.+-_`)
      if (db.select({ id: groups.id }).from(groups).where(eq(groups.name, name)).get())
        throw new UserError(`group "${name}" already exists`)
      const given = [...new Set(perms.length ? perms : (SUGGESTED_GROUPS[name]?.perms ?? []))]
      db.transaction((tx) => {
        const group = tx.insert(groups).values({ name, date_add: isoTimestamp() }).returning().get()
        for (const codename of given) tx.insert(groupPermissions).values({ group_id: group.id, codename }).run()
        runSync(
          db,
          history().record(system('cli'), {
            resource: 'group',
            id: group.id,
            action: 'create',
            changes: {
              name: { old: null, new: name },
              ...Object.fromEntries(given.map((c) => [`perm.${c}`, { old: null, new: true }])),
            },
          }),
        )
      })
      return given
    },

    /** Removes a group: its members lose its codenames, devices naming it no longer let them write. */
    removeGroup(name: string) {
      const group = findGroup(name)
      db.transaction(() => {
        db.delete(groups).where(eq(groups.id, group.id)).run()
        runSync(
          db,
          history().record(system('cli'), {
            resource: 'group',
            id: group.id,
            action: 'delete',
            changes: { name: { old: name, new: null } },
          }),
        )
      })
    },

    /** Every group with its codenames and members, by name: what `group list` shows. */
    groups(): GroupSummary[] {
      const perms = db.select().from(groupPermissions).orderBy(groupPermissions.codename).all()
      const members = db
        .select({ group_id: userGroups.group_id, username: users.username })
        .from(userGroups)
        .innerJoin(users, eq(users.id, userGroups.user_id))
        .orderBy(users.username)
        .all()
      return db
        .select()
        .from(groups)
        .orderBy(groups.name)
        .all()
        .map((g) => ({
          name: g.name,
          perms: perms.filter((p) => p.group_id === g.id).map((p) => p.codename),
          members: members.filter((m) => m.group_id === g.id).map((m) => m.username),
        }))
    },

    /** Gives a group a codename; false when it had it already. */
    addGroupPerm(name: string, codename: Codename): boolean {
      const group = findGroup(name)
      return db.transaction(() => {
        const added =
          db.$client
            .query('INSERT OR IGNORE INTO group_permissions (group_id, codename) VALUES (?, ?)')
            .run(group.id, codename).changes > 0
        if (added)
          runSync(
            db,
            history().record(system('cli'), {
              resource: 'group',
              id: group.id,
              action: 'update',
              changes: { [`perm.${codename}`]: { old: false, new: true } },
            }),
          )
        return added
      })
    },

    /** Takes a codename from a group; false when it did not have it. */
    removeGroupPerm(name: string, codename: string): boolean {
      const group = findGroup(name)
      return db.transaction(() => {
        const removed =
          db.$client.query('DELETE FROM group_permissions WHERE group_id = ? AND codename = ?').run(group.id, codename)
            .changes > 0
        if (removed)
          runSync(
            db,
            history().record(system('cli'), {
              resource: 'group',
              id: group.id,
              action: 'update',
              changes: { [`perm.${codename}`]: { old: true, new: false } },
            }),
          )
        return removed
      })
    },

    /** Puts a user in a group; false when they were in it already. */
    joinGroup(name: string, groupName: string): boolean {
      const user = findUser(name)
      const group = findGroup(groupName)
      return db.transaction(() => join(user.id, group))
    },

    /** Takes a user out of a group; false when they were not in it. */
    leaveGroup(name: string, groupName: string): boolean {
      const user = findUser(name)
      const group = findGroup(groupName)
      return db.transaction(() => {
        const removed =
          db.$client.query('DELETE FROM user_groups WHERE user_id = ? AND group_id = ?').run(user.id, group.id)
            .changes > 0
        if (removed)
          runSync(
            db,
            history().record(system('cli'), {
              resource: 'user',
              id: user.id,
              action: 'update',
              changes: { [`group.${group.name}`]: { old: true, new: false } },
            }),
          )
        return removed
      })
    },

    /** Gives a codename; false when the user had it already. */
    addPerm(name: string, codename: Codename): boolean {
      const user = findUser(name)
      return db.transaction(() => {
        const added =
          db.$client
            .query('INSERT OR IGNORE INTO user_permissions (user_id, codename) VALUES (?, ?)')
            .run(user.id, codename).changes > 0
        if (added)
          runSync(
            db,
            historyOf(db).record(system('cli'), {
              resource: 'user',
              id: user.id,
              action: 'update',
              changes: { [`perm.${codename}`]: { old: false, new: true } },
            }),
          )
        return added
      })
    },

    /** Takes a codename away; false when the user did not have it. */
    removePerm(name: string, codename: string): boolean {
      const user = findUser(name)
      return db.transaction(() => {
        const removed =
          db.$client.query('DELETE FROM user_permissions WHERE user_id = ? AND codename = ?').run(user.id, codename)
            .changes > 0
        if (removed)
          runSync(
            db,
            historyOf(db).record(system('cli'), {
              resource: 'user',
              id: user.id,
              action: 'update',
              changes: { [`perm.${codename}`]: { old: true, new: false } },
            }),
          )
        return removed
      })
    },

    /**
     * A user's keys, oldest first, as `token list` shows them: id, creation time and the key's
     * first characters (for a key made before those were kept, its hash's). Never the key itself,
     * which is not stored.
     */
    keysOf(name: string): { id: number; date_add: string; prefix: string | null; hash_prefix: string }[] {
      const user = findUser(name)
      return db
        .select({
          id: apiKeys.id,
          date_add: apiKeys.date_add,
          key_hash: apiKeys.key_hash,
          key_prefix: apiKeys.key_prefix,
        })
        .from(apiKeys)
        .where(eq(apiKeys.user_id, user.id))
        .orderBy(apiKeys.id)
        .all()
        .map((k) => ({
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
    revokeKey(key: string): boolean {
      return db.transaction(() => {
        const gone = db.$client
          .query<{ id: number; user_id: number }, [string]>(
            'DELETE FROM api_keys WHERE key_hash = ? RETURNING id, user_id',
          )
          .all(hashKey(key))
        for (const k of gone) {
          keysChanged(k.user_id, [k.id], false)
          sessions.endAllOf(k.user_id)
        }
        return gone.length > 0
      })
    },

    /**
     * Removes the key with this id, the one `token list` shows (ids are unique across users), and
     * says whose it was; undefined when there is no such key.
     */
    revokeKeyById(id: number): string | undefined {
      return db.transaction(() => {
        const owner = db.$client
          .query<{ user_id: number }, [number]>('DELETE FROM api_keys WHERE id = ? RETURNING user_id')
          .get(id)
        if (owner) {
          keysChanged(owner.user_id, [id], false)
          sessions.endAllOf(owner.user_id)
        }
        return owner ? byId.get({ id: owner.user_id })?.username : undefined
      })
    },

    revokeAll(name: string): number {
      const user = findUser(name)
      return db.transaction(() => {
        const gone = db.$client
          .query<{ id: number }, [number]>('DELETE FROM api_keys WHERE user_id = ? RETURNING id')
          .all(user.id)
          .map((k) => k.id)
        keysChanged(user.id, gone, false)
        if (gone.length) sessions.endAllOf(user.id)
        return gone.length
      })
    },
  }
}

export type Users = ReturnType<typeof createUsers>

const EVERY_CHANGE = ['INSERT', 'UPDATE', 'DELETE'] as const
/**
 * The tables a Principal is made of; a change to any of them may change who holds a key and what
 * they may do. And the end of a session (sign-out), so that the event streams it opened are
 * checked again (authStamp); not its sign-in or its last_seen, which take nothing away.
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

/**
 * Principals by key (and by key hash, and by user id for sessions), so that a request with a
 * known key costs a map lookup, not three queries (10 µs of a 50 µs request) nor a hash. An entry is only served while nothing it was
 * made of can have changed, which SQLite tells in two parts:
 * - commits by any other connection (the CLI's token revoke, user grant, user perm remove, in
 *   another process) change `PRAGMA data_version` of this one (read once per request, db/client.ts);
 * - this connection's own writes to the auth tables, by any code path (the users service, a
 *   production's creator given write access, a production deleted with its access rows by ON
 *   DELETE CASCADE), bump a counter in its temporary database, kept by temporary triggers, which
 *   live on this connection only and fire for cascaded deletes too. Each commit of the temporary
 *   database changes its file version (db/client.ts fileVersion), which is read without a
 *   statement: a request compares it, and runs one (the temporary schema's version) only when it
 *   changed.
 *   The version of the catalogue itself would say the same but changes on every write (every
 *   import), and the cache would miss constantly under load.
 * Any change of either empties the whole cache. Inside a transaction nothing is cached or served:
 * its writes to the auth tables change the version only once they commit (a GET's read-only
 * transaction aside). A table dropped (or rebuilt) takes its triggers with it, which writes the
 * temporary schema (its version changes too): the triggers are then made again.
 */
function principalCache(db: Db) {
  const client = db.$client
  client.run('CREATE TEMP TABLE IF NOT EXISTS auth_generation (n INTEGER NOT NULL)')
  client.run('INSERT INTO temp.auth_generation (n) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM temp.auth_generation)')
  const dataVersion = dataVersionOf(db)
  const snapshot = readSnapshotOf(db)
  const tempSchema = client.prepare<{ schema_version: number }, []>('PRAGMA temp.schema_version')
  const watch = () => {
    for (const [table, events] of AUTH_TABLES)
      for (const event of events)
        client.run(`CREATE TEMP TRIGGER IF NOT EXISTS auth_generation_${table}_${event.toLowerCase()} AFTER ${event} ON main.${table}
          BEGIN UPDATE temp.auth_generation SET n = n + 1; END`)
    return tempSchema.get()!.schema_version
  }
  let schema = watch()
  const cache = new Map<string, Principal>()
  let version = -1
  let own = fileVersion(client, 'temp')

  return {
    /** The catalogue's data_version and the version of this connection's temporary database, as one text. */
    stamp: () => `${dataVersion.get()}:${fileVersion(client, 'temp')}`,

    /** The principal for this key, key hash or "user:ID": the cached one while valid, else made (and kept when found). */
    get(hash: string, make: () => Principal | undefined): Principal | undefined {
      // A GET's read transaction (db/client.ts readSnapshotOf) writes nothing and never rolls back.
      if (client.inTransaction && !snapshot.active) return make()
      const nowVersion = dataVersion.get()
      const nowOwn = fileVersion(client, 'temp')
      if (nowOwn !== own) {
        // The auth tables were written here, or the temporary schema changed (a table dropped).
        if (tempSchema.get()!.schema_version !== schema) schema = watch()
        own = fileVersion(client, 'temp')
        cache.clear()
      }
      if (nowVersion !== version) {
        cache.clear()
        version = nowVersion
      }
      const cached = cache.get(hash)
      if (cached) return cached
      const made = make()
      if (made) {
        if (cache.size >= MAX_CACHED) cache.clear()
        cache.set(hash, Object.freeze(made))
      }
      return made
    },
  }
}
