// The client that asks GET /api/health one request after the other and keeps the longest time it
// waited for an answer, in a process of its own: the benchmark's own work (building and sending
// 0.9 MB bodies, its collector, reading the server's log) never delays a probe, so the figure is
// the server's. Started with the server's base URL, it first warms up (a fresh process's first
// requests wait for its own compiler and connection, 30-80 ms, which is not the server's doing),
// then prints "ready" and keeps the longest wait from there; when its stdin closes it prints
// {"longest": ms, "count": n} and exits.
// Usage (by bench/stall.ts): bun bench/prober.ts http://127.0.0.1:PORT
export {}

const base = process.argv[2]
if (!base) throw new Error('usage: bun bench/prober.ts BASE_URL')
const WARM_UP = 200
for (let i = 0; i < WARM_UP; i++) await (await fetch(`${base}/api/health`)).arrayBuffer()
console.log('ready')
let running = true
let longest = 0
let count = 0
const done = (async () => {
  while (running) {
    const t = performance.now()
    await (await fetch(`${base}/api/health`)).arrayBuffer()
    longest = Math.max(longest, performance.now() - t)
    count++
  }
})()
for await (const _ of Bun.stdin.stream()) {
  // nothing is sent: the end of the stream is the signal
}
running = false
await done
console.log(JSON.stringify({ longest, count }))
