// A constraint the database refuses answers the same envelope on both engines (http/errors.ts
// fromDatabase): a duplicate is 400 unique on its field, a refused reference 409 conflict. The
// errors are the real ones each engine raises through drizzle, on the same two tables.
import { afterAll, expect, test } from 'bun:test'
import { SQL as PgClient } from 'bun'
import { sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/bun-sql'
import { openDb } from '../../src/db/client.ts'
import { type Port, run, postgresPort, sqlitePort } from '../../src/db/port.ts'
import { fromDatabase } from '../../src/http/errors.ts'
import { tempDir } from '../helpers/app.ts'
import { freshDatabase, hasPostgres } from '../helpers/pg.ts'

const TABLES = [
  'CREATE TABLE productions (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)',
  'CREATE TABLE shares (id INTEGER PRIMARY KEY, production INTEGER NOT NULL REFERENCES productions (id))',
]

/** What each refused write answers, as the envelope's status, code and pointer. */
async function refusals(port: Port) {
  const answer = async (q: ReturnType<typeof sql>) => {
    try {
      await port.run(run(q))
      return 'written'
    } catch (error) {
      const e = fromDatabase(error)
      return e
        ? {
            status: e.status,
            entries: e.entries.map((x) => [x.code, (x.source as { pointer?: string } | undefined)?.pointer]),
          }
        : String(error)
    }
  }
  await port.run(run(sql`INSERT INTO productions (id, name) VALUES (1, 'Show')`))
  return {
    duplicate: await answer(sql`INSERT INTO productions (id, name) VALUES (2, 'Show')`),
    missing: await answer(sql`INSERT INTO shares (id, production) VALUES (1, 7)`),
    nul: await answer(sql`INSERT INTO productions (id, name) VALUES (3, ${'nul\u0000here'})`),
    referenced: await answer(sql`INSERT INTO shares (id, production) VALUES (2, 1)`).then(() =>
      answer(sql`DELETE FROM productions WHERE id = 1`),
    ),
  }
}

const SAME = {
  duplicate: { status: 400, entries: [['unique', '/name']] },
  missing: { status: 409, entries: [['conflict', undefined]] },
  referenced: { status: 409, entries: [['conflict', undefined]] },
}

const closers: (() => unknown)[] = []
afterAll(async () => {
  for (const close of closers) await close()
})

test('SQLite', async () => {
  const db = openDb(`${tempDir('reelhouse-refused-')}/catalogue.db`)
  closers.push(() => db.$client.close())
  for (const t of TABLES) db.$client.run(t)
  // SQLite keeps a NUL in text.
  expect(await refusals(sqlitePort(db))).toEqual({ ...SAME, nul: 'written' })
})

test.skipIf(!hasPostgres)('PostgreSQL: the same envelopes, and 400 for text it cannot keep (a NUL)', async () => {
  const client = new PgClient((await freshDatabase()).url)
  closers.push(() => client.close())
  for (const t of TABLES) await client.unsafe(t)
  // PostgreSQL cannot keep one: the request's value, a 400, never a 500.
  expect(await refusals(postgresPort(drizzle({ client }) as never))).toEqual({
    ...SAME,
    nul: { status: 400, entries: [['invalid', undefined]] },
  })
})
