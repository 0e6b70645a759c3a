// The watch folder's rules (src/watch/ingest.ts): kinds by extension, skip and exclusion rules,
// and the settle gate on a timeline of plain numbers.
import { expect, test } from 'bun:test'
import { EXTENSIONS, createSettle, excluded, kindOf, skipped } from '../../src/watch/ingest.ts'

test('every extension of service.md 10 gives its kind, in any case; others give none', () => {
  const names = [
    'a.mov',
    'a.MP4',
    'a.mxf',
    'a.m4v',
    'a.AVI',
    'a.mkv',
    'a.Mts',
    'a.wav',
    'a.aif',
    'a.AIFF',
    'a.mp3',
    'a.m4a',
    'a.flac',
    'a.jpg',
    'a.JPEG',
    'a.png',
    'a.tif',
    'a.tiff',
    'a.exr',
    'a.dpx',
    'a.psd',
    'a.txt',
    'a',
    '.mov',
    'mov',
    'dir.mov/clip',
    'clips/b.Wav',
    'a.mov.part',
  ]
  expect(Object.fromEntries(names.map((n) => [n, kindOf(n)]))).toEqual({
    'a.mov': 'video',
    'a.MP4': 'video',
    'a.mxf': 'video',
    'a.m4v': 'video',
    'a.AVI': 'video',
    'a.mkv': 'video',
    'a.Mts': 'video',
    'a.wav': 'audio',
    'a.aif': 'audio',
    'a.AIFF': 'audio',
    'a.mp3': 'audio',
    'a.m4a': 'audio',
    'a.flac': 'audio',
    'a.jpg': 'image',
    'a.JPEG': 'image',
    'a.png': 'image',
    'a.tif': 'image',
    'a.tiff': 'image',
    'a.exr': 'image',
    'a.dpx': 'image',
    'a.psd': 'image',
    'a.txt': undefined,
    a: undefined,
    '.mov': undefined,
    mov: undefined,
    'dir.mov/clip': undefined,
    'clips/b.Wav': 'audio',
    'a.mov.part': undefined,
  })
  expect(Object.values(EXTENSIONS).flat().length).toBe(21)
})

test('skip rules, with the reason given for the log', () => {
  const paths = [
    'clip.mov',
    'day 1/cam A/clip.MOV',
    '.hidden.mov',
    '.cache/clip.mov',
    'day/.thumbs/clip.mov',
    '._clip.mov',
    'sub/._CLIP.mov',
    '.DS_Store',
    'sub/.ds_store',
    'clip.mov.part',
    'clip.mov.PART',
    'clip.mov.tmp',
    'clip.txt',
    'README',
    '@eaDir/clip.mov/SYNOFILE_THUMB_M.jpg',
    'a/#recycle/clip.mov',
    '#snapshot/clip.mov',
    '.Spotlight-V100/Store-V2/x.jpg',
    '.Trashes/501/clip.mov',
    '.fseventsd/x.mov',
    'sub/.TemporaryItems/folders.501/clip.mov',
    '.reelhouse-copy-7/clip.mov',
    'sub/.reelhouse-move-0123456789abcdef',
    'sub/.reelhouse-proxy-x.mp4',
    'eaDir/clip.mov',
    'recycle/clip.mov',
    'not.reelhouse-x/clip.mov',
    '',
  ]
  expect(Object.fromEntries(paths.map((p) => [p, skipped(p)]))).toEqual({
    'clip.mov': undefined,
    'day 1/cam A/clip.MOV': undefined,
    '.hidden.mov': 'hidden',
    '.cache/clip.mov': 'inside the hidden folder .cache',
    'day/.thumbs/clip.mov': 'inside the hidden folder .thumbs',
    '._clip.mov': 'an AppleDouble file (._*)',
    'sub/._CLIP.mov': 'an AppleDouble file (._*)',
    '.DS_Store': 'a .DS_Store file',
    'sub/.ds_store': 'a .DS_Store file',
    'clip.mov.part': 'still being transferred (.part)',
    'clip.mov.PART': 'still being transferred (.part)',
    'clip.mov.tmp': 'a temporary file (.tmp)',
    'clip.txt': 'the extension .txt is not a media type',
    README: 'no extension',
    '@eaDir/clip.mov/SYNOFILE_THUMB_M.jpg': 'inside @eaDir',
    'a/#recycle/clip.mov': 'inside #recycle',
    '#snapshot/clip.mov': 'inside #snapshot',
    '.Spotlight-V100/Store-V2/x.jpg': 'inside .Spotlight-V100',
    '.Trashes/501/clip.mov': 'inside .Trashes',
    '.fseventsd/x.mov': 'inside .fseventsd',
    'sub/.TemporaryItems/folders.501/clip.mov': 'inside .TemporaryItems',
    '.reelhouse-copy-7/clip.mov': 'a Reelhouse work name (.reelhouse-*)',
    'sub/.reelhouse-move-0123456789abcdef': 'a Reelhouse work name (.reelhouse-*)',
    'sub/.reelhouse-proxy-x.mp4': 'a Reelhouse work name (.reelhouse-*)',
    'eaDir/clip.mov': undefined,
    'recycle/clip.mov': undefined,
    'not.reelhouse-x/clip.mov': undefined,
    '': 'not a file',
  })
})

test('excluded is the clutter and work-name rule alone: hidden names are still looked at', () => {
  const paths = [
    '@eaDir',
    'a/@EADIR/b',
    '#recycle',
    '.Trashes',
    '.reelhouse-delete-3',
    'a/.reelhouse-copy-1/b.mov',
    '.cache',
    '._a.mov',
    '.DS_Store',
    'a.part',
    'a.txt',
    'a/b.mov',
    '',
  ]
  expect(Object.fromEntries(paths.map((p) => [p, excluded(p)]))).toEqual({
    '@eaDir': true,
    'a/@EADIR/b': true,
    '#recycle': true,
    '.Trashes': true,
    '.reelhouse-delete-3': true,
    'a/.reelhouse-copy-1/b.mov': true,
    '.cache': false,
    '._a.mov': false,
    '.DS_Store': false,
    'a.part': false,
    'a.txt': false,
    'a/b.mov': false,
    '': false,
  })
})

test('excluded judges each name on its own: a path is excluded exactly when one of its names is (the scan judges names only)', () => {
  const names = [
    '@eaDir',
    '#Recycle',
    '.reelhouse-copy-1',
    '.reelhouse-',
    'x.reelhouse-y',
    'a',
    'b.mov',
    '.snapshot',
    'snapshot',
    'System Volume Information',
    '.cache',
  ]
  for (const a of names)
    for (const b of names) {
      expect([`${a}/${b}`, excluded(`${a}/${b}`)]).toEqual([`${a}/${b}`, excluded(a) || excluded(b)])
      expect([`${a}/x/${b}`, excluded(`${a}/x/${b}`)]).toEqual([`${a}/x/${b}`, excluded(a) || excluded(b)])
    }
})

test('settle gate: a growing file never settles; it settles settleMs after it stops', () => {
  const settle = createSettle(2000)
  const timeline: [number, number, number][] = [
    // [now, size, mtimeMs]
    [0, 100, 0],
    [500, 200, 500],
    [1000, 300, 1000],
    [2500, 400, 2500], // still growing, 2.5 s after the first sight
    [4000, 400, 2500], // unchanged for 1.5 s
    [4499, 400, 2500],
    [4500, 400, 2500], // unchanged for 2 s
    [6000, 400, 2500],
    [6500, 400, 7000], // touched: waits again
    [8500, 400, 7000],
  ]
  expect(timeline.map(([now, size, mtimeMs]) => [now, settle.observe('up/a.mov', { size, mtimeMs }, now)])).toEqual([
    [0, 'waiting'],
    [500, 'waiting'],
    [1000, 'waiting'],
    [2500, 'waiting'],
    [4000, 'waiting'],
    [4499, 'waiting'],
    [4500, 'settled'],
    [6000, 'settled'],
    [6500, 'waiting'],
    [8500, 'settled'],
  ])
})

test('settle gate: the first observation waits even for an old file; pending, nextCheck and forget', () => {
  const settle = createSettle() // default 2 s
  expect({
    first: settle.observe('a.mov', { size: 10, mtimeMs: -1e9 }, 1000),
    b: settle.observe('b.wav', { size: 5, mtimeMs: 0 }, 1500),
    empty: settle.observe('c.jpg', { size: 0, mtimeMs: 0 }, 1500),
    pending: settle.pending(),
    nextCheck: settle.nextCheck(),
  }).toEqual({
    first: 'waiting',
    b: 'waiting',
    empty: 'waiting',
    pending: ['a.mov', 'b.wav', 'c.jpg'],
    nextCheck: 3000,
  })

  expect({
    a: settle.observe('a.mov', { size: 10, mtimeMs: -1e9 }, 3000),
    emptyLater: settle.observe('c.jpg', { size: 0, mtimeMs: 0 }, 60_000),
    pending: settle.pending(),
    nextCheck: settle.nextCheck(),
  }).toEqual({ a: 'settled', emptyLater: 'waiting', pending: ['b.wav', 'c.jpg'], nextCheck: 3500 })

  settle.forget('a.mov')
  settle.forget('b.wav')
  expect({
    pending: settle.pending(),
    nextCheck: settle.nextCheck(),
    again: settle.observe('a.mov', { size: 10, mtimeMs: -1e9 }, 9000),
  }).toEqual({
    pending: ['c.jpg'],
    nextCheck: undefined,
    again: 'waiting',
  })
})

test('a .part renamed to its final name waits under the final name, then settles once', () => {
  const settle = createSettle(2000)
  const stat = { size: 1e9, mtimeMs: 100 }
  expect(skipped('card/A001.mov.part')).toBe('still being transferred (.part)')
  expect([settle.observe('card/A001.mov', stat, 5000), settle.observe('card/A001.mov', stat, 7000)]).toEqual([
    'waiting',
    'settled',
  ])
})
