// The page's timecode as an editor types and reads it (src/ui/format.ts): typed timecode read to
// frames (whole, shortened, digits alone, offsets; drop frame as SMPTE 12M counts it, with the labels
// it skips refused), source timecode written as a time of day (wrapping at 24 hours), an asset's
// start timecode from its technical details, and paths shortened from the left. Drop frame is checked
// against the server's own reading and writing (src/media/timecode.ts) over whole days of labels.
import { describe, expect, test } from 'bun:test'
import { readTimecode as serverRead, timecodeLabel } from '../../src/media/timecode.ts'
import {
  framesPerDay,
  readTimecode,
  shortPath,
  startTimecode,
  timecodeOfDay,
  timecodeText,
} from '../../src/ui/format.ts'

const PAL = { num: 25, den: 1 }
const NTSC = { num: 30000, den: 1001 }
const NTSC60 = { num: 60000, den: 1001 }
const FILM = { num: 24000, den: 1001 }

describe('typed timecode', () => {
  test('HH:MM:SS:FF, with any of : ; . , between, to frames from midnight', () => {
    expect(readTimecode('10:00:12:05', PAL)).toEqual({ frames: (36000 + 12) * 25 + 5 })
    expect(readTimecode(' 10.00.12.05 ', PAL)).toEqual({ frames: (36000 + 12) * 25 + 5 })
    expect(readTimecode('00:00:01:00', FILM)).toEqual({ frames: 24 })
    expect(readTimecode('23:59:59:24', PAL)).toEqual({ frames: 86400 * 25 - 1 })
  })

  test('fewer groups are the low ones; digits alone are read in pairs from the right', () => {
    expect(readTimecode('12:05', PAL)).toEqual({ frames: 12 * 25 + 5 })
    expect(readTimecode('1:2:3', PAL)).toEqual({ frames: (60 + 2) * 25 + 3 })
    expect(readTimecode('10001205', PAL)).toEqual(readTimecode('10:00:12:05', PAL))
    expect(readTimecode('1205', PAL)).toEqual({ frames: 12 * 25 + 5 })
    expect(readTimecode('7', PAL)).toEqual({ frames: 7 })
  })

  test('a leading + or - is an offset from where the player is', () => {
    expect(readTimecode('+1:00', PAL)).toEqual({ frames: 25, relative: 1 })
    expect(readTimecode('-10', PAL)).toEqual({ frames: 10, relative: -1 })
    expect(readTimecode('+ 00:00:02:00', PAL)).toEqual({ frames: 50, relative: 1 })
  })

  test('what is not a timecode, or out of range, is said', () => {
    const error = (text: string, rate = PAL, drop = false) => {
      const read = readTimecode(text, rate, drop)
      return 'error' in read ? read.error : `read as ${JSON.stringify(read)}`
    }
    expect(error('')).toMatch(/^No timecode typed/)
    expect(error('ten')).toMatch(/“ten” is not a timecode/)
    expect(error('123456789')).toMatch(/is not a timecode/)
    expect(error('1:2:3:4:5')).toMatch(/is not a timecode/)
    expect(error('24:00:00:00')).toMatch(/hours run 00-23/)
    expect(error('00:60:00:00')).toMatch(/minutes and seconds 00-59/)
    expect(error('00:00:00:25')).toBe('Frames run 00-24 at 25 fps.')
    expect(error('00:00:00:30', NTSC, true)).toBe('Frames run 00-29 at 29.97 fps.')
  })

  test('drop frame: the labels it skips do not exist; others count as SMPTE 12M does', () => {
    expect(readTimecode('00:01:00;02', NTSC, true)).toEqual({ frames: 1800 })
    expect(readTimecode('00:10:00;00', NTSC, true)).toEqual({ frames: 17982 })
    expect(readTimecode('00:59:59;28', NTSC, true)).toEqual({ frames: 107890 })
    // `:` typed in a drop-frame clip still reads its drop-frame label.
    expect(readTimecode('00:10:00:00', NTSC, true)).toEqual({ frames: 17982 })
    const skipped = readTimecode('00:01:00;01', NTSC, true)
    expect('error' in skipped && skipped.error).toMatch(
      /^00:01:00;01 does not exist in drop-frame timecode: ;00 and ;01 are skipped/,
    )
    const skipped60 = readTimecode('01:03:00;03', NTSC60, true)
    expect('error' in skipped60 && skipped60.error).toMatch(/;00 to ;03 are skipped/)
    // Each tenth minute keeps them.
    expect(readTimecode('00:20:00;00', NTSC, true)).toEqual({ frames: 2 * 17982 })
    // Not at 25 fps, whatever is asked: there is no drop frame there.
    expect(readTimecode('00:01:00;00', PAL, true)).toEqual({ frames: 1500 })
  })

  test("typed and written agree with the server's reading and labels, frame by frame, over a day at 29.97 and 59.94 DF", () => {
    for (const rate of [NTSC, NTSC60]) {
      const day = framesPerDay(rate, true)
      expect(day).toBe(rate === NTSC ? 2589408 : 5178816)
      for (let frames = 0; frames < day; frames += 997) {
        const label = timecodeOfDay(frames, rate, true)
        expect(label).toBe(timecodeLabel(frames, rate, true))
        expect(readTimecode(label, rate, true)).toEqual({ frames })
        expect(serverRead(label, rate)).toEqual({ frames })
      }
      // Around each minute of the first hour, every frame.
      for (let minute = 1; minute < 60; minute++) {
        const at = (
          readTimecode(
            `00:${String(minute).padStart(2, '0')}:00;${minute % 10 ? (rate === NTSC ? '02' : '04') : '00'}`,
            rate,
            true,
          ) as { frames: number }
        ).frames
        for (let frames = at - 3; frames < at + 3; frames++) {
          const label = timecodeOfDay(frames, rate, true)
          expect([frames, label]).toEqual([frames, timecodeLabel(frames, rate, true)])
          expect(readTimecode(label, rate, true)).toEqual({ frames })
        }
      }
    }
  })
})

describe('source timecode as a time of day', () => {
  test('wraps after 24 hours; a length (timecodeText) does not', () => {
    expect(timecodeOfDay(86400 * 25, PAL)).toBe('00:00:00:00')
    expect(timecodeOfDay(86400 * 25 + 30, PAL)).toBe('00:00:01:05')
    expect(timecodeOfDay(-1, PAL)).toBe('23:59:59:24')
    expect(timecodeText(86400 * 25, PAL)).toBe('24:00:00:00')
    expect(timecodeOfDay(framesPerDay(NTSC, true) - 1, NTSC, true)).toBe('23:59:59;29')
    expect(timecodeOfDay(framesPerDay(NTSC, true), NTSC, true)).toBe('00:00:00;00')
  })
})

describe("an asset's start timecode", () => {
  test('offset_frames when it goes with offset_string; else the label read; drop frame from its `;`', () => {
    expect(startTimecode({ offset_string: '10:00:00:00', offset_frames: 900000 }, PAL)).toEqual({
      frames: 900000,
      drop: false,
      label: '10:00:00:00',
    })
    expect(startTimecode({ offset_string: '01:00:59;28' }, NTSC)).toEqual({
      frames: (readTimecode('01:00:59;28', NTSC, true) as { frames: number }).frames,
      drop: true,
      label: '01:00:59;28',
    })
    // Some files spell drop frame with `.` or `,`.
    expect(startTimecode({ offset_string: '00:10:00.00' }, NTSC)).toMatchObject({ frames: 17982, drop: true })
    // Non-drop at 29.97: `:`.
    expect(startTimecode({ offset_string: '00:10:00:00' }, NTSC)).toMatchObject({ frames: 18000, drop: false })
    // An audio's time_code; the contract's `timecode` member.
    expect(startTimecode({ time_code: '01:00:00:00' }, PAL)).toMatchObject({ frames: 90000 })
    expect(startTimecode({ timecode: '01:00:00:00' }, PAL)).toMatchObject({ frames: 90000 })
  })

  test('none without a label, a rate, or with a label that fits no rate', () => {
    expect(startTimecode({}, PAL)).toBeUndefined()
    expect(startTimecode({ offset_string: '10:00:00:00' }, undefined)).toBeUndefined()
    expect(startTimecode({ offset_string: '10:00:00:27' }, PAL)).toBeUndefined()
    expect(startTimecode({ offset_string: 'soon' }, PAL)).toBeUndefined()
  })
})

describe('paths shortened from the left', () => {
  test('whole folders dropped first, the file name always whole', () => {
    const path = '/mnt/nas/Show/Day 2/A001C003.mov'
    expect(shortPath(path, 100)).toBe(path)
    expect(shortPath(path, 24)).toBe('…/Day 2/A001C003.mov')
    expect(shortPath(path, 27)).toBe('…/Show/Day 2/A001C003.mov')
    expect(shortPath(path, 10)).toBe('…/A001C003.mov')
    expect(shortPath('/x/A001C003_a_very_long_name_indeed.mov', 12)).toBe('…/A001C003_a_very_long_name_indeed.mov')
    expect(shortPath('A001C003_a_very_long_name_indeed.mov', 12)).toBe('A001C003_a_very_long_name_indeed.mov')
  })

  test('Windows paths keep their backslashes', () => {
    expect(shortPath('D:\\Media\\Show\\Day 2\\A001C003.mov', 24)).toBe('…\\Day 2\\A001C003.mov')
  })
})
