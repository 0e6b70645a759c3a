import { isoTimestamp } from './time.ts'

// YYYY, YYYY-MM, YYYY-MM-DD, or a date and time "YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ]" (a T may
// stand for the space; TZ is Z or ±HH[:MM]; no TZ means UTC).
const DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/

/** The stored timestamp for a user-given date, or undefined when the text is not a valid date. */
export function parseDate(text: string): string | undefined {
  const m = DATE.exec(text.trim())
  if (!m) return undefined
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', frac = '', tz = 'Z'] = m
  const month = Number(mo), day = Number(d)
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined
  const zone = tz === 'Z' ? 'Z' : tz.length === 3 ? `${tz}:00` : tz.includes(':') ? tz : `${tz.slice(0, 3)}:${tz.slice(3)}`
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${zone}`)
  if (Number.isNaN(date.getTime()) || date.getUTCDate() !== day && zone === 'Z') return undefined
  const micro = frac.padEnd(6, '0')
  return isoTimestamp(date).replace(/\.\d{6}Z$/, `.${micro}Z`)
}
