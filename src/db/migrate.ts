import type { MigrationMeta } from 'drizzle-orm/migrator'
import { embeddedMigrations } from './migrations.macro.ts' with { type: 'macro' }
import type { Db } from './client.ts'

const migrations = embeddedMigrations() as MigrationMeta[]

/** Applies every embedded migration not yet applied, in one transaction. Never drops data. */
export function migrate(db: Db): number {
  const before = appliedCount(db)
  // drizzle's own migrator reads the folder at run time; its dialect applies given migrations.
  const internals = db as unknown as {
    dialect: { migrate(m: MigrationMeta[], s: unknown, c: object): void }
    session: unknown
  }
  internals.dialect.migrate(migrations, internals.session, {})
  return appliedCount(db) - before
}

function appliedCount(db: Db): number {
  const client = db.$client
  if (!client.query("SELECT 1 FROM sqlite_master WHERE name = '__drizzle_migrations'").get()) return 0
  return client.query<{ n: number }, []>('SELECT count(*) AS n FROM __drizzle_migrations').get()!.n
}
