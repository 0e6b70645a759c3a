// One media asset (placeholder): its record as the API answers it. To come: every field laid out,
// technical details, keywords, projects, import logs, history, the proxy preview and editing.
import { useGet } from '../data.ts'
import type { ViewProps } from '../main.tsx'
import { Status, View } from '../shell.tsx'

type Asset = { id: number; asset_meta: { name: string; path_file: string; description?: string } }
const TYPES = new Set(['video', 'audio', 'image'])

export default function AssetView({ params }: ViewProps) {
  const type = TYPES.has(params.type ?? '') ? params.type! : 'video'
  const asset = useGet<Asset>(`/api/${type}assets/${encodeURIComponent(params.id ?? '')}/`)
  const record = asset.data.value
  return (
    <View title={record?.asset_meta.name ?? `${type[0]!.toUpperCase()}${type.slice(1)} asset ${params.id}`}>
      <Status loading={asset.loading.value} error={asset.error.value} />
      {record && (
        <dl class="fields">
          <dt>Path</dt>
          <dd class="path">{record.asset_meta.path_file}</dd>
          <dt>Description</dt>
          <dd>{record.asset_meta.description || '—'}</dd>
        </dl>
      )}
    </View>
  )
}
