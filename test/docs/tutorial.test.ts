// docs/tutorial.md can never rot: its shell blocks are run, as written and in order, by bash in a
// fresh folder whose data/ a fresh `serve` uses, as a user pastes them into a second terminal
// after `npm start`. Two things differ from a user's session, and only these: the server listens
// on a free port (the tutorial's http://127.0.0.1:8000 is replaced by it), and the block that
// starts the server is not run (the test started it). Then the catalogue and the disk are
// checked for what the tutorial says happened.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { call, cleanEnv, killAll, ROOT, type Server, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

const TUTORIAL = join(ROOT, 'docs', 'tutorial.md')
const ORIGIN = 'http://127.0.0.1:8000'

/** The ```sh blocks of a Markdown text, in order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
}

let server: Server
let cwd: string
let key: string

beforeAll(async () => {
  cwd = tempDir('reelhouse-tutorial-')
  server = await startServe(join(cwd, 'data'), { cwd })
  key = readFileSync(join(cwd, 'data', 'admin.token'), 'utf8').trim()
})
afterAll(() => killAll())

test('the tutorial has the steps the first hour needs, and starts the server as the README does', () => {
  const blocks = shellBlocks(readFileSync(TUTORIAL, 'utf8'))
  expect(blocks[0]).toBe('npm start\n')
  const text = blocks.join('')
  for (const step of [
    'post devices/',
    'post productions/',
    'post videoassets/',
    'post projectassets/',
    '/addasset/',
    '"copy_of"',
    'follow $TASK',
    '-X DELETE',
  ])
    expect(text).toContain(step)
  expect(text).toContain(ORIGIN)
})

test('every command of docs/tutorial.md works as written against a fresh server, and does what the text says', async () => {
  const [start, ...blocks] = shellBlocks(readFileSync(TUTORIAL, 'utf8'))
  expect(start).toBe('npm start\n')
  // -e: a failing command (curl --fail-with-body on an error answer) fails the run where it is.
  const script = ['set -eu', ...blocks].join('\n').replaceAll(ORIGIN, server.base)
  const bash = Bun.spawn(['bash', '-c', script], {
    cwd,
    env: cleanEnv(),
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 50_000,
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(bash.stdout).text(),
    new Response(bash.stderr).text(),
    bash.exited,
  ])
  if (code !== 0) console.error(`tutorial output:\n${stdout}\n${stderr}`)
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' })

  // What the text promised: one device and production, the clip, the copy done with its folder
  // in place (the project file and no hidden work folder), the original gone from catalogue and disk.
  const media = join(cwd, 'tutorial-media')
  const devices = await call(server, 'GET', '/devices/', key)
  expect(devices.json).toEqual([expect.objectContaining({ name: 'scratch', path: `${media}/` })])
  const projects = await call(server, 'GET', '/projectassets/', key)
  expect(projects.json).toEqual([
    expect.objectContaining({
      name: 'Episode 101 recut',
      status_asset: 6,
      is_production: true,
      type: 'premiere',
      bundle_root: `${media}/night-shift/ep101-recut/`,
      video_assets: [expect.objectContaining({ name: 'A001C002' })],
    }),
  ])
  const folders = readdirSync(join(media, 'night-shift'))
  expect(folders).toContain('ep101-recut')
  expect(folders).not.toContain('ep101')
  expect(folders.filter((f) => f.startsWith('.'))).toEqual([]) // no hidden work folder left
  expect(readFileSync(join(media, 'night-shift', 'ep101-recut', 'ep101.prproj'), 'utf8')).toBe('project file')
  const tasks = await call(server, 'GET', '/tasks/?state=failed', key)
  expect(tasks.json).toEqual([])
  const kinds = (await call(server, 'GET', '/tasks/', key)).json.map(
    (t: { kind: string; state: string }) => `${t.kind} ${t.state}`,
  )
  expect(kinds).toEqual(expect.arrayContaining(['copy done', 'delete done']))
  // The last commands printed the 404 of the deleted project and the clip, still catalogued.
  expect(stdout).toMatch(/^404$/m)
  expect(stdout).toContain('"name":"A001C002"')
})
