// Camera cards in a scan (docs/cards.md): a card is one unit. The walk of a folder inside a card is
// widened to the whole card (widenToCards), so that its clips are judged with all their files; the
// ingest phase takes the new files that lie in cards apart from the others (cardClips): a card is
// imported once the whole card has settled (settledCards: no file of it changed for the settle time,
// none open for writing), one asset per clip (its essence, named after the clip, with the card's facts), and
// the other files of the card are no asset. With the production's move_uploads, the card is moved
// whole: a folder is made for it in the production's area (named after the card's folder; `_1`,
// `_2` on that folder when the name is taken: finishCard), and each clip's import moves its files
// there under their own names and relative places, one of them the card's own files too.
import { lstatSync } from 'node:fs'
import type { Work } from '../../db/port.ts'
import type { CardImport } from '../../modules/assetimport/cards.ts'
import { MHL_FOLDER } from '../../storage/mhl.ts'
import { claimFolder } from '../../storage/file.ts'
import { openForWriting } from '../../storage/writers.ts'
import {
  SEP,
  asFolder,
  below,
  isInside,
  lastName,
  platformRel,
  relParts,
  restOf,
  samePath,
  trimSep,
} from '../../storage/paths.ts'
import { cardFacts } from '../cardfacts.ts'
import { CARD_FORMATS, type Card, type CardClip, cardFile, cardsIn, mayBeCard } from '../cards.ts'
import type { IngestCandidate } from '../reconcile.ts'
import { movesUpload } from './owner.ts'
import type { ScanRun } from './run.ts'

/**
 * What the card steps read of a scan: the run, every device's root (gather's `roots`), and when it
 * decided (decide's `now`). Spelled out rather than picked from those phases' types: walk.ts uses
 * this module, and the phases after it use walk.ts, so naming them here would make a circle.
 */
type Run = ScanRun & { roots: ReadonlyMap<number, string>; now: number }

/** A production as the ingest phase reads it. */
export type Upload = {
  id: number
  name: string
  codename: string
  storage_root: string
  proxy_root: string
  upload_root: string | null
  upload_device: number
  videoasset_device: number
  move_uploads: boolean
  ignore_patterns: string[]
}

/** A new file to import: the file, and for a card's clip its name and card. */
export type Candidate = { file: IngestCandidate; name?: string; card?: CardImport }

/** The card root (absolute, final separator) that a path of the scan (a file or a folder) lies in, if any. */
export function cardRootOf(devicePath: string, path: string): string | undefined {
  if (!mayBeCard(path)) return undefined
  const rel = below(devicePath, path)
  if (rel === undefined) return undefined
  const names = relParts(rel)
  if (!names.length) return undefined
  // The path as a file, as a folder (a file inside it), or a card's marker folder itself.
  const found = cardFile(names) ?? cardFile([...names, '_'])
  if (found) return asFolder(devicePath + names.slice(0, found.rootDepth).join(SEP))
  const last = names.at(-1)!.toUpperCase()
  if (['PRIVATE', 'XDROOT', 'CONTENTS'].includes(last) || last.endsWith('.RDM') || last.endsWith('.RDC'))
    return asFolder(devicePath + names.slice(0, -1).join(SEP))
  return undefined
}

/**
 * A scan of paths inside a camera card walks the whole card instead (never the whole device: a card
 * whose root is the device's own root is left to its full scans).
 */
export function widenToCards(run: ScanRun) {
  const { device, scopes } = run
  let widened = false
  const next: string[] = []
  for (const scope of scopes) {
    const root = cardRootOf(device.path, scope)
    if (root === undefined || samePath(root, asFolder(device.path))) next.push(scope)
    else {
      next.push(root)
      widened = true
    }
  }
  if (!widened) return
  // Each folder once, and none inside another scope (it would be walked twice).
  const unique = [...new Set(next)]
  const kept = unique.filter((s) => !unique.some((o) => o !== s && isInside(asFolder(o), s)))
  scopes.splice(0, scopes.length, ...kept)
}

/** `path` is the folder `folder` or lies inside it. */
const within = (folder: string, path: string) => isInside(folder, path) || samePath(asFolder(folder), asFolder(path))

/**
 * The productions' folders (storage_root, proxy_root, upload_root) that lie in the folder `root` (or
 * are it), but the drop folder of a production in `dropped` that is the root itself (a card dropped
 * straight into its production's drop folder lies there, as it should).
 */
function areasIn(
  uploads: ReadonlyMap<number, Upload>,
  root: string,
  dropped: ReadonlySet<number> = new Set(),
): string[] {
  const out: string[] = []
  for (const p of uploads.values())
    for (const area of [p.storage_root, p.proxy_root, p.upload_root]) {
      if (!area || !within(root, area)) continue
      if (area === p.upload_root && dropped.has(p.id) && samePath(asFolder(area), asFolder(root))) continue
      out.push(area)
    }
  return out
}

/**
 * Whether a card at `root` has a folder of its own: one strictly inside the watch folder of the
 * production `file` goes to (its drop folder, or its whole upload device), not the watch folder
 * itself, and holding no production's storage_root, proxy_root or upload_root (a folder of the
 * share with a .braw dropped beside a production's folders is no card's folder). Only then are the
 * card folder's loose files the card's, and the folder moved as it is.
 */
function ownFolder(run: Run, uploads: ReadonlyMap<number, Upload>, file: IngestCandidate, root: string): boolean {
  const p = uploads.get(file.production)
  const watchRoot =
    p?.upload_root != null && isInside(p.upload_root, file.path) ? p.upload_root : run.roots.get(p?.upload_device ?? -1)
  if (watchRoot === undefined || !isInside(watchRoot, root) || samePath(asFolder(watchRoot), asFolder(root)))
    return false
  return areasIn(uploads, root).length === 0
}

/**
 * The new files of the scan apart: those of cards (by card root) and the others. A file of a card's
 * layout is the card's; a file in a card's folder outside its layout (a photo of DCIM, a checksum
 * list) goes with the card when the card has a folder of its own (ownFolder), else it is any file;
 * the card's listing (clipsOf) gives back those it does not take. The card roots are those of every
 * file the scan found (a card's metadata is no candidate).
 */
export function sortOutCards(run: Run, candidates: readonly IngestCandidate[], uploads: ReadonlyMap<number, Upload>) {
  const plain: IngestCandidate[] = []
  const cards = new Map<string, IngestCandidate[]>()
  if (!candidates.length) return { plain, cards }
  const roots = new Set<string>()
  for (const e of run.disk) {
    if (e.kind !== 'file') continue
    const root = cardRootOf(run.device.path, e.path)
    if (root !== undefined) roots.add(trimSep(root))
  }
  const add = (root: string, c: IngestCandidate) => {
    const list = cards.get(root)
    if (list) list.push(c)
    else cards.set(root, [c])
  }
  for (const c of candidates) {
    const root = cardRootOf(run.device.path, c.path)
    if (root !== undefined) {
      add(root, c)
      continue
    }
    // The deepest card root above it, if any.
    let above: string | undefined
    for (let k = trimSep(c.path), at = k.lastIndexOf(SEP); at > 0 && above === undefined; at = k.lastIndexOf(SEP)) {
      k = k.slice(0, at)
      if (roots.has(k)) above = asFolder(k)
    }
    if (above !== undefined && ownFolder(run, uploads, c, above)) add(above, c)
    else plain.push(c)
  }
  return { plain, cards }
}

/**
 * The files the scan found under each card root, relative to it ('/' between names), with their
 * size and modification time (the card's settling) and path (its writers). One pass over the walk.
 */
function filesOfCards(run: ScanRun, roots: ReadonlySet<string>) {
  const out = new Map<string, { rel: string; path: string; size: number; mtimeMs: number }[]>()
  for (const r of roots) out.set(r, [])
  const keys = new Map([...roots].map((r) => [trimSep(r), r]))
  for (const e of run.disk) {
    if (e.kind !== 'file') continue
    for (let k = trimSep(e.path); ; ) {
      const at = k.lastIndexOf(SEP)
      if (at <= 0) break
      k = k.slice(0, at)
      const root = keys.get(k)
      if (root === undefined) continue
      out
        .get(root)!
        .push({ rel: relParts(restOf(root, e.path)).join('/'), path: e.path, size: e.size, mtimeMs: e.mtimeMs })
      break
    }
  }
  return out
}

/** A number that changes when any file of the card is added, removed, grows or is written. */
function signature(files: readonly { rel: string; size: number; mtimeMs: number }[]): number {
  const text = files
    .map((f) => `${f.rel}\0${f.size}\0${f.mtimeMs}`)
    .sort()
    .join('\n')
  return Number(Bun.hash.wyhash(text) & 0xfffffffffffffn)
}

export type CardDeps = {
  uploads: ReadonlyMap<number, Upload>
  /**
   * What a candidate is now: `new` (to import), `catalogued` (an asset has the path by now), or
   * `unwanted` (an asset's proxy, an asset a user deleted, a path the production's patterns ignore).
   */
  state(file: IngestCandidate): Work<'new' | 'catalogued' | 'unwanted'>
  /** An asset has this path (any file of the card, a candidate or not): a card's move never takes it. */
  catalogued(path: string): Work<boolean>
  /** Imports are open (every device's start scan has run). */
  open: boolean
}

/** A settled card's clips to import, before its move is decided (finishCard). */
export type SettledCard = {
  root: string
  clips: { file: IngestCandidate; name: string; card: Card; clip?: CardClip; files: string[] }[]
  /** Files no clip imported now takes along: the card's own, clips not imported, loose files. */
  rest: string[]
  /** A clip of the card is catalogued already: the card is not moved. */
  catalogued: boolean
  /** The card has a folder of its own inside its watch folder. */
  own: boolean
}

/**
 * The settled cards, with their clips to import; the cards still settling (or held open by a writer)
 * go to `waiting` (their root, looked at again after the settle time). The candidates a card does
 * not take (files in its folder outside its layout that are not its own, all of a root where no
 * clip is new) go to `plain`, imported as any file. Work run outside any transaction: it lists the
 * cards' files on disk, and reads what the catalogue says of each file as it looks at it.
 */
export function* settledCards(
  run: Run,
  groups: ReadonlyMap<string, readonly IngestCandidate[]>,
  deps: CardDeps,
  waiting: string[],
  plain: IngestCandidate[],
): Work<SettledCard[]> {
  if (!groups.size) return []
  const out: SettledCard[] = []
  const files = filesOfCards(run, new Set(groups.keys()))
  for (const [root, candidates] of groups) {
    const listed = files.get(root) ?? []
    const cards = cardsAt(root, listed)
    // Nothing of it to import (its clips catalogued; what is new is no clip's essence, as the further
    // frames of a sequence): no wait either, or a card of frames would be looked at again forever.
    // Its other candidates are any files.
    const settled = yield* clipsOf(run, root, cards, candidates, deps, plain)
    if (!settled) continue
    const total = listed.reduce((n, f) => n + f.size, 0)
    const state = run.deps.settle.observe(root, { size: total + 1, mtimeMs: signature(listed) }, run.now)
    if (state !== 'settled' || !deps.open || openForWriting(new Set(listed.map((f) => f.path))).size) {
      waiting.push(root)
      continue
    }
    run.deps.settle.forget(root)
    out.push(settled)
  }
  return out
}

/**
 * The cards whose root is `root`, from the files under it. Listed with the root's own name in front:
 * an ARRI card's root is its reel folder, which only its name tells.
 */
function cardsAt(root: string, listed: readonly { rel: string }[]): Card[] {
  const name = lastName(trimSep(root))
  const own = name ? `${name}/` : ''
  return cardsIn(listed.map((f) => own + f.rel))
    .cards.filter((c) => c.root.toUpperCase() === own.toUpperCase())
    .map((c) => ({ ...c, root: '' }))
}

/**
 * One card root's clips to import, or undefined when none is new. A card's move takes only what is
 * its own: its layout's files and, for a card with a folder of its own, the loose files that are no
 * asset (a checksum list) and the new ones imported with it; never a catalogued file, never a file
 * in a production's folder. The candidates it does not take go to `plain`.
 */
function* clipsOf(
  run: Run,
  root: string,
  cards: readonly Card[],
  candidates: readonly IngestCandidate[],
  deps: CardDeps,
  plain: IngestCandidate[],
): Work<SettledCard | undefined> {
  const byPath = new Map(candidates.map((c) => [c.path, c]))
  const abs = (rel: string) => root + platformRel(rel)
  const areas = areasIn(deps.uploads, root, new Set(candidates.map((c) => c.production)))
  // A file the card may move: no asset's, in no production's folder.
  function* movable(rel: string): Work<boolean> {
    const path = abs(rel)
    return !areas.some((area) => within(area, path)) && !(yield* deps.catalogued(path))
  }
  /** Those of `rels` the card may move. */
  function* movableOf(rels: readonly string[]): Work<string[]> {
    const out: string[] = []
    for (const rel of rels) if (yield* movable(rel)) out.push(rel)
    return out
  }
  const clips: SettledCard['clips'] = []
  const rest: string[] = []
  /** The candidates the card's layout holds (clips' files, its own): never any file's import. */
  const layout = new Set<string>()
  /** Candidates that are the card's own files and no clip's: no asset, said once. */
  const unclipped: string[] = []
  let catalogued = false
  for (const card of cards) {
    for (const rel of card.other) {
      layout.add(abs(rel))
      if (byPath.has(abs(rel))) unclipped.push(abs(rel))
    }
    rest.push(...(yield* movableOf(card.other)))
    for (const clip of card.clips) {
      for (const rel of [clip.essence, ...clip.files]) layout.add(abs(rel))
      const file = byPath.get(abs(clip.essence))
      const state = file ? yield* deps.state(file) : 'catalogued' // not a new file of a watch folder: an asset has it
      if (file && state === 'new')
        clips.push({ file, name: clip.name, card, clip, files: yield* movableOf(clip.files) })
      else {
        if (state === 'catalogued') catalogued = true
        rest.push(...(yield* movableOf([...clip.files, clip.essence])))
      }
    }
  }
  if (unclipped.length)
    run.deps.log.info("files of a camera card are not imported: they are the card's own, no clip's essence", {
      card: root,
      count: unclipped.length,
      path: unclipped[0]!,
    })
  const taken = new Set<string>()
  const back = () => {
    for (const c of candidates) if (!layout.has(c.path) && !taken.has(c.path)) plain.push(c)
  }
  if (!clips.length) {
    back()
    return undefined
  }
  const first = clips[0]!
  for (const c of clips) taken.add(c.file.path)
  // A card with a folder of its own: its loose files are its own (a wrangler's checksum list, photos
  // in DCIM: those of a media type and of the card's production are imported beside the clips, and
  // move with the card). Any other candidate there is any file.
  const own = ownFolder(run, deps.uploads, first.file, root)
  if (own)
    for (const card of cards)
      for (const rel of card.loose) {
        const file = byPath.get(abs(rel))
        if (!file) {
          if (yield* movable(rel)) rest.push(rel)
        } else if (
          file.production === first.file.production &&
          (yield* deps.state(file)) === 'new' &&
          (yield* movable(rel))
        ) {
          clips.push({ file, name: lastName(rel, '/').replace(/\.[^.]+$/, ''), card, files: [] })
          taken.add(file.path)
        }
      }
  back()
  return { root, clips, rest, catalogued, own }
}

/**
 * The card's imports (finishCard), once its clips are not held: with the production's move_uploads,
 * a folder made for it in the production's area, and each clip's part of the move.
 */
export function finishCard(
  run: Run,
  settled: SettledCard,
  uploads: ReadonlyMap<number, Upload>,
  /** Where a production's moved cards go: the device (id and root) and the folder the card's folder is made in. */
  placeOf: (production: Upload) => { device: number; root: string; parent: string } | undefined,
): Candidate[] {
  const { root, clips, rest, catalogued, own } = settled
  const first = clips[0]!
  const production = uploads.get(first.file.production)
  run.deps.log.info('a camera card: its clips are imported, one asset each', {
    card: root,
    format: [...new Set(clips.map((c) => CARD_FORMATS[c.card.format]))].join(', '),
    clips: clips.length,
  })
  // Moved whole, or not at all: a card some of whose clips are catalogued already stays where it is.
  const moving =
    production !== undefined &&
    !catalogued &&
    clips.every((t) => t.file.production === production.id) &&
    movesUpload(production, first.file.path)
  let to: string | undefined
  let device: number | undefined
  // Whether the card came with an ASC MHL history of its own (a DIT tool's offload): decided once,
  // here, for all its clips' imports; such a card keeps its history as it came (import.task.ts).
  const arrivedWithHistory = moving && lstatSync(root + MHL_FOLDER, { throwIfNoEntry: false }) !== undefined
  if (moving) {
    const place = placeOf(production)
    if (place !== undefined) {
      const name = own ? lastName(trimSep(root)) : first.name
      try {
        to = claimFolder(place.root, place.parent, name)
        device = place.device
      } catch (error) {
        run.deps.log.warn('a camera card could not be given its folder; it is imported where it lies', {
          card: root,
          folder: place.parent + name,
          error: String(error),
        })
      }
    }
  }
  return clips.map((t, i) => {
    const facts = t.clip ? cardFacts(t.card, t.clip, root) : undefined
    // The clip's files, then (the first clip's import) the card's own, its essence last.
    const moved = [...t.files, ...(i === 0 ? rest : [])].map((rel) => platformRel(rel))
    const essence = relParts(restOf(root, t.file.path)).join(SEP)
    const card: CardImport = {
      format: t.card.format,
      ...(facts ? { facts } : {}),
      ...(to !== undefined && device !== undefined
        ? { move: { device, from: root, to, files: [...moved, essence], own, arrivedWithHistory } }
        : {}),
    }
    return { file: t.file, name: t.name, card }
  })
}
