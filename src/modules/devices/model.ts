import { type TObject, type TOptional, type TUnknown, Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { PROTOCOLS, type devices } from '../../db/schema.ts'
import { oneOf } from '../../http/models.ts'

const Name = t.String({ minLength: 1, maxLength: 255 })
const NullableText = t.Optional(t.Nullable(t.String({ maxLength: 255 })))


export const Device = t.Object({
  id: Type.Integer(),
  name: t.String({ description: 'Internal name, unique' }),
  display_name: t.String(),
  path: t.String({ description: 'Absolute path as seen by the service, ends with a slash' }),
  is_internal: t.Boolean(),
  is_archive: t.Boolean(),
  autoshot_detection: t.Boolean(),
  allow_direct_writing: t.Boolean(),
  recieve_xml_meta: t.Boolean(),
  protocol: oneOf(PROTOCOLS),
  anonymous: t.Boolean(),
  server: t.Nullable(t.String()),
  username: t.Nullable(t.String()),
  password: t.Nullable(t.String({ description: '"********" when a password is stored; never the password' })),
  transcoding_profile: t.Nullable(Type.Integer()),
  archive_connector: t.Nullable(t.String()),
  passthrough_profiles: t.Array(Type.Integer()),
  write_permission_groups: t.Array(t.String()),
})

export const DeviceCreate = t.Object({
  name: Name,
  path: t.String({ minLength: 1, maxLength: 4096, description: 'Absolute; a missing final slash is added. Need not exist.' }),
  display_name: t.Optional(t.String({ maxLength: 255, description: 'Defaults to name' })),
  is_internal: t.Optional(t.Boolean()),
  is_archive: t.Optional(t.Boolean()),
  autoshot_detection: t.Optional(t.Boolean()),
  allow_direct_writing: t.Optional(t.Boolean()),
  recieve_xml_meta: t.Optional(t.Boolean()),
  protocol: t.Optional(oneOf(PROTOCOLS, { description: 'file (default) or copy: a local folder, watched by change events; smb, nfs and afp are watched by polling' })),
  anonymous: t.Optional(t.Boolean()),
  server: NullableText,
  username: NullableText,
  password: NullableText,
  transcoding_profile: t.Optional(t.Nullable(Type.Integer({ minimum: 1 }))),
  archive_connector: NullableText,
  passthrough_profiles: t.Optional(t.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000 })),
  write_permission_groups: t.Optional(t.Array(t.String({ maxLength: 255 }), { maxItems: 1000 })),
})

/** PATCH/PUT: every create field, optional; id is read-only. */
export const DeviceUpdate = t.Object({
  id: t.Optional(t.Unknown({ description: 'Read-only' })),
  ...Object.fromEntries(Object.entries(DeviceCreate.properties).map(([k, v]) => [k, k === 'name' || k === 'path' ? t.Optional(v) : v])),
  password: t.Optional(t.Nullable(t.String({ maxLength: 255, description: 'A new password; null removes it; "********" (as answered) keeps the stored one' }))),
}) as unknown as TObject<{ id: TOptional<TUnknown> } & { [K in keyof typeof DeviceCreate.properties]: TOptional<(typeof DeviceCreate.properties)[K]> }>

export const DeviceQuery = t.Object({
  path: t.Optional(t.String({ description: 'Only the device with this path (must end with a slash)' })),
})

export const deviceModels = { Device, DeviceCreate }

export type DeviceRow = typeof devices.$inferSelect

export function deviceToApi(row: DeviceRow): typeof Device.static {
  const { date_add: _, password, ...rest } = row
  return { ...rest, password: password === null ? null : '********' }
}
