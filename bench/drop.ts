// The drop benchmark: 20,000 clips copied at once into a production's drop folder, against a
// baseline doing the same work in the same run, in alternating rounds (figures: medians).
//
// Reelhouse: `serve` (the source run, --settle 1, no ffmpeg) on a fresh data folder with a device
// and a production; `cp -r` of a folder of FILES clips into the production's drop folder; timed
// from the end of the cp until every clip is a video asset and no task is queued or running (the
// last asset online with its import task done). Meanwhile a client in a process of its own
// (bench/prober.ts) asks GET /api/health one request after the other: the longest wait. The
// server's CPU time (all its threads, /proc/PID/stat) from the start of the cp to the end, per
// file, and its peak RSS (VmHWM, reset once the setup is done, as bench/import.ts does). Two
// controls for a shared machine: the same prober against the idle server for 5 s before the cp
// (its longest wait is the scheduler's, not the drop's), and the time the server's main thread
// spent on a CPU and waiting for one during the drop (/proc/PID/task/PID/schedstat).
//
// Baseline (bench/drop-baseline.ts): the same setup made by the same `serve` (so the catalogue is
// made by the same migrations: the same triggers and search index), the server stopped, the same
// cp into the drop folder; then one process walks the drop, lstats every file, reads its
// fingerprint and writes the rows Reelhouse writes for a dropped file, 500 files a transaction.
// Timed from the end of the cp to that process's exit (its start included).
//
// Environment (all optional): BENCH_DROP_FILES (20000), BENCH_DROP_ROUNDS (3), BENCH_DROP_CPU_PROF=DIR
// (Reelhouse under bun --cpu-prof, profiles written into DIR when it stops), BENCH_DROP_STDERR=FILE
// (Reelhouse's standard error appended to FILE: with BUN_JSC_logGC=1, its collections), BENCH_DROP_TASKS=FILE (the
// drop's scan tasks of the last round written there, oldest first), BENCH_NO_DOC=1 (print only). The 100,000-file figure is measured with
// BENCH_DROP_FILES=100000 BENCH_DROP_ROUNDS=1 and recorded by hand (it takes minutes).
import { spawnSync } from 'bun'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { dbFile } from '../src/config.ts'
import { machine, median, writeSection } from './doc.ts'
import { ROOT, benchScratch, children, clipCard, envNumber, memory, prober, resetPeak, runBench } from './procs.ts'
import { type Server, api, busyTasks, count, serve, waitUntil } from './serve.ts'

const FILES = envNumber('BENCH_DROP_FILES', 20_000)
const ROUNDS = envNumber('BENCH_DROP_ROUNDS', 3)
const PROF = process.env.BENCH_DROP_CPU_PROF
const TARGET = { ratio: 0.5, waitMs: 100, rssMiB: 300 }

const scratch = benchScratch('reelhouse-bench-drop-')

/** CPU seconds (user + system, every thread) a process has used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ 100)
}

/**
 * Nanoseconds the process's main thread has spent on a CPU and waiting for one (runnable, not
 * run: the machine's other work) so far (/proc/PID/task/PID/schedstat).
 */
function mainThreadSched(pid: number): { onCpu: number; waiting: number } {
  const [onCpu, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number)
  return { onCpu: onCpu!, waiting: waiting! }
}

/** How long the control probe of the idle server lasts (its longest wait: the machine's own noise). */
const IDLE_PROBE_MS = 5000

/** A fresh data folder with the device and the production, made by `serve` itself; the server running. */
async function setUp(label: string): Promise<{ s: Server; data: string; drop: string }> {
  const dir = mkdtempSync(join(scratch.path, `${label}-`))
  const device = join(dir, 'share') + '/'
  mkdirSync(device)
  const noFfmpeg = join(scratch.path, 'no-ffmpeg')
  mkdirSync(noFfmpeg, { recursive: true })
  const prof = PROF && label === 'reelhouse' ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${resolve(PROF)}`] : []
  const data = join(dir, 'data')
  // BENCH_DROP_STDERR=FILE: the server's standard error also appended to FILE (the same process, by exec).
  const stderrTo =
    process.env.BENCH_DROP_STDERR && label === 'reelhouse'
      ? ['bash', '-c', `exec "$0" "$@" 2> >(tee -a '${resolve(process.env.BENCH_DROP_STDERR)}' >&2)`]
      : []
  const s = await serve([...stderrTo, process.execPath, ...prof, join(ROOT, 'src', 'main.ts')], data, [
    '--ffmpeg',
    noFfmpeg,
    '--settle',
    '1',
    '--quiet',
  ])
  if ((await api(s, 'POST', '/api/devices/', { name: 'share', path: device })).status !== 201) throw new Error('device')
  if ((await api(s, 'POST', '/api/productions/', { name: 'Show', storage_root: `${device}Show/` })).status !== 201)
    throw new Error('production')
  await waitUntil('the start scans', 60_000, async () => (await busyTasks(s)) === 0)
  return { s, data, drop: `${device}Show/drop` }
}

async function copy(source: string, to: string) {
  const cp = Bun.spawn(['cp', '-r', source, to], { stderr: 'pipe' })
  if ((await cp.exited) !== 0) throw new Error(`cp: ${await new Response(cp.stderr).text()}`)
}

type Round = {
  seconds: number
  cpuMsPerFile: number
  longestMs: number
  peakMiB: number
  assets: number
  scans?: number
  scanned?: string
  /** The longest /api/health wait of the idle server just before the drop, asked the same way for IDLE_PROBE_MS. */
  idleLongestMs?: number
  /** Seconds the server's main thread spent waiting for a CPU (runnable, not running) during the drop, and on one. */
  runQueueSeconds?: number
  mainCpuSeconds?: number
}

async function reelhouse(source: string): Promise<Round> {
  const { s, drop } = await setUp('reelhouse')
  try {
    resetPeak(s.pid)
    // The same probe of the idle server first: on a shared machine its longest wait is the
    // scheduler's, and a drop's figure is read against it.
    const idle = await prober(s.base)
    await Bun.sleep(IDLE_PROBE_MS)
    const idleLongestMs = (await idle()).longest
    const stop = await prober(s.base)
    const sched0 = mainThreadSched(s.pid)
    const cpu0 = cpuSeconds(s.pid)
    const since = Date.now()
    await copy(source, drop)
    const t = performance.now()
    await waitUntil(
      'the drop imported',
      1_800_000,
      async () => (await count(s, '/api/videoassets/?limit=1')) >= FILES && (await busyTasks(s)) === 0,
      200,
    )
    const seconds = (performance.now() - t) / 1000
    const cpu = cpuSeconds(s.pid) - cpu0
    const sched = mainThreadSched(s.pid)
    const runQueueSeconds = (sched.waiting - sched0.waiting) / 1e9
    const mainCpuSeconds = (sched.onCpu - sched0.onCpu) / 1e9
    const { longest } = await stop()
    const peakMiB = memory(s.pid).hwmMiB
    const assets = await count(s, '/api/videoassets/?limit=1')
    // The scan tasks the drop made (the start scans excepted): how often the drop folder was looked at.
    const scans = (
      (await api(s, 'GET', '/api/tasks/?kind=scan&limit=1000')).json as {
        date_start: string
        date_end: string
        result: { seen?: number; imported?: number }
      }[]
    ).filter((t) => t.result?.seen !== undefined && Date.parse(t.date_end) >= since)
    const scanSeconds = scans.reduce((a, t) => a + (Date.parse(t.date_end) - Date.parse(t.date_start)) / 1000, 0)
    if (process.env.BENCH_DROP_TASKS)
      writeFileSync(
        process.env.BENCH_DROP_TASKS,
        JSON.stringify((await api(s, 'GET', '/api/tasks/?kind=scan&limit=1000&ordering=id')).json, null, 0),
      )
    const scanned = `${scans.length} scans (${scans.map((t) => `${t.result.seen}/${t.result.imported}`).join(' ')} seen/imported), ${scanSeconds.toFixed(1)} s in scans`
    return {
      seconds,
      cpuMsPerFile: (cpu * 1000) / FILES,
      longestMs: longest,
      peakMiB,
      assets,
      scans: scans.length,
      scanned,
      idleLongestMs,
      runQueueSeconds,
      mainCpuSeconds,
    }
  } finally {
    await s.stop()
  }
}

async function baseline(source: string): Promise<Round> {
  const { s, data, drop } = await setUp('baseline')
  await s.stop()
  await copy(source, drop)
  const t = performance.now()
  // The warnings Reelhouse's import task writes without ffmpeg, word for word.
  const absent = (tool: string) =>
    `${tool} was not found in ${join(scratch.path, 'no-ffmpeg')}; media is not probed and no proxies are made (install ffmpeg or pass --ffmpeg DIR)`
  const env = { ...process.env, BENCH_WARNING_PROBE: absent('ffprobe'), BENCH_WARNING_PROXY: absent('ffmpeg') }
  const run = spawnSync([process.execPath, join(ROOT, 'bench', 'drop-baseline.ts'), dbFile(data), drop], {
    stdout: 'pipe',
    stderr: 'pipe',
    env,
  })
  const seconds = (performance.now() - t) / 1000
  if (run.exitCode !== 0) throw new Error(`drop-baseline: ${run.stderr.toString()}`)
  const out = JSON.parse(run.stdout.toString()) as { files: number; cpuMs: number; peakMiB: number }
  return { seconds, cpuMsPerFile: out.cpuMs / FILES, longestMs: NaN, peakMiB: out.peakMiB, assets: out.files }
}

async function main(): Promise<boolean> {
  scratch.make()
  const host = machine()
  const source = clipCard(scratch.path, FILES)
  const results = { reelhouse: [] as Round[], baseline: [] as Round[] }
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? (['baseline', 'reelhouse'] as const) : (['reelhouse', 'baseline'] as const)
    for (const label of order) {
      const round = label === 'reelhouse' ? await reelhouse(source) : await baseline(source)
      results[label].push(round)
      console.error(
        `  round ${r + 1} ${label}: ${round.seconds.toFixed(1)} s (${(FILES / round.seconds).toFixed(0)} files/s), ${round.cpuMsPerFile.toFixed(2)} ms CPU a file, ` +
          `longest /api/health wait ${round.longestMs.toFixed(1)} ms${round.idleLongestMs === undefined ? '' : ` (idle server: ${round.idleLongestMs.toFixed(1)} ms)`}, ` +
          `${round.runQueueSeconds === undefined ? '' : `main thread ${round.mainCpuSeconds!.toFixed(1)} s on a CPU and ${round.runQueueSeconds.toFixed(1)} s waiting for one, `}peak RSS ${round.peakMiB.toFixed(0)} MiB, ${round.assets} assets${round.scanned ? `; ${round.scanned}` : ''}`,
      )
    }
  }
  const med = (label: keyof typeof results, f: (r: Round) => number) => median(results[label].map(f))
  const rate = (label: keyof typeof results) => med(label, (r) => FILES / r.seconds)
  const ratio = median(results.reelhouse.map((r, i) => results.baseline[i]!.seconds / r.seconds))
  const wait = med('reelhouse', (r) => r.longestMs)
  const peak = Math.max(...results.reelhouse.map((r) => r.peakMiB))
  const all = results.reelhouse.every((r) => r.assets === FILES) && results.baseline.every((r) => r.assets === FILES)
  const n = FILES.toLocaleString('en')
  const rows = [
    [
      `Drop of ${n} files: Reelhouse, end of cp to every asset imported, median`,
      `${med('reelhouse', (r) => r.seconds).toFixed(1)} s (${rate('reelhouse').toFixed(0)} files/s); ${med('reelhouse', (r) => r.cpuMsPerFile).toFixed(2)} ms server CPU a file`,
      '',
      '',
    ],
    [
      `Drop of ${n} files: baseline (one process: walk, lstat, the same rows, 500 a transaction), median`,
      `${med('baseline', (r) => r.seconds).toFixed(1)} s (${rate('baseline').toFixed(0)} files/s); ${med('baseline', (r) => r.cpuMsPerFile).toFixed(2)} ms CPU a file`,
      '',
      '',
    ],
    [
      `Drop: Reelhouse's files/s over the baseline's, median of rounds`,
      ratio.toFixed(2),
      `≥ ${TARGET.ratio}`,
      ratio >= TARGET.ratio ? 'pass' : 'FAIL',
    ],
    [
      `Drop: longest /api/health wait, median`,
      `${wait.toFixed(1)} ms`,
      `< ${TARGET.waitMs} ms`,
      wait < TARGET.waitMs ? 'pass' : 'FAIL',
    ],
    [
      `Drop: Reelhouse's peak RSS (VmHWM), highest round`,
      `${peak.toFixed(0)} MiB`,
      `< ${TARGET.rssMiB} MiB`,
      peak < TARGET.rssMiB ? 'pass' : 'FAIL',
    ],
    [`Drop: every file one asset`, all ? 'yes' : 'no', 'yes', all ? 'pass' : 'FAIL'],
  ]
  console.log('\n' + rows.map((r) => r.join('  |  ')).join('\n'))
  const ok = rows.every((r) => r[3] !== 'FAIL')
  if (process.env.BENCH_NO_DOC !== '1' && !PROF)
    writeSection(
      join(ROOT, 'docs', 'benchmarks.md'),
      'drop',
      `## A drop of ${n} files (bench/drop.ts)

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, Linux ${host.kernel} (load average at start: ${host.load}); Bun ${host.bun}
- Data: ${n} clips of a few bytes, copied with \`cp -r\` into a production's drop folder; ${ROUNDS} rounds, Reelhouse and the baseline alternating

| Measure | Result | Target | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

Per round (s): Reelhouse ${results.reelhouse.map((r) => r.seconds.toFixed(1)).join(', ')}; baseline ${results.baseline.map((r) => r.seconds.toFixed(1)).join(', ')}.
Longest /api/health waits (ms): ${results.reelhouse.map((r) => r.longestMs.toFixed(1)).join(', ')}; of the idle server just before, for ${IDLE_PROBE_MS / 1000} s: ${results.reelhouse.map((r) => r.idleLongestMs!.toFixed(1)).join(', ')}.
The server's main thread from the start of the cp to the end, on a CPU / waiting for one (s): ${results.reelhouse.map((r) => `${r.mainCpuSeconds!.toFixed(1)} / ${r.runQueueSeconds!.toFixed(1)}`).join(', ')}. Server CPU a file (ms): ${results.reelhouse.map((r) => r.cpuMsPerFile.toFixed(2)).join(', ')}.
Scan tasks of the drop: ${results.reelhouse.map((r) => r.scans).join(', ')}. Peak RSS (MiB): ${results.reelhouse.map((r) => r.peakMiB.toFixed(0)).join(', ')}.

What is measured: \`serve\` from source (\`--settle 1\`, no ffmpeg) on a fresh data folder with one
device and one production; from the end of \`cp -r\` of the clips into the production's drop folder
until every clip is a video asset and no task is queued or running (each import task done), with
\`GET /api/health\` asked one request after the other from a process of its own (bench/prober.ts);
the server's CPU (every thread) is counted from the start of the cp. Before the cp, the same
prober asks the idle server for ${IDLE_PROBE_MS / 1000} s: its longest wait is the machine's share of the figure (on a
shared machine, the scheduler's). The main thread's time on a CPU and its wait for one (runnable, not run) are
from \`/proc/PID/task/PID/schedstat\`, from the start of the cp to the end. The baseline
(bench/drop-baseline.ts) is one Bun process on a catalogue the same \`serve\` made (the same
migrations, so the same triggers and search index), the server stopped: it walks the drop,
\`lstat\`s every file, reads its fingerprint and writes, 500 files a transaction, what Reelhouse
writes for a dropped file (the media asset with its history row, the ImportLog, the import task;
then the asset's status, the log's end and the task's end), timed from the end of the cp to its
exit.
`,
    )
  return ok
}

await runBench(main, scratch.stopAll)
