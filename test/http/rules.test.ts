// Validation rules of custom metadata (issue 10, point 7): with JavaScript's backtracking RegExp,
// the rule ^(a+)+$ and a 37-character value blocked the server for half a second per request.
// Rules are RE2 (re2js), matched in linear time, bounded in size, compiled once. The effect on
// other requests is measured against the executable in test/cli/stall.test.ts.
import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import { RE2JS } from 're2js'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectError, folders } from '../helpers/envelope.ts'

const dirs = folders()
let t: TestApp
let production: { id: number }
let root: string

beforeAll(async () => {
  t = testApp(dirs.make('reelhouse-data-'))
  const seeded = await seedProduction(t, 'Ruled')
  production = seeded.production
  root = seeded.root
})
afterAll(() => {
  t.cleanup()
  dirs.cleanup()
})

describe('RE2, linear time, compiled once', () => {
  let set: { id: number }
  beforeAll(async () => {
    set = (await t.post('/api/custommetadatasets/', { name: 'Rules', description: '', content_type: 4 })).json
  })
  const field = (key: string, validation_rule: string) =>
    t.post('/api/custommetadata/', { key, value: key, custom_metadata_set: set.id, validation_rule })
  let clips = 0
  const clip = (meta_field_store: Record<string, unknown>) =>
    t.post('/api/videoassets/', {
      name: 'clip',
      path_file: `${root}/Ruled/clip-${++clips}.mov`,
      production: production.id,
      meta_field_store,
    })

  test('syntax RE2 cannot run (backreferences, lookaround, \\Z) is 400 invalid at /validation_rule', async () => {
    for (const [i, rule] of ['(a)\\1', '(?=a)b', '(?<!a)b', 'a\\Z'].entries())
      expectError(await field(`re2.refused${i}`, rule), 400, 'invalid', { pointer: '/validation_rule' })
  })

  test('a rule compiling to more than 1,000 instructions is refused; one just under is kept', async () => {
    expectError(await field('re2.large', '(a|aa){1000}$'), 400, 'invalid', { pointer: '/validation_rule' })
    expect((await field('re2.medium', '^.{0,255}$')).status).toBe(200)
  })

  test('^(a+)+$ against 37 a and "!" is refused as not matching, found in linear time', async () => {
    expect((await field('re2.catastrophic', '^(a+)+$')).status).toBe(200)
    expectError(await clip({ 're2.catastrophic': `${'a'.repeat(37)}!` }), 400, 'invalid', {
      pointer: '/meta_field_store/re2.catastrophic',
    })
    expect((await clip({ 're2.catastrophic': 'a'.repeat(37) })).status).toBe(201)
  })

  test('a rule is searched for in the value, not matched whole; RE2 syntax such as (?i) works', async () => {
    expect((await field('re2.search', '(?i)take')).status).toBe(200)
    expect((await clip({ 're2.search': 'Scene 4, TAKE 2' })).status).toBe(201)
    expectError(await clip({ 're2.search': 'Scene 4' }), 400, 'invalid', { pointer: '/meta_field_store/re2.search' })
  })

  test('values checked against a rule have at most 1,024 characters', async () => {
    expect((await field('re2.any', '.')).status).toBe(200)
    expect((await clip({ 're2.any': 'x'.repeat(1024) })).status).toBe(201)
    expectError(await clip({ 're2.any': 'x'.repeat(1025) }), 400, 'invalid', { pointer: '/meta_field_store/re2.any' })
  })

  test('a rule stored before rules were RE2, that RE2 cannot run, refuses every value', async () => {
    t.db.$client.run(
      "INSERT INTO custom_metadata (key, value, \"order\", custom_metadata_set, validation_rule) VALUES ('re2.legacy', 'Legacy', 99, ?, '(?=x)x')",
      [set.id],
    )
    expectError(await clip({ 're2.legacy': 'x' }), 400, 'invalid', { pointer: '/meta_field_store/re2.legacy' })
  })

  test('a stored rule is compiled once, not again for each value and request', async () => {
    expect((await field('re2.once', '^[0-9]+$')).status).toBe(200)
    const compile = spyOn(RE2JS, 'compile')
    try {
      for (const value of ['1', '22', '333']) expect((await clip({ 're2.once': value })).status).toBe(201)
      expect(compile.mock.calls.filter(([rule]) => rule === '^[0-9]+$').length).toBeLessThanOrEqual(1)
    } finally {
      compile.mockRestore()
    }
  })
})
