// Playing a proxy: what a player or a download manager feels of GET /api/videoassets/{id}/proxy/.
// (a) The whole 256 MiB proxy downloaded (curl to /dev/null), and (b) 200 one-MiB ranges read one
// after another from spread-out offsets (a player seeking), from the compiled executable with its
// request log, against a raw Bun.serve that answers the same file with Bun.file(path).slice (the
// runtime's own sendfile path, no auth, no checks) in the same run: medians of alternating rounds.
// The service opens the file from the device root without following a link and sends that open
// file by its descriptor's name (storage/read.ts fileBody), with Content-Length.
// Usage: bun bench/proxy-read.ts   (BENCH_PROXY_READ_ROUNDS=5, BENCH_PROXY_READ_MIB=256; BENCH_NO_DOC=1: print only)
import { Database } from 'bun:sqlite'
import { spawnSync } from 'bun'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { dbFile } from '../src/config.ts'
import { machine, median, writeSection } from './doc.ts'
import { ROOT, benchScratch, envNumber, runBench, spawnListening } from './procs.ts'
import { api, serve } from './serve.ts'

const ROUNDS = envNumber('BENCH_PROXY_READ_ROUNDS', 5)
const MIB = envNumber('BENCH_PROXY_READ_MIB', 256)
const RANGES = 200
/** Targets: the service within these fractions of raw. */
const WHOLE_GOAL = 0.8
const RANGE_GOAL = 0.6

const scratch = benchScratch('reelhouse-bench-proxy-read-')

async function main(): Promise<boolean> {
  const dir = scratch.make()
  const built = spawnSync([process.execPath, 'build.ts'], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' })
  if (built.exitCode !== 0) throw new Error(`bun build.ts failed:\n${built.stderr}`)
  const device = join(dir, 'media')
  const proxies = join(device, 'show', 'proxies')
  mkdirSync(proxies, { recursive: true })
  const file = join(proxies, '1.mp4')
  const chunk = Buffer.alloc(1024 * 1024)
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31) & 0xff
  writeFileSync(file, Buffer.concat(Array.from({ length: MIB }, () => chunk)))
  const data = join(dir, 'data')
  const service = await serve([join(ROOT, 'dist', 'reelhouse')], data, [])
  await api(service, 'POST', '/api/devices/', { name: 'media', path: device })
  await api(service, 'POST', '/api/productions/', { name: 'Show', storage_root: join(device, 'show') + '/' })
  writeFileSync(join(device, 'show', 'a.mov'), 'essence')
  const asset = await (
    await api(service, 'POST', '/api/videoassets/', {
      name: 'a',
      path_file: join(device, 'show', 'a.mov'),
      production: 1,
    })
  ).json
  const db = new Database(dbFile(data))
  db.run('UPDATE media_assets SET path_proxy = ? WHERE id = ?', [file, asset.id])
  db.close()

  const raw = await spawnListening(
    'raw',
    [
      process.execPath,
      '-e',
      `
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch(req) {
      const file = Bun.file(${JSON.stringify(file)})
      const m = /^bytes=(\\d+)-(\\d+)$/.exec(req.headers.get('range') ?? '')
      if (!m) return new Response(file, { headers: { 'content-type': 'video/mp4' } })
      return new Response(file.slice(Number(m[1]), Number(m[2]) + 1), { status: 206, headers: { 'content-type': 'video/mp4', 'content-range': 'bytes ' + m[1] + '-' + m[2] + '/' + file.size } })
    } })
    console.log('listening ' + server.port)`,
    ],
    { portOf: (line) => /^listening (\d+)$/.exec(line)?.[1] },
  )
  const targets = {
    service: {
      url: `${service.base}/api/videoassets/${asset.id}/proxy/`,
      headers: { authorization: `Token ${service.key}` },
    },
    raw: { url: `http://127.0.0.1:${raw.port}/`, headers: {} as Record<string, string> },
  }
  const whole = { service: [] as number[], raw: [] as number[] }
  const ranges = { service: [] as number[], raw: [] as number[] }
  const size = MIB * 1024 * 1024
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['service', 'raw'] as const) : (['raw', 'service'] as const)
    for (const which of order) {
      const t = targets[which]
      const auth = Object.entries(t.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`])
      const start = performance.now()
      const curl = spawnSync(['curl', '-s', '-o', '/dev/null', '-w', '%{size_download}', ...auth, t.url])
      const seconds = (performance.now() - start) / 1000
      if (Number(curl.stdout.toString()) !== size)
        throw new Error(`${which}: downloaded ${curl.stdout} bytes, not ${size}`)
      whole[which].push(MIB / seconds)
      const began = performance.now()
      for (let i = 0; i < RANGES; i++) {
        const offset = ((i * 7919) % (MIB - 1)) * 1024 * 1024
        const r = await fetch(t.url, {
          headers: { ...t.headers, range: `bytes=${offset}-${offset + 1024 * 1024 - 1}` },
        })
        const body = await r.arrayBuffer()
        if (
          r.status !== 206 ||
          body.byteLength !== 1024 * 1024 ||
          r.headers.get('content-length') !== String(1024 * 1024)
        )
          throw new Error(`${which}: range ${i} answered ${r.status}, ${body.byteLength} bytes`)
      }
      ranges[which].push(RANGES / ((performance.now() - began) / 1000))
    }
  }
  await service.stop()
  const m = {
    wholeService: median(whole.service),
    wholeRaw: median(whole.raw),
    rangeService: median(ranges.service),
    rangeRaw: median(ranges.raw),
  }
  const wholeRatio = m.wholeService / m.wholeRaw
  const rangeRatio = m.rangeService / m.rangeRaw
  const ok = wholeRatio >= WHOLE_GOAL && rangeRatio >= RANGE_GOAL
  const host = machine()
  const body = `## Playing a proxy (bench/proxy-read.ts)

${host.date}; ${host.cpu}, ${host.cores} cores, ${host.ramGiB.toFixed(0)} GiB, Linux ${host.kernel}, Bun ${host.bun}; load ${host.load}.
The compiled executable with its request log against a raw \`Bun.serve\` answering the same file
with \`Bun.file(path).slice\` (no auth, no checks), ${ROUNDS} alternating rounds, medians.

| measure | service | raw | service / raw | target | |
|---|---|---|---|---|---|
| the whole ${MIB} MiB proxy, curl to /dev/null | ${m.wholeService.toFixed(0)} MiB/s | ${m.wholeRaw.toFixed(0)} MiB/s | ${wholeRatio.toFixed(2)} | ≥ ${WHOLE_GOAL} | ${wholeRatio >= WHOLE_GOAL ? 'pass' : 'miss'} |
| ${RANGES} one-MiB ranges one after another (a player seeking) | ${m.rangeService.toFixed(0)} /s | ${m.rangeRaw.toFixed(0)} /s | ${rangeRatio.toFixed(2)} | ≥ ${RANGE_GOAL} | ${rangeRatio >= RANGE_GOAL ? 'pass' : 'miss'} |

Every answer is checked: its status, its length and its \`Content-Length\` (the body is sent from
the file by the runtime, never chunked).
`
  console.log(body)
  if (!process.env.BENCH_NO_DOC) writeSection(join(ROOT, 'docs', 'benchmarks.md'), 'proxy-read', body)
  return ok
}

await runBench(main, scratch.stopAll)
