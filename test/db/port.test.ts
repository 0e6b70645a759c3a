// The data-access port (src/db/port.ts) on both engines: the same work, synchronous on SQLite and
// asynchronous on PostgreSQL, with the same transactions, savepoints and after-commit rule.
import { afterAll, describe, expect, test } from 'bun:test'
import { SQL as PgClient } from 'bun'
import { eq, sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/bun-sql'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { openDb } from '../../src/db/client.ts'
import {
  type Port,
  afterCommit,
  all,
  allOf,
  one,
  oneOf,
  postgresPort,
  run,
  runOf,
  sqlitePort,
  statement,
  tx,
} from '../../src/db/port.ts'
import { tempDir } from '../helpers/app.ts'
import { freshDatabase, hasPostgres } from '../helpers/pg.ts'

// Built against the SQLite schema's types, as the service's code is; on PostgreSQL the same table
// is made by hand with the same columns.
const notes = sqliteTable('notes', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
})

/** A run's outcome as a promise on both engines: SQLite's port throws in the call itself. */
const settle = async <T>(fn: () => T | Promise<T>) => fn()

type Engine = { port: Port; close(): Promise<void> | void }

async function sqliteEngine(): Promise<Engine> {
  const dir = tempDir('reelhouse-port-')
  const db = openDb(`${dir}/catalogue.db`)
  db.run(sql`CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE)`)
  return { port: sqlitePort(db), close: () => db.$client.close() }
}

async function postgresEngine(): Promise<Engine> {
  const { url } = await freshDatabase()
  const client = new PgClient(url)
  await client`CREATE TABLE notes (id bigserial PRIMARY KEY, name text NOT NULL UNIQUE)`
  return { port: postgresPort(drizzle({ client }) as never), close: () => client.close() }
}

const engines: [string, () => Promise<Engine>, boolean][] = [
  ['sqlite', sqliteEngine, true],
  ['postgres', postgresEngine, hasPostgres],
]

const opened: Engine[] = []
afterAll(async () => {
  for (const e of opened) await e.close()
})

for (const [name, open, available] of engines)
  describe.skipIf(!available)(`the port on ${name}`, () => {
    const engine = async () => {
      const e = await open()
      opened.push(e)
      const { port } = e
      const names = async () =>
        (await port.run(all(port.db.select({ name: notes.name }).from(notes).orderBy(notes.id)))).map((r) => r.name)
      return { port, db: port.db, names }
    }

    test('a transaction sees its own rows, commits when its body returns and rolls back when it throws', async () => {
      const { port, db, names } = await engine()
      const seen = await port.run(
        tx(function* () {
          yield* run(db.insert(notes).values({ name: 'kept' }))
          return (yield* one(db.select().from(notes).where(eq(notes.name, 'kept'))))?.name
        }),
      )
      expect(seen).toBe('kept')
      const failed = await settle(() =>
        port.run(
          tx(function* () {
            yield* run(db.insert(notes).values({ name: 'lost' }))
            const inside = yield* all(db.select().from(notes))
            if (inside.length === 2) throw new Error('rolled back')
          }),
        ),
      ).catch((error: Error) => error.message)
      expect(failed).toBe('rolled back')
      expect(await names()).toEqual(['kept'])
    })

    test('a nested transaction is a savepoint: its rollback keeps the outer work; a refused statement throws into the work', async () => {
      const { port, db, names } = await engine()
      const outcome = await port.run(
        tx(function* () {
          yield* run(db.insert(notes).values({ name: 'outer' }))
          let inner = 'committed'
          try {
            yield* tx(function* () {
              yield* run(db.insert(notes).values({ name: 'inner' }))
              yield* run(db.insert(notes).values({ name: 'outer' })) // unique: refused
            })
          } catch {
            inner = 'rolled back'
          }
          return inner
        }),
      )
      expect(outcome).toBe('rolled back')
      expect(await names()).toEqual(['outer'])
    })

    test('after-commit work runs once the outermost transaction commits, never for a rolled-back one or savepoint', async () => {
      const { port, db } = await engine()
      const ran: string[] = []
      await port.run(
        tx(function* () {
          yield* run(db.insert(notes).values({ name: 'a' }))
          yield* afterCommit(() => ran.push('outer'))
          try {
            yield* tx(function* () {
              yield* afterCommit(() => ran.push('savepoint rolled back'))
              throw new Error('no')
            })
          } catch {}
          yield* tx(function* () {
            yield* afterCommit(() => ran.push('savepoint kept'))
          })
          expect(ran).toEqual([])
        }),
      )
      expect(ran).toEqual(['outer', 'savepoint kept'])
      await settle(() =>
        port.run(
          tx(function* () {
            yield* afterCommit(() => ran.push('rolled back'))
            throw new Error('no')
          }),
        ),
      ).catch(() => {})
      await port.run(afterCommit(() => ran.push('outside')))
      expect(ran).toEqual(['outer', 'savepoint kept', 'outside'])
    })

    test('200 at once: half in transactions that read, write and then fail, half writing rows of their own; exactly those rows remain', async () => {
      const { port, db, names } = await engine()
      const requests = Array.from({ length: 200 }, async (_, i) => {
        await Bun.sleep(i % 7) // arrive spread, as requests do
        if (i % 2 === 0)
          return port.run(
            tx(function* () {
              yield* run(db.insert(notes).values({ name: `doomed-${i}` }))
              const mine = yield* all(
                db
                  .select()
                  .from(notes)
                  .where(eq(notes.name, `doomed-${i}`)),
              )
              if (mine.length !== 1) throw new Error(`transaction ${i} does not see its own row`)
              yield* run(db.insert(notes).values({ name: `doomed-${i}-b` }))
              throw new Error('fails')
            }),
          )
        return port.run(run(db.insert(notes).values({ name: `own-${i}` })))
      })
      const settled = await Promise.allSettled(requests)
      const reasons = settled.flatMap((s) => (s.status === 'rejected' ? [(s.reason as Error).message] : []))
      expect(reasons.length).toBe(100)
      expect(new Set(reasons)).toEqual(new Set(['fails']))
      expect((await names()).sort()).toEqual(Array.from({ length: 100 }, (_, k) => `own-${2 * k + 1}`).sort())
    })

    test('a statement built once with placeholders runs with values, inside a transaction on its connection', async () => {
      const { port, db, names } = await engine()
      const add = statement(() => db.insert(notes).values({ name: sql.placeholder('name') }))
      const byName = statement(() =>
        db
          .select()
          .from(notes)
          .where(eq(notes.name, sql.placeholder('name'))),
      )
      const rename = statement(() =>
        db
          .update(notes)
          .set({ name: sql`${sql.placeholder('to')}` })
          .where(eq(notes.name, sql.placeholder('from'))),
      )
      await settle(() =>
        port.run(
          tx(function* () {
            yield* runOf(add, { name: 'p' })
            if (!(yield* oneOf(byName, { name: 'p' }))) throw new Error('not seen in its transaction')
            throw new Error('undone')
          }),
        ),
      ).catch((error: Error) => expect(error.message).toBe('undone'))
      for (const name of ['q', 'r']) await port.run(runOf(add, { name }))
      expect((await port.run(allOf(byName, { name: 'q' }))).map((r) => r.name)).toEqual(['q'])
      expect((await port.run(runOf(rename, { from: 'r', to: 's' }))).changes).toBe(1)
      expect(await names()).toEqual(['q', 's'])
    })

    test('raw SQL through drizzle templates: rows, one row, changes', async () => {
      const { port, db } = await engine()
      await port.run(run(db.insert(notes).values([{ name: 'x' }, { name: 'y' }])))
      const rows = await port.run(all(sql<{ name: string }>`SELECT name FROM notes ORDER BY name`))
      expect(rows.map((r) => r.name)).toEqual(['x', 'y'])
      expect((await port.run(one(sql<{ n: number }>`SELECT count(*) AS n FROM notes`)))?.n).toEqual(
        name === 'sqlite' ? 2 : ('2' as unknown as number), // PostgreSQL's count is a bigint: a string unless cast
      )
      const changed = await port.run(run(sql`UPDATE notes SET name = name || '!'`))
      expect(changed.changes).toBe(2)
      const updated = await port.run(run(db.update(notes).set({ name: 'z' }).where(eq(notes.name, 'x!'))))
      expect(updated.changes).toBe(1)
    })
  })

test('on SQLite the port answers in the same call: no promise, so a route can return the value itself', () => {
  const db = openDb(`${tempDir('reelhouse-port-')}/catalogue.db`)
  try {
    db.run(sql`CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE)`)
    const port = sqlitePort(db)
    const value = port.run(
      tx(function* () {
        yield* run(port.db.insert(notes).values({ name: 'n' }))
        return yield* all(port.db.select().from(notes))
      }),
    )
    expect(value).toEqual([{ id: 1, name: 'n' }])
  } finally {
    db.$client.close()
  }
})
