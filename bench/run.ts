// npm run bench: every benchmark, each against its baseline measured in the same run, one after
// the other (they would disturb each other side by side). Each writes its section of
// docs/benchmarks.md. Exit status 1 when any target is missed.
import { spawnSync } from 'bun'

let ok = true
for (const bench of ['lists.ts', 'copy.ts', 'import.ts', 'watch.ts']) {
  console.log(`\n== bench/${bench}`)
  const run = spawnSync([process.execPath, `${import.meta.dir}/${bench}`], { stdout: 'inherit', stderr: 'inherit', env: process.env })
  if (run.exitCode !== 0) {
    ok = false
    console.log(`bench/${bench}: a target was missed or the run failed (exit ${run.exitCode})`)
  }
}
process.exit(ok ? 0 : 1)
