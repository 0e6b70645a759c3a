import { Type } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import { transcodingProfiles } from '../../db/tables.ts'
import { editRoutes } from '../../http/edit.ts'
import { recordReader, resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'
import { createTranscodingProfiles } from './service.ts'

const Text = t.String({ maxLength: 255 })
const Count = Type.Integer({ minimum: 0, maximum: 1_000_000_000 })

const fields = {
  codec_name: Text,
  codec_profile: Text,
  video_container: Text,
  frame_rate: Text,
  video_data_rate: Text,
  width: Count,
  height: Count,
  display_aspect_ratio: Text,
  pix_fmt: Text,
  progressive: t.Boolean(),
  passthrough: t.Boolean(),
  default_profile: t.Boolean(),
  interlaced: t.String({ maxLength: 32, description: "Field order; default 'tff'" }),
  ar_conversion: t.String({ maxLength: 32, description: "Aspect ratio conversion; default 'box'" }),
  should_have_audio: t.Boolean(),
  audio_codec_name: Text,
  audio_container: Text,
  audio_codec_profile: Text,
  audio_data_rate: Text,
  tracks: Count,
  channels_per_track: Count,
  bits_per_sample: Count,
  sample_rate: Count,
}

export const TranscodingProfile = t.Object({ id: Type.Integer(), name: t.String(), ...fields })
export const TranscodingProfileCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 255, description: 'Unique' }),
  ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, t.Optional(v)])),
})

/** PATCH/PUT: every create field, optional; id is read-only. */
export const TranscodingProfileUpdate = t.Object({
  id: t.Optional(t.Unknown({ description: 'Read-only' })),
  name: t.Optional(t.String({ minLength: 1, maxLength: 255, description: 'Unique' })),
  ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, t.Optional(v)])),
})

export const transcodingProfilesModule = (ctx: ModuleContext, service = createTranscodingProfiles(ctx.db)) =>
  new Elysia()
    .use(
      resourceRoutes(ctx, {
        prefix: '/transcodingprofiles',
        name: 'TranscodingProfile',
        table: transcodingProfiles,
        models: { TranscodingProfile, TranscodingProfileCreate },
        toApi: (row) => row,
        filters: t.Object({}),
        where: () => [],
        create: {
          body: TranscodingProfileCreate,
          status: 200,
          codename: 'browser.add_transcodingprofile',
          run: (body, user) => ctx.port.run(service.create(body as typeof transcodingProfiles.$inferInsert, user)),
          description:
            "Needs superuser or browser.add_transcodingprofile. Answers 200, as medialoopster documents it. Unset fields take its defaults: strings empty, integers 0, should_have_audio true, interlaced 'tff', ar_conversion 'box'.",
        },
      }),
    )
    .use(
      editRoutes(ctx, {
        prefix: '/transcodingprofiles',
        name: 'TranscodingProfile',
        answer: 'TranscodingProfile',
        body: TranscodingProfileUpdate,
        whole: ['name'],
        codenames: { change: 'browser.change_transcodingprofile', delete: 'browser.delete_transcodingprofile' },
        update: (id, body, user) =>
          ctx.port.run(service.update(id, body as Partial<typeof transcodingProfiles.$inferSelect>, user)),
        find: recordReader(ctx, { name: 'TranscodingProfile', table: transcodingProfiles }),
        remove: (id, user) => ctx.port.run(service.remove(id, user)),
        notes: {
          update: 'Every create field; name stays unique (400 unique at /name).',
          delete:
            'Refused (409 conflict, naming the devices) while a device uses the profile, as its transcoding_profile or among its passthrough_profiles.',
        },
      }),
    )
