// One line per event on stderr: time, level, message, then key=value pairs.
export type Log = {
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
}

function line(level: string, message: string, fields: Record<string, unknown> = {}) {
  const extra = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`)
    .join(' ')
  process.stderr.write(`${new Date().toISOString()} ${level} ${message}${extra ? ' ' + extra : ''}\n`)
}

export const stderrLog: Log = {
  info: (m, f) => line('info', m, f),
  warn: (m, f) => line('warn', m, f),
  error: (m, f) => line('error', m, f),
}

export const silentLog: Log = { info() {}, warn() {}, error() {} }
