// The catalogue, at /assets (`/` leads here): a search box whose results come as you type (the
// search API, debounced; a stale answer is aborted, never shown), filters by production, kind,
// online or offline, approval and device, a sort, and the view (a list or a grid of pictures), all
// kept in the URL's query
//   /assets?q=harbour&production=2&kind=video&online=false&approval=pending&device=3&sort=-date_add&view=grid
// and one windowed list of what matches: fixed row (or tile) sizes, only those in view (and a
// margin) in the document, pages fetched as they come into view (assetwindow.ts), so 100,000
// assets scroll as smoothly as 100: the window moves an item at a time, each one made once. Without words, the list endpoints (video, then audio, then
// image when no kind is chosen), each in the sort asked for (`?ordering=`, id order when none);
// with words, the search's order, best first.
//
// Each asset shows its poster frame (poster_url, asked for as its item is made: the window holds
// only what is near the view; a neutral picture of its kind where it has none) and its file's path shortened from the left so the file name always shows (the
// whole path in its tooltip); in the grid, moving the mouse over a video's poster scrubs through
// its thumbnail strip. Assets are selected with a click on the row or tile (Ctrl or ⌘ adds or
// takes one away, Shift takes the range), with Space on the focused one, Ctrl+A for all, Escape
// for none; the selection is approved, given keywords, linked to a project or deleted at once,
// each action showing how far it is and what failed, and why.
import { type Signal, useSignal } from '@preact/signals'
import { Component, type ComponentType, type JSX } from 'preact'
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef } from 'preact/hooks'
import { ApiError, del, get, patch, post } from '../api.ts'
import { useGet } from '../data.ts'
import { assetState, shortPath } from '../format.ts'
import { resets, useLive } from '../live.ts'
import type { ViewProps } from '../router.ts'
import { navigate, query } from '../router.ts'
import { Status, View } from '../shell.tsx'
import { type StripIndex, stripIndex, tileAt, tileStyle } from '../strip.ts'
import { KINDS, type Kind, type Row, type Rows, createRows, listSegment, searchSegment } from './assetwindow.ts'
import './catalogue.css'

/** Each row's height in CSS pixels: catalogue.css gives .asset-row the same. */
const ROW_HEIGHT = 44
/** A grid tile's box in CSS pixels (its gap included): catalogue.css gives .asset-tile the same, less the gap. */
const TILE_WIDTH = 216
const TILE_HEIGHT = 232
/** The poster's size in a tile, and in a row (16:9). */
const POSTER = { width: 200, height: 112 }
const THUMB = { width: 64, height: 36 }
/** Rows rendered above and below the visible ones; in the grid, lines' worth of tiles (each line a handful of posters). */
const MARGIN = 10
const GRID_MARGIN = 3
/** Characters of a path shown in a row, and in a tile's two lines. */
const PATH_ROW = 64
const PATH_TILE = 52
/** Requests a bulk action has under way at once. */
const AT_ONCE = 4
/** The wait after a keystroke before the search is asked: short, as results should show within 150 ms of it; a burst of keys typed faster is one request, and a request a newer one replaces is aborted. */
const DEBOUNCE_MS = 50

type Production = { id: number; name: string }
type Device = { id: number; name: string; display_name: string }

/**
 * The sorts of the list (the media lists' `?ordering=`; a leading - for descending), as the sort
 * box offers them. Searches rank by relevance instead.
 */
export const SORTS: [string, string][] = [
  ['', 'As catalogued'],
  ['name', 'Name, A to Z'],
  ['-name', 'Name, Z to A'],
  ['-date_add', 'Added, newest first'],
  ['date_add', 'Added, oldest first'],
  ['duration', 'Shortest first'],
  ['-duration', 'Longest first'],
  ['timecode', 'Timecode, earliest first'],
  ['-timecode', 'Timecode, latest first'],
]
const SORT_VALUES = new Set(SORTS.map(([v]) => v))

/** The catalogue's state as the URL's query holds it. */
type Filters = {
  q: string
  production: string
  kind: string
  online: string
  approval: string
  device: string
  sort: string
  view: string
}
const FILTER_NAMES = ['q', 'production', 'kind', 'online', 'approval', 'device', 'sort', 'view'] as const

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
    sort: SORT_VALUES.has(params.get('sort') ?? '') ? params.get('sort')! : '',
    view: value('view', /^(grid|list)$/),
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
        <Choice
          id="catalogue-sort"
          label="Sort"
          value={filters.q.trim() ? '' : filters.sort}
          onChange={(v) => set({ sort: v })}
          options={filters.q.trim() ? [['', 'Best match first']] : SORTS}
          disabled={Boolean(filters.q.trim())}
        />
        <fieldset class="catalogue-view">
          <legend>View</legend>
          {(
            [
              ['list', 'List'],
              ['grid', 'Grid'],
            ] as const
          ).map(([value, text]) => (
            <button
              key={value}
              type="button"
              aria-pressed={(filters.view || 'list') === value}
              onClick={() => set({ view: value === 'list' ? '' : value })}
            >
              {text}
            </button>
          ))}
        </fieldset>
        {filtered && (
          <button
            type="button"
            class="catalogue-clear"
            onClick={() =>
              navigate(catalogueHref({ q: filters.q, sort: filters.sort, view: filters.view }), { replace: true })
            }
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
  disabled,
}: {
  id: string
  label: string
  value: string
  options: [string, string][]
  onChange: (value: string) => void
  disabled?: boolean
}) {
  return (
    <div class="catalogue-choice">
      <label for={id}>{label}</label>
      <select id={id} value={value} disabled={disabled} onChange={(e) => onChange(e.currentTarget.value)}>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  )
}

/** The rows of the filters' source, made again when they change (not the view), closed when they go. */
function useRows(filters: Filters): Rows {
  const key = JSON.stringify({ ...filters, view: '' })
  const rows = useMemo(() => {
    const kinds: readonly Kind[] = filters.kind ? [filters.kind as Kind] : KINDS
    const common = {
      production: filters.production || undefined,
      is_production: filters.online || undefined,
      device: filters.device || undefined,
      status_approval: filters.approval ? (filters.approval === 'approved' ? '1' : '0') : undefined,
    }
    const q = filters.q.trim()
    return createRows(
      q
        ? [searchSegment(q, kinds, common)]
        : kinds.map((kind) => listSegment(kind, { ...common, ordering: filters.sort || undefined })),
    )
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

/** A row's key in the selection: its kind and id (ids are one sequence, the kind says which list). */
const keyOf = (row: Row) => `${row.kind}:${row.id}`

/** The selection: rows by key, and the index the next Shift-click or Shift+Space reaches from. */
type Selection = { rows: Signal<ReadonlyMap<string, Row>>; anchor: { current: number | undefined } }

function AssetList({ filters, productionNames }: { filters: Filters; productionNames: ReadonlyMap<number, string> }) {
  const rows = useRows(filters)
  const grid = filters.view === 'grid'
  const scroller = useRef<HTMLDivElement>(null)
  /**
   * The scroll position rounded down to a step: a line's height over its items (a row in the
   * list, a sixth of a line in a grid of six). Set only when it reaches another step, so that
   * the items render once per step, never for a scroll event within one; each step the window
   * gains an item at one end and loses one at the other, so that fast scrolling makes a tile a
   * frame (and asks for a poster a frame), where a step of a whole line would make a line of
   * them, and take in their answers, in one frame now and then. Kept in pixels, so that it
   * stays right when the view (and the step) changes; the margin covers the difference.
   */
  const stepTop = useSignal(0)
  /**
   * Whether the margin of lines beyond the screen is rendered: not until the screen's pictures
   * are in (or the list scrolls), so that the first screen's posters have the connections, the
   * main thread and the decoder to themselves; then the margin's come, ahead of any scrolling.
   */
  const ahead = useSignal(false)
  const height = useSignal(600)
  const width = useSignal(800)
  /** An item to focus once it is rendered (arrow keys moving past the window). */
  const focusNext = useRef<number | undefined>(undefined)
  const selected = useSignal<ReadonlyMap<string, Row>>(new Map())
  const anchor = useRef<number | undefined>(undefined)
  const selection: Selection = { rows: selected, anchor }
  /** What selecting many is doing (Ctrl+A over a long list asks for every row). */
  const selecting = useSignal('')
  /** The last bulk action: shown until the next, whatever the selection is then. */
  const job = useSignal<Job | undefined>(undefined)

  // A new source starts at its top, with nothing selected.
  useEffect(() => {
    if (scroller.current) scroller.current.scrollTop = 0
    stepTop.value = 0
    ahead.value = false
    selected.value = new Map()
    anchor.current = undefined
  }, [rows])
  useEffect(() => {
    const element = scroller.current
    if (!element) return
    const observer = new ResizeObserver(() => {
      height.value = element.clientHeight
      width.value = element.clientWidth
    })
    observer.observe(element)
    height.value = element.clientHeight
    width.value = element.clientWidth
    return () => observer.disconnect()
  }, [])

  const total = rows.total.value
  /** Items a line holds, and a line's height: one row, or as many tiles as fit. */
  const columns = grid ? Math.max(1, Math.floor(width.value / TILE_WIDTH)) : 1
  const lineHeight = grid ? TILE_HEIGHT : ROW_HEIGHT
  const lines = Math.ceil((total ?? 0) / columns)
  /** Sets stepTop from the scroller's position: a new value (and a render of the items) only on a new step. */
  const follow = (scrollTop: number) => {
    const step = lineHeight / columns
    stepTop.value = Math.floor(scrollTop / step) * step
    ahead.value = true
  }
  /** Renders the margin once the screen's rows are in and every picture rendered has loaded (or failed), after the frame that shows them. */
  const comeAhead = () => {
    const element = scroller.current
    if (ahead.peek() || !element || !element.querySelector('.catalogue-rows > li')) return
    if (element.querySelector('.asset-row-loading')) return
    for (const img of element.querySelectorAll('img')) if (!img.complete) return
    requestAnimationFrame(() => setTimeout(() => (ahead.value = true)))
  }
  /** After each render of the items: the item the keys moved to takes focus once it is there; the margin may come. */
  const afterItems = useStable(() => {
    const i = focusNext.current
    const link = i === undefined ? null : scroller.current?.querySelector<HTMLAnchorElement>(`a[data-index="${i}"]`)
    if (link) {
      focusNext.current = undefined
      link.focus()
    }
    comeAhead()
  })

  /** Selects the rows from..to (both included), fetching those not at hand. */
  const selectRange = async (from: number, to: number, add: boolean) => {
    const [lo, hi] = from <= to ? [from, to] : [to, from]
    const many = hi - lo >= 200
    if (many) selecting.value = `Selecting ${(hi - lo + 1).toLocaleString('en')} assets…`
    try {
      const found = await rows.collect(lo, hi)
      const next = new Map(add ? selected.peek() : [])
      for (const row of found) next.set(keyOf(row), row)
      selected.value = next
      selecting.value = ''
    } catch (failure) {
      selecting.value = `Could not select them: ${failure instanceof Error ? failure.message : String(failure)}`
    }
  }
  /** What a click, Ctrl-click or Shift-click (or Space, Shift+Space) on item `index` does to the selection. */
  const chooseNow = (index: number, row: Row, how: { toggle: boolean; range: boolean }) => {
    if (how.range && anchor.current !== undefined) {
      void selectRange(anchor.current, index, how.toggle)
      return
    }
    const key = keyOf(row)
    const next = new Map(how.toggle ? selected.peek() : [])
    if (how.toggle && selected.peek().has(key)) next.delete(key)
    else next.set(key, row)
    selected.value = next
    anchor.current = index
  }
  // The items get one function for all renders, so that a memoized item whose row, place and
  // selection are unchanged is not rendered again.
  const choose = useStable(chooseNow)

  /**
   * Arrow keys move from item to item (in the grid Up and Down by a line), Page Up and Down by a
   * screen, Home and End to the first and last; the list scrolls along. Space selects the focused
   * item (Ctrl adds it, Shift the range to it), Ctrl+A all, Escape none.
   */
  const onKeyDown = (event: KeyboardEvent) => {
    const element = scroller.current
    if (!element || total === undefined || total === 0) return
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'a') {
      event.preventDefault()
      anchor.current = 0
      void selectRange(0, total - 1, false)
      return
    }
    if (event.key === 'Escape' && selected.peek().size > 0) {
      event.preventDefault()
      selected.value = new Map()
      return
    }
    const from = (event.target as HTMLElement).dataset?.index
    if (from === undefined) return
    if (event.key === ' ') {
      event.preventDefault()
      const row = rows.rowAt(Number(from))
      if (row) chooseNow(Number(from), row, { toggle: event.ctrlKey || event.metaKey, range: event.shiftKey })
      return
    }
    const screen = Math.max(1, Math.floor(height.value / lineHeight)) * columns
    const steps: Record<string, number> = {
      ArrowDown: columns,
      ArrowUp: -columns,
      PageDown: screen,
      PageUp: -screen,
      ...(grid ? { ArrowRight: 1, ArrowLeft: -1 } : {}),
    }
    let to: number
    if (event.key in steps) to = Number(from) + steps[event.key]!
    else if (event.key === 'Home') to = 0
    else if (event.key === 'End') to = total - 1
    else return
    event.preventDefault()
    to = Math.max(0, Math.min(total - 1, to))
    const line = Math.floor(to / columns)
    if (line * lineHeight < element.scrollTop) element.scrollTop = line * lineHeight
    else if ((line + 1) * lineHeight > element.scrollTop + element.clientHeight)
      element.scrollTop = (line + 1) * lineHeight - element.clientHeight
    follow(element.scrollTop)
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

  return (
    <>
      <p id="catalogue-count" class="muted catalogue-count" role="status">
        {rows.error.value ? '' : total === undefined ? 'Loading…' : count}
        {selecting.value && ` · ${selecting.value}`}
      </p>
      <Status loading={false} error={rows.error.value} />
      {selected.value.size > 0 && (
        <BulkActions
          selection={selection}
          job={job}
          onChanged={() => rows.reload()}
          productionNames={productionNames}
        />
      )}
      <JobReport job={job.value} />
      {total === 0 && !rows.error.value && (
        <p class="catalogue-empty">
          {q || filtersUsed(filters)
            ? 'Nothing matches. Try other words or fewer filters.'
            : "No assets yet. Files dropped into a production's watch folder, or imported through the API, appear here."}
        </p>
      )}
      <div
        ref={scroller}
        class={`catalogue-window${grid ? ' catalogue-grid' : ''}`}
        tabIndex={0}
        role="region"
        aria-label={`Assets${count ? `, ${count}` : ''}`}
        aria-describedby="catalogue-keys"
        hidden={total === 0}
        onScroll={(e) => follow(e.currentTarget.scrollTop)}
        onKeyDown={onKeyDown}
      >
        <ul
          class="catalogue-rows"
          style={{ height: `${lines * lineHeight}px` }}
          onLoadCapture={comeAhead}
          onErrorCapture={comeAhead}
        >
          {total !== undefined && (
            <Items
              rows={rows}
              total={total}
              grid={grid}
              columns={columns}
              lineHeight={lineHeight}
              stepTop={stepTop}
              ahead={ahead}
              height={height}
              selected={selected}
              productionNames={productionNames}
              choose={choose}
              afterRender={afterItems}
            />
          )}
        </ul>
      </div>
      <p id="catalogue-keys" class="muted catalogue-keys" hidden={total === 0}>
        Click, or Space on the focused asset, selects it; Ctrl (⌘) adds or takes away, Shift selects the range; Ctrl+A
        selects all, Escape none.
      </p>
    </>
  )
}

/**
 * The items of the window: the lines in view (whole), and `margin` lines' worth of items beyond
 * each edge of the view (none until `ahead`), counted from the items at the edges' height. A
 * component of its own, so that a step of the scroll renders it alone, not the list around it.
 */
function Items({
  rows,
  total,
  grid,
  columns,
  lineHeight,
  stepTop,
  ahead,
  height,
  selected,
  productionNames,
  choose,
  afterRender,
}: {
  rows: Rows
  total: number
  grid: boolean
  columns: number
  lineHeight: number
  stepTop: Signal<number>
  ahead: Signal<boolean>
  height: Signal<number>
  selected: Signal<ReadonlyMap<string, Row>>
  productionNames: ReadonlyMap<number, string>
  choose: ItemProps['choose']
  afterRender: () => void
}) {
  void rows.version.value
  const step = lineHeight / columns
  const margin = (ahead.value ? (grid ? GRID_MARGIN : MARGIN) : 0) * columns
  // The items at the height of the view's top edge and (at most) of its bottom edge, which lies
  // before stepTop + step + the view's height.
  const topItem = Math.floor(stepTop.value / step)
  const bottomItem = Math.ceil((stepTop.value + step + height.value) / step)
  const first = Math.max(0, Math.min(Math.floor(topItem / columns) * columns, topItem - margin))
  const last = Math.min(total - 1, Math.max(Math.ceil(bottomItem / columns) * columns - 1, bottomItem + margin))
  // Layout effects: run as the render ends, where effects would each set a frame callback and
  // timers going, on every step of the scroll.
  useLayoutEffect(() => rows.want(first, last), [rows, first, last])
  useLayoutEffect(afterRender)
  // Each item's props are plain values (its row as the page holds it, its place, whether it is
  // selected, its production's name) and the one choose: an item shown before is not rendered
  // again unless one of them changed.
  const chosen = selected.value
  const chosenAny = chosen.size > 0
  const items = []
  for (let i = first; i <= last; i++) {
    const row = rows.rowAt(i)
    const isSelected = chosenAny && row !== undefined && chosen.has(keyOf(row))
    const production = row ? (productionNames.get(row.production) ?? `Production ${row.production}`) : ''
    items.push(
      grid ? (
        <AssetTile
          key={i}
          index={i}
          total={total}
          row={row}
          selected={isSelected}
          production={production}
          choose={choose}
          left={(i % columns) * TILE_WIDTH}
          top={Math.floor(i / columns) * TILE_HEIGHT}
        />
      ) : (
        <AssetRow
          key={i}
          index={i}
          total={total}
          row={row}
          selected={isSelected}
          production={production}
          choose={choose}
        />
      ),
    )
  }
  return <>{items}</>
}

/** A function that stays the same across renders and calls the latest `fn`: a prop that does not make a memoized child render again. */
function useStable<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  const latest = useRef(fn)
  latest.current = fn
  return useCallback((...args: A) => latest.current(...args), [])
}

const filtersUsed = (f: Filters) => Boolean(f.production || f.kind || f.online || f.approval || f.device)

type ItemProps = {
  index: number
  total: number
  row: Row | undefined
  selected: boolean
  /** The name of the row's production ('' while the row is loading). */
  production: string
  choose: (index: number, row: Row, how: { toggle: boolean; range: boolean }) => void
}

/** A click on an item but on its link or box: select (Ctrl or ⌘ toggles, Shift takes the range). */
function onItemClick(event: MouseEvent, index: number, row: Row, choose: ItemProps['choose']) {
  const target = event.target as HTMLElement
  if (target.closest('a, input')) return
  event.preventDefault()
  choose(index, row, { toggle: event.ctrlKey || event.metaKey, range: event.shiftKey })
}

/** A Shift- or Ctrl-click selects items, not the text between them. */
function keepTextUnselected(event: MouseEvent) {
  if ((event.shiftKey || event.ctrlKey || event.metaKey) && !(event.target as HTMLElement).closest('a, input'))
    event.preventDefault()
}

/** The box that says, and changes, whether the item is selected; out of the tab order (Space selects the focused item). */
function SelectBox({
  index,
  row,
  selected,
  choose,
}: { index: number; row: Row; selected: boolean } & Pick<ItemProps, 'choose'>) {
  return (
    <input
      type="checkbox"
      class="asset-select"
      tabIndex={-1}
      checked={selected}
      aria-label={`Select ${row.name || `${row.kind} ${row.id}`}`}
      onClick={(e) => {
        // The box toggles its own item; Shift takes the range.
        e.preventDefault()
        choose(index, row, { toggle: true, range: e.shiftKey })
      }}
    />
  )
}

/**
 * A component that renders again only when one of its props is another value (===): memo of
 * preact/compat, without the compat layer (which changes how every element's events are set).
 */
function memo<P extends object>(render: (props: P) => JSX.Element): ComponentType<P> {
  return class extends Component<P> {
    shouldComponentUpdate(next: P) {
      const now = this.props as Record<string, unknown>
      const then = next as Record<string, unknown>
      for (const name in then) if (then[name] !== now[name]) return true
      for (const name in now) if (!(name in then)) return true
      return false
    }
    render(props: P) {
      return render(props)
    }
  }
}

/** A row of the list: memoized (see AssetList's items). */
const AssetRow = memo(function AssetRow({ index, total, row, selected, production, choose }: ItemProps) {
  // A string style: one comparison when the item renders again, no object to diff.
  const place = `top:${index * ROW_HEIGHT}px`
  if (!row) {
    return (
      <li class="asset-row asset-row-loading" style={place} aria-setsize={total} aria-posinset={index + 1}>
        <span class="muted">Loading…</span>
      </li>
    )
  }
  const state = assetState(row.status, row.online)
  return (
    <li
      class={`asset-row${selected ? ' is-selected' : ''}`}
      style={place}
      aria-setsize={total}
      aria-posinset={index + 1}
      onMouseDown={keepTextUnselected}
      onClick={(e) => onItemClick(e, index, row, choose)}
      onDblClick={(e) => {
        if (!(e.target as HTMLElement).closest('a, input')) navigate(`/assets/${row.kind}/${row.id}`)
      }}
    >
      <SelectBox index={index} row={row} selected={selected} choose={choose} />
      <Poster key={`${row.poster} ${row.strip}`} row={row} size={THUMB} />
      <a class="asset-name" href={`/assets/${row.kind}/${row.id}`} data-index={index}>
        {row.name || `${row.kind} ${row.id}`}
      </a>
      <span class={`asset-kind asset-kind-${row.kind}`}>{row.kind}</span>
      <span class="asset-production">{production}</span>
      <span class="asset-path path" title={row.path}>
        <span dir="ltr">{shortPath(row.path, PATH_ROW)}</span>
      </span>
      <span class={`asset-state asset-${state.tone}`} title={state.detail} data-testid="asset-state">
        {state.label}
      </span>
      <span class="asset-approval">
        {row.approval === undefined ? '' : row.approval === 1 ? 'approved' : 'pending'}
      </span>
    </li>
  )
})

/** A tile of the grid at `left`, `top` (pixels in the list): memoized (see AssetList's items). */
const AssetTile = memo(function AssetTile({
  index,
  total,
  row,
  selected,
  production,
  choose,
  left,
  top,
}: ItemProps & { left: number; top: number }) {
  const place = `top:${top}px;left:${left}px`
  if (!row) {
    return (
      <li class="asset-tile asset-row-loading" style={place} aria-setsize={total} aria-posinset={index + 1}>
        <span class="muted">Loading…</span>
      </li>
    )
  }
  const state = assetState(row.status, row.online)
  return (
    <li
      class={`asset-tile${selected ? ' is-selected' : ''}`}
      style={place}
      aria-setsize={total}
      aria-posinset={index + 1}
      onMouseDown={keepTextUnselected}
      onClick={(e) => onItemClick(e, index, row, choose)}
      onDblClick={(e) => {
        if (!(e.target as HTMLElement).closest('a, input')) navigate(`/assets/${row.kind}/${row.id}`)
      }}
    >
      <Poster key={`${row.poster} ${row.strip}`} row={row} size={POSTER} scrub />
      <div class="asset-tile-head">
        <SelectBox index={index} row={row} selected={selected} choose={choose} />
        <a class="asset-name" href={`/assets/${row.kind}/${row.id}`} data-index={index} title={row.name || undefined}>
          {row.name || `${row.kind} ${row.id}`}
        </a>
      </div>
      <span class="asset-path path" title={row.path}>
        {shortPath(row.path, PATH_TILE)}
      </span>
      <span class="asset-tile-meta">
        <span class={`asset-kind asset-kind-${row.kind}`}>{row.kind}</span>
        <span class={`asset-state asset-${state.tone}`} title={state.detail} data-testid="asset-state">
          {state.label}
        </span>
        {row.approval === 1 && <span class="asset-approval">approved</span>}
        <span class="visually-hidden">
          {', '}
          {production}
        </span>
      </span>
    </li>
  )
})

/**
 * An item's picture: its poster (lazy-loaded, decoded off the main thread, at a fixed size so that
 * the layout never moves), or a neutral one with its kind's icon where it has none or it fails to
 * load. `scrub`: moving the mouse over a video's poster shows its strip's tile at that point of
 * the clip. Its state belongs to one poster and strip: the items give it a key of both, so that
 * new ones start afresh.
 */
function Poster({ row, size, scrub = false }: { row: Row; size: { width: number; height: number }; scrub?: boolean }) {
  const broken = useSignal(false)
  const strip = useSignal<StripIndex | undefined>(undefined)
  const at = useSignal<number | undefined>(undefined)
  const box = `width:${size.width}px;height:${size.height}px`
  if (!row.poster || broken.value)
    return (
      <span class={`asset-poster asset-poster-none asset-poster-${row.kind}`} style={box} data-testid="asset-poster">
        <KindIcon kind={row.kind} />
      </span>
    )
  const scrubbing = scrub && row.kind === 'video' && row.strip
  const onMove = (event: PointerEvent) => {
    if (!scrubbing) return
    const x = event.clientX - (event.currentTarget as HTMLElement).getBoundingClientRect().left
    const fraction = Math.max(0, Math.min(0.9999, x / size.width))
    const known = strip.peek()
    if (known) at.value = Math.floor(fraction * known.count)
    else
      void stripIndex(row.strip).then((s) => {
        strip.value = s
        if (s) at.value = Math.floor(fraction * s.count)
      })
  }
  const s = strip.value
  const tile = s && at.value !== undefined ? tileAt(s, at.value * s.interval_ms) : undefined
  return (
    <span
      class="asset-poster"
      style={box}
      data-testid="asset-poster"
      onPointerMove={scrubbing ? onMove : undefined}
      onPointerLeave={scrubbing ? () => (at.value = undefined) : undefined}
    >
      <img
        src={row.poster}
        alt=""
        width={size.width}
        height={size.height}
        decoding="async"
        onError={() => (broken.value = true)}
      />
      {s && tile !== undefined && (
        <span
          class="asset-scrub"
          data-testid="asset-scrub"
          data-tile={tile}
          style={tileStyle(s, tile, size.width, size.height)}
        />
      )}
      {s && tile !== undefined && (
        <span class="asset-scrub-bar" style={{ width: `${((tile + 1) / s.count) * 100}%` }} />
      )}
    </span>
  )
}

/** A small picture of a kind: a film frame, a waveform, a landscape. */
function KindIcon({ kind }: { kind: Kind }) {
  const paths: Record<Kind, JSX.Element> = {
    video: (
      <>
        <rect x="3" y="5" width="18" height="14" rx="2" />
        <path d="M7 5v14M17 5v14M3 9h4M3 15h4M17 9h4M17 15h4" />
      </>
    ),
    audio: <path d="M3 12h2M7 8v8M11 5v14M15 9v6M19 7v10M21 12h0" />,
    image: (
      <>
        <rect x="3" y="5" width="18" height="14" rx="2" />
        <circle cx="9" cy="10" r="1.6" />
        <path d="M4 18l5-5 3 3 3-4 5 6" />
      </>
    ),
  }
  return (
    <svg
      class="asset-kind-icon"
      viewBox="0 0 24 24"
      width="32"
      height="32"
      fill="none"
      stroke="currentColor"
      stroke-width="1.6"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
    >
      {paths[kind]}
    </svg>
  )
}

type Project = { id: number; name: string; production: number }
/** One asset an action could not do, and why. */
type Failed = { row: Row; reason: string }
/** A bulk action under way or done: what it does, how far, what failed. */
type Job = { doing: string; did: string; done: number; total: number; failed: Failed[]; finished: boolean }

const reasonOf = (failure: unknown) =>
  failure instanceof ApiError ? failure.message : failure instanceof Error ? failure.message : String(failure)
const nameOf = (row: Row) => row.name || `${row.kind} ${row.id}`
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`

/**
 * What can be done to the selection: approve, add keywords, link to a project, delete (after
 * confirming). Each runs over the selected assets a few requests at a time, shows how far it is,
 * then how many it did and, for each it could not, the server's reason.
 */
function BulkActions({
  selection,
  job,
  onChanged,
  productionNames,
}: {
  selection: Selection
  job: Signal<Job | undefined>
  onChanged: () => void
  productionNames: ReadonlyMap<number, string>
}) {
  const dialog = useSignal<'keywords' | 'link' | 'delete' | undefined>(undefined)
  const chosen = [...selection.rows.value.values()]
  const busy = job.value !== undefined && !job.value.finished

  /** Runs `each` over `rows`, AT_ONCE at a time; a rejection is that row's failure. */
  async function run(doing: string, did: string, rows: Row[], each: (row: Row) => Promise<unknown>) {
    const state: Job = { doing, did, done: 0, total: rows.length, failed: [], finished: false }
    job.value = { ...state }
    let next = 0
    const worker = async () => {
      while (next < rows.length) {
        const row = rows[next++]!
        try {
          await each(row)
        } catch (failure) {
          state.failed.push({ row, reason: reasonOf(failure) })
        }
        state.done++
        job.value = { ...state }
      }
    }
    await Promise.all(Array.from({ length: Math.min(AT_ONCE, rows.length) }, worker))
    state.finished = true
    job.value = { ...state, failed: [...state.failed] }
    onChanged()
    return state
  }

  const approve = () =>
    void run('Approving', 'Approved', chosen, (row) =>
      patch(`/api/${row.kind}assets/${row.id}/`, { status_approval: 1 }),
    )

  const addKeywords = (category: string, words: string[]) => {
    const what = `${category}: ${words.join(', ')}`
    void run(`Adding ${what} to`, `Added ${what} to`, chosen, async (row) => {
      const path = `/api/${row.kind}assets/${row.id}/`
      const record = await get<{ keywords?: Record<string, string[]> }>(path)
      const had = record.data.keywords?.[category] ?? []
      const merged = [...had, ...words.filter((w) => !had.includes(w))]
      if (merged.length === had.length) return
      await patch(path, { keywords: { [category]: merged } })
    })
  }

  const link = async (project: Project) => {
    // One request for every 100 assets; silent_mode lists those it could not link instead of refusing all.
    const batches: Row[][] = []
    for (let i = 0; i < chosen.length; i += 100) batches.push(chosen.slice(i, i + 100))
    const state: Job = {
      doing: `Linking to “${project.name}”`,
      did: `Linked to “${project.name}”`,
      done: 0,
      total: chosen.length,
      failed: [],
      finished: false,
    }
    job.value = { ...state }
    for (const batch of batches) {
      try {
        const answer = await post<{ invalid_assets?: { asset_id: number; type: string }[] }>(
          `/api/projectassets/${project.id}/addasset/`,
          { asset_list: batch.map((r) => ({ asset_id: r.id, type: r.kind })), silent_mode: true },
        )
        for (const bad of answer.data.invalid_assets ?? []) {
          const row = batch.find((r) => r.id === bad.asset_id && r.kind === bad.type.replace(/asset$/, ''))
          if (row)
            state.failed.push({ row, reason: 'The server could not link it: it is gone, or you may not read it.' })
        }
      } catch (failure) {
        for (const row of batch) state.failed.push({ row, reason: reasonOf(failure) })
      }
      state.done += batch.length
      job.value = { ...state }
    }
    state.finished = true
    job.value = { ...state, failed: [...state.failed] }
    onChanged()
  }

  const remove = async () => {
    const done = await run('Deleting', 'Deleted', chosen, (row) => del(`/api/${row.kind}assets/${row.id}/`))
    // Those deleted leave the selection; those that failed stay, to try again.
    const kept = new Set(done.failed.map((f) => keyOf(f.row)))
    selection.rows.value = new Map([...selection.rows.peek()].filter(([key]) => kept.has(key)))
  }

  const n = chosen.length
  return (
    <section class="catalogue-bulk" aria-labelledby="catalogue-bulk-title">
      <div class="catalogue-bulk-bar">
        <h2 id="catalogue-bulk-title" data-testid="selected-count">
          {plural(n, 'asset')} selected
        </h2>
        <button type="button" class="primary" disabled={busy} onClick={approve}>
          Approve
        </button>
        <button type="button" disabled={busy} onClick={() => (dialog.value = 'keywords')}>
          Add keywords…
        </button>
        <button type="button" disabled={busy} onClick={() => (dialog.value = 'link')}>
          Link to a project…
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => (dialog.value = 'delete')}>
          Delete…
        </button>
        <button type="button" disabled={busy} onClick={() => (selection.rows.value = new Map())}>
          Select none
        </button>
      </div>
      {dialog.value === 'keywords' && (
        <KeywordsDialog
          count={n}
          onClose={() => (dialog.value = undefined)}
          onAdd={(category, words) => {
            dialog.value = undefined
            addKeywords(category, words)
          }}
        />
      )}
      {dialog.value === 'link' && (
        <LinkDialog
          count={n}
          productions={new Set(chosen.map((r) => r.production))}
          productionNames={productionNames}
          onClose={() => (dialog.value = undefined)}
          onLink={(project) => {
            dialog.value = undefined
            void link(project)
          }}
        />
      )}
      {dialog.value === 'delete' && (
        <DeleteDialog
          rows={chosen}
          onClose={() => (dialog.value = undefined)}
          onDelete={() => {
            dialog.value = undefined
            void remove()
          }}
        />
      )}
    </section>
  )
}

/** How far a bulk action is, then what it did and what failed. */
function JobReport({ job }: { job: Job | undefined }) {
  if (!job) return null
  const ok = job.done - job.failed.length
  return (
    <div class="catalogue-job" data-testid="bulk-report">
      {!job.finished ? (
        <p role="status">
          <label>
            {job.doing} {plural(job.total, 'asset')}: {job.done} done{' '}
            <progress max={job.total} value={job.done}>
              {job.done} of {job.total}
            </progress>
          </label>
        </p>
      ) : (
        <p role="status" data-testid="bulk-done">
          {job.did} {plural(ok, 'asset')}
          {job.failed.length > 0 ? `; ${plural(job.failed.length, 'failure')}:` : '.'}
        </p>
      )}
      {job.finished && job.failed.length > 0 && (
        <ul class="catalogue-failed" data-testid="bulk-failed">
          {job.failed.map((f) => (
            <li key={keyOf(f.row)}>
              <a href={`/assets/${f.row.kind}/${f.row.id}`}>{nameOf(f.row)}</a>: {f.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

/** A modal dialog open from its first render, closed (Escape, Cancel) through onClose. */
function Modal({
  id,
  title,
  onClose,
  children,
}: {
  id: string
  title: string
  onClose: () => void
  children: JSX.Element | JSX.Element[]
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const element = dialog.current
    if (!element) return
    // Focus goes back where it was (the button that opened it) when the dialog closes.
    const back = document.activeElement as HTMLElement | null
    element.showModal()
    const closed = () => onClose()
    element.addEventListener('close', closed)
    return () => {
      element.removeEventListener('close', closed)
      if (element.open) element.close()
      back?.focus()
    }
  }, [])
  return (
    <dialog ref={dialog} class="catalogue-dialog" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {children}
    </dialog>
  )
}

function KeywordsDialog({
  count,
  onClose,
  onAdd,
}: {
  count: number
  onClose: () => void
  onAdd: (category: string, words: string[]) => void
}) {
  const category = useSignal('')
  const words = useSignal('')
  const error = useSignal('')
  return (
    <Modal id="catalogue-keywords" title={`Add keywords to ${plural(count, 'asset')}`} onClose={onClose}>
      <form
        class="catalogue-dialog-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          const list = [
            ...new Set(
              words.value
                .split(',')
                .map((w) => w.trim())
                .filter(Boolean),
            ),
          ]
          if (!category.value.trim()) error.value = 'Name the category (Location, People, …).'
          else if (list.length === 0) error.value = 'Type at least one keyword.'
          else onAdd(category.value.trim(), list)
        }}
      >
        <div class="field">
          <label for="catalogue-keyword-category">Category</label>
          <input
            id="catalogue-keyword-category"
            value={category.value}
            autoFocus
            onInput={(e) => (category.value = e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="catalogue-keyword-words">Keywords</label>
          <input
            id="catalogue-keyword-words"
            value={words.value}
            aria-describedby="catalogue-keyword-hint"
            onInput={(e) => (words.value = e.currentTarget.value)}
          />
          <p class="muted" id="catalogue-keyword-hint">
            Separated by commas. Each asset keeps its other keywords.
          </p>
        </div>
        {error.value ? (
          <p class="error" role="alert">
            {error.value}
          </p>
        ) : (
          <></>
        )}
        <div class="catalogue-dialog-buttons">
          <button type="submit" class="primary">
            Add keywords
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  )
}

function LinkDialog({
  count,
  productions,
  productionNames,
  onClose,
  onLink,
}: {
  count: number
  productions: ReadonlySet<number>
  productionNames: ReadonlyMap<number, string>
  onClose: () => void
  onLink: (project: Project) => void
}) {
  const projects = useGet<Project[]>('/api/projectassets/')
  const choice = useSignal('')
  const list = [...(projects.data.value ?? [])].sort(
    (a, b) =>
      Number(!productions.has(a.production)) - Number(!productions.has(b.production)) || a.name.localeCompare(b.name),
  )
  return (
    <Modal id="catalogue-link" title={`Link ${plural(count, 'asset')} to a project`} onClose={onClose}>
      <form
        class="catalogue-dialog-form"
        onSubmit={(e) => {
          e.preventDefault()
          const project = list.find((p) => String(p.id) === choice.value)
          if (project) onLink(project)
        }}
      >
        <Status loading={projects.loading.value && !projects.data.value} error={projects.error.value} />
        {projects.data.value && list.length === 0 ? (
          <p class="muted">No project yet: make one in Projects.</p>
        ) : (
          <div class="field">
            <label for="catalogue-link-project">Project</label>
            <select
              id="catalogue-link-project"
              value={choice.value}
              autoFocus
              aria-describedby="catalogue-link-hint"
              onChange={(e) => (choice.value = e.currentTarget.value)}
            >
              <option value="">Choose a project</option>
              {list.map((p) => (
                <option key={p.id} value={String(p.id)}>
                  {p.name} ({productionNames.get(p.production) ?? `Production ${p.production}`})
                </option>
              ))}
            </select>
            <p class="muted" id="catalogue-link-hint">
              The projects of the selected assets' productions come first.
            </p>
          </div>
        )}
        <div class="catalogue-dialog-buttons">
          <button type="submit" class="primary" disabled={!choice.value}>
            Link
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  )
}

function DeleteDialog({ rows, onClose, onDelete }: { rows: Row[]; onClose: () => void; onDelete: () => void }) {
  const n = rows.length
  return (
    <Modal id="catalogue-delete" title={`Delete ${plural(n, 'asset')}?`} onClose={onClose}>
      <p id="catalogue-delete-what">
        {n === 1 ? 'Its record goes' : 'Their records go'}, with keywords, links to projects and proxies. The files
        themselves stay on disk, and the watcher will not import them again.
      </p>
      <ul class="catalogue-delete-names">
        {rows.slice(0, 5).map((r) => (
          <li key={keyOf(r)}>{nameOf(r)}</li>
        ))}
        {n > 5 && <li>and {plural(n - 5, 'other')}</li>}
      </ul>
      <div class="catalogue-dialog-buttons">
        <button type="button" class="danger" onClick={onDelete}>
          Delete {plural(n, 'record')}
        </button>
        <button type="button" autoFocus onClick={onClose}>
          Cancel
        </button>
      </div>
    </Modal>
  )
}
