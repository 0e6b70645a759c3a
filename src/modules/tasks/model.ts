// The shapes of the tasks API: a task as listed and answered, the reference to a task that a
// copy, delete or import answers with, and the orders a list may be asked in.
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { TASK_KINDS, TASK_STATES } from '../../db/tables.ts'
import { oneOf } from '../../http/models.ts'
import type { TaskRow } from '../../tasks/runner.ts'

export const Task = t.Object(
  {
    id: Type.Integer(),
    kind: oneOf(TASK_KINDS),
    state: oneOf(TASK_STATES),
    target: t.Record(t.String(), Type.Integer(), { description: 'e.g. {"projectasset": 7}' }),
    step: t.String({
      description: "The step the task is in, or ended in: an import's move, probe, proxy; '' for work of one step",
    }),
    percent: t.Nullable(
      t.Number({
        description:
          "How far the step is, 0 to 100, when the work can tell (an import's move: its bytes; its proxy: ffmpeg's position in the clip); null otherwise",
      }),
    ),
    bytes_done: Type.Integer(),
    bytes_total: Type.Integer(),
    files_done: Type.Integer(),
    files_total: Type.Integer({
      description:
        'Regular files (a scan: those its walk found, 0 until it has found some; files_done never exceeds it)',
    }),
    error: t.String({ description: "Why a failed task failed; 'cancelled' for one a user cancelled" }),
    date_add: t.String(),
    date_start: t.Nullable(t.String()),
    date_end: t.Nullable(t.String()),
    result: t.Record(t.String(), t.Unknown(), {
      description:
        'What the work found; an import: the asset (asset, asset_type), its file (path_file, where it is now) and proxy (path_proxy); ' +
        'a scan: counts (seen, offline, online, moved, relinked, saved_anew, imported, waiting, fingerprinted), and lists when there are any (ambiguous, held)',
    }),
  },
  {
    examples: [
      {
        id: 18,
        kind: 'import',
        state: 'running',
        target: { videoasset: 42 },
        step: 'proxy',
        percent: 37.5,
        bytes_done: 2147483648,
        bytes_total: 2147483648,
        files_done: 0,
        files_total: 0,
        error: '',
        date_add: '2026-11-21T09:30:00.123456Z',
        date_start: '2026-11-21T09:30:00.125000Z',
        date_end: null,
        result: { asset: 42, asset_type: 'videoasset', path_file: '/mnt/media/night-shift/video/A012C003.mov' },
      },
    ],
  },
)

/** A task's row as the API shows it (GET /api/tasks/{id}/): without what only the runner reads. */
export const taskToApi = ({ params: _p, attempts: _a, production: _r, key: _k, ...row }: TaskRow): typeof Task.static =>
  row

/** A queued task as a copy, delete or import answers it: follow it at url. */
export const TaskRef = t.Object({
  id: Type.Integer(),
  state: oneOf(TASK_STATES),
  url: t.String({ description: 'The task: GET it to follow the work' }),
})

/** The task a request queued, answered with the address to follow it at. */
export const taskAnswer = (task: { id: number; state: (typeof TASK_STATES)[number] }): typeof TaskRef.static => ({
  id: task.id,
  state: task.state,
  url: `/api/tasks/${task.id}/`,
})

/**
 * The orders a task list may be asked in (?ordering=), as SQL of the table's own columns; the
 * default is newest first. Ties, and tasks that have no such date yet (listed after those that
 * have), go by id in the same direction.
 */
export const TASK_ORDERINGS = {
  '-id': '"id" desc',
  id: '"id"',
  '-date_add': '"date_add" desc, "id" desc',
  date_add: '"date_add", "id"',
  '-date_start': '"date_start" desc nulls last, "id" desc',
  date_start: '"date_start" nulls last, "id"',
  '-date_end': '"date_end" desc nulls last, "id" desc',
  date_end: '"date_end" nulls last, "id"',
} as const
export const TASK_ORDERING_NAMES = Object.keys(TASK_ORDERINGS) as [
  keyof typeof TASK_ORDERINGS,
  ...(keyof typeof TASK_ORDERINGS)[],
]
