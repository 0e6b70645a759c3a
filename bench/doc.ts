// What every benchmark records beside its figures (the machine, the date) and the one file
// they all write, docs/benchmarks.md, each in its own marked section.
import { spawnSync } from 'bun'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg, release, totalmem } from 'node:os'
import { dirname } from 'node:path'

// ------------------------------------------------------------------ machine

export function machine() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8')
  // wrk is needed by the HTTP benchmarks only; the copy benchmark runs without it.
  const wrkVersion = Bun.which('wrk')
    ? spawnSync(['wrk', '-v'])
        .stdout.toString()
        .split('\n')[0]!
        .replace(/ Copyright.*/, '')
        .trim()
    : 'not installed'
  return {
    date: spawnSync(['date', '-u']).stdout.toString().trim() || new Date().toUTCString(),
    cpu: /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown',
    cores: availableParallelism(),
    ramGiB: totalmem() / 2 ** 30,
    kernel: release(),
    bun: Bun.version,
    wrk: wrkVersion,
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  }
}

// ------------------------------------------------------------------ figures

/** The p-th percentile of `xs` (nearest rank); NaN for none. */
export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN
}
/** The median, as pct's 50th percentile (the lower of two middles). */
export const median = (xs: number[]) => pct(xs, 50)

// ------------------------------------------------------------------ docs/benchmarks.md

const DOC_HEAD = `# Benchmarks

Written by \`npm run bench\` (bench/run.ts); rerun it to update this file. Each figure is measured
against its baseline in the same run, on the same machine, with the same load tool.
`

/** Replaces this benchmark's section (between its markers) and leaves the rest of the file alone. */
export function writeSection(file: string, name: string, body: string) {
  const begin = `<!-- bench:${name} -->`
  const end = `<!-- /bench:${name} -->`
  const block = `${begin}\n${body.trimEnd()}\n${end}`
  const old = existsSync(file) ? readFileSync(file, 'utf8') : DOC_HEAD
  const from = old.indexOf(begin)
  const to = old.indexOf(end)
  const next =
    from >= 0 && to > from ? old.slice(0, from) + block + old.slice(to + end.length) : `${old.trimEnd()}\n\n${block}\n`
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, next)
}
