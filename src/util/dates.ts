import { isoTimestamp } from './time.ts'

// YYYY, YYYY-MM, YYYY-MM-DD, or a date and time "YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ]" (a T may
// stand for the space; TZ is Z or ±HH[:MM]; no TZ means UTC).
const DATE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/

/** The stored timestamp for a user-given date, or undefined when the text is not a valid date. */
export function parseDate(text: string): string | undefined {
  const m = DATE.exec(text.trim())
  if (!m) return undefined
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', frac = '', tz = 'Z'] = m
  const month = Number(mo),
    day = Number(d)
  // The calendar is checked on the text as written, before any offset moves the day: Date rolls
  // 2024-02-30 over to March 1 instead of refusing it, and a check of the UTC day after the
  // shift only works for Z times ("2024-02-30 10:00+02:00" was once stored as March 1).
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(Number(y), month)) return undefined
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined
  const zone =
    tz === 'Z' ? 'Z' : tz.length === 3 ? `${tz}:00` : tz.includes(':') ? tz : `${tz.slice(0, 3)}:${tz.slice(3)}`
  // An offset past ±23:59 makes an invalid Date.
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${zone}`)
  if (Number.isNaN(date.getTime())) return undefined
  const micro = frac.padEnd(6, '0')
  return isoTimestamp(date).replace(/\.\d{6}Z$/, `.${micro}Z`)
}

/** Days of `month` (1 to 12) in `year` of the Gregorian calendar. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}
