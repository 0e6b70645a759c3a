// Races across a process boundary (issue 10, point 9): the compiled server copies and deletes
// project folders while a second process swaps folders and files under them for symbolic
// links to an outside folder, as fast as it can, for a bounded time. Whatever the outcome of
// each task, nothing outside changes and no outside byte lands in a copy.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { ROOT, type Server, call, compiledExecutable, killAll, startServe } from '../helpers/process.ts'
import { snapshot } from '../helpers/tree.ts'
import { waitFor } from '../helpers/wait.ts'

setDefaultTimeout(120_000)

const data = tempDir('reelhouse-races-data-')
const disk = tempDir('reelhouse-races-disk-')
const outside = tempDir('reelhouse-races-outside-')
let server: Server
let key: string
let production: number

beforeAll(async () => {
  server = await startServe(data, { cli: [await compiledExecutable()] })
  key = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  expect((await call(server, 'POST', '/devices/', key, { name: 'disk', path: disk })).status).toBe(201)
  production = (await call(server, 'POST', '/productions/', key, { name: 'Show', storage_root: join(disk, 'Show') }))
    .json.id
}, 180_000)

afterAll(async () => {
  await killAll()
  for (const dir of [data, disk, outside]) rmSync(dir, { recursive: true, force: true })
})

/** `folders` folders of `perFolder` files named f<N>.bin, hard links of one file (fast to make on a slow disk). */
function linkedTree(root: string, folders: number, perFolder: number, content: string) {
  mkdirSync(root, { recursive: true })
  const first = join(root, '.first')
  writeFileSync(first, content)
  let n = 0
  for (let d = 0; d < folders; d++) {
    mkdirSync(join(root, `d${d}`))
    for (let i = 0; i < perFolder; i++) linkSync(first, join(root, `d${d}`, `f${n++}.bin`))
  }
  rmSync(first)
}

const swapper = (mode: 'delete' | 'copy', root: string, ms: number) =>
  Bun.spawn([process.execPath, join(ROOT, 'test', 'helpers', 'swapper.ts'), mode, root, outside, String(ms)], {
    stdout: 'pipe',
    stderr: 'inherit',
  })

const project = async (bundle: string) => {
  const r = await call(server, 'POST', '/projectassets/', key, {
    name: bundle.split('/').at(-1),
    bundle_root: bundle,
    production_id: production,
  })
  expect(r.status).toBe(201)
  return r.json as { id: number }
}

test('a delete while another process swaps its subfolders for links to an outside folder of 1,200 files: nothing outside is removed', async () => {
  const victims = join(outside, 'victims')
  linkedTree(victims, 1, 1200, 'outside file')
  const before = snapshot(outside)
  let swaps = 0
  for (let round = 0; round < 3 && swaps === 0; round++) {
    const bundle = join(disk, 'Show', `Doomed${round}`)
    linkedTree(bundle, 16, 400, 'inside file')
    const doomed = await project(bundle)
    const racer = swapper('delete', join(disk, 'Show'), 8000)
    expect((await call(server, 'DELETE', `/projectassets/${doomed.id}/`, key)).status).toBe(202)
    await waitFor(
      async () =>
        (await call(server, 'GET', `/projectassets/${doomed.id}/`, key)).status === 404 ||
        (await lastTask()).state === 'failed',
      'the delete to end',
      { ms: 60_000, everyMs: 20 },
    )
    swaps += Number((await new Response(racer.stdout).text()).trim())
    expect(snapshot(outside)).toEqual(before)
  }
  expect(swaps).toBeGreaterThan(0)
})

test('copies while another process swaps source files and folders for same-size links to outside: no outside byte is copied', async () => {
  const source = join(disk, 'Show', 'Source')
  linkedTree(source, 6, 100, 'inside-bytes')
  // Twins of every name, of the same size: what a followed link would copy.
  linkedTree(join(outside, 'twins'), 1, 600, 'SECRET-BYTES')
  for (const name of readdirSync(join(outside, 'twins', 'd0')))
    linkSync(join(outside, 'twins', 'd0', name), join(outside, name))
  for (let i = 0; i < 50; i++) {
    writeFileSync(join(source, `t${i}.bin`), 'inside-bytes')
    writeFileSync(join(outside, `t${i}.bin`), 'SECRET-BYTES')
  }
  const before = snapshot(outside)
  const src = await project(source)
  const racer = swapper('copy', source, 6000)
  const outcomes: string[] = []
  for (let round = 0; round < 20; round++) {
    const target = join(disk, 'Show', `Copy${round}`)
    const copy = await call(server, 'POST', '/projectassets/', key, {
      name: `Copy${round}`,
      bundle_root: target,
      production_id: production,
      copy_of: src.id,
    })
    if (copy.status !== 201) {
      outcomes.push(`refused ${copy.status}`)
      continue
    }
    await waitFor(
      async () => (await call(server, 'GET', `/projectassets/${copy.json.id}/`, key)).json.status_asset !== 0,
      'the copy to end',
      { ms: 60_000, everyMs: 20 },
    )
    const done = (await call(server, 'GET', `/projectassets/${copy.json.id}/`, key)).json
    outcomes.push(done.status_asset === 6 ? 'copied' : 'failed')
    if (existsSync(target)) expect(JSON.stringify(snapshot(target))).not.toContain(hashOf('SECRET-BYTES'))
  }
  const swaps = Number((await new Response(racer.stdout).text()).trim())
  expect(swaps).toBeGreaterThan(0)
  expect(snapshot(outside)).toEqual(before)
  expect(outcomes.length).toBe(20)
})

const hashOf = (text: string) => new Bun.CryptoHasher('sha1').update(text).digest('hex')
// The newest delete task (the server's watcher queues scans beside it).
const lastTask = async () => (await call(server, 'GET', '/tasks/?kind=delete', key)).json.at(-1) as { state: string }
