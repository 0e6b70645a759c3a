// GET /api/tasks/ newest first, ?ordering= (id, ±date_add, ±date_start, ±date_end), with the
// filters state and kind; and the pruning of finished scans that changed nothing (a week after
// they ended, as of a clock the test gives). Rows written as the runner writes them; the runner is
// not started, so they stay put.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SCAN_PRUNE } from '../../src/core.ts'
import { type TestApp, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

let t: TestApp
const DAY = 86_400_000
const NOW = new Date('2026-11-21T12:00:00Z')
const at = (daysAgo: number) => new Date(NOW.getTime() - daysAgo * DAY).toISOString().replace('Z', '000Z')

/** [kind, state, date_add, date_start, date_end, result]: ids 1.. in this order. */
const ROWS: [string, string, number, number | null, number | null, Record<string, unknown>][] = [
  [
    'scan',
    'done',
    10,
    10,
    9,
    { seen: 12, offline: 0, online: 0, moved: 0, relinked: 0, saved_anew: 0, imported: 0, waiting: 0 },
  ], // 1 pruned
  ['scan', 'done', 10, 10, 9, { seen: 12, offline: 1, online: 0 }], // 2 kept: a file went offline
  ['scan', 'failed', 10, 10, 9, {}], // 3 kept: failed
  ['copy', 'done', 9, 9, 8.5, {}], // 4 kept: not a scan
  ['scan', 'done', 8, 8, 7.5, {}], // 5 pruned (a device that was gone: nothing changed)
  ['scan', 'done', 6, 6, 6, { seen: 3 }], // 6 kept: ended less than a week ago
  ['scan', 'done', 9, 9, 8, { imported: 2 }], // 7 kept: imported files
  ['import', 'running', 1, 1, null, {}], // 8
  ['delete', 'queued', 0.5, null, null, {}], // 9
  ['scan', 'done', 9, 9, 7.9, { moved: 0, relinked: 1 }], // 10 kept: relinked
]

beforeAll(() => {
  t = testApp()
  for (const [kind, state, add, start, end, result] of ROWS)
    t.db.$client
      .query(
        'INSERT INTO tasks (kind, state, target, date_add, date_start, date_end, result) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        kind,
        state,
        JSON.stringify({ device: 1 }),
        at(add),
        start === null ? null : at(start),
        end === null ? null : at(end),
        JSON.stringify(result),
      )
})
afterAll(() => t.cleanup())

const ids = async (query = '') => {
  const r = await t.get(`/api/tasks/${query}`)
  expect(r.status).toBe(200)
  return [(r.json as { id: number }[]).map((x) => x.id), r.headers.get('x-total-count')]
}

describe('GET /api/tasks/ order and filters', () => {
  test('newest first by default; ordering=id oldest first; -id as the default', async () => {
    expect(await ids()).toEqual([[10, 9, 8, 7, 6, 5, 4, 3, 2, 1], '10'])
    expect(await ids('?ordering=-id')).toEqual(await ids())
    expect(await ids('?ordering=id')).toEqual([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], '10'])
  })

  test('by date_end either way (tasks that have not ended last), date_start, date_add; ties by id', async () => {
    expect(await ids('?ordering=-date_end')).toEqual([[6, 5, 10, 7, 4, 3, 2, 1, 9, 8], '10'])
    expect(await ids('?ordering=date_end')).toEqual([[1, 2, 3, 4, 7, 10, 5, 6, 8, 9], '10'])
    expect(await ids('?ordering=-date_start')).toEqual([[8, 6, 5, 10, 7, 4, 3, 2, 1, 9], '10'])
    expect(await ids('?ordering=date_add')).toEqual([[1, 2, 3, 4, 7, 10, 5, 6, 8, 9], '10'])
    expect(await ids('?ordering=-date_add')).toEqual([[9, 8, 6, 5, 10, 7, 4, 3, 2, 1], '10'])
  })

  test('with state, kind, limit and offset; X-Total-Count counts every match', async () => {
    expect(await ids('?kind=scan')).toEqual([[10, 7, 6, 5, 3, 2, 1], '7'])
    expect(await ids('?kind=scan&state=done&ordering=-date_end&limit=2&offset=1')).toEqual([[5, 10], '6'])
    expect(await ids('?state=queued')).toEqual([[9], '1'])
    expect(await ids('?state=running&kind=import&ordering=id')).toEqual([[8], '1'])
  })

  test('an unknown ordering, state or kind: 400 invalid at the parameter', async () => {
    for (const [parameter, value] of [
      ['ordering', 'name'],
      ['ordering', '--id'],
      ['ordering', ''],
      ['ordering', 'ID'],
      ['state', 'cancelled'],
      ['kind', 'move'],
    ] as const)
      expectError(await t.get(`/api/tasks/?${parameter}=${value}`), 400, 'invalid', { parameter })
  })
})

describe('pruning finished scans', () => {
  test('done scans that ended more than a week ago and changed nothing go; failed tasks, other kinds, changes and recent scans stay', async () => {
    expect(SCAN_PRUNE.keepMs).toBe(7 * DAY)
    expect(t.core.pruneTasks(NOW)).toBe(2)
    expect(await ids('?ordering=id')).toEqual([[2, 3, 4, 6, 7, 8, 9, 10], '8'])
    // Again: nothing more; and six days on, the scan that ended six days ago goes too.
    expect(t.core.pruneTasks(NOW)).toBe(0)
    expect(t.core.pruneTasks(new Date(NOW.getTime() + 1.5 * DAY))).toBe(1)
    expect(await ids('?ordering=id')).toEqual([[2, 3, 4, 7, 8, 9, 10], '7'])
  })
})
