// The ASC MHL history a project copy writes (src/modules/projectassets/copy.task.ts), end to end
// through the API on real folders: `ascmhl/` at the copy's root, its manifest listing every file
// with the xxHash64 of its bytes (compared here with Bun's own xxHash64 of each file read whole,
// and read from the XML text, not through src/storage/mhl.ts's reader), its chain naming the
// manifest by its C4 id; a copy of that copy appending a generation; a source whose history was
// tampered with; and a copy finished before a restart, whose task reports the same.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { appendFileSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { tasks } from '../../src/db/schema.ts'
import { copyHandler } from '../../src/modules/projectassets/copy.task.ts'
import { c4Id } from '../../src/storage/mhl.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { historyFiles, inHistory, makeTree, snapshot } from '../helpers/tree.ts'

let t: TestApp
let root: string
let production: { id: number }

beforeAll(async () => {
  t = testApp(undefined, { tasks: true })
  ;({ root, production } = await seedProduction(t))
})
afterAll(async () => {
  await t.stop()
  rmSync(t.dataDir, { recursive: true, force: true })
  rmSync(root, { recursive: true, force: true })
})

const MiB = 1024 * 1024
const folder = (name: string) => join(root, 'Show', name)
/** xxHash64 (seed 0) of a whole file, as 16 lowercase hex digits: what ASC MHL records. */
const xxh64 = (path: string) => Bun.hash.xxHash64(readFileSync(path), 0n).toString(16).padStart(16, '0')

async function project(name: string, files: Parameters<typeof makeTree>[1]) {
  makeTree(folder(name), files)
  const r = await t.post('/api/projectassets/', { name, bundle_root: folder(name), production_id: production.id })
  expect(r.status).toBe(201)
  return r.json as { id: number }
}

/** A copy of project `sourceId` into Show/<name>, run to its end: the project and its task. */
async function copy(sourceId: number, name: string) {
  const r = await t.post('/api/projectassets/', {
    name,
    bundle_root: folder(name),
    production_id: production.id,
    copy_of: sourceId,
  })
  expect(r.status).toBe(201)
  await t.runner.idle()
  return {
    project: (await t.get(`/api/projectassets/${r.json.id}/`)).json,
    task: (await t.get(r.json.task.url)).json,
  }
}

/** Regular files under `dir` (outside `ascmhl/` at its root): relative path → its size and xxh64. */
function contentOf(dir: string): Record<string, { size: number; xxh64: string }> {
  return Object.fromEntries(
    Object.entries(snapshot(dir))
      .filter(([rel, e]) => e.kind === 'file' && !inHistory(rel))
      .map(([rel, e]) => [rel, { size: e.size!, xxh64: xxh64(join(dir, rel)) }]),
  )
}

/** A history's files: the manifests (sorted) and the chain's links as it lists them. */
function historyOf(dir: string) {
  const at = join(dir, 'ascmhl')
  const names = readdirSync(at).sort()
  const chain = readFileSync(join(at, 'ascmhl_chain.xml'), 'utf8')
  const links = [...chain.matchAll(/<hashlist sequencenr="(\d+)">\s*<path>([^<]*)<\/path>\s*<c4>([^<]*)<\/c4>/g)].map(
    ([, number, path, c4]) => ({ number: Number(number), path, c4 }),
  )
  return { names, links, manifest: (name: string) => readFileSync(join(at, name)) }
}

/** What a manifest's XML text records: its process, and per path the size, action and xxh64. */
function manifestOf(bytes: Buffer) {
  const xml = bytes.toString('utf8')
  const hashes = [
    ...xml.matchAll(
      /<hash>\s*<path size="(\d+)"[^>]*>([^<]*)<\/path>\s*<xxh64 action="(\w+)"[^>]*>([0-9a-f]{16})<\/xxh64>\s*<\/hash>/g,
    ),
  ]
  return {
    process: /<process>([^<]*)<\/process>/.exec(xml)?.[1],
    files: Object.fromEntries(
      hashes.map(([, size, path, action, xxh64]) => [path!, { size: Number(size), action, xxh64 }]),
    ),
  }
}

const withoutDsStore = (content: ReturnType<typeof contentOf>) =>
  Object.fromEntries(Object.entries(content).filter(([rel]) => !rel.endsWith('.DS_Store')))

/** Each file of `content` as a manifest records it with `action`. */
const recordedAs = (content: ReturnType<typeof contentOf>, action: string) =>
  Object.fromEntries(Object.entries(content).map(([rel, f]) => [rel, { ...f, action }]))

const MANIFEST = (n: number, name: string) => new RegExp(`^000${n}_${name}_\\d{4}-\\d\\d-\\d\\d_\\d{6}Z\\.mhl$`)

let source: { id: number }
let firstCopy: Awaited<ReturnType<typeof copy>>

test('a copy has ascmhl/ at its root: one "transfer" generation listing every file with the xxh64 of its bytes, "original", chained by its C4 id; the task names it', async () => {
  source = await project('Cut', {
    'Cut.prproj': 'project file',
    'Media/A001C003.mov': 50_000,
    // From 8 MiB on, a file is copied in chunks on the thread pool: both ways are recorded.
    'Media/big.mxf': 9 * MiB + 5,
    'Media/Cam B/ünïcødé 🎬.wav': 12_345,
    empty: '',
    // Copied and checked, but left out of the history, as the ASC's own tool leaves it out.
    'Media/.DS_Store': 'finder state',
    'Media/latest': { link: 'A001C003.mov' },
  })
  firstCopy = await copy(source.id, 'Cut-v2')
  const dir = folder('Cut-v2')
  const content = contentOf(dir)
  const history = historyOf(dir)
  const name = history.names[0]!
  const recorded = recordedAs(withoutDsStore(content), 'original')
  expect({
    status: firstCopy.project.status_asset,
    names: history.names,
    links: history.links,
    manifest: manifestOf(history.manifest(name)),
    content,
  }).toEqual({
    status: 6,
    names: [expect.stringMatching(MANIFEST(1, 'Cut-v2')), 'ascmhl_chain.xml'],
    links: [{ number: 1, path: name, c4: c4Id(history.manifest(name)) }],
    manifest: { process: 'transfer', files: recorded },
    content: contentOf(folder('Cut')),
  })
  expect(Object.keys(recorded).sort()).toEqual([
    'Cut.prproj',
    'Media/A001C003.mov',
    'Media/Cam B/ünïcødé 🎬.wav',
    'Media/big.mxf',
    'empty',
  ])
  // Every regular file was checked by hash, the one left out of the history too.
  expect(firstCopy.task.result).toEqual({
    files_verified: 6,
    manifest: `ascmhl/${name}`,
    recorded: { original: 5, verified: 0, failed: 0 },
  })
  const history_ = historyFiles(dir)
  expect(firstCopy.project.files).toEqual({
    count: 6 + history_.count,
    bytes: Object.values(content).reduce((n, f) => n + f.size, 0) + history_.bytes,
  })
  // The source has no history of its own: a copy writes only into the copy.
  expect(readdirSync(folder('Cut'))).not.toContain('ascmhl')
})

test('a copy of the copy brings its history along and appends a "transfer" generation of "verified" entries', async () => {
  const again = await copy(firstCopy.project.id, 'Cut-v3')
  const [from, dir] = [historyOf(folder('Cut-v2')), historyOf(folder('Cut-v3'))]
  const [first, second] = dir.names.filter((n) => n.endsWith('.mhl'))
  expect({
    status: again.project.status_asset,
    names: dir.names,
    // The first generation's manifest is the one copied along, byte for byte.
    first: first === from.names[0] && dir.manifest(first!).equals(from.manifest(from.names[0]!)),
    links: dir.links,
    second: manifestOf(dir.manifest(second!)),
    result: again.task.result,
    // The copy's source keeps its own history as it was.
    sourceHistory: from.links.length,
  }).toEqual({
    status: 6,
    names: [from.names[0], expect.stringMatching(MANIFEST(2, 'Cut-v3')), 'ascmhl_chain.xml'],
    first: true,
    links: [from.links[0]!, { number: 2, path: second, c4: c4Id(dir.manifest(second!)) }],
    second: { process: 'transfer', files: recordedAs(withoutDsStore(contentOf(folder('Cut-v3'))), 'verified') },
    // Its files, and the two of the history it brought along.
    result: { files_verified: 6 + 2, manifest: `ascmhl/${second}`, recorded: { original: 0, verified: 5, failed: 0 } },
    sourceHistory: 1,
  })
})

test('a file changed since the history recorded it is "failed" and named, a new one "original"; the copy is done', async () => {
  const dir = folder('Cut-v2')
  writeFileSync(join(dir, 'Cut.prproj'), 'project file, edited')
  writeFileSync(join(dir, 'Media', 'new.wav'), 'new sound')
  const edited = await copy(firstCopy.project.id, 'Cut-v4')
  const history = historyOf(folder('Cut-v4'))
  const latest = manifestOf(history.manifest(history.names.at(-2)!))
  expect({
    status: edited.project.status_asset,
    actions: Object.fromEntries(Object.entries(latest.files).map(([rel, f]) => [rel, f.action])),
    result: edited.task.result,
  }).toEqual({
    status: 6,
    actions: {
      'Cut.prproj': 'failed',
      'Media/A001C003.mov': 'verified',
      'Media/Cam B/ünïcødé 🎬.wav': 'verified',
      'Media/big.mxf': 'verified',
      'Media/new.wav': 'original',
      empty: 'verified',
    },
    result: {
      files_verified: 7 + 2,
      manifest: `ascmhl/${history.names.at(-2)}`,
      recorded: { original: 1, verified: 4, failed: 1 },
      not_as_recorded: ['Cut.prproj'],
    },
  })
  // The failed entry records what the file holds now, which the copy holds.
  expect(latest.files['Cut.prproj']!.xxh64).toBe(xxh64(join(folder('Cut-v4'), 'Cut.prproj')))
})

test('a source whose history changed after it was written: the copy is done with that history as it was, and the task says why none was added', async () => {
  const dir = folder('Cut-v3')
  const manifest = historyOf(dir).names[0]!
  appendFileSync(join(dir, 'ascmhl', manifest), ' ')
  const project = (await t.get(`/api/projectassets/?bundle_root=${encodeURIComponent(`${dir}/`)}`)).json[0]
  const copied = await copy(project.id, 'Cut-v5')
  expect({
    status: copied.project.status_asset,
    history: snapshot(join(folder('Cut-v5'), 'ascmhl')),
    result: copied.task.result,
  }).toEqual({
    status: 6,
    history: snapshot(join(dir, 'ascmhl')),
    result: {
      files_verified: 6 + 3,
      history_problem: expect.stringContaining('generation 1 changed after it was written'),
    },
  })
})

test('a copy finished before a restart (renamed into place): the task run again reports the files checked and the manifest, and counts the history', async () => {
  const resumed = await project('Resume', { 'edit.avb': 'bin', 'media/clip.mov': 20_000 })
  const done = await copy(resumed.id, 'Resume-copy')
  const row = t.db.select().from(tasks).where(eq(tasks.id, done.task.id)).get()!
  const reported: Record<string, unknown>[] = []
  // The task as a restart finds it: its attempt counted, the hidden folder gone, the target there.
  await copyHandler(
    t.core.port,
    t.core.users,
  )({
    task: { ...row, attempts: 1 } as Parameters<ReturnType<typeof copyHandler>>[0]['task'],
    signal: new AbortController().signal,
    progress: () => {},
    save: () => {},
    report: (result) => void reported.push(result),
  })
  const dir = folder('Resume-copy')
  const history = historyFiles(dir)
  expect({ reported, files: (await t.get(`/api/projectassets/${done.project.id}/`)).json.files }).toEqual({
    reported: [{ files_verified: 2, manifest: done.task.result.manifest }],
    files: { count: 2 + history.count, bytes: 3 + 20_000 + history.bytes },
  })
  expect(done.project.files).toEqual({ count: 2 + history.count, bytes: 3 + 20_000 + history.bytes })
})
