// POST /api/asset/import/ of a path in a camera card, and of what is never imported (docs/cards.md):
// a clip's essence is imported with its card's facts (technical.card) under the name the request
// gives; a file of the card that is no clip's essence is refused with 406 and an ImportLog saying
// why (and which file is its clip's asset); a clip with move_asset is 400 at /move_asset (a card
// moves whole, through the watch folder); editing applications' caches, AppleDouble files and the
// production's own ignore patterns are refused with 406 and their ImportLog. Real folders, real
// SQLite, through app.handle.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import {
  IMPORT,
  type Sender,
  appWithFfmpegDir,
  importBody,
  logsOf,
  placeFile,
  removeScratch,
} from '../helpers/imports.ts'
import { hasFfmpeg } from '../helpers/media.ts'

let t: TestApp
let send: Sender
let root: string
let show: { id: number; name: string; storage_root: string }

const NRT = `<?xml version="1.0" encoding="UTF-8"?>
<NonRealTimeMeta xmlns="urn:schemas-professionalDisc:nonRealTimeMeta:ver.2.00">
  <Duration value="125"/>
  <LtcChangeTable tcFps="25" halfStep="false"><LtcChange frameCount="0" value="12345613" status="increment"/></LtcChangeTable>
  <VideoFormat><VideoFrame videoCodec="AVC_1920_1080_H422IP@L41" captureFps="50p" formatFps="25p"/></VideoFormat>
  <Device manufacturer="Sony" modelName="ILME-FX3" serialNo="4242"/>
</NonRealTimeMeta>
`

beforeAll(async () => {
  t = testApp(undefined, { tasks: false })
  send = t.request
  ;({ root, production: show } = await seedProduction(t))
  const card = join(root, 'incoming', 'CARD_07', 'PRIVATE', 'M4ROOT')
  placeFile(join(card, 'CLIP', 'C0007.MP4'))
  placeFile(join(card, 'CLIP', 'C0007M01.XML'), NRT)
  placeFile(join(card, 'SUB', 'C0007S03.MP4'), 'proxy\n')
  placeFile(join(card, 'THMBNL', 'C0007T01.JPG'), 'thumbnail\n')
  placeFile(join(card, 'MEDIAPRO.XML'), '<MediaProfile/>\n')
  const p2 = join(root, 'incoming', 'P2_A', 'CONTENTS')
  placeFile(join(p2, 'VIDEO', '0001AB.MXF'))
  placeFile(join(p2, 'AUDIO', '0001AB00.MXF'), 'audio\n')
  placeFile(join(root, 'incoming', 'XF', 'CONTENTS', 'CLIPS001', 'AA0001', 'AA000101.MXF'))
  placeFile(join(root, 'incoming', 'XF', 'CONTENTS', 'CLIPS001', 'AA0001', 'AA000102.MXF'), 'second\n')
})

afterAll(() => {
  t.cleanup()
  removeScratch()
})

const sony = (...names: string[]) => join(root, 'incoming', 'CARD_07', 'PRIVATE', 'M4ROOT', ...names)

describe('a path in a camera card', () => {
  test("a clip's essence: 201, named as the request says, with its card's facts in technical.card", async () => {
    const path = sony('CLIP', 'C0007.MP4')
    const r = await send('POST', IMPORT, { body: importBody(path, { name: 'Interview wide' }) })
    expect(r.status).toBe(201)
    const asset = (await send('GET', `/api/videoassets/${r.json.asset_import_id}/`)).json
    expect([asset.name, asset.path_file]).toEqual(['Interview wide', path])
    expect(asset.technical.card).toEqual({
      format: 'xavc',
      format_name: 'Sony XAVC (PRIVATE/M4ROOT)',
      card_folder: 'CARD_07',
      clip: 'C0007',
      essence: 'PRIVATE/M4ROOT/CLIP/C0007.MP4',
      files: [
        'PRIVATE/M4ROOT/CLIP/C0007M01.XML',
        'PRIVATE/M4ROOT/SUB/C0007S03.MP4',
        'PRIVATE/M4ROOT/THMBNL/C0007T01.JPG',
      ],
      sidecar: 'PRIVATE/M4ROOT/CLIP/C0007M01.XML',
      timecode: '13:56:34:12',
      timecode_rate: '25',
      capture_fps: '50p',
      duration_frames: 125,
      camera: { manufacturer: 'Sony', model: 'ILME-FX3', serial: '4242' },
    })
  })

  test("a file of the card that is no clip's essence: 406 naming why and its clip's asset, with its ImportLog; nothing catalogued", async () => {
    const cases: [string, string][] = [
      [
        sony('SUB', 'C0007S03.MP4'),
        `path_file is part of a Sony XAVC (PRIVATE/M4ROOT) card: a proxy (SUB); it is not imported as an asset of its own (its clip's asset is ${sony('CLIP', 'C0007.MP4')}).`,
      ],
      [
        join(root, 'incoming', 'P2_A', 'CONTENTS', 'AUDIO', '0001AB00.MXF'),
        `path_file is part of a Panasonic P2 (CONTENTS) card: an audio track of the clip (P2 keeps each track in an MXF of its own); it is not imported as an asset of its own (its clip's asset is ${join(root, 'incoming', 'P2_A', 'CONTENTS', 'VIDEO', '0001AB.MXF')}).`,
      ],
      [
        join(root, 'incoming', 'XF', 'CONTENTS', 'CLIPS001', 'AA0001', 'AA000102.MXF'),
        `path_file is part of a Canon XF (CONTENTS/CLIPS001) card: a further segment of the spanned clip AA0001 (its first segment is the asset); it is not imported as an asset of its own (its clip's asset is ${join(root, 'incoming', 'XF', 'CONTENTS', 'CLIPS001', 'AA0001', 'AA000101.MXF')}).`,
      ],
    ]
    for (const [path, detail] of cases) {
      const r = await send('POST', IMPORT, { body: importBody(path) })
      expect([r.status, r.json]).toEqual([406, { type: 'path_file', detail }])
      expect((await logsOf(send, path)).map((l) => [l.status, l.error])).toEqual([[detail, detail]])
      expect((await send('GET', `/api/videoassets/?path_file=${encodeURIComponent(path)}`)).json).toEqual([])
    }
  })

  test('an ARRI reel folder and a RED card: the clip (camera raw for RED) with its card facts; a further R3D segment is 406', async () => {
    const reel = join(root, 'incoming', 'A002R3CD')
    const mxf = placeFile(join(reel, 'A002C004_240501_R3CD.mxf'))
    const r = await send('POST', IMPORT, { body: importBody(mxf) })
    expect(r.status).toBe(201)
    expect((await send('GET', `/api/videoassets/${r.json.asset_import_id}/`)).json.technical.card).toEqual({
      format: 'arri',
      format_name: 'ARRI (reel folder)',
      card_folder: 'A002R3CD',
      clip: 'A002C004_240501_R3CD',
      essence: 'A002C004_240501_R3CD.mxf',
      files: [],
      reel: 'A002',
    })
    const rdc = join(root, 'incoming', 'RED_1', 'A003_0501ZZ.RDM', 'A003_C007_0501EF.RDC')
    const first = placeFile(join(rdc, 'A003_C007_0501EF_001.R3D'))
    const second = placeFile(join(rdc, 'A003_C007_0501EF_002.R3D'))
    const red = await send('POST', IMPORT, { body: importBody(first) })
    expect(red.status).toBe(201)
    expect((await send('GET', `/api/videoassets/${red.json.asset_import_id}/`)).json.technical.card).toMatchObject({
      format: 'red',
      card_folder: 'RED_1',
      clip: 'A003_C007_0501EF',
      raw: true,
      segments: 2,
      files: ['A003_0501ZZ.RDM/A003_C007_0501EF.RDC/A003_C007_0501EF_002.R3D'],
    })
    expect((await send('POST', IMPORT, { body: importBody(second) })).status).toBe(406)
  })

  test('a clip with move_asset: 400 invalid at /move_asset (a card moves whole), nothing written', async () => {
    const path = join(root, 'incoming', 'P2_A', 'CONTENTS', 'VIDEO', '0001AB.MXF')
    const r = await send('POST', IMPORT, { body: importBody(path, {}, {}, { move_asset: true }) })
    expect([r.status, r.json.errors[0].code, r.json.errors[0].source]).toEqual([
      400,
      'invalid',
      { pointer: '/move_asset' },
    ])
    expect(await logsOf(send, path)).toEqual([])
    // Without it, the clip is imported where it lies.
    expect((await send('POST', IMPORT, { body: importBody(path) })).status).toBe(201)
  })
})

describe('never imported', () => {
  test("editing applications' caches, AppleDouble files and the production's own patterns: 406 with their ImportLog", async () => {
    expect(
      (
        await send('PATCH', `/api/productions/${show.id}/`, {
          body: { ignore_patterns: ['*.lrf.mp4', 'incoming/refs'] },
        })
      ).status,
    ).toBe(200)
    const cases: [string, string][] = [
      [
        join(root, 'incoming', 'Resolve', 'CacheClip', 'render.mov'),
        "path_file is never imported: inside CacheClip (DaVinci Resolve's render cache: an editing application's own files are never imported).",
      ],
      [
        join(root, 'incoming', 'edit', 'Adobe Premiere Pro Preview Files', 'show.PRV', 'preview.mov'),
        "path_file is never imported: inside Adobe Premiere Pro Preview Files (Premiere Pro's render previews: an editing application's own files are never imported).",
      ],
      [join(root, 'incoming', '._clip.mov'), 'path_file is never imported: an AppleDouble file (._*).'],
      [
        join(root, 'incoming', 'drone', 'DJI_0001.LRF.MP4'),
        `path_file matches the production's ignore pattern "*.lrf.mp4": it is never imported.`,
      ],
      [
        join(root, 'incoming', 'refs', 'look.mov'),
        `path_file matches the production's ignore pattern "incoming/refs": it is never imported.`,
      ],
    ]
    for (const [path, detail] of cases) {
      placeFile(path)
      const r = await send('POST', IMPORT, { body: importBody(path) })
      expect([r.status, r.json]).toEqual([406, { type: 'path_file', detail }])
      expect((await logsOf(send, path)).map((l) => [l.status, l.error])).toEqual([[detail, detail]])
    }
    // The same names elsewhere are imported.
    for (const path of [join(root, 'incoming', 'drone', 'DJI_0001.MP4'), join(root, 'incoming', 'refs.mov')])
      expect([path, (await send('POST', IMPORT, { body: importBody(placeFile(path)) })).status]).toEqual([path, 201])
  })
})

describe('camera raw with ffmpeg installed', () => {
  test.skipIf(!hasFfmpeg)(
    'an R3D clip is imported complete, not probed and without a proxy (ffprobe reads no camera raw), with warnings saying so',
    async () => {
      const withTasks = appWithFfmpegDir(t, undefined)
      try {
        const rdc = join(root, 'incoming', 'RED_2', 'A004_0601ZZ.RDM', 'A004_C001_0601AB.RDC')
        const path = placeFile(join(rdc, 'A004_C001_0601AB_001.R3D'), 'not a movie ffprobe could read\n')
        const r = await withTasks.post(IMPORT, importBody(path))
        expect(r.status).toBe(201)
        await withTasks.runner.idle()
        const [log] = await logsOf(withTasks.request, path)
        expect([log!.status, Object.keys(log!.warning).sort()]).toEqual(['import_completed', ['probe', 'proxy']])
        expect(log!.warning.probe).toContain('camera raw')
        const asset = (await withTasks.get(`/api/videoassets/${r.json.asset_import_id}/`)).json
        expect([asset.status_asset, asset.path_proxy]).toEqual([6, ''])
      } finally {
        await withTasks.stop()
      }
    },
    60_000,
  )
})
