// The live event bus behind GET /api/events/ (Server-Sent Events; docs/api.md, "Events"). It knows
// no feature: events come in with a type, their data and the productions whose readers may see
// them (modules/events says which), and go out as SSE text to the streams whose filter admits them.
//
// Every event is serialized once, to the bytes every stream sends, and kept in a ring of recent
// events. A stream holds no copy and no queue of its own: only the id of the next event it is to
// send (its cursor), read from the ring as fast as its client takes them. A client that falls so
// far behind that its next event has left the ring is dropped, so memory is the ring's whatever the
// number or speed of the clients; the same ring serves Last-Event-ID resumes.
import type { Log } from '../util/log.ts'

/** The productions whose readers may see an event; none: superusers only. */
export type Audience = readonly number[]

export type BusOptions = {
  log: Log
  /** Events kept for resumes and slow readers (RING_EVENTS)... */
  ringEvents?: number
  /** ...and bytes (RING_BYTES), whichever is reached first. */
  ringBytes?: number
  /** How often a comment line is sent to every stream (KEEP_ALIVE_MS). */
  keepAliveMs?: number
  now?: () => number
}

/** Why a stream ended: the server stopped, the client fell behind, the events module ended it (a revoked key), or the client went away. */
export type EndReason = 'closed' | 'dropped' | 'ended' | 'cancelled'

export type SubscribeOptions = {
  /** The Last-Event-ID header as sent; null: none (live events only). */
  lastEventId: string | null
  /** Whether the stream's client may see an event of this audience; asked as each event is sent. */
  sees: (audience: Audience) => boolean
  /** What the log says about the stream when it is dropped (its user). */
  fields?: Record<string, unknown>
  /** Told once when the stream ends, whatever the reason. */
  onEnd?: (reason: EndReason) => void
}

export type Subscription = {
  stream: ReadableStream<Uint8Array>
  /** Ends the stream after what it was given (the events module: a revoked key). */
  end(): void
}

/** The last 10,000 events (about 2 MB of typical events) are kept... */
export const RING_EVENTS = 10_000
/** ...but never more than 8 MiB of them (long paths in import logs). */
export const RING_BYTES = 8 * 1024 * 1024
/**
 * Bytes a stream hands Bun at a time (the stream's queue; references to the ring's bytes, never
 * copies): a reader that keeps up takes a burst in a few reads rather than one read per event.
 */
const CHUNK_BYTES = 64 * 1024
/** A comment line this often keeps proxies (nginx's proxy_read_timeout is 60 s) from closing a quiet stream. */
export const KEEP_ALIVE_MS = 15_000
/**
 * Events are kept while a stream is open and this long after the last one ended (a client
 * reconnecting finds what it missed). Past that nothing is built or kept, and the next stream
 * finds the ring started over: ids held before are not held (reset).
 */
const IDLE_KEEP_MS = 5 * 60_000

const encoder = new TextEncoder()
const KEEP_ALIVE = encoder.encode(': keep-alive\n\n')
const DROPPED = encoder.encode(
  `event: dropped\ndata: ${JSON.stringify({ reason: 'This stream fell too far behind the events and was ended; reconnect (with Last-Event-ID) to get a reset and reload.' })}\n\n`,
)
/** What a Last-Event-ID may be: decimal digits that fit a safe integer. */
const ID_PATTERN = /^\d{1,16}$/

type Held = { id: number; bytes: Uint8Array; audience: Audience }

type Stream = {
  controller: ReadableStreamDefaultController<Uint8Array>
  /** The id of the next event of the ring this stream is to consider. */
  cursor: number
  /** A chunk of this stream's own, sent before the ring's next (its opening, a keep-alive). */
  pending: Uint8Array[]
  open: boolean
  options: SubscribeOptions
}

export function createBus({
  log,
  ringEvents = RING_EVENTS,
  ringBytes = RING_BYTES,
  keepAliveMs = KEEP_ALIVE_MS,
  now = Date.now,
}: BusOptions) {
  // Ids go on from the clock at start, in microseconds: a later process starts above every id an
  // earlier one gave (unless it sent more than 1,000 events a millisecond on average, or the clock
  // went back), so an id a client kept from before a restart is never taken for one of this run.
  let last = now() * 1000
  const ring: (Held | undefined)[] = new Array(ringEvents)
  /** Events held, the newest being `last`; their bytes. */
  let count = 0
  let bytes = 0
  const streams = new Set<Stream>()
  let closed = false
  /** When the last stream ended (events are kept IDLE_KEEP_MS after). */
  let lastLeft = -Infinity
  /** Some event was not kept (no stream open for a while): the ring must start over. */
  let gap = false
  let keepAlive: Timer | undefined

  const held = (id: number) => ring[id % ringEvents]!
  const firstHeld = () => last - count + 1

  function evictOldest() {
    const oldest = held(firstHeld())
    ring[oldest.id % ringEvents] = undefined
    bytes -= oldest.bytes.length
    count--
  }

  /** Sends what the stream may take now: its own chunks, then the ring's events from its cursor. */
  function drain(s: Stream) {
    const c = s.controller
    while (s.open && (c.desiredSize ?? 0) > 0) {
      if (s.pending.length) {
        c.enqueue(s.pending.shift()!)
        continue
      }
      if (s.cursor > last) return
      if (s.cursor < firstHeld()) return drop(s)
      const event = held(s.cursor++)
      if (s.options.sees(event.audience)) c.enqueue(event.bytes)
    }
  }

  function finish(s: Stream, reason: EndReason, lastChunk?: Uint8Array) {
    if (!s.open) return
    s.open = false
    streams.delete(s)
    if (!streams.size) {
      lastLeft = now()
      clearInterval(keepAlive)
      keepAlive = undefined
    }
    if (reason !== 'cancelled') {
      try {
        if (lastChunk) s.controller.enqueue(lastChunk)
        s.controller.close()
      } catch {
        // Already closed by its reader's side.
      }
    }
    try {
      s.options.onEnd?.(reason)
    } catch (error) {
      log.error('event stream end handler failed', { error: (error as Error).message })
    }
  }

  function drop(s: Stream) {
    log.warn('event stream dropped: its client fell behind', { ...s.options.fields, behind: last - s.cursor + 1 })
    finish(s, 'dropped', DROPPED)
  }

  /** The bytes of one event; data is sent as JSON on one line. */
  const frame = (id: number, type: string, data: unknown) =>
    encoder.encode(`id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`)

  /**
   * Whether events are being kept (a stream is open, or was lately): producers build none when
   * not, and the ring then starts over with the next stream.
   */
  function wanted(): boolean {
    if (closed) return false
    if (streams.size || now() - lastLeft < IDLE_KEEP_MS) return true
    gap = true
    return false
  }

  return {
    wanted,

    /** Sends an event to every stream that may see it, and keeps it in the ring; its id. */
    publish(type: string, data: unknown, audience: Audience): number | undefined {
      if (!wanted()) return undefined
      if (count === ringEvents) evictOldest()
      const id = ++last
      const event: Held = { id, bytes: frame(id, type, data), audience }
      ring[id % ringEvents] = event
      count++
      bytes += event.bytes.length
      while (bytes > ringBytes && count > 1) evictOldest()
      for (const s of streams) {
        // Behind and blocked: its next event left the ring, it cannot be told what it missed.
        if (s.cursor < firstHeld()) drop(s)
        else drain(s)
      }
      return id
    },

    /**
     * A stream of the events from now on. It opens with the client's position: `id: N` and no
     * event (N the newest id; with a Last-Event-ID the ring still holds, that id, followed by the
     * events after it that the filter admits), or, for any other Last-Event-ID (older, of an
     * earlier run, not an id), a `reset` event of id N. A client that reconnects before any event
     * came resumes from there.
     */
    subscribe(options: SubscribeOptions): Subscription {
      if (gap && !streams.size) {
        // Events went unkept: nothing held before is a place to resume from. One id is skipped, so
        // that the newest id a client holds is not taken for the ring's (empty) position.
        ring.fill(undefined)
        count = 0
        bytes = 0
        last++
        gap = false
      }
      const given = options.lastEventId?.trim()
      const from = given !== undefined && ID_PATTERN.test(given) ? Number(given) : undefined
      const resumes = from !== undefined && from >= firstHeld() - 1 && from <= last
      // Bun sends the headers with the first chunk: every stream has one at once.
      const opening =
        given === undefined || resumes
          ? encoder.encode(`id: ${resumes ? from : last}\n\n`)
          : frame(last, 'reset', {
              reason:
                'The Last-Event-ID is not held (too old, from before a restart, or not an id of this service): reload what you show.',
            })
      let s!: Stream
      const stream = new ReadableStream<Uint8Array>(
        {
          start(controller) {
            s = { controller, cursor: resumes ? from + 1 : last + 1, pending: [opening], open: !closed, options }
            if (closed) {
              controller.enqueue(opening)
              return controller.close()
            }
            streams.add(s)
            keepAlive ??= setInterval(() => {
              for (const t of streams) {
                // Only to a stream that is idle: one with events to send is not quiet.
                if (!t.pending.length && t.cursor > last) t.pending.push(KEEP_ALIVE)
                drain(t)
              }
            }, keepAliveMs)
            keepAlive.unref?.()
          },
          pull: () => drain(s),
          cancel: () => finish(s, 'cancelled'),
        },
        { highWaterMark: CHUNK_BYTES, size: (chunk) => chunk?.byteLength ?? 0 },
      )
      return { stream, end: () => finish(s, 'ended') }
    },

    /** Ends every stream cleanly (its client sees the end of the body) and takes no new ones: the server is stopping. */
    close() {
      closed = true
      for (const s of [...streams]) finish(s, 'closed')
      clearInterval(keepAlive)
      keepAlive = undefined
    },

    /** Open streams (tests, health). */
    get streams() {
      return streams.size
    },

    /** The newest id. */
    get last() {
      return last
    },
  }
}

export type Bus = ReturnType<typeof createBus>
