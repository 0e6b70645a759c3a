// Devices (docs/operations.md, The web page): per device its folder (there or not, and why), its file system's
// free and total space, how the watcher watches it (events, polling, unavailable, with the
// reason), its media assets online and offline (the offline ones one click away, in the
// catalogue), its scan under way and the last one that ended, and a rescan button for those who
// may (superuser or browser.change_device). Read from GET /api/devices/ and
// GET /api/devices/status/ (docs/api.md, Devices); kept current by the live stream: a scan's
// task events move its bar, and a scan that ends or an asset that goes offline or online reloads
// the statuses. Scan events go to superusers only: others who may rescan follow their scan by
// reading its task.
import { type Signal, useSignal } from '@preact/signals'
import { useEffect, useRef } from 'preact/hooks'
import { ApiError, get, post } from '../api.ts'
import { useGet } from '../data.ts'
import { formatBytes } from '../format.ts'
import { tasks as liveTasks, useLive } from '../live.ts'
import type { ViewProps } from '../router.ts'
import { type Task, TaskProgress } from '../progress.tsx'
import { user } from '../session.ts'
import { Status, View, When } from '../shell.tsx'
import './devices.css'

type Device = { id: number; name: string; display_name: string; path: string }
type Scan = {
  task: number
  state: Task['state']
  date_add: string
  date_start: string | null
  date_end: string | null
  files_done: number
  files_total: number
  error: string
  counts: Record<string, number>
}
type DeviceStatus = {
  device: number
  online: boolean
  reason?: string
  space: { total: number; free: number } | null
  watch: { mode: 'events' | 'polling' | 'unavailable'; ready: boolean; reason?: string } | null
  assets: { online: number; offline: number }
  scan: Scan | null
  last_scan: Scan | null
}

const RESCAN_PERM = 'browser.change_device'
/** A burst of events (a scan marking many assets offline) reloads the statuses once per this. */
const RELOAD_AFTER_MS = 500
/** How often a scan is read while its events do not reach this user (not a superuser). */
const POLL_MS = 1000

const mayRescan = () => {
  const u = user.value
  return !!u && (u.is_superuser || (Array.isArray(u.perms) && (u.perms as string[]).includes(RESCAN_PERM)))
}

/** A scan as a task (the shape TaskProgress shows). */
const scanTask = (scan: Scan, device: number): Task => ({
  id: scan.task,
  kind: 'scan',
  state: scan.state,
  target: { device },
  bytes_done: 0,
  bytes_total: 0,
  files_done: scan.files_done,
  files_total: scan.files_total,
  error: scan.error,
})

export default function Devices(_: ViewProps) {
  const devices = useGet<Device[]>('/api/devices/')
  const statuses = useGet<DeviceStatus[]>('/api/devices/status/')
  // Reload the statuses a moment after a change, at most once in that moment: a scan marking
  // thousands of assets offline reloads them every RELOAD_AFTER_MS while it goes, not per event.
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  const reloadSoon = () => {
    timer.current ??= setTimeout(() => {
      timer.current = undefined
      statuses.reload()
    }, RELOAD_AFTER_MS)
  }
  useEffect(() => () => clearTimeout(timer.current), [])
  useLive('asset', (event) => {
    if (event.action !== 'updated' && event.action !== 'moved') reloadSoon()
  })
  useLive('task', (event) => {
    if (event.kind === 'scan' && (event.state === 'done' || event.state === 'failed')) reloadSoon()
  })

  const list = devices.data.value
  const byId = new Map((statuses.data.value ?? []).map((s) => [s.device, s]))
  const error = devices.error.value ?? statuses.error.value
  return (
    <View title="Devices">
      <Status loading={!list && devices.loading.value} error={error} />
      {list && list.length === 0 && (
        <p class="muted">No devices yet. A device is a folder the server stores media in (POST /api/devices/).</p>
      )}
      {list && list.length > 0 && (
        <ul class="devices">
          {list.map((device) => (
            <DeviceCard
              key={device.id}
              device={device}
              status={byId.get(device.id)}
              loading={statuses.loading}
              reload={statuses.reload}
            />
          ))}
        </ul>
      )}
    </View>
  )
}

function DeviceCard({
  device,
  status,
  loading,
  reload,
}: {
  device: Device
  status?: DeviceStatus
  loading: Signal<boolean>
  reload: () => void
}) {
  const name = device.display_name || device.name
  const headingId = `device-${device.id}-name`
  return (
    <li class="device" aria-labelledby={headingId} data-device={device.id}>
      <div class="device-head">
        <h2 id={headingId}>{name}</h2>
        {status && (
          <span class={`badge ${status.online ? 'badge-ok' : 'badge-bad'}`} data-testid="device-online">
            {status.online ? 'Online' : 'Offline'}
          </span>
        )}
      </div>
      <p class="path device-path">{device.path}</p>
      {!status ? (
        <p class="muted">{loading.value ? 'Looking at the device…' : 'Its status could not be read.'}</p>
      ) : (
        <>
          {!status.online && status.reason && (
            <p class="error device-reason">The folder cannot be read: {status.reason}.</p>
          )}
          <dl class="fields device-fields">
            <dt>Space</dt>
            <dd>
              <Space space={status.space} name={name} />
            </dd>
            <dt>Watching</dt>
            <dd data-testid="device-watch">
              <Watch watch={status.watch} />
            </dd>
            <dt>Assets</dt>
            <dd data-testid="device-assets">
              <span data-testid="device-online-count">{status.assets.online.toLocaleString('en')}</span> online
              {' · '}
              <a href={`/assets?device=${device.id}&online=false`} data-testid="device-offline-link">
                <span data-testid="device-offline-count">{status.assets.offline.toLocaleString('en')}</span> offline
                <span class="visually-hidden"> on {name}</span>
              </a>
            </dd>
            <dt>Last scan</dt>
            <dd data-testid="device-last-scan">
              <LastScan scan={status.last_scan} />
            </dd>
          </dl>
          <Rescan device={device} name={name} status={status} reload={reload} />
        </>
      )}
    </li>
  )
}

function Space({ space, name }: { space: DeviceStatus['space']; name: string }) {
  if (!space) return <span class="muted">unknown while the folder cannot be read</span>
  const used = Math.max(0, space.total - space.free)
  return (
    <span class="device-space">
      <meter
        aria-label={`Space used on ${name}`}
        min={0}
        max={space.total || 1}
        value={used}
        low={space.total * 0.8}
        high={space.total * 0.95}
        optimum={0}
      />
      <span>
        {formatBytes(space.free)} free of {formatBytes(space.total)}
      </span>
    </span>
  )
}

function Watch({ watch }: { watch: DeviceStatus['watch'] }) {
  if (!watch)
    return <span class="muted">not watched (the watcher does not run, or has not taken the device up yet)</span>
  const mode = { events: 'by change events', polling: 'by polling', unavailable: 'not possible' }[watch.mode]
  return (
    <span>
      <span class={watch.mode === 'unavailable' ? 'state-failed' : undefined}>{mode}</span>
      {!watch.ready && watch.mode !== 'unavailable' && ' (starting)'}
      {watch.reason && <span class="muted">: {watch.reason}</span>}
    </span>
  )
}

const COUNT_NAMES: Record<string, string> = {
  seen: 'seen',
  offline: 'went offline',
  online: 'came back',
  moved: 'moved',
  relinked: 'relinked',
  imported: 'imported',
}

function LastScan({ scan }: { scan: Scan | null }) {
  if (!scan) return <span class="muted">none yet</span>
  const when = scan.date_end ?? scan.date_add
  const counts = Object.entries(scan.counts).filter(([key, n]) => n > 0 && key in COUNT_NAMES)
  return (
    <span data-task={scan.task}>
      <span class={`state state-${scan.state}`}>{scan.state}</span> <When value={when} />
      {scan.state === 'failed' && scan.error && <span class="error">: {scan.error}</span>}
      {counts.length > 0 && (
        <span class="muted">
          {' · '}
          {counts.map(([key, n]) => `${n.toLocaleString('en')} ${COUNT_NAMES[key]}`).join(', ')}
        </span>
      )}
    </span>
  )
}

/**
 * The scan under way (the status's, or the one asked for here) with its bar, and the rescan
 * button. The bar follows the task's live events; a user who gets none (not a superuser) reads
 * the task once a second until it ends.
 */
function Rescan({
  device,
  name,
  status,
  reload,
}: {
  device: Device
  name: string
  status: DeviceStatus
  reload: () => void
}) {
  const asked = useSignal<Task | undefined>(undefined)
  const polled = useSignal<Task | undefined>(undefined)
  const busy = useSignal(false)
  const failure = useSignal<string | undefined>(undefined)
  const allowed = mayRescan()

  // The scan to show: the one asked for here until the status has caught up with it, else the status's.
  const open = status.scan ? scanTask(status.scan, device.id) : undefined
  const lastEnded = status.last_scan?.task ?? 0
  const mine = asked.value && asked.value.id > lastEnded ? asked.value : undefined
  const base = mine ?? open
  const live = base ? liveTasks.value.get(base.id) : undefined
  const shown = base && (polled.value?.id === base.id ? polled.value : undefined)
  const task = base && { ...base, ...shown, ...(live ?? {}) }
  const running = !!task && (task.state === 'queued' || task.state === 'running')

  // Not a superuser: no scan events; read the task until it ends, then the status.
  const followed = running && !user.value?.is_superuser ? task!.id : undefined
  useEffect(() => {
    if (followed === undefined) return
    let stop = false
    let timer: ReturnType<typeof setTimeout>
    const tick = async () => {
      try {
        const { data } = await get<Task>(`/api/tasks/${followed}/`)
        if (stop) return
        polled.value = data
        if (data.state === 'done' || data.state === 'failed') return reload()
      } catch {
        if (stop) return
      }
      timer = setTimeout(tick, POLL_MS)
    }
    timer = setTimeout(tick, POLL_MS)
    return () => {
      stop = true
      clearTimeout(timer)
    }
  }, [followed])

  const rescan = async () => {
    busy.value = true
    failure.value = undefined
    try {
      const { data } = await post<Task>(`/api/devices/${device.id}/scan/`)
      asked.value = data
    } catch (error) {
      failure.value = error instanceof ApiError ? error.message : 'The server could not be reached.'
    } finally {
      busy.value = false
    }
  }

  const hintId = `device-${device.id}-rescan-hint`
  return (
    <div class="device-scan">
      {task && (running || task.id === asked.value?.id) && <TaskProgress task={task} label={`Scan of ${name}`} />}
      {allowed && (
        <div class="device-actions">
          <button
            type="button"
            onClick={rescan}
            disabled={busy.value || !status.online}
            aria-describedby={!status.online ? hintId : undefined}
            data-testid="rescan"
          >
            {busy.value ? 'Asking…' : running ? 'Scan again after this one' : 'Rescan'}
            <span class="visually-hidden"> {name}</span>
          </button>
          {!status.online && (
            <span id={hintId} class="muted">
              A device whose folder cannot be read cannot be scanned.
            </span>
          )}
        </div>
      )}
      {failure.value && (
        <p class="error" role="alert">
          {failure.value}
        </p>
      )}
    </div>
  )
}
