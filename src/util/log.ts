// One line per event on stderr. Text (the default): time, level, message, then key=value pairs,
// for people reading a terminal or journalctl. JSON (serve --log-format json): one object per
// line with time, level, msg and the same fields, for log collectors that would otherwise have
// to parse the text.
export type Log = {
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
  /**
   * info, for the lines that come by the thousand (one per request): on stderr, written with the
   * others of the same turn of the event loop at its end, in one write (stderrLines). Absent, or
   * on a `write` of createLog's caller: info.
   */
  infoBatched?(message: string, fields?: Record<string, unknown>): void
}

export const LOG_FORMATS = ['text', 'json'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

const NEEDS_QUOTES = /[\s"]/

/**
 * One string added to per field (fields are object literals: for-in), not an array of pairs
 * joined: 0.3 µs a request line, not 0.8.
 */
function textLine(time: string, level: string, message: string, fields: Record<string, unknown>) {
  let line = `${time} ${level} ${message}`
  for (const k in fields) {
    const v = fields[k]
    const text =
      typeof v === 'string'
        ? v !== '' && !NEEDS_QUOTES.test(v)
          ? v
          : JSON.stringify(v)
        : // As JSON.stringify writes a finite number, without its call.
          typeof v === 'number' && Number.isFinite(v)
          ? String(v)
          : JSON.stringify(v)
    line += ` ${k}=${text}`
  }
  return line + '\n'
}

const FIXED = new Set(['time', 'level', 'msg'])

function jsonLine(time: string, level: string, message: string, fields: Record<string, unknown>) {
  const line: Record<string, unknown> = { time, level, msg: message }
  // A field can never pass for one of the fixed keys; it keeps its value under another name.
  for (const [k, v] of Object.entries(fields)) line[FIXED.has(k) ? `field_${k}` : k] = v
  return JSON.stringify(line, (_, v) => (typeof v === 'bigint' ? String(v) : v)) + '\n'
}

/**
 * The process's stderr, shared by every log on it so that their lines keep their order. Written
 * as it came, a request's line cost a write(2) each: 7 µs a line in all (stderr to a file), 5 of
 * them in the write. Batched lines (infoBatched) are held until the end of this turn of the event
 * loop (a setImmediate), where all the lines of the turn go in one write: under load a turn
 * answers many requests (1.8 µs a line when hundreds share a write). Any other line writes what
 * is held first, then itself; 64 KiB held are written at once; and the process's exit writes what
 * is left (also on an uncaught error, after its report). Only an end that runs no exit (SIGKILL,
 * a crash of the runtime itself) loses the lines of that last turn.
 */
const stderrLines = (() => {
  let held = ''
  let due = false
  let hooked = false
  const flush = () => {
    due = false
    if (held === '') return
    const out = held
    held = ''
    process.stderr.write(out)
  }
  return {
    now(line: string) {
      if (held !== '') flush()
      process.stderr.write(line)
    },
    soon(line: string) {
      held += line
      if (held.length >= 65_536) flush()
      else if (!due) {
        due = true
        setImmediate(flush)
      }
      if (!hooked) {
        hooked = true
        process.on('exit', flush)
      }
    },
  }
})()

/**
 * The time of a line, as toISOString writes it: made once per millisecond, not once per line
 * (0.4 µs each; under load a millisecond has a dozen request lines).
 */
const lineTime = (() => {
  let ms = -1
  let text = ''
  return () => {
    const t = Date.now()
    if (t !== ms) {
      ms = t
      text = new Date(t).toISOString()
    }
    return text
  }
})()

export function createLog(format: LogFormat = 'text', write?: (line: string) => void): Log {
  const render = format === 'json' ? jsonLine : textLine
  const [now, soon] = write ? [write, write] : [stderrLines.now, stderrLines.soon]
  const at =
    (level: string, put: (line: string) => void) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      put(render(lineTime(), level, message, fields))
  return { info: at('info', now), warn: at('warn', now), error: at('error', now), infoBatched: at('info', soon) }
}

export const stderrLog: Log = createLog('text')

export const silentLog: Log = { info() {}, warn() {}, error() {} }
