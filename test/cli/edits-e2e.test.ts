// Issue 19 against the compiled executable (dist/reelhouse, as users get it): the published
// medialoopster client's edits and delete as it sends them (python-requests' headers, HTTP Basic,
// one-member JSON bodies), form data and PUT, read-only fields, a refused delete, ids not reused,
// productions for the client under serve --default-api-version 2, the history list, shots and
// sequences, archive and restore; and odd input on every new endpoint, none of it a 500. The same
// points are tested in depth from source (test/http/edits.test.ts, history.test.ts,
// versions.test.ts, unavailable.test.ts, test/cli/medialoopster-session.test.ts).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { clientProductionProblems } from '../helpers/medialoopster.ts'
import {
  call,
  compiledExecutable,
  killAll,
  runCli,
  type Server,
  startServe,
  TEST_TIMEOUT_MS,
} from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

let server: Server
let admin: string
let media: string
let binary: string
const CLIPS = ['A001C001', 'A001C002', 'A001C003']

/** What Medialoopster(url, username=..., password=...) sends on every call (a requests.Session with HTTPBasicAuth). */
const session = {
  authorization: `Basic ${Buffer.from('ingest:correct horse battery').toString('base64')}`,
  'user-agent': 'python-requests/2.32.3',
  'accept-encoding': 'gzip, deflate',
  accept: '*/*',
  connection: 'keep-alive',
}
/** session.patch(url, json=member) / session.delete(url), as the client sends them. */
const send = (method: string, path: string, body?: unknown) =>
  fetch(`${server.api}/${path}`, {
    method,
    headers: body === undefined ? session : { ...session, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

beforeAll(async () => {
  binary = await compiledExecutable()
  const data = join(tempDir('reelhouse-edits-e2e-'), 'data')
  media = tempDir('reelhouse-edits-e2e-media-')
  // No ffmpeg (an empty folder) and a settle time longer than the test: the clips are registered
  // by POST, never imported by the watcher meanwhile.
  server = await startServe(data, {
    cli: [binary],
    args: [
      '--port',
      '0',
      '--default-api-version',
      '2',
      '--ffmpeg',
      tempDir('reelhouse-edits-e2e-noff-'),
      '--settle',
      '3600',
    ],
  })
  admin = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  expect((await call(server, 'POST', '/devices/', admin, { name: 'media', path: media })).status).toBe(201)
  expect(
    (await call(server, 'POST', '/productions/', admin, { name: 'Night Shift', storage_root: `${media}/night` }))
      .status,
  ).toBe(201)
  mkdirSync(join(media, 'night', 'footage'), { recursive: true })
  for (const name of CLIPS) {
    writeFileSync(join(media, 'night', 'footage', `${name}.mov`), name)
    expect(
      (
        await call(server, 'POST', '/videoassets/', admin, {
          name,
          path_file: `${media}/night/footage/${name}.mov`,
          production: 1,
        })
      ).status,
    ).toBe(201)
  }
  const set = await call(server, 'POST', '/custommetadatasets/', admin, {
    name: 'Camera report',
    description: '',
    content_type: 4,
  })
  expect(
    (
      await call(server, 'POST', '/custommetadata/', admin, {
        key: 'camera.model',
        value: 'Camera model',
        custom_metadata_set: set.json.id,
      })
    ).status,
  ).toBe(200)
  for (const args of [
    ['user', 'add', 'ingest', '--perm', 'browser.change_videoasset', '--perm', 'browser.delete_videoasset'],
    ['user', 'grant', 'ingest', '--production', 'Night Shift', '--write'],
  ])
    expect((await runCli([...args, '--data', data], { cli: [binary] })).code).toBe(0)
  expect(
    (await runCli(['user', 'passwd', 'ingest', '--data', data], { cli: [binary], input: 'correct horse battery\n' }))
      .code,
  ).toBe(0)
})
afterAll(() => killAll())

test("the client's edits: one-member JSON PATCHes answered 200 with the whole record; form data and PUT; read-only fields 400 at their pointer", async () => {
  const patch = async (member: Record<string, unknown>) => {
    const response = await send('PATCH', 'videoassets/1/', member)
    expect([member, response.status, response.headers.get('content-type')]).toEqual([
      member,
      200,
      expect.stringContaining('application/json'),
    ])
    return (await response.json()) as Record<string, any>
  }
  expect((await patch({ status_approval: 1 })).status_approval).toBe(1)
  expect((await patch({ status_approval: 0 })).status_approval).toBe(0)
  expect((await patch({ date_del: '2031-01-01' })).date_del).toStartWith('2031-01-01T00:00:00')
  expect((await patch({ date_add: '2024-05-01' })).date_add).toStartWith('2024-05-01T00:00:00')
  expect((await patch({ description: 'Harbour at night' })).description).toBe('Harbour at night')
  const record = await patch({ meta_field_store: { 'camera.model': 'ALEXA 35' } })
  // The whole record, as GET answers it, with who changed it last.
  expect(record).toEqual((await (await send('GET', 'videoassets/1/')).json()) as Record<string, unknown>)
  expect(record).toMatchObject({
    id: 1,
    name: 'A001C001',
    status_approval: 0,
    meta_field_store: { 'camera.model': 'ALEXA 35' },
    modified_by: 'ingest',
    projects: [],
    keywords: {},
  })

  // Form data, as JSON.
  const form = await fetch(`${server.api}/videoassets/1/`, {
    method: 'PATCH',
    headers: session,
    body: new URLSearchParams({ status_approval: '1', meta_field_store: '{"camera.model": null}' }),
  })
  expect([form.status, await form.json()]).toEqual([
    200,
    expect.objectContaining({ status_approval: 1, meta_field_store: {} }),
  ])
  // PUT: the whole record (name required).
  expect((await send('PUT', 'videoassets/1/', { description: 'x' })).status).toBe(400)
  const put = await send('PUT', 'videoassets/1/', { name: 'A001C001 night', description: '' })
  expect([put.status, ((await put.json()) as { name: string }).name]).toEqual([200, 'A001C001 night'])

  // Read-only fields: 400 invalid at each pointer; path_file says a new path is a move.
  const refused = await send('PATCH', 'videoassets/1/', {
    id: 9,
    date_mod: '2020-01-01',
    status_asset: -1,
    path_file: '/elsewhere.mov',
  })
  const errors = ((await refused.json()) as { errors: { code: string; detail: string; source: { pointer: string } }[] })
    .errors
  expect([refused.status, errors.map((e) => `${e.code} ${e.source.pointer}`).sort()]).toEqual([
    400,
    ['invalid /date_mod', 'invalid /id', 'invalid /path_file', 'invalid /status_asset'],
  ])
  expect(errors.find((e) => e.source.pointer === '/path_file')!.detail).toContain('move')
})

test('delete_asset: 204 with allow_partial=true, the record gone, the file kept, the id never given again; a device still used: 409 naming what', async () => {
  const gone = await send('DELETE', 'videoassets/3/?allow_partial=true')
  expect([gone.status, await gone.text()]).toEqual([204, ''])
  expect((await send('GET', 'videoassets/3/')).status).toBe(404)
  expect(readFileSync(join(media, 'night', 'footage', 'A001C003.mov'), 'utf8')).toBe('A001C003')
  const again = await call(server, 'POST', '/videoassets/', admin, {
    name: 'A001C003',
    path_file: `${media}/night/footage/A001C003.mov`,
    production: 1,
  })
  expect([again.status, again.json.id]).toEqual([201, 4])
  const refused = await call(server, 'DELETE', '/devices/1/', admin)
  expect([refused.status, refused.json.errors[0].code, refused.json.errors[0].detail]).toEqual([
    409,
    'conflict',
    expect.stringContaining('3 video assets lie on this device'),
  ])
})

test('with --default-api-version 2: productions() and production(id) take the records (devices by id); version=1 still gets Device records', async () => {
  for (const path of ['productions/', 'productions/1/']) {
    const response = await send('GET', path)
    const body = (await response.json()) as Record<string, unknown> | Record<string, unknown>[]
    const records = Array.isArray(body) ? body : [body]
    expect([path, response.status, records.flatMap(clientProductionProblems)]).toEqual([path, 200, []])
    expect(records[0]).toMatchObject({
      upload_device: 1,
      can_write: true,
      can_delete_assets: false,
      members: [2],
      projectasset_device: null,
    })
  }
  const v1 = await fetch(`${server.api}/productions/1/`, {
    headers: { ...session, accept: 'application/json; version=1' },
  })
  expect(((await v1.json()) as { upload_device: unknown }).upload_device).toMatchObject({ id: 1, name: 'media' })
})

test("the history: one record's rows newest first, paged with Link and X-Total-Count; by user; the delete", async () => {
  const page = await send('GET', 'history/?resource=videoasset&id=1&limit=2')
  const rows = (await page.json()) as {
    id: number
    user: string
    via: string
    action: string
    changes: Record<string, unknown>
  }[]
  expect(page.status).toBe(200)
  expect(rows.map((r) => [r.user, r.via, r.action])).toEqual([
    ['ingest', 'api', 'update'],
    ['ingest', 'api', 'update'],
  ])
  expect(rows[0]!.id).toBeGreaterThan(rows[1]!.id)
  expect(Object.keys(rows[0]!.changes)).toEqual(expect.arrayContaining(['name', 'date_mod']))
  expect(Number(page.headers.get('x-total-count'))).toBeGreaterThan(8)
  expect(page.headers.get('link')).toContain('offset=2>; rel="next"')
  const byIngest = (await (await send('GET', 'history/?user=ingest&limit=1000')).json()) as {
    resource_id: number
    action: string
  }[]
  expect(byIngest.filter((r) => r.action === 'delete').map((r) => r.resource_id)).toEqual([3])
})

test('shots and sequences are empty lists; an archive without its fields is 400, a restore without the archive codename 403', async () => {
  for (const what of ['shots', 'sequences']) {
    const response = await send('GET', `videoassets/1/${what}/`)
    expect([what, response.status, await response.json()]).toEqual([what, 200, []])
    expect((await send('GET', `videoassets/3/${what}/`)).status).toBe(404)
  }
  for (const path of ['archiveactivities/', 'restoreactivities/']) {
    // The archive lacks archive_type and archive_connector; the user lacks browser.archive_mediaasset.
    const response = await send('POST', path, [{ content_type_id: 4, asset_id: 1 }])
    const body = (await response.json()) as { errors: { code: string; detail: string }[] }
    expect([path, response.status, body.errors[0]!.code]).toEqual(
      path === 'archiveactivities/' ? [path, 400, 'invalid'] : [path, 403, 'permission_denied'],
    )
  }
})

test('odd input on the new endpoints: bodies, content types, ids and history queries answer 4xx, never a 500', async () => {
  const statuses: [string, number][] = []
  const bodies = [
    '[]',
    'null',
    '5',
    '"x"',
    '{',
    '{"name":[1]}',
    '{"name":null}',
    '{"status_approval":"1"}',
    '{"meta_field_store":[]}',
    '{"keywords":{"a":[1]}}',
    `{"name":"${'x'.repeat(300)}"}`,
    '{"date_add":"2031-13-45"}',
    '{"unknown":{"deep":[1]}}',
    '{"id":null}',
    '{"password":5}',
    '{"duration":-1}',
  ]
  for (const resource of [
    'devices',
    'productions',
    'transcodingprofiles',
    'custommetadata',
    'custommetadatasets',
    'assetholddurations',
    'videoassets',
    'projectassets',
  ])
    for (const method of ['PATCH', 'PUT'])
      for (const body of bodies)
        for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
          const response = await fetch(`${server.api}/${resource}/1/`, {
            method,
            headers: { authorization: `Token ${admin}`, 'content-type': type },
            body,
          })
          statuses.push([`${method} ${resource} ${type} ${body.slice(0, 40)}`, response.status])
        }
  for (const id of ['abc', '-1', '1.5', '0', '99999999999999999999', '%00'])
    for (const resource of ['devices', 'productions', 'videoassets', 'custommetadata']) {
      const response = await fetch(`${server.api}/${resource}/${id}/?allow_partial=true`, {
        method: 'DELETE',
        headers: { authorization: `Token ${admin}` },
      })
      statuses.push([`DELETE ${resource} ${id}`, response.status])
    }
  for (const query of [
    'resource=nothing',
    'id=abc',
    'id=-1',
    'user=',
    `user=${'u'.repeat(200)}`,
    'limit=-1',
    'offset=abc',
    'offset=99999999999999999999',
    'resource[]=x',
    '%zz',
  ])
    statuses.push([
      `history ${query}`,
      (await fetch(`${server.api}/history/?${query}`, { headers: { authorization: `Token ${admin}` } })).status,
    ])
  expect(statuses.filter(([, status]) => status >= 500)).toEqual([])
  expect(statuses.filter(([what, status]) => what.startsWith('DELETE') && status !== 404)).toEqual([])
})
