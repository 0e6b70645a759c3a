// An asset's clock (docs/api.md, Markers): its frame rate, the source timecode of its first frame
// and its length, read from its technical details, and the conversions of a marker's times
// between milliseconds from the first frame and the asset's source timecode. Pure.
//
// A marker's times are milliseconds; with a frame rate they name frames. A start names the frame
// that shows at that instant (the frame holding it: floor), an end the frame after the last one
// the range touches (ceil), so that [start, end) covers every frame it touches. Going the other
// way, a start frame is the first whole millisecond inside it (ceil) and an end frame the last
// whole millisecond before it (floor): a timecode read, stored and shown again is the same
// timecode (frames are longer than a millisecond at every rate up to 1000 fps).
import { type Fraction, readTimecode, timecodeBase, timecodeLabel } from '../../media/timecode.ts'

export type Clock = {
  /** Frames per second; undefined: the asset has no frame rate, and its markers have milliseconds only. */
  fps?: Fraction
  /** The source timecode of the first frame, as frames from midnight (0 when the asset has none). */
  start: number
  /** Whether its timecode counts drop frame (a `;` label at 29.97 or 59.94). */
  drop: boolean
  /** The length in frames, when the frame rate and the length are known. */
  frames?: number
  /** The length in milliseconds, when known. */
  ms?: number
}

/** The rates written as decimals that mean an NTSC rate (29.97 is 30000/1001). */
const NTSC: [number, number][] = [
  [24000, 1001],
  [30000, 1001],
  [48000, 1001],
  [60000, 1001],
  [120000, 1001],
]

/** A frame rate as technical holds it ("30000/1001", "25/1", "25", 29.97); undefined when it is none (0/0, text). */
export function rateOf(value: unknown): Fraction | undefined {
  if (typeof value === 'string') {
    const m = /^\s*(\d{1,9})\s*\/\s*(\d{1,9})\s*$/.exec(value)
    if (m) {
      const fps = { num: Number(m[1]), den: Number(m[2]) }
      return fps.num > 0 && fps.den > 0 && fps.num / fps.den <= 1000 ? fps : undefined
    }
    if (!/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined
    value = Number(value)
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1000) return undefined
  if (Number.isInteger(value)) return { num: value, den: 1 }
  const ntsc = NTSC.find(([n, d]) => Math.abs(value - n / d) < 0.001)
  return ntsc ? { num: ntsc[0], den: ntsc[1] } : { num: Math.round(value * 1000), den: 1000 }
}

/** The members of technical that may hold the first frame's timecode, in the order they are asked. */
const TIMECODE_MEMBERS = ['offset_string', 'timecode', 'time_code'] as const

/**
 * The clock of an asset of `kind` with these technical details: `fps`; the first timecode of
 * offset_string (video), timecode, or time_code (audio), read at that rate (a label that does not
 * fit the rate counts from 00:00:00:00); `duration`, frames for video and seconds for audio and
 * images (docs/api.md, Import).
 */
export function clockOf(kind: string, technical: Record<string, unknown>): Clock {
  const fps = rateOf(technical.fps)
  const clock: Clock = { fps, start: 0, drop: false }
  const label = TIMECODE_MEMBERS.map((m) => technical[m]).find((v): v is string => typeof v === 'string')
  if (fps && label) {
    const drop = /[;.,]\d{2}$/.test(label)
    const read = readTimecode(label, fps, { lenient: true })
    if ('frames' in read && read.frames !== undefined) Object.assign(clock, { start: read.frames, drop })
    else if (drop) {
      // A drop-frame label at a rate that has none (25 fps): its digits, counted without dropping.
      const plain = readTimecode(label.replace(/[;.,](\d{2})$/, ':$1'), fps)
      if ('frames' in plain && plain.frames !== undefined) clock.start = plain.frames
    }
  }
  const duration = typeof technical.duration === 'string' ? Number(technical.duration) : technical.duration
  if (typeof duration === 'number' && Number.isFinite(duration) && duration >= 0) {
    if (kind === 'video') {
      if (fps) {
        clock.frames = Math.round(duration)
        clock.ms = Math.floor((clock.frames * 1000 * fps.den) / fps.num)
      }
    } else {
      clock.ms = Math.round(duration * 1000)
      if (fps) clock.frames = Math.ceil((duration * fps.num) / fps.den - 1e-9)
    }
  }
  return clock
}

/** The frame (from the first) that shows at `ms`. */
export const startFrame = (fps: Fraction, ms: number) => Math.floor((ms * fps.num) / (1000 * fps.den))
/** The frame after the last one a range ending at `ms` touches. */
export const endFrame = (fps: Fraction, ms: number) => Math.ceil((ms * fps.num) / (1000 * fps.den))
/** The first whole millisecond of frame `n`. */
export const startMs = (fps: Fraction, n: number) => Math.ceil((n * 1000 * fps.den) / fps.num)
/** The last whole millisecond before frame `n` begins (the end of a range up to it). */
export const endMs = (fps: Fraction, n: number) => Math.floor((n * 1000 * fps.den) / fps.num)

/** Frames in a day at the clock's counting (labels wrap at midnight). */
function framesPerDay(fps: Fraction, drop: boolean) {
  const base = timecodeBase(fps)
  return drop ? (base * 600 - (base / 15) * 9) * 6 * 24 : base * 86400
}

/** The source timecode of frame `n` (from the first frame). */
export const labelOf = (clock: Clock & { fps: Fraction }, n: number) =>
  timecodeLabel(clock.start + n, clock.fps, clock.drop)

/** A duration of `n` frames as a timecode (counted from 00:00:00:00 as the asset counts). */
export const durationLabel = (clock: Clock & { fps: Fraction }, n: number) => timecodeLabel(n, clock.fps, clock.drop)

/**
 * A source timecode typed by a user, as the frame (from the first) it names, or why it names
 * none. At a drop-frame asset `:` reads as `;` (the asset counts one way); at a non-drop one a `;`
 * label is refused. A label before the first timecode is read past midnight (an asset that
 * runs through 00:00:00:00); whether it lies within the asset is the caller's to check.
 */
export function frameOfLabel(clock: Clock & { fps: Fraction }, text: string): { frame: number } | { error: string } {
  const drop = /;\d{2}$/.test(text)
  if (drop && !clock.drop)
    return {
      error: `This asset's timecode is non-drop frame: write HH:MM:SS:FF (its first frame is ${labelOf(clock, 0)}).`,
    }
  const label = clock.drop ? text.replace(/:(\d{2})$/, ';$1') : text
  const read = readTimecode(label, clock.fps)
  if ('error' in read) return { error: read.error }
  const day = framesPerDay(clock.fps, clock.drop)
  return { frame: (((read.frames! - clock.start) % day) + day) % day }
}

/** A time of an asset without a frame rate as text: HH:MM:SS.mmm. */
export function clockText(ms: number): string {
  const two = (n: number) => String(n).padStart(2, '0')
  const s = Math.floor(ms / 1000)
  return `${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}.${String(ms % 1000).padStart(3, '0')}`
}
