// Project copy throughput against cp, same run, same disk (issue: 2 GiB file >= 0.9 of cp;
// 10,000 files of 16 KiB >= 0.75 of cp -r). Reelhouse is measured end to end: POST with
// copy_of through the app, the copy task (walk, copy into a hidden folder, size checks, times,
// rename, progress rows), until the project is ASSET_DONE.
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { seedProduction, tempDir, testApp } from '../test/helpers/app.ts'
import { makeTree, manyFiles } from '../test/helpers/tree.ts'

export type CopyResult = { case: string; cp_s: number; reelhouse_s: number; ratio: number; target: number; bytes: number }

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)

export async function benchCopy(log = console.log): Promise<CopyResult[]> {
  const t = testApp(undefined, { tasks: true })
  const { root, production } = await seedProduction(t, 'Bench')
  const show = join(root, 'Bench')
  const results: CopyResult[] = []
  let n = 0

  const cases = [
    { name: 'one 2 GiB file', target: 0.9, bytes: 2 * 1024 ** 3, make: (dir: string) => makeTree(dir, { 'big.mxf': 2 * 1024 ** 3 }), cp: ['cp'] },
    { name: '10,000 files of 16 KiB', target: 0.75, bytes: 10_000 * 16384, make: (dir: string) => manyFiles(dir, 10_000, 16384, 100), cp: ['cp', '-r'] },
  ]
  for (const c of cases) {
    const source = join(show, `source-${n}`)
    c.make(source)
    const project = await t.post('/api/projectassets/', { name: `source ${n}`, bundle_root: source, production_id: production.id })
    spawnSync('sync')
    const cpTimes: number[] = []
    const ourTimes: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      // cp first, then Reelhouse, each into a fresh folder on the same disk; best of the rounds.
      const cpTarget = join(show, `cp-${n}-${round}`)
      let start = performance.now()
      const cp = spawnSync(c.cp[0]!, [...c.cp.slice(1), c.cp.length > 1 ? source : join(source, 'big.mxf'), cpTarget])
      if (cp.status !== 0) throw new Error(`cp failed: ${cp.stderr}`)
      cpTimes.push((performance.now() - start) / 1000)
      rmSync(cpTarget, { recursive: true, force: true })
      spawnSync('sync')

      start = performance.now()
      const copy = await t.post('/api/projectassets/', { name: `copy ${n} ${round}`, bundle_root: join(show, `rh-${n}-${round}`), production_id: production.id, copy_of: project.json.id })
      await t.runner.idle()
      ourTimes.push((performance.now() - start) / 1000)
      const done = await t.get(`/api/projectassets/${copy.json.id}/`)
      if (done.json.status_asset !== 6) throw new Error(`copy failed: ${done.json.status_asset_description}`)
      rmSync(join(show, `rh-${n}-${round}`), { recursive: true, force: true })
      spawnSync('sync')
    }
    const cpBest = Math.min(...cpTimes)
    const ourBest = Math.min(...ourTimes)
    const result = { case: c.name, cp_s: cpBest, reelhouse_s: ourBest, ratio: cpBest / ourBest, target: c.target, bytes: c.bytes }
    log(`${c.name}: cp ${cpBest.toFixed(3)} s, reelhouse ${ourBest.toFixed(3)} s, throughput ratio ${result.ratio.toFixed(2)} (target ${c.target}); rounds cp ${cpTimes.map((x) => x.toFixed(3)).join('/')} reelhouse ${ourTimes.map((x) => x.toFixed(3)).join('/')}`)
    results.push(result)
    rmSync(source, { recursive: true, force: true })
    n++
  }
  await t.stop()
  rmSync(t.dataDir, { recursive: true, force: true })
  rmSync(root, { recursive: true, force: true })
  return results
}

if (import.meta.main) await benchCopy()
