// Tasks (docs/operations.md, The web page): the running, queued and failed tasks the user can read, live. The
// lists are read once (GET /api/tasks/ by state, newest first) and then kept current by the task
// events (live.ts): a task moves between the sections as its state does, a new one appears, one
// that ends stays in view as done or failed with its error (those done since the page loaded).
// Each shows its bar, what is done of what, the throughput and the time left (progress.tsx, from
// successive events), when it ended, started or was queued (as far as the page knows: the events
// carry no dates), and a cancel button where the API allows one (not for deletes; scans only for
// superusers).
import { useSignal } from '@preact/signals'
import { ApiError, post } from '../api.ts'
import { useGet } from '../data.ts'
import { tasks as liveTasks } from '../live.ts'
import type { ViewProps } from '../router.ts'
import { type Task, TaskProgress, newer } from '../progress.tsx'
import { user } from '../session.ts'
import { Status, View, When } from '../shell.tsx'
import './tasks.css'

const LISTED = 100
const FAILED_LISTED = 20
/** Tasks seen ending done since the page loaded (the live stream's), newest first. */
const DONE_SHOWN = 20

const KIND_NAMES: Record<string, string> = {
  copy: 'Copy of a project',
  delete: 'Delete of a project',
  import: 'Import',
  proxy: 'Proxy made again',
  scan: 'Scan of a device',
}

export default function Tasks(_: ViewProps) {
  const running = useGet<Task[]>('/api/tasks/', { state: 'running', limit: LISTED })
  const queued = useGet<Task[]>('/api/tasks/', { state: 'queued', limit: LISTED })
  const failed = useGet<Task[]>('/api/tasks/', { state: 'failed', limit: FAILED_LISTED })
  // Every task listed or seen live since the view opened, each as its newest state.
  const all = new Map<number, Task>()
  for (const list of [running, queued, failed]) for (const task of list.data.value ?? []) all.set(task.id, task)
  for (const [id, task] of liveTasks.value) all.set(id, newer(all.get(id), task)!)
  const sorted = [...all.values()].sort((a, b) => b.id - a.id)
  const section = (state: Task['state'], max = LISTED) => sorted.filter((t) => t.state === state).slice(0, max)
  const loading = running.loading.value || queued.loading.value || failed.loading.value
  const error = running.error.value ?? queued.error.value ?? failed.error.value
  const loaded = running.data.value && queued.data.value && failed.data.value
  return (
    <View title="Tasks">
      <Status loading={loading && !loaded} error={error} />
      {loaded && (
        <>
          <TaskSection
            title="Running"
            tasks={section('running')}
            empty="Nothing is running."
            total={running.total.value}
          />
          <TaskSection
            title="Queued"
            tasks={section('queued')}
            empty="Nothing is waiting."
            total={queued.total.value}
          />
          <TaskSection
            title="Failed"
            tasks={section('failed')}
            empty="No task has failed."
            total={failed.total.value}
            newest
          />
          <TaskSection title="Done since you opened Reelhouse" tasks={section('done', DONE_SHOWN)} empty="None yet." />
        </>
      )}
    </View>
  )
}

function TaskSection({
  title,
  tasks,
  empty,
  total,
  newest,
}: {
  title: string
  tasks: Task[]
  empty: string
  total?: number
  newest?: boolean
}) {
  const id = `tasks-${title.split(' ')[0]!.toLowerCase()}`
  return (
    <section class="tasks-section" aria-labelledby={id}>
      <h2 id={id}>
        {title} <span class="muted tasks-count">{tasks.length}</span>
      </h2>
      {newest && total !== undefined && total > tasks.length && (
        <p class="muted">
          The newest {tasks.length} of {total}.
        </p>
      )}
      {tasks.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <ul class="tasks-list">
          {tasks.map((task) => (
            <TaskItem key={task.id} task={task} />
          ))}
        </ul>
      )}
    </section>
  )
}

/** Where the task's target is shown in the page. */
function Target({ target }: { target: Task['target'] }) {
  const [kind, id] = Object.entries(target)[0] ?? []
  if (kind === undefined || id === undefined) return null
  if (kind === 'projectasset') return <a href={`/projects/${id}`}>project {id}</a>
  if (kind.endsWith('asset'))
    return (
      <a href={`/assets/${kind.replace('asset', '')}/${id}`}>
        {kind.replace('asset', '')} asset {id}
      </a>
    )
  if (kind === 'device') return <a href="/devices">device {id}</a>
  return (
    <span>
      {kind} {id}
    </span>
  )
}

/**
 * When the task last moved, as far as the page knows: ended, else started, else queued. A task
 * seen only in the live stream has no date (its events carry none), and shows none.
 */
function TaskWhen({ task }: { task: Task }) {
  const [verb, value] = task.date_end
    ? ['ended', task.date_end]
    : task.date_start
      ? ['started', task.date_start]
      : ['queued', task.date_add]
  if (!value) return null
  return (
    <span class="muted task-when">
      {verb} <When value={value} />
    </span>
  )
}

/** Whether the page offers to cancel: the API refuses deletes; scans are superusers'; others need write access somewhere. */
function mayCancel(task: Task): boolean {
  const who = user.value
  if (!who || (task.state !== 'queued' && task.state !== 'running') || task.kind === 'delete') return false
  if (who.is_superuser) return true
  if (task.kind === 'scan') return false
  return ((who.productions as { level: string }[] | undefined) ?? []).some((p) => p.level === 'write')
}

function TaskItem({ task }: { task: Task }) {
  const busy = useSignal(false)
  const failure = useSignal<string | undefined>(undefined)
  async function cancel() {
    busy.value = true
    failure.value = undefined
    try {
      await post(`/api/tasks/${task.id}/cancel/`)
    } catch (error) {
      failure.value = error instanceof ApiError ? error.message : 'The server could not be reached.'
    } finally {
      busy.value = false
    }
  }
  const name = `${KIND_NAMES[task.kind] ?? task.kind} ${task.id}`
  return (
    <li class="task" data-task-id={task.id}>
      <div class="task-head">
        <span class="task-name">
          <strong>{KIND_NAMES[task.kind] ?? task.kind}</strong> <span class="muted">#{task.id}</span> ·{' '}
          <Target target={task.target} />
        </span>
        <TaskWhen task={task} />
        {mayCancel(task) && (
          <button type="button" aria-label={`Cancel ${name}`} disabled={busy.value} onClick={() => void cancel()}>
            {busy.value ? 'Cancelling…' : 'Cancel'}
          </button>
        )}
      </div>
      <TaskProgress task={task} label={`Progress of ${name}`} />
      {failure.value && (
        <p class="error" role="alert">
          {failure.value}
        </p>
      )}
    </li>
  )
}
