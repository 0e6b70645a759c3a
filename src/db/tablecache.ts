// A cache of values made from a few tables of the SQLite catalogue, each served only while nothing
// it was made of can have changed. SQLite only: what tells of a change here (the connection's
// data_version, and a count its own temporary triggers keep) has no counterpart on PostgreSQL,
// where a service that would cache asks the catalogue every time instead.
//
// SQLite tells of a change in two parts:
// - commits by any other connection (a command line in another process) change `PRAGMA
//   data_version` of this one (read once per request, client.ts dataVersionOf);
// - this connection's own writes to the watched tables, by any code path (cascaded deletes
//   included), bump a counter in its temporary database, kept by temporary triggers, which live
//   on this connection only and fire for cascaded deletes too. Each commit of the temporary
//   database changes its file version (client.ts fileVersion), which is read without a
//   statement: a lookup compares it, and runs one (the temporary schema's version) only when it
//   changed.
//   The version of the catalogue itself would say the same but changes on every write (every
//   import), and the cache would miss constantly under load.
// Any change of either empties the whole cache. Inside a transaction nothing is cached or served:
// its writes to the watched tables change the version only once they commit (a GET's read-only
// transaction aside). A table dropped (or rebuilt) takes its triggers with it, which writes the
// temporary schema (its version changes too): the triggers are then made again.
import { type Db, dataVersionOf, fileVersion, readSnapshotOf } from './client.ts'

export type TableEvent = 'INSERT' | 'UPDATE' | 'DELETE'

/** The tables whose changes empty the cache, each with the statements that count. */
export type WatchedTables = readonly (readonly [table: string, events: readonly TableEvent[]])[]

export type TableCache<V> = {
  /** The catalogue's data_version and the version of this connection's temporary database, as one text. */
  stamp(): string
  /** The value under `key`: the cached one while valid, else made (and kept when found). */
  get(key: string, make: () => V | undefined): V | undefined
}

/**
 * `name` names the temporary table holding the count and its triggers (`name_table_event`);
 * past `max` values kept the cache starts over rather than grow.
 */
export function tableCache<V extends object>(
  db: Db,
  { name, tables, max }: { name: string; tables: WatchedTables; max: number },
): TableCache<V> {
  if (!/^\w+$/.test(name)) throw new Error(`not a table name: ${name}`)
  const client = db.$client
  client.run(`CREATE TEMP TABLE IF NOT EXISTS ${name} (n INTEGER NOT NULL)`)
  client.run(`INSERT INTO temp.${name} (n) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM temp.${name})`)
  const dataVersion = dataVersionOf(db)
  const snapshot = readSnapshotOf(db)
  const tempSchema = client.prepare<{ schema_version: number }, []>('PRAGMA temp.schema_version')
  const watch = () => {
    for (const [table, events] of tables)
      for (const event of events)
        client.run(`CREATE TEMP TRIGGER IF NOT EXISTS ${name}_${table}_${event.toLowerCase()} AFTER ${event} ON main.${table}
          BEGIN UPDATE temp.${name} SET n = n + 1; END`)
    return tempSchema.get()!.schema_version
  }
  let schema = watch()
  const cache = new Map<string, V>()
  let version = -1
  let own = fileVersion(client, 'temp')

  return {
    stamp: () => `${dataVersion.get()}:${fileVersion(client, 'temp')}`,

    get(key, make) {
      // A GET's read transaction (client.ts readSnapshotOf) writes nothing and never rolls back.
      if (client.inTransaction && !snapshot.active) return make()
      const nowVersion = dataVersion.get()
      const nowOwn = fileVersion(client, 'temp')
      if (nowOwn !== own) {
        // The watched tables were written here, or the temporary schema changed (a table dropped).
        if (tempSchema.get()!.schema_version !== schema) schema = watch()
        own = fileVersion(client, 'temp')
        cache.clear()
      }
      if (nowVersion !== version) {
        cache.clear()
        version = nowVersion
      }
      const cached = cache.get(key)
      if (cached) return cached
      const made = make()
      if (made) {
        if (cache.size >= max) cache.clear()
        cache.set(key, Object.freeze(made))
      }
      return made
    },
  }
}
