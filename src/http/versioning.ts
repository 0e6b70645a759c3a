// API versions (service.md section 3): version 1 is the only one. `application/json;
// version=1`, plain `application/json`, `application/*`, `*/*` or no Accept header select it;
// asking only for another version, or only for something other than JSON, is a 406.
//
// Weights count too (RFC 9110 section 12.5.1, issue 27): q=0 means "not acceptable", so
// `application/json;q=0` or `text/html, */*;q=0` is a 406, not JSON. Of the ranges that match
// our answer, the most specific one gives its weight (`*/*;q=0, application/json` is served,
// `application/json;q=0, */*` is not). A range whose q is not a weight (0 to 1, at most three
// decimals) is skipped as unreadable, and the detail of the 406 it may lead to says so.
import { AppError } from './errors.ts'

/** How specific each range that matches application/json is; a version=1 parameter adds one. */
const SPECIFICITY: Record<string, number> = { 'application/json': 2, 'application/*': 1, '*/*': 0 }
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

export function checkAccept(accept: string | null): void {
  // The forms nearly every client sends, answered without parsing.
  if (!accept || accept === 'application/json' || accept === '*/*') return
  let best = -1
  let weight = 0
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
      const name = param.slice(0, at < 0 ? param.length : at).trim().toLowerCase()
      const value = at < 0 ? '' : param.slice(at + 1).trim()
      if (name === 'version') version = value.replace(/"/g, '')
      else if (name === 'q') q = value
    }
    if (version !== undefined && version !== '1') continue
    if (!QVALUE.test(q)) {
      badQ ??= range.trim()
      continue
    }
    const rank = specificity + (version === undefined ? 0 : 1)
    // Equally specific ranges: the highest weight counts, so any of them may accept.
    if (rank > best) [best, weight] = [rank, Number(q)]
    else if (rank === best) weight = Math.max(weight, Number(q))
  }
  if (best >= 0 && weight > 0) return
  throw new AppError(406, 'not_acceptable', refusal(best >= 0, sawJson, badQ))
}

/** Why nothing in the Accept header selects version 1 of the API. */
function refusal(weighedZero: boolean, sawJson: boolean, badQ: string | undefined): string {
  if (weighedZero) return 'The Accept header refuses application/json (q=0), the only type this service answers with.'
  if (badQ !== undefined) return `Not a weight in the Accept header: "${badQ}" (q is 0 to 1 with at most three decimals).`
  if (sawJson) return 'Unsupported API version: this service speaks version 1.'
  return 'This service answers with application/json only.'
}
