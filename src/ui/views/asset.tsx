// One media asset, at /assets/{video|audio|image}/{id}: a preview of its proxy (or, in its place,
// why the asset is offline: its device's folder missing, or its file), every field of the record,
// its technical details under labels an editor reads (technical.ts), custom metadata, keywords,
// linked projects, import logs and history; a failed import said at the top. A user who may
// change it (write access to its production and browser.change_<kind>asset, or a superuser: what
// the server checks too) edits name, description, approval, dates and custom metadata in place
// (PATCH: only what changed; each error of the answer shown at its field); one who may delete it
// does so after confirming in a dialog (DELETE), and is taken back to the catalogue.
import { type Signal, useSignal } from '@preact/signals'
import { Fragment, type JSX } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { ApiError, del, get, patch } from '../api.ts'
import { useGet } from '../data.ts'
import { assetState, formatDate } from '../format.ts'
import { resets, useLive } from '../live.ts'
import type { ViewProps } from '../router.ts'
import { navigate } from '../router.ts'
import { user } from '../session.ts'
import { Status, View, When } from '../shell.tsx'
import { technicalRows } from '../technical.ts'
import type { Kind } from './assetwindow.ts'
import { VideoPlayer } from './player.tsx'
import './asset.css'

type Asset = {
  id: number
  name: string
  description: string
  production: number
  status_asset: number
  path_file: string
  device: number
  is_archive: boolean
  is_production: boolean
  meta_field_store: Record<string, unknown>
  status_approval: number
  date_crt: string | null
  date_add: string
  date_mod: string
  date_del: string | null
  keywords: Record<string, string[]>
  technical: Record<string, unknown>
  path_proxy: string
  projects: number[]
  modified_by: string | null
  /** The poster frame (a video's), thumbnail (an image's) or waveform (an audio's); '' or absent when none. */
  poster_url?: string
  /** A video's thumbnail strip index; '' or absent when none. */
  strip_url?: string
}
type Production = { id: number; name: string }
type Device = { id: number; name: string; display_name: string; path: string }
/** What GET /api/devices/{id}/status/ says of a device that matters here: its folder there or not, and why. */
type DeviceStatus = { device: number; online: boolean; reason?: string }
type MetaField = { id: number; key: string; value: string; order: number; validation_rule: string }
type ImportLog = { id: number; asset_path: string; status: string; error: string; warning: Record<string, string> }
type HistoryRow = {
  id: number
  date: string
  user: string
  via: string
  action: string
  changes: Record<string, { old: unknown; new: unknown }>
}
type Project = { id: number; name: string; bundle_root: string }

const TYPES = new Set(['video', 'audio', 'image'])
const STATUS: Record<number, string> = { 0: 'Under way', 6: 'Done', [-1]: 'Failed' }
const HISTORY_PAGE = 50

/** A value of a record (custom metadata, a change) as text. */
function shown(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—'
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return JSON.stringify(value)
}

/** A changed value of `field` as text: the dates (date_add, date_crt, ...) as every date is shown. */
const changed = (field: string, value: unknown) =>
  field.startsWith('date_') && typeof value === 'string' ? formatDate(value) : shown(value)

/** The device whose folder holds `path`: the one with the longest path it lies in. */
function deviceOf(path: string, devices: readonly Device[]): Device | undefined {
  const slashed = (p: string) => p.replaceAll('\\', '/')
  const file = slashed(path)
  let best: Device | undefined
  for (const d of devices) {
    const root = slashed(d.path).replace(/\/?$/, '/')
    if (file.startsWith(root) && (!best || root.length > slashed(best.path).replace(/\/?$/, '/').length)) best = d
  }
  return best
}

const deviceName = (device: Device | undefined, id: number) =>
  device ? device.display_name || device.name : `Device ${id}`

/**
 * The status of device `id` (undefined: not asked yet, or no answer yet; `failed`: the request
 * failed, and the page then plays the proxy as if the folder were there). Asked again when
 * `round` changes (the record changed: a scan may have marked the file offline or back) and after
 * the live stream may have missed events.
 */
function useDeviceStatus(id: number | undefined, round: unknown) {
  const answer = useSignal<{ status?: DeviceStatus; failed: boolean } | undefined>(undefined)
  const reset = resets.value
  useEffect(() => {
    if (id === undefined) return
    const abort = new AbortController()
    get<DeviceStatus>(`/api/devices/${id}/status/`, undefined, abort.signal).then(
      (a) => (answer.value = { status: a.data, failed: false }),
      () => {
        if (!abort.signal.aborted) answer.value = { failed: true }
      },
    )
    return () => abort.abort()
  }, [id, round, reset])
  return answer.value
}

const title = (kind: string) => `${kind[0]!.toUpperCase()}${kind.slice(1)}`

export default function AssetView({ params }: ViewProps) {
  const kind = (TYPES.has(params.type ?? '') ? params.type! : 'video') as Kind
  const id = params.id ?? ''
  const path = `/api/${kind}assets/${encodeURIComponent(id)}/`
  const asset = useGet<Asset>(path)
  const history = useSignal(HISTORY_PAGE)
  const changes = useGet<HistoryRow[]>('/api/history/', { resource: `${kind}asset`, id, limit: history.value })
  const editing = useSignal(false)
  const deleting = useRef(false)
  const saved = useSignal('')

  // A change made elsewhere (another user, the watcher) shows at once; never while this page deletes it.
  useLive('asset', (event) => {
    if (deleting.current || event.type !== `${kind}asset` || String(event.id) !== id || event.action === 'delete')
      return
    if (!editing.peek()) asset.reload()
    changes.reload()
  })

  const record = asset.data.value
  const me = user.value
  const write = Boolean(
    record &&
      me &&
      (me.is_superuser ||
        (me.productions as { id: number; level: string }[] | undefined)?.some(
          (p) => p.id === record.production && p.level === 'write',
        )),
  )
  const perms = (me?.perms as string[] | undefined) ?? []
  const canEdit = write && (me!.is_superuser || perms.includes(`browser.change_${kind}asset`))
  const canDelete = write && (me!.is_superuser || perms.includes(`browser.delete_${kind}asset`))
  const editButton = useRef<HTMLButtonElement>(null)
  const devices = useGet<Device[]>('/api/devices/')
  const deviceStatus = useDeviceStatus(record?.device, record?.date_mod)
  /** The folder of the asset's device is not there: the file cannot be reached, whatever the record says. */
  const folderMissing = deviceStatus?.status?.online === false

  const heading = record?.name || `${title(kind)} asset ${id}`
  return (
    <View
      title={heading}
      actions={
        record && (canEdit || canDelete) ? (
          <div class="asset-actions">
            {canEdit && !editing.value && (
              <button
                type="button"
                ref={editButton}
                onClick={() => {
                  saved.value = ''
                  editing.value = true
                }}
              >
                Edit
              </button>
            )}
            {canDelete && <DeleteAsset kind={kind} record={record} deleting={deleting} />}
          </div>
        ) : undefined
      }
    >
      <Status loading={asset.loading.value && !record} error={asset.error.value} />
      {saved.value && (
        <p class="asset-saved" role="status">
          {saved.value}
        </p>
      )}
      {record && (
        <div class="asset-page">
          {record.status_asset === -1 && <ImportFailed record={record} />}
          <Preview
            kind={kind}
            record={record}
            devices={devices.data.value}
            devicesFailed={!!devices.error.value}
            deviceStatus={deviceStatus}
          />
          {editing.value ? (
            <EditAsset
              kind={kind}
              record={record}
              onDone={(updated) => {
                editing.value = false
                if (updated) {
                  asset.data.value = updated
                  saved.value = 'Saved.'
                  changes.reload()
                }
                // Focus goes back where the form was opened from.
                requestAnimationFrame(() => editButton.current?.focus())
              }}
            />
          ) : (
            <Fields kind={kind} record={record} devices={devices.data.value} folderMissing={folderMissing} />
          )}
          <Technical kind={kind} record={record} />
          {!editing.value && <Metadata kind={kind} record={record} />}
          <Keywords record={record} />
          <Projects record={record} />
          <ImportLogs record={record} />
          <History
            rows={changes.data.value}
            total={changes.total.value}
            error={changes.error.value}
            more={() => (history.value += HISTORY_PAGE)}
          />
        </div>
      )}
    </View>
  )
}

/** Said above everything when the asset's import failed: the newest failed import's error. */
function ImportFailed({ record }: { record: Asset }) {
  const logs = useGet<ImportLog[]>('/api/importlogs/', { asset_import_id: record.id, ordering: '-failed', limit: 1 })
  const error = logs.data.value?.[0]?.error
  return (
    <p class="asset-notice asset-notice-failed" data-testid="asset-import-failed">
      <strong>Import failed</strong>
      {error ? `: ${error}${/[.!?]$/.test(error) ? '' : '.'}` : '.'} The record may lack what the import would have
      added (technical details, a proxy); <a href="#asset-imports">its import logs</a> say more.
    </p>
  )
}

/**
 * The proxy played, or in its place why it cannot be: the folder of the asset's device is not
 * there (the device status says why), or the file is not where it was last seen. Nothing is shown
 * until the device's status has answered, so that a missing folder never shows as a dead player.
 */
function Preview({
  kind,
  record,
  devices,
  devicesFailed,
  deviceStatus,
}: {
  kind: Kind
  record: Asset
  devices: Device[] | undefined
  devicesFailed: boolean
  deviceStatus: ReturnType<typeof useDeviceStatus>
}) {
  if (!deviceStatus || (!devices && !devicesFailed)) return null
  const device = devices?.find((d) => d.id === record.device)
  const here = deviceStatus.status
  const folderMissing = here?.online === false
  // The proxy lies in its production's proxy_root, most often on the asset's device; when on
  // another, that device's folder decides whether it plays.
  const proxyDevice = record.path_proxy && devices ? deviceOf(record.path_proxy, devices) : undefined
  const player = !record.path_proxy ? null : proxyDevice && proxyDevice.id !== record.device ? (
    <ProxyElsewhere kind={kind} record={record} device={proxyDevice} />
  ) : folderMissing ? null : (
    <Player kind={kind} record={record} />
  )
  let notice = null
  if (folderMissing)
    notice = (
      <p class="asset-notice asset-notice-offline" data-testid="asset-offline">
        <strong>Offline</strong>: <FolderOf device={device} id={record.device} /> cannot be reached:{' '}
        {here.reason ?? 'it is not there'}. The file cannot be played or used until the folder is back.
      </p>
    )
  else if (!record.is_production)
    notice = (
      <p class="asset-notice asset-notice-offline" data-testid="asset-offline">
        <strong>Offline</strong>: the file is missing from <span class="path">{record.path_file}</span> (moved, renamed
        or deleted outside Reelhouse?).{player && ' The preview below is its proxy.'}
      </p>
    )
  if (!notice && !player) return null
  return (
    <section class="asset-preview" aria-label="Preview">
      {notice}
      {player}
    </section>
  )
}

/** "the folder of device “Name” (/its/path/)". */
function FolderOf({ device, id }: { device: Device | undefined; id: number }) {
  return (
    <>
      the folder of device “{deviceName(device, id)}”
      {device && (
        <>
          {' '}
          (<span class="path">{device.path}</span>)
        </>
      )}
    </>
  )
}

/** The proxy on a device other than the asset's: played while that device's folder is there. */
function ProxyElsewhere({ kind, record, device }: { kind: Kind; record: Asset; device: Device }) {
  const status = useGet<DeviceStatus>(`/api/devices/${device.id}/status/`)
  const there = status.data.value
  if (!there && !status.error.value) return null
  if (there && !there.online)
    return (
      <p class="asset-notice asset-notice-offline" data-testid="asset-proxy-offline">
        The preview cannot be played: <FolderOf device={device} id={device.id} />, which holds the proxy, cannot be
        reached: {there.reason ?? 'it is not there'}.
      </p>
    )
  return <Player kind={kind} record={record} />
}

/**
 * The proxy: a video in the timecode player (player.tsx), an audio in <audio>, an image in <img>;
 * a proxy that cannot be loaded says so instead of a dead element.
 */
function Player({ kind, record }: { kind: Kind; record: Asset }) {
  const broken = useSignal(false)
  const src = `/api/${kind}assets/${record.id}/proxy/`
  const label = `Preview of ${record.name}`
  if (broken.value)
    return (
      <p class="asset-notice asset-notice-offline" data-testid="asset-proxy-broken">
        The preview could not be loaded: its proxy file is missing or cannot be read.
      </p>
    )
  const onError = () => (broken.value = true)
  return (
    <>
      {kind === 'video' && <VideoPlayer kind={kind} record={record} src={src} onError={onError} />}
      {kind === 'audio' && record.poster_url && (
        <img class="asset-waveform" src={record.poster_url} alt={`Waveform of ${record.name}`} />
      )}
      {kind === 'audio' && <audio controls preload="metadata" src={src} aria-label={label} onError={onError} />}
      {kind === 'image' && <img src={src} alt={label} onError={onError} />}
    </>
  )
}

function Fields({
  kind,
  record,
  devices,
  folderMissing,
}: {
  kind: Kind
  record: Asset
  devices: Device[] | undefined
  folderMissing: boolean
}) {
  const productions = useGet<Production[]>('/api/productions/')
  const production = productions.data.value?.find((p) => p.id === record.production)
  const device = devices?.find((d) => d.id === record.device)
  const state = assetState(record.status_asset, record.is_production)
  return (
    <section class="asset-section" aria-labelledby="asset-fields">
      <h2 id="asset-fields">Record</h2>
      <dl class="fields">
        <dt>Name</dt>
        <dd>{record.name}</dd>
        <dt>Description</dt>
        <dd class="asset-description">{record.description || '—'}</dd>
        <dt>Kind</dt>
        <dd>{title(kind)}</dd>
        <dt>Production</dt>
        <dd>
          <a href={`/assets?production=${record.production}`}>
            {production?.name ?? `Production ${record.production}`}
          </a>
        </dd>
        <dt>Path</dt>
        <dd class="path">{record.path_file}</dd>
        <dt>Device</dt>
        <dd>
          <a href={`/assets?device=${record.device}`}>{deviceName(device, record.device)}</a>
        </dd>
        <dt>Storage</dt>
        <dd
          class={record.is_production && !folderMissing ? 'asset-online' : 'asset-offline'}
          data-testid="asset-storage"
        >
          {folderMissing
            ? "Offline (its device's folder cannot be reached)"
            : record.is_production
              ? 'Online'
              : 'Offline (the file is not where it was last seen)'}
          {state.tone === 'failed' && <span class="asset-failed">, import failed</span>}
        </dd>
        <dt>Approval</dt>
        <dd>{record.status_approval === 1 ? 'Approved' : 'Pending'}</dd>
        <dt>Import</dt>
        <dd class={`asset-${state.tone}`} data-testid="asset-import">
          {STATUS[record.status_asset] ?? String(record.status_asset)}
        </dd>
        <dt>Archived</dt>
        <dd>{record.is_archive ? 'Yes' : 'No'}</dd>
        <dt>Created</dt>
        <dd>
          <When value={record.date_crt} />
        </dd>
        <dt>Added</dt>
        <dd>
          <When value={record.date_add} />
        </dd>
        <dt>Changed</dt>
        <dd>
          <When value={record.date_mod} />
          {record.modified_by ? ` by ${record.modified_by}` : ''}
        </dd>
        <dt>Due for deletion</dt>
        <dd>
          <When value={record.date_del} />
        </dd>
        <dt>Proxy</dt>
        <dd class="path">{record.path_proxy || 'none'}</dd>
        <dt>Id</dt>
        <dd>{record.id}</dd>
      </dl>
    </section>
  )
}

function Technical({ kind, record }: { kind: Kind; record: Asset }) {
  const rows = technicalRows(record.technical ?? {}, kind)
  return (
    <section class="asset-section" aria-labelledby="asset-technical">
      <h2 id="asset-technical">Technical details</h2>
      {rows.length === 0 ? (
        <p class="muted">None probed or imported.</p>
      ) : (
        <dl class="fields asset-technical">
          {rows.map((row) => (
            <Fragment key={row.key}>
              <dt title={row.key === 'resolution' ? 'width × height' : row.key}>{row.label}</dt>
              <dd data-key={row.key}>
                {row.items ? (
                  <ul class="asset-plain">
                    {row.items.map((item, i) => (
                      <li key={i}>{item}</li>
                    ))}
                  </ul>
                ) : row.date ? (
                  <When value={row.date} />
                ) : (
                  row.value
                )}
              </dd>
            </Fragment>
          ))}
        </dl>
      )}
    </section>
  )
}

/** The custom metadata fields of a kind, in their order (GET /api/custommetadata/). */
function useMetaFields(kind: Kind) {
  const fields = useGet<MetaField[]>('/api/custommetadata/', { content_type_name: `${kind}asset` })
  const list = [...(fields.data.value ?? [])].sort((a, b) => a.order - b.order || a.id - b.id)
  return { list, loading: fields.loading.value }
}

function Metadata({ kind, record }: { kind: Kind; record: Asset }) {
  const { list } = useMetaFields(kind)
  const known = new Set(list.map((f) => f.key))
  const others = Object.keys(record.meta_field_store ?? {}).filter((k) => !known.has(k))
  return (
    <section class="asset-section" aria-labelledby="asset-meta">
      <h2 id="asset-meta">Custom metadata</h2>
      {list.length + others.length === 0 ? (
        <p class="muted">No custom metadata fields for {kind} assets.</p>
      ) : (
        <dl class="fields">
          {list.map((f) => (
            <Fragment key={f.key}>
              <dt>{f.value || f.key}</dt>
              <dd>{shown(record.meta_field_store?.[f.key])}</dd>
            </Fragment>
          ))}
          {others.map((key) => (
            <Fragment key={key}>
              <dt>{key}</dt>
              <dd>{shown(record.meta_field_store[key])}</dd>
            </Fragment>
          ))}
        </dl>
      )}
    </section>
  )
}

function Keywords({ record }: { record: Asset }) {
  const categories = Object.entries(record.keywords ?? {})
  return (
    <section class="asset-section" aria-labelledby="asset-keywords">
      <h2 id="asset-keywords">Keywords</h2>
      {categories.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <dl class="fields">
          {categories.map(([category, words]) => (
            <Fragment key={category}>
              <dt>{category}</dt>
              <dd>
                <ul class="asset-tags">
                  {words.map((w) => (
                    <li key={w}>{w}</li>
                  ))}
                </ul>
              </dd>
            </Fragment>
          ))}
        </dl>
      )}
    </section>
  )
}

function Projects({ record }: { record: Asset }) {
  return (
    <section class="asset-section" aria-labelledby="asset-projects">
      <h2 id="asset-projects">Linked projects</h2>
      {record.projects.length === 0 ? (
        <p class="muted">Not linked to any project.</p>
      ) : (
        <ul class="asset-plain">
          {record.projects.map((id) => (
            <ProjectLink key={id} id={id} />
          ))}
        </ul>
      )}
    </section>
  )
}

function ProjectLink({ id }: { id: number }) {
  const project = useGet<Project>(`/api/projectassets/${id}/`)
  const p = project.data.value
  return (
    <li>
      <a href={`/projects/${id}`}>{p?.name ?? `Project ${id}`}</a>
      {p && <span class="muted path"> {p.bundle_root}</span>}
    </li>
  )
}

function ImportLogs({ record }: { record: Asset }) {
  const logs = useGet<ImportLog[]>('/api/importlogs/', { asset_import_id: record.id, ordering: '-id', limit: 100 })
  const rows = logs.data.value ?? []
  return (
    <section class="asset-section" aria-labelledby="asset-imports">
      <h2 id="asset-imports">Import logs</h2>
      <Status loading={logs.loading.value && !logs.data.value} error={logs.error.value} />
      {logs.data.value && rows.length === 0 && (
        <p class="muted">No import of this asset was logged (it was registered without one).</p>
      )}
      {rows.length > 0 && (
        <ul class="asset-log">
          {rows.map((log) => (
            <li key={log.id}>
              <span class={log.error ? 'state-failed' : 'state-done'}>{log.status}</span>
              <span class="muted"> #{log.id} of </span>
              <span class="path">{log.asset_path}</span>
              {log.error && <p class="asset-log-error">{log.error}</p>}
              {Object.entries(log.warning ?? {}).map(([topic, text]) => (
                <p key={topic} class="muted">
                  Warning ({topic}): {text}
                </p>
              ))}
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

function History({
  rows,
  total,
  error,
  more,
}: {
  rows: HistoryRow[] | undefined
  total: number | undefined
  error: ApiError | undefined
  more: () => void
}) {
  return (
    <section class="asset-section asset-wide" aria-labelledby="asset-history">
      <h2 id="asset-history">History</h2>
      <Status loading={!rows && !error} error={error} />
      {rows && rows.length === 0 && <p class="muted">No change recorded.</p>}
      {rows && rows.length > 0 && (
        <ol class="asset-history">
          {rows.map((row) => (
            <li key={row.id}>
              <p class="asset-history-head">
                <strong>{row.action}</strong> by {row.user}{' '}
                <span class="muted">
                  ({row.via}) <When value={row.date} />
                </span>
              </p>
              <ul class="asset-changes">
                {Object.entries(row.changes ?? {})
                  .filter(([field]) => field !== 'date_mod')
                  .map(([field, change]) => (
                    <li key={field}>
                      <span class="asset-change-field">{field}</span>:{' '}
                      {row.action === 'create'
                        ? changed(field, change.new)
                        : row.action === 'delete'
                          ? changed(field, change.old)
                          : `${changed(field, change.old)} → ${changed(field, change.new)}`}
                    </li>
                  ))}
              </ul>
            </li>
          ))}
        </ol>
      )}
      {rows && total !== undefined && total > rows.length && (
        <button type="button" onClick={more}>
          Show older changes ({total - rows.length} more)
        </button>
      )}
    </section>
  )
}

/** The form's text of a record's value (dates and metadata as the API answers them). */
const textOf = (value: unknown) =>
  value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value)

type Draft = Record<string, string>

function EditAsset({ kind, record, onDone }: { kind: Kind; record: Asset; onDone: (updated?: Asset) => void }) {
  const { list: metaFields } = useMetaFields(kind)
  const initial: Draft = {
    name: record.name,
    description: record.description,
    status_approval: String(record.status_approval),
    date_crt: textOf(record.date_crt),
    date_add: textOf(record.date_add),
    date_del: textOf(record.date_del),
  }
  for (const f of metaFields) initial[`meta:${f.key}`] = textOf(record.meta_field_store?.[f.key])
  const draft = useSignal<Draft>({})
  const error = useSignal<ApiError | undefined>(undefined)
  const busy = useSignal(false)
  const form = useRef<HTMLFormElement>(null)
  const valueOf = (name: string) => draft.value[name] ?? initial[name] ?? ''
  const edit = (name: string) => (e: Event) =>
    (draft.value = { ...draft.value, [name]: (e.currentTarget as HTMLInputElement).value })

  useEffect(() => {
    form.current?.querySelector<HTMLInputElement>('input, textarea, select')?.focus()
  }, [])

  async function submit(event: Event) {
    event.preventDefault()
    const body: Record<string, unknown> = {}
    const meta: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(draft.value)) {
      if (value === (initial[name] ?? '')) continue
      if (name.startsWith('meta:')) meta[name.slice(5)] = value === '' ? null : value
      else if (name === 'status_approval') body.status_approval = Number(value)
      else if (name === 'date_crt' || name === 'date_del') body[name] = value.trim() === '' ? null : value.trim()
      else if (name === 'date_add') body[name] = value.trim()
      else body[name] = value
    }
    if (Object.keys(meta).length) body.meta_field_store = meta
    if (Object.keys(body).length === 0) return onDone()
    busy.value = true
    error.value = undefined
    try {
      const answer = await patch<Asset>(`/api/${kind}assets/${record.id}/`, body)
      onDone(answer.data)
    } catch (failure) {
      error.value =
        failure instanceof ApiError
          ? failure
          : new ApiError(0, [{ status: '0', code: 'network', title: '', detail: 'The server could not be reached.' }])
      busy.value = false
      // The first field in error takes focus; else the message above the fields.
      requestAnimationFrame(() =>
        (
          form.current?.querySelector<HTMLElement>('[aria-invalid="true"]') ??
          form.current?.querySelector<HTMLElement>('.asset-form-error')
        )?.focus(),
      )
    }
  }

  const failure = error.value
  const pointers = [
    '/name',
    '/description',
    '/status_approval',
    '/date_crt',
    '/date_add',
    '/date_del',
    ...metaFields.map((f) => `/meta_field_store/${f.key}`),
  ]
  // Errors at no field of this form (or at none at all) are said above the fields.
  const general =
    failure &&
    failure.errors
      .filter((e) => !e.source?.pointer || !pointers.includes(e.source.pointer))
      .map((e) => e.detail)
      .join(' ')
  const field = (
    name: string,
    pointer: string,
    label: string,
    input: (props: FieldProps) => JSX.Element,
    hint?: string,
  ) => <Field name={name} pointer={pointer} label={label} hint={hint} failure={failure} input={input} />
  return (
    <form
      ref={form}
      class="asset-section asset-form"
      aria-labelledby="asset-edit"
      onSubmit={(e) => void submit(e)}
      noValidate
    >
      <h2 id="asset-edit">Edit the record</h2>
      {general && (
        <p class="error asset-form-error" role="alert" tabIndex={-1}>
          {general}
        </p>
      )}
      {field('name', '/name', 'Name', (p) => (
        <input {...p} value={valueOf('name')} onInput={edit('name')} required />
      ))}
      {field('description', '/description', 'Description', (p) => (
        <textarea {...p} rows={4} value={valueOf('description')} onInput={edit('description')} />
      ))}
      {field('status_approval', '/status_approval', 'Approval', (p) => (
        <select {...p} value={valueOf('status_approval')} onChange={edit('status_approval')}>
          <option value="0">Pending</option>
          <option value="1">Approved</option>
        </select>
      ))}
      {field(
        'date_crt',
        '/date_crt',
        'Created',
        (p) => (
          <input {...p} value={valueOf('date_crt')} onInput={edit('date_crt')} placeholder="YYYY-MM-DD" />
        ),
        'YYYY-MM-DD, or with a time: YYYY-MM-DD HH:MM (UTC unless a zone follows). Empty: none.',
      )}
      {field(
        'date_add',
        '/date_add',
        'Added',
        (p) => (
          <input {...p} value={valueOf('date_add')} onInput={edit('date_add')} placeholder="YYYY-MM-DD" />
        ),
        'As above; it cannot be empty.',
      )}
      {field(
        'date_del',
        '/date_del',
        'Due for deletion',
        (p) => (
          <input {...p} value={valueOf('date_del')} onInput={edit('date_del')} placeholder="YYYY-MM-DD" />
        ),
        'As above. Empty: none. Nothing is ever deleted automatically.',
      )}
      {metaFields.length > 0 && (
        <fieldset class="asset-meta-fields">
          <legend>Custom metadata</legend>
          {metaFields.map((f) =>
            field(
              `meta:${f.key}`,
              `/meta_field_store/${f.key}`,
              f.value || f.key,
              (p) => <input {...p} value={valueOf(`meta:${f.key}`)} onInput={edit(`meta:${f.key}`)} />,
              f.validation_rule ? `Must match ${f.validation_rule}` : undefined,
            ),
          )}
        </fieldset>
      )}
      <div class="asset-form-buttons">
        <button type="submit" class="primary" disabled={busy.value}>
          {busy.value ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={() => onDone()} disabled={busy.value}>
          Cancel
        </button>
      </div>
    </form>
  )
}

type FieldProps = { id: string; name: string; 'aria-invalid'?: 'true'; 'aria-describedby'?: string }

/** A labelled control with its hint and, after a refused save, the errors at its pointer. */
function Field({
  name,
  pointer,
  label,
  hint,
  failure,
  input,
}: {
  name: string
  pointer: string
  label: string
  hint?: string
  failure?: ApiError
  input: (props: FieldProps) => JSX.Element
}) {
  const id = `asset-edit-${name.replace(/[^a-z0-9_-]/gi, '-')}`
  const problem = failure?.at(pointer)
  const described = [hint ? `${id}-hint` : '', problem ? `${id}-error` : ''].filter(Boolean).join(' ')
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {input({ id, name, 'aria-invalid': problem ? 'true' : undefined, 'aria-describedby': described || undefined })}
      {hint && (
        <p class="muted asset-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {problem && (
        <p class="field-error" id={`${id}-error`}>
          {problem}
        </p>
      )}
    </div>
  )
}

function DeleteAsset({ kind, record, deleting }: { kind: Kind; record: Asset; deleting: { current: boolean } }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const busy = useSignal(false)
  const error: Signal<string> = useSignal('')
  async function confirm() {
    busy.value = true
    error.value = ''
    deleting.current = true
    try {
      await del(`/api/${kind}assets/${record.id}/`)
      dialog.current?.close()
      navigate('/assets')
    } catch (failure) {
      deleting.current = false
      busy.value = false
      error.value = failure instanceof ApiError ? failure.message : 'The server could not be reached.'
    }
  }
  return (
    <>
      <button
        type="button"
        class="danger"
        onClick={() => {
          error.value = ''
          dialog.current?.showModal()
        }}
      >
        Delete…
      </button>
      <dialog
        ref={dialog}
        class="asset-dialog"
        aria-labelledby="asset-delete-title"
        aria-describedby="asset-delete-what"
      >
        <h2 id="asset-delete-title">Delete “{record.name}”?</h2>
        <p id="asset-delete-what">
          The record goes, with its keywords, its links to projects and its proxy. The file itself stays on disk at{' '}
          <span class="path">{record.path_file}</span>, and the watcher will not import it again.
        </p>
        {error.value && (
          <p class="error" role="alert">
            {error.value}
          </p>
        )}
        <div class="asset-form-buttons">
          <button type="button" class="danger" disabled={busy.value} onClick={() => void confirm()}>
            {busy.value ? 'Deleting…' : 'Delete the record'}
          </button>
          <button type="button" autoFocus disabled={busy.value} onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  )
}
