// Projects (docs/operations.md, The web page). `/projects`: the projects of one production (a selector, kept in
// the address as ?production=ID), each with its state and the live bar of a copy or delete under
// way, and a form to create one. `/projects/{id}`: one project, its fields, the bar of its newest
// copy or delete (the task list's newest for it, then its live events), copying it (a target
// production and folder, sharing its linked media), deleting it (confirmed by typing its name),
// and its linked media: each unlinked with a button, more found with the search API within the
// project's production and linked with a button per hit.
import { type Signal, useSignal } from '@preact/signals'
import type { ComponentChildren } from 'preact'
import { ApiError, api, post } from '../api.ts'
import { useGet } from '../data.ts'
import { formatBytes } from '../format.ts'
import { tasks as liveTasks, useLive } from '../live.ts'
import type { ViewProps } from '../router.ts'
import { type Task, TaskProgress, newer } from '../progress.tsx'
import { navigate, query } from '../router.ts'
import { user } from '../session.ts'
import { Status, View, When } from '../shell.tsx'
import { searchText } from './assetwindow.ts'
import './projects.css'

type Media = { id: number; name: string; path_file: string; production: number }
type Project = {
  id: number
  name: string
  description: string
  bundle_root: string
  path_file: string
  type: string
  status_asset: number
  status_asset_description: string
  is_production: boolean
  date_add: string
  date_del: string | null
  files: { count: number; bytes: number }
  production: number
  audio_assets: Media[]
  image_assets: Media[]
  video_assets: Media[]
  modified_by?: string | null
}
type Production = { id: number; name: string; storage_root: string; can_write: boolean }
type Hit = { type: string; id: number; name: string; path: string; production: number }
type TaskRef = { id: number; state: Task['state']; url: string }
type Created = Project & { task?: TaskRef }
type MediaKind = 'video' | 'audio' | 'image'

const PA = '/api/projectassets/'
const networkError = () =>
  new ApiError(0, [{ status: '0', code: 'network', title: '', detail: 'The server could not be reached.' }])
const asApiError = (error: unknown) => (error instanceof ApiError ? error : networkError())
const perms = () => (user.value?.perms as string[] | undefined) ?? []

export default function Projects({ params }: ViewProps) {
  const id = Number(params.id)
  if (params.id === undefined) return <ProjectList />
  if (!Number.isInteger(id) || id < 1)
    return (
      <View title="Project">
        <p class="error" role="alert">
          There is no project at this address.
        </p>
      </View>
    )
  return <ProjectPage id={id} />
}

// ---------------------------------------------------------------- the list

function ProjectList() {
  const productions = useGet<Production[]>('/api/productions/')
  const all = productions.data.value
  const asked = Number(query.value.get('production'))
  const production = all?.find((p) => p.id === asked) ?? all?.[0]
  return (
    <View title="Projects">
      <Status loading={productions.loading.value} error={productions.error.value} />
      {all && !all.length && <p class="muted">No productions yet: a project belongs to a production.</p>}
      {production && (
        <>
          <div class="toolbar">
            <label for="projects-production">Production</label>
            <select
              id="projects-production"
              value={production.id}
              onChange={(e) => navigate(`/projects?production=${e.currentTarget.value}`, { replace: true })}
            >
              {all!.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </div>
          <ProductionProjects key={production.id} production={production} />
          {production.can_write && <CreateProject production={production} />}
        </>
      )}
    </View>
  )
}

/** The newest task of each project among the live events: its copy or delete under way. */
function liveTaskByProject(): Map<number, Task> {
  const byProject = new Map<number, Task>()
  for (const task of liveTasks.value.values()) {
    const project = task.target.projectasset
    if (project === undefined || (task.kind !== 'copy' && task.kind !== 'delete')) continue
    if ((byProject.get(project)?.id ?? 0) < task.id) byProject.set(project, task)
  }
  return byProject
}

function ProductionProjects({ production }: { production: Production }) {
  const projects = useGet<Project[]>(PA, { production: production.id, limit: 500 })
  // A project created, copied, deleted or changed anywhere: the list again.
  useLive('project', () => projects.reload())
  const list = projects.data.value
  const running = liveTaskByProject()
  return (
    <section class="projects-list" aria-labelledby="projects-list-title">
      <h2 id="projects-list-title">Projects of {production.name}</h2>
      <Status loading={projects.loading.value && !list} error={projects.error.value} />
      {list && (
        <p class="muted">
          {list.length < (projects.total.value ?? 0)
            ? `The first ${list.length} of ${projects.total.value} projects`
            : `${list.length} ${list.length === 1 ? 'project' : 'projects'}`}
        </p>
      )}
      {list && list.length > 0 && (
        <table class="projects-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Folder</th>
              <th scope="col">Files</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {list.map((project) => {
              const task = running.get(project.id)
              return (
                <tr key={project.id}>
                  <td>
                    <a href={`/projects/${project.id}`}>{project.name}</a>
                  </td>
                  <td class="path">{project.bundle_root}</td>
                  <td>{filesOf(project)}</td>
                  <td>
                    <ProjectState project={project} />
                    {task && (task.state === 'queued' || task.state === 'running') && (
                      <TaskProgress
                        task={task}
                        label={`${task.kind === 'copy' ? 'Copy' : 'Delete'} of ${project.name}`}
                      />
                    )}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      )}
    </section>
  )
}

const filesOf = (project: Project) =>
  `${project.files.count.toLocaleString('en')} ${project.files.count === 1 ? 'file' : 'files'} · ${formatBytes(project.files.bytes)}`

function ProjectState({ project }: { project: Project }) {
  if (project.date_del) return <span class="state state-running">being deleted</span>
  if (project.status_asset === 0) return <span class="state state-running">being copied</span>
  if (project.status_asset === -1) return <span class="state state-failed">{project.status_asset_description}</span>
  if (!project.is_production) return <span class="state state-failed">offline (its folder is missing)</span>
  return <span class="state state-done">ready</span>
}

// ---------------------------------------------------------------- forms

/** A labelled field with its error from the answer's envelope (by JSON pointer). */
function Field({
  id,
  label,
  error,
  hint,
  children,
}: {
  id: string
  label: string
  error?: string
  hint?: ComponentChildren
  children: ComponentChildren
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint && (
        <p class="muted field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  )
}

/** The aria attributes of an input whose field may show a hint and an error. */
const described = (id: string, error: string | undefined, hint = false) => ({
  'aria-invalid': error ? ('true' as const) : undefined,
  'aria-describedby': [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined,
})

/** The form's fields of these names that are filled in (blank ones left out: the API then says they are required). */
function filled(event: Event, names: string[]): Record<string, string> {
  const form = new FormData(event.currentTarget as HTMLFormElement)
  return Object.fromEntries(
    names.flatMap((name) => {
      const value = String(form.get(name) ?? '').trim()
      return value ? [[name, value]] : []
    }),
  )
}

/** What a form shows above its fields: the errors at no field of its own. */
function generalErrors(failure: ApiError | undefined, fields: string[]): string | undefined {
  if (!failure) return undefined
  const rest = failure.errors.filter(
    (e) => !fields.includes(e.source?.pointer ?? '') && !fields.includes(`?${e.source?.parameter ?? ''}`),
  )
  return rest.length ? rest.map((e) => e.detail).join(' ') : undefined
}

function CreateProject({ production }: { production: Production }) {
  const busy = useSignal(false)
  const failure = useSignal<ApiError | undefined>(undefined)
  async function submit(event: Event) {
    event.preventDefault()
    const body = { ...filled(event, ['name', 'bundle_root', 'path_file']), production_id: production.id }
    busy.value = true
    failure.value = undefined
    try {
      const { data } = await post<Created>(PA, body)
      navigate(`/projects/${data.id}`)
    } catch (error) {
      failure.value = asApiError(error)
    } finally {
      busy.value = false
    }
  }
  const f = failure.value
  const general = generalErrors(f, ['/name', '/bundle_root', '/path_file'])
  return (
    <section class="project-form" aria-labelledby="create-title">
      <h2 id="create-title">New project</h2>
      <form onSubmit={(e) => void submit(e)} noValidate>
        {general && (
          <p class="error" role="alert">
            {general}
          </p>
        )}
        <Field id="create-name" label="Name" error={f?.at('/name')}>
          <input
            id="create-name"
            name="name"
            required
            autocomplete="off"
            {...described('create-name', f?.at('/name'))}
          />
        </Field>
        <Field
          id="create-folder"
          label="Folder"
          error={f?.at('/bundle_root')}
          hint={
            <>
              A folder on a device, made if missing; in this production's folder, <code>{production.storage_root}</code>
              , unless you are a superuser.
            </>
          }
        >
          <input
            id="create-folder"
            name="bundle_root"
            required
            autocomplete="off"
            spellcheck={false}
            class="path"
            placeholder={`${production.storage_root}projects/name/`}
            {...described('create-folder', f?.at('/bundle_root'), true)}
          />
        </Field>
        <Field id="create-file" label="Project file (optional)" error={f?.at('/path_file')}>
          <input
            id="create-file"
            name="path_file"
            autocomplete="off"
            spellcheck={false}
            class="path"
            {...described('create-file', f?.at('/path_file'))}
          />
        </Field>
        <button type="submit" class="primary" disabled={busy.value}>
          {busy.value ? 'Creating…' : 'Create project'}
        </button>
      </form>
    </section>
  )
}

// ---------------------------------------------------------------- one project

/** A task as a copy or delete answered it, before its first event. */
const fromRef = (ref: TaskRef, kind: string, project: number): Task => ({
  id: ref.id,
  kind,
  state: ref.state,
  target: { projectasset: project },
  bytes_done: 0,
  bytes_total: 0,
  files_done: 0,
  files_total: 0,
  error: '',
})

/** The project's newest copy or delete: the newest of the list's, the one asked for here, and the live ones. */
function newestTask(project: number, listed: Task | undefined, asked: Task | undefined): Task | undefined {
  let newest = [listed, asked].reduce<Task | undefined>((a, b) => (b && (!a || b.id > a.id) ? b : a), undefined)
  for (const task of liveTasks.value.values())
    if (
      task.target.projectasset === project &&
      (task.kind === 'copy' || task.kind === 'delete') &&
      task.id > (newest?.id ?? 0)
    )
      newest = task
  if (!newest) return undefined
  const id = newest.id
  return [listed, asked, liveTasks.value.get(id)]
    .filter((t) => t?.id === id)
    .reduce<Task | undefined>((a, b) => newer(a, b), undefined)
}

function ProjectPage({ id }: { id: number }) {
  /** The deleted project's name, once its delete is done. */
  const gone = useSignal<string | undefined>(undefined)
  /** A delete asked for here: events of the project no longer reload it (it is on its way out). */
  const deleting = useSignal(false)
  const asked = useSignal<Task | undefined>(undefined)
  const listed = useGet<Task[]>('/api/tasks/', { projectasset: id, limit: 1 })
  const task = newestTask(
    id,
    listed.data.value?.find((t) => t.kind === 'copy' || t.kind === 'delete'),
    asked.value,
  )
  if (gone.value !== undefined) {
    return (
      <View title={`${gone.value} (deleted)`}>
        <p role="status">This project was deleted with its folder. Its linked media stay in the catalogue.</p>
        {task?.kind === 'delete' && <TaskProgress task={task} label="Delete progress" />}
        <p>
          <a href="/projects">Back to the projects</a>
        </p>
      </View>
    )
  }
  return <ProjectRecord id={id} task={task} deleting={deleting} asked={asked} onGone={(name) => (gone.value = name)} />
}

function ProjectRecord({
  id,
  task,
  deleting,
  asked,
  onGone,
}: {
  id: number
  task: Task | undefined
  deleting: Signal<boolean>
  asked: Signal<Task | undefined>
  onGone: (name: string) => void
}) {
  const project = useGet<Project>(`${PA}${id}/`)
  const productions = useGet<Production[]>('/api/productions/')
  const record = project.data.value
  const leaving = deleting.value || !!record?.date_del
  useLive('project', (event) => {
    if (event.id !== id) return
    if (event.action === 'deleted') onGone(record?.name ?? `Project ${id}`)
    else if (!leaving) project.reload()
  })
  const production = productions.data.value?.find((p) => p.id === record?.production)
  const canWrite = !!production?.can_write
  const label = task?.kind === 'delete' ? 'Delete progress' : 'Copy progress'
  return (
    <View title={record?.name ?? `Project ${id}`}>
      <Status loading={project.loading.value && !record} error={project.error.value} />
      {record && (
        <>
          <p>
            <a href={`/projects?production=${record.production}`}>
              Projects of {production?.name ?? `production ${record.production}`}
            </a>
          </p>
          {task && (
            <section class="project-task" aria-labelledby="project-task-title">
              <h2 id="project-task-title">
                {task.kind === 'delete'
                  ? 'Deleting this project'
                  : task.state === 'done'
                    ? 'Copied'
                    : 'Copying into this project'}
              </h2>
              <TaskProgress task={task} label={label}>
                {' '}
                <a href="/tasks">All tasks</a>
              </TaskProgress>
            </section>
          )}
          <dl class="fields project-fields">
            <dt>Folder</dt>
            <dd class="path">{record.bundle_root}</dd>
            <dt>Project file</dt>
            <dd class="path">{record.path_file || '—'}</dd>
            <dt>Type</dt>
            <dd>{record.type}</dd>
            <dt>State</dt>
            <dd>
              <ProjectState project={record} />
            </dd>
            <dt>Files</dt>
            <dd>{filesOf(record)}</dd>
            <dt>Added</dt>
            <dd>
              <When value={record.date_add} />
            </dd>
            {record.description && (
              <>
                <dt>Description</dt>
                <dd>{record.description}</dd>
              </>
            )}
          </dl>
          <LinkedMedia project={record} canWrite={canWrite && !leaving} reload={project.reload} />
          {canWrite && !leaving && <LinkMedia project={record} reload={project.reload} />}
          {!leaving && perms().includes('browser.copy_projectasset') && (
            <CopyProject project={record} productions={(productions.data.value ?? []).filter((p) => p.can_write)} />
          )}
          {canWrite && !leaving && <DeleteProject project={record} deleting={deleting} asked={asked} />}
        </>
      )}
    </View>
  )
}

function linkedOf(project: Project): { kind: MediaKind; media: Media }[] {
  return [
    ...project.video_assets.map((media) => ({ kind: 'video' as const, media })),
    ...project.audio_assets.map((media) => ({ kind: 'audio' as const, media })),
    ...project.image_assets.map((media) => ({ kind: 'image' as const, media })),
  ]
}

function LinkedMedia({ project, canWrite, reload }: { project: Project; canWrite: boolean; reload: () => void }) {
  const failure = useSignal<string | undefined>(undefined)
  const linked = linkedOf(project)
  async function unlink(kind: MediaKind, media: Media) {
    failure.value = undefined
    try {
      await post(`${PA}${project.id}/unlinkasset/`, { asset_list: [{ asset_id: media.id, type: kind }] })
      reload()
    } catch (error) {
      failure.value = asApiError(error).message
    }
  }
  return (
    <section class="project-media" aria-labelledby="linked-title">
      <h2 id="linked-title">Linked media</h2>
      {failure.value && (
        <p class="error" role="alert">
          {failure.value}
        </p>
      )}
      {linked.length === 0 ? (
        <p class="muted">No media linked yet.</p>
      ) : (
        <ul class="rows" aria-labelledby="linked-title" data-testid="linked">
          {linked.map(({ kind, media }) => (
            <li key={`${kind}${media.id}`}>
              <span>
                <a href={`/assets/${kind}/${media.id}`}>{media.name}</a> <span class="muted">{kind}</span>
                <span class="muted path project-media-path">{media.path_file}</span>
              </span>
              {canWrite && (
                <button type="button" aria-label={`Unlink ${media.name}`} onClick={() => void unlink(kind, media)}>
                  Unlink
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

function LinkMedia({ project, reload }: { project: Project; reload: () => void }) {
  const words = useSignal('')
  const q = words.value.trim()
  return (
    <section class="project-media" aria-labelledby="link-title">
      <h2 id="link-title">Link media</h2>
      <form role="search" class="toolbar" onSubmit={(e) => e.preventDefault()}>
        <label for="link-q">Find media of this production</label>
        <input
          id="link-q"
          type="search"
          value={words.value}
          onInput={(e) => (words.value = e.currentTarget.value)}
          placeholder="Names, paths, keywords…"
          autocomplete="off"
        />
      </form>
      {q && <LinkResults q={q} project={project} reload={reload} />}
    </section>
  )
}

function LinkResults({ q, project, reload }: { q: string; project: Project; reload: () => void }) {
  const hits = useGet<Hit[]>('/api/search/', {
    q: searchText(q),
    production: project.production,
    type: 'videoasset,audioasset,imageasset',
    limit: 20,
  })
  const failure = useSignal<string | undefined>(undefined)
  const linked = new Set(linkedOf(project).map(({ kind, media }) => `${kind}${media.id}`))
  async function link(kind: MediaKind, id: number) {
    failure.value = undefined
    try {
      await post(`${PA}${project.id}/addasset/`, { asset_list: [{ asset_id: id, type: kind }] })
      reload()
    } catch (error) {
      failure.value = asApiError(error).message
    }
  }
  const list = hits.data.value
  return (
    <>
      <Status loading={hits.loading.value && !list} error={hits.error.value} />
      {failure.value && (
        <p class="error" role="alert">
          {failure.value}
        </p>
      )}
      {list && (
        <p class="muted" role="status">
          {hits.total.value ?? list.length} found
        </p>
      )}
      {list && list.length > 0 && (
        <ul class="rows" data-testid="hits" aria-label="Media found">
          {list.map((hit) => {
            const kind = hit.type.replace('asset', '') as MediaKind
            const isLinked = linked.has(`${kind}${hit.id}`)
            return (
              <li key={`${hit.type}${hit.id}`}>
                <span>
                  {hit.name} <span class="muted">{kind}</span>
                  <span class="muted path project-media-path">{hit.path}</span>
                </span>
                <button
                  type="button"
                  aria-label={isLinked ? `${hit.name} is linked` : `Link ${hit.name}`}
                  disabled={isLinked}
                  onClick={() => void link(kind, hit.id)}
                >
                  {isLinked ? 'Linked' : 'Link'}
                </button>
              </li>
            )
          })}
        </ul>
      )}
    </>
  )
}

function CopyProject({ project, productions }: { project: Project; productions: Production[] }) {
  const busy = useSignal(false)
  const failure = useSignal<ApiError | undefined>(undefined)
  const target = useSignal(project.production)
  const name = useSignal(`${project.name} copy`)
  const share = useSignal(false)
  const mayShare = perms().includes('browser.share_production_asset')
  const targetProduction = productions.find((p) => p.id === target.value)
  async function submit(event: Event) {
    event.preventDefault()
    const body = { ...filled(event, ['name', 'bundle_root']), production_id: target.value, copy_of: project.id }
    busy.value = true
    failure.value = undefined
    try {
      const { data } = await api<Created>(PA, {
        method: 'POST',
        body,
        query: share.value ? { share_linked_assets: 1 } : undefined,
      })
      // The copy is the new project: its page follows the task that fills its folder.
      navigate(`/projects/${data.id}`)
    } catch (error) {
      failure.value = asApiError(error)
    } finally {
      busy.value = false
    }
  }
  if (!project.is_production || project.status_asset !== 6) {
    return (
      <section class="project-form" aria-labelledby="copy-title">
        <h2 id="copy-title">Copy</h2>
        <p class="muted">A project can be copied once its folder is complete and online.</p>
      </section>
    )
  }
  const f = failure.value
  const general = generalErrors(f, ['/name', '/bundle_root', '/production_id', '?share_linked_assets'])
  return (
    <section class="project-form" aria-labelledby="copy-title">
      <h2 id="copy-title">Copy</h2>
      <form onSubmit={(e) => void submit(e)} noValidate>
        {general && (
          <p class="error" role="alert">
            {general}
          </p>
        )}
        <Field id="copy-name" label="Name of the copy" error={f?.at('/name')}>
          <input
            id="copy-name"
            name="name"
            required
            autocomplete="off"
            value={name.value}
            onInput={(e) => (name.value = e.currentTarget.value)}
            {...described('copy-name', f?.at('/name'))}
          />
        </Field>
        <Field id="copy-production" label="Target production" error={f?.at('/production_id')}>
          <select
            id="copy-production"
            value={target.value}
            onChange={(e) => (target.value = Number(e.currentTarget.value))}
            {...described('copy-production', f?.at('/production_id'))}
          >
            {productions.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <Field
          id="copy-folder"
          label="Target folder"
          error={f?.at('/bundle_root')}
          hint={
            <>
              Missing or empty; not inside the project's folder.
              {targetProduction && (
                <>
                  {' '}
                  In <code>{targetProduction.storage_root}</code> unless you are a superuser.
                </>
              )}
            </>
          }
        >
          <input
            id="copy-folder"
            name="bundle_root"
            required
            autocomplete="off"
            spellcheck={false}
            class="path"
            placeholder={targetProduction ? `${targetProduction.storage_root}projects/name/` : undefined}
            {...described('copy-folder', f?.at('/bundle_root'), true)}
          />
        </Field>
        <div class="field field-check">
          <input
            id="copy-share"
            type="checkbox"
            checked={share.value}
            disabled={!mayShare}
            onChange={(e) => (share.value = e.currentTarget.checked)}
            {...described('copy-share', f?.atParameter('share_linked_assets'), true)}
          />
          <label for="copy-share">Share the linked media with the target production</label>
          <p class="muted field-hint" id="copy-share-hint">
            {mayShare
              ? 'Its users can then read the media this project links to.'
              : 'Sharing needs the permission browser.share_production_asset.'}
          </p>
          {f?.atParameter('share_linked_assets') && (
            <p class="field-error" id="copy-share-error">
              {f.atParameter('share_linked_assets')}
            </p>
          )}
        </div>
        <button type="submit" class="primary" disabled={busy.value}>
          {busy.value ? 'Copying…' : 'Copy project'}
        </button>
      </form>
    </section>
  )
}

function DeleteProject({
  project,
  deleting,
  asked,
}: {
  project: Project
  deleting: Signal<boolean>
  asked: Signal<Task | undefined>
}) {
  const open = useSignal(false)
  const typed = useSignal('')
  const busy = useSignal(false)
  const failure = useSignal<string | undefined>(undefined)
  const confirmed = typed.value === project.name
  async function submit(event: Event) {
    event.preventDefault()
    if (!confirmed) return
    busy.value = true
    failure.value = undefined
    // Set before the request: its events (the project going offline) must not reload the record,
    // which may be gone by the time a reload reached the server.
    deleting.value = true
    try {
      const { data } = await api<{ task: TaskRef }>(`${PA}${project.id}/`, { method: 'DELETE' })
      asked.value = fromRef(data.task, 'delete', project.id)
    } catch (error) {
      deleting.value = false
      failure.value = asApiError(error).message
    } finally {
      busy.value = false
    }
  }
  return (
    <section class="project-form project-delete" aria-labelledby="delete-title">
      <h2 id="delete-title">Delete</h2>
      {!open.value ? (
        <button
          type="button"
          class="danger"
          aria-expanded="false"
          aria-controls="delete-form"
          onClick={() => (open.value = true)}
        >
          Delete project…
        </button>
      ) : (
        <form id="delete-form" onSubmit={(e) => void submit(e)} noValidate>
          <p>
            This removes the folder <code class="path">{project.bundle_root}</code> and everything in it. Linked media
            stay in the catalogue.
          </p>
          {failure.value && (
            <p class="error" role="alert">
              {failure.value}
            </p>
          )}
          <Field id="delete-confirm" label={`Type the project's name, ${project.name}, to confirm`}>
            <input
              id="delete-confirm"
              autocomplete="off"
              spellcheck={false}
              value={typed.value}
              onInput={(e) => (typed.value = e.currentTarget.value)}
              autoFocus
            />
          </Field>
          <div class="project-actions">
            <button type="submit" class="danger" disabled={!confirmed || busy.value}>
              {busy.value ? 'Deleting…' : 'Delete project and folder'}
            </button>
            <button
              type="button"
              onClick={() => {
                open.value = false
                typed.value = ''
              }}
            >
              Keep it
            </button>
          </div>
        </form>
      )}
    </section>
  )
}
