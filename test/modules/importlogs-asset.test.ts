// GET /api/importlogs/?asset_import_id=: the logs of one asset's imports, wherever its file lay
// then (an import that moved the file named another path); with asset_path and ordering too;
// only where the user may read the log's production; a bad id is a 400 at the parameter.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

let t: TestApp
let readerKey: string

beforeAll(async () => {
  t = testApp()
  const { production: show } = await seedProduction(t, 'Show')
  const { production: other } = await seedProduction(t, 'Other')
  readerKey = t.makeUser('reader', { read: [show.id] })
  const now = '2026-11-21T12:00:00.000000Z'
  // [asset_path, error, asset_import_id, production]: ids 1.. in this order.
  const rows: [string, string, number | null, number | null][] = [
    ['/drop/a.mov', '', 7, show.id], // 1: imported from the drop folder, moved
    ['/media/a.mov', '', 7, show.id], // 2: imported again where it lies now
    ['/drop/b.mov', '', 8, show.id], // 3
    ['/media/a.mov', 'the file vanished', 7, show.id], // 4
    ['/drop/x.mov', 'outside every device', null, null], // 5: refused before any asset
    ['/other/a.mov', '', 7, other.id], // 6: another production's (not readable by the reader)
  ]
  for (const [path, error, asset, production] of rows)
    t.db.$client.run(
      `INSERT INTO import_logs (asset_type, asset_path, status, error, payload, asset_import_id, production, date_add, date_mod)
      VALUES ('videoasset', ?, ?, ?, '{}', ?, ?, ?, ?)`,
      [path, error ? 'import_failed' : 'import_completed', error, asset, production, now, now],
    )
})
afterAll(() => t.cleanup())

const ids = async (query: string, key?: string) => {
  const r = await t.get(`/api/importlogs/${query}`, key ? { key } : undefined)
  expect(r.status).toBe(200)
  return [(r.json as { id: number }[]).map((log) => log.id), r.headers.get('x-total-count')]
}

test('the logs of one asset, whatever path each named; with asset_path, ordering and paging', async () => {
  expect(await ids('?asset_import_id=7')).toEqual([[1, 2, 4, 6], '4'])
  expect(await ids('?asset_import_id=8')).toEqual([[3], '1'])
  expect(await ids('?asset_import_id=9')).toEqual([[], '0'])
  expect(await ids('?asset_import_id=7&asset_path=/media/a.mov')).toEqual([[2, 4], '2'])
  expect(await ids('?asset_import_id=8&asset_path=/media/a.mov')).toEqual([[], '0'])
  expect(await ids('?asset_import_id=7&ordering=-failed')).toEqual([[4, 6, 2, 1], '4'])
  expect(await ids('?asset_import_id=7&ordering=-id&limit=2&offset=1')).toEqual([[4, 2], '4'])
})

test('a reader sees the logs of the productions they read only', async () => {
  expect(await ids('?asset_import_id=7', readerKey)).toEqual([[1, 2, 4], '3'])
})

test('a bad id: 400 invalid at asset_import_id', async () => {
  for (const bad of ['x', '-1', '1.5', ''])
    expectError(await t.get(`/api/importlogs/?asset_import_id=${bad}`), 400, 'invalid', {
      parameter: 'asset_import_id',
    })
})
