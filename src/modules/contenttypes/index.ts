import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { contentTypes } from '../../db/tables.ts'
import { resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'

export const ContentType = t.Object({
  id: Type.Integer(),
  name: t.String({ description: 'projectasset, audioasset, imageasset or videoasset' }),
})

export const contentTypesModule = (ctx: ModuleContext) =>
  resourceRoutes(ctx, {
    prefix: '/contenttypes',
    name: 'ContentType',
    table: contentTypes,
    models: { ContentType },
    toApi: (row) => row,
    filters: t.Object({}),
    where: () => [],
  })
