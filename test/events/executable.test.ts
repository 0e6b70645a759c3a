// The event stream of the compiled executable (dist/reelhouse), as a user meets it: `curl -N`
// beside a project copy sees the copy's task events, 500 idle streams cost the server little
// memory, and SIGTERM ends every stream cleanly before the server stops.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Socket } from 'bun'
import { tempDir } from '../helpers/app.ts'
import { call, compiledExecutable, killAll, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'
import { waitFor } from '../helpers/wait.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)
afterAll(() => killAll())

const STREAMS = 500

/** The resident memory of a process, in bytes (Linux). */
const rss = (pid: number) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024

test.skipIf(process.platform !== 'linux')(
  "curl -N sees a copy's task events; 500 idle streams cost under 50 MB; SIGTERM ends every stream cleanly",
  async () => {
    const binary = await compiledExecutable()
    const data = join(tempDir('reelhouse-events-e2e-'), 'data')
    const server = await startServe(data, { cli: [binary] })
    const key = readFileSync(join(data, 'admin.token'), 'utf8').trim()
    const root = tempDir('reelhouse-device-')
    const bundle = join(root, 'Show', 'edit')
    for (let i = 0; i < 30; i++) {
      mkdirSync(join(bundle, 'media'), { recursive: true })
      writeFileSync(join(bundle, 'media', `f${i}.bin`), 'x'.repeat(100_000))
    }
    expect((await call(server, 'POST', '/devices/', key, { name: 'disk', path: root })).status).toBe(201)
    const production = (
      await call(server, 'POST', '/productions/', key, { name: 'Show', storage_root: join(root, 'Show') })
    ).json
    const project = (
      await call(server, 'POST', '/projectassets/', key, {
        name: 'edit',
        bundle_root: `${bundle}/`,
        production_id: production.id,
      })
    ).json

    // As the README shows it.
    const curl = Bun.spawn(['curl', '-sN', '-H', `Authorization: Token ${key}`, `${server.api}/events/`], {
      stdout: 'pipe',
      stderr: 'pipe',
    })
    let seen = ''
    const reading = (async () => {
      const decoder = new TextDecoder()
      for await (const chunk of curl.stdout) seen += decoder.decode(chunk, { stream: true })
    })()
    await waitFor(() => /^id: \d{16}\n\n/.test(seen), 'the opening of the stream', { ms: 30_000, everyMs: 10 })
    // Many clients at once, each holding a stream and reading nothing but its opening (measured
    // before the copy, while the server makes little garbage of its own).
    const pid = server.proc.child.pid
    const before = rss(pid)
    const opened = new Array<number>(STREAMS).fill(0)
    let closed = 0
    const sockets: Socket[] = []
    const request = `GET /api/events/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token ${key}\r\n\r\n`
    for (let i = 0; i < STREAMS; i++)
      sockets.push(
        await Bun.connect({
          hostname: '127.0.0.1',
          port: server.port,
          socket: {
            open: (s) => void s.write(request),
            data: (_, d) => void (opened[i] = opened[i]! + d.length),
            close: () => void closed++,
          },
        }),
      )
    await waitFor(() => opened.every((n) => n > 0), `${STREAMS} streams open`, { ms: 60_000, everyMs: 20 })
    const cost = rss(pid) - before
    console.log(`${STREAMS} idle event streams: the server's resident memory grew by ${(cost / 1048576).toFixed(1)} MB`)
    expect(cost).toBeLessThan(50 * 1048576)

    const copy = await call(server, 'POST', '/projectassets/', key, {
      name: 'copy',
      bundle_root: join(root, 'Show', 'copy') + '/',
      production_id: production.id,
      copy_of: project.id,
    })
    expect(copy.status).toBe(201)
    const done = `event: task\ndata: {"id":${copy.json.task.id},"kind":"copy","state":"done","target":{"projectasset":${copy.json.id}},"step":"","percent":null,"bytes_done":3000000,"bytes_total":3000000,"files_done":30,"files_total":30,"error":""}\n\n`
    await waitFor(() => seen.includes(done), 'the copy done on the stream', { ms: 60_000, everyMs: 10 })
    expect(seen).toContain(`event: project\ndata: {"id":${copy.json.id},"action":"copied"}\n\n`)

    // SIGTERM: every stream ends with its body's end (curl exits 0, not 18 for a cut transfer), the server exits 0.
    expect(await server.proc.stop('SIGTERM')).toBe(0)
    expect(await curl.exited).toBe(0)
    await reading
    await waitFor(() => closed === STREAMS, 'every client socket closed', { ms: 30_000, everyMs: 20 })
    for (const s of sockets) s.end()
    expect(server.proc.stderr).toContain('stopped')
  },
)
