// GET /api/{audio,image,video}assets/{id}/proxy/ (docs/api.md, "Playing a proxy"): the asset's
// proxy file, for a <video>, <audio> or <img> of the web page or any client. Readable as the
// record is (404 otherwise); only a regular file inside the production's proxy_root is served,
// opened from the device root without following a link (storage/read.ts), and what is sent is
// that open file: its size, validators and bytes, as a body of known length (Content-Length).
// Ranges, conditional requests and their answers are http/ranges.ts's.
import { Elysia, t } from 'elysia'
import type { MediaKind } from '../../db/tables.ts'
import { type ModuleContext } from '../../http/context.ts'
import { andThen } from '../../db/port.ts'
import { AppError, notFound } from '../../http/errors.ts'
import { setHeaders } from '../../http/head.ts'
import { IdParams, errors, sharedModels } from '../../http/models.ts'
import { notModified, rangeOf, validatorsOf } from '../../http/ranges.ts'
import { type OpenFile, fileBody, openFileInside } from '../../storage/read.ts'
import { PathError } from '../../storage/paths.ts'
import { closeSync } from 'node:fs'
import { TITLES } from './model.ts'
import type { MediaAssets } from './service.ts'
import type { Principal } from '../users/service.ts'

/** Media types by extension, for the proxies ffmpeg makes and the files a rewrap keeps. */
const TYPES: Record<string, string> = {
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  mov: 'video/quicktime',
  mxf: 'application/mxf',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  m4a: 'audio/mp4',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  aac: 'audio/aac',
  flac: 'audio/flac',
  ogg: 'audio/ogg',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  tif: 'image/tiff',
  tiff: 'image/tiff',
}
const conflict = (detail: string) => new AppError(409, 'conflict', detail)

export const proxyType = (path: string) =>
  TYPES[path.slice(path.lastIndexOf('.') + 1).toLowerCase()] ?? 'application/octet-stream'

/**
 * Elysia answers a HEAD with its GET route and then sets Content-Length to the length of the
 * body it reads (none here: the file is not read for a HEAD). The length of the GET is kept here
 * and put back by proxyHeadWrap, around Elysia (app.ts).
 */
const headLengths = new WeakMap<Request, string>()

export function proxyHeadWrap<H extends (request: Request) => unknown>(handle: H, request: Request): H {
  if (request.method !== 'HEAD') return handle
  return ((r: Request) =>
    Promise.resolve(handle(r)).then((response) => {
      const length = headLengths.get(r)
      return length !== undefined && response instanceof Response
        ? setHeaders(response, { 'content-length': length })
        : response
    })) as H
}

/**
 * The answer for the open regular file `file` (taken: it is closed, or handed to the body):
 * validators, a conditional 304, one byte range (206) or the whole file, and a HEAD without a
 * body. `cacheControl` says how long a copy may be kept (a proxy: ask again; a picture asked
 * for by its current version: for good).
 */
export function serveOpenFile(
  file: OpenFile,
  request: Request,
  answer: { type: string; cacheControl: string },
): Response {
  try {
    const size = file.stat.size
    const v = validatorsOf(file.stat)
    const headers: Record<string, string> = {
      'content-type': answer.type,
      'accept-ranges': 'bytes',
      etag: v.etag,
      'last-modified': v.lastModified,
      // Readable only with the user's credentials: no shared cache keeps it (private).
      'cache-control': answer.cacheControl,
      'x-content-type-options': 'nosniff',
    }
    if (notModified(request, v)) {
      closeSync(file.fd)
      return new Response(null, { status: 304, headers })
    }
    const range = rangeOf(request, size, v)
    const [start, end] = range ? [range.start, range.end] : [0, size - 1]
    headers['content-length'] = String(end - start + 1)
    if (range) headers['content-range'] = `bytes ${start}-${end}/${size}`
    const status = range ? 206 : 200
    // A HEAD, or an empty file: nothing to read.
    if (request.method === 'HEAD' || end < start) {
      closeSync(file.fd)
      headLengths.set(request, headers['content-length'])
      return new Response(null, { status, headers })
    }
    return new Response(fileBody(file, start, end), { status, headers })
  } catch (error) {
    closeSync(file.fd)
    throw error
  }
}

const EXAMPLE_TYPE: Record<MediaKind, string> = { video: 'video/mp4', audio: 'audio/mp4', image: 'image/jpeg' }

export const proxyFileModule = (ctx: ModuleContext, media: MediaAssets, kind: MediaKind) => {
  const noun = TITLES[kind].replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase()
  const bytes = (description: string) =>
    t.String({
      contentMediaType: EXAMPLE_TYPE[kind],
      description,
      examples: [`(the bytes of the proxy, ${EXAMPLE_TYPE[kind]})`],
    })

  // The asset read through the port (the value itself on SQLite, where the handler stays a plain
  // call), then the file opened and sent.
  const serve = ({ params, user, request }: { params: { id: number }; user: Principal; request: Request }) =>
    andThen(ctx.port.run(media.proxyOf(kind, params.id, user)), (at) => send(at, request))

  const send = (
    { path, proxyRoot, devicePath }: { path: string; proxyRoot: string; devicePath: string },
    request: Request,
  ) => {
    if (!path) throw notFound(`This ${noun} has no proxy.`)
    let file: OpenFile | undefined
    try {
      file = devicePath ? openFileInside(devicePath, proxyRoot, path) : undefined
    } catch (error) {
      // The proxy_root is reached through a symbolic link: refused in the words of every other use of it.
      if (error instanceof PathError) throw conflict(`The proxy file of this ${noun} is not served: ${error.message}`)
      throw error
    }
    if (!file)
      throw notFound(
        `The proxy file of this ${noun} is missing, or not a regular file inside its production's proxy_root.`,
      )
    return serveOpenFile(file, request, { type: proxyType(path), cacheControl: 'private, no-cache' })
  }

  return new Elysia({ prefix: `/${kind}assets`, tags: [TITLES[kind]] })
    .use(sharedModels)
    .use(ctx.auth)
    .get('/:id/proxy', serve, {
      auth: true,
      params: IdParams,
      response: {
        200: bytes('The whole proxy file'),
        206: bytes('The byte range asked for (Content-Range says which)'),
        304: t.Void({
          description: 'Not modified: If-None-Match holds the ETag (or If-Modified-Since is not before Last-Modified)',
        }),
        ...errors(404, 409, 416),
      },
      detail: {
        summary: `The proxy file of a ${TITLES[kind]} (extension)`,
        description:
          `Streams the proxy (path_proxy) for playing or viewing, with its Content-Type by extension, Content-Length, Accept-Ranges: bytes, a strong ETag and Last-Modified. ` +
          'One byte range (Range: bytes=START-END, START- or -SUFFIX) answers 206 with Content-Range; a range beyond the end is 416 range_not_satisfiable ' +
          '(Content-Range: bytes */SIZE); several ranges, or an If-Range that no longer matches the file (an ETag or the exact Last-Modified), get the whole file (200). ' +
          'If-None-Match or If-Modified-Since that match: 304. Readable as the record is: an asset the user cannot read is 404. 404 too when the asset has no proxy, ' +
          "or when the file is missing, is not a regular file, or does not lie inside the production's proxy_root (reached without following a link). " +
          "409 when the production's proxy_root is reached through a symbolic link (or leads outside its device through one): nothing is read there. " +
          'Served whatever Accept says (a media element does not ask for JSON); errors are JSON.',
      },
    })
}
