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
// - Editing applications' caches and previews (APP_CACHES) are excluded like clutter, not only
//   skipped: they are the applications' own output, remade at will and rewritten at every render,
//   so watching them would cost a watch per folder and a scan per render for nothing. Their
//   database files (Avid's .pmr and .mdb, Windows' Thumbs.db, desktop.ini) are skipped wherever
//   they lie. docs/cards.md lists them for a data wrangler.
// - Camera cards (cards.ts): a file of a card that is not a clip's essence is skipped with its
//   reason (a proxy, a thumbnail, a further segment); an essence whose extension is a camera raw
//   one (R3D, ARRIRAW, BRAW, DNG) is video inside its card only. What only the card's whole listing
//   tells (which frame of a sequence is first) is the scan's (scan/cards.ts).
import type { MediaKind } from '../db/tables.ts'
import { type PathRules, SEP, WORK_FOLDER, lastName, sepPattern } from '../storage/paths.ts'
import { CARD_FORMATS, cardFile } from './cards.ts'

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

/**
 * Editing applications' cache and preview folders, lower case, with whose they are: never looked at,
 * never imported (docs/cards.md, Ignored files). Only names these applications make themselves;
 * folders an editor names (Exports, Renders) are the production's own ignore_patterns to name.
 */
export const APP_CACHES: { readonly [name: string]: string } = {
  'adobe premiere pro preview files': "Premiere Pro's render previews",
  'adobe premiere pro video previews': "Premiere Pro's render previews",
  'adobe premiere pro audio previews': "Premiere Pro's render previews",
  'adobe premiere pro auto-save': "Premiere Pro's auto-saved projects",
  'media cache files': "Premiere Pro's and After Effects' media cache",
  'media cache': "Premiere Pro's and After Effects' media cache",
  cacheclip: "DaVinci Resolve's render cache",
  proxymedia: "DaVinci Resolve's proxies",
  optimizedmedia: "DaVinci Resolve's optimized media",
  'avid mediafiles': "Avid's managed media (Avid MediaFiles)",
  'render files': "Final Cut Pro's renders",
  'audio render files': "Final Cut Pro's renders",
  'transcoded media': "Final Cut Pro's proxy and optimized media",
  'waveform cache files': "Final Cut Pro's waveform cache",
  'thumbnail cache files': "Final Cut Pro's thumbnail cache",
}
const APP_CACHE_NAMES = Object.keys(APP_CACHES)

/** File names (lower case) never imported, wherever they lie, and why. */
const NEVER_FILES: { readonly [name: string]: string } = {
  'thumbs.db': 'a Windows thumbnail cache (Thumbs.db)',
  'desktop.ini': 'a Windows folder setting (desktop.ini)',
}
/** Extensions (lower case) never imported, and why. */
const NEVER_EXTENSIONS: { readonly [ext: string]: string } = {
  pmr: 'an Avid media database (.pmr)',
  mdb: 'an Avid media database (.mdb)',
}

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
  const escaped = (names: readonly string[]) => names.map((c) => c.replace(/[.*+?^${}()|[\]\\$]/g, '\\$&')).join('|')
  const clutterComponent = new RegExp(`(^|${s})(${escaped(CLUTTER)}|${escaped(APP_CACHE_NAMES)})(${s}|$)`, 'i')

  function exclusion(relPath: string): string | undefined {
    if (rules.workFolder.test(relPath)) return 'a Reelhouse work name (.reelhouse-*)'
    if (!clutterComponent.test(relPath)) return undefined
    for (const c of components(relPath)) {
      const lower = c.toLowerCase()
      if (CLUTTER_SET.has(lower)) return `inside ${c}`
      const app = APP_CACHES[lower]
      if (app) return `inside ${c} (${app}: an editing application's own files are never imported)`
    }
    return undefined
  }

  /** Why a file of these names is never imported, wherever it comes from (watcher or import), or undefined. */
  function never(parts: readonly string[]): string | undefined {
    const name = parts.at(-1)
    if (name === undefined) return undefined
    const lower = name.toLowerCase()
    if (lower.startsWith('._')) return 'an AppleDouble file (._*)'
    if (lower === '.ds_store') return 'a .DS_Store file'
    return NEVER_FILES[lower] ?? NEVER_EXTENSIONS[extensionOfName(name)]
  }

  return {
    /**
     * The media kind a file name's extension says, case-insensitively; undefined when it says none.
     * A camera raw essence (an R3D, ARRIRAW or BRAW clip, a CinemaDNG frame) is video inside its card.
     */
    kindOf(name: string): MediaKind | undefined {
      const kind = KIND_BY_EXTENSION.get(extensionOf(name))
      if (kind !== undefined) return kind
      const card = cardFile(components(name))
      return card && (card.role === 'essence' || card.role === 'frame') ? card.kind : undefined
    },

    /**
     * Why a file is never imported, by the watcher or by POST /api/asset/import/: inside an editing
     * application's cache (or clutter, or a work name), an AppleDouble file, .DS_Store, Thumbs.db,
     * desktop.ini, an Avid database. Undefined otherwise. `relPath` is relative to the device root.
     */
    neverImported(relPath: string): string | undefined {
      return exclusion(relPath) ?? never(components(relPath))
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
      const neverBecause = never(parts)
      if (neverBecause) return neverBecause
      const hidden = parts.findIndex((c) => c.startsWith('.'))
      if (hidden >= 0) return hidden === parts.length - 1 ? 'hidden' : `inside the hidden folder ${parts[hidden]}`
      if (lower.endsWith('.part')) return 'still being transferred (.part)'
      if (lower.endsWith('.tmp')) return 'a temporary file (.tmp)'
      const card = cardFile(parts)
      if (card?.reason) return `part of a ${CARD_FORMATS[card.format]} card: ${card.reason}`
      if (card?.kind) return undefined // a clip's essence (or a frame of one: the scan takes the first)
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

/**
 * Why a file is never imported, by the watcher or by an import (an editing application's cache,
 * AppleDouble, .DS_Store, Thumbs.db, ...), or undefined. `relPath` is relative to the device root.
 */
export const neverImported = PLATFORM_NAMES.neverImported

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
