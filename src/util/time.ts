/** The one timestamp format of the API: UTC, ISO 8601, microseconds, trailing Z. */
export function isoTimestamp(date: Date = new Date()): string {
  return date.toISOString().replace('Z', '000Z')
}

/** Adds whole days to a stored timestamp, keeping the format. */
export function addDays(timestamp: string, days: number): string {
  return isoTimestamp(new Date(Date.parse(timestamp) + days * 86_400_000))
}
