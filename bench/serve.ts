// `reelhouse serve` as the end-to-end benchmarks run it (stall.ts, proxies.ts): the source run or
// the executable on a data folder, on a free port, with its default request log (kept, not
// printed), and the few API calls they make with the admin's key.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { children, spawnListening } from './procs.ts'

export type Server = { base: string; key: string; lines: string[]; pid: number; stop(): Promise<void> }

/** `cli serve --data dataDir` on 127.0.0.1 and a free port, with `flags`; resolves once it listens. */
export async function serve(cli: string[], dataDir: string, flags: string[]): Promise<Server> {
  const { proc, port, lines } = await spawnListening(
    'serve',
    [...cli, 'serve', '--data', dataDir, '--host', '127.0.0.1', '--port', '0', ...flags],
    {
      portOf: (line) => / serving .*api=http:\/\/127\.0\.0\.1:(\d+)\//.exec(line)?.[1],
      timeoutMs: 60_000,
      keep: 50,
      drop: /./,
    },
  )
  return {
    base: `http://127.0.0.1:${port}`,
    key: readFileSync(join(dataDir, 'admin.token'), 'utf8').trim(),
    lines,
    pid: proc.pid,
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
      children.delete(proc)
    },
  }
}

/** A request with the admin's key; `body` as JSON (a string is sent as it is). */
export async function api(s: Server, method: string, path: string, body?: unknown) {
  const r = await fetch(s.base + path, {
    method,
    headers: { authorization: `Token ${s.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await r.text()
  return { status: r.status, headers: r.headers, json: text ? JSON.parse(text) : undefined }
}

/** The X-Total-Count of a list. */
export const count = async (s: Server, path: string) =>
  Number((await api(s, 'GET', path)).headers.get('x-total-count') ?? 0)
/** Tasks queued or running. */
export const busyTasks = async (s: Server) =>
  (await count(s, '/api/tasks/?state=queued&limit=1')) + (await count(s, '/api/tasks/?state=running&limit=1'))

/** Until `fn` holds, asking every `everyMs`; an error after `ms`. */
export async function waitUntil(what: string, ms: number, fn: () => Promise<boolean>, everyMs = 100) {
  const end = Date.now() + ms
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`)
    await Bun.sleep(everyMs)
  }
}
