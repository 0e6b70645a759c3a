// SMPTE timecode arithmetic (src/media/timecode.ts) and how a probe's timecode is merged into an
// asset's technical (src/modules/assetimport/probed.ts): pure, no ffmpeg.
import { expect, test } from 'bun:test'
import { mergeProbed } from '../../src/modules/assetimport/probed.ts'
import { ixmlRate } from '../../src/media/probe.ts'
import { bwfTimecode, readTimecode, timecodeLabel } from '../../src/media/timecode.ts'

const rate = (num: number, den = 1) => ({ num, den })
const frames = (label: string, fps: { num: number; den: number }) => {
  const read = readTimecode(label, fps, { lenient: true })
  if ('error' in read) throw new Error(read.error)
  return read.frames
}

test("frames from midnight: the issue's three examples, 50 and 60 fps, 59.94 drop frame", () => {
  expect(frames('01:00:00:00', rate(24000, 1001))).toBe(86400)
  expect(frames('00:59:59;28', rate(30000, 1001))).toBe(107890)
  expect(frames('10:00:00:00', rate(25))).toBe(900000)
  expect(frames('01:00:00:00', rate(50))).toBe(180000)
  expect(frames('01:00:00:49', rate(50))).toBe(180049)
  expect(frames('01:00:00:00', rate(60))).toBe(216000)
  expect(frames('23:59:59:29', rate(30))).toBe(86400 * 30 - 1)
  // 59.94 drops 4 labels a minute but every tenth: one hour is 60 × 3600 − 4 × 54.
  expect(frames('01:00:00;00', rate(60000, 1001))).toBe(215784)
})

test('drop frame at its edges: the tenth minute keeps its labels, the others start at ;02', () => {
  const ntsc = rate(30000, 1001)
  expect(frames('00:00:59;29', ntsc)).toBe(1799)
  expect(frames('00:01:00;02', ntsc)).toBe(1800)
  expect(frames('00:09:59;29', ntsc)).toBe(17981)
  expect(frames('00:10:00;00', ntsc)).toBe(17982)
  expect(frames('00:10:00;01', ntsc)).toBe(17983)
  expect(frames('00:11:00;02', ntsc)).toBe(17982 + 1800)
  expect(readTimecode('00:01:00;00', ntsc)).toEqual({
    error: 'Drop-frame timecode skips frames 00-01 at the start of each minute but every tenth.',
  })
  expect(readTimecode('00:01:00;01', ntsc)).toHaveProperty('error')
  expect(readTimecode('01:00:00;00', rate(25))).toEqual({
    error: 'Drop-frame timecode (;) needs an NTSC rate such as 30000/1001 or 60000/1001, not 25/1.',
  })
})

test('a file\'s spelling of drop frame with "." or "," is read from files only (lenient), never from a request', () => {
  expect(frames('00:59:59.28', rate(30000, 1001))).toBe(107890)
  expect(readTimecode('00:59:59.28', rate(30000, 1001))).toHaveProperty('error')
})

test('labels from frames are the inverse, drop frame included, across a whole day', () => {
  expect(timecodeLabel(107890, rate(30000, 1001), true)).toBe('00:59:59;28')
  expect(timecodeLabel(17982, rate(30000, 1001), true)).toBe('00:10:00;00')
  expect(timecodeLabel(1800, rate(30000, 1001), true)).toBe('00:01:00;02')
  expect(timecodeLabel(86400, rate(24000, 1001))).toBe('01:00:00:00')
  expect(timecodeLabel(900000, rate(25))).toBe('10:00:00:00')
  // Non-drop at 29.97 is the same labels as at 30; drop frame asked at 25 is not drop frame.
  expect(timecodeLabel(107892, rate(30000, 1001))).toBe('00:59:56:12')
  expect(timecodeLabel(90000, rate(25), true)).toBe('01:00:00:00')
  // A day wraps: 24 hours of 29.97 drop frame are 2589408 frames.
  expect(timecodeLabel(2_589_408 + 1800, rate(30000, 1001), true)).toBe('00:01:00;02')
  for (const [fps, drop] of [
    [rate(30000, 1001), true],
    [rate(60000, 1001), true],
    [rate(25), false],
    [rate(24000, 1001), false],
  ] as const) {
    // Below a day at each rate (a label wraps at 24:00:00:00).
    for (let n = 0; n < 2_000_000; n += 997) {
      const label = timecodeLabel(n, fps, drop)
      if (frames(label, fps) !== n) throw new Error(`${n} → ${label} → ${frames(label, fps)} at ${fps.num}/${fps.den}`)
    }
  }
})

test("a broadcast WAV's time_reference: samples over the sample rate, as whole frames of its rate (25 when none is named)", () => {
  expect(bwfTimecode(172_800_000, 48000)).toBe('01:00:00:00')
  expect(bwfTimecode(172_824_000, 48000)).toBe('01:00:00:12')
  // 3600.5 s is halfway into frame 12 (1920 samples a frame at 48 kHz): whole frames only.
  expect(bwfTimecode(172_824_000 + 959, 48000)).toBe('01:00:00:12')
  expect(bwfTimecode(172_824_000 + 960, 48000)).toBe('01:00:00:13')
  expect(bwfTimecode(28_800_000, 48000, rate(30000, 1001), true)).toBe('00:10:00;00')
  // One real hour at 23.976 is 86313.6 frames: 00:59:56:09 on base 24.
  expect(bwfTimecode(158_760_000, 44100, rate(24000, 1001))).toBe('00:59:56:09')
})

test('an iXML names the rate: a fraction, an integer or a decimal (29.97 is 30000/1001), and DF', () => {
  const speed = (rateText: string, flag = 'NDF') =>
    ixmlRate(
      `<BWFXML><SPEED><TIMECODE_RATE>${rateText}</TIMECODE_RATE><TIMECODE_FLAG>${flag}</TIMECODE_FLAG></SPEED></BWFXML>`,
    )
  expect(speed('24000/1001')).toEqual({ rate: rate(24000, 1001), drop: false })
  expect(speed('25')).toEqual({ rate: rate(25), drop: false })
  expect(speed('29.97', 'DF')).toEqual({ rate: rate(30000, 1001), drop: true })
  expect(speed('30000/1001', 'DF')).toEqual({ rate: rate(30000, 1001), drop: true })
  expect(ixmlRate('<BWFXML></BWFXML>')).toBeUndefined()
  expect(ixmlRate(undefined)).toBeUndefined()
})

test("merging a probe: the request wins; a timecode is the user's or the file's, and timecode_source says which", () => {
  const probed = { fps: '25/1', width: 320, offset_string: '10:00:00:00', offset_frames: 900000 }
  // First import, nothing given: the file's.
  expect(mergeProbed('video', {}, probed, [])).toEqual({ ...probed, timecode_source: 'file' })
  // The request gave offset_string without fps: counted at the file's rate.
  expect(
    mergeProbed('video', { offset_string: '01:00:00:00', timecode_source: 'request' }, probed, [
      'offset_string',
      'timecode_source',
    ]),
  ).toEqual({ fps: '25/1', width: 320, offset_string: '01:00:00:00', offset_frames: 90000, timecode_source: 'request' })
  // A later import that gives none keeps the user's, also one stored before timecode_source existed.
  expect(mergeProbed('video', { offset_frames: 7, timecode_source: 'request' }, probed, [])).toEqual({
    fps: '25/1',
    width: 320,
    offset_frames: 7,
    timecode_source: 'request',
  })
  expect(mergeProbed('video', { offset_frames: 7 }, probed, [])).toEqual({
    fps: '25/1',
    width: 320,
    offset_frames: 7,
    timecode_source: 'request',
  })
  // The file's is read again; a given fps counts it; a file with none any more takes it away.
  expect(
    mergeProbed(
      'video',
      { offset_string: '01:00:00:00', offset_frames: 90000, timecode_source: 'file', fps: '50/1' },
      probed,
      ['fps'],
    ),
  ).toEqual({
    fps: '50/1',
    width: 320,
    offset_string: '10:00:00:00',
    offset_frames: 1_800_000,
    timecode_source: 'file',
  })
  expect(
    mergeProbed(
      'video',
      { offset_string: '01:00:00:00', offset_frames: 90000, timecode_source: 'file' },
      { fps: '25/1' },
      [],
    ),
  ).toEqual({ fps: '25/1' })
  // A label the rate cannot count (frame 27 at 25) is kept without frames; the old frames go.
  expect(
    mergeProbed(
      'video',
      { offset_string: '01:00:00:00', offset_frames: 90000, timecode_source: 'file' },
      { fps: '25/1', offset_string: '01:00:00:27' },
      [],
    ),
  ).toEqual({ fps: '25/1', offset_string: '01:00:00:27', timecode_source: 'file' })
  // Audio: time_code alike; an image has no timecode.
  expect(
    mergeProbed(
      'audio',
      { time_code: '11:00:00:00', timecode_source: 'request' },
      { time_code: '01:00:00:00', duration: '1.0' },
      [],
    ),
  ).toEqual({ time_code: '11:00:00:00', timecode_source: 'request', duration: '1.0' })
  expect(mergeProbed('audio', {}, { duration: '1.0' }, [])).toEqual({ duration: '1.0' })
  expect(mergeProbed('image', { width: 1 }, { width: 2, height: 2 }, ['width'])).toEqual({ width: 1, height: 2 })
})
