// Phase 4, verify: each decision is checked against the disk as it is now, right before it is
// applied: a walk takes time, and another scan may have applied what happened meanwhile (a file
// moved right after the walk read its folder). A decision the disk no longer bears out is left,
// and its paths go to the run's `recheck` (looked at again shortly). Hands on (Verified) the
// decisions that stand.
import type { DiskEntry, Relocation } from '../reconcile.ts'
import type { Decided } from './decide.ts'
import type { Gathered } from './gather.ts'
import { type ScanRun, look } from './run.ts'

export type Verified = {
  /** The relocations whose file is at their new path. */
  relocations: Relocation[]
  /** Assets whose relocation was left: nothing else is applied to them either. */
  dropped: Set<number>
  /** Assets going offline whose path is gone (or holds the file the walk saw there, another's now). */
  offline: number[]
  /** Assets coming online that have their file (relocated, or at their own path). */
  online: number[]
}

export function verify(run: ScanRun & Gathered & Decided): Verified {
  const { outcome, recheck, rows } = run
  const relocations = outcome.relocations.filter((r) => {
    if (sameFile(r.path, r)) return true
    recheck.add(r.path)
    return false
  })
  const kept = new Set(relocations)
  const relocated = new Set(relocations.map((r) => r.id))
  const dropped = new Set(outcome.relocations.filter((r) => !kept.has(r)).map((r) => r.id))
  const filesNow = filesOf(run.disk)
  const offline = outcome.offline.filter((id) => {
    const path = rows.get(id)!.path_file
    const s = look(path)
    const seen = filesNow.get(path)
    // Gone as the walk said (or no longer a regular file: a link, a folder), or holding the file
    // the walk saw there (handed to another asset).
    if (!s || !s.isFile() || (seen && s.dev === seen.dev && s.ino === seen.ino)) return true
    recheck.add(path)
    return false
  })
  const online = outcome.online.filter((id) => !dropped.has(id) && (relocated.has(id) || sameFileAtOwnPath(id)))
  function sameFileAtOwnPath(id: number) {
    const path = rows.get(id)!.path_file
    const seen = filesNow.get(path)
    if (seen && sameFile(path, seen)) return true
    recheck.add(path)
    return false
  }
  return { relocations, dropped, offline, online }
}

const sameFile = (path: string, e: { dev: number; ino: number }) => {
  const s = look(path)
  return s !== undefined && s.isFile() && s.dev === e.dev && s.ino === e.ino
}

/** The files the scan saw, by path: made once asked. */
function filesOf(disk: readonly DiskEntry[]) {
  let filesSeen: Map<string, DiskEntry> | undefined
  return {
    get(path: string) {
      if (!filesSeen) {
        filesSeen = new Map()
        for (const e of disk) if (e.kind === 'file') filesSeen.set(e.path, e)
      }
      return filesSeen.get(path)
    },
  }
}
