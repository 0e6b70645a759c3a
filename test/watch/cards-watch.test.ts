// Camera cards through the watcher (docs/cards.md), as serve runs it: real folders, real SQLite,
// real HTTP. The user's failure: two Sony cards, each PRIVATE/M4ROOT/CLIP/C0001.MP4 with
// C0001M01.XML beside it, dropped into a move_uploads production came out flattened as C0001.MP4 and
// C0001_1.MP4, the XML left behind. Now each card moves whole under a folder named after it, its
// clips never renamed, one asset per clip with the card's facts; a card whose folder name is taken
// gets `_1` on the card's folder. Editing applications' caches, Thumbs.db and the production's own
// ignore patterns are never imported.
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { type CoreOn, createCore } from '../../src/core.ts'
import type { SqlitePort } from '../../src/db/port.ts'
import { MHL_FOLDER, expectedHashes, newGeneration, readHistory } from '../../src/storage/mhl.ts'
import { silentLog } from '../../src/util/log.ts'
import { type TestApp, readResponse, testApp } from '../helpers/app.ts'
import { allLogs, emptyFfmpegDir, removeScratch, scratchDir } from '../helpers/imports.ts'
import { OTHER_TMP } from '../helpers/temp.ts'
import { waitFor } from '../helpers/wait.ts'
import { runSync } from '../../src/db/port.ts'

const SETTLE_MS = 200

let base: TestApp
let core: CoreOn<SqlitePort> | undefined

afterEach(async () => {
  await core?.stop()
  core = undefined
  base?.cleanup()
  removeScratch()
})

/** The regular files below `dir`, relative to it, sorted. */
const filesBelow = (dir: string) =>
  existsSync(dir)
    ? (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
        .filter((d) => d.isFile())
        .map((d) => join(d.parentPath, d.name).slice(dir.length + 1))
        .sort()
    : []

const write = (path: string, text: string) => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

/** Sony's NRT XML as an FX6 writes it, with this start timecode (the LTC word) and serial number. */
const nrt = (ltc: string, serial: string) => `<?xml version="1.0" encoding="UTF-8"?>
<NonRealTimeMeta xmlns="urn:schemas-professionalDisc:nonRealTimeMeta:ver.2.00" xmlns:lib="urn:schemas-professionalDisc:lib:ver.2.00" lastUpdate="2024-05-01T10:00:00+02:00">
  <TargetMaterial umidRef="060A2B340101010501010D4313000000C20AA47F479805C59C50D1FFFEAC3B63"/>
  <Duration value="250"/>
  <LtcChangeTable tcFps="25" halfStep="false">
    <LtcChange frameCount="0" value="${ltc}" status="increment"/>
    <LtcChange frameCount="249" value="24090001" status="end"/>
  </LtcChangeTable>
  <CreationDate value="2024-05-01T10:00:00+02:00"/>
  <VideoFormat>
    <VideoRecPort port="DIRECT"/>
    <VideoFrame videoCodec="AVC_3840_2160_HP@L51" captureFps="25p" formatFps="25p"/>
  </VideoFormat>
  <Device manufacturer="Sony" modelName="ILME-FX6V" serialNo="${serial}"/>
  <Lens modelName="FE 24-70mm F2.8 GM"/>
</NonRealTimeMeta>
`

/** A Sony XAVC card as an FX6 lays it out, in `root`, one clip C0001 (texts told apart by `tag`). */
function sonyCard(root: string, tag: string, ltc: string, serial: string) {
  const m4 = join(root, 'PRIVATE', 'M4ROOT')
  write(join(m4, 'CLIP', 'C0001.MP4'), `essence of ${tag}\n`)
  write(join(m4, 'CLIP', 'C0001M01.XML'), nrt(ltc, serial))
  write(join(m4, 'THMBNL', 'C0001T01.JPG'), `thumbnail of ${tag}\n`)
  write(join(m4, 'SUB', 'C0001S03.MP4'), `proxy of ${tag}\n`)
  write(join(m4, 'MEDIAPRO.XML'), `<MediaProfile card="${tag}"/>\n`)
  write(join(m4, 'STATUS.BIN'), `status of ${tag}\n`)
  // A wrangler's checksum list beside the card's folders: the card's folder's, moved with it.
  write(join(root, 'card.mhl'), `<hashlist card="${tag}"/>\n`)
}

/** The files of a Sony card as sonyCard makes them, relative to its folder. */
const SONY_FILES = [
  'PRIVATE/M4ROOT/CLIP/C0001.MP4',
  'PRIVATE/M4ROOT/CLIP/C0001M01.XML',
  'PRIVATE/M4ROOT/MEDIAPRO.XML',
  'PRIVATE/M4ROOT/STATUS.BIN',
  'PRIVATE/M4ROOT/SUB/C0001S03.MP4',
  'PRIVATE/M4ROOT/THMBNL/C0001T01.JPG',
  'card.mhl',
]

type Send = (method: string, path: string, body?: unknown) => ReturnType<typeof readResponse>
let send: Send

async function boot() {
  core = createCore(base.db, {
    log: silentLog,
    ffmpegDir: emptyFfmpegDir(),
    settleMs: SETTLE_MS,
    watch: { poll: false, pollIntervalMs: 100, rescanMs: 0 },
  })
  const app = createApp(core)
  send = async (method, path, body) =>
    readResponse(
      await app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: {
            authorization: `Token ${base.adminKey}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
        }),
      ),
    )
  core.start()
  await waitFor(() => (core!.watch?.status() ?? []).every((s) => s.ready), 'the watcher to be ready', {
    ms: 30_000,
    everyMs: 20,
  })
  await waitFor(() => core!.watch!.importsOpen(), 'the start scans', { ms: 30_000, everyMs: 20 })
}

type Asset = {
  id: number
  name: string
  path_file: string
  production: number
  is_production: boolean
  status_asset: number
}
const all = async (kind: 'video' | 'audio' | 'image') =>
  (await send('GET', `/api/${kind}assets/?limit=1000`)).json as Asset[]

/** A full scan of every device, awaited; its results. */
async function fullScans() {
  const ids = (await send('GET', '/api/devices/')).json.map(
    (d: { id: number }) =>
      runSync(
        base.db,
        core!.runner.enqueue({
          kind: 'scan',
          target: { device: d.id },
          production: null,
          params: { device: d.id, paths: null },
          key: `scan:${d.id}`,
        }),
      ).id,
  )
  await waitFor(
    async () => {
      for (const id of ids)
        if (!['done', 'failed'].includes((await send('GET', `/api/tasks/${id}/`)).json.state)) return false
      return true
    },
    'the full scans',
    { ms: 60_000, everyMs: 50 },
  )
  await core!.runner.idle()
  return Promise.all(ids.map(async (id: number) => (await send('GET', `/api/tasks/${id}/`)).json))
}

describe('camera cards dropped into a move_uploads production', () => {
  for (const across of [false, true]) {
    test.skipIf(across && OTHER_TMP === undefined)(
      across
        ? 'two Sony cards on another file system: each copied whole, verified, under its own card folder; no clip renamed'
        : 'two Sony cards, each with C0001: each card moves whole under a folder named after it (a taken name gets _1 on the card folder), clips never renamed, sidecars along, one asset per clip with its card facts',
      async () => {
        base = testApp(undefined, { tasks: false })
        const nas = scratchDir('reelhouse-cards-nas-')
        expect((await base.post('/api/devices/', { name: 'nas', path: nas })).status).toBe(201)
        const dropDisk = across ? scratchDir('reelhouse-cards-drop-', OTHER_TMP) : nas
        if (across) expect((await base.post('/api/devices/', { name: 'drop', path: dropDisk })).status).toBe(201)
        const drop = join(dropDisk, 'drop', 'A')
        const made = await base.post('/api/productions/', {
          name: 'A',
          storage_root: join(nas, 'A'),
          upload_root: drop,
          move_uploads: true,
        })
        expect(made.status).toBe(201)
        const a = made.json
        // A folder named like the first card already in the production's video folder: the card's
        // folder name is taken, and the card goes to A001_1 (never a clip renamed).
        write(join(nas, 'A', 'video', 'A001', 'notes.txt'), 'an earlier folder of that name\n')
        await boot()
        sonyCard(join(drop, 'A001'), 'card A001', '00000001', '1000001')
        sonyCard(join(drop, 'B001'), 'card B001', '00001001', '1000002')
        // A photo the camera took onto the same card: an image asset of its own, moved with its card.
        write(join(drop, 'B001', 'DCIM', '100MSDCF', 'DSC00001.JPG'), 'a still\n')
        await waitFor(
          async () =>
            [...(await all('video')), ...(await all('image'))].filter((x) => x.status_asset === 6 && x.is_production)
              .length >= 3,
          'the two cards to be imported and moved',
          { ms: 90_000, everyMs: 50 },
        )
        await core!.runner.idle()
        // Nothing new at a full scan: the cards' files at their new places are the assets' and the cards' own.
        for (const scan of await fullScans())
          expect([scan.state, scan.result.imported, scan.result.waiting]).toEqual(['done', 0, 0])

        const videos = await all('video')
        const at = {
          A001: join(nas, 'A', 'video', 'A001_1', 'PRIVATE', 'M4ROOT', 'CLIP', 'C0001.MP4'),
          B001: join(nas, 'A', 'video', 'B001', 'PRIVATE', 'M4ROOT', 'CLIP', 'C0001.MP4'),
        }
        // Two assets, both named after the clip, at the clips' own names in two card folders.
        expect(videos.map((x) => [x.name, x.path_file, x.production, x.is_production, x.status_asset]).sort()).toEqual(
          [
            ['C0001', at.A001, a.id, true, 6],
            ['C0001', at.B001, a.id, true, 6],
          ].sort(),
        )
        // Nothing else became an asset: not the SUB proxy (an MP4), not the thumbnail (a JPG); the
        // still of DCIM is an image asset, at its place in its card.
        const still = join(nas, 'A', 'video', 'B001', 'DCIM', '100MSDCF', 'DSC00001.JPG')
        expect((await all('image')).map((x) => [x.name, x.path_file, x.status_asset])).toEqual([['DSC00001', still, 6]])
        expect((await all('audio')).length).toBe(0)
        // Every file of each card moved with it, whole; nothing left in the drop folder, no card folder either.
        const noHistory = (files: string[]) => files.filter((f) => !f.startsWith('ascmhl/'))
        expect(noHistory(filesBelow(join(nas, 'A', 'video', 'A001_1')))).toEqual(SONY_FILES)
        expect(noHistory(filesBelow(join(nas, 'A', 'video', 'B001')))).toEqual(
          ['DCIM/100MSDCF/DSC00001.JPG', ...SONY_FILES].sort(),
        )
        // Copied across file systems, each card got an ASC MHL history at its root recording every
        // file with the hash of its verified copy (one generation per clip's import); a card that
        // was renamed into place had no bytes copied and gets none.
        for (const [card, files] of [
          ['A001_1', SONY_FILES],
          ['B001', ['DCIM/100MSDCF/DSC00001.JPG', ...SONY_FILES].sort()],
        ] as const) {
          const root = join(nas, 'A', 'video', card)
          if (!across) {
            expect(existsSync(join(root, 'ascmhl'))).toBe(false)
            continue
          }
          const history = readHistory(root)
          expect(history.generations.length).toBe(card === 'B001' ? 2 : 1)
          const recorded = Object.fromEntries(expectedHashes(history))
          expect(recorded).toEqual(
            Object.fromEntries(
              files.map((f) => [
                f,
                Bun.hash
                  .xxHash64(readFileSync(join(root, f)), 0n)
                  .toString(16)
                  .padStart(16, '0'),
              ]),
            ),
          )
        }
        expect(filesBelow(join(nas, 'A', 'video', 'A001'))).toEqual(['notes.txt'])
        expect(readFileSync(at.A001, 'utf8')).toBe('essence of card A001\n')
        expect(readFileSync(at.B001, 'utf8')).toBe('essence of card B001\n')
        expect(
          readFileSync(join(nas, 'A', 'video', 'B001', 'PRIVATE', 'M4ROOT', 'CLIP', 'C0001M01.XML'), 'utf8'),
        ).toContain('serialNo="1000002"')
        expect(filesBelow(drop)).toEqual([])
        expect(readdirSync(drop)).toEqual([])
        // The card's facts, read from its NRT XML, in technical.card.
        const detail = async (path: string) =>
          (await send('GET', `/api/videoassets/${videos.find((x) => x.path_file === path)!.id}/`)).json.technical
        const technicalA = await detail(at.A001)
        expect(technicalA.card).toMatchObject({
          format: 'xavc',
          card_folder: 'A001',
          clip: 'C0001',
          essence: 'PRIVATE/M4ROOT/CLIP/C0001.MP4',
          files: [
            'PRIVATE/M4ROOT/CLIP/C0001M01.XML',
            'PRIVATE/M4ROOT/SUB/C0001S03.MP4',
            'PRIVATE/M4ROOT/THMBNL/C0001T01.JPG',
          ],
          sidecar: 'PRIVATE/M4ROOT/CLIP/C0001M01.XML',
          timecode: '01:00:00:00',
          timecode_rate: '25',
          capture_fps: '25p',
          duration_frames: 250,
          camera: { manufacturer: 'Sony', model: 'ILME-FX6V', serial: '1000001' },
          lens: 'FE 24-70mm F2.8 GM',
        })
        expect((await detail(at.B001)).card).toMatchObject({
          card_folder: 'B001',
          timecode: '01:10:00:00',
          camera: { serial: '1000002' },
        })
        // Across file systems each file was copied and checked by hash; the essence's hash is kept.
        const xxh64 = (path: string) => Bun.hash.xxHash64(readFileSync(path), 0n).toString(16).padStart(16, '0')
        expect(technicalA.hashes).toEqual(across ? { xxh64: xxh64(at.A001) } : undefined)
        // One ImportLog per clip, saying the move; none for the cards' other files.
        const logs = (await allLogs((m, p) => send(m, p))).filter((l) => l.asset_path.startsWith(drop))
        expect(logs.map((l) => [l.asset_path, l.status, l.asset_config.move_asset]).sort()).toEqual(
          [
            [join(drop, 'A001', 'PRIVATE', 'M4ROOT', 'CLIP', 'C0001.MP4'), 'import_completed', true],
            [join(drop, 'B001', 'PRIVATE', 'M4ROOT', 'CLIP', 'C0001.MP4'), 'import_completed', true],
            [join(drop, 'B001', 'DCIM', '100MSDCF', 'DSC00001.JPG'), 'import_completed', true],
          ].sort(),
        )
        // No temporary name anywhere.
        expect(filesBelow(nas).filter((f) => f.includes('.reelhouse-'))).toEqual([])
      },
      180_000,
    )
  }
})

describe('cards in a watch folder, catalogued where they lie', () => {
  test('P2, RED, Canon XF, ARRIRAW and CinemaDNG cards: one asset per clip, named after it; P2 audio MXFs, further segments and frames, proxies, thumbnails and sound files are no assets; nothing moves', async () => {
    base = testApp(undefined, { tasks: false })
    const nas = scratchDir('reelhouse-cards-nas-')
    expect((await base.post('/api/devices/', { name: 'nas', path: nas })).status).toBe(201)
    const drop = join(nas, 'drop')
    const made = await base.post('/api/productions/', { name: 'A', storage_root: join(nas, 'A'), upload_root: drop })
    expect(made.status).toBe(201)
    await boot()
    const files: Record<string, string> = {
      'P2_01/CONTENTS/VIDEO/0001AB.MXF': 'video',
      'P2_01/CONTENTS/AUDIO/0001AB00.MXF': 'audio 1',
      'P2_01/CONTENTS/AUDIO/0001AB01.MXF': 'audio 2',
      'P2_01/CONTENTS/CLIP/0001AB.XML':
        '<P2Main><ClipContent><Duration>300</Duration><EditUnit>1/25</EditUnit><EssenceList><Video><StartTimecode>10:00:00:00</StartTimecode></Video></EssenceList><ClipMetadata><Device><Manufacturer>Panasonic</Manufacturer><ModelName>AJ-PX800G</ModelName></Device></ClipMetadata></ClipContent></P2Main>',
      'P2_01/CONTENTS/ICON/0001AB.BMP': 'icon',
      'P2_01/CONTENTS/PROXY/0001AB.MP4': 'proxy',
      'RED_01/A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_001.R3D': 'r3d 1',
      'RED_01/A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_002.R3D': 'r3d 2',
      'XF_01/CONTENTS/CLIPS001/AA0001/AA000101.MXF': 'xf 1',
      'XF_01/CONTENTS/CLIPS001/AA0001/AA000102.MXF': 'xf 2',
      'XF_01/CONTENTS/CLIPS001/AA0001/AA0001.XML': '<ClipInfo/>',
      'XF_01/CONTENTS/CLIPS001/AA0001/AA000101.JPG': 'thumbnail',
      // Image sequences: one asset each, the first frame; the further frames stay new files no
      // scan takes (and none waits for them).
      'A001R1AB/A001C003_220101_R1AB/A001C003_220101_R1AB.0000001.ari': 'frame 1',
      'A001R1AB/A001C003_220101_R1AB/A001C003_220101_R1AB.0000002.ari': 'frame 2',
      'A001R1AB/A001C003_220101_R1AB/A001C003_220101_R1AB.0000003.ari': 'frame 3',
      'BMCARD/A001_08251300_C003/A001_08251300_C003_000000.dng': 'dng 0',
      'BMCARD/A001_08251300_C003/A001_08251300_C003_000001.dng': 'dng 1',
      'BMCARD/A001_08251300_C003/A001_08251300_C003.wav': 'sound',
    }
    for (const [rel, text] of Object.entries(files)) write(join(drop, rel), `${text}\n`)
    await waitFor(async () => (await all('video')).length >= 5, 'the five clips to be imported', {
      ms: 60_000,
      everyMs: 50,
    })
    await core!.runner.idle()
    for (const scan of await fullScans())
      expect([scan.state, scan.result.imported, scan.result.waiting]).toEqual(['done', 0, 0])
    const videos = await all('video')
    expect(videos.map((x) => [x.name, x.path_file, x.status_asset]).sort()).toEqual(
      [
        ['0001AB', join(drop, 'P2_01/CONTENTS/VIDEO/0001AB.MXF'), 6],
        ['A001_C001_0101AB', join(drop, 'RED_01/A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_001.R3D'), 6],
        ['AA0001', join(drop, 'XF_01/CONTENTS/CLIPS001/AA0001/AA000101.MXF'), 6],
        ['A001C003_220101_R1AB', join(drop, 'A001R1AB/A001C003_220101_R1AB/A001C003_220101_R1AB.0000001.ari'), 6],
        ['A001_08251300_C003', join(drop, 'BMCARD/A001_08251300_C003/A001_08251300_C003_000000.dng'), 6],
      ].sort(),
    )
    expect([(await all('audio')).length, (await all('image')).length]).toEqual([0, 0])
    expect(filesBelow(drop)).toEqual(Object.keys(files).sort())
    const technical = async (name: string) =>
      (await send('GET', `/api/videoassets/${videos.find((x) => x.name === name)!.id}/`)).json.technical
    expect((await technical('0001AB')).card).toMatchObject({
      format: 'p2',
      card_folder: 'P2_01',
      files: [
        'CONTENTS/AUDIO/0001AB00.MXF',
        'CONTENTS/AUDIO/0001AB01.MXF',
        'CONTENTS/CLIP/0001AB.XML',
        'CONTENTS/ICON/0001AB.BMP',
        'CONTENTS/PROXY/0001AB.MP4',
      ],
      timecode: '10:00:00:00',
      camera: { manufacturer: 'Panasonic', model: 'AJ-PX800G' },
    })
    expect((await technical('A001_C001_0101AB')).card).toMatchObject({
      format: 'red',
      raw: true,
      segments: 2,
      reel: 'A001',
    })
    expect((await technical('AA0001')).card).toMatchObject({ format: 'canon-xf', segments: 2 })
    expect((await technical('A001C003_220101_R1AB')).card).toMatchObject({ format: 'arri', raw: true, frames: 3 })
    expect((await technical('A001_08251300_C003')).card).toMatchObject({
      format: 'blackmagic',
      frames: 2,
      files: ['A001_08251300_C003/A001_08251300_C003.wav'],
    })
  }, 120_000)

  test('a card is imported once all of it has settled, not file by file: a clip of it waits while another file of the card is still written', async () => {
    base = testApp(undefined, { tasks: false })
    const nas = scratchDir('reelhouse-cards-nas-')
    expect((await base.post('/api/devices/', { name: 'nas', path: nas })).status).toBe(201)
    const drop = join(nas, 'drop')
    expect(
      (await base.post('/api/productions/', { name: 'A', storage_root: join(nas, 'A'), upload_root: drop })).status,
    ).toBe(201)
    await boot()
    const card = join(drop, 'A001', 'PRIVATE', 'M4ROOT')
    write(join(card, 'CLIP', 'C0001.MP4'), 'clip one\n')
    write(join(card, 'CLIP', 'C0001M01.XML'), nrt('00000001', '1'))
    // The second clip's proxy is still being copied: appended to every 50 ms for 1.5 s (7 settle times).
    const growing = join(card, 'SUB', 'C0002S03.MP4')
    write(growing, 'proxy')
    write(join(card, 'CLIP', 'C0002.MP4'), 'clip two\n')
    const until = Date.now() + 1500
    let seen = 0
    while (Date.now() < until) {
      await Bun.sleep(50)
      writeFileSync(growing, `${readFileSync(growing, 'utf8')}.`)
      seen = Math.max(seen, (await all('video')).length)
    }
    // The first clip was complete (settled as a file long ago), yet nothing of the card was imported.
    expect(seen).toBe(0)
    await waitFor(async () => (await all('video')).length >= 2, 'the card to be imported once settled', {
      ms: 60_000,
      everyMs: 50,
    })
    await core!.runner.idle()
    expect((await all('video')).map((x) => x.name).sort()).toEqual(['C0001', 'C0002'])
  }, 120_000)
})

describe('never imported: editing applications’ caches, desktop files, the production’s own ignore patterns', () => {
  test('Premiere, Resolve, Avid and Final Cut caches, Thumbs.db and AppleDouble files stay out; a pattern PATCHed on the production keeps its files out too; the rest is imported', async () => {
    base = testApp(undefined, { tasks: false })
    const nas = scratchDir('reelhouse-cards-nas-')
    expect((await base.post('/api/devices/', { name: 'nas', path: nas })).status).toBe(201)
    const drop = join(nas, 'drop')
    const made = await base.post('/api/productions/', { name: 'A', storage_root: join(nas, 'A'), upload_root: drop })
    expect(made.status).toBe(201)
    const patched = await base.request('PATCH', `/api/productions/${made.json.id}/`, {
      body: { ignore_patterns: ['*.lrf.mp4', 'drop/reference', 'Exports/'] },
    })
    expect([patched.status, patched.json.ignore_patterns]).toEqual([200, ['*.lrf.mp4', 'drop/reference', 'Exports/']])
    await boot()
    const never = [
      'edit/Adobe Premiere Pro Preview Files/show.PRV/preview.mov',
      'edit/Media Cache Files/clip.mov',
      'edit/Adobe Premiere Pro Auto-Save/clip.mov',
      'resolve/CacheClip/render.mov',
      'resolve/ProxyMedia/clip.mov',
      'resolve/OptimizedMedia/clip.mov',
      'avid/Avid MediaFiles/MXF/1/clip.mxf',
      'fcp/Show.fcpbundle/Day 1/Render Files/High Quality Media/render.mov',
      'fcp/Show.fcpbundle/Day 1/Transcoded Media/Proxy Media/clip.mov',
      'shoot/Thumbs.db',
      'shoot/._clip.mov',
      'shoot/DJI_0001.LRF.MP4',
      'reference/look.mov',
      'shoot/Exports/cut.mov',
    ]
    const kept = ['shoot/clip.mov', 'shoot/DJI_0001.MP4', 'reference.mov', 'shoot/Exports.mov']
    for (const rel of [...never, ...kept]) write(join(drop, rel), `${rel}\n`)
    await waitFor(async () => (await all('video')).length >= kept.length, 'the files that are not ignored', {
      ms: 60_000,
      everyMs: 50,
    })
    await core!.runner.idle()
    // Full scans see them all again and still take none of them.
    for (const scan of await fullScans())
      expect([scan.state, scan.result.imported, scan.result.waiting]).toEqual(['done', 0, 0])
    expect((await all('video')).map((x) => x.path_file).sort()).toEqual(kept.map((rel) => join(drop, rel)).sort())
  }, 120_000)
})

describe('ignore_patterns on POST and PATCH', () => {
  test('[] unless set; kept as written; each change in the history; a bad pattern is 400 invalid at its index with the envelope, nothing changed', async () => {
    base = testApp(undefined, { tasks: false })
    const nas = scratchDir('reelhouse-cards-nas-')
    expect((await base.post('/api/devices/', { name: 'nas', path: nas })).status).toBe(201)
    const plain = await base.post('/api/productions/', { name: 'Plain', storage_root: join(nas, 'Plain') })
    expect([plain.status, plain.json.ignore_patterns]).toEqual([201, []])
    const made = await base.post('/api/productions/', {
      name: 'A',
      storage_root: join(nas, 'A'),
      ignore_patterns: ['*.LRF', 'Proxies/'],
    })
    expect([made.status, made.json.ignore_patterns]).toEqual([201, ['*.LRF', 'Proxies/']])
    const path = `/api/productions/${made.json.id}/`
    for (const accept of ['application/json; version=1', 'application/json; version=2'])
      expect((await base.get(path, { headers: { accept } })).json.ignore_patterns).toEqual(['*.LRF', 'Proxies/'])
    const bad: [unknown, string, string][] = [
      [['ok', '[abc'], '/ignore_patterns/1', 'A [ opens a set of characters that no ] closes.'],
      [[''], '/ignore_patterns/0', 'A pattern may not be empty.'],
      [['a//b'], '/ignore_patterns/0', 'A pattern has no empty names (two slashes in a row).'],
      [
        ['x', 'a\\b'],
        '/ignore_patterns/1',
        'Separate folders with / (a backslash is not part of the pattern language).',
      ],
      [['../up'], '/ignore_patterns/0', 'A pattern has no . or .. names.'],
      [['x'.repeat(256)], '/ignore_patterns/0', 'A pattern has at most 255 characters.'],
      [Array.from({ length: 101 }, (_, i) => `p${i}`), '/ignore_patterns', 'At most 100 patterns.'],
    ]
    for (const [ignore_patterns, pointer, detail] of bad) {
      const r = await base.request('PATCH', path, { body: { ignore_patterns } })
      expect([r.status, r.json.errors]).toEqual([
        400,
        [{ status: '400', code: 'invalid', title: 'Validation Error', detail, source: { pointer } }],
      ])
    }
    // Not a list of text: 400 too (the schema).
    for (const ignore_patterns of ['*.lrf', [1], null]) {
      const r = await base.request('PATCH', path, { body: { ignore_patterns } })
      expect([r.status, r.json.errors?.[0]?.code]).toEqual([400, 'invalid'])
    }
    // A bad pattern at create: nothing made.
    const refused = await base.post('/api/productions/', {
      name: 'B',
      storage_root: join(nas, 'B'),
      ignore_patterns: ['[x'],
    })
    expect([refused.status, refused.json.errors[0].source, existsSync(join(nas, 'B'))]).toEqual([
      400,
      { pointer: '/ignore_patterns/0' },
      false,
    ])
    expect((await base.get(path)).json.ignore_patterns).toEqual(['*.LRF', 'Proxies/'])
    const cleared = await base.request('PATCH', path, { body: { ignore_patterns: [] } })
    expect([cleared.status, cleared.json.ignore_patterns]).toEqual([200, []])
    const history = (await base.get(`/api/history/?resource=production&id=${made.json.id}`)).json as {
      action: string
      changes: Record<string, unknown>
    }[]
    expect(
      history.filter((h) => 'ignore_patterns' in h.changes).map((h) => [h.action, h.changes.ignore_patterns]),
    ).toEqual([
      ['update', { old: ['*.LRF', 'Proxies/'], new: [] }],
      ['create', { old: null, new: ['*.LRF', 'Proxies/'] }],
    ])
  })
})

describe('what a card takes, and what it leaves', () => {
  test('a .braw dropped beside another production’s folder: that folder is no card’s folder; the other production’s files stay where they are, only the clip moves', async () => {
    base = testApp(undefined, { tasks: false })
    const nas = scratchDir('reelhouse-cards-nas-')
    expect((await base.post('/api/devices/', { name: 'nas', path: nas })).status).toBe(201)
    const a = await base.post('/api/productions/', { name: 'A', storage_root: join(nas, 'A'), move_uploads: true })
    const b = await base.post('/api/productions/', { name: 'B', storage_root: join(nas, 'shows', 'B') })
    expect([a.status, b.status]).toEqual([201, 201])
    await boot()
    const bFile = join(nas, 'shows', 'B', 'cut', 'b.mov')
    write(bFile, 'B production file\n')
    await waitFor(async () => (await all('video')).some((x) => x.status_asset === 6), 'B’s file', {
      ms: 30_000,
      everyMs: 50,
    })
    await core!.runner.idle()
    write(join(nas, 'shows', 'A001_08251234_C001.braw'), 'raw\n')
    write(join(nas, 'shows', 'A001_08251234_C001.sidecar'), 'sidecar\n')
    await waitFor(
      async () => (await all('video')).filter((x) => x.status_asset === 6 && x.is_production).length >= 2,
      'the clip',
      { ms: 30_000, everyMs: 50 },
    )
    await core!.runner.idle()
    const clipFolder = join(nas, 'A', 'video', 'A001_08251234_C001')
    expect((await all('video')).map((x) => [x.production, x.path_file]).sort()).toEqual(
      [
        [b.json.id, bFile],
        [a.json.id, join(clipFolder, 'A001_08251234_C001.braw')],
      ].sort(),
    )
    expect(readFileSync(bFile, 'utf8')).toBe('B production file\n')
    expect(filesBelow(join(nas, 'A', 'video'))).toEqual([
      join('A001_08251234_C001', 'A001_08251234_C001.braw'),
      join('A001_08251234_C001', 'A001_08251234_C001.sidecar'),
    ])
  }, 120_000)

  test('a folder holding part of a card only (a Blackmagic proxy, no clip): its other files are imported as any file', async () => {
    base = testApp(undefined, { tasks: false })
    const nas = scratchDir('reelhouse-cards-nas-')
    expect((await base.post('/api/devices/', { name: 'nas', path: nas })).status).toBe(201)
    const drop = join(nas, 'drop', 'A')
    const made = await base.post('/api/productions/', { name: 'A', storage_root: join(nas, 'A'), upload_root: drop })
    expect(made.status).toBe(201)
    await boot()
    write(join(drop, 'Day1', 'Proxy', 'A001_08251234_C001.mp4'), 'proxy\n')
    write(join(drop, 'Day1', 'interview.mov'), 'interview\n')
    write(join(drop, 'other.mov'), 'control\n')
    await waitFor(
      async () => (await all('video')).filter((x) => x.status_asset === 6).length >= 2,
      'interview.mov and other.mov',
      { ms: 30_000, everyMs: 50 },
    )
    await core!.runner.idle()
    expect((await all('video')).map((x) => x.path_file).sort()).toEqual(
      [join(drop, 'Day1', 'interview.mov'), join(drop, 'other.mov')].sort(),
    )
  }, 120_000)

  test.skipIf(OTHER_TMP === undefined)(
    'a card that arrives with its own ASC MHL history, copied across file systems: it keeps exactly its own manifests, no generation of ours added by any clip',
    async () => {
      base = testApp(undefined, { tasks: false })
      const nas = scratchDir('reelhouse-cards-nas-')
      expect((await base.post('/api/devices/', { name: 'nas', path: nas })).status).toBe(201)
      const dropDisk = scratchDir('reelhouse-cards-drop-', OTHER_TMP)
      expect((await base.post('/api/devices/', { name: 'drop', path: dropDisk })).status).toBe(201)
      const drop = join(dropDisk, 'drop', 'A')
      const made = await base.post('/api/productions/', {
        name: 'A',
        storage_root: join(nas, 'A'),
        upload_root: drop,
        move_uploads: true,
      })
      expect(made.status).toBe(201)
      await boot()
      // A DIT's offload, made beside the watch folder and renamed in whole: two clips and its history.
      const staged = join(dropDisk, 'staging', 'A001')
      sonyCard(staged, 'card A001', '00000001', '1000001')
      const m4 = join(staged, 'PRIVATE', 'M4ROOT')
      write(join(m4, 'CLIP', 'C0002.MP4'), 'essence of clip 2\n')
      write(join(m4, 'CLIP', 'C0002M01.XML'), nrt('00000002', '1000001'))
      const files = filesBelow(staged)
      newGeneration(
        staged,
        files.map((f) => {
          const s = statSync(join(staged, f))
          return {
            path: f,
            size: s.size,
            lastModified: new Date(s.mtimeMs),
            xxh64: Bun.hash
              .xxHash64(readFileSync(join(staged, f)), 0n)
              .toString(16)
              .padStart(16, '0'),
          }
        }),
        { process: 'transfer', comment: 'offload by the DIT' },
      )
      const history = Object.fromEntries(
        filesBelow(join(staged, MHL_FOLDER)).map((f) => [f, readFileSync(join(staged, MHL_FOLDER, f), 'utf8')]),
      )
      expect(Object.keys(history).length).toBe(2) // its manifest and its chain
      mkdirSync(drop, { recursive: true })
      renameSync(staged, join(drop, 'A001'))
      await waitFor(
        async () => (await all('video')).filter((x) => x.status_asset === 6 && x.is_production).length >= 2,
        'the card’s two clips',
        { ms: 90_000, everyMs: 50 },
      )
      await core!.runner.idle()
      const root = join(nas, 'A', 'video', 'A001')
      expect(filesBelow(root)).toEqual([...files, ...Object.keys(history).map((f) => join(MHL_FOLDER, f))].sort())
      const kept = Object.fromEntries(
        filesBelow(join(root, MHL_FOLDER)).map((f) => [f, readFileSync(join(root, MHL_FOLDER, f), 'utf8')]),
      )
      expect(kept).toEqual(history)
      expect(readHistory(root).generations.length).toBe(1)
      expect(filesBelow(drop)).toEqual([])
    },
    180_000,
  )
})
