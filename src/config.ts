// Flags and environment → one frozen, typed configuration (README.md, The executable).
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { hostOf } from './http/hosts.ts'
import { API_VERSIONS, type ApiVersion } from './http/versioning.ts'
import { LOG_FORMATS, type LogFormat } from './util/log.ts'

export class UsageError extends Error {}

export type ServeConfig = Readonly<{
  dataDir: string
  /**
   * The PostgreSQL catalogue (--database, else REELHOUSE_DATABASE): a postgres:// URL. Undefined:
   * the SQLite catalogue in the data folder.
   */
  database?: string
  host: string
  port: number
  poll: boolean
  pollInterval: number
  rescanInterval: number
  taskConcurrency: number
  /** Where ffmpeg and ffprobe are; undefined: PATH. */
  ffmpegDir?: string
  /** Seconds a watch-folder file must stay unchanged before it is imported. */
  settle: number
  /** No line per request (--quiet); events and errors are still logged. */
  quiet: boolean
  logFormat: LogFormat
  /**
   * The address clients reach the service at (--public-url), without a final slash; the API
   * root and Link headers build absolute URLs on it. Undefined: http:// and the request's Host.
   */
  publicUrl?: string
  /** Origins whose browser pages may call the API (--allow-origin); none: CORS off. */
  allowOrigins: readonly string[]
  /**
   * Names (or addresses) the Host of a request may be beside this machine's own, when the server
   * listens on loopback only (--allow-host); lower case, without a final dot.
   */
  allowHosts: readonly string[]
  /**
   * The API version of requests whose Accept header names none (--default-api-version): 2 for
   * facilities whose scripts use the published medialoopster client, which sends no version and
   * validates productions in version 2's shape.
   */
  defaultApiVersion: ApiVersion
}>

export function defaultDataDir(
  env: Record<string, string | undefined> = process.env,
  platform = process.platform,
): string {
  // The home folder of `env`, as homedir() reads it from the process's: the variable, else the
  // account's (an empty variable counts as unset).
  const home = () => (platform === 'win32' ? env.USERPROFILE : env.HOME) || homedir()
  if (platform === 'darwin') return join(home(), 'Library', 'Application Support', 'reelhouse')
  // Windows: the machine's own application data, not the roaming profile's (%APPDATA%), which a
  // domain copies to its server at each sign-out and back at each sign-in: a catalogue and its
  // WAL are this machine's state. (No Windows executable ran before this default, so there is no
  // older folder to carry over.)
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home(), 'AppData', 'Local'), 'reelhouse')
  return join(env.XDG_DATA_HOME || join(home(), '.local', 'share'), 'reelhouse')
}

/**
 * A REELHOUSE_* variable, an empty one counting as unset: `REELHOUSE_DATA=` (a blanked line of an
 * env file, say) must not mean the current folder, nor `REELHOUSE_PORT=` a usage error.
 */
const setting = (env: Record<string, string | undefined>, name: `REELHOUSE_${string}`) => env[name] || undefined

/**
 * `path` made absolute against `cwd`, the working folder of a command; undefined: the process's,
 * read only when `path` is relative (a command given absolute paths runs in a removed folder).
 */
export const resolveIn = (cwd: string | undefined, path: string) =>
  cwd === undefined ? resolve(path) : resolve(cwd, path)

/**
 * The flag is never empty: the command line refuses an empty value (resolve('') is the current
 * folder). A relative one is taken from `cwd` (resolveIn).
 */
export const dataDirOf = (
  flag: string | undefined,
  env: Record<string, string | undefined> = process.env,
  cwd?: string,
) => resolveIn(cwd, flag ?? setting(env, 'REELHOUSE_DATA') ?? defaultDataDir(env))

export function numberOption(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, not "${value}"`)
  return Number(value)
}

export function serveConfig(
  flags: Record<string, string | string[] | boolean | undefined>,
  env: Record<string, string | undefined> = process.env,
  cwd?: string,
): ServeConfig {
  const str = (k: string) => (typeof flags[k] === 'string' ? (flags[k] as string) : undefined)
  const list = (k: string) => (Array.isArray(flags[k]) ? (flags[k] as string[]) : undefined)
  return Object.freeze({
    dataDir: dataDirOf(str('data'), env, cwd),
    database: str('database') ?? setting(env, 'REELHOUSE_DATABASE'),
    host: str('host') ?? setting(env, 'REELHOUSE_HOST') ?? '127.0.0.1',
    port: numberOption('port', str('port') ?? setting(env, 'REELHOUSE_PORT'), 8000, 0, 65535),
    poll: flags.poll === true,
    pollInterval: numberOption('poll-interval', str('poll-interval'), 10, 1, 86400),
    rescanInterval: numberOption('rescan-interval', str('rescan-interval'), 3600, 0, 86400 * 30),
    taskConcurrency: numberOption(
      'task-concurrency',
      str('task-concurrency') ?? setting(env, 'REELHOUSE_TASK_CONCURRENCY'),
      2,
      1,
      64,
    ),
    ffmpegDir: str('ffmpeg') === undefined ? undefined : resolveIn(cwd, str('ffmpeg')!),
    settle: numberOption('settle', str('settle'), 2, 1, 3600),
    quiet: flags.quiet === true,
    logFormat: logFormatOf(str('log-format') ?? setting(env, 'REELHOUSE_LOG_FORMAT')),
    publicUrl: publicUrlOf(str('public-url') ?? setting(env, 'REELHOUSE_PUBLIC_URL')),
    allowOrigins: Object.freeze(
      (
        list('allow-origin') ??
        setting(env, 'REELHOUSE_ALLOW_ORIGIN')
          ?.split(',')
          .filter((o) => o.trim()) ??
        []
      ).map(originOf),
    ),
    allowHosts: Object.freeze(
      (
        list('allow-host') ??
        setting(env, 'REELHOUSE_ALLOW_HOST')
          ?.split(',')
          .filter((h) => h.trim()) ??
        []
      ).map(allowHostOf),
    ),
    defaultApiVersion: apiVersionOf(str('default-api-version') ?? setting(env, 'REELHOUSE_DEFAULT_API_VERSION')),
  })
}

function apiVersionOf(value: string | undefined): ApiVersion {
  if (value === undefined) return 1
  const version = API_VERSIONS.find((v) => String(v) === value)
  if (version === undefined)
    throw new UsageError(`--default-api-version must be ${API_VERSIONS.join(' or ')}, not "${value}"`)
  return version
}

function logFormatOf(value: string | undefined): LogFormat {
  if (value === undefined) return 'text'
  if (!(LOG_FORMATS as readonly string[]).includes(value))
    throw new UsageError(`--log-format must be text or json, not "${value}"`)
  return value as LogFormat
}

/**
 * An absolute http or https URL, perhaps with a path (a proxy serving us under /reelhouse/),
 * without query, fragment or credentials: what goes before /api/ in the URLs we hand out.
 */
function publicUrlOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const url = URL.canParse(value) ? new URL(value) : undefined
  if (
    !url ||
    !['http:', 'https:'].includes(url.protocol) ||
    url.search ||
    url.hash ||
    url.username ||
    url.password ||
    !/^https?:\/\/[^/]/i.test(value)
  )
    throw new UsageError(
      `--public-url must be an absolute http or https URL such as https://media.example.com or https://example.com/reelhouse, not "${value}"`,
    )
  return url.href.replace(/\/+$/, '')
}

/**
 * A browser origin: scheme, host and port, nothing else (a final slash is forgiven), kept as the
 * Origin header spells it (lower case, no default port), since it is compared with that header
 * as text. A path or query could never match an Origin header and is a usage error.
 */
function originOf(value: string): string {
  const given = value.trim().replace(/\/$/, '')
  const url = /^https?:\/\/[^/?#@]+$/i.test(given) && URL.canParse(given) ? new URL(given) : undefined
  if (!url)
    throw new UsageError(
      `--allow-origin must be an origin such as https://panel.example:8443 (scheme, host and port, no path), not "${value}"`,
    )
  return url.origin
}

/**
 * A host name or address, without scheme, port or path (what the Host header names), kept as the
 * check compares it. A wildcard is refused rather than taken as a name no Host ever is.
 */
function allowHostOf(value: string): string {
  const host = hostOf(value.trim())
  if (!host)
    throw new UsageError(
      `--allow-host must be a host name or address such as media.example.com (no scheme, port, path or wildcard), not "${value}"`,
    )
  return host
}

export const dbFile = (dataDir: string) => join(dataDir, 'reelhouse.db')
