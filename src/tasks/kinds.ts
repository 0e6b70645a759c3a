// The one vocabulary of work: each kind of task with the type of its params. `enqueue` takes
// params of the kind's type and the runner must be given a handler for every kind listed here,
// so a row that no handler can run cannot be written. A kind is listed when its handler exists;
// TASK_KINDS (db/schema.ts) is the wider set the API speaks of (service.md 8), which the
// compiler checks this one against.
import type { TASK_KINDS } from '../db/schema.ts'
import type { ImportParams } from '../modules/assetimport/service.ts'
import type { CopyParams } from './copy.ts'
import type { DeleteParams } from './delete.ts'
import type { ScanParams } from '../watch/scan.task.ts'

export type TaskParams = {
  copy: CopyParams
  delete: DeleteParams
  import: ImportParams
  scan: ScanParams
}

export type TaskKind = keyof TaskParams

// Every kind here is one the API names.
type Listed<K extends (typeof TASK_KINDS)[number]> = K
export type _KindsAreListed = Listed<TaskKind>
