// What a project folder may be. Deleting a project removes its folder, so a folder that holds a
// device root, a production's storage or proxy root, or another project's folder, or that is
// reached through a symbolic link, is never taken as a project folder; and a device or a
// production is never put inside one. Checked at create and copy (synchronously, together with
// the insert) and again right before a delete.
import { sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { projectAssets } from '../../db/schema.ts'
import { aliasProblem, isInside } from '../../storage/paths.ts'

/** Folders that must never be inside (or be) a project folder. */
function protectedRoots(db: Db): { what: string; path: string }[] {
  const rows = db.$client
    .query<{ what: string; path: string }, []>(
      `SELECT 'device ' || name AS what, path FROM devices
       UNION ALL SELECT 'storage root of production ' || name, storage_root FROM productions
       UNION ALL SELECT 'proxy root of production ' || name, proxy_root FROM productions`,
    )
    .all()
  return rows
}

export type BundleProblem = { conflict: boolean; detail: string }

/** Why `path` cannot be a project folder on the device at `devicePath`, or undefined. */
export function bundleProblem(db: Db, path: string, devicePath: string, ignoreProject?: number): BundleProblem | undefined {
  if (path === devicePath) return { conflict: false, detail: 'A project folder cannot be the root of a device.' }
  const root = protectedRoots(db).find((r) => r.path === path || isInside(path, r.path))
  if (root) return { conflict: false, detail: `The folder would hold the ${root.what} (${root.path}).` }
  const clash = db
    .select({ id: projectAssets.id, bundle_root: projectAssets.bundle_root, deleting: projectAssets.deleting })
    .from(projectAssets)
    .where(sql`substr(${projectAssets.bundle_root}, 1, ${path.length}) = ${path} OR substr(${path}, 1, length(${projectAssets.bundle_root})) = ${projectAssets.bundle_root}`)
    .all()
    .find((p) => p.id !== ignoreProject)
  if (clash?.deleting) return { conflict: true, detail: `The folder belongs to project asset ${clash.id}, which is being deleted.` }
  if (clash)
    return {
      conflict: false,
      detail: clash.bundle_root === path ? `Project asset ${clash.id} already has this bundle_root.` : `The folder is nested with the bundle of project asset ${clash.id}.`,
    }
  const alias = aliasProblem(devicePath, path)
  return alias ? { conflict: false, detail: alias } : undefined
}

/** The project whose folder is or holds `path` (a device path or production root being created). */
export function projectHolding(db: Db, path: string): number | undefined {
  const dir = path.endsWith('/') ? path : path + '/'
  return db.$client
    .query<{ id: number }, [string]>('SELECT id FROM project_assets WHERE substr(?1, 1, length(bundle_root)) = bundle_root LIMIT 1')
    .get(dir)?.id
}
