// What the published medialoopster Python client (0.2.4 and 0.3.1) requires of a production:
// productions() and production(id or name) validate every record with a pydantic model whose
// fields are listed here, by what pydantic accepts for them (extra fields are ignored). Written
// from the client's published schema; a record this finds no problem with, the client takes.

type Kind = 'int' | 'str' | 'bool' | 'int[]' | 'list' | 'int?'

/** Each required field of the client's Production and its type; `int?` may be missing or null. */
export const CLIENT_PRODUCTION: Record<string, Kind> = {
  id: 'int',
  company: 'str',
  can_write: 'bool',
  can_delete_assets: 'bool',
  name: 'str',
  codename: 'str',
  storage_root: 'str',
  san_mount: 'str',
  proxy_root: 'str',
  proxy_url: 'str',
  export_type: 'str',
  default_approval_status: 'int',
  direct_attached_site: 'int',
  upload_device: 'int',
  audioasset_device: 'int',
  imageasset_device: 'int',
  videoasset_device: 'int',
  projectasset_device: 'int?',
  network_attached_site: 'int[]',
  members: 'list',
  member_groups: 'int[]',
}

const fits: Record<Kind, (v: unknown) => boolean> = {
  int: Number.isInteger,
  str: (v) => typeof v === 'string',
  bool: (v) => typeof v === 'boolean',
  'int[]': (v) => Array.isArray(v) && v.every(Number.isInteger),
  list: Array.isArray,
  'int?': (v) => v === undefined || v === null || Number.isInteger(v),
}

/** What the client's validation would refuse in a production record: one line per field; none when it takes it. */
export function clientProductionProblems(record: Record<string, unknown>): string[] {
  return Object.entries(CLIENT_PRODUCTION).flatMap(([field, kind]) => {
    if (!(field in record) && kind !== 'int?') return [`${field}: missing`]
    const value = record[field]
    return fits[kind](value)
      ? []
      : [
          `${field}: ${kind} expected, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`,
        ]
  })
}
