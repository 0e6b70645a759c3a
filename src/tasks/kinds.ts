// The one vocabulary of work: each kind of task with the type of its params, defined here (the
// plumbing knows no feature: handlers import their params from this file, never the reverse),
// as immich keeps its job vocabulary in one file. `enqueue` takes params of the kind's type and the runner must be given a handler for every kind listed here,
// so a row that no handler can run cannot be written. A kind is listed when its handler exists;
// TASK_KINDS (db/schema.ts) is the wider set the API speaks of (docs/api.md, Tasks), which the
// compiler checks this one against.
import type { MediaKind, TASK_KINDS } from '../db/tables.ts'

export type CopyParams = {
  source: string
  target: string
  /** The target's device. */
  device: string
  /** Recorded from this version on; tasks queued by an older one lack them. */
  source_device?: string
  user?: number
  /** The source folder when the copy was asked for (identityOf). */
  identity?: string
}

export type DeleteParams = {
  bundle_root: string
  device: string
  /** Recorded from this version on; tasks queued by an older one lack them. */
  user?: number
  /**
   * The folder when the delete was asked for (identityOf); null when it was already gone (then no
   * folder found later is removed); undefined in tasks queued by an older version.
   */
  identity?: string | null
}

/** What the import task needs to go on from the record (params of the `import` kind). */
/**
 * The part of a camera card an import moves with its clip (docs/cards.md): `files` (the clip's, and
 * for one clip of the card the card's own files too, its essence last), from the card's folder where
 * it was dropped to its folder in the production's area, each under its own name and relative place.
 * `plan` (move.plan) is the plan of `files[done]` once made.
 */
export type CardMoveParams = {
  /** The card's folder where it lies (absolute, final separator). */
  from: string
  /** Its folder in the production's area, made for this card when the import was registered (absolute, final separator). */
  to: string
  /** Relative to `from` and `to` (the platform's separators), the essence last. */
  files: string[]
  /** How many of `files` are in place. */
  done?: number
  /** The card had a folder of its own (not the watch folder itself): it goes too once empty. */
  own: boolean
  /** The xxh64 of each file copied so far (across file systems), by its path in `files`: for the card's ASC MHL history. */
  copied?: Record<string, string>
  /**
   * The card came with an ASC MHL history of its own (decided once when its imports were
   * registered): it keeps it as it came, and no import writes a generation of ours into it.
   */
  arrivedWithHistory?: boolean
  /** This import's generation of the card's history is written: a resume does not write another. */
  historyWritten?: boolean
}

export type ImportParams = {
  asset: number
  kind: MediaKind
  /** The ImportLogs this task advances (more join while it is queued: imports of one asset merge). */
  logs: number[]
  /**
   * move_asset: the device to move onto; the plan is recorded once made (a safe point). `held`:
   * register set is_production false until the file is in place (tasks queued before it existed
   * lack it, and left is_production as it was).
   */
  move?: { device: number; plan?: unknown; held?: true; card?: CardMoveParams }
  rewrap_proxy: boolean
  /** Members the request gave; probing fills only the others. */
  given: string[]
  /** Who asked (the task checks their permissions again); none for the watcher's imports. */
  user?: number
}

/** A proxy made again (modules/assetimport/proxy.task.ts). */
export type ProxyParams = {
  asset: number
  kind: MediaKind
  /** The transcoding profile that applied when it was asked for (read again when the task runs); null: the built-in default. */
  profile: number | null
  /** Who asked (the task checks their write access again); none for the command line. */
  user?: number
}

/** Shot detection of a video asset (modules/shots/detect.task.ts). */
export type ShotsParams = {
  asset: number
  /** scdet's threshold (0–100 scale) asked for. */
  threshold: number
  /** Who asked (the task checks their write access again); none for a detection the device asks for (autoshot_detection). */
  user?: number
  /** The work folder of a run under way, in the production's proxy_root: removed when the task starts again. */
  work?: string
}

/** Proxies of one production renamed after their source (modules/assetimport/proxyname.task.ts). */
export type ProxyNameParams = {
  production: number
  /** The batch under way: saved before any of it is renamed (a restart finds what was done by the inode). */
  plan?: { asset: number; from: string; to: string; ino: number }[]
}

export type ScanParams = {
  device: number
  /** Absolute folders or files to look at again; null: the whole device. */
  paths: string[] | null
}

/** An asset's essence copied to an archive device (modules/archive/task.ts). */
export type ArchiveParams = {
  asset: number
  kind: MediaKind
  /** The archive device (is_archive true). */
  device: number
  archive_type: 'archive_std' | 'archive_ltfs'
  /** Remove the online file once the verified archive copy exists (the asset becomes archive-only). */
  purge: boolean
  user?: number
}

/** An archived asset's file copied back from its archive_handle (modules/archive/task.ts). */
export type RestoreParams = {
  asset: number
  kind: MediaKind
  /** Where the file goes: the asset's original_path, or the path the request gave. */
  path: string
  user?: number
}

/** An asset's files checked against their ASC MHL history or the hash the asset keeps (modules/verify/service.ts). */
export type VerifyParams = {
  asset: number
  /** The asset's kind: a media kind, or project (a project asset's bundle folder). */
  kind: MediaKind | 'project'
  /** Who asked (the task checks their permissions again). */
  user?: number
}

export type TaskParams = {
  archive: ArchiveParams
  restore: RestoreParams
  copy: CopyParams
  delete: DeleteParams
  import: ImportParams
  proxy: ProxyParams
  proxyname: ProxyNameParams
  scan: ScanParams
  shots: ShotsParams
  verify: VerifyParams
}

export type TaskKind = keyof TaskParams

// Every kind here is one the API names.
type Listed<K extends (typeof TASK_KINDS)[number]> = K
export type _KindsAreListed = Listed<TaskKind>
