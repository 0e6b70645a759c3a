// The race of issue 10 point 2: while removeTreeAt empties a tree, another process keeps
// swapping folders of that tree for links to an outside folder (and back). Whatever the removal
// makes of it (done, or stopped with an error), nothing outside the tree may change. Which
// outcome a round has depends on the timing (RACE_OUTCOMES=1 prints them); the test asserts
// only what must hold in every one.
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test'
import { type Subprocess, spawn } from 'bun'
import { spawnSync } from 'node:child_process'
import { linkSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/temp.ts'
import { removeTreeAt } from '../../src/storage/remove.ts'
import { makeTree, snapshot } from '../helpers/tree.ts'

const FOLDERS = 8
const ROUNDS = 4

// Swaps every s<i> and s<i>/inner for a link to OUTSIDE, leaves the links for a moment, puts
// the folders back, waits a moment, and again, until the tree is gone or the time is up: so a
// folder listed as a folder is often a link when it is opened. Says "ready" after one cycle.
const SWAPPER = `
const fs = require('node:fs')
const { TREE, OUTSIDE, FOLDERS, MS } = process.env
const end = Date.now() + Number(MS)
const pairs = []
for (let i = 0; i < Number(FOLDERS); i++)
  pairs.push([TREE + '/s' + i, TREE + '/.held' + i], [TREE + '/s' + i + '/inner', TREE + '/s' + i + '/.held'])
const spin = (ms) => { const until = performance.now() + ms; while (performance.now() < until); }
for (let cycle = 0; Date.now() < end && fs.existsSync(TREE); cycle++) {
  for (const [name, held] of pairs) {
    try { fs.renameSync(name, held); fs.symlinkSync(OUTSIDE, name) } catch {}
  }
  spin(0.3)
  for (const [name, held] of pairs) {
    try { fs.unlinkSync(name) } catch {}
    try { fs.renameSync(held, name) } catch {}
  }
  if (cycle === 0) console.log('ready')
  spin(0.3)
}
`

let base: string
let swapper: Subprocess<'ignore', 'pipe', 'inherit'> | undefined

beforeAll(() => {
  base = tempDir('reelhouse-race-')
})
afterEach(async () => {
  swapper?.kill('SIGKILL')
  await swapper?.exited
  swapper = undefined
})
afterAll(() => spawnSync('rm', ['-rf', base]))

/**
 * `count` names in folders of `perFolder` (d0/f0, d0/f1, ...: the same names in the tree and
 * outside, so a removal led outside would find them), hard links to one file each: making
 * thousands of inodes takes seconds on some disks.
 */
function names(root: string, count: number, perFolder: number) {
  for (let i = 0; i < count; i++) {
    const dir = join(root, `d${Math.floor(i / perFolder)}`)
    if (i % perFolder === 0) {
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, `f${i}`), `file ${i}`)
    } else linkSync(join(dir, `f${i - (i % perFolder)}`), join(dir, `f${i}`))
  }
}

/** Lines of a child's output, read as they come. */
async function* lines(stream: ReadableStream<Uint8Array>) {
  let text = ''
  const decoder = new TextDecoder()
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true })
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n')) {
      yield text.slice(0, at)
      text = text.slice(at + 1)
    }
  }
}

test('folders swapped for links to an outside folder by another process: the outside never changes', async () => {
  const outside = join(base, 'outside')
  names(outside, 1200, 100)
  makeTree(outside, { 'top.txt': 'top', 'sub/x.txt': 'x' })
  const before = snapshot(outside)
  const outcomes: string[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const tree = join(base, `.reelhouse-delete-${round}`)
    for (let i = 0; i < FOLDERS; i++) {
      names(join(tree, `s${i}`), 60, 30)
      names(join(tree, `s${i}`, 'inner'), 60, 30)
    }
    swapper = spawn([process.execPath, '-e', SWAPPER], {
      env: { ...process.env, TREE: tree, OUTSIDE: outside, FOLDERS: String(FOLDERS), MS: '10000' },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'inherit',
    })
    const output = lines(swapper.stdout)
    expect((await output.next()).value).toBe('ready')
    const outcome = await removeTreeAt(tree).then(
      () => 'removed',
      (e) => e.code ?? e.message,
    )
    outcomes.push(outcome)
    // Whatever happened, the removal never went into the outside folder.
    expect(snapshot(outside)).toEqual(before)
    swapper.kill('SIGTERM')
    await swapper.exited
    swapper = undefined
    spawnSync('rm', ['-rf', tree])
    expect(snapshot(outside)).toEqual(before)
  }
  if (process.env.RACE_OUTCOMES) console.log(outcomes)
  expect(outcomes.length).toBe(ROUNDS)
}, 120_000)
