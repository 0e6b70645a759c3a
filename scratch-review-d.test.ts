import { expect, test, setDefaultTimeout } from 'bun:test'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { seedProduction, testApp } from './test/helpers/app.ts'
import { manyFiles, leftovers } from './test/helpers/tree.ts'
import { walk } from './src/storage/fs.ts'
setDefaultTimeout(120_000)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

test('D: copy failure mid-way leaves partial staging', async () => {
  const t = testApp(undefined, { tasks: true })
  const { root, production } = await seedProduction(t)
  const bundle = join(root, 'Show', 'Src')
  manyFiles(bundle, 6000, 4096, 100)
  const files = (await Array.fromAsync(walk(bundle))).filter((e) => e.kind === 'file')
  const victim = join(bundle, files[200]!.rel)
  const p = (await t.post('/api/projectassets/', { name: 'Src', bundle_root: bundle, production_id: production.id })).json
  const c = await t.post('/api/projectassets/', { name: 'Dst', bundle_root: join(root, 'Show', 'Dst'), production_id: production.id, copy_of: p.id })
  for (let i = 0; i < 5000; i++) { const r = t.db.$client.query("select files_total from tasks where kind='copy'").get() as any; if (r?.files_total > 0) break; await sleep(1) }
  rmSync(victim)
  await t.runner.idle()
  const lo0 = leftovers(join(root, 'Show'))
  console.log('at task end leftovers', lo0, lo0.length ? readdirSync(join(root, 'Show', lo0[0]!)).length : 0)
  await sleep(2000)
  const task = t.db.$client.query("select state,error,files_done from tasks where kind='copy'").get()
  console.log('task', task)
  const lo = leftovers(join(root, 'Show'))
  let n = 0; if (lo.length) for await (const e of walk(join(root, 'Show', lo[0]!))) if (e.kind === 'file') n++
  console.log('leftovers 2s later', lo, 'files inside', n)
  await t.stop()
})
