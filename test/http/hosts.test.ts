// No DNS rebinding (issue 25, point 6): listening on loopback only, the app answers the names of
// this machine (localhost, addresses, single labels, *.local, its host name, the --public-url
// host, --allow-host names) and refuses any other dotted name with 421 misdirected_request,
// before anything reads the Host or the credentials; listening elsewhere it answers every Host.
// Through app.handle, the Host being the URL's; test/cli/hosts.test.ts runs the real serve.
import { afterAll, describe, expect, test } from 'bun:test'
import { hostname } from 'node:os'
import { type AppOptions, createApp } from '../../src/app.ts'
import { createHostCheck, listensOnLoopback } from '../../src/http/hosts.ts'
import { createUsers } from '../../src/modules/users/service.ts'
import { readResponse, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

const t = testApp()
afterAll(() => t.cleanup())

const PUBLIC = 'https://media.example/reelhouse'
const appOn = (options: AppOptions) => createApp(t.core, options)
const loopback = appOn({ host: '127.0.0.1', publicUrl: PUBLIC, allowHosts: ['tools.example.com'] })

async function get(
  app: { handle(request: Request): Promise<Response> },
  url: string,
  headers: Record<string, string> = { authorization: `Token ${t.adminKey}` },
) {
  return readResponse(await app.handle(new Request(url, { headers })))
}

/** Names a page of the web can be of, and that no name of this machine is. */
const FOREIGN = [
  'evil.example',
  'EVIL.Example.COM.',
  'evil.example:8000',
  'localhost.evil.example',
  '127.0.0.1.nip.io',
  'media.example.evil.example',
  'tools.example.com.evil',
]

describe('listening on loopback only (the default)', () => {
  test('a dotted name of another server: 421 misdirected_request in the envelope, whatever the path, before the key is looked at', async () => {
    for (const host of FOREIGN) {
      for (const path of [
        '/api/',
        '/api/docs',
        '/api/docs/json',
        '/api/health',
        '/api/ping/',
        '/api/devices/',
        '/nowhere',
      ]) {
        for (const headers of [{ authorization: `Token ${t.adminKey}` }, {} as Record<string, string>]) {
          const r = await get(loopback, `http://${host}${path}`, headers)
          expectError(r, 421, 'misdirected_request')
          expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/)
        }
      }
    }
    const r = await get(loopback, 'http://Evil.Example.:8000/api/')
    expect(r.json.errors[0].detail).toBe(
      'This server listens on loopback only and answers to the names of this machine, not to "evil.example"; serve --allow-host adds a name.',
    )
  })

  test('the names of this machine are answered: localhost, addresses, single labels, *.local, its host name, the --public-url host, --allow-host names', async () => {
    const hosts = [
      'localhost',
      'localhost:8000',
      'LOCALHOST.',
      '127.0.0.1',
      '127.0.0.1:41234',
      '127.9.9.9',
      '[::1]',
      '[::1]:8080',
      'nas',
      'x',
      'NAS:8000',
      'mybox.local',
      'MyBox.Local.:8000',
      hostname(),
      'media.example',
      'media.example:443',
      'tools.example.com',
      'Tools.Example.Com.',
      // An address is no name DNS can re-point: a client or a proxy may send the one it used.
      '192.168.1.20',
      '192.168.1.20:8000',
      '[fe80::1]',
    ]
    for (const host of hosts) {
      const r = await get(loopback, `http://${host}/api/`)
      expect({ host, status: r.status, devices: r.json.devices }).toEqual({
        host,
        status: 200,
        devices: `${PUBLIC}/api/devices/`,
      })
    }
  })

  test("the machine's host name, when it has dots, and no other name of its domain", () => {
    const check = createHostCheck({ listen: '127.0.0.1', machine: 'MyBox.Studio.Lan' })!
    const at = (host: string) => check.admits(new Request(`http://${host}/api/`))
    expect(['mybox.studio.lan', 'mybox.studio.lan.:8000', 'other.studio.lan', 'studio.lan'].map(at)).toEqual([
      true,
      true,
      false,
      false,
    ])
  })

  test('Basic credentials sent for another server cost no password check, and add nothing to the slow-down', async () => {
    const calls: string[] = []
    const users = createUsers(t.core.port, { passwords: { verify: async (password) => (calls.push(password), false) } })
    const app = createApp({ ...t.core, users }, { host: '127.0.0.1' })
    const basic = { authorization: `Basic ${btoa('admin:guess')}` }
    expectError(await get(app, 'http://evil.example/api/devices/', basic), 421, 'misdirected_request')
    expect(calls).toEqual([])
    expectError(await get(app, 'http://localhost/api/devices/', basic), 401, 'authentication_failed')
    // admin has no password: one verification all the same, against the decoy.
    expect(calls).toHaveLength(1)
  })
})

describe('listening on other addresses, or not listening (in-process): every Host is answered', () => {
  test.each(['0.0.0.0', '::', '192.168.1.20', 'nas.local'])('--host %s', async (host) => {
    const app = appOn({ host })
    for (const name of FOREIGN) expect((await get(app, `http://${name}/api/devices/`)).status).toBe(200)
  })

  test('no host given (createApp in tests)', async () => {
    expect((await get(appOn({}), 'http://evil.example/api/devices/')).status).toBe(200)
  })
})

test('loopback is 127.0.0.0/8, ::1 and localhost, however spelt', () => {
  const loop = [
    '127.0.0.1',
    '127.1.2.3',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    'localhost',
    'LocalHost',
    '::ffff:127.0.0.1',
  ]
  const other = ['0.0.0.0', '::', '192.168.1.20', '::ffff:192.168.1.20', 'nas', 'nas.local', 'localhost.example', '']
  expect([...loop, ...other].map((h) => [h, listensOnLoopback(h)])).toEqual([
    ...loop.map((h) => [h, true]),
    ...other.map((h) => [h, false]),
  ])
})
