// Where a production's storage_root and proxy_root may lie against the other productions' folders
// (docs/api.md, "Where a production's folders may lie"): a user who may create productions but
// write only to P1 cannot put a root in or around P2's folders (403, as the territory rule words
// it); a proxy_root never lies on another production's storage_root, for anyone (400); nesting one
// storage_root in another's is asked for with ?nest=true, even by a superuser (409 otherwise).
// Each refusal leaves nothing made: no folder, no record.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'

const t = testApp()
afterAll(() => t.cleanup())
const dev = tempDir('reelhouse-roots-')
t.owned.push(dev)
expect((await t.post('/api/devices/', { name: 'DEV', path: dev })).status).toBe(201)
const p2 = (await t.post('/api/productions/', { name: 'P2', storage_root: `${dev}/p2/` })).json
const p1 = (await t.post('/api/productions/', { name: 'P1', storage_root: `${dev}/p1/` })).json
// P3 keeps its proxies outside its storage root, and drops in a folder of its own.
const p3 = (
  await t.post('/api/productions/', {
    name: 'P3',
    storage_root: `${dev}/p3/`,
    proxy_root: `${dev}/p3-proxies/`,
    upload_root: `${dev}/p3-drop/`,
  })
).json
for (const p of [p1, p2, p3]) expect(p.id).toBeNumber()

const perms = ['browser.add_production', 'browser.change_production']
/** Writes P1 only; reads P2 (so P2 may be named to them); does not see P3. */
const squatter = t.makeUser('squatter', { perms, write: [p1.id], read: [p2.id] })
/** Writes P1 and P2. */
const both = t.makeUser('both', { perms, write: [p1.id, p2.id] })

const post = (body: Record<string, unknown>, key: string | undefined = undefined, query = '') =>
  t.post(`/api/productions/${query}`, body, { key })
const patch = (id: number, body: Record<string, unknown>, key: string | undefined = undefined, query = '') =>
  t.request('PATCH', `/api/productions/${id}/${query}`, { body, key })
const put = (id: number, body: Record<string, unknown>, key: string | undefined = undefined) =>
  t.request('PUT', `/api/productions/${id}/`, { body, key })
const detail = (r: { json: any }) => r.json?.errors?.[0]?.detail as string
let n = 0
const name = () => `Try ${++n}`

describe('a user who may create productions but writes P1 only', () => {
  test("POST with a storage_root inside P2's storage root: 403 in the territory rule's words, no folder made, no record", async () => {
    const r = await post({ name: 'Squat', storage_root: `${dev}/p2/footage/` }, squatter)
    expectError(r, 403, 'permission_denied')
    expect(detail(r)).toBe(
      `storage_root lies inside the folders of production ${p2.id}; you need write access to production ${p2.id}.`,
    )
    expect(existsSync(join(dev, 'p2', 'footage'))).toBe(false)
    expect((await t.get('/api/productions/?storage_root=' + encodeURIComponent(`${dev}/p2/footage/`))).json).toEqual([])
  })

  test("a root around P2's folders, P2's own proxy_root, and a proxy_root in P2's storage: 403", async () => {
    const cases: Record<string, unknown>[] = [
      { storage_root: `${dev}/` },
      { storage_root: `${dev}/p1/x/`, proxy_root: `${dev}/p2/proxies/` },
      { storage_root: `${dev}/p1/y/`, proxy_root: `${dev}/p2/` },
      { storage_root: `${dev}/p1/z/`, proxy_root: `${dev}/p2/renders/` },
    ]
    for (const body of cases)
      expect([body, (await post({ name: name(), ...body }, squatter)).status]).toEqual([body, 403])
  })

  test('a production the user cannot read is not named: its storage root, its proxy root outside it, its drop folder', async () => {
    for (const root of [`${dev}/p3/cam/`, `${dev}/p3-proxies/`, `${dev}/p3-drop/`, `${dev}/p3-drop/inner/`]) {
      const r = await post({ name: name(), storage_root: root }, squatter)
      expectError(r, 403, 'permission_denied')
      expect([root, detail(r)]).toEqual([
        root,
        'storage_root lies in or around the folders of a production you do not have write access to.',
      ])
    }
  })

  test("PATCH and PUT of an empty production's roots into P2's folders: 403, the roots unchanged", async () => {
    const own = (await post({ name: 'Empty', storage_root: `${dev}/empty/` }, squatter)).json
    expect(own.id).toBeNumber()
    for (const [body, how] of [
      [{ storage_root: `${dev}/p2/cam/` }, 'patch'],
      [{ proxy_root: `${dev}/p2/proxies/` }, 'patch'],
      [{ name: 'Empty', storage_root: `${dev}/p2/cam/` }, 'put'],
      [{ name: 'Empty', storage_root: `${dev}/empty/`, proxy_root: `${dev}/p2/proxies/` }, 'put'],
    ] as const) {
      const r = how === 'patch' ? await patch(own.id, body, squatter) : await put(own.id, body, squatter)
      expectError(r, 403, 'permission_denied')
    }
    const now = (await t.get(`/api/productions/${own.id}/`)).json
    expect([now.storage_root, now.proxy_root]).toEqual([`${dev}/empty/`, `${dev}/empty/proxies/`])
    expect(existsSync(join(dev, 'p2', 'cam'))).toBe(false)
  })

  test('roots in their own production or apart from every other one: 201', async () => {
    expect((await post({ name: 'Apart', storage_root: `${dev}/apart/` }, squatter)).status).toBe(201)
  })
})

describe('for anyone, a superuser too', () => {
  test("a proxy_root that is, holds or lies in another production's storage_root: 400 at /proxy_root", async () => {
    for (const proxy of [`${dev}/p2/`, `${dev}/`, `${dev}/p2/footage/`, `${dev}/p2/proxies/`]) {
      const r = await post({ name: name(), storage_root: `${dev}/q${n}/`, proxy_root: proxy })
      expectError(r, 400, 'invalid', { pointer: '/proxy_root' })
    }
    const own = (await post({ name: 'Mine', storage_root: `${dev}/mine/` })).json
    expectError(await patch(own.id, { proxy_root: `${dev}/p2/` }), 400, 'invalid', { pointer: '/proxy_root' })
    expect((await t.get(`/api/productions/${own.id}/`)).json.proxy_root).toBe(`${dev}/mine/proxies/`)
  })

  test("a proxy_root that holds the production's own storage_root: 400", async () => {
    expectError(
      await post({ name: name(), storage_root: `${dev}/own/footage/`, proxy_root: `${dev}/own/` }),
      400,
      'invalid',
      { pointer: '/proxy_root' },
    )
  })

  test("a storage_root in another production's proxy_root or drop folder: 400 at /storage_root", async () => {
    for (const root of [`${dev}/p3-proxies/`, `${dev}/p3-proxies/in/`, `${dev}/p3-drop/`, `${dev}/p3-drop/in/`]) {
      const r = await post({ name: name(), storage_root: root })
      expectError(r, 400, 'invalid', { pointer: '/storage_root' })
    }
  })

  test("a storage_root in or around another's: 409 naming it, unless ?nest=true; never the same one", async () => {
    const inside = await post({ name: 'Nested', storage_root: `${dev}/p2/nested/` })
    expectError(inside, 409, 'conflict')
    expect(detail(inside)).toContain(`storage_root of production ${p2.id} (P2)`)
    expect(detail(inside)).toContain('?nest=true')
    expect(existsSync(join(dev, 'p2', 'nested'))).toBe(false)
    const nested = await post({ name: 'Nested', storage_root: `${dev}/p2/nested/` }, undefined, '?nest=true')
    expect(nested.status).toBe(201)
    // Its own proxy folder lies in its own storage root, nested in P2's by choice.
    expect(nested.json.proxy_root).toBe(`${dev}/p2/nested/proxies/`)
    expectError(await post({ name: name(), storage_root: `${dev}/p2/` }, undefined, '?nest=true'), 400, 'invalid', {
      pointer: '/storage_root',
    })
    const own = (await post({ name: 'Movable', storage_root: `${dev}/movable/` })).json
    expectError(await patch(own.id, { storage_root: `${dev}/p1/movable/` }), 409, 'conflict')
    expect((await patch(own.id, { storage_root: `${dev}/p1/movable/` }, undefined, '?nest=true')).status).toBe(200)
  })

  test('a user with write access to both productions still asks for nesting, and may then nest', async () => {
    expectError(await post({ name: name(), storage_root: `${dev}/p2/both/` }, both), 409, 'conflict')
    expect((await post({ name: name(), storage_root: `${dev}/p2/both/` }, both, '?nest=true')).status).toBe(201)
  })

  test('?nest takes true, false, 1 or 0; anything else is 400', async () => {
    expect((await post({ name: name(), storage_root: `${dev}/p2/n0/` }, undefined, '?nest=false')).status).toBe(409)
    expect((await post({ name: name(), storage_root: `${dev}/p2/n0/` }, undefined, '?nest=yes')).status).toBe(400)
  })
})
