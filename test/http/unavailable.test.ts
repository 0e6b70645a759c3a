// The archive and restore activities at the edges: a key is needed for both, and no input
// reaches a 500 (what they do on real folders: test/archive; a video asset's shots and
// sequences, once empty lists here, are detected now: test/shots).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { errorEntry, expectError } from '../helpers/envelope.ts'

let t: TestApp
let video: number
let reader: string
let stranger: string

beforeAll(async () => {
  t = testApp()
  const { root } = await seedProduction(t, 'Night Shift')
  const { root: otherRoot } = await seedProduction(t, 'Day Shift')
  const register = async (kind: string, production: string, path: string) => {
    writeFileSync(path, 'essence')
    const r = await t.post(`/api/${kind}assets/`, {
      name: path.split('/').pop(),
      path_file: path,
      production_name: production,
    })
    if (r.status !== 201) throw new Error(r.text)
    return r.json.id as number
  }
  video = await register('video', 'Night Shift', `${root}/Night Shift/clip.mov`)
  await register('image', 'Night Shift', `${root}/Night Shift/still.tif`)
  await register('video', 'Day Shift', `${otherRoot}/Day Shift/clip.mov`)
  reader = t.makeUser('reader', { read: [1] })
  stranger = t.makeUser('stranger')
})
afterAll(() => t.cleanup())

describe.each(['archiveactivities', 'restoreactivities'])('POST /api/%s/', (name) => {
  const path = `/api/${name}/`

  test('bad bodies: none, malformed JSON, form data, another type, over 1 MiB: a 4xx in the envelope, never a 500', async () => {
    const bodies: { raw?: string | Uint8Array; headers?: Record<string, string>; form?: Record<string, unknown> }[] = [
      {},
      { raw: '{"asset_id": ', headers: { 'content-type': 'application/json' } },
      { raw: 'plain words', headers: { 'content-type': 'text/plain' } },
      { raw: 'no type at all' },
      { form: { asset_id: 'x', archive_type: { a: 1 } } },
      { raw: new Uint8Array(2 * 1024 * 1024).fill(0x5b), headers: { 'content-type': 'application/json' } },
      { raw: '\u0000\uffff', headers: { 'content-type': 'application/json; charset=latin1' } },
      { raw: '[]', headers: { 'content-type': 'application/json' } },
    ]
    for (const [i, options] of bodies.entries()) {
      const r = await t.request('POST', path, options)
      expect([i, r.status >= 400 && r.status < 500, Array.isArray(r.json?.errors)]).toEqual([i, true, true])
    }
    // Nothing was done to the asset.
    expect((await t.get(`/api/videoassets/${video}/`)).json).toMatchObject({ is_archive: false, is_production: true })
  })

  test('a user who may not read the asset is told it does not exist (400), one who may read it is refused (403)', async () => {
    const body = [
      name === 'archiveactivities'
        ? { content_type_id: 4, asset_id: video, archive_type: 'archive_std', archive_connector: 1 }
        : { content_type_id: 4, asset_id: video },
    ]
    expect((await t.post(path, body, { key: stranger })).status).toBe(400)
    expect((await t.post(path, body, { key: reader })).status).toBe(403)
  })

  test('a key is needed: 401 without one, or with a wrong one', async () => {
    expectError(await t.post(path, [], { key: null }), 401, 'not_authenticated')
    expectError(await t.post(path, [], { key: 'f'.repeat(40) }), 401, 'authentication_failed')
  })

  test('other methods: 405 naming POST', async () => {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const r = await t.request(method, path)
      expectError(r, 405, 'method_not_allowed')
      expect([method, r.headers.get('allow')]).toEqual([method, 'POST'])
    }
  })
})
