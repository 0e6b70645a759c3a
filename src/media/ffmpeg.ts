// ffmpeg and ffprobe as optional helpers (docs/media.md): found once, on PATH or in the folder
// `--ffmpeg DIR` names, and run as child processes with an argument list (never a shell), a time
// limit and a cancel signal. When one is missing the service goes on and says so in warnings:
// `missing()` is that text.
//
// A child never blocks the event loop: its output is read from pipes asynchronously. Only the
// last few KiB of stderr are kept; that is where ffmpeg puts the reason a run failed.
import { statSync } from 'node:fs'
import { dirname, resolve, win32 } from 'node:path'
import { holdInput } from '../storage/windows/calls.ts'
import { CancelledError } from '../storage/fs.ts'

export type Binary = 'ffmpeg' | 'ffprobe'
const BINARIES: readonly Binary[] = ['ffmpeg', 'ffprobe']

export type MediaErrorCode =
  /** ffmpeg or ffprobe is not installed (or does not run). */
  | 'missing'
  /** The file is not there, or is not a regular file. */
  | 'not_found'
  /** ffprobe cannot read it, or it lacks what its kind needs (a video stream, an audio stream). */
  | 'not_media'
  /** The child exited with an error. */
  | 'failed'
  /** The child ran past its time limit and was killed. */
  | 'timeout'
  /** The output name is taken; a proxy never overwrites. */
  | 'taken'

export class MediaError extends Error {
  constructor(
    readonly code: MediaErrorCode,
    message: string,
    /** The tail of the child's stderr, when a child ran. */
    readonly stderr = '',
  ) {
    super(message)
  }
}

export type RunOptions = {
  /** Killed (SIGTERM, then SIGKILL after `graceMs`) once this has passed. */
  timeoutMs: number
  /** Also killed when it writes nothing for this long (ffmpeg's -progress writes twice a second). */
  idleMs?: number
  /** Aborting kills the child; the run then rejects with CancelledError. */
  signal?: AbortSignal
  /** Each stdout line as it comes; stdout is then not collected. */
  onLine?: (line: string) => void
  /**
   * An open descriptor the child gets as its fd 3, named in the arguments as `file:${INPUT}`:
   * it reads the very file that was opened and checked, whatever its path names by then.
   */
  input?: number
  /**
   * The path `input` was opened by. Windows has no /dev/fd: there the child is given this path
   * instead, while the file is held so that nobody may write, rename or delete it (ffmpeg's own
   * open, for reading, is allowed), and only once the held file is checked to be the
   * descriptor's (volume and file index): the child reads the very file that was checked.
   */
  inputPath?: string
  /**
   * An open folder the child gets as its fd 4, where the system names it OUTPUT_DIR: the child
   * writes `${OUTPUT_DIR}/name` in the very folder that was opened and checked.
   */
  outputDir?: number
  graceMs?: number
}

export type RunResult = { stdout: string; stderr: string }

/** How a child names the descriptor given as RunOptions.input (Linux reopens the file itself, macOS duplicates it). */
export const INPUT = '/dev/fd/3'

/**
 * How a child names a file in the folder given as RunOptions.outputDir; undefined where the system
 * cannot name a path below a descriptor of a folder (macOS's /dev/fd opens only the descriptor
 * itself): the child is then given the folder's path.
 */
export const OUTPUT_DIR = process.platform === 'linux' ? '/dev/fd/4' : undefined

export type Ffmpeg = {
  /** Where each binary was found; absent when it was not found or did not run. */
  readonly paths: Readonly<Partial<Record<Binary, string>>>
  readonly available: Readonly<Record<Binary, boolean>>
  /** First line of `-version` of each binary that runs, for logs and health. */
  readonly versions: Readonly<Partial<Record<Binary, string>>>
  /**
   * A sentence for an import warning when one of `needed` (default: both) cannot be used,
   * undefined when all can.
   */
  missing(...needed: Binary[]): string | undefined
  /**
   * Runs a binary with an argument list. Resolves when it exits with 0; rejects with MediaError
   * ('missing', 'failed' with the stderr tail, 'timeout') or CancelledError (aborted).
   */
  run(binary: Binary, args: readonly string[], options: RunOptions): Promise<RunResult>
}

/** Bytes of stderr kept for error texts. */
export const STDERR_TAIL = 8 * 1024
/** Collected stdout is capped (ffprobe's JSON of a file with thousands of streams stays below). */
const STDOUT_MAX = 16 * 1024 * 1024
const VERSION_TIMEOUT_MS = 10_000
const GRACE_MS = 2_000

/**
 * Finds and checks the binaries once. `dir` (the `--ffmpeg DIR` flag) is searched alone when
 * given: a folder named on purpose that lacks ffmpeg should say so, not quietly fall back to
 * another ffmpeg on PATH. `searchPath` replaces $PATH (for tests).
 */
export async function createFfmpeg(options: { dir?: string; searchPath?: string } = {}): Promise<Ffmpeg> {
  // One folder named on purpose: quoted on Windows, where a ';' in its name would split the search path.
  const where =
    options.dir !== undefined
      ? process.platform === 'win32'
        ? `"${resolve(options.dir)}"`
        : resolve(options.dir)
      : searchPathOf(options.searchPath ?? process.env.PATH ?? '')
  const found: Partial<Record<Binary, string>> = {}
  const versions: Partial<Record<Binary, string>> = {}
  const problems: Partial<Record<Binary, string>> = {}
  await Promise.all(
    BINARIES.map(async (name) => {
      const path = where ? findBinary(name, where) : null
      if (!path) {
        problems[name] = 'not found'
        return
      }
      try {
        versions[name] = await versionOf(path, name)
        found[name] = path
      } catch (error) {
        problems[name] = `${path} does not run: ${(error as Error).message}`
      }
    }),
  )
  const place = options.dir ? `in ${options.dir}` : 'on PATH'
  const available = { ffmpeg: !!found.ffmpeg, ffprobe: !!found.ffprobe }

  const missing = (...needed: Binary[]) => {
    const absent = (needed.length ? needed : BINARIES).filter((name) => !found[name])
    if (!absent.length) return undefined
    const what = absent.map((name) =>
      problems[name] === 'not found' ? `${name} was not found ${place}` : `${name}: ${problems[name]}`,
    )
    return `${what.join('; ')}; media is not probed and no proxies are made (install ffmpeg or pass --ffmpeg DIR)`
  }

  return Object.freeze({
    paths: Object.freeze(found),
    available: Object.freeze(available),
    versions: Object.freeze(versions),
    missing,
    run(binary: Binary, args: readonly string[], runOptions: RunOptions) {
      const path = found[binary]
      if (!path) return Promise.reject(new MediaError('missing', missing(binary)!))
      return runChild(path, binary, args, runOptions)
    },
  })
}

/**
 * Where ffmpeg is looked for without --ffmpeg: PATH, and on Windows also the folder of the
 * executable itself (unpacking a Windows ffmpeg build beside reelhouse.exe is the simplest
 * install there; neither Premiere nor Resolve brings one), quoted as findBinary reads it (a
 * folder name may hold a semicolon).
 */
function searchPathOf(path: string): string {
  if (process.platform !== 'win32') return path
  const beside = `"${dirname(process.execPath)}"`
  return path ? `${path};${beside}` : beside
}

/**
 * `name` on the search path `where`. On Windows only NAME.exe: Bun.which follows PATHEXT, which
 * also lists .bat and .cmd, and a ffmpeg.cmd would run through cmd.exe, which reads % and & in
 * the file names it is given as its own syntax. Windows' PATH is read as cmd.exe reads it, not by
 * Bun.which, which skips a quoted entry ("C:\Program Files\ffmpeg\bin", as users and installers
 * write one, and the only way to write one with a semicolon): split at the semicolons outside
 * quotes, the quotes taken out. An entry that is not a full path (".", "bin") is left out, as Go's
 * exec.LookPath leaves it out: it would name a folder of whatever the working folder is.
 */
function findBinary(name: Binary, where: string): string | null {
  if (process.platform !== 'win32') return Bun.which(name, { PATH: where })
  let entry = ''
  let quoted = false
  for (const c of `${where};`) {
    if (c === '"') quoted = !quoted
    else if (c !== ';' || quoted) entry += c
    else {
      const file = win32.isAbsolute(entry) && win32.join(entry, `${name}.exe`)
      entry = ''
      try {
        if (file && statSync(file).isFile()) return file
      } catch {}
    }
  }
  return null
}

/**
 * The first line of `-version` of each binary file this process ran, by the file's identity
 * (device, inode, size, change time): the check runs once per binary and process, not once per
 * catalogue core (a process that makes several, as the tests do, ran it about 200 times). Each
 * start of Debian's ffprobe costs 0.1 s of CPU, most of it in linking its 215 shared libraries.
 * A binary replaced at its path (an upgrade) is another file and is run again; a failed run is
 * not kept.
 */
const versionsRun = new Map<string, Promise<string>>()
function versionOf(path: string, name: string): Promise<string> {
  const file = statSync(path)
  const key = `${file.dev}:${file.ino}:${file.size}:${file.ctimeMs} ${path}`
  let version = versionsRun.get(key)
  if (!version) {
    version = runChild(path, name, ['-version'], { timeoutMs: VERSION_TIMEOUT_MS }).then(({ stdout }) =>
      stdout.split('\n', 1)[0]!.trim(),
    )
    versionsRun.set(key, version)
    version.catch(() => versionsRun.delete(key))
  }
  return version
}

async function runChild(path: string, name: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  if (process.platform !== 'win32' || options.input === undefined) return spawnChild(path, name, args, options)
  if (!options.inputPath) throw new MediaError('failed', `${name} needs the input's path on Windows`)
  const release = holdInput(options.inputPath, options.input)
  try {
    const named = args.map((arg) => (arg === `file:${INPUT}` ? `file:${options.inputPath}` : arg))
    return await spawnChild(path, name, named, { ...options, input: undefined })
  } finally {
    release()
  }
}

async function spawnChild(
  path: string,
  name: string,
  args: readonly string[],
  options: RunOptions,
): Promise<RunResult> {
  const { signal, onLine } = options
  if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
  const child = Bun.spawn([path, ...args], {
    stdio:
      options.outputDir !== undefined
        ? ['ignore', 'pipe', 'pipe', options.input ?? 'ignore', options.outputDir]
        : options.input === undefined
          ? ['ignore', 'pipe', 'pipe']
          : ['ignore', 'pipe', 'pipe', options.input],
    // Plain text in error messages, whatever the terminal the service was started from.
    env: { ...process.env, AV_LOG_FORCE_NOCOLOR: '1' },
    windowsHide: true,
  })

  let stopped: 'timeout' | 'idle' | 'aborted' | undefined
  let killTimer: ReturnType<typeof setTimeout> | undefined
  const stop = (why: typeof stopped) => {
    if (stopped) return
    stopped = why
    child.kill('SIGTERM')
    killTimer = setTimeout(() => child.kill('SIGKILL'), options.graceMs ?? GRACE_MS)
  }
  const deadline = setTimeout(() => stop('timeout'), options.timeoutMs)
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  const alive = () => {
    if (!options.idleMs || stopped) return
    clearTimeout(idleTimer)
    idleTimer = setTimeout(() => stop('idle'), options.idleMs)
  }
  alive()
  const onAbort = () => stop('aborted')
  signal?.addEventListener('abort', onAbort, { once: true })

  const readStdout = async () => {
    const decoder = new TextDecoder()
    let text = ''
    let size = 0
    for await (const chunk of child.stdout) {
      alive()
      if (onLine) {
        text += decoder.decode(chunk, { stream: true })
        const lines = text.split('\n')
        text = lines.pop()!
        for (const line of lines) onLine(line.trimEnd())
      } else if ((size += chunk.length) <= STDOUT_MAX) {
        text += decoder.decode(chunk, { stream: true })
      }
    }
    text += decoder.decode()
    if (onLine && text) onLine(text.trimEnd())
    if (size > STDOUT_MAX) throw new MediaError('failed', `${name} wrote more than ${STDOUT_MAX} bytes`)
    return onLine ? '' : text
  }
  const readStderr = async () => {
    let tail = new Uint8Array(0)
    for await (const chunk of child.stderr) {
      alive()
      const joined = new Uint8Array(Math.min(tail.length + chunk.length, STDERR_TAIL))
      const fromChunk = Math.min(chunk.length, joined.length)
      joined.set(tail.subarray(tail.length - (joined.length - fromChunk)), 0)
      joined.set(chunk.subarray(chunk.length - fromChunk), joined.length - fromChunk)
      tail = joined
    }
    return new TextDecoder().decode(tail)
  }

  try {
    const [stdout, stderr, code] = await Promise.all([readStdout(), readStderr(), child.exited])
    if (stopped === 'aborted') throw new CancelledError(String(signal?.reason ?? 'cancelled'))
    if (stopped === 'timeout')
      throw new MediaError('timeout', `${name} ran longer than ${seconds(options.timeoutMs)} and was stopped`, stderr)
    if (stopped === 'idle')
      throw new MediaError(
        'timeout',
        `${name} made no progress for ${seconds(options.idleMs!)} and was stopped`,
        stderr,
      )
    if (code !== 0) {
      const why = lastLines(stderr) || (child.signalCode ? `killed by ${child.signalCode}` : `exit code ${code}`)
      throw new MediaError('failed', `${name} failed: ${why}`, stderr)
    }
    return { stdout, stderr }
  } finally {
    clearTimeout(deadline)
    clearTimeout(killTimer)
    clearTimeout(idleTimer)
    signal?.removeEventListener('abort', onAbort)
    // A reader that threw leaves the child running: make sure it ends.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`

/**
 * The end of a stderr text, short enough for an ImportLog error: its last lines, at most ~1 KiB,
 * without the memory addresses of ffmpeg's log prefixes ("[mov,mp4 @ 0x55…] " → "[mov,mp4] ").
 */
export function lastLines(text: string, max = 1024): string {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.replace(/^\[([^\]@]+) @ 0x[0-9a-f]+\]/, '[$1]').trim())
    .filter(Boolean)
  let out = ''
  for (let i = lines.length - 1; i >= 0; i--) {
    const next = out ? `${lines[i]} | ${out}` : lines[i]!
    if (next.length > max) return out || lines[i]!.slice(-max)
    out = next
  }
  return out
}
