// The live events (GET /api/events/, docs/api.md "Events"): one EventSource for the whole page,
// open while someone is signed in (the session cookie authenticates it; EventSource sends no
// other header). Views read the signals below, or subscribe to the events of a kind with useLive().
import { signal } from '@preact/signals'
import { useEffect, useRef } from 'preact/hooks'

export type TaskEvent = {
  id: number
  kind: string
  state: 'queued' | 'running' | 'done' | 'failed'
  target: Record<string, number>
  /** An import's move, probe or proxy; a proxy task's proxy; '' for work of one step. */
  step: string
  /** How far the step is, 0 to 100, when the work can tell. */
  percent: number | null
  bytes_done: number
  bytes_total: number
  files_done: number
  files_total: number
  error: string
}
export type AssetEvent = { type: 'videoasset' | 'audioasset' | 'imageasset'; id: number; action: string }
export type ProjectEvent = { id: number; action: string }
export type ImportLogEvent = { id: number; asset_path: string; status: string }
export type LiveEvents = { task: TaskEvent; asset: AssetEvent; project: ProjectEvent; importlog: ImportLogEvent }
export type LiveKind = keyof LiveEvents

/** off (signed out), connecting, open, or retrying (the stream broke; the browser or we reconnect). */
export const status = signal<'off' | 'connecting' | 'open' | 'retrying'>('off')
/** The newest state of each task an event was seen for since the page opened (the last TASKS_KEPT). */
export const tasks = signal<ReadonlyMap<number, TaskEvent>>(new Map())
/**
 * Counts the times events may have been missed (a `reset` from the server, or a new stream after
 * one that failed): a view that shows records reloads them when it changes (useList does).
 */
export const resets = signal(0)

const TASKS_KEPT = 1000
/** Wait before opening a new stream after the server refused or ended one for good. */
const RETRY_MS = 5000
const KINDS: LiveKind[] = ['task', 'asset', 'project', 'importlog']

type Listener = (data: never) => void
const listeners = new Map<LiveKind, Set<Listener>>()
let source: EventSource | undefined
let retry: ReturnType<typeof setTimeout> | undefined

/** Calls `handler` with each event of `kind` until the returned function is called. */
export function subscribe<K extends LiveKind>(kind: K, handler: (data: LiveEvents[K]) => void): () => void {
  let set = listeners.get(kind)
  if (!set) listeners.set(kind, (set = new Set()))
  set.add(handler as Listener)
  return () => set.delete(handler as Listener)
}

/** subscribe() for a component's lifetime; the newest `handler` is called. */
export function useLive<K extends LiveKind>(kind: K, handler: (data: LiveEvents[K]) => void) {
  const latest = useRef(handler)
  latest.current = handler
  useEffect(() => subscribe(kind, (data) => latest.current(data)), [kind])
}

/** Opens the stream (shell.tsx, once signed in). */
export function startLive() {
  if (source) return
  clearTimeout(retry)
  status.value = 'connecting'
  const es = (source = new EventSource('/api/events/'))
  es.onopen = () => {
    status.value = 'open'
  }
  es.onerror = () => {
    if (source !== es) return
    // CONNECTING: the browser reconnects by itself, with Last-Event-ID. CLOSED: it gave up (the
    // server answered an error): a new stream later, which cannot resume, hence a reset.
    status.value = 'retrying'
    if (es.readyState === EventSource.CLOSED) {
      source = undefined
      retry = setTimeout(() => {
        startLive()
        resets.value++
      }, RETRY_MS)
    }
  }
  for (const kind of KINDS) es.addEventListener(kind, (event) => deliver(kind, (event as MessageEvent<string>).data))
  es.addEventListener('reset', () => {
    resets.value++
  })
}

/** Closes the stream (sign-out). */
export function stopLive() {
  clearTimeout(retry)
  source?.close()
  source = undefined
  status.value = 'off'
}

function deliver(kind: LiveKind, text: string) {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    return
  }
  if (kind === 'task') {
    const task = data as TaskEvent
    const next = new Map(tasks.value)
    next.delete(task.id)
    next.set(task.id, task)
    if (next.size > TASKS_KEPT) next.delete(next.keys().next().value!)
    tasks.value = next
  }
  for (const handler of listeners.get(kind) ?? []) handler(data as never)
}
