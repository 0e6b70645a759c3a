// The shapes of a production as the API answers and takes it (TypeBox): the routes (index.ts)
// and the service (service.ts) both use them, so they live apart from either.
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { Device } from '../devices/model.ts'

/**
 * The fields of both versions. Beside the seed's, those the published medialoopster client
 * validates (its Production schema requires them all): the requesting user's rights, the
 * members, and medialoopster's settings that Reelhouse has no use for, at fixed values.
 */
const productionFields = {
  id: Type.Integer(),
  name: t.String(),
  codename: t.String(),
  company: t.String(),
  storage_root: t.String({ description: 'Ends with a slash' }),
  proxy_root: t.String({ description: 'Ends with a slash' }),
  proxy_url: t.String(),
  upload_root: t.Union([t.String(), t.Null()], {
    description:
      "The production's drop folder (ends with a slash) on its upload_device: files dropped there are imported into it. null: the whole upload_device is its watch folder (docs/watcher.md)",
  }),
  move_uploads: t.Boolean({
    description:
      "true: the watcher moves each file it imports from the production's watch folder into the production's area, as an import with move_asset does (STORAGE_ROOT/<video|audio|image>/ when the device for the kind holds the storage_root, else DEVICE/CODENAME/<kind>/); false (the default): the file is catalogued where it was dropped (docs/watcher.md)",
  }),
  ignore_patterns: t.Array(t.String(), {
    description:
      "The production's own ignore patterns: files they name are never imported, by the watcher or by an import. Globs matched without case against a file's path from its device's root (`*`, `?`, `[a-z]`, `**` for any folders; a pattern without / names a file or folder anywhere; a final / folders only); default [] (docs/cards.md, Ignored files)",
  }),
  can_write: t.Boolean({
    description:
      'The requesting user may create, change and delete records in this production (superuser, or write access)',
  }),
  can_delete_assets: t.Boolean({
    description:
      'The requesting user may delete any media asset of this production: superuser, or write access and all three of browser.delete_audioasset, browser.delete_imageasset and browser.delete_videoasset',
  }),
  san_mount: t.String({ description: 'Always "" (medialoopster\'s SAN mount; devices are folders here)' }),
  export_type: t.String({ description: 'Always ""' }),
  default_approval_status: Type.Integer({
    description: 'Always 0: new assets are pending unless their import says approval 1',
  }),
  direct_attached_site: Type.Integer({ description: 'Always 1 (one site)' }),
  network_attached_site: t.Array(Type.Integer(), { description: 'Always []' }),
  members: t.Array(Type.Integer(), {
    description:
      'Ids of the users granted read or write access to this production (superusers, who reach every production, are not listed)',
  }),
  member_groups: t.Array(Type.Integer(), { description: 'Always [] (no user groups)' }),
  projectasset_device: t.Null({ description: 'Always null: a project asset lies on the device of its bundle_root' }),
}

const DeviceRef = Device
/** Version 1 (medialoopster's Web API v1, the default): the four devices as Device records. */
export const ProductionVersion1 = t.Object(
  {
    ...productionFields,
    upload_device: DeviceRef,
    audioasset_device: DeviceRef,
    imageasset_device: DeviceRef,
    videoasset_device: DeviceRef,
  },
  { description: 'A production in API version 1: its devices as Device records' },
)

const DeviceId = Type.Integer({ description: 'Device id' })
/** Version 2 (Accept: application/json; version=2, or serve --default-api-version 2): the devices by id. */
export const ProductionVersion2 = t.Object(
  {
    ...productionFields,
    upload_device: DeviceId,
    audioasset_device: DeviceId,
    imageasset_device: DeviceId,
    videoasset_device: DeviceId,
  },
  { description: 'A production in API version 2: its devices by id, as the medialoopster Python client expects' },
)

export const Production = t.Union([ProductionVersion1, ProductionVersion2], {
  description:
    'Version 1 names the devices by their records, version 2 by their ids (docs/api.md, Base path and versions).',
})

const MoveUploadsGiven = t.Optional(
  t.Boolean({
    description:
      "true: the watcher moves the files it imports from the watch folder into the production's area (as move_asset; docs/watcher.md). Default false: they stay where they were dropped. In form data true/false or 1/0",
  }),
)
const IgnorePatternsGiven = t.Optional(
  t.Array(t.String({ maxLength: 4096 }), {
    maxItems: 1000,
    description:
      'Glob patterns (at most 100, each 1 to 255 characters) of files never imported, matched without case against the path from the device root: `*`, `?`, `[a-z]`, `**`; without / a name anywhere, with / a path from the device root, a final / folders only (docs/cards.md). A pattern that is not valid is 400 invalid at /ignore_patterns/<index>',
  }),
)
const DeviceIdGiven = t.Optional(
  Type.Integer({ minimum: 1, description: 'Device id; default: the device of storage_root' }),
)
export const ProductionCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 255, description: 'Unique' }),
  storage_root: t.String({
    minLength: 1,
    maxLength: 4096,
    description: 'Must lie on a device; a final slash is added; created on disk if missing',
  }),
  codename: t.Optional(
    t.String({ pattern: '^[a-z0-9][a-z0-9_-]*$', maxLength: 100, description: 'Unique slug; default: a slug of name' }),
  ),
  company: t.Optional(t.String({ maxLength: 255 })),
  proxy_root: t.Optional(t.String({ minLength: 1, maxLength: 4096, description: 'Default: storage_root + proxies/' })),
  proxy_url: t.Optional(t.String({ maxLength: 2048 })),
  upload_root: t.Optional(
    t.Union([t.String({ maxLength: 4096 }), t.Null()], {
      description:
        'A folder on a device (a final slash is added; created if missing), watched as the production\'s drop folder; its device becomes upload_device. Not inside another production\'s storage_root, a proxy_root or another drop folder. null (in form data also "null" or empty): the whole upload_device',
    }),
  ),
  move_uploads: MoveUploadsGiven,
  ignore_patterns: IgnorePatternsGiven,
  upload_device: DeviceIdGiven,
  audioasset_device: DeviceIdGiven,
  imageasset_device: DeviceIdGiven,
  videoasset_device: DeviceIdGiven,
})

/**
 * A device in an update: its id, or a Device record (as a version 1 answer shows it) taken by its
 * id, so that a production read in either version, changed and sent back is a valid PUT.
 */
const DeviceGiven = t.Optional(
  t.Union(
    [Type.Integer({ minimum: 1 }), t.Object({ id: Type.Integer({ minimum: 1 }) }, { additionalProperties: true })],
    { description: 'A device id, or a Device record (as version 1 answers it) taken by its id' },
  ),
)
const ReadOnly = t.Optional(
  t.Unknown({ description: "Read-only: set by the service (the record's own value is accepted)" }),
)
/**
 * PATCH/PUT: every create field, optional. The fields the service sets (id, the requesting user's
 * rights, the members, medialoopster's fixed settings) are read-only: listed so that a request
 * changing one is told why (400 invalid at it), not silently ignored.
 */
export const ProductionUpdate = t.Object({
  id: ReadOnly,
  can_write: ReadOnly,
  can_delete_assets: ReadOnly,
  san_mount: ReadOnly,
  export_type: ReadOnly,
  default_approval_status: ReadOnly,
  direct_attached_site: ReadOnly,
  network_attached_site: ReadOnly,
  members: ReadOnly,
  member_groups: ReadOnly,
  projectasset_device: ReadOnly,
  name: t.Optional(t.String({ minLength: 1, maxLength: 255, description: 'Unique' })),
  storage_root: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 4096,
      description:
        'Changes only while nothing belongs to the production; must lie on a device; created on disk if missing',
    }),
  ),
  codename: t.Optional(t.String({ pattern: '^[a-z0-9][a-z0-9_-]*$', maxLength: 100, description: 'Unique slug' })),
  company: t.Optional(t.String({ maxLength: 255 })),
  proxy_root: t.Optional(
    t.String({ minLength: 1, maxLength: 4096, description: 'Changes only while nothing belongs to the production' }),
  ),
  proxy_url: t.Optional(t.String({ maxLength: 2048 })),
  upload_root: t.Optional(
    t.Union([t.String({ maxLength: 4096 }), t.Null()], {
      description:
        'A folder on a device (a final slash is added; created if missing), watched as the production\'s drop folder; its device becomes upload_device. Not inside another production\'s storage_root, a proxy_root or another drop folder. null (in form data also "null" or empty): the whole upload_device',
    }),
  ),
  move_uploads: MoveUploadsGiven,
  ignore_patterns: IgnorePatternsGiven,
  upload_device: DeviceGiven,
  audioasset_device: DeviceGiven,
  imageasset_device: DeviceGiven,
  videoasset_device: DeviceGiven,
})
