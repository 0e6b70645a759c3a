// Markers' live events (docs/api.md, Events; Markers): each create, update and delete of a marker
// is a `marker` event, made from its history row as every event is, seen by whoever can read its
// asset (its production, and productions it is shared with). Over real HTTP: a server on a free
// port, the stream read with fetch as a client does.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { seedProduction, testApp } from '../helpers/app.ts'
import { type EventStream, type SseBlock, openEvents } from '../helpers/events.ts'
import { emptyFfmpegDir, removeScratch } from '../helpers/imports.ts'

setDefaultTimeout(60_000)

const t = testApp(undefined, { tasks: true, core: { ffmpegDir: emptyFfmpegDir() } })
const server = t.app.listen({ port: 0, hostname: '127.0.0.1' }).server!
const base = `http://127.0.0.1:${server.port}`
const streams: EventStream[] = []
afterAll(async () => {
  t.core.events.close()
  await server.stop()
  for (const stream of streams) await stream.close()
  await t.core.stop()
  t.cleanup()
  removeScratch()
})

async function events(key: string) {
  const stream = await openEvents(base, { authorization: `Token ${key}` })
  streams.push(stream)
  return stream
}

const file = (path: string) => {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, 'essence\n')
  return path
}

type Seeded = Awaited<ReturnType<typeof seedProduction>>
async function asset(kind: string, where: Seeded) {
  const r = await t.post(`/api/${kind}assets/`, {
    name: kind,
    path_file: file(join(where.root, where.production.name, `${kind}.bin`)),
    production: where.production.id,
  })
  if (r.status !== 201) throw new Error(r.text)
  return r.json.id as number
}

/** The events of a stream, a marker's as its data, others as [event, type, id, action]. */
const story = (stream: EventStream) =>
  stream.events.map((e) =>
    e.event === 'marker' ? ['marker', e.data] : [e.event, e.data.type, e.data.id, e.data.action],
  )
const marker = (id: number, asset: number, type: string, action: string) => ['marker', { id, asset, type, action }]

test('create, update and delete of a marker are marker events for those who can read its asset; a change of nothing is none', async () => {
  const a = await seedProduction(t, 'A')
  const b = await seedProduction(t, 'B')
  const ana = await events(t.makeUser('ana', { read: [a.production.id] }))
  const admin = await events(t.adminKey)
  const inA = await asset('video', a)
  const soundA = await asset('audio', a)
  const inB = await asset('video', b)

  const one = `/api/videoassets/${inA}/markers`
  const made = (await t.post(`${one}/`, { start_ms: 0, note: 'slate' })).json.id
  expect((await t.request('PATCH', `${one}/${made}/`, { body: { note: 'Slate' } })).status).toBe(200)
  // Nothing changed: no history row, no event.
  expect((await t.request('PATCH', `${one}/${made}/`, { body: { note: 'Slate' } })).status).toBe(200)
  expect((await t.request('DELETE', `${one}/${made}/`)).status).toBe(204)
  const sound = (await t.post(`/api/audioassets/${soundA}/markers/`, { start_ms: 10, note: 'hum' })).json.id
  // Of production B: not ana's to see, until its asset is shared with A.
  const other = (await t.post(`/api/videoassets/${inB}/markers/`, { start_ms: 0, note: 'b' })).json.id
  t.db.$client.run('INSERT INTO media_asset_shares (asset_id, production_id) VALUES (?, ?)', [inB, a.production.id])
  const shared = await t.request('PATCH', `/api/videoassets/${inB}/markers/${other}/`, { body: { color: 'blue' } })
  expect(shared.status).toBe(200)
  // The last change: once its event is read, every event above has been sent.
  const last = await asset('image', a)

  const seen = (e: SseBlock[]) => e.some((x) => x.event === 'asset' && x.data?.id === last)
  await admin.until('the last asset', seen)
  await ana.until('the last asset', seen)
  expect(story(ana)).toEqual([
    ['asset', 'videoasset', inA, 'created'],
    ['asset', 'audioasset', soundA, 'created'],
    marker(made, inA, 'videoasset', 'created'),
    marker(made, inA, 'videoasset', 'updated'),
    marker(made, inA, 'videoasset', 'deleted'),
    marker(sound, soundA, 'audioasset', 'created'),
    marker(other, inB, 'videoasset', 'updated'),
    ['asset', 'imageasset', last, 'created'],
  ])
  expect(story(admin)).toEqual([
    ['asset', 'videoasset', inA, 'created'],
    ['asset', 'audioasset', soundA, 'created'],
    ['asset', 'videoasset', inB, 'created'],
    marker(made, inA, 'videoasset', 'created'),
    marker(made, inA, 'videoasset', 'updated'),
    marker(made, inA, 'videoasset', 'deleted'),
    marker(sound, soundA, 'audioasset', 'created'),
    marker(other, inB, 'videoasset', 'created'),
    marker(other, inB, 'videoasset', 'updated'),
    ['asset', 'imageasset', last, 'created'],
  ])
})

test('a marker refused (403) or invalid (400) is no event', async () => {
  const c = await seedProduction(t, 'C')
  const admin = await events(t.adminKey)
  const id = await asset('video', c)
  const reader = t.makeUser('cara', { read: [c.production.id] })
  const path = `/api/videoassets/${id}/markers/`
  expect((await t.post(path, { start_ms: 0, note: 'x' }, { key: reader })).status).toBe(403)
  expect((await t.post(path, { start_ms: 0, note: ' ' })).status).toBe(400)
  const made = (await t.post(path, { start_ms: 0, note: 'kept' })).json.id
  await admin.until('the marker', (e) => e.some((x) => x.event === 'marker' && x.data.id === made))
  expect(story(admin)).toEqual([['asset', 'videoasset', id, 'created'], marker(made, id, 'videoasset', 'created')])
})
