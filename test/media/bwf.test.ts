// Broadcast WAV chunks (src/media/bwf.ts): bext and iXML read from files whose RIFF bytes are
// written here, sound and damaged; then through the import (POST /api/asset/import/ with a real
// ffprobe): `technical` holds bext, ixml and the start time, the search finds the asset by them,
// and a damaged file is imported with a warning, never failed.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BEXT_FIXED_BYTES, MAX_IXML_BYTES, type BwfChunks, ixmlOf, readBwf } from '../../src/media/bwf.ts'
import { type TestApp, seedProduction, testApp, tempDir } from '../helpers/app.ts'
import {
  IMPORT,
  appWithFfmpegDir,
  assetOf,
  expectImported,
  importBody,
  logsOf,
  removeScratch,
  scratchDir,
} from '../helpers/imports.ts'
import { ff, hasFfmpeg } from '../helpers/media.ts'

setDefaultTimeout(60_000)

// ---------------------------------------------------------------- RIFF bytes, by hand

const ascii = (text: string) => Buffer.from(text, 'latin1')
/** A chunk: its id, its size (`size` when given: a lie a damaged file tells), the body, a pad byte to an even length. */
function chunk(id: string, body: Buffer, size = body.length): Buffer {
  const head = Buffer.alloc(8)
  head.write(id, 0, 'latin1')
  head.writeUInt32LE(size >>> 0, 4)
  return Buffer.concat([head, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)])
}
/** A WAVE file of these chunks. */
function wave(chunks: Buffer[], form = 'RIFF'): Buffer {
  const body = Buffer.concat([ascii('WAVE'), ...chunks])
  const head = Buffer.alloc(8)
  head.write(form, 0, 'latin1')
  head.writeUInt32LE(form === 'RIFF' ? body.length : 0xffffffff, 4)
  return Buffer.concat([head, body])
}
/** A PCM fmt chunk. */
function fmt(rate = 48000, channels = 2, bits = 24): Buffer {
  const b = Buffer.alloc(16)
  b.writeUInt16LE(1, 0)
  b.writeUInt16LE(channels, 2)
  b.writeUInt32LE(rate, 4)
  b.writeUInt32LE((rate * channels * bits) / 8, 8)
  b.writeUInt16LE((channels * bits) / 8, 12)
  b.writeUInt16LE(bits, 14)
  return chunk('fmt ', b)
}
type BextFields = {
  description?: string
  originator?: string
  originator_reference?: string
  origination_date?: string
  origination_time?: string
  time_reference?: number
}
/** A bext chunk (EBU Tech 3285 version 1): its fixed 602 bytes and a coding history. */
function bext(
  f: BextFields,
  codingHistory = 'A=PCM,F=48000,W=24,M=stereo,T=test\r\n',
  latin1Description?: Buffer,
): Buffer {
  const b = Buffer.alloc(BEXT_FIXED_BYTES)
  const put = (value: Buffer | string | undefined, at: number, n: number) => {
    if (value !== undefined) (typeof value === 'string' ? ascii(value) : value).copy(b, at, 0, n)
  }
  put(f.description, 0, 256)
  put(latin1Description, 0, 256)
  put(f.originator, 256, 32)
  put(f.originator_reference, 288, 32)
  put(f.origination_date, 320, 10)
  put(f.origination_time, 330, 8)
  const reference = f.time_reference ?? 0
  b.writeUInt32LE(reference % 2 ** 32, 338)
  b.writeUInt32LE(Math.floor(reference / 2 ** 32), 342)
  b.writeUInt16LE(1, 346)
  return chunk('bext', Buffer.concat([b, ascii(codingHistory)]))
}
const ixml = (inner: string) =>
  chunk(
    'iXML',
    Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><BWFXML><IXML_VERSION>1.61</IXML_VERSION>${inner}</BWFXML>`),
  )
/** Silence: `seconds` of 48 kHz 24-bit stereo. */
const data = (seconds = 0.01) => chunk('data', Buffer.alloc(Math.round(48000 * seconds) * 6))

const SCENE_TAKE =
  '<PROJECT>Harbour Lights</PROJECT><SCENE>12A</SCENE><TAKE>3</TAKE><TAPE>DAY03</TAPE>' +
  '<NOTE>boom shadow &amp; gull noise</NOTE>' +
  '<SPEED><NOTE>not the take note</NOTE><TIMECODE_RATE>25/1</TIMECODE_RATE><TIMECODE_FLAG>NDF</TIMECODE_FLAG></SPEED>' +
  '<TRACK_LIST><TRACK_COUNT>1</TRACK_COUNT><TRACK><NAME>Boom</NAME></TRACK></TRACK_LIST>'
const FIELDS: BextFields = {
  description: 'sSCENE=12A sTAKE=3 sTAPE=DAY03 interview harbour master',
  originator: 'Sound Devices 888',
  originator_reference: 'USSDVABC123456789',
  origination_date: '2024-05-03',
  origination_time: '14:03:21',
  time_reference: 172_800_000 + 48_000 * 12,
}

const dir = tempDir('reelhouse-bwf-')
let n = 0
/** The bytes written to a file of their own, read back by readBwf from an open descriptor. */
function readBytes(bytes: Buffer): BwfChunks {
  const path = join(dir, `${++n}.wav`)
  writeFileSync(path, bytes)
  const fd = openSync(path, 'r')
  try {
    return readBwf(fd)
  } finally {
    closeSync(fd)
  }
}

describe('readBwf: a sound file', () => {
  test('fmt, bext and iXML before the data: every field, the iXML members of the root only', () => {
    const read = readBytes(wave([fmt(), bext(FIELDS), ixml(SCENE_TAKE), data()]))
    expect(read).toEqual({
      warnings: [],
      sample_rate: 48000,
      bext: {
        description: 'sSCENE=12A sTAKE=3 sTAPE=DAY03 interview harbour master',
        originator: 'Sound Devices 888',
        originator_reference: 'USSDVABC123456789',
        origination_date: '2024-05-03',
        origination_time: '14:03:21',
        time_reference: 173_376_000,
      },
      ixml_text: expect.stringContaining('<SCENE>12A</SCENE>'),
      // SPEED's NOTE and a TRACK's NAME are not the take's.
      ixml: { project: 'Harbour Lights', scene: '12A', take: '3', tape: 'DAY03', note: 'boom shadow & gull noise' },
    })
  })

  test('an iXML after the data (as recorders append it), a time reference above 32 bits, a Latin-1 description', () => {
    const reference = 2 ** 32 + 5
    const read = readBytes(
      wave([
        fmt(96000),
        bext({ time_reference: reference }, undefined, Buffer.from([0x43, 0x61, 0x66, 0xe9])),
        data(),
        ixml('<SCENE>7</SCENE>'),
      ]),
    )
    expect(read.bext).toEqual({ description: 'Café', time_reference: reference })
    expect(read.sample_rate).toBe(96000)
    expect(read.ixml).toEqual({ scene: '7' })
    expect(read.warnings).toEqual([])
  })

  test('RF64: the data size from ds64, so that the iXML after it is found', () => {
    const samples = data()
    const ds64 = Buffer.alloc(28)
    ds64.writeBigUInt64LE(0n, 0)
    ds64.writeBigUInt64LE(BigInt(samples.length - 8), 8)
    // The data chunk's own size says "see ds64".
    samples.writeUInt32LE(0xffffffff, 4)
    const read = readBytes(wave([chunk('ds64', ds64), fmt(), samples, ixml('<TAKE>12</TAKE>')], 'RF64'))
    expect(read.ixml).toEqual({ take: '12' })
    expect(read.warnings).toEqual([])
  })

  test('empty fields are left out; CDATA, entities and markup inside an element are text', () => {
    const read = readBytes(
      wave([
        fmt(),
        bext({ originator: 'Zaxcom' }),
        ixml('<SCENE><![CDATA[4<b>]]></SCENE><NOTE> wind  &#x2014; <I>low</I> </NOTE><TAPE></TAPE>'),
        data(),
      ]),
    )
    expect(read.bext).toEqual({ originator: 'Zaxcom', time_reference: 0 })
    expect(read.ixml).toEqual({ scene: '4<b>', note: 'wind — low' })
  })

  test('no WAVE at all (an MP3, a text, two bytes): nothing, and no warning', () => {
    expect(readBytes(Buffer.from('ID3\u0003\u0000\u0000\u0000\u0000 not a wave'))).toEqual({ warnings: [] })
    expect(readBytes(Buffer.from('RI'))).toEqual({ warnings: [] })
    expect(readBytes(wave([fmt(), data()]))).toEqual({ warnings: [], sample_rate: 48000 })
  })
})

describe('readBwf: a damaged file gives what it can, with a warning', () => {
  test('a bext chunk shorter than its fields: those that fit, and a warning', () => {
    const whole = bext(FIELDS)
    // 8 bytes of header, then only the description and the originator (288 bytes).
    const short = chunk('bext', whole.subarray(8, 8 + 288))
    const read = readBytes(wave([fmt(), short, data()]))
    expect(read.bext).toEqual({ description: FIELDS.description, originator: FIELDS.originator })
    expect(read.warnings).toEqual(['the bext chunk is 288 bytes, shorter than the 602 of its fields'])
  })

  test('a chunk list that turns to garbage: the chunks before it, and a warning naming the byte', () => {
    const bytes = Buffer.concat([wave([fmt(), bext(FIELDS)]), Buffer.from([0x00, 0xff, 0x13, 0x37, 1, 2, 3, 4, 5, 6])])
    const read = readBytes(bytes)
    expect(read.bext?.time_reference).toBe(FIELDS.time_reference)
    expect(read.warnings).toEqual([
      `the chunk list is damaged at byte ${bytes.length - 10} (no chunk id there); chunks after it are not read`,
    ])
  })

  test('an iXML cut short by the end of the file: the members it closed, and a warning', () => {
    const full = ixml('<SCENE>9</SCENE><TAKE>4</TAKE><NOTE>cut here')
    const cut = full.subarray(0, full.length - 12)
    const read = readBytes(wave([fmt(), data(), cut]))
    expect(read.ixml).toEqual({ scene: '9', take: '4' })
    expect(read.warnings).toEqual(['the iXML chunk runs past the end of the file'])
  })

  test('a chunk that says it runs past the end: the walk stops there, with a warning', () => {
    const read = readBytes(wave([fmt(), chunk('LIST', Buffer.alloc(10), 1_000_000), bext(FIELDS)]))
    expect(read.bext).toBeUndefined()
    expect(read.warnings).toEqual(['the LIST chunk runs past the end of the file; chunks after it are not read'])
  })

  test('an iXML that is no BWFXML document, or larger than is read: left out, with a warning', () => {
    expect(readBytes(wave([fmt(), chunk('iXML', ascii('<html>no</html>')), data()])).warnings).toEqual([
      'the iXML chunk holds no <BWFXML> document',
    ])
    const huge = readBytes(wave([fmt(), chunk('iXML', ascii('<BWFXML>'), MAX_IXML_BYTES + 1)]))
    expect(huge.ixml).toBeUndefined()
    expect(huge.warnings).toEqual([
      `the iXML chunk is ${MAX_IXML_BYTES + 1} bytes, more than the ${MAX_IXML_BYTES} read; it is left out`,
    ])
  })

  test('ixmlOf alone: members of the root only, the first of each', () => {
    expect(ixmlOf('<BWFXML><SCENE>1</SCENE><SCENE>2</SCENE><USER><TAKE>9</TAKE></USER></BWFXML>')).toEqual({
      scene: '1',
    })
    expect(ixmlOf('<xml/>')).toBeUndefined()
  })
})

// ---------------------------------------------------------------- through the import

/** The audio samples of a WAV ffmpeg makes (its data chunk), to wrap in chunks of ours. */
function samplesOf(path: string): Buffer {
  const bytes = readFileSync(path)
  let at = 12
  while (at + 8 <= bytes.length) {
    const id = bytes.toString('latin1', at, at + 4)
    const size = bytes.readUInt32LE(at + 4)
    if (id === 'data') return bytes.subarray(at + 8, at + 8 + size)
    at += 8 + size + (size % 2)
  }
  throw new Error(`no data chunk in ${path}`)
}

const withFfmpeg = hasFfmpeg ? test : test.skip
let base: TestApp
let app: ReturnType<typeof appWithFfmpegDir>
let root: string
let samples: Buffer

beforeAll(async () => {
  if (!hasFfmpeg) return
  base = testApp(undefined, { tasks: false })
  ;({ root } = await seedProduction(base))
  const probeOnly = scratchDir('reelhouse-ffprobe-only-')
  const { symlinkSync } = await import('node:fs')
  symlinkSync(ff.paths.ffprobe!, join(probeOnly, 'ffprobe'))
  app = appWithFfmpegDir(base, probeOnly)
  const made = join(scratchDir('reelhouse-bwf-made-'), 'tone.wav')
  await ff.run(
    'ffmpeg',
    [
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:sample_rate=48000',
      '-t',
      '0.5',
      '-ac',
      '2',
      '-c:a',
      'pcm_s24le',
      made,
    ],
    { timeoutMs: 30_000 },
  )
  samples = samplesOf(made)
})
afterAll(async () => {
  if (!hasFfmpeg) return
  await app.stop()
  base.cleanup()
  removeScratch()
})

/** A broadcast WAV of these chunks around the real samples, on the device; imported as audio, its task run. */
async function importWav(name: string, chunks: Buffer[]) {
  const path = join(root, 'sound', name)
  mkdirSync(join(root, 'sound'), { recursive: true })
  writeFileSync(path, wave([fmt(), ...chunks, chunk('data', samples)]))
  const body = importBody(path, { name: name.replace(/\.wav$/, '') }, {}, { type: 'audio' })
  const id = expectImported(await app.post(IMPORT, body), body, 'asset_creation_completed', 'audio')
  await app.runner.idle()
  return { id, path, asset: await assetOf(app.request, id, 'audio') }
}
const found = async (q: string) =>
  ((await app.get(`/api/search/?q=${encodeURIComponent(q)}&type=audioasset`)).json as { id: number }[]).map((h) => h.id)

describe('the import reads bext and iXML', () => {
  withFfmpeg(
    'technical holds bext, ixml, start_time (time_reference over the rate) and the time_code it spells',
    async () => {
      const { id, asset } = await importWav('S12A_T3.wav', [bext(FIELDS), ixml(SCENE_TAKE)])
      expect(asset.status_asset).toBe(6)
      expect(asset.technical).toMatchObject({
        formate_name: 'wav',
        // 173,376,000 samples at 48 kHz: 3612 s after midnight, 01:00:12:00 at the iXML's 25 fps.
        start_time: '3612.000000',
        time_code: '01:00:12:00',
        timecode_source: 'file',
        bext: {
          description: FIELDS.description,
          originator: 'Sound Devices 888',
          originator_reference: 'USSDVABC123456789',
          origination_date: '2024-05-03',
          origination_time: '14:03:21',
          time_reference: 173_376_000,
        },
        ixml: { project: 'Harbour Lights', scene: '12A', take: '3', tape: 'DAY03', note: 'boom shadow & gull noise' },
      })
      const [log] = await logsOf(app.request, asset.path_file)
      expect(log!.warning).not.toHaveProperty('bwf')
      // Searchable by what the recorder wrote: the scene, the tape, the project, the note, the originator.
      for (const q of ['12A', 'DAY03', 'harbour lights', 'gull', 'sound devices', 'USSDVABC123456789'])
        expect([q, await found(q)]).toEqual([q, [id]])
      expect(await found('not the take note')).toEqual([])
    },
  )

  withFfmpeg('a file imported again without its iXML loses it, and the search its words', async () => {
    const { id, path } = await importWav('replaced.wav', [
      bext({ description: 'clapper loader' }),
      ixml('<SCENE>77Q</SCENE>'),
    ])
    expect(await found('77Q')).toEqual([id])
    writeFileSync(path, wave([fmt(), chunk('data', samples)]))
    const body = importBody(path, { name: 'replaced' }, {}, { type: 'audio' })
    expectImported(await app.post(IMPORT, body), body, 'asset_update_completed', 'audio')
    await app.runner.idle()
    const { technical } = await assetOf(app.request, id, 'audio')
    expect(technical.bext).toBeUndefined()
    expect(technical.ixml).toBeUndefined()
    expect(await found('77Q')).toEqual([])
    expect(await found('clapper')).toEqual([])
  })

  withFfmpeg('a time_code the request gives is kept; start_time still follows the file', async () => {
    const path = join(root, 'sound', 'given.wav')
    writeFileSync(path, wave([fmt(), bext({ time_reference: 48_000 * 60 }), chunk('data', samples)]))
    const body = importBody(
      path,
      { name: 'given' },
      { technical_details: { time_code: '10:00:00:00' } },
      { type: 'audio' },
    )
    const id = expectImported(await app.post(IMPORT, body), body, 'asset_creation_completed', 'audio')
    await app.runner.idle()
    const { technical } = await assetOf(app.request, id, 'audio')
    expect(technical).toMatchObject({ time_code: '10:00:00:00', timecode_source: 'request', start_time: '60.000000' })
  })

  withFfmpeg(
    'a damaged bext: imported all the same, with what could be read and a warning in its import log',
    async () => {
      const short = chunk('bext', bext(FIELDS).subarray(8, 8 + 288))
      const { asset } = await importWav('damaged.wav', [short, ixml('<SCENE>44B</SCENE>')])
      expect(asset.status_asset).toBe(6)
      expect(asset.technical.bext).toEqual({ description: FIELDS.description, originator: 'Sound Devices 888' })
      expect(asset.technical.ixml).toEqual({ scene: '44B' })
      expect(asset.technical.start_time).toBeUndefined()
      const [log] = await logsOf(app.request, asset.path_file)
      expect(log!.status).toBe('import_completed')
      expect(log!.warning.bwf).toBe('damaged.wav: the bext chunk is 288 bytes, shorter than the 602 of its fields.')
      expect(await found('44B')).toEqual([asset.id])
    },
  )
})
