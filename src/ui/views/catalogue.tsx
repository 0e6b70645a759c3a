// The catalogue, at /assets (`/` leads here): a search box whose results come as you type (the
// search API, debounced; a stale answer is aborted, never shown), filters by production, kind,
// online or offline, approval and device, all kept in the URL's query
//   /assets?q=harbour&production=2&kind=video&online=false&approval=pending&device=3
// and one windowed list of what matches: a fixed row height, only the rows in view (and a margin)
// in the document, pages fetched as they come into view (assetwindow.ts), so 100,000 assets
// scroll as smoothly as 100. Without words, the list endpoints in id order (video, then audio,
// then image when no kind is chosen); with words, the search's order, best first.
import { useSignal } from '@preact/signals'
import { useEffect, useMemo, useRef } from 'preact/hooks'
import { useGet } from '../data.ts'
import { assetState } from '../format.ts'
import { resets, useLive } from '../live.ts'
import type { ViewProps } from '../router.ts'
import { navigate, query } from '../router.ts'
import { Status, View } from '../shell.tsx'
import { KINDS, type Kind, type Row, type Rows, createRows, listSegment, searchSegment } from './assetwindow.ts'
import './catalogue.css'

/** Each row's height in CSS pixels: catalogue.css gives .asset-row the same. */
const ROW_HEIGHT = 44
/** Rows rendered above and below the visible ones. */
const MARGIN = 10
/** The wait after a keystroke before the search is asked: short, as results should show within 150 ms of it; a burst of keys typed faster is one request, and a request a newer one replaces is aborted. */
const DEBOUNCE_MS = 50

type Production = { id: number; name: string }
type Device = { id: number; name: string; display_name: string }

/** The catalogue's state as the URL's query holds it. */
type Filters = { q: string; production: string; kind: string; online: string; approval: string; device: string }
const FILTER_NAMES = ['q', 'production', 'kind', 'online', 'approval', 'device'] as const

function filtersOf(params: URLSearchParams): Filters {
  const value = (name: string, allowed?: RegExp) => {
    const v = params.get(name) ?? ''
    return allowed && !allowed.test(v) ? '' : v
  }
  return {
    q: value('q'),
    production: value('production', /^\d+$/),
    kind: value('kind', /^(video|audio|image)$/),
    online: value('online', /^(true|false)$/),
    approval: value('approval', /^(approved|pending)$/),
    device: value('device', /^\d+$/),
  }
}

/** The catalogue's address for `filters` (empty ones left out). */
export function catalogueHref(filters: Partial<Filters>): string {
  const params = new URLSearchParams()
  for (const name of FILTER_NAMES) {
    const v = filters[name]?.trim()
    if (v) params.set(name, v)
  }
  const text = params.toString()
  return text ? `/assets?${text}` : '/assets'
}

export default function Catalogue(_: ViewProps) {
  const filters = filtersOf(query.value)
  const words = useSignal(filters.q)
  const typing = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  const productions = useGet<Production[]>('/api/productions/')
  const devices = useGet<Device[]>('/api/devices/')

  // The URL changed under the box (back, forward, a link): the box follows, unless a keystroke waits.
  useEffect(() => {
    if (typing.current === undefined && words.peek().trim() !== filters.q) words.value = filters.q
  }, [filters.q])
  useEffect(() => () => clearTimeout(typing.current), [])

  const set = (changes: Partial<Filters>) =>
    navigate(catalogueHref({ ...filtersOf(query.peek()), ...changes }), { replace: true })
  const onWords = (text: string) => {
    words.value = text
    clearTimeout(typing.current)
    typing.current = setTimeout(() => {
      typing.current = undefined
      set({ q: text })
    }, DEBOUNCE_MS)
  }

  const names = new Map((productions.data.value ?? []).map((p) => [p.id, p.name]))
  const deviceList = devices.data.value ?? []
  const filtered = Boolean(filters.production || filters.kind || filters.online || filters.approval || filters.device)
  return (
    <View title="Catalogue">
      <form
        role="search"
        aria-label="Search the catalogue"
        class="catalogue-filters"
        onSubmit={(e) => {
          e.preventDefault()
          clearTimeout(typing.current)
          typing.current = undefined
          set({ q: words.value })
        }}
      >
        <div class="catalogue-search">
          <label for="catalogue-q">Search</label>
          <input
            id="catalogue-q"
            name="q"
            type="search"
            value={words.value}
            autocomplete="off"
            spellcheck={false}
            onInput={(e) => onWords(e.currentTarget.value)}
            placeholder="Names, paths, keywords, descriptions…"
            aria-describedby="catalogue-count"
          />
        </div>
        <Choice
          id="catalogue-production"
          label="Production"
          value={filters.production}
          onChange={(v) => set({ production: v })}
          options={[
            ['', 'All productions'],
            ...(productions.data.value ?? []).map((p): [string, string] => [String(p.id), p.name]),
          ]}
        />
        <Choice
          id="catalogue-kind"
          label="Kind"
          value={filters.kind}
          onChange={(v) => set({ kind: v })}
          options={[
            ['', 'All kinds'],
            ['video', 'Video'],
            ['audio', 'Audio'],
            ['image', 'Image'],
          ]}
        />
        <Choice
          id="catalogue-online"
          label="Storage"
          value={filters.online}
          onChange={(v) => set({ online: v })}
          options={[
            ['', 'Online and offline'],
            ['true', 'Online'],
            ['false', 'Offline'],
          ]}
        />
        <Choice
          id="catalogue-approval"
          label="Approval"
          value={filters.approval}
          onChange={(v) => set({ approval: v })}
          options={[
            ['', 'Any approval'],
            ['approved', 'Approved'],
            ['pending', 'Pending'],
          ]}
        />
        <Choice
          id="catalogue-device"
          label="Device"
          value={filters.device}
          onChange={(v) => set({ device: v })}
          options={[
            ['', 'All devices'],
            ...deviceList.map((d): [string, string] => [String(d.id), d.display_name || d.name]),
            ...(filters.device && !deviceList.some((d) => String(d.id) === filters.device)
              ? [[filters.device, `Device ${filters.device}`] as [string, string]]
              : []),
          ]}
        />
        {filtered && (
          <button
            type="button"
            class="catalogue-clear"
            onClick={() => navigate(catalogueHref({ q: filters.q }), { replace: true })}
          >
            Clear filters
          </button>
        )}
      </form>
      <AssetList filters={filters} productionNames={names} />
    </View>
  )
}

function Choice({
  id,
  label,
  value,
  options,
  onChange,
}: {
  id: string
  label: string
  value: string
  options: [string, string][]
  onChange: (value: string) => void
}) {
  return (
    <div class="catalogue-choice">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  )
}

/** The rows of the filters' source, made again when they change, closed when they go. */
function useRows(filters: Filters): Rows {
  const key = JSON.stringify(filters)
  const rows = useMemo(() => {
    const kinds: readonly Kind[] = filters.kind ? [filters.kind as Kind] : KINDS
    const common = {
      production: filters.production || undefined,
      is_production: filters.online || undefined,
      device: filters.device || undefined,
      status_approval: filters.approval ? (filters.approval === 'approved' ? '1' : '0') : undefined,
    }
    const q = filters.q.trim()
    return createRows(q ? [searchSegment(q, kinds, common)] : kinds.map((kind) => listSegment(kind, common)))
  }, [key])
  useEffect(() => () => rows.close(), [rows])
  // Records changed elsewhere (an import, an edit, the watcher): the list is asked again, once for
  // a burst of changes; and after the live stream may have missed some.
  const later = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  useLive('asset', () => {
    clearTimeout(later.current)
    later.current = setTimeout(() => rows.reload(), 500)
  })
  useEffect(() => () => clearTimeout(later.current), [])
  const reset = resets.value
  const first = useRef(true)
  useEffect(() => {
    if (first.current) first.current = false
    else rows.reload()
  }, [reset])
  return rows
}

function AssetList({ filters, productionNames }: { filters: Filters; productionNames: ReadonlyMap<number, string> }) {
  const rows = useRows(filters)
  const scroller = useRef<HTMLDivElement>(null)
  const top = useSignal(0)
  const height = useSignal(600)
  /** A row to focus once it is rendered (arrow keys moving past the window). */
  const focusNext = useRef<number | undefined>(undefined)

  // A new source starts at its top.
  useEffect(() => {
    if (scroller.current) scroller.current.scrollTop = 0
    top.value = 0
  }, [rows])
  useEffect(() => {
    const element = scroller.current
    if (!element) return
    const observer = new ResizeObserver(() => (height.value = element.clientHeight))
    observer.observe(element)
    height.value = element.clientHeight
    return () => observer.disconnect()
  }, [])

  const total = rows.total.value
  void rows.version.value
  const first = Math.max(0, Math.floor(top.value / ROW_HEIGHT) - MARGIN)
  const last = Math.min((total ?? 0) - 1, Math.ceil((top.value + height.value) / ROW_HEIGHT) + MARGIN)
  useEffect(() => rows.want(first, last), [rows, first, last])
  useEffect(() => {
    const i = focusNext.current
    if (i === undefined) return
    const link = scroller.current?.querySelector<HTMLAnchorElement>(`a[data-index="${i}"]`)
    if (link) {
      focusNext.current = undefined
      link.focus()
    }
  })

  /** Arrow keys move from row to row, Home and End to the first and last; the list scrolls along. */
  const onKeyDown = (event: KeyboardEvent) => {
    const element = scroller.current
    const from = (event.target as HTMLElement).dataset?.index
    if (!element || total === undefined || total === 0 || from === undefined) return
    const steps: Record<string, number> = {
      ArrowDown: 1,
      ArrowUp: -1,
      PageDown: Math.floor(height.value / ROW_HEIGHT),
      PageUp: -Math.floor(height.value / ROW_HEIGHT),
    }
    let to: number
    if (event.key in steps) to = Number(from) + steps[event.key]!
    else if (event.key === 'Home') to = 0
    else if (event.key === 'End') to = total - 1
    else return
    event.preventDefault()
    to = Math.max(0, Math.min(total - 1, to))
    if (to * ROW_HEIGHT < element.scrollTop) element.scrollTop = to * ROW_HEIGHT
    else if ((to + 1) * ROW_HEIGHT > element.scrollTop + element.clientHeight)
      element.scrollTop = (to + 1) * ROW_HEIGHT - element.clientHeight
    top.value = element.scrollTop
    focusNext.current = to
    const link = element.querySelector<HTMLAnchorElement>(`a[data-index="${to}"]`)
    if (link) {
      focusNext.current = undefined
      link.focus()
    }
  }

  const q = filters.q.trim()
  const count =
    total === undefined
      ? ''
      : `${total.toLocaleString('en')} ${q ? (total === 1 ? 'match' : 'matches') : total === 1 ? 'asset' : 'assets'}`
  const items = []
  if (total !== undefined) {
    for (let i = first; i <= last; i++)
      items.push(<AssetRow key={i} index={i} total={total} row={rows.rowAt(i)} productionNames={productionNames} />)
  }
  return (
    <>
      <p id="catalogue-count" class="muted catalogue-count" role="status">
        {rows.error.value ? '' : total === undefined ? 'Loading…' : count}
      </p>
      <Status loading={false} error={rows.error.value} />
      {total === 0 && !rows.error.value && (
        <p class="catalogue-empty">
          {q || filtersUsed(filters)
            ? 'Nothing matches. Try other words or fewer filters.'
            : "No assets yet. Files dropped into a production's watch folder, or imported through the API, appear here."}
        </p>
      )}
      <div
        ref={scroller}
        class="catalogue-window"
        tabIndex={0}
        role="region"
        aria-label={`Assets${count ? `, ${count}` : ''}`}
        hidden={total === 0}
        onScroll={(e) => (top.value = e.currentTarget.scrollTop)}
        onKeyDown={onKeyDown}
      >
        <ul class="catalogue-rows" style={{ height: `${(total ?? 0) * ROW_HEIGHT}px` }}>
          {items}
        </ul>
      </div>
    </>
  )
}

const filtersUsed = (f: Filters) => Boolean(f.production || f.kind || f.online || f.approval || f.device)

function AssetRow({
  index,
  total,
  row,
  productionNames,
}: {
  index: number
  total: number
  row: Row | undefined
  productionNames: ReadonlyMap<number, string>
}) {
  const place = { top: `${index * ROW_HEIGHT}px` }
  if (!row) {
    return (
      <li class="asset-row asset-row-loading" style={place} aria-setsize={total} aria-posinset={index + 1}>
        <span class="muted">Loading…</span>
      </li>
    )
  }
  const state = assetState(row.status, row.online)
  return (
    <li class="asset-row" style={place} aria-setsize={total} aria-posinset={index + 1}>
      <a class="asset-name" href={`/assets/${row.kind}/${row.id}`} data-index={index}>
        {row.name || `${row.kind} ${row.id}`}
      </a>
      <span class={`asset-kind asset-kind-${row.kind}`}>{row.kind}</span>
      <span class="asset-production">{productionNames.get(row.production) ?? `Production ${row.production}`}</span>
      <span class="asset-path path" title={row.path}>
        {row.path}
      </span>
      <span class={`asset-state asset-${state.tone}`} title={state.detail} data-testid="asset-state">
        {state.label}
      </span>
      <span class="asset-approval">
        {row.approval === undefined ? '' : row.approval === 1 ? 'approved' : 'pending'}
      </span>
    </li>
  )
}
