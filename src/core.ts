// The composition root: every service of Reelhouse, built once over an open catalogue, with no
// HTTP in it. createApp (HTTP), `serve`, the tests and the benchmarks all build from here, so
// this file is the one place that says what runs. A plain function, not a container: follow
// a dependency by reading the imports.
//
// Order of life: createCore → start() (the task runner; the watcher will start here too) →
// stop() (the runner leaves running tasks resumable) → the caller closes the catalogue.
import type { Db } from './db/client.ts'
import { createHoldDurations } from './modules/assetholddurations/service.ts'
import { createCustomMetadata } from './modules/custommetadata/service.ts'
import { createDevices } from './modules/devices/service.ts'
import { createMediaAssets } from './modules/mediaassets/service.ts'
import { createProductions } from './modules/productions/service.ts'
import { createProjectAssets } from './modules/projectassets/service.ts'
import { createUsers } from './modules/users/service.ts'
import { copyHandler } from './tasks/copy.ts'
import { deleteHandler } from './tasks/delete.ts'
import { createRunner } from './tasks/runner.ts'
import { type Log, silentLog } from './util/log.ts'

export type CoreOptions = {
  log?: Log
  /** Tasks run at once (--task-concurrency). */
  concurrency?: number
}

export function createCore(db: Db, { log = silentLog, concurrency = 2 }: CoreOptions = {}) {
  const users = createUsers(db)
  const devices = createDevices(db)
  const holds = createHoldDurations(db)
  const metadata = createCustomMetadata(db)
  const media = createMediaAssets(db, holds, metadata)
  const productions = createProductions(db, devices, users)
  const runner = createRunner(db, {
    concurrency,
    log,
    handlers: { copy: copyHandler(db, users), delete: deleteHandler(db, users, media) },
  })
  const projects = createProjectAssets(db, { runner, holds, metadata, media })

  return {
    db, log, users, devices, holds, metadata, media, productions, projects, runner,
    /** Starts the work that runs beside requests: queued and interrupted tasks first. */
    start() {
      runner.start()
    },
    /** Stops taking work and leaves running tasks resumable; the caller closes the catalogue. */
    async stop() {
      await runner.stop()
    },
  }
}

export type Core = ReturnType<typeof createCore>
