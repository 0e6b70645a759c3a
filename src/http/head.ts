// The request line and headers, checked before anything else reads the request (docs/api.md,
// Conventions; docs/operations.md, Network): the path every hook and the router see, the Host the server needs to find
// that path (and the absolute URLs it hands out are built on), and the size of the headers.
import { AppError } from './errors.ts'

/**
 * Request line and headers larger than this answer 431 headers_too_large in the envelope. Bun's
 * own HTTP parser, which answers a bare 431 without calling us, is set higher (HTTP_HEADER_LIMIT,
 * by serve) so that requests in between reach this check.
 */
export const MAX_HEADER_BYTES = 16 * 1024
/**
 * Bun's limit, set by serve. Not much higher: Bun's parser reads the headers again from the start
 * whenever more of them arrive, so a client sending them a few bytes at a time costs work growing
 * with the square of this limit; four times Bun's default of 16 KiB is a modest step.
 */
export const HTTP_HEADER_LIMIT = 4 * MAX_HEADER_BYTES

/**
 * The path of a URL exactly as Elysia's router reads it with `standardHostname: false`
 * (src/app.ts): from the first slash at or after offset 7, the end of "http://". That is the real
 * path of every URL checkHead lets through, whatever the host; hooks deciding on the path (auth,
 * Accept) and the router therefore always agree.
 */
export function pathOf(url: string): string {
  const start = url.indexOf('/', 'http://'.length)
  if (start < 0) return '/'
  const query = url.indexOf('?', start)
  return query < 0 ? url.slice(start) : url.slice(start, query)
}

/**
 * What goes before the path in the absolute URLs the API hands out (its root, Link headers):
 * serve's --public-url when the service is reached through a proxy, else http:// and the Host the
 * request was sent to, as its URL already carries them (checkHead lets no other URL through).
 */
export function baseUrlOf(publicUrl: string | undefined): (request: Request) => string {
  if (publicUrl !== undefined) return () => publicUrl
  return (request) => {
    const start = request.url.indexOf('/', 'http://'.length)
    return start < 0 ? request.url : request.url.slice(0, start)
  }
}

/** Throws the envelope answer for a request whose line and headers cannot be served. */
export function checkHead(request: Request) {
  // Bun builds "http://HOST/path" from a usable Host header; without one (HTTP/1.0 with no Host,
  // or a value that is no host name: "a b", "a/b") the URL is the bare path, from which Elysia's
  // router would take a different path than pathOf (RFC 9112 section 3.2 asks for a 400 anyway).
  if (!request.url.startsWith('http://'))
    throw new AppError(400, 'invalid_host', 'The request needs a Host header naming this server.')
  if (headBytes(request) > MAX_HEADER_BYTES)
    throw new AppError(
      431,
      'headers_too_large',
      `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes.`,
    )
}

/** About the size on the wire: request line, then "name: value\r\n" per header. */
function headBytes(request: Request): number {
  let size = request.method.length + request.url.length + 12
  // forEach rather than for...of: no [name, value] array made per header (0.3 against 0.45 µs).
  request.headers.forEach((value, name) => {
    size += name.length + value.length + 4
  })
  return size
}

/**
 * Sets headers on an answer that is already made (the wraps of requestlog.ts and cors.ts, which
 * put their headers on the answer itself rather than in Elysia's set.headers). A Response whose
 * headers are immutable is remade around its body first, once.
 */
export function setHeaders(response: Response, headers: Record<string, string>): Response {
  let answer = response
  for (const name in headers) {
    try {
      answer.headers.set(name, headers[name]!)
    } catch {
      answer = new Response(answer.body, answer)
      answer.headers.set(name, headers[name]!)
    }
  }
  return answer
}
