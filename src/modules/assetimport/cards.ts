// Camera cards at import (docs/cards.md): which clip of which card a file is, read from the disk
// around it, and the facts its card gives the asset (technical.card). The watcher's scan has the
// card's listing from its walk and passes what it found (CardImport); an import by path lists the
// card's own folders here.
import {
  AT_FDCWD,
  DIR_FLAGS,
  DT,
  O,
  cName,
  close,
  listDir,
  nameText,
  openat,
  statNumbersOf,
} from '../../storage/dirfd.ts'
import { SEP, asFolder, platformRel, relParts, trimSep } from '../../storage/paths.ts'
import { cardFacts } from '../../watch/cardfacts.ts'
import { CARD_FORMATS, type CardFile, type CardFormat, cardFile, cardsIn } from '../../watch/cards.ts'
import { excluded } from '../../watch/ingest.ts'

/** A clip of a camera card, as an import takes it: the asset's facts, and (watcher, move_uploads) the card's move. */
export type CardImport = {
  format: CardFormat
  /** What the asset keeps in technical.card (none for a loose file of a card: a photo in DCIM). */
  facts?: Record<string, unknown>
  /**
   * The part of the card the import moves with its clip (params.move.card): `device`, the device
   * the card's new folder `to` lies on; `arrivedWithHistory`, the card came with an ASC MHL history
   * of its own (decided once for all its clips when its imports were registered).
   */
  move?: { device: number; from: string; to: string; files: string[]; own: boolean; arrivedWithHistory?: boolean }
}

/**
 * A file of a card that is not a clip's essence: why (for the import's 406), and the clip's essence
 * when it belongs to one.
 */
export type NotAClip = { reason: string; essence?: string }

/**
 * What the card `path` lies in says of it, read from the disk: its clip (with the facts), or why it
 * is no clip's essence; undefined when it lies in no card's layout. `names` are the path's names
 * from `devicePath`, its device's root.
 */
export function cardAtImport(devicePath: string, names: readonly string[]): CardImport | NotAClip | undefined {
  const found = cardFile(names)
  if (!found) return undefined
  const root = names.slice(0, found.rootDepth)
  const rootPath = asFolder(devicePath + root.join(SEP))
  // Listed with the root's own name in front: an ARRI card's root is its reel folder, which only its name tells.
  const own = root.length ? `${root.at(-1)}/` : ''
  const listing = cardsIn(listLayout(rootPath, names.slice(found.rootDepth), found).map((p) => own + p))
  const rel = own + names.slice(found.rootDepth).join('/')
  const at = listing.files.get(rel)
  const format = CARD_FORMATS[found.format]
  if (!at) return { reason: `a file of a ${format} card` }
  if (at.reason)
    return {
      reason: `part of a ${format} card: ${at.reason}`,
      ...(at.clip ? { essence: rootPath + platformRel(at.clip.essence) } : {}),
    }
  return { format: found.format, facts: cardFacts(at.card, at.clip!, rootPath) }
}

/**
 * The files of the card's layout around `rest` (the path from the card root), relative to the root
 * ('/' between names): the marker folder's tree (PRIVATE/M4ROOT, XDROOT, CONTENTS, the .RDM), the
 * reel folder (ARRI), the folder of the clips and one level below it (Blackmagic). Not the whole
 * root: a card whose root is a device's root would list the device.
 */
function listLayout(rootPath: string, rest: readonly string[], found: CardFile): string[] {
  const layout =
    found.format === 'xavc' || found.format === 'avchd'
      ? rest.slice(0, 2)
      : found.format === 'arri' || found.format === 'blackmagic'
        ? []
        : rest.slice(0, 1)
  const depth = found.format === 'blackmagic' ? 2 : 16
  const out: string[] = []
  // Read from the card root's descriptor down, one name at a time without following a link
  // (DIR_FLAGS): a layout folder swapped for a link to another production's card is not listed.
  const walk = (fd: number, prefix: string, level: number) => {
    const entries = listDir(fd)
    if (typeof entries === 'number') return
    for (const e of entries) {
      const name = nameText(e.name)
      if (excluded(name)) continue
      let type = e.type
      let sub = -1
      if (type === DT.UNKNOWN || type === DT.DIR) {
        sub = level < depth ? openat(fd, e.name, DIR_FLAGS) : -1
        if (type === DT.UNKNOWN) type = sub >= 0 ? DT.DIR : regularAt(fd, e.name) ? DT.REG : DT.LNK
      }
      if (type === DT.REG) out.push(prefix + name)
      if (sub >= 0)
        try {
          walk(sub, `${prefix}${name}/`, level + 1)
        } finally {
          close(sub)
        }
    }
  }
  let fd = openat(AT_FDCWD, cName(trimSep(rootPath)), DIR_FLAGS)
  for (const part of layout) {
    if (fd < 0) return out
    const next = openat(fd, cName(part), DIR_FLAGS)
    close(fd)
    fd = next
  }
  if (fd < 0) return out
  try {
    walk(fd, layout.length ? `${layout.join('/')}/` : '', 0)
  } finally {
    close(fd)
  }
  return out
}

/** Whether `name` in the open folder `dir` is a regular file (not a link, a folder or a device). */
function regularAt(dir: number, name: Buffer): boolean {
  const fd = openat(dir, name, O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
  if (fd < 0) return false
  try {
    return statNumbersOf(fd).isFile()
  } finally {
    close(fd)
  }
}

/** The names of `rel` (a path relative to a device root, the platform's separators). */
export const namesOf = (rel: string) => relParts(rel)
