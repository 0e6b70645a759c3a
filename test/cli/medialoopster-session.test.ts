// A medialoopster client runs against Reelhouse unchanged: the exact sequence of calls a session
// of the published Python client makes, replayed with fetch against a real serve. The client logs
// in with HTTP Basic (user name and password, never Token), sends what python-requests sends,
// joins paths onto the API URL it was given, checks the connection with ping/, reads the root,
// walks a paged list through its Link headers with a query parameter of newer servers
// (with_sequences=true), and imports a file with null for the optional members it does not fill.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { type Server, call, killAll, runCli, startServe } from '../helpers/process.ts'
import { waitFor } from '../helpers/wait.ts'

setDefaultTimeout(60_000)

let server: Server
let media: string
const CLIPS = ['A001C001', 'A001C002', 'A001C003', 'A001C004', 'A001C005']

beforeAll(async () => {
  const data = join(tempDir('reelhouse-ml-'), 'data')
  media = tempDir('reelhouse-ml-media-')
  // No ffmpeg (an empty folder): the clips are stand-ins, and the session is about the API; the
  // import then completes with a warning instead of probing.
  // The clips lie in the production's watch folder (its storage device, by default): a settle time
  // longer than the session keeps the one left unregistered (A002C001) out of the catalogue
  // however slow the machine is, as the walk expects.
  server = await startServe(data, { args: ['--port', '0', '--ffmpeg', tempDir('reelhouse-ml-noff-'), '--settle', '3600'] })
  const admin = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  // What an administrator prepared before the client came: a device, a production, its clips,
  // and a user with a password and write access to the production.
  expect((await call(server, 'POST', '/devices/', admin, { name: 'media', path: media })).status).toBe(201)
  expect((await call(server, 'POST', '/productions/', admin, { name: 'Night Shift', storage_root: `${media}/night-shift` })).status).toBe(201)
  mkdirSync(join(media, 'night-shift', 'footage'), { recursive: true })
  for (const name of [...CLIPS, 'A002C001']) writeFileSync(join(media, 'night-shift', 'footage', `${name}.mov`), name)
  for (const name of CLIPS)
    expect((await call(server, 'POST', '/videoassets/', admin, { name, path_file: `${media}/night-shift/footage/${name}.mov`, production_name: 'Night Shift' })).status).toBe(201)
  for (const args of [['user', 'add', 'ingest'], ['user', 'grant', 'ingest', '--production', 'Night Shift', '--write']])
    expect((await runCli([...args, '--data', data])).code).toBe(0)
  expect((await runCli(['user', 'passwd', 'ingest', '--data', data], { input: 'correct horse battery\n' })).code).toBe(0)
})
afterAll(() => killAll())

test("a medialoopster client session: ping, the root, a paged walk through Link headers, an import with nulls", async () => {
  // Medialoopster(url="http://host:port/api/", user="ingest", password=...): a requests.Session
  // with HTTPBasicAuth, which sends these headers on every call.
  const url = `${server.api}/`
  const session = {
    authorization: `Basic ${Buffer.from('ingest:correct horse battery').toString('base64')}`,
    'user-agent': 'python-requests/2.32.3',
    'accept-encoding': 'gzip, deflate',
    accept: '*/*',
    connection: 'keep-alive',
  }
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
        asset_meta: { name: 'A002C001', description: null, path_file, path_proxy: null, date_crt: null, approval: 0, meta_field_store: {} },
        keywords: {},
      },
    }),
  })
  const log = (await imported.json()) as { status: string; asset_import_id: number }
  expect([imported.status, log.status]).toEqual([201, 'asset_creation_completed'])
  // The client follows the import by reading the asset (its status goes to 6 when the task ends).
  const asset = async () => (await (await get(`${resources.videoassets}${log.asset_import_id}/`)).json()) as { status_asset: number; description: string; path_file: string }
  await waitFor(async () => (await asset()).status_asset === 6, 'the import task to complete', { ms: 20_000, everyMs: 50 })
  expect(await asset()).toMatchObject({ description: '', path_file, status_asset: 6 })
})
