// What a transaction tells the world leaves once it commits and never for one rolled back
// (src/db/aftercommit.ts): drizzle's transactions, the bare bun:sqlite ones (the runner's, the
// import log's) and a GET's read transaction all settle the same queue.
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { afterCommit, afterCommitLog, committed } from '../../src/db/aftercommit.ts'
import { openDb, readSnapshotOf } from '../../src/db/client.ts'
import { migrate } from '../../src/db/migrate.ts'
import * as schema from '../../src/db/schema.ts'
import { tempDir } from '../helpers/temp.ts'

function catalogue() {
  const db = openDb(join(tempDir(), 'reelhouse.db'))
  migrate(db)
  return db
}

const addUser = (db: ReturnType<typeof catalogue>, name: string) =>
  db.insert(schema.users).values({ username: name, date_add: 't' }).run()

test('outside a transaction the work runs at once; inside, after the outermost commit, with what was committed visible', () => {
  const db = catalogue()
  const ran: string[] = []
  afterCommit(db, () => ran.push('at once'))
  expect(ran).toEqual(['at once'])
  db.transaction(() => {
    addUser(db, 'a')
    afterCommit(db, () =>
      ran.push(
        `outer, in a transaction: ${db.$client.inTransaction}, users: ${db.select().from(schema.users).all().length}`,
      ),
    )
    db.transaction(() => afterCommit(db, () => ran.push('inner')))
    expect(ran).toEqual(['at once'])
  })
  expect(ran).toEqual(['at once', 'outer, in a transaction: false, users: 1', 'inner'])
  db.$client.close()
})

test('a rolled-back transaction sends nothing; a rolled-back savepoint drops only its own', () => {
  const db = catalogue()
  const ran: string[] = []
  expect(() =>
    db.transaction(() => {
      addUser(db, 'a')
      afterCommit(db, () => ran.push('rolled back'))
      throw new Error('no')
    }),
  ).toThrow('no')
  expect(ran).toEqual([])
  db.transaction(() => {
    afterCommit(db, () => ran.push('kept'))
    try {
      db.transaction(() => {
        addUser(db, 'b')
        afterCommit(db, () => ran.push('savepoint rolled back'))
        throw new Error('inner')
      })
    } catch {
      // The enclosing transaction goes on and commits.
    }
    afterCommit(db, () => ran.push('after the savepoint'))
  })
  expect(ran).toEqual(['kept', 'after the savepoint'])
  expect(db.select().from(schema.users).all()).toEqual([])
  db.$client.close()
})

test('bare bun:sqlite transactions made with committed() settle the queue the same way, nested in drizzle ones too', () => {
  const db = catalogue()
  const ran: string[] = []
  const write = committed(db.$client, (name: string, fail: boolean) => {
    addUser(db, name)
    afterCommit(db, () => ran.push(name))
    if (fail) throw new Error(`${name} failed`)
    return name
  })
  expect(write.immediate('a', false)).toBe('a')
  expect(() => write.immediate('b', true)).toThrow('b failed')
  expect(write('c', false)).toBe('c')
  expect(ran).toEqual(['a', 'c'])
  db.transaction(() => {
    write('d', false)
    try {
      write('e', true)
    } catch {
      // Its savepoint rolled back; the outer transaction commits.
    }
    expect(ran).toEqual(['a', 'c'])
  })
  expect(ran).toEqual(['a', 'c', 'd'])
  expect(
    db
      .select({ username: schema.users.username })
      .from(schema.users)
      .all()
      .map((u) => u.username),
  ).toEqual(['a', 'c', 'd'])
  db.$client.close()
})

test("a GET's read transaction flushes what was queued inside it once it has committed", () => {
  const db = catalogue()
  const ran: boolean[] = []
  readSnapshotOf(db).run(() => {
    afterCommit(db, () => ran.push(db.$client.inTransaction))
    expect(ran).toEqual([])
  })
  expect(ran).toEqual([false])
  db.$client.close()
})

test('work that throws is logged and never reaches the writer; the rest still runs', () => {
  const db = catalogue()
  const lines: string[] = []
  afterCommitLog(db, {
    info() {},
    warn() {},
    error: (message, fields) => lines.push(`${message} ${JSON.stringify(fields)}`),
  })
  const ran: string[] = []
  const result = db.transaction(() => {
    afterCommit(db, () => {
      throw new Error('listener broke')
    })
    afterCommit(db, () => ran.push('second'))
    return 'committed'
  })
  expect(result).toBe('committed')
  expect(ran).toEqual(['second'])
  expect(lines).toEqual(['after-commit work failed {"error":"listener broke"}'])
  db.$client.close()
})
