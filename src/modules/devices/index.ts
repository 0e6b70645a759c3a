import { devices } from '../../db/schema.ts'
import { slashPath } from '../../http/lists.ts'
import { Elysia } from 'elysia'
import { editRoutes } from '../../http/edit.ts'
import { optionalEq, resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import { DeviceCreate, DeviceQuery, DeviceUpdate, deviceModels, deviceToApi } from './model.ts'
import type { Devices } from './service.ts'

export const devicesModule = (ctx: ModuleContext, service: Devices) =>
  new Elysia().use(resourceRoutes(ctx, {
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
      run: (body, user) => service.create(body, user),
      description: 'Needs superuser or browser.add_device. The path need not exist yet (the device is then offline).',
    },
  })).use(editRoutes(ctx, {
    prefix: '/devices',
    name: 'Device',
    answer: 'Device',
    body: DeviceUpdate,
    whole: ['name', 'path'],
    codenames: { change: 'browser.change_device', delete: 'browser.delete_device' },
    update: (id, body, user) => deviceToApi(service.update(id, body, user)),
    remove: (id, user) => service.remove(id, user),
    notes: {
      update:
        'Every create field. name and path stay unique (400 unique). A new path is refused (409 conflict, naming what) while media assets, ' +
        'project assets or productions lie on the device; a new name carries the asset hold durations naming the device along. ' +
        'password "********" (as answered) keeps the stored password, null removes it; it is never answered nor written to the history.',
      delete: 'Refused (409 conflict, naming what: "12 video assets lie on this device") while media assets, project assets, productions or asset hold durations refer to the device.',
    },
  }))
