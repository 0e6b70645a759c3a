// A list whose record is its row as read (resource.ts listRecord: the media asset lists) sends
// each row to JSON without toApi (issue 9). Its pages must be, byte for byte, the records toApi
// makes of the same rows: same fields, same order, booleans and JSON decoded. Rows here hold
// what could tell them apart: true and false, nested and unicode metadata, quotes and newlines.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mediaToApi } from '../../src/modules/mediaassets/model.ts'
import { completeListRow } from '../../src/modules/mediaassets/pictures.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'

let t: TestApp
let root: string
let production: { id: number }

beforeAll(async () => {
  t = testApp()
  ;({ root, production } = await seedProduction(t))
})
afterAll(() => t.cleanup())

describe.each(['audio', 'image', 'video'] as const)('%sassets', (kind) => {
  test('a page is the records toApi makes of its rows, byte for byte, on every page and filter', async () => {
    const made: number[] = []
    const bodies = [
      { name: 'plain', description: '' },
      { name: 'quoted "name"', description: 'line one\nline two\t"tabbed"\\', is_archive: true, is_production: false },
      {
        name: 'unicode ☕ é',
        description: 'Ünïcödé – 𝄞',
        meta_field_store: { nested: { list: [1, 2.5, 'x'], none: null }, '1': 'numeric key', flag: false } as Record<
          string,
          unknown
        >,
      },
      { name: 'archived', is_archive: true, meta_field_store: { take: 3 } as Record<string, unknown> },
    ]
    for (const [i, { meta_field_store, ...body }] of bodies.entries()) {
      const r = await t.post(`/api/${kind}assets/`, {
        ...body,
        path_file: `${root}/Show/${kind}-${i}.bin`,
        production: production.id,
      })
      expect(r.status).toBe(201)
      made.push(r.json.id)
      // Metadata beyond the custom fields defined (and spaced as no JSON.stringify writes it), stored as another program would.
      if (meta_field_store)
        t.db.$client.run('UPDATE media_assets SET meta_field_store = ? WHERE id = ?', [
          JSON.stringify(meta_field_store, null, 1),
          r.json.id,
        ])
    }
    // One row with a proxy and a poster recorded, as the proxy run records them.
    t.db.$client.run('UPDATE media_assets SET path_proxy = ?, pictures = ? WHERE id = ?', [
      `${root}/proxies/${kind}-0.mp4`,
      JSON.stringify({ poster: '0123456789', strip: 'abcdef0123' }),
      made[0]!,
    ])
    // With ?pictures=true: toApi's record, then the picture fields a list's row adds (mediaassets/pictures.ts completeListRow).
    const complete = completeListRow(kind, 'http://localhost')
    const record = (id: number) => {
      const row = t.core.port.run(t.core.media.byIdWithDetails(id))!
      const made: Record<string, unknown> = {
        ...mediaToApi(row),
        path_proxy: row.path_proxy,
        pictures: row.pictures,
      }
      complete(made)
      return made
    }
    const records = (ids: number[], pictures: boolean) =>
      `[${ids.map((id) => JSON.stringify(pictures ? record(id) : mediaToApi(t.core.port.run(t.core.media.byIdWithDetails(id))!))).join(',')}]`
    for (const query of [
      '',
      '?limit=2',
      '?limit=2&offset=2',
      '?limit=50&is_archive=true',
      `?limit=50&production=${production.id}`,
    ]) {
      for (const pictures of [false, true]) {
        const r = await t.get(`/api/${kind}assets/${query}${pictures ? `${query ? '&' : '?'}pictures=true` : ''}`)
        expect(r.status).toBe(200)
        const ids = (r.json as { id: number }[]).map((a) => a.id)
        expect(ids.length).toBeGreaterThan(0)
        expect(r.text).toBe(records(ids, pictures))
      }
    }
    // Every record made is listed, in id order.
    expect(((await t.get(`/api/${kind}assets/`)).json as { id: number }[]).map((a) => a.id)).toEqual(made)
  })
})
