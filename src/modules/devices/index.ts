import { devices } from '../../db/tables.ts'
import { slashPath } from '../../http/lists.ts'
import { Elysia, t } from 'elysia'
import { editRoutes } from '../../http/edit.ts'
import { IdParams, errors, oneOf, sharedModels } from '../../http/models.ts'
import { optionalEq, resourceRoutes } from '../../http/resource.ts'
import { type ModuleContext } from '../../http/context.ts'
import { andThen } from '../../db/port.ts'
import { Task, taskToApi } from '../tasks/model.ts'
import {
  DeviceCreate,
  DeviceQuery,
  DeviceStatus,
  DeviceStatusList,
  DeviceUpdate,
  deviceModels,
  deviceToApi,
} from './model.ts'
import type { Devices } from './service.ts'
import { type DeviceStatus as Status, RESCAN_CODENAME } from './status.ts'

/** `?adopt=true`: a device made where another device's records lie takes them over on purpose. */
const AdoptQuery = t.Object({
  adopt: t.Optional(
    oneOf(['true', 'false', '1', '0'], {
      description:
        "true: the device may be made in another device's folder where records of it lie, and takes them over (adopted counts them); without it that is 409",
    }),
  ),
})
const adoptAsked = (request: Request) => ['true', '1'].includes(new URL(request.url).searchParams.get('adopt') ?? '')

export const devicesModule = (ctx: ModuleContext, service: Devices, status: Status) =>
  new Elysia()
    .use(statusRoutes(ctx, status))
    .use(
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
          run: (body, user, request) => service.create(body, user, adoptAsked(request)),
          query: AdoptQuery,
          answer: 'DeviceCreated',
          description:
            'Needs superuser or browser.add_device. The path need not exist yet (the device is then offline, and warning.path says so). ' +
            "A path inside another device's folder where catalogued records of it lie (media assets, project assets, a production's roots) is " +
            '409 conflict, naming the device and how many, unless ?adopt=true: then they move onto the new device and adopted counts them; ' +
            'deleting the new device gives them back.',
        },
      }),
    )
    .use(
      editRoutes(ctx, {
        prefix: '/devices',
        name: 'Device',
        answer: 'Device',
        body: DeviceUpdate,
        whole: ['name', 'path'],
        codenames: { change: 'browser.change_device', delete: 'browser.delete_device' },
        update: (id, body, user) => andThen(ctx.port.run(service.update(id, body, user)), deviceToApi),
        find: (id) => ctx.port.run(service.get(id)),
        remove: (id, user) => ctx.port.run(service.remove(id, user)),
        notes: {
          update:
            'Every create field. name and path stay unique (400 unique). A new path is refused (409 conflict, naming what) while media assets, ' +
            'project assets or productions lie on the device, and onto what is catalogued on the device around the new path (only POST ?adopt=true takes that over); a new name carries the asset hold durations naming the device along. ' +
            'password "********" (as answered) keeps the stored password, null removes it; it is never answered nor written to the history.',
          delete:
            'Refused (409 conflict, naming what: "12 video assets lie on this device") while media assets, project assets, productions or asset hold durations refer to the device; ' +
            "but a device inside another device's folder gives its media and project assets, and the production devices that followed its folder, back to that device " +
            "(each change in the history, and the device's delete as returned), the undo of ?adopt=true.",
        },
      }),
    )

/** The device status for the web page (status.ts) and the rescan a user asks for. */
const statusRoutes = (ctx: ModuleContext, status: Status) =>
  new Elysia({ prefix: '/devices', tags: ['Device'] })
    .use(sharedModels)
    .use(ctx.auth)
    .model({ DeviceStatus, DeviceStatusList, Task })
    .get('/status', ({ user }) => status.all(user), {
      auth: true,
      response: { 200: 'DeviceStatusList', ...errors() },
      detail: {
        summary: 'The status of every device (extension)',
        description:
          "For each device, by id: whether its folder is there (with the reason when not) and its file system's total and free space, how the watcher " +
          'watches it (events, polling, unavailable, with the reason), its media assets online and offline (of those the user can read), its full scan ' +
          'queued or running and the last one that ended (task, dates, error, counts). Not a list: no limit, offset or X-Total-Count. Every user may read it.',
      },
    })
    .get('/:id/status', ({ params, user }) => status.one(params.id, user), {
      auth: true,
      params: IdParams,
      response: { 200: 'DeviceStatus', ...errors(404) },
      detail: {
        summary: "One device's status (extension)",
        description: 'As GET /api/devices/status/, for one device.',
      },
    })
    .post(
      '/:id/scan',
      async ({ params, user, set }) => {
        const task = taskToApi(await status.rescan(params.id, user))
        set.status = 202
        set.headers.location = `/api/tasks/${task.id}/`
        return task
      },
      {
        auth: true,
        params: IdParams,
        parse: 'none',
        response: { 202: 'Task', ...errors(403, 404, 409) },
        detail: {
          summary: 'Scan a device again (extension)',
          description:
            'Queues a full scan of the device, as the watcher queues its own (at start and every --rescan-interval), and answers 202 with the task ' +
            '(the body of GET /api/tasks/{id}/; Location: the task). A full scan of the device still queued is that task (asked twice: one scan); ' +
            'one already running is followed by the new one, which sees what changed after the running one passed. Needs superuser or ' +
            `${RESCAN_CODENAME}; 404 for an unknown device; 409 conflict while the device's folder is not there (offline). No body is read.`,
          'x-permission': RESCAN_CODENAME,
        } as never,
      },
    )
