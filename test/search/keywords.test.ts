// Keyword writes and the search index (drizzle/0021, src/modules/mediaassets/keywords.ts): the
// asset's document is rebuilt once per request, not once per keyword link, and what is searched
// after a PATCH or a PUT of keywords, or an import, is what the asset has; the table that holds
// the links' own rebuilds back (search_deferred) is empty after every request, also after one
// that failed half-way and was rolled back. Requests go through the app over HTTP (app.handle).
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { IMPORT, importBody } from '../helpers/imports.ts'

let t: TestApp
let root: string
let show: { id: number }

beforeEach(async () => {
  t = testApp()
  ;({ root, production: show } = await seedProduction(t))
})
afterEach(() => t.cleanup())

const file = (rel: string) => {
  mkdirSync(join(root, rel, '..'), { recursive: true })
  writeFileSync(join(root, rel), `essence of ${rel}`)
  return join(root, rel)
}
const video = async (name: string) => {
  const r = await t.post('/api/videoassets/', { name, path_file: file(`Show/${name}.mov`), production: show.id })
  if (r.status !== 201) throw new Error(r.text)
  return r.json.id as number
}
const patch = (id: number, body: unknown) => t.request('PATCH', `/api/videoassets/${id}/`, { body })
const put = (id: number, body: unknown) => t.request('PUT', `/api/videoassets/${id}/`, { body })
/** The `type:id` of every hit of q. */
const hits = async (q: string) => {
  const r = await t.get(`/api/search/?q=${encodeURIComponent(q)}`)
  expect(r.status).toBe(200)
  return (r.json as { type: string; id: number }[]).map((h) => `${h.type}:${h.id}`).sort()
}
const deferred = () => t.db.$client.query<{ asset_id: number }, []>('SELECT asset_id FROM search_deferred').all()

describe('what is searched follows the keywords', () => {
  test('PATCH and PUT: a keyword given is found, one taken away is not; search_deferred is empty after each request', async () => {
    const id = await video('gull')
    const other = await video('tern')
    const me = [`videoasset:${id}`]
    expect((await patch(other, { keywords: { Place: ['Quay'] } })).status).toBe(200)

    expect((await patch(id, { keywords: { Weather: ['Fog', 'Drizzle'], Place: ['Harbour'] } })).status).toBe(200)
    expect(deferred()).toEqual([])
    expect(await hits('drizzle')).toEqual(me)
    expect(await hits('harbour')).toEqual(me)
    expect(await hits('weather')).toEqual(me)

    // PATCH replaces the categories given; the others stay.
    expect((await patch(id, { keywords: { Weather: ['Sleet'] } })).status).toBe(200)
    expect(deferred()).toEqual([])
    expect(await hits('sleet')).toEqual(me)
    expect(await hits('drizzle')).toEqual([])
    expect(await hits('fog')).toEqual([])
    expect(await hits('harbour')).toEqual(me)

    // PUT replaces them all.
    expect((await put(id, { name: 'gull', keywords: { Crew: ['Ana'] } })).status).toBe(200)
    expect(deferred()).toEqual([])
    expect(await hits('ana')).toEqual(me)
    expect(await hits('sleet')).toEqual([])
    expect(await hits('harbour')).toEqual([])
    expect(await hits('weather')).toEqual([])

    // null removes a category; the asset is still found by its name.
    expect((await patch(id, { keywords: { Crew: null } })).status).toBe(200)
    expect(deferred()).toEqual([])
    expect(await hits('ana')).toEqual([])
    expect(await hits('gull')).toEqual(me)
    // The other asset's keywords were never touched.
    expect(await hits('quay')).toEqual([`videoasset:${other}`])
  })

  test('an import adds its keywords to those the asset has, found at once', async () => {
    const path = file('Show/in/clip.mov')
    const first = await t.post(IMPORT, importBody(path, {}, { keywords: { Place: ['Harbour'] } }))
    expect(first.status).toBe(201)
    const me = [`videoasset:${first.json.asset_import_id}`]
    expect(await hits('harbour')).toEqual(me)
    expect(
      (await t.post(IMPORT, importBody(path, {}, { keywords: { Place: ['Lighthouse'], Crew: ['Ana'] } }))).status,
    ).toBe(201)
    expect(deferred()).toEqual([])
    for (const q of ['harbour', 'lighthouse', 'ana']) expect({ q, hits: await hits(q) }).toEqual({ q, hits: me })
  })
})

describe('a request that fails half-way changes nothing', () => {
  /** A trigger of this connection only that refuses a write as a constraint would (ABORT). */
  const refuse = (name: string, table: string, when: string) =>
    t.db.$client.run(
      `CREATE TEMP TRIGGER ${name} BEFORE INSERT ON main.${table} WHEN ${when} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    )

  for (const [where, table, when] of [
    ['a keyword refused while the links are written', 'keywords', "NEW.name = 'Poison'"],
    [
      'the history row refused after the links were written',
      'history',
      "NEW.resource = 'videoasset' AND NEW.action = 'update'",
    ],
  ] as const)
    test(`${where}: 500; the old keywords are found, the new ones not; search_deferred is empty`, async () => {
      const id = await video('gull')
      const me = [`videoasset:${id}`]
      expect((await patch(id, { keywords: { Place: ['Harbour'] } })).status).toBe(200)
      refuse('refuse_write', table, when)
      for (const send of [
        () => patch(id, { keywords: { Place: ['Lighthouse', 'Poison'] } }),
        () => put(id, { name: 'gull', keywords: { Crew: ['Ana', 'Poison'] } }),
      ]) {
        const r = await send()
        expect(r.status).toBe(500)
        expect(deferred()).toEqual([])
        expect(await hits('harbour')).toEqual(me)
        for (const q of ['lighthouse', 'ana']) expect({ q, hits: await hits(q) }).toEqual({ q, hits: [] })
      }
      t.db.$client.run('DROP TRIGGER temp.refuse_write')
      expect((await t.get(`/api/videoassets/${id}/`)).json.keywords).toEqual({ Place: ['Harbour'] })
      // And the next request works as ever.
      expect((await patch(id, { keywords: { Place: ['Lighthouse'] } })).status).toBe(200)
      expect(await hits('lighthouse')).toEqual(me)
      expect(await hits('harbour')).toEqual([])
      expect(deferred()).toEqual([])
    })
})

describe('one document written per request, whatever the number of keywords', () => {
  /**
   * The search index swapped for a plain table of the same columns (an FTS5 table takes no
   * trigger), whose rows a trigger of this connection counts: every document written, by a
   * trigger or by the keyword writer, is one row inserted. Answers the count since the last call.
   */
  function countDocuments() {
    const db = t.db.$client
    db.run('DROP TABLE search_index')
    db.run('CREATE TABLE search_index (name, path, keywords, description, meta, scope)')
    db.run('CREATE TEMP TABLE documents_written (n INTEGER NOT NULL)')
    db.run('INSERT INTO documents_written VALUES (0)')
    db.run(
      'CREATE TEMP TRIGGER count_documents AFTER INSERT ON main.search_index BEGIN UPDATE documents_written SET n = n + 1; END',
    )
    return () => {
      const { n } = db.query<{ n: number }, []>('SELECT n FROM documents_written').get()!
      db.run('UPDATE documents_written SET n = 0')
      return n
    }
  }
  /** The keywords column of the asset's document as written last. */
  const document = (id: number) =>
    t.db.$client.query<{ keywords: string }, [number]>('SELECT keywords FROM search_index WHERE rowid = ? * 4').get(id)
      ?.keywords
  const list = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`)

  test('PATCH, PUT and an import of hundreds of keywords each write the document once; the one written holds them all', async () => {
    const id = await video('gull')
    const written = countDocuments()

    expect(
      (await patch(id, { keywords: { Weather: list(300, 'w'), Place: list(200, 'p'), Crew: list(100, 'c') } })).status,
    ).toBe(200)
    expect(written()).toBe(1)
    expect(
      document(id)!
        .split(' ')
        .filter((w) => /^[wpc]\d+$/.test(w))
        .sort(),
    ).toEqual([...list(300, 'w'), ...list(200, 'p'), ...list(100, 'c')].sort())

    expect((await patch(id, { keywords: { Weather: null } })).status).toBe(200)
    expect(written()).toBe(1)
    expect(document(id)).not.toContain('w0')

    expect((await put(id, { name: 'gull', keywords: { Crew: list(400, 'd') } })).status).toBe(200)
    expect(written()).toBe(1)
    expect(
      document(id)!
        .split(' ')
        .filter((w) => /^[wpcd]\d+$/.test(w))
        .sort(),
    ).toEqual(list(400, 'd').sort())

    // Keywords the asset has already, given again: the links are written again, the document once.
    expect((await put(id, { name: 'gull', keywords: { Crew: list(400, 'd') } })).status).toBe(200)
    expect(written()).toBe(1)
    // Nothing to link or unlink: no document written.
    expect((await patch(id, { keywords: { Nothing: [] } })).status).toBe(200)
    expect(written()).toBe(0)

    // A new asset by import: the row's document, then its keywords' once.
    const path = file('Show/in/clip.mov')
    const made = await t.post(IMPORT, importBody(path, {}, { keywords: { Place: list(500, 'i') } }))
    expect(made.status).toBe(201)
    expect(written()).toBe(2)
    // A re-import that adds keywords and changes no searched field: once.
    expect((await t.post(IMPORT, importBody(path, {}, { keywords: { Place: list(300, 'j') } }))).status).toBe(201)
    expect(written()).toBe(1)
    expect(
      document(made.json.asset_import_id)!
        .split(' ')
        .filter((w) => /^[ij]\d+$/.test(w)).length,
    ).toBe(800)
    expect(deferred()).toEqual([])
  })
})
