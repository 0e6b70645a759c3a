// Import logs (placeholder): the first import logs. To come: newest first, failed first on request.
import { useGet } from '../data.ts'
import type { ViewProps } from '../main.tsx'
import { Status, View } from '../shell.tsx'

type ImportLog = { id: number; asset_path?: string; status?: string }

export default function Imports(_: ViewProps) {
  const logs = useGet<ImportLog[]>('/api/importlogs/', { limit: 50 })
  return (
    <View title="Imports">
      <Status loading={logs.loading.value} error={logs.error.value} />
      <p class="muted">{logs.total.value ?? 0} imports</p>
      <ul class="rows">
        {(logs.data.value ?? []).map((log) => (
          <li key={log.id}>
            <span class="path">{log.asset_path}</span>
            <span class="state">{log.status}</span>
          </li>
        ))}
      </ul>
    </View>
  )
}
