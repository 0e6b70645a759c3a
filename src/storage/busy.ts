// Files held by another program. An editing application (Premiere, Resolve, Avid) keeps the media
// of an open project open; on Windows it opens them without sharing deletion, so that a rename,
// a move or a delete of such a file fails with a sharing violation (which the Windows layer
// reports as EBUSY) while reading it works. On Linux and macOS the same refusal is EBUSY (a file
// or folder something is mounted on, a file a FUSE or network file system reports busy) or
// ETXTBSY (a program being run).
//
// Such a refusal is not a failure of the work: the program lets go when the editor closes the
// project. So a move, a rename or a delete that meets it never fails at once and never falls back
// to copy-and-delete (two copies of a clip, one of them still in the editor's project): the task
// waits and tries again, with its step saying why and which file (`waiting: a file is in use by
// another program: PATH`), until the program lets go, the task is cancelled (at once, also while
// it waits), or the bound passes. Then the task fails with the refusal and the file is where it
// was. The work is tried again from its start: moves and deletes resume from what they recorded
// (storage/file.ts, projectassets/delete.task.ts), so a second try does nothing twice.
import { CancelledError } from './fs.ts'
import { programsHolding } from './windows/holders.ts'

/** Errors that mean "held by another program": try again later. */
const BUSY = new Set(['EBUSY', 'ETXTBSY'])

/**
 * How long a task waits for a file another program holds: 15 minutes. Long enough for an editor
 * to see the task's step and close the project; short enough that a task does not hold its slot
 * (imports and copies run a few at a time) for the rest of the day: a file still held after that
 * fails its task with the refusal, and the task can be run again.
 */
export const BUSY_BOUND_MS = 15 * 60_000

/** The pauses between tries: quick at first (a virus scanner or an indexer holds a file for moments), then every 5 s. */
const PAUSES_MS = [100, 250, 500, 1000, 2000, 5000]

/**
 * The step a waiting task shows, with the programs holding the file where Windows' Restart
 * Manager names them: `waiting: a file is in use by another program: PATH (Adobe Premiere Pro,
 * pid 4242)`.
 */
export function waitingStep(path: string): string {
  const holders = programsHolding(path)
  return `waiting: a file is in use by another program: ${path}${holders.length ? ` (${holders.join(', ')})` : ''}`
}

export const isBusy = (error: unknown) => BUSY.has(String((error as NodeJS.ErrnoException | undefined)?.code))

export type BusyOptions = {
  signal?: AbortSignal
  /** Called before each pause, with the path the refusal named. */
  onWait?: (path: string) => void
  /** Called when a try after a wait begins. */
  onRetry?: () => void
  /** The path to name when the error names none (or only a path relative to a folder). */
  path: (error: NodeJS.ErrnoException) => string
  /** Default BUSY_BOUND_MS. */
  boundMs?: number
}

/**
 * Runs `work`, and again after a pause each time it fails because a file is in use by another
 * program (EBUSY, ETXTBSY), until it succeeds, fails otherwise, the bound passes (its last error
 * is thrown, saying how long it waited) or `signal` aborts (CancelledError, at once).
 */
export async function whileInUse<T>(work: () => Promise<T>, options: BusyOptions): Promise<T> {
  const bound = options.boundMs ?? BUSY_BOUND_MS
  let waitingSince: number | undefined
  for (let attempt = 0; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (!isBusy(error)) throw error
      const path = options.path(error as NodeJS.ErrnoException)
      const now = Date.now()
      waitingSince ??= now
      if (now - waitingSince >= bound) {
        const minutes = Math.round((now - waitingSince) / 60_000)
        throw Object.assign(
          new Error(
            `${path} is in use by another program (still after ${minutes} min of waiting): close it there and run the task again`,
          ),
          { code: (error as NodeJS.ErrnoException).code, cause: error },
        )
      }
      options.onWait?.(path)
      await pause(PAUSES_MS[Math.min(attempt, PAUSES_MS.length - 1)]!, options.signal)
      options.onRetry?.()
    }
  }
}

/** Sleeps `ms`, or throws CancelledError as soon as `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelledError(String(signal.reason ?? 'cancelled')))
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', aborted)
    }
    const aborted = () => {
      done()
      reject(new CancelledError(String(signal?.reason ?? 'cancelled')))
    }
    const timer = setTimeout(() => {
      done()
      resolve()
    }, ms)
    signal?.addEventListener('abort', aborted, { once: true })
  })
}
