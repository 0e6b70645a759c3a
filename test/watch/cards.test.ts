// Camera cards, pure (src/watch/cards.ts, docs/cards.md): each format recognised by its layout as the
// cameras write it, with its clips (one asset each: spanned clips and P2's per-track MXFs joined) and
// the files that are never assets; the watch folder's skip rules for them and for editing
// applications' caches (src/watch/ingest.ts); the sidecar metadata read; a production's own ignore
// patterns (src/watch/patterns.ts).
import { describe, expect, test } from 'bun:test'
import { type Card, cardFile, cardsIn, readP2Clip, readSonyNrt, sonyTimecode } from '../../src/watch/cards.ts'
import { excluded, kindOf, neverImported, skipped } from '../../src/watch/ingest.ts'
import { ignoreRules, patternProblem, patternsProblem } from '../../src/watch/patterns.ts'

/** A card as a test reads it: its clips (essence and other files) and the card's own files. */
const shape = (c: Card) => ({
  format: c.format,
  root: c.root,
  clips: c.clips.map((clip) => ({ name: clip.name, essence: clip.essence, files: clip.files, raw: clip.raw })),
  other: c.other,
  loose: c.loose,
})

describe('each card format, laid out as its cameras write it', () => {
  test('Sony XAVC (FX3, FX6, the Alpha bodies): the MP4 is the clip, its NRT XML, thumbnail and SUB proxy belong to it; MEDIAPRO.XML and STATUS.BIN are the card’s', () => {
    const { cards } = cardsIn([
      'A001/PRIVATE/M4ROOT/CLIP/C0001.MP4',
      'A001/PRIVATE/M4ROOT/CLIP/C0001M01.XML',
      'A001/PRIVATE/M4ROOT/CLIP/C0002.MP4',
      'A001/PRIVATE/M4ROOT/CLIP/C0002M01.XML',
      'A001/PRIVATE/M4ROOT/THMBNL/C0001T01.JPG',
      'A001/PRIVATE/M4ROOT/SUB/C0001S03.MP4',
      'A001/PRIVATE/M4ROOT/MEDIAPRO.XML',
      'A001/PRIVATE/M4ROOT/STATUS.BIN',
      'A001/PRIVATE/SONY/SONYCARD.IND',
      'A001/DCIM/100MSDCF/DSC00001.JPG',
      'A001/A001.mhl',
      'elsewhere/clip.mov',
    ])
    expect(cards.map(shape)).toEqual([
      {
        format: 'xavc',
        root: 'A001/',
        clips: [
          {
            name: 'C0001',
            essence: 'PRIVATE/M4ROOT/CLIP/C0001.MP4',
            files: [
              'PRIVATE/M4ROOT/CLIP/C0001M01.XML',
              'PRIVATE/M4ROOT/SUB/C0001S03.MP4',
              'PRIVATE/M4ROOT/THMBNL/C0001T01.JPG',
            ],
            raw: false,
          },
          {
            name: 'C0002',
            essence: 'PRIVATE/M4ROOT/CLIP/C0002.MP4',
            files: ['PRIVATE/M4ROOT/CLIP/C0002M01.XML'],
            raw: false,
          },
        ],
        other: ['PRIVATE/M4ROOT/MEDIAPRO.XML', 'PRIVATE/M4ROOT/STATUS.BIN', 'PRIVATE/SONY/SONYCARD.IND'],
        // Outside the card's layout, in its folder: a wrangler's checksum list, the photos of DCIM.
        loose: ['A001.mhl', 'DCIM/100MSDCF/DSC00001.JPG'],
      },
    ])
  })

  test('XDCAM / XAVC on SxS and XQD (FS7, FX9, Venice): XDROOT/Clip MXFs are the clips; Sub proxies belong to them; Take, Edit, General and MEDIAPRO.XML are the card’s', () => {
    const { cards } = cardsIn([
      'XDROOT/Clip/XD0001.MXF',
      'XDROOT/Clip/XD0001M01.XML',
      'XDROOT/Clip/ABCD0002.MXF',
      'XDROOT/Clip/ABCD0002M01.XML',
      'XDROOT/Sub/XD0001S03.MXF',
      'XDROOT/Sub/ABCD0002S03.MXF',
      'XDROOT/Take/XD0001.SMI',
      'XDROOT/Edit/E0001E01.SMI',
      'XDROOT/General/Sony/Planning/x.xml',
      'XDROOT/MEDIAPRO.XML',
    ])
    expect(cards.map(shape)).toEqual([
      {
        format: 'xdcam',
        root: '',
        clips: [
          {
            name: 'ABCD0002',
            essence: 'XDROOT/Clip/ABCD0002.MXF',
            files: ['XDROOT/Clip/ABCD0002M01.XML', 'XDROOT/Sub/ABCD0002S03.MXF'],
            raw: false,
          },
          {
            name: 'XD0001',
            essence: 'XDROOT/Clip/XD0001.MXF',
            files: ['XDROOT/Clip/XD0001M01.XML', 'XDROOT/Sub/XD0001S03.MXF'],
            raw: false,
          },
        ],
        other: [
          'XDROOT/Edit/E0001E01.SMI',
          'XDROOT/General/Sony/Planning/x.xml',
          'XDROOT/MEDIAPRO.XML',
          'XDROOT/Take/XD0001.SMI',
        ],
        loose: [],
      },
    ])
  })

  test('P2: one asset per clip, its VIDEO MXF; its per-track AUDIO MXFs, clip XML, icon, proxy and voice memo belong to it', () => {
    const { cards } = cardsIn([
      'P2CARD/CONTENTS/VIDEO/0001AB.MXF',
      'P2CARD/CONTENTS/AUDIO/0001AB00.MXF',
      'P2CARD/CONTENTS/AUDIO/0001AB01.MXF',
      'P2CARD/CONTENTS/AUDIO/0001AB02.MXF',
      'P2CARD/CONTENTS/AUDIO/0001AB03.MXF',
      'P2CARD/CONTENTS/CLIP/0001AB.XML',
      'P2CARD/CONTENTS/ICON/0001AB.BMP',
      'P2CARD/CONTENTS/PROXY/0001AB.MP4',
      'P2CARD/CONTENTS/PROXY/0001AB.BIN',
      'P2CARD/CONTENTS/VOICE/0001AB00.WAV',
      'P2CARD/CONTENTS/VIDEO/0002CD.MXF',
      'P2CARD/CONTENTS/AUDIO/0002CD00.MXF',
      'P2CARD/CONTENTS/CLIP/0002CD.XML',
      'P2CARD/LASTCLIP.TXT',
      'P2CARD/CONTENTS/LASTCLIP.TXT',
    ])
    expect(cards.map(shape)).toEqual([
      {
        format: 'p2',
        root: 'P2CARD/',
        clips: [
          {
            name: '0001AB',
            essence: 'CONTENTS/VIDEO/0001AB.MXF',
            files: [
              'CONTENTS/AUDIO/0001AB00.MXF',
              'CONTENTS/AUDIO/0001AB01.MXF',
              'CONTENTS/AUDIO/0001AB02.MXF',
              'CONTENTS/AUDIO/0001AB03.MXF',
              'CONTENTS/CLIP/0001AB.XML',
              'CONTENTS/ICON/0001AB.BMP',
              'CONTENTS/PROXY/0001AB.BIN',
              'CONTENTS/PROXY/0001AB.MP4',
              'CONTENTS/VOICE/0001AB00.WAV',
            ],
            raw: false,
          },
          {
            name: '0002CD',
            essence: 'CONTENTS/VIDEO/0002CD.MXF',
            files: ['CONTENTS/AUDIO/0002CD00.MXF', 'CONTENTS/CLIP/0002CD.XML'],
            raw: false,
          },
        ],
        other: ['CONTENTS/LASTCLIP.TXT'],
        loose: ['LASTCLIP.TXT'],
      },
    ])
  })

  test('AVCHD: one asset per MTS (the playlists are not joined); CLIPINF belongs to its clip; PLAYLIST, INDEX.BDM and MOVIEOBJ.BDM are the card’s', () => {
    const { cards } = cardsIn([
      'PRIVATE/AVCHD/BDMV/STREAM/00000.MTS',
      'PRIVATE/AVCHD/BDMV/STREAM/00001.MTS',
      'PRIVATE/AVCHD/BDMV/CLIPINF/00000.CPI',
      'PRIVATE/AVCHD/BDMV/CLIPINF/00001.CPI',
      'PRIVATE/AVCHD/BDMV/PLAYLIST/00000.MPL',
      'PRIVATE/AVCHD/BDMV/INDEX.BDM',
      'PRIVATE/AVCHD/BDMV/MOVIEOBJ.BDM',
      'PRIVATE/AVCHD/BDMV/BACKUP/INDEX.BDM',
    ])
    expect(cards.map(shape)).toEqual([
      {
        format: 'avchd',
        root: '',
        clips: [
          {
            name: '00000',
            essence: 'PRIVATE/AVCHD/BDMV/STREAM/00000.MTS',
            files: ['PRIVATE/AVCHD/BDMV/CLIPINF/00000.CPI'],
            raw: false,
          },
          {
            name: '00001',
            essence: 'PRIVATE/AVCHD/BDMV/STREAM/00001.MTS',
            files: ['PRIVATE/AVCHD/BDMV/CLIPINF/00001.CPI'],
            raw: false,
          },
        ],
        other: [
          'PRIVATE/AVCHD/BDMV/BACKUP/INDEX.BDM',
          'PRIVATE/AVCHD/BDMV/INDEX.BDM',
          'PRIVATE/AVCHD/BDMV/MOVIEOBJ.BDM',
          'PRIVATE/AVCHD/BDMV/PLAYLIST/00000.MPL',
        ],
        loose: [],
      },
    ])
  })

  test('Canon XF and XF-AVC: a spanned clip is one asset, its first segment; the others and its XML belong to it; a clip whose first segment is on another card has none here', () => {
    const { cards } = cardsIn([
      'XF/CONTENTS/CLIPS001/AA0001/AA000101.MXF',
      'XF/CONTENTS/CLIPS001/AA0001/AA000102.MXF',
      'XF/CONTENTS/CLIPS001/AA0001/AA000103.MXF',
      'XF/CONTENTS/CLIPS001/AA0001/AA0001.XML',
      'XF/CONTENTS/CLIPS001/AA0001/AA000101.CIF',
      'XF/CONTENTS/CLIPS001/AA0002/AA000202.MXF',
      'XFAVC/CONTENTS/CLIPS001/A001C001_220101AB_01.MXF',
      'XFAVC/CONTENTS/CLIPS001/A001C001_220101AB_02.MXF',
      'XFAVC/CONTENTS/CLIPS001/A001C001_220101AB_01.XML',
      'XFAVC/CONTENTS/CLIPS001/A001C002_220101AB_01.MXF',
    ])
    expect(cards.map(shape)).toEqual([
      {
        format: 'canon-xf',
        root: 'XF/',
        clips: [
          {
            name: 'AA0001',
            essence: 'CONTENTS/CLIPS001/AA0001/AA000101.MXF',
            files: [
              'CONTENTS/CLIPS001/AA0001/AA0001.XML',
              'CONTENTS/CLIPS001/AA0001/AA000101.CIF',
              'CONTENTS/CLIPS001/AA0001/AA000102.MXF',
              'CONTENTS/CLIPS001/AA0001/AA000103.MXF',
            ],
            raw: false,
          },
        ],
        other: ['CONTENTS/CLIPS001/AA0002/AA000202.MXF'],
        loose: [],
      },
      {
        format: 'canon-xf',
        root: 'XFAVC/',
        clips: [
          {
            name: 'A001C001_220101AB',
            essence: 'CONTENTS/CLIPS001/A001C001_220101AB_01.MXF',
            files: ['CONTENTS/CLIPS001/A001C001_220101AB_01.XML', 'CONTENTS/CLIPS001/A001C001_220101AB_02.MXF'],
            raw: false,
          },
          { name: 'A001C002_220101AB', essence: 'CONTENTS/CLIPS001/A001C002_220101AB_01.MXF', files: [], raw: false },
        ],
        other: [],
        loose: [],
      },
    ])
  })

  test('RED: one asset per .RDC, its _001.R3D (camera raw); the further segments and the clip’s other files belong to it; a .RDC without its .RDM too', () => {
    const { cards } = cardsIn([
      'A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_001.R3D',
      'A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_002.R3D',
      'A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_003.R3D',
      'A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB.RTN',
      'A001_0101XX.RDM/A001_C002_0101CD.RDC/A001_C002_0101CD_001.R3D',
      'A001_0101XX.RDM/DIGITAL_MAGAZINE.bin',
      'loose/B001_C003_0202EF.RDC/B001_C003_0202EF_001.R3D',
    ])
    const rdm = 'A001_0101XX.RDM/'
    expect(cards.map(shape)).toEqual([
      {
        format: 'red',
        root: '',
        clips: [
          {
            name: 'A001_C001_0101AB',
            essence: `${rdm}A001_C001_0101AB.RDC/A001_C001_0101AB_001.R3D`,
            files: [
              `${rdm}A001_C001_0101AB.RDC/A001_C001_0101AB.RTN`,
              `${rdm}A001_C001_0101AB.RDC/A001_C001_0101AB_002.R3D`,
              `${rdm}A001_C001_0101AB.RDC/A001_C001_0101AB_003.R3D`,
            ],
            raw: true,
          },
          {
            name: 'A001_C002_0101CD',
            essence: `${rdm}A001_C002_0101CD.RDC/A001_C002_0101CD_001.R3D`,
            files: [],
            raw: true,
          },
        ],
        other: [`${rdm}DIGITAL_MAGAZINE.bin`],
        loose: [],
      },
      {
        format: 'red',
        root: 'loose/',
        clips: [
          {
            name: 'B001_C003_0202EF',
            essence: 'B001_C003_0202EF.RDC/B001_C003_0202EF_001.R3D',
            files: [],
            raw: true,
          },
        ],
        other: [],
        loose: [],
      },
    ])
  })

  test('ARRI: a reel folder of clips; an MXF or MOV is one asset; an ARRIRAW clip folder is one asset, its lowest-numbered frame; files of other names are no card’s', () => {
    const { cards } = cardsIn([
      'A001R1AB/A001C001_220101_R1AB.mxf',
      'A001R1AB/A001C002_220101_R1AB.mov',
      'A001R1AB/A001C003_220101_R1AB/A001C003_220101_R1AB.0000012.ari',
      'A001R1AB/A001C003_220101_R1AB/A001C003_220101_R1AB.0000010.ari',
      'A001R1AB/A001C003_220101_R1AB/A001C003_220101_R1AB.0000011.ari',
      'A001R1AB/A001C003_220101_R1AB/A001C003_220101_R1AB.xml',
      'A001R1AB/notes.txt',
    ])
    expect(cards.map(shape)).toEqual([
      {
        format: 'arri',
        root: 'A001R1AB/',
        clips: [
          { name: 'A001C001_220101_R1AB', essence: 'A001C001_220101_R1AB.mxf', files: [], raw: false },
          { name: 'A001C002_220101_R1AB', essence: 'A001C002_220101_R1AB.mov', files: [], raw: false },
          {
            name: 'A001C003_220101_R1AB',
            essence: 'A001C003_220101_R1AB/A001C003_220101_R1AB.0000010.ari',
            files: [
              'A001C003_220101_R1AB/A001C003_220101_R1AB.0000011.ari',
              'A001C003_220101_R1AB/A001C003_220101_R1AB.0000012.ari',
              'A001C003_220101_R1AB/A001C003_220101_R1AB.xml',
            ],
            raw: true,
          },
        ],
        other: [],
        loose: ['notes.txt'],
      },
    ])
  })

  test('Blackmagic: each named .braw is one asset with its .sidecar, Proxy/ holds no asset; a CinemaDNG clip folder is one asset, its first frame', () => {
    const { cards } = cardsIn([
      'BMPCC/A001_08251234_C001.braw',
      'BMPCC/A001_08251234_C001.sidecar',
      'BMPCC/A001_08251234_C002.braw',
      'BMPCC/Proxy/A001_08251234_C001.mp4',
      'BMPCC/A001_08251300_C003/A001_08251300_C003_000001.dng',
      'BMPCC/A001_08251300_C003/A001_08251300_C003_000000.dng',
      'BMPCC/A001_08251300_C003/A001_08251300_C003.wav',
      'BMPCC/own-name.braw',
    ])
    expect(cards.map(shape)).toEqual([
      {
        format: 'blackmagic',
        root: 'BMPCC/',
        clips: [
          {
            name: 'A001_08251234_C001',
            essence: 'A001_08251234_C001.braw',
            files: ['A001_08251234_C001.sidecar', 'Proxy/A001_08251234_C001.mp4'],
            raw: true,
          },
          { name: 'A001_08251234_C002', essence: 'A001_08251234_C002.braw', files: [], raw: true },
          {
            name: 'A001_08251300_C003',
            essence: 'A001_08251300_C003/A001_08251300_C003_000000.dng',
            files: ['A001_08251300_C003/A001_08251300_C003.wav', 'A001_08251300_C003/A001_08251300_C003_000001.dng'],
            raw: true,
          },
        ],
        other: [],
        loose: ['own-name.braw'],
      },
    ])
  })

  test('names compare without case (FAT and exFAT cards, copies made on a Mac); a folder of someone’s own named like a marker is no card', () => {
    expect(cardFile(['card', 'private', 'm4root', 'clip', 'c0001.mp4'])).toMatchObject({
      format: 'xavc',
      role: 'essence',
      clip: 'c0001',
      rootDepth: 1,
    })
    expect(cardFile(['Xdroot', 'sub', 'xd0001s03.mxf'])).toMatchObject({ format: 'xdcam', role: 'part' })
    for (const names of [
      ['Project', 'Contents', 'Video', 'interview.mxf'],
      ['Private', 'holiday.mp4'],
      ['clips', 'A001_C001_0101AB_001.R3D'],
      ['clips', 'clip.braw'],
      ['clips', 'A001C001_220101_R1AB.mxf'],
    ])
      expect([names.join('/'), cardFile(names)]).toEqual([names.join('/'), undefined])
  })
})

describe('the watch folder’s rules for cards and editing applications', () => {
  test('a card’s files that are not a clip’s essence are skipped with their reason; its essences are candidates, camera raw ones as video inside their card only', () => {
    const paths = [
      'drop/A001/PRIVATE/M4ROOT/CLIP/C0001.MP4',
      'drop/A001/PRIVATE/M4ROOT/SUB/C0001S03.MP4',
      'drop/A001/PRIVATE/M4ROOT/THMBNL/C0001T01.JPG',
      'drop/A001/PRIVATE/M4ROOT/MEDIAPRO.XML',
      'drop/P2/CONTENTS/AUDIO/0001AB00.MXF',
      'drop/P2/CONTENTS/PROXY/0001AB.MP4',
      'drop/XF/CONTENTS/CLIPS001/AA0001/AA000102.MXF',
      'drop/R/A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_001.R3D',
      'drop/R/A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_002.R3D',
      'drop/loose/A001_C001_0101AB_001.R3D',
      'drop/BM/A001_08251234_C001.braw',
      'drop/BM/clip.braw',
    ]
    expect(Object.fromEntries(paths.map((p) => [p, [skipped(p) ?? null, kindOf(p) ?? null]]))).toEqual({
      'drop/A001/PRIVATE/M4ROOT/CLIP/C0001.MP4': [null, 'video'],
      'drop/A001/PRIVATE/M4ROOT/SUB/C0001S03.MP4': [
        'part of a Sony XAVC (PRIVATE/M4ROOT) card: a proxy (SUB)',
        'video',
      ],
      'drop/A001/PRIVATE/M4ROOT/THMBNL/C0001T01.JPG': [
        'part of a Sony XAVC (PRIVATE/M4ROOT) card: a thumbnail (THMBNL)',
        'image',
      ],
      'drop/A001/PRIVATE/M4ROOT/MEDIAPRO.XML': [
        "part of a Sony XAVC (PRIVATE/M4ROOT) card: a file of the card's own (MEDIAPRO.XML)",
        null,
      ],
      'drop/P2/CONTENTS/AUDIO/0001AB00.MXF': [
        'part of a Panasonic P2 (CONTENTS) card: an audio track of the clip (P2 keeps each track in an MXF of its own)',
        'video',
      ],
      'drop/P2/CONTENTS/PROXY/0001AB.MP4': ['part of a Panasonic P2 (CONTENTS) card: a proxy (PROXY)', 'video'],
      'drop/XF/CONTENTS/CLIPS001/AA0001/AA000102.MXF': [
        'part of a Canon XF (CONTENTS/CLIPS001) card: a further segment of the spanned clip AA0001 (its first segment is the asset)',
        'video',
      ],
      'drop/R/A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_001.R3D': [null, 'video'],
      'drop/R/A001_0101XX.RDM/A001_C001_0101AB.RDC/A001_C001_0101AB_002.R3D': [
        'part of a RED (.RDM/.RDC) card: a further segment of the spanned clip A001_C001_0101AB (its first segment is the asset)',
        null,
      ],
      'drop/loose/A001_C001_0101AB_001.R3D': ['the extension .r3d is not a media type', null],
      'drop/BM/A001_08251234_C001.braw': [null, 'video'],
      'drop/BM/clip.braw': ['the extension .braw is not a media type', null],
    })
  })

  test('editing applications’ caches and previews are never looked at or imported; Thumbs.db, desktop.ini, Avid databases, AppleDouble and .DS_Store never imported', () => {
    const paths = [
      'Premiere/Adobe Premiere Pro Preview Files/show.PRV/render.mov',
      'Premiere/Media Cache Files/clip.mov 48000.cfa',
      'cache/Media Cache/x.mp4',
      'Premiere/Adobe Premiere Pro Auto-Save/show-1.prproj',
      'Resolve/CacheClip/abc.mov',
      'Resolve/ProxyMedia/clip.mov',
      'Resolve/OptimizedMedia/clip.mov',
      'Avid MediaFiles/MXF/1/clip.mxf',
      'Avid MediaFiles/MXF/1/msmMMOB.mdb',
      'FCP/Show.fcpbundle/Day1/Render Files/High Quality Media/x.mov',
      'FCP/Show.fcpbundle/Day1/Transcoded Media/Proxy Media/clip.mov',
      'footage/Thumbs.db',
      'footage/desktop.ini',
      'bin/msmFMID.pmr',
      'footage/._clip.mov',
      'footage/.DS_Store',
      'footage/clip.mov',
      'footage/render files of mine.mov',
    ]
    expect(
      Object.fromEntries(paths.map((p) => [p, [skipped(p) ?? null, neverImported(p) ?? null, excluded(p)]])),
    ).toEqual({
      'Premiere/Adobe Premiere Pro Preview Files/show.PRV/render.mov': [
        "inside Adobe Premiere Pro Preview Files (Premiere Pro's render previews: an editing application's own files are never imported)",
        "inside Adobe Premiere Pro Preview Files (Premiere Pro's render previews: an editing application's own files are never imported)",
        true,
      ],
      'Premiere/Media Cache Files/clip.mov 48000.cfa': [
        "inside Media Cache Files (Premiere Pro's and After Effects' media cache: an editing application's own files are never imported)",
        "inside Media Cache Files (Premiere Pro's and After Effects' media cache: an editing application's own files are never imported)",
        true,
      ],
      'cache/Media Cache/x.mp4': [
        "inside Media Cache (Premiere Pro's and After Effects' media cache: an editing application's own files are never imported)",
        "inside Media Cache (Premiere Pro's and After Effects' media cache: an editing application's own files are never imported)",
        true,
      ],
      'Premiere/Adobe Premiere Pro Auto-Save/show-1.prproj': [
        "inside Adobe Premiere Pro Auto-Save (Premiere Pro's auto-saved projects: an editing application's own files are never imported)",
        "inside Adobe Premiere Pro Auto-Save (Premiere Pro's auto-saved projects: an editing application's own files are never imported)",
        true,
      ],
      'Resolve/CacheClip/abc.mov': [
        "inside CacheClip (DaVinci Resolve's render cache: an editing application's own files are never imported)",
        "inside CacheClip (DaVinci Resolve's render cache: an editing application's own files are never imported)",
        true,
      ],
      'Resolve/ProxyMedia/clip.mov': [
        "inside ProxyMedia (DaVinci Resolve's proxies: an editing application's own files are never imported)",
        "inside ProxyMedia (DaVinci Resolve's proxies: an editing application's own files are never imported)",
        true,
      ],
      'Resolve/OptimizedMedia/clip.mov': [
        "inside OptimizedMedia (DaVinci Resolve's optimized media: an editing application's own files are never imported)",
        "inside OptimizedMedia (DaVinci Resolve's optimized media: an editing application's own files are never imported)",
        true,
      ],
      'Avid MediaFiles/MXF/1/clip.mxf': [
        "inside Avid MediaFiles (Avid's managed media (Avid MediaFiles): an editing application's own files are never imported)",
        "inside Avid MediaFiles (Avid's managed media (Avid MediaFiles): an editing application's own files are never imported)",
        true,
      ],
      'Avid MediaFiles/MXF/1/msmMMOB.mdb': [
        "inside Avid MediaFiles (Avid's managed media (Avid MediaFiles): an editing application's own files are never imported)",
        "inside Avid MediaFiles (Avid's managed media (Avid MediaFiles): an editing application's own files are never imported)",
        true,
      ],
      'FCP/Show.fcpbundle/Day1/Render Files/High Quality Media/x.mov': [
        "inside Render Files (Final Cut Pro's renders: an editing application's own files are never imported)",
        "inside Render Files (Final Cut Pro's renders: an editing application's own files are never imported)",
        true,
      ],
      'FCP/Show.fcpbundle/Day1/Transcoded Media/Proxy Media/clip.mov': [
        "inside Transcoded Media (Final Cut Pro's proxy and optimized media: an editing application's own files are never imported)",
        "inside Transcoded Media (Final Cut Pro's proxy and optimized media: an editing application's own files are never imported)",
        true,
      ],
      'footage/Thumbs.db': ['a Windows thumbnail cache (Thumbs.db)', 'a Windows thumbnail cache (Thumbs.db)', false],
      'footage/desktop.ini': [
        'a Windows folder setting (desktop.ini)',
        'a Windows folder setting (desktop.ini)',
        false,
      ],
      'bin/msmFMID.pmr': ['an Avid media database (.pmr)', 'an Avid media database (.pmr)', false],
      'footage/._clip.mov': ['an AppleDouble file (._*)', 'an AppleDouble file (._*)', false],
      'footage/.DS_Store': ['a .DS_Store file', 'a .DS_Store file', false],
      'footage/clip.mov': [null, null, false],
      'footage/render files of mine.mov': [null, null, false],
    })
  })
})

describe('sidecar metadata', () => {
  test('Sony’s LTC value: frames, seconds, minutes, hours as BCD bytes with flag bits (0x40 of the frames: drop frame); a written label as it is', () => {
    expect(
      [
        '00000001',
        '17305719',
        '67460811',
        '00001001',
        '01:00:00:00',
        '00:59:59;28',
        '0000002A',
        'garbage',
        'FFFFFFFF',
      ].map((v) => sonyTimecode(v) ?? null),
    ).toEqual([
      '01:00:00:00',
      '19:57:30:17',
      '11:08:46;27',
      '01:10:00:00',
      '01:00:00:00',
      '00:59:59;28',
      null,
      null,
      null,
    ])
  })

  test('Sony NRT XML: the first timecode, its rate, capture rate, length, camera, lens, reel, recording date; a namespace prefix changes nothing', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<nrt:NonRealTimeMeta xmlns:nrt="urn:schemas-professionalDisc:nonRealTimeMeta:ver.2.00" lastUpdate="2024-05-01T10:00:00+02:00">
  <nrt:Duration value="4380"/>
  <nrt:LtcChangeTable tcFps="30" halfStep="false">
    <nrt:LtcChange frameCount="4379" value="21250020" status="end"/>
    <nrt:LtcChange frameCount="0" value="67460811" status="increment"/>
  </nrt:LtcChangeTable>
  <nrt:CreationDate value="2024-05-01T10:00:00+02:00"/>
  <nrt:VideoFormat><nrt:VideoFrame videoCodec="XAVC" captureFps="29.97p" formatFps="29.97p"/></nrt:VideoFormat>
  <nrt:Device manufacturer="Sony" modelName="MPC-2610" serialNo="0012345"/>
  <nrt:Lens modelName="Signature Prime 35"/>
  <nrt:AcquisitionRecord><nrt:Group name="CameraUnitMetadataSet"><nrt:Item name="CameraReelNumber" value="A007"/></nrt:Group></nrt:AcquisitionRecord>
</nrt:NonRealTimeMeta>`
    expect(readSonyNrt(xml)).toEqual({
      timecode: '11:08:46;27',
      timecode_rate: '30',
      capture_fps: '29.97p',
      duration_frames: 4380,
      camera: { manufacturer: 'Sony', model: 'MPC-2610', serial: '0012345' },
      lens: 'Signature Prime 35',
      reel: 'A007',
      recorded: '2024-05-01T10:00:00+02:00',
    })
    expect(readSonyNrt('not xml at all')).toEqual({})
  })

  test('P2 clip XML: start timecode, edit unit, length, camera', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<P2Main xmlns="urn:schemas-Professional-Plug-in:P2:ClipMetadata:v3.1">
  <ClipContent><ClipName>0001AB</ClipName><Duration>300</Duration><EditUnit>1001/30000</EditUnit>
    <EssenceList><Video><StartTimecode>10:00:00:00</StartTimecode></Video></EssenceList>
    <ClipMetadata><Access><CreationDate>2024-05-01T10:00:00+09:00</CreationDate></Access>
      <Device><Manufacturer>Panasonic</Manufacturer><SerialNo.>E9TA0001</SerialNo.><ModelName>AJ-PX800G</ModelName></Device>
      <Shoot><StartDate>2024-05-01T10:00:00+09:00</StartDate></Shoot>
    </ClipMetadata></ClipContent></P2Main>`
    expect(readP2Clip(xml)).toEqual({
      timecode: '10:00:00:00',
      timecode_rate: '1001/30000',
      duration_frames: 300,
      camera: { manufacturer: 'Panasonic', model: 'AJ-PX800G', serial: 'E9TA0001' },
      recorded: '2024-05-01T10:00:00+09:00',
    })
  })
})

describe('a production’s ignore patterns', () => {
  test('a name anywhere, a path from the device root, ** for any folders, a final / for folders only; without case', () => {
    const rules = ignoreRules([
      '*.lrf',
      'Proxies',
      'drop/night/reference',
      '**/Exports/*.MOV',
      'Renders/',
      'shot_[0-9][0-9]?.tif',
    ])
    const paths = [
      'drop/night/DJI_0001.LRF',
      'drop/night/DJI_0001.MP4',
      'a/b/proxies/clip.mov',
      'a/b/proxies.mov',
      'drop/night/reference/look.mov',
      'drop/night/reference.mov',
      'other/drop/night/reference/look.mov',
      'Exports/final.mov',
      'a/b/exports/final.mov',
      'a/b/exports/final.mxf',
      'a/Renders/x.mov',
      'a/renders',
      'plates/shot_12a.tif',
      'plates/shot_1a.tif',
    ]
    expect(Object.fromEntries(paths.map((p) => [p, rules.match(p.split('/')) ?? null]))).toEqual({
      'drop/night/DJI_0001.LRF': '*.lrf',
      'drop/night/DJI_0001.MP4': null,
      'a/b/proxies/clip.mov': 'Proxies',
      'a/b/proxies.mov': null,
      'drop/night/reference/look.mov': 'drop/night/reference',
      'drop/night/reference.mov': null,
      'other/drop/night/reference/look.mov': null,
      'Exports/final.mov': '**/Exports/*.MOV',
      'a/b/exports/final.mov': '**/Exports/*.MOV',
      'a/b/exports/final.mxf': null,
      'a/Renders/x.mov': 'Renders/',
      'a/renders': null,
      'plates/shot_12a.tif': 'shot_[0-9][0-9]?.tif',
      'plates/shot_1a.tif': null,
    })
    expect(ignoreRules([]).match(['a.mov'])).toBeUndefined()
    // Many stars against a long name: a walk, not a regular expression that backtracks.
    const started = performance.now()
    expect(ignoreRules(['*a*a*a*a*a*a*a*a*a*a*b']).match(['a'.repeat(4000)])).toBeUndefined()
    expect(performance.now() - started).toBeLessThan(1000)
  })

  test('what a pattern may not be: empty, too long, a backslash, empty or dot names, ** inside a name, an unclosed or backwards set', () => {
    const bad = ['', '/', '//', 'x'.repeat(256), 'a\\b', 'a//b', './a', 'a/../b', 'a**b', '[abc', 'x[z-a]', 'a\0b']
    expect(bad.map((p) => [p.slice(0, 10), patternProblem(p) !== undefined])).toEqual(
      bad.map((p) => [p.slice(0, 10), true]),
    )
    for (const good of ['*.lrf', 'Proxies', '/drop/x/', '**', '**/a/**/b', '[!.]*.mov', 'x'.repeat(255)])
      expect([good.slice(0, 10), patternProblem(good)]).toEqual([good.slice(0, 10), undefined])
    expect(patternsProblem(['*.lrf', '[x'])).toEqual({
      index: 1,
      detail: 'A [ opens a set of characters that no ] closes.',
    })
    expect(patternsProblem(Array.from({ length: 101 }, (_, i) => `p${i}`))).toEqual({ detail: 'At most 100 patterns.' })
  })
})

describe('review of the card rules', () => {
  test('Canon XF-AVC: an MXF in CLIPS001 with no _NN suffix is the clip’s essence (its segment 1), its XML belongs to it', () => {
    expect(cardFile('A001/CONTENTS/CLIPS001/A001C001_150101AB_CANON.MXF'.split('/'))).toMatchObject({
      format: 'canon-xf',
      role: 'essence',
      clip: 'A001C001_150101AB_CANON',
      order: 1,
    })
    const { cards } = cardsIn([
      'A001/CONTENTS/CLIPS001/A001C001_150101AB_CANON.MXF',
      'A001/CONTENTS/CLIPS001/A001C001_150101AB_CANON.XML',
    ])
    expect(cards.map(shape)).toEqual([
      {
        format: 'canon-xf',
        root: 'A001/',
        clips: [
          {
            name: 'A001C001_150101AB_CANON',
            essence: 'CONTENTS/CLIPS001/A001C001_150101AB_CANON.MXF',
            files: ['CONTENTS/CLIPS001/A001C001_150101AB_CANON.XML'],
            raw: false,
          },
        ],
        other: [],
        loose: [],
      },
    ])
  })

  test('two formats at one card root (a Sony Alpha’s M4ROOT and AVCHD): its loose files go to the same card whatever the listing’s order', () => {
    const files = [
      'A/PRIVATE/M4ROOT/CLIP/C0001.MP4',
      'A/PRIVATE/AVCHD/BDMV/STREAM/00000.MTS',
      'A/DCIM/100MSDCF/DSC0001.JPG',
    ]
    const loose = (paths: string[]) => cardsIn(paths).cards.map((c): [string, string[]] => [c.format, c.loose])
    const expected: [string, string[]][] = [
      ['avchd', ['DCIM/100MSDCF/DSC0001.JPG']],
      ['xavc', []],
    ]
    expect(loose(files)).toEqual(expected)
    expect(loose([files[1]!, files[0]!, files[2]!])).toEqual(expected)
  })

  test('an R3D named after another clip in a .RDC is no segment of it; an ARRI clip of another reel is not the reel folder’s', () => {
    expect(cardFile('X.RDM/A001_C001_0101AB.RDC/A001_C002_0101AB_001.R3D'.split('/'))).toMatchObject({
      role: 'part',
      clip: 'A001_C001_0101AB',
    })
    expect(cardFile('X.RDM/A001_C001_0101AB.RDC/a001_c001_0101ab_002.r3d'.split('/'))).toMatchObject({
      role: 'segment',
      clip: 'A001_C001_0101AB',
      order: 2,
    })
    expect(cardFile('A001R1AB/B002C003_220101_R2CD.mov'.split('/'))).toBeUndefined()
    expect(cardFile('A001R1AB/B002C003_220101_R2CD/B002C003_220101_R2CD.0000001.ari'.split('/'))).toBeUndefined()
    expect(cardFile('a001r1ab/A001C003_220101_R1AB.mov'.split('/'))).toMatchObject({ format: 'arri', role: 'essence' })
  })

  test('a card known by its names only (Blackmagic, ARRI): the files beside its clips are loose, the folders beside them are not the card’s', () => {
    const { cards } = cardsIn([
      'shows/A001_08251234_C001.braw',
      'shows/notes.txt',
      'shows/Proxy/A001_08251234_C001.mp4',
      'shows/Proxy/readme.txt',
      'shows/B/cut/b.mov',
      'A001R1AB/A001C001_220101_R1AB.mxf',
      'A001R1AB/extra/x.mov',
    ])
    expect(cards.map((c) => [c.format, c.root, c.other, c.loose])).toEqual([
      ['arri', 'A001R1AB/', [], []],
      ['blackmagic', 'shows/', ['Proxy/readme.txt'], ['notes.txt']],
    ])
  })

  test('a pattern’s range compares its ends as written, a name’s character in both cases: [0-Z] takes no _ or [, [Z-a] is a range', () => {
    expect(patternProblem('[Z-a]x')).toBeUndefined()
    const digitsAndUpper = ignoreRules(['[0-Z]x'])
    expect(['_x', '[x', '5x', 'Qx', 'qx'].map((n) => digitsAndUpper.match([n]) !== undefined)).toEqual([
      false,
      false,
      true,
      true,
      true,
    ])
    expect(ignoreRules(['[a-f]1']).match(['D1'])).toBe('[a-f]1')
    expect(ignoreRules(['[Z-a]x']).match(['_x'])).toBe('[Z-a]x')
  })
})
