// The PostgreSQL catalogue's migrations (`--database postgres://...`): drizzle-kit writes them from
// src/db/schema.pg.ts into drizzle/pg, beside the SQLite ones that drizzle.config.ts makes.
// `npm run db:generate:pg` runs it; it needs no database.
import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.pg.ts',
  out: './drizzle/pg',
})
