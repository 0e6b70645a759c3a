// The catalogue (placeholder): a search box over GET /api/search/ and, without words, the first
// video assets. To come: filters (production, kind, online, approval) and a windowed list.
import { useSignal } from '@preact/signals'
import { useGet } from '../data.ts'
import type { ViewProps } from '../main.tsx'
import { Status, View } from '../shell.tsx'

type Hit = { type: string; id: number; name: string; path: string }
type Asset = { id: number; asset_meta: { name: string; path_file: string } }

export default function Catalogue(_: ViewProps) {
  const words = useSignal('')
  const q = words.value.trim()
  return (
    <View title="Catalogue">
      <form role="search" class="toolbar" onSubmit={(e) => e.preventDefault()}>
        <label for="catalogue-q">Search</label>
        <input id="catalogue-q" type="search" value={words.value} onInput={(e) => (words.value = e.currentTarget.value)} placeholder="Names, paths, keywords…" />
      </form>
      {q ? <Results q={q} /> : <Recent />}
    </View>
  )
}

function Results({ q }: { q: string }) {
  const hits = useGet<Hit[]>('/api/search/', { q, limit: 50 })
  return (
    <>
      <Status loading={hits.loading.value} error={hits.error.value} />
      <p class="muted">{hits.total.value ?? 0} found</p>
      <ul class="rows">
        {(hits.data.value ?? []).map((hit) => (
          <li key={`${hit.type}${hit.id}`}>
            <a href={hit.type === 'projectasset' ? `/projects/${hit.id}` : `/assets/${hit.type.replace('asset', '')}/${hit.id}`}>{hit.name}</a>
            <span class="muted path">{hit.path}</span>
          </li>
        ))}
      </ul>
    </>
  )
}

function Recent() {
  const assets = useGet<Asset[]>('/api/videoassets/', { limit: 50 })
  return (
    <>
      <Status loading={assets.loading.value} error={assets.error.value} />
      <p class="muted">{assets.total.value ?? 0} video assets</p>
      <ul class="rows">
        {(assets.data.value ?? []).map((asset) => (
          <li key={asset.id}>
            <a href={`/assets/video/${asset.id}`}>{asset.asset_meta.name}</a>
            <span class="muted path">{asset.asset_meta.path_file}</span>
          </li>
        ))}
      </ul>
    </>
  )
}
