// What the web page shows of each device (docs/api.md, "Device status"): whether its folder is
// there and its file system's space, how the watcher watches it and why, how many media assets on
// it are online and offline, its full scan under way and the last one that ended. And the rescan
// a user asks for (POST /api/devices/{id}/scan/), queued as the watcher queues its own.
// No HTTP types here.
import type { Db } from '../../db/client.ts'
import { type Port, type Work, oneOf } from '../../db/port.ts'
import { requireFileWork } from '../../storage/platform.ts'
import { folderSpace } from '../../storage/space.ts'
import { lastEndedFullScans } from '../../tasks/queries.ts'
import type { Runner, TaskRow } from '../../tasks/runner.ts'
import { scanTask } from '../../watch/service.ts'
import type { MediaAssets } from '../mediaassets/service.ts'
import { requirePerm } from '../users/access.ts'
import type { Principal } from '../users/service.ts'
import type { DeviceRow } from './model.ts'
import { requireOnline } from './online.ts'
import type { Devices } from './service.ts'

/** The permission a rescan needs (as editing a device does). */
export const RESCAN_CODENAME = 'browser.change_device'

export type WatchState = { device: number; mode: 'events' | 'polling' | 'unavailable'; ready: boolean; reason?: string }

/** A full scan of the device, as the status shows it: its task and how it went, never its lists of paths. */
export type ScanSummary = {
  task: number
  state: TaskRow['state']
  date_add: string
  date_start: string | null
  date_end: string | null
  files_done: number
  files_total: number
  error: string
  counts: Record<string, number>
}

export type DeviceStatusAnswer = {
  device: number
  online: boolean
  reason?: string
  space: { total: number; free: number } | null
  watch: { mode: WatchState['mode']; ready: boolean; reason?: string } | null
  assets: { online: number; offline: number }
  scan: ScanSummary | null
  last_scan: ScanSummary | null
}

const summary = (row: TaskRow): ScanSummary => ({
  task: row.id,
  state: row.state,
  date_add: row.date_add,
  date_start: row.date_start,
  date_end: row.date_end,
  files_done: row.files_done,
  files_total: row.files_total,
  error: row.error,
  counts: Object.fromEntries(
    Object.entries(row.result ?? {}).filter((e): e is [string, number] => typeof e[1] === 'number'),
  ),
})

export function createDeviceStatus(
  db: Db,
  port: Port,
  deps: { devices: Devices; media: MediaAssets; runner: Runner; watch: () => WatchState[] | undefined },
) {
  const { devices, media, runner } = deps
  // The last full scan of a device that ended (tasks/queries.ts): the runner answers which tasks
  // are open (openFor), not which ended last.
  const lastEnded = lastEndedFullScans(db)

  /** The full scan of the device queued or running (the running one first), or undefined. */
  function* openScan(device: number): Work<TaskRow | undefined> {
    const open: TaskRow[] = []
    for (const id of yield* runner.openFor({ device })) {
      const t = yield* runner.get(id)
      if (t !== undefined && t.kind === 'scan' && (t.params as { paths?: unknown }).paths === null) open.push(t)
    }
    return open.find((t) => t.state === 'running') ?? open[0]
  }

  async function statusOf(
    device: DeviceRow,
    counts: Map<number, { online: number; offline: number }>,
    watched: WatchState[] | undefined,
  ): Promise<DeviceStatusAnswer> {
    const look = await folderSpace(device.path)
    const watch = watched?.find((w) => w.device === device.id)
    const open = await port.run(openScan(device.id))
    const last = await port.run(oneOf(lastEnded, { device: device.id }))
    return {
      device: device.id,
      online: look.online,
      ...(look.online ? {} : { reason: look.reason }),
      space: look.online ? { total: look.total, free: look.free } : null,
      watch: watch
        ? { mode: watch.mode, ready: watch.ready, ...(watch.reason === undefined ? {} : { reason: watch.reason }) }
        : null,
      assets: counts.get(device.id) ?? { online: 0, offline: 0 },
      scan: open ? summary(open) : null,
      last_scan: last ? summary(last) : null,
    }
  }

  return {
    /** One device's status (404 for an unknown device); asset counts are of the assets the user can read. */
    async one(id: number, user: Principal): Promise<DeviceStatusAnswer> {
      const device = await port.run(devices.get(id))
      return statusOf(device, await port.run(media.countsByDevice(user, id)), deps.watch())
    },

    /** Every device's status, by id; the folders are looked at side by side. */
    async all(user: Principal): Promise<DeviceStatusAnswer[]> {
      const every = await port.run(devices.list())
      const counts = await port.run(media.countsByDevice(user))
      const watched = deps.watch()
      return Promise.all(every.map((device) => statusOf(device, counts, watched)))
    },

    /**
     * Queues a full scan of the device as the watcher does (merged with one still queued: that task
     * is answered) and answers its task. 404 unknown device, 403 without browser.change_device,
     * 409 while the device's folder is not there.
     */
    async rescan(id: number, user: Principal): Promise<TaskRow> {
      requireFileWork()
      const device = await port.run(devices.get(id))
      requirePerm(user, RESCAN_CODENAME)
      await requireOnline(device, 'there is nothing to scan')
      const { id: task } = await port.run(runner.enqueue(scanTask(device.id, null)))
      return (await port.run(runner.get(task)))!
    },
  }
}

export type DeviceStatus = ReturnType<typeof createDeviceStatus>
