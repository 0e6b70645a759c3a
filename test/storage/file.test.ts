// Moving one file (src/storage/file.ts) on real folders: a rename within a file system, a copy
// and removal across two, the `_N` names, refusals (links, swapped files), a second process
// racing for the same names, and crashes: a child process killed at every step of a move, and
// at random moments, then resumed.
//
// Two file systems: the tests' folder (TEST_TMP) and another (OTHER_TMP, test/helpers/temp.ts)
// when the machine has one, as most Linux machines do (a disk and /dev/shm). Where it has not,
// the cross tests say so in their names and force the copy with `crossDevice: true`, the hook
// made for machines with one file system.
import { afterAll, expect, test } from 'bun:test'
import { spawn } from 'bun'
import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { CancelledError } from '../../src/storage/fs.ts'
import {
  type MovePlan,
  type MoveStep,
  destinationPath,
  moveFile,
  planMove,
  resumeMove,
  sourcePath,
  suffixed,
} from '../../src/storage/file.ts'
import { OTHER_TMP, TEST_TMP } from '../helpers/temp.ts'
import { waitFor } from '../helpers/wait.ts'
import { removeAll, snapshot, writeLarge } from '../helpers/tree.ts'

const FILE_TS = join(import.meta.dir, '../../src/storage/file.ts')

// Made when the file loads, so that the test names can say which pair of file systems is used.
const disk = mkdtempSync(join(TEST_TMP, 'reelhouse-file-'))
const shm = OTHER_TMP !== undefined ? mkdtempSync(join(OTHER_TMP, 'reelhouse-file-')) : undefined
const other = shm ?? mkdtempSync(join(TEST_TMP, 'reelhouse-file-b-'))
/** The pair for the cross tests, as the test names say it. */
const forced = !shm || statSync(shm).dev === statSync(disk).dev
const PAIR = forced
  ? 'ONE file system only here, the copy forced with crossDevice'
  : `${OTHER_TMP} → ${TEST_TMP} (${statSync(disk).dev} ≠ ${statSync(shm!).dev})`
afterAll(() => removeAll(disk, other))

let n = 0
/** A fresh device folder on the disk or on the other file system. */
const device = (on: 'disk' | 'other' = 'disk') => {
  const root = join(on === 'disk' ? disk : other, `dev${n++}`) + '/'
  mkdirSync(root)
  return root
}
const put = (path: string, content: string | number) => {
  mkdirSync(join(path, '..'), { recursive: true })
  if (typeof content === 'number') writeLarge(path, content)
  else writeFileSync(path, content, { flag: 'wx' })
}
/** Names in a folder (hidden ones too), sorted; [] when missing. */
const names = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : [])
const sha = (path: string) => new Bun.CryptoHasher('sha1').update(readFileSync(path)).digest('hex')
const ino = (path: string) => statSync(path).ino

/** A file at SRC/in/<name> and its plan into TGT/PROD/video/. */
function setup(
  name = 'clip.mov',
  content: string | number = 'essence',
  options: { target?: 'disk' | 'other'; source?: 'disk' | 'other' } = {},
) {
  const src = device(options.source ?? 'disk')
  const tgt = options.target === undefined ? src : device(options.target)
  const source = join(src, 'in', name)
  put(source, content)
  const targetDir = join(tgt, 'PROD', 'video') + '/'
  const plan = () => planMove({ source, sourceRoot: src, targetDir, targetRoot: tgt })
  return { src, tgt, source, targetDir, plan }
}

const crossSetup = (name?: string, content?: string | number) =>
  setup(name, content, { source: 'other', target: 'disk' })
const crossOptions = () => (forced ? { crossDevice: true } : {})

/** What a rejected promise or a throwing call failed with: code, and whether its message names a path outside. */
async function failure(run: () => unknown, outside?: string) {
  try {
    await run()
  } catch (error) {
    const e = error as NodeJS.ErrnoException
    return { code: e.code, namesOutside: outside ? e.message.includes(outside) : false }
  }
  throw new Error('did not fail')
}

test('within one file system: one rename (the same inode), the missing folders PROD/video made', async () => {
  const { src, source, targetDir, plan } = setup()
  const before = ino(source)
  const p = plan()
  const steps: string[] = []
  const result = await moveFile(p, { onStep: (s) => steps.push(s) })
  expect({
    result: { how: result.how, path: result.path },
    steps,
    inode: ino(result.path),
    left: names(join(src, 'in')),
    there: names(targetDir),
  }).toEqual({
    result: { how: 'renamed', path: targetDir + 'clip.mov' },
    steps: ['renamed', 'synced'],
    inode: before,
    left: [],
    there: ['clip.mov'],
  })
  expect(readFileSync(result.path, 'utf8')).toBe('essence')
  // Again, with the same plan: it finds the file where it is and changes nothing.
  expect((await resumeMove(p)).how).toBe('found')
})

test('a taken name gets _1, _2 before its extension; no extension, dotfiles; a dangling link or a folder counts as taken; nothing taken changes', async () => {
  const cases: [string, string[]][] = [
    ['clip.mov', []],
    ['clip.mov', ['clip.mov']],
    ['clip.mov', ['clip.mov', 'clip_1.mov']],
    ['clip.mov', ['clip.mov', 'clip_2.mov']],
    ['README', ['README']],
    ['.hidden', ['.hidden', '.hidden_1']],
    ['.hidden.wav', ['.hidden.wav']],
    ['archive.tar.gz', ['archive.tar.gz']],
    ['clip.mov', ['clip.mov=dangling', 'clip_1.mov=folder']],
  ]
  const got: Record<string, string> = {}
  for (const [name, taken] of cases) {
    const { targetDir, plan } = setup(name, `new ${name}`)
    mkdirSync(targetDir, { recursive: true })
    for (const t of taken) {
      const [file, kind] = t.split('=') as [string, string | undefined]
      if (kind === 'dangling') symlinkSync(join(targetDir, 'nowhere'), join(targetDir, file))
      else if (kind === 'folder') mkdirSync(join(targetDir, file))
      else put(join(targetDir, file), `old ${file}`)
    }
    const before = snapshot(targetDir)
    const result = await moveFile(plan())
    got[`${name} [${taken.join(' ')}]`] = result.name
    const after = snapshot(targetDir)
    for (const k of Object.keys(before)) expect(after[k]).toEqual(before[k]!)
    expect(readFileSync(result.path, 'utf8')).toBe(`new ${name}`)
  }
  expect(got).toEqual({
    'clip.mov []': 'clip.mov',
    'clip.mov [clip.mov]': 'clip_1.mov',
    'clip.mov [clip.mov clip_1.mov]': 'clip_2.mov',
    'clip.mov [clip.mov clip_2.mov]': 'clip_1.mov',
    'README [README]': 'README_1',
    '.hidden [.hidden .hidden_1]': '.hidden_2',
    '.hidden.wav [.hidden.wav]': '.hidden_1.wav',
    'archive.tar.gz [archive.tar.gz]': 'archive.tar_1.gz',
    'clip.mov [clip.mov=dangling clip_1.mov=folder]': 'clip_2.mov',
  })
  expect([suffixed('clip.', 3), suffixed('a', 0)]).toEqual(['clip_3.', 'a'])
})

for (const kind of ['same file system', `across file systems: ${PAIR}`] as const) {
  test(`a name taken after planning (${kind}): the next one, recorded before the rename`, async () => {
    const { targetDir, plan } = kind === 'same file system' ? setup() : crossSetup()
    const p = plan()
    put(join(targetDir, 'clip.mov'), 'someone else')
    const events: string[] = []
    const result = await moveFile(p, {
      ...(kind === 'same file system' ? {} : crossOptions()),
      record: (q) => void events.push(`record ${q.name}${q.copy ? ' +copy' : ''}`),
      onStep: (s) => void events.push(s),
    })
    expect({
      name: result.name,
      there: names(targetDir),
      theirs: readFileSync(join(targetDir, 'clip.mov'), 'utf8'),
      ours: readFileSync(result.path, 'utf8'),
    }).toEqual({
      name: 'clip_1.mov',
      there: ['clip.mov', 'clip_1.mov'],
      theirs: 'someone else',
      ours: 'essence',
    })
    expect(events).toEqual(
      kind === 'same file system'
        ? ['record clip_1.mov', 'renamed', 'synced']
        : forced
          ? [
              'temp-created',
              'written',
              'copied',
              'record clip.mov +copy',
              'recorded',
              'record clip_1.mov +copy',
              'renamed',
              'synced',
              'source-removed',
            ]
          : // The rename is tried first (and fails with EXDEV) under the new name, recorded before it.
            [
              'record clip_1.mov',
              'temp-created',
              'written',
              'copied',
              'record clip_1.mov +copy',
              'recorded',
              'renamed',
              'synced',
              'source-removed',
            ],
    )
  })
}

test('the source already in its target folder under its name: nothing to do', async () => {
  const root = device()
  const path = join(root, 'PROD/video/clip.mov')
  put(path, 'here')
  const plan = planMove({ source: path, sourceRoot: root, targetDir: join(root, 'PROD/video'), targetRoot: root })
  expect(plan.name).toBe('clip.mov')
  const result = await moveFile(plan)
  expect({ how: result.how, there: names(join(root, 'PROD/video')) }).toEqual({ how: 'found', there: ['clip.mov'] })
})

// The race of "never overwrites": another process takes the same names, the lowest free one
// first (as the planner picks), exclusively (wx), and at once renames what it made to a folder
// of its own (HELD), again and again; the test takes each moved file out to a folder of its own
// (done) as well. So clip.mov is taken and free by turns, and every move competes for it. Had a
// move replaced the racer's file, the racer would carry that move's file off to HELD.
const RACER = `
const fs = require('node:fs')
const { suffixed } = require(process.env.FILE_TS)
const { DIR, HELD, STOP } = process.env
let made = 0
console.log('ready')
const end = Date.now() + 20000
while (!fs.existsSync(STOP) && Date.now() < end && made < 20000) {
  for (let n = 0; ; n++) {
    const name = DIR + '/' + suffixed('clip.mov', n)
    try { fs.writeFileSync(name, 'theirs ' + made, { flag: 'wx' }) } catch (e) { if (e.code === 'EEXIST') continue; throw e }
    fs.renameSync(name, HELD + '/' + made++)
    break
  }
}
console.log(made)
`

for (const kind of ['same file system', `across file systems: ${PAIR}`] as const) {
  test(`a second process taking the same names (${kind}): nothing of either is ever overwritten`, async () => {
    const same = kind === 'same file system'
    const src = device(same ? 'disk' : 'other')
    const tgt = same ? src : device('disk')
    const targetDir = join(tgt, 'PROD/video/')
    const held = join(tgt, 'held')
    const done = join(tgt, 'done')
    mkdirSync(targetDir, { recursive: true })
    mkdirSync(held)
    mkdirSync(done)
    const stop = join(tgt, 'stop')
    const racer = spawn([process.execPath, '-e', RACER], {
      env: { ...process.env, FILE_TS, DIR: targetDir, HELD: held, STOP: stop },
      stdout: 'pipe',
      stderr: 'inherit',
    })
    const output = new Response(racer.stdout).text()
    await waitFor(() => names(held).length > 0, 'the racer to start', { everyMs: 5 })
    let moved = 0
    let lost = 0
    const end = Date.now() + 10_000
    try {
      // At least 20 moves, and on until 5 of them lost their name to the racer (or the bound).
      while ((moved < 20 || lost < 5) && Date.now() < end) {
        const source = join(src, 'in', `m${moved}`, 'clip.mov')
        put(source, `ours ${moved}`)
        const plan = planMove({ source, sourceRoot: src, targetDir, targetRoot: tgt })
        let name = plan.name
        const result = await moveFile(plan, {
          ...(same ? {} : crossOptions()),
          record: (q) => void (q.name !== name && ((name = q.name), lost++)),
        })
        renameSync(result.path, join(done, String(moved++)))
      }
    } finally {
      writeFileSync(stop, '')
    }
    await racer.exited
    const made = Number((await output).trim().split('\n').at(-1))
    const read = (dir: string) => names(dir).map((f) => readFileSync(join(dir, f), 'utf8'))
    const there = [...read(targetDir), ...read(done)]
    const carried = read(held)
    const ours = there.filter((c) => c.startsWith('ours ')).sort()
    const theirs = [...there, ...carried].filter((c) => c.startsWith('theirs '))
    expect({
      ours: ours.length,
      distinctOurs: new Set(ours).size,
      oursCarriedOff: carried.filter((c) => c.startsWith('ours ')).length,
      theirs: theirs.length,
      distinctTheirs: new Set(theirs).size,
    }).toEqual({ ours: moved, distinctOurs: moved, oursCarriedOff: 0, theirs: made, distinctTheirs: made })
    if (process.env.RACE_OUTCOMES)
      console.log(`${kind}: ${moved} moved, ${lost} lost their planned name, the racer made ${made}`)
    expect(lost).toBeGreaterThan(0)
  }, 120_000)
}

test(`across file systems: ${PAIR}: 12 MB with its mode and times to the nanosecond, progress, steps in order`, async () => {
  const { src, source, targetDir, plan } = crossSetup('clip.mov', 12 * 1024 * 1024 + 5)
  chmodSync(source, 0o640)
  spawnSync('touch', ['-m', '-d', '2002-03-04 05:06:07.123456789', source])
  const before = statSync(source, { bigint: true })
  expect(before.mtimeNs % 1_000_000_000n).toBe(123456789n)
  const hash = sha(source)
  const p = plan()
  const progress: number[] = []
  const events: string[] = []
  const result = await moveFile(p, {
    ...crossOptions(),
    onProgress: (b, total) => void (progress.push(b), expect(total).toBe(12 * 1024 * 1024 + 5)),
    onStep: (s) => void events.push(s),
    record: (q) => void events.push(q.copy ? 'record copy' : 'record'),
  })
  const after = statSync(result.path, { bigint: true })
  expect({
    how: result.how,
    hash: sha(result.path),
    mode: after.mode & 0o7777n,
    mtimeNs: after.mtimeNs,
    left: names(join(src, 'in')),
    there: names(targetDir),
    events,
    progress: {
      last: progress.at(-1),
      ascending: progress.every((b, i) => i === 0 || b > progress[i - 1]!),
      chunks: progress.length > 1,
    },
  }).toEqual({
    how: 'copied',
    hash,
    mode: 0o640n,
    mtimeNs: before.mtimeNs,
    left: [],
    there: ['clip.mov'],
    events: ['temp-created', 'written', 'copied', 'record copy', 'recorded', 'renamed', 'synced', 'source-removed'],
    progress: { last: 12 * 1024 * 1024 + 5, ascending: true, chunks: true },
  })
})

/** xxHash64 of a whole file, read at once, as ASC MHL and `technical.hashes` write it. */
const xxh64Of = (path: string) => Bun.hash.xxHash64(readFileSync(path), 0n).toString(16).padStart(16, '0')

test(`across file systems (${PAIR}): the copy is read back and its hash given and recorded; a rename reads no bytes and gives none`, async () => {
  const cross = crossSetup('clip.mov', 3 * 1024 * 1024 + 7)
  const hash = xxh64Of(cross.source)
  const recorded: (string | undefined)[] = []
  const copied = await moveFile(cross.plan(), { ...crossOptions(), record: (q) => void recorded.push(q.copy?.xxh64) })
  const same = setup('clip.mov', 'essence')
  const renamed = await moveFile(same.plan())
  expect({
    copied: { how: copied.how, xxh64: copied.xxh64, ofFile: xxh64Of(copied.path), recorded: recorded.at(-1) },
    renamed: { how: renamed.how, xxh64: renamed.xxh64 },
  }).toEqual({
    copied: { how: 'copied', xxh64: hash, ofFile: hash, recorded: hash },
    renamed: { how: 'renamed', xxh64: undefined },
  })
})

test(`a copy changed between its write and its read-back (${PAIR}): the move fails naming the file, the temp is removed, the source stays as it was`, async () => {
  const { src, source, targetDir, plan } = crossSetup('clip.mov', 2 * 1024 * 1024)
  const before = { bytes: sha(source), stat: statSync(source, { bigint: true }) }
  const p = plan()
  const steps: string[] = []
  // Another writer changes one byte of the temp after it was written and synced, before it is read back.
  const onStep = (s: MoveStep) => {
    steps.push(s)
    if (s === 'written') writeFileSync(join(targetDir, p.temp), 'X', { flag: 'r+' })
  }
  const error = (await moveFile(p, { ...crossOptions(), onStep }).catch((e) => e)) as NodeJS.ErrnoException
  const after = statSync(source, { bigint: true })
  expect({
    code: error.code,
    path: error.path,
    names: error.message.includes('in/clip.mov') && error.message.includes('read back'),
    steps,
    there: names(targetDir),
    source: { names: names(join(src, 'in')), bytes: sha(source), ino: after.ino, mtimeNs: after.mtimeNs },
  }).toEqual({
    code: 'EHASH',
    path: 'in/clip.mov',
    names: true,
    steps: ['temp-created', 'written'],
    there: [],
    source: { names: ['clip.mov'], bytes: before.bytes, ino: before.stat.ino, mtimeNs: before.stat.mtimeNs },
  })
})

test(`a cancelled copy (${PAIR}): the temp removed, the source where it was, nothing at the target`, async () => {
  const { src, source, targetDir, plan } = crossSetup('clip.mov', 40 * 1024 * 1024)
  const before = snapshot(join(src, 'in'))
  const controller = new AbortController()
  const seen: number[] = []
  const error = await moveFile(plan(), {
    ...crossOptions(),
    signal: controller.signal,
    onProgress: (b) => (seen.push(b), controller.abort('stop')),
  }).catch((e) => e)
  expect({
    cancelled: error instanceof CancelledError,
    chunks: seen.length,
    source: snapshot(join(src, 'in')),
    there: names(targetDir),
  }).toEqual({ cancelled: true, chunks: 1, source: before, there: [] })
  expect(existsSync(source)).toBe(true)
})

test('refused: a source that is a link, a source reached through a linked folder, not a regular file, a path off its device; messages name no link target', async () => {
  const root = device()
  const outside = device('other')
  put(join(outside, 'secret.mov'), 'outside')
  put(join(root, 'real/clip.mov'), 'inside')
  symlinkSync(join(outside, 'secret.mov'), join(root, 'real/link.mov'))
  symlinkSync(outside, join(root, 'linked'))
  mkdirSync(join(root, 'real/folder.mov'))
  const pipes = device() // apart: a snapshot would block reading a fifo
  mkdirSync(join(pipes, 'in'))
  spawnSync('mkfifo', [join(pipes, 'in/fifo.mov')])
  const targetDir = join(root, 'PROD/video')
  const plan =
    (source: string, sourceRoot = root) =>
    () =>
      planMove({ source, sourceRoot, targetDir, targetRoot: root })
  const before = { inside: snapshot(root), outside: snapshot(outside) }
  expect({
    link: await failure(plan(join(root, 'real/link.mov')), outside),
    throughLinkedFolder: await failure(plan(join(root, 'linked/secret.mov')), outside),
    folder: await failure(plan(join(root, 'real/folder.mov'))),
    fifo: await failure(plan(join(pipes, 'in/fifo.mov'), pipes)),
    offDevice: await failure(plan(join(outside, 'secret.mov'))),
    missing: await failure(plan(join(root, 'real/none.mov'))),
  }).toEqual({
    link: { code: 'ELOOP', namesOutside: false },
    throughLinkedFolder: { code: 'ENOTDIR', namesOutside: false },
    folder: { code: 'EINVAL', namesOutside: false },
    fifo: { code: 'EINVAL', namesOutside: false },
    offDevice: { code: 'EINVAL', namesOutside: false },
    missing: { code: 'ENOENT', namesOutside: false },
  })
  expect({ inside: snapshot(root), outside: snapshot(outside) }).toEqual(before)
})

test('refused: a target folder reached through a link; nothing is made outside the device', async () => {
  const root = device()
  const outside = device('other')
  put(join(root, 'in/clip.mov'), 'x')
  symlinkSync(outside, join(root, 'PROD'))
  const error = await failure(
    () =>
      planMove({
        source: join(root, 'in/clip.mov'),
        sourceRoot: root,
        targetDir: join(root, 'PROD/video'),
        targetRoot: root,
      }),
    outside,
  )
  // A plan made while PROD was a real folder, PROD swapped for a link before the move.
  const other = device()
  put(join(other, 'in/clip.mov'), 'y')
  mkdirSync(join(other, 'PROD'))
  const p = planMove({
    source: join(other, 'in/clip.mov'),
    sourceRoot: other,
    targetDir: join(other, 'PROD/video'),
    targetRoot: other,
  })
  renameSync(join(other, 'PROD'), join(other, 'PROD.old'))
  symlinkSync(outside, join(other, 'PROD'))
  const late = await failure(() => moveFile(p), outside)
  expect({
    error,
    late,
    outside: names(outside),
    sources: [existsSync(join(root, 'in/clip.mov')), existsSync(join(other, 'in/clip.mov'))],
  }).toEqual({
    error: { code: 'ENOTDIR', namesOutside: false },
    late: { code: 'ENOTDIR', namesOutside: false },
    outside: [],
    sources: [true, true],
  })
})

for (const kind of ['same file system', `across file systems: ${PAIR}`] as const) {
  test(`refused: a source swapped for another file after planning, or not the file expected (${kind})`, async () => {
    const { src, source, targetDir, plan } = kind === 'same file system' ? setup() : crossSetup()
    const p = plan()
    put(join(src, 'in/impostor.mov'), 'impostor')
    renameSync(join(src, 'in/impostor.mov'), source)
    const swapped = await failure(() => moveFile(p, kind === 'same file system' ? {} : crossOptions()))
    const expected = await failure(() =>
      planMove({
        source,
        sourceRoot: src,
        targetDir,
        targetRoot: p.target.root,
        expect: { dev: Number(p.file.dev), ino: Number(p.file.ino) },
      }),
    )
    expect({ swapped, expected, source: readFileSync(source, 'utf8'), there: names(targetDir) }).toEqual({
      swapped: { code: 'ECHANGED', namesOutside: false },
      expected: { code: 'ECHANGED', namesOutside: false },
      source: 'impostor',
      there: [],
    })
  })
}

// A move in a child process that kills itself (SIGKILL) when it reaches STOP: a step, or
// 'progress' (after the first chunk is written), or never ('none'). The plan lives in a file,
// written by `record` through a rename (as a task's params in a committed transaction).
const MOVER = `
const fs = require('node:fs')
const { moveFile } = require(process.env.FILE_TS)
const { PLAN_FILE, STOP } = process.env
const record = (p) => { fs.writeFileSync(PLAN_FILE + '.new', JSON.stringify(p)); fs.renameSync(PLAN_FILE + '.new', PLAN_FILE) }
const die = () => process.kill(process.pid, 'SIGKILL')
console.log('start')
moveFile(JSON.parse(fs.readFileSync(PLAN_FILE, 'utf8')), {
  crossDevice: process.env.CROSS === '1', record,
  onStep: (s) => { if (s === STOP) die() },
  onProgress: () => { if (STOP === 'progress') die() },
}).then((r) => console.log('done ' + r.how))
`

function mover(plan: MovePlan, stop: string, crossDevice: boolean) {
  const planFile = join(disk, `plan${n++}.json`)
  writeFileSync(planFile, JSON.stringify(plan))
  const child = spawn([process.execPath, '-e', MOVER], {
    env: { ...process.env, FILE_TS, PLAN_FILE: planFile, STOP: stop, CROSS: crossDevice ? '1' : '0' },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = child.stdout.getReader()
  const started = reader.read().then((r) => {
    if (!new TextDecoder().decode(r.value).startsWith('start')) throw new Error('the mover did not start')
  })
  return { planFile, exited: child.exited, signal: () => child.signalCode, started, kill: () => child.kill('SIGKILL') }
}

/** Where the file is: source, final name, temp (present or not). */
const state = (p: MovePlan) => ({
  source: existsSync(sourcePath(p)),
  final: existsSync(destinationPath(p)),
  temp: existsSync(p.target.root + p.target.rel + p.temp),
})

/** After a resume: the file at exactly its destination with its bytes, nothing else in either folder. */
function expectMovedOnce(result: { path: string; plan: MovePlan }, hash: string, sourceDir: string, targetDir: string) {
  expect({ source: names(sourceDir), target: names(targetDir), hash: sha(result.path) }).toEqual({
    source: [],
    target: [result.plan.name],
    hash,
  })
}

const CROSS_STEPS = ['temp-created', 'progress', 'written', 'copied', 'recorded', 'renamed', 'synced', 'source-removed']
const SAME_STEPS = ['renamed', 'synced']

for (const kind of ['same file system', `across file systems: ${PAIR}`] as const) {
  const same = kind === 'same file system'
  test(`a crash at every step (${kind}), the child process killed there; the resume ends with the file at exactly one path`, async () => {
    const table: Record<string, unknown> = {}
    for (const stop of same ? SAME_STEPS : CROSS_STEPS) {
      const { src, targetDir, plan } = same
        ? setup('clip.mov', 3 * 1024 * 1024)
        : crossSetup('clip.mov', 20 * 1024 * 1024)
      const hash = sha(join(src, 'in/clip.mov'))
      const child = mover(plan(), stop, !same && forced)
      await child.exited
      const recorded = JSON.parse(readFileSync(child.planFile, 'utf8')) as MovePlan
      const atCrash = { killed: child.signal(), ...state(recorded) }
      const steps: MoveStep[] = []
      const result = await resumeMove(recorded, { ...(same ? {} : crossOptions()), onStep: (s) => steps.push(s) })
      expectMovedOnce(result, hash, join(src, 'in'), targetDir)
      table[stop] = { atCrash, resumed: result.how, steps: steps.join(' ') }
    }
    const disk = (source: boolean, temp: boolean, final: boolean) => ({ killed: 'SIGKILL', source, temp, final })
    expect(table).toEqual(
      same
        ? {
            renamed: { atCrash: disk(false, false, true), resumed: 'found', steps: '' },
            synced: { atCrash: disk(false, false, true), resumed: 'found', steps: '' },
          }
        : {
            'temp-created': {
              atCrash: disk(true, true, false),
              resumed: 'copied',
              steps: 'temp-created written copied recorded renamed synced source-removed',
            },
            progress: {
              atCrash: disk(true, true, false),
              resumed: 'copied',
              steps: 'temp-created written copied recorded renamed synced source-removed',
            },
            // Written, not read back yet: the temp is not a recorded copy, and is made again.
            written: {
              atCrash: disk(true, true, false),
              resumed: 'copied',
              steps: 'temp-created written copied recorded renamed synced source-removed',
            },
            copied: {
              atCrash: disk(true, true, false),
              resumed: 'copied',
              steps: 'temp-created written copied recorded renamed synced source-removed',
            },
            // The recorded copy is complete: it is renamed into place, not made again.
            recorded: { atCrash: disk(true, true, false), resumed: 'copied', steps: 'renamed synced source-removed' },
            renamed: { atCrash: disk(true, false, true), resumed: 'found', steps: '' },
            synced: { atCrash: disk(true, false, true), resumed: 'found', steps: '' },
            'source-removed': { atCrash: disk(false, false, true), resumed: 'found', steps: '' },
          },
    )
  }, 60_000)
}

test(`killed at random moments, 30 times, moving 20 MB (${PAIR}); every resume ends with the file at exactly one path, no temp left`, async () => {
  // How long one move takes in the child, from its 'start' to its end.
  const timed = crossSetup('clip.mov', 20 * 1024 * 1024)
  const calibration = mover(timed.plan(), 'none', forced)
  await calibration.started
  const t0 = performance.now()
  await calibration.exited
  const span = performance.now() - t0
  const outcomes: Record<string, number> = {}
  for (let i = 0; i < 30; i++) {
    const { src, targetDir, plan } = crossSetup('clip.mov', 20 * 1024 * 1024)
    const hash = sha(join(src, 'in/clip.mov'))
    const child = mover(plan(), 'none', forced)
    await child.started
    const timer = setTimeout(child.kill, Math.random() * span * 1.2)
    await child.exited
    clearTimeout(timer)
    const recorded = JSON.parse(readFileSync(child.planFile, 'utf8')) as MovePlan
    const s = state(recorded)
    const at =
      `${child.signal() ? 'killed' : 'finished'}: ${s.source ? 'source ' : ''}${s.temp ? 'temp ' : ''}${s.final ? 'final' : ''}`.trim()
    outcomes[at] = (outcomes[at] ?? 0) + 1
    expectMovedOnce(await resumeMove(recorded, crossOptions()), hash, join(src, 'in'), targetDir)
  }
  if (process.env.RACE_OUTCOMES) console.log(`one move ${span.toFixed(0)} ms;`, outcomes)
  expect(Object.values(outcomes).reduce((a, b) => a + b)).toBe(30)
}, 120_000)

test('resume of states a crash leaves without `record` or with linkat: two names of one file; an identical copy; a different file at the name', async () => {
  // linkat made the new name, the crash came before the old one went.
  const a = setup()
  const pa = a.plan()
  mkdirSync(a.targetDir, { recursive: true })
  linkSync(a.source, destinationPath(pa))
  const twoNames = await resumeMove(pa)

  // A copy renamed into place by a run that recorded nothing, the source still there: it is the
  // same bytes and times, so the source goes.
  const b = crossSetup('clip.mov', 5 * 1024 * 1024)
  const pb = b.plan()
  mkdirSync(b.targetDir, { recursive: true })
  spawnSync('cp', ['--preserve=mode,timestamps', b.source, destinationPath(pb)])
  const identical = await resumeMove(pb, crossOptions())

  // Someone else's file of the same size and time but other bytes at the name: it stays, and
  // the move goes on under the next name.
  const c = crossSetup('clip.mov', 'abcdef')
  const pc = c.plan()
  put(destinationPath(pc), 'ABCDEF')
  spawnSync('touch', ['-r', c.source, destinationPath(pc)])
  expect(statSync(destinationPath(pc), { bigint: true }).mtimeNs).toBe(statSync(c.source, { bigint: true }).mtimeNs)
  const different = await resumeMove(pc, crossOptions())

  expect({
    twoNames: { how: twoNames.how, source: existsSync(a.source), inode: ino(twoNames.path) === Number(pa.file.ino) },
    identical: { how: identical.how, source: existsSync(b.source), there: names(b.targetDir) },
    different: {
      how: different.how,
      name: different.name,
      theirs: readFileSync(destinationPath(pc), 'utf8'),
      ours: readFileSync(different.path, 'utf8'),
      source: existsSync(c.source),
    },
  }).toEqual({
    twoNames: { how: 'found', source: false, inode: true },
    identical: { how: 'found', source: false, there: ['clip.mov'] },
    different: { how: 'copied', name: 'clip_1.mov', theirs: 'ABCDEF', ours: 'abcdef', source: false },
  })
})

test(`a source written to while it is copied, or after its copy but before its removal (${PAIR}): the move stops, the file stays at its source, no copy is left`, async () => {
  const outcome = async (when: 'progress' | 'synced', change: (path: string) => void) => {
    const { src, source, targetDir, plan } = crossSetup('clip.mov', 20 * 1024 * 1024)
    let done = false
    const once = () => void (done || (change(source), (done = true)))
    const steps: string[] = []
    const onStep = (s: MoveStep) => (steps.push(s), s === 'synced' && when === 'synced' && once())
    const error = await failure(() =>
      moveFile(plan(), { ...crossOptions(), onProgress: () => when === 'progress' && once(), onStep }),
    )
    return {
      error,
      steps: steps.join(' '),
      source: names(join(src, 'in')),
      target: names(targetDir),
      changed: readFileSync(source).subarray(0, 7).toString(),
    }
  }
  // Same size, other bytes: only the modification time tells.
  const overwrite = (path: string) => writeFileSync(path, 'changed', { flag: 'r+' })
  const append = (path: string) => writeFileSync(path, 'more', { flag: 'a' })
  const left = { source: ['clip.mov'], target: [] }
  // A change while copying stops the move before the copy is complete (never renamed into place).
  const whileCopying = { error: { code: 'ECHANGED', namesOutside: false }, steps: 'temp-created', ...left }
  expect({
    overwrittenWhileCopied: await outcome('progress', overwrite),
    grownWhileCopied: await outcome('progress', append),
    overwrittenAfterCopy: await outcome('synced', overwrite),
  }).toEqual({
    overwrittenWhileCopied: { ...whileCopying, changed: 'changed' },
    grownWhileCopied: { ...whileCopying, changed: expect.any(String) },
    overwrittenAfterCopy: {
      error: { code: 'ECHANGED', namesOutside: false },
      steps: 'temp-created written copied recorded renamed synced',
      ...left,
      changed: 'changed',
    },
  })
})

test(`a source name taken by another file after the copy (${PAIR}): that file is not removed`, async () => {
  const { src, source, plan } = crossSetup('clip.mov', 'ours')
  put(join(src, 'impostor'), 'impostor')
  const result = await moveFile(plan(), {
    ...crossOptions(),
    onStep: (s) => s === 'synced' && renameSync(join(src, 'impostor'), source),
  })
  expect({ how: result.how, moved: readFileSync(result.path, 'utf8'), atSource: readFileSync(source, 'utf8') }).toEqual(
    { how: 'copied', moved: 'ours', atSource: 'impostor' },
  )
})
