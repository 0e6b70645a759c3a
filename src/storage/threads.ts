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
// inherit it. On macOS a nice value is the whole process's, so there each helper thread takes the
// QoS class "utility" instead, which is its own (not run on macOS).
//
// What it cannot choose: JavaScriptCore's own threads (its JIT compilers, a collector's helper)
// are shared by the whole process and made by whichever thread first needs one; one made while a
// helper thread asks gets that helper's nice value (its QoS class on macOS), and later does work
// for the server's thread too. In a normal start the server's thread makes them first (they then
// keep its priority); an unprivileged process could not set one back.
import { readFileSync } from 'node:fs'
import { FFIType } from 'bun:ffi'
import { cFunction } from './dirfd.ts'

/** The nice value of a helper thread (0 is the default, 19 the lowest priority). */
export const HELPER_NICE = 10

/** The QoS class of a helper thread on macOS: QOS_CLASS_UTILITY (<sys/qos.h>), below the default 0x15. */
export const HELPER_QOS = 0x11

/**
 * Lowers the calling thread's CPU priority (one already lower is left); undefined when done, else
 * why not (the thread then runs at the process's priority, as before).
 *
 * Linux: to nice HELPER_NICE. There the nice value is a thread's own, and
 * setpriority(PRIO_PROCESS, 0, …) sets the calling thread's (setpriority(2), NOTES).
 *
 * macOS: to the QoS class HELPER_QOS, with pthread_set_qos_class_self_np(3) from libSystem (the
 * library dirfd.ts's cFunction opens there), which sets the calling thread's alone. setpriority
 * would lower the whole process there (and with it every request), so it is not called. Written
 * from Apple's headers (<pthread/qos.h>, <sys/qos.h>); not run on macOS (no Mac here).
 */
export function lowerThreadPriority(): string | undefined {
  if (process.platform === 'darwin') return lowerThreadQos()
  if (process.platform !== 'linux')
    return `helper thread priorities are lowered on Linux and macOS only, not on ${process.platform}`
  // Never raised: a service started at nice 15 (a unit's Nice=) keeps its helpers at 15, not
  // above its request thread (which root could otherwise do).
  const now = threadNice()
  if (now === undefined) return "the thread's nice value cannot be read"
  if (now >= HELPER_NICE) return undefined
  const setpriority = cFunction('setpriority', [FFIType.i32, FFIType.u32, FFIType.i32])
  if (!setpriority) return 'the C library has no setpriority'
  const PRIO_PROCESS = 0
  return setpriority(PRIO_PROCESS, 0, HELPER_NICE) === 0 ? undefined : 'setpriority failed'
}

/** macOS: the calling thread's QoS class to HELPER_QOS, unless it is at background or utility already. */
function lowerThreadQos(): string | undefined {
  // qos_class_self() answers the thread's class: 0x09 background, 0x11 utility, 0x15 default,
  // 0x19 user-initiated, 0x21 user-interactive; 0 unspecified (then the default applies).
  const now = cFunction('qos_class_self', [])?.()
  if (now !== undefined && now !== 0 && now <= HELPER_QOS) return undefined
  const set = cFunction('pthread_set_qos_class_self_np', [FFIType.u32, FFIType.i32])
  if (!set) return 'the C library has no pthread_set_qos_class_self_np'
  // Relative priority 0: the class's own.
  return set(HELPER_QOS, 0) === 0 ? undefined : 'pthread_set_qos_class_self_np failed'
}

/** The calling thread's nice value (Linux: field 19 of /proc/thread-self/stat), or undefined. */
export function threadNice(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8')
    const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
    return Number.isInteger(nice) ? nice : undefined
  } catch {
    return undefined
  }
}
