// The reconcile road (design note, service.md 10): every start-up scan, timed rescan and watcher
// batch is one `scan` task {device, paths}: walk what is on disk there, diff it against the
// catalogue with a pure function (reconcile.ts), apply the result through the media service in
// one transaction, and import settled new files of a watch folder through the same register()
// as POST /api/asset/import/. Events are hints; this is the truth. The watcher never deletes a
// catalogue record: missing files only go offline.
import { existsSync } from 'node:fs'
import { posix } from 'node:path'
import { and, eq, inArray } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { devices, productions, projectAssets, tasks } from '../db/schema.ts'
import { AppError } from '../http/errors.ts'
import { type Imports, assetsBeingMoved } from '../modules/assetimport/service.ts'
import type { MediaAssets, ScanRow } from '../modules/mediaassets/service.ts'
import { SYSTEM } from '../modules/users/service.ts'
import { listTree } from '../storage/fs.ts'
import { openForWriting } from '../storage/writers.ts'
import { isInside } from '../storage/paths.ts'
import type { Handler } from '../tasks/runner.ts'
import type { Log } from '../util/log.ts'
import { isoTimestamp } from '../util/time.ts'
import { type createSettle, excluded } from './ingest.ts'
import { type DiskEntry, reconcile } from './reconcile.ts'

export type ScanParams = {
  device: number
  /** Absolute folders or files to look at again; null: the whole device. */
  paths: string[] | null
}

export type ScanDeps = {
  media: MediaAssets
  imports: Imports
  settle: ReturnType<typeof createSettle>
  /** Asks for another look at `paths` after `ms` (a file still settling). */
  later(device: number, paths: string[], ms: number): void
  settleMs: number
  log: Log
}

export function scanHandler(db: Db, deps: ScanDeps): Handler<'scan'> {
  const { media } = deps
  return async ({ task, signal, progress, report }) => {
    const device = db.select().from(devices).where(eq(devices.id, task.params.device)).get()
    if (!device) return // the device was removed
    // An unmounted device marks nothing offline: its files are not known to be gone.
    if (!existsSync(device.path)) return report({ seen: 0, offline: 0, online: 0, moved: 0, imported: 0, waiting: 0, unavailable: 1 })

    const scopes = (task.params.paths ?? [device.path]).filter((p) => p === device.path || isInside(device.path, p) || p + '/' === device.path)
    const disk: DiskEntry[] = []
    for (const scope of scopes) {
      const rel = scope.slice(device.path.length)
      // Inside an excluded folder nothing is judged (reconcile keeps the rows there as they are).
      if (rel && excluded(rel)) continue
      let entries
      try {
        // Both exclusion rules are per name, and the walk never enters an excluded folder: each
        // entry's own name is all that is left to judge (one short test per file, not the path).
        entries = await listTree(scope, signal, { skip: (r) => excluded(r.slice(r.lastIndexOf('/') + 1)), live: true })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue // gone: reconcile sees it missing
        throw error
      }
      const prefix = scope.endsWith('/') || entries[0]?.kind !== 'dir' ? scope : scope + '/'
      for (const e of entries) {
        if (e.kind !== 'file' && e.kind !== 'dir') continue
        const path = e.rel ? prefix + e.rel : scope
        disk.push({ path: e.kind === 'dir' && !path.endsWith('/') ? path + '/' : path, device: device.id, kind: e.kind, dev: e.dev, ino: e.ino, stamp: e.stamp, size: e.size, mtimeMs: e.mtimeMs })
      }
      progress({ files_done: disk.length })
    }

    // The catalogue in the same scopes, and assets elsewhere whose file now shows up here (a move).
    const folderScopes = scopes.map((s) => (s.endsWith('/') ? s : s + '/'))
    // A row may come twice (two scopes, or found by identity too): reconcile takes each id once.
    const rows: ScanRow[] = []
    const catalogued = new Set<string>()
    const take = (r: ScanRow) => {
      rows.push(r)
      catalogued.add(r.path_file)
    }
    for (const [i, s] of scopes.entries()) {
      for (const r of media.underForScan(folderScopes[i]!)) take(r)
      const one = media.byPath(s)
      if (one) take(one)
    }
    const uncatalogued: DiskEntry[] = []
    for (const e of disk) if (e.kind === 'file' && !catalogued.has(e.path)) uncatalogued.push(e)
    if (uncatalogued.length) rows.push(...media.byIdentities(uncatalogued))
    const projects = db.select({ id: projectAssets.id, bundle_root: projectAssets.bundle_root, is_production: projectAssets.is_production, is_archive: projectAssets.is_archive, deleting: projectAssets.deleting })
      .from(projectAssets).where(eq(projectAssets.device, device.id)).all()
      .filter((p) => folderScopes.some((s) => p.bundle_root === s || isInside(s, p.bundle_root)))
    const busy = new Set(db.select({ target: tasks.target }).from(tasks)
      .where(and(inArray(tasks.kind, ['copy', 'delete']), inArray(tasks.state, ['queued', 'running']))).all()
      .map((t) => t.target.projectasset))

    // A device that is the upload device of productions is a watch folder (of the first of them).
    const uploads = db.select({ id: productions.id, name: productions.name }).from(productions)
      .where(eq(productions.upload_device, device.id)).orderBy(productions.id).all()
    const roots = new Map(db.select({ id: devices.id, path: devices.path }).from(devices).all().map((d) => [d.id, d.path]))
    const outcome = reconcile(disk, {
      media: rows,
      projects: projects.map((p) => ({ id: p.id, bundle_root: p.bundle_root, device: device.id, is_archive: p.is_archive, is_production: p.is_production, busy: p.deleting || busy.has(p.id) })),
    }, {
      scope: scopes,
      roots,
      rootPresent: (id) => existsSync(roots.get(id) ?? '/nonexistent-device'),
      uploadDevices: new Map(uploads.length ? [[device.id, uploads[0]!.id]] : []),
      diskFiltered: true, // listTree's skip above is the same rule
    })

    let offline = outcome.offline
    let online = outcome.online
    db.transaction(() => {
      // An asset an import is moving is out of production until its task has the file in place
      // (clients wait for that): its file at the old path is not this scan's to bring online.
      const moving = assetsBeingMoved(db)
      if (moving.size) {
        offline = offline.filter((id) => !moving.has(id))
        online = online.filter((id) => !moving.has(id))
      }
      media.setOnline(offline, false)
      media.setOnline(online, true)
      for (const m of outcome.moves) media.relocate(m.id, m.path, m.device, m)
      const byId = outcome.identity.length ? new Map(rows.map((r) => [r.id, r])) : undefined
      for (const m of outcome.identity) {
        const row = byId!.get(m.id)
        if (row) media.relocate(m.id, row.path_file, row.device, m)
      }
      for (const [ids, on] of [[outcome.projectsOffline, false], [outcome.projectsOnline, true]] as const)
        if (ids.length) db.update(projectAssets).set({ is_production: on, date_mod: isoTimestamp() }).where(inArray(projectAssets.id, [...ids])).run()
    })

    // New files in a watch folder: imported once they stopped growing (service.md 10), through
    // the same register() as POST /api/asset/import/, by the service itself (SYSTEM).
    let imported = 0
    const waiting: string[] = []
    const now = Date.now()
    const settled = outcome.ingest.filter((file) => {
      if (media.byPath(file.path)) return false // catalogued meanwhile (any kind): never twice
      if (deps.settle.observe(file.path, { size: file.size, mtimeMs: file.mtimeMs }, now) === 'settled') return true
      waiting.push(file.path)
      return false
    })
    // A writer that paused for longer than the settle time still holds the file open (Linux tells).
    const writing = openForWriting(new Set(settled.map((f) => f.path)))
    for (const file of settled) {
      if (writing.has(file.path)) {
        waiting.push(file.path)
        continue
      }
      deps.settle.forget(file.path)
      const production = uploads.find((p) => p.id === file.production)
      if (!production) continue
      const request = {
        type: file.kind, production: production.name, rewrap_proxy: false, move_asset: false,
        asset: {
          asset_meta: { name: posix.basename(file.path).replace(/\.[^.]+$/, ''), path_file: file.path, is_archive: false, is_production: true, approval: 0 as const, meta_field_store: {} },
          technical_details: {}, archive_details: {}, keywords: {},
        },
      }
      try {
        deps.imports.register(request, SYSTEM, JSON.stringify({ watch_folder: device.name, path_file: file.path }))
        imported++
      } catch (error) {
        // A refusal (the file went away: 406) is logged; a later scan tries again if it is back.
        if (!(error instanceof AppError)) throw error
        deps.log.warn('watch folder file not imported', { path: file.path, reason: error.message })
      }
    }
    if (waiting.length) deps.later(device.id, waiting, deps.settleMs)
    report({
      seen: disk.filter((e) => e.kind === 'file').length, offline: offline.length, online: online.length,
      moved: outcome.moves.length, imported, waiting: waiting.length,
    })
    // A walk of a big tree leaves about 60 MB per 100,000 entries behind (its entries, the
    // catalogue rows, reconcile's maps). The collector would free it only later, under whatever
    // comes next (the imports of the benchmark rose from there to past 200 MB): collect it once
    // this scan's frame is gone, and again a second later. JSC scans the machine stack
    // conservatively, and right after the task half of the collections still found `disk` and
    // reconcile's maps through stale stack slots (a heap snapshot showed them held by <root>
    // alone); a second on, every collection freed them. Measured with 102,500 files and then
    // 100,000 imports: peak RSS 210-238 MiB with the first collection alone, 153-155 with both.
    // Big scans are rare (start, rescans), each pause a few milliseconds.
    if (disk.length >= BIG_SCAN) for (const ms of BIG_SCAN_COLLECT_MS) setTimeout(() => Bun.gc(true), ms).unref()
  }
}

/** Entries from which a scan's garbage is collected at once (see the end of the scan). */
const BIG_SCAN = 10_000
/** When a big scan's garbage is collected, after it ends (see there). */
const BIG_SCAN_COLLECT_MS = [0, 1000]
