// A broadcast WAV's own chunks, read from an open file: the RIFF chunk headers, the `fmt ` chunk's
// sample rate, the `bext` chunk (EBU Tech 3285: description, originator, origination date and
// time, time_reference) and the `iXML` chunk (scene, take, tape, project, note; the timecode rate).
// ffprobe reports some bext fields as tags but no iXML, and a WAV's start time not at all, so the
// probe reads them here (docs/media.md, Broadcast WAV). Only chunk headers and those three chunks
// are read, each with a bounded size; a damaged file gives what could be read and a warning,
// never an exception (the import goes on without them).
import { fstatSync, readSync } from 'node:fs'

/** The bext chunk's text fields and time reference; a field that is empty is left out. */
export type Bext = {
  description?: string
  originator?: string
  originator_reference?: string
  /** As written: "2024-05-03" (the standard's yyyy-mm-dd; some recorders write yyyy:mm:dd). */
  origination_date?: string
  /** As written: "14:03:21" (hh:mm:ss; some write hh-mm-ss). */
  origination_time?: string
  /** Samples since midnight of the first sample. */
  time_reference?: number
}

/** The iXML members a catalogue searches by (each the text of the top-level element; empty: left out). */
export type Ixml = { project?: string; scene?: string; take?: string; tape?: string; note?: string }

export type BwfChunks = {
  /** The fmt chunk's samples per second. */
  sample_rate?: number
  bext?: Bext
  /** The iXML chunk's text, whole (up to MAX_IXML_BYTES). */
  ixml_text?: string
  ixml?: Ixml
  /** What could not be read, for the import's warning; empty for a sound file. */
  warnings: string[]
}

/** The bext chunk's fixed part: description 256, originator 32, reference 32, date 10, time 8, time reference 8, version 2, UMID 64, loudness 10, reserved 180. */
export const BEXT_FIXED_BYTES = 602
/** An iXML chunk larger than this is not read (real ones are a few KiB). */
export const MAX_IXML_BYTES = 1 << 20
/** Chunks looked at before giving up: real files have a few dozen. */
const MAX_CHUNKS = 1000

const IXML_MEMBERS = ['PROJECT', 'SCENE', 'TAKE', 'TAPE', 'NOTE'] as const

/**
 * The chunks of a RIFF, RF64 or BW64 WAVE file open at `fd` (positional reads: the descriptor's
 * offset is not moved). A file that is no WAVE gives nothing and no warning.
 */
export function readBwf(fd: number): BwfChunks {
  const out: BwfChunks = { warnings: [] }
  let size: number
  try {
    size = fstatSync(fd).size
  } catch (error) {
    out.warnings.push(`the file could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
    return out
  }
  const read = (position: number, length: number): Buffer => {
    const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - position)))
    let got = 0
    while (got < buffer.length) {
      const n = readSync(fd, buffer, got, buffer.length - got, position + got)
      if (n === 0) break
      got += n
    }
    return buffer.subarray(0, got)
  }
  try {
    const head = read(0, 12)
    if (head.length < 12) return out
    const riff = head.toString('latin1', 0, 4)
    if ((riff !== 'RIFF' && riff !== 'RF64' && riff !== 'BW64') || head.toString('latin1', 8, 12) !== 'WAVE') return out
    let position = 12
    let ds64Data: number | undefined
    for (let i = 0; i < MAX_CHUNKS && position + 8 <= size; i++) {
      const header = read(position, 8)
      const id = header.toString('latin1', 0, 4)
      if (!/^[\x20-\x7e]{4}$/.test(id)) {
        out.warnings.push(
          `the chunk list is damaged at byte ${position} (no chunk id there); chunks after it are not read`,
        )
        break
      }
      let length = header.readUInt32LE(4)
      const body = position + 8
      if (id === 'ds64') {
        const ds64 = read(body, 16)
        if (ds64.length === 16) ds64Data = Number(ds64.readBigUInt64LE(8))
      }
      if (id === 'data' && length === 0xffffffff && ds64Data !== undefined) length = ds64Data
      const cut = body + length > size
      if (id === 'fmt ') {
        const fmt = read(body, 16)
        if (fmt.length >= 8 && fmt.readUInt32LE(4) > 0) out.sample_rate = fmt.readUInt32LE(4)
      } else if (id === 'bext') {
        out.bext = bextOf(read(body, Math.min(length, BEXT_FIXED_BYTES)), length, out.warnings)
        if (cut) out.warnings.push('the bext chunk runs past the end of the file')
      } else if (id === 'iXML') {
        if (length > MAX_IXML_BYTES)
          out.warnings.push(`the iXML chunk is ${length} bytes, more than the ${MAX_IXML_BYTES} read; it is left out`)
        else {
          const text = utf8OrLatin1(read(body, length)).replace(/\0+$/, '')
          if (cut) out.warnings.push('the iXML chunk runs past the end of the file')
          const ixml = ixmlOf(text)
          if (ixml === undefined) out.warnings.push('the iXML chunk holds no <BWFXML> document')
          else {
            out.ixml_text = text
            if (Object.keys(ixml).length) out.ixml = ixml
          }
        }
      }
      // A chunk that runs past the end: a recording cut short has a data chunk too long (nothing
      // after it to read); any other ends the walk too.
      if (cut) {
        if (id !== 'data' && id !== 'bext' && id !== 'iXML')
          out.warnings.push(`the ${id.trim()} chunk runs past the end of the file; chunks after it are not read`)
        break
      }
      position = body + length + (length % 2)
    }
  } catch (error) {
    out.warnings.push(`the file could not be read (${(error as Error).message})`)
  }
  return out
}

/** The bext fields of its fixed part (`bytes`, at most BEXT_FIXED_BYTES of a chunk of `length`). */
function bextOf(bytes: Buffer, length: number, warnings: string[]): Bext {
  const bext: Bext = {}
  if (length < BEXT_FIXED_BYTES)
    warnings.push(`the bext chunk is ${length} bytes, shorter than the ${BEXT_FIXED_BYTES} of its fields`)
  const text = (start: number, bytesLong: number) =>
    bytes.length >= start + bytesLong ? clean(utf8OrLatin1(bytes.subarray(start, start + bytesLong))) : ''
  const fields: [keyof Bext, number, number][] = [
    ['description', 0, 256],
    ['originator', 256, 32],
    ['originator_reference', 288, 32],
    ['origination_date', 320, 10],
    ['origination_time', 330, 8],
  ]
  for (const [name, start, n] of fields) {
    const value = text(start, n)
    if (value) (bext as Record<string, unknown>)[name] = value
  }
  if (bytes.length >= 346) {
    const reference = bytes.readUInt32LE(338) + bytes.readUInt32LE(342) * 2 ** 32
    if (Number.isSafeInteger(reference)) bext.time_reference = reference
  }
  return bext
}

/** Text up to its first NUL, without control characters, trimmed. */
const clean = (text: string) =>
  text
    .replace(/\0[\s\S]*$/, '')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
    .trim()

/** UTF-8 when the bytes are valid UTF-8 (ASCII is), else Latin-1 (what older recorders write). */
function utf8OrLatin1(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return bytes.toString('latin1')
  }
}

/**
 * The searched members of an iXML document: the text of PROJECT, SCENE, TAKE, TAPE and NOTE
 * where they are children of the root BWFXML (a SPEED's or a TRACK's NOTE is not the take's note).
 * Undefined: the text is no BWFXML document.
 */
export function ixmlOf(text: string): Ixml | undefined {
  const root = /<BWFXML(?:\s[^>]*)?>/i.exec(text)
  if (!root) return undefined
  const out: Ixml = {}
  const tag = /<(\/?)([A-Za-z_][\w.:-]*)[^>]*?(\/?)>|<!\[CDATA\[|<!--|<\?/g
  tag.lastIndex = root.index + root[0].length
  let depth = 0
  let open: { name: string; from: number } | undefined
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    // Comments, CDATA and processing instructions: skipped whole (CDATA kept as text below).
    if (m[0] === '<!--' || m[0] === '<?') {
      const end = text.indexOf(m[0] === '<!--' ? '-->' : '?>', tag.lastIndex)
      if (end < 0) break
      tag.lastIndex = end + 2
      continue
    }
    if (m[0] === '<![CDATA[') {
      const end = text.indexOf(']]>', tag.lastIndex)
      if (end < 0) break
      tag.lastIndex = end + 3
      continue
    }
    const [, closing, name, selfClosing] = m
    if (closing) {
      if (depth === 0) break // </BWFXML>
      depth -= 1
      if (depth === 0 && open && open.name === name!.toUpperCase()) {
        const value = xmlText(text.slice(open.from, m.index))
        const member = open.name.toLowerCase() as keyof Ixml
        if (value && out[member] === undefined) out[member] = value
        open = undefined
      }
    } else if (!selfClosing) {
      if (depth === 0 && (IXML_MEMBERS as readonly string[]).includes(name!.toUpperCase()))
        open = { name: name!.toUpperCase(), from: m.index + m[0].length }
      depth += 1
    }
  }
  return out
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/** An element's text content: CDATA as it is, entities decoded, markup inside dropped, spaces evened. */
function xmlText(inner: string): string {
  const text = inner
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, cdata: string) =>
      cdata.replace(/[&<]/g, (c) => (c === '&' ? '&amp;' : '&lt;')),
    )
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
      if (ref[0] === '#') {
        const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1))
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ''
      }
      return ENTITIES[ref.toLowerCase()] ?? whole
    })
  return clean(text.replace(/\s+/g, ' '))
}
