// What a transcoding profile asks of a proxy (docs/media.md, "Proxies and the transcoding
// profile"), as ffmpeg 5.1 can make it. Pure: no I/O. `profileProblem` is the check a profile
// passes when it is created or changed (a profile ffmpeg cannot make is refused then, at its
// field, not discovered at the first import); `encodingOf` turns a checked profile into the
// choices proxy.ts builds ffmpeg's arguments from.
//
// The combinations made (each checked by running ffmpeg 5.1):
//   container  video codec (codec_name / codec_profile / pix_fmt)                 audio
//   mp4        h264 (baseline|main|high: yuv420p; high422: 420/422; high444)      aac
//   mov        h264 as above; prores (proxy|lt|standard|hq, yuv422p10le);          aac, pcm
//              dnxhd (dnxhr_lb|dnxhr_sq|dnxhr_hq: yuv422p; dnxhr_hqx: yuv422p10le; at least 256×120)
//   mxf        dnxhd as above (OP1a), at a broadcast frame rate                     pcm at 48 kHz
// ffmpeg 5.1's mp4 muxer takes no PCM, ProRes or DNxHR; its mxf muxer no AAC, no ProRes (it
// fails at the first packet), no sample rate but 48 kHz and no frame rate outside the broadcast
// ones. H.264 in MXF, which ffmpeg writes, is refused too: the MXF proxies editing tools take are
// DNxHR (docs/media.md).

/** The profile fields that shape a proxy (a transcoding_profiles row has these and more). */
export type ProfileFields = {
  codec_name: string
  codec_profile: string
  video_container: string
  width: number
  height: number
  frame_rate: string
  video_data_rate: string
  pix_fmt: string
  progressive: boolean
  should_have_audio: boolean
  tracks: number
  channels_per_track: number
  audio_codec_name: string
  sample_rate: number
  bits_per_sample: number
  passthrough: boolean
}

/** Lines of a proxy when the profile names neither width nor height (and of the built-in default). */
export const DEFAULT_PROXY_HEIGHT = 540

/** The built-in default: no profile applies (docs/media.md, "Attaching proxies in editing tools"). */
export const BUILT_IN: Readonly<ProfileFields> = Object.freeze({
  codec_name: '',
  codec_profile: '',
  video_container: '',
  width: 0,
  height: 0,
  frame_rate: '',
  video_data_rate: '',
  pix_fmt: '',
  progressive: false,
  should_have_audio: true,
  tracks: 0,
  channels_per_track: 0,
  audio_codec_name: '',
  sample_rate: 0,
  bits_per_sample: 0,
  passthrough: false,
})

export type VideoCodec = 'h264' | 'prores' | 'dnxhd'
export type Container = 'mp4' | 'mov' | 'mxf'
export type AudioEncoder = 'aac' | 'pcm_s16le' | 'pcm_s24le'

const CODEC_NAMES: Record<string, VideoCodec> = {
  h264: 'h264',
  libx264: 'h264',
  avc: 'h264',
  avc1: 'h264',
  'h.264': 'h264',
  prores: 'prores',
  prores_ks: 'prores',
  dnxhd: 'dnxhd',
  dnxhr: 'dnxhd',
}
/** Each codec's profiles: the first is taken when codec_profile is empty; the value is the pixel formats it takes (first: its default). */
const PROFILES: Record<VideoCodec, Record<string, readonly string[]>> = {
  h264: {
    '': ['yuv420p', 'yuv422p', 'yuv444p'],
    baseline: ['yuv420p'],
    main: ['yuv420p'],
    high: ['yuv420p'],
    high422: ['yuv420p', 'yuv422p'],
    high444: ['yuv420p', 'yuv422p', 'yuv444p'],
  },
  prores: { proxy: ['yuv422p10le'], lt: ['yuv422p10le'], standard: ['yuv422p10le'], hq: ['yuv422p10le'] },
  dnxhd: { dnxhr_lb: ['yuv422p'], dnxhr_sq: ['yuv422p'], dnxhr_hq: ['yuv422p'], dnxhr_hqx: ['yuv422p10le'] },
}
/** ffmpeg's name of an h264 codec_profile (libx264's -profile:v). */
const X264_PROFILE: Record<string, string> = {
  baseline: 'baseline',
  main: 'main',
  high: 'high',
  high422: 'high422',
  high444: 'high444',
}
const CONTAINERS: Record<Container, readonly VideoCodec[]> = {
  mp4: ['h264'],
  mov: ['h264', 'prores', 'dnxhd'],
  mxf: ['dnxhd'],
}
/** The container when video_container is empty (a passthrough's: mov, which holds nearly any codec). */
const DEFAULT_CONTAINER: Record<VideoCodec, Container> = { h264: 'mp4', prores: 'mov', dnxhd: 'mov' }
const AUDIO_NAMES: Record<string, 'aac' | 'pcm' | AudioEncoder> = {
  aac: 'aac',
  pcm: 'pcm',
  pcm_s16le: 'pcm_s16le',
  pcm_s24le: 'pcm_s24le',
  lpcm: 'pcm',
}
/** AAC's sample rates (ffmpeg's aac encoder takes these). */
const SAMPLE_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]
/** The frame rates ffmpeg's mxf muxer writes. */
const MXF_RATES = ['24000/1001', '24', '25', '30000/1001', '30', '50', '60000/1001', '60']
const RATE = /^(?:[1-9]\d{0,5}(?:\/[1-9]\d{0,5})?|\d{1,3}\.\d{1,3})$/
const DATA_RATE = /^[1-9]\d{0,9}(?:\.\d{1,3})?[kKmM]?$/
const MAX_SIZE = 16384
const MAX_TRACKS = 64

/** A profile's frame_rate as a number of frames a second. */
function rateOf(text: string): number {
  const [n, d] = text.split('/')
  return Number(n) / Number(d ?? 1)
}

/** The field a profile ffmpeg cannot make is refused at, and why; undefined when ffmpeg can make it. */
export function profileProblem(p: ProfileFields): { pointer: string; detail: string } | undefined {
  const at = (field: keyof ProfileFields, detail: string) => ({ pointer: `/${field}`, detail })
  const codec = p.codec_name === '' ? 'h264' : CODEC_NAMES[p.codec_name.toLowerCase()]
  if (!codec)
    return at('codec_name', `a proxy is made as h264, prores or dnxhd (DNxHR), not ${JSON.stringify(p.codec_name)}`)
  const profiles = PROFILES[codec]
  const profile = p.codec_profile.toLowerCase()
  if (profile !== '' && !Object.hasOwn(profiles, profile))
    return at(
      'codec_profile',
      `${codec} proxies are made with codec_profile ${Object.keys(profiles).filter(Boolean).join(', ')} (or empty), not ${JSON.stringify(p.codec_profile)}`,
    )
  const container = (p.video_container.toLowerCase() || (p.passthrough ? 'mov' : DEFAULT_CONTAINER[codec])) as Container
  if (!Object.hasOwn(CONTAINERS, container))
    return at(
      'video_container',
      `a proxy's video_container is mp4, mov or mxf (or empty), not ${JSON.stringify(p.video_container)}`,
    )
  if (!CONTAINERS[container].includes(codec))
    return at(
      'video_container',
      `ffmpeg writes ${container} with ${CONTAINERS[container].join(' or ')} video, not ${codec}; use ${Object.entries(
        CONTAINERS,
      )
        .filter(([, c]) => c.includes(codec))
        .map(([k]) => k)
        .join(' or ')}`,
    )
  const formats = profiles[profile || Object.keys(profiles)[0]!]!
  if (p.pix_fmt !== '' && !formats.includes(p.pix_fmt))
    return at(
      'pix_fmt',
      `${codec}${profile ? ` ${profile}` : ''} is made in ${formats.join(', ')} (or empty), not ${JSON.stringify(p.pix_fmt)}`,
    )
  for (const side of ['width', 'height'] as const)
    if (p[side] > MAX_SIZE) return at(side, `at most ${MAX_SIZE} pixels (0: no limit)`)
  // ffmpeg's DNxHR encoder takes no picture smaller than 256×120 (a smaller source cannot be made either).
  if (codec === 'dnxhd' && p.width !== 0 && p.width < 256)
    return at('width', 'DNxHR pictures are at least 256 pixels wide (0: no limit)')
  if (codec === 'dnxhd' && p.height !== 0 && p.height < 120)
    return at('height', 'DNxHR pictures are at least 120 lines high (0: 540)')
  if (p.frame_rate !== '') {
    if (!RATE.test(p.frame_rate) || !(rateOf(p.frame_rate) > 0 && rateOf(p.frame_rate) <= 300))
      return at(
        'frame_rate',
        `a frame rate such as 25, 30000/1001 or 29.97, above 0 and at most 300 (empty: the source's), not ${JSON.stringify(p.frame_rate)}`,
      )
    if (container === 'mxf' && !MXF_RATES.some((r) => Math.abs(rateOf(r) - rateOf(p.frame_rate)) < 0.001))
      return at('frame_rate', `ffmpeg writes mxf at ${MXF_RATES.join(', ')} frames a second only`)
  }
  if (p.video_data_rate !== '' && !DATA_RATE.test(p.video_data_rate))
    return at(
      'video_data_rate',
      `bits a second such as 2500k, 8M or 8000000 (empty: the codec's default quality), not ${JSON.stringify(p.video_data_rate)}`,
    )
  if ((p.tracks === 0) !== (p.channels_per_track === 0))
    return at(
      p.tracks === 0 ? 'tracks' : 'channels_per_track',
      "tracks and channels_per_track are both 0 (the source's layout) or both set",
    )
  if (p.tracks > MAX_TRACKS) return at('tracks', `at most ${MAX_TRACKS} audio tracks`)
  const audioName =
    p.audio_codec_name === '' ? (container === 'mxf' ? 'pcm' : 'aac') : AUDIO_NAMES[p.audio_codec_name.toLowerCase()]
  if (!audioName)
    return at(
      'audio_codec_name',
      `a proxy's audio is aac, pcm, pcm_s16le or pcm_s24le (or empty), not ${JSON.stringify(p.audio_codec_name)}`,
    )
  if (audioName === 'aac' && container === 'mxf') return at('audio_codec_name', 'ffmpeg writes no AAC in mxf; use pcm')
  if (audioName !== 'aac' && container === 'mp4')
    return at('audio_codec_name', 'ffmpeg 5.1 writes no PCM in mp4; use aac, or mov')
  if (audioName === 'aac' && p.channels_per_track > 8)
    return at('channels_per_track', 'AAC takes at most 8 channels a track')
  // ffmpeg's pan filter names no layout of 9 to 15 channels: a track is made of 8 at most.
  if (p.channels_per_track > 8) return at('channels_per_track', 'at most 8 channels a track')
  if (p.bits_per_sample !== 0) {
    if (audioName === 'aac') return at('bits_per_sample', 'AAC has no bits per sample; 0, or a PCM audio_codec_name')
    if (p.bits_per_sample !== 16 && p.bits_per_sample !== 24)
      return at('bits_per_sample', 'PCM proxies are 16 or 24 bits (0: 16)')
    if (audioName !== 'pcm' && audioName !== `pcm_s${p.bits_per_sample}le`)
      return at('bits_per_sample', `${audioName} is not ${p.bits_per_sample} bits`)
  }
  if (p.sample_rate !== 0) {
    if (container === 'mxf' && p.sample_rate !== 48000)
      return at('sample_rate', 'ffmpeg writes mxf audio at 48000 Hz only (0 gives 48000 too)')
    if (!SAMPLE_RATES.includes(p.sample_rate))
      return at('sample_rate', `one of ${SAMPLE_RATES.join(', ')} (0: the source's)`)
  }
  return undefined
}

/** What proxy.ts makes, from a profile that passed profileProblem. */
export type Encoding = {
  container: Container
  /** Copy the source's streams into the container (passthrough): the rest is not used. */
  passthrough: boolean
  video: {
    codec: VideoCodec
    /** ffmpeg's encoder and its -profile:v (none: the encoder's choice). */
    encoder: 'libx264' | 'prores_ks' | 'dnxhd'
    profile?: string
    pixFmt: string
    /** -b:v for h264; none: constant quality (crf 23). ProRes and DNxHR rates follow their profile. */
    bitrate?: string
  }
  /** Fit inside (0: no limit on that side); both 0 in the profile: DEFAULT_PROXY_HEIGHT lines. */
  maxWidth: number
  maxHeight: number
  /** A new frame rate; none: the source's. */
  frameRate?: string
  /** Deinterlace; else the source's fields and field order are kept. */
  deinterlace: boolean
  /** should_have_audio false: a video's proxy has no sound (an audio file's keeps it). */
  withoutAudio: boolean
  audio: {
    encoder: AudioEncoder
    /** none: the source's. */
    sampleRate?: number
    /** none: the source's streams and their channels. */
    layout?: { tracks: number; channels: number }
  }
}

/** A checked profile (profileProblem says nothing) as what to make. */
export function encodingOf(p: ProfileFields): Encoding {
  const problem = profileProblem(p)
  if (problem) throw new Error(`the transcoding profile cannot be made: ${problem.pointer.slice(1)}: ${problem.detail}`)
  const codec = p.codec_name === '' ? 'h264' : CODEC_NAMES[p.codec_name.toLowerCase()]!
  const profiles = PROFILES[codec]
  const profile = p.codec_profile.toLowerCase() || Object.keys(profiles)[0]!
  const container = (p.video_container.toLowerCase() || (p.passthrough ? 'mov' : DEFAULT_CONTAINER[codec])) as Container
  const audioName =
    p.audio_codec_name === '' ? (container === 'mxf' ? 'pcm' : 'aac') : AUDIO_NAMES[p.audio_codec_name.toLowerCase()]!
  const audioEncoder: AudioEncoder =
    audioName === 'pcm' ? (p.bits_per_sample === 24 ? 'pcm_s24le' : 'pcm_s16le') : audioName
  const noLimit = p.width === 0 && p.height === 0
  return {
    container,
    passthrough: p.passthrough,
    video: {
      codec,
      encoder: codec === 'h264' ? 'libx264' : codec === 'prores' ? 'prores_ks' : 'dnxhd',
      profile: codec === 'h264' ? X264_PROFILE[profile] : profile,
      pixFmt: p.pix_fmt || profiles[profile]![0]!,
      bitrate: codec === 'h264' && p.video_data_rate !== '' ? p.video_data_rate : undefined,
    },
    maxWidth: p.width,
    maxHeight: noLimit ? DEFAULT_PROXY_HEIGHT : p.height,
    frameRate: p.frame_rate || undefined,
    deinterlace: p.progressive,
    withoutAudio: !p.should_have_audio,
    audio: {
      encoder: audioEncoder,
      sampleRate: p.sample_rate || (container === 'mxf' ? 48000 : undefined),
      layout: p.tracks > 0 ? { tracks: p.tracks, channels: p.channels_per_track } : undefined,
    },
  }
}
