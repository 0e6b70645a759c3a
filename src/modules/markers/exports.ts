// A media asset's markers as files editors import (docs/api.md, Markers): CSV for spreadsheets
// and logging tools, and a CMX 3600 EDL with one event and one locator (`* LOC:`) per marker,
// which Premiere Pro and DaVinci Resolve read as markers. Pure: the rows and the asset's clock in,
// the text out.
import { type Clock, clockText, durationLabel, endFrame, labelOf, startFrame } from './clock.ts'
import type { Fraction } from '../../media/timecode.ts'

/** What an export needs of a marker. */
export type ExportRow = {
  start_ms: number
  end_ms: number | null
  note: string
  color: string
  username: string
}

/** What an export needs of its asset. */
export type ExportAsset = { id: number; kind: string; name: string; path_file: string; clock: Clock }

/** The frames [in, out) of a marker: a point covers its one frame. */
function framesOf(fps: Fraction, row: ExportRow): [number, number] {
  const from = startFrame(fps, row.start_ms)
  const to = row.end_ms === null ? from + 1 : Math.max(from + 1, endFrame(fps, row.end_ms))
  return [from, to]
}

/** One line of text: line breaks and tabs as spaces, the ends trimmed. */
const oneLine = (text: string) => text.replace(/[\r\n\t\v\f\u2028\u2029]+/g, ' ').trim()

/**
 * A CSV field: quoted when it holds a comma, a quote, a line break or spaces at an end (RFC 4180);
 * text a spreadsheet would run as a formula (starting with = + - @, a tab or a carriage return)
 * gets a leading apostrophe, which spreadsheets show as text (OWASP, CSV injection).
 */
function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]|^\s|\s$/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

export const CSV_HEADER = ['Timecode In', 'Timecode Out', 'Duration', 'Note', 'Color', 'User']

/**
 * The markers as CSV (UTF-8 with a byte order mark, CRLF lines, a header line): In, Out and
 * Duration as source timecode (a point: Out is In and Duration zero); for an asset without a frame
 * rate, as HH:MM:SS.mmm from the first sample.
 */
export function markersCsv(asset: ExportAsset, rows: readonly ExportRow[]): string {
  const { clock } = asset
  const lines = [CSV_HEADER.join(',')]
  for (const row of rows) {
    let times: string[]
    if (clock.fps) {
      const withFps = { ...clock, fps: clock.fps }
      const from = startFrame(clock.fps, row.start_ms)
      const to = row.end_ms === null ? from : Math.max(from, endFrame(clock.fps, row.end_ms))
      times = [labelOf(withFps, from), labelOf(withFps, to), durationLabel(withFps, to - from)]
    } else {
      const to = row.end_ms ?? row.start_ms
      times = [clockText(row.start_ms), clockText(to), clockText(to - row.start_ms)]
    }
    lines.push([...times, row.note, row.color, row.username].map(csvField).join(','))
  }
  return `\uFEFF${lines.join('\r\n')}\r\n`
}

/**
 * A CMX 3600 reel name from a file name, as editors' tools make it: the name without its
 * extension, letters and digits only, at most 8 of them (A001C003_250114_R2KD.mov → A001C003);
 * AX (an auxiliary source) when nothing is left.
 */
export function reelOf(fileName: string): string {
  const stem = fileName.replace(/\.[^.]*$/, '')
  return stem.replace(/[^A-Za-z0-9]/g, '').slice(0, 8) || 'AX'
}

/** The file name of a path, whichever separator it uses. */
export const baseName = (path: string) => path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1)

/**
 * The markers as a CMX 3600 EDL (CRLF lines): TITLE (the asset's name), FCM (DROP FRAME or
 * NON-DROP FRAME as the asset counts), then per marker an event of the clip (source in and out
 * the marker's frames, a point one frame; record the same), its clip name, and its locator
 * `* LOC: <timecode> <COLOR> <note>`. Timecode is written as the asset counts (`;` before the
 * frames for drop frame). Needs a frame rate (the caller refuses an asset without one).
 */
export function markersEdl(asset: ExportAsset & { clock: Clock & { fps: Fraction } }, rows: readonly ExportRow[]) {
  const { clock } = asset
  const file = baseName(asset.path_file)
  const reel = reelOf(file).padEnd(8)
  const track = (asset.kind === 'audio' ? 'A' : 'V').padEnd(5)
  const title = oneLine(asset.name).slice(0, 70) || reelOf(file)
  const lines = [`TITLE: ${title}`, `FCM: ${clock.drop ? 'DROP FRAME' : 'NON-DROP FRAME'}`, '']
  rows.forEach((row, i) => {
    const [from, to] = framesOf(clock.fps, row)
    const [tcIn, tcOut] = [labelOf(clock, from), labelOf(clock, to)]
    lines.push(
      `${String(i + 1).padStart(3, '0')}  ${reel} ${track} C        ${tcIn} ${tcOut} ${tcIn} ${tcOut}`,
      `* FROM CLIP NAME: ${oneLine(file)}`,
      `* LOC: ${tcIn} ${row.color.toUpperCase().padEnd(7)} ${oneLine(row.note)}`,
      '',
    )
  })
  return lines.join('\r\n')
}

/**
 * A file name for an export that every browser and system takes: the asset's name with anything
 * but letters, digits, dot, dash and underscore as `_`, at most 100 characters; `asset-<id>` when
 * nothing is left.
 */
export function exportFileName(asset: { id: number; name: string }, extension: 'csv' | 'edl'): string {
  const safe = asset.name
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+|[._]+$/g, '')
    .slice(0, 100)
  return `${safe || `asset-${asset.id}`}.markers.${extension}`
}
