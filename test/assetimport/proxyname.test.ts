// Proxies named by asset id before proxies were named after their source (docs/media.md, "Proxy
// names"): the core's start queues a `proxyname` task per production that has one, which renames
// each such proxy in its proxy_root to the source's base name (`<base>_<id>` when taken), its
// pictures with it, never over another file, and path_proxy follows in the history. Proxies of
// other names, or outside the proxy_root, stay. A restart in the middle of a batch finds what was
// renamed by the file's inode. No ffmpeg is needed: the files here are stand-ins.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createCore } from '../../src/core.ts'
import { proxyNameHandler } from '../../src/modules/assetimport/proxyname.task.ts'
import { isOldProxyName, needsNewName, proxyNames, sourceStem } from '../../src/media/proxyname.ts'
import type { LastWrite, TaskOf } from '../../src/tasks/runner.ts'
import { tx } from '../../src/db/port.ts'
import { silentLog } from '../../src/util/log.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'

let t: TestApp
let root: string
let show: { id: number; proxy_root: string }

beforeAll(async () => {
  t = testApp(undefined, { tasks: false })
  ;({ root, production: show } = await seedProduction(t))
  mkdirSync(show.proxy_root, { recursive: true })
})
afterAll(() => t.cleanup())

/** A handler's last write, run in a transaction of its own as the runner runs it with the task's end. */
const lastWrite = (end: void | LastWrite) =>
  t.core.port.run(
    tx(function* () {
      const work = end?.()
      if (work) yield* work
    }),
  )

/** A video asset of `file` (under root) whose proxy is `proxy` (a name in the proxy_root, or a path), with `pictures` beside it. */
async function withProxy(file: string, proxy: (id: number) => string, pictures: string[] = []) {
  const path = join(root, file)
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, 'essence\n')
  const made = await t.post('/api/videoassets/', { name: file, path_file: path, production: show.id })
  expect(made.status).toBe(201)
  const id = made.json.id as number
  const at = proxy(id).startsWith('/') ? proxy(id) : join(show.proxy_root, proxy(id))
  mkdirSync(join(at, '..'), { recursive: true })
  writeFileSync(at, `proxy of ${id}\n`)
  const stem = at.slice(0, at.lastIndexOf('.'))
  for (const suffix of pictures) writeFileSync(stem + suffix, `${suffix} of ${id}\n`)
  t.db.$client.query('UPDATE media_assets SET path_proxy = ? WHERE id = ?').run(at, id)
  return { id, at }
}
const proxyOf = async (id: number) => (await t.get(`/api/videoassets/${id}/`)).json.path_proxy as string
const inode = (path: string) => statSync(path).ino

test('the scheme: the source’s base name, made a safe file name; the id when it is taken', () => {
  expect(proxyNames('/mnt/card/A001C003_250101_R1AB.mov', 42)).toEqual({
    first: 'A001C003_250101_R1AB',
    fallback: 'A001C003_250101_R1AB_42',
  })
  expect(sourceStem('C:\\cards\\take.final.MXF')).toBe('take.final')
  expect(sourceStem('/x/a:b?c.mov')).toBe('a_b_c')
  expect(sourceStem('/x/.hidden.mov')).toBe('hidden')
  expect(proxyNames('/x/ .mov', 7)).toEqual({ first: '7', fallback: '7' })
  expect(proxyNames('/x/CON.mov', 7).first).toBe('CON_7')
  expect(Buffer.byteLength(sourceStem(`/x/${'é'.repeat(300)}.mov`))).toBeLessThanOrEqual(200)
  expect(['9.mp4', '9_1.mp4', '19.mp4', 'A9.mp4', '9.poster.jpg'].map((n) => isOldProxyName(n, 9))).toEqual([
    true,
    true,
    false,
    false,
    false,
  ])
  // A source named by the number its asset got keeps the proxy it has: there is nothing to rename it to.
  expect(needsNewName('9.mp4', '/cards/9.mov', 9)).toBe(false)
  expect(needsNewName('9_1.mp4', '/cards/A001.mov', 9)).toBe(true)
})

test('at start: each proxy named by its id is renamed after its source, with its pictures; the others stay', async () => {
  const a = await withProxy('card-1/A001C003.mov', (id) => `${id}.mp4`, ['.poster.jpg', '.strip.jpg', '.strip.json'])
  // The same clip name from another card: its first name is taken by then.
  const b = await withProxy('card-2/A001C003.mov', (id) => `${id}.mp4`, ['.poster.jpg'])
  // Its name is free but a stray file holds one of its pictures' names.
  writeFileSync(join(show.proxy_root, 'B002C001.strip.jpg'), 'a stray file\n')
  const c = await withProxy('card-1/B002C001.mov', (id) => `${id}_1.mp4`)
  const named = await withProxy('card-1/C003.mov', () => 'my-own-name.mp4')
  const outside = await withProxy('card-1/D004.mov', (id) => join(root, 'elsewhere', `${id}.mp4`))
  const before = { a: inode(a.at), b: inode(b.at), c: inode(c.at) }

  t.core.start()
  await t.runner.idle()

  const tasks = (await t.get('/api/tasks/?kind=proxyname')).json
  expect(tasks).toEqual([
    expect.objectContaining({
      state: 'done',
      result: { production: show.id, renamed: 3 },
    }),
  ])
  const p = (name: string) => join(show.proxy_root, name)
  expect(await proxyOf(a.id)).toBe(p('A001C003.mp4'))
  expect(await proxyOf(b.id)).toBe(p(`A001C003_${b.id}.mp4`))
  expect(await proxyOf(c.id)).toBe(p(`B002C001_${c.id}.mp4`))
  expect({
    a: inode(p('A001C003.mp4')),
    b: inode(p(`A001C003_${b.id}.mp4`)),
    c: inode(p(`B002C001_${c.id}.mp4`)),
  }).toEqual(before)
  expect(readFileSync(p('A001C003.poster.jpg'), 'utf8')).toBe(`.poster.jpg of ${a.id}\n`)
  expect(readFileSync(p('A001C003.strip.json'), 'utf8')).toBe(`.strip.json of ${a.id}\n`)
  expect(readFileSync(p(`A001C003_${b.id}.poster.jpg`), 'utf8')).toBe(`.poster.jpg of ${b.id}\n`)
  expect(readFileSync(p('B002C001.strip.jpg'), 'utf8')).toBe('a stray file\n')
  for (const old of [a.at, b.at, c.at, p(`${a.id}.poster.jpg`), p(`${b.id}.poster.jpg`)])
    expect(existsSync(old)).toBe(false)
  expect(await proxyOf(named.id)).toBe(named.at)
  expect(await proxyOf(outside.id)).toBe(outside.at)
  expect(existsSync(outside.at)).toBe(true)
  // In the history, by the service, as its own writes are.
  const history = (await t.get(`/api/history/?resource=videoasset&id=${a.id}`)).json
  expect(history[0]).toMatchObject({
    action: 'update',
    changes: { path_proxy: { old: a.at, new: p('A001C003.mp4') } },
  })
  // Served by its new name.
  expect((await t.get(`/api/videoassets/${a.id}/`)).json.is_proxy_available).toBe(true)

  // The next start finds none left: nothing is queued.
  const again = createCore(t.db, { log: silentLog })
  again.start()
  await again.runner.idle()
  await again.stop()
  expect((await t.get('/api/tasks/?kind=proxyname')).json).toHaveLength(1)
})

test('a restart in the middle of a batch: a rename done before it is recorded; one not done is made', async () => {
  const done = await withProxy('card-3/E005.mov', (id) => `${id}.mp4`, ['.poster.jpg'])
  const waiting = await withProxy('card-3/F006.mov', (id) => `${id}.mp4`)
  const to = (name: string) => join(show.proxy_root, name)
  // The batch as saved: the first proxy was renamed (its picture not yet) when the service stopped.
  const plan = [
    { asset: done.id, from: done.at, to: to('E005.mp4'), ino: inode(done.at) },
    { asset: waiting.id, from: waiting.at, to: to('F006.mp4'), ino: inode(waiting.at) },
  ]
  renameSync(done.at, to('E005.mp4'))
  const handler = proxyNameHandler(t.core.port, {
    media: t.core.media,
    devices: t.core.devices,
    openTasks: () => [],
  })
  const end = await handler({
    task: { id: 0, params: { production: show.id, plan } } as unknown as TaskOf<'proxyname'>,
    signal: new AbortController().signal,
    progress: () => {},
    save: () => {},
    report: () => {},
  })
  lastWrite(end)
  expect(await proxyOf(done.id)).toBe(to('E005.mp4'))
  expect(await proxyOf(waiting.id)).toBe(to('F006.mp4'))
  expect(readFileSync(to('E005.poster.jpg'), 'utf8')).toBe(`.poster.jpg of ${done.id}\n`)
  expect(existsSync(waiting.at)).toBe(false)
})

test('a planned name that is now another file (not the one planned, by its inode) is not taken for the proxy', async () => {
  const gone = await withProxy('card-4/G007.mov', (id) => `${id}.mp4`)
  const to = join(show.proxy_root, 'G007.mp4')
  const plan = [{ asset: gone.id, from: gone.at, to, ino: inode(gone.at) }]
  // The proxy was removed by hand, and another file took the planned name meanwhile.
  renameSync(gone.at, join(root, 'moved-away.mp4'))
  writeFileSync(to, 'someone else’s\n')
  const handler = proxyNameHandler(t.core.port, { media: t.core.media, devices: t.core.devices, openTasks: () => [] })
  const end = await handler({
    task: { id: 0, params: { production: show.id, plan } } as unknown as TaskOf<'proxyname'>,
    signal: new AbortController().signal,
    progress: () => {},
    save: () => {},
    report: () => {},
  })
  lastWrite(end)
  expect(await proxyOf(gone.id)).toBe(gone.at)
  expect(readFileSync(to, 'utf8')).toBe('someone else’s\n')
})
