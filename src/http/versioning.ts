// API versions (service.md section 3): version 1 is the only one. `application/json;
// version=1`, plain `application/json`, `*/*` or no Accept header select it; asking only for
// another version, or only for something other than JSON, is a 406.
import { AppError } from './errors.ts'

const JSON_RANGES = new Set(['application/json', 'application/*', '*/*'])

export function checkAccept(accept: string | null): void {
  if (!accept || accept === 'application/json' || accept === '*/*') return
  let sawJson = false
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((s) => s.trim())
    if (!JSON_RANGES.has(type.toLowerCase())) continue
    sawJson = true
    const version = params.find((p) => p.toLowerCase().startsWith('version='))?.slice(8).replace(/"/g, '')
    if (version === undefined || version === '1') return
  }
  throw new AppError(
    406,
    'not_acceptable',
    sawJson ? 'Unsupported API version: this service speaks version 1.' : 'This service answers with application/json only.',
  )
}
