// Proxies (api.md 4.10, service.md 9): a small H.264/AAC MP4 of a video, an AAC .m4a of an
// audio file, a JPEG of an image, or an existing proxy rewrapped into MP4 without re-encoding.
//
// ffmpeg writes into a hidden file in the proxy folder (`.reelhouse-proxy-<random>.<ext>`,
// created exclusively; the watcher ignores `.reelhouse-*`), which is put in place under its final
// name only when ffmpeg has finished, so a half-written proxy is never seen under a real name.
// ffmpeg opens the hidden file again by its name (ffmpeg 5 cannot write to a descriptor it is
// given and still seek, which MP4 needs), so someone allowed to write in the proxy folder who
// guesses the 64-bit random name in that moment could put a link there; the random name is the
// only guard.
// Putting in place never overwrites: a hard link to the final name fails when the name is taken
// (then the hidden file is removed). On file systems without hard links (FAT, some SMB mounts)
// it falls back to "check, then rename", which leaves a moment in which a file made by someone
// else could be replaced.
//
// The caller chooses the name (the asset id, e.g. "42" → 42.mp4) and checks that the proxy
// folder is where it should be (storage/paths.ts); this file neither creates nor checks folders.
//
// Time limits: a transcode may take 60 s + 10 × the media's duration (a slow NAS decoding 4K
// runs below real time), a rewrap 60 s + 2 × the duration, an image 60 s; 6 hours when the
// duration is unknown. A run that writes no progress for 2 minutes is stopped earlier:
// ffmpeg's -progress writes twice a second while it works, so silence means it hangs (a dead
// network mount, a stuck decoder).
import { randomBytes } from 'node:crypto'
import { closeSync, openSync } from 'node:fs'
import { link, lstat, rename, unlink } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { CancelledError } from '../storage/fs.ts'
import { type Ffmpeg, INPUT, MediaError } from './ffmpeg.ts'
import type { MediaKind } from './probe.ts'

export const PROXY_EXT: Readonly<Record<MediaKind, string>> = { video: '.mp4', audio: '.m4a', image: '.jpg' }
/** When neither the device nor the default transcoding profile names a height. */
export const DEFAULT_PROXY_HEIGHT = 540
export const TEMP_PREFIX = '.reelhouse-proxy-'
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
   * The proxy's file name. The extension of the kind (.mp4, .m4a, .jpg) is added unless the name
   * already ends with it: "42" and "42.mp4" both give 42.mp4.
   */
  baseName: string
  /** 'refuse' (the default): a taken name is a MediaError 'taken'. 'number': name_1.mp4, name_2.mp4… */
  ifTaken?: 'refuse' | 'number'
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
  /** Height in pixels (the device's or the default transcoding profile's); never upscaled. */
  height?: number
}

export type RewrapOptions = Common & {
  /** The existing proxy (the asset's path_proxy). */
  source: string
  /** 'audio' names the result .m4a; the container is MP4 either way. Default 'video'. */
  kind?: 'video' | 'audio'
}

/** Makes a proxy of `source`; resolves to its path. */
export async function makeProxy(ff: Ffmpeg, options: MakeProxyOptions): Promise<string> {
  const { kind } = options
  const height = options.height ?? DEFAULT_PROXY_HEIGHT
  if (!Number.isInteger(height) || height < 2) throw new MediaError('failed', `a proxy height must be a whole number of pixels, at least 2 (got ${height})`)
  return produce(ff, options, kind, 'transcode', proxyArgs(kind, height))
}

/** Copies the streams of an existing proxy into MP4 (-c copy); resolves to the new path. */
export async function rewrapProxy(ff: Ffmpeg, options: RewrapOptions): Promise<string> {
  return produce(ff, options, options.kind ?? 'video', 'rewrap', [
    // Every video stream but cover pictures, every audio stream; timecode and data tracks stay behind.
    '-map', '0:V?', '-map', '0:a?', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4',
  ])
}

/** ffmpeg's output options for a proxy of `kind`, `height` pixels high at most. */
export function proxyArgs(kind: MediaKind, height: number): string[] {
  // Scale down to `height` (to an even number, as yuv420p needs), never up: a proxy larger than
  // its source costs time and space and shows nothing more.
  const scale = `scale=w=-2:h='2*trunc(min(${height},ih)/2)'`
  // Stereo whatever the source has: a proxy is for listening, and AAC takes at most 8 channels.
  const audio = ['-c:a', 'aac', '-b:a', '160k', '-ac', '2']
  switch (kind) {
    case 'video':
      return [
        '-map', '0:V:0', '-map', '0:a:0?',
        // Interlaced frames (broadcast 1080i) are deinterlaced; progressive ones pass untouched.
        '-vf', `yadif=deint=interlaced,${scale}`,
        '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p',
        ...audio, '-movflags', '+faststart', '-f', 'mp4',
      ]
    case 'audio':
      return ['-map', '0:a:0', '-vn', ...audio, '-movflags', '+faststart', '-f', 'mp4']
    case 'image':
      return ['-map', '0:V:0', '-frames:v', '1', '-vf', scale, '-c:v', 'mjpeg', '-q:v', '3', '-pix_fmt', 'yuvj420p', '-f', 'image2', '-update', '1']
  }
}

/** The time limit of one ffmpeg run, as the header says. */
export function timeLimitMs(operation: 'transcode' | 'rewrap', kind: MediaKind, durationSeconds: number | undefined): number {
  if (kind === 'image') return 60_000
  if (durationSeconds === undefined) return 6 * 3600_000
  return 60_000 + Math.ceil(durationSeconds * (operation === 'transcode' ? 10_000 : 2_000))
}

async function produce(ff: Ffmpeg, options: Common & { source: string; openSource?: () => number }, kind: MediaKind, operation: 'transcode' | 'rewrap', outputArgs: string[]): Promise<string> {
  const { signal, onProgress } = options
  if (!ff.available.ffmpeg) throw new MediaError('missing', ff.missing('ffmpeg')!)
  if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
  const source = resolve(options.source)
  const dir = resolve(options.proxyDir)
  const ext = PROXY_EXT[kind]
  const finalName = nameWithExt(options.baseName, ext)

  if (!options.openSource) {
    const sourceStat = await lstat(source).catch(() => undefined)
    if (!sourceStat?.isFile()) throw new MediaError('not_found', sourceStat ? `${source} is not a regular file` : `${source} does not exist`)
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
  // Fail before the work when the name is taken already; placing checks again (that is the check).
  if ((options.ifTaken ?? 'refuse') === 'refuse' && (await taken(join(dir, finalName))))
    throw new MediaError('taken', `${join(dir, finalName)} exists; a proxy never overwrites`)

  const duration = kind === 'image' ? undefined : options.durationSeconds ?? (await withSource((name, input) => durationOf(ff, name, signal, input)))
  const temp = join(dir, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}${ext}`)
  try {
    // Made exclusively (O_EXCL: no file or link of that name is followed); ffmpeg then writes it.
    closeSync(openSync(temp, 'wx'))
  } catch (error) {
    const e = error as NodeJS.ErrnoException
    throw new MediaError('failed', `cannot write in the proxy folder ${dir}: ${e.code === 'ENOENT' ? 'it does not exist' : e.code ?? e.message}`)
  }

  try {
    let seconds = 0
    await withSource((name, input) => ff.run('ffmpeg', [
      '-nostdin', '-hide_banner', '-v', 'error', '-nostats', '-progress', 'pipe:1', '-y',
      '-protocol_whitelist', 'file', '-i', `file:${name}`,
      ...outputArgs,
      `file:${temp}`,
    ], {
      timeoutMs: options.timeoutMs ?? timeLimitMs(operation, kind, duration),
      idleMs: IDLE_MS,
      signal,
      input,
      // -progress writes blocks of key=value lines, each ending with progress=continue|end.
      onLine: (line) => {
        const [key, value] = line.split('=', 2)
        if (key === 'out_time_us' && Number(value) >= 0) seconds = Number(value) / 1e6
        else if (key === 'progress' && onProgress)
          onProgress({ seconds, duration, fraction: duration ? Math.min(1, seconds / duration) : undefined, done: value === 'end' })
      },
    }))
    // ffmpeg may have finished just as the abort came: the caller asked for nothing, so nothing is left.
    if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'cancelled'))
    return await place(temp, dir, finalName, options.ifTaken ?? 'refuse')
  } catch (error) {
    const left = await unlink(temp).then(() => '', (e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? '' : `; ${temp} could not be removed: ${e.code}`))
    if (left && error instanceof Error) error.message += left
    throw error
  }
}

/** `name` + `ext` unless it ends with `ext` already; a plain name, never a path. */
function nameWithExt(name: string, ext: string): string {
  if (!name || name.includes('/') || name.includes('\\') || name.includes('\0') || name.startsWith('.'))
    throw new MediaError('failed', `a proxy name must be a plain file name not starting with a dot (got ${JSON.stringify(name)})`)
  const full = name.toLowerCase().endsWith(ext) ? name : name + ext
  if (Buffer.byteLength(full) > 255) throw new MediaError('failed', `the proxy name ${JSON.stringify(full)} is too long`)
  return full
}

const taken = (path: string) => lstat(path).then(() => true, () => false)

/** Gives the finished hidden file its name without overwriting; resolves to the final path. */
async function place(temp: string, dir: string, finalName: string, ifTaken: 'refuse' | 'number'): Promise<string> {
  const dot = finalName.lastIndexOf('.')
  for (let n = 0; n <= 9999; n++) {
    const name = n === 0 ? finalName : `${finalName.slice(0, dot)}_${n}${finalName.slice(dot)}`
    const target = join(dir, name)
    try {
      await link(temp, target)
      await unlink(temp)
      return target
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EEXIST') {
        if (ifTaken === 'refuse') throw new MediaError('taken', `${target} exists; a proxy never overwrites`)
        continue
      }
      // No hard links on this file system: check, then rename (see the header).
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS' || code === 'EMLINK') {
        if (await taken(target)) {
          if (ifTaken === 'refuse') throw new MediaError('taken', `${target} exists; a proxy never overwrites`)
          continue
        }
        await rename(temp, target)
        return target
      }
      throw error
    }
  }
  throw new MediaError('taken', `${join(dir, finalName)} and its numbered variants up to _9999 exist`)
}

/** The source's duration in seconds from ffprobe, for progress and the time limit; undefined when unknown. */
async function durationOf(ff: Ffmpeg, source: string, signal?: AbortSignal, input?: number): Promise<number | undefined> {
  if (!ff.available.ffprobe) return undefined
  try {
    const { stdout } = await ff.run('ffprobe', [
      '-v', 'error', '-protocol_whitelist', 'file', '-show_entries', 'format=duration', '-of', 'csv=p=0', `file:${source}`,
    ], { timeoutMs: 30_000, signal, input })
    const seconds = Number(stdout.trim())
    return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined
  } catch (error) {
    if (error instanceof CancelledError) throw error
    // ffmpeg's own error about an unreadable source says more; let it speak.
    return undefined
  }
}
