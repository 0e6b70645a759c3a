// Runs at bundle time (imported `with { type: 'macro' }`): reads drizzle-kit's output folder and
// inlines it, so the compiled executable carries its migrations and never looks at the disk for
// them, whatever folder it is started from.
import { readMigrationFiles } from 'drizzle-orm/migrator'

export function embeddedMigrations() {
  return readMigrationFiles({ migrationsFolder: `${import.meta.dir}/../../drizzle` })
}

/** The PostgreSQL catalogue's migrations (drizzle.pg.config.ts writes them), inlined the same way. */
export function embeddedPgMigrations() {
  return readMigrationFiles({ migrationsFolder: `${import.meta.dir}/../../drizzle/pg` })
}
