// serve --public-url and --allow-origin (issue 11, points 1, 4 and 7), through a real serve
// process and fetch: the API root and Link headers on the public address, CORS for the origin
// named; and what the flags and their environment variables accept.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, rmSync } from 'node:fs'
import { UsageError, serveConfig } from '../../src/config.ts'
import { readResponse, tempDir } from '../helpers/app.ts'
import { killAll, runCli, type Server, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'

// Child processes on a loaded machine: more room than the default 5 s, still bounded.
setDefaultTimeout(TEST_TIMEOUT_MS)

const dirs: string[] = []
const dir = () => {
  const d = tempDir('reelhouse-clients-')
  dirs.push(d)
  return d
}
afterAll(async () => {
  await killAll()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const PUBLIC = 'https://media.example/reelhouse'
const PANEL = 'https://panel.example:8443'

describe('a serve behind a proxy, called by a panel', () => {
  let server: Server
  let key: string
  /** fetch through "the proxy": a public URL to this server's own address. */
  const get = async (
    url: string,
    headers: Record<string, string> = { authorization: `Token ${key}` },
    method = 'GET',
  ) => readResponse(await fetch(url.replace(PUBLIC, server.base), { method, headers }))

  test('serve starts with both flags (a final slash on the URL is fine) and names them in its start line', async () => {
    server = await startServe(dir(), {
      args: [
        '--port',
        '0',
        '--public-url',
        `${PUBLIC}/`,
        '--allow-origin',
        PANEL,
        '--allow-origin',
        'http://localhost:3000',
      ],
    })
    key = (await server.proc.waitFor('stdout', /^([0-9a-f]{40})$/m))[1]!
    expect(server.proc.stderr).toContain(`public_url=${PUBLIC} `)
    expect(server.proc.stderr).toContain(`allow_origin=${PANEL},http://localhost:3000`)
  })

  test('the root names every list on the public URL, and each answers 200', async () => {
    const root = await get(`${server.api}/`)
    expect(root.status).toBe(200)
    expect(Object.keys(root.json)).toContain('videoassets')
    for (const [name, url] of Object.entries(root.json as Record<string, string>)) {
      expect(url).toBe(`${PUBLIC}/api/${name}/`)
      expect({ url, status: (await get(url)).status }).toEqual({ url, status: 200 })
    }
  })

  test('ping needs no key; a paged list links on the public URL', async () => {
    const ping = await get(`${server.api}/ping/`, { authorization: 'Token wrong' })
    expect([ping.status, ping.text]).toEqual([204, ''])
    const page = await get(`${server.api}/contenttypes/?with_sequences=true&limit=2&offset=1`)
    expect(page.headers.get('link')).toBe(
      `<${PUBLIC}/api/contenttypes/?with_sequences=true&limit=2&offset=0>; rel="prev", <${PUBLIC}/api/contenttypes/?with_sequences=true&limit=2&offset=3>; rel="next"`,
    )
  })

  test('CORS: the preflight without a key, the answer and a 401 for the panel; nothing for another origin', async () => {
    const pre = await get(
      `${server.api}/videoassets/`,
      { origin: PANEL, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      'OPTIONS',
    )
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe(PANEL)
    expect(pre.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Accept')
    const list = await get(`${server.api}/videoassets/?limit=1`, { origin: PANEL, authorization: `Token ${key}` })
    expect([
      list.status,
      list.headers.get('access-control-allow-origin'),
      list.headers.get('access-control-expose-headers'),
    ]).toEqual([200, PANEL, 'X-Total-Count, Link, X-Request-Id, Location'])
    const denied = await get(`${server.api}/videoassets/`, { origin: PANEL })
    expect([denied.status, denied.headers.get('access-control-allow-origin')]).toEqual([401, PANEL])
    const other = await get(`${server.api}/videoassets/`, {
      origin: 'https://elsewhere.example',
      authorization: `Token ${key}`,
    })
    expect([other.status, other.headers.get('access-control-allow-origin')]).toEqual([200, null])
  })
})

describe('what the flags and variables accept', () => {
  const config = (flags: Record<string, string | string[]>, env: Record<string, string> = {}) => serveConfig(flags, env)

  test('--public-url: an absolute http(s) URL, perhaps with a path, kept without its final slash; else REELHOUSE_PUBLIC_URL', () => {
    expect(config({ 'public-url': 'https://media.example/' }).publicUrl).toBe('https://media.example')
    expect(config({ 'public-url': 'http://nas:8080/rh/' }).publicUrl).toBe('http://nas:8080/rh')
    expect(config({}, { REELHOUSE_PUBLIC_URL: 'https://a.example' }).publicUrl).toBe('https://a.example')
    expect(
      config({ 'public-url': 'https://flag.example' }, { REELHOUSE_PUBLIC_URL: 'https://env.example' }).publicUrl,
    ).toBe('https://flag.example')
    expect(config({}).publicUrl).toBeUndefined()
    for (const bad of [
      'media.example',
      '/reelhouse',
      'ftp://media.example',
      'https://media.example/?a=1',
      'https://media.example/#x',
      'https://user:pw@media.example',
      'http:/x',
      '',
    ])
      expect(() => config({ 'public-url': bad }), bad).toThrow(UsageError)
  })

  test('--allow-origin: origins only (scheme, host, port), repeatable, as the Origin header spells them; else REELHOUSE_ALLOW_ORIGIN, comma-separated', () => {
    expect(config({ 'allow-origin': ['https://Panel.example:443/', 'http://localhost:3000'] }).allowOrigins).toEqual([
      'https://panel.example',
      'http://localhost:3000',
    ])
    expect(config({}, { REELHOUSE_ALLOW_ORIGIN: 'https://a.example, http://b.example:81' }).allowOrigins).toEqual([
      'https://a.example',
      'http://b.example:81',
    ])
    expect(
      config({ 'allow-origin': ['https://flag.example'] }, { REELHOUSE_ALLOW_ORIGIN: 'https://env.example' })
        .allowOrigins,
    ).toEqual(['https://flag.example'])
    expect(config({}).allowOrigins).toEqual([])
    for (const bad of [
      'panel.example',
      'https://panel.example/app',
      'https://panel.example?x=1',
      '*',
      'null',
      'file:///x',
      'https://u@panel.example',
    ])
      expect(() => config({ 'allow-origin': [bad] }), bad).toThrow(UsageError)
  })

  test('a bad value is a usage error: one line, exit 2, nothing made', async () => {
    const data = dir()
    const cases: [string[], Record<string, string>, string][] = [
      [['--public-url', 'media.example'], {}, '--public-url must be an absolute http or https URL'],
      [['--allow-origin', 'https://panel.example/app'], {}, '--allow-origin must be an origin such as'],
      [[], { REELHOUSE_ALLOW_ORIGIN: 'https://ok.example,panel' }, '--allow-origin must be an origin such as'],
    ]
    for (const [args, env, message] of cases) {
      const r = await runCli(['serve', '--data', `${data}/never`, '--port', '0', ...args], { env })
      expect({
        args,
        code: r.code,
        lines: r.stderr.trim().split('\n').length,
        said: r.stderr.includes(message),
      }).toEqual({ args, code: 2, lines: 1, said: true })
    }
    expect(existsSync(`${data}/never`)).toBe(false)
  })
})
