// The one way tests make temporary folders. tempDir() gives a path; disposableDir() gives one
// that a `using` scope (or an explicit [Symbol.dispose]()) removes, as bun's own test harness
// does. Folders of either kind still there when the run ends are removed by removeLeftovers(),
// which test/setup.ts (preloaded, bunfig.toml) runs after all tests: bun test does not run
// process 'exit' listeners, so a failing test must not be the reason folders pile up.
import { accessSync, constants, mkdtempSync, rmSync, statSync, statfsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A memory file system needs this much room to hold the run's folders (the largest tests write 400 and 512 MiB files, four files run at once). */
const MEMORY_ROOM = 6 * 1024 ** 3

const usable = (path: string) => {
  try {
    accessSync(path, constants.W_OK)
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * Where the tests' folders are made: REELHOUSE_TEST_TMPDIR when set; else, on Linux, the memory
 * file system /dev/shm when it is writable and has room; else the system's temporary folder.
 *
 * Why memory first: the tests make and delete many thousands of files, and a disk's file
 * system can make that a large part of the suite's time. On ext4 without a journal (the test machines'
 * disks) the kernel checks each candidate inode for a recent deletion before reusing it
 * (fs/ext4/ialloc.c, recently_deleted), and after a few thousand deletions every create scans
 * the inode table: under perf, half of a copy test's CPU was in that scan, and the test took
 * 10.1 s on the disk against 3.7 s in memory. The files are real files either way, with the
 * same system calls. Tests that move files between two file systems take the other one from
 * OTHER_TMP.
 */
export const TEST_TMP = (() => {
  const chosen = process.env.REELHOUSE_TEST_TMPDIR
  if (chosen) return chosen
  const memory = '/dev/shm'
  if (process.platform === 'linux' && usable(memory)) {
    const room = statfsSync(memory)
    if (room.bavail * room.bsize >= MEMORY_ROOM) return memory
  }
  return tmpdir()
})()

/**
 * A folder on another file system than TEST_TMP, for the tests of moves across file systems:
 * the system's temporary folder (a disk) when the tests' folders are in memory, /dev/shm when
 * they are on the disk; undefined when the machine has no second one.
 */
export const OTHER_TMP = (() => {
  const dev = statSync(TEST_TMP).dev
  for (const candidate of [tmpdir(), '/dev/shm'])
    if (usable(candidate) && statSync(candidate).dev !== dev) return candidate
  return undefined
})()

const made = new Set<string>()

/** Removes every folder made here that is still there. */
export function removeLeftovers() {
  for (const path of made) rmSync(path, { recursive: true, force: true })
  made.clear()
}

/** A new empty folder in TEST_TMP (or in `parent`). */
export function tempDir(prefix = 'reelhouse-test-', parent = TEST_TMP): string {
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
