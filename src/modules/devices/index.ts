import { devices } from '../../db/schema.ts'
import { slashPath } from '../../http/lists.ts'
import { optionalEq, resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import { DeviceCreate, DeviceQuery, deviceModels, deviceToApi } from './model.ts'
import type { Devices } from './service.ts'

export const devicesModule = (ctx: ModuleContext, service: Devices) =>
  resourceRoutes(ctx, {
    prefix: '/devices',
    name: 'Device',
    table: devices,
    models: deviceModels,
    toApi: deviceToApi,
    filters: DeviceQuery,
    where: (query) => [optionalEq(devices.path, slashPath('path', query.path))],
    create: {
      body: DeviceCreate,
      status: 201,
      codename: 'browser.add_device',
      run: (body) => service.create(body),
      description: 'Needs superuser or browser.add_device. The path need not exist yet (the device is then offline).',
    },
  })
