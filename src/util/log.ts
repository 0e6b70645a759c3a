// One line per event on stderr. Text (the default): time, level, message, then key=value pairs,
// for people reading a terminal or journalctl. JSON (serve --log-format json): one object per
// line with time, level, msg and the same fields, for log collectors that would otherwise have
// to parse the text.
export type Log = {
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
}

export const LOG_FORMATS = ['text', 'json'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

function textLine(time: string, level: string, message: string, fields: Record<string, unknown>) {
  const extra = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' && v !== '' && !/[\s"]/.test(v) ? v : JSON.stringify(v)}`)
    .join(' ')
  return `${time} ${level} ${message}${extra ? ' ' + extra : ''}\n`
}

const FIXED = new Set(['time', 'level', 'msg'])

function jsonLine(time: string, level: string, message: string, fields: Record<string, unknown>) {
  const line: Record<string, unknown> = { time, level, msg: message }
  // A field can never pass for one of the fixed keys; it keeps its value under another name.
  for (const [k, v] of Object.entries(fields)) line[FIXED.has(k) ? `field_${k}` : k] = v
  return JSON.stringify(line, (_, v) => (typeof v === 'bigint' ? String(v) : v)) + '\n'
}

export function createLog(format: LogFormat = 'text', write: (line: string) => void = (l) => void process.stderr.write(l)): Log {
  const render = format === 'json' ? jsonLine : textLine
  const at = (level: string) => (message: string, fields: Record<string, unknown> = {}) =>
    write(render(new Date().toISOString(), level, message, fields))
  return { info: at('info'), warn: at('warn'), error: at('error') }
}

export const stderrLog: Log = createLog('text')

export const silentLog: Log = { info() {}, warn() {}, error() {} }
