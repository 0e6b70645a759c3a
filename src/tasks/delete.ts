// Removal of a project folder (service.md 7): only the bundle folder, never a device root, never
// through a symbolic link. The folder is first renamed to a hidden sibling (it disappears at
// once, in one step), then emptied; a restart finds the hidden folder and goes on.
import { lstat, realpath } from 'node:fs/promises'
import { posix } from 'node:path'
import { eq, sql } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { projectAssets } from '../db/schema.ts'
import { CancelledError, exists, removeTree, rename, totals } from '../storage/fs.ts'
import { isInside } from '../storage/paths.ts'
import { bundleProblem } from '../modules/projectassets/bundles.ts'
import { describe } from './copy.ts'
import type { Handler } from './runner.ts'

export type DeleteParams = { bundle_root: string; device: string }

export const trashFor = (bundle: string, taskId: number) =>
  posix.join(posix.dirname(bundle.replace(/\/$/, '')), `.reelhouse-delete-${taskId}`)

export function deleteHandler(db: Db): Handler {
  return async ({ task, signal, progress }) => {
    const { bundle_root, device } = task.params as DeleteParams
    const folder = bundle_root.replace(/\/$/, '')
    const trash = trashFor(bundle_root, task.id)
    try {
      if (task.attempts === 0 && (await exists(trash))) throw new Error(`${trash} exists and is not this delete's; nothing was removed`)
      if (await exists(folder)) {
        await checkRemovable(folder, device)
        const problem = bundleProblem(db, bundle_root, device, task.target.projectasset)
        if (problem) throw new Error(`refusing to remove ${bundle_root}: ${problem.detail}`)
        await rename(folder, trash)
      }
      if (await exists(trash)) {
        const all = await totals(trash, signal)
        progress({ files_total: all.count, bytes_total: all.bytes })
        await removeTree(trash, { signal, onProgress: (d) => progress({ files_done: d.files, bytes_done: d.bytes }) })
      }
    } catch (error) {
      if (error instanceof CancelledError) throw error
      throw new Error(describe(error))
    }
    db.transaction((tx) => {
      tx.delete(projectAssets).where(eq(projectAssets.id, task.target.projectasset!)).run()
      // Media files that lived in the folder went with it: their records stay, offline.
      tx.run(sql`UPDATE media_assets SET is_production = 0 WHERE substr(path_file, 1, ${bundle_root.length}) = ${bundle_root} AND is_production = 1`)
    })
  }
}

/** Containment, checked again right before removing. */
async function checkRemovable(folder: string, device: string) {
  const s = await lstat(folder)
  if (s.isSymbolicLink()) throw new Error(`${folder} is a symbolic link; a delete never goes through one`)
  if (!s.isDirectory()) throw new Error(`${folder} is not a folder`)
  const realDevice = (await realpath(device)).replace(/\/?$/, '/')
  const real = (await realpath(folder)) + '/'
  if (real === realDevice) throw new Error('refusing to remove the root of a device')
  if (!isInside(realDevice, real)) throw new Error(`${folder} resolves to ${real}, outside its device`)
}
