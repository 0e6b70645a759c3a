// The request side of POST /api/asset/import/ (api.md 4.10, service.md 9), pure: the schema, the
// rules of the three states, the formats, nulls as absent, defaults and normalization.
import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { createBodyParser } from '../../src/http/body.ts'
import { AppError, type ErrorEntry, fromValidation } from '../../src/http/errors.ts'
import { AssetImport, type AssetImportBody } from '../../src/modules/assetimport/model.ts'
import {
  type ImportRequest,
  checkImport,
  dropNulls,
  normalizeImport,
  parseImport,
  readFps,
  readTimecode,
  validateImport,
} from '../../src/modules/assetimport/rules.ts'
import { errorEntry } from '../helpers/envelope.ts'

const PATH = '/mnt/media/night-shift/video/A012C003.mov'
type Body = Record<string, any>

/** A good body of the kind, with asset_meta members and other asset members merged in. */
function body(kind: 'video' | 'audio' | 'image' = 'video', meta: Body = {}, asset: Body = {}, top: Body = {}): Body {
  return {
    type: kind,
    production: 'Night Shift',
    ...top,
    asset: { asset_meta: { name: 'A012C003', path_file: PATH, ...meta }, ...asset },
  }
}

/** [code, pointer] of every failure, as the import answers them (nulls dropped first). */
const failures = (b: unknown) =>
  validateImport(dropNulls(b)).map((e) => [e.code, (e.source as { pointer: string }).pointer])
const required = (...pointers: string[]) => pointers.map((p) => ['required', p])
const invalid = (...pointers: string[]) => pointers.map((p) => ['invalid', p])

const M = '/asset/asset_meta'
const A = '/asset/archive_details'
const ARCHIVE = { archive_handle: '10023', archive_type: 'archive_std', original_path: '/Volumes/NS/A012C003.mov' }
const ARCHIVED_ONLY_VIDEO = { duration: 4512, fps: '25', height: 1080, width: 1920 }

describe('required members', () => {
  test('a good minimal body of each kind has no failure', () => {
    for (const kind of ['video', 'audio', 'image'] as const) expect(failures(body(kind))).toEqual([])
  })

  test('each of type, production, name, path_file missing alone is one required entry at its pointer', () => {
    const cases: [string, (b: Body) => void][] = [
      ['/type', (b) => delete b.type],
      ['/production', (b) => delete b.production],
      [`${M}/name`, (b) => delete b.asset.asset_meta.name],
      [`${M}/path_file`, (b) => delete b.asset.asset_meta.path_file],
    ]
    for (const [pointer, remove] of cases) {
      const b = body()
      remove(b)
      expect(failures(b)).toEqual(required(pointer))
    }
  })

  test('all four missing at once: one entry each, nothing else', () => {
    expect(failures({ asset: { asset_meta: {} } })).toEqual(
      required('/type', '/production', `${M}/name`, `${M}/path_file`),
    )
  })

  test('a missing asset or asset_meta is one entry, not one per member inside it', () => {
    expect(failures({})).toEqual(required('/type', '/production', '/asset'))
    expect(failures({ type: 'image', production: 'P', asset: {} })).toEqual(required(`${M}`))
  })

  test('checkImport alone names the four members of rule 1', () => {
    expect(checkImport({}).map((e) => (e.source as { pointer: string }).pointer)).toEqual([
      '/type',
      '/production',
      `${M}/name`,
      `${M}/path_file`,
    ])
    expect(checkImport(null)).toEqual([])
  })
})

describe('nulls mean absent', () => {
  test('optional members sent as null, at every level, are no failure and are left out', () => {
    const b = body(
      'video',
      {
        description: null,
        date_crt: null,
        date_del: null,
        fps: null,
        path_proxy: null,
        approval: null,
        is_archive: null,
        annotation_markers: [{ time: 3, text: 'x', user: null }],
      },
      {
        technical_details: null,
        archive_details: { tape_name: null },
        keywords: { Location: ['Harbour'], People: null },
      },
      { rewrap_proxy: null, move_asset: null, asset_destination: null },
    )
    expect(failures(b)).toEqual([])
    const request = parseImport(b)
    expect(request.asset.asset_meta).toEqual({
      name: 'A012C003',
      path_file: PATH,
      is_archive: false,
      is_production: true,
      approval: 0,
      meta_field_store: {},
      annotation_markers: [{ time: 3, text: 'x' }],
    })
    expect(request.asset.keywords).toEqual({ Location: ['Harbour'] })
    expect(request.asset.archive_details).toEqual({})
  })

  test('a required member sent as null is reported required', () => {
    expect(failures(body('video', { name: null, path_file: null }, {}, { type: null, production: null }))).toEqual(
      required('/type', '/production', `${M}/name`, `${M}/path_file`),
    )
    expect(failures({ type: 'audio', production: 'P', asset: null })).toEqual(required('/asset'))
  })

  test('null stays a value in meta_field_store; null array items are invalid', () => {
    const b = body('video', { meta_field_store: { 'camera.model': null, 'scene.number': 12, 'take.good': true } })
    expect(dropNulls(b).asset.asset_meta.meta_field_store).toEqual({
      'camera.model': null,
      'scene.number': 12,
      'take.good': true,
    })
    expect(parseImport(b).asset.asset_meta.meta_field_store).toEqual({
      'camera.model': null,
      'scene.number': 12,
      'take.good': true,
    })
    expect(failures(body('video', {}, { keywords: { Location: [null] } }))).toEqual(
      invalid('/asset/keywords/Location/0'),
    )
  })

  test('dropNulls leaves the body it was given as it was', () => {
    const b = body('video', { description: null })
    dropNulls(b)
    expect(b.asset.asset_meta.description).toBeNull()
  })
})

describe('fixed choices', () => {
  test('each enum with a wrong value is invalid at its pointer', () => {
    expect(failures(body('video', {}, {}, { type: 'movie' }))).toEqual(invalid('/type'))
    expect(failures(body('video', { approval: 2 }))).toEqual(invalid(`${M}/approval`))
    expect(failures(body('video', { approval: true }))).toEqual(invalid(`${M}/approval`))
    expect(
      failures(body('video', { is_archive: true }, { archive_details: { ...ARCHIVE, archive_type: 'archive_tape' } })),
    ).toEqual(invalid(`${A}/archive_type`))
    for (const flag of ['rewrap_proxy', 'move_asset'])
      expect(failures(body('video', {}, {}, { [flag]: 'yes' }))).toEqual(invalid(`/${flag}`))
    for (const flag of ['is_archive', 'is_production'])
      expect(failures(body('video', { [flag]: 1 }))).toEqual(invalid(`${M}/${flag}`))
  })

  test('not required choices default to their first value', () => {
    const request = parseImport(body('image'))
    expect(request).toEqual({
      type: 'image',
      production: 'Night Shift',
      rewrap_proxy: false,
      move_asset: false,
      asset: {
        asset_meta: {
          name: 'A012C003',
          path_file: PATH,
          is_archive: false,
          is_production: true,
          approval: 0,
          meta_field_store: {},
        },
        technical_details: {},
        archive_details: {},
        keywords: {},
      },
    } satisfies ImportRequest)
  })

  test('archive_type is never defaulted: missing in rules 2 and 3 is required', () => {
    const { archive_type: _, ...rest } = ARCHIVE
    expect(failures(body('audio', { is_archive: true }, { archive_details: rest }))).toEqual(
      required(`${A}/archive_type`),
    )
  })
})

describe('the three states', () => {
  const ARCHIVE_MEMBERS = required(`${A}/archive_handle`, `${A}/archive_type`, `${A}/original_path`)

  test('1: not archived needs no archive details, for every kind', () => {
    for (const kind of ['video', 'audio', 'image'] as const) {
      expect(failures(body(kind, { is_archive: false }))).toEqual([])
      expect(failures(body(kind, { is_archive: false, is_production: false }))).toEqual([])
    }
  })

  test('2: archived and online needs archive_handle, archive_type, original_path, for every kind', () => {
    for (const kind of ['video', 'audio', 'image'] as const) {
      expect(failures(body(kind, { is_archive: true }))).toEqual(ARCHIVE_MEMBERS)
      expect(failures(body(kind, { is_archive: true, is_production: true }, { archive_details: {} }))).toEqual(
        ARCHIVE_MEMBERS,
      )
      expect(failures(body(kind, { is_archive: true }, { archive_details: ARCHIVE }))).toEqual([])
    }
  })

  test('3: archive only needs the same, and for video duration, fps, height and width', () => {
    for (const kind of ['audio', 'image'] as const) {
      expect(failures(body(kind, { is_archive: true, is_production: false }))).toEqual(ARCHIVE_MEMBERS)
      expect(failures(body(kind, { is_archive: true, is_production: false }, { archive_details: ARCHIVE }))).toEqual([])
    }
    expect(failures(body('video', { is_archive: true, is_production: false }))).toEqual([
      ...required(`${M}/duration`, `${M}/fps`, `${M}/height`, `${M}/width`),
      ...ARCHIVE_MEMBERS,
    ])
    for (const key of Object.keys(ARCHIVED_ONLY_VIDEO)) {
      const { [key]: _, ...rest } = ARCHIVED_ONLY_VIDEO as Body
      expect(
        failures(body('video', { is_archive: true, is_production: false, ...rest }, { archive_details: ARCHIVE })),
      ).toEqual(required(`${M}/${key}`))
    }
    expect(
      failures(
        body('video', { is_archive: true, is_production: false, ...ARCHIVED_ONLY_VIDEO }, { archive_details: ARCHIVE }),
      ),
    ).toEqual([])
  })

  test('archive_awps needs vendor_archive_index in rules 2 and 3', () => {
    const awps = { ...ARCHIVE, archive_type: 'archive_awps' }
    expect(failures(body('image', { is_archive: true }, { archive_details: awps }))).toEqual(
      required(`${A}/vendor_archive_index`),
    )
    expect(failures(body('audio', { is_archive: true, is_production: false }, { archive_details: awps }))).toEqual(
      required(`${A}/vendor_archive_index`),
    )
    expect(
      failures(
        body('image', { is_archive: true }, { archive_details: { ...awps, vendor_archive_index: 'Default-Archive' } }),
      ),
    ).toEqual([])
    for (const type of ['archive_std', 'archive_ltfs'])
      expect(
        failures(body('image', { is_archive: true }, { archive_details: { ...ARCHIVE, archive_type: type } })),
      ).toEqual([])
  })

  test('failures of the schema and of the rules come together, one entry per field, in the order of the schema', () => {
    const b = body(
      'video',
      { is_archive: true, is_production: false, width: '1920', fps: 'abc' },
      { archive_details: { archive_handle: 7 } },
      { production: null },
    )
    expect(failures(b)).toEqual([
      ...required('/production'),
      ...required(`${M}/duration`),
      ...invalid(`${M}/fps`),
      ...required(`${M}/height`),
      ...invalid(`${M}/width`, `${A}/archive_handle`),
      ...required(`${A}/archive_type`, `${A}/original_path`),
    ])
  })
})

describe('formats', () => {
  test('date_crt and date_del: YYYY[-MM[-DD]] or a date and time; anything else invalid', () => {
    for (const date of [
      '2025',
      '2025-01',
      '2025-01-14',
      '2025-01-14 21:40',
      '2025-01-14 21:40:05.123456+01:00',
      '2025-01-14T21:40:05Z',
    ])
      expect(failures(body('video', { date_crt: date, date_del: date }))).toEqual([])
    for (const date of ['14.01.2025', '2025-13', '2025-02-30', '2025-01-14 24:00', 'soon', ''])
      expect(failures(body('video', { date_crt: date, date_del: date }))).toEqual(
        invalid(`${M}/date_crt`, `${M}/date_del`),
      )
    expect(failures(body('video', { date_crt: 2025 }))).toEqual(invalid(`${M}/date_crt`))
  })

  test("dates become UTC timestamps; date_add is taken (asset_meta's before the top level's), date_mod accepted and ignored", () => {
    const meta = parseImport(
      body('video', {
        date_crt: '2025-01-14 21:40:05+01:00',
        date_del: '2030',
        date_add: '2024-02-03 04:05',
        date_mod: 5,
      }),
    ).asset.asset_meta
    expect(meta.date_crt).toBe('2025-01-14T20:40:05.000000Z')
    expect(meta.date_del).toBe('2030-01-01T00:00:00.000000Z')
    expect(meta.date_add).toBe('2024-02-03T04:05:00.000000Z')
    expect(meta).not.toContainKey('date_mod')
    expect(parseImport(body('video', {}, {}, { date_add: '2023-06' })).asset.asset_meta.date_add).toBe(
      '2023-06-01T00:00:00.000000Z',
    )
    expect(
      parseImport(body('video', { date_add: '2022' }, {}, { date_add: '2023-06' })).asset.asset_meta.date_add,
    ).toBe('2022-01-01T00:00:00.000000Z')
    expect(parseImport(body('video', {})).asset.asset_meta).not.toContainKey('date_add')
  })

  test('date_add: the forms of date_crt, in asset_meta or at the top level; anything else invalid', () => {
    for (const date of ['14.01.2025', '2025-13', 'soon', '', 2025])
      expect(failures(body('video', { date_add: date }, {}, { date_add: date }))).toEqual(
        invalid('/date_add', `${M}/date_add`),
      )
  })

  test('production: text (a name) or a JSON integer of 1 or more (an id); passed on as given', () => {
    expect(parseImport(body('video', {}, {}, { production: 12 })).production).toBe(12)
    expect(parseImport(body('video', {}, {}, { production: '12' })).production).toBe('12')
    for (const production of [0, 1.5, true, '', [12]])
      expect(failures(body('video', {}, {}, { production }))).toEqual(invalid('/production'))
  })

  test('fps: integer, decimal or fraction text, or a JSON number; stored as fraction text', () => {
    const table: [string | number, string][] = [
      ['25', '25/1'],
      ['29.97', '2997/100'],
      ['30000/1001', '30000/1001'],
      ['60000/1001', '60000/1001'],
      ['23.976', '23976/1000'],
      ['25.0', '25/1'],
      ['024', '24/1'],
      [' 50 ', '50/1'],
      [25, '25/1'],
      [29.97, '2997/100'],
      [0.5, '5/10'],
    ]
    for (const [given, stored] of table) {
      expect(failures(body('video', { fps: given }))).toEqual([])
      expect([given, parseImport(body('video', { fps: given })).asset.asset_meta.fps]).toEqual([given, stored])
    }
  })

  test('fps: zero, negative, not a number, a zero denominator or a non-number type is invalid', () => {
    for (const fps of [
      '0',
      '0/1',
      '0.0',
      '-25',
      -25,
      0,
      'abc',
      '1/0',
      '25fps',
      '25/',
      '/25',
      '.5',
      '25.',
      '1e3',
      '30000/1001/1',
      '',
      true,
      [25],
      { n: 25 },
      '99999999999999999999',
    ])
      expect([fps, failures(body('video', { fps }))]).toEqual([fps, invalid(`${M}/fps`)])
    expect(readFps(1e-7)).toBeUndefined()
    expect(readFps(Number.POSITIVE_INFINITY)).toBeUndefined()
  })

  test('offset_string: HH:MM:SS:FF or HH:MM:SS;FF within range', () => {
    for (const tc of ['00:00:00:00', '23:59:59:24', '10:00:00:00'])
      expect(failures(body('video', { fps: '25', offset_string: tc }))).toEqual([])
    for (const tc of [
      '24:00:00:00',
      '00:60:00:00',
      '00:00:60:00',
      '00:00:00:25',
      '1:00:00:00',
      '01:00:00',
      '01:00:00.00',
      '01;00;00;00',
      'abc',
      '',
    ])
      expect([tc, failures(body('video', { fps: '25', offset_string: tc }))]).toEqual([
        tc,
        invalid(`${M}/offset_string`),
      ])
    // Without fps, only the form and the ranges that do not depend on it are checked.
    expect(failures(body('video', { offset_string: '00:00:00:99' }))).toEqual([])
    expect(failures(body('video', { offset_string: '00:61:00:00' }))).toEqual(invalid(`${M}/offset_string`))
  })

  test('drop-frame timecode: an NTSC rate, and no label that drop frame skips', () => {
    expect(failures(body('video', { fps: '30000/1001', offset_string: '00:10:00;00' }))).toEqual([])
    expect(failures(body('video', { fps: '29.97', offset_string: '00:01:00;02' }))).toEqual([])
    expect(failures(body('video', { fps: '30000/1001', offset_string: '00:01:00;01' }))).toEqual(
      invalid(`${M}/offset_string`),
    )
    expect(failures(body('video', { fps: '60000/1001', offset_string: '00:01:00;03' }))).toEqual(
      invalid(`${M}/offset_string`),
    )
    expect(failures(body('video', { fps: '60000/1001', offset_string: '00:01:00;04' }))).toEqual([])
    expect(failures(body('video', { fps: '25', offset_string: '00:01:00;05' }))).toEqual(invalid(`${M}/offset_string`))
    expect(failures(body('video', { fps: '30', offset_string: '00:01:00;05' }))).toEqual(invalid(`${M}/offset_string`))
  })

  test('offset_string is ignored when offset_frames is set: not checked, not passed on', () => {
    const b = body('video', { fps: '25', offset_frames: 90000, offset_string: 'not a timecode' })
    expect(failures(b)).toEqual([])
    const meta = parseImport(b).asset.asset_meta
    expect([meta.offset_frames, meta]).toEqual([
      90000,
      expect.not.objectContaining({ offset_string: expect.anything() }),
    ])
  })

  test('offset_string gives offset_frames when only it is given and fps is known', () => {
    const table: [string, string, number][] = [
      ['25', '01:00:00:00', 90000],
      ['25', '00:00:01:05', 30],
      ['24', '10:00:00:12', 864012],
      ['30000/1001', '01:00:00:00', 108000], // non-drop counts 30 labels a second
      ['30000/1001', '01:00:00;00', 107892], // drop frame: one hour of 29.97 video
      ['29.97', '00:10:00;00', 17982],
      ['30000/1001', '00:01:00;02', 1800],
      ['60000/1001', '00:01:00;04', 3600],
    ]
    for (const [fps, tc, frames] of table) {
      const meta = parseImport(body('video', { fps, offset_string: tc })).asset.asset_meta
      expect([fps, tc, meta.offset_frames, meta.offset_string]).toEqual([fps, tc, frames, tc])
    }
    // No fps: the timecode is passed on for the service to read once the file is probed.
    const meta = parseImport(body('video', { offset_string: '01:00:00:00' })).asset.asset_meta
    expect([meta.offset_frames, meta.offset_string]).toEqual([undefined, '01:00:00:00'])
    expect(readTimecode('01:00:00:00', undefined)).toEqual({ frames: undefined })
  })

  test('integers are JSON integers: text, decimals and negatives are invalid', () => {
    for (const key of ['duration', 'height', 'width', 'offset_frames'])
      for (const value of ['1080', 1080.5, -1, '1e3'])
        expect([key, value, failures(body('video', { [key]: value }))]).toEqual([key, value, invalid(`${M}/${key}`)])
    expect(failures(body('video', { width: 0, height: 0, duration: 0, offset_frames: 0 }))).toEqual(
      invalid(`${M}/height`, `${M}/width`),
    )
    expect(failures(body('audio', {}, { technical_details: { nb_Streams: '2' } }))).toEqual(
      invalid('/asset/technical_details/nb_Streams'),
    )
  })

  test('annotation markers: time a whole number of frames >= 0, text required', () => {
    expect(
      failures(
        body('video', {
          annotation_markers: [
            { time: 0, text: 'start' },
            { time: 1250, text: 'Boom in shot', user: 'editor1' },
          ],
        }),
      ),
    ).toEqual([])
    expect(
      failures(
        body('video', {
          annotation_markers: [
            { time: -1, text: 'x' },
            { time: '12', text: 'x' },
            { time: 1.5, text: 'x' },
            { text: 'x' },
            { time: 3 },
          ],
        }),
      ),
    ).toEqual([
      ...invalid(`${M}/annotation_markers/0/time`, `${M}/annotation_markers/1/time`, `${M}/annotation_markers/2/time`),
      ...required(`${M}/annotation_markers/3/time`, `${M}/annotation_markers/4/text`),
    ])
  })

  test('text members: name and production not empty, strings where strings go', () => {
    expect(failures(body('video', { name: '' }, {}, { production: '' }))).toEqual(invalid('/production', `${M}/name`))
    expect(failures(body('video', { description: 5, path_file: 7, display_aspect_ratio: 1.78 }))).toEqual(
      invalid(`${M}/description`, `${M}/path_file`, `${M}/display_aspect_ratio`),
    )
    expect(failures(body('video', { meta_field_store: { 'a.b': { nested: 1 }, 'c/d': [1] } }))).toEqual(
      invalid(`${M}/meta_field_store/a.b`, `${M}/meta_field_store/c~1d`),
    )
    expect(failures(body('video', {}, { keywords: { '': ['x'], Location: 'Harbour' } }))).toEqual(
      invalid('/asset/keywords/Location', '/asset/keywords/'),
    )
  })
})

describe('technical details by kind', () => {
  const AUDIO = {
    name: 'interview_01',
    filename: '/mnt/audio/interview_01.wav',
    nb_Streams: 1,
    formate_name: 'wav',
    duration: '1834.25',
    com_vendor_final: 'yes',
  }

  test('audio takes the members of api.md, and unknown ones are dropped', () => {
    const b = body('audio', {}, { technical_details: { ...AUDIO, codec: 'pcm' } })
    expect(failures(b)).toEqual([])
    expect(parseImport(b).asset.technical_details).toEqual(AUDIO)
  })

  test('image takes only an empty object; video takes none (absent or empty)', () => {
    expect(failures(body('image', {}, { technical_details: {} }))).toEqual([])
    expect(failures(body('video', {}, { technical_details: {} }))).toEqual([])
    expect(failures(body('image', {}, { technical_details: { width: 100 } }))).toEqual(
      invalid('/asset/technical_details'),
    )
    expect(failures(body('video', {}, { technical_details: AUDIO }))).toEqual(invalid('/asset/technical_details'))
    expect(failures(body('image', {}, { technical_details: 'none' }))).toEqual(invalid('/asset/technical_details'))
  })
})

describe('normalized request', () => {
  test('a full video import becomes one ImportRequest', () => {
    const b = body(
      'video',
      {
        description: 'Night exterior',
        date_crt: '2025-01-14',
        date_add: '2020-01-01',
        is_archive: true,
        is_production: false,
        path_proxy: '/mnt/proxies/A012C003.mp4',
        approval: 1,
        meta_field_store: { 'scene.number': 12 },
        status_asset_description: 'ok',
        annotation_markers: [{ time: 1250, text: 'Boom in shot', user: 'editor1', colour: 'red' }],
        display_aspect_ratio: '16:9',
        duration: 4512,
        format: 'QuickTime / MOV',
        fps: 25,
        height: 2160,
        width: 3840,
        offset_string: '21:40:05:12',
        unknown: 1,
      },
      {
        archive_details: {
          ...ARCHIVE,
          archive_type: 'archive_awps',
          vendor_archive_index: 'Default-Archive',
          tape_barcode: 'NS0042L8',
        },
        keywords: { Location: ['Harbour', 'Night', 'Harbour'] },
      },
      { rewrap_proxy: true, move_asset: true, asset_destination: 'archive-nas' },
    )
    expect(parseImport(b)).toEqual({
      type: 'video',
      production: 'Night Shift',
      rewrap_proxy: true,
      move_asset: true,
      asset_destination: 'archive-nas',
      asset: {
        asset_meta: {
          name: 'A012C003',
          description: 'Night exterior',
          date_crt: '2025-01-14T00:00:00.000000Z',
          date_add: '2020-01-01T00:00:00.000000Z',
          status_asset_description: 'ok',
          is_archive: true,
          is_production: false,
          path_file: PATH,
          path_proxy: '/mnt/proxies/A012C003.mp4',
          approval: 1,
          meta_field_store: { 'scene.number': 12 },
          annotation_markers: [{ time: 1250, text: 'Boom in shot', user: 'editor1' }],
          display_aspect_ratio: '16:9',
          duration: 4512,
          format: 'QuickTime / MOV',
          fps: '25/1',
          height: 2160,
          width: 3840,
          offset_frames: ((21 * 60 + 40) * 60 + 5) * 25 + 12,
          offset_string: '21:40:05:12',
        },
        technical_details: {},
        archive_details: {
          ...ARCHIVE,
          archive_type: 'archive_awps',
          vendor_archive_index: 'Default-Archive',
          tape_barcode: 'NS0042L8',
        },
        keywords: { Location: ['Harbour', 'Night'] },
      },
    } satisfies ImportRequest)
  })

  test('asset_destination without move_asset true is accepted and ignored', () => {
    expect(failures(body('video', {}, {}, { asset_destination: 'archive-nas' }))).toEqual([])
    expect(parseImport(body('video', {}, {}, { asset_destination: 'archive-nas' }))).not.toContainKey(
      'asset_destination',
    )
    expect(
      parseImport(body('video', {}, {}, { move_asset: false, asset_destination: 'archive-nas' })),
    ).not.toContainKey('asset_destination')
  })

  test('video members are checked for every kind but passed on for video only', () => {
    expect(failures(body('audio', { fps: 'abc' }))).toEqual(invalid(`${M}/fps`))
    expect(parseImport(body('audio', { fps: '25', width: 10, annotation_markers: [] })).asset.asset_meta).toEqual({
      name: 'A012C003',
      path_file: PATH,
      is_archive: false,
      is_production: true,
      approval: 0,
      meta_field_store: {},
    })
  })

  test('normalizeImport does not change the body it was given', () => {
    const b = body('video', { fps: '25', offset_string: '00:00:01:00', extra: 1 })
    const copy = structuredClone(b)
    normalizeImport(b as AssetImportBody)
    expect(b).toEqual(copy)
  })

  test('parseImport throws one 400 AppError with every entry', () => {
    let thrown: unknown
    try {
      parseImport({ type: 'movie', asset: { asset_meta: { name: 'x', path_file: PATH, fps: '0' } } })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(AppError)
    expect((thrown as AppError).status).toBe(400)
    expect((thrown as AppError).entries).toEqual([
      errorEntry(400, 'invalid', { pointer: '/type' }),
      errorEntry(400, 'required', { pointer: '/production' }),
      errorEntry(400, 'invalid', { pointer: `${M}/fps` }),
    ])
  })
})

describe('TypeBox failures through fromValidation', () => {
  test('become the envelope entries the app renders, with nested JSON pointers', () => {
    const b = dropNulls(
      body(
        'video',
        { width: '1920', name: null, approval: 3 },
        { archive_details: { archive_type: 'tape' }, keywords: { People: [7] } },
        { move_asset: 'no' },
      ),
    )
    const entries: ErrorEntry[] = fromValidation('body', [...Value.Errors(AssetImport, b)] as never).entries
    expect(entries).toEqual([
      errorEntry(400, 'invalid', { pointer: '/move_asset' }),
      errorEntry(400, 'required', { pointer: `${M}/name` }),
      errorEntry(400, 'invalid', { pointer: `${M}/approval` }),
      errorEntry(400, 'invalid', { pointer: `${M}/width` }),
      errorEntry(400, 'invalid', { pointer: `${A}/archive_type` }),
      errorEntry(400, 'invalid', { pointer: '/asset/keywords/People/0' }),
    ])
    // validateImport gives the same entries (in the same order) when no rule adds one.
    expect(validateImport(b)).toEqual(entries)
    expect(entries.find((e) => (e.source as { pointer: string }).pointer === `${A}/archive_type`)!.detail).toBe(
      'Must be one of: archive_std, archive_ltfs, archive_awps.',
    )
  })

  test('the union members say what they take', () => {
    const [store, fps] = validateImport(body('video', { fps: false, meta_field_store: { a: [] } }))
    expect(fps!.detail).toContain('frame rate')
    expect(store!.detail).toContain('custom metadata value')
  })
})

describe('form data', () => {
  const parse = createBodyParser((method, route) =>
    method === 'POST' && route === '/api/asset/import/' ? AssetImport : undefined,
  )
  const post = (form: FormData) =>
    parse({
      request: new Request('http://h/api/asset/import/', { method: 'POST', body: form }),
      route: '/api/asset/import/',
    })

  test('asset is JSON text; the top-level booleans arrive as true/false/1/0', async () => {
    for (const [text, value] of [
      ['true', true],
      ['1', true],
      ['false', false],
      ['0', false],
    ] as const) {
      const form = new FormData()
      form.set('type', 'video')
      form.set('production', 'Night Shift')
      form.set('rewrap_proxy', text)
      form.set('move_asset', text)
      form.set(
        'asset',
        JSON.stringify({ asset_meta: { name: 'A012C003', path_file: PATH, fps: '25', description: null } }),
      )
      const parsed = await post(form)
      expect(failures(parsed)).toEqual([])
      const request = parseImport(parsed)
      expect([text, request.rewrap_proxy, request.move_asset, request.asset.asset_meta.fps]).toEqual([
        text,
        value,
        value,
        '25/1',
      ])
    }
  })

  test('asset that is not JSON, and a boolean that is not one, are invalid at their pointers', async () => {
    const form = new FormData()
    form.set('type', 'image')
    form.set('production', 'Night Shift')
    form.set('move_asset', 'perhaps')
    form.set('asset', '{not json')
    expect(failures(await post(form))).toEqual(invalid('/move_asset', '/asset'))
  })
})
