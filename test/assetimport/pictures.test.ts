// Pictures through the API (docs/api.md "Pictures", docs/media.md "Pictures" and "Proxy names"):
// an import makes the proxy, named after the source, and its pictures beside it in the same
// ffmpeg run; the record carries poster_url, thumbnail_url, path_thumbnail, is_proxy_available
// and strip_url; GET .../poster/, .../strip/ and .../strip/index/ serve them as the proxy is
// served (readable as the record, ETag, 304, ranges, immutable at their current version); a
// remake makes them again, a delete removes them, and they are never taken for input.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { expectError } from '../helpers/envelope.ts'
import { IMPORT, type Kind, importBody, placeClip, removeScratch, scratchDir } from '../helpers/imports.ts'
import { type Media, ffprobeJson, hasFfmpeg, makeMedia } from '../helpers/media.ts'

let t: TestApp
let root: string
let show: { id: number; name: string; proxy_root: string }
let media: Media
/** Several ffmpeg runs each on a machine busy with other tests: the limit is not what is tested. */
const SLOW = 120_000

beforeAll(async () => {
  t = testApp(undefined, { tasks: true })
  ;({ root, production: show } = await seedProduction(t))
  media = await makeMedia(scratchDir('reelhouse-pictures-media-'), ['video', 'png', 'audio'])
}, SLOW)
afterAll(async () => {
  await t.stop()
  removeScratch()
})

/** Imports a copy of `from` named `name` (in a folder of its own) and waits for its task; answers the record. */
async function imported(from: string, name: string, kind: Kind = 'video', folder = 'incoming') {
  const path = placeClip(from, join(root, folder, name))
  const r = await t.post(IMPORT, importBody(path, {}, {}, { type: kind }))
  expect(r.status).toBe(201)
  await t.runner.idle()
  const log = (await t.get(`/api/importlogs/?asset_path=${encodeURIComponent(path)}`)).json.at(-1)
  expect([log.status, log.warning]).toEqual(['import_completed', {}])
  return (await t.get(`/api/${kind}assets/${r.json.asset_import_id}/`)).json
}

/** A request whose body is read as bytes (a picture), through the app. */
async function raw(url: string, headers: Record<string, string> = {}, key: string | null = t.adminKey, method = 'GET') {
  const auth: Record<string, string> = key === null ? {} : { authorization: `Token ${key}` }
  const r = await t.app.handle(new Request(url, { method, headers: { ...auth, ...headers } }))
  return { status: r.status, headers: r.headers, bytes: new Uint8Array(await r.arrayBuffer()) }
}
const pathOf = (url: string) => new URL(url).pathname

/** The picture fields of asset `id`'s row in its production's list with ?pictures=true (a page and the streamed list agree). */
async function listed(id: number, kind: Kind = 'video') {
  const pick = (rows: Record<string, unknown>[]) => {
    const row = rows.find((r) => r.id === id)
    if (!row) return undefined
    const { poster_url, thumbnail_url, path_thumbnail, is_proxy_available, strip_url, ...rest } = row
    expect(Object.keys(rest)).not.toContain('pictures')
    expect(Object.keys(rest)).not.toContain('path_proxy')
    return { poster_url, thumbnail_url, path_thumbnail, is_proxy_available, strip_url }
  }
  const page = pick((await t.get(`/api/${kind}assets/?production=${show.id}&pictures=true&limit=100`)).json)
  expect(pick((await t.get(`/api/${kind}assets/?production=${show.id}&pictures=1`)).json)).toEqual(page)
  // Without ?pictures=true the row is api.md's record as before.
  const plain = (await t.get(`/api/${kind}assets/?production=${show.id}&limit=100`)).json.find(
    (r: { id: number }) => r.id === id,
  )
  expect(Object.keys(plain)).not.toContain('poster_url')
  return page
}
const VERSION = /\?v=[0-9a-f]{10}$/

describe.skipIf(!hasFfmpeg)('an imported clip', () => {
  let clip: Record<string, any>

  test(
    'its proxy is named after the source; its poster frame and strip lie beside it; the record points at them',
    async () => {
      clip = await imported(media.video, 'A001C003.mov')
      const stem = join(show.proxy_root, 'A001C003')
      // A copy: bun's toMatchObject puts its matchers into the object it was given.
      expect({ ...clip }).toMatchObject({
        path_proxy: `${stem}.mp4`,
        is_proxy_available: true,
        path_thumbnail: `${stem}.poster.jpg`,
        poster_url: expect.stringMatching(new RegExp(`^http://localhost/api/videoassets/${clip.id}/poster/\\?v=`)),
        strip_url: expect.stringMatching(new RegExp(`^http://localhost/api/videoassets/${clip.id}/strip/index/\\?v=`)),
      })
      expect(clip.poster_url).toMatch(VERSION)
      expect(clip.thumbnail_url).toBe(clip.poster_url)
      expect(
        readdirSync(show.proxy_root)
          .filter((f) => f.startsWith('A001C003'))
          .sort(),
      ).toEqual(['A001C003.mp4', 'A001C003.poster.jpg', 'A001C003.strip.jpg', 'A001C003.strip.json'])
      expect(ffprobeJson(`${stem}.poster.jpg`).streams[0]).toMatchObject({ width: 320, height: 240 })
      // A list's row carries the same picture fields, made of its columns.
      expect(await listed(clip.id)).toEqual({
        poster_url: clip.poster_url,
        thumbnail_url: clip.poster_url,
        path_thumbnail: clip.path_thumbnail,
        is_proxy_available: true,
        strip_url: clip.strip_url,
      })
      // A search hit carries them when asked (?pictures=true), and only then.
      const hit = async (extra: string) =>
        (await t.get(`/api/search/?q=C003&type=videoasset${extra}`)).json.find((h: { id: number }) => h.id === clip.id)
      expect(await hit('&pictures=true')).toMatchObject({ poster_url: clip.poster_url, strip_url: clip.strip_url })
      expect(Object.keys(await hit(''))).not.toContain('poster_url')
    },
    SLOW,
  )

  test('GET poster_url: the JPEG with an ETag, kept for good at its version; 304, a range, HEAD; without v it is asked again', async () => {
    const r = await raw(clip.poster_url)
    const size = statSync(clip.path_thumbnail).size
    expect([r.status, r.headers.get('content-type'), r.bytes.length]).toEqual([200, 'image/jpeg', size])
    expect(r.headers.get('cache-control')).toBe('private, max-age=31536000, immutable')
    const etag = r.headers.get('etag')!
    expect((await raw(clip.poster_url, { 'if-none-match': etag })).status).toBe(304)
    const part = await raw(clip.poster_url, { range: 'bytes=0-9' })
    expect([part.status, part.headers.get('content-range'), part.bytes.length]).toEqual([206, `bytes 0-9/${size}`, 10])
    const head = await raw(clip.poster_url, {}, t.adminKey, 'HEAD')
    expect([head.status, head.headers.get('content-length'), head.bytes.length]).toEqual([200, String(size), 0])
    // An <img> asks with image/* in Accept: served all the same.
    expect((await raw(clip.poster_url, { accept: 'image/avif,image/webp,*/*;q=0.8' })).status).toBe(200)
    for (const url of [
      `http://localhost${pathOf(clip.poster_url)}`,
      `http://localhost${pathOf(clip.poster_url)}?v=0000000000`,
    ])
      expect((await raw(url)).headers.get('cache-control')).toBe('private, no-cache')
  })

  test('the strip: its index names the sprite, which is a JPEG of the index tiles', async () => {
    const index = await t.get(pathOf(clip.strip_url))
    expect(index.status).toBe(200)
    expect(index.json).toEqual({
      interval_ms: 2000,
      count: 1,
      columns: 1,
      rows: 1,
      tile_width: 160,
      tile_height: 120,
      url: expect.stringMatching(new RegExp(`^http://localhost/api/videoassets/${clip.id}/strip/\\?v=[0-9a-f]{10}$`)),
    })
    const etag = index.headers.get('etag')!
    expect((await t.get(pathOf(clip.strip_url), { headers: { 'if-none-match': etag } })).status).toBe(304)
    const sprite = await raw(index.json.url)
    expect([sprite.status, sprite.headers.get('content-type')]).toEqual([200, 'image/jpeg'])
    expect(sprite.bytes.length).toBe(statSync(join(show.proxy_root, 'A001C003.strip.jpg')).size)
  })

  test('readable as the record: another production’s reader gets 404, no key 401; fields sent back as read are accepted', async () => {
    const other = await t.post('/api/productions/', { name: 'Elsewhere', storage_root: `${root}/Elsewhere` })
    const stranger = t.makeUser('picture-stranger', { read: [other.json.id] })
    const reader = t.makeUser('picture-reader', { read: [show.id] })
    for (const url of [clip.poster_url, `http://localhost/api/videoassets/${clip.id}/strip/`, clip.strip_url]) {
      expect((await raw(url, {}, stranger)).status).toBe(404)
      expect((await raw(url, {}, null)).status).toBe(401)
      expect((await raw(url, {}, reader)).status).toBe(200)
    }
    // The record read and sent back: the picture fields are the service's, accepted unchanged.
    const back = await t.request('PUT', `/api/videoassets/${clip.id}/`, { body: { ...clip, description: 'night' } })
    expect([back.status, back.json.poster_url]).toEqual([200, clip.poster_url])
    expectError(
      await t.request('PATCH', `/api/videoassets/${clip.id}/`, { body: { poster_url: 'http://elsewhere/x.jpg' } }),
      400,
      'invalid',
      { pointer: '/poster_url' },
    )
  })

  test(
    'a clip of the same name from another folder: its proxy is <name>_<id>, with its own pictures',
    async () => {
      const twin = await imported(media.video, 'A001C003.mov', 'video', 'card-2')
      expect(twin.path_proxy).toBe(join(show.proxy_root, `A001C003_${twin.id}.mp4`))
      expect(twin.path_thumbnail).toBe(join(show.proxy_root, `A001C003_${twin.id}.poster.jpg`))
      expect(twin.poster_url).not.toBe(clip.poster_url)
    },
    SLOW,
  )

  test(
    'remade with the proxy: new files under the same names, a new version in the URLs',
    async () => {
      const before = statSync(clip.path_thumbnail).ino
      const r = await t.request('POST', `/api/videoassets/${clip.id}/proxy/`)
      expect(r.status).toBe(202)
      await t.runner.idle()
      const again = (await t.get(`/api/videoassets/${clip.id}/`)).json
      expect(again.path_thumbnail).toBe(clip.path_thumbnail)
      expect(statSync(again.path_thumbnail).ino).not.toBe(before)
      expect(again.poster_url).not.toBe(clip.poster_url)
      expect((await listed(clip.id))?.poster_url).toBe(again.poster_url)
      // The old version is no longer kept for good.
      expect((await raw(clip.poster_url)).headers.get('cache-control')).toBe('private, no-cache')
      clip = again
    },
    SLOW,
  )

  test('never taken for input: importing a picture is refused (406), as any file of a proxy_root', async () => {
    const r = await t.post(IMPORT, importBody(clip.path_thumbnail))
    expect(r.status).toBe(406)
    expect(r.json.detail).toContain('proxy_root')
  })

  test('removed with the asset', async () => {
    const files = [clip.path_proxy, clip.path_thumbnail, join(show.proxy_root, 'A001C003.strip.jpg')]
    expect(files.map(existsSync)).toEqual([true, true, true])
    expect((await t.request('DELETE', `/api/videoassets/${clip.id}/`)).status).toBe(204)
    expect([...files, join(show.proxy_root, 'A001C003.strip.json')].map(existsSync)).toEqual([
      false,
      false,
      false,
      false,
    ])
    expect((await raw(clip.poster_url)).status).toBe(404)
  })
})

describe.skipIf(!hasFfmpeg)('images and sound', () => {
  test(
    "an image's thumbnail and an audio file's waveform are their poster; neither has a strip",
    async () => {
      const still = await imported(media.png, 'still.png', 'image')
      expect({ ...still }).toMatchObject({
        path_proxy: join(show.proxy_root, 'still.jpg'),
        path_thumbnail: join(show.proxy_root, 'still.thumb.jpg'),
        is_proxy_available: true,
      })
      expect(still.strip_url).toBeUndefined()
      expect((await listed(still.id, 'image'))?.poster_url).toBe(still.poster_url)
      const thumb = await raw(still.poster_url)
      expect([thumb.status, thumb.headers.get('content-type')]).toEqual([200, 'image/jpeg'])
      const sound = await imported(media.audio, 'tone.m4a', 'audio')
      expect(sound.path_proxy).toBe(join(show.proxy_root, 'tone.m4a'))
      expect(sound.path_thumbnail).toBe(join(show.proxy_root, 'tone.wave.png'))
      const wave = await raw(sound.poster_url)
      expect([wave.status, wave.headers.get('content-type')]).toEqual([200, 'image/png'])
      expect((await t.get(`/api/imageassets/${still.id}/strip/`)).status).toBe(404)
    },
    SLOW,
  )
})

test('an asset without a proxy: empty fields, and its pictures are 404', async () => {
  const path = placeClip(undefined, join(root, 'incoming', 'bare.mov'))
  const made = await t.post('/api/videoassets/', { name: 'bare', path_file: path, production: show.id })
  expect(made.status).toBe(201)
  expect(made.json).toMatchObject({
    poster_url: '',
    thumbnail_url: '',
    path_thumbnail: '',
    is_proxy_available: false,
    strip_url: '',
  })
  for (const route of ['poster', 'strip', 'strip/index'])
    expectError(await t.get(`/api/videoassets/${made.json.id}/${route}/`), 404, 'not_found')
})
