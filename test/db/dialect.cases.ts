// The phrases of src/db/dialect.ts run on a real catalogue of the engine this process's tables
// are for: test/db/dialect.test.ts runs them here on SQLite and, in a process of its own whose
// tables are PostgreSQL's (dialect.child.ts), on PostgreSQL, and compares the answers.
import { asc, eq, sql } from 'drizzle-orm'
import {
  inJsonList,
  jsonArray,
  jsonArrayHas,
  jsonAsText,
  jsonGroupArray,
  jsonHasKey,
  jsonIsTrue,
  jsonNumber,
  jsonText,
  jsonValue,
  noCase,
} from '../../src/db/dialect.ts'
import { type Port, all, allOf, one, run, runOf, statement } from '../../src/db/port.ts'
import { devices, tasks } from '../../src/db/tables.ts'

const NOW = '2026-11-29T00:00:00.000000Z'

export function* cases(port: Port) {
  const { db } = port
  for (const [name, path] of [
    ['beta', '/srv/b'],
    ['Alpha', '/srv/a'],
    ['gamma', '/srv/c'],
  ])
    yield* run(
      db.insert(devices).values({
        name,
        display_name: name,
        path,
        date_add: NOW,
        passthrough_profiles: name === 'beta' ? [2, 7] : [],
      } as never),
    )
  const params = [
    { asset: 5, move: { held: true }, source: '/srv/a' },
    { asset: 6, move: { held: false } },
    { asset: 7 },
  ]
  for (const [i, p] of params.entries())
    yield* run(
      db.insert(tasks).values({
        kind: 'import',
        state: 'queued',
        params: p as never,
        target: { device: i + 1 } as never,
        date_add: NOW,
      } as never),
    )
  const names = (rows: { name: string }[]) => rows.map((r) => r.name)
  const ids = (rows: { id: number }[]) => rows.map((r) => Number(r.id))
  const byIds = statement(() =>
    db
      .select({ name: devices.name })
      .from(devices)
      .where(inJsonList(devices.id, sql.placeholder('ids')))
      .orderBy(asc(devices.id)),
  )
  // A JSON value bound through a placeholder as SQL (as importlogs' update binds it): no column mapping.
  const setResult = statement(() =>
    db
      .update(tasks)
      .set({ result: sql`${sql.placeholder('result')}` })
      .where(eq(tasks.id, 1)),
  )
  yield* runOf(setResult, { result: jsonValue({ files: 3, note: 'x' }) })
  const groups = yield* one(
    db
      .select({
        ids: jsonGroupArray(devices.id, devices.id),
        pairs: jsonGroupArray(jsonArray(devices.id, devices.name), devices.id),
      })
      .from(devices),
  )
  return {
    result: (yield* one(db.select({ result: tasks.result }).from(tasks).where(eq(tasks.id, 1))))?.result,
    groupIds: JSON.parse(groups!.ids),
    groupPairs: JSON.parse(groups!.pairs as string),
    asText: ids(
      yield* all(
        db
          .select({ id: tasks.id })
          .from(tasks)
          .where(eq(jsonAsText(tasks.target), '{"device":2}')),
      ),
    ),
    inIds: names(yield* all(db.select({ name: devices.name }).from(devices).where(inJsonList(devices.id, '[1,3]')))),
    inIdsPrepared: names(yield* allOf(byIds, { ids: JSON.stringify([2, 3]) })),
    inNames: names(
      yield* all(
        db
          .select({ name: devices.name })
          .from(devices)
          .where(inJsonList(devices.path, '["/srv/c"]', 'text')),
      ),
    ),
    inNone: names(yield* all(db.select({ name: devices.name }).from(devices).where(inJsonList(devices.id, '[]')))),
    noCase: names(yield* all(db.select({ name: devices.name }).from(devices).orderBy(noCase(devices.name)))),
    arrayHas: names(
      yield* all(db.select({ name: devices.name }).from(devices).where(jsonArrayHas(devices.passthrough_profiles, 7))),
    ),
    number: ids(
      yield* all(
        db
          .select({ id: tasks.id })
          .from(tasks)
          .where(eq(jsonNumber(tasks.params, 'asset'), 6)),
      ),
    ),
    text: ids(
      yield* all(
        db
          .select({ id: tasks.id })
          .from(tasks)
          .where(eq(jsonText(tasks.params, 'source'), '/srv/a')),
      ),
    ),
    isTrue: ids(
      yield* all(
        db
          .select({ id: tasks.id })
          .from(tasks)
          .where(jsonIsTrue(tasks.params, 'move', 'held')),
      ),
    ),
    hasKey: ids(
      yield* all(
        db.select({ id: tasks.id }).from(tasks).where(jsonHasKey(tasks.params, 'move')).orderBy(asc(tasks.id)),
      ),
    ),
    nested: (yield* all(
      db
        .select({ v: jsonNumber(tasks.target, 'device') })
        .from(tasks)
        .orderBy(asc(tasks.id)),
    )).map((r) => Number(r.v)),
  }
}
