// A task's progress as the page shows it (the tasks view, a project's copy and delete): a
// <progress> bar, what is done of what, the throughput and the time left. The throughput is
// worked out here from successive task events (the API sends counts, not rates): every event of a
// task since the page opened is sampled, and the rate is taken over the last RATE_WINDOW_MS. Work
// of several steps (an import: move, probe, proxy) is measured by its counts while it moves the
// file, then by the step's percent (ffmpeg's position in the clip), each step's bar from empty.
import type { ComponentChildren } from 'preact'
import { formatBytes } from './format.ts'
import { type TaskEvent, subscribe } from './live.ts'
import './progress.css'

/**
 * A task as GET /api/tasks/ answers it; the live events carry the same fields but the dates. Step
 * and percent are optional: a task a request answered (`{id, state, url}`) is shown before them.
 */
export type Task = Omit<TaskEvent, 'step' | 'percent'> & {
  step?: string
  percent?: number | null
  date_add?: string
  date_start?: string | null
  date_end?: string | null
}

type Sample = { at: number; bytes: number; files: number; step: string; percent: number }
/** Samples of each task's counts, newest last, as events arrived (performance.now()). */
const samples = new Map<number, Sample[]>()
const RATE_WINDOW_MS = 10_000
const SAMPLES_KEPT = 40
const TASKS_SAMPLED = 200

subscribe('task', (task) => {
  let list = samples.get(task.id)
  if (!list) {
    if (samples.size >= TASKS_SAMPLED) samples.delete(samples.keys().next().value!)
    samples.set(task.id, (list = []))
  }
  // A task requeued after a restart starts over, and a new step's percent does: old samples
  // would make a negative rate.
  const last = list.at(-1)
  const percent = task.percent ?? 0
  if (
    last &&
    (task.bytes_done < last.bytes || task.files_done < last.files || task.step !== last.step || percent < last.percent)
  )
    list.length = 0
  list.push({ at: performance.now(), bytes: task.bytes_done, files: task.files_done, step: task.step, percent })
  if (list.length > SAMPLES_KEPT) list.shift()
})

export type Rate = { bytesPerSecond: number; filesPerSecond: number; percentPerSecond: number }

/** The task's throughput over its recent events; undefined until two events a moment apart. */
export function rateOf(id: number): Rate | undefined {
  const list = samples.get(id)
  if (!list || list.length < 2) return undefined
  const last = list.at(-1)!
  const first = list.find((s) => last.at - s.at <= RATE_WINDOW_MS)!
  const seconds = (last.at - first.at) / 1000
  if (seconds < 0.2) return undefined
  return {
    bytesPerSecond: (last.bytes - first.bytes) / seconds,
    filesPerSecond: (last.files - first.files) / seconds,
    percentPerSecond: (last.percent - first.percent) / seconds,
  }
}

const STATE_RANK: Record<string, number> = { queued: 0, running: 1, done: 2, failed: 2 }

/**
 * The newer of a task as a list answered it and as its last event showed it. Neither carries a
 * time of its own: a later state wins, and within a state the one further along.
 */
export function newer(a: Task | undefined, b: Task | undefined): Task | undefined {
  if (!a || !b) return a ?? b
  const rank = (STATE_RANK[b.state] ?? 0) - (STATE_RANK[a.state] ?? 0)
  if (rank) return rank > 0 ? { ...a, ...b } : a
  return b.bytes_done + b.files_done >= a.bytes_done + a.files_done ? { ...a, ...b } : a
}

/** 75 → "1 min 15 s". */
export function formatDuration(seconds: number): string {
  const s = Math.max(1, Math.round(seconds))
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ''}`
  const h = Math.floor(m / 60)
  return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`

/** Steps whose progress is their percent (the counts are the move's, done by then). */
const byPercent = (task: Task) => task.state === 'running' && !!task.step && task.step !== 'move'
const STEP_NAMES: Record<string, string> = {
  move: 'moving the file',
  probe: 'reading the clip',
  proxy: 'making the proxy',
}

/**
 * What the bar measures: bytes when the task counts them, else files; a later step of an import,
 * its percent (none while the step cannot tell); none before the totals are known.
 */
function measure(task: Task): { value: number; max: number } | undefined {
  const ended = task.state === 'done'
  if (byPercent(task)) return typeof task.percent === 'number' ? { value: task.percent, max: 100 } : undefined
  if (task.bytes_total > 0)
    return { value: ended ? task.bytes_total : Math.min(task.bytes_done, task.bytes_total), max: task.bytes_total }
  if (task.files_total > 0)
    return { value: ended ? task.files_total : Math.min(task.files_done, task.files_total), max: task.files_total }
  if (ended) return { value: 1, max: 1 }
  if (typeof task.percent === 'number') return { value: task.percent, max: 100 }
  return undefined
}

/** The line under a bar: what is done of what, the rate and the time left (while running). */
export function progressText(task: Task, rate = rateOf(task.id)): string {
  const parts: string[] = []
  if (task.state === 'running' && task.step) parts.push(STEP_NAMES[task.step] ?? task.step)
  if (byPercent(task)) {
    if (typeof task.percent === 'number') parts.push(`${Math.floor(task.percent)}%`)
    const left =
      rate && rate.percentPerSecond > 0 && typeof task.percent === 'number'
        ? (100 - task.percent) / rate.percentPerSecond
        : undefined
    if (left !== undefined && left > 0) parts.push(`about ${formatDuration(left)} left`)
    return parts.join(' · ')
  }
  if (task.files_total > 0)
    parts.push(`${task.files_done.toLocaleString('en')} of ${plural(task.files_total, 'file', 'files')}`)
  if (task.bytes_total > 0) parts.push(`${formatBytes(task.bytes_done)} of ${formatBytes(task.bytes_total)}`)
  if (task.state === 'running' && rate) {
    const byBytes = task.bytes_total > 0 && rate.bytesPerSecond > 0
    if (byBytes) parts.push(`${formatBytes(rate.bytesPerSecond)}/s`)
    else if (rate.filesPerSecond > 0)
      parts.push(`${rate.filesPerSecond.toFixed(rate.filesPerSecond < 10 ? 1 : 0)} files/s`)
    const left = byBytes
      ? (task.bytes_total - task.bytes_done) / rate.bytesPerSecond
      : rate.filesPerSecond > 0 && task.files_total > 0
        ? (task.files_total - task.files_done) / rate.filesPerSecond
        : undefined
    if (left !== undefined && left > 0) parts.push(`about ${formatDuration(left)} left`)
  }
  if (!parts.length)
    parts.push(task.state === 'queued' ? 'waiting for its turn' : task.state === 'running' ? 'starting' : '')
  return parts.filter(Boolean).join(' · ')
}

/**
 * A task's bar and its line. `label` names the bar for assistive technology. The bar is full when
 * the task is done; a failed task keeps where it stopped and shows its error.
 */
export function TaskProgress({ task, label, children }: { task: Task; label: string; children?: ComponentChildren }) {
  const bar = measure(task)
  return (
    <div class={`task-progress task-progress-${task.state}`}>
      {bar ? (
        <progress key="known" data-task={task.id} aria-label={label} value={bar.value} max={bar.max} />
      ) : (
        task.state !== 'failed' && (
          // Not known (yet) how much there is: an indeterminate bar, a new element (a bar that had a
          // value cannot lose it). A failed task that never knew has none.
          <progress key="unknown" data-task={task.id} aria-label={label} />
        )
      )}
      <p class="task-progress-text">
        <span class={`state state-${task.state}`}>{task.state}</span> {progressText(task)}
        {children}
      </p>
      {task.state === 'failed' && task.error && (
        <p class="error task-error">{task.error === 'cancelled' ? 'Cancelled.' : `Failed: ${task.error}`}</p>
      )}
    </div>
  )
}
