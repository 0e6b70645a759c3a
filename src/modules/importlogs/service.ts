// Import logs: one per import request (api.md 2.8, 4.10), advanced by the import task as it
// works. Only the import service and its task write them.
import { eq, inArray } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { importLogs } from '../../db/schema.ts'
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

/** The statuses the import goes through (service.md 9). */
export const IMPORT_STATUS = {
  created: 'asset_creation_completed',
  updated: 'asset_update_completed',
  moved: 'asset_move_completed',
  probed: 'asset_probe_completed',
  proxied: 'asset_proxy_completed',
  completed: 'import_completed',
  failed: 'import_failed',
} as const

/** A writer: the database, or the transaction the log is written in. */
type Writer = Pick<Db, 'insert' | 'update' | 'select'>

export function createImportLogs(db: Db) {
  return {
    append(w: Writer, log: NewImportLog): number {
      const now = isoTimestamp()
      return w.insert(importLogs).values({ ...log, error: log.error ?? '', asset_config: log.asset_config ?? {}, date_add: now, date_mod: now })
        .returning({ id: importLogs.id }).get().id
    },

    /** Sets the status (and error) of the logs, and adds warnings to theirs. */
    advance(ids: number[], change: { status: string; error?: string; warning?: Record<string, string> }) {
      if (!ids.length) return
      db.transaction((tx) => {
        for (const row of tx.select({ id: importLogs.id, warning: importLogs.warning }).from(importLogs).where(inArray(importLogs.id, ids)).all()) {
          tx.update(importLogs).set({
            status: change.status, date_mod: isoTimestamp(),
            ...(change.error !== undefined ? { error: change.error } : {}),
            ...(change.warning ? { warning: { ...row.warning, ...change.warning } } : {}),
          }).where(eq(importLogs.id, row.id)).run()
        }
      })
    },
  }
}

export type ImportLogs = ReturnType<typeof createImportLogs>
