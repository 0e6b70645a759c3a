// dialect.cases.ts on PostgreSQL, in a process whose tables are PostgreSQL's (a process holds one
// engine): migrates the database at argv[2], runs the cases and prints their answers as JSON.
import { SQL } from 'bun'
import { drizzle } from 'drizzle-orm/bun-sql'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import { postgresPort } from '../../src/db/port.ts'
import { useEngine } from '../../src/db/tables.ts'

useEngine('postgres')
const { cases } = await import('./dialect.cases.ts')
const url = process.argv[2]!
await migratePostgres(url)
const client = new SQL(url)
try {
  const port = postgresPort(drizzle({ client }) as never)
  console.log(JSON.stringify(await port.run(cases(port))))
} finally {
  await client.close()
}
