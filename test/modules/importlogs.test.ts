// GET /api/importlogs/?ordering=: id order by default (as every list), -id newest first, -failed
// failed logs (a non-empty error: import_failed, a refused path) first, newest first within each;
// with asset_path, limit and offset. Rows written as the import service writes them.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type TestApp, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

let t: TestApp
/** [asset_path, status, error]: ids 1.. in this order. */
const ROWS: [string, string, string][] = [
  ['/in/a.mov', 'import_completed', ''], // 1
  ['/in/b.mov', 'import_failed', 'ffprobe could not read the file'], // 2
  ['/in/a.mov', 'import_completed', ''], // 3
  ['/in/c.mov', 'path_file is outside every device', 'path_file is outside every device'], // 4 refused (406)
  ['/in/a.mov', 'import_failed', 'the file vanished'], // 5
  ['/in/d.mov', 'asset_proxy_completed', ''], // 6
]

beforeAll(() => {
  t = testApp()
  const now = '2026-11-21T12:00:00.000000Z'
  for (const [path, status, error] of ROWS)
    t.db.$client.run(
      `INSERT INTO import_logs (asset_type, asset_path, status, error, payload, production, date_add, date_mod)
      VALUES ('videoasset', ?, ?, ?, '{}', NULL, ?, ?)`,
      [path, status, error, now, now],
    )
})
afterAll(() => t.cleanup())

const ids = async (query = '') => {
  const r = await t.get(`/api/importlogs/${query}`)
  expect(r.status).toBe(200)
  return [(r.json as { id: number }[]).map((log) => log.id), r.headers.get('x-total-count')]
}

test('id order by default and with ordering=id; -id newest first', async () => {
  expect(await ids()).toEqual([[1, 2, 3, 4, 5, 6], '6'])
  expect(await ids('?ordering=id')).toEqual(await ids())
  expect(await ids('?ordering=-id')).toEqual([[6, 5, 4, 3, 2, 1], '6'])
})

test('-failed: the logs with an error first, then the others, each newest first; with asset_path, limit and offset', async () => {
  expect(await ids('?ordering=-failed')).toEqual([[5, 4, 2, 6, 3, 1], '6'])
  expect(await ids('?ordering=-failed&asset_path=/in/a.mov')).toEqual([[5, 3, 1], '3'])
  expect(await ids('?ordering=-failed&limit=2&offset=2')).toEqual([[2, 6], '6'])
})

test('an unknown ordering: 400 invalid at it', async () => {
  for (const value of ['failed', '-date_end', 'status', ''])
    expectError(await t.get(`/api/importlogs/?ordering=${value}`), 400, 'invalid', { parameter: 'ordering' })
})
