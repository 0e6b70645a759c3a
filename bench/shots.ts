// Shot detection against ffmpeg's own scdet pass (docs/media.md, "Shots and sequences"): the
// service's detection of one clip (POST /api/videoassets/{id}/shots/detect/ until its task has
// ended: ffmpeg's one run with the cuts, black, silence and thumbnail branches, reading what it
// printed, the shots and sequences written and the thumbnails linked) against
// `ffmpeg -i FILE -vf scdet -f null -` on the same file, alternating, in the same process.
// Target: at most 1.1 × the scdet pass (medians of the rounds).
// The clip: 1080p H.264 at 25 fps with PCM sound, segments of moving and still test pictures,
// one black second and one silent one (so that every branch has work). It is imported first
// (untimed: its proxy is made), as a detection after an import reads it.
// Usage: bun bench/shots.ts   (BENCH_SHOTS_SECONDS=30, BENCH_SHOTS_ROUNDS=9; BENCH_NO_DOC=1: print only)
import { spawn, spawnSync } from 'bun'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../src/app.ts'
import { createCore } from '../src/core.ts'
import { openDb } from '../src/db/client.ts'
import { migrate } from '../src/db/migrate.ts'
import { runSync, sqlitePort } from '../src/db/port.ts'
import { createUsers } from '../src/modules/users/service.ts'
import { silentLog } from '../src/util/log.ts'
import { machine, median, writeSection } from './doc.ts'
import { ROOT, benchScratch, envNumber, runBench } from './procs.ts'

const SECONDS = envNumber('BENCH_SHOTS_SECONDS', 30)
const ROUNDS = envNumber('BENCH_SHOTS_ROUNDS', 9)
const GOAL = 1.1

const scratch = benchScratch('reelhouse-bench-shots-')

const ffmpeg = Bun.which('ffmpeg')
if (!ffmpeg || !Bun.which('ffprobe')) throw new Error('ffmpeg and ffprobe are not on PATH; this benchmark needs them')

function run(cmd: string[]) {
  const r = spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`${cmd.slice(0, 3).join(' ')} failed:\n${r.stderr.toString().slice(-2000)}`)
}

/** The clip: a fifth of moving test picture, still bars, a black second, moving again, a still pattern; silence at 60 %. */
function makeClip(path: string) {
  const part = SECONDS / 5
  const segments = [
    `testsrc2=size=1920x1080:rate=25:duration=${part}`,
    `smptehdbars=size=1920x1080:rate=25:duration=${part}`,
    'color=c=black:size=1920x1080:rate=25:duration=1',
    `testsrc=size=1920x1080:rate=25:duration=${part}`,
    `rgbtestsrc=size=1920x1080:rate=25:duration=${part * 2 - 1}`,
  ]
  const silent = [SECONDS * 0.6, SECONDS * 0.6 + 1]
  run([
    ffmpeg!,
    '-v',
    'error',
    '-y',
    ...segments.flatMap((s) => ['-f', 'lavfi', '-i', s]),
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:sample_rate=48000:duration=${SECONDS}`,
    '-filter_complex',
    `${segments.map((_, i) => `[${i}:v]`).join('')}concat=n=${segments.length}:v=1:a=0,format=yuv420p[v];` +
      `[${segments.length}:a]volume=enable='between(t,${silent[0]},${silent[1]})':volume=0[a]`,
    '-map',
    '[v]',
    '-map',
    '[a]',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '20',
    '-c:a',
    'pcm_s16le',
    path,
  ])
}

/** ffmpeg's own scdet pass over the file: wall seconds. */
async function scdetPass(path: string): Promise<number> {
  const start = performance.now()
  const child = spawn([ffmpeg!, '-nostdin', '-v', 'error', '-i', path, '-vf', 'scdet', '-f', 'null', '-'], {
    stdout: 'ignore',
    stderr: 'pipe',
  })
  const [code, err] = await Promise.all([child.exited, new Response(child.stderr).text()])
  if (code !== 0) throw new Error(`the scdet pass failed: ${err}`)
  return (performance.now() - start) / 1000
}

async function main(): Promise<boolean> {
  const dir = scratch.make()
  const media = join(dir, 'media')
  mkdirSync(join(media, 'incoming'), { recursive: true })
  const clip = join(media, 'incoming', 'A001C003_250114_R2KD.mov')
  console.log(`making a ${SECONDS} s 1080p clip ...`)
  makeClip(clip)

  mkdirSync(join(dir, 'data'))
  const db = openDb(join(dir, 'data', 'reelhouse.db'))
  migrate(db)
  const users = createUsers(sqlitePort(db))
  runSync(db, users.add('admin', { superuser: true }))
  const key = runSync(db, users.createKey('admin'))
  const core = createCore(db, { log: silentLog })
  const app = createApp(core)
  core.start()
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )
    const text = await response.text()
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`)
    return JSON.parse(text)
  }
  try {
    await call('POST', '/api/devices/', { name: 'media', path: `${media}/` })
    await call('POST', '/api/productions/', { name: 'Show', storage_root: `${media}/Show/` })
    console.log('importing it (its proxy is made) ...')
    const imported = await call('POST', '/api/asset/import/', {
      type: 'video',
      production: 'Show',
      asset: { asset_meta: { name: 'A001C003', path_file: clip } },
    })
    await core.runner.idle()
    const id = imported.asset_import_id as number

    const service: number[] = []
    const baseline: number[] = []
    let found: Record<string, unknown> = {}
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternating, the side that goes first too: neither always meets a warm or a cold cache.
      const sides = round % 2 ? (['baseline', 'service'] as const) : (['service', 'baseline'] as const)
      for (const side of sides) {
        if (side === 'baseline') baseline.push(await scdetPass(clip))
        else {
          const start = performance.now()
          const queued = await call('POST', `/api/videoassets/${id}/shots/detect/`, {})
          await core.runner.idle()
          service.push((performance.now() - start) / 1000)
          const task = await call('GET', queued.task.url)
          if (task.state !== 'done') throw new Error(`the detection failed: ${task.error}`)
          found = task.result
        }
      }
      console.log(
        `round ${round}: service ${service.at(-1)!.toFixed(2)} s, scdet pass ${baseline.at(-1)!.toFixed(2)} s`,
      )
    }
    const shots = (await call('GET', `/api/videoassets/${id}/shots/`)) as { path_thumbnail: string }[]
    if (!shots.length || shots.some((s) => !s.path_thumbnail))
      throw new Error('the detection made no shots or thumbnails')

    const s = median(service)
    const b = median(baseline)
    const ratio = s / b
    const ok = ratio <= GOAL
    const rows = [
      ['Measure', 'Result', 'Goal', ''],
      ['`ffmpeg -i FILE -vf scdet -f null -`, median', `${b.toFixed(2)} s`, '', 'baseline'],
      [
        `shot detection of a ${SECONDS} s 1080p clip (POST .../shots/detect/ until its task has ended), median`,
        `${s.toFixed(2)} s (${ratio.toFixed(3)} ×)`,
        `≤ ${GOAL} ×`,
        ok ? 'pass' : 'FAIL',
      ],
    ]
    console.log('\n' + rows.map((r) => r.join('  |  ')).join('\n'))
    if (process.env.BENCH_RESULTS)
      writeFileSync(
        process.env.BENCH_RESULTS,
        JSON.stringify({ bench: 'shots', headline: [rows[2]!.map((c) => c.replace(/, median$/, ''))] }),
      )
    if (process.env.BENCH_NO_DOC !== '1') {
      const host = machine()
      const version = spawnSync([ffmpeg!, '-version']).stdout.toString().split('\n')[0]
      writeSection(
        join(ROOT, 'docs', 'benchmarks.md'),
        'shots',
        `## Shot detection (bench/shots.ts)

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, Linux ${host.kernel} (load average at start: ${host.load}); Bun ${host.bun}; ${version}
- Data: one clip of ${SECONDS} s, 1920×1080 at 25 fps (H.264, PCM), moving and still test pictures, a black second and a silent one; found: ${found.shots} shots, ${found.sequences} sequences, ${found.gaps} gaps

| ${rows[0]!.join(' | ')} |
|---|---|---|---|
${rows
  .slice(1)
  .map((r) => `| ${r.join(' | ')} |`)
  .join('\n')}

Per round (s): service ${service.map((x) => x.toFixed(2)).join(', ')}; scdet pass ${baseline.map((x) => x.toFixed(2)).join(', ')}.

What is measured: the service in this process (the catalogue, the task runner and the API, as
\`serve\` runs them), the clip imported beforehand (untimed: its proxy made, so that detection
writes thumbnails beside it). A round asks for a detection and waits until no task is queued or
running: the task's ffmpeg run (one decode feeding scdet, the black test on every 16th line, two
thumbnail candidates a second and silencedetect on the sound), reading its prints, and its end:
the first round writes the shots, sequences and thumbnails; the later ones find the same shots,
which stay with theirs (the ffmpeg run is the same every round, and is nearly all of the time).
The baseline is ffmpeg's own scdet pass over the same file with nothing around it, as its
command line says: ffmpeg then also decodes the sound and hands every sample to the null
output, where the detection only measures its level, which is why the detection may come out
faster. The sides alternate, ${ROUNDS} rounds, medians; the machine was shared with other work
(the load average above).
`,
      )
    }
    return ok
  } finally {
    await core.stop()
    db.$client.close()
  }
}

await runBench(main, scratch.stopAll)
