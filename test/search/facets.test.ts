// The technical facets (codec, width, height, resolution, fps, duration, timecode, audio
// channels) as filters of the media lists and of the search, and the media lists' orders
// (?ordering=): what each finds for each kind, the 400 a bad value gets, pages that follow on in
// every order, and the indexes the lists read (db/facets.ts, migration 0024).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Statement } from 'bun:sqlite'
import { facetIndexes } from '../../src/db/facets.ts'
import { MEDIA_ORDERINGS } from '../../src/modules/mediaassets/facets.ts'
import { expectError } from '../helpers/envelope.ts'
import { type TestApp, testApp } from '../helpers/app.ts'

let t: TestApp
const ids: Record<string, number> = {}
const name = (id: number) => Object.entries(ids).find(([, v]) => v === id)?.[0] ?? String(id)

type Asset = {
  kind: 'video' | 'audio' | 'image'
  name: string
  technical: Record<string, unknown>
  date_add?: string
  production?: number
}
const stream = (channels: number, codec = 'pcm_s24le') => ({ codec, channels })
/** The catalogue: what probes write, in the shapes src/media/probe.ts gives them. */
const ASSETS: Record<string, Asset> = {
  a001c003: {
    kind: 'video',
    name: 'A001C003',
    technical: {
      video_codec: 'prores',
      fps: '24000/1001',
      duration: 2400,
      width: 3840,
      height: 2160,
      offset_string: '10:00:00:00',
      audio_streams: [stream(1), stream(1), stream(1), stream(1)],
    },
    date_add: '2026-03-02T09:00:00.000000Z',
  },
  harbour: {
    kind: 'video',
    name: 'harbour drone',
    technical: {
      video_codec: 'h264',
      fps: '25/1',
      duration: 250,
      width: 1920,
      height: 1080,
      offset_string: '01:00:00:00',
      audio_streams: [stream(2, 'aac')],
    },
    date_add: '2026-03-01T09:00:00.000000Z',
  },
  interview: {
    kind: 'video',
    name: 'Interview',
    technical: {
      video_codec: 'h264',
      fps: '30000/1001',
      duration: 1798,
      width: 1920,
      height: 1080,
      offset_string: '09:59:59;28',
      audio_streams: [],
    },
    date_add: '2026-03-03T09:00:00.000000Z',
  },
  pickup: {
    kind: 'video',
    name: 'Pickup',
    technical: {
      video_codec: 'dnxhd',
      fps: '50/1',
      duration: 100,
      width: 1280,
      height: 720,
      audio_streams: [stream(2)],
    },
    date_add: '2026-03-01T09:00:00.000000Z',
  },
  nothing: { kind: 'video', name: 'Not probed', technical: {}, date_add: '2026-03-04T09:00:00.000000Z' },
  boom: {
    kind: 'audio',
    name: 'boom 12A',
    technical: { duration: '95.500000', time_code: '10:00:12:00', audio_streams: [stream(6)] },
  },
  room: { kind: 'audio', name: 'room tone', technical: { duration: '30.000000', audio_streams: [stream(2, 'aac')] } },
  poster: { kind: 'image', name: 'poster', technical: { width: 3840, height: 2160, format: 'png' } },
  still: { kind: 'image', name: 'still', technical: { width: 1920, height: 1080, format: 'jpeg' } },
}

beforeAll(() => {
  t = testApp()
  const db = t.db.$client
  const now = '2026-01-01T00:00:00.000000Z'
  db.run(`INSERT INTO devices (name, display_name, path, date_add) VALUES ('d', 'D', '/srv/', ?)`, [now])
  for (const p of ['show', 'other'])
    db.run(
      `INSERT INTO productions (name, codename, storage_root, proxy_root, upload_device, audioasset_device, imageasset_device, videoasset_device, date_add)
       VALUES (?, ?, ?, ?, 1, 1, 1, 1, ?)`,
      [p, p, `/srv/${p}/`, `/srv/${p}/proxies/`, now],
    )
  for (const [key, a] of Object.entries(ASSETS))
    ids[key] = db
      .query<{ id: number }, (string | number)[]>(
        `INSERT INTO media_assets (kind, name, production, device, path_file, technical, date_add, date_mod) VALUES (?, ?, ?, 1, ?, ?, ?, ?) RETURNING id`,
      )
      .get(
        a.kind,
        a.name,
        a.production ?? 1,
        `/srv/show/${key}`,
        JSON.stringify(a.technical),
        a.date_add ?? now,
        now,
      )!.id
  db.run(
    `INSERT INTO project_assets (name, bundle_root, production, device, date_add, date_mod) VALUES ('A001C003 cut', '/srv/show/cut/', 1, 1, ?, ?)`,
    [now, now],
  )
})
afterAll(() => t.cleanup())

/** The names of a list's whole answer (unpaged), checking X-Total-Count against it. */
async function listed(kind: string, query: string): Promise<string[]> {
  const r = await t.get(`/api/${kind}assets/?${query}`)
  expect({ query, status: r.status, text: r.status === 200 ? '' : r.text }).toEqual({ query, status: 200, text: '' })
  const page = await t.get(`/api/${kind}assets/?${query}&limit=100`)
  expect(Number(page.headers.get('x-total-count'))).toBe(r.json.length)
  return (r.json as { id: number }[]).map((a) => name(a.id))
}

describe('facets of the media lists', () => {
  test.each([
    ['video', 'codec=prores', ['a001c003']],
    ['video', 'codec=H264', ['harbour', 'interview']],
    ['audio', 'codec=pcm_s24le', ['boom']],
    ['audio', 'codec=aac', ['room']],
    ['image', 'codec=png', ['poster']],
    ['video', 'width=1920', ['harbour', 'interview']],
    ['video', 'height=2160', ['a001c003']],
    ['video', 'resolution=1920x1080', ['harbour', 'interview']],
    ['video', 'resolution=1280X720', ['pickup']],
    ['image', 'resolution=3840x2160', ['poster']],
    ['video', 'resolution=1920x1080&width=1280', []],
    // Within 0.01: 23.976 is 24000/1001, 29.97 is 30000/1001, and 24 is neither.
    ['video', 'fps=23.976', ['a001c003']],
    ['video', 'fps=23.98', ['a001c003']],
    ['video', 'fps=24', []],
    ['video', 'fps=29.97', ['interview']],
    ['video', 'fps=30000/1001', ['interview']],
    ['video', 'fps=25', ['harbour']],
    // Seconds: a video's frames over its rate (2400 at 23.976 is 100.1 s), an audio file's duration.
    ['video', 'duration_min=60', ['a001c003']],
    ['video', 'duration_max=10', ['harbour', 'pickup']],
    ['video', 'duration_min=2.5&duration_max=60.5', ['harbour', 'interview']],
    ['video', 'duration_min=2&duration_max=2', ['pickup']],
    ['audio', 'duration_min=95.5', ['boom']],
    ['audio', 'duration_max=95.4', ['room']],
    // The start timecode; drop frame's ; compares as :.
    ['video', 'timecode_from=10:00:00:00', ['a001c003']],
    ['video', 'timecode_from=09:59:59;28&timecode_to=10:00:00:00', ['a001c003', 'interview']],
    ['video', 'timecode_to=09:59:59:27', ['harbour']],
    ['audio', 'timecode_from=10:00:00:00', ['boom']],
    // Every audio stream's channels, added up.
    ['video', 'audio_channels=4', ['a001c003']],
    ['video', 'audio_channels=2', ['harbour', 'pickup']],
    ['audio', 'audio_channels=6', ['boom']],
    // With the lists' other filters.
    ['video', 'codec=h264&production=1&is_production=true', ['harbour', 'interview']],
    ['video', 'codec=h264&production=2', []],
  ])('%s ?%s', async (kind, query, expected) => {
    expect((await listed(kind, query)).sort()).toEqual([...expected].sort())
  })

  test('a facet the kind does not have finds none of it (an audio file has no width, an image no duration)', async () => {
    expect(await listed('audio', 'width=1920')).toEqual([])
    expect(await listed('audio', 'fps=25')).toEqual([])
    expect(await listed('image', 'duration_min=0')).toEqual([])
    expect(await listed('image', 'audio_channels=2')).toEqual([])
  })

  test.each([
    ['codec', '%20'],
    ['width', 'wide'],
    ['height', '-1'],
    ['resolution', '1920'],
    ['resolution', '1920x'],
    ['fps', 'fast'],
    ['fps', '0'],
    ['fps', '25/0'],
    ['duration_min', 'ten'],
    ['duration_max', '-5'],
    ['timecode_from', '10:00:00'],
    ['timecode_from', '25:00:00:00'],
    ['timecode_to', '10:00:00.00'],
    ['audio_channels', 'stereo'],
  ])('?%s=%s is 400 invalid naming the parameter, on the lists and the search', async (parameter, value) => {
    for (const path of ['/api/videoassets/?', '/api/audioassets/?limit=5&', '/api/search/?q=harbour&']) {
      const r = await t.get(`${path}${parameter}=${value}`)
      expectError(r, 400, 'invalid', { parameter })
    }
  })
})

describe('?ordering= of the media lists', () => {
  const ordered = async (kind: string, ordering: string) => listed(kind, `ordering=${ordering}`)
  const videos = ['a001c003', 'harbour', 'interview', 'pickup', 'nothing']

  test('by name, case folded; by date_add; by duration; by timecode; ties by id; - reverses all of it', async () => {
    expect(await ordered('video', 'name')).toEqual(['a001c003', 'harbour', 'interview', 'nothing', 'pickup'])
    expect(await ordered('video', '-name')).toEqual(['pickup', 'nothing', 'interview', 'harbour', 'a001c003'])
    // harbour and pickup were added at the same moment: by id.
    expect(await ordered('video', 'date_add')).toEqual(['harbour', 'pickup', 'a001c003', 'interview', 'nothing'])
    expect(await ordered('video', '-date_add')).toEqual(['nothing', 'interview', 'a001c003', 'pickup', 'harbour'])
    // Seconds: pickup 2, harbour 10, interview 59.99, a001c003 100.1; unknown first ascending.
    expect(await ordered('video', 'duration')).toEqual(['nothing', 'pickup', 'harbour', 'interview', 'a001c003'])
    expect(await ordered('video', '-duration')).toEqual(['a001c003', 'interview', 'harbour', 'pickup', 'nothing'])
    expect(await ordered('video', 'timecode')).toEqual(['pickup', 'nothing', 'harbour', 'interview', 'a001c003'])
    expect(await ordered('video', '-timecode')).toEqual(['a001c003', 'interview', 'harbour', 'nothing', 'pickup'])
    expect(await ordered('video', 'id')).toEqual(videos)
    expect(await ordered('video', '-id')).toEqual([...videos].reverse())
    expect(await listed('video', '')).toEqual(videos)
    expect(await ordered('audio', '-duration')).toEqual(['boom', 'room'])
    expect(await ordered('audio', 'timecode')).toEqual(['room', 'boom'])
    // Images have neither: by duration or timecode they are in id order (descending with -).
    expect(await ordered('image', 'timecode')).toEqual(['poster', 'still'])
    expect(await ordered('image', '-duration')).toEqual(['still', 'poster'])
  })

  test('pages follow on in every order, with a facet too: the pages of 2 are the whole list cut in pieces', async () => {
    for (const ordering of MEDIA_ORDERINGS)
      for (const filter of ['', '&codec=h264', '&production=1']) {
        const whole = (await t.get(`/api/videoassets/?ordering=${ordering}${filter}`)).json as { id: number }[]
        const pages: { id: number }[] = []
        for (let offset = 0; offset < whole.length + 2; offset += 2)
          pages.push(
            ...((await t.get(`/api/videoassets/?ordering=${ordering}${filter}&limit=2&offset=${offset}`)).json as {
              id: number
            }[]),
          )
        expect({ ordering, filter, ids: pages.map((a) => a.id) }).toEqual({
          ordering,
          filter,
          ids: whole.map((a) => a.id),
        })
      }
  })

  test('another ordering is 400 invalid at ordering, listing the ones there are', async () => {
    const r = await t.get('/api/videoassets/?ordering=size')
    expectError(r, 400, 'invalid', { parameter: 'ordering' })
    expect(r.json.errors[0].detail).toContain('-timecode')
  })
})

describe('the facets in the search', () => {
  const search = async (query: string) => {
    const r = await t.get(`/api/search/?${query}`)
    expect(r.status).toBe(200)
    return (r.json as { type: string; id: number }[]).map((h) => (h.type === 'projectasset' ? 'project' : name(h.id)))
  }

  test('a facet filters media assets of every kind by what each has; a project is no hit', async () => {
    expect((await search('q=A001C003')).sort()).toEqual(['a001c003', 'project'])
    expect(await search('q=A001C003&codec=prores')).toEqual(['a001c003'])
    expect(await search('q=A001C003&codec=h264')).toEqual([])
    expect(await search('q=boom&audio_channels=6&timecode_from=10:00:00:00')).toEqual(['boom'])
    expect(await search('q=poster&resolution=3840x2160')).toEqual(['poster'])
    expect(await search('q=harbour&fps=25&duration_max=10')).toEqual(['harbour'])
    expect(await search('q=harbour&fps=23.976')).toEqual([])
  })

  test('found inside a word, filtered alike (C003 inside A001C003)', async () => {
    expect((await search('q=C003')).sort()).toEqual(['a001c003', 'project'])
    expect(await search('q=C003&resolution=3840x2160')).toEqual(['a001c003'])
    expect(await search('q=C003&codec=h264')).toEqual([])
  })
})

describe('the lists read the facet indexes', () => {
  test("the catalogue's facet indexes are db/facets.ts's: an expression changed there without a migration shows here", () => {
    const even = (sql: string) => sql.replace(/[`"]/g, '').replace(/\s+/g, ' ')
    const stored = t.db.$client
      .query<{ name: string; sql: string }, []>(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'media_assets_%' ORDER BY name",
      )
      .all()
    const byName = new Map(stored.map((i) => [i.name, even(i.sql)]))
    for (const index of facetIndexes()) expect(byName.get(index.name)).toBe(even(index.sql))
  })

  test('a facet alone: its count and its first page search the facet index, the count reading no row', async () => {
    const client = t.db.$client
    const seen: string[] = []
    const query = client.query.bind(client)
    client.query = ((sql: string) => {
      seen.push(sql)
      return query(sql)
    }) as typeof client.query
    const plan = (sql: string, params: readonly unknown[]) =>
      (client.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as { detail: string }[]).map(
        (r) => r.detail,
      )
    try {
      for (const [kind, filter, index, params] of [
        ['video', 'codec=prores', 'media_assets_video_codec', ['prores']],
        ['video', 'resolution=1920x1080', 'media_assets_video_width_height', [1920, 1080]],
        ['video', 'height=1080', 'media_assets_video_height', [1080]],
        ['video', 'fps=25', 'media_assets_video_fps', [24.99, 25.01]],
        ['video', 'audio_channels=2', 'media_assets_video_channels', [2]],
        ['audio', 'codec=aac', 'media_assets_audio_codec', ['aac']],
        ['image', 'codec=png', 'media_assets_image_codec', ['png']],
        ['video', 'codec=prores&production=1', 'media_assets_video_codec', ['prores', 1]],
      ] as const) {
        seen.length = 0
        // A write: the count kept for this WHERE (http/lists.ts total) is counted again.
        client.run('UPDATE productions SET date_add = date_add WHERE id = 1')
        expect((await t.get(`/api/${kind}assets/?${filter}&limit=10`)).status).toBe(200)
        const count = seen.find((s) => s.startsWith('select count(*)'))!
        const page = seen.find((s) => s.startsWith('select "id"'))!
        expect({ filter, plan: plan(count, params) }).toEqual({
          filter,
          plan: [expect.stringMatching(new RegExp(`^SEARCH media_assets USING COVERING INDEX ${index} \\(`))],
        })
        expect({ filter, plan: plan(page, [...params, 10, 0])[0] }).toEqual({
          filter,
          plan: expect.stringMatching(new RegExp(`^SEARCH media_assets USING INDEX ${index} \\(`)),
        })
      }
      // An order with a production: the order's index, walked in order, no sort.
      seen.length = 0
      expect((await t.get('/api/videoassets/?ordering=-name&production=1&limit=10')).status).toBe(200)
      const page = seen.find((s) => s.startsWith('select "id"'))!
      expect(plan(page, [1, 10, 0])).toEqual(['SCAN media_assets USING INDEX media_assets_video_name'])
    } finally {
      client.query = query as typeof client.query
    }
  })
})
