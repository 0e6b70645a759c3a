// Import logs (docs/operations.md, The web page): the recent imports with their status, newest first, or the
// failed ones first on request (GET /api/importlogs/?ordering=-id or -failed; docs/api.md, Import
// logs). The order is kept in the URL (/imports?failed=first), so it survives a reload and can be
// linked to. New logs and moving statuses come from the live stream, which reloads the list a
// moment later (twice a second at most).
import { useEffect, useRef } from 'preact/hooks'
import { useGet } from '../data.ts'
import { useLive } from '../live.ts'
import type { ViewProps } from '../router.ts'
import { navigate, query } from '../router.ts'
import { Status, View } from '../shell.tsx'
import './imports.css'

type ImportLog = {
  id: number
  asset_type: 'videoasset' | 'audioasset' | 'imageasset'
  asset_path: string
  status: string
  error: string
  warning: Record<string, string>
  asset_import_id: number | null
}

const SHOWN = 100
const RELOAD_AFTER_MS = 500

/** The statuses an import moves through (docs/api.md, Import logs), as the page names them. */
const STATUS_NAMES: Record<string, string> = {
  asset_creation_completed: 'created',
  asset_update_completed: 'updated',
  asset_move_completed: 'moved',
  asset_probe_completed: 'probed',
  asset_proxy_completed: 'proxy made',
  import_completed: 'completed',
  import_failed: 'failed',
}

/** failed (an error: import_failed, or a path refused, whose status is the reason), done, or under way. */
function stateOf(log: ImportLog): { kind: 'failed' | 'done' | 'running'; label: string } {
  if (log.error) return { kind: 'failed', label: log.status === 'import_failed' ? 'failed' : 'refused' }
  if (log.status === 'import_completed') return { kind: 'done', label: 'completed' }
  return { kind: 'running', label: STATUS_NAMES[log.status] ?? log.status }
}

export default function Imports(_: ViewProps) {
  const failedFirst = query.value.get('failed') === 'first'
  const logs = useGet<ImportLog[]>('/api/importlogs/', { limit: SHOWN, ordering: failedFirst ? '-failed' : '-id' })
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  useEffect(() => () => clearTimeout(timer.current), [])
  // A moment after a log is written or moves on, at most once in that moment (a drop of a
  // thousand files imports for minutes: the list is read twice a second, not per event).
  useLive('importlog', () => {
    timer.current ??= setTimeout(() => {
      timer.current = undefined
      logs.reload()
    }, RELOAD_AFTER_MS)
  })

  const list = logs.data.value
  const total = logs.total.value
  return (
    <View title="Imports">
      <div class="toolbar imports-toolbar">
        <label class="check">
          <input
            type="checkbox"
            name="failed-first"
            checked={failedFirst}
            onChange={(event) =>
              navigate(event.currentTarget.checked ? '/imports?failed=first' : '/imports', { replace: true })
            }
          />
          Failed first
        </label>
        {total !== undefined && (
          <p class="muted imports-count" role="status">
            {total === 0
              ? 'No imports yet.'
              : `${total > SHOWN ? `The ${SHOWN} ${failedFirst ? 'first' : 'newest'} of ` : ''}${total.toLocaleString('en')} ${total === 1 ? 'import' : 'imports'}${failedFirst ? ', failed first' : ', newest first'}.`}
          </p>
        )}
      </div>
      <Status loading={!list && logs.loading.value} error={logs.error.value} />
      {list && list.length > 0 && (
        <ul class="imports" aria-label="Imports">
          {list.map((log) => (
            <ImportRow key={log.id} log={log} />
          ))}
        </ul>
      )}
    </View>
  )
}

function ImportRow({ log }: { log: ImportLog }) {
  const state = stateOf(log)
  const warnings = Object.entries(log.warning ?? {})
  const type = log.asset_type.replace(/asset$/, '')
  return (
    <li class={`import import-${state.kind}`} data-import={log.id}>
      <span class={`badge import-state state-${state.kind}`} data-testid="import-state">
        {state.label}
      </span>
      <div class="import-body">
        <p class="path import-path">{log.asset_path}</p>
        <p class="muted import-meta">
          #{log.id} · {type}
          {log.asset_import_id !== null && (
            <>
              {' · '}
              <a href={`/assets/${type}/${log.asset_import_id}`}>
                {type} asset {log.asset_import_id}
              </a>
            </>
          )}
        </p>
        {log.error && <p class="error import-error">{log.error}</p>}
        {warnings.map(([topic, text]) => (
          <p key={topic} class="import-warning">
            <strong>{topic}:</strong> {text}
          </p>
        ))}
      </div>
    </li>
  )
}
