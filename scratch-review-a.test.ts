import { expect, test, setDefaultTimeout } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { seedProduction, testApp } from './test/helpers/app.ts'
import { manyFiles, leftovers } from './test/helpers/tree.ts'
setDefaultTimeout(120_000)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

test('A: shutdown during delete', async () => {
  const t = testApp(undefined, { tasks: true })
  const { root, production } = await seedProduction(t)
  const bundle = join(root, 'Show', 'Big')
  manyFiles(bundle, 30000, 16, 500)
  const p = (await t.post('/api/projectassets/', { name: 'Big', bundle_root: bundle, production_id: production.id })).json
  const d = await t.request('DELETE', `/api/projectassets/${p.id}/`)
  console.log('delete status', d.status)
  // wait until running
  for (let i = 0; i < 1000; i++) { const r = t.db.$client.query("select state from tasks where kind='delete'").get() as any; if (r?.state === 'running') break; await sleep(1) }
  await sleep(30)
  await t.runner.stop()
  console.log('task after stop', t.db.$client.query("select id,state,error from tasks").all())
  console.log('leftovers', leftovers(join(root, 'Show')))
  t.db.$client.close()
})
