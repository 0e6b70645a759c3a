import { Elysia, t } from 'elysia'
import { devices } from '../../db/schema.ts'
import { slashPath, Paging } from '../../http/lists.ts'
import { BODY_ERRORS, IdParams, errors, sharedModels } from '../../http/models.ts'
import { requirePerm } from '../users/access.ts'
import { eq } from 'drizzle-orm'
import type { ModuleContext } from '../context.ts'
import { DeviceQuery, deviceModels, deviceToApi } from './model.ts'
import type { Devices } from './service.ts'

export function devicesModule(ctx: ModuleContext, service: Devices) {
  return new Elysia({ prefix: '/devices', tags: ['devices'] })
    .use(sharedModels)
    .use(ctx.auth)
    .model(deviceModels)
    .get(
      '/',
      ({ query }) => {
        const path = slashPath('path', query.path)
        return ctx.list({ table: devices, where: [path === undefined ? undefined : eq(devices.path, path)], toApi: deviceToApi }, query)
      },
      {
        auth: true,
        query: t.Object({ ...Paging, ...DeviceQuery.properties }),
        response: { 200: t.Array(t.Ref('Device')), ...errors(400) },
        detail: { summary: 'List devices', description: 'Readable by every user. Carries X-Total-Count.' },
      },
    )
    .get('/:id', ({ params }) => deviceToApi(service.get(params.id)), {
      auth: true,
      params: IdParams,
      response: { 200: 'Device', ...errors(404) },
      detail: { summary: 'One device' },
    })
    .post(
      '/',
      ({ body, user, set }) => {
        requirePerm(user, 'browser.add_device')
        set.status = 201
        return deviceToApi(service.create(body))
      },
      {
        auth: true,
        body: 'DeviceCreate',
        response: { 201: 'Device', ...errors(...BODY_ERRORS, 403) },
        detail: { summary: 'Create a device', description: 'Needs superuser or browser.add_device. JSON or form data.' },
      },
    )
}
