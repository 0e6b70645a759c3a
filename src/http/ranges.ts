// Serving a file's bytes as HTTP does (RFC 9110 sections 8.8, 13 and 14): validators (a strong
// ETag and Last-Modified), conditional GETs (If-None-Match, If-Modified-Since: 304), and one
// byte range (Range, If-Range: 206, or 416 when no byte of it exists). Several ranges in one
// request are answered with the whole file (a server may ignore Range; media elements ask for
// one range at a time). The bytes come from the caller, as a stream of the part asked for.
import { AppError } from './errors.ts'

export type Validators = { etag: string; lastModified: string }

/** A strong ETag and the Last-Modified of a file, from its fstat: any change of size, time or file changes them. */
export function validatorsOf(stat: { size: number; mtimeMs: number; ino: number; dev: number }): Validators {
  const parts = [stat.size, Math.floor(stat.mtimeMs), stat.ino, stat.dev].map((n) => n.toString(36))
  return { etag: `"${parts.join('-')}"`, lastModified: new Date(Math.floor(stat.mtimeMs / 1000) * 1000).toUTCString() }
}

/** The entity tags of an If-None-Match or If-Range list (W/ kept, to tell weak from strong). */
const tagsOf = (header: string) =>
  header
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean)

/**
 * Whether the client's copy is current (304): If-None-Match holds our ETag (weak comparison) or *,
 * or, without If-None-Match, If-Modified-Since is not earlier than Last-Modified.
 */
export function notModified(request: Request, v: Validators): boolean {
  const match = request.headers.get('if-none-match')
  if (match !== null) return tagsOf(match).some((tag) => tag === '*' || tag.replace(/^W\//, '') === v.etag)
  const since = request.headers.get('if-modified-since')
  if (since === null || request.headers.has('range')) return false
  const at = Date.parse(since)
  return !Number.isNaN(at) && Date.parse(v.lastModified) <= at
}

/** The one byte range to send, inclusive; undefined: send the whole file (200). */
export type ByteRange = { start: number; end: number }

const SINGLE = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i

/**
 * The range of a request for a file of `size` bytes, or undefined for the whole file: no Range, a
 * Range that is not one byte range (several, another unit, malformed: ignored, as RFC 9110 allows),
 * or an If-Range that does not match the file as it is now (a strong ETag, or the exact
 * Last-Modified). Throws 416 range_not_satisfiable (its Content-Range names the size) when the range
 * holds no byte of the file.
 */
export function rangeOf(request: Request, size: number, v: Validators): ByteRange | undefined {
  const header = request.headers.get('range')
  if (header === null) return undefined
  const ifRange = request.headers.get('if-range')
  if (ifRange !== null) {
    const value = ifRange.trim()
    const current = value.startsWith('"') || value.startsWith('W/') ? value === v.etag : value === v.lastModified
    if (!current) return undefined
  }
  const m = SINGLE.exec(header)
  if (!m || (m[1] === '' && m[2] === '')) return undefined
  const [first, last] = [m[1]!, m[2]!]
  // Digits beyond what a number holds exactly are no file position: read as beyond the end.
  let start: number
  let end: number
  if (first === '') {
    // The last N bytes.
    const suffix = Number(last)
    if (suffix === 0 || size === 0) throw unsatisfiable(size)
    start = Math.max(0, size - suffix)
    end = size - 1
  } else {
    start = Number(first)
    end = last === '' ? size - 1 : Math.min(Number(last), size - 1)
    if (last !== '' && Number(last) < start) return undefined // invalid: ignored
    if (start >= size) throw unsatisfiable(size)
  }
  return { start, end }
}

const unsatisfiable = (size: number) =>
  new AppError(
    416,
    'range_not_satisfiable',
    `The range asked for holds no byte of the file, which has ${size} bytes.`,
    {},
    {
      headers: { 'Content-Range': `bytes */${size}`, 'Accept-Ranges': 'bytes' },
    },
  )
