// The commands other than serve: users, keys, migrations, backups. Each opens the catalogue,
// does one thing, prints one result, and closes it; all of them work while serve runs, but
// migrate-to-postgres, which refuses (what serve wrote after its snapshot would be lost). Each
// writes, reads and resolves through the Io it is given (src/cli/io.ts), never the process's own.
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync } from 'node:fs'
import { dirname, join, parse, sep } from 'node:path'
import { read } from 'read'
import { dbFile, resolveIn } from '../config.ts'
import { UsageError } from '../config.ts'
import { closeDb, openDb, tightenModes, vacuumInto } from '../db/client.ts'
import { migrate } from '../db/migrate.ts'
import { type Port, type Work, sqlitePort } from '../db/port.ts'
import { queueRemakes } from '../modules/assetimport/proxy.task.ts'
import { AppError } from '../http/errors.ts'
import { hashPassword } from '../modules/users/passwords.ts'
import { type Codename, KEY_PATTERN, UserError, createUsers } from '../modules/users/service.ts'
import { createLog } from '../util/log.ts'
import type { Io } from './io.ts'

/**
 * Only serve and migrate make a catalogue. Any other command on a folder without one was given
 * the wrong folder (a user added there would never reach the server), so it stops before
 * openDb, which would create the folder and an empty catalogue.
 */
export function requireCatalogue(dataDir: string) {
  if (!existsSync(dbFile(dataDir)))
    throw new UserError(`no catalogue in ${dataDir}; pass --data DIR (serve prints its data= folder)`)
}

/**
 * The first thing a command says once its arguments are known good: which data folder it uses,
 * on stderr, so that token create's stdout stays the key alone. serve's startup line says it.
 */
function announce(io: Io, dataDir: string) {
  io.stderr.write(`data=${dataDir}\n`)
}

/** console.log's line: the text and an end of line. */
const say = (io: Io, text: string) => io.stdout.write(`${text}\n`)

/**
 * Where a command's catalogue is: the SQLite one in the data folder, or the PostgreSQL one that
 * --database (else REELHOUSE_DATABASE) names.
 */
export type CatalogueAt = { dataDir: string; database?: DatabaseUrl }

/**
 * Runs the work `make` builds on a port of the catalogue `at`, and closes it. It first says which
 * catalogue (data= on stderr, or database= without the password once the server answered;
 * `quiet` for a second run of the same command). SQLite: a data folder without a catalogue is
 * refused, the catalogue migrated as every command does. PostgreSQL: its migrations applied under
 * their lock (db/pg/open.ts); a URL of another kind or a server that cannot be reached or refuses
 * the session is a mistake of the invocation (exit 2), one line naming where and why.
 */
export async function onCatalogue<T>(
  io: Io,
  at: CatalogueAt,
  make: (port: Port) => Work<T>,
  { quiet = false }: { quiet?: boolean } = {},
): Promise<T> {
  if (!at.database) {
    if (!quiet) announce(io, at.dataDir)
    requireCatalogue(at.dataDir)
    const db = openDb(dbFile(at.dataDir))
    try {
      migrate(db)
      const port = sqlitePort(db)
      return port.run(make(port))
    } finally {
      closeDb(db)
    }
  }
  const { url, from } = at.database
  // Loaded here only: the PostgreSQL client is no part of a SQLite command's start.
  const pg = await import('../db/pg/migrate.ts')
  const shown = pg.withoutPassword(url)
  if (!pg.isPostgresUrl(url)) throw new UsageError(`${from} must be a postgres:// or postgresql:// URL, not "${shown}"`)
  const { openPostgres } = await import('../db/pg/open.ts')
  let catalogue: Awaited<ReturnType<typeof openPostgres>>
  try {
    catalogue = await openPostgres(
      url,
      createLog('text', (line) => io.stderr.write(line)),
      2,
    )
  } catch (error) {
    throw saidOfPostgres(pg, error, shown)
  }
  try {
    if (!quiet) io.stderr.write(`database=${shown}\n`)
    return await catalogue.port.run(make(catalogue.port))
  } finally {
    await catalogue.close()
  }
}

export async function userAdd(
  io: Io,
  at: CatalogueAt,
  name: string,
  superuser: boolean,
  perms: Codename[],
  groups: string[] = [],
) {
  await onCatalogue(io, at, (port) => createUsers(port).add(name, { superuser, perms, groups }))
  const joined = groups.length ? ` in group${groups.length > 1 ? 's' : ''} ${[...new Set(groups)].join(', ')}` : ''
  say(io, `user ${name} added${superuser ? ' (superuser)' : ''}${joined}`)
}

/** A new group; without --perm, a suggested role's codenames when the name is one (it says which). */
export async function groupAdd(io: Io, at: CatalogueAt, name: string, perms: Codename[]) {
  const given = await onCatalogue(io, at, (port) => createUsers(port).addGroup(name, perms))
  const suggested = !perms.length && given.length ? ' (the suggested role)' : ''
  say(io, `group ${name} added with ${given.length ? given.join(', ') : 'no permissions'}${suggested}`)
}

export async function groupRemove(io: Io, at: CatalogueAt, name: string) {
  await onCatalogue(io, at, (port) => createUsers(port).removeGroup(name))
  say(io, `group ${name} removed; its members no longer have its permissions`)
}

export async function groupList(io: Io, at: CatalogueAt) {
  const list = await onCatalogue(io, at, (port) => createUsers(port).groups())
  if (!list.length) return say(io, 'no groups')
  const out: string[] = []
  for (const g of list) {
    out.push(g.name)
    out.push(`  permissions  ${g.perms.join(', ') || 'none'}`)
    out.push(`  members      ${g.members.join(', ') || 'none'}`)
  }
  say(io, out.join('\n'))
}

export async function groupPermAdd(io: Io, at: CatalogueAt, name: string, codename: Codename) {
  const added = await onCatalogue(io, at, (port) => createUsers(port).addGroupPerm(name, codename))
  say(io, added ? `group ${name} now has ${codename}` : `group ${name} already had ${codename}`)
}

/** Any codename the group holds, also one no route checks any more (as userPermRemove). */
export async function groupPermRemove(io: Io, at: CatalogueAt, name: string, codename: string) {
  const removed = await onCatalogue(io, at, (port) => createUsers(port).removeGroupPerm(name, codename))
  say(io, removed ? `group ${name} no longer has ${codename}` : `group ${name} did not have ${codename}`)
}

export async function userGroupAdd(io: Io, at: CatalogueAt, name: string, group: string) {
  const added = await onCatalogue(io, at, (port) => createUsers(port).joinGroup(name, group))
  say(io, added ? `${name} is now in group ${group}` : `${name} was in group ${group} already`)
}

export async function userGroupRemove(io: Io, at: CatalogueAt, name: string, group: string) {
  const removed = await onCatalogue(io, at, (port) => createUsers(port).leaveGroup(name, group))
  say(io, removed ? `${name} is no longer in group ${group}` : `${name} was not in group ${group}`)
}

export async function userGrant(io: Io, at: CatalogueAt, name: string, production: string, level: 'read' | 'write') {
  const done = await onCatalogue(io, at, (port) => createUsers(port).grant(name, production, level))
  say(io, `${name} may now ${level} production ${done.production.name} (id ${done.production.id})`)
}

export async function userList(io: Io, at: CatalogueAt) {
  const list = await onCatalogue(io, at, (port) => createUsers(port).list())
  if (!list.length) return say(io, 'no users')
  const out: string[] = []
  for (const u of list) {
    if (u.is_superuser) {
      out.push(`${u.username}  superuser (may do everything)`)
      continue
    }
    out.push(u.username)
    out.push(`  permissions  ${u.perms.join(', ') || 'none'}`)
    // Only for a user in a group: the list of everyone else reads as it always did.
    if (u.groups.length) out.push(`  groups       ${u.groups.join(', ')}`)
    const access = (level: 'read' | 'write') =>
      u.productions
        .filter((p) => p.level === level)
        .map((p) => `${p.name} (id ${p.id})`)
        .join(', ') || 'none'
    out.push(`  write        ${access('write')}`)
    out.push(`  read         ${access('read')}`)
  }
  say(io, out.join('\n'))
}

export async function userPermAdd(io: Io, at: CatalogueAt, name: string, codename: Codename) {
  const added = await onCatalogue(io, at, (port) => createUsers(port).addPerm(name, codename))
  say(io, added ? `${name} now has ${codename}` : `${name} already had ${codename}`)
}

/**
 * Any codename the user holds, not only those of today's list: a catalogue of an older version
 * may hold one that no route checks any more (`user list` shows it), and it must be removable.
 */
export async function userPermRemove(io: Io, at: CatalogueAt, name: string, codename: string) {
  const removed = await onCatalogue(io, at, (port) => createUsers(port).removePerm(name, codename))
  say(io, removed ? `${name} no longer has ${codename}` : `${name} did not have ${codename}`)
}

/**
 * Sets a user's password for HTTP Basic (or, with clear, removes it). The password is read, never
 * printed, and kept only as its Argon2id hash; a server running on the same catalogue takes the
 * new one from its next request (what it remembered was keyed by the old hash).
 */
export async function userPasswd(
  io: Io,
  at: CatalogueAt,
  name: string,
  clear: boolean,
  input = (name: string) => readPassword(io, name),
) {
  if (clear) {
    const had = await onCatalogue(io, at, (port) => createUsers(port).setPassword(name, null))
    return void say(io, had ? `password of ${name} cleared` : `${name} had no password`)
  }
  // The name is checked before the password is asked for, not after it was typed twice.
  await onCatalogue(io, at, (port) => createUsers(port).requireUser(name))
  const password = await input(name)
  if (!password) throw new UserError('the password is empty; nothing changed')
  const hash = await hashPassword(password)
  await onCatalogue(io, at, (port) => createUsers(port).setPassword(name, hash), { quiet: true })
  say(io, `password of ${name} set`)
}

/** From a terminal: asked twice, not echoed. Else (a pipe, a file) the first line of stdin, so scripts can set one. */
async function readPassword(io: Io, name: string): Promise<string> {
  if (!io.stdin.isTTY) return firstLine(io.stdin.stream())
  const password = await askHidden(`password for ${name}:`)
  if (password && (await askHidden('again:')) !== password) throw new UserError('the passwords differ; nothing changed')
  return password
}

async function firstLine(stdin: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stdin.getReader()
  const decoder = new TextDecoder()
  let text = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (value) text += decoder.decode(value, { stream: true })
      const end = text.indexOf('\n')
      if (end >= 0) return text.slice(0, end).replace(/\r$/, '')
      if (done) return text.replace(/\r$/, '')
    }
  } finally {
    // Whatever follows the first line is not read: the caller may keep writing.
    void reader.cancel().catch(() => {})
  }
}

/**
 * One line from the terminal, not echoed, edited as any line is (arrows move, backspace deletes
 * where the cursor is): read's readline does the editing, so a password is what the user sees
 * it to be, never the escape sequences the keys send. The prompt goes to stderr. A terminal is
 * only ever the process's own (Io's stdin), so this reads and writes the process's streams.
 */
async function askHidden(prompt: string): Promise<string> {
  // readline closes on Ctrl-D at an empty line without an answer, and read then never settles;
  // the loop would empty and the process end as if all went well. That end is a cancel too.
  let cancel: () => void = () => {}
  const cancelled = new Promise<never>(
    (_, reject) => (cancel = () => reject(new UserError('cancelled; nothing changed'))),
  )
  process.once('beforeExit', cancel)
  try {
    return await Promise.race([read({ prompt, silent: true, input: process.stdin, output: process.stderr }), cancelled])
  } catch (error) {
    // Ctrl-C: readline takes it as a key (raw mode), read rejects with "canceled".
    if (error instanceof Error && error.message === 'canceled') throw new UserError('cancelled; nothing changed')
    throw error
  } finally {
    process.off('beforeExit', cancel)
    // Muted, readline's own end of line was not shown: what comes next starts a line of its own.
    process.stderr.write('\n')
  }
}

/**
 * Queues a proxy task for every asset of the production that has a file in production, with the
 * named profile or the one that applies to each. A serve running on the catalogue takes them
 * within a second, as many at once as its --task-concurrency; else the next serve does.
 */
export async function proxiesRemake(io: Io, at: CatalogueAt, production: string, profile?: string) {
  let done: Awaited<ReturnType<typeof queueRemakesOn>>
  try {
    done = await queueRemakesOn(io, at, production, profile)
  } catch (error) {
    if (error instanceof AppError) throw new UserError(error.message)
    throw error
  }
  const ids = done.queued.length
    ? ` (tasks ${done.queued[0]}${done.queued.length > 1 ? `-${done.queued.at(-1)}` : ''})`
    : ''
  const waiting = done.skipped ? `; ${done.skipped} already had one queued` : ''
  say(
    io,
    `queued ${done.queued.length} proxy task(s) for production ${done.production.name} (id ${done.production.id})${ids}${waiting}; serve makes them, --task-concurrency at once`,
  )
}

const queueRemakesOn = (io: Io, at: CatalogueAt, production: string, profile?: string) =>
  onCatalogue(io, at, (port) => queueRemakes(port.db, production, profile))

export async function tokenList(io: Io, at: CatalogueAt, name: string) {
  const keys = await onCatalogue(io, at, (port) => createUsers(port).keysOf(name))
  if (!keys.length) return say(io, `${name} has no keys`)
  say(
    io,
    keys
      .map(
        (k) => `key ${k.id}  created ${k.date_add}  ${k.prefix !== null ? `${k.prefix}…` : `sha256 ${k.hash_prefix}…`}`,
      )
      .join('\n'),
  )
}

export async function tokenCreate(io: Io, at: CatalogueAt, name: string) {
  say(io, await onCatalogue(io, at, (port) => createUsers(port).createKey(name)))
}

/** What `token revoke` is given: the key itself, a key's id as `token list` shows it, or a user all of whose keys go. */
export type Revoke = { key: string } | { id: number } | { user: string }

export async function tokenRevoke(io: Io, at: CatalogueAt, what: Revoke) {
  if ('key' in what && !KEY_PATTERN.test(what.key))
    throw new UsageError('a key is 40 lowercase hex characters; or give --id N as token list shows it')
  const said = await onCatalogue(io, at, function* (port) {
    const users = createUsers(port)
    if ('user' in what) return `revoked ${yield* users.revokeAll(what.user)} key(s) of ${what.user}`
    if ('key' in what) {
      if (!(yield* users.revokeKey(what.key))) throw new UserError('no such key')
      return 'key revoked'
    }
    const owner = yield* users.revokeKeyById(what.id)
    if (owner === undefined)
      throw new UserError(`no key with id ${what.id}; reelhouse token list NAME shows a user's keys`)
    return `key ${what.id} of ${owner} revoked`
  })
  say(io, said)
}

/** A PostgreSQL catalogue to migrate instead of the data folder's, and where the URL came from (for messages). */
export type DatabaseUrl = { url: string; from: '--database' | 'REELHOUSE_DATABASE' }

export function migrateCommand(io: Io, { dataDir, database }: CatalogueAt): void | Promise<void> {
  if (database) return migratePostgresCommand(io, database)
  // Not withDb: it makes a catalogue where there is none, and reports what it applied.
  announce(io, dataDir)
  const db = openDb(dbFile(dataDir))
  tightenModes(
    dbFile(dataDir),
    createLog('text', (line) => io.stderr.write(line)),
  )
  let applied: number
  try {
    applied = migrate(db)
  } finally {
    closeDb(db)
  }
  say(io, applied ? `applied ${applied} migration(s)` : 'database is up to date')
}

/**
 * migrate --database: the PostgreSQL catalogue's migrations, said as the SQLite ones are. Its
 * stderr line names the URL, never its password, and comes once the server has answered, so that
 * a failure is the one line of run(). A URL of another kind, or a server that cannot be reached
 * or refuses the session, is a mistake of the invocation (exit 2); a migration the server
 * refuses is a failure of the work (exit 1).
 */
async function migratePostgresCommand(io: Io, { url, from }: DatabaseUrl) {
  // Loaded here only: the PostgreSQL client and its migrations are no part of the other commands' start.
  const pg = await import('../db/pg/migrate.ts')
  const shown = pg.withoutPassword(url)
  if (!pg.isPostgresUrl(url)) throw new UsageError(`${from} must be a postgres:// or postgresql:// URL, not "${shown}"`)
  const applied = await migratePostgresSaid(pg, url, shown)
  io.stderr.write(`database=${shown}\n`)
  say(io, applied ? `applied ${applied} migration(s)` : 'database is up to date')
}

/**
 * The PostgreSQL catalogue's migrations applied, their failures said as the command line says
 * them: a server that cannot be reached or refuses the session is a mistake of the invocation
 * (exit 2), a migration the server refuses a failure of the work (exit 1).
 */
async function migratePostgresSaid(pg: typeof import('../db/pg/migrate.ts'), url: string, shown: string) {
  try {
    return await pg.migratePostgres(url)
  } catch (error) {
    throw saidOfPostgres(pg, error, shown)
  }
}

/**
 * A failure to open or migrate the PostgreSQL catalogue as the command line says it: a server that
 * cannot be reached or refuses the session is a mistake of the invocation (exit 2), a migration
 * the server refuses a failure of the work (exit 1).
 */
function saidOfPostgres(pg: typeof import('../db/pg/migrate.ts'), error: unknown, shown: string): Error {
  if (error instanceof pg.PostgresConnectError)
    return new UsageError(`cannot connect to ${shown} (at ${error.where}): ${error.reason}`)
  // drizzle wraps the server's error in one naming the statement: the server's says why.
  const cause = (error as { cause?: unknown })?.cause
  const reason = cause instanceof Error ? cause.message : ((error as Error)?.message ?? String(error))
  return new UserError(`migrating ${shown} failed: ${reason}`)
}

/**
 * migrate-to-postgres: the SQLite catalogue in the data folder copied, whole and with its ids,
 * into the empty PostgreSQL catalogue at `database` (db/pg/copy.ts), after that catalogue's
 * migrations. Refused while a serve uses the data folder: the copy reads one snapshot, so what
 * the server wrote after it would be in the SQLite catalogue only, and lost on the move. Mistakes
 * of the invocation (no URL, a URL of another kind, a server that cannot be reached or refuses
 * the session) exit 2 as migrate's do; a catalogue that cannot be copied, or a target that is
 * not empty, exit 1, with the target left as it was.
 */
export async function migrateToPostgresCommand(io: Io, { dataDir, database }: CatalogueAt) {
  if (!database)
    throw new UsageError(
      'migrate-to-postgres needs --database URL (or REELHOUSE_DATABASE); see reelhouse migrate-to-postgres --help',
    )
  const { url, from } = database
  const pg = await import('../db/pg/migrate.ts')
  const copy = await import('../db/pg/copy.ts')
  const shown = pg.withoutPassword(url)
  if (!pg.isPostgresUrl(url)) throw new UsageError(`${from} must be a postgres:// or postgresql:// URL, not "${shown}"`)
  requireCatalogue(dataDir)
  refuseWhileServed(dataDir)
  await migratePostgresSaid(pg, url, shown)
  // data= and database= come with the first table, once the target is known to take the copy,
  // so that a refused target is the one line of run().
  let announced = false
  const progress = (line: string) => {
    if (!announced) {
      announce(io, dataDir)
      io.stderr.write(`database=${shown}\n`)
      announced = true
    }
    io.stderr.write(`${line}\n`)
  }
  let result: Awaited<ReturnType<typeof copy.copyToPostgres>>
  try {
    result = await copy.copyToPostgres(dbFile(dataDir), url, progress)
  } catch (error) {
    if (error instanceof copy.CopyRefusedError)
      throw new UserError(`the PostgreSQL catalogue at ${shown} ${error.message}`)
    if (error instanceof copy.RowRefusedError) throw new UserError(`${error.message}; ${shown} is left empty`)
    throw new UserError(`copying to ${shown} failed: ${copy.reasonOf(error)}; it is left empty`)
  }
  say(io, `copied ${result.rows} rows in ${result.tables} tables to ${shown}`)
}

/**
 * Refuses while serve.pid names a live process (serve writes it, src/cli/serve.ts). A file left
 * by a process that died, or naming this process (a pid reused since), is no serve.
 */
function refuseWhileServed(dataDir: string) {
  let pid: number
  try {
    pid = Number(readFileSync(join(dataDir, 'serve.pid'), 'utf8').trim())
  } catch (error) {
    if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code!)) return
    throw error
  }
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return
  }
  throw new UserError(
    `a reelhouse serve (pid ${pid}) is using ${dataDir}; stop it first, or what it writes after the copy begins is not copied`,
  )
}

/**
 * A consistent copy of the live database (VACUUM INTO reads one snapshot; writers go on). The
 * copy holds what the catalogue holds, so it is made 0600 like it: VACUUM INTO fills an empty
 * file it is given, created here (never over an existing one) with that mode.
 */
export function backup(io: Io, { dataDir, database }: CatalogueAt, file: string) {
  // PostgreSQL's own tools copy a consistent snapshot of a live database, and its operators
  // already run them (and point-in-time recovery); a second way of ours would be a worse one.
  if (database)
    throw new UsageError(
      'backup copies the SQLite catalogue of --data; back a PostgreSQL catalogue up with pg_dump (pg_dump -Fc -f FILE URL) or your PostgreSQL backups',
    )
  const target = resolveIn(io.cwd, file)
  announce(io, dataDir)
  requireCatalogue(dataDir)
  try {
    closeSync(openSync(target, 'wx', 0o600))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') throw new UserError(`${target} already exists; a backup never overwrites`)
    // The open alone decides (no check before it that could be stale by then); the walk below
    // only finds which part of the path to name.
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new UserError(missingFolder(dirname(target), code))
    throw error
  }
  try {
    const db = openDb(dbFile(dataDir))
    try {
      migrate(db)
      vacuumInto(db, target)
    } finally {
      closeDb(db)
    }
  } catch (error) {
    rmSync(target, { force: true })
    throw error
  }
  say(io, `backup written to ${target}`)
}

/**
 * Why a file cannot be made in `folder`: the first component of it, from the root down, that is
 * a file ("not a folder"), else the folder itself, which is missing (one mkdir -p makes it).
 */
function missingFolder(folder: string, code: 'ENOENT' | 'ENOTDIR'): string {
  const missing = `folder ${folder} does not exist; create it first`
  for (let at = parse(folder).root, rest = folder.slice(at.length).split(sep).filter(Boolean); ; ) {
    let isFolder: boolean
    try {
      isFolder = statSync(at).isDirectory()
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return missing
      break
    }
    if (!isFolder) return `${at} is not a folder`
    const next = rest.shift()
    if (next === undefined) break
    at = join(at, next)
  }
  // The path changed since the open failed, or a link loops: what the open said, unlocated.
  return code === 'ENOENT' ? missing : `a component of the path ${folder} is not a folder`
}

export type VerifyOptions = {
  /** Write a new generation (process in-place) recording what was found. */
  record?: boolean
  /** Progress on stderr even when it is not a terminal (a line a second). */
  progress?: boolean
}

/**
 * `reelhouse verify PATH`: the files at PATH (the folder of an ASC MHL history, or a folder or
 * file inside one) hashed and compared with the history (modules/verify/check.ts); what differs
 * is printed one line per file, grouped (failed, missing, new, then what could not be checked),
 * and a summary line. Resolves to the exit code: 0 when every recorded file is as recorded and
 * none is missing, 1 otherwise (as the ASC's `ascmhl verify` exits non-zero); a check that cannot
 * be made (no history, PATH not there, a malformed manifest or chain) is a UsageError (exit 2).
 * Uses no catalogue. Writes nothing unless `record`.
 */
export async function verifyCommand(io: Io, path: string, opts: VerifyOptions = {}): Promise<number> {
  // Loaded here: hashing (its WebAssembly) and the folder calls are for this command only.
  const check = await import('../modules/verify/check.ts')
  const mhl = await import('../storage/mhl.ts')
  const { close } = await import('../storage/dirfd.ts')
  const { describe } = await import('../storage/errors.ts')
  const tty = io.stderr.isTTY === true
  let last = 0
  let shown = false
  const onProgress =
    tty || opts.progress
      ? (p: { files: number; filesTotal: number; bytes: number }) => {
          const now = Date.now()
          if (now - last < (tty ? 100 : 1000) && p.files < p.filesTotal) return
          last = now
          shown = true
          const text = `verifying: ${p.files}/${p.filesTotal} files, ${sizeText(p.bytes)}`
          io.stderr.write(tty ? `\r${text}\x1b[K` : `${text}\n`)
        }
      : undefined
  let report: Awaited<ReturnType<typeof check.checkFolder>>
  let written: ReturnType<typeof mhl.newGeneration> | undefined
  try {
    const { root, within } = check.locateHistory(resolveIn(io.cwd, path))
    if (opts.record && within)
      throw new UsageError(`--record records the whole folder of the history: give ${root}, not a path inside it`)
    const fd = check.openDevice(root, '')
    try {
      report = await check.checkFolder(fd, root, within, { onProgress })
      if (opts.record)
        written = mhl.newGeneration(
          root,
          report.found.map((f) => ({
            path: f.path,
            size: f.size,
            lastModified: new Date(f.mtimeMs),
            xxh64: f.xxh64,
            hashDate: f.hashDate,
          })),
          {
            process: 'in-place',
            comment: 'reelhouse verify --record',
            folder: mhl.historyFolderAt(fd, check.joinRel(root, mhl.MHL_FOLDER)),
          },
        )
    } finally {
      close(fd)
      if (tty && shown) io.stderr.write('\r\x1b[K')
    }
  } catch (error) {
    if (error instanceof UsageError) throw error
    if (error instanceof check.VerifyError || error instanceof mhl.MhlError) throw new UsageError(error.message)
    throw new UsageError(describe(error))
  }
  const lines: string[] = []
  for (const f of report.failed) lines.push(`failed        ${f.path}  recorded ${f.recorded}  found ${f.found}`)
  for (const m of report.missing) lines.push(`missing       ${m}`)
  for (const n of report.new) lines.push(`new           ${n}`)
  for (const u of report.unverifiable)
    lines.push(`unverifiable  ${u.path}  recorded as ${u.formats.join(', ') || 'no hash'} only, not xxh64`)
  for (const u of report.unreadable) lines.push(`unreadable    ${u.path}  ${u.error}`)
  const counts = [
    `${report.verified.length} verified`,
    `${report.failed.length} failed`,
    `${report.missing.length} missing`,
    `${report.new.length} new`,
    ...(report.unverifiable.length ? [`${report.unverifiable.length} unverifiable`] : []),
    ...(report.unreadable.length ? [`${report.unreadable.length} unreadable`] : []),
  ]
  const below = report.nested.length
    ? `, and ${report.nested.length} histor${report.nested.length > 1 ? 'ies' : 'y'} below it`
    : ''
  lines.push(
    `${counts.join(', ')} (history ${report.history}, ${report.generations} generation${report.generations > 1 ? 's' : ''}${below})`,
  )
  if (written) lines.push(`recorded generation ${written.number}: ${mhl.MHL_FOLDER}/${written.file}`)
  say(io, lines.join('\n'))
  const differs =
    report.failed.length + report.missing.length + report.unverifiable.length + report.unreadable.length > 0
  return differs ? 1 : 0
}

/** Bytes as a person reads them: 512 B, 3.2 MB, 1.5 GB. */
function sizeText(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let n = bytes
  let unit = 0
  while (n >= 1000 && unit < units.length - 1) {
    n /= 1000
    unit++
  }
  return unit === 0 ? `${n} B` : `${n.toFixed(1)} ${units[unit]}`
}
