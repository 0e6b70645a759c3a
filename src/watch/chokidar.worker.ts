// The watcher's thread (see watcher.ts, "chokidar in a thread of its own"): it runs chokidar and
// passes on what chokidar reports, in order, as messages. Chokidar handles each event of a burst
// synchronously (a drop of 20,000 files sends tens of thousands in a few seconds, delivered in
// batches of thousands per turn): here that work holds this thread, not the server's requests.
import type { Stats } from 'node:fs'
import { type FSWatcher, watch } from 'chokidar'
import { excluded } from './ingest.ts'
import { lowerThreadPriority } from '../storage/threads.ts'

/** Open: watch `real` (a folder, `base` is it with a final slash). Close: stop watcher `id`. */
export type ChokidarRequest =
  | { op: 'open'; id: number; real: string; base: string; polling: boolean; intervalMs: number }
  | { op: 'close'; id: number }
export type ChokidarReport =
  | { id: number; kind: 'all'; name: string; path: string }
  | { id: number; kind: 'raw'; event: string; name: string | null; watchedPath?: string }
  | { id: number; kind: 'error'; message: string; code?: string }
  | { id: number; kind: 'ready' }
  | { id: number; kind: 'closed' }

declare const self: Worker

// Chokidar's bursts can wait a little for a core; the server's requests should not (storage/threads.ts).
lowerThreadPriority()

const watchers = new Map<number, FSWatcher>()
const post = (report: ChokidarReport) => self.postMessage(report)

self.onmessage = (event: MessageEvent<ChokidarRequest>) => {
  const request = event.data
  if (request.op === 'close') {
    const w = watchers.get(request.id)
    watchers.delete(request.id)
    if (!w) return post({ id: request.id, kind: 'closed' })
    // close() removes every listener; an error from work in flight would otherwise be thrown.
    w.on('error', () => {})
    void w.close().finally(() => post({ id: request.id, kind: 'closed' }))
    return
  }
  const { id, real, base, polling, intervalMs } = request
  const w = watch(real, {
    persistent: false, // the watcher never keeps the process alive
    ignoreInitial: true, // the start scan is the truth, not the initial walk
    followSymlinks: false,
    // v5 asks about the root too: it is never excluded, or nothing at all would be watched.
    // Anything but a folder is left out (watcher.ts): its folder's watch reports it.
    ignored: (path: string, stats?: Stats) =>
      path !== real &&
      path.startsWith(base) &&
      ((stats !== undefined && !stats.isDirectory()) || excluded(path.slice(base.length))),
    atomic: false, // report unlink then add as they happen (moves are paired by the caller)
    awaitWriteFinish: false, // the settle gate is the caller's
    usePolling: polling,
    interval: intervalMs,
    binaryInterval: intervalMs,
  })
  watchers.set(id, w)
  w.on('all', (name, path) => post({ id, kind: 'all', name, path }))
  w.on('raw', (eventName: string, name: string | null, details: unknown) => {
    const watchedPath = (details as { watchedPath?: string } | undefined)?.watchedPath
    post({
      id,
      kind: 'raw',
      event: eventName,
      name: typeof name === 'string' ? name : null,
      ...(watchedPath === undefined ? {} : { watchedPath }),
    })
  })
  w.on('error', (error: unknown) => {
    const e = error instanceof Error ? error : new Error(String(error))
    const code = (e as NodeJS.ErrnoException).code
    post({ id, kind: 'error', message: e.message, ...(code === undefined ? {} : { code }) })
  })
  w.once('ready', () => post({ id, kind: 'ready' }))
}
