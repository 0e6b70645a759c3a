// Proxies (docs/api.md, Import, docs/api.md, Import, docs/media.md): a video made as the transcoding profile
// that applies says (media/profile.ts; none: the built-in default, H.264/AAC in MP4 at 540 lines
// keeping the source's frame rate, fields, pixel aspect ratio, timecode and audio layout), an AAC
// .m4a of an audio file, a JPEG of an image, or an existing proxy rewrapped into MP4 without
// re-encoding.
//
// The proxy folder is worked in as an open descriptor (the caller opens it from its device's root
// without following a link): ffmpeg writes into a hidden file made in it
// (`.reelhouse-proxy-<random>.<ext>`, created exclusively; the watcher ignores `.reelhouse-*`),
// which is put in place under its final name, in the same open folder, only when ffmpeg has
// finished, so a half-written proxy is never seen under a real name and a folder swapped for a
// link meanwhile receives nothing.
// ffmpeg opens the hidden file again by its name (ffmpeg 5 cannot write to a descriptor it is
// given and still seek, which MP4 needs): on Linux the name is below the open folder, given to it
// as its fd 4 (ffmpeg.ts OUTPUT_DIR); elsewhere it is the folder's path. Someone allowed to write
// in the proxy folder who guesses the 64-bit random name in that moment could put a link there;
// the random name is the only guard.
// Putting in place never overwrites: a hard link to the final name fails when the name is taken
// (then the hidden file is removed). On file systems without hard links (FAT, some SMB mounts) a
// rename that refuses a taken name is used where the system has one, else "check, then rename",
// which leaves a moment in which a file made by someone else could be replaced.
//
// The caller chooses the name (the source's base name, media/proxyname.ts: A001C003 →
// A001C003.mp4, with a second name for when that one is taken) and opens the proxy folder where
// it should be (storage/roots.ts); this file neither creates nor checks folders. With
// `pictures`, the same ffmpeg run makes the asset's pictures beside the proxy (media/pictures.ts),
// named after the proxy's final name; a picture that fails never fails the proxy.
//
// Time limits: a transcode may take 60 s + 10 × the media's duration (a slow NAS decoding 4K
// runs below real time), a rewrap 60 s + 2 × the duration, an image 60 s; 6 hours when the
// duration is unknown. A run that writes no progress for 2 minutes is stopped earlier:
// ffmpeg's -progress writes twice a second while it works, so silence means it hangs (a dead
// network mount, a stuck decoder).
import { randomBytes } from 'node:crypto'
import { closeSync } from 'node:fs'
import { lstat } from 'node:fs/promises'
import { CancelledError } from '../storage/fs.ts'
import { pathOf } from '../storage/paths.ts'
import { type Ffmpeg, INPUT, MediaError, OUTPUT_DIR } from './ffmpeg.ts'
import {
  AT_FDCWD,
  DIR_FLAGS,
  E,
  O,
  cName,
  close,
  errnoName,
  openat,
  openatCreate,
  renameat,
  unlinkat,
} from '../storage/dirfd.ts'
import { linkIntoPlace, takenIn } from './place.ts'
import {
  type PictureName,
  type PictureRun,
  companionsFree,
  dropPictures,
  picturePlan,
  placePictures,
  removePicturesIn,
  sharingProxyScale,
  startPictures,
} from './pictures.ts'
import type { MediaKind } from './probe.ts'
import {
  BUILT_IN,
  type Container,
  DEFAULT_PROXY_HEIGHT,
  type Encoding,
  type ProfileFields,
  encodingOf,
} from './profile.ts'

/** Paths of the proxy folder and the source, joined and resolved by the platform's rules (win32 on Windows). */
const { join, resolve } = pathOf

export { DEFAULT_PROXY_HEIGHT }
/** The extension of each kind's proxy; a video's follows its profile's container (CONTAINER_EXT). */
export const PROXY_EXT: Readonly<Record<MediaKind, string>> = { video: '.mp4', audio: '.m4a', image: '.jpg' }
export const CONTAINER_EXT: Readonly<Record<Container, string>> = { mp4: '.mp4', mov: '.mov', mxf: '.mxf' }
export const TEMP_PREFIX = '.reelhouse-proxy-'
const AAC_MAX_CHANNELS = 8
const IDLE_MS = 120_000

export type ProxyProgress = {
  /** Seconds of output written. */
  seconds: number
  /** The source's duration in seconds, when known. */
  duration?: number
  /** seconds / duration, at most 1; absent when the duration is unknown. */
  fraction?: number
  done: boolean
}

type Common = {
  /** Folder the proxy goes in; must exist. */
  proxyDir: string
  /**
   * Opens `proxyDir`, checked by the caller (reached from its device's root without a link:
   * storage/roots.ts); the hidden file is made, written and named in the folder so opened. Absent:
   * the folder is opened by its path (its last name not followed).
   */
  openProxyDir?: () => number
  /**
   * The proxy's file name. The extension of the kind (.mp4, .m4a, .jpg) is added unless the name
   * already ends with it: "42" and "42.mp4" both give 42.mp4.
   */
  baseName: string
  /**
   * With 'number': the name tried next when `baseName` (or a picture's name beside it) is taken,
   * before the numbered ones, which then number it (A001C003_42_1.mp4).
   */
  fallbackName?: string
  /** Make the asset's pictures in the same run (media/pictures.ts). */
  pictures?: boolean
  /**
   * The stem of the asset's current proxy in this folder (a remake into another container): its
   * pictures are the asset's own, so they do not make a name taken, and new ones replace them.
   */
  ownStem?: string
  /**
   * 'refuse' (the default): a taken name is a MediaError 'taken'. 'number': name_1.mp4, name_2.mp4…
   * 'replace': the finished proxy is renamed over the file of that name (a remake: the old proxy
   * is there until the new one is complete).
   */
  ifTaken?: 'refuse' | 'number' | 'replace'
  signal?: AbortSignal
  onProgress?: (progress: ProxyProgress) => void
  /** The source's duration, when the caller probed it already; else it is asked of ffprobe. */
  durationSeconds?: number
  /** Replaces the time limit worked out from the duration. */
  timeoutMs?: number
}

export type MakeProxyOptions = Common & {
  source: string
  /**
   * Opens `source` afresh for each run of ffprobe and ffmpeg, checked by the caller (the file
   * catalogued): the child reads that descriptor, not whatever the path names by then. Afresh,
   * because where the child duplicates it (macOS) the file offset is shared with the last run.
   */
  openSource?: () => number
  kind: MediaKind
  /** The transcoding profile that applies (checked by profileProblem); none: the built-in default. */
  profile?: ProfileFields
  /** Replaces the profile's height (lines at most; never upscaled). */
  height?: number
}

export type RewrapOptions = Common & {
  /** The existing proxy (the asset's path_proxy). */
  source: string
  /** 'audio' names the result .m4a; the container is MP4 either way. Default 'video'. */
  kind?: 'video' | 'audio'
}

/** What a run made: the proxy's path, its pictures' paths, and why a picture asked for is missing. */
export type Made = { path: string; pictures: Partial<Record<PictureName, string>>; warning?: string }

/** Makes a proxy of `source`; resolves to its path. */
export async function makeProxy(ff: Ffmpeg, options: MakeProxyOptions): Promise<string> {
  return (await makeProxyWithPictures(ff, options)).path
}

/** Copies the streams of an existing proxy into MP4 (-c copy); resolves to the new path. */
export async function rewrapProxy(ff: Ffmpeg, options: RewrapOptions): Promise<string> {
  return (await rewrapProxyWithPictures(ff, options)).path
}

/** makeProxy, and the pictures when `options.pictures` asks for them. */
export async function makeProxyWithPictures(ff: Ffmpeg, options: MakeProxyOptions): Promise<Made> {
  const { kind } = options
  const height = options.height
  if (height !== undefined && (!Number.isInteger(height) || height < 2))
    throw new MediaError('failed', `a proxy height must be a whole number of pixels, at least 2 (got ${height})`)
  let encoding: Encoding
  try {
    encoding = encodingOf(options.profile ?? BUILT_IN)
  } catch (error) {
    throw new MediaError('failed', (error as Error).message)
  }
  if (height !== undefined) encoding = { ...encoding, maxHeight: height, maxWidth: options.profile?.width ?? 0 }
  const ext = kind === 'video' ? CONTAINER_EXT[encoding.container] : PROXY_EXT[kind]
  return produce(ff, options, kind, 'transcode', (source) => proxyArgs(kind, encoding, source), ext)
}

/** rewrapProxy, and the pictures (made from the old proxy) when `options.pictures` asks for them. */
export async function rewrapProxyWithPictures(ff: Ffmpeg, options: RewrapOptions): Promise<Made> {
  const kind = options.kind ?? 'video'
  return produce(
    ff,
    options,
    kind,
    'rewrap',
    () => [
      // Every video stream but cover pictures, every audio stream; timecode and data tracks stay behind.
      '-map',
      '0:V?',
      '-map',
      '0:a?',
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
    ],
    PROXY_EXT[kind],
  )
}

/** What proxyArgs needs to know of the source (ffprobe's view of it); absent without ffprobe. */
export type SourceInfo = {
  /** Seconds. */
  duration?: number
  /** The video stream's own duration in seconds, when given (the format's may be the audio's). */
  videoDuration?: number
  /** The first video stream that is not a cover picture. */
  video?: {
    width: number
    height: number /** "4:3"; absent when unknown. */
    sar?: string
    fieldOrder: 'tff' | 'bff' | 'progressive'
  }
  /** Each audio stream's channels, in order. */
  audio: number[]
  /** The source's start timecode (its format's or a stream's tag), e.g. 10:00:00:00. */
  timecode?: string
}

/** The size that fits inside maxWidth × maxHeight (0: no limit), keeping the storage aspect, never larger, even (a multiple of `step`). */
export function fitSize(
  width: number,
  height: number,
  maxWidth: number,
  maxHeight: number,
  step = 2,
): { width: number; height: number } {
  const scale = Math.min(1, maxWidth > 0 ? maxWidth / width : 1, maxHeight > 0 ? maxHeight / height : 1)
  // The nearest multiple, unless that passes the limit (or the source's own size).
  const near = (n: number, by: number, limit: number) => {
    const round = Math.round(n / by) * by
    return Math.max(by, round > limit ? Math.floor(n / by) * by : round)
  }
  return {
    width: near(width * scale, 2, Math.min(width, maxWidth || width)),
    height: near(height * scale, step, Math.min(height, maxHeight || height)),
  }
}

/**
 * ffmpeg's output options for a proxy of `kind` made as `enc` says, of a source that ffprobe saw as
 * `source` (absent: not probed; then sizes are worked out by ffmpeg's filter and the layout is kept
 * as the first audio stream's).
 */
export function proxyArgs(kind: MediaKind, enc: Encoding, source?: SourceInfo): string[] {
  const timecode = source?.timecode ? ['-timecode', source.timecode] : []
  const scaleExpr = (max: number) => `scale=w=-2:h='2*trunc(min(${max},ih)/2)'`
  if (kind === 'image') {
    const scale = source?.video ? fitScale(source.video, enc, false) : scaleExpr(enc.maxHeight || DEFAULT_PROXY_HEIGHT)
    return [
      '-map',
      '0:V:0',
      '-frames:v',
      '1',
      '-vf',
      scale,
      '-c:v',
      'mjpeg',
      '-q:v',
      '3',
      '-pix_fmt',
      'yuvj420p',
      '-f',
      'image2',
      '-update',
      '1',
    ]
  }
  // An audio file's proxy is its sound in AAC, whatever should_have_audio says (that is a video's choice).
  const audio = kind === 'audio' ? audioArgs({ ...enc, withoutAudio: false }, source, 'aac') : audioArgs(enc, source)
  if (kind === 'audio') return [...audio, '-vn', '-movflags', '+faststart', '-f', 'mp4']

  const muxer = [...(enc.container === 'mxf' ? [] : ['-movflags', '+faststart']), '-f', enc.container]
  if (enc.passthrough) return ['-map', '0:V', '-map', '0:a?', '-c', 'copy', ...timecode, ...muxer]

  // Fields are kept (encoded as fields, in the source's order) unless the profile deinterlaces.
  const fields =
    !enc.deinterlace && source?.video && source.video.fieldOrder !== 'progressive' ? source.video.fieldOrder : undefined
  const filters: string[] = []
  if (enc.deinterlace) filters.push('yadif=deint=interlaced')
  if (enc.frameRate) filters.push(`fps=${enc.frameRate}`)
  filters.push(source?.video ? fitScale(source.video, enc, !!fields) : scaleExpr(enc.maxHeight || DEFAULT_PROXY_HEIGHT))
  filters.push(`format=${enc.video.pixFmt}`)
  const v = enc.video
  const codec =
    v.encoder === 'libx264'
      ? [
          '-c:v',
          'libx264',
          '-preset',
          'veryfast',
          ...(v.bitrate ? ['-b:v', v.bitrate, '-maxrate', v.bitrate, '-bufsize', v.bitrate] : ['-crf', '23']),
          ...(v.profile ? ['-profile:v', v.profile] : []),
        ]
      : v.encoder === 'prores_ks'
        ? ['-c:v', 'prores_ks', '-profile:v', v.profile!, '-vendor', 'apl0']
        : ['-c:v', 'dnxhd', '-profile:v', v.profile!]
  // x264 and ProRes code the two fields apart, in the source's order; DNxHR cannot (ffmpeg 5.1 refuses
  // interlaced DNxHR): its frames hold both fields woven, unscaled across them, and are marked
  // interlaced in the container, as the source's frames are.
  const interlaced =
    fields && v.encoder !== 'dnxhd'
      ? ['-flags', v.encoder === 'libx264' ? '+ilme+ildct' : '+ildct', '-top', fields === 'tff' ? '1' : '0']
      : []
  return [
    '-map',
    '0:V:0',
    ...audio,
    '-vf',
    filters.join(','),
    ...codec,
    '-pix_fmt',
    v.pixFmt,
    ...interlaced,
    ...timecode,
    ...muxer,
  ]
}

/** scale to the fitted size (field by field when fields are kept), keeping the source's pixel aspect ratio. */
function fitScale(video: NonNullable<SourceInfo['video']>, enc: Encoding, fields: boolean): string {
  // 4:2:0 fields need a multiple of 4 lines (each field's chroma is whole).
  const size = fitSize(video.width, video.height, enc.maxWidth, enc.maxHeight, fields ? 4 : 2)
  return `scale=${size.width}:${size.height}${fields ? ':interl=1' : ''},setsar=${(video.sar ?? '1:1').replace(':', '/')}`
}

/** -map and codec options of the audio: every stream as it is, or the profile's tracks of channels. */
function audioArgs(enc: Encoding, source: SourceInfo | undefined, encoder?: 'aac'): string[] {
  const a = enc.audio
  if (enc.withoutAudio) return ['-an']
  const codec = ['-c:a', encoder ?? a.encoder, ...(a.sampleRate ? ['-ar', String(a.sampleRate)] : [])]
  const aac = (encoder ?? a.encoder) === 'aac'
  // AAC takes at most 8 channels a stream: a wider one (a 16-channel recorder's stream) is dealt
  // into streams of 8, the others kept as they are.
  if (!a.layout && aac && source?.audio.some((c) => c > AAC_MAX_CHANNELS)) {
    const graph: string[] = []
    const outs: string[] = []
    source.audio.forEach((channels, i) => {
      if (channels <= AAC_MAX_CHANNELS) {
        graph.push(`[0:a:${i}]anull[k${i}]`)
        outs.push(`[k${i}]`)
        return
      }
      const parts = Math.ceil(channels / AAC_MAX_CHANNELS)
      graph.push(`[0:a:${i}]asplit=${parts}${Array.from({ length: parts }, (_, p) => `[w${i}_${p}]`).join('')}`)
      for (let p = 0; p < parts; p++) {
        const width = Math.min(AAC_MAX_CHANNELS, channels - p * AAC_MAX_CHANNELS)
        graph.push(
          `[w${i}_${p}]pan=${width === 1 ? 'mono' : width === 2 ? 'stereo' : `${width}c`}|${Array.from({ length: width }, (_, c) => `c${c}=c${p * AAC_MAX_CHANNELS + c}`).join('|')}[o${i}_${p}]`,
        )
        outs.push(`[o${i}_${p}]`)
      }
    })
    return ['-filter_complex', graph.join(';'), ...outs.flatMap((o) => ['-map', o]), ...codec]
  }
  if (!a.layout) return ['-map', '0:a?', ...codec]
  if (!source) return ['-map', '0:a:0?', '-ac', String(a.layout.channels), ...codec]
  if (!source.audio.length) return ['-an']
  // Every channel of every stream in order, dealt out into tracks of `channels`; channels beyond the
  // source's are silent.
  const total = source.audio.reduce((n, c) => n + c, 0)
  const inputs = source.audio.map((_, i) => `[0:a:${i}]`).join('')
  const all = source.audio.length > 1 ? `${inputs}amerge=inputs=${source.audio.length}[all]` : `[0:a:0]anull[all]`
  const { tracks, channels } = a.layout
  const split = `[all]asplit=${tracks}${Array.from({ length: tracks }, (_, t) => `[s${t}]`).join('')}`
  const pans = Array.from({ length: tracks }, (_, t) => {
    const map = Array.from({ length: channels }, (_, c) => {
      const from = t * channels + c
      return from < total ? `c${c}=c${from}` : `c${c}=0*c0`
    })
    return `[s${t}]pan=${channels === 1 ? 'mono' : channels === 2 ? 'stereo' : `${channels}c`}|${map.join('|')}[t${t}]`
  })
  return [
    '-filter_complex',
    [all, split, ...pans].join(';'),
    ...Array.from({ length: tracks }, (_, t) => ['-map', `[t${t}]`]).flat(),
    ...codec,
  ]
}

/** The time limit of one ffmpeg run, as the header says. */
export function timeLimitMs(
  operation: 'transcode' | 'rewrap',
  kind: MediaKind,
  durationSeconds: number | undefined,
): number {
  if (kind === 'image') return 60_000
  if (durationSeconds === undefined) return 6 * 3600_000
  return 60_000 + Math.ceil(durationSeconds * (operation === 'transcode' ? 10_000 : 2_000))
}

async function produce(
  ff: Ffmpeg,
  options: Common & { source: string; openSource?: () => number },
  kind: MediaKind,
  operation: 'transcode' | 'rewrap',
  outputArgs: (source?: SourceInfo) => string[],
  ext: string,
): Promise<Made> {
  const { signal } = options
  if (!ff.available.ffmpeg) throw new MediaError('missing', ff.missing('ffmpeg')!)
  if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
  const source = resolve(options.source)
  const dir = resolve(options.proxyDir)
  const names = {
    first: nameWithExt(options.baseName, ext),
    fallback: options.fallbackName === undefined ? undefined : nameWithExt(options.fallbackName, ext),
  }

  if (!options.openSource) {
    const sourceStat = await lstat(source).catch(() => undefined)
    if (!sourceStat?.isFile())
      throw new MediaError('not_found', sourceStat ? `${source} is not a regular file` : `${source} does not exist`)
  }
  /** Runs with the source: by path, or as a checked descriptor opened for this run and closed after it. */
  const withSource = async <T>(run: (name: string, input?: number) => Promise<T>): Promise<T> => {
    if (!options.openSource) return run(source)
    const fd = options.openSource()
    try {
      return await run(INPUT, fd)
    } finally {
      closeSync(fd)
    }
  }
  const folder = openFolder(dir, options.openProxyDir)
  try {
    // Fail before the work when the name is taken already; placing checks again (that is the check).
    if ((options.ifTaken ?? 'refuse') === 'refuse' && takenIn(folder, names.first))
      throw new MediaError('taken', `${join(dir, names.first)} exists; a proxy never overwrites`)

    // What the source is (sizes, fields, audio layout, timecode): the arguments depend on it, and
    // the pictures (a rewrap's are made of the old proxy, which is its source).
    const info =
      operation === 'rewrap' && !options.pictures
        ? undefined
        : await withSource((name, input) => sourceOf(ff, name, signal, input, source))
    const duration =
      kind === 'image'
        ? undefined
        : (options.durationSeconds ??
          info?.duration ??
          (operation === 'rewrap'
            ? await withSource((name, input) => durationOf(ff, name, signal, input, source))
            : undefined))
    const args = outputArgs(operation === 'rewrap' ? undefined : info)
    const temp = `${TEMP_PREFIX}${randomBytes(8).toString('hex')}${ext}`
    // Made exclusively in the open folder (O_EXCL, O_NOFOLLOW: no file or link of that name is followed); ffmpeg then writes it.
    const made = openatCreate(folder, cName(temp), O.WRONLY | O.CREAT | O.EXCL | O.NOFOLLOW | O.CLOEXEC, 0o644)
    if (made < 0)
      throw new MediaError(
        'failed',
        `cannot write in the proxy folder ${dir}: ${made === -E.ENOENT ? 'it does not exist' : errnoName(-made)}`,
      )
    close(made)

    let pictures: PictureRun | undefined
    let warning: string | undefined
    try {
      const planned = options.pictures ? picturePlan(kind, info) : undefined
      if (options.pictures && !planned) warning = 'no pictures: ffprobe could not tell what the source holds'
      // An image's thumbnail is made of the proxy's scaled picture (media/pictures.ts sharingProxyScale).
      const shared = planned && sharingProxyScale(planned, args)
      pictures = shared && startPictures(folder, shared.plan)
      const run = (with_: PictureRun | undefined) =>
        runFfmpeg(
          ff,
          options,
          {
            kind,
            operation,
            duration,
            folder,
            dir,
            temp,
            args: with_ && shared ? shared.args : args,
            source,
            pictures: with_,
          },
          withSource,
        )
      try {
        await run(pictures)
      } catch (error) {
        // A picture's branch must never cost the proxy: a run that failed with them is made again without.
        if (!pictures || !(error instanceof MediaError) || error.code !== 'failed') throw error
        dropPictures(folder, pictures)
        pictures = undefined
        warning = `no pictures: ${error.message}`
        await run(undefined)
      }
      // ffmpeg may have finished just as the abort came: the caller asked for nothing, so nothing is left.
      if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
      const name = place(
        folder,
        temp,
        dir,
        names,
        options.ifTaken ?? 'refuse',
        pictures ? (options.ownStem ?? '') : undefined,
      )
      const stem = stemOf(name)
      const replace = options.ifTaken === 'replace' || stem === options.ownStem
      if (!pictures) {
        // Pictures of the proxy replaced would show the old one: none is better.
        if (options.pictures && replace) removePicturesIn(folder, name)
        return { path: join(dir, name), pictures: {}, ...(warning ? { warning } : {}) }
      }
      const placed = placePictures(folder, pictures, kind, stem, replace)
      const paths = Object.fromEntries(Object.entries(placed.names).map(([k, n]) => [k, join(dir, n)]))
      const missing = placed.problems.length ? `some pictures were not made: ${placed.problems.join('; ')}` : undefined
      return { path: join(dir, name), pictures: paths, ...(missing ? { warning: missing } : {}) }
    } catch (error) {
      if (pictures) dropPictures(folder, pictures)
      const gone = unlinkat(folder, cName(temp), 0)
      if (gone < 0 && gone !== -E.ENOENT && error instanceof Error)
        error.message += `; ${join(dir, temp)} could not be removed: ${errnoName(-gone)}`
      throw error
    }
  } finally {
    close(folder)
  }
}

/** The proxy's name without its extension: the stem its pictures are named after. */
const stemOf = (name: string) => name.slice(0, name.lastIndexOf('.'))

/** One ffmpeg run: the proxy into `temp` and, with `pictures`, their outputs too; progress as -progress reports it. */
async function runFfmpeg(
  ff: Ffmpeg,
  options: Common,
  run: {
    kind: MediaKind
    operation: 'transcode' | 'rewrap'
    duration: number | undefined
    folder: number
    dir: string
    temp: string
    args: string[]
    source: string
    pictures: PictureRun | undefined
  },
  withSource: <T>(work: (name: string, input?: number) => Promise<T>) => Promise<T>,
): Promise<void> {
  const { signal, onProgress } = options
  const { duration, dir, pictures } = run
  // Through the open folder where the system names it (the child's fd 4): a folder swapped for a
  // link since it was opened sends nothing elsewhere. Elsewhere by its path.
  const named = (temp: string) => (OUTPUT_DIR ? `${OUTPUT_DIR}/${temp}` : join(dir, temp))
  let seconds = 0
  await withSource((name, input) =>
    ff.run(
      'ffmpeg',
      [
        '-nostdin',
        '-hide_banner',
        '-v',
        'error',
        '-nostats',
        '-progress',
        'pipe:1',
        '-y',
        '-protocol_whitelist',
        'file',
        '-i',
        `file:${name}`,
        // The pictures' outputs first, the proxy's last: its file stays the command's last
        // argument, as it was before pictures (tools that wrap ffmpeg take the last for the output).
        ...(pictures?.graphArgs ?? []),
        ...(pictures?.outputArgs(named) ?? []),
        ...run.args,
        `file:${named(run.temp)}`,
      ],
      {
        timeoutMs: options.timeoutMs ?? timeLimitMs(run.operation, run.kind, duration),
        idleMs: IDLE_MS,
        signal,
        input,
        inputPath: run.source,
        outputDir: OUTPUT_DIR ? run.folder : undefined,
        // -progress writes blocks of key=value lines, each ending with progress=continue|end.
        onLine: (line) => {
          const [key, value] = line.split('=', 2)
          if (key === 'out_time_us' && Number(value) >= 0) seconds = Number(value) / 1e6
          else if (key === 'progress' && onProgress)
            onProgress({
              seconds,
              duration,
              fraction: duration ? Math.min(1, seconds / duration) : undefined,
              done: value === 'end',
            })
        },
      },
    ),
  )
}

/** The proxy folder, open: by the caller's checked opener, else by its path (a link as the folder itself is refused). */
function openFolder(dir: string, open?: () => number): number {
  let fd: number
  try {
    fd = open ? open() : openat(AT_FDCWD, cName(dir), DIR_FLAGS)
  } catch (error) {
    throw new MediaError('failed', `cannot write in the proxy folder ${dir}: ${(error as Error).message}`)
  }
  if (fd < 0)
    throw new MediaError(
      'failed',
      `cannot write in the proxy folder ${dir}: ${fd === -E.ENOENT ? 'it does not exist' : errnoName(-fd)}`,
    )
  return fd
}

/** `name` + `ext` unless it ends with `ext` already; a plain name, never a path. */
function nameWithExt(name: string, ext: string): string {
  if (!name || name.includes('/') || name.includes('\\') || name.includes('\0') || name.startsWith('.'))
    throw new MediaError(
      'failed',
      `a proxy name must be a plain file name not starting with a dot (got ${JSON.stringify(name)})`,
    )
  const full = name.toLowerCase().endsWith(ext) ? name : name + ext
  if (Buffer.byteLength(full) > 255)
    throw new MediaError('failed', `the proxy name ${JSON.stringify(full)} is too long`)
  return full
}

/**
 * Gives the finished hidden file `temp` of the open folder its name there without overwriting
 * (media/place.ts); answers the name. The names tried: `names.first`, then (ifTaken 'number')
 * `names.fallback` and the numbered variants of the last of them. With `pictures`, a name whose
 * pictures' names are not all free is passed over too ('number'), so that they can follow it,
 * unless they are the asset's own (the stem `pictures` names).
 * Every call is relative to the open folder.
 */
function place(
  folder: number,
  temp: string,
  dir: string,
  names: { first: string; fallback?: string },
  ifTaken: 'refuse' | 'number' | 'replace',
  /** With pictures: the stem whose pictures are the asset's own ('' for none); absent: no pictures. */
  pictures: string | undefined,
): string {
  if (ifTaken === 'replace') {
    // rename replaces the old proxy in one step: a reader sees the old file or the new one.
    const moved = renameat(folder, cName(temp), folder, cName(names.first))
    if (moved < 0)
      throw new MediaError('failed', `cannot put the proxy in place as ${join(dir, names.first)}: ${errnoName(-moved)}`)
    return names.first
  }
  const last = names.fallback ?? names.first
  const dot = last.lastIndexOf('.')
  const candidates = function* () {
    yield names.first
    if (names.fallback && names.fallback !== names.first) yield names.fallback
    for (let n = 1; n <= 9999; n++) yield `${last.slice(0, dot)}_${n}${last.slice(dot)}`
  }
  for (const name of candidates()) {
    const stem = stemOf(name)
    if (ifTaken === 'number' && pictures !== undefined && stem !== pictures && !companionsFree(folder, stem)) continue
    const done = linkIntoPlace(folder, temp, name)
    if (done === 0) return name
    if (done === -E.EEXIST) {
      if (ifTaken === 'refuse') throw new MediaError('taken', `${join(dir, name)} exists; a proxy never overwrites`)
      continue
    }
    throw new MediaError('failed', `cannot put the proxy in place as ${join(dir, name)}: ${errnoName(-done)}`)
  }
  throw new MediaError('taken', `${join(dir, last)} and its numbered variants up to _9999 exist`)
}

/** What ffprobe sees of the source (proxyArgs' SourceInfo); undefined without ffprobe or when it cannot read it. */
async function sourceOf(
  ff: Ffmpeg,
  source: string,
  signal?: AbortSignal,
  input?: number,
  inputPath?: string,
): Promise<SourceInfo | undefined> {
  if (!ff.available.ffprobe) return undefined
  let json: { format?: { duration?: string; tags?: Record<string, string> }; streams?: Record<string, any>[] }
  try {
    const { stdout } = await ff.run(
      'ffprobe',
      [
        '-v',
        'error',
        '-protocol_whitelist',
        'file',
        '-of',
        'json',
        '-show_entries',
        'format=duration:format_tags=timecode:stream=codec_type,width,height,sample_aspect_ratio,field_order,channels,duration:stream_tags=timecode:stream_disposition=attached_pic:stream_side_data=rotation',
        `file:${source}`,
      ],
      { timeoutMs: 30_000, signal, input, inputPath },
    )
    json = JSON.parse(stdout)
  } catch (error) {
    if (error instanceof CancelledError) throw error
    // ffmpeg's own error about an unreadable source says more; let it speak.
    return undefined
  }
  const streams = json.streams ?? []
  const seconds = Number(json.format?.duration)
  const v = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic && s.width > 0 && s.height > 0)
  const order = String(v?.field_order ?? '')
  const sar =
    typeof v?.sample_aspect_ratio === 'string' && /^[1-9]\d*:[1-9]\d*$/.test(v.sample_aspect_ratio)
      ? v.sample_aspect_ratio
      : undefined
  const timecode = [json.format?.tags?.timecode, ...streams.map((s) => s.tags?.timecode)].find(
    (t) => typeof t === 'string' && /^\d\d:\d\d:\d\d[:;.]\d\d$/.test(t),
  )
  // ffmpeg turns a picture its display matrix turns (a phone's) before the filters see it: a
  // quarter turn gives them height × width, with the pixel aspect turned too.
  const rotation = Number(
    v?.side_data_list?.find((d: { rotation?: number }) => d.rotation !== undefined)?.rotation ?? 0,
  )
  const quarter = Math.abs(rotation) % 180 === 90
  const turned = quarter && sar ? sar.split(':').reverse().join(':') : sar
  const videoSeconds = Number(v?.duration)
  return {
    duration: Number.isFinite(seconds) && seconds > 0 ? seconds : undefined,
    videoDuration: Number.isFinite(videoSeconds) && videoSeconds > 0 ? videoSeconds : undefined,
    video: v
      ? {
          width: quarter ? v.height : v.width,
          height: quarter ? v.width : v.height,
          sar: turned,
          fieldOrder:
            order === 'tt' || order === 'tb' ? 'tff' : order === 'bb' || order === 'bt' ? 'bff' : 'progressive',
        }
      : undefined,
    audio: streams.filter((s) => s.codec_type === 'audio' && s.channels > 0).map((s) => s.channels as number),
    timecode,
  }
}

/** The source's duration in seconds from ffprobe, for progress and the time limit; undefined when unknown. */
async function durationOf(
  ff: Ffmpeg,
  source: string,
  signal?: AbortSignal,
  input?: number,
  inputPath?: string,
): Promise<number | undefined> {
  if (!ff.available.ffprobe) return undefined
  try {
    const { stdout } = await ff.run(
      'ffprobe',
      [
        '-v',
        'error',
        '-protocol_whitelist',
        'file',
        '-show_entries',
        'format=duration',
        '-of',
        'csv=p=0',
        `file:${source}`,
      ],
      { timeoutMs: 30_000, signal, input, inputPath },
    )
    const seconds = Number(stdout.trim())
    return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined
  } catch (error) {
    if (error instanceof CancelledError) throw error
    // ffmpeg's own error about an unreadable source says more; let it speak.
    return undefined
  }
}
