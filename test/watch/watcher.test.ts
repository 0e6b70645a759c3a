// The device watcher (src/watch/watcher.ts) on real temporary folders: the events and their paths,
// excluded names, polling, a root that is missing, removed or comes back, the inotify limit
// (ENOSPC) and its fallback to polling, and that nothing is left open after close().
import { afterEach, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import {
  appendFileSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { join, resolve } from 'node:path'
import { REASONS, type WatchEvent, type Watcher, type WatcherOptions, createWatcher } from '../../src/watch/watcher.ts'
import type { Log } from '../../src/util/log.ts'
import { tempDir } from '../helpers/temp.ts'
import { waitFor } from '../helpers/wait.ts'

const ROOT = resolve(import.meta.dir, '../..')
const POLL_MS = 50
// Bounds for a loaded machine (npm test runs four files at once): a wide walk took over 5 s there once.
const BOUND = { ms: 30_000 }

// The clutter names of service.md 10 and the .reelhouse-* work folders; the real rule is
// ingest.ts's excluded(), which the service passes in.
const CLUTTER = new Set(['@eaDir', '#recycle', '.Spotlight-V100', '.Trashes', '.fseventsd', '.TemporaryItems'])
const exclude = (rel: string) => rel.split('/').some((name) => CLUTTER.has(name) || name.startsWith('.reelhouse-'))

type Logged = { level: string; message: string; fields?: Record<string, unknown> }

const open: Watcher[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((w) => w.close()))
})

function setup(extra: Partial<WatcherOptions> = {}) {
  const events: WatchEvent[] = []
  const logged: Logged[] = []
  const log: Log = {
    info: (message, fields) => logged.push({ level: 'info', message, fields }),
    warn: (message, fields) => logged.push({ level: 'warn', message, fields }),
    error: (message, fields) => logged.push({ level: 'error', message, fields }),
  }
  const watcher = createWatcher({
    onEvent: (e) => events.push(e),
    exclude,
    poll: false,
    pollIntervalMs: POLL_MS,
    log,
    ...extra,
  })
  open.push(watcher)
  const saw = (type: WatchEvent['type'], path: string) => events.some((e) => e.type === type && e.path === path)
  const waitEvent = (type: WatchEvent['type'], path: string) => waitFor(() => saw(type, path), `${type} ${path}`, BOUND)
  const statusOf = (id: number) => watcher.status().find((s) => s.device === id)
  const waitReady = (id: number) => waitFor(() => statusOf(id)?.ready === true, `device ${id} ready`, BOUND)
  return { watcher, events, logged, waitEvent, statusOf, waitReady }
}

/** A device folder with the final slash, as devices are stored. */
const deviceDir = (prefix = 'reelhouse-watch-') => tempDir(prefix) + '/'

/** The inotify watches this process holds (Linux: /proc/self/fdinfo of its inotify descriptors). */
function inotifyWatches(): number {
  let n = 0
  for (const fd of readdirSync('/proc/self/fd')) {
    let link = ''
    try {
      link = readlinkSync(`/proc/self/fd/${fd}`)
    } catch {
      continue
    }
    if (link !== 'anon_inode:inotify') continue
    try {
      n += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('inotify wd:')).length
    } catch {}
  }
  return n
}

/** Runs a command to its end, killed after the bound (then `code` is -1). */
async function run(cmd: string[]) {
  const child = Bun.spawn(cmd, { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', timeout: 10_000 })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  return { code: child.signalCode ? -1 : code, stdout, stderr }
}

/** A script in a folder of its own that imports the watcher; `run()` it. */
function childScript(body: string): string[] {
  const file = join(tempDir('reelhouse-watch-child-'), 'child.ts')
  writeFileSync(
    file,
    `import { createWatcher } from ${JSON.stringify(join(ROOT, 'src/watch/watcher.ts'))}
import { waitFor } from ${JSON.stringify(join(ROOT, 'test/helpers/wait.ts'))}
import { readFileSync, readdirSync, readlinkSync } from 'node:fs'
${inotifyWatches.toString()}
${body}
`,
  )
  return [process.execPath, file]
}

describe.each([
  { name: 'a file device, by events', protocol: 'file', poll: false, mode: 'events', reason: undefined },
  {
    name: 'a copy device (a local folder too), by events',
    protocol: 'copy',
    poll: false,
    mode: 'events',
    reason: undefined,
  },
  {
    name: 'a file device with --poll, by polling',
    protocol: 'file',
    poll: true,
    mode: 'polling',
    reason: REASONS.poll,
  },
  { name: 'an smb device, by polling', protocol: 'smb', poll: false, mode: 'polling', reason: REASONS.protocol('smb') },
] as const)('$name', ({ protocol, poll, mode, reason }) => {
  // Events name the file; polling sees a folder's list of names change and names the folder
  // (its caller scans it). A file written in place is seen by events only (polling: the settle
  // gate looks again by itself). Removing a folder also reports its names as they go, which
  // may or may not be seen before the folder is gone: those are allowed, not required.
  const polled = mode === 'polling'
  test(
    polled
      ? 'reports the folder whose names changed (addDir), unlinkDir and addDir, with absolute paths'
      : 'reports add, change, unlink, unlinkDir and addDir with absolute paths (folders end with /)',
    async () => {
      const root = deviceDir()
      mkdirSync(join(root, 'shoot day 1'))
      writeFileSync(join(root, 'shoot day 1/A000.mov'), 'x')
      const { watcher, events, logged, statusOf, waitReady } = setup({ poll })
      watcher.watch({ id: 7, path: root, protocol })
      await waitReady(7)
      expect(statusOf(7)).toEqual({ device: 7, mode, ready: true, ...(reason ? { reason } : {}) })
      /** Waits for this event after everything seen so far. */
      const next = async (type: WatchEvent['type'], path: string) => {
        const from = events.length
        return async () =>
          waitFor(() => events.slice(from).some((e) => e.type === type && e.path === path), `${type} ${path}`, BOUND)
      }
      const day1 = `${root}shoot day 1/`

      let wait = await next(polled ? 'addDir' : 'add', polled ? day1 : `${day1}A001.mov`)
      writeFileSync(join(root, 'shoot day 1/A001.mov'), 'x')
      await wait()
      if (!polled) {
        wait = await next('change', `${day1}A000.mov`)
        appendFileSync(join(root, 'shoot day 1/A000.mov'), 'more bytes')
        await wait()
      }
      wait = await next(polled ? 'addDir' : 'unlink', polled ? day1 : `${day1}A001.mov`)
      unlinkSync(join(root, 'shoot day 1/A001.mov'))
      await wait()
      wait = await next('unlinkDir', day1)
      rmSync(join(root, 'shoot day 1'), { recursive: true })
      await wait()
      wait = await next('addDir', `${root}shoot day 2/`)
      mkdirSync(join(root, 'shoot day 2'))
      await wait()

      const seen = new Set(events.map((e) => `${e.device} ${e.type} ${e.path}`))
      const required = polled
        ? [`7 addDir ${day1}`, `7 unlinkDir ${day1}`, `7 addDir ${root}shoot day 2/`]
        : [
            `7 add ${day1}A001.mov`,
            `7 change ${day1}A000.mov`,
            `7 unlink ${day1}A001.mov`,
            `7 unlinkDir ${day1}`,
            `7 addDir ${root}shoot day 2/`,
          ]
      const allowed = polled
        ? [`7 addDir ${root}`] // the root's own names changed
        : [`7 change ${day1}A001.mov`, `7 unlink ${day1}A000.mov`, `7 unlink ${root}shoot day 1`]
      for (const e of required) expect(seen).toContain(e)
      expect([...seen].filter((e) => !required.includes(e) && !allowed.includes(e))).toEqual([])
      expect(logged).toEqual([])
    },
  )

  test('excluded names (clutter, .reelhouse-*) give no events, already there or new', async () => {
    const root = deviceDir()
    mkdirSync(join(root, 'old/@eaDir'), { recursive: true })
    mkdirSync(join(root, 'old/.Spotlight-V100/store'), { recursive: true })
    const { watcher, events, waitEvent, waitReady } = setup({ poll })
    watcher.watch({ id: 1, path: root, protocol })
    await waitReady(1)

    writeFileSync(join(root, 'old/@eaDir/thumb.jpg'), 'x')
    writeFileSync(join(root, 'old/.Spotlight-V100/store/db'), 'x')
    writeFileSync(join(root, 'old/.reelhouse-move-3'), 'x')
    mkdirSync(join(root, '#recycle/deep'), { recursive: true })
    writeFileSync(join(root, '#recycle/deep/gone.mov'), 'x')
    mkdirSync(join(root, '.reelhouse-copy-12'))
    writeFileSync(join(root, '.reelhouse-copy-12/part.mov'), 'x')
    // Last, in the same folders: once these are seen, the ones before them had their chance.
    writeFileSync(join(root, 'old/after.mov'), 'x')
    writeFileSync(join(root, 'take.mov'), 'x')
    if (polled) {
      // Polling names the folders whose names changed: old/ and the root, never one excluded.
      await waitEvent('addDir', `${root}old/`)
      await waitEvent('addDir', root)
      expect([...new Set(events.map((e) => `${e.type} ${e.path}`))].sort()).toEqual([
        `addDir ${root}`,
        `addDir ${root}old/`,
      ])
    } else {
      await waitEvent('add', `${root}old/after.mov`)
      await waitEvent('add', `${root}take.mov`)
      // A new file's write is reported as a change after its add.
      expect([...new Set(events.map((e) => `${e.type} ${e.path}`))].sort()).toEqual(
        [
          `add ${root}old/after.mov`,
          `add ${root}take.mov`,
          `change ${root}old/after.mov`,
          `change ${root}take.mov`,
        ].filter((e) => !e.startsWith('change') || events.some((x) => `${x.type} ${x.path}` === e)),
      )
    }
  })
})

describe.each([[false], [true]])('onWatched (polling: %p)', (poll) => {
  test('is called once, after the first walk: by then the deepest folder of a wide tree is watched', async () => {
    const root = deviceDir()
    for (let f = 0; f < 200; f++) mkdirSync(join(root, `reel-${f}`, 'day', 'cam'), { recursive: true })
    const told: number[] = []
    const { watcher, waitEvent, statusOf } = setup({ poll, onWatched: (id) => told.push(id) })
    watcher.watch({ id: 4, path: root, protocol: 'file' })
    // Nothing is watched yet when watch() returns: the walk is asynchronous.
    expect(told).toEqual([])
    await waitFor(() => told.length > 0, 'onWatched', BOUND)
    // Polling says ready only one interval later (every poller has its first stat then).
    expect(statusOf(4)?.mode).toBe(poll ? 'polling' : 'events')
    // Made at once when told: reported, so no change can fall between a scan begun now and the
    // watch. (A poller's first stat comes a little after the walk: polling is not timed this close.)
    if (!poll) {
      writeFileSync(join(root, 'reel-199', 'day', 'cam', 'A001.mov'), 'x')
      await waitEvent('add', `${root}reel-199/day/cam/A001.mov`)
    }
    await Bun.sleep(POLL_MS * 3)
    expect(told).toEqual([4])
  })
})

test("onWatched that throws is logged, and the watching goes on (it runs in chokidar's event: a throw would end the process)", async () => {
  const root = deviceDir()
  const { watcher, logged, waitEvent, waitReady } = setup({
    onWatched: () => {
      throw new Error('boom')
    },
  })
  watcher.watch({ id: 6, path: root, protocol: 'file' })
  await waitReady(6)
  expect(logged).toEqual([
    { level: 'error', message: 'The watcher ready handler failed', fields: { device: 6, error: 'Error: boom' } },
  ])
  writeFileSync(join(root, 'after.wav'), 'x')
  await waitEvent('add', `${root}after.wav`)
})

test("onWatched is called at once for a root that does not exist (the caller's scan reports it unavailable), and not again when it appears", async () => {
  const root = join(tempDir(), 'not yet') + '/'
  const told: number[] = []
  const { watcher, waitEvent, waitReady } = setup({ onWatched: (id) => told.push(id) })
  watcher.watch({ id: 5, path: root, protocol: 'file' })
  await waitFor(() => told.length > 0, 'onWatched', BOUND)
  mkdirSync(root)
  await waitEvent('addDir', root) // the announcement is the caller's cue now
  await waitReady(5)
  expect(told).toEqual([5])
})

test('a root that does not exist is unavailable; when it appears it is watched and announced by an addDir', async () => {
  const root = join(tempDir(), 'not yet') + '/'
  const { watcher, events, waitEvent, statusOf, waitReady } = setup()
  watcher.watch({ id: 3, path: root, protocol: 'file' })
  await waitFor(() => statusOf(3)?.reason === REASONS.missing, 'the missing root', BOUND)
  expect(watcher.status()).toEqual([
    { device: 3, mode: 'unavailable', ready: false, reason: 'the device folder does not exist' },
  ])

  mkdirSync(root)
  await waitEvent('addDir', root)
  await waitReady(3)
  expect(statusOf(3)).toEqual({ device: 3, mode: 'events', ready: true })
  writeFileSync(join(root, 'first.wav'), 'x')
  await waitEvent('add', `${root}first.wav`)
  expect(events[0]).toEqual({ device: 3, type: 'addDir', path: root })
  // The file's write may also be reported, as a change.
  expect(new Set(events.slice(1).map((e) => `${e.type} ${e.path}`))).toEqual(
    new Set([`add ${root}first.wav`, ...(events.some((e) => e.type === 'change') ? [`change ${root}first.wav`] : [])]),
  )
})

test('a root removed while watched: one unlinkDir for it, unavailable; recreated: addDir, watched again', async () => {
  const root = deviceDir()
  writeFileSync(join(root, 'a.mov'), 'x')
  const { watcher, events, logged, waitEvent, statusOf, waitReady } = setup()
  watcher.watch({ id: 4, path: root, protocol: 'file' })
  await waitReady(4)

  rmSync(root, { recursive: true })
  await waitEvent('unlinkDir', root)
  expect(statusOf(4)).toEqual({ device: 4, mode: 'unavailable', ready: false, reason: REASONS.missing })
  // Several more looks at the missing root: still one unlinkDir.
  const looks = Date.now()
  await waitFor(() => Date.now() - looks > 4 * POLL_MS, 'a few poll intervals', BOUND)
  expect(events.filter((e) => e.path === root)).toEqual([{ device: 4, type: 'unlinkDir', path: root }])

  mkdirSync(root)
  await waitEvent('addDir', root)
  await waitReady(4)
  writeFileSync(join(root, 'b.mov'), 'x')
  await waitEvent('add', `${root}b.mov`)
  expect(events.filter((e) => e.path === root || (e.path === `${root}b.mov` && e.type !== 'change'))).toEqual([
    { device: 4, type: 'unlinkDir', path: root },
    { device: 4, type: 'addDir', path: root },
    { device: 4, type: 'add', path: `${root}b.mov` },
  ])
  expect(logged).toEqual([])
})

test('watch() again: the same device is a no-op; another path or protocol replaces the watching', async () => {
  const first = deviceDir()
  const second = deviceDir()
  const { watcher, events, waitEvent, statusOf, waitReady } = setup()
  watcher.watch({ id: 6, path: first, protocol: 'file' })
  await waitReady(6)
  watcher.watch({ id: 6, path: first, protocol: 'file' })
  expect(statusOf(6)).toEqual({ device: 6, mode: 'events', ready: true })

  watcher.watch({ id: 6, path: second, protocol: 'afp' })
  await waitReady(6)
  expect(watcher.status()).toEqual([{ device: 6, mode: 'polling', ready: true, reason: REASONS.protocol('afp') }])
  writeFileSync(join(first, 'old place.mov'), 'x')
  writeFileSync(join(second, 'new place.mov'), 'x')
  // Polled: the folder whose names changed is named.
  await waitEvent('addDir', second)
  expect(events).toEqual([{ device: 6, type: 'addDir', path: second }])
})

test('2,000 files created at once are all reported', async () => {
  const root = deviceDir()
  for (let d = 0; d < 20; d++) mkdirSync(join(root, `reel ${d}`))
  const { watcher, events, waitReady } = setup()
  watcher.watch({ id: 5, path: root, protocol: 'file' })
  await waitReady(5)
  const expected = new Set<string>()
  for (let i = 0; i < 2000; i++) {
    const path = `${root}reel ${i % 20}/clip ${i}.mxf`
    writeFileSync(path, 'x')
    expected.add(path)
  }
  const added = new Set<string>()
  let read = 0
  await waitFor(
    () => {
      for (; read < events.length; read++) if (events[read]!.type === 'add') added.add(events[read]!.path)
      return added.size >= expected.size
    },
    '2,000 add events',
    { ms: 10_000 },
  )
  expect(added).toEqual(expected)
}, 120_000)

test('close() releases every inotify watch and reports nothing more', async () => {
  const before = inotifyWatches()
  const root = deviceDir()
  for (let d = 0; d < 10; d++) {
    mkdirSync(join(root, `d${d}`))
    writeFileSync(join(root, `d${d}/f.mov`), 'x')
  }
  const { watcher, events, waitReady } = setup()
  watcher.watch({ id: 1, path: root, protocol: 'file' })
  watcher.watch({ id: 2, path: deviceDir(), protocol: 'nfs' })
  watcher.watch({ id: 3, path: join(root, 'missing'), protocol: 'file' })
  await waitReady(1)
  await waitReady(2)
  // The root and its 10 folders; none for the files (their folder's watch reports them).
  expect(inotifyWatches() - before).toBe(11)

  await watcher.close()
  expect(inotifyWatches()).toBe(before)
  expect(watcher.status()).toEqual([])
  expect(() => watcher.watch({ id: 9, path: root, protocol: 'file' })).toThrow('The watcher is closed.')
  const count = events.length
  writeFileSync(join(root, 'after close.mov'), 'x')
  mkdirSync(join(root, 'missing'))
  const since = Date.now()
  await waitFor(() => Date.now() - since > 4 * POLL_MS, 'a few poll intervals', BOUND)
  expect(events.length).toBe(count)
})

test('a process whose only open things are watchers (events, polling, a missing root) exits by itself', async () => {
  const events = tempDir()
  const polled = tempDir()
  const cli = childScript(`
const seen: string[] = []
const watcher = createWatcher({
  onEvent: (e) => seen.push(e.type + ' ' + e.path),
  exclude: () => false, poll: false, pollIntervalMs: 50,
  log: { info() {}, warn() {}, error() {} },
})
watcher.watch({ id: 1, path: ${JSON.stringify(events)}, protocol: 'file' })
watcher.watch({ id: 2, path: ${JSON.stringify(polled)}, protocol: 'smb' })
watcher.watch({ id: 3, path: ${JSON.stringify(join(events, 'missing'))}, protocol: 'file' })
await waitFor(() => watcher.status().filter((s) => s.ready).length === 2, 'two devices ready', { ms: 60_000 })
await Bun.write(${JSON.stringify(join(events, 'x.mov'))}, 'x')
await Bun.write(${JSON.stringify(join(polled, 'y.mov'))}, 'x')
await waitFor(() => seen.filter((s) => s.startsWith('add')).length === 2, 'two add events', { ms: 60_000 })
console.log(JSON.stringify({ status: watcher.status(), added: seen.filter((s) => s.startsWith('add')).sort() }))
// No close(): the event loop has nothing left that keeps it alive.
`)
  const result = await run(cli)
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(result.stdout)).toEqual({
    status: [
      { device: 1, mode: 'events', ready: true },
      { device: 2, mode: 'polling', ready: true, reason: REASONS.protocol('smb') },
      { device: 3, mode: 'unavailable', ready: false, reason: REASONS.missing },
    ],
    added: [`add ${events}/x.mov`, `addDir ${polled}/`].sort(), // polling names the folder
  })
}, 120_000)

// The real limit: a child process in a user namespace of its own (unshare -Ur) whose inotify
// watch limit (/proc/sys/user/max_inotify_watches, per user namespace since Linux 5.11) is 40,
// so that fs.watch itself fails with ENOSPC. Skipped where user namespaces are not allowed.
const canLowerLimit =
  process.platform === 'linux' &&
  spawnSync('unshare', ['-Ur', 'sh', '-c', 'echo 40 > /proc/sys/user/max_inotify_watches'], { stdio: 'ignore' })
    .status === 0

test.skipIf(!canLowerLimit)(
  'the inotify limit reached (real ENOSPC, limit lowered in a user namespace with unshare -Ur): one warning, polling, the root announced',
  async () => {
    const big = tempDir()
    for (let d = 0; d < 60; d++) mkdirSync(join(big, `folder ${d}`))
    const small = tempDir()
    const [bun, script] = childScript(`
const seen: { device: number; type: string; path: string }[] = []
const warnings: unknown[] = []
const watcher = createWatcher({
  onEvent: (e) => seen.push(e),
  exclude: () => false, poll: false, pollIntervalMs: 50,
  log: { info() {}, warn: (message, fields) => warnings.push({ message, fields }), error: (m) => console.error(m) },
})
watcher.watch({ id: 1, path: ${JSON.stringify(small)}, protocol: 'file' })
await waitFor(() => watcher.status()[0]?.ready === true, 'the small device ready', { ms: 60_000 })
const small = inotifyWatches()
watcher.watch({ id: 2, path: ${JSON.stringify(big)}, protocol: 'file' })
await waitFor(() => watcher.status()[1]?.mode === 'polling' && watcher.status()[1]?.ready === true, 'polling', { ms: 60_000 })
// The events watcher of the big device is closed: only the small device's watch is left.
const inotify = { small, after: inotifyWatches() }
await Bun.write(${JSON.stringify(join(big, 'folder 59/late.mov'))}, 'x')
await waitFor(() => seen.some((e) => e.path.endsWith('folder 59/')), 'the folder by polling', { ms: 60_000 })
console.log(JSON.stringify({ status: watcher.status(), seen, warnings, inotify }))
await watcher.close()
`)
    const result = await run([
      'unshare',
      '-Ur',
      'sh',
      '-c',
      'echo 40 > /proc/sys/user/max_inotify_watches && exec "$0" "$1"',
      bun!,
      script!,
    ])
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    const out = JSON.parse(result.stdout)
    expect(out.inotify).toEqual({ small: 1, after: 1 })
    expect(out.status).toEqual([
      { device: 1, mode: 'events', ready: true },
      { device: 2, mode: 'polling', ready: true, reason: REASONS.limit },
    ])
    expect(out.seen).toEqual([
      { device: 2, type: 'addDir', path: `${big}/` },
      { device: 2, type: 'addDir', path: `${big}/folder 59/` }, // polling names the folder
    ])
    expect(out.warnings).toEqual([
      {
        message: expect.stringContaining('Raise fs.inotify.max_user_watches'),
        fields: { device: 2, path: `${big}/` },
      },
    ])
  },
  120_000,
)
