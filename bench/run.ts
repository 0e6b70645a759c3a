// npm run bench: every benchmark, each against its baseline measured in the same run, one after
// the other (they would disturb each other side by side). Each writes its section of
// docs/benchmarks.md; the figures users feel first (first pages, one record, a small project's
// copy: each bench's headline rows) are printed together at the end and written as the headline
// table at the top of docs/benchmarks.md. Exit status 1 when any target is missed.
import { spawnSync } from 'bun'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { machine, writeSection } from './doc.ts'
import { ROOT } from './procs.ts'

type Headline = { bench: string; headline: [string, string, string, string][] }

const results = mkdtempSync(join(tmpdir(), 'reelhouse-bench-results-'))
let ok = true
const headlines: Headline[] = []
try {
  // BENCH_ONLY=lists,copy runs some of them (the headline then holds only their rows).
  const only = process.env.BENCH_ONLY?.split(',').map((b) => `${b.trim()}.ts`)
  for (const bench of [
    'lists.ts',
    'copy.ts',
    'import.ts',
    'watch.ts',
    'drop.ts',
    'stall.ts',
    'proxies.ts',
    'pictures.ts',
    'proxy-read.ts',
    'shots.ts',
    'search.ts',
    'events.ts',
    'page.ts',
    'grid.ts',
  ].filter((b) => !only || only.includes(b))) {
    console.log(`\n== bench/${bench}`)
    const file = join(results, `${bench}.json`)
    const run = spawnSync([process.execPath, `${import.meta.dir}/${bench}`], {
      stdout: 'inherit',
      stderr: 'inherit',
      env: { ...process.env, BENCH_RESULTS: file },
    })
    if (run.exitCode !== 0) {
      ok = false
      console.log(`bench/${bench}: a target was missed or the run failed (exit ${run.exitCode})`)
    }
    if (existsSync(file)) headlines.push(JSON.parse(readFileSync(file, 'utf8')) as Headline)
  }
} finally {
  rmSync(results, { recursive: true, force: true })
}

const rows = headlines.flatMap((h) => h.headline)
if (rows.length) {
  const host = machine()
  console.log('\nWhat users feel first (each against its baseline in the same run)')
  const w = [Math.max(...rows.map((r) => r[0].length)), Math.max(...rows.map((r) => r[1].length))]
  for (const r of rows) console.log(`${r[0].padEnd(w[0]!)}  ${r[1].padEnd(w[1]!)}  ${r[2].padEnd(9)} ${r[3]}`)
  if (process.env.BENCH_NO_DOC !== '1')
    writeSection(
      join(ROOT, 'docs', 'benchmarks.md'),
      'headline',
      `## Headline: what users feel first

- Date: ${host.date} (\`npm run bench\`; the sections below hold each benchmark's details)
- Machine: ${host.cpu}, ${host.cores} cores, Linux ${host.kernel}; Bun ${host.bun}; ${host.wrk}

| Measure | Result | Target | |
|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}
`,
    )
}
process.exit(ok ? 0 : 1)
