// Import logs: one per import request (docs/api.md, Import logs, 4.10), advanced by the import task as it
// works. Only the import service and its task write them.
import { jsonValue } from '../../db/dialect.ts'
import { eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Work, oneOf, run, runOf, statement, tx } from '../../db/port.ts'
import { importLogs } from '../../db/tables.ts'
import { isoTimestamp } from '../../util/time.ts'

export type NewImportLog = {
  asset_type: string
  asset_path: string
  status: string
  error?: string
  payload: string
  asset_config?: Record<string, unknown>
  asset_import_id: number | null
  production: number | null
}

/** The statuses the import goes through (docs/api.md, Import). */
export const IMPORT_STATUS = {
  created: 'asset_creation_completed',
  updated: 'asset_update_completed',
  moved: 'asset_move_completed',
  probed: 'asset_probe_completed',
  proxied: 'asset_proxy_completed',
  completed: 'import_completed',
  failed: 'import_failed',
} as const

/** What a log says when it is written or its status moves, with its production (who may read it). */
export type ImportLogChange = { id: number; asset_path: string; status: string; production: number | null }

/**
 * observe: told each log written or advanced, inside the transaction of that write (the caller's,
 * or advance's own), as work yielded there, so that it can wait for the commit (the port's
 * afterCommit, which on PostgreSQL only a step yielded inside the transaction can reach).
 */
export function createImportLogs(db: Db, { observe }: { observe?: (change: ImportLogChange) => Work<void> } = {}) {
  // Every import writes one log and advances it a few times: prepared once (see mediaassets).
  const p = (name: string) => sql.placeholder(name)
  const insert = statement(() =>
    db
      .insert(importLogs)
      .values({
        asset_type: p('asset_type'),
        asset_path: p('asset_path'),
        status: p('status'),
        error: p('error'),
        payload: p('payload'),
        asset_config: p('asset_config'),
        asset_import_id: p('asset_import_id'),
        production: p('production'),
        date_add: p('now'),
        date_mod: p('now'),
      })
      .returning({ id: importLogs.id }),
  )
  const warningOf = statement(() =>
    db
      .select({ warning: importLogs.warning, asset_path: importLogs.asset_path, production: importLogs.production })
      .from(importLogs)
      .where(eq(importLogs.id, p('id'))),
  )
  // (set() takes placeholders as SQL: they reach the engine as given, so the JSON is written as text.)
  const update = statement(() =>
    db
      .update(importLogs)
      .set({
        status: sql`${p('status')}`,
        date_mod: sql`${p('now')}`,
        error: sql`coalesce(${p('error')}, ${importLogs.error})`,
        warning: sql`${p('warning')}`,
      })
      .where(eq(importLogs.id, p('id'))),
  )
  function* advanceAll(
    ids: number[],
    change: { status: string; error?: string; warning?: Record<string, string> },
  ): Work<void> {
    const now = isoTimestamp()
    for (const id of ids) {
      const row = yield* oneOf(warningOf, { id })
      if (!row) continue
      yield* runOf(update, {
        id,
        status: change.status,
        now,
        error: change.error ?? null,
        warning: jsonValue(change.warning ? { ...row.warning, ...change.warning } : row.warning),
      })
      if (observe) yield* observe({ id, asset_path: row.asset_path, status: change.status, production: row.production })
    }
  }

  return {
    /** A production deleted: its logs stay (history), no longer tied to it (readable by superusers). */
    *detachProduction(production: number): Work<void> {
      yield* run(db.update(importLogs).set({ production: null }).where(eq(importLogs.production, production)))
    },

    /** Writes a log; inside the caller's transaction when there is one. */
    *append(log: NewImportLog): Work<number> {
      const now = isoTimestamp()
      const id = (yield* oneOf(insert, {
        ...log,
        error: log.error ?? '',
        asset_config: log.asset_config ?? {},
        now,
      }))!.id
      if (observe) yield* observe({ id, asset_path: log.asset_path, status: log.status, production: log.production })
      return id
    },

    /** Sets the status (and error) of the logs, and adds warnings to theirs, in one transaction. */
    *advance(ids: number[], change: { status: string; error?: string; warning?: Record<string, string> }): Work<void> {
      if (ids.length) yield* tx(() => advanceAll(ids, change))
    },
  }
}

export type ImportLogs = ReturnType<typeof createImportLogs>
