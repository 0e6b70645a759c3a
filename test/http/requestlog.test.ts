// One log line per request (src/http/requestlog.ts): method, path, status, duration, user and
// request id, the id sent back as X-Request-Id and named by a 500 and its error line; never a
// key, a password or a query string. Requests go through app.handle over a real catalogue; the
// log is captured in the two formats serve writes.
import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { createCore } from '../../src/core.ts'
import { type LogFormat, createLog } from '../../src/util/log.ts'
import { catalogueWithUser } from '../helpers/app.ts'
import { waitFor } from '../helpers/wait.ts'

const { db, dir, key, close } = catalogueWithUser('ana')
afterAll(close)

/** An app whose log lines (as serve would write them) land in the returned list. */
function loggingApp(format: LogFormat = 'json', options: { quiet?: boolean } = {}, written: string[] = []) {
  const app = createApp(createCore(db, { log: createLog(format, (line) => void written.push(line)) }), options).get(
    '/api/boom',
    () => {
      throw new TypeError('a bug')
    },
    { auth: true },
  )
  const send = (path: string, init: RequestInit = {}) => app.handle(new Request(`http://localhost${path}`, init))
  const requestLines = () =>
    written.filter((l) => (format === 'json' ? JSON.parse(l).msg === 'request' : l.includes(' info request ')))
  /** The request lines once `n` of them are written: the line is written after the answer goes out. */
  const settled = async (n: number) => {
    await waitFor(() => requestLines().length >= n, `${n} request line(s)`, { ms: 60_000 })
    return requestLines()
  }
  return { send, written, settled }
}

const auth = (k = key) => ({ authorization: `Token ${k}` })

describe('json', () => {
  test('one line per request with method, path, status, duration, user and the id sent back as X-Request-Id', async () => {
    const { send, settled } = loggingApp('json')
    const ok = await send('/api/devices/?limit=5&secret=hunter2', { headers: auth() })
    const anonymous = await send('/api/devices/')
    // No route, but a good key: the line names who asked.
    const missing = await send('/api/nothing-here/', { headers: auth() })
    const lines = (await settled(3)).map((l) => JSON.parse(l))
    const byId = (r: Response) => lines.find((l) => l.request_id === r.headers.get('x-request-id'))
    expect([ok.status, anonymous.status, missing.status]).toEqual([200, 401, 404])
    expect([byId(ok), byId(anonymous), byId(missing)]).toEqual([
      {
        time: expect.any(String),
        level: 'info',
        msg: 'request',
        method: 'GET',
        path: '/api/devices/',
        status: 200,
        ms: expect.any(Number),
        user: 'ana',
        request_id: ok.headers.get('x-request-id'),
      },
      {
        time: expect.any(String),
        level: 'info',
        msg: 'request',
        method: 'GET',
        path: '/api/devices/',
        status: 401,
        ms: expect.any(Number),
        user: '-',
        request_id: anonymous.headers.get('x-request-id'),
      },
      {
        time: expect.any(String),
        level: 'info',
        msg: 'request',
        method: 'GET',
        path: '/api/nothing-here/',
        status: 404,
        ms: expect.any(Number),
        user: 'ana',
        request_id: missing.headers.get('x-request-id'),
      },
    ])
    expect(new Set(lines.map((l) => l.request_id)).size).toBe(3)
    expect(lines.join('\n')).not.toContain('hunter2')
  })

  test('a key or a password sent is in no line', async () => {
    const { send, settled, written } = loggingApp('json')
    const device = await send('/api/devices/', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'nas', path: join(dir, 'nas'), username: 'editor', password: 'p4ssw0rd-secret' }),
    })
    expect(device.status).toBe(201)
    const wrongKey = await send('/api/devices/', { headers: auth('f'.repeat(40)) })
    expect(wrongKey.status).toBe(401)
    await settled(2)
    const all = written.join('')
    for (const secret of [key, 'f'.repeat(40), 'p4ssw0rd-secret']) expect(all).not.toContain(secret)
  })

  test('a 500: the answer, the error line and the request line name the same id', async () => {
    const { send, settled, written } = loggingApp('json')
    const r = await send('/api/boom', { headers: auth() })
    expect(r.status).toBe(500)
    const id = r.headers.get('x-request-id')!
    expect(((await r.json()) as any).errors[0].detail).toContain(`request id ${id}.`)
    const [line] = (await settled(1)).map((l) => JSON.parse(l))
    expect(line).toMatchObject({ path: '/api/boom', status: 500, user: 'ana', request_id: id })
    const failed = written.map((l) => JSON.parse(l)).find((l) => l.msg === 'request failed')
    expect(failed).toMatchObject({
      level: 'error',
      request_id: id,
      path: '/api/boom',
      error: expect.stringContaining('a bug'),
    })
  })

  test("a proxy's X-Request-Id is kept; one that is no plain token is replaced", async () => {
    const { send } = loggingApp('json')
    const kept = await send('/api/health', { headers: { 'x-request-id': 'nginx-5f2a9c0e1b' } })
    expect(kept.headers.get('x-request-id')).toBe('nginx-5f2a9c0e1b')
    for (const sent of ['short', 'has space in it', 'x'.repeat(65), 'quote"d-value-1234']) {
      const r = await send('/api/health', { headers: { 'x-request-id': sent } })
      expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/)
    }
  })
})

test('text: time, level, "request", then key=value pairs', async () => {
  const { send, settled } = loggingApp('text')
  const r = await send('/api/health')
  const [line] = await settled(1)
  expect(line).toMatch(
    new RegExp(
      `^\\S+Z info request method=GET path=/api/health status=200 ms=[\\d.]+ user=- request_id=${r.headers.get('x-request-id')}\\n$`,
    ),
  )
})

test('quiet: no request lines; the id is still sent back and errors are still logged', async () => {
  // A quiet app and a loud one write to the same log. Request lines are written in the order the
  // answers went out, so once the loud app's line for a later request is there, a line of the
  // quiet app's requests would be there before it.
  const written: string[] = []
  const quiet = loggingApp('json', { quiet: true }, written)
  const loud = loggingApp('json', {}, written)
  const ok = await quiet.send('/api/health')
  const boom = await quiet.send('/api/boom', { headers: auth() })
  expect(ok.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/)
  const later = await loud.send('/api/health')
  await loud.settled(1)
  expect(written.map((l) => JSON.parse(l))).toEqual([
    expect.objectContaining({ msg: 'request failed', request_id: boom.headers.get('x-request-id') }),
    expect.objectContaining({ msg: 'request', request_id: later.headers.get('x-request-id') }),
  ])
})

test('the formats: json puts time, level and msg first and no field can pass for them; text quotes what has spaces', () => {
  const out: string[] = []
  createLog('json', (l) => void out.push(l)).warn('odd', { msg: 'forged', level: 'error', path: '/a b' })
  createLog('text', (l) => void out.push(l)).info('event', { path: '/a b', empty: '', plain: 'x', n: 3 })
  const json = JSON.parse(out[0]!)
  expect(Object.keys(json)).toEqual(['time', 'level', 'msg', 'field_msg', 'field_level', 'path'])
  expect(json).toMatchObject({ level: 'warn', msg: 'odd', field_msg: 'forged', field_level: 'error' })
  expect(out[1]).toMatch(/^\S+Z info event path="\/a b" empty="" plain=x n=3\n$/)
})
