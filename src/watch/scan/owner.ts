// Which production a file found by a scan goes to, and whether its import moves it: pure rules
// over the productions' folders, which the gather phase (what to import) and the ingest phase (how)
// both ask. Apart from either, so that neither phase imports the other.
import { isInside } from '../../storage/paths.ts'

/**
 * The production a new file is imported into (docs/watcher.md, Laying out drop folders):
 * - a file in a production's drop folder (`upload_root`, the innermost) goes to that production,
 *   unless it lies in another production's storage root too (then that production's rule below);
 * - a file inside a production's storage root (the innermost) goes to that production when its
 *   watch folder is on this device (its upload_device, whole or with a drop folder on it);
 * - a file in no production's folder goes to the first production (lowest id) whose watch folder
 *   is this whole device (no drop folder); on a device that only holds drop folders it is left alone.
 * A file inside another production's storage root is never imported into this one.
 */
export function ingestOwner(
  list: readonly { id: number; storage_root: string; upload_device: number; upload_root: string | null }[],
) {
  const byDepth = [...list].sort((a, b) => b.storage_root.length - a.storage_root.length || a.id - b.id)
  const drops = list
    .filter((p) => p.upload_root !== null)
    .sort((a, b) => b.upload_root!.length - a.upload_root!.length || a.id - b.id)
  const byId = [...list].sort((a, b) => a.id - b.id)
  const watchFolders = new Set(list.map((p) => p.upload_device))
  return (path: string, device: number): number | undefined => {
    const territory = byDepth.find((p) => isInside(p.storage_root, path))
    const drop = drops.find((p) => isInside(p.upload_root!, path))
    if (drop && (!territory || territory.id === drop.id)) return drop.id
    if (!watchFolders.has(device)) return undefined // no production's watch folder: nothing imported
    if (territory) return territory.upload_device === device ? territory.id : undefined
    return byId.find((p) => p.upload_device === device && p.upload_root === null)?.id
  }
}

/**
 * Whether the watcher's import of a new file moves it into its production's area (the production's
 * move_uploads, as an import with move_asset and no asset_destination does): a file in the drop
 * folder always, one elsewhere in the watch folder unless it lies in the production's storage_root
 * already (its own area, where editors keep their folders: never rearranged by the watcher).
 */
export function movesUpload(
  production: { storage_root: string; upload_root: string | null; move_uploads: boolean },
  path: string,
): boolean {
  if (!production.move_uploads) return false
  if (production.upload_root !== null && isInside(production.upload_root, path)) return true
  return !isInside(production.storage_root, path)
}
