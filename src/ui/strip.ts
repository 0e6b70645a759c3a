// A video's thumbnail strip as the page draws it: its index (GET /api/videoassets/{id}/strip/index/,
// the asset's strip_url: the sprite's url, a tile every interval_ms, count tiles in columns × rows
// of tile_width × tile_height) asked once per page load, and the CSS that shows one of its tiles at
// any size (background-size and -position on the one sprite). The player's filmstrip and the
// catalogue's hover scrubbing both draw with it.
import { get } from './api.ts'

export type StripIndex = {
  url: string
  interval_ms: number
  count: number
  columns: number
  rows: number
  tile_width: number
  tile_height: number
}

/** Whether `data` is a strip index the page can draw. */
export function isStripIndex(data: unknown): data is StripIndex {
  const s = data as Partial<StripIndex> | null
  return Boolean(
    s &&
      typeof s.url === 'string' &&
      s.url !== '' &&
      [s.interval_ms, s.count, s.columns, s.rows, s.tile_width, s.tile_height].every(
        (n) => typeof n === 'number' && Number.isFinite(n) && n > 0,
      ),
  )
}

const known = new Map<string, Promise<StripIndex | undefined>>()
/** The strip index at `url`, asked once per page load; undefined when there is none to draw. */
export function stripIndex(url: string): Promise<StripIndex | undefined> {
  let index = known.get(url)
  if (!index) {
    index = get<unknown>(url).then(
      (answer) => (isStripIndex(answer.data) ? answer.data : undefined),
      () => undefined,
    )
    known.set(url, index)
  }
  return index
}

/** The tile of the strip at `ms` into the clip. */
export const tileAt = (strip: StripIndex, ms: number) =>
  Math.max(0, Math.min(strip.count - 1, Math.floor(ms / strip.interval_ms)))

/** Tile `index` drawn at `width`×`height` CSS pixels: the sprite, its size and where it lies. */
export function tileStyle(strip: StripIndex, index: number, width: number, height: number) {
  const i = Math.max(0, Math.min(strip.count - 1, Math.floor(index)))
  const column = i % strip.columns
  const row = Math.floor(i / strip.columns)
  return {
    backgroundImage: `url("${strip.url.replace(/["\\\n]/g, (c) => (c === '\n' ? '' : `\\${c}`))}")`,
    backgroundSize: `${strip.columns * width}px ${strip.rows * height}px`,
    backgroundPosition: `${-column * width}px ${-row * height}px`,
  }
}
