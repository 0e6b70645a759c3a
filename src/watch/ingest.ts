// The watch folder's rules (docs/watcher.md), pure: which names are media and of which kind, which
// names are skipped, and when a file that appeared has stopped growing. No disk, no clock: the
// caller passes what it saw and when.
//
// Paths here are relative to the device root ('clips/a.mov'; 'clips\a.mov' too on Windows, where
// both separate names, as storage/paths.ts splitRel has it), so a device that happens to live under
// a folder named like clutter is still watched.
//
// Choices where the contract is silent:
// - Names compare case-insensitively (extensions, `.DS_Store`, `._*`, `.part`, `.tmp`, clutter
//   folders): NAS shares are written from macOS and Windows, whose file systems ignore case.
//   The work names `.reelhouse-*` follow storage/paths.ts WORK_FOLDER exactly (case-sensitive
//   on Linux, not on macOS and Windows), so the watcher ignores what the API reserves, no more.
// - Excluded (the watcher does not descend, reconcile does not look): Synology, QNAP, macOS,
//   Windows and NAS-snapshot clutter, and our own work names. Snapshots (`#snapshot`,
//   `.snapshot`) are there because they show the same files again, which would be imported a
//   second time. Hidden names are NOT excluded, only skipped for import: an asset catalogued
//   through the API may live in a hidden folder and must stay online.
// - An empty file does not settle: copy tools create the file first and fill it afterwards, and
//   a zero-byte clip is never worth an import. It stays pending until it grows or is forgotten.
import type { MediaKind } from '../db/schema.ts'
import { type PathRules, SEP, WORK_FOLDER, lastName, sepPattern } from '../storage/paths.ts'

/** Extension (lower case, no dot) per kind, as docs/watcher.md lists them. */
export const EXTENSIONS: { readonly [K in MediaKind]: readonly string[] } = {
  video: ['mov', 'mp4', 'mxf', 'm4v', 'avi', 'mkv', 'mts'],
  audio: ['wav', 'aif', 'aiff', 'mp3', 'm4a', 'flac'],
  image: ['jpg', 'jpeg', 'png', 'tif', 'tiff', 'exr', 'dpx', 'psd'],
}

const KIND_BY_EXTENSION = new Map<string, MediaKind>(
  (Object.keys(EXTENSIONS) as MediaKind[]).flatMap((kind) => EXTENSIONS[kind].map((ext) => [ext, kind] as const)),
)

/** Folder names never descended into, lower case. */
export const CLUTTER: readonly string[] = [
  '@eadir',
  '#recycle',
  '#snapshot', // Synology: thumbnails, recycle bin, snapshots
  '@recycle',
  '.@__thumb', // QNAP
  '.spotlight-v100',
  '.trashes',
  '.fseventsd',
  '.temporaryitems',
  '.appledouble', // macOS
  '$recycle.bin',
  'system volume information', // Windows
  '.snapshot', // NetApp and others: read-only copies of the share
]
const CLUTTER_SET = new Set(CLUTTER)

/** The extension of `base` (one name), lower case, or '' (a leading dot alone is not one). */
function extensionOfName(base: string): string {
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : ''
}

/**
 * The name rules for relative paths written as `rules` write them (the separator, and how the
 * work names compare): this platform's below (`kindOf`, `excluded`, `skipped`); another
 * platform's for its tests.
 */
export function nameRules(rules: Pick<PathRules, 'sep' | 'workFolder'>) {
  const sep = rules.sep
  const separator = new RegExp(sepPattern(sep))
  const components = (relPath: string) => relPath.split(separator).filter((c) => c !== '')
  /** The extension of the last component, lower case, or ''. */
  const extensionOf = (name: string) => extensionOfName(lastName(name, sep))
  /** Any clutter name as a whole component: one test per path (a scan asks for every file and row). */
  const s = sepPattern(sep)
  const clutterComponent = new RegExp(
    `(^|${s})(${CLUTTER.map((c) => c.replace(/[.*+?^${}()|[\]\\$]/g, '\\$&')).join('|')})(${s}|$)`,
    'i',
  )

  function exclusion(relPath: string): string | undefined {
    if (rules.workFolder.test(relPath)) return 'a Reelhouse work name (.reelhouse-*)'
    if (!clutterComponent.test(relPath)) return undefined
    for (const c of components(relPath)) if (CLUTTER_SET.has(c.toLowerCase())) return `inside ${c}`
    return undefined
  }

  return {
    /** The media kind a file name's extension says, case-insensitively; undefined when it says none. */
    kindOf(name: string): MediaKind | undefined {
      return KIND_BY_EXTENSION.get(extensionOf(name))
    },

    /**
     * True when the path is clutter or one of Reelhouse's own work names, anywhere along it: the
     * watcher does not descend there and the scan does not judge anything inside.
     */
    excluded(relPath: string): boolean {
      return exclusion(relPath) !== undefined
    },

    /**
     * Why a file that appeared in a watch folder is not imported (for the log), or undefined when
     * it is a candidate. `relPath` is relative to the device root.
     */
    skipped(relPath: string): string | undefined {
      const excludedBecause = exclusion(relPath)
      if (excludedBecause) return excludedBecause
      const parts = components(relPath)
      const name = parts.at(-1)
      if (name === undefined) return 'not a file'
      const lower = name.toLowerCase()
      if (lower.startsWith('._')) return 'an AppleDouble file (._*)'
      if (lower === '.ds_store') return 'a .DS_Store file'
      const hidden = parts.findIndex((c) => c.startsWith('.'))
      if (hidden >= 0) return hidden === parts.length - 1 ? 'hidden' : `inside the hidden folder ${parts[hidden]}`
      if (lower.endsWith('.part')) return 'still being transferred (.part)'
      if (lower.endsWith('.tmp')) return 'a temporary file (.tmp)'
      const ext = extensionOfName(name)
      if (!KIND_BY_EXTENSION.has(ext)) return ext ? `the extension .${ext} is not a media type` : 'no extension'
      return undefined
    },
  }
}

/** The name rules of the platform the service runs on. */
const PLATFORM_NAMES = nameRules({ sep: SEP, workFolder: WORK_FOLDER })

/** The media kind a file name's extension says, case-insensitively; undefined when it says none. */
export const kindOf = PLATFORM_NAMES.kindOf

/**
 * True when the path is clutter or one of Reelhouse's own work names, anywhere along it: the
 * watcher does not descend there and the scan does not judge anything inside.
 */
export const excluded = PLATFORM_NAMES.excluded

/**
 * Why a file that appeared in a watch folder is not imported (for the log), or undefined when
 * it is a candidate. `relPath` is relative to the device root.
 */
export const skipped = PLATFORM_NAMES.skipped

export type SettleStat = { size: number; mtimeMs: number }
export type SettleState = 'settled' | 'waiting'

export type Settle = {
  /**
   * Records what the file looks like at `now`. 'settled' when the same size and mtime were
   * first seen at least settleMs ago; the first observation, and any change, waits.
   */
  observe(path: string, stat: SettleStat, now: number): SettleState
  /** Drops a path (imported, skipped, or gone). */
  forget(path: string): void
  /** Paths observed and not settled yet, oldest first: the ones a scan or a timer re-checks. */
  pending(): string[]
  /** The earliest time a pending path could settle if it stays as it is, or undefined. */
  nextCheck(): number | undefined
}

/** The settle gate: a file is imported only once it has stopped growing (docs/watcher.md). */
export function createSettle(settleMs = 2000): Settle {
  const seen = new Map<string, { size: number; mtimeMs: number; since: number; settled: boolean }>()
  return {
    observe(path, { size, mtimeMs }, now) {
      const last = seen.get(path)
      if (!last || last.size !== size || last.mtimeMs !== mtimeMs) {
        // Re-inserted, so pending() stays in order of the last change.
        seen.delete(path)
        seen.set(path, { size, mtimeMs, since: now, settled: false })
        return 'waiting'
      }
      last.settled = size > 0 && now - last.since >= settleMs
      return last.settled ? 'settled' : 'waiting'
    },
    forget(path) {
      seen.delete(path)
    },
    pending() {
      return [...seen].filter(([, s]) => !s.settled).map(([path]) => path)
    },
    nextCheck() {
      let next: number | undefined
      for (const s of seen.values()) {
        if (s.settled || s.size === 0) continue
        const at = s.since + settleMs
        if (next === undefined || at < next) next = at
      }
      return next
    },
  }
}
