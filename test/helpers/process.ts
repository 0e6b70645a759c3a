// Child processes for the command-line tests: run a reelhouse command to completion, or start
// `serve` and wait (with a bound, never a sleep) for the line that names its URL. Every process
// started here is remembered so that a test file can kill what is left in afterEach/afterAll.
import { type Subprocess, spawn } from 'bun'
import {
  type Dirent,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { executableName } from '../../build.ts'
import { readResponse } from './app.ts'

export const ROOT = resolve(import.meta.dir, '../..')
/** `bun src/main.ts`, with the bun binary that runs the tests. */
export const SOURCE_CLI = [process.execPath, join(ROOT, 'src', 'main.ts')]
/**
 * How long one command may take before it is killed: a bound for a hung process, not a speed
 * test. Wide, because a file of tests may start thirty `bun src/main.ts` side by side (each
 * compiles the source) on a busy 2-core machine: 15 s was not enough there.
 */
export const BOUND_MS = 60_000

/**
 * How long a test that runs commands may take: twice a command's bound (npm test's own
 * --timeout). The files' own 30 s and 60 s timed out when two test runs shared the 2 cores.
 */
export const TEST_TIMEOUT_MS = 2 * BOUND_MS

/** The environment of the tests without any REELHOUSE_* variable, plus the given ones. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('REELHOUSE_') && v !== undefined) env[k] = v
  return { ...env, ...extra }
}

export type RunResult = { code: number; stdout: string; stderr: string }
/** input: what the command reads on stdin (none: stdin is closed). */
export type RunOptions = { env?: Record<string, string>; cwd?: string; cli?: string[]; input?: string }

/**
 * What runCli and startServe run when a test names no command line: the compiled executable,
 * the program users get, built once per run (compiledExecutable). `bun src/main.ts` evaluates
 * the sources at each start (0.2 s of CPU more for a command, 0.25 s more for serve, and a page
 * built from src/ui when one is asked for), and the suite starts a few hundred processes. Tests
 * of the run from source name SOURCE_CLI (CLIS, the README's commands).
 */
const defaultCli = async () => [await compiledExecutable()]

/** Runs one command to its end (killed after the bound). Async, so that tests may run side by side. */
export async function runCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const child = spawn([...(options.cli ?? (await defaultCli())), ...args], {
    cwd: options.cwd ?? ROOT,
    env: cleanEnv(options.env),
    stdin: options.input === undefined ? 'ignore' : new Blob([options.input]),
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: BOUND_MS,
  })
  oneShots.add(child)
  try {
    const [stdout, stderr, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ])
    return { code: child.signalCode ? -1 : code, stdout, stderr }
  } finally {
    oneShots.delete(child)
  }
}
const oneShots = new Set<Subprocess>()

/**
 * Runs one command as runCli does, but in this process, through the command line's own entry
 * (src/main.ts run) with what runCli gives the child: the environment of cleanEnv, the working
 * folder, stdin (input, else none). The answer is runCli's. For what the command line says and
 * does; a process is for what only a process has (its exit, signals, a real pipe or terminal, the
 * compiled executable). A serve that starts is not for here (serve's usage mistakes are): it
 * logs on this process's stderr and stops on its signals.
 */
export async function runInProcess(args: string[], options: Omit<RunOptions, 'cli'> = {}): Promise<RunResult> {
  const { run } = await import('../../src/main.ts')
  let stdout = ''
  let stderr = ''
  const code = await run(args, {
    stdout: { write: (text) => void (stdout += text) },
    stderr: { write: (text) => void (stderr += text) },
    env: cleanEnv(options.env),
    cwd: options.cwd ?? ROOT,
    stdin: { isTTY: false, stream: () => new Blob([options.input ?? '']).stream() },
  })
  return { code, stdout, stderr }
}

/**
 * Where the executables built for the tests are kept, one folder per build key (the checkout's
 * commit and the content of everything that goes into a build). `bun test --parallel` runs the
 * test files in several processes: the first that needs an executable builds it, the others wait
 * for it, and a later run of the same code finds it built. Builds no run has used for an hour go
 * (each is about 110 MB, and every change to src/ makes a new one).
 */
const BUILDS = join(tmpdir(), 'reelhouse-test-builds')
/** What goes into an executable besides the source tree's commit. */
const BUILD_INPUTS = ['src', 'drizzle', 'build.ts', 'package.json', 'package-lock.json']

/** A key that changes when anything a build reads changes: the commit and the inputs' bytes. */
function buildKey(args: string[]): string {
  const hasher = new Bun.CryptoHasher('sha256')
  hasher.update(`${Bun.version}\0${args.join('\0')}\0${gitHead()}\0`)
  const walk = (path: string) => {
    let entries: Dirent[]
    try {
      entries = readdirSync(path, { withFileTypes: true })
    } catch {
      // A file, or a name that is not there.
      if (existsSync(path)) hasher.update(`${path}\0`).update(readFileSync(path))
      return
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) walk(join(path, entry.name))
  }
  for (const input of BUILD_INPUTS) walk(join(ROOT, input))
  return hasher.digest('hex').slice(0, 16)
}

/**
 * The folder of a build made by `bun build.ts ARGS --outdir <folder>`, made once for all the test
 * processes of this and later runs (see BUILDS). A folder exists only once its build is complete
 * (built under another name, then renamed); a lock folder says who builds, and one left by a
 * killed run is taken over after the build's own bound.
 */
async function sharedBuild(args: string[]): Promise<{ folder: string; since: string }> {
  const key = buildKey(args)
  const folder = join(BUILDS, key)
  const lock = `${folder}.lock`
  const done = () => {
    if (!existsSync(folder)) return undefined
    // Used now: pruneBuilds keeps it for another hour.
    utimesSync(folder, new Date(), new Date())
    return { folder, since: readFileSync(join(folder, 'since'), 'utf8') }
  }
  mkdirSync(BUILDS, { recursive: true })
  for (;;) {
    const found = done()
    if (found) return found
    try {
      mkdirSync(lock)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    let age = 0
    try {
      age = Date.now() - statSync(lock).mtimeMs
    } catch {}
    if (age > BUILD_BOUND_MS + 10_000) rmSync(lock, { recursive: true, force: true })
    await Bun.sleep(100)
  }
  try {
    const found = done()
    if (found) return found
    const since = gitHead()
    const building = mkdtempSync(`${folder}.building-`)
    try {
      await build([...args, '--outdir', building])
      // Read-only: the tests share it, and none may change it.
      for (const name of readdirSync(building)) chmodSync(join(building, name), 0o555)
      writeFileSync(join(building, 'since'), since)
      // mkdtemp made it 0700; a test may run the executable as another user (setpriv).
      chmodSync(building, 0o755)
      renameSync(building, folder)
    } finally {
      rmSync(building, { recursive: true, force: true })
    }
    pruneBuilds(key)
    return { folder, since }
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

/** Removes the builds other than `keep` that no run has used for an hour (a run takes minutes). */
function pruneBuilds(keep: string) {
  for (const name of readdirSync(BUILDS)) {
    if (name.startsWith(keep)) continue
    const path = join(BUILDS, name)
    try {
      if (Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { recursive: true, force: true })
    } catch {}
  }
}

let executable: Promise<string> | undefined

/**
 * The executable `bun build.ts` makes for this machine, built once for the whole run
 * (sharedBuild), outside the repository, so that nothing of the checkout is reachable from it.
 * Resolves to its path, read-only to the tests.
 */
export function compiledExecutable(): Promise<string> {
  executable ??= (async () => {
    const { folder, since } = await sharedBuild([])
    const path = join(folder, 'reelhouse')
    builtSince.set(path, since)
    return path
  })()
  return executable
}

const crossBuilt = new Map<string, Promise<string>>()

/**
 * The executable for another platform (a name of build.ts TARGETS: "linux-arm64"), built with
 * `bun build.ts --target NAME` once for the whole run (sharedBuild), so that dist/ and a
 * release's dist/SHA256SUMS stay as they were. Resolves to its path, read-only to the tests.
 */
export function crossExecutable(target: string): Promise<string> {
  let built = crossBuilt.get(target)
  if (!built) {
    built = (async () => {
      const { folder, since } = await sharedBuild(['--target', target])
      const path = join(folder, executableName(target))
      builtSince.set(path, since)
      return path
    })()
    crossBuilt.set(target, built)
  }
  return built
}

/** How long one `bun build.ts` may take (a first cross build also fetches that platform's runtime from the npm registry). */
const BUILD_BOUND_MS = 120_000

/** `bun build.ts ARGS`, bounded; throws with what it printed when it fails. */
async function build(args: string[]) {
  const child = spawn([process.execPath, 'build.ts', ...args], {
    cwd: ROOT,
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: BUILD_BOUND_MS,
  })
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  if (code !== 0) throw new Error(`bun build.ts ${args.join(' ')} failed (${code}):\n${out}${err}`)
}

const builtSince = new Map<string, string>()

/** HEAD's first 12 hex digits, as src/version.ts shows them; '' where git cannot tell. */
export function gitHead(): string {
  const head = Bun.spawnSync(['git', 'rev-parse', 'HEAD'], { cwd: ROOT, stderr: 'ignore' })
  return head.exitCode === 0 ? head.stdout.toString().trim().slice(0, 12) : ''
}

/**
 * What `--version` prints for code that read the checkout's commit after HEAD was `since`
 * (gitHead()): that commit or one made on top of it since (other work commits in this checkout
 * while the tests run), with "-dirty" or without; "(commit unknown)" without git. `since`
 * defaults to the HEAD just before the executable at `path` was built (compiledExecutable,
 * crossExecutable).
 */
export function versionPattern({ since, path }: { since?: string; path?: string }): RegExp {
  const from = since ?? builtSince.get(path ?? '') ?? ''
  const version = pkg.version.replace(/[.+]/g, '\\$&')
  if (!from) return new RegExp(`^reelhouse ${version} \\(commit unknown\\)\n$`)
  const later = Bun.spawnSync(['git', 'rev-list', `${from}..HEAD`], { cwd: ROOT })
    .stdout.toString()
    .split('\n')
    .filter(Boolean)
  const commits = [from, ...later.map((c) => c.slice(0, 12))]
  return new RegExp(`^reelhouse ${version} \\(commit (${commits.join('|')})(-dirty)?\\)\n$`)
}

/**
 * The two ways the command line is run, for describe.each: from source, and as the compiled
 * executable users get (built once per run). Each resolves to what runCli's `cli` takes.
 */
export const CLIS: [string, () => Promise<string[]>][] = [
  ['bun src/main.ts', async () => SOURCE_CLI],
  ['the compiled executable', async () => [await compiledExecutable()]],
]

/** One way of running a command: runInProcess, or runCli with one of CLIS. */
export type Runner = (args: string[], options?: Omit<RunOptions, 'cli'>) => Promise<RunResult>

/**
 * The ways the command line is run, for describe.each: run() in this process, for every case of
 * a test (`every`), and the two processes of CLIS, for the cases a test keeps for them too (a
 * representative few: a process adds only the wrapper around run(), its real exit code and
 * streams, and the compiled executable's build). Each resolves to a Runner.
 */
export const WAYS: [string, () => Promise<Runner>, boolean][] = [
  ['run() in this process', async () => runInProcess, true],
  ...CLIS.map(([name, which]): [string, () => Promise<Runner>, boolean] => [
    name,
    async () => {
      const cli = await which()
      return (args, options = {}) => runCli(args, { ...options, cli })
    },
    false,
  ]),
]

/** Lines of a text without the empty last one. */
export const lines = (text: string) => text.split('\n').filter((l, i, all) => !(l === '' && i === all.length - 1))

const running = new Set<Running>()

/** Signals no test sends: a child ending by one of them crashed. */
const CRASHES = new Set(['SIGSEGV', 'SIGBUS', 'SIGABRT', 'SIGILL', 'SIGFPE', 'SIGTRAP'])

export class Running {
  readonly child: Subprocess<'ignore', 'pipe', 'pipe'>
  stdout = ''
  stderr = ''
  exitCode: number | null = null
  private listeners = new Set<() => void>()
  private pumps: Promise<void>[]

  constructor(cmd: string[], options: { env?: Record<string, string>; cwd?: string } = {}) {
    this.child = spawn(cmd, {
      cwd: options.cwd ?? ROOT,
      env: cleanEnv(options.env),
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    running.add(this)
    this.pumps = [this.pump(this.child.stdout, 'stdout'), this.pump(this.child.stderr, 'stderr')]
    void this.child.exited.then(async (code) => {
      await Promise.all(this.pumps)
      this.exitCode = code
      running.delete(this)
      // A crash is shown where it happened, whatever the test then reports (a refused connection, say).
      if (CRASHES.has(String(this.child.signalCode)))
        console.error(`[test] ${cmd.join(' ')} crashed (${this.child.signalCode})\n${this.describe()}`)
      this.notify()
    })
  }

  private async pump(stream: ReadableStream<Uint8Array>, name: 'stdout' | 'stderr') {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      this[name] += decoder.decode(chunk, { stream: true })
      this.notify()
    }
  }

  private notify() {
    for (const listener of [...this.listeners]) listener()
  }

  /** Resolves with the first match of `pattern` in the stream; rejects on exit or after the bound. */
  waitFor(name: 'stdout' | 'stderr', pattern: RegExp, bound = BOUND_MS): Promise<RegExpMatchArray> {
    return new Promise((resolvePromise, reject) => {
      const check = () => {
        const match = this[name].match(pattern)
        if (match) return done(() => resolvePromise(match))
        if (this.exitCode !== null)
          done(() => reject(new Error(`exited with ${this.exitCode} before ${pattern} on ${name}\n${this.describe()}`)))
      }
      const timer = setTimeout(
        () => done(() => reject(new Error(`no ${pattern} on ${name} within ${bound} ms\n${this.describe()}`))),
        bound,
      )
      const done = (settle: () => void) => {
        clearTimeout(timer)
        this.listeners.delete(check)
        settle()
      }
      this.listeners.add(check)
      check()
    })
  }

  /** Sends a signal and waits (bounded) for the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', bound = BOUND_MS): Promise<number> {
    if (this.exitCode === null) this.child.kill(signal)
    return this.exited(bound)
  }

  async exited(bound = BOUND_MS): Promise<number> {
    let timer: Timer | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`still running after ${bound} ms\n${this.describe()}`)), bound)
    })
    try {
      await Promise.race([this.child.exited, timeout])
      await Promise.all(this.pumps)
      return this.child.exitCode ?? -1
    } finally {
      clearTimeout(timer)
    }
  }

  describe() {
    return `--- stdout ---\n${this.stdout}--- stderr ---\n${this.stderr}`
  }
}

/** Kills (SIGKILL) every process this helper started that is still running, and waits for them. */
export async function killAll() {
  const left = [...[...running].map((p) => p.child), ...oneShots]
  for (const child of left) child.kill('SIGKILL')
  await Promise.all(left.map((child) => child.exited))
}

export type Server = { proc: Running; base: string; api: string; port: number; host: string }

/** Starts `serve --port 0` on a data folder and waits for the line with its URL. */
export async function startServe(
  dataDir: string | undefined,
  options: { args?: string[]; env?: Record<string, string>; cwd?: string; cli?: string[]; boundMs?: number } = {},
): Promise<Server> {
  const args = ['serve', ...(dataDir === undefined ? [] : ['--data', dataDir]), ...(options.args ?? ['--port', '0'])]
  const proc = new Running([...(options.cli ?? (await defaultCli())), ...args], { env: options.env, cwd: options.cwd })
  const match = await proc.waitFor('stderr', / serving api=(http:\/\/(\S+):(\d+))\/api\/ /, options.boundMs)
  return { proc, base: match[1]!, api: `${match[1]}/api`, host: match[2]!, port: Number(match[3]) }
}

/** A request to a running server with a key (or none), answering status and parsed JSON. */
export async function call(
  server: Pick<Server, 'api'>,
  method: string,
  path: string,
  key: string | null,
  body?: unknown,
) {
  const headers: Record<string, string> = {}
  if (key !== null) headers.authorization = `Token ${key}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`${server.api}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch(async (error) => {
    // A server that is gone: say how it ended and what it wrote, not only that nothing answered.
    const proc = (server as Partial<Server>).proc
    if (!proc) throw error
    await Promise.race([proc.child.exited, Bun.sleep(1000)])
    throw new Error(
      `${method} ${path}: ${(error as Error).message}; the server ${proc.exitCode === null ? 'still runs' : `exited with ${proc.exitCode} (${proc.child.signalCode ?? 'no signal'})`}\n${proc.describe()}`,
    )
  })
  return readResponse(response)
}

export type RawReply = { status: number; headers: Record<string, string>; text: string; json: any }

/**
 * Writes `request` as it is (request line, Host and all) to a listening server and reads the
 * answer until the server closes the connection: for what fetch cannot send, such as no Host, an
 * empty one or HTTP/1.0, and for seeing exactly what the server sends back. The request should
 * say `Connection: close`.
 */
export function rawRequest(port: number, request: string): Promise<RawReply> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = []
    let unsent = Buffer.from(request, 'latin1')
    const timer = setTimeout(() => reject(new Error(`no answer within ${BOUND_MS} ms`)), BOUND_MS)
    const done = () => {
      clearTimeout(timer)
      resolvePromise(parseReply(Buffer.concat(chunks)))
    }
    // A write may take part of the bytes; the rest goes when the socket drains.
    const send = (socket: { write(data: Uint8Array): number }) => {
      if (unsent.length > 0) unsent = unsent.subarray(Math.max(0, socket.write(unsent)))
    }
    Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open: send,
        drain: send,
        data: (_, data) => void chunks.push(Buffer.from(data)),
        close: done,
        error: done,
      },
    }).catch(reject)
  })
}

function parseReply(bytes: Buffer): RawReply {
  const end = bytes.indexOf('\r\n\r\n')
  const [statusLine = '', ...lines] = bytes
    .subarray(0, end < 0 ? bytes.length : end)
    .toString('latin1')
    .split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines)
    headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim()
  let body = end < 0 ? Buffer.alloc(0) : bytes.subarray(end + 4)
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body)
  const text = body.toString('utf8')
  let json: any
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: Number(statusLine.split(' ')[1]), headers, text, json }
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = []
  for (let at = 0; ; ) {
    const lineEnd = body.indexOf('\r\n', at)
    const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16)
    if (!(size > 0)) return Buffer.concat(parts)
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}
