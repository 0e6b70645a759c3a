import { eq } from 'drizzle-orm'
import { type Db, dataFolderOf } from '../../db/client.ts'
import { type Statement, type Work, allOf, one, run, statement } from '../../db/port.ts'
import { productions } from '../../db/tables.ts'
import { invalid, required } from '../../http/errors.ts'
import { canRead, requireWrite } from '../users/access.ts'
import type { Principal } from '../users/service.ts'

/**
 * The production a new record goes into, named by id or by name (the id wins), checked for
 * write access. Missing: 400 required at the id field; unknown or unreadable: 400 invalid at the
 * field given; readable but not writable: 403.
 */
export function* productionForWrite(
  db: Db,
  user: Principal,
  given: { id?: number; name?: string },
  fields: { id: string; name: string },
): Work<typeof productions.$inferSelect> {
  if (given.id === undefined && given.name === undefined) throw required(`/${fields.id}`)
  const byId = given.id !== undefined
  const row = yield* one(
    db
      .select()
      .from(productions)
      .where(byId ? eq(productions.id, given.id!) : eq(productions.name, given.name!)),
  )
  const pointer = `/${byId ? fields.id : fields.name}`
  if (!row || !canRead(user, row.id)) throw invalid(pointer, 'No such production.')
  requireWrite(user, row.id)
  return row
}

// Asked on every import request: a statement prepared once per catalogue, not a query built anew.
const proxyRootsOf = new WeakMap<Db, Statement<{ proxy_root: string }>>()

/**
 * The absolute folders whose files are the service's own output, never input (docs/watcher.md):
 * every production's proxy_root and the data folder, each with a final slash. The watcher's scan
 * and the import endpoint ask the same question of a path.
 */
export function* ownOutputFolders(db: Db): Work<string[]> {
  let proxyRoots = proxyRootsOf.get(db)
  if (!proxyRoots)
    proxyRootsOf.set(
      db,
      (proxyRoots = statement(() => db.select({ proxy_root: productions.proxy_root }).from(productions))),
    )
  const proxies = (yield* allOf(proxyRoots)).map((p) => p.proxy_root)
  return [...proxies, dataFolderOf(db)]
}

/** The device fields of a production that follow its folders onto another device (the devices service's handover). */
export function* setProductionDevices(
  db: Db,
  id: number,
  fields: readonly ('audioasset_device' | 'imageasset_device' | 'videoasset_device' | 'upload_device')[],
  to: number,
): Work<void> {
  if (fields.length)
    yield* run(
      db
        .update(productions)
        .set(Object.fromEntries(fields.map((f) => [f, to])))
        .where(eq(productions.id, id)),
    )
}
