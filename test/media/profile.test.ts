// What a transcoding profile may ask (src/media/profile.ts): every combination the table in its
// header names is taken, and each one ffmpeg 5.1 cannot make is refused at its field, before
// any import meets it. The proxies these make are checked with ffprobe in proxy-profile.test.ts.
import { expect, test } from 'bun:test'
import { BUILT_IN, type ProfileFields, encodingOf, profileProblem } from '../../src/media/profile.ts'
import { fitSize } from '../../src/media/proxy.ts'

const profile = (fields: Partial<ProfileFields>): ProfileFields => ({ ...BUILT_IN, ...fields })

test('the combinations ffmpeg makes are taken', () => {
  const taken: Partial<ProfileFields>[] = [
    {},
    { codec_name: 'h264', codec_profile: 'baseline', video_container: 'mp4', pix_fmt: 'yuv420p' },
    {
      codec_name: 'libx264',
      codec_profile: 'high422',
      pix_fmt: 'yuv422p',
      video_container: 'mov',
      audio_codec_name: 'pcm_s24le',
      bits_per_sample: 24,
    },
    { codec_name: 'prores', codec_profile: 'proxy' },
    {
      codec_name: 'prores_ks',
      codec_profile: 'lt',
      video_container: 'mov',
      pix_fmt: 'yuv422p10le',
      audio_codec_name: 'pcm',
      bits_per_sample: 16,
    },
    { codec_name: 'dnxhd', codec_profile: 'dnxhr_lb', video_container: 'mxf', frame_rate: '25', sample_rate: 48000 },
    { codec_name: 'dnxhr', codec_profile: 'dnxhr_hqx', video_container: 'mov', pix_fmt: 'yuv422p10le' },
    { width: 1280, height: 720, frame_rate: '30000/1001', video_data_rate: '2500k', progressive: true },
    { tracks: 4, channels_per_track: 1, sample_rate: 44100, should_have_audio: false, passthrough: true },
    { frame_rate: '29.97', video_data_rate: '8M', tracks: 1, channels_per_track: 8 },
  ]
  for (const fields of taken) expect([fields, profileProblem(profile(fields))]).toEqual([fields, undefined])
})

test('what ffmpeg cannot make is refused at its field', () => {
  const refused: [Partial<ProfileFields>, string][] = [
    [{ codec_name: 'vp9' }, '/codec_name'],
    [{ codec_name: 'prores', codec_profile: 'dnxhr_lb' }, '/codec_profile'],
    [{ codec_name: 'h264', codec_profile: 'high10' }, '/codec_profile'],
    [{ codec_name: 'prores', video_container: 'mp4' }, '/video_container'],
    [{ codec_name: 'prores', video_container: 'mxf' }, '/video_container'],
    [{ codec_name: 'h264', video_container: 'mxf' }, '/video_container'],
    [{ video_container: 'avi' }, '/video_container'],
    [{ codec_name: 'h264', codec_profile: 'main', pix_fmt: 'yuv422p' }, '/pix_fmt'],
    [{ codec_name: 'dnxhd', codec_profile: 'dnxhr_lb', pix_fmt: 'yuv422p10le' }, '/pix_fmt'],
    [{ codec_name: 'prores', pix_fmt: 'yuv420p' }, '/pix_fmt'],
    [{ width: 20000 }, '/width'],
    [{ codec_name: 'dnxhd', width: 200 }, '/width'],
    [{ codec_name: 'dnxhd', height: 100 }, '/height'],
    [{ frame_rate: 'fast' }, '/frame_rate'],
    [{ frame_rate: '0' }, '/frame_rate'],
    [{ codec_name: 'dnxhd', video_container: 'mxf', frame_rate: '12' }, '/frame_rate'],
    [{ video_data_rate: 'lots' }, '/video_data_rate'],
    [{ tracks: 2 }, '/channels_per_track'],
    [{ channels_per_track: 2 }, '/tracks'],
    [{ tracks: 1, channels_per_track: 9 }, '/channels_per_track'],
    [{ video_container: 'mov', audio_codec_name: 'pcm', tracks: 1, channels_per_track: 10 }, '/channels_per_track'],
    [{ audio_codec_name: 'mp3' }, '/audio_codec_name'],
    [{ audio_codec_name: 'pcm_s16le' }, '/audio_codec_name'], // mp4, the h264 default
    [{ codec_name: 'dnxhd', video_container: 'mxf', audio_codec_name: 'aac' }, '/audio_codec_name'],
    [{ bits_per_sample: 16 }, '/bits_per_sample'], // AAC
    [{ video_container: 'mov', audio_codec_name: 'pcm', bits_per_sample: 20 }, '/bits_per_sample'],
    [{ video_container: 'mov', audio_codec_name: 'pcm_s16le', bits_per_sample: 24 }, '/bits_per_sample'],
    [{ sample_rate: 44000 }, '/sample_rate'],
    [{ codec_name: 'dnxhd', video_container: 'mxf', sample_rate: 44100 }, '/sample_rate'],
  ]
  for (const [fields, pointer] of refused) {
    const problem = profileProblem(profile(fields))
    expect([fields, problem?.pointer]).toEqual([fields, pointer])
    expect(() => encodingOf(profile(fields))).toThrow(pointer.slice(1))
  }
})

test('the built-in default: H.264 and AAC in MP4, 540 lines, fields and audio as the source has them', () => {
  expect(encodingOf(BUILT_IN)).toEqual({
    container: 'mp4',
    passthrough: false,
    video: { codec: 'h264', encoder: 'libx264', profile: undefined, pixFmt: 'yuv420p', bitrate: undefined },
    maxWidth: 0,
    maxHeight: 540,
    frameRate: undefined,
    deinterlace: false,
    withoutAudio: false,
    audio: { encoder: 'aac', sampleRate: undefined, layout: undefined },
  })
  // A passthrough with no container: mov, which holds nearly any codec.
  expect(encodingOf(profile({ passthrough: true })).container).toBe('mov')
  // MXF: PCM at 48 kHz (ffmpeg writes no other rate there), DNxHR LB by default.
  expect(encodingOf(profile({ codec_name: 'dnxhd', video_container: 'mxf', bits_per_sample: 24 }))).toMatchObject({
    container: 'mxf',
    video: { encoder: 'dnxhd', profile: 'dnxhr_lb', pixFmt: 'yuv422p' },
    audio: { encoder: 'pcm_s24le', sampleRate: 48000 },
  })
})

test('sizes fit inside, keep the aspect, never grow, and are even (a multiple of 4 for kept fields)', () => {
  expect(fitSize(1920, 1080, 0, 540)).toEqual({ width: 960, height: 540 })
  expect(fitSize(1440, 1080, 0, 540)).toEqual({ width: 720, height: 540 })
  expect(fitSize(320, 240, 0, 540)).toEqual({ width: 320, height: 240 })
  expect(fitSize(1920, 1080, 640, 640)).toEqual({ width: 640, height: 360 })
  expect(fitSize(721, 577, 0, 0)).toEqual({ width: 720, height: 576 })
  expect(fitSize(720, 576, 0, 270, 4)).toEqual({ width: 338, height: 268 })
})
