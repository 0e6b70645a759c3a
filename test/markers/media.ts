// Real media for the marker tests, made with ffmpeg and imported through the API (probe and proxy
// in the import task), so that each asset's technical details (fps, first timecode, duration) are
// what the probe reads from a file: a 29.97 drop-frame clip, a 25 fps clip, a WAV without a
// timecode and a PNG.
import { join } from 'node:path'
import { type TestApp, seedProduction } from '../helpers/app.ts'
import { IMPORT, importBody, placeClip, scratchDir } from '../helpers/imports.ts'
import { ff } from '../helpers/media.ts'

export type Imported = { id: number; name: string; path_file: string; technical: Record<string, any> }
export type MarkerMedia = { df: Imported; p25: Imported; wav: Imported; png: Imported }

/** 2 s of 29.97 fps video starting at 01:00:59;28 (drop frame: its third frame is 01:01:00;02). */
export const DF_START = '01:00:59;28'
/** 2 s of 25 fps video starting at 10:00:00:00. */
export const P25_START = '10:00:00:00'

const lavfi = (graph: string) => ['-f', 'lavfi', '-i', graph]
const make = (...args: string[]) => ff.run('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...args], { timeoutMs: 30_000 })
const h264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']

/** Makes the four files and imports them into a new production of `t` (whose task runner runs); answers the assets. */
export async function importMarkerMedia(t: TestApp): Promise<MarkerMedia & { production: number; root: string }> {
  const { root, production } = await seedProduction(t)
  const dir = scratchDir('reelhouse-markers-media-')
  const files = {
    df: join(dir, 'A001C003_250114_R2KD.mov'),
    p25: join(dir, 'B002_interview.mov'),
    wav: join(dir, 'room_tone.wav'),
    png: join(dir, 'poster_v3.png'),
  }
  await Promise.all([
    make(...lavfi('testsrc=size=160x120:rate=30000/1001'), '-t', '2', ...h264, '-timecode', DF_START, files.df),
    make(...lavfi('testsrc=size=160x120:rate=25'), '-t', '2', ...h264, '-timecode', P25_START, files.p25),
    make(...lavfi('sine=frequency=440:sample_rate=48000'), '-t', '2', '-c:a', 'pcm_s16le', files.wav),
    make(...lavfi('testsrc=size=160x120'), '-frames:v', '1', files.png),
  ])
  const kinds = { df: 'video', p25: 'video', wav: 'audio', png: 'image' } as const
  const assets: Partial<MarkerMedia> = {}
  for (const [key, from] of Object.entries(files) as [keyof MarkerMedia, string][]) {
    const name = from.slice(from.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '')
    const path = placeClip(from, join(root, 'incoming', from.slice(from.lastIndexOf('/') + 1)))
    const r = await t.post(IMPORT, importBody(path, { name }, {}, { type: kinds[key], production: 'Show' }))
    if (r.status !== 201) throw new Error(`import of ${path}: ${r.status} ${r.text}`)
    await t.runner.idle()
    const asset = await t.get(`/api/${kinds[key]}assets/${r.json.asset_import_id}/`)
    if (asset.status !== 200 || asset.json.status_asset !== 6) throw new Error(`import of ${path}: ${asset.text}`)
    assets[key] = asset.json
  }
  return { ...(assets as MarkerMedia), production: production.id, root }
}
