// A medialoopster client runs against Reelhouse unchanged: the exact sequence of calls a session
// of the published Python client makes, replayed with fetch against a real serve. The client logs
// in with HTTP Basic (user name and password, never Token), sends what python-requests sends,
// joins paths onto the API URL it was given, checks the connection with ping/, reads the root,
// walks a paged list through its Link headers with a query parameter of newer servers
// (with_sequences=true), and imports a file with null for the optional members it does not fill.
// Its productions() and production(id or name) validate each production in API version 2's
// shape (devices by id) without asking for a version: served by `serve --default-api-version 2`;
// without the flag, get_from_api(path="productions") reads them. Shots and sequences are empty
// lists; archiving needs its codename, and with it archiv_asset, restore_asset and
// wait_is_production work. Its everyday edits (approve, disapprove, dates, a field, custom
// metadata) are one-member JSON PATCHes of the asset, answered with the whole record, and its
// delete_asset a DELETE with allow_partial=true.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { clientProductionProblems } from '../helpers/medialoopster.ts'
import { call, killAll, runCli, type Server, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'
import { waitFor } from '../helpers/wait.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

let server: Server
let media: string
let data: string
let admin: string
const CLIPS = ['A001C001', 'A001C002', 'A001C003', 'A001C004', 'A001C005']

/**
 * Medialoopster(url, username=..., password=...): a requests.Session with HTTPBasicAuth, which
 * sends these headers on every call (json= adds Content-Type: application/json).
 */
const pythonRequests = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
  'user-agent': 'python-requests/2.32.3',
  'accept-encoding': 'gzip, deflate',
  accept: '*/*',
  connection: 'keep-alive',
})

beforeAll(async () => {
  data = join(tempDir('reelhouse-ml-'), 'data')
  media = tempDir('reelhouse-ml-media-')
  // No ffmpeg (an empty folder): the clips are stand-ins, and the session is about the API; the
  // import then completes with a warning instead of probing.
  // The clips lie in the production's watch folder (its storage device, by default): a settle time
  // longer than the session keeps the one left unregistered (A002C001) out of the catalogue
  // however slow the machine is, as the walk expects.
  server = await startServe(data, {
    args: ['--port', '0', '--ffmpeg', tempDir('reelhouse-ml-noff-'), '--settle', '3600'],
  })
  admin = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  // What an administrator prepared before the client came: a device, a production, its clips,
  // and a user with a password and write access to the production.
  expect((await call(server, 'POST', '/devices/', admin, { name: 'media', path: media })).status).toBe(201)
  expect(
    (await call(server, 'POST', '/productions/', admin, { name: 'Night Shift', storage_root: `${media}/night-shift` }))
      .status,
  ).toBe(201)
  mkdirSync(join(media, 'night-shift', 'footage'), { recursive: true })
  for (const name of [...CLIPS, 'A002C001']) writeFileSync(join(media, 'night-shift', 'footage', `${name}.mov`), name)
  for (const name of CLIPS)
    expect(
      (
        await call(server, 'POST', '/videoassets/', admin, {
          name,
          path_file: `${media}/night-shift/footage/${name}.mov`,
          production_name: 'Night Shift',
        })
      ).status,
    ).toBe(201)
  for (const args of [
    ['user', 'add', 'ingest'],
    ['user', 'grant', 'ingest', '--production', 'Night Shift', '--write'],
  ])
    expect((await runCli([...args, '--data', data])).code).toBe(0)
  expect((await runCli(['user', 'passwd', 'ingest', '--data', data], { input: 'correct horse battery\n' })).code).toBe(
    0,
  )
})
afterAll(() => killAll())

test('a medialoopster client session: ping, the root, a paged walk through Link headers, an import with nulls', async () => {
  // Medialoopster(url="http://host:port/api/", user="ingest", password=...): a requests.Session
  // with HTTPBasicAuth, which sends these headers on every call.
  const url = `${server.api}/`
  const session = pythonRequests('ingest', 'correct horse battery')
  const get = (address: string) => fetch(address, { headers: session })

  // ping(): raise_for_status() on GET url + "ping/".
  const ping = await get(`${url}ping/`)
  expect([ping.status, await ping.text()]).toEqual([204, ''])

  // The root: each resource's list URL, absolute.
  const root = await get(url)
  expect(root.status).toBe(200)
  const resources = (await root.json()) as Record<string, string>
  expect(resources.videoassets).toBe(`${server.api}/videoassets/`)

  // A paged walk: the first page asked with limit, then every "next" link followed as given.
  const seen: string[] = []
  let next: string | undefined = `${resources.videoassets}?with_sequences=true&limit=2&offset=0`
  let pages = 0
  while (next) {
    const page = await get(next)
    expect(page.status).toBe(200)
    expect(page.headers.get('x-total-count')).toBe(String(CLIPS.length))
    seen.push(...((await page.json()) as { name: string }[]).map((a) => a.name))
    next = /<([^>]+)>;\s*rel="next"/.exec(page.headers.get('link') ?? '')?.[1]
    if (next) expect(new URL(next).searchParams.get('with_sequences')).toBe('true')
    pages++
  }
  expect(pages).toBe(3)
  expect(seen).toEqual(CLIPS)

  // asset_import(): production by name, members the caller left out sent as null.
  const path_file = `${media}/night-shift/footage/A002C001.mov`
  const imported = await fetch(`${url}asset/import/`, {
    method: 'POST',
    headers: { ...session, 'content-type': 'application/json' },
    body: JSON.stringify({
      production: 'Night Shift',
      type: 'video',
      move_asset: false,
      asset_destination: null,
      rewrap_proxy: false,
      asset: {
        asset_meta: {
          name: 'A002C001',
          description: null,
          path_file,
          path_proxy: null,
          date_crt: null,
          approval: 0,
          meta_field_store: {},
        },
        keywords: {},
      },
    }),
  })
  const log = (await imported.json()) as { status: string; asset_import_id: number }
  expect([imported.status, log.status]).toEqual([201, 'asset_creation_completed'])
  // The client follows the import by reading the asset (its status goes to 6 when the task ends).
  const asset = async () =>
    (await (await get(`${resources.videoassets}${log.asset_import_id}/`)).json()) as {
      status_asset: number
      description: string
      path_file: string
    }
  await waitFor(async () => (await asset()).status_asset === 6, 'the import task to complete', {
    ms: 20_000,
    everyMs: 50,
  })
  expect(await asset()).toMatchObject({ description: '', path_file, status_asset: 6 })
})

/** What productions() and production(id or name) read, as the client sends them, and whether it takes the records. */
async function productionCalls(base: Server, session: Record<string, string>) {
  const get = async (path: string) => {
    const response = await fetch(`${base.api}/${path}`, { headers: session })
    expect([path, response.status]).toEqual([path, 200])
    return response.json() as Promise<any>
  }
  // productions(): GET productions/, every record validated; production(name=...) picks from it.
  const all = (await get('productions/')) as Record<string, unknown>[]
  // production(production_id=1): GET productions/1/, validated.
  const one = (await get('productions/1/')) as Record<string, unknown>
  return { all, one, problems: [...all, one].flatMap(clientProductionProblems) }
}

test('without --default-api-version: productions() would refuse version 1 records; get_from_api(path="productions") reads them; shots and sequences are empty; archiving needs its codename', async () => {
  const session = pythonRequests('ingest', 'correct horse battery')
  const { all, one, problems } = await productionCalls(server, session)
  // The list's one record, then the single record: each with the four devices as objects.
  const refused = ['upload_device', 'audioasset_device', 'imageasset_device', 'videoasset_device'].map(
    (field) => `${field}: int expected, got object`,
  )
  expect(problems).toEqual([...refused, ...refused])
  // The workaround: get_from_api(path="productions") yields the records as they are, following Link.
  expect(all.map((p) => p.name)).toEqual(['Night Shift'])
  expect(one).toMatchObject({
    name: 'Night Shift',
    can_write: true,
    can_delete_assets: false,
    upload_device: { name: 'media' },
  })

  // get_videoasset_shots(1), get_videoasset_sequences(1): an empty list each, which the client validates as one.
  for (const what of ['shots', 'sequences']) {
    const response = await fetch(`${server.api}/videoassets/1/${what}/`, { headers: session })
    expect([what, response.status, await response.json()]).toEqual([what, 200, []])
  }
  // archiv_asset(4, 1, "archive_std", 1) and restore_asset(4, 1): a one-member JSON array; this user
  // lacks browser.archive_mediaasset, so both answer 403 naming it (raise_for_status raises).
  for (const [path, member] of [
    ['archiveactivities/', { content_type_id: 4, asset_id: 1, archive_type: 'archive_std', archive_connector: 1 }],
    ['restoreactivities/', { content_type_id: 4, asset_id: 1 }],
  ] as const) {
    const response = await fetch(`${server.api}/${path}`, {
      method: 'POST',
      headers: { ...session, 'content-type': 'application/json' },
      body: JSON.stringify([member]),
    })
    const body = (await response.json()) as { errors: { code: string; detail: string }[] }
    expect([path, response.status, body.errors[0]!.code, body.errors[0]!.detail]).toEqual([
      path,
      403,
      'permission_denied',
      expect.stringContaining('browser.archive_mediaasset'),
    ])
  }
})

test("archiv_asset, restore_asset and wait_is_production: an archivist's session against the executable", async () => {
  // Prepared by an administrator: an archive device and a user with the codename and write access.
  const vault = tempDir('reelhouse-ml-vault-')
  const device = await call(server, 'POST', '/devices/', admin, { name: 'vault', path: vault, is_archive: true })
  expect(device.status).toBe(201)
  for (const args of [
    ['user', 'add', 'archivist'],
    ['user', 'grant', 'archivist', '--production', 'Night Shift', '--write'],
    ['user', 'perm', 'add', 'archivist', 'browser.archive_mediaasset'],
  ])
    expect((await runCli([...args, '--data', data])).code).toBe(0)
  expect((await runCli(['user', 'passwd', 'archivist', '--data', data], { input: 'tape and disk\n' })).code).toBe(0)
  const session = pythonRequests('archivist', 'tape and disk')
  const assets = (await (await fetch(`${server.api}/videoassets/?limit=100`, { headers: session })).json()) as {
    id: number
    name: string
    path_file: string
  }[]
  const clip = assets.find((a) => a.name === 'A001C005')!
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${server.api}/${path}`, {
      method: 'POST',
      headers: { ...session, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, json: (await response.json()) as { tasks: { url: string }[] } }
  }
  /** Polls a task's url (the client only polls the asset; this waits for the work to be seen through). */
  const ended = async (url: string) => {
    let task: { state: string; error: string } = { state: 'queued', error: '' }
    await waitFor(async () => {
      task = (await (await fetch(new URL(url, server.api), { headers: session })).json()) as typeof task
      return task.state === 'done' || task.state === 'failed'
    }, `the task ${url} to end`)
    return task
  }
  /** wait_is_production(asset_id): GET the asset until is_production is true. */
  const waitIsProduction = () =>
    waitFor(async () => {
      const asset = (await (await fetch(`${server.api}/videoassets/${clip.id}/`, { headers: session })).json()) as {
        is_production: boolean
      }
      return asset.is_production
    }, 'the asset to be in production again')

  // archiv_asset(4, id, "archive_std", <the connector>): the archive device by id.
  const archived = await post('archiveactivities/', [
    { content_type_id: 4, asset_id: clip.id, archive_type: 'archive_std', archive_connector: device.json.id },
  ])
  expect(archived.status).toBe(202)
  expect(await ended(archived.json.tasks[0]!.url)).toMatchObject({ state: 'done', error: '' })
  const record = (await (await fetch(`${server.api}/videoassets/${clip.id}/`, { headers: session })).json()) as Record<
    string,
    unknown
  >
  expect(record).toMatchObject({
    is_archive: true,
    is_production: true,
    archive_details: { archive_type: 'archive_std', original_path: clip.path_file },
  })
  const handle = (record.archive_details as { archive_handle: string }).archive_handle
  expect(readFileSync(handle, 'utf8')).toBe('A001C005')

  // The online copy purged (our extension, `purge`, which the client does not send): archive-only.
  const purged = await post('archiveactivities/', {
    content_type_id: 4,
    asset_id: clip.id,
    archive_type: 'archive_std',
    archive_connector: 'vault',
    purge: true,
  })
  expect(await ended(purged.json.tasks[0]!.url)).toMatchObject({ state: 'done' })
  expect(existsSync(clip.path_file)).toBe(false)

  // restore_asset(4, id), then wait_is_production(id).
  const restored = await post('restoreactivities/', [{ content_type_id: 4, asset_id: clip.id }])
  expect(restored.status).toBe(202)
  await waitIsProduction()
  expect(readFileSync(clip.path_file, 'utf8')).toBe('A001C005')
})

test('with --default-api-version 2: productions() and production(id or name) take every record, as a user of the client sees them', async () => {
  const data = join(tempDir('reelhouse-ml2-'), 'data')
  const root = tempDir('reelhouse-ml2-media-')
  const flagged = await startServe(data, {
    args: ['--port', '0', '--default-api-version', '2', '--ffmpeg', tempDir('reelhouse-ml2-noff-')],
  })
  const admin = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  expect((await call(flagged, 'POST', '/devices/', admin, { name: 'media', path: root })).status).toBe(201)
  expect(
    (await call(flagged, 'POST', '/devices/', admin, { name: 'drop', path: tempDir('reelhouse-ml2-drop-') })).status,
  ).toBe(201)
  for (const [name, upload] of [
    ['Night Shift', 2],
    ['Day Shift', 1],
  ] as const)
    expect(
      (
        await call(flagged, 'POST', '/productions/', admin, {
          name,
          storage_root: `${root}/${name}`,
          upload_device: upload,
        })
      ).status,
    ).toBe(201)
  for (const args of [
    [
      'user',
      'add',
      'ingest',
      '--perm',
      'browser.delete_audioasset',
      '--perm',
      'browser.delete_imageasset',
      '--perm',
      'browser.delete_videoasset',
    ],
    ['user', 'grant', 'ingest', '--production', 'Night Shift', '--write'],
    ['user', 'grant', 'ingest', '--production', 'Day Shift', '--read'],
  ])
    expect((await runCli([...args, '--data', data])).code).toBe(0)
  expect((await runCli(['user', 'passwd', 'ingest', '--data', data], { input: 'correct horse battery\n' })).code).toBe(
    0,
  )

  const { all, one, problems } = await productionCalls(flagged, pythonRequests('ingest', 'correct horse battery'))
  expect(problems).toEqual([])
  // production(production_name="Day Shift"): the first of productions() with that name.
  expect(all.find((p) => p.name === 'Day Shift')).toMatchObject({
    id: 2,
    can_write: false,
    can_delete_assets: false,
    upload_device: 1,
    members: [2],
  })
  expect(one).toEqual({
    id: 1,
    name: 'Night Shift',
    codename: 'night-shift',
    company: '',
    storage_root: `${root}/Night Shift/`,
    proxy_root: `${root}/Night Shift/proxies/`,
    proxy_url: '',
    upload_root: null,
    move_uploads: false,
    ignore_patterns: [],
    can_write: true,
    can_delete_assets: true,
    san_mount: '',
    export_type: '',
    default_approval_status: 0,
    direct_attached_site: 1,
    network_attached_site: [],
    members: [2],
    member_groups: [],
    upload_device: 2,
    audioasset_device: 1,
    imageasset_device: 1,
    videoasset_device: 1,
    projectasset_device: null,
  })
  expect(await flagged.proc.stop()).toBe(0)
})

test('the client edits and deletes: approve, disapprove, set dates, edit a field and custom metadata, delete with allow_partial', async () => {
  // What an administrator adds for it: the right to change and delete video assets, and a custom
  // metadata field of video assets for edit_meta_field_store to fill.
  for (const codename of ['browser.change_videoasset', 'browser.delete_videoasset'])
    expect((await runCli(['user', 'perm', 'add', 'ingest', codename, '--data', data])).code).toBe(0)
  const set = await call(server, 'POST', '/custommetadatasets/', admin, {
    name: 'Camera report',
    description: 'From the set',
    content_type: 4,
  })
  expect(set.status).toBe(201)
  expect(
    (
      await call(server, 'POST', '/custommetadata/', admin, {
        key: 'camera.model',
        value: 'Camera model',
        custom_metadata_set: set.json.id,
      })
    ).status,
  ).toBe(200)

  const session = pythonRequests('ingest', 'correct horse battery')
  const url = `${server.api}/`
  // session.patch(url + "videoassets/1/", json={field: value}); raise_for_status(); response.json().
  const patch = async (member: Record<string, unknown>) => {
    const response = await fetch(`${url}videoassets/1/`, {
      method: 'PATCH',
      headers: { ...session, 'content-type': 'application/json' },
      body: JSON.stringify(member),
    })
    const record = (await response.json()) as Record<string, any>
    expect([member, response.status, record.id]).toEqual([member, 200, 1])
    return record
  }
  expect((await patch({ status_approval: 1 })).status_approval).toBe(1) // approve_asset(1)
  expect((await patch({ status_approval: 0 })).status_approval).toBe(0) // disapprove_asset(1)
  expect((await patch({ date_del: '2031-01-01' })).date_del).toStartWith('2031-01-01T00:00:00') // set_date_del_asset(1, "2031-01-01")
  expect((await patch({ date_add: '2024-05-01' })).date_add).toStartWith('2024-05-01T00:00:00') // set_date_add_asset(1, "2024-05-01")
  expect((await patch({ description: 'Harbour at night' })).description).toBe('Harbour at night') // edit_asset(1, "description", ...)
  const edited = await patch({ meta_field_store: { 'camera.model': 'ALEXA 35' } }) // edit_meta_field_store(1, {...})
  expect(edited).toMatchObject({
    name: 'A001C001',
    description: 'Harbour at night',
    status_approval: 0,
    meta_field_store: { 'camera.model': 'ALEXA 35' },
  })

  // delete_asset(5, allow_partial=True): DELETE videoassets/5/?allow_partial=true; raise_for_status().
  const gone = await fetch(`${url}videoassets/5/?allow_partial=true`, { method: 'DELETE', headers: session })
  expect([gone.status, await gone.text()]).toEqual([204, ''])
  expect((await fetch(`${url}videoassets/5/`, { headers: session })).status).toBe(404)
  // The record went; its file stays (removing essence is not this call's).
  expect(readFileSync(join(media, 'night-shift', 'footage', 'A001C005.mov'), 'utf8')).toBe('A001C005')
})
