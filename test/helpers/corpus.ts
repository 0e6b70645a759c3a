// A corpus of small real clips with the traits editors meet (issue 26): timecode in its three
// containers, drop frame, interlace, anamorphic pixels, several audio tracks, broadcast WAVs,
// HDR, a phone's rotation, a variable frame rate. Made with ffmpeg once per test process, into
// one temporary folder that every test file shares (each recipe runs the first time a file
// asks for it); no binary fixture lives in the repository. Without ffmpeg nothing is made:
// tests using it are skipped (hasFfmpeg).
//
// What each clip is, exactly, is said beside its recipe; the tests assert what the probe reads.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ff, hasFfmpeg } from './media.ts'
import { tempDir } from './temp.ts'

export { hasFfmpeg }

export type CorpusClip =
  | 'prores2398'
  | 'h264DropFrame'
  | 'mxf25i'
  | 'anamorphic'
  | 'fourMono'
  | 'bwfStereo'
  | 'bwfMono'
  | 'hdrPq'
  | 'phoneRotated'
  | 'vfr'
  | 'jpegExif'

/** The clips' file names (the extension is the container). */
export const CORPUS_FILES: Record<CorpusClip, string> = {
  prores2398: 'prores-2398.mov',
  h264DropFrame: 'h264-2997df.mov',
  mxf25i: 'mpeg2-25i.mxf',
  anamorphic: 'anamorphic-1440.mp4',
  fourMono: 'four-mono.mov',
  bwfStereo: 'bwf-stereo.wav',
  bwfMono: 'bwf-mono-ixml.wav',
  hdrPq: 'hdr-pq.mp4',
  phoneRotated: 'phone-rotated.mp4',
  vfr: 'vfr.mp4',
  jpegExif: 'portrait-exif.jpg',
}

/** bwfStereo's bext time_reference: 3600.5 s at 48 kHz (01:00:00:12 at the default 25 fps). */
export const BWF_STEREO_TIME_REFERENCE = 172_824_000
/** bwfMono's: 600 s at 48 kHz; its iXML says 30000/1001 DF, so 17982 frames: 00:10:00;00. */
export const BWF_MONO_TIME_REFERENCE = 28_800_000

const lavfi = (graph: string) => ['-f', 'lavfi', '-i', graph]
const x264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']

/**
 * The recipes: ffmpeg arguments before the output path, and what is done to the file after
 * (the parts ffmpeg 5.1 cannot write: an iXML chunk, a display matrix).
 */
const RECIPES: Record<CorpusClip, { args: string[]; after?: (path: string) => void }> = {
  // 1 s of 320×240 ProRes 422 HQ (10-bit) at 24000/1001 with a stereo 24-bit track and a tmcd track at 01:00:00:00.
  prores2398: {
    args: [
      ...lavfi('testsrc=size=320x240:rate=24000/1001'),
      ...lavfi('sine=frequency=440:sample_rate=48000'),
      '-t',
      '1',
      '-c:v',
      'prores_ks',
      '-profile:v',
      '3',
      '-pix_fmt',
      'yuv422p10le',
      '-ac',
      '2',
      '-c:a',
      'pcm_s24le',
      '-timecode',
      '01:00:00:00',
    ],
  },
  // 1 s of 320×240 H.264 at 30000/1001 with a drop-frame tmcd track at 00:59:59;28, no audio.
  h264DropFrame: {
    args: [...lavfi('testsrc=size=320x240:rate=30000/1001'), '-t', '1', ...x264, '-timecode', '00:59:59;28'],
  },
  // 1 s of 720×576 interlaced (top field first) MPEG-2 4:2:2 at 25 fps with a mono 16-bit track, MXF OP1a, timecode 10:00:00:00.
  mxf25i: {
    args: [
      ...lavfi('testsrc=size=720x576:rate=25'),
      ...lavfi('sine=frequency=440:sample_rate=48000'),
      '-t',
      '1',
      '-c:v',
      'mpeg2video',
      '-pix_fmt',
      'yuv422p',
      '-b:v',
      '4M',
      '-flags',
      '+ilme+ildct',
      '-top',
      '1',
      '-c:a',
      'pcm_s16le',
      '-timecode',
      '10:00:00:00',
      '-f',
      'mxf',
    ],
  },
  // 0.5 s of 1440×1080 H.264 with 4:3 pixels (16:9 on screen), 25 fps.
  anamorphic: {
    args: [...lavfi('testsrc=size=1440x1080:rate=25'), '-t', '0.5', '-vf', 'setsar=4/3', ...x264],
  },
  // 1 s of 320×240 H.264 at 25 fps with four mono 24-bit PCM tracks (a camera's four channels).
  fourMono: {
    args: [
      ...lavfi('testsrc=size=320x240:rate=25'),
      ...[440, 550, 660, 770].flatMap((f) => lavfi(`sine=frequency=${f}:sample_rate=48000`)),
      '-t',
      '1',
      '-map',
      '0',
      '-map',
      '1',
      '-map',
      '2',
      '-map',
      '3',
      '-map',
      '4',
      ...x264,
      '-c:a',
      'pcm_s24le',
    ],
  },
  // 1 s of stereo 24-bit 48 kHz with a bext chunk (time_reference), no iXML.
  bwfStereo: {
    args: [
      ...lavfi('sine=frequency=440:sample_rate=48000'),
      '-t',
      '1',
      '-ac',
      '2',
      '-c:a',
      'pcm_s24le',
      '-write_bext',
      '1',
      '-metadata',
      `time_reference=${BWF_STEREO_TIME_REFERENCE}`,
    ],
  },
  // 1 s of mono 16-bit 48 kHz with a bext chunk and an iXML chunk naming 30000/1001 drop frame.
  bwfMono: {
    args: [
      ...lavfi('sine=frequency=440:sample_rate=48000'),
      '-t',
      '1',
      '-c:a',
      'pcm_s16le',
      '-write_bext',
      '1',
      '-metadata',
      `time_reference=${BWF_MONO_TIME_REFERENCE}`,
    ],
    after: (path) =>
      appendIxml(
        path,
        '<?xml version="1.0" encoding="UTF-8"?><BWFXML><IXML_VERSION>1.61</IXML_VERSION>' +
          '<SPEED><TIMECODE_RATE>30000/1001</TIMECODE_RATE><TIMECODE_FLAG>DF</TIMECODE_FLAG></SPEED></BWFXML>',
      ),
  },
  // 1 s of 320×240 HEVC Main 10 with BT.2020 primaries and the PQ transfer (smpte2084), 25 fps.
  hdrPq: {
    args: [
      ...lavfi('testsrc=size=320x240:rate=25'),
      '-t',
      '1',
      '-c:v',
      'libx265',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p10le',
      '-x265-params',
      'log-level=error',
      '-color_primaries',
      'bt2020',
      '-color_trc',
      'smpte2084',
      '-colorspace',
      'bt2020nc',
    ],
  },
  // 1 s of 320×240 H.264 at 30 fps whose track matrix turns it 90° clockwise, as a phone held upright writes it.
  phoneRotated: {
    args: [...lavfi('testsrc=size=320x240:rate=30'), '-t', '1', ...x264],
    after: (path) => setTrackMatrix(path, [0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x40000000]),
  },
  // 2 s of 320×240 H.264: every frame of the first second at 30 fps, then every third (r_frame_rate 30/1, average 600/29).
  vfr: {
    args: [
      ...lavfi('testsrc=size=320x240:rate=30'),
      '-t',
      '2',
      '-vf',
      'select=lt(n\\,30)+not(mod(n\\,3))',
      '-vsync',
      'vfr',
      ...x264,
    ],
  },
  // A 320×240 JPEG with an EXIF Orientation of 6 (shown turned 90° clockwise), as a camera held upright writes it.
  jpegExif: {
    args: [...lavfi('testsrc=size=320x240'), '-frames:v', '1'],
    after: (path) => addExifOrientation(path, 6),
  },
}

let folder: string | undefined
const making = new Map<CorpusClip, Promise<string>>()

/**
 * The path of a corpus clip, made the first time it is asked for in this process. The folder is
 * removed at the end of the run (temp.ts); made again if something removed it before.
 */
export function corpusClip(name: CorpusClip): Promise<string> {
  if (!hasFfmpeg) return Promise.reject(new Error('the corpus needs ffmpeg'))
  if (!folder || !existsSync(folder)) {
    folder = tempDir('reelhouse-corpus-')
    making.clear()
  }
  const path = join(folder, CORPUS_FILES[name])
  let made = making.get(name)
  if (!made) {
    const recipe = RECIPES[name]
    made = ff.run('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...recipe.args, path], { timeoutMs: 60_000 }).then(() => {
      recipe.after?.(path)
      return path
    })
    making.set(name, made)
    made.catch(() => making.delete(name))
  }
  return made
}

/** Several clips at once, made in parallel. */
export async function corpus<N extends CorpusClip>(names: readonly N[]): Promise<Record<N, string>> {
  const paths = await Promise.all(names.map((name) => corpusClip(name)))
  return Object.fromEntries(names.map((name, i) => [name, paths[i]])) as Record<N, string>
}

/** Appends an iXML chunk to a RIFF WAVE file and fixes the RIFF size (ffmpeg 5.1 writes none). */
export function appendIxml(path: string, xml: string) {
  const file = readFileSync(path)
  if (file.toString('latin1', 0, 4) !== 'RIFF' || file.toString('latin1', 8, 12) !== 'WAVE')
    throw new Error(`${path} is not a RIFF WAVE file`)
  let body = Buffer.from(xml, 'utf8')
  if (body.length % 2) body = Buffer.concat([body, Buffer.from([0])])
  const header = Buffer.alloc(8)
  header.write('iXML', 0, 'latin1')
  header.writeUInt32LE(body.length, 4)
  const out = Buffer.concat([file, header, body])
  out.writeUInt32LE(out.length - 8, 4)
  writeFileSync(path, out)
}

/** Puts an EXIF segment (APP1) holding only an Orientation right after a JPEG's start marker. */
export function addExifOrientation(path: string, orientation: number) {
  const file = readFileSync(path)
  if (file[0] !== 0xff || file[1] !== 0xd8) throw new Error(`${path} is not a JPEG file`)
  // A big-endian TIFF header, one IFD with one entry: tag 0x0112, type SHORT, count 1, the value; no next IFD.
  const tiff = Buffer.alloc(8 + 2 + 12 + 4)
  tiff.write('MM', 0, 'latin1')
  tiff.writeUInt16BE(42, 2)
  tiff.writeUInt32BE(8, 4)
  tiff.writeUInt16BE(1, 8)
  tiff.writeUInt16BE(0x0112, 10)
  tiff.writeUInt16BE(3, 12)
  tiff.writeUInt32BE(1, 14)
  tiff.writeUInt16BE(orientation, 18)
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff])
  const marker = Buffer.from([0xff, 0xe1, 0, 0])
  marker.writeUInt16BE(payload.length + 2, 2)
  writeFileSync(path, Buffer.concat([file.subarray(0, 2), marker, payload, file.subarray(2)]))
}

/**
 * Overwrites the matrix of the first track header (tkhd) of an MP4/MOV: nine 32-bit values
 * (a b u c d v x y w; 16.16 fixed point but u, v, w in 2.30), as QuickTime defines them.
 * ffmpeg 5.1 has no -display_rotation, and its rotate tag's direction changed between versions.
 */
export function setTrackMatrix(path: string, matrix: number[]) {
  const file = readFileSync(path)
  const at = file.indexOf('tkhd', 0, 'latin1')
  if (at < 4) throw new Error(`${path} has no track header`)
  const version = file[at + 4]
  // type(4) version+flags(4) creation, modification(4 or 8 each) track_ID(4) reserved(4)
  // duration(4 or 8) reserved(8) layer, alternate_group, volume, reserved(2 each)
  const matrixAt = at + 4 + 4 + (version === 1 ? 16 : 8) + 8 + (version === 1 ? 8 : 4) + 8 + 8
  matrix.forEach((value, i) => file.writeInt32BE(value, matrixAt + i * 4))
  writeFileSync(path, file)
}
