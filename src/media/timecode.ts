// SMPTE timecode (SMPTE 12M) both ways: a label (HH:MM:SS:FF, or HH:MM:SS;FF for drop frame) to
// the frames counted from midnight, and frames to a label; and a broadcast WAV's time_reference
// (samples since midnight) as a label. Pure: the import's rules read a request's offset_string
// with it, the probe a file's timecode.

export type Fraction = { num: number; den: number }

const fractionText = (fps: Fraction) => `${fps.num}/${fps.den}`

/** A timecode's frame labels per second: the rate rounded up (25 → 25, 29.97 → 30, 23.976 → 24). */
export const timecodeBase = (fps: Fraction) => Math.ceil(fps.num / fps.den)

/** Labels drop frame skips at the start of each minute but every tenth: 2 at 29.97, 4 at 59.94. */
const droppedPerMinute = (base: number) => base / 15

/** Drop frame exists for the NTSC rates only: not an integer, base a multiple of 30 (29.97, 59.94). */
const dropFrameRate = (fps: Fraction) => timecodeBase(fps) % 30 === 0 && fps.num % fps.den !== 0

const SMPTE = /^(\d{2}):(\d{2}):(\d{2})([:;.,])(\d{2})$/

/**
 * Reads SMPTE timecode, HH:MM:SS:FF or HH:MM:SS;FF (drop frame). Returns the frame count from
 * 00:00:00:00 when fps is known (undefined when not), or the reason the text is not a timecode.
 * Drop frame counts as SMPTE 12M: 30 (or 60) labels a second, less 2 (or 4) each minute but
 * every tenth: 00:59:59;28 at 29.97 is 107998 − 2 × (59 − 5) = 107890.
 */
export function readTimecode(
  text: string,
  fps: Fraction | undefined,
  options: { lenient?: boolean } = {},
): { frames: number | undefined } | { error: string } {
  const m = SMPTE.exec(text)
  // `.` and `,` (drop frame in some tools' spelling) are taken from files only (`lenient`).
  if (!m || (!options.lenient && m[4] !== ':' && m[4] !== ';'))
    return { error: 'Not a SMPTE timecode: use HH:MM:SS:FF, or HH:MM:SS;FF for drop frame.' }
  const [h, mi, s, f] = [m[1], m[2], m[3], m[5]].map(Number) as [number, number, number, number]
  const drop = m[4] !== ':'
  if (h > 23 || mi > 59 || s > 59) return { error: 'Timecode out of range: hours 00-23, minutes and seconds 00-59.' }
  if (!fps) return { frames: undefined }
  const base = timecodeBase(fps)
  if (f >= base) return { error: `Timecode frames must be below ${base} at ${fractionText(fps)} fps.` }
  const seconds = (h * 60 + mi) * 60 + s
  if (!drop) return { frames: seconds * base + f }
  if (!dropFrameRate(fps))
    return {
      error: `Drop-frame timecode (;) needs an NTSC rate such as 30000/1001 or 60000/1001, not ${fractionText(fps)}.`,
    }
  const dropped = droppedPerMinute(base)
  if (s === 0 && mi % 10 !== 0 && f < dropped)
    return {
      error: `Drop-frame timecode skips frames 00-${String(dropped - 1).padStart(2, '0')} at the start of each minute but every tenth.`,
    }
  const minutes = h * 60 + mi
  return { frames: seconds * base + f - dropped * (minutes - Math.floor(minutes / 10)) }
}

/**
 * The label of frame `frames` counted from midnight (wrapping at 24 hours) at `fps`: HH:MM:SS:FF,
 * or HH:MM:SS;FF with drop-frame counting when `drop` and the rate is an NTSC one.
 */
export function timecodeLabel(frames: number, fps: Fraction, drop = false): string {
  const base = timecodeBase(fps)
  const dropping = drop && dropFrameRate(fps)
  let n = Math.max(0, Math.floor(frames))
  if (dropping) {
    const dropped = droppedPerMinute(base)
    const perTenMinutes = base * 600 - dropped * 9
    const perMinute = base * 60 - dropped
    n %= perTenMinutes * 6 * 24
    const tens = Math.floor(n / perTenMinutes)
    const rest = n % perTenMinutes
    // The first minute of ten keeps all its labels; each later one skips `dropped`.
    n += dropped * 9 * tens + (rest >= base * 60 ? dropped * (Math.floor((rest - base * 60) / perMinute) + 1) : 0)
  } else n %= base * 86400
  const two = (x: number) => String(x).padStart(2, '0')
  const f = n % base
  const s = Math.floor(n / base)
  return `${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}${dropping ? ';' : ':'}${two(f)}`
}

/**
 * A broadcast WAV's timecode: its bext time_reference (samples since midnight) over its sample
 * rate, as whole frames of `rate` (the iXML TIMECODE_RATE, else 25 fps), labelled with drop frame
 * when `drop` (iXML TIMECODE_FLAG DF). 172800000 samples at 48 kHz, 25 fps → "01:00:00:00".
 */
export function bwfTimecode(
  timeReference: number,
  sampleRate: number,
  rate: Fraction = { num: 25, den: 1 },
  drop = false,
): string {
  const frames = Math.floor((timeReference * rate.num) / (sampleRate * rate.den) + 1e-9)
  return timecodeLabel(frames, rate, drop)
}
