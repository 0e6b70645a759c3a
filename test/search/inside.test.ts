// Search that finds what editors type (migration 0024): a word of three or more letters and
// digits is found inside a word of a name or path (`C003` finds `A001C003`), after the hits of
// whole words, with every filter and reader's right as for those; markers' notes are searched
// with their asset. Through the app, over a migrated catalogue; the trigram index is kept by the
// writes as the word index is.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type TestApp, testApp } from '../helpers/app.ts'

let t: TestApp
let readerKey: string
const ids: Record<string, number> = {}
const projects: Record<string, number> = {}
const label = (type: string, id: number) =>
  (type === 'projectasset' ? Object.entries(projects) : Object.entries(ids)).find(([, v]) => v === id)?.[0] ??
  `${type}:${id}`

type Hit = { type: string; id: number; score: number; name: string }
async function hits(q: string, extra = '', key?: string): Promise<{ names: string[]; count: number; hits: Hit[] }> {
  const r = await t.get(`/api/search/?q=${encodeURIComponent(q)}${extra}`, key ? { key } : undefined)
  expect({ q, status: r.status, text: r.status === 200 ? '' : r.text }).toEqual({ q, status: 200, text: '' })
  return {
    names: (r.json as Hit[]).map((h) => label(h.type, h.id)),
    count: Number(r.headers.get('x-total-count')),
    hits: r.json as Hit[],
  }
}
const found = async (q: string, extra = '', key?: string) => (await hits(q, extra, key)).names

function asset(
  key: string,
  kind: string,
  name: string,
  path: string,
  production = 1,
  more: Record<string, unknown> = {},
) {
  const now = '2026-01-01T00:00:00.000000Z'
  const fields: Record<string, unknown> = {
    kind,
    name,
    production,
    device: 1,
    path_file: path,
    date_add: now,
    date_mod: now,
    ...more,
  }
  const columns = Object.keys(fields)
  const values = Object.values(fields)
  ids[key] = t.db.$client
    .query<{ id: number }, (string | number)[]>(
      `INSERT INTO media_assets (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) RETURNING id`,
    )
    .get(...(values as (string | number)[]))!.id
}

beforeAll(() => {
  t = testApp()
  const db = t.db.$client
  const now = '2026-01-01T00:00:00.000000Z'
  db.run(
    `INSERT INTO devices (name, display_name, path, date_add) VALUES ('d', 'D', '/srv/', ?), ('e', 'E', '/srv/e/', ?)`,
    [now, now],
  )
  for (const p of ['show', 'other'])
    db.run(
      `INSERT INTO productions (name, codename, storage_root, proxy_root, upload_device, audioasset_device, imageasset_device, videoasset_device, date_add)
       VALUES (?, ?, ?, ?, 1, 1, 1, 1, ?)`,
      [p, p, `/srv/${p}/`, `/srv/${p}/proxies/`, now],
    )
  // Camera originals named as cameras name them, and a path holding the clip number as its own word.
  asset('named', 'video', 'A001C003', '/srv/show/day1/A001C003_230614_R2KD.mov')
  asset('pathonly', 'video', 'Harbour wide', '/srv/show/day1/B002C003_R1.mov')
  asset('word', 'video', 'Pier', '/srv/show/day1/A001_C003_pier.mov')
  asset('described', 'video', 'Gull', '/srv/show/day2/gull.mov', 1, { description: 'Matches C003 of the B camera' })
  asset('offline', 'video', 'A002C003', '/srv/show/day3/A002C003.mov', 1, { is_production: 0 })
  asset('still', 'image', 'A003C003 frame grab', '/srv/show/stills/grab.png', 1, { approval: 1 })
  asset('other', 'video', 'A009C003', '/srv/other/A009C003.mov', 2)
  asset('elsewhere', 'video', 'A010C003', '/srv/e/A010C003.mov', 1, { device: 2 })
  asset('lighthouse', 'video', 'Lighthouse at dusk', '/srv/show/day2/lighthouse.mov')
  const now2 = '2026-01-02T00:00:00.000000Z'
  projects.reel = db
    .query<{ id: number }, [string, string]>(
      `INSERT INTO project_assets (name, bundle_root, production, device, date_add, date_mod) VALUES ('Reel A001C003', '/srv/show/edits/reel/', 1, 1, ?, ?) RETURNING id`,
    )
    .get(now2, now2)!.id
  readerKey = t.makeUser('reader', { read: [1] })
})
afterAll(() => t.cleanup())

describe('a word found inside a word of a name or path', () => {
  test('C003 finds A001C003: the hits of the word first, then those inside a word, names before paths, newest first', async () => {
    const r = await hits('C003')
    // The word index's hits (a word starting C003: the path's A001_C003, the description), ranked;
    // then inside a word of the name, newest first (as the index counts: id × 4 + type); then of
    // the path only.
    expect(r.names.slice(0, 2).sort()).toEqual(['described', 'word'])
    expect(r.names.slice(2)).toEqual(['elsewhere', 'other', 'still', 'offline', 'reel', 'named', 'pathonly'])
    expect(r.count).toBe(9)
    expect(r.hits.slice(2).map((h) => h.score)).toEqual([0, 0, 0, 0, 0, 0, 0])
    expect(r.hits[1]!.score).toBeGreaterThan(0)
  })

  test('in any case, with the digits or letters only, and a word longer than its part', async () => {
    expect((await found('c003', '&type=videoasset&production=1&is_production=true&device=1')).sort()).toEqual([
      'described',
      'named',
      'pathonly',
      'word',
    ])
    expect((await found('001C0')).sort()).toEqual(['named', 'reel'])
    expect(await found('230614')).toEqual(['named'])
    expect(await found('ighthou')).toEqual(['lighthouse'])
  })

  test('fewer than three characters, a phrase, or a word with other characters: whole words only, as before', async () => {
    expect(await found('03')).toEqual([])
    expect(await found('"C003"')).toEqual(expect.arrayContaining(['word', 'described']))
    expect((await found('"C003"')).length).toBe(2)
    expect(await found('1C003_')).toEqual([])
  })

  test('every word must be held, each as a word or inside one; -word leaves out either kind of hit', async () => {
    expect(await found('C003 harbour')).toEqual(['pathonly'])
    expect(await found('C003 R2KD')).toEqual(['named'])
    expect(await found('C003 nowhere')).toEqual([])
    expect(await found('C003 -harbour -camera -pier', '&type=videoasset&production=1')).toEqual([
      'elsewhere',
      'offline',
      'named',
    ])
  })

  test('the filters and who reads what hold for hits inside words too, and X-Total-Count counts them', async () => {
    expect(await found('C003', '&is_production=false')).toEqual(['offline'])
    expect(await found('C003', '&type=imageasset')).toEqual(['still'])
    expect(await found('C003', '&type=projectasset')).toEqual(['reel'])
    expect(await found('C003', '&status_approval=1')).toEqual(['still'])
    expect(await found('C003', '&device=2')).toEqual(['elsewhere'])
    expect(await found('C003', '&production=2')).toEqual(['other'])
    const all = await hits('C003', '&production=2')
    expect(all.count).toBe(1)
    // The reader reads production 1 only: the other production's clip is neither listed nor counted.
    const reader = await hits('C003', '', readerKey)
    expect(reader.names).not.toContain('other')
    expect(reader.count).toBe(8)
    expect((await hits('C003')).count).toBe(9)
  })

  test('pages cut the hits of whole words and of parts of words alike, as the whole list', async () => {
    const whole = (await hits('C003')).names
    const paged: string[] = []
    for (let offset = 0; offset < whole.length + 3; offset += 3) {
      const r = await t.get(`/api/search/?q=C003&limit=3&offset=${offset}`)
      expect(Number(r.headers.get('x-total-count'))).toBe(whole.length)
      paged.push(...(r.json as Hit[]).map((h) => label(h.type, h.id)))
    }
    expect(paged).toEqual(whole)
  })

  test("the trigram index holds names and paths without each word's first letter or digit, lowercased", () => {
    const text = t.db.$client
      .query<{ name: string; path: string }, [number]>('SELECT name, path FROM media_search_trigrams WHERE id = ?')
      .get(ids.named!)
    expect(text).toEqual({ name: '001c003', path: '/rv/how/ay1/001c003_30614_2kd.ov' })
    expect(
      t.db.$client.query('SELECT name, path FROM project_search_trigrams WHERE id = ?').get(projects.reel!),
    ).toEqual({ name: 'eel 001c003', path: '/rv/how/dits/eel/ ' })
  })

  test('kept by the writes: a rename, a move, a delete, a new project', async () => {
    const db = t.db.$client
    db.run("UPDATE media_assets SET name = 'Lighthouse B007C011' WHERE id = ?", [ids.lighthouse!])
    expect(await found('C011')).toEqual(['lighthouse'])
    expect(await found('ighthou')).toEqual(['lighthouse'])
    db.run("UPDATE media_assets SET path_file = '/srv/show/day2/X4711Y.mov' WHERE id = ?", [ids.lighthouse!])
    expect(await found('4711')).toEqual(['lighthouse'])
    db.run("UPDATE media_assets SET name = 'Beacon' WHERE id = ?", [ids.lighthouse!])
    expect(await found('C011')).toEqual([])
    db.run('DELETE FROM media_assets WHERE id = ?', [ids.lighthouse!])
    expect(await found('4711')).toEqual([])
    const now = '2026-01-03T00:00:00.000000Z'
    db.run(
      `INSERT INTO project_assets (name, bundle_root, path_file, production, device, date_add, date_mod) VALUES ('Promo', '/srv/show/edits/promoQ42/', 'promoQ42.prproj', 1, 1, ?, ?)`,
      [now, now],
    )
    expect((await hits('Q42', '&type=projectasset')).count).toBe(1)
  })
})

describe("markers' notes", () => {
  test("an asset is found by the words of its markers' notes, written, changed and removed through the API", async () => {
    const id = ids.word!
    const r = await t.post(`/api/videoassets/${id}/markers/`, { start_ms: 0, note: 'boom in shot, gull squawk' })
    expect(r.status).toBe(201)
    expect(await found('squawk')).toEqual(['word'])
    expect(await found('boom gull')).toEqual(['word'])
    const changed = await t.request('PATCH', `/api/videoassets/${id}/markers/${r.json.id}/`, {
      body: { note: 'focus buzz' },
    })
    expect(changed.status).toBe(200)
    expect(await found('squawk')).toEqual([])
    expect(await found('focus buzz')).toEqual(['word'])
    // Its other words stay: the name, the path.
    expect(await found('pier')).toEqual(['word'])
    const removed = await t.request('DELETE', `/api/videoassets/${id}/markers/${r.json.id}/`)
    expect(removed.status).toBeLessThan(300)
    expect(await found('buzz')).toEqual([])
    expect(await found('pier')).toEqual(['word'])
  })

  test('a marker removed with its asset leaves nothing behind', async () => {
    const db = t.db.$client
    const now = '2026-01-01T00:00:00.000000Z'
    db.run(
      `INSERT INTO markers (asset_id, start_ms, note, username, date_add, date_mod) VALUES (?, 0, 'sirens wail', 'admin', ?, ?)`,
      [ids.pathonly!, now, now],
    )
    expect(await found('sirens')).toEqual(['pathonly'])
    db.run('DELETE FROM media_assets WHERE id = ?', [ids.pathonly!])
    expect(await found('sirens')).toEqual([])
    expect(db.query('SELECT count(*) AS n FROM markers WHERE asset_id = ?').get(ids.pathonly!)).toEqual({ n: 0 })
    expect(db.query('SELECT integrity_check FROM pragma_integrity_check').get()).toEqual({ integrity_check: 'ok' })
  })
})
