// A core whose scans the tests queue as the watcher would, over testApp's catalogue: a device on a
// temporary folder with a production on it, no ffmpeg, a short settle time (the gate's rule is
// tested in ingest.test.ts; here, that it is used), the runner started. Test files that scan
// build it in beforeEach and stop it in afterEach.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { createCore } from '../../src/core.ts'
import { silentLog } from '../../src/util/log.ts'
import { type TestApp, seedProduction, testApp } from './app.ts'
import { emptyFfmpegDir, removeScratch } from './imports.ts'
import { runSync } from '../../src/db/port.ts'

export async function scanWorld() {
  const base = testApp(undefined, { tasks: false })
  const { root, device, production: show } = await seedProduction(base)
  const core = createCore(base.db, { log: silentLog, ffmpegDir: emptyFfmpegDir(), settleMs: 30 })
  const app = createApp(core)
  core.runner.start()
  return {
    base: base as TestApp,
    core,
    app,
    root,
    device: device as { id: number },
    show: show as { id: number },
    /** A scan of the device (or of `paths`), queued as the watcher queues it and run to its end: its task row. */
    async scan(paths: string[] | null = null) {
      const { id } = runSync(
        base.db,
        core.runner.enqueue({
          kind: 'scan',
          target: { device: device.id },
          production: null,
          params: { device: device.id, paths },
        }),
      )
      await core.runner.idle()
      return base.db.$client
        .query<{ state: string; error: string; result: string }, [number]>(
          'SELECT state, error, result FROM tasks WHERE id = ?',
        )
        .get(id)!
    },
    /** A file at `rel` under the device's root, its folders made: its path. */
    file(rel: string, text = 'essence') {
      mkdirSync(join(root, rel, '..'), { recursive: true })
      writeFileSync(join(root, rel), text)
      return join(root, rel)
    },
    async stop() {
      await core.stop()
      base.cleanup()
      removeScratch()
    },
  }
}

export type ScanWorld = Awaited<ReturnType<typeof scanWorld>>
