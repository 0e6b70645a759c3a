// How the page writes dates, durations, rates and sizes: one way in every view, so that a date in
// the catalogue reads as one in the tasks or devices view. Plain TypeScript with no DOM, Preact
// or Bun (its unit tests run under bun test, the page in a browser).
//
// - A date is local time to the minute, `2026-11-29 14:05`, year first so that dates sort and read
//   alike in every locale; the exact UTC value of the API goes into the <time> element that shows
//   it (shell.tsx, When).
// - A duration is timecode, HH:MM:SS:FF, at the asset's frame rate when it has one (`;` before the
//   frames for drop frame), else HH:MM:SS.mmm.

const two = (n: number) => String(n).padStart(2, '0')

/**
 * A timestamp of the API (`2026-11-29T13:05:07.123456Z`), or one with a zone offset, as a Date;
 * undefined for any other text (a date without a zone would be read in an unknown zone).
 */
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)$/i
export function parseTimestamp(text: string): Date | undefined {
  const m = TIMESTAMP.exec(text.trim())
  if (!m) return undefined
  const [, day, minute, second = '00', fraction = '', zone] = m
  // Date reads milliseconds: the API's microseconds are cut to them.
  const ms = fraction.slice(0, 3).padEnd(3, '0')
  const offset =
    zone!.toUpperCase() === 'Z' ? 'Z' : zone!.length === 3 ? `${zone}:00` : zone!.replace(/^(.\d{2}):?/, '$1:')
  const date = new Date(`${day}T${minute}:${second}.${ms}${offset}`)
  return Number.isNaN(date.getTime()) ? undefined : date
}

/** A Date as the page writes every date: `2026-11-29 14:05`, in the browser's time zone. */
export const dateText = (date: Date) =>
  `${String(date.getFullYear()).padStart(4, '0')}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`

/** A timestamp of the API as the page shows it (dateText); `empty` when there is none, other text as it is. */
export function formatDate(value: string | null | undefined, empty = '—'): string {
  if (!value) return empty
  const date = parseTimestamp(value)
  return date ? dateText(date) : value
}

/** A frame rate: a fraction, as the API writes one (`24000/1001`, `25/1`), or a number (`25`, `29.97`). */
export type Rate = { num: number; den: number }

/** The rate of `value` (fraction text, a number or its text); undefined when it is none, or not above 0. */
export function readRate(value: unknown): Rate | undefined {
  let rate: Rate | undefined
  if (typeof value === 'number') rate = { num: value, den: 1 }
  else if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*(\d+(?:\.\d+)?))?\s*$/.exec(value)
    if (m) rate = { num: Number(m[1]), den: m[2] === undefined ? 1 : Number(m[2]) }
  }
  return rate && Number.isFinite(rate.num / rate.den) && rate.num > 0 && rate.den > 0 ? rate : undefined
}

/** A rate as people say it: `24000/1001` → "23.976 fps", `25/1` → "25 fps". */
export const rateText = (rate: Rate) => `${Number((rate.num / rate.den).toFixed(3))} fps`

/** A timecode's frame labels per second: the rate rounded up (23.976 → 24, 29.97 → 30), as src/media/timecode.ts counts. */
const timecodeBase = (rate: Rate) => Math.ceil(rate.num / rate.den - 1e-9)

/** Drop frame exists for the NTSC rates only: not whole, base a multiple of 30 (29.97, 59.94). */
const isDropRate = (rate: Rate) =>
  timecodeBase(rate) % 30 === 0 && Math.abs(rate.num / rate.den - timecodeBase(rate)) > 1e-6

/**
 * `frames` as timecode at `rate`: HH:MM:SS:FF, or HH:MM:SS;FF counted as drop frame (SMPTE 12M)
 * when `drop` and the rate is an NTSC one. A length, not a time of day: the hours go past 24.
 */
export function timecodeText(frames: number, rate: Rate, drop = false): string {
  const base = timecodeBase(rate)
  const dropping = drop && isDropRate(rate)
  let n = Math.max(0, Math.round(frames))
  if (dropping) {
    // The labels ;00 and ;01 (;00 to ;03 at 59.94) of every minute but each tenth do not exist:
    // the frames are turned into the count of labels they span.
    const dropped = base / 15
    const perTenMinutes = base * 600 - dropped * 9
    const perMinute = base * 60 - dropped
    const tens = Math.floor(n / perTenMinutes)
    const rest = n % perTenMinutes
    n += dropped * 9 * tens + (rest >= base * 60 ? dropped * (Math.floor((rest - base * 60) / perMinute) + 1) : 0)
  }
  const s = Math.floor(n / base)
  return `${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}${dropping ? ';' : ':'}${two(n % base)}`
}

/** Whether timecode at `rate` can be drop frame (29.97, 59.94): a typed `;` means something only there. */
export const canDropFrame = isDropRate

/** The frames of one day (24 hours of labels) at `rate`: where source timecode wraps to 00:00:00:00. */
export function framesPerDay(rate: Rate, drop = false): number {
  const base = timecodeBase(rate)
  return drop && isDropRate(rate) ? (base * 600 - (base / 15) * 9) * 6 * 24 : base * 86400
}

/**
 * Source timecode: the label of frame `frames` counted from midnight, wrapping after 24 hours as a
 * time of day does (23:59:59:24 + 1 frame is 00:00:00:00). `timecodeText` writes lengths instead.
 */
export function timecodeOfDay(frames: number, rate: Rate, drop = false): string {
  const day = framesPerDay(rate, drop)
  return timecodeText(((Math.round(frames) % day) + day) % day, rate, drop)
}

/** What readTimecode gives: a frame count, or why the text is none. */
export type TimecodeRead = { frames: number; relative?: 1 | -1 } | { error: string }

/**
 * Timecode as an editor types it, to the frames counted from 00:00:00:00 at `rate` (drop frame
 * when `drop` and the rate has it; the separator typed does not change the counting, so `:` in a
 * 29.97 DF clip reads as its drop-frame label):
 * - `10:00:12:05`, `10:00:12;05`, `10.00.12.05`: hours, minutes, seconds, frames;
 * - fewer groups are the low ones: `12:05` is 00:00:12:05, `5` is frame 5;
 * - digits alone are read in pairs from the right: `10001205` is 10:00:12:05, `1205` 00:00:12:05;
 * - a leading `+` or `-` makes it an offset from where the player is (`+1:00` one second on):
 *   `relative` says which way.
 * Hours 00-23, minutes and seconds 00-59, frames below the rate's labels per second, and a
 * drop-frame label that exists (none of ;00 and ;01 at the start of a minute but every tenth).
 */
export function readTimecode(text: string, rate: Rate, drop = false): TimecodeRead {
  let t = text.trim()
  let relative: 1 | -1 | undefined
  if (t.startsWith('+') || t.startsWith('-')) {
    relative = t[0] === '+' ? 1 : -1
    t = t.slice(1).trim()
  }
  const how = 'Type a timecode as HH:MM:SS:FF (10:00:12:05), or its digits (10001205).'
  let groups: number[]
  if (/^\d{1,8}$/.test(t)) {
    const digits = t.padStart(8, '0')
    groups = [0, 2, 4, 6].map((i) => Number(digits.slice(i, i + 2)))
  } else if (/^\d{1,2}([:;.,]\d{1,2}){1,3}$/.test(t)) {
    groups = t.split(/[:;.,]/).map(Number)
    while (groups.length < 4) groups.unshift(0)
  } else return { error: t ? `“${text.trim()}” is not a timecode. ${how}` : `No timecode typed. ${how}` }
  const [h, m, s, f] = groups as [number, number, number, number]
  const base = timecodeBase(rate)
  if (h > 23 || m > 59 || s > 59) return { error: 'Out of range: hours run 00-23, minutes and seconds 00-59.' }
  if (f >= base) return { error: `Frames run 00-${two(base - 1)} at ${rateText(rate)}.` }
  const labels = ((h * 60 + m) * 60 + s) * base + f
  if (!(drop && isDropRate(rate))) return { frames: labels, ...(relative ? { relative } : {}) }
  const dropped = base / 15
  const minutes = h * 60 + m
  if (!relative && s === 0 && m % 10 !== 0 && f < dropped)
    return {
      error: `${two(h)}:${two(m)}:${two(s)};${two(f)} does not exist in drop-frame timecode: ;00${dropped > 2 ? ` to ;${two(dropped - 1)}` : ' and ;01'} are skipped at the start of each minute but every tenth.`,
    }
  // An offset is a length: counted as labels less those dropped within it.
  return { frames: labels - dropped * (minutes - Math.floor(minutes / 10)), ...(relative ? { relative } : {}) }
}

/**
 * The start of an asset's source timecode from its technical details: offset_frames (frames from
 * midnight at its rate) when there, else its label (offset_string, a video's; `timecode` or an
 * audio's time_code) read; drop frame when the label has `;` (or `.` or `,`, as some files spell
 * it) and the rate has it. undefined when it has none, or no rate to count it at.
 */
export function startTimecode(
  technical: Record<string, unknown>,
  rate: Rate | undefined,
): { frames: number; drop: boolean; label: string } | undefined {
  if (!rate) return undefined
  const label = [technical.offset_string, technical.timecode, technical.time_code].find(
    (v): v is string => typeof v === 'string' && /^\d{2}:\d{2}:\d{2}[:;.,]\d{2}$/.test(v),
  )
  if (!label) return undefined
  const drop = /[;.,]\d{2}$/.test(label) && isDropRate(rate)
  const given = technical.offset_frames
  if (typeof given === 'number' && Number.isInteger(given) && given >= 0 && label === technical.offset_string)
    return { frames: given, drop, label }
  const read = readTimecode(label, rate, drop)
  return 'frames' in read ? { frames: read.frames, drop, label } : undefined
}

/**
 * A path shortened from the left to about `max` characters, whole folders dropped first, so that
 * the file's name always shows: `/mnt/nas/Show/Day 2/A001C003.mov` at 24 is `…/Day 2/A001C003.mov`.
 * A name longer than `max` is kept whole (`…/A001C003_very_long.mov`). Backslashes count as slashes.
 */
export function shortPath(path: string, max: number): string {
  if (path.length <= max) return path
  const sep = path.includes('/') || !path.includes('\\') ? '/' : '\\'
  const parts = path.split(/[\\/]/)
  let kept = parts.pop() ?? ''
  while (parts.length) {
    const next = `${parts[parts.length - 1]}${sep}${kept}`
    if (next.length + 2 > max) break
    kept = next
    parts.pop()
  }
  return parts.length ? `…${sep}${kept}` : kept
}

/** Seconds as HH:MM:SS.mmm (a length with no frame rate to count it in). */
export function clockText(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000))
  const s = Math.floor(ms / 1000)
  return `${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}.${String(ms % 1000).padStart(3, '0')}`
}

/** A length of `seconds`: timecode at `rate` when there is one, else HH:MM:SS.mmm. */
export const durationText = (seconds: number, rate?: Rate, drop = false) =>
  rate ? timecodeText((seconds * rate.num) / rate.den, rate, drop) : clockText(seconds)

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB']
/** 1536 → "1.5 KB" (powers of 1000, as file managers and disk labels count). */
export function formatBytes(bytes: number): string {
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000
    unit++
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`
}

/** Bits per second as people read a bit rate: 12400000 → "12.4 Mb/s", 320000 → "320 kb/s". */
export function bitRateText(bitsPerSecond: number): string {
  if (bitsPerSecond >= 1e9) return `${Number((bitsPerSecond / 1e9).toFixed(2))} Gb/s`
  if (bitsPerSecond >= 1e6) return `${Number((bitsPerSecond / 1e6).toFixed(1))} Mb/s`
  if (bitsPerSecond >= 1e3) return `${Number((bitsPerSecond / 1e3).toFixed(0))} kb/s`
  return `${bitsPerSecond} b/s`
}

/** Hertz as a sample rate: 48000 → "48 kHz", 44100 → "44.1 kHz". */
export const sampleRateText = (hertz: number) =>
  hertz >= 1000 ? `${Number((hertz / 1000).toFixed(3))} kHz` : `${hertz} Hz`

/** What the catalogue and the asset page say of an asset: a short label, its tone, and a sentence saying more. */
export type AssetState = { label: string; tone: 'failed' | 'working' | 'online' | 'offline'; detail: string }

/**
 * The state of an asset from its status_asset (-1 the import failed, 0 an import under way, 6
 * done; undefined when the answer did not say) and is_production. A failed import is never shown
 * as "online": the file may be there, but the asset is not what the import should have made.
 */
export function assetState(status: number | undefined, online: boolean): AssetState {
  const where = online ? 'its file is online' : 'its file is offline'
  if (status === -1)
    return { label: 'import failed', tone: 'failed', detail: `The import failed (its import logs say why); ${where}.` }
  if (status === 0) return { label: 'importing', tone: 'working', detail: `An import is under way; ${where}.` }
  return online
    ? { label: 'online', tone: 'online', detail: 'Its file is online.' }
    : { label: 'offline', tone: 'offline', detail: 'Its file is offline: not where it was last seen.' }
}
