// Phase 1, walk: what is on disk in the scan's scopes. Walks each scope (never into an excluded
// folder or our own output), then the folders a vanished scope or a renamed folder may have
// become. Hands on the run's `disk` filled with the entries found, and (Walked) the scopes that
// were gone, the folders it could not read, and the names that are not valid UTF-8.
import { lstat, readdir } from 'node:fs/promises'
import { type Entry, walkTree } from '../../storage/fs.ts'
import type { StatFields } from '../../storage/dirfd.ts'
import {
  SEP,
  asFolder,
  baseName,
  below,
  isInside,
  lastName,
  parentFolder,
  platformRel,
  restOf,
  stampOf,
  trimSep,
} from '../../storage/paths.ts'
import { excluded } from '../ingest.ts'
import type { DiskEntry } from '../reconcile.ts'
import { widenToCards } from './cards.ts'
import { type ScanRun, underAny } from './run.ts'

export type Walked = {
  /** The scopes walked (or being walked). */
  walked: Set<string>
  /** Scopes that are gone: forgotten as folders once this scan has used what was seen of them. */
  missing: string[]
  /** Folders the walk could not list or look into (another user's, `lost+found`): what is inside keeps its state. */
  unread: { path: string; reason: string }[]
  /** The folders of `unread`, without their final separator. */
  unreadKeys: Set<string>
  underUnread(path: string): boolean
  /** Names that are not valid UTF-8, by folder (absolute, final separator): no path of ours can name them. */
  undecodable: Map<string, string[]>
  /** The folders found, before those under a folder's former name were walked (remembered by identity). */
  dirs: DiskEntry[]
}

export async function walk(run: ScanRun): Promise<Walked> {
  const unreadKeys = new Set<string>()
  const w: Walked = {
    walked: new Set(),
    missing: [],
    unread: [],
    unreadKeys,
    underUnread: (path) => unreadKeys.size > 0 && underAny(unreadKeys, path),
    undecodable: new Map(),
    dirs: [],
  }
  // A camera card is one unit (docs/cards.md): a scan of a folder inside one walks the whole card.
  if (run.task.params.paths !== null) widenToCards(run)
  for (const scope of run.scopes) await walkScope(run, w, scope)
  await followVanished(run, w)
  // A folder of this scan that was seen before under another name was renamed: its old name is
  // looked at too, so that what was inside is followed (files saved anew inside it as well).
  w.dirs = run.disk.filter((e) => e.kind === 'dir')
  for (const former of run.deps.recent.formerFolders(w.dirs))
    if (isInside(run.device.path, former) && ![...w.walked].some((s) => former === s || isInside(s, former))) {
      run.scopes.push(former)
      await walkScope(run, w, former)
    }
  return w
}

async function walkScope(run: ScanRun, w: Walked, scope: string): Promise<void> {
  const { device } = run
  const rel = restOf(device.path, scope)
  // Inside an excluded folder or our own output nothing is judged (the rows there keep their state).
  if ((rel && excluded(rel)) || run.isOwn(scope)) return
  w.walked.add(scope)
  const at = asFolder(scope)
  // Our own folders that lie inside this scope, relative to it (in the platform's spelling,
  // as the walk's names are compared below): the walk never enters them.
  const ownInside = new Set(run.own.filter((d) => isInside(at, d)).map((d) => trimSep(restOf(at, d))))
  try {
    // Both exclusion rules are per name, and the walk never enters an excluded folder: each
    // entry's own name is all that is left to judge (one short test per file, not the path).
    for (const e of await walkTree(
      scope,
      run.signal,
      {
        skip: (r) => excluded(lastName(r)) || (ownInside.size > 0 && ownInside.has(platformRel(r))),
        live: true,
        unreadable: (rel, code) => unreadable(run, w, at, rel, code),
        undecodable: (dir, shown) => notUtf8(w, at, dir, shown),
      },
      recordOf(run, scope, at),
    ))
      run.disk.push(e)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      // An event's path with U+FFFD names nothing when the bytes of the name were not UTF-8:
      // its folder is looked at instead, where the name is found and said.
      const parent = parentFolder(scope)
      if (baseName(scope).includes('\uFFFD') && below(device.path, parent) !== undefined && !w.walked.has(parent)) {
        run.scopes.push(parent)
        return walkScope(run, w, parent)
      }
      return void w.missing.push(scope) // gone: reconcile sees it missing
    }
    throw error
  }
  run.progress({ files_total: run.filesFound() })
}

/**
 * Each record is made as the walk lstats the entry (no Entry first); folders end in a
 * separator. The walk joins names with '/': the paths recorded are in the platform's spelling.
 */
function recordOf(run: ScanRun, scope: string, at: string) {
  return (rel: string, st: StatFields, kind: Entry['kind']): DiskEntry | undefined => {
    if (kind !== 'file' && kind !== 'dir') return undefined
    const path = rel ? at + platformRel(rel) : kind === 'dir' ? at : scope
    const full = kind === 'dir' && rel ? path + SEP : path
    return {
      path: full,
      device: run.deviceOf(full),
      kind,
      dev: st.dev,
      ino: st.ino,
      stamp: stampOf(st),
      size: st.size,
      mtimeMs: st.mtimeMs,
      nlink: st.nlink,
    }
  }
}

function unreadable(run: ScanRun, w: Walked, at: string, rel: string, code: string) {
  const path = rel ? at + platformRel(rel) + SEP : at
  if (w.unreadKeys.has(path.slice(0, -1))) return
  w.unreadKeys.add(path.slice(0, -1))
  w.unread.push({ path, reason: code === 'EACCES' ? 'permission denied (EACCES)' : `not permitted (${code})` })
  run.deps.log.warn('a folder cannot be read; the scan left it out, and what is inside keeps its state', {
    path,
    code,
  })
}

function notUtf8(w: Walked, at: string, dir: string, shown: string) {
  const folder = dir ? at + platformRel(dir) + SEP : at
  const names = w.undecodable.get(folder)
  if (names) names.push(shown)
  else w.undecodable.set(folder, [shown])
}

/**
 * A scope that vanished and was seen before as a folder may have been renamed beside itself
 * between the watcher's hint that named it and this scan (a save inside x, then mv x y): its
 * parent's folders are looked at (one listing, an lstat per folder), and the one with its
 * identity is walked too, so that what was inside is followed, not taken offline. The other
 * way round (a folder of this scan seen before under another name) is in walk() after this.
 */
async function followVanished(run: ScanRun, w: Walked) {
  const { device } = run
  const seenBefore = run.deps.recent.sightings(Date.now())
  for (const gone of [...w.missing]) {
    const bare = trimSep(gone)
    const seen = seenBefore.get(bare)
    const parent = parentFolder(bare)
    if (seen?.kind !== 'dir' || !(parent === device.path || isInside(device.path, parent))) continue
    const names = await readdir(parent, { withFileTypes: true }).catch(() => [])
    for (const d of names) {
      if (!d.isDirectory() || excluded(d.name)) continue
      const st = await lstat(parent + d.name).catch(() => undefined)
      if (!st?.isDirectory() || st.dev !== seen.dev || st.ino !== seen.ino || stampOf(st) !== seen.stamp) continue
      const now = parent + d.name + SEP
      if (!w.walked.has(now)) {
        run.scopes.push(now)
        await walkScope(run, w, now)
      }
      break
    }
  }
}
