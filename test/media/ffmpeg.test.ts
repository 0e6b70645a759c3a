// Finding ffmpeg and ffprobe, and running them (src/media/ffmpeg.ts). The child-process tests run
// stand-in scripts, so they need no real ffmpeg.
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { MediaError, STDERR_TAIL, createFfmpeg, lastLines } from '../../src/media/ffmpeg.ts'
import { CancelledError } from '../../src/storage/fs.ts'
import { fakeFfmpegDir, ff, hasFfmpeg, disposableDir } from '../helpers/media.ts'

const temp = disposableDir()
afterAll(() => temp[Symbol.dispose]())
const fakes = await createFfmpeg({ dir: fakeFfmpegDir(temp.path) })

test('a folder without ffmpeg: both unavailable, and missing() says where it looked', async () => {
  const empty = join(temp.path, 'empty')
  mkdirSync(empty)
  const none = await createFfmpeg({ dir: empty, searchPath: '' })
  expect({ available: none.available, paths: none.paths }).toEqual({
    available: { ffmpeg: false, ffprobe: false },
    paths: {},
  })
  expect(none.missing()).toBe(
    `ffmpeg was not found in ${empty}; ffprobe was not found in ${empty}; media is not probed and no proxies are made (install ffmpeg or pass --ffmpeg DIR)`,
  )
  expect(none.missing('ffprobe')).toStartWith(`ffprobe was not found in ${empty}; media`)
  const refused = await none.run('ffmpeg', ['-version'], { timeoutMs: 1000 }).catch((e) => e)
  expect(refused).toBeInstanceOf(MediaError)
  expect({ code: refused.code, message: refused.message }).toEqual({
    code: 'missing',
    message: none.missing('ffmpeg')!,
  })
})

test('a PATH without ffmpeg: unavailable, and missing() says PATH', async () => {
  const none = await createFfmpeg({ searchPath: join(temp.path, 'nowhere') })
  expect(none.available).toEqual({ ffmpeg: false, ffprobe: false })
  expect(none.missing('ffmpeg')).toStartWith('ffmpeg was not found on PATH;')
})

test('a binary that does not run (-version fails) is unavailable, with the reason', async () => {
  const half = await createFfmpeg({ dir: fakeFfmpegDir(temp.path, ['ffprobe']) })
  expect(half.available).toEqual({ ffmpeg: true, ffprobe: false })
  expect(half.versions).toEqual({ ffmpeg: 'ffmpeg version fake' })
  expect(half.missing('ffmpeg')).toBeUndefined()
  expect(half.missing()).toMatch(
    /^ffprobe: \S+\/ffprobe does not run: ffprobe failed: cannot load libavcodec; media is not probed/,
  )
})

test(
  hasFfmpeg
    ? 'finds the installed ffmpeg and ffprobe on PATH'
    : 'without ffmpeg: PATH gives neither, and missing() says so',
  () => {
    if (!hasFfmpeg) {
      expect(ff.available).toEqual({ ffmpeg: false, ffprobe: false })
      expect(ff.missing()).toContain('ffmpeg was not found on PATH')
      return
    }
    expect(ff.available).toEqual({ ffmpeg: true, ffprobe: true })
    expect(ff.versions.ffmpeg).toStartWith('ffmpeg version ')
    expect(ff.versions.ffprobe).toStartWith('ffprobe version ')
    expect(ff.missing()).toBeUndefined()
  },
)

test('stdout is collected, or handed over line by line', async () => {
  const lines: string[] = []
  expect(await fakes.run('ffmpeg', ['lines'], { timeoutMs: 5000 })).toEqual({ stdout: 'one\ntwo\nthree', stderr: '' })
  await fakes.run('ffmpeg', ['lines'], { timeoutMs: 5000, onLine: (line) => lines.push(line) })
  expect(lines).toEqual(['one', 'two', 'three'])
})

test('a failure keeps only the last 8 KiB of stderr, and its message ends with the last line', async () => {
  const error = await fakes.run('ffmpeg', ['loud'], { timeoutMs: 5000 }).catch((e) => e)
  expect(error).toBeInstanceOf(MediaError)
  expect(error.code).toBe('failed')
  expect(error.stderr.length).toBe(STDERR_TAIL)
  expect(error.stderr).toEndWith('x\nthe last line\n')
  // The 100,000-character line does not fit the message's bound; the line after it does.
  expect(error.message).toBe('ffmpeg failed: the last line')
})

// The fakes sleep for an hour or forever: that these runs end at all (within the test's bound) is
// what shows the child was stopped; no elapsed time is measured.
test('past its time limit a child is stopped (SIGTERM)', async () => {
  const error = await fakes.run('ffmpeg', ['sleep'], { timeoutMs: 100 }).catch((e) => e)
  expect({ code: error.code, message: error.message }).toEqual({
    code: 'timeout',
    message: 'ffmpeg ran longer than 0.1 s and was stopped',
  })
})

test('a child that ignores SIGTERM is killed (SIGKILL) after the grace time', async () => {
  const error = await fakes.run('ffmpeg', ['stubborn'], { timeoutMs: 100, graceMs: 100 }).catch((e) => e)
  expect(error.code).toBe('timeout')
})

test('a child silent for idleMs is stopped', async () => {
  const error = await fakes.run('ffmpeg', ['sleep'], { timeoutMs: 10_000, idleMs: 100 }).catch((e) => e)
  expect({ code: error.code, message: error.message }).toEqual({
    code: 'timeout',
    message: 'ffmpeg made no progress for 0.1 s and was stopped',
  })
})

test('an abort kills the child and rejects with CancelledError; an aborted signal starts nothing', async () => {
  const controller = new AbortController()
  const running = fakes.run('ffmpeg', ['sleep'], { timeoutMs: 10_000, signal: controller.signal })
  controller.abort('shutdown')
  const error = await running.catch((e) => e)
  expect(error).toBeInstanceOf(CancelledError)
  expect(error.message).toBe('shutdown')
  expect(
    await fakes.run('ffmpeg', ['sleep'], { timeoutMs: 10_000, signal: controller.signal }).catch((e) => e),
  ).toBeInstanceOf(CancelledError)
})

test('the event loop keeps turning while a child runs', async () => {
  let turns = 0
  const ticking = setInterval(() => turns++, 5)
  await fakes.run('ffmpeg', ['sleep'], { timeoutMs: 200 }).catch(() => {})
  clearInterval(ticking)
  expect(turns).toBeGreaterThan(10)
})

test('lastLines joins the last lines within the bound', () => {
  expect(lastLines('a\n\n b \nc\n')).toBe('a | b | c')
  expect(lastLines('[mov,mp4 @ 0x5575f316f1c0] moov atom not found\nInvalid data')).toBe(
    '[mov,mp4] moov atom not found | Invalid data',
  )
  expect(lastLines('first line\nsecond', 10)).toBe('second')
  expect(lastLines('x'.repeat(50), 10)).toBe('x'.repeat(10))
})
