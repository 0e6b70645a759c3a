// The pure diff of disk and catalogue (src/watch/reconcile.ts), rule by rule, on plain arrays.
import { expect, test } from 'bun:test'
import {
  type DiskEntry,
  type MediaRow,
  type ProjectRow,
  type ReconcileOptions,
  type Reconciliation,
  type Relocation,
  type Sighting,
  reconcile,
} from '../../src/watch/reconcile.ts'

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
/**
 * A file's size: one per inode too, so a new file is never by chance the size of a vanished
 * asset (which would ask for its fingerprint) unless a test says so.
 */
const sizeFor = (ino: number) => 1000 + ino
const opts = (over: Partial<ReconcileOptions> = {}): ReconcileOptions => ({
  scope: ['/v/media/'],
  roots,
  rootPresent: (device) => device !== 4,
  ingestInto: (_path, device) => (device === 1 ? 7 : undefined),
  ...over,
})
const file = (path: string, device: number, ino: number, size = sizeFor(ino)): DiskEntry => ({
  path,
  device,
  kind: 'file',
  dev: DEV,
  ino,
  stamp: stampFor(ino),
  size,
  mtimeMs: 5000,
})
let dirIno = 1_000_000
const dir = (path: string, device: number): DiskEntry => ({
  path,
  device,
  kind: 'dir',
  dev: DEV,
  ino: dirIno,
  stamp: stampFor(dirIno++),
  size: 4096,
  mtimeMs: 5000,
})
/** A row as it was recorded from `file(path, device, ino)`: identity, size, mtime and fingerprint current. */
const row = (
  id: number,
  path_file: string,
  device: number,
  ino: number | null,
  flags: Partial<MediaRow> = {},
): MediaRow => ({
  id,
  path_file,
  device,
  is_archive: false,
  is_production: true,
  file_dev: ino === null ? null : DEV,
  file_ino: ino,
  file_stamp: ino === null ? null : stampFor(ino),
  file_size: ino === null ? null : sizeFor(ino),
  file_mtime: ino === null ? null : 5000,
  file_hash: ino === null ? null : `hash${ino}`,
  ...flags,
})
const project = (id: number, bundle_root: string, flags: Partial<ProjectRow> = {}): ProjectRow => ({
  id,
  bundle_root,
  device: 2,
  is_archive: false,
  is_production: true,
  busy: false,
  ...flags,
})
const nothing: Reconciliation = {
  offline: [],
  online: [],
  relocations: [],
  fingerprint: [],
  needFingerprints: [],
  ambiguous: [],
  ingest: [],
  strangers: [],
  projectsOffline: [],
  projectsOnline: [],
}
const media = (rows: MediaRow[]) => ({ media: rows, projects: [] })
const candidate = (e: DiskEntry, kind: 'video' | 'audio' | 'image') => ({
  path: e.path,
  device: e.device,
  production: 7,
  kind,
  dev: e.dev,
  ino: e.ino,
  stamp: e.stamp,
  size: e.size,
  mtimeMs: e.mtimeMs,
})
/** Asset `id`'s file is `e`, found `by`. */
const relocation = (id: number, e: DiskEntry, by: Relocation['by']): Relocation => ({
  id,
  path: e.path,
  device: e.device,
  dev: e.dev,
  ino: e.ino,
  stamp: e.stamp,
  size: e.size,
  mtimeMs: e.mtimeMs,
  by,
})
/** What the watcher saw at each path. */
const sightings = (entries: [string, Sighting][]) => new Map(entries)
const sightingOf = (e: DiskEntry): Sighting => ({ kind: e.kind, dev: e.dev, ino: e.ino, stamp: e.stamp })

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
  const rows = [
    row(1, '/v/media/day/a.mov', 1, 1),
    row(2, '/v/media/day2/b.mov', 1, 2),
    row(3, '/v/media/c.mov', 1, 3),
    row(4, '/v/media/cc.mov', 1, 4),
  ]
  expect(reconcile([], media(rows), opts({ scope: ['/v/media/day', '/v/media/c.mov'] }))).toEqual({
    ...nothing,
    offline: [1, 3],
  })
})

test('a file renamed within the scope keeps its asset: moved, not offline, not imported', () => {
  const moved = file('/v/media/new name.mov', 1, 5)
  expect(reconcile([dir('/v/media/', 1), moved], media([row(1, '/v/media/old.mov', 1, 5)]), opts())).toEqual({
    ...nothing,
    relocations: [relocation(1, moved, 'identity')],
  })
})

test('a folder of 1,000 files renamed is 1,000 moves in one result, with no offline and no ingest', () => {
  const n = 1000
  const rows = Array.from({ length: n }, (_, i) => row(i + 1, `/v/media/day 1/clip${i}.mov`, 1, 5000 + i))
  const disk = [
    dir('/v/media/', 1),
    dir('/v/media/day 1 (graded)/', 1),
    ...rows.map((r, i) => file(`/v/media/day 1 (graded)/clip${i}.mov`, 1, 5000 + i)),
  ]
  const relocations = rows.map((r, i) =>
    relocation(r.id, file(`/v/media/day 1 (graded)/clip${i}.mov`, 1, 5000 + i), 'identity'),
  )

  // A whole-device scan sees both names.
  expect(reconcile(disk, media(rows), opts())).toEqual({ ...nothing, relocations })

  // The aggregator's order: the new folder is scanned first, the rows are found by identity
  // outside the scope (still online at their old paths).
  const newFolderOnly = disk.filter((e) => e.path.startsWith('/v/media/day 1 (graded)/'))
  expect(reconcile(newFolderOnly, media(rows), opts({ scope: ['/v/media/day 1 (graded)/'] }))).toEqual({
    ...nothing,
    relocations,
  })

  // Why the order matters: the old folder scanned first, alone, can only say "gone".
  expect(reconcile([], media(rows), opts({ scope: ['/v/media/day 1/'] })).offline.length).toBe(n)
})

test('a freed inode given to a new file is not a move: the stamp (birth time) differs', () => {
  // ext4 hands the inode of a deleted clip to the next new file at once. (Another file, another
  // size: the same size would ask for its fingerprint first, see the content tests.)
  const reused = { ...file('/v/media/new.mov', 1, 9, 777), stamp: stampFor(9) + 5_000 }
  const rows = [row(1, '/v/media/deleted.mov', 1, 9)]
  expect(reconcile([dir('/v/media/', 1), reused], media(rows), opts())).toEqual({
    ...nothing,
    offline: [1],
    ingest: [candidate(reused, 'video')],
    strangers: [reused],
  })
  // Found from outside the scope (the new name scanned first): the row stays, nothing moves.
  expect(reconcile([reused], media(rows), opts({ scope: ['/v/media/new.mov'] }))).toEqual({
    ...nothing,
    ingest: [candidate(reused, 'video')],
    strangers: [reused],
  })
  // A row with no stamp recorded yet (made before stamps were) is not matched either.
  const legacy = [row(1, '/v/media/deleted.mov', 1, 9, { file_stamp: null })]
  expect(reconcile([dir('/v/media/', 1), file('/v/media/new.mov', 1, 9)], media(legacy), opts()).relocations).toEqual(
    [],
  )
  // The same inode and stamp: a move.
  expect(
    reconcile([dir('/v/media/', 1), file('/v/media/new.mov', 1, 9)], media(rows), opts()).relocations,
  ).toHaveLength(1)
})

test('an offline asset whose file shows up under another name (same inode and birth time) moves and comes back online', () => {
  // Its old name was scanned first (or it was moved away and back): it is the same file.
  const rows = [row(1, '/v/media/old.mov', 1, 9, { is_production: false }), row(2, '/v/media/online.mov', 1, 8)]
  const disk = [dir('/v/media/', 1), file('/v/media/new.mov', 1, 9), file('/v/media/online.mov', 1, 8)]
  expect(reconcile(disk, media(rows), opts())).toEqual({
    ...nothing,
    online: [1],
    relocations: [relocation(1, disk[1]!, 'identity')],
  })
  // An online row and an offline one claiming the same file: the online one moves.
  const twice = [row(1, '/v/media/old.mov', 1, 9, { is_production: false }), row(2, '/v/media/other.mov', 1, 9)]
  expect(
    reconcile([dir('/v/media/', 1), file('/v/media/new.mov', 1, 9)], media(twice), opts()).relocations.map((m) => m.id),
  ).toEqual([2])
})

test('a move across two device ids on one file system: allowed when both are watched', () => {
  const arrived = file('/v/media/x.mov', 1, 9)
  const rows = [row(1, '/v/other/x.mov', 3, 9)]
  const bothScopes = { scope: ['/v/media/', '/v/other/'] }
  expect(reconcile([arrived], media(rows), opts(bothScopes))).toEqual({
    ...nothing,
    relocations: [relocation(1, arrived, 'identity')],
  })
  // Found by identity from outside the scope: also a move.
  expect(reconcile([arrived], media(rows), opts()).relocations).toEqual([relocation(1, arrived, 'identity')])
  // Device 3 not watched: no move. Seen from both scopes, the old row goes offline.
  // Changed (identity first): the file still holds asset 1's identity, so it is never new: not imported (it was before).
  expect(reconcile([arrived], media(rows), opts({ ...bothScopes, watched: (d) => d !== 3 }))).toEqual({
    ...nothing,
    offline: [1],
  })
})

test('a file replaced by another inode at the same path: the asset follows its own identity, the path follows only where identity says nothing', () => {
  // An editor saving "with backup": a.mov renamed to a_old.mov, a new a.mov written.
  // Changed (identity first): asset 1 is the file holding its identity, now a_old.mov (before, it
  // kept a.mov and a_old.mov was imported). "Saved in place" is the case where the old inode is gone
  // (below); what becomes of the new a.mov is the test 'a path an asset leaves in this pass is free'.
  const newA = file('/v/media/a.mov', 1, 2)
  const oldA = file('/v/media/a_old.mov', 1, 1)
  const b = file('/v/media/b.mov', 1, 3)
  const rows = [row(1, '/v/media/a.mov', 1, 1), row(2, '/v/media/b.mov', 1, null)]
  const { relocations, fingerprint, offline, online } = reconcile([newA, oldA, b], media(rows), opts())
  expect({ relocations, fingerprint, offline, online }).toEqual({
    relocations: [
      relocation(1, oldA, 'identity'),
      relocation(2, b, 'path'), // no identity recorded yet: filled in
    ],
    fingerprint: [{ id: 2, entry: b }], // nor a fingerprint
    offline: [],
    online: [],
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
    relocations: [relocation(5, disk[2]!, 'identity')],
    ingest: [candidate(disk[1]!, 'video')],
    strangers: [disk[1]!],
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
    strangers: [disk[4]!, disk[5]!], // files no asset has, outside a watch folder: only remembered
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
    // The inode of a deleted, offline asset, given to a new file (of another size: the same
    // size would ask for its fingerprint first).
    { ...file('/v/media/reused-inode.mov', 1, 30, 777), stamp: stampFor(30) + 1 },
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
    // The file at its path no asset holds: its file, saved anew (its identity and fingerprint are stale).
    relocations: [relocation(1, disk[13]!, 'path')],
    fingerprint: [{ id: 1, entry: disk[13]! }],
    ingest: [
      candidate(disk[2]!, 'video'),
      candidate(disk[3]!, 'audio'),
      candidate(disk[4]!, 'image'),
      candidate(disk[17]!, 'video'),
    ],
    // Every file no asset has, imported or not (the caller forgets those it imports); clutter is not seen at all.
    strangers: [2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 18].map((i) => disk[i]!),
  })
})

test('a .part renamed to its final name is imported once', () => {
  const rename = (path: string) => [file(path, 1, 77, 2e9)]
  const steps = [
    reconcile(rename('/v/media/A001.mov.part'), media([]), opts()),
    reconcile(rename('/v/media/A001.mov'), media([]), opts()),
    reconcile(rename('/v/media/A001.mov'), media([row(1, '/v/media/A001.mov', 1, 77, { file_size: 2e9 })]), opts()), // after the import
  ]
  const final = file('/v/media/A001.mov', 1, 77, 2e9)
  expect(steps).toEqual([
    { ...nothing, strangers: [file('/v/media/A001.mov.part', 1, 77, 2e9)] }, // seen, not imported
    { ...nothing, ingest: [candidate(final, 'video')], strangers: [final] },
    nothing,
  ])
})

test('excluded names are ignored on both sides: no move into a work file, nothing judged under clutter', () => {
  const disk = [file('/v/media/.reelhouse-move-0123456789abcdef', 1, 1), file('/v/media/#recycle/b.mov', 1, 2)]
  const rows = [
    row(1, '/v/media/a.mov', 1, 1),
    row(2, '/v/media/b.mov', 1, 2),
    row(3, '/v/media/@eaDir/thumb.jpg', 1, 3),
  ]
  expect(reconcile(disk, media(rows), opts())).toEqual({ ...nothing, offline: [1, 2] })
})

test('a row given twice is judged once; two rows claiming one identity: the first moves, the other goes offline', () => {
  const rows = [row(1, '/v/media/a.mov', 1, 5), row(2, '/v/media/b.mov', 1, 5), row(1, '/v/media/a.mov', 1, 5)]
  const c = file('/v/media/c.mov', 1, 5)
  expect(reconcile([c], media(rows), opts())).toEqual({
    ...nothing,
    relocations: [relocation(1, c, 'identity')],
    offline: [2],
  })
})

test('a hard link is not a move: when the old path is given and still there, nothing changes', () => {
  const rows = [row(1, '/v/other/x.mov', 3, 9)]
  const disk = [file('/v/media/x-link.mov', 1, 9), file('/v/other/x.mov', 3, 9)]
  expect(reconcile(disk, media(rows), opts())).toEqual(nothing)
})

test('a path that is now a folder is missing for its asset', () => {
  expect(reconcile([dir('/v/media/x.mov', 1)], media([row(1, '/v/media/x.mov', 1, 1)]), opts())).toEqual({
    ...nothing,
    offline: [1],
  })
})

// Identity first (the header of reconcile.ts), case by case.

test('a rotation of 3 names (mv c b; mv a c): each asset follows its file, the overwritten one goes offline, nothing is new', () => {
  const rows = [row(1, '/v/media/a.mov', 1, 1), row(2, '/v/media/b.mov', 1, 2), row(3, '/v/media/c.mov', 1, 3)]
  const disk = [dir('/v/media/', 1), file('/v/media/b.mov', 1, 3), file('/v/media/c.mov', 1, 1)]
  // By path alone, A and B would keep c and b with C's and A's bytes; by identity, C is at b and A at c.
  expect(reconcile(disk, media(rows), opts())).toEqual({
    ...nothing,
    relocations: [relocation(1, disk[2]!, 'identity'), relocation(3, disk[1]!, 'identity')],
    offline: [2], // its path holds C's file now: B's own bytes are gone
  })
})

test('a rotation of 10 names: ten relocations by identity, nothing offline, nothing imported', () => {
  const n = 10
  const name = (i: number) => `/v/media/n${i % n}.mov`
  const rows = Array.from({ length: n }, (_, i) => row(i + 1, name(i), 1, 100 + i))
  // Each file took the next name (mv n9 tmp; mv n8 n9; …; mv tmp n0): every path is still there.
  const disk = [dir('/v/media/', 1), ...rows.map((_, i) => file(name(i + 1), 1, 100 + i))]
  expect(reconcile(disk, media(rows), opts())).toEqual({
    ...nothing,
    relocations: rows.map((r, i) => relocation(r.id, disk[i + 1]!, 'identity')),
  })
})

test('a swap through a temporary name (mv a t; mv b a; mv t b): the two assets exchange paths, nothing offline', () => {
  const rows = [row(1, '/v/media/a.mov', 1, 1), row(2, '/v/media/b.mov', 1, 2)]
  const disk = [dir('/v/media/', 1), file('/v/media/a.mov', 1, 2), file('/v/media/b.mov', 1, 1)]
  expect(reconcile(disk, media(rows), opts())).toEqual({
    ...nothing,
    relocations: [relocation(1, disk[2]!, 'identity'), relocation(2, disk[1]!, 'identity')],
  })
})

test("saved in place under a new inode: the file at an asset's path that no asset holds is that asset's, its fingerprint is stale", () => {
  const rows = [row(1, '/v/media/a.mov', 1, 1)]
  const saved = file('/v/media/a.mov', 1, 2, 4242) // the editor wrote a new file and renamed it over a.mov; inode 1 is gone
  expect(reconcile([dir('/v/media/', 1), saved], media(rows), opts())).toEqual({
    ...nothing,
    relocations: [relocation(1, saved, 'path')],
    fingerprint: [{ id: 1, entry: saved }],
  })
})

test("a path whose file now holds another asset's identity is handed over; its former holder goes offline unless found elsewhere", () => {
  const rows = [row(1, '/v/media/a.mov', 1, 1), row(2, '/v/media/b.mov', 1, 2)]
  // mv b.mov a.mov: a.mov is B's file now, A's is gone.
  const bOverA = file('/v/media/a.mov', 1, 2)
  expect(reconcile([dir('/v/media/', 1), bOverA], media(rows), opts())).toEqual({
    ...nothing,
    relocations: [relocation(2, bOverA, 'identity')],
    offline: [1],
  })
  // A's file found under another name: both move, nothing offline.
  const aElsewhere = file('/v/media/x.mov', 1, 1)
  expect(reconcile([dir('/v/media/', 1), bOverA, aElsewhere], media(rows), opts())).toEqual({
    ...nothing,
    relocations: [relocation(1, aElsewhere, 'identity'), relocation(2, bOverA, 'identity')],
  })
  // The file there holds the identity of an asset that cannot move here (device 3 unwatched): it is
  // still not A's, and not new either.
  const held = [row(1, '/v/media/a.mov', 1, 1), row(3, '/v/other/c.mov', 3, 3)]
  const cOverA = file('/v/media/a.mov', 1, 3)
  expect(reconcile([dir('/v/media/', 1), cOverA], media(held), opts({ watched: (d) => d !== 3 }))).toEqual({
    ...nothing,
    offline: [1],
  })
})

test("saved anew, then renamed: the sighting of the asset's path names the file it now is", () => {
  const rows = [row(1, '/v/media/a.mov', 1, 1)]
  const b = file('/v/media/b.mov', 1, 2)
  // The watcher saw a.mov holding inode 2 (the new save) before it was renamed to b.mov; inode 1 is gone.
  const seen = sightings([['/v/media/a.mov', sightingOf(b)]])
  const disk = [dir('/v/media/', 1), b]
  expect(reconcile(disk, media(rows), opts({ sightings: seen }))).toEqual({
    ...nothing,
    relocations: [relocation(1, b, 'sighting')],
    fingerprint: [{ id: 1, entry: b }],
  })
  // Without the sighting: A is gone and b.mov is new.
  expect(reconcile(disk, media(rows), opts())).toEqual({
    ...nothing,
    offline: [1],
    ingest: [candidate(b, 'video')],
    strangers: [b],
  })
})

test("a folder renamed, a file inside saved anew: the folder's sighting leads to the file's relative path", () => {
  const rows = [row(1, '/v/media/x/a.wav', 1, 1)]
  const y = dir('/v/media/y/', 1) // folder x, renamed to y: the same folder identity
  const saved = file('/v/media/y/a.wav', 1, 2) // a new inode no asset holds: identity says nothing
  const disk = [dir('/v/media/', 1), y, saved]
  const seen = sightings([['/v/media/x', sightingOf(y)]])
  expect(reconcile(disk, media(rows), opts({ sightings: seen }))).toEqual({
    ...nothing,
    relocations: [relocation(1, saved, 'folder')],
    fingerprint: [{ id: 1, entry: saved }],
  })
  // Without the folder's sighting: A is gone and y/a.wav is new.
  expect(reconcile(disk, media(rows), opts())).toEqual({
    ...nothing,
    offline: [1],
    ingest: [candidate(saved, 'audio')],
    strangers: [saved],
  })
})

test("content: a file of a vanished asset's size is fingerprinted first, then relinked by content, never imported", () => {
  // Restored from a backup onto another file system: a new identity, the same bytes.
  const rows = [row(1, '/v/media/old/a.mov', 1, 1, { is_production: false, file_size: 5_000_000, file_hash: 'hashA' })]
  const restored = { ...file('/v/media/a.mov', 1, 50, 5_000_000), dev: 20 }
  const disk = [dir('/v/media/', 1), restored]
  // First call: its fingerprint decides; it is not imported meanwhile.
  expect(reconcile(disk, media(rows), opts())).toEqual({
    ...nothing,
    needFingerprints: [restored],
    strangers: [restored],
  })
  // Second call, with it: the asset's file, with the fingerprint carried (not read again).
  const fingerprints = new Map([['/v/media/a.mov', 'hashA']])
  expect(reconcile(disk, media(rows), opts({ fingerprints }))).toEqual({
    ...nothing,
    relocations: [{ ...relocation(1, restored, 'content'), hash: 'hashA' }],
    online: [1],
  })
  // An asset going offline in this scan (moved across file systems): the same, and it never goes offline.
  const going = [row(2, '/v/media/b.mov', 1, 2, { file_size: 7_000_000, file_hash: 'hashB' })]
  const copied = { ...file('/v/media/copies/b.mov', 1, 60, 7_000_000), dev: 20 }
  const disk2 = [dir('/v/media/', 1), copied]
  expect(reconcile(disk2, media(going), opts())).toEqual({
    ...nothing,
    offline: [2],
    needFingerprints: [copied],
    strangers: [copied],
  })
  expect(reconcile(disk2, media(going), opts({ fingerprints: new Map([[copied.path, 'hashB']]) }))).toEqual({
    ...nothing,
    relocations: [{ ...relocation(2, copied, 'content'), hash: 'hashB' }],
  })
  // Another fingerprint: a new file after all.
  expect(reconcile(disk2, media(going), opts({ fingerprints: new Map([[copied.path, 'other']]) }))).toEqual({
    ...nothing,
    offline: [2],
    ingest: [candidate(copied, 'video')],
    strangers: [copied],
  })
})

test("content: of two assets with one fingerprint the one with the file's name wins; with neither name, nothing is guessed", () => {
  const same = { file_size: 5_000_000, file_hash: 'same', is_production: false }
  const rows = [row(1, '/v/media/old/a.mov', 1, 1, same), row(2, '/v/media/old/b.mov', 1, 2, same)]
  const b = { ...file('/v/media/new/b.mov', 1, 60, 5_000_000), dev: 20 }
  expect(reconcile([b], media(rows), opts({ fingerprints: new Map([[b.path, 'same']]) }))).toEqual({
    ...nothing,
    relocations: [{ ...relocation(2, b, 'content'), hash: 'same' }],
    online: [2],
  })
  const c = { ...file('/v/media/new/c.mov', 1, 60, 5_000_000), dev: 20 }
  expect(reconcile([c], media(rows), opts({ fingerprints: new Map([[c.path, 'same']]) }))).toEqual({
    ...nothing,
    ambiguous: [
      {
        path: c.path,
        assets: [1, 2],
        reason:
          'assets 1 and 2, whose files vanished, have this content, and none has this file name; nothing was guessed',
      },
    ],
    strangers: [c], // not relinked, and not imported either
  })
  // Two copies, each named as one asset: each its own.
  const a2 = { ...file('/v/media/new/a.mov', 1, 61, 5_000_000), dev: 20 }
  const both = new Map([
    [a2.path, 'same'],
    [b.path, 'same'],
  ])
  expect(reconcile([a2, b], media(rows), opts({ fingerprints: both }))).toEqual({
    ...nothing,
    relocations: [
      { ...relocation(1, a2, 'content'), hash: 'same' },
      { ...relocation(2, b, 'content'), hash: 'same' },
    ],
    online: [1, 2],
  })
})

test('content: an asset whose file is still at its path is no candidate, whatever its content: the one that vanished follows its file; a real tie names the assets that tie', () => {
  // cp a.mov a-copy.mov (both catalogued), then a.mov moved across file systems as b.mov (a new inode).
  const same = { file_size: 5_000_000, file_hash: 'same' }
  const copy = file('/v/media/day/a-copy.mov', 1, 2, 5_000_000)
  const rows = [row(1, '/v/media/day/a.mov', 1, 1, same), row(2, copy.path, 1, 2, same)]
  const b = { ...file('/v/other/b.mov', 3, 60, 5_000_000), dev: 20 }
  const scope = ['/v/media/day/', b.path]
  const disk = [dir('/v/media/day/', 1), copy, b]
  expect(reconcile(disk, media(rows), opts({ scope }))).toEqual({
    ...nothing,
    offline: [1],
    needFingerprints: [b],
    strangers: [b],
  })
  expect(reconcile(disk, media(rows), opts({ scope, fingerprints: new Map([[b.path, 'same']]) }))).toEqual({
    ...nothing,
    relocations: [{ ...relocation(1, b, 'content'), hash: 'same' }],
  })
  // The same when a.mov's asset is offline since an earlier scan and the copy is found in place.
  const offline = [row(1, '/v/media/day/a.mov', 1, 1, { ...same, is_production: false }), row(2, copy.path, 1, 2, same)]
  expect(reconcile(disk, media(offline), opts({ scope, fingerprints: new Map([[b.path, 'same']]) }))).toEqual({
    ...nothing,
    relocations: [{ ...relocation(1, b, 'content'), hash: 'same' }],
    online: [1],
  })
  // Two vanished with that content besides the copy in place, neither named b.mov: those two tie.
  const three = [...rows, row(3, '/v/media/day/c.mov', 1, 3, same)]
  expect(reconcile(disk, media(three), opts({ scope, fingerprints: new Map([[b.path, 'same']]) }))).toEqual({
    ...nothing,
    offline: [1, 3],
    ambiguous: [
      {
        path: b.path,
        assets: [1, 3],
        reason:
          'assets 1 and 3, whose files vanished, have this content, and none has this file name; nothing was guessed',
      },
    ],
    strangers: [b],
  })
})

test('content: one vanished asset and two new files with its content, neither with its name: a tie of files, said so', () => {
  const rows = [row(1, '/v/media/old/a.mov', 1, 1, { file_size: 5_000_000, file_hash: 'same', is_production: false })]
  const [b, c] = [
    { ...file('/v/media/new/b.mov', 1, 60, 5_000_000), dev: 20 },
    { ...file('/v/media/new/c.mov', 1, 61, 5_000_000), dev: 20 },
  ]
  const fingerprints = new Map([
    [b.path, 'same'],
    [c.path, 'same'],
  ])
  expect(reconcile([b, c], media(rows), opts({ fingerprints }))).toEqual({
    ...nothing,
    ambiguous: [b, c].map((e) => ({
      path: e.path,
      assets: [1],
      reason:
        'asset 1, whose file vanished, has this content; so has another new file, and none has its file name; nothing was guessed',
    })),
    strangers: [b, c],
  })
})

test("content: an unreadable fingerprint ('') matches nothing: the file is new", () => {
  const rows = [row(1, '/v/media/old/a.mov', 1, 1, { is_production: false, file_size: 5_000_000, file_hash: 'hashA' })]
  const e = file('/v/media/a.mov', 1, 50, 5_000_000)
  expect(reconcile([e], media(rows), opts({ fingerprints: new Map([[e.path, '']]) }))).toEqual({
    ...nothing,
    ingest: [candidate(e, 'video')],
    strangers: [e],
  })
})

test('our own output is never input: not imported, not a move target, its rows left as they are', () => {
  const ownOutput = (path: string) => path.startsWith('/v/media/proxies/')
  const rows = [row(1, '/v/media/a.mov', 1, 1), row(2, '/v/media/proxies/p.mov', 1, 2)]
  const disk = [
    dir('/v/media/', 1),
    dir('/v/media/proxies/', 1),
    file('/v/media/proxies/a.mov', 1, 1),
    file('/v/media/proxies/new.mov', 1, 7),
  ]
  expect(reconcile(disk, media(rows), opts({ ownOutput }))).toEqual({ ...nothing, offline: [1] })
  // Without it: A would move into the proxies, the proxy row go offline and the new file be imported.
  expect(reconcile(disk, media(rows), opts())).toEqual({
    ...nothing,
    relocations: [relocation(1, disk[2]!, 'identity')],
    offline: [2],
    ingest: [candidate(disk[3]!, 'video')],
    strangers: [disk[3]!],
  })
})

test('ingestInto decides per path: undefined imports nothing', () => {
  const inWatch = file('/v/media/watch/in.mov', 1, 1)
  const outside = file('/v/media/elsewhere.mov', 1, 2)
  const disk = [dir('/v/media/', 1), inWatch, outside]
  expect(reconcile(disk, media([]), opts({ ingestInto: () => undefined }))).toEqual({
    ...nothing,
    strangers: [inWatch, outside],
  })
  const asked: [string, number][] = []
  const ingestInto = (path: string, device: number) => (
    asked.push([path, device]), path.startsWith('/v/media/watch/') ? 9 : undefined
  )
  expect(reconcile(disk, media([]), opts({ ingestInto }))).toEqual({
    ...nothing,
    ingest: [{ ...candidate(inWatch, 'video'), production: 9 }],
    strangers: [inWatch, outside],
  })
  expect(asked).toEqual([
    [inWatch.path, 1],
    [outside.path, 1],
  ])
})

test('archive-only rows are never touched, and the file at their path is never imported', () => {
  const rows = [
    row(1, '/v/media/arch.mov', 1, 1, { is_archive: true, is_production: false }), // its file is there, as recorded
    row(2, '/v/media/arch2.mov', 1, 2, { is_archive: true, is_production: false }), // another file at its path
    row(3, '/v/media/arch3.mov', 1, 3, { is_archive: true, is_production: false }), // gone
  ]
  const disk = [dir('/v/media/', 1), file('/v/media/arch.mov', 1, 1), file('/v/media/arch2.mov', 1, 6)]
  // Not online, not relocated, not fingerprinted; arch2.mov not imported.
  expect(reconcile(disk, media(rows), opts())).toEqual(nothing)
})

test('two assets naming one path, one offline: the online one keeps it, the offline one stays offline', () => {
  // Listed offline first: the online row still decides first.
  const rows = [row(1, '/v/media/a.mov', 1, 1, { is_production: false }), row(2, '/v/media/a.mov', 1, 2)]
  expect(reconcile([dir('/v/media/', 1), file('/v/media/a.mov', 1, 2)], media(rows), opts())).toEqual(nothing)
  // Saved anew there (an identity neither holds): the online one takes it by path.
  const saved = file('/v/media/a.mov', 1, 3)
  expect(reconcile([dir('/v/media/', 1), saved], media(rows), opts())).toEqual({
    ...nothing,
    relocations: [relocation(2, saved, 'path')],
    fingerprint: [{ id: 2, entry: saved }],
  })
})

test('a path an asset leaves in this pass is free: the new file there is new', () => {
  // mv a.mov x.mov, then a new clip copied in as a.mov: asset 1 follows its file to x.mov; the new
  // a.mov holds no asset's identity and, once this is applied, lies at no catalogued path. Left out
  // of both ingest and strangers, nothing would look at it again until another scan of its folder.
  const rows = [row(1, '/v/media/a.mov', 1, 1)]
  const newcomer = file('/v/media/a.mov', 1, 2)
  const moved = file('/v/media/x.mov', 1, 1)
  expect(reconcile([dir('/v/media/', 1), newcomer, moved], media(rows), opts())).toEqual({
    ...nothing,
    relocations: [relocation(1, moved, 'identity')],
    ingest: [candidate(newcomer, 'video')],
    strangers: [newcomer],
  })
})

test('two offline assets naming one path, and a new file there: its content decides; when it names neither, nothing is guessed and the reason says why', () => {
  // a.mov deleted (asset 1 offline), another clip saved as a.mov and deleted too (asset 2): a restore.
  const rows = [
    row(1, '/v/media/a.mov', 1, 1, { is_production: false }),
    row(2, '/v/media/a.mov', 1, 2, { is_production: false }),
  ]
  const restored = file('/v/media/a.mov', 1, 3, sizeFor(2))
  const disk = [dir('/v/media/', 1), restored]
  expect(reconcile(disk, media(rows), opts())).toEqual({ ...nothing, needFingerprints: [restored] })
  expect(reconcile(disk, media(rows), opts({ fingerprints: new Map([[restored.path, 'hash2']]) }))).toEqual({
    ...nothing,
    relocations: [{ ...relocation(2, restored, 'content'), hash: 'hash2' }],
    online: [2],
  })
  expect(reconcile(disk, media(rows), opts({ fingerprints: new Map([[restored.path, 'other']]) }))).toEqual({
    ...nothing,
    ambiguous: [
      {
        path: restored.path,
        assets: [1, 2],
        reason:
          "assets 1 and 2 named this path and their files vanished, and none has this file's content; nothing was guessed",
      },
    ],
  })
})
