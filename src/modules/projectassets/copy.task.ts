// Copy of a project folder (docs/projects.md). Files go into a hidden sibling of the target and the
// folder is renamed into place when every file is in, so the target is never seen half made.
// Every file is checked by hash as it is copied (storage/fs.ts copyTree), and the hashes are
// kept in an ASC MHL history written into the hidden folder before the rename, so that the
// history appears with the copy: `ascmhl/` at its root, a generation of process "transfer" (its
// entries "original", or "verified" against a history the source brought along).
// Safe points for a restart: the hidden folder is thrown away and the copy starts over; if the
// rename already happened, the target is checked against the source and the copy is finished.
import type { CopyParams } from '../../tasks/kinds.ts'
import { lstat } from 'node:fs/promises'
import { eq } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Port, type Work, all, one, run, tx } from '../../db/port.ts'
import { devices, projectAssets } from '../../db/tables.ts'
import { taskProblem } from './bundles.ts'
import type { Users } from '../users/service.ts'
import { type Actor, type Hint, actorOf, historyOf, system } from '../history/service.ts'
import { DIR_FLAGS, E, cName, close, openat, renameat, sysError } from '../../storage/dirfd.ts'
import {
  CancelledError,
  type Entry,
  type Hashes,
  copyTree,
  identityOfFd,
  isMissingOrEmpty,
  listTree,
  openBeneath,
  totals,
} from '../../storage/fs.ts'
import {
  MHL_FOLDER,
  MhlError,
  type NewEntry,
  historyFolderAt,
  ignoreOf,
  isRecorded,
  newGeneration,
  readHistory,
} from '../../storage/mhl.ts'
import { describe } from '../../storage/errors.ts'
import { removeTreeAt } from '../../storage/remove.ts'
import { waitingStep, whileInUse } from '../../storage/busy.ts'
import { asFolder, baseName, deviceFor, dirName, joinBelow, makeDirInside, restOf } from '../../storage/paths.ts'
import { isoTimestamp } from '../../util/time.ts'
import { type Handler, SHUTDOWN, type TaskOf } from '../../tasks/runner.ts'

/** The hidden folder a copy is made in: beside the target, on the same filesystem. */
export const stagingFor = (target: string, taskId: number) => joinBelow(dirName(target), `.reelhouse-copy-${taskId}`)

/**
 * One write of the copy's project and its history row, together, as the user who asked (tasks
 * queued by an older version: the service), as work. hint: 'copied' on the write that completes
 * the copy.
 */
function projectWriter(db: Db, users: Users, task: TaskOf<'copy'>) {
  const projectId = task.target.projectasset!
  // Whose the writes are: read by the first of them, for every one.
  let by: Actor | undefined
  const byId = () => db.select().from(projectAssets).where(eq(projectAssets.id, projectId))
  return (values: Partial<typeof projectAssets.$inferInsert>, hint?: Hint): Work<void> =>
    tx(function* () {
      if (!by) {
        const asker = task.params.user === undefined ? undefined : yield* users.principalById(task.params.user)
        by = asker ? actorOf(asker, 'task') : system('task')
      }
      const before = yield* one(byId())
      yield* run(db.update(projectAssets).set(values).where(eq(projectAssets.id, projectId)))
      const after = yield* one(byId())
      if (before && after)
        yield* historyOf(db).updated(
          by,
          { resource: 'projectasset', id: projectId, production: before.production, hint },
          before,
          after,
          ['status_asset', 'status_asset_description', 'is_production', 'files_count', 'files_bytes'],
        )
    })
}

/**
 * A queued copy cancelled before it ran: its project says why (`ERROR: <reason>`, as a copy that
 * fails), and a hidden folder an earlier process left (`ran`: the copy was running when it
 * stopped) is removed, reached from the device root with no link on the way.
 */
export function copyAbandon(port: Port, users: Users) {
  const db = port.db
  // Port work: the runner yields it inside the transaction that ends the task (tasks/runner.ts
  // Abandon), so the project's write commits with the task's end or not at all.
  return function* (task: TaskOf<'copy'>, ran: boolean, reason: string): Work<void | (() => Promise<void>)> {
    yield* projectWriter(
      db,
      users,
      task,
    )({
      status_asset: -1,
      status_asset_description: `ERROR: ${reason}`,
      is_production: false,
      date_mod: isoTimestamp(),
    })
    if (!ran) return
    const { target, device } = task.params
    return async () => {
      const parentDir = asFolder(dirName(target))
      let parent = -1
      try {
        parent = openBeneath(device, restOf(device, parentDir))
        await removeTreeAt({ parent, name: baseName(stagingFor(target, task.id)) })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      } finally {
        if (parent >= 0) close(parent)
      }
    }
  }
}

export function copyHandler(port: Port, users: Users): Handler<'copy'> {
  const db = port.db
  return async ({ task, signal, progress, report }) => {
    const params = task.params
    const { source, target, device } = params
    const projectId = task.target.projectasset!
    const staging = stagingFor(target, task.id)
    const write = projectWriter(db, users, task)
    const finish = (files: { count: number; bytes: number }) =>
      port.run(
        write(
          {
            status_asset: 6,
            status_asset_description: 'ASSET_DONE',
            is_production: true,
            files_count: files.count,
            files_bytes: files.bytes,
            date_mod: isoTimestamp(),
          },
          'copied',
        ),
      )

    // The hidden folder is removed on failure only when this task made it.
    let ours = task.attempts > 0
    let sourceFd = -1
    let targetParent = -1
    try {
      // Everything is checked again whenever the task starts or resumes (docs/api.md, Permissions, 7):
      // the target may still be a project folder of the user who asked, and the source is the
      // folder that was there then, reached from its device with no link on the way.
      const { refusal, known } = await port.run(
        (function* () {
          const project = yield* one(db.select().from(projectAssets).where(eq(projectAssets.id, projectId)))
          if (!project) throw new Error('the project asset is gone')
          const refusal = yield* taskProblem(db, users, {
            path: target,
            device,
            production: project.production,
            user: params.user,
            project: projectId,
            placing: true,
          })
          // Copies queued by an older version name no source device: the one the folder lies on now.
          const known = params.source_device === undefined ? yield* all(db.select().from(devices)) : []
          return { refusal, known }
        })(),
      )
      if (refusal) throw new Error(`refusing to copy into ${target}: ${refusal}`)
      const sourceDevice = params.source_device ?? deviceFor(known, source)?.path
      if (!sourceDevice) throw new Error('the source folder no longer lies on a device')
      sourceFd = openBeneath(sourceDevice, restOf(sourceDevice, source))
      if (params.identity && identityOfFd(sourceFd) !== params.identity)
        throw new Error('the source folder was replaced since the copy was asked for; nothing was copied')

      // The target's parent: made if missing, then opened from the device root with no link on
      // the way. The hidden folder is made, renamed and removed relative to it.
      const parentDir = asFolder(dirName(target))
      makeDirInside(device, parentDir)
      targetParent = openBeneath(device, restOf(device, parentDir))
      const stagingName = baseName(staging)
      const stagingThere = () => {
        const fd = openat(targetParent, cName(stagingName), DIR_FLAGS)
        if (fd >= 0) close(fd)
        return fd !== -E.ENOENT
      }

      if (task.attempts > 0 && !stagingThere() && !(await isMissingOrEmpty(target))) {
        // The rename was done before the process stopped: finish if the copy is whole. Its history
        // has one generation more than the source's (if the source has one), so the files are
        // compared without `ascmhl/`. Every file was verified before the rename.
        const [there, from] = await Promise.all([listTree(target, signal), listTree(source, signal)])
        const content = (e: Entry) => !inHistory(e.rel)
        const [have, want] = [totalsOf(there.filter(content)), totalsOf(from.filter(content))]
        if (have.count !== want.count || have.bytes !== want.bytes)
          throw new Error(
            `the target folder holds ${have.count} files (${have.bytes} bytes), the source ${want.count} (${want.bytes})`,
          )
        const copied = totalsOf(from)
        progress({
          files_total: copied.count,
          bytes_total: copied.bytes,
          files_done: copied.count,
          bytes_done: copied.bytes,
        })
        report({ files_verified: copied.count, ...latestManifest(targetParent, target) })
        await finish(totalsOf(there))
        return
      }
      if (stagingThere()) {
        // Ours only if an earlier attempt of this task made it; on a first attempt it is not.
        if (task.attempts === 0) throw new Error(`${staging} exists and is not this copy's; it is left alone`)
        await removeTreeAt({ parent: targetParent, name: stagingName })
      }

      const entries = await listTree(source, signal)
      const files = entries.filter((e) => e.kind === 'file')
      const want = { count: files.length, bytes: files.reduce((n, e) => n + e.size, 0) }
      progress({ files_total: want.count, bytes_total: want.bytes, files_done: 0, bytes_done: 0 })

      ours = true
      let history: HistoryReport = {}
      const copied = await copyTree(
        sourceFd,
        { parent: targetParent, name: stagingName, path: staging },
        {
          signal,
          entries,
          onProgress: (done) => progress({ files_done: done.files, bytes_done: done.bytes }),
          // The history goes into the hidden folder, so that it appears with the copy.
          seal: (folder, hashes) => void (history = writeHistory(folder, target, entries, hashes)),
        },
      )
      if (signal.aborted) throw new CancelledError(String(signal.reason))
      // What the bundle holds: the source's files, with the history as written in place of the
      // source's own (when one was written).
      const holds = history.manifest
        ? add(totalsOf(entries.filter((e) => !inHistory(e.rel))), await totals(joinBelow(staging, MHL_FOLDER), signal))
        : want
      if (signal.aborted) throw new CancelledError(String(signal.reason))
      if (!(await isMissingOrEmpty(target)))
        throw new Error('the target folder was filled by someone else during the copy; a copy never overwrites')
      // Into place in one rename. A program that has a file of the staging folder open (the
      // watcher's own look at the new folder, an indexer, a virus scanner; on Windows a folder
      // with an open file cannot be renamed) makes it wait and try again (storage/busy.ts).
      await whileInUse(
        async () => {
          const moved = renameat(targetParent, cName(stagingName), targetParent, cName(baseName(target)))
          if (moved < 0) throw sysError(moved, 'renameat', baseName(target))
        },
        {
          signal,
          path: () => staging,
          onWait: (path) => progress({ step: waitingStep(path) }),
          onRetry: () => progress({ step: '' }),
        },
      )
      report({ files_verified: copied.hashes.size, ...history })
      await finish(holds)
    } catch (error) {
      if (error instanceof CancelledError && signal.reason === SHUTDOWN) throw error
      // Cleanup failing is worth knowing: a hidden folder would be left behind.
      const cleanup =
        !ours || targetParent < 0
          ? ''
          : await removeTreeAt({ parent: targetParent, name: baseName(staging) }).then(
              () => '',
              (e: NodeJS.ErrnoException) =>
                e.code === 'ENOENT' ? '' : `; ${staging} could not be removed: ${describe(e)}`,
            )
      const reason = (error instanceof CancelledError ? String(signal.reason) : describe(error)) + cleanup
      await port.run(
        write({
          status_asset: -1,
          status_asset_description: `ERROR: ${reason}`,
          is_production: false,
          date_mod: isoTimestamp(),
        }),
      )
      throw new Error(reason)
    } finally {
      if (sourceFd >= 0) close(sourceFd)
      if (targetParent >= 0) close(targetParent)
    }
  }
}

/** `ascmhl/` at the root, or something in it. */
const inHistory = (rel: string) => rel === MHL_FOLDER || rel.startsWith(`${MHL_FOLDER}/`)

const totalsOf = (entries: readonly Entry[]) => {
  const files = entries.filter((e) => e.kind === 'file')
  return { count: files.length, bytes: files.reduce((n, e) => n + e.size, 0) }
}

const add = (a: { count: number; bytes: number }, b: { count: number; bytes: number }) => ({
  count: a.count + b.count,
  bytes: a.bytes + b.bytes,
})

/** What a task's result says of the history a copy wrote (docs/api.md, Project assets). */
type HistoryReport = {
  /** The new generation's manifest, relative to the project folder (`ascmhl/NNNN_….mhl`). */
  manifest?: string
  /** How many files the generation recorded with each action. */
  recorded?: { original: number; verified: number; failed: number }
  /** Files whose bytes are not those the source's history recorded (the first 100). */
  not_as_recorded?: string[]
  /** Why no history was written (the source's own history is unreadable or changed, a name XML cannot hold). */
  history_problem?: string
}

/** How many paths of files not as recorded a result lists. */
const LISTED = 100

/**
 * Writes the copy's ASC MHL history into the hidden folder open at `root` (copyTree's, before it
 * gets its mode and times), which becomes the folder `target` (named in messages, and in the
 * manifest's name): a generation of process "transfer", recording every copied file with the
 * hash of its bytes read from the source, which the copy was read back and found to hold. Where
 * the source brought no `ascmhl/`, every entry is "original". Where it brought one (copied along
 * with the rest), the generation is appended to that history, a chained transfer: a file as the
 * history recorded it is "verified", one that differs "failed" (the copy is still a faithful
 * copy: the source had changed since its history was written), one it never recorded
 * "original". The files of the source's `ascmhl/` are copied and checked like any other but
 * never recorded as content, nor is what the history's ignore patterns name (`.DS_Store`, and
 * `ascmhl` folders deeper down, which are histories of their own: of a camera card, say).
 * A source history that cannot be read, or a name that cannot stand in a manifest, leaves the
 * copy without a new generation and says why (`history_problem`); failing to write fails the copy.
 */
function writeHistory(root: number, target: string, entries: readonly Entry[], hashes: Hashes): HistoryReport {
  const folder = historyFolderAt(root, joinBelow(target, MHL_FOLDER))
  const problem = (error: unknown) => ({
    history_problem: `no ASC MHL history was written: ${error instanceof MhlError ? error.message : describe(error)}`,
  })
  let recorded: (path: string) => boolean
  try {
    recorded = isRecorded(ignoreOf(readHistory(target, { folder })))
  } catch (error) {
    // The source's own ascmhl/ as it came: a link or a file in its place, a chain or a manifest
    // that is missing, malformed or changed.
    return problem(error)
  }
  const files: NewEntry[] = entries
    .filter((e) => e.kind === 'file' && recorded(e.rel))
    .map((e) => ({ path: e.rel, size: e.size, lastModified: new Date(e.mtimeMs), xxh64: hashes.get(e.rel)! }))
  let written: ReturnType<typeof newGeneration>
  try {
    written = newGeneration(target, files, { process: 'transfer', rootName: baseName(target), folder })
  } catch (error) {
    if (error instanceof MhlError) return problem(error)
    throw error
  }
  const count = { original: 0, verified: 0, failed: 0 }
  for (const r of written.recorded) count[r.action]++
  const failed = written.recorded.filter((r) => r.action === 'failed').map((r) => r.path)
  return {
    manifest: `${MHL_FOLDER}/${written.file}`,
    recorded: count,
    ...(failed.length ? { not_as_recorded: failed.slice(0, LISTED) } : {}),
  }
}

/** The latest manifest of the history at `target` (a copy finished before a restart), as writeHistory reports it. */
function latestManifest(parent: number, target: string): HistoryReport {
  const root = openat(parent, cName(baseName(target)), DIR_FLAGS)
  if (root < 0) return {}
  try {
    const folder = historyFolderAt(root, joinBelow(target, MHL_FOLDER))
    const latest = readHistory(target, { folder }).generations.at(-1)
    return latest ? { manifest: `${MHL_FOLDER}/${latest.file}` } : {}
  } catch (error) {
    return {
      history_problem: `the history cannot be read: ${error instanceof MhlError ? error.message : describe(error)}`,
    }
  } finally {
    close(root)
  }
}
