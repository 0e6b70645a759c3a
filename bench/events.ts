// The event stream benchmark (part of npm run bench): 500 clients of GET /api/events/ while 100
// copy tasks report their progress; every 50 ms the benchmark changes one asset (PATCH) and
// measures, for every client, the time from the request's start to the asset's event reaching the
// client (delivery; target p95 < 100 ms). Also: what 500 open streams cost the server (RSS with
// them minus RSS before; target < 50 MB), the events each client got, clients dropped.
// Reelhouse runs as the compiled executable and from source, each with its default request log;
// the baseline (bench/events-baseline.ts) is raw Bun.serve fanning the same message out to as
// many streams after one bun:sqlite write, with no copies running: what the fan-out itself costs.
// The clients run in a process of their own (bench/events-subscribers.ts).
// Environment (all optional): BENCH_EVENTS_CLIENTS (500), BENCH_EVENTS_TASKS (100),
// BENCH_EVENTS_PROBES (100), BENCH_EVENTS_ROUNDS (3), BENCH_NO_DOC=1.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { machine, median, pct, writeSection } from './doc.ts'
import { ROOT, benchScratch, children, envNumber, memory, runBench, spawnListening } from './procs.ts'
import { type Server, api, busyTasks, serve, waitUntil } from './serve.ts'

const cfg = {
  clients: envNumber('BENCH_EVENTS_CLIENTS', 500),
  tasks: envNumber('BENCH_EVENTS_TASKS', 100),
  probes: envNumber('BENCH_EVENTS_PROBES', 100),
  rounds: envNumber('BENCH_EVENTS_ROUNDS', 3),
}
const TARGET = { p95Ms: 100, costMiB: 50 }
/** The project every copy copies: files of 256 KiB, not media (a copy reports progress a few times a second). */
const SOURCE_FILES = 40
const FILE_BYTES = 256 * 1024
const PROBE_EVERY_MS = 50

const scratch = benchScratch('reelhouse-bench-events-')

const now = () => performance.timeOrigin + performance.now()

type Clients = { done(): Promise<{ received: Record<string, number[]>; types: Record<string, number>; ended: number }> }

/** The clients' process, once every stream has answered. */
async function clients(url: string, key: string): Promise<Clients> {
  const proc = Bun.spawn(
    [process.execPath, join(ROOT, 'bench', 'events-subscribers.ts'), url, key, String(cfg.clients)],
    {
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'inherit',
      env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: String(cfg.clients + 64) },
    },
  )
  children.add(proc)
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let out = ''
  while (!out.includes('ready\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the clients ended before they were connected: ${out}`)
    out += decoder.decode(value, { stream: true })
  }
  out = out.slice(out.indexOf('ready\n') + 6)
  return {
    async done() {
      proc.stdin.end()
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        out += decoder.decode(value, { stream: true })
      }
      await proc.exited
      children.delete(proc)
      return JSON.parse(out.trim())
    },
  }
}

type Round = {
  latencies: number[]
  missing: number
  costMiB: number
  rssMiB: number
  types: Record<string, number>
  dropped: number
  seconds: number
}

/** One round of Reelhouse (`cli`): a fresh data folder, the project and the probe assets, the clients, the copies and the probes. */
async function reelhouse(cli: string[], label: string): Promise<Round> {
  const dir = mkdtempSync(join(scratch.path, `${label}-`))
  const device = join(dir, 'share') + '/'
  const source = join(device, 'Show', 'source')
  mkdirSync(join(device, 'Show', 'probes'), { recursive: true })
  mkdirSync(source, { recursive: true })
  const bytes = new Uint8Array(FILE_BYTES).fill(7)
  // Not media (a project's render cache): the watcher leaves the copies alone, only the copies report.
  for (let i = 0; i < SOURCE_FILES; i++) writeFileSync(join(source, `render_${i}.cache`), bytes)
  const noFfmpeg = join(dir, 'no-ffmpeg')
  mkdirSync(noFfmpeg)
  const s = await serve(cli, join(dir, 'data'), ['--ffmpeg', noFfmpeg])
  try {
    const must = async (method: string, path: string, body: unknown, status: number) => {
      const r = await api(s, method, path, body)
      if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`)
      return r.json
    }
    await must('POST', '/api/devices/', { name: 'share', path: device }, 201)
    const production = await must('POST', '/api/productions/', { name: 'Show', storage_root: `${device}Show/` }, 201)
    const project = await must(
      'POST',
      '/api/projectassets/',
      { name: 'Source', bundle_root: `${source}/`, production_id: production.id },
      201,
    )
    const probes: number[] = []
    for (let i = 0; i < cfg.probes; i++) {
      const path = join(device, 'Show', 'probes', `probe_${i}.mov`)
      writeFileSync(path, 'probe')
      probes.push(
        (
          await must(
            'POST',
            '/api/videoassets/',
            { name: `probe ${i}`, path_file: path, production: production.id },
            201,
          )
        ).id,
      )
    }
    await waitUntil('the start scans', 60_000, async () => (await busyTasks(s)) === 0)
    await Bun.sleep(2000)
    const before = memory(s.pid).rssMiB
    const c = await clients(`${s.base}/api/events/`, s.key)
    await Bun.sleep(1000)
    const withClients = memory(s.pid).rssMiB
    const t0 = performance.now()
    for (let i = 0; i < cfg.tasks; i++)
      await must(
        'POST',
        '/api/projectassets/',
        {
          name: `Copy ${i}`,
          copy_of: project.id,
          production_id: production.id,
          bundle_root: `${device}Show/copies/copy_${i}/`,
        },
        201,
      )
    const sent = new Map<number, number>()
    for (const id of probes) {
      sent.set(id, now())
      await must('PATCH', `/api/videoassets/${id}/`, { description: `probe at ${Date.now()}` }, 200)
      await Bun.sleep(PROBE_EVERY_MS)
    }
    await waitUntil('the copies', 600_000, async () => (await busyTasks(s)) === 0, 250)
    const seconds = (performance.now() - t0) / 1000
    await Bun.sleep(500)
    const rss = memory(s.pid).rssMiB
    const result = await c.done()
    return { ...collect(result, sent), costMiB: withClients - before, rssMiB: rss, seconds }
  } finally {
    await s.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** One round of the baseline: the clients, and the probes as POST /poke. */
async function baseline(): Promise<Round> {
  const dir = mkdtempSync(join(scratch.path, 'baseline-'))
  const { proc, port } = await spawnListening(
    'baseline',
    [process.execPath, 'bench/events-baseline.ts', join(dir, 'probes.db')],
    {
      portOf: (l) => /^listening (\d+)$/.exec(l.trim())?.[1],
    },
  )
  const base = `http://127.0.0.1:${port}`
  try {
    const before = memory(proc.pid).rssMiB
    const c = await clients(`${base}/events`, '-')
    await Bun.sleep(1000)
    const withClients = memory(proc.pid).rssMiB
    const t0 = performance.now()
    const sent = new Map<number, number>()
    for (let id = 1; id <= cfg.probes; id++) {
      sent.set(id, now())
      const r = await fetch(`${base}/poke?id=${id}`, { method: 'POST' })
      if (r.status !== 204) throw new Error(`poke: ${r.status}`)
      await Bun.sleep(PROBE_EVERY_MS)
    }
    await Bun.sleep(500)
    const result = await c.done()
    return {
      ...collect(result, sent),
      costMiB: withClients - before,
      rssMiB: memory(proc.pid).rssMiB,
      seconds: (performance.now() - t0) / 1000,
    }
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
    children.delete(proc)
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Each client's delivery time of each probe's event; the deliveries that never came. */
function collect(
  r: { received: Record<string, number[]>; types: Record<string, number>; ended: number },
  sent: Map<number, number>,
) {
  const latencies: number[] = []
  let missing = 0
  for (const [id, at] of sent) {
    const got = r.received[String(id)] ?? []
    missing += Math.max(0, cfg.clients - got.length)
    for (const t of got) latencies.push(t - at)
  }
  return { latencies, missing, types: r.types, dropped: r.ended }
}

async function main(): Promise<boolean> {
  const host = machine()
  const exe = join(ROOT, 'dist', 'reelhouse')
  if (!existsSync(exe)) throw new Error('dist/reelhouse is missing: npm run build first')
  scratch.make()
  const results: Record<string, Round[]> = { compiled: [], source: [], baseline: [] }
  const runs: Record<string, () => Promise<Round>> = {
    compiled: () => reelhouse([exe], 'compiled'),
    source: () => reelhouse([process.execPath, 'src/main.ts'], 'source'),
    baseline,
  }
  for (let round = 0; round < cfg.rounds; round++) {
    const labels = Object.keys(runs)
    for (const label of labels.map((_, i) => labels[(i + round) % labels.length]!)) {
      const r = await runs[label]!()
      results[label]!.push(r)
      console.error(
        `  round ${round + 1} ${label.padEnd(8)} delivery p50 ${median(r.latencies).toFixed(1)} ms p95 ${pct(r.latencies, 95).toFixed(1)} ms max ${Math.max(...r.latencies).toFixed(1)} ms; ` +
          `missing ${r.missing}, dropped ${r.dropped}; ${cfg.clients} streams cost ${r.costMiB.toFixed(1)} MiB; events per client ${JSON.stringify(Object.fromEntries(Object.entries(r.types).map(([k, v]) => [k, Math.round(v / cfg.clients)])))}; ${r.seconds.toFixed(1)} s`,
      )
    }
  }

  const n = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })
  const m = (label: string, f: (r: Round) => number) => median(results[label]!.map(f))
  const verdicts = ['compiled', 'source'].flatMap((label) => [
    { label, what: 'delivery p95', value: m(label, (r) => pct(r.latencies, 95)), target: TARGET.p95Ms, unit: 'ms' },
    {
      label,
      what: `RSS of ${cfg.clients} open streams`,
      value: Math.max(...results[label]!.map((r) => r.costMiB)),
      target: TARGET.costMiB,
      unit: 'MiB',
    },
  ])
  const lost = ['compiled', 'source'].reduce(
    (a, l) => a + results[l]!.reduce((b, r) => b + r.missing + r.dropped, 0),
    0,
  )
  const pass = verdicts.every((v) => v.value < v.target) && lost === 0
  const mark = (ok: boolean) => (ok ? 'pass' : 'FAIL')
  const label = (l: string) => (l === 'compiled' ? 'compiled executable' : l === 'source' ? 'source run' : 'baseline')
  const rows: [string, string, string, string][] = [
    ...verdicts.map((v): [string, string, string, string] => [
      `Events, ${label(v.label)}: ${v.what} (${v.what.startsWith('delivery') ? 'median of rounds' : 'highest of rounds'})`,
      `${n(v.value, 1)} ${v.unit}`,
      `< ${v.target} ${v.unit}`,
      mark(v.value < v.target),
    ]),
    [
      'Events, baseline: delivery p95 (median of rounds); RSS of the open streams',
      `${n(
        m('baseline', (r) => pct(r.latencies, 95)),
        1,
      )} ms; ${n(
        m('baseline', (r) => r.costMiB),
        1,
      )} MiB`,
      '',
      '',
    ],
    ['Events: deliveries missing and clients dropped, Reelhouse (all rounds)', `${n(lost)}`, '0', mark(lost === 0)],
  ]
  const perRound = (l: string) =>
    results[l]!.map(
      (r) =>
        `p50 ${n(median(r.latencies), 1)} / p95 ${n(pct(r.latencies, 95), 1)} / max ${n(Math.max(...r.latencies), 1)} ms, streams ${n(r.costMiB, 1)} MiB, RSS at the end ${n(r.rssMiB)} MiB`,
    ).join('; ')
  const perClient = (l: string) => {
    const r = results[l]![0]!
    return Object.entries(r.types)
      .map(([k, v]) => `${k} ${n(v / cfg.clients)}`)
      .join(', ')
  }
  console.log('\nEvent stream benchmark')
  for (const r of rows) console.log(`${r[0].padEnd(90)} ${r[1].padEnd(20)} ${r[2].padEnd(9)} ${r[3]}`)
  for (const l of Object.keys(results)) console.log(`per round, ${label(l)}: ${perRound(l)}`)

  if (process.env.BENCH_NO_DOC !== '1') {
    writeSection(
      join(ROOT, 'docs', 'benchmarks.md'),
      'events',
      `## Events: ${n(cfg.clients)} clients of GET /api/events/ while ${n(cfg.tasks)} copies report progress

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, ${n(host.ramGiB, 1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load})
- Bun ${host.bun}

| Measure | Result | Target | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

Per round (the servers' order rotated each round):
${Object.keys(results)
  .map((l) => `- ${label(l)}: ${perRound(l)}`)
  .join('\n')}

Events each client got in the first round: compiled executable ${perClient('compiled')}; source run ${perClient('source')}.

What is measured:

- **Reelhouse**: \`reelhouse serve\` (the compiled executable) and \`bun src/main.ts serve\`, a fresh data
  folder each round, with the default request log and no ffmpeg. One device, one production, a
  project of ${SOURCE_FILES} files of ${FILE_BYTES / 1024} KiB and ${n(cfg.probes)} video assets. ${n(cfg.clients)} clients open
  \`GET /api/events/\` with the admin's key (bench/events-subscribers.ts, one process); then
  ${n(cfg.tasks)} copies of the project are asked for (each a task reporting its progress, at most 4
  events a second) and, while they run, one asset is changed every ${PROBE_EVERY_MS} ms
  (\`PATCH /api/videoassets/{id}/\`). **Delivery**: from the start of the PATCH request to its
  \`asset\` event (\`updated\`) at each client, over every client and change; both clocks are the
  same machine's (\`performance.timeOrigin + performance.now()\` in each process).
- **Streams' memory**: the server's RSS one second after the ${n(cfg.clients)} streams opened, minus its RSS
  just before.
- **Baseline**: bench/events-baseline.ts, raw \`Bun.serve\` sending the same SSE message to every
  open stream after one \`bun:sqlite\` write, on \`POST /poke\`; the same clients and changes, no
  copies, no auth, no filter.
`,
    )
  }
  if (process.env.BENCH_RESULTS)
    writeFileSync(process.env.BENCH_RESULTS, JSON.stringify({ bench: 'events', headline: rows.slice(0, 1) }))
  return pass
}

void runBench(main, scratch.stopAll)
