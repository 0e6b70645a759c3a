// Shots and sequences over HTTP (docs/api.md, "Shots and sequences"), with real media: a clip of
// five solid colours with known cuts, one black gap and one silence (clip.ts), imported through
// the API (its proxy made by the import task), its shots detected by the `shots` task with the
// real ffmpeg. The answers are held to the published medialoopster client's Shot and Sequence
// models (helpers/medialoopster-shots.ts); thumbnails are read back and their colour checked.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readdirSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { errorEntry, expectError } from '../helpers/envelope.ts'
import { type EventStream, matching, openEvents } from '../helpers/events.ts'
import { IMPORT, emptyFfmpegDir, importBody, placeClip, removeScratch, scratchDir } from '../helpers/imports.ts'
import { hasFfmpeg } from '../helpers/media.ts'
import { clientSequencesProblems, clientShotsProblems } from '../helpers/medialoopster-shots.ts'
import { CUTS, FPS, SEGMENTS, cutsClip, meanColor, near, steadyClip } from './clip.ts'

setDefaultTimeout(120_000)

type Json = Record<string, any>

const t: TestApp = testApp(undefined, { tasks: true })
let root: string
let device: { id: number }
let production: { id: number; proxy_root: string }
let video: number
let steady: number
let image: number
let scratch: string

/** Imports `path` (a copy placed on the device) as a video; answers the asset once its tasks have ended. */
async function imported(from: string, name: string): Promise<Json> {
  const path = placeClip(from, join(root, 'incoming', `${name}.mov`))
  const r = await t.post(IMPORT, importBody(path, { name }))
  if (r.status !== 201) throw new Error(`import: ${r.status} ${r.text}`)
  await t.runner.idle()
  const asset = await t.get(`/api/videoassets/${r.json.asset_import_id}/`)
  if (asset.json.status_asset !== 6) throw new Error(`import: ${asset.text}`)
  return asset.json
}

/** Asks for a detection (a threshold in the body, or none) and waits for its task; answers the 202 and the task. */
async function detect(id: number, body: unknown = {}, query = '') {
  const r = await t.post(`/api/videoassets/${id}/shots/detect/${query}`, body)
  if (r.status !== 202) throw new Error(`detect: ${r.status} ${r.text}`)
  await t.runner.idle()
  return { answer: r, task: (await t.get(r.json.task.url)).json }
}

const shotsOf = async (id: number) => (await t.get(`/api/videoassets/${id}/shots/`)).json as Json[]
const sequencesOf = async (id: number) => (await t.get(`/api/videoassets/${id}/sequences/`)).json as Json[]
/** The path and query of an absolute URL the service handed out. */
const local = (url: string) => url.replace(/^http:\/\/localhost/, '')

beforeAll(async () => {
  ;({ root, device, production } = await seedProduction(t))
  scratch = scratchDir('reelhouse-shots-api-')
  const still = join(root, 'Show', 'still.tif')
  placeClip(undefined, still)
  image = (await t.post('/api/imageassets/', { name: 'still', path_file: still, production: production.id })).json.id
  if (!hasFfmpeg) return
  const [cuts, calm] = await Promise.all([cutsClip(scratch), steadyClip(scratch)])
  video = (await imported(cuts, 'A001C003_250114_R2KD')).id
  steady = (await imported(calm, 'B002_steady')).id
})
afterAll(async () => {
  await t.stop()
  removeScratch()
})

describe.skipIf(!hasFfmpeg)('detection on demand', () => {
  let answer: Awaited<ReturnType<typeof detect>>
  beforeAll(async () => {
    // Before any detection: an empty list, which the client takes.
    expect(await shotsOf(video)).toEqual([])
    answer = await detect(video)
  })

  test('POST .../shots/detect/ answers 202 with its task (Location), which ends done naming what it found', () => {
    const { answer: r, task } = answer
    expect(r.json).toEqual({ task: { id: expect.any(Number), state: 'queued', url: `/api/tasks/${r.json.task.id}/` } })
    expect(r.headers.get('location')).toBe(r.json.task.url)
    expect(task).toMatchObject({
      kind: 'shots',
      state: 'done',
      target: { videoasset: video },
      error: '',
      result: { asset: video, read: 'file', threshold: 10, shots: 5, sequences: 3, gaps: 2 },
    })
  })

  test("GET .../shots/: a shot per cut, each within one frame of it, in the client's Shot shape; all of them without ?limit", async () => {
    const r = await t.get(`/api/videoassets/${video}/shots/`)
    expect(r.status).toBe(200)
    expect(r.headers.get('x-total-count')).toBe('5')
    expect(clientShotsProblems(r.json)).toEqual([])
    const shots = r.json as Json[]
    expect(shots).toHaveLength(SEGMENTS.length)
    shots.forEach((s, i) => {
      const { start, end } = SEGMENTS[i]!
      expect(Math.abs(s.start_frame - start)).toBeLessThanOrEqual(1)
      expect(Math.abs(s.end_frame - end)).toBeLessThanOrEqual(1)
      expect(Math.abs(s.timecode_start - (start * 1000) / FPS)).toBeLessThanOrEqual(1000 / FPS)
      expect(Math.abs(s.timecode_end - (end * 1000) / FPS)).toBeLessThanOrEqual(1000 / FPS)
      expect(s).toMatchObject({
        asset: video,
        name: `Shot ${i + 1}`,
        description: null,
        duration: s.timecode_end - s.timecode_start,
        keywords: [],
        is_compositing: false,
        licensor: null,
        license: null,
        location_city: null,
        copyright: null,
        ancestor: null,
        origin: 'detected',
      })
      // Beside the proxy: <proxy name>.shots/<id>.jpg, under the production's proxy_root.
      expect(s.path_thumbnail).toBe(join(production.proxy_root, 'A001C003_250114_R2KD.shots', `${s.id}.jpg`))
      expect(s.thumbnail_url).toMatch(
        new RegExp(`^http://localhost/api/videoassets/${video}/shots/${s.id}/thumbnail/\\?v=[0-9a-f]{10}$`),
      )
    })
    expect(shots.slice(1).map((s) => Math.round(s.timecode_start / (1000 / FPS)))).toEqual([...CUTS])
    // Paged as every list: ?limit gives a page, X-Total-Count and Link.
    const page = await t.get(`/api/videoassets/${video}/shots/?limit=2&offset=2`)
    expect(page.json.map((s: Json) => s.id)).toEqual(shots.slice(2, 4).map((s) => s.id))
    expect(page.headers.get('x-total-count')).toBe('5')
    expect(page.headers.get('link')).toContain('offset=4>; rel="next"')
    // One shot, with or without the final slash.
    for (const path of [
      `/api/videoassets/${video}/shots/${shots[1]!.id}/`,
      `/api/videoassets/${video}/shots/${shots[1]!.id}`,
    ])
      expect((await t.get(path)).json).toEqual(shots[1])
  })

  test("each thumbnail is a frame from its shot's middle (its colour), on disk beside the proxy and served as the proxy is", async () => {
    const shots = await shotsOf(video)
    expect(readdirSync(dirname(shots[0]!.path_thumbnail)).sort()).toEqual(shots.map((s) => `${s.id}.jpg`).sort())
    for (const [i, s] of shots.entries()) {
      expect(existsSync(s.path_thumbnail)).toBe(true)
      const r = await t.request('GET', local(s.thumbnail_url))
      expect([r.status, r.headers.get('content-type')]).toEqual([200, 'image/jpeg'])
      // Asked for by its current version: kept for good.
      expect(r.headers.get('cache-control')).toBe('private, max-age=31536000, immutable')
      const file = join(scratch, `served-${s.id}.jpg`)
      writeFileSync(file, await Bun.file(s.path_thumbnail).bytes())
      expect(near(await meanColor(file), SEGMENTS[i]!.rgb)).toBe(true)
    }
    const path = `/api/videoassets/${video}/shots/${shots[0]!.id}/thumbnail/`
    const whole = await t.get(path)
    expect(whole.headers.get('cache-control')).toBe('private, no-cache')
    const etag = whole.headers.get('etag')!
    expect((await t.get(path, { headers: { 'if-none-match': etag } })).status).toBe(304)
    const part = await t.get(path, { headers: { range: 'bytes=0-1' } })
    expect([part.status, part.headers.get('content-range')?.startsWith('bytes 0-1/')]).toEqual([206, true])
    // An <img> asks for image/*, not JSON: served all the same.
    expect((await t.get(path, { headers: { accept: 'image/avif,image/webp,image/*;q=0.8' } })).status).toBe(200)
  })

  test("GET .../sequences/: split at the black and at the silence, the black shot in none; the client's Sequence shape", async () => {
    const shots = await shotsOf(video)
    const r = await t.get(`/api/videoassets/${video}/sequences/`)
    expect(r.headers.get('x-total-count')).toBe('3')
    expect(clientSequencesProblems(r.json)).toEqual([])
    expect(r.json.map((q: Json) => q.shots.map((s: Json) => s.id))).toEqual([
      [shots[0]!.id, shots[1]!.id],
      [shots[3]!.id],
      [shots[4]!.id],
    ])
    expect(r.json[0]).toMatchObject({
      id: expect.any(Number),
      asset: video,
      name: 'Sequence 1',
      description: null,
      origin: 'detected',
      keywords: [],
      timecode_start: 0,
      timecode_end: shots[1]!.timecode_end,
      duration: shots[1]!.timecode_end,
    })
    expect(r.json[0].shots[0]).toEqual(shots[0])
    expect((await t.get(`/api/videoassets/${video}/sequences/${r.json[1].id}/`)).json).toEqual(r.json[1])
  })

  test('the detection is one history row of the video asset: the ids of its detected shots and sequences', async () => {
    const shots = await shotsOf(video)
    const rows = (await t.get(`/api/history/?resource=videoasset&id=${video}`)).json as Json[]
    const row = rows.find((h) => h.changes.shots)!
    expect(row).toMatchObject({ action: 'update', via: 'task', user: 'admin' })
    expect(row.changes.shots).toEqual({ old: [], new: shots.map((s) => s.id) })
    expect(row.changes.sequences.new).toHaveLength(3)
  })

  test('a clip with no cut and no gap is one shot and one sequence', async () => {
    await detect(steady, undefined, '?threshold=10')
    const shots = await shotsOf(steady)
    expect(shots.map((s) => [s.start_frame, s.end_frame, s.timecode_start, s.timecode_end])).toEqual([[0, 75, 0, 3000]])
    expect((await sequencesOf(steady)).map((q) => q.shots.map((s: Json) => s.id))).toEqual([[shots[0]!.id]])
  })
})

describe.skipIf(!hasFfmpeg)('edits, user shots and detection again', () => {
  test('PATCH and PUT of a shot: the writable fields, written to the history; read-only fields and bad values refused', async () => {
    const shot = (await shotsOf(video))[3]!
    const path = `/api/videoassets/${video}/shots/${shot.id}/`
    const body = {
      name: 'Harbour wide',
      description: 'Wide of the harbour',
      keywords: ['harbour', 'wide', 'harbour'],
      is_compositing: true,
      licensor: 'Harbour Lights Pictures',
      location_city: 'Hamburg',
    }
    const r = await t.request('PATCH', path, { body })
    expect(r.status).toBe(200)
    expect(r.json).toEqual({ ...shot, ...body, keywords: ['harbour', 'wide'], date_mod: expect.any(String) })
    expect(clientShotsProblems([r.json])).toEqual([])
    const history = (await t.get(`/api/history/?resource=shot&id=${shot.id}`)).json as Json[]
    expect(history).toHaveLength(1)
    expect(history[0]).toMatchObject({
      action: 'update',
      user: 'admin',
      via: 'api',
      production: production.id,
      changes: {
        name: { old: 'Shot 4', new: 'Harbour wide' },
        keywords: { old: [], new: ['harbour', 'wide'] },
        is_compositing: { old: false, new: true },
      },
    })
    // The record read and sent back is a valid body, by PATCH and PUT; nothing changes, no row.
    for (const method of ['PATCH', 'PUT']) expect((await t.request(method, path, { body: r.json })).status).toBe(200)
    expect((await t.get(`/api/history/?resource=shot&id=${shot.id}`)).json).toHaveLength(1)
    // Form data too.
    expect((await t.request('PATCH', path, { form: { is_compositing: 'false' } })).json.is_compositing).toBe(false)

    const bad: [unknown, string][] = [
      [{ timecode_start: 5 }, '/timecode_start'],
      [{ origin: 'user' }, '/origin'],
      [{ name: '' }, '/name'],
      [{ keywords: 'harbour' }, '/keywords'],
      [{ keywords: [''] }, '/keywords/0'],
      [{ is_compositing: 'maybe' }, '/is_compositing'],
      [{ colour: 'red' }, '/colour'],
    ]
    for (const [b, pointer] of bad) {
      const reply = await t.request('PATCH', path, { body: b })
      expect({ b, status: reply.status, pointer: reply.json.errors?.[0]?.source?.pointer }).toEqual({
        b,
        status: 400,
        pointer,
      })
    }
    expectError(await t.request('PUT', path, { body: { description: 'x' } }), 400, 'required', { pointer: '/name' })
    expect((await t.get(path)).json.name).toBe('Harbour wide')
  })

  test("user shots and sequences: made, refused when wrong, kept by detection again, which keeps an unchanged shot's id and edits", async () => {
    const before = await shotsOf(video)
    const [red, lime, black, white, purple] = before
    const base = `/api/videoassets/${video}`
    // A user's shot inside the white one.
    const made = await t.post(`${base}/shots/`, {
      name: 'Lighthouse',
      timecode_start: 4800,
      timecode_end: 6800,
      keywords: ['lighthouse'],
    })
    expect(made.status).toBe(201)
    expect(made.json).toMatchObject({
      origin: 'user',
      name: 'Lighthouse',
      timecode_start: 4800,
      timecode_end: 6800,
      start_frame: 120,
      end_frame: 170,
      score: null,
      path_thumbnail: '',
    })
    expect(clientShotsProblems([made.json])).toEqual([])
    // Without a thumbnail yet: its URL answers 404.
    expectError(await t.get(local(made.json.thumbnail_url)), 404, 'not_found')
    for (const [b, pointer] of [
      [{ name: 'x', timecode_start: 3000, timecode_end: 3000 }, '/timecode_end'],
      [{ name: 'x', timecode_start: 0, timecode_end: 9000 }, '/timecode_end'],
      [{ name: 'x', timecode_start: -1, timecode_end: 10 }, '/timecode_start'],
      [{ timecode_start: 0, timecode_end: 10 }, '/name'],
    ] as const) {
      const reply = await t.post(`${base}/shots/`, b)
      expect({ b, status: reply.status, pointer: reply.json.errors[0].source?.pointer }).toEqual({
        b,
        status: 400,
        pointer,
      })
    }
    // A user's sequence: the red shot and the user's.
    const sequence = await t.post(`${base}/sequences/`, { name: 'Arrival', shots: [red!.id, made.json.id] })
    expect(sequence.status).toBe(201)
    expect(sequence.json).toMatchObject({ origin: 'user', timecode_start: 0, timecode_end: 6800 })
    expect(sequence.json.shots.map((s: Json) => s.id)).toEqual([red!.id, made.json.id])
    for (const [b, pointer] of [
      [{ name: 'x', shots: [red!.id, red!.id] }, '/shots/1'],
      [{ name: 'x', shots: [999_999] }, '/shots/0'],
      [{ name: 'x', shots: [] }, '/shots'],
    ] as const) {
      const reply = await t.post(`${base}/sequences/`, b)
      expect({ b, status: reply.status, pointer: reply.json.errors[0].source?.pointer }).toEqual({
        b,
        status: 400,
        pointer,
      })
    }
    // A detected shot or sequence is not deleted: the next detection replaces it.
    expectError(await t.request('DELETE', `${base}/shots/${red!.id}/`), 409, 'conflict')
    const detected = (await sequencesOf(video))[0]!
    expectError(await t.request('DELETE', `${base}/sequences/${detected.id}/`), 409, 'conflict')
    // Nor are a detected sequence's shots chosen.
    const chosen = await t.request('PATCH', `${base}/sequences/${detected.id}/`, { body: { shots: [purple!.id] } })
    expectError(chosen, 400, 'invalid', { pointer: '/shots' })
    expect(
      (await t.request('PATCH', `${base}/sequences/${detected.id}/`, { body: { name: 'Opening' } })).json.name,
    ).toBe('Opening')

    // Again at 60: the cut from red to lime (25) and to black (50) are no cuts there; white and purple stay as they were.
    const { task } = await detect(video, { threshold: 60 })
    expect(task.result).toMatchObject({ threshold: 60, shots: 3 })
    const after = await shotsOf(video)
    const detectedAfter = after.filter((s) => s.origin === 'detected')
    expect(detectedAfter.map((s) => [s.start_frame, s.end_frame])).toEqual([
      [0, white!.start_frame],
      [white!.start_frame, white!.end_frame],
      [purple!.start_frame, purple!.end_frame],
    ])
    // Unchanged: the same ids, the white one's edits, and their thumbnails.
    expect(detectedAfter[1]).toMatchObject({
      id: white!.id,
      name: 'Harbour wide',
      path_thumbnail: white!.path_thumbnail,
    })
    expect(detectedAfter[2]!.id).toBe(purple!.id)
    const merged = detectedAfter[0]!
    expect(merged.id).toBeGreaterThan(made.json.id)
    // Gone: the three shots that are now one, and their thumbnails.
    for (const s of [red, lime, black]) {
      expectError(await t.get(`${base}/shots/${s!.id}/`), 404, 'not_found')
      expect(existsSync(s!.path_thumbnail)).toBe(false)
    }
    expect(existsSync(merged.path_thumbnail)).toBe(true)
    // The user's shot stays, and has its thumbnail now: a frame of the white shot.
    const user = after.find((s) => s.id === made.json.id)!
    expect(user).toMatchObject({ name: 'Lighthouse', origin: 'user' })
    expect(user.path_thumbnail).toBe(join(production.proxy_root, 'A001C003_250114_R2KD.shots', `${user.id}.jpg`))
    expect(near(await meanColor(user.path_thumbnail), [255, 255, 255])).toBe(true)
    // The user's sequence holds the material it held: the merged shot in the red one's place.
    const sequences = await sequencesOf(video)
    const arrival = sequences.find((q) => q.id === sequence.json.id)!
    expect(arrival.shots.map((s: Json) => s.id)).toEqual([merged.id, user.id])
    expect([arrival.timecode_start, arrival.timecode_end]).toEqual([0, 6800])
    // The detected ones: the merged shot ends where the black does (a split), and the silence splits white from purple.
    expect(sequences.filter((q) => q.origin === 'detected').map((q) => q.shots.map((s: Json) => s.id))).toEqual([
      [merged.id],
      [white!.id],
      [purple!.id],
    ])

    // The user's shot goes by DELETE, with its thumbnail; its sequence loses it.
    expect((await t.request('DELETE', `${base}/shots/${user.id}/`)).status).toBe(204)
    expect(existsSync(user.path_thumbnail)).toBe(false)
    expect((await t.get(`${base}/sequences/${arrival.id}/`)).json.shots.map((s: Json) => s.id)).toEqual([merged.id])
    const deletedRow = (await t.get(`/api/history/?resource=shot&id=${user.id}`)).json[0]
    expect(deletedRow).toMatchObject({ action: 'delete', changes: { name: { old: 'Lighthouse', new: null } } })
    // Its own sequence goes by DELETE too.
    expect((await t.request('DELETE', `${base}/sequences/${arrival.id}/`)).status).toBe(204)
    expectError(await t.get(`${base}/sequences/${arrival.id}/`), 404, 'not_found')

    // Back at the default: five shots again, white and purple still the same records.
    await detect(video)
    const again = await shotsOf(video)
    expect(again.map((s) => s.start_frame)).toEqual(before.map((s) => s.start_frame))
    expect([again[3]!.id, again[3]!.name, again[4]!.id]).toEqual([white!.id, 'Harbour wide', purple!.id])
    expect(clientShotsProblems(again)).toEqual([])
    expect(clientSequencesProblems(await sequencesOf(video))).toEqual([])
  })
})

describe('permissions and bad input', () => {
  test('404 for a video asset that is not there, of another kind, or that the user cannot read: on every route', async () => {
    const stranger = t.makeUser('stranger', { perms: ['browser.change_videoasset'] })
    const id = hasFfmpeg ? video : image
    const routes: [string, string, unknown?][] = [
      ['GET', 'shots/'],
      ['GET', 'shots/1/'],
      ['GET', 'shots/1/thumbnail/'],
      ['GET', 'sequences/'],
      ['GET', 'sequences/1/'],
      ['POST', 'shots/detect/', {}],
      ['POST', 'shots/', { name: 'x', timecode_start: 0, timecode_end: 10 }],
      ['PATCH', 'shots/1/', { name: 'x' }],
      ['PUT', 'shots/1/', { name: 'x' }],
      ['DELETE', 'shots/1/'],
      ['POST', 'sequences/', { name: 'x', shots: [1] }],
      ['PATCH', 'sequences/1/', { name: 'x' }],
      ['DELETE', 'sequences/1/'],
    ]
    for (const [method, rest, body] of routes)
      for (const [asset, key] of [
        [999_999, undefined],
        [image, undefined],
        [id, stranger],
      ] as const) {
        const r = await t.request(method, `/api/videoassets/${asset}/${rest}`, { body, key })
        expect({ method, rest, asset, status: r.status, body: r.json }).toEqual({
          method,
          rest,
          asset,
          status: 404,
          body: { errors: [{ ...errorEntry(404, 'not_found'), detail: 'No video asset with this id.' }] },
        })
      }
    // A key is needed; ids in canonical digits only.
    expectError(await t.get(`/api/videoassets/${id}/shots/`, { key: null }), 401, 'not_authenticated')
    for (const bad of ['abc', '0', '01', '1e0'])
      expect([bad, (await t.get(`/api/videoassets/${bad}/shots/`)).status]).toEqual([bad, 404])
  })

  test.skipIf(!hasFfmpeg)(
    'a reader reads; changes need browser.change_videoasset and write access to the production',
    async () => {
      const reader = t.makeUser('reader', { read: [production.id] })
      const writer = t.makeUser('writer', { write: [production.id] })
      const editor = t.makeUser('editor', { perms: ['browser.change_videoasset'], write: [production.id] })
      const shot = (await shotsOf(video))[0]!
      expect((await t.get(`/api/videoassets/${video}/shots/`, { key: reader })).status).toBe(200)
      expect((await t.get(local(shot.thumbnail_url), { key: reader })).status).toBe(200)
      for (const key of [reader, writer]) {
        expectError(await t.post(`/api/videoassets/${video}/shots/detect/`, {}, { key }), 403, 'permission_denied')
        expectError(
          await t.request('PATCH', `/api/videoassets/${video}/shots/${shot.id}/`, { body: { name: 'x' }, key }),
          403,
          'permission_denied',
        )
      }
      const r = await t.request('PATCH', `/api/videoassets/${video}/shots/${shot.id}/`, {
        body: { description: 'by the editor' },
        key: editor,
      })
      expect([r.status, r.json.description]).toEqual([200, 'by the editor'])
      expect((await t.get(`/api/history/?resource=shot&id=${shot.id}`)).json[0].user).toBe('editor')
    },
  )

  test.skipIf(!hasFfmpeg)(
    'detect: a threshold that is no number from 1 to 100 is a 400 naming it; no task is queued',
    async () => {
      const path = `/api/videoassets/${video}/shots/detect/`
      const tasks = async () => (await t.get(`/api/tasks/?kind=shots&videoasset=${video}`)).json.length
      const count = await tasks()
      for (const body of [{ threshold: 0 }, { threshold: 101 }, { threshold: 'x' }, { threshold: null }]) {
        const r = await t.post(path, body)
        expect({ body, status: r.status, pointer: r.json.errors[0].source?.pointer }).toEqual({
          body,
          status: 400,
          pointer: '/threshold',
        })
      }
      for (const query of ['?threshold=0', '?threshold=101', '?threshold=abc', '?threshold=-5']) {
        const r = await t.post(path + query, {})
        expect({ query, status: r.status, parameter: r.json.errors[0].source?.parameter }).toEqual({
          query,
          status: 400,
          parameter: 'threshold',
        })
      }
      expect((await t.post(path, { threshold: 5 }, { headers: { 'content-type': 'text/plain' } })).status).toBe(415)
      expect(await tasks()).toBe(count)
    },
  )

  test('detect: 409 when the asset has no file in production and no proxy', async () => {
    const path = join(root, 'Show', 'gone.mov')
    placeClip(undefined, path)
    const gone = (
      await t.post('/api/videoassets/', {
        name: 'gone',
        path_file: path,
        production: production.id,
        is_production: false,
      })
    ).json.id
    expectError(await t.post(`/api/videoassets/${gone}/shots/detect/`, {}), 409, 'conflict')
  })
})

describe.skipIf(!hasFfmpeg)('autoshot and removal', () => {
  test("with autoshot_detection on the asset's device, an import queues a detection, whose shots are there when it ends", async () => {
    expect(
      (await t.request('PATCH', `/api/devices/${device.id}/`, { body: { autoshot_detection: true } })).status,
    ).toBe(200)
    try {
      const asset = await imported(join(scratch, 'A001C003_250114_R2KD.mov'), 'A001C004')
      const tasks = (await t.get(`/api/tasks/?kind=shots&videoasset=${asset.id}`)).json as Json[]
      expect(tasks.map((x) => [x.state, x.result.threshold])).toEqual([['done', 10]])
      const shots = await shotsOf(asset.id)
      expect(shots).toHaveLength(SEGMENTS.length)
      expect(shots.every((s) => existsSync(s.path_thumbnail))).toBe(true)
      // A proxy made again is detected again (the same shots: the same records).
      const remake = await t.post(`/api/videoassets/${asset.id}/proxy/`, {})
      expect(remake.status).toBe(202)
      await t.runner.idle()
      expect((await t.get(`/api/tasks/?kind=shots&videoasset=${asset.id}`)).json).toHaveLength(2)
      expect((await shotsOf(asset.id)).map((s) => s.id)).toEqual(shots.map((s) => s.id))
    } finally {
      await t.request('PATCH', `/api/devices/${device.id}/`, { body: { autoshot_detection: false } })
    }
    // Off again: an import queues none.
    const quiet = await imported(join(scratch, 'B002_steady.mov'), 'B003')
    expect((await t.get(`/api/tasks/?kind=shots&videoasset=${quiet.id}`)).json).toEqual([])
  })

  test('a file that cannot be read (gone from its place) is detected in its proxy, saying why', async () => {
    const asset = await imported(join(scratch, 'A001C003_250114_R2KD.mov'), 'A001C006')
    renameSync(asset.path_file, `${asset.path_file}.away`)
    try {
      const { task } = await detect(asset.id)
      expect(task.state).toBe('done')
      expect(task.result).toMatchObject({
        read: 'proxy',
        shots: SEGMENTS.length,
        warning: expect.stringContaining('the file cannot be read'),
      })
      const shots = await shotsOf(asset.id)
      shots.forEach((s, i) => expect(Math.abs(s.start_frame - SEGMENTS[i]!.start)).toBeLessThanOrEqual(1))
      expect(shots.every((s) => existsSync(s.path_thumbnail))).toBe(true)
    } finally {
      renameSync(`${asset.path_file}.away`, asset.path_file)
    }
  })

  test('deleting the video asset removes its thumbnails and their folder', async () => {
    const asset = await imported(join(scratch, 'A001C003_250114_R2KD.mov'), 'A001C005')
    await detect(asset.id)
    const shots = await shotsOf(asset.id)
    const folder = dirname(shots[0]!.path_thumbnail)
    expect(readdirSync(folder)).toHaveLength(SEGMENTS.length)
    expect((await t.request('DELETE', `/api/videoassets/${asset.id}/`)).status).toBe(204)
    expect(existsSync(folder)).toBe(false)
    expect(shots.some((s) => existsSync(s.path_thumbnail))).toBe(false)
    // Nothing was left in the proxy folder by the detection's work.
    expect(readdirSync(production.proxy_root).filter((n) => n.startsWith('.reelhouse-shots-'))).toEqual([])
  })
})

describe.skipIf(!hasFfmpeg)('events', () => {
  let stream: EventStream
  let server: ReturnType<TestApp['app']['listen']>['server']
  beforeAll(async () => {
    server = t.app.listen({ port: 0, hostname: '127.0.0.1' }).server!
    stream = await openEvents(`http://127.0.0.1:${server!.port}`, { authorization: `Token ${t.adminKey}` })
  })
  afterAll(async () => {
    await stream.close()
    await server?.stop()
  })

  test('a shot edited is a shot event, a detection an asset event, seen by who reads the asset', async () => {
    const shot = (await shotsOf(video))[0]!
    await t.request('PATCH', `/api/videoassets/${video}/shots/${shot.id}/`, { body: { description: 'evented' } })
    await stream.until('the shot event', (e) => matching(e, 'shot', { id: shot.id }).length > 0)
    expect(matching(stream.events, 'shot', { id: shot.id })[0]!.data).toEqual({
      type: 'shot',
      id: shot.id,
      asset: video,
      action: 'updated',
    })
    await detect(video, { threshold: 60 })
    await stream.until('the asset event', (e) => matching(e, 'asset', { id: video, action: 'updated' }).length > 0)
  })
})

test('without ffmpeg the detection fails saying so, and changes nothing', async () => {
  const bare = testApp(undefined, { tasks: true, core: { ffmpegDir: emptyFfmpegDir() } })
  try {
    const where = await seedProduction(bare)
    const path = join(where.root, 'Show', 'clip.mov')
    placeClip(undefined, path)
    const id = (
      await bare.post('/api/videoassets/', { name: 'clip', path_file: path, production: where.production.id })
    ).json.id
    const r = await bare.post(`/api/videoassets/${id}/shots/detect/`, {})
    expect(r.status).toBe(202)
    await bare.runner.idle()
    const task = (await bare.get(r.json.task.url)).json
    expect(task.state).toBe('failed')
    expect(task.error).toContain('ffmpeg was not found')
    expect((await bare.get(`/api/videoassets/${id}/shots/`)).json).toEqual([])
  } finally {
    await bare.stop()
  }
})
