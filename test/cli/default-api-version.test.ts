// serve --default-api-version 1|2 (issue 19, point 4), through real serve processes: the version
// requests get when their Accept header names none, from source and from the compiled executable,
// from the flag or REELHOUSE_DEFAULT_API_VERSION (the flag wins); and what the flag accepts.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { UsageError, serveConfig } from '../../src/config.ts'
import { folders } from '../helpers/envelope.ts'
import { call, CLIS, killAll, runCli, type Server, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'

// Child processes on a loaded machine: more room than the default 5 s, still bounded.
setDefaultTimeout(TEST_TIMEOUT_MS)

const dirs = folders()
afterAll(async () => {
  await killAll()
  dirs.cleanup()
})

/** A serve with one device and one production on it; its admin key. */
async function served(args: string[], options: { env?: Record<string, string>; cli?: string[] } = {}) {
  const data = join(dirs.make('reelhouse-apiversion-'), 'data')
  const server = await startServe(data, { args: ['--port', '0', ...args], ...options })
  const admin = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  const media = dirs.make('reelhouse-apiversion-media-')
  expect((await call(server, 'POST', '/devices/', admin, { name: 'media', path: media })).status).toBe(201)
  expect(
    (await call(server, 'POST', '/productions/', admin, { name: 'Night Shift', storage_root: `${media}/night` }))
      .status,
  ).toBe(201)
  return { server, admin }
}

/** The upload_device of production 1 as served for an Accept header (none: no header at all). */
async function uploadDevice(server: Server, admin: string, accept?: string) {
  const headers: Record<string, string> = { authorization: `Token ${admin}` }
  if (accept !== undefined) headers.accept = accept
  const response = await fetch(`${server.api}/productions/1/`, { headers })
  expect(response.status).toBe(200)
  return ((await response.json()) as { upload_device: unknown }).upload_device
}

describe.each(CLIS)('%s', (_, which) => {
  test('--default-api-version 2: no version named gets version 2 (devices by id), version=1 still version 1; the serving line says so', async () => {
    const { server, admin } = await served(['--default-api-version', '2'], { cli: await which() })
    expect(server.proc.stderr).toMatch(/ serving api=\S+ .*default_api_version=2/)
    for (const accept of [undefined, '*/*', 'application/json', 'application/json; version=2'])
      expect([accept, await uploadDevice(server, admin, accept)]).toEqual([accept, 1])
    expect(await uploadDevice(server, admin, 'application/json; version=1')).toMatchObject({ id: 1, name: 'media' })
    expect(await server.proc.stop()).toBe(0)
  })
})

test('without the flag: version 1 unless asked for 2, and the serving line names no version', async () => {
  const { server, admin } = await served([])
  expect(server.proc.stderr).not.toContain('default_api_version')
  expect(await uploadDevice(server, admin)).toMatchObject({ id: 1, name: 'media' })
  expect(await uploadDevice(server, admin, 'application/json; version=2')).toBe(1)
  expect(await server.proc.stop()).toBe(0)
})

test('REELHOUSE_DEFAULT_API_VERSION=2 does the same; the flag wins over it', async () => {
  const env = await served([], { env: { REELHOUSE_DEFAULT_API_VERSION: '2' } })
  expect(await uploadDevice(env.server, env.admin)).toBe(1)
  const flag = await served(['--default-api-version', '1'], { env: { REELHOUSE_DEFAULT_API_VERSION: '2' } })
  expect(await uploadDevice(flag.server, flag.admin)).toMatchObject({ id: 1 })
  expect([await env.server.proc.stop(), await flag.server.proc.stop()]).toEqual([0, 0])
})

describe('what --default-api-version and REELHOUSE_DEFAULT_API_VERSION accept', () => {
  test('1 or 2; default 1; an empty variable counts as unset', () => {
    expect(serveConfig({}, {}).defaultApiVersion).toBe(1)
    expect(serveConfig({ 'default-api-version': '2' }, {}).defaultApiVersion).toBe(2)
    expect(serveConfig({}, { REELHOUSE_DEFAULT_API_VERSION: '2' }).defaultApiVersion).toBe(2)
    expect(serveConfig({}, { REELHOUSE_DEFAULT_API_VERSION: '' }).defaultApiVersion).toBe(1)
    for (const bad of ['0', '3', '2.0', ' 2', 'v2', 'two', ''])
      expect(() => serveConfig({ 'default-api-version': bad }, {}), bad).toThrow(UsageError)
  })

  test('a bad value is a usage error: one line naming the flag, exit 2, nothing made', async () => {
    const data = dirs.make('reelhouse-apiversion-bad-')
    const cases: [string[], Record<string, string>][] = [
      [['--default-api-version', '3'], {}],
      [['--default-api-version'], {}],
      [[], { REELHOUSE_DEFAULT_API_VERSION: 'latest' }],
    ]
    for (const [args, env] of cases) {
      const r = await runCli(['serve', '--data', `${data}/never`, '--port', '0', ...args], { env })
      expect({
        args,
        code: r.code,
        lines: r.stderr.trim().split('\n').length,
        said: r.stderr.includes('--default-api-version'),
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
