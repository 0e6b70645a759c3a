// Tasks (placeholder): the newest tasks, their state kept current by the live stream. To come:
// progress bars, throughput, time left, a failed task's error.
import { useGet } from '../data.ts'
import { tasks as live } from '../live.ts'
import type { ViewProps } from '../main.tsx'
import { Status, View } from '../shell.tsx'

type Task = { id: number; kind: string; state: string; error: string }

export default function Tasks(_: ViewProps) {
  const tasks = useGet<Task[]>('/api/tasks/', { limit: 50 })
  const now = live.value
  return (
    <View title="Tasks">
      <Status loading={tasks.loading.value} error={tasks.error.value} />
      <p class="muted">{tasks.total.value ?? 0} tasks</p>
      <ul class="rows">
        {(tasks.data.value ?? []).map((task) => {
          const state = now.get(task.id)?.state ?? task.state
          return (
            <li key={task.id}>
              <span>
                #{task.id} {task.kind}
              </span>
              <span class={`state state-${state}`}>{state}</span>
            </li>
          )
        })}
      </ul>
    </View>
  )
}
