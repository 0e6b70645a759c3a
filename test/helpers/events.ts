// Reading GET /api/events/ as a client does: fetch and a reader, the text parsed into SSE blocks
// (id, event, data, comments) as it comes, with bounded waits for what a test expects to see.
import { waitFor } from './wait.ts'

export type SseBlock = { id?: string; event?: string; data?: any; comments: string[] }

/** The blocks of SSE text (each ended by a blank line); a partial last block stays in `rest`. */
export function parseSse(text: string): { blocks: SseBlock[]; rest: string } {
  const parts = text.split('\n\n')
  const rest = parts.pop()!
  const blocks = parts.map((part) => {
    const block: SseBlock = { comments: [] }
    for (const line of part.split('\n')) {
      if (line.startsWith(':')) block.comments.push(line.slice(1).trim())
      else if (line.startsWith('id: ')) block.id = line.slice(4)
      else if (line.startsWith('event: ')) block.event = line.slice(7)
      else if (line.startsWith('data: ')) block.data = JSON.parse(line.slice(6))
    }
    return block
  })
  return { blocks, rest }
}

export type EventStream = Awaited<ReturnType<typeof openEvents>>

/**
 * Opens the stream at `base` (http://host:port) with `headers` (the key's Authorization, a
 * Last-Event-ID) and reads it in the background.
 */
export async function openEvents(base: string, headers: Record<string, string>) {
  const controller = new AbortController()
  const response = await fetch(`${base}/api/events/`, { headers, signal: controller.signal })
  if (response.status !== 200) throw new Error(`GET /api/events/: ${response.status} ${await response.text()}`)
  const decoder = new TextDecoder()
  let text = ''
  let ended = false
  let error: unknown
  const reader = response.body!.getReader()
  const reading = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        text += decoder.decode(value, { stream: true })
      }
      ended = true
    } catch (e) {
      error = e
    }
  })()
  const stream = {
    response,
    /** Everything read so far. */
    get text() {
      return text
    },
    /** The complete blocks read so far. */
    get blocks() {
      return parseSse(text).blocks
    },
    /** The events read so far (blocks with an event name). */
    get events() {
      return parseSse(text).blocks.filter((b) => b.event !== undefined)
    },
    /** True once the body ended cleanly; `error` says why it broke instead. */
    get ended() {
      return ended
    },
    get error() {
      return error
    },
    /** Waits (bounded) until `test` holds for the events read, and answers them. */
    async until(what: string, test: (events: SseBlock[]) => boolean, ms = 30_000) {
      await waitFor(() => test(stream.events) || ended || error !== undefined, what, { ms, everyMs: 5 })
      if (!test(stream.events)) throw new Error(`the stream ended before ${what}: ${error ?? 'ended'}\n${text}`)
      return stream.events
    },
    /** Waits (bounded) for the end of the body. */
    async end(what = 'the end of the stream', ms = 30_000) {
      await waitFor(() => ended || error !== undefined, what, { ms, everyMs: 5 })
      return reading
    },
    /** The client goes away. */
    close() {
      controller.abort()
      return reading
    },
  }
  return stream
}

/** The events of one type whose data matches `fields`. */
export const matching = (events: SseBlock[], event: string, fields: Record<string, unknown>) =>
  events.filter((e) => e.event === event && Object.entries(fields).every(([k, v]) => Bun.deepEquals(e.data?.[k], v)))
