import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { TASK_STATES } from '../../db/tables.ts'
import { eitherOf, oneOf } from '../../http/models.ts'
import { MediaAsset } from '../mediaassets/model.ts'

export const ProjectAsset = t.Object({
  id: Type.Integer(),
  audio_assets: t.Array(MediaAsset, { description: 'Linked audio assets' }),
  image_assets: t.Array(MediaAsset, { description: 'Linked image assets' }),
  video_assets: t.Array(MediaAsset, { description: 'Linked video assets' }),
  name: t.String(),
  description: t.String(),
  date_crt: t.Nullable(t.String()),
  date_add: t.String(),
  date_mod: t.String(),
  date_del: t.Nullable(t.String()),
  meta_field_store: t.Record(t.String(), t.Unknown()),
  status_asset: Type.Integer({ description: '0 NEW (copy running), 6 ASSET_DONE, -1 ERROR' }),
  status_asset_description: t.String({ description: 'NEW, ASSET_DONE or ERROR: <reason>' }),
  status_editing: Type.Integer(),
  status_approval: Type.Integer({ description: '1 approved, 0 pending' }),
  path_file: t.String(),
  bundle_root: t.String({ description: 'Project folder, ends with a slash' }),
  type: t.String({
    description: 'premiere, avid, resolve, fcp or generic (from the project file extension unless given)',
  }),
  is_archive: t.Boolean(),
  is_production: t.Boolean({ description: 'False while a copy runs, after a failed copy, and while being deleted' }),
  files: t.Object({ count: Type.Integer(), bytes: Type.Integer() }, { description: 'Regular files in the bundle' }),
  name_editor: t.String(),
  name_studio: t.String(),
  locked_by: t.Nullable(t.String()),
  production: Type.Integer(),
  device: Type.Integer(),
})

/** The single record: the list's, and who changed it last. */
export const ProjectAssetDetail = t.Composite([
  ProjectAsset,
  t.Object({
    modified_by: t.Nullable(
      t.String({
        description:
          'Who made the last change (a user name, or "system" for the service); null: none since history is kept',
      }),
    ),
  }),
])

const ReadOnly = (why: string) => t.Optional(t.Unknown({ description: `Read-only: ${why}` }))
const DateText = t.String({ maxLength: 64, description: 'YYYY[-MM[-DD]] or YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ]' })
/** PATCH/PUT (an extension): the fields a user sets; those the service sets are listed to be refused with a reason. */
export const ProjectAssetUpdate = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 255 })),
  description: t.Optional(t.String({ maxLength: 100_000 })),
  date_crt: t.Optional(t.Nullable(DateText)),
  date_add: t.Optional(DateText),
  date_del: t.Optional(t.Nullable(DateText)),
  meta_field_store: t.Optional(
    t.Record(t.String(), t.Unknown(), {
      description: 'PATCH merges: keys given are set, a null value removes the key. PUT replaces the store.',
    }),
  ),
  status_editing: t.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
  status_approval: t.Optional(Type.Integer({ minimum: 0, maximum: 1 })),
  path_file: t.Optional(t.String({ maxLength: 4096, description: 'Project file, inside bundle_root ("" for none)' })),
  type: t.Optional(t.String({ minLength: 1, maxLength: 32 })),
  is_archive: t.Optional(t.Boolean()),
  name_editor: t.Optional(t.String({ maxLength: 255 })),
  name_studio: t.Optional(t.String({ maxLength: 255 })),
  locked_by: t.Optional(t.Nullable(t.String({ maxLength: 255 }))),
  id: ReadOnly('set by the service'),
  bundle_root: ReadOnly('a new folder is a move (the watcher) or a copy'),
  status_asset: ReadOnly('set by copies and deletes'),
  status_asset_description: ReadOnly('set by the service'),
  is_production: ReadOnly('set by the service'),
  files: ReadOnly('set by the service'),
  production: ReadOnly('not edited'),
  device: ReadOnly('follows bundle_root'),
  date_mod: ReadOnly('set on every change'),
  audio_assets: ReadOnly('linked through addasset/unlinkasset'),
  image_assets: ReadOnly('linked through addasset/unlinkasset'),
  video_assets: ReadOnly('linked through addasset/unlinkasset'),
  modified_by: ReadOnly('set by the service'),
})

/** The task a copy or delete queued; `Location` (delete) and `url` name it for GET /api/tasks/{id}/. */
export { TaskRef } from '../tasks/model.ts'
import { TaskRef } from '../tasks/model.ts'
/** Create answers the project; copy answers it with the task that copies its files. */
export const ProjectAssetCreated = t.Composite([ProjectAssetDetail, t.Object({ task: t.Optional(TaskRef) })])
export const DeleteAccepted = t.Object({ task: TaskRef })

const Text = t.String({ maxLength: 255 })
export const ProjectAssetCreate = eitherOf(
  t.Object({
    name: t.String({ minLength: 1, maxLength: 255 }),
    bundle_root: t.String({
      minLength: 1,
      maxLength: 4096,
      description: 'Project folder on a device; a final slash is added',
    }),
    production_id: t.Optional(Type.Integer({ minimum: 1, description: 'Wins over production_name' })),
    production_name: t.Optional(t.String({ minLength: 1, maxLength: 255 })),
    path_file: t.Optional(t.String({ maxLength: 4096, description: 'Project file, inside bundle_root' })),
    description: t.Optional(t.String({ maxLength: 100_000 })),
    date_crt: t.Optional(
      t.Nullable(t.String({ maxLength: 64, description: 'YYYY[-MM[-DD]] or YYYY-MM-DD HH:MM[:ss[.uuuuuu]][TZ]' })),
    ),
    name_editor: t.Optional(Text),
    name_studio: t.Optional(Text),
    status_approval: t.Optional(Type.Integer({ minimum: 0, maximum: 1 })),
    status_editing: t.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
    type: t.Optional(t.String({ minLength: 1, maxLength: 32 })),
    is_archive: t.Optional(t.Boolean()),
    meta_field_store: t.Optional(t.Record(t.String(), t.Unknown())),
    copy_of: t.Optional(
      Type.Integer({ minimum: 1, description: 'Copy this project (its files are copied by a task)' }),
    ),
  }),
  ['production_id', 'production_name'],
)

export const CopyQuery = t.Object({
  share_linked_assets: t.Optional(
    oneOf(['1', '0', 'true', 'false'], { description: 'Share linked assets with the target production' }),
  ),
})

export const LinkResult = t.Object({
  newly_linked_assets: t.Array(t.Object({ asset_id: Type.Integer(), type: t.String() })),
  already_linked_assets: t.Array(t.Object({ asset_id: Type.Integer(), type: t.String() })),
  invalid_assets: t.Array(t.Object({ asset_id: t.Unknown(), type: t.Unknown() })),
})
export const UnlinkResult = t.Object({
  unlinked_assets: t.Array(t.Object({ asset_id: Type.Integer(), type: t.String() })),
  invalid_assets: t.Array(t.Object({ asset_id: t.Unknown(), type: t.Unknown() })),
})

/** The link/unlink body, for the docs only: it is checked by the service, whose errors are {detail}. */
export const linkBodyDoc = {
  required: true,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['asset_list'],
        properties: {
          asset_list: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                asset_id: { type: 'integer' },
                type: { type: 'string', enum: ['audio', 'image', 'video'] },
              },
            },
          },
          silent_mode: {
            type: 'boolean',
            description: 'List semantic errors in invalid_assets instead of answering 422',
          },
        },
      },
    },
  },
}

const TYPES: [RegExp, string][] = [
  [/\.prproj$/i, 'premiere'],
  [/\.av[pb]$/i, 'avid'],
  [/\.drp$/i, 'resolve'],
  [/\.fcp(bundle|xml)\/?$/i, 'fcp'],
]
export const typeOf = (pathFile: string) => TYPES.find(([re]) => re.test(pathFile))?.[1] ?? 'generic'
