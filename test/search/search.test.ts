// GET /api/search/ through the app over a migrated catalogue: the matching rules one by one, the
// fields searched, the ranking, hostile text, filters, paging and who may see what.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import { UnsearchableText } from '../../src/modules/search/types.ts'

let t: TestApp
let root: string
let show: { id: number }
let other: { id: number }
let otherDevice: { id: number }
const ids: Record<string, number> = {}
const projects: Record<string, number> = {}

const file = (rel: string) => {
  const path = join(root, rel)
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, 'essence')
  return path
}
async function video(key: string, body: Record<string, unknown>, production = show.id) {
  const r = await t.post('/api/videoassets/', { production, ...body })
  if (r.status !== 201) throw new Error(`${key}: ${r.text}`)
  ids[key] = r.json.id
}
const search = (query: string, key?: string | null) =>
  t.get(`/api/search/?${query}`, key === undefined ? undefined : { key })
/** The hits' record ids of a query, as `type:id` keys named in `ids`. */
async function found(q: string, extra = '') {
  const r = await search(`q=${encodeURIComponent(q)}${extra}`)
  expect(r.status).toBe(200)
  const name = (map: Record<string, number>, id: number) =>
    Object.entries(map).find(([, v]) => v === id)?.[0] ?? String(id)
  return (r.json as { type: string; id: number }[]).map((h) =>
    h.type === 'projectasset' ? `project:${name(projects, h.id)}` : name(ids, h.id),
  )
}

beforeAll(async () => {
  t = testApp()
  ;({ root, production: show } = await seedProduction(t, 'Show'))
  let otherRoot: string
  ;({ root: otherRoot, production: other, device: otherDevice } = await seedProduction(t, 'Other'))
  const set = await t.post('/api/custommetadatasets/', { name: 'Camera', description: '', content_type: 4 })
  expect(set.status).toBe(201)
  expect(
    (await t.post('/api/custommetadata/', { key: 'video.camera', value: 'Camera', custom_metadata_set: set.json.id }))
      .status,
  ).toBe(200)

  await video('interview', {
    name: 'Interview harbour master',
    description: 'wide shot',
    path_file: file('Show/harbour/A001_C003_drone.mov'),
  })
  await video('sunset', {
    name: 'Sunset',
    description: 'an interview with the captain',
    path_file: file('Show/evening/sunset.mov'),
  })
  await video('cafe', { name: 'Café terrace', description: 'morning light', path_file: file('Show/town/terrace.mov') })
  await video('komodo', {
    name: 'Pier',
    description: '',
    path_file: file('Show/pier/b-roll_pier-east.mov'),
    meta_field_store: { 'video.camera': 'Komodo 6K' },
  })
  await video('near', {
    name: 'Near the pier',
    description: '(NEAR) "quoted" a:b',
    path_file: file('Show/pier/near.mov'),
  })
  await video('secret', { name: 'Interview secret', path_file: join(root, 'Other', 'secret.mov') }, other.id)
  await video('keeper', { name: 'Keeper at dawn', path_file: join(otherRoot, 'Other', 'keeper.mxf') }, other.id)
  const kw = await t.request('PATCH', `/api/videoassets/${ids.cafe}/`, {
    body: { keywords: { Location: ['Lighthouse'] } },
  })
  expect(kw.status).toBe(200)
  const cut = await t.post('/api/projectassets/', {
    name: 'Harbour cut',
    bundle_root: join(root, 'Show', 'edits', 'harbour_cut_v2'),
    production_id: show.id,
  })
  expect(cut.status).toBe(201)
  projects.cut = cut.json.id
})
afterAll(() => t.cleanup())

describe('matching', () => {
  test('words match as prefixes, in any case', async () => {
    expect((await found('interv')).sort()).toEqual(['interview', 'secret', 'sunset'])
    expect(await found('HARBOUR MAST')).toEqual(['interview'])
  })

  test('diacritics are ignored both ways', async () => {
    expect(await found('cafe')).toEqual(['cafe'])
    expect(await found('CAFÉ')).toEqual(['cafe'])
    expect(await found('térrâce')).toEqual(['cafe'])
  })

  test('every word must match (AND)', async () => {
    expect(await found('interview captain')).toEqual(['sunset'])
    expect(await found('interview nowhere')).toEqual([])
  })

  test('a quoted phrase matches as written, in order', async () => {
    expect(await found('"harbour master"')).toEqual(['interview'])
    expect(await found('"master harbour"')).toEqual([])
    expect(await found('"with the captain"')).toEqual(['sunset'])
  })

  test('-word excludes, and -"a phrase" too', async () => {
    expect((await found('interview -sunset')).sort()).toEqual(['interview', 'secret'])
    expect((await found('interview -"harbour master"')).sort()).toEqual(['secret', 'sunset'])
  })

  test('a name hit ranks above a description hit, and scores higher', async () => {
    const r = await search('q=interview&production=' + show.id)
    expect(r.json.map((h: { id: number }) => h.id)).toEqual([ids.interview, ids.sunset])
    expect(r.json[0].score).toBeGreaterThan(r.json[1].score)
  })
})

describe('fields searched', () => {
  test.each([
    ['a folder of path_file', 'harbour', ['interview', 'project:cut']],
    ['the file name, split at _', 'c003', ['interview']],
    ['the file name, split at -', 'east', ['komodo']],
    ['the extension, split at .', 'mov', ['cafe', 'interview', 'komodo', 'near', 'sunset']],
    ['the description', 'morning', ['cafe']],
    ['a keyword', 'lighthouse', ['cafe']],
    ['a keyword category', 'location', ['cafe']],
    ['a custom metadata value', 'komodo', ['komodo']],
    ["a project's bundle_root", 'edits', ['project:cut']],
    ["a project's name", 'cut', ['project:cut']],
  ])('%s', async (_what, q, expected) => {
    expect((await found(q, '&production=' + show.id)).sort()).toEqual(expected)
  })

  test("?status=true: each hit also carries its record's status_asset (a failed import: -1); without it, the shape above", async () => {
    const plain = await search(`q=drone`)
    expect(plain.json[0]).not.toHaveProperty('status_asset')
    const r = await search(`q=drone&status=true`)
    expect(r.json).toEqual([expect.objectContaining({ id: ids.interview, status_asset: 6 })])
    t.db.$client.run('UPDATE media_assets SET status_asset = -1 WHERE id = ?', [ids.interview!])
    try {
      expect((await search(`q=drone&status=1`)).json[0].status_asset).toBe(-1)
      const p = await search(`q=edits&status=true`)
      expect(p.json).toEqual([expect.objectContaining({ type: 'projectasset', status_asset: expect.any(Number) })])
      expect((await search(`q=drone&status=maybe`)).status).toBe(400)
    } finally {
      t.db.$client.run('UPDATE media_assets SET status_asset = 6 WHERE id = ?', [ids.interview!])
    }
  })

  test('a hit has type, id, name, production, path, is_production and score', async () => {
    const r = await search(`q=drone`)
    expect(r.json).toEqual([
      {
        type: 'videoasset',
        id: ids.interview,
        name: 'Interview harbour master',
        production: show.id,
        path: join(root, 'Show/harbour/A001_C003_drone.mov'),
        is_production: true,
        score: expect.any(Number),
      },
    ])
    const p = await search(`q=edits`)
    expect(p.json).toEqual([
      {
        type: 'projectasset',
        id: projects.cut,
        name: 'Harbour cut',
        production: show.id,
        path: expect.stringContaining('harbour_cut_v2'),
        is_production: expect.any(Boolean),
        score: expect.any(Number),
      },
    ])
  })
})

describe('hostile and odd text', () => {
  const texts = [
    '"',
    '""',
    '"unterminated',
    '*',
    '**',
    'a*b*',
    ':',
    'a:b',
    'name:harbour',
    '{name}: x',
    '(((',
    ')',
    '()',
    'NEAR',
    'NEAR(a b)',
    'NEAR(pier near, 2)',
    'AND',
    'OR',
    'NOT',
    'harbour AND',
    'OR harbour',
    'harbour NOT',
    '-',
    '--',
    '- -',
    '-harbour -pier',
    '^harbour',
    '+',
    'harbour +pier',
    "'; DROP TABLE media_assets; --",
    '\u0000',
    '🙂',
    'x'.repeat(999),
    'é'.repeat(500),
    'interview '.repeat(40),
    'x'.repeat(10240),
    '%',
    '\\',
    '[',
    'a OR b',
    'col:*',
    '"a" "b',
    'e\u0301',
  ]
  test.each(texts.map((q) => [q.length > 40 ? `${q.slice(0, 20)}... (${q.length} characters)` : JSON.stringify(q), q]))(
    '%s: 200 or a 400 at q, never a 500',
    async (_n, q) => {
      const r = await search(`q=${encodeURIComponent(q)}`)
      if (r.status === 400) expectError(r, 400, 'invalid', { parameter: 'q' })
      else {
        expect(r.status).toBe(200)
        expect(Array.isArray(r.json)).toBe(true)
        expect(Number(r.headers.get('x-total-count'))).toBe(r.json.length)
      }
    },
  )

  test('operator words and punctuation are text: NEAR finds "Near the pier", a:b finds what holds a and b', async () => {
    expect(await found('NEAR')).toEqual(['near'])
    expect(await found('(NEAR)')).toEqual(['near'])
    expect(await found('"quoted"')).toEqual(['near'])
    expect(await found('a:b')).toEqual(['near'])
    expect(await found('NOT')).toEqual([])
    expect(await found('OR')).toEqual([])
  })

  test("the words the index keeps of a record's production and state are not searched", async () => {
    for (const word of ['online', 'offline', `p${show.id}`, `s${show.id}`, 'scope', 'scope:online'])
      expect([word, await found(word)]).toEqual([word, []])
  })

  test('the catalogue is untouched by SQL in the text', async () => {
    await search(`q=${encodeURIComponent("x'); DELETE FROM media_assets; --")}`)
    expect(t.db.$client.query('SELECT count(*) AS n FROM media_assets').get()).toEqual({ n: 7 })
  })

  test('a missing, empty or blank q is 400 invalid at parameter q', async () => {
    for (const query of ['', 'q=', 'q=%20%20', 'limit=5'])
      expectError(await search(query), 400, 'invalid', { parameter: 'q' })
  })

  test('only exclusions: 400 at q, saying a word to look for is needed', async () => {
    const r = await search('q=-harbour')
    expectError(r, 400, 'invalid', { parameter: 'q' })
    expect(r.json.errors[0].detail).toContain('look for')
  })

  test('too long a text or too many words: 400 at q', async () => {
    expectError(await search(`q=${'x'.repeat(1001)}`), 400, 'invalid', { parameter: 'q' })
    expectError(await search(`q=${encodeURIComponent('a '.repeat(33))}`), 400, 'invalid', { parameter: 'q' })
  })

  test('a control character anywhere in q (NUL, another C0 such as tab or a line break, DEL): 400 at q', async () => {
    const texts = [
      'zebracorn\u0000',
      '\u0000zebracorn',
      'harbour\u0000master',
      '\u0000',
      'harbour\u0001',
      'harbour\tmaster',
      'harbour\nmaster',
      'harbour\u001f',
      'harbour\u007f',
    ]
    for (const q of texts) {
      const r = await search(`q=${encodeURIComponent(q)}`)
      expectError(r, 400, 'invalid', { parameter: 'q' })
      expect([q, r.json.errors[0].detail]).toEqual([q, expect.stringContaining('control characters')])
    }
  })

  test("any error the engine raises as it runs a search's query is the text's (UnsearchableText: a 400 at q), whatever its message", () => {
    // No text reaches the engine as syntax (query.ts), so queries are given to the service as
    // written here: a NUL cuts FTS5's reading of a string short (not an fts5 message), and a bare
    // parenthesis is FTS5's syntax error. Paged (the page read at once) and whole (streamed).
    const admin = t.users.principalById(1)!
    for (const match of ['"harbour\u0000"', '"harbour" AND (']) {
      for (const limit of [10, undefined]) {
        let thrown: unknown
        try {
          t.core.search.search(admin, { match, wanted: match }, limit, 0)
        } catch (error) {
          thrown = error
        }
        expect([match, limit, thrown instanceof UnsearchableText]).toEqual([match, limit, true])
      }
    }
  })

  test('punctuation alone finds nothing', async () => {
    const r = await search('q=%2A%2A%2A')
    expect([r.status, r.json, r.headers.get('x-total-count')]).toEqual([200, [], '0'])
  })
})

describe('filters, paging and permissions', () => {
  test('type (comma-separated), production and is_production', async () => {
    expect(await found('harbour', '&type=projectasset')).toEqual(['project:cut'])
    expect(await found('harbour', '&type=videoasset')).toEqual(['interview'])
    expect((await found('harbour', '&type=videoasset,projectasset')).sort()).toEqual(['interview', 'project:cut'])
    expect(await found('harbour', '&type=audioasset,imageasset')).toEqual([])
    expect(await found('interview', `&production=${other.id}`)).toEqual(['secret'])
    t.db.$client.run(`UPDATE media_assets SET is_production = 0 WHERE id = ${ids.sunset}`)
    try {
      expect(await found('interview', `&is_production=false`)).toEqual(['sunset'])
      expect((await found('interview', `&is_production=true`)).sort()).toEqual(['interview', 'secret'])
    } finally {
      t.db.$client.run(`UPDATE media_assets SET is_production = 1 WHERE id = ${ids.sunset}`)
    }
  })

  test('device and status_approval, of media assets and projects alike', async () => {
    expect(await found('keeper', `&device=${otherDevice.id}`)).toEqual(['keeper'])
    expect(await found('keeper', `&device=${otherDevice.id - 1}`)).toEqual([])
    expect(await found('interview', `&device=${otherDevice.id}`)).toEqual([])
    expect((await found('harbour', `&device=${otherDevice.id - 1}`)).sort()).toEqual(['interview', 'project:cut'])
    expect(await found('interview', '&device=99999999999999999999')).toEqual([])
    expect((await t.request('PATCH', `/api/videoassets/${ids.sunset}/`, { body: { status_approval: 1 } })).status).toBe(
      200,
    )
    expect(
      (await t.request('PATCH', `/api/projectassets/${projects.cut}/`, { body: { status_approval: 1 } })).status,
    ).toBe(200)
    try {
      expect(await found('interview', '&status_approval=1')).toEqual(['sunset'])
      expect((await found('interview', '&status_approval=0')).sort()).toEqual(['interview', 'secret'])
      expect(await found('harbour', '&status_approval=1')).toEqual(['project:cut'])
      expect(await found('keeper interview', '&status_approval=0')).toEqual([])
      expect(
        (await found('interview', `&status_approval=0&device=${otherDevice.id - 1}&type=videoasset`)).sort(),
      ).toEqual(['interview', 'secret'])
      const counted = await search('q=interview&status_approval=0&limit=1')
      expect([counted.json.length, counted.headers.get('x-total-count')]).toEqual([1, '2'])
    } finally {
      await t.request('PATCH', `/api/videoassets/${ids.sunset}/`, { body: { status_approval: 0 } })
      await t.request('PATCH', `/api/projectassets/${projects.cut}/`, { body: { status_approval: 0 } })
    }
  })

  test('bad filters are 400 at their parameter', async () => {
    expectError(await search('q=a&type=video'), 400, 'invalid', { parameter: 'type' })
    expectError(await search('q=a&type=videoasset,'), 400, 'invalid', { parameter: 'type' })
    expectError(await search('q=a&production=x'), 400, 'invalid', { parameter: 'production' })
    expectError(await search('q=a&is_production=maybe'), 400, 'invalid', { parameter: 'is_production' })
    expectError(await search('q=a&device=one'), 400, 'invalid', { parameter: 'device' })
    expectError(await search('q=a&status_approval=2'), 400, 'invalid', { parameter: 'status_approval' })
    expectError(await search('q=a&limit=-1'), 400, 'invalid', { parameter: 'limit' })
  })

  test('a production id beyond any id finds nothing; offsets and limits beyond 64 bits are capped as lists cap them', async () => {
    for (const query of [
      'q=interview&production=99999999999999999999',
      'q=interview&production=0',
      'q=interview&offset=99999999999999999999&limit=5',
      'q=interview&limit=99999999999999999999',
    ]) {
      const r = await search(query)
      expect([query, r.status]).toEqual([query, 200])
    }
    expect((await search('q=interview&production=99999999999999999999')).json).toEqual([])
  })

  test('limit/offset, X-Total-Count and Link as every list; without limit, every hit', async () => {
    const first = await search('q=mov&limit=2')
    expect(first.json).toHaveLength(2)
    expect(first.headers.get('x-total-count')).toBe('6')
    expect(first.headers.get('link')).toBe('<http://localhost/api/search/?q=mov&limit=2&offset=2>; rel="next"')
    const last = await search('q=mov&limit=2&offset=4')
    expect(last.json).toHaveLength(2)
    expect(last.headers.get('link')).toBe('<http://localhost/api/search/?q=mov&limit=2&offset=2>; rel="prev"')
    const all = await search('q=mov')
    expect(all.json).toHaveLength(6)
    // The pages are the whole list, in its order.
    const pages = [...first.json, ...(await search('q=mov&limit=2&offset=2')).json, ...last.json]
    expect(pages).toEqual(all.json)
    expect((await search('q=mov&limit=0')).json).toEqual([])
  })

  test('only productions the user can read are searched, and counted', async () => {
    const reader = t.makeUser('reader', { read: [show.id] })
    const r = await search('q=interview', reader)
    expect(r.json.map((h: { id: number }) => h.id).sort()).toEqual([ids.interview, ids.sunset].sort())
    expect(r.headers.get('x-total-count')).toBe('2')
    const nobody = t.makeUser('nobody')
    const n = await search('q=interview', nobody)
    expect([n.json, n.headers.get('x-total-count')]).toEqual([[], '0'])
    // A production the user cannot read, asked for by id: nothing, not an error.
    expect((await search(`q=interview&production=${other.id}`, reader)).json).toEqual([])
  })

  test('a media asset shared with a readable production is found there', async () => {
    const guest = t.makeUser('guest', { read: [show.id] })
    t.db.$client.run(`INSERT INTO media_asset_shares (asset_id, production_id) VALUES (${ids.secret}, ${show.id})`)
    try {
      expect((await search('q=secret', guest)).json.map((h: { id: number }) => h.id)).toEqual([ids.secret])
    } finally {
      t.db.$client.run(`DELETE FROM media_asset_shares WHERE asset_id = ${ids.secret}`)
    }
    expect((await search('q=secret', guest)).json).toEqual([])
  })

  test('without a key: 401', async () => {
    expect((await search('q=interview', null)).status).toBe(401)
  })
})
