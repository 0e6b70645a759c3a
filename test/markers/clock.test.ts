// An asset's clock (src/modules/markers/clock.ts, docs/api.md, Markers): its rate, first timecode
// and length read from technical details, and a marker's times between milliseconds and source
// timecode, drop frame included: every frame's label read back is that frame, and every frame's
// milliseconds name that frame again, at each rate editors use.
import { describe, expect, test } from 'bun:test'
import {
  type Clock,
  clockOf,
  clockText,
  endFrame,
  endMs,
  frameOfLabel,
  labelOf,
  rateOf,
  startFrame,
  startMs,
} from '../../src/modules/markers/clock.ts'
import type { Fraction } from '../../src/media/timecode.ts'

const clock = (fps: string, first?: string, duration?: number) =>
  clockOf('video', { fps, ...(first ? { offset_string: first } : {}), ...(duration ? { duration } : {}) }) as Clock & {
    fps: Fraction
  }

describe('rateOf', () => {
  test('fractions, whole numbers and the NTSC decimals; anything else is no rate', () => {
    expect(['30000/1001', '25/1', '25', 25, 29.97, '23.976', 59.94, 12.5].map(rateOf)).toEqual([
      { num: 30000, den: 1001 },
      { num: 25, den: 1 },
      { num: 25, den: 1 },
      { num: 25, den: 1 },
      { num: 30000, den: 1001 },
      { num: 24000, den: 1001 },
      { num: 60000, den: 1001 },
      { num: 12500, den: 1000 },
    ])
    for (const none of ['0/0', '25/0', 'fast', '', -25, 0, 5000, null, undefined, {}])
      expect(rateOf(none)).toBeUndefined()
  })
})

describe('clockOf', () => {
  test('video: fps, offset_string and duration in frames; drop frame from the label', () => {
    expect(clock('30000/1001', '01:00:59;28', 60)).toEqual({
      fps: { num: 30000, den: 1001 },
      start: 109_690,
      drop: true,
      frames: 60,
      ms: 2002,
    })
    expect(clock('25/1', '10:00:00:00', 50)).toEqual({
      fps: { num: 25, den: 1 },
      start: 900_000,
      drop: false,
      frames: 50,
      ms: 2000,
    })
  })

  test('no timecode: 00:00:00:00; a label that fits no rate counts its digits without dropping', () => {
    expect(clock('25/1')).toEqual({ fps: { num: 25, den: 1 }, start: 0, drop: false })
    expect(clock('25/1', '01:00:00;00').start).toBe(90_000)
    expect(clock('25/1', '01:00:00:99').start).toBe(0)
  })

  test('audio: duration in seconds, time_code; without fps no timecode at all', () => {
    expect(clockOf('audio', { duration: '2.000000', time_code: '10:00:00:00' })).toEqual({
      fps: undefined,
      start: 0,
      drop: false,
      ms: 2000,
    })
    expect(clockOf('audio', { duration: '2.5', time_code: '10:00:00:00', fps: '25' })).toEqual({
      fps: { num: 25, den: 1 },
      start: 900_000,
      drop: false,
      ms: 2500,
      frames: 63,
    })
    expect(clockOf('image', { width: 10, height: 10 })).toEqual({ fps: undefined, start: 0, drop: false })
  })
})

describe('milliseconds and frames', () => {
  const rates: Fraction[] = [
    { num: 24000, den: 1001 },
    { num: 24, den: 1 },
    { num: 25, den: 1 },
    { num: 30000, den: 1001 },
    { num: 50, den: 1 },
    { num: 60000, den: 1001 },
  ]
  test.each(rates.map((fps) => [`${fps.num}/${fps.den}`, fps] as const))(
    '%s: a frame as a start and as an end in milliseconds names the same frame again (one hour of frames)',
    (_, fps) => {
      const wrong: string[] = []
      const frames = Math.ceil((3600 * fps.num) / fps.den)
      for (let n = 0; n < frames; n++) {
        if (startFrame(fps, startMs(fps, n)) !== n) wrong.push(`start ${n}`)
        if (endFrame(fps, endMs(fps, n)) !== n) wrong.push(`end ${n}`)
        // The start lies inside its frame; the end before the next begins.
        if (startMs(fps, n) * fps.num < n * 1000 * fps.den) wrong.push(`start ${n} before its frame`)
      }
      expect(wrong).toEqual([])
    },
  )

  test('a start is the frame showing at that instant, an end the frame after the last one touched', () => {
    const fps = { num: 25, den: 1 }
    expect([0, 39, 40, 79, 80].map((ms) => startFrame(fps, ms))).toEqual([0, 0, 1, 1, 2])
    expect([0, 1, 40, 41, 80].map((ms) => endFrame(fps, ms))).toEqual([0, 1, 1, 2, 2])
    const ntsc = { num: 30000, den: 1001 }
    expect([startMs(ntsc, 1), endMs(ntsc, 1), startMs(ntsc, 2)]).toEqual([34, 33, 67])
  })
})

describe('source timecode', () => {
  test('drop frame at 29.97: labels skip ;00 and ;01 at each minute but every tenth, and every label reads back as its frame', () => {
    const c = clock('30000/1001', '01:00:59;28', 60)
    expect([0, 1, 2, 29, 30, 59, 60].map((n) => labelOf(c, n))).toEqual([
      '01:00:59;28',
      '01:00:59;29',
      '01:01:00;02',
      '01:01:00;29',
      '01:01:01;00',
      '01:01:01;29',
      '01:01:02;00',
    ])
    expect(frameOfLabel(c, '01:01:00;02')).toEqual({ frame: 2 })
    // A label drop frame skips names no frame.
    expect(frameOfLabel(c, '01:01:00;00')).toEqual({ error: expect.stringContaining('skips frames 00-01') })
    // At a drop-frame asset a colon reads as the asset counts.
    expect(frameOfLabel(c, '01:01:00:02')).toEqual({ frame: 2 })
  })

  test.each([
    ['30000/1001', '23:50:00;00'],
    ['60000/1001', '00:58:00;00'],
    ['25/1', '23:45:00:00'],
    ['24000/1001', '01:00:00:00'],
  ])(
    '%s from %s: every frame of half an hour, labelled and read back (midnight and tenth minutes crossed)',
    (fps, first) => {
      const c = clock(fps, first)
      const wrong: string[] = []
      const frames = Math.round((1800 * c.fps.num) / c.fps.den)
      for (let n = 0; n < frames; n++) {
        const label = labelOf(c, n)
        const read = frameOfLabel(c, label)
        if (!('frame' in read) || read.frame !== n) wrong.push(`${n} ${label} ${JSON.stringify(read)}`)
      }
      expect(wrong).toEqual([])
    },
  )

  test('at a non-drop asset a drop-frame label is refused, saying how to write it', () => {
    const c = clock('25/1', '10:00:00:00', 50)
    expect(frameOfLabel(c, '10:00:01;00')).toEqual({ error: expect.stringContaining('non-drop frame') })
    expect(frameOfLabel(c, '10:00:01:25')).toEqual({ error: expect.stringContaining('below 25') })
    expect(frameOfLabel(c, '10:0:01:00')).toEqual({ error: expect.stringContaining('HH:MM:SS:FF') })
  })

  test('a label before the first timecode is read past midnight (far past the asset)', () => {
    const c = clock('25/1', '10:00:00:00', 50)
    expect(frameOfLabel(c, '09:59:59:24')).toEqual({ frame: 25 * 86400 - 1 })
  })

  test('times without a frame rate read HH:MM:SS.mmm', () => {
    expect([0, 1500, 61_001, 3_600_000].map(clockText)).toEqual([
      '00:00:00.000',
      '00:00:01.500',
      '00:01:01.001',
      '01:00:00.000',
    ])
  })
})
