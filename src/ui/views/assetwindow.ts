// The catalogue's rows, fetched a page at a time as the windowed list shows them (catalogue.tsx).
// A source is one list or search (its query), made of segments: one list endpoint per kind asked
// for, their pages side by side in the order given (video, audio, image), or one search. Its total
// is known first (X-Total-Count; a search's with its first page), then pages are fetched on
// demand; a page's rows keep showing after a reload until its new rows arrive. Every request of a
// source is aborted when the source changes or goes away, so a stale answer is never shown.
import { signal } from '@preact/signals'
import { ApiError, get } from '../api.ts'

export const KINDS = ['video', 'audio', 'image'] as const
export type Kind = (typeof KINDS)[number]

/** One row of the list: a media asset as a list or a search hit shows it. */
export type Row = {
  kind: Kind
  id: number
  name: string
  path: string
  production: number
  online: boolean
  /** status_asset: -1 the import failed, 0 an import under way, 6 done; a search hit does not say. */
  status?: number
  /** 1 approved, 0 pending; a search hit does not say. */
  approval?: number
  /** Its poster frame (a video's), thumbnail (an image's) or waveform (an audio's); '' when none. */
  poster: string
  /** A video's thumbnail strip index, for hover scrubbing; '' when none. */
  strip: string
}

/** Rows per request. */
export const PAGE = 100
/** Rows per request when many are wanted at once (a selection of all). */
const COLLECT = 1000

type Segment = {
  /** Rows from `offset`, and the segment's total. */
  fetch(offset: number, limit: number, signal: AbortSignal): Promise<{ rows: Row[]; total: number }>
}

type ListRecord = {
  id: number
  name: string
  path_file: string
  production: number
  is_production: boolean
  status_asset: number
  status_approval: number
  poster_url?: string
  thumbnail_url?: string
  strip_url?: string
}
/** A search hit; status_asset is read should the search answer it (today it does not). */
type Hit = {
  type: string
  id: number
  name: string
  path: string
  production: number
  is_production: boolean
  status_asset?: number
  poster_url?: string
  thumbnail_url?: string
  strip_url?: string
}

/** The picture of a record (its poster, else its thumbnail) and its strip: '' when the answer has none. */
const pictures = (r: { poster_url?: string; thumbnail_url?: string; strip_url?: string }) => ({
  poster:
    (typeof r.poster_url === 'string' && r.poster_url) ||
    (typeof r.thumbnail_url === 'string' && r.thumbnail_url) ||
    '',
  strip: typeof r.strip_url === 'string' ? r.strip_url : '',
})
type Query = Record<string, string | number | undefined>

/** One kind's list endpoint with `filters` (production, is_production, device, status_approval, ordering). */
export function listSegment(kind: Kind, filters: Query): Segment {
  return {
    async fetch(offset, limit, signal) {
      const answer = await get<ListRecord[]>(
        `/api/${kind}assets/`,
        { ...filters, status: 'true', pictures: 'true', limit, offset },
        signal,
      )
      const rows = answer.data.map(
        (r): Row => ({
          kind,
          id: r.id,
          name: r.name,
          path: r.path_file,
          production: r.production,
          online: r.is_production,
          status: r.status_asset,
          approval: r.status_approval,
          ...pictures(r),
        }),
      )
      return { rows, total: answer.total ?? rows.length }
    },
  }
}

/** What the page sends as `q`: control characters (a tab pasted into the box) become spaces, which the API refuses in `q`. */
export const searchText = (q: string) => q.replace(/[\u0000-\u001f\u007f]+/g, ' ')

/** The search endpoint with `q`, the kinds and `filters`; hits of media assets only. */
export function searchSegment(q: string, kinds: readonly Kind[], filters: Query): Segment {
  return {
    async fetch(offset, limit, signal) {
      const type = kinds.map((k) => `${k}asset`).join(',')
      const answer = await get<Hit[]>(
        '/api/search/',
        { q: searchText(q), type, ...filters, status: 'true', pictures: 'true', limit, offset },
        signal,
      )
      const rows = answer.data.map(
        (h): Row => ({
          kind: h.type.replace(/asset$/, '') as Kind,
          id: h.id,
          name: h.name,
          path: h.path,
          production: h.production,
          online: h.is_production,
          status: h.status_asset,
          ...pictures(h),
        }),
      )
      return { rows, total: answer.total ?? rows.length }
    },
  }
}

type Page = { rows: Row[]; round: number }

/**
 * The rows of one source. `total` is undefined until known; `rowAt(i)` is undefined until its page
 * has arrived. `want(first, last)` asks for the pages holding rows first..last; `reload()` asks
 * again for the total and for the pages as they are wanted (a live change), `close()` aborts all.
 */
export function createRows(segments: readonly Segment[]) {
  const total = signal<number | undefined>(undefined)
  const error = signal<ApiError | undefined>(undefined)
  /** Bumped whenever a page arrives: the window reads it to re-render. */
  const version = signal(0)
  const pages = new Map<number, Page>()
  const asking = new Map<number, number>()
  let totals: number[] = []
  let round = 0
  let abort = new AbortController()
  let wanted: [number, number] = [0, 0]

  const failed = (failure: unknown, signal: AbortSignal) => {
    if (signal.aborted) return
    error.value =
      failure instanceof ApiError
        ? failure
        : new ApiError(0, [{ status: '0', code: 'network', title: '', detail: 'The server could not be reached.' }])
  }

  async function start() {
    const mine = round
    const signal = abort.signal
    try {
      if (segments.length === 1) {
        // One segment: its first page says its total (a search counts and ranks in one request).
        const first = await segments[0]!.fetch(0, PAGE, signal)
        if (signal.aborted || mine !== round) return
        totals = [first.total]
        pages.set(0, { rows: first.rows, round: mine })
      } else {
        // Several segments: each one's total, and with the first one's its first rows when the top
        // of the list is wanted (a new source starts there), so that the first screen waits for
        // one round of requests, not a round of counts and then its page.
        const top = wanted[0] < PAGE
        const counts = await Promise.all(segments.map((s, i) => s.fetch(0, i === 0 && top ? PAGE : 0, signal)))
        if (signal.aborted || mine !== round) return
        totals = counts.map((c) => c.total)
        // They are page 0 when the first segment fills it (else fill() asks for it whole).
        const all = totals.reduce((a, b) => a + b, 0)
        if (top && counts[0]!.rows.length === Math.min(PAGE, all)) pages.set(0, { rows: counts[0]!.rows, round: mine })
      }
      error.value = undefined
      total.value = totals.reduce((a, b) => a + b, 0)
      // Pages of an earlier round beyond the new end are gone.
      for (const p of [...pages.keys()]) if (p * PAGE >= total.value) pages.delete(p)
      version.value++
      fill()
    } catch (failure) {
      failed(failure, signal)
    }
  }

  /** Page `p` of the whole: the rows of each segment it overlaps, in order. */
  const fetchPage = (p: number, signal: AbortSignal) => fetchRange(p * PAGE, p * PAGE + PAGE, signal)

  /** Rows `from` up to (not with) `to` of the whole: the rows of each segment the range overlaps, in order. */
  async function fetchRange(from: number, to: number, signal: AbortSignal): Promise<Row[]> {
    const parts: Promise<Row[]>[] = []
    let base = 0
    for (let s = 0; s < segments.length; s++) {
      const n = totals[s]!
      const lo = Math.max(from, base)
      const hi = Math.min(to, base + n)
      if (lo < hi) parts.push(segments[s]!.fetch(lo - base, hi - lo, signal).then((r) => r.rows))
      base += n
    }
    return (await Promise.all(parts)).flat()
  }

  /** Fetches the wanted pages that are missing or of an earlier round, and not asked for yet. */
  function fill() {
    const n = total.peek()
    if (n === undefined || n === 0) return
    const [first, last] = wanted
    const signal = abort.signal
    const mine = round
    for (let p = Math.floor(Math.max(0, first) / PAGE); p <= Math.floor(Math.min(n - 1, last) / PAGE); p++) {
      if ((pages.get(p)?.round ?? -1) === mine || asking.get(p) === mine) continue
      asking.set(p, mine)
      fetchPage(p, signal).then(
        (rows) => {
          if (signal.aborted || mine !== round) return
          asking.delete(p)
          pages.set(p, { rows, round: mine })
          version.value++
        },
        (failure: unknown) => {
          if (asking.get(p) === mine) asking.delete(p)
          failed(failure, signal)
        },
      )
    }
  }

  void start()
  return {
    total,
    error,
    version,
    rowAt(i: number): Row | undefined {
      return pages.get(Math.floor(i / PAGE))?.rows[i % PAGE]
    },
    want(first: number, last: number) {
      if (wanted[0] === first && wanted[1] === last) return
      wanted = [first, last]
      fill()
    },
    /**
     * Rows `from` to `to` (both included; a selection's range, or all of them): from the pages at
     * hand, the others asked for COLLECT rows at a time. Rejects when the source is reloaded or closed meanwhile.
     */
    async collect(from: number, to: number): Promise<Row[]> {
      const n = total.peek() ?? 0
      const last = Math.min(to, n - 1)
      const signal = abort.signal
      const mine = round
      const out: Row[] = []
      let i = Math.max(0, from)
      while (i <= last) {
        const page = pages.get(Math.floor(i / PAGE))
        if (page && page.round === mine) {
          const end = Math.min(last, Math.floor(i / PAGE) * PAGE + PAGE - 1)
          for (; i <= end; i++) {
            const row = page.rows[i % PAGE]
            if (row) out.push(row)
          }
          continue
        }
        const rows = await fetchRange(i, Math.min(last + 1, i + COLLECT), signal)
        if (signal.aborted || mine !== round) throw new Error('The list changed meanwhile.')
        if (rows.length === 0) break
        out.push(...rows)
        i += rows.length
      }
      return out
    },
    reload() {
      abort.abort()
      abort = new AbortController()
      round++
      asking.clear()
      void start()
    },
    close() {
      abort.abort()
    },
  }
}

export type Rows = ReturnType<typeof createRows>
