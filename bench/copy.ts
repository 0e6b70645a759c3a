// The copy benchmark (part of npm run bench): project copy throughput against cp, same run, same
// disk. Targets: one 2 GiB file >= 0.9 of cp's throughput; 10,000 files of 16 KiB >= 0.75 of
// cp -r. Reelhouse is measured end to end: POST with copy_of through the app, then the copy task
// (walk, copy into a hidden folder, size checks, times, rename, progress rows) until the project
// is ASSET_DONE; every file is verified by hash (read, written, read back, hashed twice) and the
// copy's ASC MHL history written, which cp does not do. The disk of these machines is shared
// and noisy (write-back of other work comes and goes), so each round runs cp and then
// Reelhouse back to back, each into a fresh folder after a sync, BENCH_COPY_ROUNDS times
// (default 5); the verdict is the median of the per-round ratios, as in the list benchmark, and
// the best time of each side is shown too.
//
// The same two kinds of copy run again on tmpfs (/dev/shm), where no disk decides the time and
// what is left is the cost of our calls against cp's: there the small files are the case users
// feel (issue 9: at least 0.8 of cp -r), and one 1 GiB file stays at 0.9 of cp. Without
// /dev/shm those cases are skipped, with a note in the section.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { seedProduction, testApp } from '../test/helpers/app.ts'
import { makeTree, manyFiles } from '../test/helpers/tree.ts'
import { machine, writeSection } from './doc.ts'

const ROUNDS = Number(process.env.BENCH_COPY_ROUNDS ?? 5)
const GiB = 1024 ** 3

const TMPFS = '/dev/shm'
const oneFile = (bytes: number) => ({
  bytes,
  make: (dir: string) => makeTree(dir, { 'big.mxf': bytes }),
  cp: (src: string, dst: string) => ['cp', join(src, 'big.mxf'), dst],
})
const smallFiles = {
  bytes: 10_000 * 16384,
  make: (dir: string) => manyFiles(dir, 10_000, 16384, 100),
  cp: (src: string, dst: string) => ['cp', '-r', src, dst],
}
const CASES = [
  { name: 'one 2 GiB file', fs: 'disk', target: 0.9, ...oneFile(2 * GiB) },
  { name: '10,000 files of 16 KiB', fs: 'disk', target: 0.75, ...smallFiles },
  { name: '10,000 files of 16 KiB', fs: 'tmpfs', target: 0.8, ...smallFiles },
  { name: 'one 1 GiB file', fs: 'tmpfs', target: 0.9, ...oneFile(GiB) },
] as const

type Result = { name: string; fs: string; target: number; bytes: number; cp: number[]; ours: number[] }

async function main() {
  const host = machine()
  const t = testApp(undefined, { tasks: true })
  // One device per file system: the temporary folder's (the machine's disk) and one on tmpfs.
  const { root, production } = await seedProduction(t, 'Bench')
  const tmpfs = existsSync(TMPFS)
    ? await seedProduction(t, 'Shm', mkdtempSync(join(TMPFS, 'reelhouse-bench-')))
    : undefined
  const shows = {
    disk: { show: join(root, 'Bench'), production },
    tmpfs: tmpfs && { show: join(tmpfs.root, 'Shm'), production: tmpfs.production },
  }
  // Some cases only, for profiling: those whose "name (file system)" holds this text, e.g.
  // "KiB (tmpfs)". A partial run does not write its section (it would drop the other rows).
  const only = process.env.BENCH_COPY_ONLY
  const results: Result[] = []
  const skipped: string[] = []
  try {
    for (const [n, c] of CASES.entries()) {
      if (only && !`${c.name} (${c.fs})`.includes(only)) continue
      const place = shows[c.fs]
      if (!place) {
        skipped.push(`${c.name} on tmpfs (no ${TMPFS} on this machine)`)
        continue
      }
      const { show, production } = place
      const source = join(show, `source-${n}`)
      c.make(source)
      const project = await t.post('/api/projectassets/', {
        name: `source ${n}`,
        bundle_root: source,
        production_id: production.id,
      })
      const r: Result = { name: c.name, fs: c.fs, target: c.target, bytes: c.bytes, cp: [], ours: [] }
      for (let round = 0; round < ROUNDS; round++) {
        spawnSync('sync')
        const cpTarget = join(show, `cp-${n}-${round}`)
        const [cmd, ...args] = c.cp(source, cpTarget)
        let start = performance.now()
        const cp = spawnSync(cmd!, args)
        if (cp.status !== 0) throw new Error(`cp failed: ${cp.stderr}`)
        r.cp.push((performance.now() - start) / 1000)
        rmSync(cpTarget, { recursive: true, force: true })
        spawnSync('sync')

        const target = join(show, `rh-${n}-${round}`)
        start = performance.now()
        const copy = await t.post('/api/projectassets/', {
          name: `copy ${n} ${round}`,
          bundle_root: target,
          production_id: production.id,
          copy_of: project.json.id,
        })
        await t.runner.idle()
        r.ours.push((performance.now() - start) / 1000)
        const done = await t.get(`/api/projectassets/${copy.json.id}/`)
        if (done.json.status_asset !== 6) throw new Error(`copy failed: ${done.json.status_asset_description}`)
        await t.request('DELETE', `/api/projectassets/${copy.json.id}/`)
        await t.runner.idle()
      }
      rmSync(source, { recursive: true, force: true })
      results.push(r)
      const best = summary(r)
      console.log(
        `${c.name} (${c.fs}): cp ${best.cp.toFixed(3)} s, Reelhouse ${best.ours.toFixed(3)} s, ratio ${best.ratio.toFixed(2)} (target ${c.target}) ${best.ratio >= c.target ? 'pass' : 'FAIL'}`,
      )
    }
  } finally {
    await t.stop()
    rmSync(t.dataDir, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
    if (tmpfs) rmSync(tmpfs.root, { recursive: true, force: true })
  }

  // The headline rows (bench/run.ts): the tmpfs cases, where the shared disk's noise does not decide.
  if (process.env.BENCH_RESULTS) {
    const headline = results
      .filter((r) => r.fs === 'tmpfs')
      .map((r) => {
        const b = summary(r)
        return [
          `Project copy, ${r.name} on tmpfs, POST to status 6: Reelhouse / cp`,
          `${b.ratio.toFixed(2)} (best ${b.ours.toFixed(3)} s against ${b.cp.toFixed(3)} s)`,
          `>= ${r.target}`,
          b.ratio >= r.target ? 'pass' : 'FAIL',
        ]
      })
    writeFileSync(process.env.BENCH_RESULTS, JSON.stringify({ bench: 'copy', headline }))
  }

  if (process.env.BENCH_NO_DOC !== '1' && !only) {
    const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ')
    writeSection(
      resolve(import.meta.dir, '..', 'docs', 'benchmarks.md'),
      'copy',
      `## Project copy against cp

- Date: ${host.date}
- Machine: ${host.cpu}, ${host.cores} cores, ${host.ramGiB.toFixed(1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load})
- Bun ${host.bun}; source and targets in one folder of the same file system: the disk (${
        spawnSync('df', ['-T', root.split('/').slice(0, 2).join('/') || '/'])
          .stdout?.toString()
          .split('\n')[1]
          ?.split(/\s+/)[1] ?? '?'
      }), or tmpfs (${TMPFS})${skipped.length ? `\n- Skipped: ${skipped.join('; ')}` : ''}

| Case | File system | cp (best of ${ROUNDS}) | Reelhouse (best of ${ROUNDS}) | Throughput ratio (median of rounds) | Target | |
|---|---|---|---|---|---|---|
${results
  .map((r) => {
    const b = summary(r)
    return `| ${r.name} | ${r.fs} | ${b.cp.toFixed(3)} s (${(r.bytes / b.cp / 2 ** 20).toFixed(0)} MiB/s) | ${b.ours.toFixed(3)} s (${(r.bytes / b.ours / 2 ** 20).toFixed(0)} MiB/s) | ${b.ratio.toFixed(2)} | >= ${r.target} | ${b.ratio >= r.target ? 'pass' : 'FAIL'} |`
  })
  .join('\n')}

All rounds (seconds): ${results.map((r) => `${r.name} (${r.fs}): cp ${fmt(r.cp)}; Reelhouse ${fmt(r.ours)}; ratios ${fmt(r.cp.map((c, i) => c / r.ours[i]!))}`).join('. ')}.

What is measured: \`cp FILE DIR/\` and \`cp -r DIR DIR\` (GNU coreutils, which copies with
copy_file_range) against a project copy through the API: \`POST /api/projectassets/\` with
\`copy_of\`, timed until the task has renamed the finished folder into place and marked the
project ASSET_DONE. Reelhouse does more than cp: it walks the tree first (for the totals shown
as progress), keeps every file's times, checks every file's size, verifies every file by hash
(the bytes hashed with xxHash64 as they are read, the copy read back and hashed again: every
byte read twice and written once, through the process, where cp lets the kernel copy it),
writes the copy's ASC MHL history (a manifest of every file's hash, and its chain), writes
progress rows, and renames the hidden folder into place. Each round starts after \`sync\`, alternating cp and
Reelhouse, each into a fresh folder; the ratio is the median of the per-round ratios (cp and
Reelhouse of one round run back to back), because the shared disk's write-back makes rounds
vary by a factor of several.
`,
    )
    console.error('wrote docs/benchmarks.md (copy)')
  }
  return results.every((r) => summary(r).ratio >= r.target)
}

function summary(r: Result) {
  const ratios = r.cp.map((cp, i) => cp / r.ours[i]!).sort((a, b) => a - b)
  return { cp: Math.min(...r.cp), ours: Math.min(...r.ours), ratio: ratios[Math.floor(ratios.length / 2)]! }
}

process.exit((await main()) ? 0 : 1)
