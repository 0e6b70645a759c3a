// Shot detection itself (src/media/shots.ts), over a real clip of known cuts made with ffmpeg's
// lavfi (clip.ts): where the cuts are found (within a frame), the black and silent gaps, the
// thumbnail candidates, the threshold's effect, a work folder whose name needs escaping in the
// filter graph; and the pure parts (prints, shots, sequences, the thumbnail's choice).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import {
  type Candidate,
  type Detection,
  DEFAULT_THRESHOLD,
  type Gap,
  detectShots,
  detectionOf,
  filterValue,
  parsePrints,
  sequencesOf,
  shotFacts,
  shotsOf,
  thumbnailFor,
} from '../../src/media/shots.ts'
import { AT_FDCWD, DIR_FLAGS, cName, close, openat } from '../../src/storage/dirfd.ts'
import { removeScratch, scratchDir } from '../helpers/imports.ts'
import { ff, hasFfmpeg } from '../helpers/media.ts'
import { CUTS, FPS, SEGMENTS, SILENCE, cutsClip, meanColor, near, steadyClip } from './clip.ts'

setDefaultTimeout(120_000)

let dir: string
let clip: string
let steady: string
beforeAll(async () => {
  dir = scratchDir('reelhouse-shots-media-')
  if (!hasFfmpeg) return
  ;[clip, steady] = await Promise.all([cutsClip(dir), steadyClip(dir)])
})
afterAll(() => removeScratch())

/** A fresh work folder (open) under `dir`, named `name`. */
function workFolder(name: string) {
  const path = join(dir, name)
  mkdirSync(path)
  const fd = openat(AT_FDCWD, cName(path), DIR_FLAGS)
  if (fd < 0) throw new Error(`open ${path}: ${fd}`)
  return { fd, path }
}

async function detect(path: string, o: { threshold?: number; work?: string; byPath?: boolean } = {}) {
  const source = { path }
  const facts = await shotFacts(ff, source)
  if (!facts) throw new Error('no facts')
  const work = workFolder(o.work ?? `work-${Math.random().toString(36).slice(2)}`)
  try {
    const d = await detectShots(ff, {
      source,
      facts,
      threshold: o.threshold ?? DEFAULT_THRESHOLD,
      work,
      thumbnails: true,
      byPath: o.byPath,
    })
    return { d, work: work.path }
  } finally {
    close(work.fd)
  }
}

describe.skipIf(!hasFfmpeg)('over a clip of known cuts', () => {
  let run: { d: Detection; work: string }
  beforeAll(async () => {
    run = await detect(clip)
  })

  test('each cut is found on its frame (within one), with its time in milliseconds, and no other', () => {
    expect(run.d.frames).toBe(SEGMENTS[SEGMENTS.length - 1]!.end)
    expect(run.d.durationMs).toBe(8200)
    expect(run.d.cuts.length).toBe(CUTS.length)
    run.d.cuts.forEach((cut, i) => {
      expect(Math.abs(cut.frame - CUTS[i]!)).toBeLessThanOrEqual(1)
      expect(Math.abs(cut.ms - (CUTS[i]! * 1000) / FPS)).toBeLessThanOrEqual(1000 / FPS)
      expect(cut.score).toBeGreaterThanOrEqual(DEFAULT_THRESHOLD)
    })
  })

  test('the black (1 s) and the silence (0.8 s) are gaps, within a frame and an audio frame of where they are', () => {
    const black = run.d.gaps.filter((g) => g.kind === 'black')
    const silence = run.d.gaps.filter((g) => g.kind === 'silence')
    expect(black).toHaveLength(1)
    expect(Math.abs(black[0]!.startMs - 3600)).toBeLessThanOrEqual(40)
    expect(Math.abs(black[0]!.endMs - 4600)).toBeLessThanOrEqual(40)
    expect(silence).toHaveLength(1)
    expect(Math.abs(silence[0]!.startMs - SILENCE[0] * 1000)).toBeLessThanOrEqual(50)
    expect(Math.abs(silence[0]!.endMs - SILENCE[1] * 1000)).toBeLessThanOrEqual(50)
  })

  test('shots and sequences: five shots, three sequences (the black shot in none)', () => {
    const spans = shotsOf(run.d)
    expect(spans.map((s) => [s.startFrame, s.endFrame])).toEqual(
      SEGMENTS.map((s, i) => [
        i === 0 ? 0 : run.d.cuts[i - 1]!.frame,
        i === SEGMENTS.length - 1 ? 205 : run.d.cuts[i]!.frame,
      ]),
    )
    expect(spans[0]!.score).toBeNull()
    expect(spans.slice(1).every((s) => s.score! > 0 && s.score! <= 1)).toBe(true)
    expect(sequencesOf(spans, run.d.gaps, 41)).toEqual([[0, 1], [3], [4]])
  })

  test('the candidates are JPEGs in the work folder, and each shot has one of its own colour near its middle', async () => {
    const files = new Set(readdirSync(run.work))
    expect(run.d.candidates.length).toBeGreaterThan(15)
    for (const c of run.d.candidates) expect(files.has(c.name)).toBe(true)
    const spans = shotsOf(run.d)
    for (const [i, span] of spans.entries()) {
      const chosen = thumbnailFor(span, run.d.candidates)!
      expect(chosen.frame).toBeGreaterThanOrEqual(span.startFrame)
      expect(chosen.frame).toBeLessThan(span.endFrame)
      // Candidates lie half a second apart: the one chosen is within that of the middle.
      expect(Math.abs(chosen.frame - (span.startFrame + span.endFrame - 1) / 2)).toBeLessThanOrEqual(FPS / 2)
      expect(near(await meanColor(join(run.work, chosen.name)), SEGMENTS[i]!.rgb)).toBe(true)
    }
  })

  test('a higher threshold finds fewer cuts: at 60, only the cuts to and from black and the bright ones', async () => {
    const { d } = await detect(clip, { threshold: 60 })
    expect(d.cuts.length).toBeLessThan(CUTS.length)
    expect(d.cuts.every((c) => c.score >= 60)).toBe(true)
  })

  test('a clip with no cut and no gap: one shot, one sequence', async () => {
    const { d } = await detect(steady)
    expect(d.cuts).toEqual([])
    expect(d.gaps).toEqual([])
    const spans = shotsOf(d)
    expect(spans).toHaveLength(1)
    expect(spans[0]).toMatchObject({ startFrame: 0, endFrame: 75, startMs: 0, endMs: 3000, score: null })
    expect(sequencesOf(spans, d.gaps, 41)).toEqual([[0]])
  })

  test("a work folder named with the filter graph's special characters, by its path: the prints and candidates land in it", async () => {
    const name = "odd ,;[x]:y'z\\%d"
    const { d, work } = await detect(clip, { work: name, byPath: true })
    expect(work.endsWith(name)).toBe(true)
    expect(d.cuts.length).toBe(CUTS.length)
    expect(existsSync(join(work, 'cuts.txt'))).toBe(true)
    expect(d.candidates.every((c) => existsSync(join(work, c.name)))).toBe(true)
  })
})

describe('the pure parts', () => {
  test('filterValue escapes for the option, then for the graph', () => {
    expect(filterValue('/a/b')).toBe('/a/b')
    expect(filterValue('C:\\x')).toBe('C\\\\:\\\\\\\\x')
    expect(filterValue("a,b;c[d]'e")).toBe("a\\,b\\;c\\[d\\]\\\\\\'e")
  })

  test('parsePrints reads blocks of metadata=print', () => {
    const text =
      'frame:90   pts:46080   pts_time:3.6\nlavfi.blackframe.pblack=100\nframe:91   pts:46592   pts_time:3.64\nlavfi.x=a=b\n'
    expect(parsePrints(text)).toEqual([
      { n: 90, t: 3.6, keys: { 'lavfi.blackframe.pblack': '100' } },
      { n: 91, t: 3.64, keys: { 'lavfi.x': 'a=b' } },
    ])
  })

  const block = (n: number, t: number, keys: Record<string, string> = {}) => ({ n, t, keys })
  test('detectionOf: times from the first frame, black runs of half a second or more, an open silence lasting to the end', () => {
    const d = detectionOf({
      fps: { num: 25, den: 1 },
      frames: 100,
      samples: [block(0, 1), block(1, 1.48), block(2, 1.96)],
      cuts: [block(0, 2, { 'lavfi.scd.score': '30' }), block(1, 1, { 'lavfi.scd.score': '99' })],
      // 12 black frames (0.48 s: no gap), then 13 (0.52 s: a gap).
      black: [
        ...Array.from({ length: 12 }, (_, i) => block(10 + i, 1.4 + i * 0.04, { 'lavfi.blackframe.pblack': '100' })),
        ...Array.from({ length: 13 }, (_, i) => block(50 + i, 3 + i * 0.04, { 'lavfi.blackframe.pblack': '99' })),
      ],
      silence: [block(5, 4, { 'lavfi.silence_start': '4.2' })],
      thumbnails: true,
    })
    // The cut at the first frame is no cut.
    expect(d.cuts).toEqual([{ frame: 25, ms: 1000, score: 30 }])
    expect(d.gaps).toEqual([
      { startMs: 2000, endMs: 2520, kind: 'black' },
      { startMs: 3200, endMs: 4000, kind: 'silence' },
    ])
    expect(d.candidates.map((c) => [c.name, c.frame, c.ms])).toEqual([
      ['s000000.jpg', 0, 0],
      ['s000001.jpg', 12, 480],
      ['s000002.jpg', 24, 960],
      ['c000000.jpg', 25, 1000],
      ['c000001.jpg', 0, 0],
    ])
  })

  test('sequencesOf: a cut inside a gap or at its edge splits, a black shot is in none, no gap is one sequence', () => {
    const shots = [
      { startMs: 0, endMs: 1000 },
      { startMs: 1000, endMs: 2000 },
      { startMs: 2000, endMs: 3000 },
      { startMs: 3000, endMs: 4000 },
    ]
    expect(sequencesOf(shots, [], 41)).toEqual([[0, 1, 2, 3]])
    const silence: Gap = { startMs: 1500, endMs: 2040, kind: 'silence' }
    expect(sequencesOf(shots, [silence], 41)).toEqual([
      [0, 1],
      [2, 3],
    ])
    // Within the tolerance of the gap's end, not beyond it.
    expect(sequencesOf(shots, [{ ...silence, endMs: 1970 }], 41)).toEqual([
      [0, 1],
      [2, 3],
    ])
    expect(sequencesOf(shots, [{ ...silence, endMs: 1900 }], 41)).toEqual([[0, 1, 2, 3]])
    const black: Gap = { startMs: 1000, endMs: 2000, kind: 'black' }
    expect(sequencesOf(shots, [black], 41)).toEqual([[0], [2, 3]])
  })

  test('thumbnailFor: the candidate inside the frames nearest their middle; none when none lies inside', () => {
    const c = (frame: number): Candidate => ({ name: `${frame}.jpg`, frame, ms: frame * 40 })
    const candidates = [c(0), c(12), c(24), c(25), c(36)]
    expect(thumbnailFor({ startFrame: 0, endFrame: 25 }, candidates)?.frame).toBe(12)
    expect(thumbnailFor({ startFrame: 25, endFrame: 28 }, candidates)?.frame).toBe(25)
    expect(thumbnailFor({ startFrame: 26, endFrame: 30 }, candidates)).toBeUndefined()
  })
})
