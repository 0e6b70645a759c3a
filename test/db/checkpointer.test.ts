// The checkpoint thread (src/db/checkpointer.ts) on a real catalogue in a temp folder: it copies
// the WAL into the database file while the server's connection goes on writing, the server's
// own automatic checkpoint is only a backstop while it runs, and a thread that cannot work
// leaves the server checkpointing by itself, with a warning.
import { expect, test } from 'bun:test'
import { existsSync, renameSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { startCheckpointer } from '../../src/db/checkpointer.ts'
import { openDb } from '../../src/db/client.ts'
import { migrate } from '../../src/db/migrate.ts'
import type { Log } from '../../src/util/log.ts'
import { tempDir } from '../helpers/temp.ts'
import { waitFor } from '../helpers/wait.ts'

function recording() {
  const warnings: { message: string; fields?: Record<string, unknown> }[] = []
  const log: Log = { info() {}, warn: (message, fields) => void warnings.push({ message, fields }), error() {} }
  return { log, warnings }
}

const autocheckpoint = (db: ReturnType<typeof openDb>) =>
  db.$client.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()!.wal_autocheckpoint

/** About `pages` pages in the WAL, in one commit: rows of 2,000 bytes in a table of their own, two to a page. */
function write(db: ReturnType<typeof openDb>, pages: number) {
  db.$client.run('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body TEXT)')
  const insert = db.$client.prepare('INSERT INTO filler (body) VALUES (?)')
  db.$client.transaction(() => {
    for (let i = 0; i < pages * 2; i++) insert.run('x'.repeat(2000))
  })()
}

/** A migrated catalogue with nothing left in its WAL, and the size of its file then. */
function emptiedCatalogue() {
  const file = join(tempDir(), 'reelhouse.db')
  const db = openDb(file)
  migrate(db)
  // The migrations leave free pages (0007 rebuilds every table), which the writes of a test
  // would fill before the file grows.
  db.$client.run('VACUUM')
  db.$client.run('PRAGMA wal_checkpoint(TRUNCATE)')
  return { file, db, before: statSync(file).size }
}

test('copies the WAL into the catalogue from its own thread while the server writes; the server checkpoints itself only past 10,000 pages, and again every 1,000 once it stops', async () => {
  const { file, db, before } = emptiedCatalogue()
  const { log, warnings } = recording()
  const checkpointer = startCheckpointer(db, log, { fastMs: 5, slowMs: 50 })
  expect(autocheckpoint(db)).toBe(10_000)
  // 600 pages: far under the server's own threshold, so only the thread can have copied them.
  write(db, 600)
  await waitFor(() => statSync(file).size >= before + 600 * 4096, 'the pages in the catalogue file', { everyMs: 5 })
  await checkpointer.stop()
  expect(autocheckpoint(db)).toBe(1_000)
  expect(warnings).toEqual([])
  db.$client.close(true)
  // The server's connection closed last: the WAL was copied in and removed.
  expect(existsSync(`${file}-wal`)).toBe(false)
  expect(existsSync(`${file}-shm`)).toBe(false)
})

test('without the thread nothing is copied before 1,000 pages (the test above could tell the difference)', async () => {
  const { file, db, before } = emptiedCatalogue()
  write(db, 600)
  await Bun.sleep(200)
  expect(statSync(file).size).toBe(before)
  db.$client.close(true)
})

test('a thread that cannot open the catalogue: a warning, and the server checkpoints by itself', async () => {
  const dir = tempDir()
  const db = openDb(join(dir, 'reelhouse.db'))
  migrate(db)
  // The server's connection keeps its open file; the name the thread opens by is gone.
  renameSync(join(dir, 'reelhouse.db'), join(dir, 'moved.db'))
  const { log, warnings } = recording()
  const checkpointer = startCheckpointer(db, log)
  await waitFor(() => warnings.length > 0, 'a warning', { everyMs: 5 })
  expect(warnings).toEqual([{ message: 'the checkpoint thread failed; the server checkpoints by itself', fields: { error: expect.stringContaining('unable to open') } }])
  expect(autocheckpoint(db)).toBe(1_000)
  await checkpointer.stop()
  db.$client.close(true)
})
