// Asset hold durations (docs/api.md, Hold durations, docs/api.md, Resources): the shapes.
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { ASSET_TYPES, CONTEXT_TYPES } from '../../db/tables.ts'
import { oneOf } from '../../http/models.ts'

export const AssetHoldDuration = t.Object({
  id: Type.Integer(),
  asset_type: oneOf(ASSET_TYPES),
  context_type: oneOf(CONTEXT_TYPES),
  context: t.String({ description: 'Name of the device or production' }),
  duration: Type.Integer({ description: 'Days' }),
})

export const AssetHoldDurationCreate = t.Object({
  asset_type: oneOf(ASSET_TYPES),
  context_type: oneOf(CONTEXT_TYPES),
  context: t.String({ minLength: 1, maxLength: 255, description: 'Name of an existing device or production' }),
  duration: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Days, a whole number >= 0' }),
})

/** PATCH/PUT: any of the create fields; id is read-only. */
export const AssetHoldDurationUpdate = t.Object({
  id: t.Optional(t.Unknown({ description: 'Read-only' })),
  asset_type: t.Optional(oneOf(ASSET_TYPES)),
  context_type: t.Optional(oneOf(CONTEXT_TYPES)),
  context: t.Optional(
    t.String({ minLength: 1, maxLength: 255, description: 'Name of an existing device or production' }),
  ),
  duration: t.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Days, a whole number >= 0' })),
})
