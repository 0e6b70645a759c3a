// N clients of an SSE stream, in a process of their own (bench/events.ts starts it with
// BUN_CONFIG_MAX_HTTP_REQUESTS raised: Bun's fetch holds at most 256 requests open by default).
// Prints "ready" once every stream has answered; then records, for each asset event, the time it
// reached each client (epoch ms, performance.timeOrigin + now(): comparable across processes),
// and counts every event by type. When its stdin closes it prints one JSON line and exits.
// Usage: bun bench/events-subscribers.ts URL KEY|- N
export {}

const [url, key, count] = process.argv.slice(2)
if (!url || !key || !count) throw new Error('usage: bun bench/events-subscribers.ts URL KEY|- N')
const n = Number(count)
const now = () => performance.timeOrigin + performance.now()
/** Asset id -> the times its events reached the clients. */
const received = new Map<number, number[]>()
const types: Record<string, number> = {}
let ended = 0
const controllers: AbortController[] = []

async function client(): Promise<void> {
  const controller = new AbortController()
  controllers.push(controller)
  const r = await fetch(url!, {
    headers: key === '-' ? {} : { authorization: `Token ${key}` },
    signal: controller.signal,
  })
  if (r.status !== 200) throw new Error(`stream: ${r.status} ${await r.text()}`)
  const reader = r.body!.getReader()
  const decoder = new TextDecoder()
  let rest = ''
  // Connected: the headers came. Reading goes on in the background.
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        const at = now()
        rest += decoder.decode(value, { stream: true })
        let end: number
        while ((end = rest.indexOf('\n\n')) >= 0) {
          const message = rest.slice(0, end)
          rest = rest.slice(end + 2)
          const type = /^event: (.*)$/m.exec(message)?.[1]
          if (!type) continue
          types[type] = (types[type] ?? 0) + 1
          if (type !== 'asset') continue
          const data = JSON.parse(/^data: (.*)$/m.exec(message)![1]!) as { id: number; action: string }
          if (data.action !== 'updated') continue
          let list = received.get(data.id)
          if (!list) received.set(data.id, (list = []))
          list.push(at)
        }
      }
    } catch {
      // Aborted at the end.
    }
    ended += 1
  })()
}

await Promise.all(Array.from({ length: n }, () => client()))
console.log('ready')
for await (const _ of Bun.stdin.stream()) {
  // Until the benchmark closes stdin.
}
const result = { received: Object.fromEntries(received), types, ended }
for (const c of controllers) c.abort()
console.log(JSON.stringify(result))
process.exit(0)
