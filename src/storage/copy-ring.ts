// What the server's thread (verified.ts) and the verified copy's threads (copy.worker.ts) share:
// the size of a piece, the ring a copy's two threads hand pieces through, its control words, and
// the messages. Apart from both, so that neither loads the other's code.

/**
 * Bytes per read and write, and per slot. Measured on 1 GiB copied, fsynced and read back
 * (bench/verified.ts, archive.ts copyVerifiedTo) with one thread reading, hashing and writing,
 * five rounds, medians: 128 KiB 0.89 s, 256 KiB 0.88, 512 KiB 0.71, 1 MiB 0.80; with 2 MiB, three
 * rounds of five met the kernel's slow writes into ext4 that COPY_CHUNK (verified.ts) tells of
 * (2.4 to 3.9 s).
 */
export const CHUNK = 512 * 1024

/** Slots of the ring between a copy's reader and writer. */
export const SLOTS = 8

/** The control words of a ring: Int32 indices. */
export const CTL = {
  /** Pieces filled by the reader so far (the writer waits on it). */
  filled: 0,
  /** Pieces written so far, by either thread (the reader waits on it for a free slot). */
  written: 1,
  /** 0 while the reader reads; 1 it read to the end; 2 it stopped (a failure, or asked to). */
  readerEnd: 2,
  /** 1 once a write failed: both threads stop. */
  failed: 3,
  /** Set to 1 by verified.ts: every thread of the job stops between two pieces. */
  stop: 4,
  /** Then, for each slot, its state (SLOT), from here on. */
  state: 5,
  /** Then the length of the piece in each slot. */
  length: 5 + SLOTS,
  /** Then which piece of the file it is (its position is that times CHUNK). */
  piece: 5 + 2 * SLOTS,
  /** How many words in all. */
  size: 5 + 3 * SLOTS,
} as const

/** Where, after the words, the bytes written so far are counted (a BigInt64, by either thread). */
export const BYTES_AT = Math.ceil((CTL.size * 4) / 8) * 8

/** The size of a ring's control memory. */
export const CTL_BYTES = BYTES_AT + 8

/** A slot's state. */
export const SLOT = { free: 0, filled: 1, writing: 2 } as const

export type Ring = { data: SharedArrayBuffer; ctl: SharedArrayBuffer }

export type CopyJob = {
  id: number
} & (
  | { role: 'hash'; input: number; ctl: SharedArrayBuffer }
  | { role: 'read'; input: number; output: number; ring: Ring }
  | { role: 'write'; output: number; ring: Ring; durable: boolean }
)

export type CopyReport =
  | 'ready'
  | { failed: string }
  | { id: number; progress: number }
  | { id: number; done: { xxh64?: string; size: number } }
  /** Stopped between two pieces: asked to, or because the other thread of the copy failed. */
  | { id: number; stopped: true }
  | { id: number; error: { message: string; code?: string; errno?: number; syscall?: string } }
