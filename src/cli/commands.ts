// The commands other than serve: users, keys, migrations, backups. Each opens the catalogue,
// does one thing, prints one result, and closes it; all of them work while serve runs.
import { closeSync, openSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { dbFile } from '../config.ts'
import { UsageError } from '../config.ts'
import { type Db, openDb, tightenModes } from '../db/client.ts'
import { migrate } from '../db/migrate.ts'
import { KEY_PATTERN, UserError, createUsers } from '../modules/users/service.ts'
import { stderrLog } from '../util/log.ts'

export function withDb<T>(dataDir: string, run: (db: Db) => T): T {
  const db = openDb(dbFile(dataDir))
  try {
    migrate(db)
    return run(db)
  } finally {
    db.$client.close()
  }
}

export function userAdd(dataDir: string, name: string, superuser: boolean, perms: string[]) {
  for (const p of perms) if (!/^[a-z_]+\.[a-z_]+$/.test(p)) throw new UsageError(`--perm takes a codename such as browser.add_device, not "${p}"`)
  withDb(dataDir, (db) => createUsers(db).add(name, { superuser, perms }))
  console.log(`user ${name} added${superuser ? ' (superuser)' : ''}`)
}

export function userGrant(dataDir: string, name: string, production: string, level: 'read' | 'write') {
  const done = withDb(dataDir, (db) => createUsers(db).grant(name, production, level))
  console.log(`${name} may now ${level} production ${done.production.name} (id ${done.production.id})`)
}

export function tokenCreate(dataDir: string, name: string) {
  console.log(withDb(dataDir, (db) => createUsers(db).createKey(name)))
}

export function tokenRevoke(dataDir: string, key: string | undefined, user: string | undefined) {
  if ((key === undefined) === (user === undefined)) throw new UsageError('token revoke takes a KEY or --user NAME')
  if (key !== undefined && !KEY_PATTERN.test(key)) throw new UsageError('a key is 40 lowercase hex characters')
  withDb(dataDir, (db) => {
    const users = createUsers(db)
    if (user !== undefined) return console.log(`revoked ${users.revokeAll(user)} key(s) of ${user}`)
    if (!users.revokeKey(key!)) throw new UserError('no such key')
    console.log('key revoked')
  })
}

export function migrateCommand(dataDir: string) {
  // Not withDb: it migrates first, and this command reports what it applied.
  const db = openDb(dbFile(dataDir))
  tightenModes(dbFile(dataDir), stderrLog)
  let applied: number
  try {
    applied = migrate(db)
  } finally {
    db.$client.close()
  }
  console.log(applied ? `applied ${applied} migration(s)` : 'database is up to date')
}

/**
 * A consistent copy of the live database (VACUUM INTO reads one snapshot; writers go on). The
 * copy holds what the catalogue holds, so it is made 0600 like it: VACUUM INTO fills an empty
 * file it is given, created here (never over an existing one) with that mode.
 */
export function backup(dataDir: string, file: string) {
  const target = resolve(file)
  try {
    closeSync(openSync(target, 'wx', 0o600))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new UserError(`${target} already exists; a backup never overwrites`)
    throw error
  }
  try {
    withDb(dataDir, (db) => db.$client.run('VACUUM INTO ?', [target]))
  } catch (error) {
    rmSync(target, { force: true })
    throw error
  }
  console.log(`backup written to ${target}`)
}
