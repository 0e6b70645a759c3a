// Two processes share the catalogue (the server, and a CLI command beside it). A transaction that
// read first and wrote later, after the other process committed, failed at once with
// SQLITE_BUSY (its snapshot stale, so no busy timeout helps): every transaction now takes the
// write lock as it begins, and the other writer waits for it instead.
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { openDb } from '../../src/db/client.ts'
import { migrate } from '../../src/db/migrate.ts'
import * as schema from '../../src/db/schema.ts'
import { tempDir } from '../helpers/temp.ts'

test('a transaction holds the write lock from its start: another connection cannot commit between its read and its write', () => {
  const file = join(tempDir(), 'reelhouse.db')
  const db = openDb(file)
  migrate(db)
  const other = new Database(file)
  other.run('PRAGMA busy_timeout = 0')
  let refused = ''
  const count = db.transaction((tx) => {
    const before = tx.select().from(schema.users).all().length
    try {
      other.run(`INSERT INTO users (username, date_add) VALUES ('elsewhere', 't')`)
    } catch (error) {
      refused = String(error)
    }
    tx.insert(schema.users)
      .values({ username: `user${before}`, date_add: 't' })
      .run()
    return before + 1
  })
  expect(refused).toMatch(/locked|busy/i)
  expect(db.select().from(schema.users).all()).toHaveLength(count)
  // The lock ends with the transaction: the other connection writes now.
  other.run(`INSERT INTO users (username, date_add) VALUES ('elsewhere', 't')`)
  expect(db.select().from(schema.users).all()).toHaveLength(count + 1)
  other.close()
})
