import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { transcodingProfiles } from '../../db/schema.ts'
import { resourceRoutes } from '../../http/resource.ts'
import type { ModuleContext } from '../../http/context.ts'

const Text = t.String({ maxLength: 255 })
const Count = Type.Integer({ minimum: 0, maximum: 1_000_000_000 })

const fields = {
  codec_name: Text, codec_profile: Text, video_container: Text, frame_rate: Text, video_data_rate: Text,
  width: Count, height: Count, display_aspect_ratio: Text, pix_fmt: Text,
  progressive: t.Boolean(), passthrough: t.Boolean(), default_profile: t.Boolean(),
  interlaced: t.String({ maxLength: 32, description: "Field order; default 'tff'" }),
  ar_conversion: t.String({ maxLength: 32, description: "Aspect ratio conversion; default 'box'" }),
  should_have_audio: t.Boolean(), audio_codec_name: Text, audio_container: Text, audio_codec_profile: Text,
  audio_data_rate: Text, tracks: Count, channels_per_track: Count, bits_per_sample: Count, sample_rate: Count,
}

export const TranscodingProfile = t.Object({ id: Type.Integer(), name: t.String(), ...fields })
export const TranscodingProfileCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 255, description: 'Unique' }),
  ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, t.Optional(v)])),
})

export const transcodingProfilesModule = (ctx: ModuleContext) =>
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
      run: (body) => ctx.db.insert(transcodingProfiles).values(body as typeof transcodingProfiles.$inferInsert).returning().get(),
      description: "Needs superuser or browser.add_transcodingprofile. Answers 200, as medialoopster documents it. Unset fields take its defaults: strings empty, integers 0, should_have_audio true, interlaced 'tff', ar_conversion 'box'.",
    },
  })
