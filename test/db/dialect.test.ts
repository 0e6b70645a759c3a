// The SQL phrases that differ between the engines (src/db/dialect.ts) answer the same on both: the
// same cases on a migrated SQLite catalogue here and on a migrated PostgreSQL database in a child
// process whose tables are PostgreSQL's.
import { expect, test } from 'bun:test'
import { openDb } from '../../src/db/client.ts'
import { migrate } from '../../src/db/migrate.ts'
import { sqlitePort } from '../../src/db/port.ts'
import { tempDir } from '../helpers/app.ts'
import { freshDatabase, hasPostgres } from '../helpers/pg.ts'
import { cases } from './dialect.cases.ts'

const EXPECTED = {
  result: { files: 3, note: 'x' },
  groupIds: [1, 2, 3],
  groupPairs: [
    [1, 'beta'],
    [2, 'Alpha'],
    [3, 'gamma'],
  ],
  asText: [2],
  inIds: ['beta', 'gamma'],
  inIdsPrepared: ['Alpha', 'gamma'],
  inNames: ['gamma'],
  inNone: [],
  noCase: ['Alpha', 'beta', 'gamma'],
  arrayHas: ['beta'],
  number: [2],
  text: [1],
  isTrue: [1],
  hasKey: [1, 2],
  nested: [1, 2, 3],
}

test('on SQLite', () => {
  const db = openDb(`${tempDir('reelhouse-dialect-')}/catalogue.db`)
  migrate(db)
  const port = sqlitePort(db)
  expect(port.run(cases(port))).toEqual(EXPECTED)
  db.$client.close()
})

test.skipIf(!hasPostgres)('on PostgreSQL, the same answers', async () => {
  const { url } = await freshDatabase()
  const child = Bun.spawn([process.execPath, `${import.meta.dir}/dialect.child.ts`, url], { stderr: 'pipe' })
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  expect({ code, err }).toEqual({ code: 0, err: '' })
  expect(JSON.parse(out)).toEqual(EXPECTED)
})
