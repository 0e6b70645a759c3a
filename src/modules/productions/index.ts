import { Type } from '@sinclair/typebox'
import { eq, sql } from 'drizzle-orm'
import { t } from 'elysia'
import type { Db } from '../../db/client.ts'
import { devices, productions } from '../../db/schema.ts'
import { invalid, unique } from '../../http/errors.ts'
import { slashPath } from '../../http/lists.ts'
import { optionalEq, resourceRoutes } from '../../http/resource.ts'
import { PathError, cleanDir, deviceFor, makeDirInside, reservedProblem } from '../../storage/paths.ts'
import { isoTimestamp } from '../../util/time.ts'
import type { ModuleContext } from '../context.ts'
import { Device, type DeviceRow, deviceToApi } from '../devices/model.ts'
import type { Devices } from '../devices/service.ts'
import { projectHolding } from '../projectassets/bundles.ts'
import { canRead, readableBy } from '../users/access.ts'
import type { Principal, Users } from '../users/service.ts'

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

const DEVICE_FIELDS = ['upload_device', 'audioasset_device', 'imageasset_device', 'videoasset_device'] as const

export function slug(name: string): string {
  const s = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')
  return (s || 'production').slice(0, 90)
}

function onDevice(all: DeviceRow[], value: string, pointer: string) {
  let path: string
  try {
    path = cleanDir(value)
  } catch (error) {
    throw invalid(pointer, (error as PathError).message)
  }
  const device = deviceFor(all, path)
  if (!device) throw invalid(pointer, 'The path does not lie on any device.')
  const reserved = reservedProblem(path)
  if (reserved) throw invalid(pointer, reserved)
  return { path, device }
}

export function createProductions(db: Db, deviceService: Devices, users: Users) {
  return {
    create(body: typeof ProductionCreate.static, user: Principal) {
      const all = deviceService.all()
      const storage = onDevice(all, body.storage_root, '/storage_root')
      const proxyRoot = body.proxy_root === undefined ? `${storage.path}proxies/` : onDevice(all, body.proxy_root, '/proxy_root').path
      for (const [pointer, path] of [['/storage_root', storage.path], ['/proxy_root', proxyRoot]] as const) {
        const holder = projectHolding(db, path)
        if (holder !== undefined) throw invalid(pointer, `The path lies inside the folder of project asset ${holder}.`)
      }
      if (body.proxy_url && !/^https?:\/\/\S+$/.test(body.proxy_url)) throw invalid('/proxy_url', 'Must be an http or https URL.')
      const ids: Record<string, number> = {}
      for (const field of DEVICE_FIELDS) {
        const id = body[field] ?? storage.device.id
        if (!all.some((d) => d.id === id)) throw invalid(`/${field}`, 'No device with this id.')
        ids[field] = id
      }
      let codename = body.codename
      if (codename === undefined) {
        const base = slug(body.name)
        codename = base
        for (let n = 2; db.select({ id: productions.id }).from(productions).where(eq(productions.codename, codename)).get(); n++)
          codename = `${base}-${n}`
      }
      if (db.select({ id: productions.id }).from(productions).where(eq(productions.name, body.name)).get())
        throw unique('/name', 'A production with this name already exists.')
      try {
        makeDirInside(storage.device.path, storage.path)
      } catch (error) {
        throw invalid('/storage_root', (error as Error).message)
      }
      const row = db
        .insert(productions)
        .values({
          name: body.name,
          codename,
          company: body.company ?? '',
          storage_root: storage.path,
          proxy_root: proxyRoot,
          proxy_url: body.proxy_url ?? '',
          ...(ids as Record<(typeof DEVICE_FIELDS)[number], number>),
          date_add: isoTimestamp(),
        })
        .returning()
        .get()
      // Whoever may create a production may work in it.
      if (!user.is_superuser) users.grantById(user.id, row.id, 'write')
      return row
    },
  }
}

export function productionsModule(ctx: ModuleContext, service: ReturnType<typeof createProductions>) {
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
