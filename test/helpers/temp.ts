// The one way tests make temporary folders. tempDir() gives a path; disposableDir() gives one
// that a `using` scope (or an explicit [Symbol.dispose]()) removes, as bun's own test harness
// does. Folders of either kind still there when the run ends are removed by removeLeftovers(),
// which test/setup.ts (preloaded, bunfig.toml) runs after all tests: bun test does not run
// process 'exit' listeners, so a failing test must not be the reason folders pile up.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const made = new Set<string>()

/** Removes every folder made here that is still there. */
export function removeLeftovers() {
  for (const path of made) rmSync(path, { recursive: true, force: true })
  made.clear()
}

/** A new empty folder under the system's temporary folder (or under `parent`). */
export function tempDir(prefix = 'reelhouse-test-', parent = tmpdir()): string {
  const path = mkdtempSync(join(parent, prefix))
  made.add(path)
  return path
}

/** tempDir() that removes itself when disposed. */
export function disposableDir(prefix = 'reelhouse-test-', parent?: string) {
  const path = tempDir(prefix, parent)
  return {
    path,
    [Symbol.dispose]() {
      rmSync(path, { recursive: true, force: true })
      made.delete(path)
    },
  }
}
