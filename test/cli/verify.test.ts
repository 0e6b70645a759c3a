// `reelhouse verify PATH` (docs/operations.md, Verified copies and ASC MHL histories) on a real
// project copy, whose ascmhl/ history the copy task wrote: as copied (exit 0), from a folder and
// a file inside it, with a byte flipped (failed, both hashes), a file removed (missing) and one
// added (new), exit 1; every check that cannot be made (no history, no PATH, a changed manifest,
// a malformed chain) one line on stderr and exit 2; --record writing an in-place generation;
// progress on stderr only when asked for (or on a terminal). Run through the command line's own
// entry in this process, and a few as the compiled executable users get.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { appendFileSync, cpSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { verifyCommand } from '../../src/cli/commands.ts'
import { readHistory } from '../../src/storage/mhl.ts'
import { type TestApp, seedProduction, tempDir, testApp } from '../helpers/app.ts'
import { TEST_TIMEOUT_MS, killAll, lines, runCli, runInProcess } from '../helpers/process.ts'
import { makeTree } from '../helpers/tree.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

let t: TestApp
let root: string
/** The copy as the copy task left it; each test works on a copy of it (cpSync keeps the history's bytes). */
let pristine: string
const scratch: string[] = []

const xxh64 = (path: string) => Bun.hash.xxHash64(readFileSync(path), 0n).toString(16).padStart(16, '0')

beforeAll(async () => {
  t = testApp(undefined, { tasks: true })
  let production: { id: number }
  ;({ root, production } = await seedProduction(t))
  const folder = (name: string) => join(root, 'Show', name)
  makeTree(folder('Cut'), {
    'Cut.prproj': 'project file',
    'Media/A001C003.mov': 70_000,
    'Media/Cam B/B001C001.wav': 12_345,
    'Media/.DS_Store': 'finder state',
  })
  const source = await t.post('/api/projectassets/', {
    name: 'Cut',
    bundle_root: folder('Cut'),
    production_id: production.id,
  })
  const copy = await t.post('/api/projectassets/', {
    name: 'Cut-v2',
    bundle_root: folder('Cut-v2'),
    production_id: production.id,
    copy_of: source.json.id,
  })
  expect(copy.status).toBe(201)
  await t.runner.idle()
  expect((await t.get(copy.json.task.url)).json.state).toBe('done')
  pristine = folder('Cut-v2')
})
afterAll(async () => {
  await killAll()
  await t.stop()
  rmSync(t.dataDir, { recursive: true, force: true })
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

/** A fresh copy of the verified copy, history and all, named Cut-v2 as the manifests name it. */
function fresh(): string {
  const parent = tempDir('reelhouse-verify-')
  scratch.push(parent)
  const dir = join(parent, 'Cut-v2')
  cpSync(pristine, dir, { recursive: true, preserveTimestamps: true })
  return dir
}

function flipByte(path: string, at: number) {
  const bytes = readFileSync(path)
  bytes[at] = bytes[at]! ^ 0xff
  writeFileSync(path, bytes)
}

const summary = (counts: string, dir: string, generations = 1) =>
  `${counts} (history ${join(dir, 'ascmhl')}, ${generations} generation${generations > 1 ? 's' : ''})`

/** One line on stderr, the program's own, and no trace of a stack. */
function expectOneLine(stderr: string, text: string | RegExp) {
  expect(lines(stderr)).toHaveLength(1)
  expect(stderr).toStartWith('reelhouse: ')
  expect(stderr).not.toMatch(/^\s+at |Error:|\.ts:\d+|\.js:\d+/m)
  if (typeof text === 'string') expect(stderr).toContain(text)
  else expect(stderr).toMatch(text)
}

describe('exit 0: every recorded file as recorded', () => {
  test('the copy as the copy task wrote it: the summary alone on stdout, nothing on stderr (no catalogue is used)', async () => {
    const dir = fresh()
    expect(await runInProcess(['verify', dir])).toEqual({
      code: 0,
      stdout: `${summary('3 verified, 0 failed, 0 missing, 0 new', dir)}\n`,
      stderr: '',
    })
  })

  test('PATH inside the history: a folder or a file of it, relative to the working folder, checks only that', async () => {
    const dir = fresh()
    expect(await runInProcess(['verify', 'Media'], { cwd: dir })).toEqual({
      code: 0,
      stdout: `${summary('2 verified, 0 failed, 0 missing, 0 new', dir)}\n`,
      stderr: '',
    })
    expect((await runInProcess(['verify', join(dir, 'Cut.prproj')])).stdout).toBe(
      `${summary('1 verified, 0 failed, 0 missing, 0 new', dir)}\n`,
    )
  })

  test('a file added is listed as new, and does not change the exit code; a .DS_Store is not listed', async () => {
    const dir = fresh()
    writeFileSync(join(dir, 'notes.txt'), 'added')
    writeFileSync(join(dir, '.DS_Store'), 'finder')
    expect(await runInProcess(['verify', dir])).toEqual({
      code: 0,
      stdout: `new           notes.txt\n${summary('3 verified, 0 failed, 0 missing, 1 new', dir)}\n`,
      stderr: '',
    })
  })
})

describe('exit 1: something differs', () => {
  test('a byte flipped: failed, with the recorded and the found hash; a file removed: missing; one added: new', async () => {
    const dir = fresh()
    const clip = join(dir, 'Media', 'A001C003.mov')
    const recorded = xxh64(clip)
    flipByte(clip, 4242)
    unlinkSync(join(dir, 'Media', 'Cam B', 'B001C001.wav'))
    writeFileSync(join(dir, 'Media', 'extra.mov'), 'new bytes')
    const r = await runInProcess(['verify', dir])
    expect(r).toEqual({
      code: 1,
      stdout: [
        `failed        Media/A001C003.mov  recorded ${recorded}  found ${xxh64(clip)}`,
        'missing       Media/Cam B/B001C001.wav',
        'new           Media/extra.mov',
        summary('1 verified, 1 failed, 1 missing, 1 new', dir),
        '',
      ].join('\n'),
      stderr: '',
    })
    expect(recorded).not.toBe(xxh64(clip))
    // Nothing was written: the history is as the copy left it.
    expect(readdirSync(join(dir, 'ascmhl')).sort()).toEqual(readdirSync(join(pristine, 'ascmhl')).sort())
  })
})

describe('exit 2: no check can be made, one line on stderr naming why', () => {
  test('no history at PATH or above it; PATH not there; PATH inside ascmhl/', async () => {
    const plain = tempDir('reelhouse-plain-')
    scratch.push(plain)
    const none = await runInProcess(['verify', plain])
    expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 2, stdout: '' })
    expectOneLine(none.stderr, `no ascmhl/ history at ${plain} or in a folder above it`)
    const missing = await runInProcess(['verify', join(plain, 'nothing-here')])
    expect(missing.code).toBe(2)
    expectOneLine(missing.stderr, `${join(plain, 'nothing-here')} does not exist`)
    const dir = fresh()
    const inside = await runInProcess(['verify', join(dir, 'ascmhl')])
    expect(inside.code).toBe(2)
    expectOneLine(inside.stderr, 'lies inside the history folder')
  })

  test('a manifest changed since it was written, and a chain that is not XML: the line names the file and why', async () => {
    const dir = fresh()
    const manifest = readdirSync(join(dir, 'ascmhl')).find((name) => name.endsWith('.mhl'))!
    appendFileSync(join(dir, 'ascmhl', manifest), ' ')
    const changed = await runInProcess(['verify', dir])
    expect({ code: changed.code, stdout: changed.stdout }).toEqual({ code: 2, stdout: '' })
    expectOneLine(changed.stderr, `changed after it was written`)
    expect(changed.stderr).toContain(join(dir, 'ascmhl', manifest))

    const other = fresh()
    writeFileSync(join(other, 'ascmhl', 'ascmhl_chain.xml'), 'not xml <')
    const malformed = await runInProcess(['verify', other])
    expect(malformed.code).toBe(2)
    expectOneLine(malformed.stderr, /not well-formed XML/)
    expect(malformed.stderr).toContain(join(other, 'ascmhl', 'ascmhl_chain.xml'))
  })

  test('--record of a path inside the history is refused; a missing PATH argument is a usage mistake', async () => {
    const dir = fresh()
    const r = await runInProcess(['verify', join(dir, 'Media'), '--record'])
    expect(r.code).toBe(2)
    expectOneLine(r.stderr, '--record records the whole folder')
    const bare = await runInProcess(['verify'])
    expect(bare.code).toBe(2)
    expectOneLine(bare.stderr, 'verify needs PATH; see reelhouse verify --help')
  })
})

test('--record writes an in-place generation of what was found (verified, failed, original), chained; the next check still compares with the original', async () => {
  const dir = fresh()
  const clip = join(dir, 'Media', 'A001C003.mov')
  const original = xxh64(clip)
  flipByte(clip, 1)
  writeFileSync(join(dir, 'notes.txt'), 'added')
  const r = await runInProcess(['verify', dir, '--record'])
  expect(r.code).toBe(1)
  const out = lines(r.stdout)
  expect(out.at(-1)).toMatch(/^recorded generation 2: ascmhl\/0002_Cut-v2_\d{4}-\d\d-\d\d_\d{6}Z\.mhl$/)
  const history = readHistory(dir)
  const second = history.generations[1]!
  expect({ generations: history.generations.length, process: second.process }).toEqual({
    generations: 2,
    process: 'in-place',
  })
  const actions = Object.fromEntries([...second.files].map(([path, f]) => [path, f.xxh64?.action]))
  expect(actions).toEqual({
    'Cut.prproj': 'verified',
    'Media/A001C003.mov': 'failed',
    'Media/Cam B/B001C001.wav': 'verified',
    'notes.txt': 'original',
  })
  const again = await runInProcess(['verify', dir])
  expect(again.code).toBe(1)
  expect(lines(again.stdout)).toEqual([
    `failed        Media/A001C003.mov  recorded ${original}  found ${xxh64(clip)}`,
    summary('3 verified, 1 failed, 0 missing, 0 new', dir, 2),
  ])
})

test('progress on stderr only with --progress when stderr is no terminal: files done of the total', async () => {
  const dir = fresh()
  const quiet = await runInProcess(['verify', dir])
  expect(quiet.stderr).toBe('')
  const shown = await runInProcess(['verify', dir, '--progress'])
  expect(shown.code).toBe(0)
  expect(lines(shown.stderr).at(-1)).toMatch(/^verifying: 3\/3 files, [\d.]+ (B|KB|MB)$/)
})

test('on a terminal, progress is one line rewritten in place and cleared at the end; the result stays on stdout', async () => {
  const dir = fresh()
  let stdout = ''
  let stderr = ''
  const code = await verifyCommand(
    {
      stdout: { write: (text) => void (stdout += text) },
      stderr: { write: (text) => void (stderr += text), isTTY: true },
      env: {},
      stdin: { isTTY: false, stream: () => new Blob([]).stream() },
    },
    dir,
  )
  expect(code).toBe(0)
  expect(stdout).toBe(`${summary('3 verified, 0 failed, 0 missing, 0 new', dir)}\n`)
  expect(stderr).toStartWith('\rverifying: ')
  expect(stderr).toContain('\rverifying: 3/3 files, ')
  expect(stderr).not.toContain('\n')
  expect(stderr).toEndWith('\r\x1b[K')
})

test('--help says what the exit codes are', async () => {
  const help = await runInProcess(['verify', '--help'])
  expect(help.code).toBe(0)
  expect(help.stdout).toStartWith('Usage: reelhouse [--data DIR] verify PATH [--record] [--progress]\n')
  for (const words of ['Exit 0', '1 when', '2 with one line on stderr', '--record', '--progress'])
    expect(help.stdout).toContain(words)
})

test('the compiled executable: exit 0 on the copy, 1 with the failed line, 2 with one line for a folder without history', async () => {
  const dir = fresh()
  const ok = await runCli(['verify', dir])
  expect(ok).toEqual({ code: 0, stdout: `${summary('3 verified, 0 failed, 0 missing, 0 new', dir)}\n`, stderr: '' })
  const clip = join(dir, 'Media', 'A001C003.mov')
  const recorded = xxh64(clip)
  flipByte(clip, 9)
  const bad = await runCli(['verify', dir])
  expect({ code: bad.code, first: lines(bad.stdout)[0], stderr: bad.stderr }).toEqual({
    code: 1,
    first: `failed        Media/A001C003.mov  recorded ${recorded}  found ${xxh64(clip)}`,
    stderr: '',
  })
  const plain = tempDir('reelhouse-plain-')
  scratch.push(plain)
  const none = await runCli(['verify', plain])
  expect(none.code).toBe(2)
  expectOneLine(none.stderr, 'no ascmhl/ history at')
})
