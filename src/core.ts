// The composition root: every service of Reelhouse, built once over an open catalogue, with no
// HTTP in it. createApp (HTTP), `serve`, the tests and the benchmarks all build from here, so
// this file is the one place that says what runs. A plain function, not a container: follow
// a dependency by reading the imports.
//
// Order of life: createCore → start() (the task runner; the watcher will start here too) →
// stop() (the runner leaves running tasks resumable) → the caller closes the catalogue.
import type { Db } from './db/client.ts'
import { type Ffmpeg, createFfmpeg } from './media/ffmpeg.ts'
import { importHandler } from './modules/assetimport/import.task.ts'
import { createImports } from './modules/assetimport/service.ts'
import { createImportLogs } from './modules/importlogs/service.ts'
import { createHoldDurations } from './modules/assetholddurations/service.ts'
import { createCustomMetadata } from './modules/custommetadata/service.ts'
import { createDevices } from './modules/devices/service.ts'
import { createMediaAssets } from './modules/mediaassets/service.ts'
import { createProductions } from './modules/productions/service.ts'
import { copyHandler } from './modules/projectassets/copy.task.ts'
import { deleteHandler } from './modules/projectassets/delete.task.ts'
import { createProjectAssets } from './modules/projectassets/service.ts'
import { createUsers } from './modules/users/service.ts'
import { createRunner } from './tasks/runner.ts'
import { createSettle } from './watch/ingest.ts'
import { createRecent } from './watch/recent.ts'
import { scanHandler } from './watch/scan.task.ts'
import { type Watch, type WatchOptions, createWatch } from './watch/service.ts'
import { type Log, silentLog } from './util/log.ts'

export type CoreOptions = {
  log?: Log
  /** Tasks run at once (--task-concurrency). */
  concurrency?: number
  /** Where ffmpeg and ffprobe are (--ffmpeg DIR); default: PATH. */
  ffmpegDir?: string
  /** The device watcher (serve); without it, scans run only when queued (tests of other parts). */
  watch?: Omit<WatchOptions, 'settleMs'>
  /** How long a watch-folder file must stay unchanged before it is imported (--settle). */
  settleMs?: number
}

export function createCore(db: Db, { log = silentLog, concurrency = 2, ffmpegDir, watch: watchOptions, settleMs = 2000 }: CoreOptions = {}) {
  const users = createUsers(db)
  // Built after the runner it queues scans with; a device created meanwhile is not possible.
  let watch: Watch | undefined
  const holds = createHoldDurations(db)
  const devices = createDevices(db, holds, {
    created: (device) => watch?.added(device),
    changed: (device) => watch?.added(device),
    removed: (id) => watch?.removed(id),
  })
  const metadata = createCustomMetadata(db)
  const media = createMediaAssets(db, holds, metadata)
  const logs = createImportLogs(db)
  const productions = createProductions(db, devices, users, { holds, logs })
  // ffmpeg and ffprobe are looked for once, when the first import needs them.
  let ffmpeg: Promise<Ffmpeg> | undefined
  const findFfmpeg = () => (ffmpeg ??= createFfmpeg({ dir: ffmpegDir }))
  // What the watcher saw lately (sightings, strangers): shared by the watcher and every scan.
  const recent = createRecent()
  const runner = createRunner(db, {
    concurrency,
    log,
    handlers: {
      copy: copyHandler(db, users),
      delete: deleteHandler(db, users, media),
      import: importHandler(db, { media, devices, logs, users, ffmpeg: findFfmpeg }),
      scan: scanHandler(db, {
        media, log, settleMs, logs,
        get imports() {
          return imports
        },
        get projects() {
          return projects
        },
        get settle() {
          return settle
        },
        recent,
        later: (device, paths, ms) => watch?.later(device, paths, ms),
        importsOpen: () => watch?.importsOpen() ?? true,
        scanned: (device, full) => watch?.scanned(device, full),
      }),
    },
  })
  const projects = createProjectAssets(db, { runner, holds, metadata, media })
  const imports = createImports(db, { media, devices, holds, metadata, logs, runner })
  watch = watchOptions && createWatch(db, { runner, log, recent }, { ...watchOptions, settleMs })
  const settle = watch?.settle ?? createSettle(settleMs)

  return {
    db, log, users, devices, holds, metadata, media, productions, projects, imports, logs, runner, ffmpeg: findFfmpeg, watch, recent,
    /** Starts the work that runs beside requests: queued and interrupted tasks, then the watcher and its start scans. */
    start() {
      runner.start()
      watch?.start()
    },
    /** Stops the watcher, then takes no more work and leaves running tasks resumable; the caller closes the catalogue. */
    async stop() {
      await watch?.stop()
      await runner.stop()
    },
  }
}

export type Core = ReturnType<typeof createCore>
