// A search with more hits than bm25 ranks (RANKED_UP_TO): all words in the name first, then the
// rest, each newest first; pages that cross from one to the other; the count; who sees what.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BY_RECORD_UP_TO } from '../../src/db/search/sqlite.ts'
import { RANKED_UP_TO, TIER_SCORE } from '../../src/modules/search/types.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'

let t: TestApp
let show: { id: number }
let other: { id: number }
/** Ids of assets named "Crowd ..." (in the name) and of assets whose description says crowd. */
const named: number[] = []
const described: number[] = []
// More than a reader's search asks of each record (BY_RECORD_UP_TO > RANKED_UP_TO): the index decides.
const IN_NAME = BY_RECORD_UP_TO + 500
const ELSEWHERE = 30

beforeAll(async () => {
  t = testApp()
  let device: { id: number }
  ;({ device, production: show } = await seedProduction(t, 'Show'))
  ;({ production: other } = await seedProduction(t, 'Other'))
  const insert = t.db.$client.prepare<{ id: number }, [string, string, number, number, string]>(
    `INSERT INTO media_assets (kind, name, description, production, device, path_file, date_add, date_mod)
     VALUES ('video', ?, ?, ?, ?, ?, 't', 't') RETURNING id`,
  )
  t.db.$client.transaction(() => {
    // Interleaved, so that newest first mixes them unless the name comes first.
    for (let i = 0; i < IN_NAME + ELSEWHERE; i++) {
      const inName = i % 2 === 0 || i >= 2 * ELSEWHERE
      const production = i % 50 === 0 ? other.id : show.id
      const row = insert.get(
        inName ? `Crowd ${i}` : `Square ${i}`,
        inName ? '' : 'a crowd gathers',
        production,
        device.id,
        `/m/${i}.mov`,
      )!
      ;(inName ? named : described).push(row.id)
    }
  })()
  named.reverse()
  described.reverse()
})
afterAll(() => t.cleanup())

const ids = (r: { json: { id: number }[] }) => r.json.map((h) => h.id)

describe('a search wider than bm25 ranks', () => {
  test('counts every hit; the name hits come first, newest first, then the rest', async () => {
    const first = await t.get('/api/search/?q=crowd&limit=5')
    expect(first.headers.get('x-total-count')).toBe(String(IN_NAME + ELSEWHERE))
    expect(ids(first)).toEqual(named.slice(0, 5))
    expect(first.json.every((h: { score: number }) => h.score === TIER_SCORE.name)).toBe(true)
    const crossing = await t.get(`/api/search/?q=crowd&limit=6&offset=${IN_NAME - 3}`)
    expect(ids(crossing)).toEqual([...named.slice(-3), ...described.slice(0, 3)])
    expect(crossing.json.map((h: { score: number }) => h.score)).toEqual([2, 2, 2, 1, 1, 1])
    const last = await t.get(`/api/search/?q=crowd&limit=100&offset=${IN_NAME + ELSEWHERE - 2}`)
    expect(ids(last)).toEqual(described.slice(-2))
  })

  test('without limit: every hit, in the same order as the pages', async () => {
    const all = await t.get('/api/search/?q=crowd')
    expect(ids(all)).toEqual([...named, ...described])
  })

  test('a user who reads one production sees and counts its hits only', async () => {
    const reader = t.makeUser('reader', { read: [show.id] })
    const r = await t.get('/api/search/?q=crowd&limit=3', { key: reader })
    // More than bm25 ranks even so: the order by tiers, through the readable filter.
    expect(Number(r.headers.get('x-total-count'))).toBeGreaterThan(RANKED_UP_TO)
    const visible = (list: number[]) =>
      list.filter(
        (id) =>
          t.db.$client.query<{ p: number }, [number]>('SELECT production AS p FROM media_assets WHERE id = ?').get(id)!
            .p === show.id,
      )
    expect(r.headers.get('x-total-count')).toBe(String(visible([...named, ...described]).length))
    expect(ids(r)).toEqual(visible(named).slice(0, 3))
    // A user who reads every production is filtered by nothing: the same as a superuser.
    const everyone = t.makeUser('everyone', { read: [show.id, other.id] })
    expect((await t.get('/api/search/?q=crowd&limit=3', { key: everyone })).json).toEqual(
      (await t.get('/api/search/?q=crowd&limit=3')).json,
    )
  })

  test('a reader of a small production: its few hits ranked by bm25, decided by the index alone', async () => {
    const small = t.makeUser('small', { read: [other.id] })
    const r = await t.get('/api/search/?q=crowd&limit=3', { key: small })
    const mine = [...named, ...described].filter(
      (id) =>
        t.db.$client.query<{ p: number }, [number]>('SELECT production AS p FROM media_assets WHERE id = ?').get(id)!
          .p === other.id,
    )
    expect(Number(r.headers.get('x-total-count'))).toBe(mine.length)
    expect(mine.length).toBeLessThan(RANKED_UP_TO)
    // Ranked: bm25 scores (not the tiers' 2 and 1); every hit of the reader's production.
    expect(
      r.json.every(
        (h: { score: number; production: number }) => h.production === other.id && h.score !== TIER_SCORE.name,
      ),
    ).toBe(true)
    const all = await t.get('/api/search/?q=crowd', { key: small })
    expect(ids(all).sort((a, b) => a - b)).toEqual([...mine].sort((a, b) => a - b))
  })

  test('a filter the index holds no word for (approval, device) is asked of each hit, in both tiers, the count too', async () => {
    // Every other name hit and every third other hit approved: still more than bm25 ranks.
    const approved = new Set([...named.filter((_, i) => i % 2 === 0), ...described.filter((_, i) => i % 3 === 0)])
    t.db.$client.run(`UPDATE media_assets SET approval = 1 WHERE id IN (${[...approved].join(',')})`)
    try {
      const inName = named.filter((id) => approved.has(id))
      const elsewhere = described.filter((id) => approved.has(id))
      expect(inName.length).toBeGreaterThan(RANKED_UP_TO)
      const first = await t.get('/api/search/?q=crowd&status_approval=1&limit=4')
      expect([first.headers.get('x-total-count'), ids(first)]).toEqual([String(approved.size), inName.slice(0, 4)])
      const crossing = await t.get(`/api/search/?q=crowd&status_approval=1&limit=4&offset=${inName.length - 2}`)
      expect(ids(crossing)).toEqual([...inName.slice(-2), ...elsewhere.slice(0, 2)])
      const pending = await t.get('/api/search/?q=crowd&status_approval=0&limit=3')
      expect([pending.headers.get('x-total-count'), ids(pending)]).toEqual([
        String(IN_NAME + ELSEWHERE - approved.size),
        named.filter((id) => !approved.has(id)).slice(0, 3),
      ])
      // Another device: nothing (every asset here lies on Show's).
      const device = t.db.$client.query<{ d: number }, []>('SELECT device AS d FROM media_assets LIMIT 1').get()!.d
      expect((await t.get(`/api/search/?q=crowd&device=${device + 1}&limit=3`)).json).toEqual([])
      expect((await t.get(`/api/search/?q=crowd&device=${device}&status_approval=1&limit=4`)).json).toEqual(first.json)
    } finally {
      t.db.$client.run('UPDATE media_assets SET approval = 0')
    }
  })

  test('filters and exclusions hold', async () => {
    const r = await t.get(`/api/search/?q=crowd%20-gathers&production=${other.id}&limit=2`)
    expect(ids(r)).toEqual(
      named
        .filter(
          (id) =>
            t.db.$client
              .query<{ p: number }, [number]>('SELECT production AS p FROM media_assets WHERE id = ?')
              .get(id)!.p === other.id,
        )
        .slice(0, 2),
    )
  })
})
