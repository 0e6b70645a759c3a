// API versions (docs/api.md, Conventions, extended): version 1 is medialoopster's Web API v1;
// version 2 differs only in the Production record, whose four device fields are ids instead of
// Device objects (the shape the published medialoopster client validates). `application/json;
// version=N` asks for version N; plain `application/json`, `application/*`, `*/*` or no Accept
// header get the default version (1, or serve --default-api-version); asking only for another
// version, or only for something other than JSON, is a 406.
//
// Weights count too (RFC 9110 section 12.5.1): q=0 means "not acceptable", so
// `application/json;q=0` or `text/html, */*;q=0` is a 406, not JSON. Each version we can answer
// is weighed on its own: of the ranges that match it (a range naming another version does not),
// the most specific one gives its weight (`*/*;q=0, application/json` is served,
// `application/json;q=0, */*` is not). The heavier version is answered, the default one on a tie.
// A range whose q is not a weight (0 to 1, at most three decimals) is skipped as unreadable, and
// the detail of the 406 it may lead to says so.
import { AppError } from './errors.ts'

export const API_VERSIONS = [1, 2] as const
export type ApiVersion = (typeof API_VERSIONS)[number]

/** How specific each range that matches application/json is; a version parameter adds one. */
const SPECIFICITY: Record<string, number> = { 'application/json': 2, 'application/*': 1, '*/*': 0 }
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

/** The API version a request's Accept header selects; throws 406 not_acceptable when none. */
export function checkAccept(accept: string | null, defaultVersion: ApiVersion = 1): ApiVersion {
  // The forms nearly every client sends, answered without parsing.
  if (!accept || accept === 'application/json' || accept === '*/*') return defaultVersion
  // Per version we answer: the rank of the most specific range matching it, and that range's weight.
  const best = [-1, -1]
  const weight = [0, 0]
  let sawJson = false
  let badQ: string | undefined
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((s) => s.trim())
    const specificity = SPECIFICITY[type.toLowerCase()]
    if (specificity === undefined) continue
    sawJson = true
    let version: string | undefined
    let q = '1'
    for (const param of params) {
      const at = param.indexOf('=')
      const name = param
        .slice(0, at < 0 ? param.length : at)
        .trim()
        .toLowerCase()
      const value = at < 0 ? '' : param.slice(at + 1).trim()
      if (name === 'version') version = value.replace(/"/g, '')
      else if (name === 'q') q = value
    }
    if (!QVALUE.test(q)) {
      badQ ??= range.trim()
      continue
    }
    const rank = specificity + (version === undefined ? 0 : 1)
    API_VERSIONS.forEach((v, i) => {
      if (version !== undefined && version !== String(v)) return
      // Equally specific ranges: the highest weight counts, so any of them may accept.
      if (rank > best[i]!) [best[i], weight[i]] = [rank, Number(q)]
      else if (rank === best[i]) weight[i] = Math.max(weight[i]!, Number(q))
    })
  }
  const [one, two] = weight as [number, number]
  if (one > 0 || two > 0) return one === two ? defaultVersion : one > two ? 1 : 2
  throw new AppError(
    406,
    'not_acceptable',
    refusal(
      best.some((rank) => rank >= 0),
      sawJson,
      badQ,
    ),
  )
}

/** Why nothing in the Accept header selects a version of the API. */
function refusal(weighedZero: boolean, sawJson: boolean, badQ: string | undefined): string {
  if (weighedZero) return 'The Accept header refuses application/json (q=0), the only type this service answers with.'
  if (badQ !== undefined)
    return `Not a weight in the Accept header: "${badQ}" (q is 0 to 1 with at most three decimals).`
  if (sawJson) return UNSUPPORTED_VERSION
  return 'This service answers with application/json only.'
}

/** The detail of a 406 for a version this service does not speak (also the OpenAPI example's). */
export const UNSUPPORTED_VERSION = `Unsupported API version: this service speaks versions ${API_VERSIONS.join(' and ')}.`

const STREAM_SPECIFICITY: Record<string, number> = { 'text/event-stream': 2, 'text/*': 1, '*/*': 0 }

/**
 * The Accept rule of the event stream (GET /api/events/), which has no versions and answers
 * text/event-stream only (what EventSource asks for): served for no Accept header or when the most
 * specific range matching text/event-stream weighs more than 0, the rule checkAccept applies to
 * JSON; else 406 not_acceptable.
 */
export function checkEventStreamAccept(accept: string | null): void {
  if (!accept || accept === 'text/event-stream' || accept === '*/*') return
  let best = -1
  let weight = 0
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((s) => s.trim())
    const specificity = STREAM_SPECIFICITY[type.toLowerCase()]
    if (specificity === undefined) continue
    const q =
      params
        .find((p) => /^q\s*=/i.test(p))
        ?.replace(/^q\s*=/i, '')
        .trim() ?? '1'
    if (!QVALUE.test(q)) continue
    if (specificity > best) [best, weight] = [specificity, Number(q)]
    else if (specificity === best) weight = Math.max(weight, Number(q))
  }
  if (weight > 0) return
  throw new AppError(
    406,
    'not_acceptable',
    'The event stream answers with text/event-stream only: send Accept: text/event-stream, or none.',
  )
}
