// serve --allow-host (issue 25, point 6), through a real serve process on loopback (the default)
// and raw requests naming the Host: the names added are answered, a name of another server gets
// 421 misdirected_request; and what the flag and REELHOUSE_ALLOW_HOST accept.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { UsageError, serveConfig } from '../../src/config.ts'
import { errorEntry, folders } from '../helpers/envelope.ts'
import { killAll, rawRequest, runCli, type Server, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'

// Child processes on a loaded machine: more room than the default 5 s, still bounded.
setDefaultTimeout(TEST_TIMEOUT_MS)

const dirs = folders()
const dir = () => dirs.make('reelhouse-hosts-')
afterAll(async () => {
  await killAll()
  dirs.cleanup()
})

describe('serve on loopback with --allow-host', () => {
  let server: Server
  const get = async (host: string, path = '/api/health') => {
    const reply = await rawRequest(server.port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
    return { host, status: reply.status, json: reply.json }
  }

  test('starts, naming the added hosts (kept lower case, without a final dot) in its serving line', async () => {
    server = await startServe(dir(), {
      args: ['--port', '0', '--allow-host', 'media.example.com', '--allow-host', 'Tools.Example.'],
    })
    expect(server.proc.stderr).toMatch(/ serving api=.* allow_host=media\.example\.com,tools\.example\n/)
  })

  test('the added names, localhost and the address are answered; another dotted name gets 421 in the envelope', async () => {
    for (const host of [
      'media.example.com',
      'MEDIA.example.com:8000',
      'tools.example',
      'localhost',
      `127.0.0.1:${server.port}`,
      'nas',
    ])
      expect(await get(host)).toMatchObject({ host, status: 200, json: { status: 'ok' } })
    for (const host of ['evil.example', 'media.example.com.evil.example'])
      for (const path of ['/api/health', '/api/docs', '/api/'])
        expect(await get(host, path)).toEqual({
          host,
          status: 421,
          json: { errors: [errorEntry(421, 'misdirected_request')] },
        })
  })
})

describe('what --allow-host and REELHOUSE_ALLOW_HOST accept', () => {
  const config = (flags: Record<string, string | string[]>, env: Record<string, string> = {}) => serveConfig(flags, env)

  test('host names or addresses, repeatable, as requests spell them; else the variable, comma-separated; the flag wins', () => {
    expect(
      config({ 'allow-host': ['Media.Example.COM.', 'nas.studio.lan', '192.168.1.20', '[fe80::1]', 'médias.example'] })
        .allowHosts,
    ).toEqual(['media.example.com', 'nas.studio.lan', '192.168.1.20', 'fe80::1', 'xn--mdias-bsa.example'])
    expect(config({}, { REELHOUSE_ALLOW_HOST: 'a.example, b.example' }).allowHosts).toEqual(['a.example', 'b.example'])
    expect(config({ 'allow-host': ['flag.example'] }, { REELHOUSE_ALLOW_HOST: 'env.example' }).allowHosts).toEqual([
      'flag.example',
    ])
    expect(config({}).allowHosts).toEqual([])
    for (const bad of [
      'https://media.example',
      'media.example:8000',
      'media.example/x',
      '*.example.com',
      'user@media.example',
      'a b',
      '',
    ])
      expect(() => config({ 'allow-host': [bad] }), bad).toThrow(UsageError)
  })

  test('a bad value is a usage error: one line, exit 2, nothing made', async () => {
    const data = dir()
    const cases: [string[], Record<string, string>][] = [
      [['--allow-host', '*.example.com'], {}],
      [['--allow-host', 'https://media.example'], {}],
      [[], { REELHOUSE_ALLOW_HOST: 'ok.example,media.example:8000' }],
    ]
    for (const [args, env] of cases) {
      const r = await runCli(['serve', '--data', `${data}/never`, '--port', '0', ...args], { env })
      expect({
        args,
        code: r.code,
        lines: r.stderr.trim().split('\n').length,
        said: r.stderr.includes('--allow-host must be a host name or address'),
      }).toEqual({
        args,
        code: 2,
        lines: 1,
        said: true,
      })
    }
    expect(existsSync(`${data}/never`)).toBe(false)
  })
})
