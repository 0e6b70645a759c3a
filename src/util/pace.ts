// Work that arrives in bursts, done in turns of the event loop: each piece runs at once while the
// current turn has spent less than `sliceMs` on them, and waits for the next turns otherwise, in
// the order it came. A drop of 20,000 files into a watched folder sends 20,000 watcher events in
// one go; handled all at once (an lstat and a look each) they held every request for half a
// second (bench/stall.ts). A single event, the usual case, still runs the moment it comes.

/** `clock`: milliseconds, monotonic (tests give their own, so that no outcome depends on the machine's speed). */
export function createPacer(sliceMs = 8, clock: () => number = () => performance.now()) {
  const queue: (() => void)[] = []
  let head = 0
  /** When this turn began spending time on the work; undefined: not in a turn that did any yet. */
  let turnStart: number | undefined
  let scheduled = false

  const nextTurn = () => {
    if (scheduled) return
    scheduled = true
    setImmediate(drain)
  }
  function drain() {
    scheduled = false
    turnStart = clock()
    while (head < queue.length && clock() - turnStart < sliceMs) run(queue[head++]!)
    if (head < queue.length) return nextTurn()
    queue.length = 0
    head = 0
    turnStart = undefined
  }
  const run = (work: () => void) => {
    try {
      work()
    } catch {
      // The work reports its own failures; one failing never stops the rest.
    }
  }

  return (work: () => void) => {
    if (head < queue.length) return void queue.push(work) // behind others: in order
    const now = clock()
    if (turnStart === undefined) {
      turnStart = now
      nextTurn() // the next turn starts a new budget
    }
    if (now - turnStart < sliceMs) run(work)
    else queue.push(work)
  }
}
