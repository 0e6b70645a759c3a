// Proxies named after their source (docs/media.md, "Proxy names"): proxies made before the scheme
// are named `<asset id>.<ext>` (9.mp4), which Premiere Pro's and Resolve's attach-by-name cannot
// match. A `proxyname` task renames one production's: each proxy directly in its proxy_root
// whose name is its asset's id becomes `<source base name>.<ext>` (media/proxyname.ts; the
// `<base>_<id>` form when that name or one of its pictures' is taken), its pictures with it,
// and path_proxy follows through the media assets service.
//
// Queued by the core's start for every production that has such a proxy (queueProxyRenames),
// once: a task queued already is kept (its key). Without one left, the start asks one query.
//
// Files: renamed in the proxy folder opened from its device's root without a link, never over
// another file (media/place.ts). A batch of renames is saved in the task's params before any
// file is renamed: a restart finds each done or not by what the folder holds (the new name
// there and the old gone: done), and records the done ones. The last batch's records are written
// with the task's end, in its transaction. An asset another task works on (an import, a remake,
// shot detection) is left for the next start; so is a proxy_root that cannot be reached.
// The shot thumbnails' folder (`<old>.shots`) stays where it is: the shots name their files.
import { eq } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Port, type Work, one, tx } from '../../db/port.ts'
import { productions } from '../../db/tables.ts'
import { PICTURE_SUFFIX, companionsFree } from '../../media/pictures.ts'
import { renameIntoPlace, takenIn } from '../../media/place.ts'
import { needsNewName, proxyNames } from '../../media/proxyname.ts'
import { O, cName, close, openat, statNumbersOf } from '../../storage/dirfd.ts'
import { deviceFor, lastName, parentFolder, pathOf, withFinalSep } from '../../storage/paths.ts'
import { slicer } from '../../storage/fs.ts'
import { openProxyFolder } from '../../storage/roots.ts'
import type { ProxyNameParams } from '../../tasks/kinds.ts'
import type { Handler, Runner, TaskOf } from '../../tasks/runner.ts'
import { system } from '../history/service.ts'
import type { MediaAssets } from '../mediaassets/service.ts'
import type { Devices } from '../devices/service.ts'

/** Renames planned at a time: one save of the plan and one transaction of records per batch. */
const BATCH = 100

type Rename = ProxyNameParams['plan'] extends (infer R)[] | undefined ? R : never
type Deps = {
  media: MediaAssets
  devices: Devices
  /** The open (queued or running) tasks working on a target: port work, or read at once on SQLite. */
  openTasks: (target: Record<string, number>) => number[] | Work<number[]>
}

/** What a proxy-name task's log lines name: the production. */
export const proxyNameSubject = (task: TaskOf<'proxyname'>) => ({ production: task.params.production })

/**
 * Queues a proxyname task for each production with a proxy of the old name (the core's start);
 * answers how many (the queueing in one transaction).
 */
export function* queueProxyRenames(db: Db, media: MediaAssets, runner: Runner): Work<number> {
  const productions = yield* media.productionsWithOldProxyNames()
  if (!productions.length) return 0
  yield* tx(function* () {
    for (const production of productions)
      yield* runner.enqueue({
        kind: 'proxyname',
        target: {},
        production,
        params: { production },
        key: `proxyname:${production}`,
      })
  })
  return productions.length
}

export function proxyNameHandler(port: Port, deps: Deps): Handler<'proxyname'> {
  const db = port.db
  return async ({ task, signal, save, report, progress }) => {
    const params = task.params
    const found = await port.run(
      (function* () {
        const production = yield* one(db.select().from(productions).where(eq(productions.id, params.production)))
        return production && { production, devices: yield* deps.devices.list() }
      })(),
    )
    if (!found) return
    const proxyDir = found.production.proxy_root
    const device = deviceFor(found.devices, proxyDir)
    if (!device) throw new Error(`the proxy_root ${proxyDir} lies on no device`)
    const folder = openProxyFolder(device.path, proxyDir)
    const by = system('task')
    // Renames on a network share take a while each: the event loop gets its turns between them.
    const slice = slicer(signal)
    const counts = { renamed: 0, skipped: 0, busy: 0 }
    /** Renames `plan` (all of it: a batch saved is finished, whatever comes); answers those done. */
    const renameAll = async (plan: Rename[]) => {
      const done: Rename[] = []
      for (const r of plan) {
        if (finishRename(folder, r)) done.push(r)
        if (slice.spent()) await slice.tick()
      }
      return done
    }
    try {
      // A batch saved before a stop: what the folder holds says which renames were done.
      const resumed = params.plan ? await renameAll(params.plan) : []
      await port.run(record(deps.media, resumed, by))
      const waiting = await port.run(oldNamed(deps.media, params.production, proxyDir))
      progress({ step: 'rename', files_total: waiting.length, files_done: 0 })
      let last: Rename[] = []
      for (let i = 0; i < waiting.length; i += BATCH) {
        // The batch before is recorded first: a stop (shutdown, cancel) here leaves nothing half done.
        await port.run(record(deps.media, last, by))
        slice.due()
        const batch = waiting.slice(i, i + BATCH)
        const busy = await port.run(busyOf(batch, deps.openTasks))
        const plan = planBatch(folder, batch, busy, counts)
        // The plan is committed before any file is renamed: a restart finds it.
        await save({ production: params.production, plan })
        last = await renameAll(plan)
        counts.renamed += last.length
        counts.skipped += plan.length - last.length
        progress({ files_done: Math.min(waiting.length, i + BATCH) })
      }
      report({ production: params.production, renamed: counts.renamed + resumed.length, ...skippedOf(counts) })
      const final = last
      return () => record(deps.media, final, by)
    } finally {
      close(folder)
    }
  }
}

const skippedOf = (c: { skipped: number; busy: number }) => ({
  ...(c.skipped ? { not_renamed: c.skipped } : {}),
  ...(c.busy ? { busy: c.busy } : {}),
})

/** The production's assets whose proxy lies directly in its proxy_root under the old name. */
function* oldNamed(media: MediaAssets, production: number, proxyDir: string) {
  const dir = withFinalSep(proxyDir)
  return (yield* media.proxiesOf(production)).filter(
    (a) => parentFolder(a.path_proxy) === dir && needsNewName(lastName(a.path_proxy), a.path_file, a.id),
  )
}

/** Those of `assets` another task works on (queued or running): they wait for the next start. */
function* busyOf(assets: { id: number; kind: string }[], openTasks: Deps['openTasks']): Work<Set<number>> {
  const busy = new Set<number>()
  for (const a of assets) {
    const open = openTasks({ [`${a.kind}asset`]: a.id })
    if ((Array.isArray(open) ? open : yield* open).length) busy.add(a.id)
  }
  return busy
}

/** The new names of `assets`, each free in the folder (its pictures' names too) and not given twice; the `busy` ones wait. */
function planBatch(
  folder: number,
  assets: { id: number; kind: string; path_file: string; path_proxy: string }[],
  busy: ReadonlySet<number>,
  counts: { busy: number },
): Rename[] {
  const given = new Set<string>()
  const plan: Rename[] = []
  for (const a of assets) {
    if (busy.has(a.id)) {
      counts.busy++
      continue
    }
    const from = lastName(a.path_proxy)
    const ext = from.slice(from.lastIndexOf('.'))
    const to = freeName(folder, proxyNames(a.path_file, a.id), ext, given)
    const ino = inodeOf(folder, from)
    if (!to || to === from || ino === undefined) continue
    given.add(to.slice(0, -ext.length).toLowerCase())
    plan.push({ asset: a.id, from: a.path_proxy, to: pathOf.join(parentFolder(a.path_proxy), to), ino })
  }
  return plan
}

/** The first of the scheme's names (then numbered ones) that is free with its pictures and not planned already. */
function freeName(folder: number, names: { first: string; fallback: string }, ext: string, given: Set<string>) {
  const candidates = [
    names.first,
    names.fallback,
    ...Array.from({ length: 99 }, (_, n) => `${names.fallback}_${n + 1}`),
  ]
  return candidates
    .filter((stem) => !given.has(stem.toLowerCase()))
    .map((stem) => stem + ext)
    .find((name) => !takenIn(folder, name) && companionsFree(folder, name.slice(0, -ext.length)))
}

/**
 * Renames the proxy of `r` and its pictures, never over another file; true when the proxy has
 * its new name: renamed now, or before a restart (the new name is the very file planned, by its
 * inode, and the old name is gone). A picture whose new name is taken stays as it is.
 */
function finishRename(folder: number, r: Rename): boolean {
  const from = lastName(r.from)
  const to = lastName(r.to)
  if (renameIntoPlace(folder, from, to) !== 0 && !(inodeOf(folder, to) === r.ino && !takenIn(folder, from)))
    return false
  const [oldStem, newStem] = [from, to].map((n) => n.slice(0, n.lastIndexOf('.')))
  for (const suffix of Object.values(PICTURE_SUFFIX))
    if (takenIn(folder, oldStem + suffix)) renameIntoPlace(folder, oldStem + suffix, newStem + suffix)
  return true
}

/** The inode of the regular file `name` of the open folder (a link is not followed); undefined when it is none. */
function inodeOf(folder: number, name: string): number | undefined {
  const fd = openat(folder, cName(name), O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
  if (fd < 0) return undefined
  try {
    const s = statNumbersOf(fd)
    return s.isFile() ? s.ino : undefined
  } finally {
    close(fd)
  }
}

/** path_proxy of each renamed asset, in one transaction (the caller's when one is open: the task's end). */
function record(media: MediaAssets, renamed: Rename[], by: ReturnType<typeof system>): Work<void> {
  return media.renameProxies(
    renamed.map((r) => ({ id: r.asset, from: r.from, to: r.to })),
    by,
  )
}
