// The marker exports (docs/api.md, Markers): GET /api/{kind}assets/{id}/markers.csv and .edl on
// assets imported from real files. The EDLs are held to hand-written files (fixtures/) for a
// 29.97 drop-frame clip and a 25 fps one; the CSV to text written out here.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { reelOf } from '../../src/modules/markers/exports.ts'
import { testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import { removeScratch } from '../helpers/imports.ts'
import { hasFfmpeg } from '../helpers/media.ts'
import { type MarkerMedia, importMarkerMedia } from './media.ts'

setDefaultTimeout(60_000)

const t = testApp(undefined, { tasks: true })
let m: MarkerMedia
afterAll(async () => {
  await t.core.stop()
  t.cleanup()
  removeScratch()
})

const KIND = { df: 'video', p25: 'video', wav: 'audio', png: 'image' } as const
type Key = keyof typeof KIND
const base = (key: Key) => `/api/${KIND[key]}assets/${m[key].id}/markers`
const add = async (key: Key, body: Record<string, unknown>) => {
  const r = await t.post(`${base(key)}/`, body)
  if (r.status !== 201) throw new Error(`${r.status} ${r.text}`)
}
const fixture = (name: string) => readFileSync(join(import.meta.dir, 'fixtures', name), 'utf8')

/** Every line of `text` ends with CRLF, and it is `expected` (written with LF) once those are LF. */
function expectCrlfText(text: string, expected: string) {
  expect(text.endsWith('\r\n')).toBe(true)
  expect(text.replace(/\r\n/g, '')).not.toContain('\n')
  expect(text.replaceAll('\r\n', '\n')).toBe(expected)
}

describe.skipIf(!hasFfmpeg)('exports', () => {
  beforeAll(async () => {
    m = await importMarkerMedia(t)
    // Added out of order: the exports are in time order.
    await add('df', { start: '01:01:01;29', note: 'Line one\nline two', color: 'blue' })
    await add('df', { start: '01:00:59;29', note: 'Slate' })
    await add('df', { start: '01:01:00;02', end: '01:01:00;10', note: 'Boom, in frame', color: 'green' })
    await add('p25', { start_ms: 1999, end_ms: 2000, note: 'Tail', color: 'white' })
    await add('p25', { start: '10:00:01:00', end: '10:00:01:24', note: 'Answer', color: 'yellow' })
    await add('p25', { start: '10:00:00:00', note: 'Start of slate', color: 'magenta' })
    await add('wav', { start_ms: 1000, end_ms: 1500, note: '"Quoted" take', color: 'orange' })
    await add('wav', { start_ms: 500, note: '=1+1' })
  })

  test('EDL of the 29.97 drop-frame clip: the hand-written file (FCM: DROP FRAME, `;` labels, one event and one locator per marker)', async () => {
    const r = await t.get(`${base('df')}.edl`)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="A001C003_250114_R2KD.markers.edl"')
    expectCrlfText(r.text, fixture('df2997.edl'))
  })

  test('EDL of the 25 fps clip: the hand-written file (FCM: NON-DROP FRAME, the reel from the file name)', async () => {
    const r = await t.get(`${base('p25')}.edl/`)
    expect(r.status).toBe(200)
    expectCrlfText(r.text, fixture('p25.edl'))
  })

  test('CSV of the drop-frame clip: timecode in, out and duration, note, colour, user; a byte order mark; quoted where needed', async () => {
    const r = await t.get(`${base('df')}.csv`, { headers: { accept: 'text/csv' } })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present')
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="A001C003_250114_R2KD.markers.csv"')
    expect(r.text).toBe(
      '\uFEFFTimecode In,Timecode Out,Duration,Note,Color,User\r\n' +
        '01:00:59;29,01:00:59;29,00:00:00;00,Slate,red,admin\r\n' +
        '01:01:00;02,01:01:00;10,00:00:00;08,"Boom, in frame",green,admin\r\n' +
        '01:01:01;29,01:01:01;29,00:00:00;00,"Line one\nline two",blue,admin\r\n',
    )
  })

  test('CSV of audio without a frame rate: HH:MM:SS.mmm; a note a spreadsheet would run as a formula starts with an apostrophe', async () => {
    const r = await t.get(`${base('wav')}.csv`)
    expect(r.text).toBe(
      '\uFEFFTimecode In,Timecode Out,Duration,Note,Color,User\r\n' +
        "00:00:00.500,00:00:00.500,00:00:00.000,'=1+1,red,admin\r\n" +
        '00:00:01.000,00:00:01.500,00:00:00.500,"""Quoted"" take",orange,admin\r\n',
    )
    // No markers: the header line alone.
    expect((await t.get(`${base('png')}.csv`)).text).toBe('\uFEFFTimecode In,Timecode Out,Duration,Note,Color,User\r\n')
  })

  test('an asset without a frame rate has no EDL (409 naming the CSV); an unreadable or missing asset is 404; Accept is not looked at', async () => {
    const r = await t.get(`${base('wav')}.edl`)
    expectError(r, 409, 'conflict')
    expect(r.json.errors[0].detail).toContain('markers.csv')
    const stranger = t.makeUser('stranger')
    expectError(await t.get(`${base('df')}.edl`, { key: stranger }), 404, 'not_found')
    expectError(await t.get(`${base('df')}.csv`, { key: stranger }), 404, 'not_found')
    expectError(await t.get('/api/videoassets/999999/markers.csv'), 404, 'not_found')
    // The asset's own kind only.
    expectError(await t.get(`/api/audioassets/${m.df.id}/markers.edl`), 404, 'not_found')
    expect((await t.get(`${base('df')}.edl`, { headers: { accept: 'text/plain' } })).status).toBe(200)
    // Without a key: 401 as everywhere.
    expect((await t.get(`${base('df')}.csv`, { key: null })).status).toBe(401)
  })

  test('a file name every system takes: unsafe characters as _, the id when nothing is left', async () => {
    await t.request('PATCH', `/api/imageassets/${m.png.id}/`, { body: { name: '../Pöster "final"/v3' } })
    const r = await t.get(`${base('png')}.csv`)
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="P_ster_final_v3.markers.csv"')
    await t.request('PATCH', `/api/imageassets/${m.png.id}/`, { body: { name: '«»' } })
    expect((await t.get(`${base('png')}.csv`)).headers.get('content-disposition')).toBe(
      `attachment; filename="asset-${m.png.id}.markers.csv"`,
    )
  })
})

test('reel names from file names: letters and digits, at most 8; AX when none', () => {
  expect(['A001C003_250114_R2KD.mov', 'B002_interview.mov', 'take 1.wav', '___.mxf', 'noext'].map(reelOf)).toEqual([
    'A001C003',
    'B002inte',
    'take1',
    'AX',
    'noext',
  ])
})
