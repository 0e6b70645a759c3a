// No silent mistakes in updates (docs/api.md, Editing and removing records; Ids, timestamps, methods): a
// PATCH or PUT naming a field the record does not have is a 400 at that field, naming the writable
// ones, and changes nothing (Django REST framework would ignore the field); a PATCH or PUT of a
// missing record is a 404 whatever its body; an id in a path is read only in canonical decimal
// digits, on every route that takes one.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectErrors } from '../helpers/envelope.ts'

setDefaultTimeout(120_000)

/** A resource with PATCH and PUT: its base path, a record of it, and what an update may write. */
type Resource = {
  base: string
  id: number
  /** A writable field and a valid value of it (text, so that a form sends it as it is). */
  known: [string, string]
  /** The writable fields, as the 400 names them. */
  writable: string[]
  /** What a DELETE of a missing record answers (project assets: api.md 4.1). */
  deleteCode: string
}

let t: TestApp
let resources: Resource[]

const MEDIA_WRITABLE = [
  'name',
  'description',
  'status_approval',
  'date_crt',
  'date_add',
  'date_del',
  'is_archive',
  'meta_field_store',
  'keywords',
]
const PROJECT_WRITABLE = [
  'name',
  'description',
  'date_crt',
  'date_add',
  'date_del',
  'meta_field_store',
  'status_editing',
  'status_approval',
  'path_file',
  'type',
  'is_archive',
  'name_editor',
  'name_studio',
  'locked_by',
]
const MARKER_WRITABLE = ['start', 'end', 'start_ms', 'end_ms', 'note', 'color']
const SHOT_WRITABLE = [
  'name',
  'description',
  'keywords',
  'is_compositing',
  'licensor',
  'license',
  'location_city',
  'copyright',
  'ancestor',
]
const SEQUENCE_WRITABLE = ['name', 'description', 'keywords', 'shots']
const PRODUCTION_WRITABLE = [
  'name',
  'storage_root',
  'codename',
  'company',
  'proxy_root',
  'proxy_url',
  'upload_root',
  'move_uploads',
  'ignore_patterns',
  'upload_device',
  'audioasset_device',
  'imageasset_device',
  'videoasset_device',
]

beforeAll(async () => {
  t = testApp()
  const { root, device, production } = await seedProduction(t)
  const created = async (path: string, body: Record<string, unknown>) => {
    const r = await t.post(path, body)
    if (r.status !== 200 && r.status !== 201) throw new Error(`${path}: ${r.text}`)
    return r.json as { id: number } & Record<string, unknown>
  }
  mkdirSync(join(root, 'Show'), { recursive: true })
  const media = async (kind: string) => {
    writeFileSync(join(root, 'Show', `${kind}.bin`), kind)
    return created(`/api/${kind}assets/`, {
      name: kind,
      path_file: join(root, 'Show', `${kind}.bin`),
      production: production.id,
    })
  }
  const profile = await created('/api/transcodingprofiles/', { name: 'ProRes' })
  const set = await created('/api/custommetadatasets/', { name: 'Camera', description: '', content_type: 4 })
  const field = await created('/api/custommetadata/', {
    key: 'camera.model',
    value: 'Model',
    custom_metadata_set: set.id,
  })
  const hold = await created('/api/assetholddurations/', {
    asset_type: 'videoasset',
    context_type: 'device',
    context: device.name,
    duration: 30,
  })
  const project = await created('/api/projectassets/', {
    name: 'P1',
    bundle_root: join(root, 'Show', 'p1'),
    production_id: production.id,
  })
  // Each record's fields but id, as GET answers them: what is writable where nothing else is read-only.
  const allBut = async (path: string) => Object.keys((await t.get(path)).json).filter((k) => k !== 'id')
  const plain = async (base: string, record: { id: number }, known: [string, string]): Promise<Resource> => ({
    base,
    id: record.id,
    known,
    writable: await allBut(`${base}/${record.id}/`),
    deleteCode: 'not_found',
  })
  resources = [
    await plain('/api/devices', device, ['display_name', 'Main disk']),
    {
      base: '/api/productions',
      id: production.id,
      known: ['company', 'Night Films'],
      writable: PRODUCTION_WRITABLE,
      deleteCode: 'not_found',
    },
    await plain('/api/transcodingprofiles', profile, ['codec_name', 'prores']),
    await plain('/api/custommetadata', field, ['value', 'Camera model']),
    await plain('/api/custommetadatasets', set, ['description', 'From the camera']),
    await plain('/api/assetholddurations', hold, ['context', device.name]),
    ...(await Promise.all(
      ['audio', 'image', 'video'].map(
        async (kind): Promise<Resource> => ({
          base: `/api/${kind}assets`,
          id: (await media(kind)).id,
          known: ['description', 'Night exterior'],
          writable: MEDIA_WRITABLE,
          deleteCode: 'not_found',
        }),
      ),
    )),
    {
      base: '/api/projectassets',
      id: project.id,
      known: ['description', 'Rough cut'],
      writable: PROJECT_WRITABLE,
      deleteCode: 'does_not_exist',
    },
    {
      base: '/api/project',
      id: project.id,
      known: ['description', 'Rough cut'],
      writable: PROJECT_WRITABLE,
      deleteCode: 'does_not_exist',
    },
  ]
  // A marker on each media asset (docs/api.md, Markers): its routes lie under its asset's.
  for (const kind of ['audio', 'image', 'video']) {
    const base = `/api/${kind}assets/${resources.find((r) => r.base === `/api/${kind}assets`)!.id}/markers`
    const marker = await created(`${base}/`, { start_ms: 0, note: 'Slate' })
    resources.push({
      base,
      id: marker.id,
      known: ['note', 'Boom in frame'],
      writable: MARKER_WRITABLE,
      deleteCode: 'not_found',
    })
  }
  // A user's shot and sequence on the video asset (docs/api.md, Shots and sequences).
  const videoBase = `/api/videoassets/${resources.find((r) => r.base === '/api/videoassets')!.id}`
  const shot = await created(`${videoBase}/shots/`, { name: 'Wide', timecode_start: 0, timecode_end: 1000 })
  const sequence = await created(`${videoBase}/sequences/`, { name: 'Arrival', shots: [shot.id] })
  resources.push(
    {
      base: `${videoBase}/shots`,
      id: shot.id,
      known: ['description', 'Wide of the harbour'],
      writable: SHOT_WRITABLE,
      deleteCode: 'not_found',
    },
    {
      base: `${videoBase}/sequences`,
      id: sequence.id,
      known: ['description', 'The boat comes in'],
      writable: SEQUENCE_WRITABLE,
      deleteCode: 'not_found',
    },
  )
})
afterAll(() => t.cleanup())

const path = (r: Resource, id: number | string = r.id) => `${r.base}/${id}/`
/** The record as read now, for "nothing changed". */
const read = async (r: Resource) => (await t.get(path(r))).json

/** The unknown fields' entries of a 400: their pointers, and the writable fields each names. */
function unknownEntries(reply: { status: number; json: any; text: string }) {
  expect(reply.status).toBe(400)
  return (reply.json.errors as { code: string; detail: string; source?: { pointer: string } }[])
    .filter((e) => e.detail.startsWith('Unknown field'))
    .map((e) => ({
      code: e.code,
      pointer: e.source?.pointer,
      writable: /Writable fields: (.*)\.$/.exec(e.detail)?.[1]?.split(', ').sort(),
    }))
}

test('every route with PATCH or PUT is one of the resources here', () => {
  const edited = new Set(
    t.app.routes
      .filter((r) => r.method === 'PATCH' || r.method === 'PUT')
      .map((r) => r.path.replace(/\/:(id|marker|shot|sequence)$/, '')),
  )
  // A record under another's (a marker, a shot, a sequence under its asset) is named by its route's path.
  expect([...edited].sort()).toEqual(resources.map((r) => r.base.replace(/\/\d+\//g, '/:id/')).sort())
})

describe('unknown fields', () => {
  test('a body of unknown fields only: 400 invalid at each, naming it and the writable fields, by PATCH and PUT; nothing changed', async () => {
    for (const r of resources) {
      const before = await read(r)
      for (const method of ['PATCH', 'PUT']) {
        const reply = await t.request(method, path(r), { body: { name_typo: 'x' } })
        expectErrors(reply, 400, [{ code: 'invalid', where: { pointer: '/name_typo' } }])
        expect(reply.json.errors[0].detail).toContain('"name_typo"')
        expect({ where: `${method} ${r.base}`, entries: unknownEntries(reply) }).toEqual({
          where: `${method} ${r.base}`,
          entries: [{ code: 'invalid', pointer: '/name_typo', writable: [...r.writable].sort() }],
        })
      }
      expect({ base: r.base, record: await read(r) }).toEqual({ base: r.base, record: before })
    }
  })

  test('known and unknown fields together: 400 at each unknown one (pointers escaped), the known one not written', async () => {
    for (const r of resources) {
      const before = await read(r)
      const [field, value] = r.known
      for (const method of ['PATCH', 'PUT']) {
        // PUT: the whole record as read, so that only the unknown fields are wrong.
        const body = { ...(method === 'PUT' ? before : {}), [field]: value, descripton: 'typo', 'a/b~c': 1 }
        const reply = await t.request(method, path(r), { body })
        expect({ where: `${method} ${r.base}`, pointers: unknownEntries(reply).map((e) => e.pointer) }).toEqual({
          where: `${method} ${r.base}`,
          pointers: ['/descripton', '/a~1b~0c'],
        })
        expect(reply.json.errors).toHaveLength(2)
      }
      expect({ base: r.base, record: await read(r) }).toEqual({ base: r.base, record: before })
    }
  })

  test('form data follows the same rule', async () => {
    for (const r of resources) {
      const before = await read(r)
      const [field, value] = r.known
      const reply = await t.request('PATCH', path(r), { form: { [field]: value, name_typo: 'x' } })
      expect({
        base: r.base,
        entries: unknownEntries(reply).map((e) => e.pointer),
        all: reply.json.errors.length,
      }).toEqual({ base: r.base, entries: ['/name_typo'], all: 1 })
      expect({ base: r.base, record: await read(r) }).toEqual({ base: r.base, record: before })
      const multipart = new FormData()
      multipart.set(field, value)
      multipart.set('name_typo', 'x')
      const asMultipart = await t.request('PUT', path(r), { raw: multipart })
      expect({ base: r.base, entries: unknownEntries(asMultipart).map((e) => e.pointer) }).toEqual({
        base: r.base,
        entries: ['/name_typo'],
      })
    }
  })

  test("an unknown field beside a known field's bad value: both are told at once", async () => {
    const devices = resources.find((r) => r.base === '/api/devices')!
    const reply = await t.request('PATCH', path(devices), { body: { is_internal: 'no', name_typo: 'x' } })
    expectErrors(reply, 400, [
      { code: 'invalid', where: { pointer: '/is_internal' } },
      { code: 'invalid', where: { pointer: '/name_typo' } },
    ])
  })

  test('read-only fields are no unknown fields: a record read and sent back is still a valid PUT and PATCH (in both API versions)', async () => {
    for (const r of resources)
      for (const accept of ['application/json; version=1', 'application/json; version=2'])
        for (const method of ['PUT', 'PATCH']) {
          // Read again each time: an update of a media or project asset changes its date_mod.
          const record = (await t.get(path(r), { headers: { accept } })).json
          const reply = await t.request(method, path(r), { body: record, headers: { accept } })
          expect({
            where: `${method} ${r.base} ${accept}`,
            status: reply.status,
            text: reply.status === 200 ? '' : reply.text,
          }).toEqual({ where: `${method} ${r.base} ${accept}`, status: 200, text: '' })
        }
    // A read-only field with another value keeps its own answer (400 invalid saying why, not "unknown").
    const devices = resources.find((r) => r.base === '/api/devices')!
    const reply = await t.request('PATCH', path(devices), { body: { id: devices.id + 100 } })
    expectErrors(reply, 400, [{ code: 'invalid', where: { pointer: '/id' } }])
    expect(reply.json.errors[0].detail).not.toContain('Unknown field')
  })
})

describe('a missing record is a 404 before the body is looked at', () => {
  test('PATCH and PUT of a missing id, with a bad body, unknown fields or none of what PUT requires: 404 not_found', async () => {
    const bodies = [
      { name: 5, name_typo: 'x' },
      { name_typo: 'x' },
      {},
      { keywords: Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`c${i}`, null])) },
    ]
    for (const r of resources)
      for (const method of ['PATCH', 'PUT'])
        for (const body of bodies) {
          const reply = await t.request(method, path(r, 999_999), { body })
          expect({ where: `${method} ${r.base}`, status: reply.status, code: reply.json?.errors?.[0]?.code }).toEqual({
            where: `${method} ${r.base}`,
            status: 404,
            code: 'not_found',
          })
        }
  })

  test('a record the user cannot read answers as a missing one, whatever the body', async () => {
    const key = t.makeUser('stranger', {
      perms: ['browser.change_production', 'browser.change_videoasset', 'browser.change_projectasset'],
    })
    for (const base of ['/api/productions', '/api/videoassets', '/api/projectassets']) {
      const r = resources.find((x) => x.base === base)!
      for (const body of [{ name: 5 }, { name_typo: 'x' }]) {
        const reply = await t.request('PATCH', path(r), { body, key })
        expect({ base, status: reply.status, code: reply.json.errors[0].code }).toEqual({
          base,
          status: 404,
          code: 'not_found',
        })
      }
    }
  })

  test('without a key: 401, whatever the body and id', async () => {
    const devices = resources.find((r) => r.base === '/api/devices')!
    for (const id of [devices.id, 999_999])
      expect((await t.request('PATCH', path(devices, id), { body: { name_typo: 'x' }, key: null })).status).toBe(401)
  })
})

describe('ids in paths: canonical decimal digits only', () => {
  /** Other spellings of `id` that JavaScript's Number reads as it, then ids that cannot exist. */
  const spellings = (id: number) => [
    `0x${id.toString(16)}`,
    `${id}e0`,
    `+${id}`,
    `0${id}`,
    `${id}.0`,
    `%20${id}`,
    `${id}%20`,
    '0',
    '-1',
    `-${id}`,
    '99999999999999999999',
    '9007199254740992',
    '1e400',
  ]

  test('GET, PATCH, PUT and DELETE of every resource: 404, the record untouched', async () => {
    for (const r of resources) {
      const before = await read(r)
      for (const id of spellings(r.id)) {
        const where = `${r.base}/${id}/`
        const get = await t.get(path(r, id))
        expect({ where, method: 'GET', status: get.status, code: get.json.errors?.[0]?.code }).toEqual({
          where,
          method: 'GET',
          status: 404,
          code: 'not_found',
        })
        for (const method of ['PATCH', 'PUT']) {
          const reply = await t.request(method, path(r, id), { body: { ...before, [r.known[0]]: r.known[1] } })
          expect({ where, method, status: reply.status, code: reply.json.errors?.[0]?.code }).toEqual({
            where,
            method,
            status: 404,
            code: 'not_found',
          })
        }
        const del = await t.request('DELETE', path(r, id))
        expect({ where, method: 'DELETE', status: del.status, code: del.json.errors?.[0]?.code }).toEqual({
          where,
          method: 'DELETE',
          status: 404,
          code: r.deleteCode,
        })
      }
      expect({ base: r.base, record: await read(r) }).toEqual({ base: r.base, record: before })
    }
  })

  test('every other route with an id (status, scan, proxy, shots, link, cancel, history): 404 for each spelling of an id that exists', async () => {
    const routes = t.app.routes.filter((r) => r.path.includes(':id') && !['PATCH', 'PUT', 'DELETE'].includes(r.method))
    expect(routes.length).toBeGreaterThan(20)
    for (const route of routes) {
      // An id that exists on that route's resource where one was made (history and tasks have rows 1).
      const base = route.path.replace(/\/:id.*$/, '')
      const id = resources.find((r) => r.base === base)?.id ?? 1
      for (const spelled of spellings(id)) {
        const where = `${route.method} ${route.path.replace(':id', spelled)}`
        const reply = await t.request(
          route.method,
          route.path.replace(':id', spelled),
          route.method === 'POST' ? { body: {} } : {},
        )
        expect({ where, status: reply.status }).toEqual({ where, status: 404 })
      }
    }
  })

  test('the canonical spelling is the record, with or without the final slash', async () => {
    for (const r of resources) {
      expect({ base: r.base, status: (await t.get(path(r))).status }).toEqual({ base: r.base, status: 200 })
      expect({ base: r.base, status: (await t.get(`${r.base}/${r.id}`)).status }).toEqual({ base: r.base, status: 200 })
    }
  })
})
