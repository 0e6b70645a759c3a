import { expect, test, setDefaultTimeout } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { seedProduction, testApp } from './test/helpers/app.ts'
import { manyFiles, leftovers, makeTree } from './test/helpers/tree.ts'
setDefaultTimeout(120_000)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

test('A2: restart after shutdown during delete', async () => {
  const t = testApp(undefined, { tasks: true })
  const { root, production } = await seedProduction(t)
  const bundle = join(root, 'Show', 'Big')
  manyFiles(bundle, 30000, 16, 500)
  const p = (await t.post('/api/projectassets/', { name: 'Big', bundle_root: bundle, production_id: production.id })).json
  await t.request('DELETE', `/api/projectassets/${p.id}/`)
  for (let i = 0; i < 1000; i++) { const r = t.db.$client.query("select state from tasks where kind='delete'").get() as any; if (r?.state === 'running') break; await sleep(1) }
  await sleep(30)
  await t.runner.stop(); t.db.$client.close()
  const t2 = testApp(t.dataDir, { tasks: true })
  await t2.runner.idle()
  console.log('after restart GET', (await t2.get(`/api/projectassets/${p.id}/`)).json?.is_production, (await t2.get(`/api/projectassets/${p.id}/`)).status)
  console.log('delete again', (await t2.request('DELETE', `/api/projectassets/${p.id}/`)).status)
  await t2.runner.idle()
  console.log('GET after', (await t2.get(`/api/projectassets/${p.id}/`)).status, 'leftovers', leftovers(join(root, 'Show')), readdirSync(join(root,'Show',leftovers(join(root, 'Show'))[0] ?? '')).length)
  await t2.stop()
})

test('B: concurrent nested creates', async () => {
  const t = testApp(undefined, { tasks: true })
  const { root, production } = await seedProduction(t)
  const [a, b] = await Promise.all([
    t.post('/api/projectassets/', { name: 'A', bundle_root: join(root, 'Show', 'A'), production_id: production.id }),
    t.post('/api/projectassets/', { name: 'B', bundle_root: join(root, 'Show', 'A', 'B'), production_id: production.id }),
  ])
  console.log('B statuses', a.status, b.status, a.json?.bundle_root, b.json?.bundle_root)
  await t.stop()
})

test('C: device root inside a bundle', async () => {
  const t = testApp(undefined, { tasks: true })
  const { root, production } = await seedProduction(t)
  const inner = join(root, 'Show', 'P', 'mount')
  makeTree(inner, { 'precious.mov': 'data' })
  const dev = await t.post('/api/devices/', { name: 'inner', path: inner })
  console.log('device', dev.status)
  const p = await t.post('/api/projectassets/', { name: 'P', bundle_root: join(root, 'Show', 'P'), production_id: production.id })
  console.log('project', p.status, p.json?.errors)
  // and a device created after at a bundle root
  const q = await t.post('/api/projectassets/', { name: 'Q', bundle_root: join(root, 'Show', 'Q'), production_id: production.id })
  makeTree(join(root, 'Show', 'Q'), { 'x.mov': 'x' })
  const dev2 = await t.post('/api/devices/', { name: 'qdev', path: join(root, 'Show', 'Q') })
  console.log('device2', dev2.status)
  if (p.status === 201) await t.request('DELETE', `/api/projectassets/${p.json.id}/`)
  await t.request('DELETE', `/api/projectassets/${q.json.id}/`)
  await t.runner.idle()
  console.log('inner device root exists?', existsSync(inner), 'qdev root exists?', existsSync(join(root, 'Show', 'Q')))
  console.log(t.db.$client.query('select kind,state,error from tasks').all())
  await t.stop()
})

test('E: alias through an in-device symlink', async () => {
  const t = testApp(undefined, { tasks: true })
  const { root, production } = await seedProduction(t)
  makeTree(join(root, 'Show', 'A'), { 'edit.prproj': 'precious' })
  const a = await t.post('/api/projectassets/', { name: 'A', bundle_root: join(root, 'Show', 'A'), production_id: production.id })
  symlinkSync(join(root, 'Show'), join(root, 'alias'))
  const b = await t.post('/api/projectassets/', { name: 'B', bundle_root: join(root, 'alias', 'A'), production_id: production.id })
  console.log('E statuses', a.status, b.status, b.json?.files)
  await t.request('DELETE', `/api/projectassets/${b.json.id}/`)
  await t.runner.idle()
  const ga = await t.get(`/api/projectassets/${a.json.id}/`)
  console.log('A still listed', ga.status, ga.json?.is_production, 'A folder exists', existsSync(join(root, 'Show', 'A')))
  await t.stop()
})
