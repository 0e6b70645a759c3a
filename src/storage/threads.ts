// The CPU priority of the service's helper threads: the checkpointer (db/checkpoint.worker.ts) and
// the watcher's chokidar thread (watch/chokidar.worker.ts). Here with the other platform calls.
//
// On a NAS with two cores, a drop of 20,000 files keeps four threads busy at once: the server's
// (requests, imports), the watcher's (chokidar's handling of inotify bursts), the checkpointer's
// and the copy itself. Measured with each thread's run-queue time (/proc/PID/task/TID/schedstat)
// over the drop's longest /api/health waits: the server's thread was runnable all the time, but
// spent two thirds of those 60-90 ms waiting for a core that the helper threads held
// (docs/benchmarks.md, stall). The helpers' work can wait a little; a request should not. So each
// helper thread lowers its own priority to nice 10 (CFS then gives the server's thread about nine
// tenths of a shared core; an idle core is still the helper's in full), as a request-serving
// process would do for its batch threads (PostgreSQL leaves that to the OS; Syncthing lowers its
// whole process). Threads the helper starts later (Bun's fs.watch reader in chokidar's thread)
// inherit it.
import { FFIType } from 'bun:ffi'
import { cFunction } from './dirfd.ts'

/** The nice value of a helper thread (0 is the default, 19 the lowest priority). */
export const HELPER_NICE = 10

/**
 * Lowers the calling thread's CPU priority to HELPER_NICE; undefined when done, else why not
 * (the thread then runs at the process's priority, as before). Linux only: there the nice value
 * is a thread's own, and setpriority(PRIO_PROCESS, 0, …) sets the calling thread's
 * (setpriority(2), NOTES). On macOS the same call would lower the whole process (and with it
 * every request), so it is not made there; not run on macOS.
 */
export function lowerThreadPriority(): string | undefined {
  if (process.platform !== 'linux') return `helper thread priorities are lowered on Linux only, not on ${process.platform}`
  const setpriority = cFunction('setpriority', [FFIType.i32, FFIType.u32, FFIType.i32])
  if (!setpriority) return 'the C library has no setpriority'
  const PRIO_PROCESS = 0
  return setpriority(PRIO_PROCESS, 0, HELPER_NICE) === 0 ? undefined : 'setpriority failed'
}
