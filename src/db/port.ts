// The data-access port: one way to run statements and transactions that is synchronous on SQLite
// and asynchronous on PostgreSQL, written once.
//
// Work on the catalogue is a generator (`function*`) that yields each statement it wants run and
// gets its answer back (`const rows = yield* all(db.select()…)`), as coroutines do. The port drives
// it: on SQLite it runs each statement at once, in the same call, and the whole work returns its
// value synchronously; on PostgreSQL it awaits each statement on the pool, or on the transaction's
// own connection, and the work returns a promise. The same source serves both engines.
//
// Why not async functions awaited on both. Measured before this was built, on this codebase:
// - On SQLite one connection serves every request. A transaction whose body awaits lets other
//   requests run in its gaps (every await, even of a value already there, is a turn of the
//   microtask queue), and their statements land inside it: a request that writes an independent
//   row while another's transaction awaits and then rolls back loses its row. Async bodies would
//   need a process-wide lock around every transaction and every statement outside one. A body
//   driven synchronously never leaves a gap: no lock, and no request ever runs inside another's
//   transaction.
// - SQLite's hot reads (a list page with its count, a record by id, the key check on a cache hit)
//   take a few microseconds; one await costs 0.12-0.13 µs and, worse, a statement awaited on its
//   own leaves the GET's read snapshot (client.ts readSnapshotOf) and opens its own read
//   transaction (about 2 µs each). Driven synchronously they stay inside it, at no await at all.
// - On PostgreSQL every statement is a round trip anyway (30-45 µs over a local socket), and a
//   transaction holds a connection of its own: there bodies are awaited, and a statement inside a
//   transaction must run on that connection. `db` is therefore an ambient handle: inside `tx` it
//   is the transaction (AsyncLocalStorage), elsewhere the pool, so code built from `db` inside a
//   body is in the transaction without passing a `tx` around.
//
// Rules for work (each one is what keeps both engines right):
// - Statements run only through the steps below (`all`, `one`, `run`, `tx`, `afterCommit`): a
//   builder's own `.all()`/`.get()`/`.run()` is SQLite-only and synchronous.
// - A transaction's body yields statements only: no file I/O or other awaiting work inside it
//   (it cannot: a generator driven synchronously cannot await). Work that needs the disk does it
//   before or after, between two port runs.
// - Raw SQL only through drizzle's `sql` template, which renders `?` or `$n` for its engine.
// - Nested `tx` is a savepoint: its rollback keeps the outer transaction's work.
import { AsyncLocalStorage } from 'node:async_hooks'
import type { SQL as BunSql } from 'bun'
import { SQL, is } from 'drizzle-orm'
import { afterCommit as sqliteAfterCommit } from './aftercommit.ts'
import type { Db } from './client.ts'

/** One statement or transaction a work wants run; the port's driver answers it. */
export type Step =
  | { kind: 'all' | 'one' | 'run'; q: unknown }
  | { kind: 'prepared'; mode: 'all' | 'one' | 'run'; statement: Statement<unknown>; values: Record<string, unknown> }
  | { kind: 'tx'; body: () => Work<unknown> }
  | { kind: 'after'; fn: () => void }

/** Work on the catalogue: a generator that yields steps and returns T. */
export type Work<T> = Generator<Step, T, unknown>

/** What a statement that returns rows looks like to the code (a drizzle builder, or a `sql` template). */
type Rows<T> = { all(): T[] } | SQL<T> | PromiseLike<T[]>

/** Every row of a select (or of an insert, update or delete with `.returning()`). */
export function* all<T>(q: Rows<T>): Work<T[]> {
  return (yield { kind: 'all', q }) as T[]
}

/** The first row, or undefined; give the select its own `.limit(1)` where many could match. */
export function* one<T>(q: Rows<T> | { get(): T | undefined }): Work<T | undefined> {
  return (yield { kind: 'one', q }) as T | undefined
}

/** A statement run for its effect; how many rows it changed. */
export function* run(q: { run(): unknown } | SQL | PromiseLike<unknown>): Work<{ changes: number }> {
  return (yield { kind: 'run', q }) as { changes: number }
}

/**
 * A statement built once with `sql.placeholder('name')` for its values and run many times (a
 * history row, a hot lookup): SQLite prepares it on first use and keeps it; PostgreSQL builds it
 * on the handle of the moment (the transaction's connection or the pool), where the round trip
 * costs more than the build. Run it with `allOf`, `oneOf` or `runOf`.
 */
export type Statement<T> = { build: () => unknown; kept?: unknown; readonly row?: T }

export function statement<T = unknown>(build: () => Rows<T> | { run(): unknown }): Statement<T> {
  return { build }
}

export function* allOf<T>(s: Statement<T>, values: Record<string, unknown> = {}): Work<T[]> {
  return (yield { kind: 'prepared', mode: 'all', statement: s, values }) as T[]
}

export function* oneOf<T>(s: Statement<T>, values: Record<string, unknown> = {}): Work<T | undefined> {
  return (yield { kind: 'prepared', mode: 'one', statement: s, values }) as T | undefined
}

export function* runOf(s: Statement<unknown>, values: Record<string, unknown> = {}): Work<{ changes: number }> {
  return (yield { kind: 'prepared', mode: 'run', statement: s, values }) as { changes: number }
}

/**
 * `body` in one transaction: committed when it returns, rolled back when it throws (the throw
 * goes on). Inside another transaction, a savepoint. On SQLite the write lock is taken as it
 * begins (client.ts: BEGIN IMMEDIATE).
 */
export function* tx<T>(body: () => Work<T>): Work<T> {
  return (yield { kind: 'tx', body }) as T
}

/**
 * Runs `fn` once the current transaction commits (at once outside one); never when it, or the
 * savepoint it was queued in, rolls back. `fn` must not throw into the writer (a throw is logged).
 */
export function* afterCommit(fn: () => void): Work<void> {
  yield { kind: 'after', fn }
}

export type Engine = 'sqlite' | 'postgres'

export type Port = {
  readonly engine: Engine
  /**
   * The handle statements are built from. On PostgreSQL it is ambient: the transaction inside
   * `tx`, the pool elsewhere. Typed as the SQLite handle, whose builders the code is written
   * against; the PostgreSQL builders answer the same calls.
   */
  readonly db: Db
  /** Runs work: its value at once on SQLite, a promise of it on PostgreSQL. */
  run<T>(work: Work<T>): T | Promise<T>
  /**
   * On PostgreSQL, the pool's own client (Bun.SQL), for what drizzle does not build: the search's
   * statements (db/search/pg.ts) and its read-only snapshot transaction. Not ambient: a
   * statement on it never runs inside a `tx`. Absent on SQLite.
   */
  readonly sql?: BunSql
}

/** SQLite's port: every step answered in the same call, so `run` returns the value itself. */
export type SqlitePort = Omit<Port, 'engine' | 'run'> & { readonly engine: 'sqlite'; run<T>(work: Work<T>): T }

export function sqlitePort(db: Db): SqlitePort {
  const answer = (step: Step): unknown => {
    switch (step.kind) {
      case 'all':
        return is(step.q, SQL) ? db.all(step.q) : (step.q as { all(): unknown[] }).all()
      case 'one':
        // drizzle's db.get of raw SQL answers the row as an array of values; db.all names them.
        return is(step.q, SQL) ? db.all(step.q)[0] : (step.q as { get(): unknown }).get()
      case 'run': {
        const result = is(step.q, SQL) ? db.run(step.q) : (step.q as { run(): unknown }).run()
        return { changes: (result as { changes?: number }).changes ?? 0 }
      }
      case 'tx':
        // drizzle's transaction (client.ts: BEGIN IMMEDIATE, savepoints when nested, the
        // after-commit queue settled as it ends), its body driven inside the same call.
        return db.transaction(() => drive(step.body()))
      case 'after':
        sqliteAfterCommit(db, step.fn)
        return undefined
      case 'prepared': {
        const kept = (step.statement.kept ??= (step.statement.build() as { prepare(): unknown }).prepare()) as {
          all(v: object): unknown[]
          get(v: object): unknown
          run(v: object): { changes?: number }
        }
        if (step.mode === 'all') return kept.all(step.values)
        if (step.mode === 'one') return kept.get(step.values)
        return { changes: kept.run(step.values).changes ?? 0 }
      }
    }
  }
  const drive = <T>(work: Work<T>): T => {
    let next = work.next()
    while (!next.done) {
      let value: unknown
      try {
        value = answer(next.value)
      } catch (error) {
        next = work.throw(error)
        continue
      }
      next = work.next(value)
    }
    return next.value
  }
  return { engine: 'sqlite', db, run: drive }
}

const sqlitePorts = new WeakMap<Db, SqlitePort>()

/**
 * Runs `work` on the SQLite catalogue `db` and returns its value: the bridge for code that is not
 * yet work itself (it calls a function that now is). SQLite only: such code cannot run on
 * PostgreSQL, and test/db/sync-guard.test.ts counts the calls left.
 */
export function runSync<T>(db: Db, work: Work<T>): T {
  let port = sqlitePorts.get(db)
  if (!port) sqlitePorts.set(db, (port = sqlitePort(db)))
  return port.run(work)
}

/** What the PostgreSQL driver needs of drizzle's bun-sql handle (and of a transaction on it). */
type PgHandle = {
  transaction<T>(fn: (tx: PgHandle) => Promise<T>): Promise<T>
  execute(q: SQL): PromiseLike<unknown[]>
  /** The Bun.SQL client under drizzle's handle (Port.sql). */
  $client?: BunSql
}

/** The open transaction of the work being driven, and what it queued for after its commit. */
type Ambient = { tx: PgHandle; after: (() => void)[] }

/**
 * PostgreSQL's port over drizzle's bun-sql handle. `onAfterError` logs a function queued by
 * afterCommit that threw.
 */
export function postgresPort(root: PgHandle, onAfterError: (error: unknown) => void = () => {}): Port {
  const ambient = new AsyncLocalStorage<Ambient | undefined>()
  const current = () => ambient.getStore()?.tx ?? root
  // The handle code builds statements from: every property read goes to the transaction of the
  // work being driven, else to the pool.
  const db = new Proxy(root as object, {
    get(_, key) {
      const handle = current() as unknown as Record<PropertyKey, unknown>
      const value = handle[key]
      return typeof value === 'function' ? value.bind(handle) : value
    },
  }) as unknown as Db
  const runAfter = (fns: (() => void)[]) => {
    for (const fn of fns)
      try {
        fn()
      } catch (error) {
        onAfterError(error)
      }
  }
  const answer = async (step: Step): Promise<unknown> => {
    switch (step.kind) {
      case 'all':
        return is(step.q, SQL) ? await current().execute(step.q) : await (step.q as PromiseLike<unknown[]>)
      case 'one': {
        const rows = is(step.q, SQL) ? await current().execute(step.q) : await (step.q as PromiseLike<unknown[]>)
        return rows[0]
      }
      case 'run': {
        const result = is(step.q, SQL) ? await current().execute(step.q) : await (step.q as PromiseLike<unknown>)
        return { changes: (result as { count?: number }).count ?? 0 }
      }
      case 'tx': {
        const outer = ambient.getStore()
        const after: (() => void)[] = []
        const value = await current().transaction((tx) => ambient.run({ tx, after }, () => drive(step.body())))
        // Committed (a savepoint released): its queue joins the enclosing transaction's, or runs.
        if (outer) outer.after.push(...after)
        else runAfter(after)
        return value
      }
      case 'after': {
        const open = ambient.getStore()
        if (open) open.after.push(step.fn)
        else runAfter([step.fn])
        return undefined
      }
      case 'prepared': {
        // Built on the ambient handle (db above), so inside a transaction it runs on its connection.
        const query = (
          step.statement.build() as { prepare(name: string): { execute(v: object): Promise<unknown> } }
        ).prepare('')
        const result = await query.execute(step.values)
        if (step.mode === 'all') return result
        if (step.mode === 'one') return (result as unknown[])[0]
        return { changes: (result as { count?: number }).count ?? 0 }
      }
    }
  }
  const drive = async <T>(work: Work<T>): Promise<T> => {
    let next = work.next()
    while (!next.done) {
      let value: unknown
      try {
        value = await answer(next.value)
      } catch (error) {
        next = work.throw(error)
        continue
      }
      next = work.next(value)
    }
    return next.value
  }
  // A run starts outside any transaction, whatever context its caller was called from.
  return { engine: 'postgres', db, sql: root.$client, run: (work) => ambient.run(undefined, () => drive(work)) }
}

/**
 * `next` of what a port run answered: in the same call when it is the value itself (SQLite), so a
 * route stays synchronous there, and once it settles when it is a promise (PostgreSQL). A throw
 * of `next` is thrown on the synchronous path and rejects the promise on the other.
 */
export function andThen<T, R>(value: T | PromiseLike<T>, next: (value: T) => R): R | Promise<Awaited<R>> {
  const pending = value as PromiseLike<T> | null | undefined
  if (typeof pending?.then === 'function') return Promise.resolve(pending).then(next) as Promise<Awaited<R>>
  return next(value as T)
}
