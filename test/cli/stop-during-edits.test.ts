// SIGTERM stops `serve` within its grace time (docs/operations.md, "Stopping": STOP_GRACE_MS)
// while clients keep sending the largest keyword edit the limits allow: one category of 999
// keywords of 255 characters, each request new keywords. Measured on the compiled executable
// booted on a free port with an empty data folder. Each such edit once held the server for seconds
// (a search document rebuilt per keyword), and the signal waited behind every request queued.
// Afterwards the catalogue is whole: no edit half-written, nothing left in search_deferred. And a
// client that sends its body a byte at a time holds the stop no longer than the grace time: its
// connection is closed then (it held the stop for 30 s before).
import { Database } from 'bun:sqlite'
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { STOP_GRACE_MS } from '../../src/cli/serve.ts'
import { folders } from '../helpers/envelope.ts'
import { call, compiledExecutable, killAll, lines, startServe } from '../helpers/process.ts'
import { waitFor } from '../helpers/wait.ts'

setDefaultTimeout(240_000)

/** Clients sending edits one after the other, side by side. */
const CLIENTS = 4

const dirs = folders()
afterAll(async () => {
  await killAll()
  dirs.cleanup()
})

test('SIGTERM while clients keep sending the largest keyword edits: exit 0 within the grace time, the catalogue whole', async () => {
  const binary = await compiledExecutable()
  const data = join(dirs.make('reelhouse-stop-'), 'data')
  const server = await startServe(data, { cli: [binary], cwd: dirs.make('reelhouse-cwd-') })
  const key = (await server.proc.waitFor('stdout', /^([0-9a-f]{40})$/m))[1]!
  const root = dirs.make('reelhouse-stop-device-')
  mkdirSync(join(root, 'Show'))
  writeFileSync(join(root, 'Show', 'clip.mov'), 'essence')
  expect((await call(server, 'POST', '/devices/', key, { name: 'disk', path: root })).status).toBe(201)
  const production = await call(server, 'POST', '/productions/', key, {
    name: 'Show',
    storage_root: join(root, 'Show'),
  })
  const asset = await call(server, 'POST', '/videoassets/', key, {
    name: 'clip',
    path_file: join(root, 'Show', 'clip.mov'),
    production: production.json.id,
  })
  expect([production.status, asset.status]).toEqual([201, 201])

  const long = (prefix: string) => prefix + 'x'.repeat(255 - prefix.length)
  const category = long('Location-')
  let sent = 0
  let answered = 0
  const failures: string[] = []
  /** PATCHes until the server is gone; an answer other than 200 is a failure. */
  const client = async (n: number) => {
    for (;;) {
      const keywords = { [category]: Array.from({ length: 999 }, (_, i) => long(`c${n}-r${sent}-k${i}-`)) }
      sent++
      const reply = await fetch(`${server.api}/videoassets/${asset.json.id}/`, {
        method: 'PATCH',
        headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ keywords }),
      }).catch(() => undefined)
      if (!reply) return // refused or closed: the server stopped
      const text = await reply.text().catch(() => '')
      if (reply.status === 200) answered++
      else failures.push(`${reply.status} ${text.slice(0, 200)}`)
    }
  }
  const clients = Array.from({ length: CLIENTS }, (_, n) => client(n))
  await waitFor(() => answered >= 2 * CLIENTS, 'the edits answered', { ms: 120_000, everyMs: 5 })

  // Edits in flight and queued: the signal is taken between two of them.
  server.proc.child.kill('SIGTERM')
  expect(await server.proc.exited(STOP_GRACE_MS)).toBe(0)
  await Promise.all(clients)
  expect(failures).toEqual([])

  const log = lines(server.proc.stderr)
  expect(log.findLastIndex((l) => l.includes('info stopping signal=SIGTERM'))).toBeGreaterThan(-1)
  expect(log.at(-1)).toMatch(/ info stopped$/)
  const db = new Database(join(data, 'reelhouse.db'), { readonly: true })
  try {
    expect(db.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
    expect(db.query('SELECT count(*) AS n FROM search_deferred').get()).toEqual({ n: 0 })
    // The asset has the keywords of one whole edit: 999, all of one request.
    const links = db
      .query<{ name: string }, [number]>(
        'SELECT k.name FROM media_asset_keywords mk JOIN keywords k ON k.id = mk.keyword_id WHERE mk.asset_id = ?',
      )
      .all(asset.json.id)
      .map((k) => k.name.replace(/-k\d+-x*$/, ''))
    expect({ links: links.length, requests: new Set(links).size }).toEqual({ links: 999, requests: 1 })
  } finally {
    db.close()
  }
})

test('SIGTERM while a client sends its body a byte at a time: its connection closed after the grace time, exit 0', async () => {
  const binary = await compiledExecutable()
  const server = await startServe(join(dirs.make('reelhouse-stop-'), 'data'), {
    cli: [binary],
    cwd: dirs.make('reelhouse-cwd-'),
  })
  const key = (await server.proc.waitFor('stdout', /^([0-9a-f]{40})$/m))[1]!
  let closed = false
  let written = 0
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port: server.port,
    socket: { data() {}, close: () => void (closed = true), error: () => void (closed = true) },
  })
  socket.write(
    `PATCH /api/videoassets/1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name": "`,
  )
  const trickle = setInterval(() => void (written += socket.write('a')), 200)
  try {
    await waitFor(() => written >= 5, 'the body under way', { everyMs: 20 })
    server.proc.child.kill('SIGTERM')
    // The grace time, and the moment it takes to close the catalogue then.
    expect(await server.proc.exited(STOP_GRACE_MS + 5_000)).toBe(0)
    await waitFor(() => closed, 'the connection closed', { everyMs: 20 })
  } finally {
    clearInterval(trickle)
    socket.end()
  }
  expect(lines(server.proc.stderr).at(-1)).toMatch(/ info stopped$/)
})
