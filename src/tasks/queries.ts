// The reads of the task queue that features make outside the runner (runner.ts writes and claims),
// and the one write without a runner (the command line). The tasks table is read and written only
// under src/tasks/ (test/tasks/owner.test.ts): a feature asks here, by what it wants to know.
import { type SQL, and, desc, eq, inArray, isNull, or, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import type { Db } from '../db/client.ts'
import { jsonIsTrue, jsonNumber, jsonText } from '../db/dialect.ts'
import { type Statement, type Work, all, one, statement } from '../db/port.ts'
import { TASK_TARGETS, tasks } from '../db/tables.ts'
import { isoTimestamp } from '../util/time.ts'
import type { TaskKind } from './kinds.ts'
import type { NewTask, TaskRow } from './runner.ts'

/** Import tasks, queued or running, that hold their asset out of production for a move (`held`). */
const heldImports = () =>
  and(inArray(tasks.state, ['queued', 'running']), eq(tasks.kind, 'import'), jsonIsTrue(tasks.params, 'move', 'held'))

/** The assets held out of production by an import that moves their file (queued or running; the tasks_state index). */
export function* heldImportAssets(db: Db): Work<Set<number>> {
  const rows = yield* all(
    db
      .select({ asset: jsonNumber(tasks.params, 'asset') })
      .from(tasks)
      .where(heldImports()),
  )
  // PostgreSQL answers the member as numeric, which its client reads as text.
  return new Set(rows.map((r) => Number(r.asset)))
}

/** Built once: the id of an import holding `asset` for a move (run with oneOf(…, { asset })), or undefined when none does. */
export function heldImportOf(db: Db): Statement<{ id: number }> {
  return statement(() =>
    db
      .select({ id: tasks.id })
      .from(tasks)
      .where(and(heldImports(), eq(jsonNumber(tasks.params, 'asset'), sql.placeholder('asset'))))
      .limit(1),
  )
}

/** A task's state. The task must be there (one just queued). */
export function* taskState(db: Db, id: number): Work<TaskRow['state']> {
  return (yield* one(db.select({ state: tasks.state }).from(tasks).where(eq(tasks.id, id))))!.state
}

/** The open (queued or running) tasks whose target is the project asset `id`, as rows. */
export function* openTasksOfProject(db: Db, id: number): Work<TaskRow[]> {
  return yield* all(
    db
      .select()
      .from(tasks)
      .where(and(eq(jsonNumber(tasks.target, 'projectasset'), id), inArray(tasks.state, ['queued', 'running']))),
  )
}

/** An open (queued or running) copy whose source is the folder `folder`, or undefined. */
export function* openCopyFrom(db: Db, folder: string): Work<{ id: number } | undefined> {
  return yield* one(
    db
      .select({ id: tasks.id })
      .from(tasks)
      .where(
        and(
          eq(tasks.kind, 'copy'),
          inArray(tasks.state, ['queued', 'running']),
          eq(jsonText(tasks.params, 'source'), folder),
        ),
      )
      .limit(1),
  )
}

/** The targets of the open (queued or running) copies and deletes. */
export function* openCopyAndDeleteTargets(db: Db): Work<TaskRow['target'][]> {
  const rows = yield* all(
    db
      .select({ target: tasks.target })
      .from(tasks)
      .where(and(inArray(tasks.kind, ['copy', 'delete']), inArray(tasks.state, ['queued', 'running']))),
  )
  return rows.map((t) => t.target)
}

/**
 * Built once: the last full scan of a device that ended (done or failed); run with
 * `oneOf(…, { device })`. The runner answers which tasks are open (openFor), not which ended last.
 */
export const lastEndedFullScans = (db: Db): Statement<TaskRow> =>
  statement(() =>
    db
      .select()
      .from(tasks)
      .where(
        and(
          eq(tasks.kind, 'scan'),
          inArray(tasks.state, ['done', 'failed']),
          eq(jsonNumber(tasks.target, 'device'), sql.placeholder('device')),
          isNull(jsonText(tasks.params, 'paths')),
        ),
      )
      .orderBy(desc(tasks.id))
      .limit(1),
  )

/**
 * Writes a task without a runner (the command line, in its own process): a serve running on the
 * catalogue sees the commit and takes it (runner.ts), else the next serve does. A queued task of
 * the same key is kept instead: then undefined, else the new task's id.
 */
export function* queueWithoutRunner<K extends TaskKind>(db: Db, task: NewTask<K>): Work<number | undefined> {
  const row = yield* one(
    db
      .insert(tasks)
      .values({
        kind: task.kind,
        target: task.target,
        production: task.production,
        params: task.params,
        key: task.key,
        date_add: isoTimestamp(),
      })
      .onConflictDoNothing()
      .returning({ id: tasks.id }),
  )
  return row?.id
}

// The HTTP list of tasks (modules/tasks): its table and the conditions of its filters.

type TargetKind = (typeof TASK_TARGETS)[number]

/** ?state= and ?kind=: equal to the value given, no condition when none is. */
export const stateAndKindConditions = (query: { state?: TaskRow['state']; kind?: TaskKind }) => [
  query.state === undefined ? undefined : eq(tasks.state, query.state),
  query.kind === undefined ? undefined : eq(tasks.kind, query.kind),
]

/** ?projectasset=7, ?device=2...: the tasks whose target names that record (filters combine). */
export const targetConditions = (query: Partial<Record<TargetKind, string>>) =>
  TASK_TARGETS.map((kind) => {
    const id = query[kind]
    // A number, not the digits as text: SQLite's json_extract answers an integer, which never equals text.
    return id === undefined ? undefined : eq(jsonNumber(tasks.target, kind), Number(id))
  })

/**
 * The tasks a user may read, given the condition on a production column that says which
 * productions they read (users/access.ts readableBy): with `scans`, the scans of no production too.
 */
export const readableConditions = (readableBy: (production: SQLiteColumn) => SQL | undefined, scans: boolean) =>
  scans
    ? or(readableBy(tasks.production), and(isNull(tasks.production), eq(tasks.kind, 'scan')))
    : readableBy(tasks.production)
