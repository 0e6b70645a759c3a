import { Type } from '@sinclair/typebox'
import { eq, sql } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import { type Work, allOf, oneOf as oneOfStatement, statement } from '../../db/port.ts'
import { MEDIA_KINDS, devices, productionAccess, productions } from '../../db/tables.ts'
import { slashPath } from '../../http/lists.ts'
import { editRoutes } from '../../http/edit.ts'
import { oneOf } from '../../http/models.ts'
import { optionalEq, recordReader, resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import type { ApiVersion } from '../../http/versioning.ts'
import { Device, type DeviceRow, deviceToApi } from '../devices/model.ts'
import { canRead, readableBy } from '../users/access.ts'
import type { Principal } from '../users/service.ts'
import type { Productions } from './service.ts'
import { Production, ProductionCreate, ProductionUpdate, ProductionVersion1, ProductionVersion2 } from './model.ts'

/** can_delete_assets: deleting a media asset of any kind is allowed in the production. */
const DELETE_MEDIA = MEDIA_KINDS.map((kind) => `browser.delete_${kind}asset`)

/** `?nest=true`: a storage_root in or around another production's is asked for, not a slip. */
const NestQuery = t.Object({
  nest: t.Optional(
    oneOf(['true', 'false', '1', '0'], {
      description:
        "true: the storage_root may lie in or around another production's storage_root (the deeper one owns the files under it); without it such a root is 409",
    }),
  ),
})
const nestAsked = (request: Request) => ['true', '1'].includes(new URL(request.url).searchParams.get('nest') ?? '')

type Row = typeof productions.$inferSelect
type Access = { user: number; level: string }

export function productionsModule(ctx: ModuleContext, service: Productions) {
  const deviceOf = statement<DeviceRow>(() =>
    ctx.db
      .select()
      .from(devices)
      .where(eq(devices.id, sql.placeholder('id'))),
  )
  const accessOf = statement<Access>(() =>
    ctx.db
      .select({ user: productionAccess.user_id, level: productionAccess.level })
      .from(productionAccess)
      .where(eq(productionAccess.production_id, sql.placeholder('id')))
      .orderBy(productionAccess.user_id),
  )
  /** The records of a page of rows, each with its grants and (version 1) devices read through the port. */
  function* records(rows: Row[], user: Principal, version: ApiVersion): Work<unknown[]> {
    const out: unknown[] = []
    for (const row of rows) out.push(yield* answer(row, user, version))
    return out
  }
  /** The record's shape without its reads: its type for `answer`; the routes make every record with `records`. */
  const toApi = (row: Row, user: Principal, version: ApiVersion) => shape(row, user, version, [], () => undefined)
  /** The record as toApi answers it, read through the port. */
  function* answer(row: Row, user: Principal, version: ApiVersion): Work<ReturnType<typeof toApi>> {
    const access = yield* allOf(accessOf, { id: row.id })
    const found = new Map<number, DeviceRow | undefined>()
    if (version === 1)
      for (const id of [row.upload_device, row.audioasset_device, row.imageasset_device, row.videoasset_device])
        if (!found.has(id)) found.set(id, yield* oneOfStatement(deviceOf, { id }))
    return shape(row, user, version, access, (id) => found.get(id))
  }
  /**
   * The record as answered to `user` in API `version`, of the production's grants (`access`) and,
   * for version 1, its devices (`deviceBy`).
   */
  function shape(
    row: Row,
    user: Principal,
    version: ApiVersion,
    access: Access[],
    deviceBy: (id: number) => DeviceRow | undefined,
  ) {
    const { date_add: _, upload_device, audioasset_device, imageasset_device, videoasset_device, ...rest } = row
    const decodeDevice = (id: number) => {
      const found = deviceBy(id)
      return found ? deviceToApi(found) : null
    }
    const device = version === 1 ? decodeDevice : (id: number) => id
    // The grants as they are now: the members, and the user's own write access read from the same
    // rows, so that a create answers true for the creator it has just granted write access (the
    // request's principal was resolved before the grant).
    const writable = user.is_superuser || access.some((a) => a.user === user.id && a.level === 'write')
    return {
      ...rest,
      can_write: writable,
      can_delete_assets: user.is_superuser || (writable && DELETE_MEDIA.every((codename) => user.perms.has(codename))),
      san_mount: '',
      export_type: '',
      default_approval_status: 0,
      direct_attached_site: 1,
      network_attached_site: [],
      members: access.map((a) => a.user),
      member_groups: [],
      upload_device: device(upload_device),
      audioasset_device: device(audioasset_device),
      imageasset_device: device(imageasset_device),
      videoasset_device: device(videoasset_device),
      projectasset_device: null,
    }
  }
  return new Elysia()
    .use(
      resourceRoutes(ctx, {
        prefix: '/productions',
        name: 'Production',
        table: productions,
        models: { Production, ProductionVersion1, ProductionVersion2, ProductionCreate },
        toApi,
        records,
        filters: t.Object({
          storage_root: t.Optional(
            t.String({ description: 'Only the production with this storage root (must end with a slash)' }),
          ),
        }),
        where: (query, user) => [
          optionalEq(productions.storage_root, slashPath('storage_root', query.storage_root)),
          readableBy(user, productions.id),
        ],
        canRead: (row, user) => canRead(user, row.id),
        create: {
          body: ProductionCreate,
          status: 201,
          codename: 'browser.add_production',
          run: (body, user, request) => ctx.port.run(service.create(body, user, nestAsked(request))),
          query: NestQuery,
          description:
            'Needs superuser or browser.add_production; a user who creates a production gets write access to it.',
        },
      }),
    )
    .use(
      editRoutes(ctx, {
        prefix: '/productions',
        name: 'Production',
        answer: 'Production',
        body: ProductionUpdate,
        whole: ['name', 'storage_root'],
        codenames: { change: 'browser.change_production', delete: 'browser.delete_production' },
        // The record as answered (version 2: the devices by id) is what read-only fields are compared with.
        update: (id, body, user, _mode, request) =>
          ctx.port.run(
            (function* () {
              const row = yield* service.update(id, body, user, (row) => answer(row, user, 2), nestAsked(request))
              return yield* answer(row, user, ctx.apiVersion(request))
            })(),
          ),
        find: recordReader(ctx, {
          name: 'Production',
          table: productions,
          canRead: (row, user) => canRead(user, row.id),
        }),
        query: NestQuery,
        remove: (id, user) => ctx.port.run(service.remove(id, user)),
        notes: {
          update:
            'name, codename, company, proxy_url, move_uploads, the four device ids, and the roots. Needs write access to the production too. name and codename ' +
            'stay unique (400 unique); storage_root and proxy_root change only while no asset or project belongs to the production (409 conflict). ' +
            'A new name carries the asset hold durations naming the production along. A device is given by its id, or as a Device record (taken by its id). ' +
            'The fields the service sets (id, can_write, can_delete_assets, members, san_mount, export_type, default_approval_status, direct_attached_site, ' +
            'network_attached_site, member_groups, projectasset_device) are read-only. ' +
            'Answers in the API version the request asks for, as GET does.',
          delete:
            'Needs write access to the production too. Refused (409 conflict, naming what) while media assets or project assets belong to it or ' +
            'asset hold durations name it. Its import logs stay (readable by superusers); nothing on disk is touched.',
        },
      }),
    )
}
