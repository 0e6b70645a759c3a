// The PostgreSQL catalogue's migrations (`reelhouse migrate --database postgres://...`): those of
// drizzle/pg, inlined at bundle time as the SQLite ones are (migrations.macro.ts), applied by
// drizzle's own PostgreSQL migrator and recorded where drizzle-kit records them
// (drizzle.__drizzle_migrations: id, hash, created_at), so that drizzle-kit's tools agree.
//
// Several processes may start against one database at once (a facility's servers after an
// upgrade). drizzle's migrator reads the last applied migration before its transaction begins,
// so two of them would both see a migration as missing and both apply it: the second fails on
// objects that exist, or, for a statement that can run twice, applies it twice. Each starter
// therefore holds a session-level advisory lock on the one connection it migrates through while it
// reads and applies; the next starter waits for it, then finds nothing left to apply.
import { SQL } from 'bun'
import { drizzle } from 'drizzle-orm/bun-sql'
import type { MigrationMeta } from 'drizzle-orm/migrator'
import { embeddedPgMigrations } from '../migrations.macro.ts' with { type: 'macro' }

const migrations = embeddedPgMigrations() as MigrationMeta[]

/**
 * The advisory lock migrations are applied under: the eight ASCII bytes of "reelhous" as one
 * 64-bit number (0x7265656c686f7573). Fixed forever: a starter of an older or newer version
 * must wait on the same key. Advisory locks are per database, so migrations of two databases on
 * one server never wait for each other.
 */
export const MIGRATION_LOCK_KEY = '8243106209254569331'

/** The connection could not be made, or the server refused the session (no such database, role or password). */
export class PostgresConnectError extends Error {
  constructor(
    /** Where the connection was tried (whereOf). */
    readonly where: string,
    /** What the server said, or the client when no server answered. */
    readonly reason: string,
  ) {
    super(`cannot connect to PostgreSQL at ${where}: ${reason}`)
  }
}

/** `postgres://` or `postgresql://`, the two schemes libpq and Bun's client take. */
export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//i.test(url)

/**
 * The URL as it may be shown: without its password, whether in the user part or as a
 * `password=` parameter. Unparseable text is shown as its scheme alone, since it may hold one.
 */
export function withoutPassword(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `${url.split('//')[0]}//…`
  }
  parsed.password = ''
  parsed.searchParams.delete('password')
  return parsed.toString()
}

/**
 * Where the URL leads, for messages: `host:port`, or the Unix socket a `host` parameter naming a
 * folder leads to (`/run/postgresql/.s.PGSQL.5432`, libpq's form, as the socket file is named).
 */
export function whereOf(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return withoutPassword(url)
  }
  const port = parsed.port || '5432'
  const host = parsed.searchParams.get('host') ?? decodeURIComponent(parsed.hostname)
  if (host.startsWith('/')) return `${host.replace(/\/$/, '')}/.s.PGSQL.${port}`
  return `${host || 'localhost'}:${port}`
}

/**
 * Applies every embedded PostgreSQL migration the database at `url` has not applied yet, each
 * once, in one transaction, under MIGRATION_LOCK_KEY; resolves to how many it applied. Never
 * drops data. A connection that cannot be made rejects with a PostgresConnectError naming where
 * it tried and what the server said; a migration that fails rejects with the server's error,
 * and nothing of that run is applied.
 */
export async function migratePostgres(url: string): Promise<number> {
  const where = whereOf(url)
  const client = new SQL({ url, max: 1 })
  try {
    let session: Awaited<ReturnType<SQL['reserve']>>
    try {
      session = await client.reserve()
      // The first statement: a server that refuses the session (no such database, role or
      // password) says so here, before anything is asked of it.
      await session.unsafe('SELECT 1')
    } catch (error) {
      throw new PostgresConnectError(where, messageOf(error))
    }
    try {
      // Waits while another starter holds it.
      await session.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`)
      const before = await appliedCount(session)
      // drizzle's migrator, over the locked connection: its session runs every statement there
      // and its transaction begins there (a second connection would not hold the lock).
      const db = drizzle({ client: session })
      const internals = db as unknown as {
        dialect: { migrate(m: MigrationMeta[], s: unknown, c: object): Promise<void> }
        session: unknown
      }
      await internals.dialect.migrate(migrations, internals.session, {})
      return (await appliedCount(session)) - before
    } finally {
      // A connection that cannot unlock any more is lost, and the server ends a session's locks
      // with it; the close below ends this one's in any case.
      await session.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`).catch(() => {})
      await session.release()
    }
  } finally {
    await client.close()
  }
}

type Queryable = { unsafe(text: string): Promise<unknown> }

/** Rows of drizzle's record of applied migrations; 0 before the first migration made it. */
async function appliedCount(session: Queryable): Promise<number> {
  // Two statements: a name in a statement is looked up before it runs, also in a branch not taken.
  const [table] = (await session.unsafe("SELECT to_regclass('drizzle.__drizzle_migrations') AS t")) as {
    t: string | null
  }[]
  if (!table?.t) return 0
  const [count] = (await session.unsafe('SELECT count(*) AS n FROM drizzle.__drizzle_migrations')) as {
    n: number | string | bigint
  }[]
  return Number(count!.n)
}

/** The server's message (or the client's, when no server answered), on one line. */
function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.replace(/\s*\n\s*/g, ' ') || String(error)
}
