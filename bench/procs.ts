// What every benchmark does with the servers it runs: spawn one and wait for the line naming its
// port, keep draining its output (a chatty server must never block on a full pipe) while keeping
// its last lines for error messages, read its memory from /proc, and stop everything, also on
// Ctrl-C.
import type { Subprocess } from 'bun'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dir, '..')

/** Every process a benchmark started and has not stopped yet. */
export const children = new Set<Subprocess>()

export type Listening = {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  port: string
  /** The server's last output lines (all of them until it listens). */
  lines: string[]
}

/**
 * Spawns `cmd` (from the repository) and resolves once `portOf` finds the port in a line of its
 * stdout or stderr. Lines that `drop` matches are not kept once it listens (a log line per task).
 */
export async function spawnListening(
  label: string,
  cmd: string[],
  options: {
    portOf: (line: string) => string | undefined
    env?: Record<string, string>
    timeoutMs?: number
    keep?: number
    drop?: RegExp
  },
): Promise<Listening> {
  const { portOf, timeoutMs = 30_000, keep = 400, drop } = options
  const proc = Bun.spawn(cmd, {
    cwd: ROOT,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, ...options.env },
  })
  children.add(proc)
  const lines: string[] = []
  const port = await new Promise<string>((resolvePort, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${label} did not start in ${timeoutMs / 1000} s:\n${lines.join('\n')}`)),
      timeoutMs,
    )
    let found = false
    const drain = async (stream: ReadableStream<Uint8Array>) => {
      const decoder = new TextDecoder()
      let rest = ''
      for await (const chunk of stream) {
        const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n')
        rest = parts.pop()!
        for (const line of parts) {
          if (found && drop?.test(line)) continue
          lines.push(line)
          if (found && lines.length > keep) lines.shift()
          const p = found ? undefined : portOf(line)
          if (p) {
            found = true
            clearTimeout(timer)
            resolvePort(p)
          }
        }
      }
    }
    void drain(proc.stdout)
    void drain(proc.stderr)
    void proc.exited.then((code) => {
      if (!found) {
        clearTimeout(timer)
        reject(new Error(`${label} exited with ${code} before listening:\n${lines.join('\n')}`))
      }
    })
  })
  return { proc, port, lines }
}

/**
 * As spawnListening, with the server's stderr written to `logFile`, as a service manager keeps
 * its log: what is measured then includes the writes of its log to a file, not to a pipe this
 * process drains. Its stdout is dropped. The port is read from that file, read again every 20 ms
 * until a line names it (within the bound).
 */
export async function spawnLogging(
  label: string,
  cmd: string[],
  options: {
    portOf: (line: string) => string | undefined
    logFile: string
    env?: Record<string, string>
    timeoutMs?: number
  },
): Promise<{ proc: Subprocess; port: string }> {
  const { portOf, logFile, timeoutMs = 30_000 } = options
  const proc = Bun.spawn(cmd, {
    cwd: ROOT,
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: Bun.file(logFile),
    env: { ...process.env, ...options.env },
  })
  children.add(proc)
  const end = performance.now() + timeoutMs
  for (;;) {
    const text = existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''
    for (const line of text.split('\n')) {
      const port = portOf(line)
      if (port) return { proc, port }
    }
    if (proc.exitCode !== null) throw new Error(`${label} exited with ${proc.exitCode} before listening:\n${text}`)
    if (performance.now() > end) throw new Error(`${label} did not start in ${timeoutMs / 1000} s:\n${text}`)
    await Bun.sleep(20)
  }
}

/** SIGTERM to every child still running, SIGKILL to one that has not ended after `graceMs`. */
export async function stopChildren(graceMs = 5000) {
  for (const child of children) {
    child.kill('SIGTERM')
    const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(graceMs).then(() => false)])
    if (!exited) child.kill('SIGKILL')
    children.delete(child)
  }
}

/** On SIGINT or SIGTERM: `cleanup` (stop the servers, remove the files), then exit 130. */
export function onInterrupt(cleanup: () => Promise<void>, what: () => string) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping servers and removing ${what()}`)
      void cleanup().finally(() => process.exit(130))
    })
  }
}

/**
 * The temporary folder a benchmark works in (made by make(), under the system's): removed with
 * every server the benchmark started by stopAll(), which Ctrl-C runs too.
 */
export function benchScratch(prefix: string) {
  let dir: string | undefined
  const stopAll = async () => {
    await stopChildren(5000)
    if (dir) rmSync(dir, { recursive: true, force: true })
    dir = undefined
  }
  onInterrupt(stopAll, () => dir ?? 'nothing')
  return {
    make: () => (dir = mkdtempSync(join(tmpdir(), prefix))),
    /** The folder; make() first. */
    get path(): string {
      if (!dir) throw new Error('the scratch folder is not made yet')
      return dir
    },
    stopAll,
  }
}

/** A process's resident memory now and at its peak (VmHWM), in MiB. */
export function memory(pid: number): { rssMiB: number; hwmMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 }
}

/** Resets VmHWM to the current RSS (Linux >= 4.0). */
export const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5')

/** A numeric setting from the environment (BENCH_*), or its default. */
export const envNumber = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback)

/**
 * Runs a benchmark's main (true: every target met), stops everything it started whatever
 * happened, and exits 0 or 1; an error is printed with its stack.
 */
export async function runBench(main: () => Promise<boolean>, stopAll: () => Promise<void>): Promise<never> {
  let ok = false
  try {
    ok = await main()
  } catch (error) {
    console.error(`bench failed: ${(error as Error)?.stack ?? error}`)
  } finally {
    await stopAll()
  }
  process.exit(ok ? 0 : 1)
}

/**
 * GET /api/health of the server at `base` one after the other until `stop`, from a process of its own (bench/prober.ts);
 * the longest wait and the count, in ms.
 */
export async function prober(base: string) {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'bench', 'prober.ts'), base], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  children.add(proc)
  // Its first line says it is warm; the measure starts there.
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let out = ''
  while (!out.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error('the prober ended before it was ready')
    out += decoder.decode(value, { stream: true })
  }
  out = out.slice(out.indexOf('\n') + 1)
  return async () => {
    proc.stdin.end()
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      out += decoder.decode(value, { stream: true })
    }
    const code = await proc.exited
    children.delete(proc)
    if (code !== 0) throw new Error(`the prober failed (exit ${code})`)
    return JSON.parse(out) as { longest: number; count: number }
  }
}

/** A camera card's worth of clips of a few bytes each (clip-000000.mov ...) in a new folder `card` of `parent`. */
export function clipCard(parent: string, count: number) {
  const card = join(parent, 'card')
  mkdirSync(card)
  for (let n = 0; n < count; n++) writeFileSync(join(card, `clip-${String(n).padStart(6, '0')}.mov`), `clip ${n}\n`)
  return card
}
