import { type TObject, type TOptional, type TUnknown, Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { PROTOCOLS, TASK_STATES, type devices } from '../../db/tables.ts'
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
  path: t.String({
    minLength: 1,
    maxLength: 4096,
    description: 'Absolute; a missing final slash is added. Need not exist.',
  }),
  display_name: t.Optional(t.String({ maxLength: 255, description: 'Defaults to name' })),
  is_internal: t.Optional(t.Boolean()),
  is_archive: t.Optional(t.Boolean()),
  autoshot_detection: t.Optional(t.Boolean()),
  allow_direct_writing: t.Optional(t.Boolean()),
  recieve_xml_meta: t.Optional(t.Boolean()),
  protocol: t.Optional(
    oneOf(PROTOCOLS, {
      description:
        'file (default) or copy: a local folder, watched by change events; smb, nfs and afp are watched by polling',
    }),
  ),
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
  ...Object.fromEntries(
    Object.entries(DeviceCreate.properties).map(([k, v]) => [k, k === 'name' || k === 'path' ? t.Optional(v) : v]),
  ),
  password: t.Optional(
    t.Nullable(
      t.String({
        maxLength: 255,
        description: 'A new password; null removes it; "********" (as answered) keeps the stored one',
      }),
    ),
  ),
}) as unknown as TObject<
  { id: TOptional<TUnknown> } & {
    [K in keyof typeof DeviceCreate.properties]: TOptional<(typeof DeviceCreate.properties)[K]>
  }
>

export const DeviceQuery = t.Object({
  path: t.Optional(t.String({ description: 'Only the device with this path (must end with a slash)' })),
})

/** What moved between a device and the one around it (POST ?adopt=true: onto the new device; DELETE: back to the outer one). */
export const Handover = t.Object({
  device: Type.Integer({
    description: 'The device around it (whose folder holds its folder): where the records came from, or went back to',
  }),
  videoassets: Type.Integer(),
  audioassets: Type.Integer(),
  imageassets: Type.Integer(),
  projectassets: Type.Integer(),
  productions: Type.Integer({
    description:
      "Productions whose storage_root, proxy_root or upload_root lie in the folder (their asset devices and the drop folder's upload_device follow)",
  }),
})

/** The answer of POST: the record, and what the create did beside it. */
export const DeviceCreated = t.Object(
  {
    ...Device.properties,
    warning: t.Optional(
      t.Record(t.String(), t.String(), {
        description:
          'Only when something may not be as meant, by field (as the import\'s warning): {"path": "The folder ... is not there (yet): ..."} ' +
          'when the folder is missing or cannot be read',
      }),
    ),
    adopted: t.Optional(
      t.Object(Handover.properties, {
        description:
          'Only with ?adopt=true when the device took catalogued records over from the device around it: how many, and from which device',
      }),
    ),
  },
  {
    examples: [
      {
        id: 2,
        name: 'archive',
        display_name: 'archive',
        path: '/mnt/media/archive/',
        is_internal: false,
        is_archive: false,
        autoshot_detection: false,
        allow_direct_writing: true,
        recieve_xml_meta: false,
        protocol: 'file',
        anonymous: false,
        server: null,
        username: null,
        password: null,
        transcoding_profile: null,
        archive_connector: null,
        passthrough_profiles: [],
        write_permission_groups: [],
        adopted: { device: 1, videoassets: 12, audioassets: 0, imageassets: 3, projectassets: 1, productions: 0 },
      },
    ],
  },
)

export const deviceModels = { Device, DeviceCreate, DeviceCreated }

export type DeviceRow = typeof devices.$inferSelect

export function deviceToApi(row: DeviceRow): typeof Device.static {
  const { date_add: _, password, ...rest } = row
  return { ...rest, password: password === null ? null : '********' }
}

const ScanSummary = t.Object({
  task: Type.Integer({
    description: 'The scan task (GET /api/tasks/{id}/ for superusers and holders of browser.change_device)',
  }),
  state: oneOf(TASK_STATES),
  date_add: t.String(),
  date_start: t.Nullable(t.String()),
  date_end: t.Nullable(t.String()),
  files_done: Type.Integer(),
  files_total: Type.Integer(),
  error: t.String({ description: "Why it failed; '' when it did not" }),
  counts: t.Record(t.String(), Type.Integer(), {
    description: 'What it found: seen, offline, online, moved, relinked, saved_anew, imported, ... (those it counted)',
  }),
})

const EXAMPLE_STATUS = {
  device: 1,
  online: true,
  space: { total: 3_998_614_552_576, free: 1_263_471_300_608 },
  watch: { mode: 'events', ready: true },
  assets: { online: 1204, offline: 3 },
  scan: null,
  last_scan: {
    task: 311,
    state: 'done',
    date_add: '2026-11-21T09:30:00.123000Z',
    date_start: '2026-11-21T09:30:00.125000Z',
    date_end: '2026-11-21T09:30:04.870000Z',
    files_done: 1390,
    files_total: 1390,
    error: '',
    counts: { seen: 1390, offline: 3, online: 0, moved: 1 },
  },
}

export const DeviceStatus = t.Object(
  {
    device: Type.Integer({ description: 'The device id' }),
    online: t.Boolean({
      description: 'Its folder is there and can be read (looked at with this request, at most 2 s)',
    }),
    reason: t.Optional(t.String({ description: 'Why not, when not online' })),
    space: t.Nullable(
      t.Object(
        {
          total: Type.Integer({ description: 'Bytes of the file system the folder lies on' }),
          free: Type.Integer({ description: 'Bytes free for the service to write (as df shows them)' }),
        },
        { description: 'null when offline' },
      ),
    ),
    watch: t.Nullable(
      t.Object(
        {
          mode: oneOf(['events', 'polling', 'unavailable'], {
            description:
              'events: change events; polling: looked at every --poll-interval (a network protocol, --poll, or the inotify limit reached); unavailable: its folder is missing',
          }),
          ready: t.Boolean({ description: 'Changes are being reported (the first walk of the folder is done)' }),
          reason: t.Optional(t.String({ description: 'Why polling or unavailable' })),
        },
        {
          description:
            'How the watcher watches it; null when the watcher does not run (or has not taken the device up yet)',
        },
      ),
    ),
    assets: t.Object(
      {
        online: Type.Integer({ description: 'Media assets on the device with is_production true' }),
        offline: Type.Integer({
          description:
            'Media assets on the device with is_production false (GET /api/{video,audio,image}assets/?device=ID&is_production=false lists them)',
        }),
      },
      { description: 'Of the media assets the user can read' },
    ),
    scan: t.Nullable(ScanSummary, {
      description: 'The full scan of the device queued or running (the running one first), or null',
    }),
    last_scan: t.Nullable(ScanSummary, {
      description:
        'The last full scan of the device that ended (done or failed), or null (none yet, or pruned: docs/api.md, Which tasks are kept)',
    }),
  },
  { examples: [EXAMPLE_STATUS] },
)

export const DeviceStatusList = t.Array(DeviceStatus, { examples: [[EXAMPLE_STATUS]] })
