// The bounds of one record's custom metadata (issue 25, point 4): a value holds at most 64 KiB,
// wherever a meta_field_store is taken (media and project asset creates here; the import in
// test/assetimport/api.test.ts), and an error list answers at most 100 entries and one more that
// says how many it left out, so 30,000 unknown keys do not answer megabytes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { errorEntry, expectError } from '../helpers/envelope.ts'

let t: TestApp
let root: string
let production: { id: number }

beforeAll(async () => {
  t = testApp()
  ;({ root, production } = await seedProduction(t))
  for (const content_type of [1, 4]) {
    const set = await t.post('/api/custommetadatasets/', { name: `set ${content_type}`, description: '', content_type })
    expect(set.status).toBe(201)
    const key = content_type === 1 ? 'project.note' : 'video.note'
    expect(
      (await t.post('/api/custommetadata/', { key, value: 'Note', custom_metadata_set: set.json.id })).status,
    ).toBe(200)
  }
  mkdirSync(join(root, 'Show'), { recursive: true })
})
afterAll(() => t.cleanup())

let n = 0
const video = (meta_field_store: Record<string, unknown>) => {
  const path_file = join(root, 'Show', `clip-${++n}.mov`)
  writeFileSync(path_file, 'essence')
  return t.post('/api/videoassets/', { name: 'clip', path_file, production: production.id, meta_field_store })
}
const project = (meta_field_store: Record<string, unknown>) =>
  t.post('/api/projectassets/', {
    name: 'edit',
    bundle_root: join(root, 'Show', `edit-${++n}`),
    production_id: production.id,
    meta_field_store,
  })
const count = (table: string) => t.db.$client.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n

describe('a custom metadata value holds at most 64 KiB (65,536 bytes of UTF-8)', () => {
  test.each([
    ['media asset', video, 'video.note'],
    ['project asset', project, 'project.note'],
  ] as const)(
    '%s create: 64 KiB taken; one byte more, or 900,000 characters, 400 invalid at /meta_field_store/<key>, nothing written',
    async (_, create, key) => {
      expect((await create({ [key]: 'x'.repeat(65_536) })).status).toBe(201)
      const before = [count('media_assets'), count('project_assets')]
      for (const value of ['x'.repeat(65_537), '€'.repeat(21_846), 'x'.repeat(900_000)])
        expectError(await create({ [key]: value }), 400, 'invalid', { pointer: `/meta_field_store/${key}` })
      expect([count('media_assets'), count('project_assets')]).toEqual(before)
    },
  )
})

describe('an error list answers at most 100 entries, then one counting the rest', () => {
  test('30,000 unknown keys: the first 100 entries at their pointers, then too_many_errors saying 29,900 more', async () => {
    const keys = Array.from({ length: 30_000 }, (_, i) => `unknown${i}`)
    const reply = await video(Object.fromEntries(keys.map((k) => [k, 1])))
    expect(reply.status).toBe(400)
    expect(reply.json).toEqual({
      errors: [
        ...keys.slice(0, 100).map((k) => errorEntry(400, 'invalid', { pointer: `/meta_field_store/${k}` })),
        {
          ...errorEntry(400, 'too_many_errors'),
          detail: '29,900 more errors are not listed (an answer lists at most 100).',
        },
      ],
    })
  })

  test('101 entries: 100 and one saying 1 more; 100 entries are all listed', async () => {
    const store = (size: number) => Object.fromEntries(Array.from({ length: size }, (_, i) => [`unknown${i}`, 1]))
    const hundred = await video(store(100))
    expect([hundred.status, hundred.json.errors.length, hundred.json.errors.at(-1).code]).toEqual([400, 100, 'invalid'])
    const more = await video(store(101))
    expect([more.json.errors.length, more.json.errors.at(-1)]).toEqual([
      101,
      { ...errorEntry(400, 'too_many_errors'), detail: '1 more error is not listed (an answer lists at most 100).' },
    ])
  })
})
