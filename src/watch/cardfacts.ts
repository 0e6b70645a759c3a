// A clip's facts from its card (docs/cards.md), as the asset keeps them in technical.card: the
// format, the card's folder, the clip, its files within the card, and what its metadata file says
// (read here: the first 256 KiB of a small text file, never through a link). The scan's ingest phase
// and an import by path both ask.
import { readSync } from 'node:fs'
import { AT_FDCWD, DIR_FLAGS, O, cName, close, openat, statNumbersOf } from '../storage/dirfd.ts'
import { lastName, trimSep } from '../storage/paths.ts'
import { CARD_FORMATS, type Card, type CardClip, readSidecar, reelOfClip } from './cards.ts'

/** The most of a sidecar read (an NRT XML is a few KiB). */
const SIDECAR_BYTES = 256 * 1024

/**
 * technical.card of a clip (docs/cards.md): the format, the card's folder name, the clip, its essence
 * and other files within the card, and what its metadata file says (timecode, rates, camera, lens,
 * reel, recording date). `rootPath` is the card's folder (absolute), where the sidecar is read.
 */
export function cardFacts(card: Card, clip: CardClip, rootPath: string): Record<string, unknown> {
  const facts = clip.sidecar ? readSidecar(card.format, readText(rootPath, clip.sidecar)) : {}
  const reel = facts.reel ?? reelOfClip(clip.name)
  const folder = lastName(trimSep(rootPath))
  // The clip's files, not each frame of a sequence (counted): a DNG clip has thousands.
  const files = clip.frames ? clip.files.filter((f) => !/\.(ari|arx|dng)$/i.test(f)) : clip.files
  return {
    format: card.format,
    format_name: CARD_FORMATS[card.format],
    ...(folder ? { card_folder: folder } : {}),
    clip: clip.name,
    essence: clip.essence,
    files: files.slice(0, 200),
    ...(clip.segments ? { segments: clip.segments + 1 } : {}),
    ...(clip.frames ? { frames: clip.frames + 1 } : {}),
    ...(clip.raw ? { raw: true } : {}),
    ...(clip.sidecar ? { sidecar: clip.sidecar } : {}),
    ...facts,
    ...(reel ? { reel } : {}),
  }
}

/**
 * A small text file's text (its first SIDECAR_BYTES), '' when it cannot be read: `rel` ('/'
 * between names) below the card root, reached from the root's descriptor one name at a time
 * without following a link, so a sidecar folder swapped for a link is not read.
 */
function readText(rootPath: string, rel: string): string {
  const parts = rel.split('/').filter(Boolean)
  if (!parts.length) return ''
  let dir = openat(AT_FDCWD, cName(trimSep(rootPath)), DIR_FLAGS)
  for (const part of parts.slice(0, -1)) {
    if (dir < 0) return ''
    const next = openat(dir, cName(part), DIR_FLAGS)
    close(dir)
    dir = next
  }
  if (dir < 0) return ''
  const fd = openat(dir, cName(parts.at(-1)!), O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
  close(dir)
  if (fd < 0) return ''
  try {
    if (!statNumbersOf(fd).isFile()) return ''
    const buffer = Buffer.alloc(SIDECAR_BYTES)
    let n = 0
    for (let got = 1; got > 0 && n < buffer.length; n += got) got = readSync(fd, buffer, n, buffer.length - n, n)
    return buffer.subarray(0, n).toString('utf8')
  } catch {
    return ''
  } finally {
    close(fd)
  }
}
