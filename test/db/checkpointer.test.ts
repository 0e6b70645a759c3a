// The checkpoint thread (src/db/checkpointer.ts) on a real catalogue in a temp folder: it copies
// the WAL into the database file while the server's connection goes on writing, the server's
// own automatic checkpoint is only a backstop while it runs, and a thread that cannot work
// leaves the server checkpointing by itself, with a warning.
import { expect, test } from 'bun:test'
import { existsSync, readFileSync, renameSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { startCheckpointer } from '../../src/db/checkpointer.ts'
import { BUSY_MAX_MS, TARGET_FRAMES, nextWait } from '../../src/db/pacing.ts'
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
  expect(warnings).toEqual([
    {
      message: 'the checkpoint thread failed; the server checkpoints by itself',
      fields: { error: expect.stringContaining('unable to open') },
    },
  ])
  expect(autocheckpoint(db)).toBe(1_000)
  await checkpointer.stop()
  db.$client.close(true)
})

test('the thread paces its checkpoints by how fast the WAL fills: about 500 pages between two, at most 250 ms apart while writes come, backing off once it stands still', () => {
  const limits = { fastMs: 20, slowMs: 2_000 }
  expect(TARGET_FRAMES).toBe(500)
  // 200 pages in 20 ms (some 200 imports a second): every 50 ms.
  expect(nextWait(200, 0, 20, limits)).toBe(50)
  // A flood fills more than the target in the shortest wait: no shorter than fastMs.
  expect(nextWait(40_000, 0, 20, limits)).toBe(20)
  // A trickle (a drop's imports: 60 pages in 250 ms): not every 20 ms, but BUSY_MAX_MS.
  expect(nextWait(60, 0, 250, limits)).toBe(BUSY_MAX_MS)
  expect(nextWait(TARGET_FRAMES, 0, 100, limits)).toBe(100)
  // Nothing new since the last look: the wait doubles, up to slowMs.
  expect(nextWait(60, 60, 250, limits)).toBe(500)
  expect(nextWait(0, 0, 1_500, limits)).toBe(2_000)
})

/** The -wal file's salts (bytes 16-23 of its header): new at each restart of the WAL. */
const walSalts = (file: string) => readFileSync(`${file}-wal`).subarray(16, 24).toString('hex')

test("the thread starts the WAL over itself once it has copied all of it, so that the restart and its fsync are not left to the server's next commit", async () => {
  const { file, db } = emptiedCatalogue()
  const { log } = recording()
  write(db, 5)
  const salts = walSalts(file)
  const checkpointer = startCheckpointer(db, log, { fastMs: 5, slowMs: 50 })
  write(db, 600)
  // Not one commit of the server's after the 600 pages: only the thread can have restarted the WAL.
  await waitFor(() => walSalts(file) !== salts, 'the WAL started over', { everyMs: 5 })
  // Its one page, which changed nothing, is the WAL's only frame; the server's next commit appends to it.
  const userVersion = db.$client.query<{ user_version: number }, []>('PRAGMA user_version').get()!.user_version
  expect(userVersion).toBe(0)
  await checkpointer.stop()
  db.$client.close(true)
})
