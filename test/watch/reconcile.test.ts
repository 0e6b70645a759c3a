// The pure diff of disk and catalogue (src/watch/reconcile.ts), rule by rule, on plain arrays.
import { expect, test } from 'bun:test'
import { type DiskEntry, type MediaRow, type ProjectRow, type ReconcileOptions, type Reconciliation, reconcile } from '../../src/watch/reconcile.ts'

// Devices: 1 is the upload device (watch folder) of production 7; 2 holds projects; 3 is another
// watched device on the same file system as 1 (dev 10); 4 is unmounted.
const roots = new Map([
  [1, '/v/media/'],
  [2, '/v/proj/'],
  [3, '/v/other/'],
  [4, '/v/gone/'],
])
const DEV = 10
/** A file's birth time in these tests: one per inode, unless a test says otherwise. */
const stampFor = (ino: number) => 1_700_000_000_000 + ino
const opts = (over: Partial<ReconcileOptions> = {}): ReconcileOptions => ({
  scope: ['/v/media/'],
  roots,
  rootPresent: (device) => device !== 4,
  uploadDevices: new Map([[1, 7]]),
  ...over,
})
const file = (path: string, device: number, ino: number, size = 100): DiskEntry => ({ path, device, kind: 'file', dev: DEV, ino, stamp: stampFor(ino), size, mtimeMs: 5000 })
let dirIno = 1_000_000
const dir = (path: string, device: number): DiskEntry => ({ path, device, kind: 'dir', dev: DEV, ino: dirIno, stamp: stampFor(dirIno++), size: 4096, mtimeMs: 5000 })
const row = (id: number, path_file: string, device: number, ino: number | null, flags: Partial<MediaRow> = {}): MediaRow => ({
  id, path_file, device, is_archive: false, is_production: true, file_dev: ino === null ? null : DEV, file_ino: ino, file_stamp: ino === null ? null : stampFor(ino), ...flags,
})
const project = (id: number, bundle_root: string, flags: Partial<ProjectRow> = {}): ProjectRow => ({
  id, bundle_root, device: 2, is_archive: false, is_production: true, busy: false, ...flags,
})
const nothing: Reconciliation = { offline: [], online: [], moves: [], identity: [], ingest: [], projectsOffline: [], projectsOnline: [] }
const media = (rows: MediaRow[]) => ({ media: rows, projects: [] })
const candidate = (e: DiskEntry, kind: 'video' | 'audio' | 'image') => ({
  path: e.path, device: e.device, production: 7, kind, dev: e.dev, ino: e.ino, size: e.size, mtimeMs: e.mtimeMs,
})

test('present and offline → online; online and missing in the scope → offline; outside the scope → untouched', () => {
  const disk = [dir('/v/media/', 1), file('/v/media/a.mov', 1, 1), file('/v/media/d.mov', 1, 4)]
  const rows = [
    row(1, '/v/media/a.mov', 1, 1, { is_production: false }),
    row(2, '/v/media/b.mov', 1, 2),
    row(3, '/v/proj/c.mov', 2, 3),
    row(4, '/v/media/d.mov', 1, 4),
    row(5, '/v/media/e.mov', 1, 5, { is_production: false }),
  ]
  expect(reconcile(disk, media(rows), opts())).toEqual({ ...nothing, online: [1], offline: [2] })
})

test('scope paths are folders or single files, spelled with or without the final slash', () => {
  const rows = [row(1, '/v/media/day/a.mov', 1, 1), row(2, '/v/media/day2/b.mov', 1, 2), row(3, '/v/media/c.mov', 1, 3), row(4, '/v/media/cc.mov', 1, 4)]
  expect(reconcile([], media(rows), opts({ scope: ['/v/media/day', '/v/media/c.mov'] }))).toEqual({ ...nothing, offline: [1, 3] })
})

test('a file renamed within the scope keeps its asset: moved, not offline, not imported', () => {
  const moved = file('/v/media/new name.mov', 1, 5)
  expect(reconcile([dir('/v/media/', 1), moved], media([row(1, '/v/media/old.mov', 1, 5)]), opts())).toEqual({
    ...nothing,
    moves: [{ id: 1, path: '/v/media/new name.mov', device: 1, dev: DEV, ino: 5, stamp: stampFor(5) }],
  })
})

test('a folder of 1,000 files renamed is 1,000 moves in one result, with no offline and no ingest', () => {
  const n = 1000
  const rows = Array.from({ length: n }, (_, i) => row(i + 1, `/v/media/day 1/clip${i}.mov`, 1, 5000 + i))
  const disk = [dir('/v/media/', 1), dir('/v/media/day 1 (graded)/', 1), ...rows.map((r, i) => file(`/v/media/day 1 (graded)/clip${i}.mov`, 1, 5000 + i))]
  const moves = rows.map((r, i) => ({ id: r.id, path: `/v/media/day 1 (graded)/clip${i}.mov`, device: 1, dev: DEV, ino: 5000 + i, stamp: stampFor(5000 + i) }))

  // A whole-device scan sees both names.
  expect(reconcile(disk, media(rows), opts())).toEqual({ ...nothing, moves })

  // The aggregator's order: the new folder is scanned first, the rows are found by identity
  // outside the scope (still online at their old paths).
  const newFolderOnly = disk.filter((e) => e.path.startsWith('/v/media/day 1 (graded)/'))
  expect(reconcile(newFolderOnly, media(rows), opts({ scope: ['/v/media/day 1 (graded)/'] }))).toEqual({ ...nothing, moves })

  // Why the order matters: the old folder scanned first, alone, can only say "gone".
  expect(reconcile([], media(rows), opts({ scope: ['/v/media/day 1/'] })).offline.length).toBe(n)
})

test('a freed inode given to a new file is not a move: the stamp (birth time) differs', () => {
  // ext4 hands the inode of a deleted clip to the next new file at once.
  const reused = { ...file('/v/media/new.mov', 1, 9), stamp: stampFor(9) + 5_000 }
  const rows = [row(1, '/v/media/deleted.mov', 1, 9)]
  expect(reconcile([dir('/v/media/', 1), reused], media(rows), opts())).toEqual({ ...nothing, offline: [1], ingest: [candidate(reused, 'video')] })
  // Found from outside the scope (the new name scanned first): the row stays, nothing moves.
  expect(reconcile([reused], media(rows), opts({ scope: ['/v/media/new.mov'] }))).toEqual({ ...nothing, ingest: [candidate(reused, 'video')] })
  // A row with no stamp recorded yet (made before stamps were) is not matched either.
  const legacy = [row(1, '/v/media/deleted.mov', 1, 9, { file_stamp: null })]
  expect(reconcile([dir('/v/media/', 1), file('/v/media/new.mov', 1, 9)], media(legacy), opts()).moves).toEqual([])
  // The same inode and stamp: a move.
  expect(reconcile([dir('/v/media/', 1), file('/v/media/new.mov', 1, 9)], media(rows), opts()).moves).toHaveLength(1)
})

test('an offline asset whose file shows up under another name (same inode and birth time) moves and comes back online', () => {
  // Its old name was scanned first (or it was moved away and back): it is the same file.
  const rows = [row(1, '/v/media/old.mov', 1, 9, { is_production: false }), row(2, '/v/media/online.mov', 1, 8)]
  const disk = [dir('/v/media/', 1), file('/v/media/new.mov', 1, 9), file('/v/media/online.mov', 1, 8)]
  expect(reconcile(disk, media(rows), opts())).toEqual({
    ...nothing, online: [1], moves: [{ id: 1, path: '/v/media/new.mov', device: 1, dev: DEV, ino: 9, stamp: stampFor(9) }],
  })
  // An online row and an offline one claiming the same file: the online one moves.
  const twice = [row(1, '/v/media/old.mov', 1, 9, { is_production: false }), row(2, '/v/media/other.mov', 1, 9)]
  expect(reconcile([dir('/v/media/', 1), file('/v/media/new.mov', 1, 9)], media(twice), opts()).moves.map((m) => m.id)).toEqual([2])
})

test('a move across two device ids on one file system: allowed when both are watched', () => {
  const arrived = file('/v/media/x.mov', 1, 9)
  const rows = [row(1, '/v/other/x.mov', 3, 9)]
  const bothScopes = { scope: ['/v/media/', '/v/other/'] }
  expect(reconcile([arrived], media(rows), opts(bothScopes))).toEqual({
    ...nothing,
    moves: [{ id: 1, path: '/v/media/x.mov', device: 1, dev: DEV, ino: 9, stamp: stampFor(9) }],
  })
  // Found by identity from outside the scope: also a move.
  expect(reconcile([arrived], media(rows), opts()).moves).toEqual([{ id: 1, path: '/v/media/x.mov', device: 1, dev: DEV, ino: 9, stamp: stampFor(9) }])
  // Device 3 not watched: no move. Seen from both scopes, the old row goes offline and the file
  // in the watch folder is new.
  expect(reconcile([arrived], media(rows), opts({ ...bothScopes, watched: (d) => d !== 3 }))).toEqual({
    ...nothing,
    offline: [1],
    ingest: [candidate(arrived, 'video')],
  })
})

test('a file replaced by another inode at the same path stays the same asset; its identity is reported', () => {
  // An editor saving "with backup": a.mov renamed to a_old.mov, a new a.mov written.
  const newA = file('/v/media/a.mov', 1, 2)
  const oldA = file('/v/media/a_old.mov', 1, 1)
  const rows = [row(1, '/v/media/a.mov', 1, 1), row(2, '/v/media/b.mov', 1, null)]
  expect(reconcile([newA, oldA, file('/v/media/b.mov', 1, 3)], media(rows), opts())).toEqual({
    ...nothing,
    identity: [
      { id: 1, dev: DEV, ino: 2, stamp: stampFor(2) },
      { id: 2, dev: DEV, ino: 3, stamp: stampFor(3) }, // no identity recorded yet: filled in
    ],
    // The old bytes under the other name are a file no asset is now: imported.
    ingest: [candidate(oldA, 'video')],
  })
})

test('an unmounted device: nothing on it goes offline, media or projects', () => {
  const rows = [row(1, '/v/gone/a.mov', 4, 1), row(2, '/v/gone/b.mov', 4, 2)]
  const projects = [project(1, '/v/gone/p/', { device: 4 })]
  expect(reconcile([], { media: rows, projects }, opts({ scope: ['/v/gone/'] }))).toEqual(nothing)
  // Its rows' identities are not taken elsewhere either.
  expect(reconcile([file('/v/media/a.mov', 1, 1)], media(rows), opts())).toEqual(nothing)
  // The same with the root present: offline.
  expect(reconcile([], { media: rows, projects }, opts({ scope: ['/v/gone/'], rootPresent: () => true }))).toEqual({
    ...nothing,
    offline: [1, 2],
    projectsOffline: [1],
  })
})

test('archive-only is never touched; archived-and-online moves but never goes offline; offline-but-not-archived comes back', () => {
  const disk = [
    file('/v/media/arch.mov', 1, 1), // archive-only, its file is there (restored by hand)
    file('/v/media/z.mov', 1, 3), // a new file with the identity an archive-only row once had
    file('/v/media/renamed-state2.mov', 1, 5),
    file('/v/media/back.mov', 1, 6),
  ]
  const rows = [
    row(1, '/v/media/arch.mov', 1, 99, { is_archive: true, is_production: false }),
    row(2, '/v/media/arch2.mov', 1, 2, { is_archive: true, is_production: false }),
    row(3, '/v/media/arch3.mov', 1, 3, { is_archive: true, is_production: false }),
    row(4, '/v/media/state2.mov', 1, 4, { is_archive: true }),
    row(5, '/v/media/state2-old.mov', 1, 5, { is_archive: true }),
    row(6, '/v/media/back.mov', 1, 6, { is_production: false }),
  ]
  expect(reconcile(disk, media(rows), opts())).toEqual({
    ...nothing,
    online: [6],
    moves: [{ id: 5, path: '/v/media/renamed-state2.mov', device: 1, dev: DEV, ino: 5, stamp: stampFor(5) }],
    ingest: [candidate(disk[1]!, 'video')],
  })
})

test('projects by bundle folder: offline, online, busy and archived left alone, outside the scope untouched', () => {
  const disk = [
    dir('/v/proj/', 2),
    dir('/v/proj/present-offline/', 2),
    dir('/v/proj/busy-present/', 2),
    dir('/v/proj/fine', 2), // a folder spelled without the final slash
    file('/v/proj/only-a-file-seen/edit.prproj', 2, 40), // the folder holds something: it exists
    file('/v/proj/a-file-not-a-folder', 2, 41),
  ]
  const projects = [
    project(1, '/v/proj/present-offline/', { is_production: false }),
    project(2, '/v/proj/missing/'),
    project(3, '/v/proj/busy-missing/', { busy: true }),
    project(4, '/v/proj/busy-present/', { busy: true, is_production: false }),
    project(5, '/v/proj/archived/', { is_archive: true }),
    project(6, '/v/proj/archive-only/', { is_archive: true, is_production: false }),
    project(7, '/v/elsewhere/p/'),
    project(8, '/v/proj/only-a-file-seen/', { is_production: false }),
    project(9, '/v/proj/fine/'),
    project(10, '/v/proj/a-file-not-a-folder/'),
    project(2, '/v/proj/missing/'), // given twice: listed once
  ]
  expect(reconcile(disk, { media: [], projects }, opts({ scope: ['/v/proj/'] }))).toEqual({
    ...nothing,
    projectsOnline: [1, 8],
    projectsOffline: [2, 10],
  })
})

test('ingest: new media files in a watch folder, typed and given their production; everything else is not', () => {
  const disk = [
    dir('/v/media/', 1),
    dir('/v/media/card/', 1),
    file('/v/media/card/A001.MOV', 1, 1),
    file('/v/media/sound.wav', 1, 2),
    file('/v/media/still.TIFF', 1, 3),
    file('/v/media/._A001.MOV', 1, 4),
    file('/v/media/.DS_Store', 1, 5),
    file('/v/media/big.mxf.part', 1, 6),
    file('/v/media/x.tmp', 1, 7),
    file('/v/media/notes.txt', 1, 8),
    file('/v/media/.hidden/clip.mov', 1, 9),
    file('/v/media/#recycle/clip.mov', 1, 10),
    file('/v/media/@eaDir/still.TIFF/SYNOFILE_THUMB_XL.jpg', 1, 11),
    file('/v/media/offline.mov', 1, 12), // catalogued, offline
    file('/v/media/archived.mov', 1, 13), // catalogued, archive-only
    file('/v/media/audio-row.mp4', 1, 14), // catalogued (as an audio asset: kinds do not matter)
    file('/v/media/link-to-known.mov', 1, 20), // a hard link of an online asset
    { ...file('/v/media/reused-inode.mov', 1, 30), stamp: stampFor(30) + 1 }, // the inode of a deleted, offline asset, given to a new file
    file('/v/proj/not-a-watch-folder.mov', 2, 15),
    dir('/v/media/folder.mov/', 1),
  ]
  const rows = [
    row(1, '/v/media/offline.mov', 1, 112, { is_production: false }),
    row(2, '/v/media/archived.mov', 1, 113, { is_archive: true, is_production: false }),
    row(3, '/v/media/audio-row.mp4', 1, 14),
    row(4, '/v/media/known.mov', 1, 20),
    row(5, '/v/media/deleted.mov', 1, 30, { is_production: false }),
  ]
  const known = file('/v/media/known.mov', 1, 20)
  expect(reconcile([...disk, known], media(rows), opts({ scope: ['/v/media/', '/v/proj/'] }))).toEqual({
    ...nothing,
    online: [1],
    identity: [{ id: 1, dev: DEV, ino: 12, stamp: stampFor(12) }],
    ingest: [
      candidate(disk[2]!, 'video'),
      candidate(disk[3]!, 'audio'),
      candidate(disk[4]!, 'image'),
      candidate(disk[17]!, 'video'),
    ],
  })
})

test('a .part renamed to its final name is imported once', () => {
  const rename = (path: string) => [file(path, 1, 77, 2e9)]
  const steps = [
    reconcile(rename('/v/media/A001.mov.part'), media([]), opts()),
    reconcile(rename('/v/media/A001.mov'), media([]), opts()),
    reconcile(rename('/v/media/A001.mov'), media([row(1, '/v/media/A001.mov', 1, 77)]), opts()), // after the import
  ]
  expect(steps).toEqual([nothing, { ...nothing, ingest: [candidate(file('/v/media/A001.mov', 1, 77, 2e9), 'video')] }, nothing])
})

test('excluded names are ignored on both sides: no move into a work file, nothing judged under clutter', () => {
  const disk = [file('/v/media/.reelhouse-move-0123456789abcdef', 1, 1), file('/v/media/#recycle/b.mov', 1, 2)]
  const rows = [row(1, '/v/media/a.mov', 1, 1), row(2, '/v/media/b.mov', 1, 2), row(3, '/v/media/@eaDir/thumb.jpg', 1, 3)]
  expect(reconcile(disk, media(rows), opts())).toEqual({ ...nothing, offline: [1, 2] })
})

test('a row given twice is judged once; two rows claiming one identity: the first moves, the other goes offline', () => {
  const rows = [row(1, '/v/media/a.mov', 1, 5), row(2, '/v/media/b.mov', 1, 5), row(1, '/v/media/a.mov', 1, 5)]
  expect(reconcile([file('/v/media/c.mov', 1, 5)], media(rows), opts())).toEqual({
    ...nothing,
    moves: [{ id: 1, path: '/v/media/c.mov', device: 1, dev: DEV, ino: 5, stamp: stampFor(5) }],
    offline: [2],
  })
})

test('a hard link is not a move: when the old path is given and still there, nothing changes', () => {
  const rows = [row(1, '/v/other/x.mov', 3, 9)]
  const disk = [file('/v/media/x-link.mov', 1, 9), file('/v/other/x.mov', 3, 9)]
  expect(reconcile(disk, media(rows), opts())).toEqual(nothing)
})

test('a path that is now a folder is missing for its asset', () => {
  expect(reconcile([dir('/v/media/x.mov', 1)], media([row(1, '/v/media/x.mov', 1, 1)]), opts())).toEqual({ ...nothing, offline: [1] })
})
