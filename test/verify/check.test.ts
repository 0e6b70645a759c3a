// The check under `reelhouse verify` and the verify task (src/modules/verify/check.ts) on real
// folders: a history of a folder below (a card copied into a project) read as a history of its
// own, links neither followed nor listed, a history of another tool that recorded md5 only, a
// large file hashed a piece at a time with progress, the walk up to a history that stops at the
// device's folder, a folder above the history's root swapped for a link once the history was read
// (nothing outside is read), and a walk of a large tree that lets the event loop run.
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  type CheckOptions,
  checkFolder,
  locateHistory,
  nearestHistory,
  openDevice,
} from '../../src/modules/verify/check.ts'
import { close } from '../../src/storage/dirfd.ts'
import { CancelledError } from '../../src/storage/errors.ts'
import { c4Id, newGeneration } from '../../src/storage/mhl.ts'
import { folders } from '../helpers/envelope.ts'
import { makeTree } from '../helpers/tree.ts'

const dirs = folders()
afterAll(() => dirs.cleanup())

const xxh64 = (path: string) => Bun.hash.xxHash64(readFileSync(path), 0n).toString(16).padStart(16, '0')

/** A generation of `root`'s history recording `paths` as they are now. */
function record(root: string, paths: string[]) {
  newGeneration(
    root,
    paths.map((path) => ({
      path,
      size: readFileSync(join(root, path)).length,
      lastModified: new Date(),
      xxh64: xxh64(join(root, path)),
    })),
    { process: 'transfer' },
  )
}

async function check(root: string, within = '', onProgress?: CheckOptions['onProgress']) {
  const fd = openDevice(root, '')
  try {
    return await checkFolder(fd, root, within, { onProgress })
  } finally {
    close(fd)
  }
}

test('a card copied into a project: its own history is read too, the deepest that records a file wins, and every history expects its files', async () => {
  const root = join(dirs.make(), 'Project')
  makeTree(root, {
    'Cut.prproj': 'project',
    'A001/CLIP/A001C001.mov': 40_000,
    'A001/CLIP/A001C002.mov': 30_000,
    'A001/latest': { link: 'CLIP/A001C001.mov' },
  })
  // The card's own history (a DIT tool's offload) records both clips; the project's only its file.
  record(join(root, 'A001'), ['CLIP/A001C001.mov', 'CLIP/A001C002.mov'])
  record(root, ['Cut.prproj'])
  const first = await check(root)
  expect({
    verified: first.verified,
    new: first.new,
    missing: first.missing,
    failed: first.failed,
    nested: first.nested,
  }).toEqual({
    verified: ['A001/CLIP/A001C001.mov', 'A001/CLIP/A001C002.mov', 'Cut.prproj'],
    new: [],
    missing: [],
    failed: [],
    nested: [join(root, 'A001', 'ascmhl')],
  })
  unlinkSync(join(root, 'A001', 'CLIP', 'A001C002.mov'))
  const recorded = xxh64(join(root, 'A001', 'CLIP', 'A001C001.mov'))
  writeFileSync(join(root, 'A001', 'CLIP', 'A001C001.mov'), 'other bytes')
  const second = await check(root)
  expect({ failed: second.failed, missing: second.missing }).toEqual({
    failed: [{ path: 'A001/CLIP/A001C001.mov', recorded, found: xxh64(join(root, 'A001', 'CLIP', 'A001C001.mov')) }],
    missing: ['A001/CLIP/A001C002.mov'],
  })
  // Within the card's folder only: the project's file is neither checked nor missing.
  const within = await check(root, 'A001')
  expect({ verified: within.verified, missing: within.missing }).toEqual({
    verified: [],
    missing: ['A001/CLIP/A001C002.mov'],
  })
})

test("another tool's history that recorded md5 only: the file is unverifiable, not failed and not new", async () => {
  const root = join(dirs.make(), 'Card')
  makeTree(root, { 'clip.mov': 'bytes', 'other.mov': 'more' })
  const manifest = Buffer.from(
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<hashlist version="2.0" xmlns="urn:ASC:MHL:v2.0">',
      '  <creatorinfo><creationdate>2024-05-06T07:08:09+00:00</creationdate><hostname>dit</hostname><tool version="1">Other</tool></creatorinfo>',
      '  <processinfo><process>in-place</process></processinfo>',
      '  <hashes>',
      '    <hash><path size="5">clip.mov</path><md5 action="original">4b3a2c1d0e9f8a7b6c5d4e3f2a1b0c9d</md5></hash>',
      `    <hash><path size="4">other.mov</path><xxh64 action="original">${xxh64(join(root, 'other.mov'))}</xxh64></hash>`,
      '  </hashes>',
      '</hashlist>',
      '',
    ].join('\n'),
  )
  const name = '0001_Card_2024-05-06_070809Z.mhl'
  makeTree(root, {
    [`ascmhl/${name}`]: manifest.toString(),
    'ascmhl/ascmhl_chain.xml': `<?xml version="1.0" encoding="UTF-8"?>\n<ascmhldirectory xmlns="urn:ASC:MHL:DIRECTORY:v2.0">\n  <hashlist sequencenr="1">\n    <path>${name}</path>\n    <c4>${c4Id(manifest)}</c4>\n  </hashlist>\n</ascmhldirectory>\n`,
  })
  const report = await check(root)
  expect({ verified: report.verified, unverifiable: report.unverifiable, new: report.new }).toEqual({
    verified: ['other.mov'],
    unverifiable: [{ path: 'clip.mov', formats: ['md5'] }],
    new: [],
  })
})

test('a large file is hashed a piece at a time, with progress of its bytes; the files are counted first', async () => {
  const root = join(dirs.make(), 'Big')
  makeTree(root, { 'big.mxf': 9 * 1024 * 1024 + 7, 'small.txt': 'x' })
  record(root, ['big.mxf', 'small.txt'])
  const seen: { files: number; filesTotal: number; bytes: number }[] = []
  const report = await check(root, '', (p) => seen.push(p))
  expect(report.verified).toEqual(['big.mxf', 'small.txt'])
  expect(seen.every((p) => p.filesTotal === 2)).toBe(true)
  expect(seen.some((p) => p.files === 0 && p.bytes > 0 && p.bytes < 9 * 1024 * 1024)).toBe(true)
  expect(seen.at(-1)).toEqual({ files: 2, filesTotal: 2, bytes: 9 * 1024 * 1024 + 8 })
})

test('the nearest history above a file stops at the device folder; locateHistory finds the root from a file inside', async () => {
  const outer = dirs.make()
  const device = join(outer, 'disk')
  makeTree(outer, { 'disk/show/day1/clip.mov': 'essence' })
  // A history above the device's folder records the file: never read.
  record(outer, ['disk/show/day1/clip.mov'])
  expect(nearestHistory(device, join(device, 'show', 'day1'), 'clip.mov')).toBeUndefined()
  // One in the production's folder does.
  record(join(device, 'show'), ['day1/clip.mov'])
  const found = nearestHistory(device, join(device, 'show', 'day1') + '/', 'clip.mov')
  expect(found && { root: found.root, at: found.at, rel: found.rel, recorded: found.expected?.recorded }).toEqual({
    root: join(device, 'show'),
    at: 'show',
    rel: 'day1/clip.mov',
    recorded: xxh64(join(device, 'show', 'day1', 'clip.mov')),
  })
  expect(locateHistory(join(device, 'show', 'day1', 'clip.mov'))).toEqual({
    root: join(device, 'show'),
    within: 'day1/clip.mov',
  })
})

test("a folder between the device and the history's root swapped for a link once the history was read: the check stays in the folder it opened, nothing of the link's target is read", async () => {
  const device = join(dirs.make(), 'disk')
  makeTree(device, {
    'Prod/Show/Cut/Cut.prproj': 'project',
    'Prod/Show/Cut/Media/A001.mov': 4_000,
    // Another production's tree, with the same names and other bytes, and names of its own.
    'Other/Show/Cut/Cut.prproj': 'another project',
    'Other/Show/Cut/Media/A001.mov': 5_000,
    'Other/Show/Cut/Media/Secret.mov': 'not ours',
  })
  record(join(device, 'Prod', 'Show'), ['Cut/Cut.prproj', 'Cut/Media/A001.mov'])
  // As the service does it: the nearest history above the project's folder, its root opened from the device.
  const nearest = nearestHistory(device, join(device, 'Prod', 'Show', 'Cut'))!
  expect({ at: nearest.at, rel: nearest.rel }).toEqual({ at: 'Prod/Show', rel: 'Cut' })
  const root = openDevice(device, nearest.at)
  let swapped = false
  try {
    const report = await checkFolder(root, nearest.root, nearest.rel, {
      onHistory: () => {
        // Prod becomes a link to the other production (the history root's path now leads there).
        renameSync(join(device, 'Prod'), join(device, 'Prod-moved'))
        symlinkSync(join(device, 'Other'), join(device, 'Prod'))
        swapped = true
      },
    })
    expect(swapped).toBe(true)
    expect({
      verified: report.verified,
      failed: report.failed,
      missing: report.missing,
      new: report.new,
      found: report.found.map((f) => [f.path, f.xxh64]),
    }).toEqual({
      verified: ['Cut/Cut.prproj', 'Cut/Media/A001.mov'],
      failed: [],
      missing: [],
      new: [],
      found: [
        ['Cut/Cut.prproj', xxh64(join(device, 'Prod-moved', 'Show', 'Cut', 'Cut.prproj'))],
        ['Cut/Media/A001.mov', xxh64(join(device, 'Prod-moved', 'Show', 'Cut', 'Media', 'A001.mov'))],
      ],
    })
  } finally {
    close(root)
  }
})

test('the walk of a large tree (20,000 files) lets the event loop run: other work runs while it lists the folders', async () => {
  const root = join(dirs.make(), 'Many')
  // 20,000 tiny files in 200 folders, one of them recorded.
  for (let d = 0; d < 200; d++) {
    const dir = join(root, `D${String(d).padStart(3, '0')}`)
    mkdirSync(dir, { recursive: true })
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `f${f}.bin`), String(f))
  }
  record(root, ['D000/f0.bin'])
  // Something else the process has to do: runs once each time the event loop gets a turn.
  let turns = 0
  let stop = false
  const other = () => {
    turns++
    if (!stop) setImmediate(other)
  }
  setImmediate(other)
  // The walk lists every folder before the first file is hashed (hashing reads on the thread
  // pool, which gives the loop turns anyway): counted there, then the check is stopped.
  let turnsWhenWalked: number | undefined
  const stopped = new AbortController()
  const fd = openDevice(root, '')
  try {
    const error = await checkFolder(fd, root, '', {
      signal: stopped.signal,
      onWalked: () => {
        turnsWhenWalked = turns
        stopped.abort('walked')
      },
    }).catch((e) => e)
    expect(error).toBeInstanceOf(CancelledError)
  } finally {
    stop = true
    close(fd)
  }
  expect(turnsWhenWalked).toBeGreaterThan(1)
}, 120_000)
