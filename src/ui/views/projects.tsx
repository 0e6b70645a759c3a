// Projects (placeholder): the first project assets. To come: per production, create, copy, delete,
// link and unlink, live progress of copies and deletes.
import { useGet } from '../data.ts'
import type { ViewProps } from '../main.tsx'
import { Status, View } from '../shell.tsx'

type Project = { id: number; name: string; bundle_root?: string }

export default function Projects(_: ViewProps) {
  const projects = useGet<Project[]>('/api/projectassets/', { limit: 50 })
  return (
    <View title="Projects">
      <Status loading={projects.loading.value} error={projects.error.value} />
      <p class="muted">{projects.total.value ?? 0} projects</p>
      <ul class="rows">
        {(projects.data.value ?? []).map((project) => (
          <li key={project.id}>
            <span>{project.name}</span>
            <span class="muted path">{project.bundle_root}</span>
          </li>
        ))}
      </ul>
    </View>
  )
}
