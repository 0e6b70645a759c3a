// Dates that exist (issue 27, point 2): every route that takes a date checks its calendar day,
// hour and minute whatever the offset, and refuses one that does not exist with 400 invalid at
// the field. Before, "2024-02-30 10:00+02:00" was stored as March 1: the day was checked only
// for Z times. The routes: media asset create, project asset create and copy, and the import
// (asset_meta.date_crt, date_add and date_del, and the top-level date_add). No route changes a
// date afterwards (there is no PATCH).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import { IMPORT, assetOf, importBody, placeFile } from '../helpers/imports.ts'

const M = '/asset/asset_meta'
/** Every spelling of the offset: ±HH:MM, ±HHMM, ±HH, Z, and none (UTC). */
const OFFSETS = ['+02:00', '-05:30', '+0200', '-05', 'Z', '']

/** Dates that exist, with the UTC timestamp each is stored as. */
const GOOD: [string, string][] = [
  ['2024-02-29 10:00+02:00', '2024-02-29T08:00:00.000000Z'],
  ['2024-02-29 23:30-05:30', '2024-03-01T05:00:00.000000Z'],
  ['2024-02-29 10:00Z', '2024-02-29T10:00:00.000000Z'],
  ['2024-02-29 10:00', '2024-02-29T10:00:00.000000Z'],
  ['2024-02-29', '2024-02-29T00:00:00.000000Z'],
  ['2000-02-29 00:00+01:00', '2000-02-28T23:00:00.000000Z'],
  ['2024-04-30 01:00+02:00', '2024-04-29T23:00:00.000000Z'],
  ['2024-12-31 23:59:59-05:30', '2025-01-01T05:29:59.000000Z'],
  ['2024-01-31T23:59+0200', '2024-01-31T21:59:00.000000Z'],
]

/** Dates that do not exist, each with every offset, and the date-only forms. */
const BAD = [
  ...OFFSETS.flatMap((offset) => [
    `2024-02-30 10:00${offset}`,
    `2023-02-29 10:00${offset}`,
    `1900-02-29 10:00${offset}`,
    `2024-04-31 10:00${offset}`,
    `2024-11-31 00:00${offset}`,
    `2024-01-32 10:00${offset}`,
    `2024-01-01 24:00${offset}`,
    `2024-01-01 10:60${offset}`,
    `2024-01-01 10:00:60${offset}`,
  ]),
  '2023-02-29',
  '2024-02-30',
  '2024-09-31',
  '2024-01-01 10:00+24:00',
  '2024-01-01 10:00+05:60',
]

let t: TestApp
let root: string
let show: { id: number }
let n = 0

beforeAll(async () => {
  t = testApp()
  ;({ root, production: show } = await seedProduction(t))
})
afterAll(() => t.cleanup())

/** Sends each value with `send`, and expects 400 invalid at `pointer` for every one. */
async function refusesAll(pointer: string, send: (value: string) => ReturnType<TestApp['request']>) {
  for (const value of BAD) {
    const r = await send(value)
    if (r.status !== 400) throw new Error(`${pointer} = ${value}: ${r.status} ${r.text}`)
    expectError(r, 400, 'invalid', { pointer })
  }
}

describe('media asset create', () => {
  const create = (field: string, value: string) =>
    t.post('/api/videoassets/', {
      name: 'dated',
      path_file: join(root, 'Show', `clip-${++n}.mov`),
      production: show.id,
      [field]: value,
    })

  test('a date that exists is stored in UTC, whatever its offset', async () => {
    const stored: [string, string][] = []
    for (const [given] of GOOD) stored.push([given, (await create('date_crt', given)).json.date_crt])
    expect(stored).toEqual(GOOD)
  })

  test('a day, hour or minute that does not exist is 400 invalid at /date_crt and /date_del', async () => {
    await refusesAll('/date_crt', (value) => create('date_crt', value))
    await refusesAll('/date_del', (value) => create('date_del', value))
  })
})

describe('project asset create and copy', () => {
  const create = (value: string, extra: Record<string, unknown> = {}) =>
    t.post('/api/projectassets/', {
      name: 'edit',
      bundle_root: join(root, 'Show', `edit-${++n}`),
      production_id: show.id,
      date_crt: value,
      ...extra,
    })

  test('a date that exists is stored in UTC, whatever its offset', async () => {
    const stored: [string, string][] = []
    for (const [given] of GOOD) stored.push([given, (await create(given)).json.date_crt])
    expect(stored).toEqual(GOOD)
  })

  test('a day, hour or minute that does not exist is 400 invalid at /date_crt', async () => {
    await refusesAll('/date_crt', (value) => create(value))
    const source = await create('2024-01-01')
    expect(source.status).toBe(201)
    await refusesAll('/date_crt', (value) => create(value, { copy_of: source.json.id }))
  })
})

describe('import', () => {
  test('a date that exists is stored in UTC, whatever its offset', async () => {
    const stored: [string, string][] = []
    for (const [given] of GOOD) {
      const body = importBody(placeFile(join(root, 'Show', `import-${++n}.mov`)), {
        date_crt: given,
        date_del: given,
        date_add: given,
      })
      const r = await t.post(IMPORT, body)
      if (r.status !== 201) throw new Error(`${given}: ${r.status} ${r.text}`)
      const asset = await assetOf(t.request, r.json.asset_import_id)
      expect([asset.date_add, asset.date_del]).toEqual([asset.date_crt, asset.date_crt])
      stored.push([given, asset.date_crt])
    }
    expect(stored).toEqual(GOOD)
  })

  test('a day, hour or minute that does not exist is 400 invalid at its field', async () => {
    const path = placeFile(join(root, 'Show', 'import-refused.mov'))
    for (const field of ['date_crt', 'date_add', 'date_del'])
      await refusesAll(`${M}/${field}`, (value) => t.post(IMPORT, importBody(path, { [field]: value })))
    await refusesAll('/date_add', (value) => t.post(IMPORT, importBody(path, {}, {}, { date_add: value })))
  })
})
