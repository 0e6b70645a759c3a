// Proxies and probes (issue 26): what the service adds over ffmpeg and ffprobe themselves.
// (a) Making 20 proxies of 30 s 1080p clips: `POST /api/videoassets/{id}/proxy/` of 20 imported
//     clips at once, from the first request until the last proxy task has ended (each proxy
//     checked on disk), against the same 20 proxies made by `xargs -P N ffmpeg ...` with the very
//     arguments the service runs (recorded by a wrapper around ffmpeg while the clips were
//     imported) and the service's task concurrency N. Target: at most 5 % longer.
// (b) One probe as an import runs it (src/media/probe.ts: ffprobe on the opened file, then
//     reading its answer) against ffprobe alone with the same arguments, alternating. Target: at
//     most 50 ms more.
// Both the source run and the compiled executable (dist/reelhouse, built here), alternating with
// the baseline. Medians of the rounds.
// Usage: bun bench/proxies.ts   (BENCH_PROXY_CLIPS=20, BENCH_PROXY_SECONDS=30,
// BENCH_PROXY_ROUNDS=3, BENCH_PROBE_ROUNDS=20; BENCH_NO_DOC=1: print only)
import { spawnSync } from 'bun'
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { createFfmpeg, INPUT } from '../src/media/ffmpeg.ts'
import { probe } from '../src/media/probe.ts'
import { machine, writeSection } from './doc.ts'
import { ROOT, benchScratch, envNumber, runBench } from './procs.ts'
import { type Server, api, busyTasks, count, serve, waitUntil } from './serve.ts'

const CLIPS = envNumber('BENCH_PROXY_CLIPS', 20)
const SECONDS = envNumber('BENCH_PROXY_SECONDS', 30)
const ROUNDS = envNumber('BENCH_PROXY_ROUNDS', 3)
const PROBES = envNumber('BENCH_PROBE_ROUNDS', 20)
/** The service's default task concurrency (serve --task-concurrency). */
const CONCURRENCY = 2
const PROXY_GOAL = 1.05
const PROBE_GOAL_MS = 50

const scratch = benchScratch('reelhouse-bench-proxies-')

const which = (name: string) => {
  const path = Bun.which(name)
  if (!path) throw new Error(`${name} is not on PATH; this benchmark needs ffmpeg and ffprobe`)
  return path
}

function run(cmd: string[], cwd?: string) {
  const r = spawnSync(cmd, { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`${cmd.slice(0, 3).join(' ')} failed:\n${r.stderr.toString().slice(-2000)}`)
  return r.stdout.toString()
}

/** CLIPS different files (one encode, then remuxed with a tag each: same format, other bytes). */
function makeClips(dir: string): string[] {
  mkdirSync(dir)
  const first = join(dir, 'master.mov')
  run([
    which('ffmpeg'),
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=1920x1080:rate=25:duration=${SECONDS}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:sample_rate=48000:duration=${SECONDS}`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '18',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'pcm_s16le',
    '-timecode',
    '01:00:00:00',
    first,
  ])
  const names: string[] = []
  for (let i = 1; i <= CLIPS; i++) {
    const name = `clip-${String(i).padStart(2, '0')}.mov`
    run([
      which('ffmpeg'),
      '-v',
      'error',
      '-i',
      first,
      '-map',
      '0',
      '-c',
      'copy',
      '-metadata',
      `comment=take ${i}`,
      join(dir, name),
    ])
    names.push(name)
  }
  rmSync(first)
  return names
}

/**
 * A folder whose ffmpeg and ffprobe record their arguments (NUL-separated, a file per run) and
 * exec the real ones; with `skipProxies`, ffmpeg fails a proxy run at once instead (the setup's
 * imports record what they would run without making it). `real(dir)` then puts the real
 * binaries in their place: the service runs them by these paths, with nothing in between.
 */
function recordingFfmpeg(dir: string, log: string, skipProxies = false) {
  mkdirSync(dir)
  mkdirSync(log)
  for (const name of ['ffmpeg', 'ffprobe']) {
    const skip = skipProxies && name === 'ffmpeg' ? `case "$*" in *.reelhouse-proxy-*) exit 1;; esac\n` : ''
    writeFileSync(
      join(dir, name),
      `#!/bin/sh\nf=$(mktemp -p '${log}' ${name}-XXXXXX)\nprintf '%s\\0' "$@" > "$f"\n${skip}exec '${which(name)}' "$@"\n`,
    )
    chmodSync(join(dir, name), 0o755)
  }
}
function real(dir: string) {
  for (const name of ['ffmpeg', 'ffprobe']) {
    symlinkSync(which(name), join(dir, `${name}.real`))
    renameSync(join(dir, `${name}.real`), join(dir, name))
  }
}
const recorded = (log: string, name: string) =>
  readdirSync(log)
    .filter((f) => f.startsWith(`${name}-`))
    .map((f) => readFileSync(join(log, f), 'utf8').split('\0').slice(0, -1))

/**
 * A server with the clips on a device of their own (no production's watch folder: the watcher
 * imports none of them) and a production on a second device, in `dir`; the start scans done.
 */
async function prepared(cli: string[], dir: string, clips: string, ffmpegDir: string) {
  const s = await serve(cli, join(dir, 'data'), ['--ffmpeg', ffmpegDir, '--task-concurrency', String(CONCURRENCY)])
  mkdirSync(join(dir, 'work'))
  if ((await api(s, 'POST', '/api/devices/', { name: 'media', path: clips + '/' })).status !== 201)
    throw new Error('device media')
  if ((await api(s, 'POST', '/api/devices/', { name: 'work', path: join(dir, 'work') + '/' })).status !== 201)
    throw new Error('device work')
  if (
    (await api(s, 'POST', '/api/productions/', { name: 'Show', storage_root: join(dir, 'work', 'Show') + '/' }))
      .status !== 201
  )
    throw new Error('production')
  await waitUntil('the start scans', 60_000, async () => (await busyTasks(s)) === 0)
  return s
}

const importBody = (path: string) => ({
  type: 'video',
  production: 'Show',
  rewrap_proxy: false,
  move_asset: false,
  asset: {
    asset_meta: {
      name: path.split('/').at(-1),
      path_file: path,
      is_archive: false,
      is_production: true,
      approval: 0,
      meta_field_store: {},
    },
    technical_details: {},
    archive_details: {},
    keywords: {},
  },
})

type Side = { server: Server; ids: number[]; args: string[] }

/**
 * A server of `cli` in `dir` with the clips imported (untimed), ffmpeg recorded and failing the
 * proxies of the imports; then the real ffmpeg in place. The proxy arguments it ran, with {} for
 * the clip's name and the output.
 */
async function side(cli: string[], dir: string, clips: string, names: string[]): Promise<Side> {
  const ffmpegDir = join(dir, 'ffmpeg')
  const log = join(dir, 'recorded')
  recordingFfmpeg(ffmpegDir, log, true)
  const server = await prepared(cli, dir, clips, ffmpegDir)
  const answers = await Promise.all(
    names.map((n) => api(server, 'POST', '/api/asset/import/', importBody(join(clips, n)))),
  )
  if (answers.some((a) => a.status !== 201))
    throw new Error(`an import was refused: ${JSON.stringify(answers.find((a) => a.status !== 201)?.json)}`)
  await waitUntil('the imports', 600_000, async () => (await busyTasks(server)) === 0)
  real(ffmpegDir)
  const ids = ((await api(server, 'GET', `/api/videoassets/?limit=${names.length}`)).json as { id: number }[]).map(
    (a) => a.id,
  )
  if (ids.length !== names.length) throw new Error(`${ids.length} of ${names.length} clips imported`)
  const proxy = recorded(log, 'ffmpeg').find(
    (args) => args.includes(`file:${INPUT}`) && args.some((a) => a.includes('.reelhouse-proxy-')),
  )
  if (!proxy)
    throw new Error(`no proxy run among the service's ffmpeg runs: ${JSON.stringify(recorded(log, 'ffmpeg'))}`)
  // The service hands the opened file over as fd 3 and writes to a temporary name beside the
  // proxies; the shell loop names the clip and an output of its own. Nothing else changes.
  // The pictures made by the same run (src/media/pictures.ts) go beside it: `{}.poster.jpg`...
  const args = proxy.map((a) =>
    a === `file:${INPUT}`
      ? 'file:{}'
      : a.includes('.reelhouse-proxy-')
        ? `${scratch.path}/out/{}.proxy`
        : a.includes('.reelhouse-picture-')
          ? `${scratch.path}/out/{}${a.slice(a.indexOf('.', a.indexOf('.reelhouse-picture-') + 19))}`
          : a,
  )
  return { server, ids, args }
}

/** Seconds from the first remake request until no task is left; every proxy checked on disk. */
async function remakeRound({ server, ids }: Side): Promise<number> {
  const before = new Map<number, number>()
  for (const id of ids) {
    const proxy = ((await api(server, 'GET', `/api/videoassets/${id}/`)).json as { path_proxy?: string }).path_proxy
    before.set(id, proxy && existsSync(proxy) ? statSync(proxy).mtimeMs : 0)
  }
  const t = performance.now()
  const answers = await Promise.all(ids.map((id) => api(server, 'POST', `/api/videoassets/${id}/proxy/`)))
  if (answers.some((a) => a.status !== 202))
    throw new Error(`a remake was refused: ${JSON.stringify(answers.find((a) => a.status !== 202)?.json)}`)
  await waitUntil('the proxies', 3600_000, async () => (await busyTasks(server)) === 0, 50)
  const seconds = (performance.now() - t) / 1000
  const failed = await count(server, '/api/tasks/?state=failed&kind=proxy&limit=1')
  let made = 0
  for (const id of ids) {
    const proxy = ((await api(server, 'GET', `/api/videoassets/${id}/`)).json as { path_proxy?: string }).path_proxy
    if (proxy && existsSync(proxy) && statSync(proxy).mtimeMs > before.get(id)!) made++
  }
  if (failed || made !== ids.length)
    throw new Error(`${failed} proxy tasks failed, ${made} of ${ids.length} proxies made anew`)
  return seconds
}

function baselineRound(clips: string, names: string[], args: string[]): number {
  const out = join(scratch.path, 'out')
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out)
  const t = performance.now()
  const r = spawnSync(['xargs', '-P', String(CONCURRENCY), '-I{}', which('ffmpeg'), ...args], {
    cwd: clips,
    stdin: new Blob([names.join('\n') + '\n']),
    stdout: 'ignore',
    stderr: 'pipe',
  })
  const seconds = (performance.now() - t) / 1000
  if (r.exitCode !== 0) throw new Error(`the shell loop failed:\n${r.stderr.toString().slice(-2000)}`)
  if (readdirSync(out).filter((f) => f.endsWith('.proxy')).length !== names.length)
    throw new Error('the shell loop made fewer proxies')
  return seconds
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function probeRounds(clip: string) {
  const ff = await createFfmpeg({ searchPath: process.env.PATH })
  // The service's own ffprobe arguments for this file, captured the same way.
  const log = join(scratch.path, 'probe-recorded')
  const dir = join(scratch.path, 'probe-recording')
  recordingFfmpeg(dir, log)
  const recording = await createFfmpeg({ dir })
  // As an import runs it: the file opened and checked, ffprobe reading the descriptor.
  const fd = openSync(clip, 'r')
  await probe(recording, clip, 'video', { fd })
  const args = recorded(log, 'ffprobe').find((a) => a.includes(`file:${INPUT}`))
  if (!args) throw new Error('no ffprobe run of the file was recorded')
  const service: number[] = []
  const alone: number[] = []
  for (let i = 0; i < PROBES; i++) {
    const ours = async () => {
      const t = performance.now()
      await probe(ff, clip, 'video', { fd })
      service.push(performance.now() - t)
    }
    const theirs = () => {
      const t = performance.now()
      // fd 3 is the file, as the service passes it.
      const r = spawnSync([which('ffprobe'), ...args], { stdio: ['ignore', 'pipe', 'pipe', fd] as never })
      alone.push(performance.now() - t)
      if (r.exitCode !== 0) throw new Error(`ffprobe failed: ${r.stderr.toString()}`)
    }
    if (i % 2) {
      theirs()
      await ours()
    } else {
      await ours()
      theirs()
    }
  }
  closeSync(fd)
  return { service: median(service), alone: median(alone) }
}

async function main(): Promise<boolean> {
  scratch.make()
  const host = machine()
  const clips = join(scratch.path, 'media')
  console.error(`making ${CLIPS} clips of ${SECONDS} s at 1080p25...`)
  const names = makeClips(clips)
  const built = spawnSync([process.execPath, 'build.ts'], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' })
  const compiled = join(ROOT, 'dist', 'reelhouse')
  const clis: [string, string[]][] = [['source', [process.execPath, join(ROOT, 'src', 'main.ts')]]]
  if (built.exitCode === 0 && existsSync(compiled)) clis.push(['compiled', [compiled]])
  else console.error(`bun build.ts failed; the compiled executable is not measured:\n${built.stderr}`)

  const sides = new Map<string, Side>()
  for (const [label, cli] of clis)
    sides.set(label, await side(cli, mkdtempSync(join(scratch.path, `${label}-`)), clips, names))
  const args = sides.get('source')!.args
  for (const [label, s] of sides)
    if (JSON.stringify(s.args) !== JSON.stringify(args))
      throw new Error(`the ${label} run made its proxy with other arguments: ${s.args.join(' ')}`)
  console.error(`the service's proxy: ffmpeg ${args.join(' ')}`)
  const measured: [string, () => Promise<number>][] = [
    ...[...sides].map(([label, s]): [string, () => Promise<number>] => [label, () => remakeRound(s)]),
    ['shell loop', async () => baselineRound(clips, names, args)],
  ]
  const times = new Map<string, number[]>(measured.map(([label]) => [label, []]))
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...measured].reverse() : measured
    for (const [label, fn] of order) {
      const s = await fn()
      times.get(label)!.push(s)
      console.error(`  round ${r + 1} ${label}: ${CLIPS} proxies in ${s.toFixed(1)} s`)
    }
  }
  for (const s of sides.values()) await s.server.stop()
  const probes = await probeRounds(join(clips, names[0]!))
  console.error(
    `  probe: ${probes.service.toFixed(1)} ms as the service runs it, ffprobe alone ${probes.alone.toFixed(1)} ms (medians of ${PROBES})`,
  )

  const base = median(times.get('shell loop')!)
  const rows: string[][] = [
    [
      `shell loop: ${CLIPS} proxies, \`xargs -P ${CONCURRENCY} ffmpeg\` with the service's arguments, median`,
      `${base.toFixed(1)} s`,
      '',
      'baseline',
    ],
  ]
  let ok = true
  for (const [label] of clis) {
    const s = median(times.get(label)!)
    const ratio = s / base
    ok &&= ratio <= PROXY_GOAL
    rows.push([
      `${label}: ${CLIPS} proxies of ${SECONDS} s 1080p clips (POST .../proxy/ at once, until every proxy task has ended), median`,
      `${s.toFixed(1)} s (${Math.abs((ratio - 1) * 100).toFixed(1)} % ${ratio > 1 ? 'over' : 'under'} the shell loop)`,
      `≤ ${((PROXY_GOAL - 1) * 100).toFixed(0)} % over`,
      ratio <= PROXY_GOAL ? 'pass' : 'FAIL',
    ])
  }
  const extra = probes.service - probes.alone
  ok &&= extra <= PROBE_GOAL_MS
  rows.push([
    `one probe as an import runs it, over ffprobe alone, median of ${PROBES}`,
    `${probes.service.toFixed(1)} ms vs ${probes.alone.toFixed(1)} ms (${extra >= 0 ? '+' : ''}${extra.toFixed(1)} ms)`,
    `≤ +${PROBE_GOAL_MS} ms`,
    extra <= PROBE_GOAL_MS ? 'pass' : 'FAIL',
  ])
  console.log('\n' + rows.map((r) => r.join('  |  ')).join('\n'))
  if (process.env.BENCH_RESULTS)
    writeFileSync(
      process.env.BENCH_RESULTS,
      JSON.stringify({
        bench: 'proxies',
        headline: rows.slice(1, 2).map((r) => [r[0]!.replace(/, median$/, ''), r[1]!, r[2]!, r[3]!]),
      }),
    )
  if (process.env.BENCH_NO_DOC !== '1')
    writeSection(
      join(ROOT, 'docs', 'benchmarks.md'),
      'proxies',
      `## Proxies and probes (bench/proxies.ts)

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, Linux ${host.kernel} (load average at start: ${host.load}); Bun ${host.bun}; ${run([which('ffmpeg'), '-version']).split('\n')[0]}
- Data: ${CLIPS} clips of ${SECONDS} s, 1920×1080 at 25 fps (H.264, PCM stereo, timecode), each a different file

| Measure | Result | Goal | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

Per round (s): ${[...times].map(([label, xs]) => `${label} ${xs.map((x) => x.toFixed(1)).join(', ')}`).join('; ')}.

What is measured: \`serve --task-concurrency ${CONCURRENCY}\` (the default), the source run and
dist/reelhouse, each with the clips imported beforehand (untimed), take ${CLIPS}
\`POST /api/videoassets/{id}/proxy/\` at once and make each proxy in a task, under a temporary
name renamed over the old proxy; the time runs from the first request until no task is queued
or running (every proxy checked on disk, made anew). The baseline runs ffmpeg on the same clips
with the very arguments the service runs (recorded by a wrapper around ffmpeg during the
imports; the real binaries then took its place), through \`xargs -P ${CONCURRENCY}\`: the same
work with nothing around it. The sides alternate, ${ROUNDS} rounds, medians. The probe:
\`probe()\` of src/media/probe.ts (ffprobe on the opened file, then reading its answer) against
ffprobe alone with the same arguments, alternating, ${PROBES} times each.

Rounds of one side differ by up to a tenth (ffmpeg's own run time on a shared machine): a
median under the shell loop's means no cost of the service's could be told from that spread.

The service's proxy command for these clips: \`ffmpeg ${args.join(' ')}\`
`,
    )
  return ok
}

await runBench(main, scratch.stopAll)
