// The page's one way of writing dates, durations and technical values (src/ui/format.ts,
// src/ui/technical.ts), without a browser: dates in local time to the minute, durations as
// timecode at the asset's rate (drop frame counted as the server counts it) or HH:MM:SS.mmm,
// readable labels and units for the technical details, and a failed import never said as "online".
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { timecodeLabel } from '../../src/media/timecode.ts'
import {
  assetState,
  bitRateText,
  clockText,
  durationText,
  formatDate,
  parseTimestamp,
  rateText,
  readRate,
  sampleRateText,
  timecodeText,
} from '../../src/ui/format.ts'
import { readableKey, technicalRows } from '../../src/ui/technical.ts'

// Local time is the process's zone: fixed here (bun reads TZ when it changes) so that the
// expected texts hold on any machine, and put back after.
const zone = process.env.TZ
beforeAll(() => {
  process.env.TZ = 'Europe/Berlin'
})
afterAll(() => {
  if (zone === undefined) delete process.env.TZ
  else process.env.TZ = zone
})

describe('dates', () => {
  test("an API timestamp is local time to the minute, year first; the API's microseconds read", () => {
    expect(formatDate('2026-11-29T13:05:07.123456Z')).toBe('2026-11-29 14:05')
    // Summer time in Berlin: two hours ahead.
    expect(formatDate('2026-07-01T22:30:00.000000Z')).toBe('2026-07-02 00:30')
    expect(parseTimestamp('2026-11-29T13:05:07.123456Z')?.toISOString()).toBe('2026-11-29T13:05:07.123Z')
  })

  test('a timestamp with an offset, without seconds, or with a space', () => {
    expect(formatDate('2026-11-29T14:05+01:00')).toBe('2026-11-29 14:05')
    expect(formatDate('2026-11-29 08:05:00-0500')).toBe('2026-11-29 14:05')
  })

  test('none is a dash (or what is asked); text that is no timestamp shows as it is', () => {
    expect(formatDate(null)).toBe('—')
    expect(formatDate(undefined, 'never')).toBe('never')
    expect(formatDate('')).toBe('—')
    // No zone: which one it is in is not known, so it is not turned into local time.
    expect(formatDate('2026-11-29T13:05:07')).toBe('2026-11-29T13:05:07')
    expect(formatDate('yesterday')).toBe('yesterday')
    expect(parseTimestamp('2026-13-45T99:99:00Z')).toBeUndefined()
  })
})

describe('durations', () => {
  test('frames as timecode at the rate; the hours go past 24', () => {
    expect(timecodeText(0, { num: 25, den: 1 })).toBe('00:00:00:00')
    expect(timecodeText(24, { num: 24000, den: 1001 })).toBe('00:00:01:00')
    expect(timecodeText(90_061 * 25 + 7, { num: 25, den: 1 })).toBe('25:01:01:07')
    expect(timecodeText(17982, { num: 30000, den: 1001 }, true)).toBe('00:10:00;00')
    // Drop frame only where it exists: 25 fps counts plainly even when asked.
    expect(timecodeText(1500, { num: 25, den: 1 }, true)).toBe('00:01:00:00')
  })

  test("drop frame and non-drop agree with the server's labels (src/media/timecode.ts) within a day", () => {
    const rates = [
      { num: 30000, den: 1001 },
      { num: 60000, den: 1001 },
      { num: 24000, den: 1001 },
      { num: 25, den: 1 },
      { num: 50, den: 1 },
    ]
    for (const rate of rates)
      for (const frames of [0, 1, 1799, 1800, 1801, 17981, 17982, 17983, 107890, 215999, 1_000_003, 2_000_000])
        for (const drop of [false, true])
          expect([rate, frames, drop, timecodeText(frames, rate, drop)]).toEqual([
            rate,
            frames,
            drop,
            timecodeLabel(frames, rate, drop),
          ])
  })

  test('seconds without a rate as HH:MM:SS.mmm; with one, as timecode', () => {
    expect(clockText(0)).toBe('00:00:00.000')
    expect(clockText(12.3456)).toBe('00:00:12.346')
    expect(clockText(3725.5)).toBe('01:02:05.500')
    expect(durationText(3725.5)).toBe('01:02:05.500')
    expect(durationText(2, { num: 25, den: 1 })).toBe('00:00:02:00')
  })
})

describe('rates and sizes', () => {
  test('frame rates read from fractions and numbers, said in fps', () => {
    expect(readRate('24000/1001')).toEqual({ num: 24000, den: 1001 })
    expect(readRate(25)).toEqual({ num: 25, den: 1 })
    expect(readRate('29.97')).toEqual({ num: 29.97, den: 1 })
    expect([readRate('0/0'), readRate('abc'), readRate(undefined), readRate('25/0')]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ])
    expect(rateText({ num: 24000, den: 1001 })).toBe('23.976 fps')
    expect(rateText({ num: 30000, den: 1001 })).toBe('29.97 fps')
    expect(rateText({ num: 25, den: 1 })).toBe('25 fps')
  })

  test('bit rates and sample rates in the units people use', () => {
    expect(bitRateText(12_400_000)).toBe('12.4 Mb/s')
    expect(bitRateText(8_000_000)).toBe('8 Mb/s')
    expect(bitRateText(320_000)).toBe('320 kb/s')
    expect(bitRateText(1_500_000_000)).toBe('1.5 Gb/s')
    expect(sampleRateText(48000)).toBe('48 kHz')
    expect(sampleRateText(44100)).toBe('44.1 kHz')
  })
})

test('a failed import is "import failed", never "online"; one under way is "importing"', () => {
  expect(assetState(-1, true).label).toBe('import failed')
  expect(assetState(-1, false).label).toBe('import failed')
  expect(assetState(-1, true).detail).toContain('online')
  expect(assetState(0, false).label).toBe('importing')
  expect([assetState(6, true).label, assetState(6, false).label, assetState(undefined, true).label]).toEqual([
    'online',
    'offline',
    'online',
  ])
})

describe('technical details', () => {
  test("a video's: labels, units, the resolution in one line, the duration as timecode at its rate", () => {
    const rows = technicalRows(
      {
        annotation_markers: [],
        duration: 24 * 60 + 12,
        fps: '24000/1001',
        width: 1920,
        height: 1080,
        format: 'mov,mp4,m4a,3gp,3g2,mj2',
        display_aspect_ratio: '16:9',
        offset_string: '01:00:00:00',
        offset_frames: 86400,
        timecode_source: 'file',
        video_codec: 'prores',
        bit_depth: 10,
        pix_fmt: 'yuv422p10le',
        field_order: 'tff',
        color_transfer: 'smpte2084',
        rotation: 90,
        variable_frame_rate: false,
        bit_rate: '12400000',
        audio_streams: [
          { index: 1, codec: 'pcm_s24le', channels: 2, channel_layout: 'stereo', sample_rate: 48000, bit_depth: 24 },
          { index: 2, codec: 'aac', channels: 1, channel_layout: null, sample_rate: 44100, bit_depth: null },
        ],
        scan_type: 'interlaced',
      },
      'video',
    )
    expect(rows.map((r) => [r.label, r.value])).toEqual([
      ['Markers', 'None'],
      ['Duration', '00:01:00:12'],
      ['Frame rate', '23.976 fps'],
      ['Resolution', '1920 × 1080'],
      ['Container', 'mov,mp4,m4a,3gp,3g2,mj2'],
      ['Display aspect ratio', '16:9'],
      ['Start timecode', '01:00:00:00'],
      ['Start timecode in frames', '86400'],
      ['Timecode from', 'the file'],
      ['Video codec', 'prores'],
      ['Bit depth', '10 bit'],
      ['Pixel format', 'yuv422p10le'],
      ['Field order', 'Interlaced, top field first'],
      ['Transfer characteristics', 'PQ (smpte2084)'],
      ['Rotation', '90° clockwise'],
      ['Variable frame rate', 'No'],
      ['Bit rate', '12.4 Mb/s'],
      ['Audio streams', 'Stream 1: pcm_s24le, 2 channels (stereo), 48 kHz, 24 bit; Stream 2: aac, 1 channel, 44.1 kHz'],
      ['Scan type', 'interlaced'],
    ])
    expect(rows.find((r) => r.key === 'audio_streams')?.items).toHaveLength(2)
    // No raw key is a label.
    for (const row of rows) expect(row.label).not.toMatch(/_/)
  })

  test('a drop-frame timecode counts the duration in drop frame; a video without a rate says frames', () => {
    const drop = technicalRows({ duration: 17982, fps: '30000/1001', offset_string: '00:59:59;28' }, 'video')
    expect(drop[0]).toMatchObject({ label: 'Duration', value: '00:10:00;00' })
    expect(technicalRows({ duration: 1234 }, 'video')[0]).toMatchObject({ value: '1,234 frames' })
  })

  test("an audio's: the duration and start in HH:MM:SS.mmm (no frame rate), size and bit rate in units, its date as every date", () => {
    const rows = technicalRows(
      {
        filename: 'ambience.wav',
        nb_Streams: 1,
        formate_name: 'wav',
        size: '5760044',
        duration: '30.000000',
        start_time: '0.500000',
        bit_rate: '1536000',
        create_time: '2026-03-01T09:00:00.000000Z',
        time_code: '01:00:00:12',
        com_vendor_final: 'Sound Devices',
      },
      'audio',
    )
    expect(rows.map((r) => [r.label, r.value])).toEqual([
      ['File name', 'ambience.wav'],
      ['Streams', '1'],
      ['Format', 'wav'],
      ['File size', '5.8 MB (5,760,044 bytes)'],
      ['Duration', '00:00:30.000'],
      ['Start time', '00:00:00.500'],
      ['Bit rate', '1.5 Mb/s'],
      ['Recorded', '2026-03-01 10:00'],
      ['Start timecode', '01:00:00:12'],
      ['Com vendor final', 'Sound Devices'],
    ])
    expect(rows.find((r) => r.key === 'create_time')?.date).toBe('2026-03-01T09:00:00.000000Z')
  })

  test("an image's orientation is said; width or height alone keep their own line", () => {
    expect(
      technicalRows({ width: 4000, format: 'jpeg', orientation: 6 }, 'image').map((r) => [r.label, r.value]),
    ).toEqual([
      ['Width', '4000 px'],
      ['Format', 'jpeg'],
      ['Orientation', 'Turned 90° clockwise (EXIF 6)'],
    ])
  })

  test('unknown keys are made readable', () => {
    expect(readableKey('scan_type')).toBe('Scan type')
    expect(readableKey('colourSpace')).toBe('Colour space')
    expect(readableKey('r_frame_rate')).toBe('R frame rate')
    expect(readableKey('__')).toBe('__')
  })
})
