// Markers through the API (docs/api.md, Markers): /api/{kind}assets/{id}/markers/ on assets
// imported from real files, so that the frame rate, first timecode and length are the probe's:
// create, read, list, update and delete; times by timecode (drop frame included) or in
// milliseconds; the 400s that name the field; the history rows; who may read and write.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import { testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import { placeFile, removeScratch } from '../helpers/imports.ts'
import { hasFfmpeg } from '../helpers/media.ts'
import { type MarkerMedia, importMarkerMedia } from './media.ts'

setDefaultTimeout(60_000)

const t = testApp(undefined, { tasks: true })
let m: MarkerMedia & { production: number; root: string }
afterAll(async () => {
  await t.core.stop()
  t.cleanup()
  removeScratch()
})

const KIND = { df: 'video', p25: 'video', wav: 'audio', png: 'image' } as const
type Key = keyof typeof KIND
/** The markers path of an asset, with what follows (a marker's id). */
const at = (key: Key, rest: string | number = '') =>
  `/api/${KIND[key]}assets/${m[key].id}/markers/${rest === '' ? '' : `${rest}/`}`
const add = (key: Key, body: Record<string, unknown>, key_?: string) => t.post(at(key), body, { key: key_ })
const count = async (key: Key) => Number((await t.get(`${at(key)}?limit=0`)).headers.get('x-total-count'))
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)

/** The label of frame n of the drop-frame clip (01:00:59;28, 29.97): written out, not computed by the code under test. */
const dfLabel = (n: number) => {
  const two = (x: number) => String(x).padStart(2, '0')
  if (n < 2) return `01:00:59;${28 + n}`
  if (n < 30) return `01:01:00;${two(n)}`
  return `01:01:01;${two(n - 30)}`
}

describe.skipIf(!hasFfmpeg)('markers', () => {
  beforeAll(async () => {
    m = await importMarkerMedia(t)
  })

  describe('create, read, list, update, delete', () => {
    test('POST by timecode at the drop-frame clip: 201 with milliseconds and source timecode; GET answers the same', async () => {
      const r = await add('df', { start: '01:01:00;02', end: '01:01:00;10', note: 'Boom in frame', color: 'green' })
      expect(r.status).toBe(201)
      expect(r.json).toEqual({
        id: expect.any(Number),
        asset: m.df.id,
        // Frame 2 begins at 66.73 ms (its first whole ms: 67); frame 10 at 333.67 (the range ends at 333).
        start_ms: 67,
        end_ms: 333,
        start_timecode: '01:01:00;02',
        end_timecode: '01:01:00;10',
        note: 'Boom in frame',
        color: 'green',
        user: 'admin',
        date_add: ISO,
        date_mod: r.json.date_add,
      })
      expect((await t.get(at('df', r.json.id))).json).toEqual(r.json)
      // With or without the final slash.
      expect((await t.get(at('df', r.json.id).slice(0, -1))).json).toEqual(r.json)
    })

    test('the list is in time order (then id), paged with X-Total-Count and Link; an asset without markers lists none', async () => {
      const ids: number[] = []
      for (const start_ms of [1500, 0, 1000, 1000])
        ids.push((await add('p25', { start_ms, note: `at ${start_ms}` })).json.id)
      const all = await t.get(at('p25'))
      expect(all.status).toBe(200)
      expect(all.headers.get('x-total-count')).toBe('4')
      expect(all.json.map((x: { id: number }) => x.id)).toEqual([ids[1], ids[2], ids[3], ids[0]])
      expect(all.json[1]).toMatchObject({
        start_ms: 1000,
        start_timecode: '10:00:01:00',
        end_ms: null,
        end_timecode: null,
      })
      const page = await t.get(`${at('p25')}?limit=2`)
      expect(page.json.map((x: { id: number }) => x.id)).toEqual([ids[1], ids[2]])
      expect(page.headers.get('x-total-count')).toBe('4')
      expect(page.headers.get('link')).toBe(`<http://localhost${at('p25')}?limit=2&offset=2>; rel="next"`)
      for (const id of ids) expect((await t.request('DELETE', at('p25', id))).status).toBe(204)
      const none = await t.get(at('png'))
      expect([none.status, none.json, none.headers.get('x-total-count')]).toEqual([200, [], '0'])
    })

    test('PATCH changes the fields given; PUT needs note and a start; a record read and sent back changes nothing; DELETE 204, then 404', async () => {
      const made = (await add('p25', { start_ms: 400, note: 'a' })).json
      expect(made).toMatchObject({ start_ms: 400, start_timecode: '10:00:00:10', end_ms: null, color: 'red' })

      const patched = await t.request('PATCH', at('p25', made.id), { body: { note: 'b', end: '10:00:00:20' } })
      expect(patched.status).toBe(200)
      expect(patched.json).toEqual({
        ...made,
        note: 'b',
        end_ms: 800,
        end_timecode: '10:00:00:20',
        date_mod: expect.any(String),
      })
      expect(patched.json.date_mod > made.date_mod).toBe(true)

      const point = await t.request('PATCH', at('p25', made.id), { body: { end: null } })
      expect(point.json).toMatchObject({ end_ms: null, end_timecode: null })

      const partial = await t.request('PUT', at('p25', made.id), { body: { note: 'c' } })
      expectError(partial, 400, 'required', { pointer: '/start' })
      const put = await t.request('PUT', at('p25', made.id), { body: { start: '10:00:01:00', note: 'c' } })
      expect(put.json).toMatchObject({ start_ms: 1000, start_timecode: '10:00:01:00', note: 'c', color: 'red' })

      const again = await t.request('PUT', at('p25', made.id), { body: put.json })
      expect([again.status, again.json]).toEqual([200, put.json])

      expect((await t.request('DELETE', at('p25', made.id))).status).toBe(204)
      const gone = await t.get(at('p25', made.id))
      expectError(gone, 404, 'not_found')
      expect(gone.json.errors[0].detail).toBe('No marker with this id.')
      expectError(await t.request('DELETE', at('p25', made.id)), 404, 'not_found')
    })

    test('a marker is found only under its own asset, and an asset only under its own kind', async () => {
      const made = (await add('p25', { start_ms: 0, note: 'here' })).json
      expectError(await t.get(at('df', made.id)), 404, 'not_found')
      expectError(await t.request('PATCH', at('df', made.id), { body: { note: 'x' } }), 404, 'not_found')
      expectError(await t.get(`/api/audioassets/${m.p25.id}/markers/`), 404, 'not_found')
      expectError(await t.get('/api/videoassets/999999/markers/'), 404, 'not_found')
      expect((await t.request('DELETE', at('p25', made.id))).status).toBe(204)
    })

    test('markers go with their asset', async () => {
      const path = placeFile(join(m.root, 'Show', 'gone.mov'))
      const id = (await t.post('/api/videoassets/', { name: 'gone', path_file: path, production: m.production })).json
        .id
      expect((await t.post(`/api/videoassets/${id}/markers/`, { start_ms: 0, note: 'x' })).status).toBe(201)
      const left = () => t.db.$client.query('SELECT count(*) AS n FROM markers WHERE asset_id = ?').get(id)
      expect(left()).toEqual({ n: 1 })
      expect((await t.request('DELETE', `/api/videoassets/${id}/`)).status).toBe(204)
      expect(left()).toEqual({ n: 0 })
      expectError(await t.get(`/api/videoassets/${id}/markers/`), 404, 'not_found')
    })

    test('form data as JSON', async () => {
      const r = await t.request('POST', at('wav'), {
        form: { start_ms: '500', end_ms: '750', note: 'form', color: 'cyan' },
      })
      expect([r.status, r.json.start_ms, r.json.end_ms, r.json.color]).toEqual([201, 500, 750, 'cyan'])
      expect((await t.request('DELETE', at('wav', r.json.id))).status).toBe(204)
    })
  })

  describe('timecode', () => {
    test('drop frame round trips: each frame of the clip by milliseconds answers its label, and by its label the same milliseconds', async () => {
      const wrong: unknown[] = []
      for (let n = 0; n < 60; n++) {
        // The first whole millisecond of frame n at 30000/1001.
        const ms = Math.ceil((n * 1001) / 30)
        const byMs = (await add('df', { start_ms: ms, note: `frame ${n}` })).json
        const byLabel = (await add('df', { start: byMs.start_timecode, note: `frame ${n}` })).json
        if (byMs.start_timecode !== dfLabel(n) || byLabel.start_ms !== ms || byLabel.start_timecode !== dfLabel(n))
          wrong.push({ n, ms, byMs: byMs.start_timecode, byLabel: [byLabel.start_ms, byLabel.start_timecode] })
        // The last millisecond of the frame names it too; the next one the next frame.
        const last = (await add('df', { start_ms: Math.ceil(((n + 1) * 1001) / 30) - 1, note: 'last' })).json
        if (last.start_timecode !== dfLabel(n)) wrong.push({ n, last: last.start_timecode })
        for (const id of [byMs.id, byLabel.id, last.id]) await t.request('DELETE', at('df', id))
      }
      expect(wrong).toEqual([])
    })

    test('labels drop frame skips, a drop-frame label at 25 fps, frames past the rate, text that is no timecode: 400 at start, nothing written', async () => {
      const before = await count('df')
      for (const [key, start, says] of [
        ['df', '01:01:00;00', 'skips frames 00-01'],
        ['df', '01:01:00;01', 'skips frames 00-01'],
        ['p25', '10:00:01;00', 'non-drop frame'],
        ['p25', '10:00:01:25', 'below 25'],
        ['df', '1:01:00;02', 'HH:MM:SS:FF'],
        ['df', '01:01:60;02', 'out of range'],
      ] as const) {
        const r = await add(key, { start, note: 'x' })
        expectError(r, 400, 'invalid', { pointer: '/start' })
        expect({ start, detail: r.json.errors[0].detail }).toEqual({ start, detail: expect.stringContaining(says) })
      }
      expect(await count('df')).toBe(before)
    })

    test('a colon at the drop-frame clip reads as drop frame; a timecode through the end of the last frame is a range to the end', async () => {
      const r = await add('df', { start: '01:01:01:29', end: '01:01:02:00', note: 'tail' })
      expect(r.json).toMatchObject({ start_timecode: '01:01:01;29', end_timecode: '01:01:02;00', end_ms: 2002 })
      await t.request('DELETE', at('df', r.json.id))
    })

    test('an end on the start frame makes a point', async () => {
      const r = await add('df', { start: '01:01:00;05', end: '01:01:00;05', note: 'point' })
      expect(r.json).toMatchObject({ start_timecode: '01:01:00;05', end_ms: null, end_timecode: null })
      await t.request('DELETE', at('df', r.json.id))
    })

    test('audio and images without a frame rate: milliseconds only, no timecode fields; a timecode is a 400 that names start_ms', async () => {
      const r = await add('wav', { start_ms: 250, end_ms: 1250, note: 'room tone' })
      expect(r.json).toEqual({
        id: expect.any(Number),
        asset: m.wav.id,
        start_ms: 250,
        end_ms: 1250,
        note: 'room tone',
        color: 'red',
        user: 'admin',
        date_add: ISO,
        date_mod: ISO,
      })
      const still = await add('png', { start_ms: 0, note: 'logo too small' })
      expect([still.status, 'start_timecode' in still.json]).toEqual([201, false])
      const tc = await add('wav', { start: '00:00:01:00', note: 'x' })
      expectError(tc, 400, 'invalid', { pointer: '/start' })
      expect(tc.json.errors[0].detail).toContain('start_ms')
      for (const [key, id] of [
        ['wav', r.json.id],
        ['png', still.json.id],
      ] as const)
        await t.request('DELETE', at(key, id))
    })
  })

  describe('validation', () => {
    test('past the end, end before start, two starts that disagree, bad values, missing fields: 400 naming the field, nothing written', async () => {
      const cases: [Key, Record<string, unknown>, string, string][] = [
        ['df', { start: '01:01:02;00', note: 'x' }, 'invalid', '/start'],
        ['df', { start: '01:01:01;29', end: '01:01:02;02', note: 'x' }, 'invalid', '/end'],
        ['df', { start: '01:01:00;10', end: '01:01:00;05', note: 'x' }, 'invalid', '/end'],
        ['p25', { start_ms: 2000, note: 'x' }, 'invalid', '/start_ms'],
        ['p25', { start_ms: 1999, end_ms: 2001, note: 'x' }, 'invalid', '/end_ms'],
        ['p25', { start_ms: 1000, end_ms: 900, note: 'x' }, 'invalid', '/end_ms'],
        ['p25', { start: '10:00:00:00', start_ms: 1000, note: 'x' }, 'invalid', '/start_ms'],
        ['p25', { start: '10:00:00:00', end: '10:00:01:00', end_ms: 5, note: 'x' }, 'invalid', '/end_ms'],
        ['wav', { start_ms: 2001, note: 'x' }, 'invalid', '/start_ms'],
        ['wav', { start_ms: 0, end_ms: 2001, note: 'x' }, 'invalid', '/end_ms'],
        ['p25', { start_ms: 0, note: 'x', color: 'pink' }, 'invalid', '/color'],
        ['p25', { start_ms: 0, note: '  \n ' }, 'invalid', '/note'],
        ['p25', { start_ms: 0, note: '' }, 'invalid', '/note'],
        ['p25', { start_ms: 0 }, 'required', '/note'],
        ['p25', { note: 'x' }, 'required', '/start'],
        ['p25', { start_ms: -1, note: 'x' }, 'invalid', '/start_ms'],
        ['p25', { start_ms: 1.5, note: 'x' }, 'invalid', '/start_ms'],
        ['p25', { start_ms: '10', note: 'x' }, 'invalid', '/start_ms'],
        ['p25', { start: 10, note: 'x' }, 'invalid', '/start'],
      ]
      const before = await Promise.all((['df', 'p25', 'wav'] as const).map(count))
      for (const [key, body, code, pointer] of cases) {
        const r = await add(key, body)
        expect({ body, status: r.status, errors: r.json.errors?.map((e: any) => [e.code, e.source?.pointer]) }).toEqual(
          {
            body,
            status: 400,
            errors: [[code, pointer]],
          },
        )
      }
      expect(await Promise.all((['df', 'p25', 'wav'] as const).map(count))).toEqual(before)
      // The edges are accepted: the last frame, a range to the end.
      const last = await add('p25', { start: '10:00:01:24', end: '10:00:02:00', note: 'last frame' })
      expect(last.json).toMatchObject({ start_ms: 1960, end_ms: 2000 })
      await t.request('DELETE', at('p25', last.json.id))
    })

    test('PATCH: an unknown field names the writable ones; a read-only field changed says why; a start moved onto its end is refused', async () => {
      const made = (await add('p25', { start_ms: 0, end_ms: 400, note: 'range' })).json
      const unknown = await t.request('PATCH', at('p25', made.id), { body: { note: 'y', colour: 'blue' } })
      expectError(unknown, 400, 'invalid', { pointer: '/colour' })
      expect(unknown.json.errors[0].detail).toContain('Writable fields: start, end, start_ms, end_ms, note, color.')
      const readOnly = await t.request('PATCH', at('p25', made.id), { body: { start_timecode: '10:00:01:00' } })
      expectError(readOnly, 400, 'invalid', { pointer: '/start_timecode' })
      expect(readOnly.json.errors[0].detail).toContain('send start')
      const moved = await t.request('PATCH', at('p25', made.id), { body: { start_ms: 600 } })
      expectError(moved, 400, 'invalid', { pointer: '/start_ms' })
      // Moved with its end: accepted.
      const both = await t.request('PATCH', at('p25', made.id), { body: { start_ms: 600, end_ms: 800 } })
      expect(both.json).toMatchObject({ start_ms: 600, end_ms: 800, note: 'range' })
      await t.request('DELETE', at('p25', made.id))
    })
  })

  describe('history', () => {
    test('create, update and delete each write a row (resource marker, the production of the asset), which its readers see', async () => {
      const made = (await add('p25', { start: '10:00:00:05', note: 'first', color: 'blue' })).json
      await t.request('PATCH', at('p25', made.id), { body: { note: 'second', end_ms: 400 } })
      await t.request('PATCH', at('p25', made.id), { body: { note: 'second' } })
      await t.request('DELETE', at('p25', made.id))
      const rows = (await t.get(`/api/history/?resource=marker&id=${made.id}`)).json
      const row = (action: string, changes: Record<string, unknown>) => ({
        id: expect.any(Number),
        date: ISO,
        user: 'admin',
        via: 'api',
        resource: 'marker',
        resource_id: made.id,
        action,
        changes,
        production: m.production,
      })
      const values = { asset: m.p25.id, user: 'admin', start_ms: 200, end_ms: 400, note: 'second', color: 'blue' }
      // Newest first; the PATCH that changed nothing wrote no row.
      expect(rows).toEqual([
        row('delete', Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { old: v, new: null }]))),
        row('update', { end_ms: { old: null, new: 400 }, note: { old: 'first', new: 'second' } }),
        row(
          'create',
          Object.fromEntries(
            Object.entries({ ...values, end_ms: null, note: 'first' }).map(([k, v]) => [k, { old: null, new: v }]),
          ),
        ),
      ])
      const reader = t.makeUser('historian', { read: [m.production] })
      const stranger = t.makeUser('outsider')
      expect((await t.get(`/api/history/?resource=marker&id=${made.id}`, { key: reader })).json).toHaveLength(3)
      expect((await t.get(`/api/history/?resource=marker&id=${made.id}`, { key: stranger })).json).toEqual([])
    })
  })

  describe('permissions', () => {
    const keys = {} as Record<'reader' | 'writer' | 'editor' | 'stranger', string>
    let admins: number
    beforeAll(async () => {
      keys.reader = t.makeUser('reader', { read: [m.production] })
      keys.writer = t.makeUser('writer', { write: [m.production] })
      keys.editor = t.makeUser('editor', { write: [m.production], perms: ['browser.change_videoasset'] })
      keys.stranger = t.makeUser('stranger', { perms: ['browser.change_videoasset'] })
      admins = (await add('p25', { start_ms: 100, note: "admin's" })).json.id
    })

    test('a reader reads the list, a marker and the exports; a user who cannot read the asset gets 404 everywhere', async () => {
      for (const path of [
        at('p25'),
        at('p25', admins),
        at('p25').replace(/\/$/, '.csv'),
        at('p25').replace(/\/$/, '.edl'),
      ])
        expect({ path, status: (await t.get(path, { key: keys.reader })).status }).toEqual({ path, status: 200 })
      const stranger = keys.stranger
      for (const [method, path, body] of [
        ['GET', at('p25'), undefined],
        ['GET', at('p25', admins), undefined],
        ['GET', at('p25').replace(/\/$/, '.csv'), undefined],
        ['GET', at('p25').replace(/\/$/, '.edl'), undefined],
        ['POST', at('p25'), { start_ms: 0, note: 'x' }],
        ['POST', at('p25'), {}],
        ['PATCH', at('p25', admins), { note: 'x' }],
        ['PUT', at('p25', admins), { note: 'x', start_ms: 0 }],
        ['DELETE', at('p25', admins), undefined],
      ] as const) {
        const r = await t.request(method, path, { key: stranger, body })
        expect({ method, path, status: r.status, code: r.json?.errors?.[0]?.code }).toEqual({
          method,
          path,
          status: 404,
          code: 'not_found',
        })
      }
    })

    test('a read-only user gets 403 on POST, PATCH and DELETE, naming write access; nothing is written', async () => {
      const before = await count('p25')
      const r = await add('p25', { start_ms: 0, note: 'x' }, keys.reader)
      expectError(r, 403, 'permission_denied')
      expect(r.json.errors[0].detail).toContain(`write access to production ${m.production}`)
      expectError(
        await t.request('PATCH', at('p25', admins), { body: { note: 'x' }, key: keys.reader }),
        403,
        'permission_denied',
      )
      expectError(await t.request('DELETE', at('p25', admins), { key: keys.reader }), 403, 'permission_denied')
      expect(await count('p25')).toBe(before)
    })

    test('a writer adds markers and changes and deletes their own', async () => {
      const own = await add('p25', { start_ms: 40, note: 'mine' }, keys.writer)
      expect([own.status, own.json.user]).toEqual([201, 'writer'])
      const changed = await t.request('PATCH', at('p25', own.json.id), { body: { color: 'cyan' }, key: keys.writer })
      expect([changed.status, changed.json.color]).toEqual([200, 'cyan'])
      expect((await t.request('DELETE', at('p25', own.json.id), { key: keys.writer })).status).toBe(204)
    })

    test("another user's marker needs browser.change_videoasset too: 403 naming it for a writer; an editor changes and deletes it", async () => {
      for (const [method, body] of [
        ['PATCH', { note: 'x' }],
        ['PUT', { note: 'x', start_ms: 100 }],
        ['DELETE', undefined],
      ] as const) {
        const r = await t.request(method, at('p25', admins), { body, key: keys.writer })
        expectError(r, 403, 'permission_denied')
        expect(r.json.errors[0].detail).toContain('browser.change_videoasset')
      }
      const edited = await t.request('PATCH', at('p25', admins), { body: { note: 'edited' }, key: keys.editor })
      expect([edited.status, edited.json.note, edited.json.user]).toEqual([200, 'edited', 'admin'])
      expect((await t.request('DELETE', at('p25', admins), { key: keys.editor })).status).toBe(204)
    })
  })
})
