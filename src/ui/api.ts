// Every call the page makes to the API goes through here: same-origin credentials (the session
// cookie, HttpOnly: the page never sees a key), `X-Requested-With` (so a 401 never brings up the
// browser's login dialog), JSON both ways, and the error envelope (docs/api.md, Errors) parsed so
// that a form shows each error at its field (`ApiError.at('/name')`).
import { signal } from '@preact/signals'

/** One entry of the error envelope. */
export type ErrorEntry = {
  status: string
  code: string
  title: string
  detail: string
  source?: { pointer?: string; parameter?: string }
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errors: ErrorEntry[],
  ) {
    super(errors.map((e) => e.detail).join(' ') || `The server answered ${status}.`)
  }

  /** The details of the errors at a body field (JSON pointer, `/asset_meta/name`), joined. */
  at(pointer: string): string | undefined {
    const details = this.errors.filter((e) => e.source?.pointer === pointer).map((e) => e.detail)
    return details.length ? details.join(' ') : undefined
  }

  /** The details of the errors at a query parameter. */
  atParameter(name: string): string | undefined {
    const details = this.errors.filter((e) => e.source?.parameter === name).map((e) => e.detail)
    return details.length ? details.join(' ') : undefined
  }

  /** The details of the errors at no field: what a form shows above its fields. */
  get general(): string | undefined {
    const details = this.errors.filter((e) => !e.source?.pointer).map((e) => e.detail)
    return details.length ? details.join(' ') : undefined
  }
}

export type Answer<T> = {
  data: T
  status: number
  /** X-Total-Count of a list: how many records match, whatever the page's limit. */
  total?: number
  headers: Headers
}

export type CallOptions = {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  /** Sent as JSON. */
  body?: unknown
  /** Added to the path's query (undefined values left out). */
  query?: Record<string, string | number | boolean | undefined>
  signal?: AbortSignal
}

/**
 * Set when a call is refused 401 (the session expired or was ended elsewhere): the page goes back
 * to the sign-in view. session.ts listens to it; the sign-in call itself does not set it.
 */
export const unauthorized = signal(0)

/** Calls the API at `path` (`/api/...`); resolves with the JSON answer, rejects with ApiError. */
export async function api<T = unknown>(path: string, options: CallOptions = {}): Promise<Answer<T>> {
  const url = new URL(path, window.location.origin)
  for (const [name, value] of Object.entries(options.query ?? {}))
    if (value !== undefined) url.searchParams.set(name, String(value))
  const headers: Record<string, string> = { accept: 'application/json', 'x-requested-with': 'XMLHttpRequest' }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(url, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    credentials: 'same-origin',
    signal: options.signal,
  })
  const text = await response.text()
  let data: unknown = undefined
  if (text) {
    try {
      data = JSON.parse(text)
    } catch {
      data = text
    }
  }
  if (!response.ok) {
    if (response.status === 401 && !path.startsWith('/api/session')) unauthorized.value++
    throw new ApiError(response.status, envelopeOf(response.status, data))
  }
  const total = response.headers.get('x-total-count')
  return {
    data: data as T,
    status: response.status,
    total: total === null ? undefined : Number(total),
    headers: response.headers,
  }
}

/** The entries of an error answer: the envelope's, or one made of a plain `{detail}` body. */
function envelopeOf(status: number, data: unknown): ErrorEntry[] {
  const errors = (data as { errors?: unknown } | undefined)?.errors
  if (Array.isArray(errors)) return errors as ErrorEntry[]
  const detail = (data as { detail?: unknown } | undefined)?.detail
  return [
    {
      status: String(status),
      code: 'error',
      title: '',
      detail: typeof detail === 'string' ? detail : `The server answered ${status}.`,
    },
  ]
}

export const get = <T>(path: string, query?: CallOptions['query'], signal?: AbortSignal) =>
  api<T>(path, { query, signal })
export const post = <T>(path: string, body?: unknown) => api<T>(path, { method: 'POST', body })
export const patch = <T>(path: string, body: unknown) => api<T>(path, { method: 'PATCH', body })
export const del = <T = undefined>(path: string) => api<T>(path, { method: 'DELETE' })
