// Removal of a project folder (docs/projects.md): only the bundle folder, never a device root, never
// through a symbolic link. The folder is first renamed to a hidden sibling (it disappears at
// once, in one step), then emptied; a restart finds the hidden folder and goes on.
//
// Every step works from open descriptors (storage/dirfd.ts): the parent folder is opened from
// the device root one name at a time with no link allowed on the way, the folder is checked to
// be the one that was there when the delete was asked for (device and inode), the rename and
// the removal are relative to the parent's descriptor. Swapping a folder on the way for a link
// (while the service runs or while it is down) cannot send any of it outside the device. All of
// this, and the territory rule, is checked again whenever the task starts or resumes.
import type { DeleteParams } from '../../tasks/kinds.ts'
import { eq } from 'drizzle-orm'
import { type Port, type Work, one, run, tx } from '../../db/port.ts'
import { projectAssets } from '../../db/tables.ts'
import type { MediaAssets } from '../mediaassets/service.ts'
import { type Actor, actorOf, historyOf, system } from '../history/service.ts'
import { taskProblem } from './bundles.ts'
import type { Users } from '../users/service.ts'
import { DIR_FLAGS, E, cName, close, openat, renameat, sysError } from '../../storage/dirfd.ts'
import { CancelledError, identityOfFd, listTree, openBeneath } from '../../storage/fs.ts'
import { removalSupported, removeTreeAt, unsupportedReason } from '../../storage/remove.ts'
import { describe } from '../../storage/errors.ts'
import { waitingStep, whileInUse } from '../../storage/busy.ts'
import { asFolder, baseName, dirName, joinBelow, restOf, samePath } from '../../storage/paths.ts'
import type { Handler } from '../../tasks/runner.ts'

export const trashName = (taskId: number) => `.reelhouse-delete-${taskId}`
export const trashFor = (bundle: string, taskId: number) => joinBelow(dirName(bundle), trashName(taskId))

export function deleteHandler(port: Port, users: Users, media: MediaAssets): Handler<'delete'> {
  const db = port.db
  return async ({ task, signal, progress }) => {
    const { bundle_root, device, user, identity } = task.params
    const projectId = task.target.projectasset!
    const folder = asFolder(dirName(bundle_root)) + baseName(bundle_root)
    const name = baseName(folder)
    const trash = trashName(task.id)
    let parent = -1
    try {
      if (!removalSupported()) throw new Error(`deletes are refused on this system: ${unsupportedReason()}`)
      const checked = await port.run(
        (function* () {
          const project = yield* one(db.select().from(projectAssets).where(eq(projectAssets.id, projectId)))
          if (!project) return undefined
          const refusal = yield* taskProblem(db, users, {
            path: bundle_root,
            device,
            production: project.production,
            project: projectId,
            user,
            placing: false,
          })
          return { project, refusal }
        })(),
      )
      if (!checked) return
      const { project, refusal } = checked
      if (refusal) throw new Error(`refusing to remove ${bundle_root}: ${refusal}`)
      const foreign = await port.run(media.countUnder(bundle_root, project.production))
      if (foreign)
        throw new Error(
          `refusing to remove ${bundle_root}: it holds ${foreign} catalogued media file(s) of another production`,
        )
      if (samePath(asFolder(folder), device)) throw new Error('refusing to remove the root of a device')

      // A file another program holds (an editor's open project, on Windows) makes the delete wait
      // and try again (storage/busy.ts); each try starts over from the folder or its hidden name.
      let gone = false
      await whileInUse(
        async () => {
          try {
            parent = openBeneath(device, restOf(device, asFolder(dirName(folder))))
            const isOurs = (fd: number) => identity === undefined || identityOfFd(fd) === identity
            const hiddenPath = trashFor(bundle_root, task.id)
            const existing = openat(parent, cName(name), DIR_FLAGS)
            if (existing >= 0) {
              // The folder must be the one asked for, and a first attempt finds no hidden folder in its way.
              const same = isOurs(existing)
              close(existing)
              if (!same)
                throw new Error(`${bundle_root} was replaced since the delete was asked for; nothing was removed`)
              const hidden = openat(parent, cName(trash), DIR_FLAGS)
              if (hidden >= 0) close(hidden)
              if (hidden !== -E.ENOENT && task.attempts === 0)
                throw new Error(`${hiddenPath} exists and is not this delete's; nothing was removed`)
              const moved = renameat(parent, cName(name), parent, cName(trash))
              if (moved < 0) throw sysError(moved, 'renameat', name)
            } else if (existing !== -E.ENOENT) {
              throw new Error(`${bundle_root} is a symbolic link or not a folder; nothing was removed`)
            }
            // The hidden folder (just made, or left by an earlier attempt) must still be that folder.
            const trashFd = openat(parent, cName(trash), DIR_FLAGS)
            if (trashFd === -E.ENOENT) {
              gone = true
              return
            }
            if (trashFd < 0) throw new Error(`${hiddenPath} is a symbolic link or not a folder; nothing was removed`)
            const same = isOurs(trashFd)
            close(trashFd)
            if (!same) throw new Error(`${hiddenPath} is not the folder the delete was asked for; nothing was removed`)
            // Totals for the progress only: a walk by names, which reads no file and removes nothing.
            const entries = await listTree(hiddenPath, signal).catch(() => [])
            const files = entries.filter((e) => e.kind === 'file')
            progress({ files_total: files.length, bytes_total: files.reduce((n, e) => n + e.size, 0) })
            await removeTreeAt(
              { parent, name: trash },
              { signal, entries, onProgress: (d) => progress({ files_done: d.files, bytes_done: d.bytes }) },
            )
          } finally {
            if (parent >= 0) close(parent)
            parent = -1
          }
        },
        {
          signal,
          // Named where the user knows it: inside the project folder, not its hidden name.
          path: (error) =>
            error.syscall === 'renameat' || !error.path || error.path === '.'
              ? bundle_root
              : joinBelow(folder, error.path),
          onWait: (path) => progress({ step: waitingStep(path) }),
          onRetry: () => progress({ step: '' }),
        },
      )
      if (gone) {
        await port.run(finish())
        return
      }
    } catch (error) {
      if (error instanceof CancelledError) throw error
      throw new Error(describe(error))
    } finally {
      if (parent >= 0) close(parent)
    }
    await port.run(finish())

    function* finish(): Work<void> {
      // The delete is the user's who asked for it (tasks queued by an older version: the service's).
      const asker = user === undefined ? undefined : yield* users.principalById(user)
      const by: Actor = asker ? actorOf(asker, 'task') : system('task')
      return yield* tx(function* () {
        const row = yield* one(db.select().from(projectAssets).where(eq(projectAssets.id, projectId)))
        yield* run(db.delete(projectAssets).where(eq(projectAssets.id, projectId)))
        if (row)
          yield* historyOf(db).record(by, {
            resource: 'projectasset',
            id: projectId,
            action: 'delete',
            production: row.production,
            changes: { bundle_root: { old: row.bundle_root, new: null }, name: { old: row.name, new: null } },
          })
        // Media files that lived in the folder went with it: their records stay, offline.
        yield* media.setOnline(
          (yield* media.under(bundle_root)).map((m) => m.id),
          false,
          by,
        )
      })
    }
  }
}
