// Does one drop or one body stall the server for everyone else? (issue 25) While the server works
// through (a) 20,000 files copied into a watch folder, (b) four import requests at once, each
// with 40,000 empty keyword categories (0.9 MB), and (c) the largest keyword edits the limits
// allow (PATCH and PUT of 1,000 categories and keywords with names of 255 characters, one after
// the other), another client asks GET /api/health one request after the other; the figure is the
// longest it waited for an answer (goal: under 100 ms). The baseline is the same client against
// the same server while it is idle, in the same run.
// Both the source run (`bun src/main.ts serve`) and the compiled executable (dist/reelhouse,
// built here), each with its default request log, as users run them.
// Usage: bun bench/stall.ts   (BENCH_STALL_FILES, BENCH_STALL_ROUNDS, BENCH_STALL_EDITS; BENCH_NO_DOC=1: print only)
import { spawnSync } from 'bun'
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { machine, writeSection } from './doc.ts'
import { ROOT, benchScratch, children, clipCard, envNumber, prober, runBench } from './procs.ts'
import { type Server, api, busyTasks, count, serve, waitUntil } from './serve.ts'

const FILES = envNumber('BENCH_STALL_FILES', 20_000)
const ROUNDS = envNumber('BENCH_STALL_ROUNDS', 3)
const CATEGORIES = 40_000
const GOAL_MS = 100
/** Rounds of keyword edits (c): each a PATCH and a PUT of each of the two largest shapes. */
const EDITS = envNumber('BENCH_STALL_EDITS', 5)
/** The longest keyword and category name, and the most categories and keywords in one request. */
const NAME = 255
const ENTRIES = 1000

const scratch = benchScratch('reelhouse-bench-stall-')

/** A server as the rounds run it: no ffmpeg, a settle time of one second. */
function serveNoFfmpeg(cli: string[], dataDir: string) {
  const noFfmpeg = join(scratch.path, 'no-ffmpeg')
  mkdirSync(noFfmpeg, { recursive: true })
  return serve(cli, dataDir, ['--ffmpeg', noFfmpeg, '--settle', '1'])
}

const assetCount = (s: Server) => count(s, '/api/videoassets/?limit=1')

type Round = {
  idle: number
  drop: number
  dropSeconds: number
  imported: number
  body: number
  bodyStatus: number[]
  edits: number
  editStatus: number[]
  editMs: number[]
}

/** A name of NAME characters, unique by its prefix. */
const longName = (prefix: string) => prefix + 'x'.repeat(NAME - prefix.length)

/**
 * The two largest keyword edits the limits allow, with names new in each round (each request
 * writes 999 or 500 keywords the catalogue does not have yet): one category of ENTRIES - 1
 * keywords, and ENTRIES / 2 categories of one keyword each.
 */
function editBodies(round: number): Record<string, unknown>[] {
  const deep = {
    [longName(`deep-${round}-`)]: Array.from({ length: ENTRIES - 1 }, (_, k) => longName(`r${round}-k${k}-`)),
  }
  const wide = Object.fromEntries(
    Array.from({ length: ENTRIES / 2 }, (_, c) => [longName(`r${round}-c${c}-`), [longName(`r${round}-w${c}-`)]]),
  )
  return [{ keywords: deep }, { keywords: wide }]
}

async function round(cli: string[], label: string, r: number, source: string): Promise<Round> {
  const dir = mkdtempSync(join(scratch.path, `${label}-`))
  const device = join(dir, 'share') + '/'
  mkdirSync(device)
  const s = await serveNoFfmpeg(cli, join(dir, 'data'))
  try {
    if ((await api(s, 'POST', '/api/devices/', { name: 'share', path: device })).status !== 201)
      throw new Error('device')
    if ((await api(s, 'POST', '/api/productions/', { name: 'Show', storage_root: `${device}Show/` })).status !== 201)
      throw new Error('production')
    await waitUntil('the start scans', 30_000, async () => (await busyTasks(s)) === 0)
    // Baseline: the same client, the server idle, for 3 s.
    let stop = await prober(s.base)
    await Bun.sleep(3000)
    const idle = (await stop()).longest
    // (a) The drop: cp -r of a folder of FILES clips into the watch folder; until every clip is an asset and no task is left.
    stop = await prober(s.base)
    const t = performance.now()
    const cp = Bun.spawn(['cp', '-r', source, `${device}Show/drop`], { stderr: 'pipe' })
    if ((await cp.exited) !== 0) throw new Error(`cp: ${await new Response(cp.stderr).text()}`)
    await waitUntil(
      'the drop imported',
      600_000,
      async () => (await assetCount(s)) >= FILES && (await busyTasks(s)) === 0,
    )
    const dropSeconds = (performance.now() - t) / 1000
    const drop = (await stop()).longest
    const imported = await assetCount(s)
    // (b) Four import requests at once, each with 40,000 empty keyword categories.
    const keywords = Object.fromEntries(Array.from({ length: CATEGORIES }, (_, i) => [`category-${i}`, []]))
    const body = JSON.stringify({
      type: 'video',
      production: 'Show',
      rewrap_proxy: false,
      move_asset: false,
      asset: {
        asset_meta: {
          name: 'k',
          path_file: `${device}Show/drop/clip-000000.mov`,
          is_archive: false,
          is_production: true,
          approval: 0,
          meta_field_store: {},
        },
        technical_details: {},
        archive_details: {},
        keywords,
      },
    })
    stop = await prober(s.base)
    const answers = await Promise.all([0, 1, 2, 3].map(() => api(s, 'POST', '/api/asset/import/', body)))
    await Bun.sleep(200)
    const bodyWait = (await stop()).longest
    // (c) The largest keyword edits, one after the other, on an asset of the drop: PATCH and PUT
    // of each shape, EDITS rounds; each request's time as the client saw it.
    const asset = (await api(s, 'GET', '/api/videoassets/?limit=1')).json[0] as { id: number; name: string }
    const editStatus: number[] = []
    const editMs: number[] = []
    stop = await prober(s.base)
    for (let e = 0; e < EDITS; e++)
      for (const [b, body] of editBodies(e).entries())
        for (const method of ['PATCH', 'PUT']) {
          const t0 = performance.now()
          const reply = await api(
            s,
            method,
            `/api/videoassets/${asset.id}/`,
            method === 'PUT' ? { name: asset.name, ...body } : body,
          )
          editMs.push(performance.now() - t0)
          editStatus.push(reply.status)
          if (reply.status !== 200)
            console.error(`  ${method} of shape ${b}: ${reply.status} ${JSON.stringify(reply.json).slice(0, 300)}`)
        }
    const edits = (await stop()).longest
    const round = {
      idle,
      drop,
      dropSeconds,
      imported,
      body: bodyWait,
      bodyStatus: answers.map((a) => a.status),
      edits,
      editStatus,
      editMs,
    }
    console.error(
      `  ${label} round ${r + 1}: idle ${idle.toFixed(1)} ms; drop of ${FILES} files: longest wait ${drop.toFixed(1)} ms, all imported in ${dropSeconds.toFixed(1)} s (${imported} assets); ` +
        `4 bodies of ${(body.length / 1e6).toFixed(2)} MB: longest wait ${bodyWait.toFixed(1)} ms (answers ${round.bodyStatus.join(', ')}); ` +
        `${editMs.length} keyword edits: longest wait ${edits.toFixed(1)} ms, each ${median(editMs).toFixed(1)} ms median, ${Math.max(...editMs).toFixed(1)} ms longest (answers ${[...new Set(editStatus)].join(', ')})`,
    )
    return round
  } finally {
    await s.stop()
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function main(): Promise<boolean> {
  scratch.make()
  const host = machine()
  const source = clipCard(scratch.path, FILES)
  const built = spawnSync([process.execPath, 'build.ts'], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' })
  const compiled = join(ROOT, 'dist', 'reelhouse')
  const clis: [string, string[]][] = [['source', [process.execPath, join(ROOT, 'src', 'main.ts')]]]
  if (built.exitCode === 0 && existsSync(compiled)) clis.push(['compiled', [compiled]])
  else console.error(`bun build.ts failed; the compiled executable is not measured:\n${built.stderr}`)
  const results = new Map<string, Round[]>(clis.map(([label]) => [label, []]))
  // Alternating: source, compiled, source, ...
  for (let r = 0; r < ROUNDS; r++)
    for (const [label, cli] of r % 2 ? [...clis].reverse() : clis)
      results.get(label)!.push(await round(cli, label, r, source))

  const rows: string[][] = []
  let ok = true
  for (const [label, rounds] of results) {
    const drop = median(rounds.map((x) => x.drop))
    const body = median(rounds.map((x) => x.body))
    const imported = rounds.every((x) => x.imported === FILES)
    const refused = rounds.every((x) => x.bodyStatus.every((st) => st === 400))
    const edits = median(rounds.map((x) => x.edits))
    const edited = rounds.every((x) => x.editStatus.every((st) => st === 200))
    const editMs = rounds.flatMap((x) => x.editMs)
    ok &&= drop < GOAL_MS && body < GOAL_MS && imported && refused && edits < GOAL_MS && edited
    rows.push(
      [
        `${label}: longest /api/health wait while ${FILES.toLocaleString('en')} dropped files are imported, median`,
        `${drop.toFixed(1)} ms (idle: ${median(rounds.map((x) => x.idle)).toFixed(1)} ms)`,
        `< ${GOAL_MS} ms`,
        drop < GOAL_MS ? 'pass' : 'FAIL',
      ],
      [
        `${label}: drop to all imported, median`,
        `${median(rounds.map((x) => x.dropSeconds)).toFixed(1)} s; each file imported once: ${imported ? 'yes' : 'no'}`,
        '',
        imported ? 'pass' : 'FAIL',
      ],
      [
        `${label}: longest /api/health wait during 4 imports of ${CATEGORIES.toLocaleString('en')} empty categories at once, median`,
        `${body.toFixed(1)} ms; answers ${refused ? 'all 400' : 'not all 400'}`,
        `< ${GOAL_MS} ms`,
        body < GOAL_MS && refused ? 'pass' : 'FAIL',
      ],
      [
        `${label}: longest /api/health wait during ${EDITS * 4} keyword edits of ${ENTRIES.toLocaleString('en')} entries (PATCH and PUT), median`,
        `${edits.toFixed(1)} ms; answers ${edited ? 'all 200' : 'not all 200'}; each edit ${median(editMs).toFixed(1)} ms median, ${Math.max(...editMs).toFixed(1)} ms longest`,
        `< ${GOAL_MS} ms`,
        edits < GOAL_MS && edited ? 'pass' : 'FAIL',
      ],
    )
  }
  console.log('\n' + rows.map((r) => r.join('  |  ')).join('\n'))
  if (process.env.BENCH_NO_DOC !== '1')
    writeSection(
      join(ROOT, 'docs', 'benchmarks.md'),
      'stall',
      `## No stall from one drop or one body (bench/stall.ts)

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, Linux ${host.kernel} (load average at start: ${host.load}); Bun ${host.bun}
- Data: ${FILES.toLocaleString('en')} clips of a few bytes copied with \`cp -r\` into a production's watch folder; import bodies with ${CATEGORIES.toLocaleString('en')} empty keyword categories (0.9 MB); keyword edits of ${ENTRIES.toLocaleString('en')} categories and keywords with names of ${NAME} characters (0.26 MB)

| Measure | Result | Goal | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

Per round (ms, longest /api/health wait): ${[...results].map(([label, rounds]) => `${label}: idle ${rounds.map((x) => x.idle.toFixed(1)).join(', ')}; drop ${rounds.map((x) => x.drop.toFixed(1)).join(', ')}; bodies ${rounds.map((x) => x.body.toFixed(1)).join(', ')}; edits ${rounds.map((x) => x.edits.toFixed(1)).join(', ')}`).join('. ')}.

What is measured: \`serve\` (the source run and dist/reelhouse, alternating, each with its default
request log), \`--settle 1\`, no ffmpeg. One client, in a process of its own (bench/prober.ts, so that
the benchmark's own work never delays it), warms up (200 requests: a fresh process's first
requests wait for its own compiler), then asks \`GET /api/health\` one request after the other
and keeps the longest time it waited for an answer: for 3 s while the server is idle (the baseline),
then from the start of \`cp -r\` of a folder of clips into the watch folder until every clip is an
asset and no task is queued or running, then while four import requests with 40,000 empty categories
each are sent at once (refused: 400, more than 1,000 entries), then while ${EDITS * 4} keyword edits
of an asset of the drop are sent one after the other: in each of ${EDITS} rounds a PATCH and a PUT of
one category of 999 keywords and of 500 categories of one keyword each (1,000 entries, the most
one request may carry; every name 255 characters long and new to the catalogue). ${ROUNDS} rounds, medians.
`,
    )
  return ok
}

await runBench(main, scratch.stopAll)
