/** The one timestamp format of the API: UTC, ISO 8601, microseconds, trailing Z. */
export function isoTimestamp(date: Date = new Date()): string {
  return date.toISOString().replace('Z', '000Z')
}

/** Adds whole days to a stored timestamp, keeping the format. */
export function addDays(timestamp: string, days: number): string {
  return isoTimestamp(new Date(Date.parse(timestamp) + days * 86_400_000))
}

/**
 * A timestamp for a record's date_mod: now, or a microsecond after `previous` when the clock has
 * not moved past it (the format keeps milliseconds of the clock), so that every change moves it.
 */
export function isoTimestampAfter(previous: string): string {
  const now = isoTimestamp()
  if (now > previous) return now
  const ms = Date.parse(previous)
  const micros = Number(previous.slice(-7, -1)) % 1000
  return micros < 999
    ? `${previous.slice(0, -4)}${String(micros + 1).padStart(3, '0')}Z`
    : isoTimestamp(new Date(ms + 1))
}
