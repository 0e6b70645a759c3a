// Pictures of an asset (docs/media.md, "Pictures"), made by the proxy's own ffmpeg run as extra
// outputs: the source is decoded once, and each picture's branch of the filter graph drops
// what it does not use before any costly filter (a branch left open would scale every frame to
// the end: ffmpeg 5.1 keeps feeding a branch whose output has its one frame).
// - A video: a poster frame and a strip of thumbnails (one sprite sheet and its JSON index).
//   The poster is taken from about 10 % in: the candidates of a short window there (five in its
//   first second, then one a second), scaled to the poster's size, those neither dark (mean
//   luma) nor flat (entropy of the luma) kept, and of the first five kept the most
//   representative (`thumbnail`). When none passes (a clip black throughout), the frame at 10 %
//   is the poster (a second, one-frame output). The strip: one frame every few seconds (`fps`), scaled to a tile,
//   `tile`d into one sheet.
// - An image: a thumbnail, scaled from the proxy's own picture (sharingProxyScale).
// - An audio file: a waveform picture (`showwavespic`) of the first stream mixed to mono at
//   8 kHz (showwavespic keeps every sample until the end: at 8 kHz mono an hour is 60 MB).
// Names follow the proxy's: proxy `<stem>.mp4` → `<stem>.poster.jpg`, `<stem>.strip.jpg`,
// `<stem>.strip.json`, `<stem>.thumb.jpg`, `<stem>.wave.png`; shot thumbnails go in the folder
// `<stem>.shots`. ffmpeg writes hidden files (`.reelhouse-picture-<random>…`, made exclusively
// in the open proxy folder, as the proxy's); they take their names only once the proxy has its
// own (media/place.ts: never over another file, except a remake's over its own old pictures).
import { randomBytes } from 'node:crypto'
import { writeSync } from 'node:fs'
import type { MediaKind } from './probe.ts'
import { linkIntoPlace, takenIn } from './place.ts'
import { openParentInside } from '../storage/roots.ts'
import {
  E,
  O,
  cName,
  close,
  errnoName,
  nameText,
  openat,
  openatCreate,
  renameat,
  statNumbersOf,
  unlinkat,
} from '../storage/dirfd.ts'

/** The file name endings of the pictures beside a proxy of stem `<stem>`. */
export const PICTURE_SUFFIX = {
  poster: '.poster.jpg',
  strip: '.strip.jpg',
  index: '.strip.json',
  thumb: '.thumb.jpg',
  wave: '.wave.png',
} as const
export type PictureName = keyof typeof PICTURE_SUFFIX
/** The folder of a video's shot thumbnails beside its proxy. */
export const SHOTS_SUFFIX = '.shots'
/** Every name beside a proxy that belongs to it: a new proxy's name is chosen with all of them free. */
export const COMPANION_SUFFIXES: readonly string[] = [...Object.values(PICTURE_SUFFIX), SHOTS_SUFFIX]
/** The pictures of each kind; the first is the one served as its poster. */
export const PICTURES_OF: Readonly<Record<MediaKind, readonly PictureName[]>> = {
  video: ['poster', 'strip', 'index'],
  image: ['thumb'],
  audio: ['wave'],
}
export const PICTURE_TEMP = '.reelhouse-picture-'

/**
 * The poster fits 480 × 270: sharp in a grid tile of 240 CSS pixels on a 2× screen (the player
 * shows the video itself); its candidates, each scaled to it and judged at that size, cost less
 * than half what they did at 960 × 540. A strip tile fits 160 × 160 (160 × 90 at 16:9), an
 * image's thumbnail 480 × 480.
 */
const POSTER_BOX = [480, 270] as const
const TILE_BOX = [160, 160] as const
const THUMB_BOX = [480, 480] as const
const WAVE_SIZE = '960x160'
const STRIP_COLUMNS = 10
/** At most this many tiles: the interval grows with the duration (a 2-hour clip: one a minute). */
const STRIP_MAX_TILES = 120
const INTERVALS_S = [2, 3, 4, 5, 10, 15, 20, 30, 60, 120, 300, 600, 1800, 3600]
/** Darker than this mean luma (full range, 0–255) is "black"; lower normalized luma entropy is "flat". */
const DARK_BELOW = 24
const FLAT_BELOW = 0.25
/**
 * The poster's candidates: five in the first second of its window (a clip that is neither black
 * nor flat there, most clips, has its poster of them), then one a second (enough to find where
 * a fade from black or a slate ends, for a fifth of the cost: every candidate is scaled, also
 * after the poster is chosen, as the branch stays open to the end).
 */
const FIRST_CANDIDATES = 5
const LATER_CANDIDATE_EVERY_S = 1

/** What the pictures need to know of the source (media/proxy.ts SourceInfo is one). */
export type PictureSource = {
  duration?: number
  /** The video stream's own duration, when ffprobe gives one (the format's may be the audio's). */
  videoDuration?: number
  video?: { width: number; height: number; sar?: string; fieldOrder: 'tff' | 'bff' | 'progressive' }
  audio: number[]
}

/** The strip's index, as `<stem>.strip.json` holds it (tiles left to right, then top to bottom). */
export type StripIndex = {
  interval_ms: number
  count: number
  columns: number
  rows: number
  tile_width: number
  tile_height: number
}

/** One ffmpeg output of the pictures: `fallback` is the poster used when no frame passed. */
type OutputKey = 'poster' | 'fallback' | 'strip' | 'thumb' | 'wave'
export type PicturePlan = {
  /** The filter graph of the pictures (one -filter_complex beside the proxy's own options). */
  graph: string
  /** Each output's options, in order; the file name follows each. */
  outputs: { key: OutputKey; args: string[] }[]
  index?: StripIndex
  /** The filters that make the picture of the proxy's own scaled picture instead (sharingProxyScale). */
  fromProxy?: string
}

/** The size inside box (w × h), keeping the shape, never larger than the source, even. */
export function fitBox(
  width: number,
  height: number,
  box: readonly [number, number],
): { width: number; height: number } {
  const scale = Math.min(1, box[0] / width, box[1] / height)
  const even = (n: number, limit: number) => Math.max(2, Math.min(Math.round(n / 2) * 2, Math.floor(limit / 2) * 2))
  return {
    width: even(width * scale, Math.min(box[0], width)),
    height: even(height * scale, Math.min(box[1], height)),
  }
}

/** The picture's width on screen: storage width × pixel aspect ratio. */
const displayWidth = (video: NonNullable<PictureSource['video']>) => {
  const [n, d] = (video.sar ?? '1:1').split(':').map(Number)
  return n! > 0 && d! > 0 ? Math.round((video.width * n!) / d!) : video.width
}

/** The strip's interval: the first of INTERVALS_S that keeps it within STRIP_MAX_TILES. */
export function stripInterval(seconds: number): number {
  return INTERVALS_S.find((s) => seconds / s <= STRIP_MAX_TILES) ?? INTERVALS_S.at(-1)!
}

/**
 * How ffmpeg's fps filter (round=near) samples `seconds` of video every `interval` seconds: a
 * frame at 0, interval, 2 × interval… whose slot the video reaches past its middle.
 */
export const stripCount = (seconds: number, interval: number) => Math.max(1, Math.round(seconds / interval))

const JPEG = (quality: number) => [
  '-frames:v',
  '1',
  '-c:v',
  'mjpeg',
  '-q:v',
  String(quality),
  '-pix_fmt',
  'yuvj420p',
  '-f',
  'image2',
  '-update',
  '1',
]
const PNG = ['-frames:v', '1', '-c:v', 'png', '-f', 'image2', '-update', '1']
const round3 = (n: number) => Math.round(n * 1000) / 1000

/** The pictures of a `kind` source as ffprobe saw it; undefined when there is nothing to make them of. */
export function picturePlan(kind: MediaKind, source: PictureSource | undefined): PicturePlan | undefined {
  if (kind === 'audio') return source?.audio.length ? wavePlan() : undefined
  const video = source?.video
  if (!video || video.width < 2 || video.height < 2) return undefined
  if (kind === 'image') return thumbPlan(video)
  const seconds = source.videoDuration ?? source.duration
  return seconds && seconds > 0 ? videoPlan(video, seconds) : undefined
}

function wavePlan(): PicturePlan {
  return {
    // Every sixth sample or so (no resampling filter: its taps cost as much as the decode), drawn by its peaks.
    graph: `[0:a:0]aresample=8000:filter_size=1:phase_shift=0:linear_interp=0,aformat=sample_fmts=s16:channel_layouts=mono,asetnsamples=n=8000,showwavespic=s=${WAVE_SIZE}:colors=0x3d6fd8:filter=peak[wave]`,
    outputs: [{ key: 'wave', args: ['-map', '[wave]', ...PNG] }],
  }
}

function thumbPlan(video: NonNullable<PictureSource['video']>): PicturePlan {
  const size = fitBox(displayWidth(video), video.height, THUMB_BOX)
  return {
    // The first frame only (an animated picture has more): nothing else is scaled.
    graph: `[0:V:0]select='eq(n,0)',scale=${size.width}:${size.height},setsar=1[thumb]`,
    outputs: [{ key: 'thumb', args: ['-map', '[thumb]', ...JPEG(3)] }],
    fromProxy: `scale=w='min(${THUMB_BOX[0]},iw)':h='min(${THUMB_BOX[1]},ih)':force_original_aspect_ratio=decrease:force_divisible_by=2,setsar=1[thumb]`,
  }
}

/**
 * An image's thumbnail made of the proxy's own scaled picture rather than the source: a second
 * scale of a 24-megapixel still cost a third more than its proxy (bench/pictures.ts), one of the
 * proxy's 540 lines nothing to speak of. The proxy's `-vf` moves into the graph, split after it;
 * the proxy's output takes the split's other branch. Arguments without a `-vf` (none of an
 * image's) keep the plan as it is.
 */
export function sharingProxyScale(plan: PicturePlan, proxyArgs: string[]): { plan: PicturePlan; args: string[] } {
  const vf = proxyArgs.indexOf('-vf')
  const map = proxyArgs.findIndex((a, i) => a === '0:V:0' && proxyArgs[i - 1] === '-map')
  if (!plan.fromProxy || vf < 0 || map < 0) return { plan, args: proxyArgs }
  const args = proxyArgs.map((a, i) => (i === map ? '[proxy]' : a)).filter((_, i) => i !== vf && i !== vf + 1)
  return {
    plan: { ...plan, graph: `[0:V:0]${proxyArgs[vf + 1]},split=2[proxy][shared];[shared]${plan.fromProxy}` },
    args,
  }
}

function videoPlan(video: NonNullable<PictureSource['video']>, seconds: number): PicturePlan {
  const shown = displayWidth(video)
  const poster = fitBox(shown, video.height, POSTER_BOX)
  const tile = fitBox(shown, video.height, TILE_BOX)
  const interval = stripInterval(seconds)
  const count = stripCount(seconds, interval)
  const columns = Math.min(STRIP_COLUMNS, count)
  const rows = Math.ceil(count / columns)
  // One field of an interlaced source: a still of both fields woven would show their combing.
  const field = video.fieldOrder === 'progressive' ? '' : 'field=type=top,'
  const at = round3(seconds * 0.1)
  const until = round3(Math.min(seconds, at + Math.min(15, Math.max(3, seconds * 0.3))))
  const scalePoster = `${field}scale=${poster.width}:${poster.height},setsar=1`
  // Each gap a millisecond short: t is a float (at 25 fps, 3.4 − 3.2 comes out a hair under 0.2).
  const gap = `if(lt(t,${round3(at + 1)}),${round3(1 / FIRST_CANDIDATES - 0.001)},${round3(LATER_CANDIDATE_EVERY_S - 0.001)})`
  const candidates = `select='between(t,${at},${until})*(isnan(prev_selected_t)+gte(t-prev_selected_t,${gap}))'`
  const judged = [
    'format=yuvj420p',
    'signalstats',
    'entropy',
    `metadata=select:key=lavfi.signalstats.YAVG:value=${DARK_BELOW}:function=greater`,
    `metadata=select:key=lavfi.entropy.normalized_entropy.normal.Y:value=${FLAT_BELOW}:function=greater`,
    `thumbnail=n=${FIRST_CANDIDATES}`,
  ].join(',')
  const graph = [
    '[0:V:0]split=3[p][f][s]',
    `[p]${candidates},${scalePoster},${judged}[poster]`,
    `[f]select='isnan(prev_selected_t)*gte(t,${at})',${scalePoster}[fallback]`,
    `[s]fps=fps=1000/${interval * 1000},scale=${tile.width}:${tile.height},setsar=1,tile=${columns}x${rows}[strip]`,
  ].join(';')
  return {
    graph,
    outputs: [
      { key: 'poster', args: ['-map', '[poster]', ...JPEG(3)] },
      { key: 'fallback', args: ['-map', '[fallback]', ...JPEG(3)] },
      { key: 'strip', args: ['-map', '[strip]', ...JPEG(5)] },
    ],
    index: {
      interval_ms: interval * 1000,
      count,
      columns,
      rows,
      tile_width: tile.width,
      tile_height: tile.height,
    },
  }
}

/** A plan with its hidden files made in the open folder: what the ffmpeg run adds, and what it leaves. */
export type PictureRun = {
  plan: PicturePlan
  /** The hidden file of each output, by key. */
  temps: Map<OutputKey, string>
  /** -filter_complex and the graph: after the input. */
  graphArgs: string[]
  /** Every output with its file: after the proxy's. `named(temp)`: how ffmpeg names a file of the folder. */
  outputArgs: (named: (temp: string) => string) => string[]
}

/** Makes the hidden files of `plan` in the open folder (exclusively, no link followed); throws a text on failure, none left behind. */
export function startPictures(folder: number, plan: PicturePlan): PictureRun {
  const random = randomBytes(8).toString('hex')
  const temps = new Map<OutputKey, string>()
  for (const { key } of plan.outputs) {
    const temp = `${PICTURE_TEMP}${random}.${key}${key === 'wave' ? '.png' : '.jpg'}`
    const made = openatCreate(folder, cName(temp), O.WRONLY | O.CREAT | O.EXCL | O.NOFOLLOW | O.CLOEXEC, 0o644)
    if (made < 0) {
      dropTemps(folder, temps)
      throw new Error(`cannot write a picture in the proxy folder: ${errnoName(-made)}`)
    }
    close(made)
    temps.set(key, temp)
  }
  return {
    plan,
    temps,
    graphArgs: ['-filter_complex', plan.graph],
    outputArgs: (named) => plan.outputs.flatMap(({ key, args }) => [...args, `file:${named(temps.get(key)!)}`]),
  }
}

/** Removes whatever hidden files of the run are left (after placing, or when the run failed). */
export function dropPictures(folder: number, run: PictureRun): void {
  dropTemps(folder, run.temps)
}

function dropTemps(folder: number, temps: Map<OutputKey, string>) {
  for (const temp of temps.values()) unlinkat(folder, cName(temp), 0)
  temps.clear()
}

/** What placing made: each picture's file name in the folder, and why any was left out. */
export type Placed = { names: Partial<Record<PictureName, string>>; problems: string[] }

/**
 * Gives the run's pictures their names beside the proxy `<stem>.<ext>`. 'replace' (a remake):
 * each is renamed over the old one of its name, and an old picture of this kind not made again
 * is removed (a poster of the old proxy would not show the new one). Otherwise a taken name is
 * left as it is and that picture dropped (the proxy's name was chosen with them all free: only
 * a file made meanwhile takes one).
 */
export function placePictures(
  folder: number,
  run: PictureRun,
  kind: MediaKind,
  stem: string,
  replace: boolean,
): Placed {
  const placed: Placed = { names: {}, problems: [] }
  const put = (which: PictureName, temp: string): boolean => {
    const name = stem + PICTURE_SUFFIX[which]
    const done = replace ? renameat(folder, cName(temp), folder, cName(name)) : linkIntoPlace(folder, temp, name)
    if (done === 0) placed.names[which] = name
    else placed.problems.push(`${name}: ${done === -E.EEXIST ? 'the name is taken' : errnoName(-done)}`)
    return done === 0
  }
  const made = (key: OutputKey) => {
    const temp = run.temps.get(key)
    return temp !== undefined && sizeOf(folder, temp) > 0 ? temp : undefined
  }
  const poster = made('poster') ?? made('fallback')
  if (poster) put('poster', poster)
  const strip = made('strip')
  if (strip && run.plan.index && put('strip', strip)) {
    const index = writeTemp(folder, `${JSON.stringify(run.plan.index)}\n`)
    if (index && !put('index', index)) unlinkat(folder, cName(index), 0)
  }
  for (const key of ['thumb', 'wave'] as const) {
    const temp = made(key)
    if (temp) put(key, temp)
  }
  dropPictures(folder, run)
  for (const which of PICTURES_OF[kind]) {
    if (placed.names[which]) continue
    const name = stem + PICTURE_SUFFIX[which]
    // An old picture of a remade proxy would show the old one: none is better.
    if (replace) unlinkat(folder, cName(name), 0)
    if (!placed.problems.some((p) => p.startsWith(`${name}:`))) placed.problems.push(`${name}: not made`)
  }
  return placed
}

/** Whether every companion name of `stem` (pictures, shots folder) is free in the open folder. */
export const companionsFree = (folder: number, stem: string): boolean =>
  COMPANION_SUFFIXES.every((suffix) => !takenIn(folder, stem + suffix))

/** The size of the regular file `name` of the open folder; 0 when it is not one. */
function sizeOf(folder: number, name: string): number {
  const fd = openat(folder, cName(name), O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
  if (fd < 0) return 0
  try {
    const s = statNumbersOf(fd)
    return s.isFile() ? s.size : 0
  } finally {
    close(fd)
  }
}

/** A new hidden file of the open folder holding `text`; its name, or undefined when it cannot be made. */
function writeTemp(folder: number, text: string): string | undefined {
  const temp = `${PICTURE_TEMP}${randomBytes(8).toString('hex')}.json`
  const fd = openatCreate(folder, cName(temp), O.WRONLY | O.CREAT | O.EXCL | O.NOFOLLOW | O.CLOEXEC, 0o644)
  if (fd < 0) return undefined
  try {
    writeSync(fd, text)
    return temp
  } catch {
    unlinkat(folder, cName(temp), 0)
    return undefined
  } finally {
    close(fd)
  }
}

/**
 * Removes the pictures beside the proxy named `proxyName` in the open folder: each regular file
 * `<stem><suffix>` (never a link or a folder; the shots folder is its owner's to remove).
 * Answers the names removed.
 */
export function removePicturesIn(folder: number, proxyName: string): string[] {
  const stem = proxyName.slice(0, proxyName.lastIndexOf('.'))
  const removed: string[] = []
  for (const suffix of Object.values(PICTURE_SUFFIX)) {
    const name = stem + suffix
    const fd = openat(folder, cName(name), O.RDONLY | O.NOFOLLOW | O.CLOEXEC | O.NONBLOCK)
    if (fd < 0) continue
    const regular = statNumbersOf(fd).isFile()
    close(fd)
    if (regular && unlinkat(folder, cName(name), 0) === 0) removed.push(name)
  }
  return removed
}

/** removePicturesIn for the proxy `proxyPath` inside `root` (a proxy_root on the device at `devicePath`), its folder reached without a link. */
export function removeCompanions(devicePath: string, root: string, proxyPath: string): string[] {
  const at = openParentInside(devicePath, root, proxyPath)
  if (!at) return []
  try {
    return removePicturesIn(at.parent, nameText(at.name))
  } finally {
    close(at.parent)
  }
}
