// The live events of GET /api/events/ (docs/api.md, "Events"): what the catalogue's writers tell,
// made into events once their transaction commits, and who may see each. The writers: the
// history (every create, update, delete and link change of media and project assets, whatever
// made it: a request, the command line in this process, an import, a task, the watcher; and of
// markers), the task runner and the import logs. The bus (src/events/bus.ts) serializes, keeps
// and sends them.
import type { Db } from '../../db/client.ts'
import { type Work, afterCommit } from '../../db/port.ts'
import { type Audience, type Bus, type BusOptions, type EndReason, createBus } from '../../events/bus.ts'
import type { TaskRow } from '../../tasks/runner.ts'
import type { Log } from '../../util/log.ts'
import { type Entry, MEDIA_RESOURCES, historyOf } from '../history/service.ts'
import type { ImportLogChange } from '../importlogs/service.ts'
import { markerEvent } from '../markers/service.ts'
import { shotEvent } from '../shots/service.ts'
import { canRead, sharedWith } from '../users/access.ts'
import type { Principal, Users } from '../users/service.ts'

export const ASSET_ACTIONS = ['created', 'updated', 'deleted', 'offline', 'online', 'moved', 'relinked'] as const
export const PROJECT_ACTIONS = [
  'created',
  'copied',
  'updated',
  'deleted',
  'offline',
  'online',
  'linked',
  'unlinked',
] as const
export type AssetAction = (typeof ASSET_ACTIONS)[number]
export type ProjectAction = (typeof PROJECT_ACTIONS)[number]

/** At most one task event per task this often (4 a second); a change meanwhile is sent when it is up, the end at once. */
export const TASK_EVERY_MS = 250
/**
 * How often open streams are looked at for changed permissions when no event comes: a key
 * revoked, a user removed or their access taken away (by a request, or by `reelhouse token
 * revoke` in another process) ends or narrows the stream within this.
 */
const RECHECK_EVERY_MS = 1000
/** Past this many tasks paced at once, those whose last event is older than TASK_EVERY_MS are forgotten. */
const PACED_MAX = 1000

const MEDIA: ReadonlySet<string> = new Set(MEDIA_RESOURCES)

/** The event of a media asset's history row (docs/watcher.md: moves and relinks are updates of path_file). */
function assetAction(e: Entry): AssetAction {
  if (e.action === 'create') return 'created'
  if (e.action === 'delete') return 'deleted'
  if (e.hint === 'relinked') return 'relinked'
  if (e.changes?.path_file) return 'moved'
  return onlineChange(e) ?? 'updated'
}

/** The event of a project asset's history row. */
function projectAction(e: Entry): ProjectAction {
  if (e.action === 'create') return 'created'
  if (e.action === 'delete') return 'deleted'
  if (e.action === 'link') return 'linked'
  if (e.action === 'unlink') return 'unlinked'
  if (e.hint === 'copied') return 'copied'
  return onlineChange(e) ?? 'updated'
}

const onlineChange = (e: Entry): 'offline' | 'online' | undefined => {
  const online = e.changes?.is_production?.new
  return online === false ? 'offline' : online === true ? 'online' : undefined
}

/** What a task event says: the fields of the tasks list that move (docs/api.md, Tasks). */
const taskData = (row: TaskRow) => ({
  id: row.id,
  kind: row.kind,
  state: row.state,
  target: row.target,
  step: row.step,
  percent: row.percent,
  bytes_done: row.bytes_done,
  bytes_total: row.bytes_total,
  files_done: row.files_done,
  files_total: row.files_total,
  error: row.error,
})

const ended = (row: TaskRow) => row.state === 'done' || row.state === 'failed'

/** A record of a production is seen by its readers; one of none (a scan, an import log of a deleted production) by superusers. */
const audienceOf = (production: number | null | undefined): Audience => (production == null ? [] : [production])

export type EventsOptions = Omit<BusOptions, 'log'>

export type StreamOptions = {
  user: Principal
  /**
   * The user as they are now, or undefined once their credentials no longer hold (http/auth.ts
   * recheckOf); a promise of it where the catalogue answers promises (PostgreSQL).
   */
  recheck: () => Principal | undefined | Promise<Principal | undefined>
  lastEventId: string | null
  /** Told once when the stream ends. */
  onEnd?: (reason: EndReason) => void
}

export function createEvents(db: Db, { users, log, ...options }: EventsOptions & { users: Users; log: Log }) {
  const bus: Bus = createBus({ log, ...options })
  let stopped = false

  /**
   * Sends once committed; a failure is logged and never reaches the writer. Queued with the port's
   * afterCommit, yielded by the writer's work: on PostgreSQL only a step yielded inside the
   * transaction reaches its after-commit queue (a callback of the connection would send at once).
   */
  const publishAfterCommit = (type: string, data: unknown, audience: Audience): Work<void> =>
    afterCommit(() => publish(type, data, audience))

  function publish(type: string, data: unknown, audience: Audience) {
    recheckIfChanged()
    bus.publish(type, data, audience)
  }

  // Asset and project events: one per history row, built inside the row's transaction (a deleted
  // asset's shares are still there to say who saw it) and sent once it commits. The listener is
  // work the history's record() yields rather than a callback run after the commit: its reads see
  // what the writer's transaction sees, on either engine (after the commit, what a delete removed
  // would be gone), and the event is only queued there (afterCommit), so it leaves once the commit
  // is durable and never on a rollback.
  const unlisten = historyOf(db).listen(function* (e) {
    if (!bus.wanted()) return
    try {
      if (MEDIA.has(e.resource)) {
        const audience = e.production == null ? [] : [e.production, ...(yield* sharedWith(db, e.id))]
        yield* publishAfterCommit('asset', { type: e.resource, id: e.id, action: assetAction(e) }, audience)
      } else if (e.resource === 'projectasset') {
        yield* publishAfterCommit('project', { id: e.id, action: projectAction(e) }, audienceOf(e.production))
      } else if (e.resource === 'shot' || e.resource === 'sequence') {
        // Seen by whoever sees its video asset (its production, and those it is shared with).
        const shot = yield* shotEvent(db, e)
        if (shot)
          yield* publishAfterCommit(
            'shot',
            shot,
            e.production == null ? [] : [e.production, ...(yield* sharedWith(db, shot.asset))],
          )
      } else if (e.resource === 'marker') {
        // Seen by whoever sees its asset (its production, and those it is shared with).
        const marker = yield* markerEvent(db, e)
        if (marker)
          yield* publishAfterCommit(
            'marker',
            marker,
            e.production == null ? [] : [e.production, ...(yield* sharedWith(db, marker.asset))],
          )
      }
    } catch (error) {
      log.error('an event could not be made', { resource: e.resource, id: e.id, error: (error as Error).message })
    }
  })

  // Task events, paced per task: the row is read when the event is sent, so the newest state goes
  // out, and the end (done, failed) always, at once.
  type Read = (id: number) => TaskRow | undefined
  type Pace = { at: number; timer?: Timer; sent?: string }
  const paces = new Map<number, Pace>()

  function sendTask(row: TaskRow, pace: Pace | undefined) {
    const data = taskData(row)
    const text = JSON.stringify(data)
    clearTimeout(pace?.timer)
    if (ended(row)) paces.delete(row.id)
    else {
      if (paces.size >= PACED_MAX) forgetQuietTasks()
      paces.set(row.id, { at: Date.now(), sent: text })
    }
    // A write that changed nothing the event says (a task's params or result) sends nothing.
    if (text !== pace?.sent) publish('task', data, audienceOf(row.production))
  }

  function forgetQuietTasks() {
    const now = Date.now()
    for (const [id, pace] of paces) if (!pace.timer && now - pace.at >= TASK_EVERY_MS) paces.delete(id)
  }

  /** The runner's observer (runner.ts observe): called after each commit that changed a task's row. */
  function taskChanged(id: number, read: Read) {
    if (stopped || !bus.wanted()) return
    const row = read(id)
    const pace = paces.get(id)
    if (!row) {
      clearTimeout(pace?.timer)
      return void paces.delete(id)
    }
    const wait = pace ? pace.at + TASK_EVERY_MS - Date.now() : 0
    if (wait <= 0 || ended(row)) return sendTask(row, pace)
    // Sent when its time comes, as the row is then (a later change meanwhile rides along).
    if (pace!.timer) return
    pace!.timer = setTimeout(() => {
      pace!.timer = undefined
      try {
        const now = stopped ? undefined : read(id)
        if (now) sendTask(now, pace)
        else paces.delete(id)
      } catch (error) {
        log.error('a task event could not be sent', { task: id, error: (error as Error).message })
      }
    }, wait)
    pace!.timer.unref?.()
  }

  // Streams, each with its user as of the last check of their credentials.
  type Open = { user: Principal; recheck: StreamOptions['recheck']; end(): void }
  const open = new Set<Open>()
  let stamp = users.authStamp()

  /** Each stream's user checked again, when anything a key stands for may have changed. */
  function recheckIfChanged() {
    if (!open.size) return
    const now = users.authStamp()
    if (now === stamp) return
    stamp = now
    for (const o of [...open]) {
      const user = o.recheck()
      // On PostgreSQL the answer comes later: until then the stream sees what its user saw.
      if (user instanceof Promise)
        user.then(
          (later) => open.has(o) && rechecked(o, later),
          (error) => log.error('an open event stream could not be checked', { error: (error as Error).message }),
        )
      else rechecked(o, user)
    }
  }

  function rechecked(o: Open, user: Principal | undefined) {
    if (user) o.user = user
    else o.end()
  }
  const rechecks = setInterval(() => {
    try {
      if (!stopped) recheckIfChanged()
    } catch (error) {
      log.error('open event streams could not be checked', { error: (error as Error).message })
    }
  }, RECHECK_EVERY_MS)
  rechecks.unref?.()

  return {
    bus,

    taskChanged,

    /** The import logs' observer: a log written or advanced (work yielded inside its transaction). */
    *importLogChanged(change: ImportLogChange): Work<void> {
      if (!bus.wanted()) return
      yield* publishAfterCommit(
        'importlog',
        { id: change.id, asset_path: change.asset_path, status: change.status },
        audienceOf(change.production),
      )
    },

    /** A stream of the events `user` may see (GET /api/events/). */
    stream({ user, recheck, lastEventId, onEnd }: StreamOptions): ReadableStream<Uint8Array> {
      // The others first: a change since the stamp was taken is theirs to see, this one is checked as of now.
      recheckIfChanged()
      if (!open.size) stamp = users.authStamp()
      const o: Open = { user, recheck, end: () => {} }
      const { stream, end } = bus.subscribe({
        lastEventId,
        sees: (audience) => o.user.is_superuser || audience.some((production) => canRead(o.user, production)),
        fields: { user: user.username },
        onEnd: (reason) => {
          open.delete(o)
          onEnd?.(reason)
        },
      })
      o.end = end
      open.add(o)
      return stream
    },

    /** Ends every stream cleanly (before the server waits for its connections to close) and takes no new ones. */
    close() {
      bus.close()
    },

    /** Stops listening and pacing, after the writers have stopped (core.stop). */
    stop() {
      stopped = true
      bus.close()
      unlisten()
      clearInterval(rechecks)
      for (const pace of paces.values()) clearTimeout(pace.timer)
      paces.clear()
    },
  }
}

export type Events = ReturnType<typeof createEvents>
