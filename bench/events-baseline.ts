// The event stream baseline: raw Bun.serve fanning one SSE message out to every open stream of
// /events when POST /poke?id=N arrives (the same bytes GET /api/events/ sends for an asset
// update), after writing one row with bun:sqlite as the PATCH that makes Reelhouse's event does.
// No auth, no filter, no ring, no history.
// Usage: bun bench/events-baseline.ts DB_FILE   (prints "listening PORT" on stdout)
import { Database } from 'bun:sqlite'

const file = process.argv[2]
if (!file) throw new Error('usage: bun bench/events-baseline.ts DB_FILE')
const db = new Database(file, { create: true, strict: true })
db.run('PRAGMA journal_mode = WAL')
db.run('PRAGMA synchronous = NORMAL')
db.run('CREATE TABLE IF NOT EXISTS probes (id INTEGER PRIMARY KEY, description TEXT)')
const write = db.prepare('INSERT OR REPLACE INTO probes (id, description) VALUES (?, ?)')
const streams = new Set<ReadableStreamDefaultController<Uint8Array>>()
const encoder = new TextEncoder()
let next = 1

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  idleTimeout: 0,
  fetch(request) {
    const url = new URL(request.url)
    if (url.pathname === '/events') {
      let self: ReadableStreamDefaultController<Uint8Array>
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          self = controller
          streams.add(controller)
          controller.enqueue(encoder.encode(': open\n\n'))
        },
        cancel() {
          streams.delete(self)
        },
      })
      return new Response(stream, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } })
    }
    const id = Number(url.searchParams.get('id'))
    write.run(id, `probe ${id}`)
    const bytes = encoder.encode(
      `id: ${next++}\nevent: asset\ndata: {"type":"videoasset","id":${id},"action":"updated"}\n\n`,
    )
    for (const s of streams) s.enqueue(bytes)
    return new Response(null, { status: 204 })
  },
})
console.log(`listening ${server.port}`)
