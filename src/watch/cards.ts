// Camera cards (docs/cards.md), pure: which card format a path lies in, by its marker folders, where
// the card's root is, and, from a listing of a card, its clips: for each clip the essence file that
// becomes the asset and the other files that belong to it (spanned segments, P2's audio MXFs, the
// metadata XML, thumbnails, proxies), and the card's files that belong to no clip. Also the reading
// of the clips' sidecar metadata (Sony's NRT XML, P2's clip XML) from their text. No disk: callers
// pass names and text.
//
// Paths are given as their names (`parts`, split by the caller's separator) or, for a listing, as
// relative paths joined with '/'. Names compare without case: cards are FAT or exFAT, and cameras
// write upper case where a copy made on a Mac or a NAS may not.
//
// Choices where the formats leave room (docs/cards.md says the same to a data wrangler):
// - The card root is the folder holding the marker folder (PRIVATE, XDROOT, CONTENTS, a RED `.RDM`,
//   or a `.RDC` found without its `.RDM`); for ARRI and Blackmagic, whose cards have no marker
//   folder, the folder holding the clips (an ARRI reel folder such as `A001R1AB`, the folder of
//   named `.braw` clips or of CinemaDNG clip folders). A card in a folder of its own (a wrangler's
//   `A001/`) has that folder as root.
// - Recognition is by layout and names only, never by content: an ARRI reel folder and Blackmagic
//   clips are recognised by the cameras' naming (`A001R1AB/A001C001_220101_R1AB.mxf`,
//   `A001_08251234_C001.braw`); a file there that follows no clip's naming is not called the card's.
//   An ARRI clip is its reel folder's only when its name gives that reel, a RED segment its .RDC's
//   only when named after it. Such a card has no folders of its own beyond its clips' (Proxy/, clip
//   folders): only the files beside its clips are loose, the other folders there are not the card's.
// - One asset per clip. A spanned clip (Canon XF `AA000101.MXF`, `AA000102.MXF`; XF-AVC `_01`, `_02`;
//   RED `_001.R3D`, `_002.R3D`) is one asset, its first segment; the cameras number the first 01 (001),
//   so a path alone says which segment is first (an XF-AVC MXF with no _NN is a clip of one segment,
//   its essence), and a clip whose first segment is missing has no asset (its other segments are
//   the card's files). An image sequence (ARRIRAW `.ari`, CinemaDNG)
//   is one asset, its lowest-numbered frame (only the listing knows which that is).
// - P2 keeps each clip's audio tracks in MXF files of their own: the VIDEO MXF is the asset, its AUDIO
//   MXFs, clip XML, icon, proxy and voice memo belong to it. A P2 clip spanned across cards (a clip
//   longer than a card) is one asset per card: the card holds no other part of it to join.
// - AVCHD: one asset per `.MTS` in STREAM; the playlists (`.MPL`), which may join MTS files of one
//   recording, are not read (a recording longer than a segment is several assets, each playable).
// - R3D, ARRIRAW, BRAW and DNG are video only inside their card: outside it, the segments of a clip
//   cannot be joined, nor the first frame told, and a lone file of them is not imported (`raw`
//   essences are not probed: ffprobe reads none of them).
import type { MediaKind } from '../db/tables.ts'

export type CardFormat = 'xavc' | 'xdcam' | 'p2' | 'avchd' | 'canon-xf' | 'red' | 'arri' | 'blackmagic'

/** Each format's name, as the log and docs/cards.md say it. */
export const CARD_FORMATS: { readonly [F in CardFormat]: string } = {
  xavc: 'Sony XAVC (PRIVATE/M4ROOT)',
  xdcam: 'Sony XDCAM/XAVC (XDROOT)',
  p2: 'Panasonic P2 (CONTENTS)',
  avchd: 'AVCHD (PRIVATE/AVCHD/BDMV)',
  'canon-xf': 'Canon XF (CONTENTS/CLIPS001)',
  red: 'RED (.RDM/.RDC)',
  arri: 'ARRI (reel folder)',
  blackmagic: 'Blackmagic (BRAW, CinemaDNG)',
}

/**
 * What a file is in its card. `essence`: the clip's asset; `segment`: a further piece of a spanned
 * clip; `frame`: a frame of an image-sequence clip (the lowest-numbered is the asset); `part`:
 * belongs to the clip and is never an asset (metadata, thumbnail, proxy, audio track); `card`: the
 * card's own file (an index, a playlist, a take list), no clip's.
 */
export type CardRole = 'essence' | 'segment' | 'frame' | 'part' | 'card'

export type CardFile = {
  format: CardFormat
  /** How many of the path's leading names are the card root's (0: the listing's own folder). */
  rootDepth: number
  role: CardRole
  /** The clip it belongs to (essence, segment, frame, part). */
  clip?: string
  /** Essence, segment and frame: the kind of asset the clip is. */
  kind?: MediaKind
  /** A camera raw format ffprobe cannot read (R3D, ARRIRAW, BRAW, CinemaDNG). */
  raw?: boolean
  /** Segment and frame: the number in its name (the lowest present is the first). */
  order?: number
  /** Part: the clip's metadata file (the sidecar read for its facts). */
  sidecar?: boolean
  /** Why it is not an asset of its own (segment, part, card): for the log and the import's 406. */
  reason?: string
}

const up = (s: string) => s.toUpperCase()
const extOf = (name: string) => {
  const dot = name.lastIndexOf('.')
  return dot > 0 ? up(name.slice(dot + 1)) : ''
}
const stem = (name: string) => {
  const dot = name.lastIndexOf('.')
  return dot > 0 ? name.slice(0, dot) : name
}

/** A quick look: no name of the path can be a card's (one test of most paths of a share). */
const MAYBE_CARD =
  /(^|[/\\])(xdroot|private|contents)([/\\]|$)|\.rd[cm]([/\\]|$)|\.(braw|sidecar|dng)$|[a-z]\d{3}r[a-z0-9]{3}([/\\]|$)|[a-z]\d{3}_\d{8}_c\d{3}/i

const P2_FOLDERS = new Set(['VIDEO', 'AUDIO', 'CLIP', 'ICON', 'PROXY', 'VOICE'])
/** A P2 clip's id: six letters and digits (0001AB). */
const P2_ID = /^[0-9A-Z]{6}$/i
const ARRI_REEL = /^[A-Z]\d{3}R[A-Z0-9]{3}$/i
const ARRI_CLIP = /^[A-Z]\d{3}C\d{3}_\d{6}_[A-Z0-9]{4}$/i
const BM_CLIP = /^[A-Z]\d{3}_\d{8}_C\d{3}$/i
/** Formats known by their files' names only, with no marker folder: only the files beside their clips are loose. */
const NAMED_ONLY: ReadonlySet<CardFormat> = new Set(['arri', 'blackmagic'])

/** False when no name of `path` (any separators) can be a card's: one quick test before any split. */
export const mayBeCard = (path: string): boolean => MAYBE_CARD.test(path)

/**
 * What a path's names say of it inside a camera card (the last name is the file's), or undefined
 * when it lies in no card's layout. A file under a card root but outside its layout (a wrangler's
 * checksum list beside PRIVATE/) is not recognised here: the listing (cardsIn) calls it loose.
 */
export function cardFile(parts: readonly string[]): CardFile | undefined {
  const n = parts.length
  if (n === 0 || !MAYBE_CARD.test(parts.join('/'))) return undefined
  for (let i = 0; i < n - 1; i++) {
    const name = up(parts[i]!)
    const next = i + 1 < n - 1 ? up(parts[i + 1]!) : undefined
    if (name === 'XDROOT') return xdcam(parts, i)
    if (name === 'PRIVATE' && next === 'M4ROOT') return xavc(parts, i)
    if (name === 'PRIVATE' && next === 'AVCHD') return avchd(parts, i)
    if (name === 'CONTENTS' && next !== undefined && /^CLIPS\d{3}$/.test(next)) return canon(parts, i)
    if (name === 'CONTENTS' && next !== undefined && P2_FOLDERS.has(next)) {
      const found = p2(parts, i)
      if (found) return found
    }
    if (name.endsWith('.RDM') || name.endsWith('.RDC')) return red(parts, i)
    if (ARRI_REEL.test(name)) {
      const found = arri(parts, i)
      if (found) return found
    }
  }
  return blackmagic(parts)
}

const card = (format: CardFormat, rootDepth: number, reason: string): CardFile => ({
  format,
  rootDepth,
  role: 'card',
  reason,
})
const part = (format: CardFormat, rootDepth: number, clip: string, reason: string, sidecar = false): CardFile => ({
  format,
  rootDepth,
  role: 'part',
  clip,
  reason,
  ...(sidecar ? { sidecar } : {}),
})
const essence = (format: CardFormat, rootDepth: number, clip: string, raw = false): CardFile => ({
  format,
  rootDepth,
  role: 'essence',
  clip,
  kind: 'video',
  ...(raw ? { raw } : {}),
})

/** Sony XAVC S / XAVC HS (FX3, FX6, FX30, the Alpha bodies): PRIVATE/M4ROOT/CLIP/C0001.MP4 + C0001M01.XML. */
function xavc(parts: readonly string[], i: number): CardFile {
  const f: CardFormat = 'xavc'
  const rest = parts.slice(i + 2)
  const name = rest.at(-1)!
  const folder = rest.length === 2 ? up(rest[0]!) : undefined
  let m: RegExpExecArray | null
  if (folder === 'CLIP') {
    if (['MP4', 'MXF'].includes(extOf(name))) return essence(f, i, stem(name))
    if ((m = /^(.+)M\d{2}\.XML$/i.exec(name))) return part(f, i, m[1]!, "the clip's metadata (NRT XML)", true)
  }
  if (folder === 'THMBNL' && (m = /^(.+)T\d{2}\.(JPE?G)$/i.exec(name))) return part(f, i, m[1]!, 'a thumbnail (THMBNL)')
  if (folder === 'SUB' && (m = /^(.+)S\d{2}\.(MP4|MXF)$/i.exec(name))) return part(f, i, m[1]!, 'a proxy (SUB)')
  return card(f, i, `a file of the card's own (${rest.join('/')})`)
}

/** XDCAM and XAVC on SxS and XQD (FS7, FX9, Venice): XDROOT/Clip/XD0001.MXF + XD0001M01.XML, Sub/ proxies. */
function xdcam(parts: readonly string[], i: number): CardFile {
  const f: CardFormat = 'xdcam'
  const rest = parts.slice(i + 1)
  const name = rest.at(-1)!
  const folder = rest.length === 2 ? up(rest[0]!) : undefined
  let m: RegExpExecArray | null
  if (folder === 'CLIP') {
    if (extOf(name) === 'MXF') return essence(f, i, stem(name))
    if ((m = /^(.+)M\d{2}\.XML$/i.exec(name))) return part(f, i, m[1]!, "the clip's metadata (NRT XML)", true)
    if ((m = /^(.+?)(R\d{2}\.BIM|\.SMI|\.PPN)$/i.exec(name))) return part(f, i, m[1]!, "the clip's real-time metadata")
  }
  if (folder === 'SUB' && (m = /^(.+)S\d{2}\.MXF$/i.exec(name))) return part(f, i, m[1]!, 'a proxy (Sub)')
  if (folder === 'THMBNL' && (m = /^(.+)T\d{2}\.(JPE?G)$/i.exec(name))) return part(f, i, m[1]!, 'a thumbnail (Thmbnl)')
  const top = up(rest[0]!)
  const what =
    top === 'TAKE' ? 'a take list (Take)' : top === 'EDIT' ? 'an edit list (Edit)' : top === 'GENERAL' ? 'General' : ''
  return card(f, i, `a file of the card's own (${what || rest.join('/')})`)
}

/** Panasonic P2: CONTENTS/VIDEO/0001AB.MXF, AUDIO/0001AB00.MXF ..., CLIP/0001AB.XML, ICON/, PROXY/, VOICE/. */
function p2(parts: readonly string[], i: number): CardFile | undefined {
  const f: CardFormat = 'p2'
  const rest = parts.slice(i + 1)
  const name = rest.at(-1)!
  const folder = rest.length === 2 ? up(rest[0]!) : undefined
  let m: RegExpExecArray | null
  const id = P2_ID.test(stem(name)) ? stem(name) : undefined
  if (folder === 'VIDEO' && id && extOf(name) === 'MXF') return essence(f, i, id)
  if (folder === 'AUDIO' && (m = /^([0-9A-Z]{6})\d{2}\.MXF$/i.exec(name)))
    return part(f, i, m[1]!, 'an audio track of the clip (P2 keeps each track in an MXF of its own)')
  if (folder === 'CLIP' && id && extOf(name) === 'XML') return part(f, i, id, "the clip's metadata (clip XML)", true)
  if (folder === 'ICON' && id && extOf(name) === 'BMP') return part(f, i, id, 'a thumbnail (ICON)')
  if (folder === 'PROXY' && id && ['MP4', 'BIN'].includes(extOf(name))) return part(f, i, id, 'a proxy (PROXY)')
  if (folder === 'VOICE' && (m = /^([0-9A-Z]{6})\d{2}\.WAV$/i.exec(name)))
    return part(f, i, m[1]!, 'a voice memo (VOICE)')
  // Not named as P2 names its files (a folder of someone's own called Contents/Video): no card's.
  return undefined
}

/** AVCHD: PRIVATE/AVCHD/BDMV/STREAM/00000.MTS, CLIPINF/00000.CPI, PLAYLIST/, INDEX.BDM, MOVIEOBJ.BDM. */
function avchd(parts: readonly string[], i: number): CardFile {
  const f: CardFormat = 'avchd'
  const rest = parts.slice(i + 2)
  const name = rest.at(-1)!
  const where = rest.slice(0, -1).map(up).join('/')
  if (where === 'BDMV/STREAM' && extOf(name) === 'MTS') return essence(f, i, stem(name))
  if (where === 'BDMV/CLIPINF' && extOf(name) === 'CPI')
    return part(f, i, stem(name), "the clip's information (CLIPINF)")
  return card(f, i, `a file of the card's own (AVCHD/${rest.join('/')})`)
}

/**
 * Canon: XF (XF305) CONTENTS/CLIPS001/AA0001/AA000101.MXF, AA000102.MXF (spanned), AA0001.XML; XF-AVC
 * (Cinema EOS) CONTENTS/CLIPS001/A001C001_XXXXXX_01.MXF, _02.MXF (spanned) and its XML.
 */
function canon(parts: readonly string[], i: number): CardFile {
  const f: CardFormat = 'canon-xf'
  const rest = parts.slice(i + 2)
  const name = rest.at(-1)!
  let m: RegExpExecArray | null
  if (rest.length === 1) {
    if ((m = /^(.+)_(\d{2})\.MXF$/i.exec(name))) return segmentOf(f, i, m[1]!, Number(m[2]), 1)
    // An MXF with no _NN suffix (a clip the body did not span): the clip's essence, its segment 1.
    if (extOf(name) === 'MXF') return segmentOf(f, i, stem(name), 1, 1)
    if ((m = /^(.+?)(_\d{2})?\.[^.]+$/.exec(name)))
      return part(f, i, m[1]!, "the clip's metadata", extOf(name) === 'XML')
  }
  if (rest.length === 2) {
    const clip = rest[0]!
    if ((m = /^(.+)(\d{2})\.MXF$/i.exec(name)) && up(m[1]!) === up(clip)) return segmentOf(f, i, clip, Number(m[2]), 1)
    return part(f, i, clip, "the clip's metadata", up(name) === `${up(clip)}.XML`)
  }
  return card(f, i, `a file of the card's own (${rest.join('/')})`)
}

/** The essence when `order` is the first the camera numbers, else a further segment of the clip. */
function segmentOf(format: CardFormat, rootDepth: number, clip: string, order: number, first: number): CardFile {
  const raw = format === 'red'
  if (order === first) return { ...essence(format, rootDepth, clip, raw), order }
  return {
    format,
    rootDepth,
    role: 'segment',
    clip,
    kind: 'video',
    order,
    ...(raw ? { raw } : {}),
    reason: `a further segment of the spanned clip ${clip} (its first segment is the asset)`,
  }
}

/** RED: A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_001.R3D, _002.R3D ... (a .RDC alone too). */
function red(parts: readonly string[], i: number): CardFile {
  const f: CardFormat = 'red'
  const n = parts.length
  const rdm = up(parts[i]!).endsWith('.RDM')
  const rdc = rdm ? (i + 1 < n - 1 && up(parts[i + 1]!).endsWith('.RDC') ? i + 1 : -1) : i
  if (rdc < 0) return card(f, i, `a file of the card's own (${parts.slice(i).join('/')})`)
  const clip = stem(parts[rdc]!)
  const name = parts[n - 1]!
  // Only an R3D named after its .RDC is a segment of that clip (another clip's R3D put there is not).
  const m = rdc === n - 2 ? /^(.+)_(\d{3})\.R3D$/i.exec(name) : null
  if (m && up(m[1]!) === up(clip)) return segmentOf(f, i, clip, Number(m[2]), 1)
  return part(f, i, clip, `a file of the clip ${clip} (its first .R3D is the asset)`, extOf(name) === 'RMD')
}

/** ARRI (ALEXA Mini, LF, 35): a reel folder A001R1AB holding A001C001_220101_R1AB.mxf, or ARRIRAW frame folders. */
function arri(parts: readonly string[], i: number): CardFile | undefined {
  const f: CardFormat = 'arri'
  const rest = parts.slice(i + 1)
  const name = rest.at(-1)!
  const root = i + 1
  // A clip of this reel: camera letter and reel (A001) and the card's id (R1AB) are the reel folder's name.
  const ofReel = (clip: string) => up(`${clip.slice(0, 4)}${clip.slice(-4)}`) === up(parts[i]!)
  if (rest.length === 1) {
    const base = stem(name)
    if (ARRI_CLIP.test(base) && ofReel(base) && ['MXF', 'MOV'].includes(extOf(name))) return essence(f, root, base)
    const m = /^([A-Z]\d{3}C\d{3}_\d{6}_[A-Z0-9]{4})[._]/i.exec(name)
    return m && ofReel(m[1]!) ? part(f, root, m[1]!, `a file of the clip ${m[1]}`) : undefined
  }
  if (rest.length === 2 && ARRI_CLIP.test(rest[0]!) && ofReel(rest[0]!)) {
    const clip = rest[0]!
    const m = /\.(\d+)\.(ARI|ARX)$/i.exec(name)
    if (m) return { format: f, rootDepth: root, role: 'frame', clip, kind: 'video', raw: true, order: Number(m[1]) }
    return part(f, root, clip, `a file of the clip ${clip}`)
  }
  return undefined
}

/** Blackmagic: A001_08251234_C001.braw (+ .sidecar, a Proxy/ folder), or CinemaDNG clip folders of frames. */
function blackmagic(parts: readonly string[]): CardFile | undefined {
  const f: CardFormat = 'blackmagic'
  const n = parts.length
  const name = parts[n - 1]!
  const base = stem(name)
  const ext = extOf(name)
  if (BM_CLIP.test(base) && ext === 'BRAW') return essence(f, n - 1, base, true)
  if (BM_CLIP.test(base) && ext === 'SIDECAR') return part(f, n - 1, base, "the clip's sidecar metadata", true)
  if (n < 2) return undefined
  const folder = parts[n - 2]!
  if (/^(Blackmagic )?Proxy$/i.test(folder) && BM_CLIP.test(base) && ['MP4', 'MOV'].includes(ext))
    return part(f, n - 2, base, 'a proxy (Proxy)')
  if (BM_CLIP.test(folder)) {
    const m = /_(\d+)\.DNG$/i.exec(name)
    if (m && up(name.slice(0, name.length - m[0].length)) === up(folder))
      return { format: f, rootDepth: n - 2, role: 'frame', clip: folder, kind: 'video', raw: true, order: Number(m[1]) }
    return part(f, n - 2, folder, `a file of the clip ${folder}`)
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// A card's listing: its clips.

export type CardClip = {
  /** The clip's name as the camera gave it (C0001, 0001AB, AA0001, A001_C001_0101AB): the asset's name. */
  name: string
  kind: MediaKind
  /** Camera raw (not probed). */
  raw: boolean
  /** The essence, relative to the card root ('/' between names). */
  essence: string
  /** The clip's other files (segments, frames, metadata, thumbnails, proxies), relative to the card root. */
  files: string[]
  /** The metadata file read for the clip's facts, when there is one. */
  sidecar?: string
  /** Further segments (spanned clips) and further frames (image sequences). */
  segments: number
  frames: number
}

export type Card = {
  format: CardFormat
  /** The card root relative to the listing's folder: '' or names ending with '/'. */
  root: string
  /** The card root's own name ('' for the listing's folder itself). */
  name: string
  clips: CardClip[]
  /** The card's own files (and those of clips with no essence), relative to the root. */
  other: string[]
  /** Files under the root outside the card's layout (a wrangler's checksum list, photos in DCIM), relative to the root. */
  loose: string[]
}

export type CardListing = {
  cards: Card[]
  /** Each recognised file (as given): its card, clip (if any), and why it is no asset (undefined for an essence). */
  files: Map<string, { card: Card; clip?: CardClip; reason?: string }>
}

/**
 * The cards among `paths` (files, relative to one folder, names joined with '/'): each card with its
 * clips and other files. Files under a card's root outside its layout are the card's `loose` files
 * (of the deepest card root above them); files under no card root are left out.
 */
export function cardsIn(paths: readonly string[]): CardListing {
  const byCard = new Map<string, { format: CardFormat; root: string; found: { path: string; f: CardFile }[] }>()
  const unknown: string[] = []
  for (const path of paths) {
    const parts = path.split('/').filter((p) => p !== '')
    const f = cardFile(parts)
    if (!f) {
      unknown.push(path)
      continue
    }
    const root = parts.slice(0, f.rootDepth).join('/')
    const key = `${f.format}\0${up(root)}`
    let c = byCard.get(key)
    if (!c) byCard.set(key, (c = { format: f.format, root: root ? `${root}/` : '', found: [] }))
    c.found.push({ path, f })
  }
  const cards: Card[] = []
  const files: CardListing['files'] = new Map()
  for (const c of byCard.values()) {
    const rel = (p: string) => p.slice(c.root.length)
    const card: Card = {
      format: c.format,
      root: c.root,
      name: c.root.split('/').filter(Boolean).at(-1) ?? '',
      clips: [],
      other: [],
      loose: [],
    }
    cards.push(card)
    const clips = new Map<string, { found: { path: string; f: CardFile }[] }>()
    for (const x of c.found) {
      if (x.f.clip === undefined) continue
      const k = up(x.f.clip)
      let clip = clips.get(k)
      if (!clip) clips.set(k, (clip = { found: [] }))
      clip.found.push(x)
    }
    for (const x of c.found) if (x.f.clip === undefined) card.other.push(rel(x.path))
    for (const x of c.found) if (x.f.clip === undefined) files.set(x.path, { card, reason: x.f.reason })
    for (const { found } of clips.values()) {
      const essences = found.filter((x) => x.f.role === 'essence').sort((a, b) => cmp(a.path, b.path))
      const frames = found.filter((x) => x.f.role === 'frame').sort((a, b) => a.f.order! - b.f.order!)
      const first = essences[0] ?? frames[0]
      if (!first) {
        // No essence here (the first segment on another card, metadata of a clip not recorded): the card's files.
        for (const x of found) {
          card.other.push(rel(x.path))
          files.set(x.path, { card, reason: x.f.reason ?? `a file of the clip ${x.f.clip}, which has no essence here` })
        }
        continue
      }
      const rest = found.filter((x) => x !== first)
      const sidecar = rest.find((x) => x.f.sidecar)
      const clip: CardClip = {
        name: first.f.clip!,
        kind: first.f.kind ?? 'video',
        raw: first.f.raw === true,
        essence: rel(first.path),
        files: rest.map((x) => rel(x.path)).sort(cmp),
        ...(sidecar ? { sidecar: rel(sidecar.path) } : {}),
        segments: rest.filter((x) => x.f.role === 'segment').length,
        frames: rest.filter((x) => x.f.role === 'frame').length,
      }
      card.clips.push(clip)
      files.set(first.path, { card, clip })
      for (const x of rest)
        files.set(x.path, {
          card,
          clip,
          reason:
            x.f.reason ??
            (x.f.role === 'frame'
              ? `a further frame of the clip ${clip.name} (its first frame is the asset)`
              : x.f.role === 'essence'
                ? `another essence of the clip ${clip.name}`
                : `a file of the clip ${clip.name}`),
        })
    }
    card.clips.sort((a, b) => cmp(a.essence, b.essence))
    card.other.sort(cmp)
  }
  cards.sort((a, b) => cmp(a.root, b.root) || cmp(a.format, b.format))
  // Loose files: under a card root, outside its layout (the deepest root above them; of two cards at
  // one root, the first in the sorted order, so that the listing's order changes nothing).
  if (cards.length) {
    const roots = new Map<string, { card: Card; named: boolean }>()
    for (const card of cards) {
      const at = roots.get(up(card.root))
      if (!at) roots.set(up(card.root), { card, named: NAMED_ONLY.has(card.format) })
      else at.named &&= NAMED_ONLY.has(card.format)
    }
    // The card's own folders (PRIVATE, CONTENTS, XDROOT, the .RDM, Blackmagic's Proxy/): a file there
    // outside the layout (P2's LASTCLIP.TXT, PRIVATE/SONY/) is that card's, not loose.
    const folders = new Map<string, Map<string, Card>>()
    for (const [path, at] of files) {
      const first = path.slice(at.card.root.length).split('/')
      if (first.length < 2) continue
      let set = folders.get(up(at.card.root))
      if (!set) folders.set(up(at.card.root), (set = new Map()))
      if (!set.has(up(first[0]!))) set.set(up(first[0]!), at.card)
    }
    for (const path of unknown) {
      const parts = path.split('/')
      for (let k = parts.length - 1; k >= 0; k--) {
        const key = up(k === 0 ? '' : `${parts.slice(0, k).join('/')}/`)
        const at = roots.get(key)
        if (!at) continue
        const rel = path.slice(at.card.root.length)
        const first = rel.split('/')
        const owner = first.length > 1 ? folders.get(key)?.get(up(first[0]!)) : undefined
        if (owner) {
          owner.other.push(rel)
          files.set(path, { card: owner, reason: `a file of the card's own (${rel})` })
        } else if (first.length === 1 || !at.named) at.card.loose.push(rel)
        // A card known by its files' names only (ARRI, Blackmagic): the folders beside its clips are
        // not the card's (a folder of a production's own may hold one .braw).
        break
      }
    }
    for (const card of cards) card.other.sort(cmp)
    for (const card of cards) card.loose.sort(cmp)
  }
  return { cards, files }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

// ---------------------------------------------------------------------------------------------
// Sidecar metadata.

/** What a clip's metadata file says, as kept in the asset's technical.card (docs/cards.md). */
export type CardFacts = {
  /** The clip's first timecode, HH:MM:SS:FF (`;` before the frames for drop frame). */
  timecode?: string
  /** The timecode's rate as the file says it (Sony's tcFps: "25", "30"; P2's edit unit: "1001/30000"). */
  timecode_rate?: string
  /** The capture rate (Sony's captureFps: "25p", "23.98p"). */
  capture_fps?: string
  /** The clip's length in frames, as the metadata says. */
  duration_frames?: number
  camera?: { manufacturer?: string; model?: string; serial?: string }
  lens?: string
  reel?: string
  /** When the camera says the clip was recorded (its own clock, as written). */
  recorded?: string
}

type Tag = { name: string; attrs: Record<string, string>; text?: string }

/** The start tags of an XML text: local names (no namespace prefix), their attributes, and the text that follows. */
function tags(xml: string): Tag[] {
  const out: Tag[] = []
  const re = /<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)((?:\s+[^\s=>/]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>([^<]*)/g
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    const attrs: Record<string, string> = {}
    const are = /([^\s=>/]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g
    for (let a = are.exec(m[3]!); a; a = are.exec(m[3]!))
      attrs[a[1]!.replace(/^.*:/, '')] = unescape(a[2] ?? a[3] ?? '')
    const text = m[4] === '/' ? undefined : unescape(m[5]!).trim()
    out.push({ name: m[2]!, attrs, ...(text ? { text } : {}) })
  }
  return out
}

const unescape = (s: string) =>
  s.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-f]+);/gi, (all, e: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }
    if (named[e.toLowerCase()]) return named[e.toLowerCase()]!
    const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1))
    return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all
  })

/**
 * Sony's LtcChange value: eight hex digits, the four bytes of an SMPTE 12M LTC word's time in the
 * order frames, seconds, minutes, hours, each two BCD digits with flag bits above them (the frames
 * byte's 0x40 is drop frame): `17305719` is 19:57:30:17, `67460811` is 11:08:46;27. Some bodies
 * write the label itself (`01:00:00:00`): taken as it is.
 */
export function sonyTimecode(value: string): string | undefined {
  const v = value.trim()
  if (/^\d{2}:\d{2}:\d{2}[:;.]\d{2}$/.test(v)) return v
  if (!/^[0-9a-f]{8}$/i.test(v)) return undefined
  const byte = (k: number) => Number.parseInt(v.slice(k * 2, k * 2 + 2), 16)
  const bcd = (b: number) => ((b & 0xf) > 9 ? 99 : (b >> 4) * 10 + (b & 0xf))
  const [ff, ss, mm, hh] = [byte(0), byte(1), byte(2), byte(3)]
  const frames = bcd(ff & 0x3f)
  const parts = [bcd(hh & 0x3f), bcd(mm & 0x7f), bcd(ss & 0x7f)]
  if (parts.some((p) => p > 59) || parts[0]! > 23 || frames > 59) return undefined
  const two = (x: number) => String(x).padStart(2, '0')
  return `${parts.map(two).join(':')}${ff & 0x40 ? ';' : ':'}${two(frames)}`
}

/** The clip name's reel where cameras name clips CAMERA-LETTER + REEL (A001C001, A001_C001, A001_08251234_C001). */
export function reelOfClip(clip: string): string | undefined {
  return /^([A-Z]\d{3})(C\d{3}|_C\d{3}|_\d{8}_C\d{3})/i.exec(clip)?.[1]
}

/** Sony's NonRealTimeMeta (the clip's M01.XML): its first timecode, rates, camera, lens, reel, recording date. */
export function readSonyNrt(xml: string): CardFacts {
  const facts: CardFacts = {}
  const all = tags(xml)
  const first = (name: string) => all.find((t) => t.name === name)
  const table = first('LtcChangeTable')
  const changes = all.filter((t) => t.name === 'LtcChange')
  const start = changes.find((t) => t.attrs.frameCount === '0') ?? changes[0]
  const timecode = start?.attrs.value === undefined ? undefined : sonyTimecode(start.attrs.value)
  if (timecode) facts.timecode = timecode
  if (table?.attrs.tcFps) facts.timecode_rate = table.attrs.tcFps
  const frame = first('VideoFrame')
  if (frame?.attrs.captureFps) facts.capture_fps = frame.attrs.captureFps
  const duration = first('Duration')?.attrs.value
  if (duration !== undefined && /^\d+$/.test(duration)) facts.duration_frames = Number(duration)
  const device = first('Device')
  if (device) {
    const camera = {
      ...(device.attrs.manufacturer ? { manufacturer: device.attrs.manufacturer } : {}),
      ...(device.attrs.modelName ? { model: device.attrs.modelName } : {}),
      ...(device.attrs.serialNo ? { serial: device.attrs.serialNo } : {}),
    }
    if (Object.keys(camera).length) facts.camera = camera
  }
  const lens = first('Lens')?.attrs.modelName
  if (lens) facts.lens = lens
  // A reel where the body writes one: an acquisition item naming it (Venice, FX9), else the clip's title.
  const reelItem = all.find((t) => t.name === 'Item' && /reel/i.test(t.attrs.name ?? '') && t.attrs.value)
  if (reelItem) facts.reel = reelItem.attrs.value!
  const created = first('CreationDate')?.attrs.value
  if (created) facts.recorded = created
  return facts
}

/** P2's clip XML (CONTENTS/CLIP/0001AB.XML): start timecode, edit unit, camera, reel (the user clip name's shoot). */
export function readP2Clip(xml: string): CardFacts {
  const facts: CardFacts = {}
  const all = tags(xml)
  const text = (name: string) => all.find((t) => t.name === name)?.text
  const timecode = text('StartTimecode')
  if (timecode && /^\d{2}:\d{2}:\d{2}[:;.]\d{2}$/.test(timecode)) facts.timecode = timecode
  const rate = text('EditUnit')
  if (rate) facts.timecode_rate = rate
  const duration = text('Duration')
  if (duration && /^\d+$/.test(duration)) facts.duration_frames = Number(duration)
  const camera = {
    ...(text('Manufacturer') ? { manufacturer: text('Manufacturer') } : {}),
    ...(text('ModelName') ? { model: text('ModelName') } : {}),
    ...(text('SerialNo.') ? { serial: text('SerialNo.') } : {}),
  }
  if (Object.keys(camera).length) facts.camera = camera
  const created = text('StartDate')
  if (created) facts.recorded = created
  return facts
}

/** The facts of a clip's metadata file (its text), by the card's format; {} for a format whose metadata is not read. */
export function readSidecar(format: CardFormat, text: string): CardFacts {
  if (format === 'xavc' || format === 'xdcam') return readSonyNrt(text)
  if (format === 'p2') return readP2Clip(text)
  return {}
}
