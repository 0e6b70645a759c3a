// ASC MHL v2.0 histories (src/storage/mhl.ts) on real folders: generations written and read back,
// the chain's C4 ids guarding the manifests, a folder checked against its history (changed,
// removed, new, ignored files), paths that need escaping, and the XML checked by xmllint where
// the machine has it.
import { expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import {
  copyFileSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import {
  CHAIN_FILE,
  DEFAULT_IGNORE,
  type Action,
  type Generation,
  type NewEntry,
  c4Id,
  expectedHashes,
  historyFolderAt,
  isRecorded,
  newGeneration,
  readHistory,
  verifyAgainst,
} from '../../src/storage/mhl.ts'
import { AT_FDCWD, DIR_FLAGS, cName, close, openat } from '../../src/storage/dirfd.ts'
import { VERSION } from '../../src/version.ts'
import { disposableDir } from '../helpers/temp.ts'

const XMLLINT = '/usr/bin/xmllint'
const hasXmllint = await Bun.file(XMLLINT).exists()

const xxh = (text: string) => Bun.hash.xxHash64(Buffer.from(text), 0n).toString(16).padStart(16, '0')
/** A time as the manifests write it. */
const iso = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, '+00:00')

/** When the files were last modified: set, so that the recorded dates are known. */
const MTIME = new Date('2024-03-01T10:20:30Z')
const FIRST = new Date('2024-05-06T07:08:09.500Z')
const SECOND = new Date('2024-05-07T23:59:01Z')
const THIRD = new Date('2024-05-09T12:00:00Z')

const CLIPS = {
  'Clips/A002C006_141024_R2EC.mov': 'first clip',
  'Clips/A002C007_141024_R2EC.mov': 'second clip',
  'Sidecar.txt': 'notes',
}

/** A card folder named A002R2EC in `parent`, holding `files` (path → content). */
function card(parent: string, files: Record<string, string>): string {
  const root = join(parent, 'A002R2EC')
  mkdirSync(root)
  for (const [path, content] of Object.entries(files)) write(root, path, content)
  return root
}

function write(root: string, path: string, content: string) {
  const at = join(root, path)
  mkdirSync(join(at, '..'), { recursive: true })
  writeFileSync(at, content)
  utimesSync(at, MTIME, MTIME)
}

/** The folder checked against its history, then recorded as a new generation, as a copy task would. */
async function seal(root: string, now: Date, process: 'in-place' | 'transfer' = 'in-place') {
  const check = await verifyAgainst(root)
  return { check, written: newGeneration(root, check.files, { process, now, hostname: 'dit-cart' }) }
}

/** What readHistory gives for files recorded from `files` with `action`. */
const recorded = (files: NewEntry[], action: Action) =>
  Object.fromEntries(
    files.map((f) => [
      f.path,
      {
        size: f.size,
        lastModified: iso(f.lastModified),
        xxh64: { value: f.xxh64, action, hashDate: iso(f.hashDate!) },
        otherFormats: [],
      },
    ]),
  )

const plain = (g: Generation) => ({ ...g, files: Object.fromEntries(g.files) })
const manifestsOf = (root: string) =>
  readdirSync(join(root, 'ascmhl'))
    .filter((n) => n.endsWith('.mhl'))
    .sort()
const c4Of = (root: string, name: string) => c4Id(readFileSync(join(root, 'ascmhl', name)))

/** xmllint's verdict on each file (true: well-formed), or undefined where xmllint is not installed. */
function xmllint(paths: string[]): boolean[] | undefined {
  if (!hasXmllint) return undefined
  return paths.map((path) => Bun.spawnSync([XMLLINT, '--noout', path], { stderr: 'pipe' }).exitCode === 0)
}

test('two generations written and read back: names, chain, creator, actions, hashes and dates', async () => {
  using dir = disposableDir()
  const root = card(dir.path, CLIPS)
  const first = await seal(root, FIRST, 'transfer')
  const second = await seal(root, SECOND)
  const names = manifestsOf(root)
  expect(names).toEqual(['0001_A002R2EC_2024-05-06_070809Z.mhl', '0002_A002R2EC_2024-05-07_235901Z.mhl'])
  expect(readdirSync(join(root, 'ascmhl')).sort()).toEqual([...names, CHAIN_FILE]) // no temporary file left

  const history = readHistory(root)
  const common = {
    c4Ok: true,
    hostname: 'dit-cart',
    tool: { name: 'Reelhouse', version: VERSION },
    ignore: [...DEFAULT_IGNORE],
  }
  expect({ ...history, generations: history.generations.map(plain) }).toEqual({
    root,
    unlisted: [],
    generations: [
      {
        ...common,
        number: 1,
        file: names[0]!,
        c4: c4Of(root, names[0]!),
        creationDate: '2024-05-06T07:08:09+00:00',
        process: 'transfer',
        files: recorded(first.check.files, 'original'),
      },
      {
        ...common,
        number: 2,
        file: names[1]!,
        c4: c4Of(root, names[1]!),
        creationDate: '2024-05-07T23:59:01+00:00',
        process: 'in-place',
        files: recorded(second.check.files, 'verified'),
      },
    ],
  })
  // What was hashed is each file's bytes with xxHash64, seed 0, as other tools compute it.
  const expected = Object.fromEntries(Object.entries(CLIPS).map(([path, content]) => [path, xxh(content)]))
  expect(Object.fromEntries(expectedHashes(history))).toEqual(expected)
  expect(first.check).toMatchObject({ ok: true, added: Object.keys(CLIPS).sort(), verified: [] })
  expect(second.check).toMatchObject({ ok: true, added: [], verified: Object.keys(CLIPS).sort() })
  expect(second.written).toEqual({
    number: 2,
    file: names[1]!,
    c4: c4Of(root, names[1]!),
    recorded: Object.keys(CLIPS)
      .sort()
      .map((path) => ({ path, xxh64: expected[path]!, action: 'verified' })),
  })
  expect(second.check.files.map((f) => ({ ...f, hashDate: undefined }))).toEqual(
    Object.keys(CLIPS)
      .sort()
      .map((path) => ({
        path,
        size: CLIPS[path as keyof typeof CLIPS].length,
        lastModified: MTIME,
        xxh64: expected[path]!,
        hashDate: undefined,
      })),
  )

  // The chain, rewritten whole for the second generation, names both with their C4 ids.
  expect(readFileSync(join(root, 'ascmhl', CHAIN_FILE), 'utf8')).toBe(
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<ascmhldirectory xmlns="urn:ASC:MHL:DIRECTORY:v2.0">',
      '  <hashlist sequencenr="1">',
      `    <path>${names[0]}</path>`,
      `    <c4>${c4Of(root, names[0]!)}</c4>`,
      '  </hashlist>',
      '  <hashlist sequencenr="2">',
      `    <path>${names[1]}</path>`,
      `    <c4>${c4Of(root, names[1]!)}</c4>`,
      '  </hashlist>',
      '</ascmhldirectory>',
      '',
    ].join('\n'),
  )
  // The second manifest, element by element as the schema orders them.
  const f = (path: keyof typeof CLIPS) => second.check.files.find((e) => e.path === path)!
  expect(readFileSync(join(root, 'ascmhl', names[1]!), 'utf8')).toBe(
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<hashlist version="2.0" xmlns="urn:ASC:MHL:v2.0">',
      '  <creatorinfo>',
      '    <creationdate>2024-05-07T23:59:01+00:00</creationdate>',
      '    <hostname>dit-cart</hostname>',
      `    <tool version="${VERSION}">Reelhouse</tool>`,
      '  </creatorinfo>',
      '  <processinfo>',
      '    <process>in-place</process>',
      '    <ignore>',
      '      <pattern>.DS_Store</pattern>',
      '      <pattern>ascmhl</pattern>',
      '      <pattern>ascmhl/</pattern>',
      '    </ignore>',
      '  </processinfo>',
      '  <hashes>',
      ...(Object.keys(CLIPS).sort() as (keyof typeof CLIPS)[]).flatMap((path) => [
        '    <hash>',
        `      <path size="${CLIPS[path].length}" lastmodificationdate="2024-03-01T10:20:30+00:00">${path}</path>`,
        `      <xxh64 action="verified" hashdate="${iso(f(path).hashDate!)}">${xxh(CLIPS[path])}</xxh64>`,
        '    </hash>',
      ]),
      '  </hashes>',
      '</hashlist>',
      '',
    ].join('\n'),
  )
  expect(xmllint([...names, CHAIN_FILE].map((n) => join(root, 'ascmhl', n)))).toEqual(
    hasXmllint ? [true, true, true] : undefined,
  )
})

test('a manifest changed after it was written no longer has its C4 id: reading, checking and sealing refuse the history', async () => {
  using dir = disposableDir()
  const root = card(dir.path, CLIPS)
  await seal(root, FIRST)
  await seal(root, SECOND)
  const [firstName, secondName] = manifestsOf(root) as [string, string]
  const path = join(root, 'ascmhl', firstName)
  // The recorded hash of a clip swapped for the hash of what the clip could have become.
  const text = readFileSync(path, 'utf8')
  writeFileSync(path, text.replace(xxh('first clip'), xxh('forged clip')))
  expect(readFileSync(path, 'utf8')).not.toBe(text)

  const changed = {
    name: 'MhlError',
    code: 'changed-manifest',
    path,
    message: `generation 1 changed after it was written (its C4 id is no longer the one in the chain): ${path}`,
  }
  expect(() => readHistory(root)).toThrow(expect.objectContaining(changed))
  await expect(verifyAgainst(root)).rejects.toMatchObject(changed)
  expect(() => newGeneration(root, [], { process: 'in-place' })).toThrow(expect.objectContaining(changed))
  expect(manifestsOf(root)).toEqual([firstName, secondName])

  // Asked to mark it, the reader shows what the changed manifest now says, and that it changed.
  const marked = readHistory(root, { changed: 'mark' })
  expect(marked.generations.map((g) => ({ file: g.file, c4Ok: g.c4Ok }))).toEqual([
    { file: firstName, c4Ok: false },
    { file: secondName, c4Ok: true },
  ])
  expect(marked.generations[0]!.files.get('Clips/A002C006_141024_R2EC.mov')?.xxh64?.value).toBe(xxh('forged clip'))
})

test('a history without its chain, or missing a manifest the chain names, is an error that names the file', async () => {
  using dir = disposableDir()
  const root = card(dir.path, CLIPS)
  await seal(root, FIRST)
  await seal(root, SECOND)
  const [first] = manifestsOf(root) as [string]
  const chain = join(root, 'ascmhl', CHAIN_FILE)

  const kept = readFileSync(chain)
  unlinkSync(chain)
  expect(() => readHistory(root)).toThrow(expect.objectContaining({ code: 'no-chain', path: chain }))
  writeFileSync(chain, kept)

  const manifest = join(root, 'ascmhl', first)
  const bytes = readFileSync(manifest)
  unlinkSync(manifest)
  expect(() => readHistory(root)).toThrow(
    expect.objectContaining({
      code: 'missing-manifest',
      path: manifest,
      message: `the chain names generation 1, which is missing: ${manifest}`,
    }),
  )
  writeFileSync(manifest, bytes)
  expect(readHistory(root).generations).toHaveLength(2)

  writeFileSync(chain, kept.toString().replace('</ascmhldirectory>', ''))
  expect(() => readHistory(root)).toThrow(
    expect.objectContaining({
      code: 'malformed',
      path: chain,
      message: `not well-formed XML: the element ascmhldirectory is not closed (line 12, column 1): ${chain}`,
    }),
  )
  // A chain that points outside ascmhl/ is refused before anything is read there.
  writeFileSync(chain, kept.toString().replace(first, `../${first}`))
  expect(() => readHistory(root)).toThrow(expect.objectContaining({ code: 'malformed', path: chain }))

  // No ascmhl/ at all: a folder never hashed, with an empty history.
  rmSync(join(root, 'ascmhl'), { recursive: true })
  expect(readHistory(root)).toEqual({ root, generations: [], unlisted: [] })
})

test('a changed file is mismatched, a removed one missing, a new one added; ignored names and links are left out', async () => {
  using dir = disposableDir()
  const root = card(dir.path, CLIPS)
  await seal(root, FIRST)
  write(root, 'Clips/A002C006_141024_R2EC.mov', 'first clip, re-encoded')
  unlinkSync(join(root, 'Sidecar.txt'))
  write(root, 'Clips/A002C008_141024_R2EC.mov', 'third clip')
  // Named by the default ignore patterns, at any depth: never listed, never hashed.
  write(root, '.DS_Store', 'finder')
  write(root, 'Clips/.DS_Store', 'finder')
  write(root, 'Clips/ascmhl/0001_Clips_2024-01-01_000000Z.mhl', 'a nested history')
  symlinkSync(join(root, 'Clips/A002C007_141024_R2EC.mov'), join(root, 'Clips/link.mov'))

  const hashed: string[] = []
  const check = await verifyAgainst(root, (absolute, relative) => {
    hashed.push(relative)
    return xxh(readFileSync(absolute, 'utf8'))
  })
  expect({ ...check, files: check.files.map((f) => f.path) }).toEqual({
    ok: false,
    verified: ['Clips/A002C007_141024_R2EC.mov'],
    mismatched: [
      {
        path: 'Clips/A002C006_141024_R2EC.mov',
        expected: xxh('first clip'),
        actual: xxh('first clip, re-encoded'),
      },
    ],
    missing: ['Sidecar.txt'],
    added: ['Clips/A002C008_141024_R2EC.mov'],
    unverifiable: [],
    files: ['Clips/A002C006_141024_R2EC.mov', 'Clips/A002C007_141024_R2EC.mov', 'Clips/A002C008_141024_R2EC.mov'],
  })
  expect(hashed).toEqual(check.files.map((f) => f.path))

  // Recorded: the changed file "failed", the new one "original". The failed hash is what the
  // damaged file holds: the next check still expects the original, and still fails.
  const written = newGeneration(root, check.files, { process: 'in-place', now: SECOND })
  expect(written.recorded.map(({ path, action }) => [path, action])).toEqual([
    ['Clips/A002C006_141024_R2EC.mov', 'failed'],
    ['Clips/A002C007_141024_R2EC.mov', 'verified'],
    ['Clips/A002C008_141024_R2EC.mov', 'original'],
  ])
  const again = await verifyAgainst(root)
  expect(again).toMatchObject({
    ok: false,
    mismatched: [{ path: 'Clips/A002C006_141024_R2EC.mov', expected: xxh('first clip') }],
    missing: ['Sidecar.txt'],
    added: [],
  })
  // Put back as it was, it verifies again.
  write(root, 'Clips/A002C006_141024_R2EC.mov', 'first clip')
  write(root, 'Sidecar.txt', 'notes')
  expect(await verifyAgainst(root)).toMatchObject({ ok: true, mismatched: [], missing: [], added: [] })
  expect(newGeneration(root, (await verifyAgainst(root)).files, { process: 'in-place', now: THIRD }).recorded).toEqual(
    Object.keys(CLIPS)
      .concat('Clips/A002C008_141024_R2EC.mov')
      .sort()
      .map((path) => ({
        path,
        xxh64: xxh(path === 'Clips/A002C008_141024_R2EC.mov' ? 'third clip' : CLIPS[path as keyof typeof CLIPS]),
        action: 'verified',
      })),
  )
})

test('paths with & < > " \' and other scripts are escaped, read back exactly, and verified; a path XML cannot hold is refused', async () => {
  using dir = disposableDir()
  const odd = {
    'Szene 1 & 2/<Take 3> "best" it\'s.mov': 'a',
    'Ærø/東京 – ΣΚΗΝΗ 🎬.wav': 'b',
    'tab\there/line\nbreak\rreturn.txt': 'c',
    '&amp;.txt': 'd',
  }
  const root = card(dir.path, odd)
  const { written } = await seal(root, FIRST)
  const [name] = manifestsOf(root) as [string]
  const text = readFileSync(join(root, 'ascmhl', name), 'utf8')
  expect(text).toContain('>Szene 1 &amp; 2/&lt;Take 3&gt; &quot;best&quot; it&apos;s.mov</path>')
  expect(text).toContain('>Ærø/東京 – ΣΚΗΝΗ 🎬.wav</path>')
  expect(text).toContain('>tab\there/line\nbreak&#13;return.txt</path>')
  expect(text).toContain('>&amp;amp;.txt</path>')
  expect(written.recorded.map((r) => r.path)).toEqual(Object.keys(odd).sort())
  expect([...readHistory(root).generations[0]!.files.keys()]).toEqual(Object.keys(odd).sort())
  expect(await verifyAgainst(root)).toMatchObject({ ok: true, verified: Object.keys(odd).sort(), added: [] })
  expect(xmllint([join(root, 'ascmhl', name)])).toEqual(hasXmllint ? [true] : undefined)

  const bell = { path: 'bell\u0007.wav', size: 1, lastModified: MTIME, xxh64: xxh('x') }
  expect(() => newGeneration(root, [bell], { process: 'in-place' })).toThrow(
    expect.objectContaining({ code: 'invalid-entry', path: bell.path }),
  )
  for (const path of ['/etc/passwd', '../outside.mov', 'a//b', 'a/./b', 'dir/', 'ascmhl/x.mhl'])
    expect(() => newGeneration(root, [{ ...bell, path }], { process: 'in-place' })).toThrow(
      expect.objectContaining({ code: 'invalid-entry', path }),
    )
  expect(manifestsOf(root)).toEqual([name])
})

test('generation numbers are never reused: a manifest the chain does not name is listed, and the next one comes after it', async () => {
  using dir = disposableDir()
  const root = card(dir.path, CLIPS)
  await seal(root, FIRST)
  const [first] = manifestsOf(root) as [string]
  // As a write stopped between the manifest and the chain would leave it.
  const stray = '0002_A002R2EC_2024-05-06_080000Z.mhl'
  copyFileSync(join(root, 'ascmhl', first), join(root, 'ascmhl', stray))
  expect(readHistory(root).unlisted).toEqual([stray])
  const { written } = await seal(root, SECOND)
  expect({ number: written.number, file: written.file }).toEqual({
    number: 3,
    file: '0003_A002R2EC_2024-05-07_235901Z.mhl',
  })
  const history = readHistory(root)
  expect({ numbers: history.generations.map((g) => g.number), unlisted: history.unlisted }).toEqual({
    numbers: [1, 3],
    unlisted: [stray],
  })
})

test('an empty folder gets a generation without <hashes> (the schema wants one at least), well-formed', async () => {
  using dir = disposableDir()
  const root = card(dir.path, {})
  const written = newGeneration(root, [], {
    process: 'in-place',
    now: FIRST,
    hostname: 'cart & co',
    author: { name: 'Liz <DIT>', email: 'liz@example.com', role: 'DIT' },
    location: 'Stage 5',
    comment: 'empty card',
  })
  const text = readFileSync(join(root, 'ascmhl', written.file), 'utf8')
  expect(text).not.toContain('<hashes>')
  expect(text).toContain('    <hostname>cart &amp; co</hostname>\n')
  expect(text).toContain('    <author email="liz@example.com" role="DIT">Liz &lt;DIT&gt;</author>\n')
  expect(text).toContain('    <location>Stage 5</location>\n    <comment>empty card</comment>\n  </creatorinfo>\n')
  expect(plain(readHistory(root).generations[0]!)).toMatchObject({ hostname: 'cart & co', files: {} })
  expect(xmllint([join(root, 'ascmhl', written.file)])).toEqual(hasXmllint ? [true] : undefined)
  expect(() =>
    newGeneration(root, [], { process: 'in-place', author: { name: 'x', email: 'not an address' } }),
  ).toThrow(expect.objectContaining({ code: 'invalid-entry' }))
})

test("another tool's manifest is read: a namespace prefix, other hash formats, folder hashes; files without an xxh64 are unverifiable", async () => {
  using dir = disposableDir()
  const root = card(dir.path, { 'a.mov': 'a', 'b.mov': 'b', 'c.mov': 'c' })
  mkdirSync(join(root, 'ascmhl'))
  const name = '0001_A002R2EC_2024-01-01_000000Z.mhl'
  const manifest = [
    "<?xml version='1.0' encoding='utf-8'?>",
    '<!-- written by hand, in the shape other tools write -->',
    '<m:hashlist xmlns:m="urn:ASC:MHL:v2.0" version="2.0">',
    '  <m:creatorinfo><m:creationdate>2024-01-01T01:00:00+01:00</m:creationdate>',
    '    <m:hostname>cart</m:hostname><m:tool version="9">other</m:tool></m:creatorinfo>',
    '  <m:processinfo><m:process>transfer</m:process></m:processinfo>',
    '  <m:hashes>',
    `    <m:hash><m:path size="1">a.mov</m:path><m:md5 action="original">0cc175b9c0f1b6a831c399e269772661</m:md5><m:xxh64 action="original">${xxh('a').toUpperCase()}</m:xxh64></m:hash>`,
    '    <m:hash><m:path size="1">b.mov</m:path><m:xxh128 action="original">00000000000000000000000000000000</m:xxh128></m:hash>',
    '    <m:directoryhash><m:path>.</m:path><m:content><m:xxh64>0000000000000000</m:xxh64></m:content><m:structure><m:xxh64>0000000000000000</m:xxh64></m:structure></m:directoryhash>',
    '  </m:hashes>',
    '</m:hashlist>',
  ].join('\r\n')
  writeFileSync(join(root, 'ascmhl', name), manifest)
  writeFileSync(
    join(root, 'ascmhl', CHAIN_FILE),
    `<ascmhldirectory xmlns="urn:ASC:MHL:DIRECTORY:v2.0"><hashlist sequencenr="1"><path>${name}</path><c4>${c4Id(Buffer.from(manifest))}</c4></hashlist></ascmhldirectory>`,
  )
  const [generation] = readHistory(root).generations
  expect(plain(generation!)).toMatchObject({
    number: 1,
    creationDate: '2024-01-01T01:00:00+01:00',
    tool: { name: 'other', version: '9' },
    process: 'transfer',
    ignore: [],
    files: {
      'a.mov': { size: 1, xxh64: { value: xxh('a'), action: 'original' }, otherFormats: ['md5'] },
      'b.mov': { size: 1, otherFormats: ['xxh128'] },
    },
  })
  expect(await verifyAgainst(root)).toMatchObject({
    ok: false,
    verified: ['a.mov'],
    unverifiable: ['b.mov'],
    added: ['c.mov'],
    missing: [],
  })
  // The next generation, ours, records b.mov as first hashed with xxh64 and keeps the chain.
  const written = newGeneration(root, (await verifyAgainst(root)).files, { process: 'in-place', now: FIRST })
  expect(written.recorded.map((r) => r.action)).toEqual(['verified', 'original', 'original'])
  expect(readHistory(root).generations.map((g) => g.c4Ok)).toEqual([true, true])

  // A recorded path that leads out of the folder is no path of it: the manifest is refused.
  const outward = manifest.replace('>a.mov<', '>../../a.mov<')
  writeFileSync(join(root, 'ascmhl', name), outward)
  writeFileSync(
    join(root, 'ascmhl', CHAIN_FILE),
    readFileSync(join(root, 'ascmhl', CHAIN_FILE), 'utf8').replace(
      c4Id(Buffer.from(manifest)),
      c4Id(Buffer.from(outward)),
    ),
  )
  expect(() => readHistory(root)).toThrow(
    expect.objectContaining({ code: 'malformed', path: join(root, 'ascmhl', name) }),
  )
})

test('the ignore patterns of the latest generation decide what a check leaves out: names at any depth, paths from the root, folders only, globs', async () => {
  using dir = disposableDir()
  const root = card(dir.path, {
    'a.mov': 'a',
    'a.mov.tmp': 'partial',
    'Clips/b.tmp': 'partial',
    'Clips/Thumbs.db': 'x',
    'Clips/thumbs.db': 'x',
    'Proxies/p.mov': 'p',
    'Clips/Proxies/p.mov': 'kept: the pattern is anchored to the root',
    'Cache/x/y/z.bin': 'c',
    'Clips/Cache/keep.bin': 'kept: the pattern is anchored to the root',
    render: 'a file named like the folder-only pattern',
    'Clips/render/r.exr': 'r',
  })
  const ignore = ['*.tmp', '[Tt]humbs.db', '/Proxies', 'Cache/**', 'render/', 'ascmhl', '!a.mov']
  newGeneration(root, [], { process: 'in-place', now: FIRST, ignore })
  expect(readHistory(root).generations[0]!.ignore).toEqual(ignore)
  expect((await verifyAgainst(root)).added).toEqual(['Clips/Cache/keep.bin', 'Clips/Proxies/p.mov', 'a.mov', 'render'])
  // The next generation keeps the patterns when none are given.
  newGeneration(root, [], { process: 'in-place', now: SECOND })
  expect(readHistory(root).generations[1]!.ignore).toEqual(ignore)
})

test('isRecorded leaves out what a walk of the folder leaves out: ascmhl/ at the root, and the ignored files and folders at any depth', () => {
  const recorded = isRecorded([...DEFAULT_IGNORE, 'Cache/', '/Render'])
  const paths = [
    'a.mov',
    'Clips/b.mov',
    'ascmhl/0001_x.mhl',
    'ascmhl/ascmhl_chain.xml',
    '.DS_Store',
    'Clips/.DS_Store',
    'Card/ascmhl/0001_card.mhl',
    'Cache/x/y.bin',
    'Clips/Cache/z.bin',
    'Cache',
    'Render/r.exr',
    'Clips/Render/r.exr',
  ]
  expect(Object.fromEntries(paths.map((p) => [p, recorded(p)]))).toEqual({
    'a.mov': true,
    'Clips/b.mov': true,
    'ascmhl/0001_x.mhl': false,
    'ascmhl/ascmhl_chain.xml': false,
    '.DS_Store': false,
    'Clips/.DS_Store': false,
    // A history deeper down (a camera card's) is a history of its own, not content.
    'Card/ascmhl/0001_card.mhl': false,
    'Cache/x/y.bin': false,
    'Clips/Cache/z.bin': false,
    // A file named like a folder-only pattern is content.
    Cache: true,
    'Render/r.exr': false,
    'Clips/Render/r.exr': true,
  })
})

test('through an open folder (historyFolderAt): the history by path reads the same, the manifest is named after rootName; ascmhl/ as a link is refused with nothing written through it', async () => {
  using dir = disposableDir()
  const root = card(dir.path, CLIPS)
  const { files } = await verifyAgainst(root)
  const fd = openat(AT_FDCWD, cName(root), DIR_FLAGS)
  try {
    const folder = historyFolderAt(fd, join(root, 'ascmhl'))
    const opts = { process: 'transfer', now: FIRST, hostname: 'dit-cart', folder } as const
    const first = newGeneration(root, files, { ...opts, rootName: 'Final Cut' })
    const second = newGeneration(root, files, { ...opts, now: SECOND })
    const [byPath, byFd] = [readHistory(root), readHistory(root, { folder })]
    expect({
      names: [first.file, second.file],
      actions: [first, second].map((g) => [...new Set(g.recorded.map((r) => r.action))]),
      same: { ...byFd, generations: byFd.generations.map(plain) },
      left: readdirSync(join(root, 'ascmhl')).sort(),
    }).toEqual({
      names: ['0001_Final Cut_2024-05-06_070809Z.mhl', '0002_A002R2EC_2024-05-07_235901Z.mhl'],
      actions: [['original'], ['verified']],
      same: { ...byPath, generations: byPath.generations.map(plain) },
      left: [first.file, second.file, CHAIN_FILE],
    })
  } finally {
    close(fd)
  }

  // ascmhl/ a link to a folder elsewhere: neither read nor written through.
  mkdirSync(join(dir.path, 'linked-parent'))
  const linked = card(join(dir.path, 'linked-parent'), CLIPS)
  const elsewhere = join(dir.path, 'elsewhere')
  mkdirSync(elsewhere)
  symlinkSync(elsewhere, join(linked, 'ascmhl'))
  const at = openat(AT_FDCWD, cName(linked), DIR_FLAGS)
  try {
    const folder = historyFolderAt(at, join(linked, 'ascmhl'))
    const code = (run: () => unknown) => {
      try {
        run()
        return 'no error'
      } catch (e) {
        return (e as NodeJS.ErrnoException).code
      }
    }
    expect({
      read: code(() => readHistory(linked, { folder })),
      write: code(() => newGeneration(linked, files, { process: 'transfer', now: FIRST, folder })),
      elsewhere: readdirSync(elsewhere),
    }).toEqual({
      read: expect.stringMatching(/^(ENOTDIR|ELOOP)$/),
      write: expect.stringMatching(/^(ENOTDIR|ELOOP)$/),
      elsewhere: [],
    })
  } finally {
    close(at)
  }
})

test("C4 ids: the empty input gives the C4 specification's id; every id is 90 characters and decodes back to its SHA-512", () => {
  expect(c4Id(new Uint8Array())).toBe(
    'c459dsjfscH38cYeXXYogktxf4Cd9ibshE3BHUo6a58hBXmRQdZrAkZzsWcbWtDg5oQstpDuni4Hirj75GEmTc1sFT',
  )
  const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
  // Enough inputs that some SHA-512 values are small enough to need the padding.
  for (let i = 0; i < 2000; i++) {
    const input = Buffer.from(`input ${i}`)
    const id = c4Id(input)
    expect(id).toMatch(/^c4[1-9A-HJ-NP-Za-km-z]{88}$/)
    let n = 0n
    for (const c of id.slice(2)) n = n * 58n + BigInt(ALPHABET.indexOf(c))
    expect(n.toString(16).padStart(128, '0')).toBe(createHash('sha512').update(input).digest('hex'))
  }
})
