// The persisted work queue (docs/api.md, Tasks). A task is a row first and work second: the
// row is written (usually in the same transaction as the record it works for), then the runner
// claims it, runs its handler, and records the end. A task that was running when the process
// died is queued again on the next start and its handler resumes from a safe point. Tasks with
// the same target run one after the other, in the order they were made.
//
// Its statements are port work (db/port.ts), so one runner serves both engines. On SQLite each
// run answers in the same call: a claim, a progress write or the ends of a group happen exactly
// where they are asked for, as when they were bare statements. On PostgreSQL they are awaited:
// the claims, the ends of groups and the abandons run one after another (inTurn), and a task's
// progress writes in order before its end (persist).
import { and, asc, eq, inArray, max, not, sql } from 'drizzle-orm'
import { dataVersionOf } from '../db/client.ts'
import { inJsonList, jsonAsText, jsonNumber } from '../db/dialect.ts'
import {
  type Port,
  type Statement,
  type Work,
  afterCommit,
  all,
  allOf,
  one,
  oneOf,
  runOf,
  statement,
  tx,
} from '../db/port.ts'
import { type TaskTarget, tasks } from '../db/tables.ts'
import { CancelledError } from '../storage/fs.ts'
import type { Log } from '../util/log.ts'
import { isoTimestamp } from '../util/time.ts'
import type { TaskKind, TaskParams } from './kinds.ts'

export type { TaskKind }
export type TaskRow = typeof tasks.$inferSelect
export type Counters = Partial<
  Pick<TaskRow, 'bytes_done' | 'bytes_total' | 'files_done' | 'files_total' | 'step' | 'percent'>
>

export type TaskContext<K extends TaskKind = TaskKind> = {
  task: TaskRow & { params: TaskParams[K] }
  signal: AbortSignal
  /**
   * Records progress; written to the database at most a few times a second (the last of a burst
   * too, on a timer), and a new step within STEP_WRITE_MS: every step is written (a client
   * polling the task sees each one that lasts), but a step that ends with its task sooner is
   * written with the task's end.
   */
  progress(counters: Counters): void
  /**
   * Writes the params at once: a safe point a restart resumes from (a planned move, say). On
   * PostgreSQL the write is awaited: the promise settles once it is committed (a failure is
   * logged too); on SQLite it is written when save returns.
   */
  save(params: TaskParams[K]): void | Promise<void>
  /**
   * What the work found, shown in the task (a scan's counts): written with the next progress
   * written, or with the task's end.
   */
  report(result: Record<string, unknown>): void
  /**
   * Runs work that must not run beside the other tasks of its group (an external process, bytes
   * copied): one at a time per group, so that a group holds no more of it than one task of a
   * slot would. A task that is not grouped runs it at once. (Optional: a context made by hand, in
   * a test, may leave it out; then the work runs at once.)
   */
  exclusive?<T>(work: () => Promise<T>): Promise<T>
}

/**
 * The last write of a task's work, made in the transaction of its end: port work (both engines),
 * or a function that writes synchronously on SQLite's connection (code not yet port work).
 */
export type LastWrite = () => void | Work<unknown>

/**
 * Runs the work. It may resolve to its last write (the record's final state): the runner makes
 * that write in one transaction with the task's end, so the record never says "done" while the
 * task does not, or the other way round, and the catalogue takes one commit instead of two.
 */
export type Handler<K extends TaskKind = TaskKind> = ((ctx: TaskContext<K>) => Promise<void | LastWrite>) & {
  group?: number
}

/**
 * A handler whose tasks are taken `size` at a time: a free slot claims up to `size` queued tasks
 * of its kind in one transaction and runs them side by side (their heavy work one at a time:
 * TaskContext.exclusive), and the ends of those that finish together are committed together.
 * For work that is mostly a few writes (an import without ffmpeg): one commit for many tasks
 * where each took two (its claim and its end).
 */
export function grouped<K extends TaskKind>(
  handler: (ctx: TaskContext<K>) => Promise<void | LastWrite>,
  size: number,
): Handler<K> {
  return Object.assign(handler, { group: size })
}
/** A handler for every kind: a task row is never left without one. */
export type Handlers = { [K in TaskKind]: Handler<K> }

/** A task row of kind K, its params typed. */
export type TaskOf<K extends TaskKind> = TaskRow & { params: TaskParams[K] }

/**
 * What a task works on, in words for its log lines (the asset's path, the project's folder, the
 * device): key=value fields after task= and kind=. Given per kind by the features (core.ts).
 */
export type Subjects = { [K in TaskKind]?: (task: TaskOf<K>) => Record<string, unknown> }

/** What an abandon leaves to do once its transaction has committed: remove files, say. */
type Cleanup = () => Promise<unknown>

/**
 * What a queued task that is cancelled before it ran leaves undone, per kind: the record it was
 * for says so (a copy's project `ERROR: cancelled`, an import's log `import_failed`). The write
 * runs in the transaction that ends the task: as port work that answers the cleanup (both
 * engines), or synchronously on SQLite's connection (code not yet port work). `ran` says an
 * earlier process started it (a restart queued it again), so it may have left files behind: the
 * cleanup answered removes them after.
 */
export type Abandon = {
  [K in TaskKind]?: (task: TaskOf<K>, ran: boolean, reason: string) => void | Cleanup | Work<void | Cleanup>
}

/** Whether a handler's last write or an abandon answered port work (a generator) rather than running itself. */
const isWork = (value: unknown): value is Work<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as Work<unknown>).next === 'function'

/** `next` of `value`: at once when it is there (SQLite), once it has settled when it is a promise (PostgreSQL). */
function andThen<T, R>(value: T | Promise<T>, next: (value: T) => R): R | Promise<Awaited<R>> {
  return value instanceof Promise ? (value.then(next) as Promise<Awaited<R>>) : next(value)
}

/** Why cancel() refused: the task is not there, has ended, or is of a kind that cannot stop halfway. */
export type CancelRefusal = { refused: 'not_found' | 'ended' | 'not_cancellable'; task?: TaskRow }

/** What enqueue writes: the kind with params of its type, the target, and its production (visibility). */
export type NewTask<K extends TaskKind> = {
  kind: K
  target: TaskTarget
  production: number | null
  params: TaskParams[K]
  /** Merges with a queued task of the same key (one scan per device, one import per path). */
  key?: string
  /** When merged: the queued task's params from its params and this task's (else they are kept as they are). */
  merge?: (queued: TaskParams[K], added: TaskParams[K]) => TaskParams[K]
}

/** A slot of the runner: one task, or a group of tasks of one grouped kind claimed together. */
type Slot = { members: Set<number>; size: number; lock: Promise<void> }
/** A task claimed, the text of its target, and the slot it runs in. */
type Claimed = [TaskRow, string, Slot]

/** The reason a running task is stopped by a shutdown: it stays `running` and resumes on start. */
export const SHUTDOWN = 'shutdown'

/**
 * Whether a task's start is logged: long work (copies, deletes, full scans) and anything resumed
 * is; an import or a scan of a few changed paths, which come by the thousand in a busy hour, is
 * logged once, when it ends.
 */
const announced = (task: TaskRow) =>
  task.attempts > 0 ||
  !(task.kind === 'import' || (task.kind === 'scan' && (task.params as { paths?: unknown }).paths !== null))

const PROGRESS_EVERY_MS = 250
/**
 * How long a new step waits to be written. An import without ffmpeg, or of a small file, is done
 * sooner: its step is written with its end, one commit where there were two (a quarter of an
 * import's CPU was in BEGIN and COMMIT; docs/benchmarks.md, the import).
 */
const STEP_WRITE_MS = 50
/** How long the ends of a group's tasks wait for the rest of the group at most (one commit for them all). */
const GROUP_END_WAIT_MS = 10
/**
 * How often the runner looks whether another process (a command line such as `reelhouse proxies
 * remake`) committed to the catalogue, which may have queued tasks: on SQLite a read of
 * data_version, on PostgreSQL of the newest queued task's id; a claim only when it changed.
 */
const FOREIGN_EVERY_MS = 1000
const STOP_WAIT_MS = 5000
/** How long a cancel waits for a running task to reach its next safe point before answering. */
const CANCEL_WAIT_MS = 10_000
/** The reason a task is cancelled by a user; the task ends failed with this error. */
export const CANCELLED = 'cancelled'
/** Kinds that cannot be cancelled: a delete half done cannot be undone (its folder is renamed away first). */
const NOT_CANCELLABLE: ReadonlySet<TaskKind> = new Set(['delete'])

/** What the runner does with each kind: given once, before start (createRunner's options or handle()). */
export type Assignment = { handlers: Handlers; subjects?: Subjects; abandon?: Abandon }

export type RunnerOptions = Partial<Assignment> & {
  concurrency: number
  log: Log
  /**
   * Told a task's id each time its row changes (queued, merged, claimed, progress written, params
   * or result saved, ended, requeued at start), once that change is committed; `get` reads the row
   * as it is then (on PostgreSQL, where no read is synchronous: as it was read once committed,
   * before the observer is told). Never for a change rolled back. A throw is logged, never the
   * runner's.
   */
  observe?: (id: number, get: (id: number) => TaskRow | undefined) => void
}

export function createRunner(port: Port, options: RunnerOptions) {
  const { concurrency, log } = options
  const db = port.db
  const onSqlite = port.engine === 'sqlite'
  // The services a handler needs are built with this runner (they queue through it), so the work
  // is usually given after them, by handle(); a runner given none fails every task it claims.
  let assigned: Assignment | undefined = options.handlers && {
    handlers: options.handlers,
    subjects: options.subjects,
    abandon: options.abandon,
  }
  /** The log fields of a task: its id and kind, then what it works on (never a reason for the log line to fail). */
  const fieldsOf = (task: TaskRow): Record<string, unknown> => {
    let subject: Record<string, unknown> = { target: task.target }
    try {
      const describe = (
        assigned?.subjects as Record<string, ((t: TaskRow) => Record<string, unknown>) | undefined> | undefined
      )?.[task.kind]
      if (describe) subject = describe(task)
    } catch {
      // A subject that cannot be read (its record is gone) leaves the target, which names it by id.
    }
    return { task: task.id, kind: task.kind, ...subject }
  }
  const running = new Map<number, { controller: AbortController; target: string; done: Promise<void>; slot: Slot }>()
  /** The slots in use: each holds one task, or a group of tasks of one grouped kind claimed together. */
  const slots = new Set<Slot>()
  /** The largest group a handler takes (1: none is grouped): how far claimFree reads the queue. */
  const largestGroup = () =>
    Math.max(
      1,
      ...Object.values((assigned?.handlers ?? {}) as Record<string, Handler | undefined>).map((h) => h?.group ?? 1),
    )
  // What every task goes through, built once with placeholders (an import is a task: these ran
  // per import), and prepared once on SQLite.
  const p = (name: string) => sql.placeholder(name)
  const byId = statement(() =>
    db
      .select()
      .from(tasks)
      .where(eq(tasks.id, p('id'))),
  )
  function* rowById(id: number): Work<TaskRow | undefined> {
    return yield* oneOf(byId, { id })
  }
  const observe = options.observe
  /** Tells the observer of a committed change (see RunnerOptions.observe). */
  const rowNow = (id: number) => port.run(rowById(id)) as TaskRow | undefined
  const tell = !observe
    ? (_: number) => {}
    : onSqlite
      ? (id: number) => observe(id, rowNow)
      : toldAfterRead(port, log, rowById, observe)
  /** The task's row changed: told to the observer once committed (never when rolled back). */
  function* changed(id: number): Work<void> {
    if (observe) yield* afterCommit(() => tell(id))
  }
  let started = false
  let stopping = false
  /** Set when stop() returned: a task still finishing must not touch the (closed) catalogue. */
  let closed = false

  /**
   * The statements that write some columns of a task row, by the names of the columns written,
   * each built and prepared once: a progress write, an import's result, step and end. (drizzle's
   * update() built and prepared a new statement for each, and preparing was a tenth of an
   * import's CPU.) `write` leaves telling the observer to its caller; `update` tells it.
   */
  const writes = new Map<string, Statement<unknown>>()
  function* write(id: number, values: Partial<TaskRow>): Work<void> {
    const columns = Object.keys(values).sort() as (keyof TaskRow)[]
    const key = columns.join(' ')
    let written = writes.get(key)
    if (!written) {
      const set = Object.fromEntries(columns.map((c) => [c, p(c)])) as Partial<TaskRow>
      written = statement(() =>
        db
          .update(tasks)
          .set(set)
          .where(eq(tasks.id, p('id'))),
      )
      writes.set(key, written)
    }
    yield* runOf(written, { ...values, id })
  }
  function* update(id: number, values: Partial<TaskRow>): Work<void> {
    yield* write(id, values)
    yield* changed(id)
  }
  /**
   * The oldest queued tasks whose target is not busy; busy targets come as a JSON array of target
   * texts. The target is read and compared as the text it is stored as (jsonAsText).
   */
  const queuedFree = statement(() =>
    db
      .select({ id: tasks.id, kind: tasks.kind, target: jsonAsText(tasks.target) })
      .from(tasks)
      .where(and(eq(tasks.state, 'queued'), not(inJsonList(jsonAsText(tasks.target), p('busy'), 'text'))))
      .orderBy(asc(tasks.id))
      .limit(p('limit')),
  )
  // A key merges queued work only: a claimed task lets the next one of its key queue anew, so
  // a restart that queues running tasks again never meets two rows of one key.
  const claim = statement(() =>
    db
      .update(tasks)
      .set({ state: 'running', key: null, date_start: sql`${p('now')}` })
      .where(and(eq(tasks.id, p('id')), eq(tasks.state, 'queued')))
      .returning(),
  )
  const end = statement(() =>
    db
      .update(tasks)
      .set({ state: sql`${p('state')}`, error: sql`${p('error')}`, date_end: sql`${p('now')}` })
      .where(eq(tasks.id, p('id'))),
  )
  function* endFailed(id: number, error: string): Work<void> {
    yield* runOf(end, { id, state: 'failed', error, now: isoTimestamp() })
    yield* changed(id)
  }

  /**
   * The claims, the ends of groups (with the claims they make) and the abandons, each run with
   * what comes after it (`next`, or `fail` when it threw). On SQLite at once, in this call. On
   * PostgreSQL one after another: a claim reads which slots are free and which targets busy from
   * what the ones before it left in memory once committed (their `next` runs what they claimed),
   * so two at once could claim past the concurrency, or two tasks of one target.
   */
  let turns: Promise<unknown> = Promise.resolve()
  /** How many turns are waiting or under way (PostgreSQL): a claim not yet run is work idle() waits for. */
  let turnsOpen = 0
  function inTurn<T>(work: Work<T>, next: (value: T) => void, fail: (error: unknown) => void): void | Promise<void> {
    if (onSqlite) {
      let value: T
      try {
        value = port.run(work) as T
      } catch (error) {
        return fail(error)
      }
      return next(value)
    }
    turnsOpen++
    const turn = turns
      .then(() => port.run(work))
      .then(next, fail)
      .finally(() => turnsOpen--)
    turns = turn.catch((error: unknown) =>
      log.error('the task queue could not go on', { error: error instanceof Error ? error.message : String(error) }),
    )
    return turn
  }

  /** A task whose work has ended, waiting for its end to be written with the others of its moment. */
  type Ending = {
    id: number
    last: void | LastWrite
    values: Partial<TaskRow>
    settle: (error?: unknown) => void
    failed: boolean
  }
  let ending: Ending[] = []
  /**
   * One task's end inside the transaction of the group's (a savepoint): its last write and its end
   * together, or neither. What it reported and its last progress are written with it, and the
   * observer told of it once (each call reads the row after the commit: a second would send the
   * end twice).
   */
  function* endOne(e: Ending): Work<void> {
    yield* tx(function* () {
      if (Object.keys(e.values).length) yield* write(e.id, e.values)
      const last = e.last?.()
      if (isWork(last)) yield* last
      yield* runOf(end, { id: e.id, state: 'done', error: '', now: isoTimestamp() })
      yield* changed(e.id)
    })
  }
  /**
   * The ends of every task whose work ended since the last flush, in one transaction, with the
   * claim of the next tasks for the slots they free: one commit where each task took two. A task
   * whose last write fails is rolled back alone (its savepoint) and fails; the others end done.
   */
  function* finishAll(batch: Ending[]): Work<Claimed[]> {
    return yield* tx(function* () {
      for (const e of batch) {
        try {
          yield* endOne(e)
          release(e.id)
        } catch (error) {
          e.failed = true
          e.settle(error)
        }
      }
      return yield* claimFree()
    })
  }
  /** Writes the ends waiting (see schedule). */
  function flushEnds() {
    flushDue = false
    clearTimeout(flushTimer)
    flushTimer = undefined
    const batch = ending
    ending = []
    for (const e of batch) endingIds.delete(e.id)
    if (batch.length === 0) return
    if (closed) return batch.forEach((e) => e.settle())
    inTurn(
      finishAll(batch),
      (next) => {
        for (const e of batch) if (!e.failed) e.settle()
        for (const [row, target, slot] of next) run(row, target, slot)
      },
      (error) => {
        // The transaction itself failed (its commit): none of them ended.
        for (const e of batch) if (!e.failed) e.settle(error)
      },
    )
  }
  /** The ids of the tasks in `ending`. */
  const endingIds = new Set<number>()
  let flushDue = false
  let flushTimer: Timer | undefined
  /**
   * When the ends waiting are written: a lone task's, or those of a group whose tasks have all
   * ended, at once (a microtask: in the turn of the event loop the work ended in); a group's
   * while others of it still run, with theirs, or GROUP_END_WAIT_MS later at most, so that one
   * long task of a group does not hold the others' ends.
   */
  function schedule(slot: Slot) {
    if (ending.length === 0) return
    const waiting = slot.size > 1 && [...slot.members].some((id) => !endingIds.has(id))
    if (!waiting) {
      if (!flushDue) {
        flushDue = true
        queueMicrotask(flushEnds)
      }
    } else flushTimer ??= setTimeout(flushEnds, GROUP_END_WAIT_MS)
  }
  /** Resolves once the task's end is committed; rejects with the error its last write threw. */
  const ended = (id: number, slot: Slot, last: void | LastWrite, values: Partial<TaskRow>) =>
    new Promise<void>((resolve, reject) => {
      ending.push({
        id,
        last,
        values,
        failed: false,
        settle: (error) => (error === undefined ? resolve() : reject(error)),
      })
      endingIds.add(id)
      schedule(slot)
    })
  /** The task no longer holds its slot (nor its target); a slot whose tasks have all ended is free. */
  function release(id: number) {
    const r = running.get(id)
    if (!r) return
    running.delete(id)
    r.slot.members.delete(id)
    if (r.slot.members.size === 0) slots.delete(r.slot)
    // A group's task that failed: the ends of the others may be all that is left of it.
    else schedule(r.slot)
  }
  const insert = statement(() =>
    db
      .insert(tasks)
      .values({
        kind: p('kind'),
        target: p('target'),
        production: p('production'),
        params: p('params'),
        key: p('key'),
        date_add: p('now'),
      } as unknown as typeof tasks.$inferInsert)
      .onConflictDoNothing()
      .returning({ id: tasks.id }),
  )
  const queuedOfKey = statement(() =>
    db
      .select({ id: tasks.id, params: tasks.params })
      .from(tasks)
      .where(and(eq(tasks.key, p('key')), eq(tasks.state, 'queued'))),
  )

  /**
   * Claims queued tasks for the free slots, oldest first, skipping targets that are busy: a task
   * of a grouped kind takes a slot with as many more of its kind as its group holds. The read is
   * bounded (a card of 10,000 files dropped into a watch folder must not cost a read of every
   * queued row each time a task ends) and skips busy targets in SQL; the margin covers queued
   * tasks of one target, which wait for each other. A group takes no task once it runs: a slot
   * is freed when its tasks have all ended, so older queued work of other kinds is never passed
   * over for long. The caller runs what was claimed once the transaction it claims in has committed.
   */
  function* claimFree(): Work<Claimed[]> {
    if (!started || stopping) return []
    let free = concurrency - slots.size
    if (free <= 0) return []
    const busy = new Set([...running.values()].map((r) => r.target))
    const claimed: Claimed[] = []
    /** Groups made in this claim that have room, by kind. */
    const open = new Map<TaskKind, Slot>()
    const queued = yield* allOf(queuedFree, {
      busy: JSON.stringify([...busy]),
      limit: free * largestGroup() + 16,
    })
    for (const task of queued) {
      if (free === 0 && open.size === 0) break
      if (busy.has(task.target)) continue
      let slot = open.get(task.kind)
      if (!slot) {
        if (free === 0) continue
        slot = {
          members: new Set(),
          size: (assigned?.handlers as Record<string, Handler | undefined> | undefined)?.[task.kind]?.group ?? 1,
          lock: Promise.resolve(),
        }
      }
      const row = yield* oneOf(claim, { id: task.id, now: isoTimestamp() })
      if (!row) continue
      busy.add(task.target)
      if (slot.members.size === 0) {
        free--
        slots.add(slot)
      }
      slot.members.add(row.id)
      if (slot.members.size < slot.size) open.set(task.kind, slot)
      else open.delete(task.kind)
      claimed.push([row, task.target, slot])
      yield* changed(row.id)
    }
    return claimed
  }
  /** Fills the free slots: one commit for every claim; none when every slot is taken (claimFree would find none). */
  function pump() {
    woken = false
    if (closed || !started || stopping || slots.size >= concurrency) return
    inTurn(
      tx(claimFree),
      (claimed) => {
        for (const [task, target, slot] of claimed) run(task, target, slot)
      },
      (error) =>
        // The next wake (a task's end, an enqueue, another process's commit) claims again.
        log.error('queued tasks could not be claimed', {
          error: error instanceof Error ? error.message : String(error),
        }),
    )
  }
  /** Pumps once after the current synchronous work (many enqueues in a row wake it once). */
  let woken = false
  const wake = () => {
    if (woken) return
    woken = true
    queueMicrotask(pump)
  }

  function run(task: TaskRow, target: string, slot: Slot) {
    const controller = new AbortController()
    // Progress is written at most every PROGRESS_EVERY_MS from the claim on (the claim wrote the row).
    let last = Date.now()
    let step = task.step
    /** Progress and result not written yet: with the next progress written, else with the end. */
    let pending: Partial<TaskRow> = {}
    /** The write that pending waits for (a new step's, or the last progress of a burst). */
    let timer: Timer | undefined
    /**
     * On PostgreSQL, the task's writes under way, one after another: its end waits for them, so
     * an older progress never lands after it. None on SQLite, where each is written as it is made.
     */
    let writing: Promise<void> | undefined
    /** Runs one of the task's writes: at once on SQLite; on PostgreSQL after those before it (a failure logged). */
    const persist = (work: Work<void>): void | Promise<void> => {
      if (onSqlite) return void port.run(work)
      const written = (writing ?? Promise.resolve()).then(() => port.run(work))
      written.catch((error: unknown) =>
        log.warn('a task could not be written', {
          ...fieldsOf(task),
          error: error instanceof Error ? error.message : String(error),
        }),
      )
      writing = written.catch(() => {})
      return written
    }
    const take = () => {
      clearTimeout(timer)
      timer = undefined
      const taken = pending
      pending = {}
      return taken
    }
    const flush = () => {
      if (closed) return
      const values = take()
      if (Object.keys(values).length) persist(update(task.id, values))
      last = Date.now()
    }
    const flushIn = (ms: number) => {
      timer ??= setTimeout(flush, Math.max(0, ms))
    }
    const ctx: TaskContext = {
      // The one place stored params become typed: rows are written by enqueue, typed by kind.
      task: task as TaskContext['task'],
      signal: controller.signal,
      progress(counters) {
        const stepped = counters.step !== undefined && counters.step !== step
        // A step not written yet is written before the next one takes its place: every step is.
        if (stepped && pending.step !== undefined) flush()
        Object.assign(pending, counters)
        if (stepped) {
          step = counters.step!
          flushIn(STEP_WRITE_MS)
        } else if (Date.now() - last >= PROGRESS_EVERY_MS) flush()
        else flushIn(PROGRESS_EVERY_MS - (Date.now() - last))
      },
      save(params) {
        const saved = closed ? undefined : persist(update(task.id, { params: params as Record<string, unknown> }))
        ctx.task.params = params
        return saved
      },
      report(result) {
        pending.result = result
      },
      exclusive(work) {
        // A lone task has its slot to itself; a group's tasks take turns (a chain that never rejects).
        if (slot.size === 1) return work()
        const turn = slot.lock.then(work)
        slot.lock = turn.then(
          () => {},
          () => {},
        )
        return turn
      },
    }
    // Read when each line is written: what the task works on may have moved (an import's file).
    const fields = () => fieldsOf(task)
    if (announced(task)) log.info('task started', { ...fields(), attempt: task.attempts + 1 })
    // A row of a kind this version has no handler for (written by a newer one) fails, not crashes.
    const handler = (assigned?.handlers as Record<string, Handler | undefined> | undefined)?.[task.kind]
    const doing = handler ? handler(ctx) : Promise.reject(new Error(`no handler for ${task.kind} tasks`))
    const failed = (error: unknown): void | Promise<void> => {
      if (closed) return
      flush()
      if (error instanceof CancelledError && controller.signal.reason === SHUTDOWN) {
        log.info('task left to resume on next start', fields())
        return
      }
      const message = error instanceof Error ? error.message : String(error)
      return andThen(persist(endFailed(task.id, message)), () => {
        if (controller.signal.reason === CANCELLED) log.info('task cancelled', { ...fields(), error: message })
        else log.warn('task failed', { ...fields(), error: message })
      })
    }
    const done = doing
      .then(async (last) => {
        if (closed) return
        const values = take()
        // PostgreSQL: the progress written so far first (SQLite has written it already).
        if (writing) await writing
        try {
          await ended(task.id, slot, last, values)
        } catch (error) {
          // The last write failed: rolled back, and the task with it; its progress is written as it fails.
          pending = { ...values, ...pending }
          return failed(error)
        }
        // Imports and small scans come by the thousand: their lines are written a turn at a time.
        if (announced(task)) log.info('task done', fields())
        else (log.infoBatched ?? log.info)('task done', fields())
      }, failed)
      .finally(() => {
        release(task.id)
        if (!closed) wake()
      })
    running.set(task.id, { controller, target, done, slot })
  }

  /**
   * A task not running here ends failed, with what its kind leaves undone written in the same
   * transaction; answers its row and the cleanup to run after, or `running` when this runner has
   * claimed it meanwhile (on PostgreSQL the abandon waits for the claims before it), or undefined
   * when it is not there or has ended.
   */
  function* abandonOne(id: number, reason: string): Work<'running' | undefined | { row: TaskRow; cleanup: Cleanup }> {
    if (running.has(id)) return 'running'
    return yield* tx(function* () {
      const row = yield* rowById(id)
      if (!row) return undefined
      const ended = yield* one(
        db
          .update(tasks)
          .set({ state: 'failed', error: reason, key: null, date_end: isoTimestamp() })
          .where(and(eq(tasks.id, row.id), inArray(tasks.state, ['queued', 'running'])))
          .returning({ id: tasks.id }),
      )
      if (!ended) return undefined
      yield* changed(row.id)
      const abandon = (
        assigned?.abandon as
          | Record<
              string,
              ((t: TaskRow, ran: boolean, reason: string) => ReturnType<NonNullable<Abandon['copy']>>) | undefined
            >
          | undefined
      )?.[row.kind]
      let left = abandon?.(row, row.state === 'running' || row.attempts > 0, reason)
      if (isWork(left)) left = yield* left
      return { row, cleanup: left ?? (() => Promise.resolve()) }
    })
  }

  /**
   * Stops a queued or running task, which ends failed with `reason` as its error. A running one
   * is stopped through its AbortSignal (the mechanism a shutdown uses): its handler cleans up at
   * its next safe point, as it does on any failure. A queued one never runs: what its kind
   * leaves undone is written (Abandon). Resolves when the task has ended, or after `waitMs`.
   */
  async function cancel(id: number, reason: string, waitMs = CANCEL_WAIT_MS): Promise<void> {
    const stopRunning = async () => {
      const r = running.get(id)
      if (!r) return
      r.controller.abort(reason)
      let timer: Timer | undefined
      await Promise.race([r.done, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))])
      clearTimeout(timer)
    }
    if (running.has(id)) return stopRunning()
    if (closed) return
    let outcome: Awaited<ReturnType<typeof abandonOne> extends Work<infer T> ? T : never>
    await inTurn(
      abandonOne(id, reason),
      (value) => {
        outcome = value
      },
      (error) => {
        throw error
      },
    )
    if (outcome === 'running') return stopRunning()
    if (!outcome) return
    const { row, cleanup } = outcome
    log.info('task cancelled', { ...fieldsOf(row), error: reason })
    await cleanup().catch((error: Error) =>
      log.warn('a cancelled task left something behind', { ...fieldsOf(row), error: error.message }),
    )
  }

  /**
   * Tasks queued by another process: claimed once its commit is seen (FOREIGN_EVERY_MS). On
   * SQLite by the catalogue's data_version, which changes with another connection's commit and
   * costs no read of a table. PostgreSQL has no such counter: there the newest queued task's id is
   * read (the tasks_state index), and a new one wakes the runner, whoever queued it.
   */
  let foreignTimer: Timer | undefined
  const version = onSqlite ? dataVersionOf(db) : undefined
  const newestQueued = statement(() =>
    db
      .select({ id: max(tasks.id) })
      .from(tasks)
      .where(eq(tasks.state, 'queued')),
  )
  function watchForeign() {
    const now = version ? () => version.now() : () => andThen(port.run(oneOf(newestQueued)), (row) => row?.id ?? 0)
    // SQLite starts from the version as of now; PostgreSQL from none, so its first look wakes the
    // runner when anything is queued (a claim then takes what it can, as any wake-up does).
    let seen = version ? (now() as number) : 0
    let looking = false
    const settle = (n: number) => {
      looking = false
      if (n === seen) return
      seen = n
      if (running.size < concurrency) wake()
    }
    foreignTimer = setInterval(() => {
      if (closed || stopping || looking) return
      looking = true
      let n: number | Promise<number>
      try {
        n = now()
      } catch (error) {
        looking = false
        throw error
      }
      if (n instanceof Promise) n.then(settle, () => (looking = false))
      else settle(n)
    }, FOREIGN_EVERY_MS)
    foreignTimer.unref()
  }

  /** The open (queued or running) tasks by a target's member (videoasset, device, ...), built once per member. */
  const openByMember = new Map<string, Statement<{ id: number }>>()
  const openForTarget = (key: string) => {
    let made = openByMember.get(key)
    if (!made)
      openByMember.set(
        key,
        (made = statement(() =>
          db
            .select({ id: tasks.id })
            .from(tasks)
            .where(and(inArray(tasks.state, ['queued', 'running']), eq(jsonNumber(tasks.target, key), p('id'))))
            .orderBy(asc(tasks.id)),
        )),
      )
    return made
  }

  return {
    /**
     * What each kind does, given once before start(): the composition root builds the services
     * that queue through this runner first, then hands it their handlers (src/core.ts).
     */
    handle(given: Assignment) {
      if (assigned) throw new Error('the runner was given its work already')
      if (started) throw new Error('the runner is given its work before it starts')
      assigned = given
    },

    /**
     * Queues the tasks a dead process left running, then starts taking work (on SQLite before it
     * returns; on PostgreSQL once the promise it answers has resolved).
     */
    start(): void | Promise<void> {
      // Queued again and the attempt counted in one statement: never one without the other.
      const requeue = function* (): Work<void> {
        const requeued = yield* all(
          db
            .update(tasks)
            .set({ state: 'queued', attempts: sql`${tasks.attempts} + 1` })
            .where(eq(tasks.state, 'running'))
            .returning({ id: tasks.id }),
        )
        for (const { id } of requeued) {
          const row = yield* rowById(id)
          log.info('task resumed after restart', row ? fieldsOf(row) : { task: id })
          yield* changed(id)
        }
      }
      return andThen(port.run(requeue()), () => {
        started = true
        pump()
        watchForeign()
      })
    },

    /**
     * Writes a task row (in the caller's transaction when the work is yielded inside one) and
     * wakes the runner once that has committed (never for a transaction rolled back): the
     * wake-up is a microtask after the commit. With a key, a queued task of the same key is kept
     * instead: its id is answered with `merged` set, its params merged when `merge` is given.
     */
    *enqueue<K extends TaskKind>(task: NewTask<K>): Work<{ id: number; merged: boolean }> {
      const row = yield* oneOf(insert, {
        kind: task.kind,
        target: task.target,
        production: task.production,
        params: task.params,
        key: task.key ?? null,
        now: isoTimestamp(),
      })
      yield* afterCommit(wake)
      if (row) {
        yield* changed(row.id)
        return { id: row.id, merged: false }
      }
      const queued = (yield* oneOf(queuedOfKey, { key: task.key! }))!
      if (task.merge)
        yield* update(queued.id, {
          params: task.merge(queued.params as TaskParams[K], task.params) as Record<string, unknown>,
        })
      return { id: queued.id, merged: true }
    },

    /** The open (queued or running) tasks working on `target` (e.g. {videoasset: 7}), by id. */
    *openFor(target: TaskTarget): Work<number[]> {
      const [key, id] = Object.entries(target)[0] ?? []
      if (key === undefined || id === undefined) return []
      return (yield* allOf(openForTarget(key), { id })).map((r) => r.id)
    },

    /** One task's row. */
    get: rowById,

    cancel,

    /**
     * A user's cancel (POST /api/tasks/{id}/cancel/): refused for a task that is not there, has
     * ended, or cannot stop halfway (a delete); else cancel() with CANCELLED, answering the row
     * as it is then. Who may cancel is the caller's rule (modules/tasks).
     */
    async cancelByUser(id: number, fields: Record<string, unknown>): Promise<TaskRow | CancelRefusal> {
      const row = await port.run(rowById(id))
      if (!row) return { refused: 'not_found' }
      if (row.state === 'done' || row.state === 'failed') return { refused: 'ended', task: row }
      if (NOT_CANCELLABLE.has(row.kind)) return { refused: 'not_cancellable', task: row }
      log.info('task cancel asked', { ...fieldsOf(row), ...fields })
      await cancel(id, CANCELLED)
      return (await port.run(rowById(id)))!
    },

    /**
     * Removes ended tasks of `kind` that ended before `before` in state done and whose result
     * says nothing changed: each of `unchanged` (result members) is 0 or absent. Failed tasks are
     * kept. Answers how many went.
     */
    *prune(rule: { kind: TaskKind; before: string; unchanged: readonly string[] }): Work<number> {
      const quiet = rule.unchanged.map((k) => sql`coalesce(${jsonNumber(tasks.result, k)}, 0) = 0`)
      const gone = yield* all(
        db
          .delete(tasks)
          .where(
            and(eq(tasks.kind, rule.kind), eq(tasks.state, 'done'), sql`${tasks.date_end} < ${rule.before}`, ...quiet),
          )
          .returning({ id: tasks.id }),
      )
      return gone.length
    },

    /**
     * Stops taking work and stops running tasks at their next safe point, leaving them
     * resumable. A task still busy after a few seconds (a copy in the middle of one huge file)
     * is not waited for: its row stays `running`, and the next start redoes it from its safe
     * point, which is always correct (the process is about to end).
     */
    async stop(waitMs = STOP_WAIT_MS) {
      stopping = true
      clearInterval(foreignTimer)
      for (const r of running.values()) r.controller.abort(SHUTDOWN)
      let timer: Timer | undefined
      const settled = Promise.allSettled([...running.values()].map((r) => r.done))
      const late = await Promise.race([
        settled.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), waitMs))),
      ])
      clearTimeout(timer)
      closed = true
      if (late)
        log.warn('stopping without waiting for running tasks; they resume on the next start', {
          tasks: [...running.keys()],
        })
    },

    /**
     * Resolves when no task is running or queued (for tests and benchmarks), in the same turn of
     * the event loop as the last task's end: a task's end claims the next ones before `done`
     * settles, so only queued tasks nobody can claim yet (the runner not started, or stopping)
     * are waited for with a timer. It slept 5 ms after every task, which the copy benchmark
     * counted as part of each copy.
     */
    async idle() {
      for (;;) {
        if (running.size) {
          await Promise.allSettled([...running.values()].map((r) => r.done))
          continue
        }
        // PostgreSQL: a claim committed whose tasks are not running yet.
        if (turnsOpen) {
          await turns
          continue
        }
        const queued = await port.run(
          one(db.select({ id: tasks.id }).from(tasks).where(eq(tasks.state, 'queued')).limit(1)),
        )
        if (!queued) return
        await new Promise((r) => setTimeout(r, 5))
      }
    },
  }
}

/**
 * The observer's telling on PostgreSQL, where no read is synchronous: each change's row is read
 * once it is committed, and the observer is told once it is there, its `get` answering the newest
 * row read of a task (an observer that paces what it sends calls it again later). A read that
 * comes back after a newer one of the same task tells nothing: reads on a pool may finish out of
 * order. What is kept of a task goes once it has ended and no read of it is under way.
 */
function toldAfterRead(
  port: Port,
  log: Log,
  rowById: (id: number) => Work<TaskRow | undefined>,
  observe: NonNullable<RunnerOptions['observe']>,
) {
  const known = new Map<number, { row: TaskRow | undefined; read: number; pending: number }>()
  const over = (row: TaskRow | undefined) => !row || row.state === 'done' || row.state === 'failed'
  const get = (id: number) => known.get(id)?.row
  let reads = 0
  return (id: number) => {
    const read = ++reads
    let entry = known.get(id)
    if (!entry) known.set(id, (entry = { row: undefined, read: 0, pending: 0 }))
    const kept = entry
    kept.pending++
    Promise.resolve(port.run(rowById(id)))
      .then(
        (row) => {
          if (read < kept.read) return
          kept.read = read
          kept.row = row
          try {
            observe(id, get)
          } catch (error) {
            log.error('after-commit work failed', { error: error instanceof Error ? error.message : String(error) })
          }
        },
        (error: unknown) =>
          log.warn('a changed task could not be read for its observer', {
            task: id,
            error: error instanceof Error ? error.message : String(error),
          }),
      )
      .finally(() => {
        if (--kept.pending === 0 && over(kept.row)) known.delete(id)
      })
  }
}

export type Runner = ReturnType<typeof createRunner>
