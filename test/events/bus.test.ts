// The event bus on its own (src/events/bus.ts): ids, the ring, Last-Event-ID resumes and resets,
// the filter, keep-alive comments, dropping a reader that fell behind, and closing. Streams are
// read in-process here; test/events/stream.test.ts reads them over HTTP.
import { expect, test } from 'bun:test'
import { type Bus, createBus } from '../../src/events/bus.ts'
import { silentLog } from '../../src/util/log.ts'
import { type SseBlock, parseSse } from '../helpers/events.ts'
import { waitFor } from '../helpers/wait.ts'

/** A reader of a bus stream that keeps what it read. */
function read(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let ended = false
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return void (ended = true)
      text += decoder.decode(value, { stream: true })
    }
  })()
  return {
    get text() {
      return text
    },
    get blocks(): SseBlock[] {
      return parseSse(text).blocks
    },
    get events() {
      return parseSse(text).blocks.filter((b) => b.event)
    },
    get ended() {
      return ended
    },
    cancel: () => reader.cancel(),
  }
}

const everyone = () => true
const open = (bus: Bus, lastEventId: string | null = null, sees: (a: readonly number[]) => boolean = everyone) =>
  read(bus.subscribe({ lastEventId, sees }).stream)

test('each event is sent once to each stream, with increasing ids; the stream opens with its position', async () => {
  const bus = createBus({ log: silentLog })
  const start = bus.last
  const a = open(bus)
  const b = open(bus)
  bus.publish('task', { id: 1 }, [])
  bus.publish('asset', { id: 2 }, [1])
  await waitFor(() => a.events.length === 2 && b.events.length === 2, 'two events each')
  expect(a.text).toBe(b.text)
  expect(a.blocks).toEqual([
    { id: String(start), comments: [] },
    { id: String(start + 1), event: 'task', data: { id: 1 }, comments: [] },
    { id: String(start + 2), event: 'asset', data: { id: 2 }, comments: [] },
  ])
  bus.close()
})

test('ids start above any an earlier process gave (the clock in microseconds), so an old id is never taken for a new one', () => {
  let clock = 1_000
  const earlier = createBus({ log: silentLog, now: () => clock })
  for (let i = 0; i < 500; i++) earlier.publish('task', {}, []) // kept only while wanted: open a stream first
  open(earlier)
  for (let i = 0; i < 500; i++) earlier.publish('task', {}, [])
  clock += 1
  const later = createBus({ log: silentLog, now: () => clock })
  expect(later.last).toBeGreaterThan(earlier.last)
  earlier.close()
  later.close()
})

test('Last-Event-ID resumes with exactly the events after it, then live; the filter applies to the replay too', async () => {
  const bus = createBus({ log: silentLog })
  const witness = open(bus)
  for (let i = 1; i <= 5; i++) bus.publish('asset', { n: i }, [i % 2])
  await waitFor(() => witness.events.length === 5, 'five events')
  const third = witness.events[2]!.id!
  const resumed = open(bus, third)
  const odd = open(bus, third, (audience) => audience.includes(1))
  bus.publish('asset', { n: 6 }, [0])
  await waitFor(
    () => resumed.events.length === 3 && witness.events.length === 6 && odd.blocks.length >= 2,
    'the replay and the live event',
  )
  expect(resumed.events).toEqual(witness.events.slice(3))
  expect(resumed.blocks[0]).toEqual({ id: third, comments: [] })
  expect(odd.events.map((e) => e.data.n)).toEqual([5])
  bus.close()
})

test('an id the ring no longer holds, from another run, or not an id at all: first a reset event, then live', async () => {
  const bus = createBus({ log: silentLog, ringEvents: 3 })
  const witness = open(bus)
  for (let i = 1; i <= 5; i++) bus.publish('task', { n: i }, [])
  await waitFor(() => witness.events.length === 5, 'five events')
  const ids = witness.events.map((e) => Number(e.id))
  // Held: the last three, and the one before them (nothing missed after it).
  const held = open(bus, String(ids[1]))
  await waitFor(() => held.events.length === 3, 'the replay of the last three')
  expect(held.blocks[0]).toEqual({ id: String(ids[1]), comments: [] })
  for (const stale of [
    String(ids[0]),
    String(ids[4]! + 1),
    '0',
    '1767225600000000',
    'abc',
    '',
    '-1',
    '1e6',
    '99999999999999999999',
  ]) {
    const s = open(bus, stale)
    await waitFor(() => s.blocks.length >= 1, `the first block for ${stale}`)
    expect({ stale, first: s.blocks[0] }).toEqual({
      stale,
      first: { id: String(ids[4]), event: 'reset', data: { reason: expect.stringContaining('reload') }, comments: [] },
    })
  }
  bus.close()
})

test('a keep-alive comment reaches a quiet stream', async () => {
  const bus = createBus({ log: silentLog, keepAliveMs: 20 })
  const s = open(bus)
  await waitFor(() => s.blocks.some((b) => b.comments.includes('keep-alive')), 'a keep-alive comment')
  bus.close()
})

test('a stream that is not read falls behind and is dropped once its next event leaves the ring; the others go on', async () => {
  const lines: string[] = []
  const bus = createBus({
    log: { info() {}, error() {}, warn: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`) },
    ringEvents: 50,
  })
  let ended: string | undefined
  const stalled = bus.subscribe({
    lastEventId: null,
    sees: everyone,
    fields: { user: 'slow' },
    onEnd: (why) => (ended = why),
  })
  const reader = open(bus)
  // 2 KB each: the stalled stream's queue (64 KiB) holds about 32, the ring 50 more.
  const text = 'x'.repeat(2000)
  for (let i = 0; i < 120; i++) {
    bus.publish('importlog', { n: i, text }, [])
    await waitFor(() => reader.events.length === i + 1, `event ${i} for the reader`)
  }
  expect(ended).toBe('dropped')
  expect(bus.streams).toBe(1)
  expect(lines).toEqual([
    expect.stringMatching(/^event stream dropped: its client fell behind \{"user":"slow","behind":\d+\}$/),
  ])
  // What the stalled client finds when it reads at last: what it was sent, then dropped, then the end.
  const late = read(stalled.stream)
  await waitFor(() => late.ended, 'the end of the dropped stream')
  expect(late.blocks.at(-1)).toEqual({ event: 'dropped', data: { reason: expect.any(String) }, comments: [] })
  bus.close()
})

test('the ring is bounded by bytes too', async () => {
  const bus = createBus({ log: silentLog, ringBytes: 10_000 })
  const s = open(bus)
  const big = 'x'.repeat(1000)
  for (let i = 0; i < 50; i++) bus.publish('importlog', { asset_path: big }, [])
  await waitFor(() => s.events.length === 50, 'fifty events')
  // About nine fit: an id of the first ones is not held any more.
  const first = open(bus, s.events[0]!.id!)
  await waitFor(() => first.blocks.length > 0, 'the first block')
  expect(first.blocks[0]!.event).toBe('reset')
  const recent = open(bus, s.events[45]!.id!)
  await waitFor(() => recent.events.length === 4, 'the replay of the last four')
  bus.close()
})

test('close ends every stream cleanly and refuses none: a stream opened after it ends at once', async () => {
  const bus = createBus({ log: silentLog })
  const a = open(bus)
  bus.publish('task', {}, [])
  bus.close()
  await waitFor(() => a.ended, 'the end of the stream')
  expect(a.events).toHaveLength(1)
  const late = open(bus)
  await waitFor(() => late.ended, 'the end of a late stream')
  expect(bus.publish('task', {}, [])).toBeUndefined()
})

test('nothing is built or kept while no stream is open; the next stream then finds the ring started over', async () => {
  let clock = 1_000_000
  const bus = createBus({ log: silentLog, now: () => clock })
  expect(bus.wanted()).toBe(false)
  const a = open(bus)
  expect(bus.wanted()).toBe(true)
  bus.publish('task', { n: 1 }, [])
  await waitFor(() => a.events.length === 1, 'one event')
  const held = a.events[0]!.id!
  await a.cancel()
  await waitFor(() => bus.streams === 0, 'the stream gone')
  // Kept a while after the last stream ends (a client reconnecting finds what it missed)...
  expect(bus.publish('task', { n: 2 }, [])).toBeNumber()
  const back = open(bus, held)
  await waitFor(() => back.events.length === 1, 'the missed event')
  await back.cancel()
  await waitFor(() => bus.streams === 0, 'the stream gone')
  // ...but not for ever: then an id from before is not held.
  clock += 10 * 60_000
  expect(bus.publish('task', { n: 3 }, [])).toBeUndefined()
  const after = open(bus, String(bus.last))
  await waitFor(() => after.blocks.length > 0, 'the first block')
  expect(after.blocks[0]!.event).toBe('reset')
  bus.close()
})
