// A world for tests of what tasks check when they start or resume: an app whose runner is not
// started, a production on a temporary device, and an outside folder. Requests queue tasks, the
// test changes the disk under them (as another process, or someone while the service was down,
// would), then runTasks() starts the runner as a restart does.
import { afterEach, beforeEach, expect } from 'bun:test'
import { rmSync } from 'node:fs'
import { type TestApp, seedProduction, tempDir, testApp } from './app.ts'
import { makeTree } from './tree.ts'

type World = { t: TestApp; root: string; show: { id: number }; outside: string }
type Task = { id: number; state: string; error: string }

/** Registers the hooks that make and remove a fresh world around each test. */
export function pausedTasks() {
  let world: World | undefined
  beforeEach(async () => {
    const t = testApp(undefined, { tasks: false })
    const { root, production } = await seedProduction(t)
    world = { t, root, show: production, outside: tempDir('reelhouse-outside-') }
  })
  afterEach(async () => {
    await world!.t.stop()
    rmSync(world!.t.dataDir, { recursive: true, force: true })
    rmSync(world!.outside, { recursive: true, force: true })
  })
  const lastTask = () =>
    world!.t.db.$client.query<Task, []>('SELECT id, state, error FROM tasks ORDER BY id DESC LIMIT 1').get()!
  return {
    current: () => world!,
    lastTask,
    /** Starts the runner (queued tasks run, running ones resume) and answers the newest task once all are done. */
    async runTasks() {
      world!.t.runner.start()
      await world!.t.runner.idle()
      return lastTask()
    },
    /** Files at `bundle`, registered as a project of the production. */
    async project(bundle: string, files: Parameters<typeof makeTree>[1] = { 'edit.prproj': 'project' }) {
      makeTree(bundle, files)
      const r = await world!.t.post('/api/projectassets/', {
        name: 'P',
        bundle_root: bundle,
        production_id: world!.show.id,
      })
      expect(r.status).toBe(201)
      return r.json as { id: number; bundle_root: string }
    },
  }
}
