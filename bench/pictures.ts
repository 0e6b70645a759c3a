// Pictures (docs/media.md "Pictures"): what the poster frame, the strip, an image's thumbnail
// and an audio file's waveform add to the proxy's own ffmpeg run, which makes them as extra
// outputs. For each clip, the service's ffmpeg command is recorded twice (src/media/proxy.ts
// makeProxyWithPictures, through a wrapper that writes down its arguments): with the pictures
// and without. Each command then runs alone, the two alternating, ROUNDS times; the time of a
// run is ffmpeg's from start to exit (wall) and the CPU it used (user + system, from its
// resource usage). Target: with the pictures, at most 10 % more than without (the median of
// the rounds' ratios, wall and CPU).
// Usage: bun bench/pictures.ts   (BENCH_PICTURE_ROUNDS=7; BENCH_NO_DOC=1: print only)
import { spawnSync } from 'bun'
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createFfmpeg } from '../src/media/ffmpeg.ts'
import type { MediaKind } from '../src/media/probe.ts'
import { makeProxyWithPictures } from '../src/media/proxy.ts'
import { machine, median, writeSection } from './doc.ts'
import { ROOT, benchScratch, envNumber, runBench } from './procs.ts'

const ROUNDS = envNumber('BENCH_PICTURE_ROUNDS', 7)
const GOAL = 1.1

const scratch = benchScratch('reelhouse-bench-pictures-')

const which = (name: string) => {
  const path = Bun.which(name)
  if (!path) throw new Error(`${name} is not on PATH; this benchmark needs ffmpeg and ffprobe`)
  return path
}

function run(cmd: string[]) {
  const r = spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`${cmd.slice(0, 3).join(' ')} failed:\n${r.stderr.toString().slice(-2000)}`)
  return r
}

type Clip = { label: string; file: string; kind: MediaKind }

/** The clips: what an import most often sees, made here with ffmpeg. */
function makeClips(dir: string): Clip[] {
  mkdirSync(dir)
  const ff = (...args: string[]) => run([which('ffmpeg'), '-v', 'error', '-y', ...args])
  const hd = (seconds: number, file: string) =>
    ff(
      ...['-f', 'lavfi', '-i', `testsrc2=size=1920x1080:rate=25:duration=${seconds}`],
      ...['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '18', '-pix_fmt', 'yuv420p', '-c:a', 'pcm_s16le'],
      ...['-timecode', '01:00:00:00', join(dir, file)],
    )
  hd(30, 'hd30.mov')
  hd(10, 'hd10.mov')
  ff(
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=48000:duration=600',
    '-ac',
    '2',
    '-c:a',
    'pcm_s24le',
    join(dir, 'sound.wav'),
  )
  ff('-f', 'lavfi', '-i', 'testsrc2=size=6000x4000', '-frames:v', '1', join(dir, 'still.png'))
  return [
    {
      label: "30 s of 1080p25 H.264 with PCM stereo (the proxies benchmark's clip)",
      file: join(dir, 'hd30.mov'),
      kind: 'video',
    },
    { label: '10 s of 1080p25 H.264 with PCM stereo', file: join(dir, 'hd10.mov'), kind: 'video' },
    { label: '10 min of 48 kHz 24-bit stereo WAV', file: join(dir, 'sound.wav'), kind: 'audio' },
    { label: '6000 × 4000 PNG', file: join(dir, 'still.png'), kind: 'image' },
  ]
}

/** A folder whose ffmpeg and ffprobe write down their arguments (a file per run) and exec the real ones. */
function recordingFfmpeg(dir: string, log: string) {
  mkdirSync(dir, { recursive: true })
  mkdirSync(log, { recursive: true })
  for (const name of ['ffmpeg', 'ffprobe']) {
    writeFileSync(
      join(dir, name),
      `#!/bin/sh\nf=$(mktemp -p '${log}' ${name}-XXXXXX)\nprintf '%s\\0' "$@" > "$f"\nexec '${which(name)}' "$@"\n`,
    )
    chmodSync(join(dir, name), 0o755)
  }
}

/**
 * The service's ffmpeg command for `clip`, with or without its pictures: recorded while the
 * service makes the proxy, then its outputs pointed at `out` (the service names them below the
 * open folder it hands ffmpeg as its fd 4, which a plain run has not).
 */
async function commandOf(clip: Clip, pictures: boolean, out: string): Promise<string[]> {
  const dir = join(scratch.path, `rec-${Math.random().toString(36).slice(2)}`)
  const log = join(dir, 'log')
  recordingFfmpeg(join(dir, 'bin'), log)
  mkdirSync(join(dir, 'proxies'))
  const ff = await createFfmpeg({ dir: join(dir, 'bin') })
  await makeProxyWithPictures(ff, {
    source: clip.file,
    kind: clip.kind,
    proxyDir: join(dir, 'proxies'),
    baseName: 'clip',
    pictures,
  })
  const runs = readdirSync(log)
    .filter((f) => f.startsWith('ffmpeg-'))
    .map((f) => readFileSync(join(log, f), 'utf8').split('\0').slice(0, -1))
    .filter((args) => args.includes('-progress'))
  if (runs.length !== 1) throw new Error(`expected one ffmpeg run of the proxy, found ${runs.length}`)
  return runs[0]!.map((a) => a.replace(/^file:(\/dev\/fd\/4|.*\/proxies)\//, `file:${out}/`))
}

/** One run of a recorded command: wall and CPU seconds. */
function timed(args: string[], out: string): { wall: number; cpu: number } {
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out)
  const t = performance.now()
  const r = spawnSync([which('ffmpeg'), ...args], { stdout: 'ignore', stderr: 'pipe' })
  const wall = (performance.now() - t) / 1000
  if (r.exitCode !== 0) throw new Error(`ffmpeg failed:\n${r.stderr.toString().slice(-2000)}`)
  return { wall, cpu: Number(r.resourceUsage?.cpuTime.total ?? 0n) / 1e6 }
}

type Row = {
  clip: Clip
  without: { wall: number[]; cpu: number[] }
  with: { wall: number[]; cpu: number[] }
  outputs: number
}

async function measure(clip: Clip): Promise<Row> {
  const out = join(scratch.path, 'out')
  const plain = await commandOf(clip, false, out)
  const full = await commandOf(clip, true, out)
  const row: Row = {
    clip,
    without: { wall: [], cpu: [] },
    with: { wall: [], cpu: [] },
    outputs: full.filter((a) => a.startsWith(`file:${out}/`)).length - 1,
  }
  for (let i = 0; i < ROUNDS; i++) {
    const sides: ['without' | 'with', string[]][] = [
      ['without', plain],
      ['with', full],
    ]
    for (const [side, args] of i % 2 ? sides.reverse() : sides) {
      const { wall, cpu } = timed(args, out)
      row[side].wall.push(wall)
      row[side].cpu.push(cpu)
    }
    console.error(
      `  ${clip.file.split('/').at(-1)} round ${i + 1}: without ${row.without.wall.at(-1)!.toFixed(2)} s, with ${row.with.wall.at(-1)!.toFixed(2)} s`,
    )
  }
  return row
}

const pct = (ratio: number) => `${ratio >= 1 ? '+' : '−'}${Math.abs((ratio - 1) * 100).toFixed(1)} %`

async function main(): Promise<boolean> {
  scratch.make()
  const host = machine()
  console.error('making the clips...')
  const clips = makeClips(join(scratch.path, 'media'))
  const rows: Row[] = []
  for (const clip of clips) rows.push(await measure(clip))
  let ok = true
  // Each round's two runs ran one after the other: their ratio is what the machine's load (other
  // work on a shared machine) disturbs least. The median of the rounds' ratios is held to the goal.
  const ratio = (side: 'wall' | 'cpu', r: Row) => median(r.with[side].map((x, i) => x / r.without[side][i]!))
  const table = rows.map((r) => {
    const wall = ratio('wall', r)
    const cpu = ratio('cpu', r)
    const pass = wall <= GOAL && cpu <= GOAL
    ok &&= pass
    return [
      r.clip.label,
      `${median(r.without.wall).toFixed(2)} s → ${median(r.with.wall).toFixed(2)} s (${pct(wall)})`,
      `${median(r.without.cpu).toFixed(2)} s → ${median(r.with.cpu).toFixed(2)} s (${pct(cpu)})`,
      `≤ +${((GOAL - 1) * 100).toFixed(0)} %`,
      pass ? 'pass' : 'FAIL',
    ]
  })
  console.log(`\n${table.map((r) => r.join('  |  ')).join('\n')}`)
  if (process.env.BENCH_RESULTS)
    writeFileSync(process.env.BENCH_RESULTS, JSON.stringify({ bench: 'pictures', headline: [] }))
  if (process.env.BENCH_NO_DOC !== '1')
    writeSection(
      join(ROOT, 'docs', 'benchmarks.md'),
      'pictures',
      `## Pictures with the proxy (bench/pictures.ts)

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, Linux ${host.kernel} (load average at start: ${host.load}); Bun ${host.bun}; ${
        run([which('ffmpeg'), '-version'])
          .stdout.toString()
          .split('\n')[0]
      }

| Source | ffmpeg's run, without → with the pictures: wall (medians; the median of the rounds' ratios) | CPU, user + system (the same) | Goal | |
|---|---|---|---|---|
${table.map((r) => `| ${r.join(' | ')} |`).join('\n')}

Per round (wall, s): ${rows.map((r) => `${r.clip.file.split('/').at(-1)} without ${r.without.wall.map((x) => x.toFixed(2)).join(', ')}; with ${r.with.wall.map((x) => x.toFixed(2)).join(', ')}`).join('. ')}.

What is measured: the service's own ffmpeg command for each source, as src/media/proxy.ts
builds it with the built-in profile (recorded by a wrapper around ffmpeg), once with the
pictures' outputs (a video: poster frame, its fallback and the strip; an image: the thumbnail;
a sound: the waveform) and once without, each then run alone with nothing around it, the two
alternating, ${ROUNDS} rounds: the medians of each side's times, and the median of the rounds'
ratios (with over without, of the two runs of a round), which is held to the goal, on wall and
on CPU time alike. The pictures' branches of the filter graph drop every
frame they do not use before any costly filter: the poster (480 × 270) looks at five frames in
the first second of a window from 10 % in (at most 15 s), then one a second, the strip scales one
frame every few seconds; what they cost is a share of the frames that are decoded anyway.
`,
    )
  return ok
}

await runBench(main, scratch.stopAll)
