// The pictures of a media asset (docs/api.md, "Pictures"; docs/media.md, "Pictures"): the files
// media/pictures.ts makes beside the proxy, served as the proxy is (proxyfile.ts: readable as
// the record is, only a regular file inside the production's proxy_root reached without a
// link, ETag, ranges), and the asset's fields that point at them (poster_url, thumbnail_url,
// path_thumbnail, is_proxy_available, strip_url), which the single-record answers carry.
//
// Which pictures an asset has is read from the proxy folder when a record is answered: the
// catalogue keeps no column for them (path_proxy names the proxy; the pictures follow its name).
// A list's rows carry them too, from the columns alone (completeListRow): a look at the disk per row
// would cost a page of 100 assets 400 opens on a network share, so the proxy run records its
// pictures' versions (the `pictures` column) and a row's URLs are made of them and of path_proxy.
//
// URLs are absolute (the medialoopster client takes them as HttpUrl) and end with ?v=<version>
// of the file (its size, time and identity): a picture made again has a new URL, so an answer
// to a request naming the current version may be kept for good (Cache-Control: immutable);
// any other (no v, an old one) asks again with its ETag.
import { createHash } from 'node:crypto'
import { closeSync, readSync, statSync } from 'node:fs'
import { Elysia, t } from 'elysia'
import type { Work } from '../../db/port.ts'
import type { MediaKind, PictureVersions } from '../../db/tables.ts'
import { type ModuleContext } from '../../http/context.ts'
import { andThen } from '../../db/port.ts'
import { AppError, notFound } from '../../http/errors.ts'
import { IdParams, errors, sharedModels } from '../../http/models.ts'
import { notModified, validatorsOf } from '../../http/ranges.ts'
import { PICTURES_OF, PICTURE_SUFFIX, type PictureName } from '../../media/pictures.ts'
import { PathError } from '../../storage/paths.ts'
import { type OpenFile, openFileInside } from '../../storage/read.ts'
import type { Principal } from '../users/service.ts'
import { type MediaRow, TITLES } from './model.ts'
import { serveOpenFile } from './proxyfile.ts'
import type { MediaAssets, ProxyFolder } from './service.ts'

/** A copy of a picture asked for by its current version may be kept for good: its URL changes with it. */
const IMMUTABLE = 'private, max-age=31536000, immutable'
const REVALIDATE = 'private, no-cache'
const TYPES: Record<PictureName, string> = {
  poster: 'image/jpeg',
  strip: 'image/jpeg',
  index: 'application/json',
  thumb: 'image/jpeg',
  wave: 'image/png',
}
/** What GET .../poster/ serves of each kind: the first of its pictures. */
const POSTER_OF = (kind: MediaKind): PictureName => PICTURES_OF[kind][0]!

/** The picture fields of a record (MediaAssetDetail's). */
export type PictureFields = {
  poster_url: string
  thumbnail_url: string
  path_thumbnail: string
  is_proxy_available: boolean
  strip_url?: string
}

/** The version a URL carries: a short hash of the file's validators (size, time, identity). */
export const versionOf = (stat: OpenFile['stat']) =>
  createHash('sha1').update(validatorsOf(stat).etag).digest('hex').slice(0, 10)

/** The path of picture `which` beside the proxy `proxyPath` (its name without the extension, then the suffix). */
export function picturePath(proxyPath: string, which: PictureName): string {
  const slash = Math.max(proxyPath.lastIndexOf('/'), proxyPath.lastIndexOf('\\'))
  const dot = proxyPath.lastIndexOf('.')
  return (dot > slash ? proxyPath.slice(0, dot) : proxyPath) + PICTURE_SUFFIX[which]
}

/** The file's stat if it is a regular file inside the proxy root (read.ts), the descriptor closed; undefined otherwise. */
function statInside(folder: ProxyFolder, path: string): OpenFile['stat'] | undefined {
  if (!folder.devicePath || !path) return undefined
  let file: OpenFile | undefined
  try {
    file = openFileInside(folder.devicePath, folder.proxyRoot, path)
  } catch (error) {
    // A proxy_root reached through a link: nothing there is served, so nothing there is offered.
    if (error instanceof PathError) return undefined
    throw error
  }
  if (!file) return undefined
  closeSync(file.fd)
  return file.stat
}

/**
 * The picture fields of `row` (a `kind` asset), with URLs on `base` (ctx.baseOf): every field
 * empty (false) for an asset without a proxy, and each picture's only when its file is there.
 * The production's proxy folder is read through the port; the files are looked at here.
 */
export function* pictureFields(media: MediaAssets, kind: MediaKind, row: MediaRow, base: string): Work<PictureFields> {
  const none: PictureFields = { poster_url: '', thumbnail_url: '', path_thumbnail: '', is_proxy_available: false }
  if (kind === 'video') none.strip_url = ''
  if (!row.path_proxy) return none
  const folder = yield* media.proxyFolderOf(row.production)
  const fields = { ...none, is_proxy_available: statInside(folder, row.path_proxy) !== undefined }
  const url = (route: string, stat: OpenFile['stat']) =>
    `${base}/api/${kind}assets/${row.id}/${route}/?v=${versionOf(stat)}`
  const posterPath = picturePath(row.path_proxy, POSTER_OF(kind))
  const poster = statInside(folder, posterPath)
  if (poster) {
    fields.poster_url = fields.thumbnail_url = url('poster', poster)
    fields.path_thumbnail = posterPath
  }
  if (kind === 'video') {
    const sprite = statInside(folder, picturePath(row.path_proxy, 'strip'))
    const index = sprite && statInside(folder, picturePath(row.path_proxy, 'index'))
    if (sprite && index) fields.strip_url = url('strip/index', sprite)
  }
  return fields
}

/**
 * The versions of the pictures a proxy run made (media/proxy.ts Made's `pictures`), for the
 * asset's `pictures` column: the poster (the first picture of its kind) and a video's strip,
 * each only when its file is there. A stat of the path is enough here: the value only names the
 * file in URLs, and the file served is checked as it is opened.
 */
export function pictureVersionsOf(kind: MediaKind, made: Partial<Record<PictureName, string>>): PictureVersions {
  const version = (path: string | undefined) => {
    if (!path) return undefined
    try {
      return versionOf(statSync(path))
    } catch {
      return undefined
    }
  }
  const versions: PictureVersions = {}
  const poster = version(made[POSTER_OF(kind)])
  if (poster) versions.poster = poster
  const strip = kind === 'video' && made.index ? version(made.strip) : undefined
  if (strip) versions.strip = strip
  return versions
}

/**
 * The picture fields of a list's row, from its columns alone (no look at the disk, see the head of
 * this file): poster_url and thumbnail_url from the poster's version, path_thumbnail beside
 * path_proxy, is_proxy_available when a proxy is recorded, and a video's strip_url. The row's
 * path_proxy and pictures, read only for this, are taken out, so that the record is MediaAsset's
 * fields and then these.
 */
export function completeListRow(kind: MediaKind, base: string): (row: Record<string, unknown>) => void {
  const urls = pictureUrls(kind, base)
  return (row) => {
    const proxy = row.path_proxy as string
    const versions = row.pictures as PictureVersions
    delete row.path_proxy
    delete row.pictures
    const made = urls(row.id as number, proxy, versions)
    row.poster_url = made.poster_url
    row.thumbnail_url = made.poster_url
    row.path_thumbnail = made.poster_url ? picturePath(proxy, POSTER_OF(kind)) : ''
    row.is_proxy_available = proxy !== ''
    if (made.strip_url !== undefined) row.strip_url = made.strip_url
  }
}

/**
 * The URLs of a `kind` asset's pictures on `base`, from its path_proxy and `pictures` column
 * (a list's row, a search hit): '' where there is none; strip_url for a video only.
 */
export function pictureUrls(
  kind: MediaKind,
  base: string,
): (id: number, proxy: string, versions: PictureVersions) => { poster_url: string; strip_url?: string } {
  const prefix = `${base}/api/${kind}assets/`
  return (id, proxy, versions) => {
    const poster_url = proxy && versions.poster ? `${prefix}${id}/poster/?v=${versions.poster}` : ''
    if (kind !== 'video') return { poster_url }
    return { poster_url, strip_url: proxy && versions.strip ? `${prefix}${id}/strip/index/?v=${versions.strip}` : '' }
  }
}

/** The read-only picture fields an update is told about (edit.ts refuseReadOnly's texts). */
export const PICTURE_READ_ONLY: Record<string, string> = {
  poster_url: 'poster_url is set by the service: the URL of the picture made with the proxy.',
  thumbnail_url: 'thumbnail_url is set by the service: the URL of the picture made with the proxy.',
  path_thumbnail: 'path_thumbnail is set by the service: the file of the picture made with the proxy.',
  is_proxy_available: 'is_proxy_available is set by the service: whether the proxy file is there.',
  strip_url: 'strip_url is set by the service: the URL of the thumbnail strip made with the proxy.',
}

const conflict = (detail: string) => new AppError(409, 'conflict', detail)

/** An asset's proxy and the folder it is served from (MediaAssets.proxyOf), read for a user who can read the asset. */
type ProxyAt = { path: string } & ProxyFolder

/** The picture `which` beside the proxy `at`, open; 404 (or 409 for a proxy_root behind a link) otherwise. */
function openPicture(at: ProxyAt, kind: MediaKind, which: PictureName): { file: OpenFile; path: string } {
  const noun = TITLES[kind]
  const { path: proxy, proxyRoot, devicePath } = at
  if (!proxy) throw notFound(`This ${noun} has no proxy, so no pictures.`)
  const path = picturePath(proxy, which)
  let file: OpenFile | undefined
  try {
    file = devicePath ? openFileInside(devicePath, proxyRoot, path) : undefined
  } catch (error) {
    if (error instanceof PathError) throw conflict(`The pictures of this ${noun} are not served: ${error.message}`)
    throw error
  }
  if (!file)
    throw notFound(`This ${noun} has no such picture (it is made with the proxy: POST .../proxy/ makes it again).`)
  return { file, path }
}

/** The open file as the answer, kept for good when the request names its current version. */
function sendPicture(file: OpenFile, request: Request, which: PictureName): Response {
  const asked = new URL(request.url).searchParams.get('v')
  const cacheControl = asked !== null && asked === versionOf(file.stat) ? IMMUTABLE : REVALIDATE
  return serveOpenFile(file, request, { type: TYPES[which], cacheControl })
}

/** The strip's index as stored, with the sprite's URL; 404 when the file is not an index. */
function stripIndexAnswer(at: ProxyAt, id: number, request: Request, base: string): Response {
  const sprite = openPicture(at, 'video', 'strip')
  closeSync(sprite.file.fd)
  const { file } = openPicture(at, 'video', 'index')
  let text: string
  try {
    const buffer = Buffer.alloc(Math.min(file.stat.size, 64 * 1024))
    text = buffer.toString('utf8', 0, readSync(file.fd, buffer, 0, buffer.length, 0))
  } finally {
    closeSync(file.fd)
  }
  let index: unknown
  try {
    index = JSON.parse(text)
  } catch {
    index = undefined
  }
  if (!index || typeof index !== 'object' || Array.isArray(index))
    throw notFound('The strip index of this VideoAsset cannot be read.')
  const version = versionOf(sprite.file.stat)
  // The index and the sprite it names: a new sprite is a new answer.
  const etag = `"${versionOf(file.stat)}-${version}"`
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    etag,
    'cache-control': new URL(request.url).searchParams.get('v') === version ? IMMUTABLE : REVALIDATE,
  }
  if (notModified(request, { etag, lastModified: new Date(file.stat.mtimeMs).toUTCString() }))
    return new Response(null, { status: 304, headers })
  const url = `${base}/api/videoassets/${id}/strip/?v=${version}`
  return new Response(JSON.stringify({ ...index, url }), { status: 200, headers })
}

/** The index as answered (docs/api.md, Pictures). */
export const StripIndex = t.Object(
  {
    interval_ms: t.Integer({ description: 'A tile every this many milliseconds, the first at 0' }),
    count: t.Integer({ description: 'Tiles in the sprite (left to right, then top to bottom)' }),
    columns: t.Integer(),
    rows: t.Integer(),
    tile_width: t.Integer({ description: 'Pixels' }),
    tile_height: t.Integer({ description: 'Pixels' }),
    url: t.String({ description: 'The sprite sheet (absolute, with its version)' }),
  },
  {
    description: "The thumbnail strip's index: where tile n (0-based) shows the clip at n × interval_ms",
    examples: [
      {
        interval_ms: 2000,
        count: 15,
        columns: 10,
        rows: 2,
        tile_width: 160,
        tile_height: 90,
        url: 'http://127.0.0.1:8000/api/videoassets/1/strip/?v=3f1a9c0b7e',
      },
    ],
  },
)

const PictureQuery = t.Object({
  v: t.Optional(
    t.String({
      maxLength: 64,
      description:
        "The picture's version, as the asset's URL names it: when it is the current one, the answer may be kept for good",
    }),
  ),
})

const NOT_MODIFIED = t.Void({ description: 'Not modified: If-None-Match holds the ETag' })

export const picturesModule = (ctx: ModuleContext, media: MediaAssets, kind: MediaKind) => {
  const poster = POSTER_OF(kind)
  const what = { poster: 'poster frame', thumb: 'thumbnail', wave: 'waveform picture' }[poster as string]!
  const bytes = (type: string, description: string) =>
    t.String({ contentMediaType: type, description, examples: [`(the bytes of the ${what}, ${type})`] })
  type Ctx = { params: { id: number }; user: Principal; request: Request }
  // The asset read through the port (the value itself on SQLite, so that these handlers stay
  // plain calls there), then the file opened and sent.
  const served = ({ params, user }: Ctx, answer: (at: ProxyAt) => Response) =>
    andThen(ctx.port.run(media.proxyOf(kind, params.id, user)), answer)
  const routes = new Elysia({ prefix: `/${kind}assets`, tags: [TITLES[kind]] })
    .use(sharedModels)
    .use(ctx.auth)
    .get(
      '/:id/poster',
      (c: Ctx) => served(c, (at) => sendPicture(openPicture(at, kind, poster).file, c.request, poster)),
      {
        auth: true,
        params: IdParams,
        query: PictureQuery,
        response: {
          200: bytes(TYPES[poster], `The ${what}`),
          206: bytes(TYPES[poster], 'The byte range asked for'),
          304: NOT_MODIFIED,
          ...errors(404, 409, 416),
        },
        detail: {
          summary: `The ${what} of a ${TITLES[kind]} (extension)`,
          description:
            `The ${what} made with the proxy (docs/media.md, Pictures), as poster_url and thumbnail_url name it; served as the proxy is: readable as the record is (404 otherwise), ` +
            "only a regular file inside the production's proxy_root, ETag and Last-Modified, one byte range, 304 on If-None-Match. With ?v= the current version (as the URL in the record carries it) " +
            'the answer says Cache-Control: private, max-age=31536000, immutable; else private, no-cache. 404 when the asset has no proxy or no such picture.',
        },
      },
    )
  if (kind !== 'video') return routes
  return routes
    .model({ StripIndex })
    .get(
      '/:id/strip',
      (c: Ctx) => served(c, (at) => sendPicture(openPicture(at, kind, 'strip').file, c.request, 'strip')),
      {
        auth: true,
        params: IdParams,
        query: PictureQuery,
        response: {
          200: bytes('image/jpeg', 'The sprite sheet of the thumbnail strip'),
          206: bytes('image/jpeg', 'The byte range asked for'),
          304: NOT_MODIFIED,
          ...errors(404, 409, 416),
        },
        detail: {
          summary: 'The thumbnail strip of a VideoAsset: its sprite sheet (extension)',
          description:
            'One JPEG of tiles, a tile every interval_ms (GET .../strip/index/ says how they lie). Served as the poster frame is (caching, ranges, 404 and 409 alike).',
        },
      },
    )
    .get(
      '/:id/strip/index',
      (c: Ctx) => served(c, (at) => stripIndexAnswer(at, c.params.id, c.request, ctx.baseOf(c.request))),
      {
        auth: true,
        params: IdParams,
        query: PictureQuery,
        response: { 200: 'StripIndex', 304: NOT_MODIFIED, ...errors(404, 409) },
        detail: {
          summary: 'The thumbnail strip of a VideoAsset: its index (extension)',
          description:
            'interval_ms, count, columns, rows, tile_width and tile_height of the sprite, and url: the sprite with its version. Tile n shows the clip at n × interval_ms, at ' +
            'column n % columns and row floor(n / columns). As strip_url names it; readable as the record is; ETag (of the index and the sprite), 304 on If-None-Match; ' +
            'immutable as the poster frame when ?v= is current. 404 when the asset has no strip.',
        },
      },
    )
}
