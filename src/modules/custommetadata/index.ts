import { Type } from '@sinclair/typebox'
import { eq, inArray } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import { CONTENT_TYPE_NAMES, customMetadata, customMetadataSets } from '../../db/tables.ts'
import { invalidParameter } from '../../http/errors.ts'
import { idFilter } from '../../http/lists.ts'
import { oneOf } from '../../http/models.ts'
import { recordReader, resourceRoutes } from '../../http/resource.ts'
import { editRoutes } from '../../http/edit.ts'
import type { ModuleContext } from '../../http/context.ts'
import { CONTENT_TYPE_IDS, type CustomMetadata } from './service.ts'

export const CustomMetadataField = t.Object({
  id: Type.Integer(),
  key: t.String({ description: 'Unique, dotted: [a-z0-9_]+(.[a-z0-9_]+)*' }),
  value: t.String({ description: 'Human readable name of the field' }),
  order: Type.Integer(),
  custom_metadata_set: Type.Integer(),
  validation_rule: t.Nullable(t.String({ description: 'A regular expression values must match' })),
})

export const CustomMetadataFieldCreate = t.Object({
  key: t.String({ pattern: '^[a-z0-9_]+(\\.[a-z0-9_]+)*$', maxLength: 255, description: 'Unique, dotted' }),
  value: t.String({ minLength: 1, maxLength: 255 }),
  custom_metadata_set: Type.Integer({ minimum: 1 }),
  order: t.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  validation_rule: t.Optional(t.Nullable(t.String({ maxLength: 1000 }))),
})

export const CustomMetadataSet = t.Object({
  id: Type.Integer(),
  name: t.String(),
  description: t.String(),
  content_type: Type.Integer(),
})
export const CustomMetadataSetCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 255 }),
  description: t.String({ maxLength: 10_000 }),
  content_type: Type.Integer({ minimum: 1, description: '1 projectasset, 2 audioasset, 3 imageasset, 4 videoasset' }),
})

/** PATCH/PUT of a field: every create field, optional; id is read-only. */
export const CustomMetadataFieldUpdate = t.Object({
  id: t.Optional(t.Unknown({ description: 'Read-only' })),
  ...Object.fromEntries(
    Object.entries(CustomMetadataFieldCreate.properties).map(([k, v]) => [
      k,
      k === 'order' || k === 'validation_rule' ? v : t.Optional(v),
    ]),
  ),
})
/** PATCH/PUT of a set: every create field, optional; id is read-only. */
export const CustomMetadataSetUpdate = t.Object({
  id: t.Optional(t.Unknown({ description: 'Read-only' })),
  ...Object.fromEntries(Object.entries(CustomMetadataSetCreate.properties).map(([k, v]) => [k, t.Optional(v)])),
})

export const customMetadataModule = (ctx: ModuleContext, service: CustomMetadata) =>
  new Elysia()
    .use(
      resourceRoutes(ctx, {
        prefix: '/custommetadata',
        name: 'CustomMetadata',
        table: customMetadata,
        models: { CustomMetadata: CustomMetadataField, CustomMetadataCreate: CustomMetadataFieldCreate },
        toApi: (row) => row,
        filters: t.Object({
          content_type_name: t.Optional(
            oneOf(CONTENT_TYPE_NAMES, { description: 'Fields of sets attached to this content type' }),
          ),
          content_type_id: idFilter('The same by id; not with content_type_name'),
        }),
        where: (query) => {
          if (query.content_type_name !== undefined && query.content_type_id !== undefined)
            throw invalidParameter('content_type_id', 'Give content_type_name or content_type_id, not both.')
          const id =
            query.content_type_name !== undefined
              ? CONTENT_TYPE_IDS[query.content_type_name as (typeof CONTENT_TYPE_NAMES)[number]]
              : query.content_type_id
          if (id === undefined) return []
          const sets = ctx.db
            .select({ id: customMetadataSets.id })
            .from(customMetadataSets)
            .where(eq(customMetadataSets.content_type, Number(id)))
          return [inArray(customMetadata.custom_metadata_set, sets)]
        },
        create: {
          body: CustomMetadataFieldCreate,
          status: 200,
          codename: 'browser.add_custommetadata',
          run: (body, user) => ctx.port.run(service.createField(body, user)),
          description:
            "Needs superuser or browser.add_custommetadata. Answers 200, as medialoopster documents it. order defaults to one more than the set's highest.",
        },
      }),
    )
    .use(
      resourceRoutes(ctx, {
        prefix: '/custommetadatasets',
        name: 'CustomMetadataSet',
        table: customMetadataSets,
        models: { CustomMetadataSet, CustomMetadataSetCreate },
        toApi: (row) => row,
        filters: t.Object({}),
        where: () => [],
        create: {
          body: CustomMetadataSetCreate,
          status: 201,
          codename: 'browser.add_custommetadataset',
          run: (body, user) => ctx.port.run(service.createSet(body, user)),
          description: 'Needs superuser or browser.add_custommetadataset.',
        },
      }),
    )
    .use(
      editRoutes(ctx, {
        prefix: '/custommetadata',
        name: 'CustomMetadata',
        answer: 'CustomMetadata',
        body: CustomMetadataFieldUpdate,
        whole: ['key', 'value', 'custom_metadata_set'],
        codenames: { change: 'browser.change_custommetadata', delete: 'browser.delete_custommetadata' },
        update: (id, body, user) => ctx.port.run(service.updateField(id, body as never, user)),
        find: recordReader(ctx, { name: 'CustomMetadata', table: customMetadata }),
        remove: (id, user) => ctx.port.run(service.removeField(id, user)),
        notes: {
          update:
            'Every create field; key stays unique (400 unique at /key). The key, or a set of another content type, changes only while no ' +
            'record holds a value under the key (409 conflict, naming how many); a new validation_rule applies to values written from then on.',
          delete:
            'Refused (409 conflict: "4 video assets hold values for \"camera.model\"") while records hold a value under the key.',
        },
      }),
    )
    .use(
      editRoutes(ctx, {
        prefix: '/custommetadatasets',
        name: 'CustomMetadataSet',
        answer: 'CustomMetadataSet',
        body: CustomMetadataSetUpdate,
        whole: ['name', 'description', 'content_type'],
        codenames: { change: 'browser.change_custommetadataset', delete: 'browser.delete_custommetadataset' },
        update: (id, body, user) => ctx.port.run(service.updateSet(id, body as never, user)),
        find: recordReader(ctx, { name: 'CustomMetadataSet', table: customMetadataSets }),
        remove: (id, user) => ctx.port.run(service.removeSet(id, user)),
        notes: {
          update:
            'Every create field. The content type changes only while no record holds a value for a field of the set (409 conflict).',
          delete: 'Refused (409 conflict, naming them) while custom metadata fields belong to the set.',
        },
      }),
    )
