// Which files some process holds open for writing, where the platform can tell (docs/watcher.md:
// a watch-folder file still being written is never imported, also one whose writer pauses for
// longer than the settle time). Linux lists every process's open files in /proc/PID/fd, with
// the open flags in /proc/PID/fdinfo; elsewhere (macOS, Windows) nothing is known and the settle
// time alone decides. Processes of other users are visible only when the service runs as root
// (or with CAP_SYS_PTRACE); their files then count as not open.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs'

const O_ACCMODE = 0o3 // O_WRONLY 1, O_RDWR 2

/** Of `paths`, those open for writing by any process this one may look at. */
export function openForWriting(paths: ReadonlySet<string>): Set<string> {
  const open = new Set<string>()
  if (process.platform !== 'linux' || paths.size === 0) return open
  let pids: string[]
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n))
  } catch {
    return open
  }
  for (const pid of pids) {
    let fds: string[]
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue // gone, or not ours to look at
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`)
        if (!paths.has(target)) continue
        const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))?.[1]
        if (flags !== undefined && (parseInt(flags, 8) & O_ACCMODE) !== 0) open.add(target)
      } catch {
        // closed meanwhile
      }
    }
  }
  return open
}
