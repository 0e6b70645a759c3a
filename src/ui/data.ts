// Reading records for a view: useList() fetches a list (or any GET) and keeps its state in
// signals, reloading when the path or query changes and when the live stream may have missed
// events. Views that need more (paging, windows) build on api.ts directly.
import { type Signal, useSignal } from '@preact/signals'
import { useEffect } from 'preact/hooks'
import { ApiError, get } from './api.ts'
import { resets } from './live.ts'

export type Loaded<T> = {
  data: Signal<T | undefined>
  /** X-Total-Count, for lists. */
  total: Signal<number | undefined>
  error: Signal<ApiError | undefined>
  loading: Signal<boolean>
  reload: () => void
}

/** GET `path` with `query`; again when either changes, when reload() is called, and after a live reset. */
export function useGet<T>(path: string, query: Record<string, string | number | boolean | undefined> = {}): Loaded<T> {
  const data = useSignal<T | undefined>(undefined)
  const total = useSignal<number | undefined>(undefined)
  const error = useSignal<ApiError | undefined>(undefined)
  const loading = useSignal(true)
  const round = useSignal(0)
  const key = `${path}?${JSON.stringify(query)}`
  const reset = resets.value
  useEffect(() => {
    const abort = new AbortController()
    loading.value = true
    get<T>(path, query, abort.signal).then(
      (answer) => {
        data.value = answer.data
        total.value = answer.total
        error.value = undefined
        loading.value = false
      },
      (failure: unknown) => {
        if (abort.signal.aborted) return
        error.value =
          failure instanceof ApiError
            ? failure
            : new ApiError(0, [{ status: '0', code: 'network', title: '', detail: 'The server could not be reached.' }])
        loading.value = false
      },
    )
    return () => abort.abort()
  }, [key, round.value, reset])
  return { data, total, error, loading, reload: () => round.value++ }
}
