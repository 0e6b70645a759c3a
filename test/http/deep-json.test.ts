// JSON nested deeper than 64 levels (issue 10, point 5): 100,000 levels in 200 KB blocked the
// server for seconds and answered 500 (a stack overflow while building the validation error).
// Such text is refused with 400 parse_error before it is parsed; that the server meanwhile goes on
// answering is measured against the executable in test/cli/stall.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/http/body.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectError, folders } from '../helpers/envelope.ts'

const dirs = folders()
let t: TestApp
let root: string

beforeAll(async () => {
  t = testApp(dirs.make('reelhouse-data-'))
  root = (await seedProduction(t, 'Deep')).root
})
afterAll(() => {
  t.cleanup()
  dirs.cleanup()
})

const nested = (depth: number, inner = '') => '['.repeat(depth) + inner + ']'.repeat(depth)
const json = (raw: string, key: string | null = t.adminKey) =>
  ({ raw, key, headers: { 'content-type': 'application/json' } }) as const

describe('400 parse_error before parsing or validation', () => {
  const deepField = (depth: number) => `{"name":"deep","path":"/tmp/deep/","passthrough_profiles":${nested(depth)}}`

  test('100,000 levels in 200 KB, as the body or inside a field, on routes with and without a body schema', async () => {
    const bodies = [nested(100_000), deepField(100_000), `{"asset_list":${nested(100_000)}}`]
    for (const path of [
      '/api/devices/',
      '/api/videoassets/',
      '/api/projectassets/1/add/',
      '/api/projectassets/1/unlinkasset/',
    ]) {
      for (const raw of bodies) expectError(await t.request('POST', path, json(raw)), 400, 'parse_error')
    }
  })

  test('5,000 levels (12 KB) and 65: parse_error; 64 levels are parsed and validated', async () => {
    expectError(await t.request('POST', '/api/devices/', json(deepField(5_000))), 400, 'parse_error')
    expectError(await t.request('POST', '/api/devices/', json(deepField(MAX_JSON_DEPTH))), 400, 'parse_error')
    // The object around the array is the first level.
    const r = await t.request('POST', '/api/devices/', json(deepField(MAX_JSON_DEPTH - 1)))
    expectError(r, 400, 'invalid', { pointer: '/passthrough_profiles/0' })
  })

  test('JSON text in a form field: the same limit', async () => {
    const form = (value: string) => ({
      form: { name: 'deep-form', path: '/tmp/deep-form/', passthrough_profiles: value },
    })
    expectError(await t.request('POST', '/api/devices/', form(nested(100_000))), 400, 'parse_error')
    expectError(await t.request('POST', '/api/devices/', form(nested(MAX_JSON_DEPTH + 1))), 400, 'parse_error')
    expectError(await t.request('POST', '/api/devices/', form(nested(2))), 400, 'invalid', {
      pointer: '/passthrough_profiles/0',
    })
  })

  test('without a key the answer is 401: the body is not read', async () => {
    expectError(await t.request('POST', '/api/devices/', json(nested(100_000), null)), 401, 'not_authenticated')
  })

  test('brackets inside strings, escaped quotes included, are not levels', async () => {
    const text = `"${'['.repeat(1000)}\\"${'{'.repeat(1000)}\\\\"`
    expect(nestsDeeperThan(`{"a":${text}}`, MAX_JSON_DEPTH)).toBe(false)
    expect(nestsDeeperThan(`{"a":"\\"",${nested(65)}}`, MAX_JSON_DEPTH)).toBe(true)
    const device = await t.post('/api/devices/', { name: `[${'['.repeat(200)}"{`, path: `${root}/brackets/` })
    expect(device.status).toBe(201)
    expect(device.json.name).toBe(`[${'['.repeat(200)}"{`)
  })
})

describe('big bodies are parsed one at a time, each in a turn of its own', () => {
  test('three bodies over 256 KB at once, the first not JSON: it alone is refused, the others are parsed and validated', async () => {
    const pad = 'x'.repeat(300 * 1024)
    const bad = `{"name":"${pad}"`
    const good = (name: string) => JSON.stringify({ name, path: `${root}/${name}/`, description: pad })
    const [a, b, c] = await Promise.all([
      t.request('POST', '/api/devices/', json(bad)),
      t.request('POST', '/api/devices/', json(good('big-one'))),
      t.request('POST', '/api/devices/', json(good('big-two'))),
    ])
    expectError(a, 400, 'parse_error')
    // Parsed (a refusal now comes from validation or the device rules, never from parsing).
    for (const r of [b, c]) expect(r.json?.errors?.[0]?.code ?? r.status).not.toBe('parse_error')
  })
})
