// GET /api/tasks/ filtered by target: ?projectasset=ID and every other kind of record a task
// works on (imported assets, scanned devices), alone or together with state and kind, counted in
// X-Total-Count; a value that is not an id is a 400 at its parameter. The rows are written as
// copies, deletes, imports and scans write them; the runner is not started, so they stay put.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { TASK_TARGETS } from '../../src/db/schema.ts'
import { type TestApp, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

let t: TestApp
type Task = { id: number; kind: string; state: string; target: Record<string, number> }
let all: Task[]

/** For each kind of target, tasks on records 1 and 2 (of two kinds of work for projects). */
const ROWS: [string, string, Record<string, number>][] = [
  ['copy', 'done', { projectasset: 1 }],
  ['delete', 'queued', { projectasset: 1 }],
  ['copy', 'queued', { projectasset: 2 }],
  ['import', 'done', { videoasset: 1 }],
  ['import', 'queued', { videoasset: 2 }],
  ['import', 'done', { audioasset: 1 }],
  ['import', 'done', { audioasset: 2 }],
  ['import', 'failed', { imageasset: 1 }],
  ['import', 'done', { imageasset: 2 }],
  ['scan', 'done', { device: 1 }],
  ['scan', 'queued', { device: 2 }],
  // Record 1 of another kind: a filter by projectasset=1 must not take it.
  ['scan', 'done', { device: 12 }],
]

beforeAll(async () => {
  t = testApp()
  for (const [kind, state, target] of ROWS)
    t.db.$client
      .query("INSERT INTO tasks (kind, state, target, date_add) VALUES (?, ?, ?, 't')")
      .run(kind, state, JSON.stringify(target))
  all = (await t.get('/api/tasks/')).json
  expect(all).toHaveLength(ROWS.length)
})

afterAll(() => t.cleanup())

const listed = async (query: string) => {
  const r = await t.get(`/api/tasks/?${query}`)
  expect(r.status).toBe(200)
  return [r.json, r.headers.get('x-total-count')]
}
const want = (pick: (x: Task) => boolean) => {
  const tasks = all.filter(pick)
  return [tasks, String(tasks.length)]
}

describe('GET /api/tasks/ by target', () => {
  test('every kind of target filters by its id, and only that kind', async () => {
    // Every kind a task can have is tried here (the rows above name each).
    expect(new Set(ROWS.map(([, , target]) => Object.keys(target)[0]))).toEqual(new Set(TASK_TARGETS))
    for (const kind of TASK_TARGETS)
      for (const id of [1, 2]) {
        const expected = want((x) => x.target[kind] === id)
        expect(expected[0]!.length).toBeGreaterThan(0)
        expect([`${kind}=${id}`, ...(await listed(`${kind}=${id}`))]).toEqual([`${kind}=${id}`, ...expected])
      }
    expect(await listed('projectasset=3')).toEqual([[], '0'])
  })

  test('combined with state, kind, another target, limit and offset', async () => {
    expect(await listed('projectasset=1&kind=delete')).toEqual(
      want((x) => x.target.projectasset === 1 && x.kind === 'delete'),
    )
    expect(await listed('projectasset=1&state=done')).toEqual(
      want((x) => x.target.projectasset === 1 && x.state === 'done'),
    )
    expect(await listed('videoasset=2&kind=import&state=queued')).toEqual(
      want((x) => x.target.videoasset === 2 && x.state === 'queued'),
    )
    // A task works on one record: asking for two kinds at once finds none.
    expect(await listed('projectasset=1&device=1')).toEqual([[], '0'])
    // X-Total-Count counts every match, not the page.
    const [page, count] = await listed('projectasset=1&limit=1&offset=1')
    expect([page, count]).toEqual([want((x) => x.target.projectasset === 1)[0]!.slice(1, 2), '2'])
  })

  test('a value that is not an id: 400 invalid at the parameter, saying what to send', async () => {
    for (const kind of TASK_TARGETS)
      for (const value of ['abc', '-1', '1.5', '', '0x1']) {
        const r = await t.get(`/api/tasks/?${kind}=${value}`)
        expectError(r, 400, 'invalid', { parameter: kind })
        expect(r.json.errors[0].detail).toContain(`${kind} must be a whole number`)
      }
  })
})
