// The Windows file layer under Wine (npm run bench:windows; not part of npm run bench, since it
// needs Wine): what a project copy costs users of the windows-x64 executable, where every file is
// opened relative to its folder's NT handle (src/storage/windows/nt.ts, calls.ts), opened again by
// node:fs path, identity-checked, copied and given its times. The baseline, in the same run, in
// the same Wine prefix (and so under the same wineserver) and on the same file system, is Wine's
// own builtin `xcopy SRC DST /E /I /Q /Y`: another Win32 program over the same emulation (one
// CopyFileExW a file, which keeps the file's time too).
//
// Cases: 2,000 files of 16 KiB in 20 folders (the per-file cost) and one 512 MiB file
// (throughput), made from Linux on the prefix's drive C: (much faster than through Wine). Drive C:
// is a folder of the prefix (test/helpers/wine.ts winePrefix: the one the tests share), which
// lives under the system's temporary folder: the Linux file system there, not NTFS.
//
// Ours: one serve of the compiled windows-x64 executable under Wine (test/helpers/process.ts
// crossExecutable builds it once and keeps it), started once with `--port 0 --settle 3600` (the
// watcher never imports the trees while the bench runs) and its default request log; a device on
// the drive-C folder, a production, each case's source project registered once. Each round POSTs
// a copy (copy_of, a new bundle_root) and waits for the line "task done task=N" on the serve's
// stderr. The device is watched (change events), as users run it: before anything is timed the
// serve is left to finish its own work (the device's first scan; the scan of each finished copy,
// whose folder the watcher sees renamed into place), and xcopy writes beside the device's folder,
// not in it, so that the watcher does not scan xcopy's files on the CPU xcopy needs. The figure is read from the serve's own log: from the POST's arrival (its request line's
// time less the request's `ms`, matched by the X-Request-Id of the answer) to the time of the task's
// "task done" line: the same clock at both ends, without this process's HTTP client or the pipe from
// Wine's stderr. What this process saw (from before its fetch to reading the done line) is kept
// beside it, as a check, and so are the CPU seconds the serve and the prefix's wineserver used
// meanwhile (/proc; the wineserver's include whatever else runs in the prefix at the time).
//
// xcopy is timed from spawn to exit (`wine64 xcopy ...`): the wineserver is already up (the serve
// keeps it), so it is a warm start, whose cost (`wine64 cmd /c exit`, timed in the same rounds) is
// reported beside and not subtracted. Rounds alternate (xcopy, ours, xcopy, ours ...), each into
// a fresh target folder after a `sync`, BENCH_WINDOWS_ROUNDS times (default 3); the figures are
// medians, and the ratio is the median of the per-round ratios xcopy / ours (>1: ours is faster).
// Each target is checked (the file count and bytes); xcopy's are removed after their round, ours
// (in the watched folder: a removal would be scanned during the next round) with everything else
// at the end, the copies' catalogue rows with the serve's data folder.
// Usage: bun bench/windows.ts   (BENCH_WINDOWS_ROUNDS; BENCH_WINDOWS_LOG=FILE: the serve's log, kept;
// BENCH_NO_DOC=1: print only)
import { spawn, spawnSync } from 'bun'
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { call, crossExecutable, killAll, type Server, startServe } from '../test/helpers/process.ts'
import { makeTree, manyFiles } from '../test/helpers/tree.ts'
import { driveCFolder, WINE, wineEnv, wineMissing, winePrefix, windowsPath } from '../test/helpers/wine.ts'
import { machine, median, writeSection } from './doc.ts'
import { envNumber } from './procs.ts'

const ROUNDS = envNumber('BENCH_WINDOWS_ROUNDS', 3)
const MiB = 1024 ** 2
/** A bound for one step (a start, a copy): a hung step, not a speed test. */
const STEP_MS = 300_000
/** How long the serve has had no task queued or running when it is idle (see idle()). */
const IDLE_MS = 2000

const CASES = [
  {
    name: '2,000 files of 16 KiB in 20 folders',
    files: 2000,
    bytes: 2000 * 16384,
    make: (dir: string) => manyFiles(dir, 2000, 16384, 100),
  },
  {
    name: 'one 512 MiB file',
    files: 1,
    bytes: 512 * MiB,
    make: (dir: string) => makeTree(dir, { 'big.mxf': 512 * MiB }),
  },
]

type Result = {
  name: string
  files: number
  bytes: number
  xcopy: number[]
  ours: number[]
  seen: number[]
  cpu: number[]
  serverCpu: number[]
}

/** CPU seconds (user and system) a process has used, from /proc; NaN when it is gone. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // utime and stime: fields 14 and 15 of stat(5), 12 and 13 after the name; in ticks of 1/100 s.
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return NaN
  }
}

/** The wineserver of `prefix` (one per prefix, shared by every Wine process in it), by its environment. */
function wineserverOf(prefix: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (!readFileSync(`/proc/${name}/comm`, 'utf8').startsWith('wineserver')) continue
      if (readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`WINEPREFIX=${prefix}`))
        return Number(name)
    } catch {}
  }
  return undefined
}

/** Files and bytes under `dir`, read from Linux. */
function tally(dir: string): { files: number; bytes: number } {
  let files = 0
  let bytes = 0
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    files++
    bytes += statSync(join(entry.parentPath, entry.name)).size
  }
  return { files, bytes }
}

/** Runs a Wine command in the prefix; its wall time in seconds, from spawn to exit. */
async function timedWine(prefix: string, args: string[]): Promise<number> {
  const start = performance.now()
  const child = spawn([WINE!, ...args], {
    env: { ...process.env, ...wineEnv(prefix) },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: STEP_MS,
  })
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  const seconds = (performance.now() - start) / 1000
  if (code !== 0) throw new Error(`wine64 ${args.join(' ')} failed (${code}):\n${out}${err}`)
  return seconds
}

const logTime = (line: string) => Date.parse(line.slice(0, line.indexOf(' ')))

async function main(): Promise<boolean> {
  if (wineMissing) {
    console.log(`[skip] bench/windows.ts: ${wineMissing}`)
    return true
  }
  const host = machine()
  const started = performance.now()
  const [binary, prefix] = await Promise.all([crossExecutable('windows-x64'), winePrefix()])
  const wineVersion = spawnSync([WINE!, '--version']).stdout.toString().trim()
  console.log(
    `${wineVersion}; ${binary}; prefix ${prefix} (${((performance.now() - started) / 1000).toFixed(1)} s to build or find them)`,
  )

  const [root, winRoot] = driveCFolder(prefix, 'bench-windows')
  const fsType = spawnSync(['df', '-T', root]).stdout.toString().split('\n')[1]?.split(/\s+/)[1] ?? 'unknown'
  let server: Server | undefined
  const results: Result[] = []
  const noop: number[] = []
  const stopAll = async () => {
    if (server && server.proc.exitCode === null) await server.proc.stop('SIGINT', 30_000).catch(() => killAll())
    await killAll()
    rmSync(root, { recursive: true, force: true })
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => void stopAll().finally(() => process.exit(130)))
  try {
    const show = join(root, 'media', 'Show')
    // xcopy's targets: beside the device's folder, not in it, so that the serve's watcher does not
    // scan them (on the CPU xcopy needs) or their removal (during the next copy).
    const outside = join(root, 'xcopy')
    mkdirSync(show, { recursive: true })
    mkdirSync(outside, { recursive: true })
    const sources = CASES.map((c, n) => {
      const dir = join(show, `source-${n}`)
      c.make(dir)
      return dir
    })
    spawnSync(['sync'])

    server = await startServe(`${winRoot}\\data`, {
      cli: [WINE!, binary],
      env: wineEnv(prefix),
      args: ['--port', '0', '--settle', '3600'],
      boundMs: STEP_MS,
    })
    const s = server
    const key = readFileSync(join(root, 'data', 'admin.token'), 'utf8').trim()
    const api = async (method: string, path: string, body?: unknown) => {
      const answer = await call(s, method, path, key, body)
      if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`)
      return answer
    }
    await api('POST', '/devices/', { name: 'media', path: `${windowsPath(prefix, join(root, 'media'))}\\` })
    const production = (await api('POST', '/productions/', { name: 'Show', storage_root: windowsPath(prefix, show) }))
      .json
    const projects: number[] = []
    for (const [n, dir] of sources.entries())
      projects.push(
        (
          await api('POST', '/projectassets/', {
            name: `source ${n}`,
            bundle_root: `${windowsPath(prefix, dir)}\\`,
            production_id: production.id,
          })
        ).json.id,
      )
    // Nothing measured runs beside the serve's own work: the new device's first scan (its
    // thousands of files, seconds under Wine), the scan of each finished copy (the watcher sees
    // the copy's folder renamed into place). A scan is queued about a second after the events
    // that call for it (the watcher's move window): idle is no task queued or running for 2 s.
    const idle = async () => {
      const bound = Date.now() + STEP_MS
      let quietSince = Date.now()
      while (Date.now() - quietSince < IDLE_MS) {
        if (Date.now() > bound)
          throw new Error(`the serve was still busy after ${STEP_MS} ms:\n${s.proc.stderr.slice(-2000)}`)
        const counts = await Promise.all(
          ['running', 'queued'].map(async (state) =>
            Number((await api('GET', `/tasks/?state=${state}&limit=1`)).headers.get('x-total-count')),
          ),
        )
        if (counts.some((n) => n !== 0)) quietSince = Date.now()
        await Bun.sleep(250)
      }
    }
    const started = performance.now()
    await idle()
    console.log(
      `the device's first scan and the registrations done (${((performance.now() - started) / 1000).toFixed(1)} s)`,
    )
    const wineserver = wineserverOf(prefix)

    for (const [n, c] of CASES.entries()) {
      const r: Result = {
        name: c.name,
        files: c.files,
        bytes: c.bytes,
        xcopy: [],
        ours: [],
        seen: [],
        cpu: [],
        serverCpu: [],
      }
      const check = (dir: string, who: string) => {
        const got = tally(dir)
        if (got.files !== c.files || got.bytes !== c.bytes)
          throw new Error(`${who} copied ${got.files} files of ${got.bytes} bytes, not ${c.files} of ${c.bytes}`)
      }
      for (let round = 0; round < ROUNDS; round++) {
        // A warm start of a Wine process, beside the xcopy it is part of.
        noop.push(await timedWine(prefix, ['cmd', '/c', 'exit']))

        spawnSync(['sync'])
        const xTarget = join(outside, `xcopy-${n}-${round}`)
        r.xcopy.push(
          await timedWine(prefix, [
            'xcopy',
            windowsPath(prefix, sources[n]!),
            windowsPath(prefix, xTarget),
            '/E',
            '/I',
            '/Q',
            '/Y',
          ]),
        )
        check(xTarget, 'xcopy')
        rmSync(xTarget, { recursive: true, force: true })

        spawnSync(['sync'])
        const target = join(show, `reelhouse-${n}-${round}`)
        const cpu = [cpuSeconds(s.proc.child.pid), cpuSeconds(wineserver)]
        const sent = performance.now()
        const copy = await api('POST', '/projectassets/', {
          name: `copy ${n} ${round}`,
          bundle_root: `${windowsPath(prefix, target)}\\`,
          production_id: production.id,
          copy_of: projects[n],
        })
        const task = copy.json.task.id as number
        const end = await s.proc.waitFor(
          'stderr',
          new RegExp(`^\\S+ \\S+ task (done|failed) task=${task} .*$`, 'm'),
          STEP_MS,
        )
        r.seen.push((performance.now() - sent) / 1000)
        r.cpu.push(cpuSeconds(s.proc.child.pid) - cpu[0]!)
        r.serverCpu.push(cpuSeconds(wineserver) - cpu[1]!)
        if (end[1] !== 'done') throw new Error(`the copy failed: ${end[0]}`)
        // The request's line is written at the end of the turn that answered it: long before the task ends.
        const id = copy.headers.get('x-request-id')
        const request = s.proc.stderr
          .split('\n')
          .find((l) => l.includes(' request ') && l.endsWith(` request_id=${id}`))
        const ms = Number(/ ms=([\d.]+) /.exec(request ?? '')?.[1])
        if (!request || !Number.isFinite(ms))
          throw new Error(`no request line with request_id=${id}:\n${s.proc.stderr.slice(-2000)}`)
        r.ours.push((logTime(end[0]) - (logTime(request) - ms)) / 1000)
        check(target, 'Reelhouse')
        // Kept until the end (removed with the rest): a removal in the device's folder would be scanned during the next round.
        await idle()
        console.log(
          `${c.name}, round ${round + 1}/${ROUNDS}: xcopy ${r.xcopy.at(-1)!.toFixed(3)} s, Reelhouse ${r.ours.at(-1)!.toFixed(3)} s (seen by the client: ${r.seen.at(-1)!.toFixed(3)} s; CPU: the serve ${r.cpu.at(-1)!.toFixed(2)} s, the wineserver ${r.serverCpu.at(-1)!.toFixed(2)} s), wine64 cmd /c exit ${noop.at(-1)!.toFixed(3)} s`,
        )
      }
      results.push(r)
    }
    const stopped = await s.proc.stop('SIGINT', 60_000)
    if (process.env.BENCH_WINDOWS_LOG) writeFileSync(process.env.BENCH_WINDOWS_LOG, s.proc.stderr)
    const warnings = s.proc.stderr
      .split('\n')
      .filter(
        (l) =>
          / (warn|error) /.test(l) &&
          !/ warn (imports will make no proxies or probes|devices are not watched or scanned) /.test(l),
      )
    if (stopped !== 0 || warnings.length)
      console.error(`the serve exited with ${stopped}${warnings.length ? `, and warned:\n${warnings.join('\n')}` : ''}`)
  } finally {
    await stopAll()
  }

  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ')
  const summary = (r: Result) => ({
    xcopy: median(r.xcopy),
    ours: median(r.ours),
    ratio: median(r.xcopy.map((x, i) => x / r.ours[i]!)),
  })
  const mbps = (r: Result, seconds: number) => (r.files === 1 ? ` (${(r.bytes / seconds / 1e6).toFixed(0)} MB/s)` : '')
  for (const r of results) {
    const m = summary(r)
    console.log(
      `${r.name}: xcopy ${m.xcopy.toFixed(3)} s${mbps(r, m.xcopy)}, Reelhouse ${m.ours.toFixed(3)} s${mbps(r, m.ours)}, xcopy / Reelhouse ${m.ratio.toFixed(2)} (medians of ${ROUNDS})`,
    )
  }
  console.log(`wine64 cmd /c exit: ${median(noop).toFixed(3)} s (median of ${noop.length})`)

  if (process.env.BENCH_NO_DOC !== '1') {
    writeSection(
      resolve(import.meta.dir, '..', 'docs', 'benchmarks.md'),
      'windows',
      `## Windows under Wine: project copies

- Date: ${host.date} (\`npm run bench:windows\`, bench/windows.ts; not part of \`npm run bench\`)
- Machine: ${host.cpu}, ${host.cores} cores, ${host.ramGiB.toFixed(1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load})
- ${wineVersion}; the windows-x64 executable (Bun ${host.bun}) under \`wine64\`; ${ROUNDS} rounds
- Source and targets on the Wine prefix's drive C:, which is a folder of the Linux file system (${fsType}, under ${root.split('/').slice(0, 2).join('/')}), not NTFS; the prefix is the one the tests share (test/helpers/wine.ts)
- A warm start of a Wine process (\`wine64 cmd /c exit\`, the wineserver running): ${median(noop).toFixed(3)} s (median of ${noop.length}); it is part of every xcopy time and is not subtracted

| Case | xcopy (median) | Reelhouse (median) | xcopy / Reelhouse (median of rounds) |
|---|---|---|---|
${results
  .map((r) => {
    const m = summary(r)
    return `| ${r.name} | ${m.xcopy.toFixed(3)} s${mbps(r, m.xcopy)} | ${m.ours.toFixed(3)} s${mbps(r, m.ours)} | ${m.ratio.toFixed(2)} |`
  })
  .join('\n')}

All rounds (seconds): ${results.map((r) => `${r.name}: xcopy ${fmt(r.xcopy)}; Reelhouse ${fmt(r.ours)} (seen by the client: ${fmt(r.seen)}; CPU of the serve ${fmt(r.cpu)}, of the wineserver ${fmt(r.serverCpu)})`).join('. ')}; \`wine64 cmd /c exit\` ${fmt(noop)}.

What is measured: Wine's builtin \`xcopy SRC DST /E /I /Q /Y\` (one CopyFileExW a file, which
keeps its time), timed from spawn to exit, against a project copy by the serve of the
windows-x64 executable (\`--settle 3600\`, its default request log, its device watched):
\`POST /api/projectassets/\` with \`copy_of\`, timed from the request's arrival to the task's
"task done" line, both read from the serve's log (one clock; the request line's time less its
\`ms\`). Each copy walks the tree, opens every file relative to its folder's NT handle and by
path, checks that both are the same file, copies it, sets its times, and renames the finished
folder into place. Rounds alternate xcopy and Reelhouse, each into a fresh folder after \`sync\`,
each once the serve has no task queued or running (its scans of the device and of each finished
copy); xcopy writes beside the watched folder. MB/s is 10⁶ bytes a second.

What it means, and what not: both programs run over the same emulation, in the same prefix, on
the same files, so the ratio shows what the layer's per-file calls cost against another Win32
program's, not how fast either is on Windows. Wine is not Windows: its ntdll maps the NT calls onto
Linux system calls over ${fsType}, and NTFS, Defender's scans of every file opened and the
real kernel's costs are not in these numbers. No target is set: the figures are recorded to see
the layer's cost, not gated.

Where the small files' time goes: a trace (\`WINEDEBUG=+file\`) showed about 8 requests a file to
Wine's mount manager (an ioctl answered by winedevice.exe, another process), one after each
volume query: the volume serial of the layer's identity checks, and the one libuv makes in each
\`fstat\` of node:fs. The layer now asks a folder's volume once and each file's index alone
(src/storage/windows/calls.ts), which took this case from 35 s (a check run before it, the machine
not quite idle: load 1.3) to 16 s (this run; the two were not alternated); the
\`fstat\` of each descriptor opened by path (its check against the handle) remains.
`,
    )
    console.error('wrote docs/benchmarks.md (windows)')
  }
  return true
}

process.exit(
  (await main().catch((error) => {
    console.error(`bench failed: ${(error as Error)?.stack ?? error}`)
    return false
  }))
    ? 0
    : 1,
)
