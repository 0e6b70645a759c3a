import { Type } from '@sinclair/typebox'
import { eq, sql } from 'drizzle-orm'
import { t } from 'elysia'
import { devices, productions } from '../../db/schema.ts'
import { slashPath } from '../../http/lists.ts'
import { optionalEq, resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import { Device, deviceToApi } from '../devices/model.ts'
import { canRead, readableBy } from '../users/access.ts'

const DeviceRef = Device
export const Production = t.Object({
  id: Type.Integer(),
  name: t.String(),
  codename: t.String(),
  company: t.String(),
  storage_root: t.String({ description: 'Ends with a slash' }),
  proxy_root: t.String({ description: 'Ends with a slash' }),
  proxy_url: t.String(),
  upload_device: DeviceRef,
  audioasset_device: DeviceRef,
  imageasset_device: DeviceRef,
  videoasset_device: DeviceRef,
})

const DeviceId = t.Optional(Type.Integer({ minimum: 1, description: 'Device id; default: the device of storage_root' }))
export const ProductionCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 255, description: 'Unique' }),
  storage_root: t.String({ minLength: 1, maxLength: 4096, description: 'Must lie on a device; a final slash is added; created on disk if missing' }),
  codename: t.Optional(t.String({ pattern: '^[a-z0-9][a-z0-9_-]*$', maxLength: 100, description: 'Unique slug; default: a slug of name' })),
  company: t.Optional(t.String({ maxLength: 255 })),
  proxy_root: t.Optional(t.String({ minLength: 1, maxLength: 4096, description: 'Default: storage_root + proxies/' })),
  proxy_url: t.Optional(t.String({ maxLength: 2048 })),
  upload_device: DeviceId,
  audioasset_device: DeviceId,
  imageasset_device: DeviceId,
  videoasset_device: DeviceId,
})

import type { Productions } from './service.ts'

export function productionsModule(ctx: ModuleContext, service: Productions) {
  const deviceById = ctx.db.select().from(devices).where(eq(devices.id, sql.placeholder('id'))).prepare()
  const decodeDevice = (id: number) => {
    const row = deviceById.get({ id })
    return row ? deviceToApi(row) : null
  }
  const toApi = (row: typeof productions.$inferSelect) => {
    const { date_add: _, ...rest } = row
    return {
      ...rest,
      upload_device: decodeDevice(row.upload_device),
      audioasset_device: decodeDevice(row.audioasset_device),
      imageasset_device: decodeDevice(row.imageasset_device),
      videoasset_device: decodeDevice(row.videoasset_device),
    }
  }
  return resourceRoutes(ctx, {
    prefix: '/productions',
    name: 'Production',
    table: productions,
    models: { Production, ProductionCreate },
    toApi,
    filters: t.Object({ storage_root: t.Optional(t.String({ description: 'Only the production with this storage root (must end with a slash)' })) }),
    where: (query, user) => [optionalEq(productions.storage_root, slashPath('storage_root', query.storage_root)), readableBy(user, productions.id)],
    canRead: (row, user) => canRead(user, row.id),
    create: {
      body: ProductionCreate,
      status: 201,
      codename: 'browser.add_production',
      run: (body, user) => service.create(body, user),
      description: 'Needs superuser or browser.add_production; a user who creates a production gets write access to it.',
    },
  })
}
