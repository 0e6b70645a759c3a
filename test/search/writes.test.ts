// The search index follows every kind of write, whoever makes it: a create, an import and a
// re-import, edits of each searchable field, keywords, a rename and a move by the watcher's scan,
// a relink, deletes of media assets and projects. What is searched is read back through
// GET /api/search/, so a write that forgot the index shows as a stale hit or a missing one.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mkdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { IMPORT, importBody } from '../helpers/imports.ts'
import { type ScanWorld, scanWorld } from '../helpers/scans.ts'

let w: ScanWorld
let root: string
let show: { id: number }

beforeEach(async () => {
  w = await scanWorld()
  ;({ root, show } = w)
})
afterEach(() => w.stop())

const send = async (method: string, path: string, body?: unknown) => {
  const r = await w.app.handle(
    new Request(`http://localhost${path}`, {
      method,
      headers: {
        authorization: `Token ${w.base.adminKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  )
  const text = await r.text()
  return { status: r.status, json: text ? JSON.parse(text) : undefined, text }
}
/** The `type:id` of every hit of q. */
const hits = async (q: string) => {
  const r = await send('GET', `/api/search/?q=${encodeURIComponent(q)}`)
  expect(r.status).toBe(200)
  return (r.json as { type: string; id: number }[]).map((h) => `${h.type}:${h.id}`).sort()
}
/** Each file's content its own: no two are content twins. */
const file = (rel: string) => w.file(rel, `essence of ${rel}`)
const scan = () => w.scan()
const video = async (body: Record<string, unknown>) => {
  const r = await send('POST', '/api/videoassets/', { production: show.id, ...body })
  expect(r.status).toBe(201)
  return r.json.id as number
}

describe('the index follows the writes', () => {
  test('edits of name, description and custom metadata; keywords added and removed', async () => {
    const set = await send('POST', '/api/custommetadatasets/', { name: 'Rights', description: '', content_type: 4 })
    expect(
      (
        await send('POST', '/api/custommetadata/', {
          key: 'video.owner',
          value: 'Owner',
          custom_metadata_set: set.json.id,
        })
      ).status,
    ).toBe(200)
    const id = await video({ name: 'Gull', description: 'feathers', path_file: file('Show/gull.mov') })
    const me = [`videoasset:${id}`]
    expect(await hits('gull')).toEqual(me)

    expect(
      (
        await send('PATCH', `/api/videoassets/${id}/`, {
          name: 'Albatross',
          description: 'wings',
          meta_field_store: { 'video.owner': 'Zenith Films' },
        })
      ).status,
    ).toBe(200)
    expect(await hits('albatross')).toEqual(me)
    expect(await hits('wings')).toEqual(me)
    expect(await hits('zenith')).toEqual(me)
    // The old text is gone (the file name still says gull: search the name's word elsewhere).
    expect(await hits('feathers')).toEqual([])

    expect((await send('PATCH', `/api/videoassets/${id}/`, { keywords: { Weather: ['Fog', 'Drizzle'] } })).status).toBe(
      200,
    )
    expect(await hits('drizzle')).toEqual(me)
    expect(await hits('weather fog')).toEqual(me)
    expect((await send('PATCH', `/api/videoassets/${id}/`, { keywords: { Weather: ['Fog'] } })).status).toBe(200)
    expect(await hits('drizzle')).toEqual([])
    expect(await hits('fog')).toEqual(me)
    // A PATCH whose null removes a custom metadata key takes its value out of the index.
    expect((await send('PATCH', `/api/videoassets/${id}/`, { meta_field_store: { 'video.owner': null } })).status).toBe(
      200,
    )
    expect(await hits('zenith')).toEqual([])
  })

  test('a media asset deleted is no longer found', async () => {
    const id = await video({ name: 'Heron', path_file: file('Show/heron.mov') })
    expect(await hits('heron')).toEqual([`videoasset:${id}`])
    expect((await send('DELETE', `/api/videoassets/${id}/`)).status).toBe(204)
    expect(await hits('heron')).toEqual([])
  })

  test('a project: created, edited, deleted', async () => {
    const made = await send('POST', '/api/projectassets/', {
      name: 'Trailer',
      bundle_root: join(root, 'Show', 'edits', 'trailer_v1'),
      production_id: show.id,
    })
    expect(made.status).toBe(201)
    const me = [`projectasset:${made.json.id}`]
    expect(await hits('trailer')).toEqual(me)
    expect(
      (await send('PATCH', `/api/projectassets/${made.json.id}/`, { name: 'Teaser', description: 'forty seconds' }))
        .status,
    ).toBe(200)
    expect(await hits('teaser forty')).toEqual(me)
    expect((await send('DELETE', `/api/projectassets/${made.json.id}/`)).status).toBeLessThan(300)
    await w.core.runner.idle()
    expect(await hits('teaser')).toEqual([])
  })

  test('the watcher: a file renamed and one moved to another folder are found under their new names only', async () => {
    const a = await video({ name: 'a', path_file: file('Show/day1/osprey_take1.mov') })
    const b = await video({ name: 'b', path_file: file('Show/day1/kestrel.mov') })
    renameSync(join(root, 'Show/day1/osprey_take1.mov'), join(root, 'Show/day1/osprey_take2.mov'))
    mkdirSync(join(root, 'Show/day2'))
    renameSync(join(root, 'Show/day1/kestrel.mov'), join(root, 'Show/day2/kestrel.mov'))
    await scan()
    expect(await hits('take2')).toEqual([`videoasset:${a}`])
    expect(await hits('take1')).toEqual([])
    expect(await hits('kestrel day2')).toEqual([`videoasset:${b}`])
    expect(await hits('kestrel day1')).toEqual([])
  })

  test('an import creates the record in the index; a re-import of the path changes it', async () => {
    const path = file('Show/incoming/plover.mov')
    const first = await send(
      'POST',
      IMPORT,
      importBody(path, { name: 'Plover', description: 'shore bird' }, { keywords: { Species: ['Charadrius'] } }),
    )
    expect(first.status).toBe(201)
    await w.core.runner.idle()
    const id = first.json.asset_import_id as number
    expect(await hits('plover shore')).toEqual([`videoasset:${id}`])
    expect(await hits('charadrius')).toEqual([`videoasset:${id}`])
    const again = await send('POST', IMPORT, importBody(path, { name: 'Sandpiper', description: 'wader' }))
    expect(again.status).toBe(201)
    await w.core.runner.idle()
    expect(await hits('sandpiper wader')).toEqual([`videoasset:${id}`])
    expect(await hits('shore')).toEqual([])
  })
})
