/**
 * Waits for a condition with a bound, never for a fixed time. In-process work is polled on every
 * turn of the event loop; a child process is polled every few milliseconds (`everyMs`) so the
 * test does not take the CPU the child needs.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  options: { ms?: number; everyMs?: number } = {},
) {
  const end = Date.now() + (options.ms ?? 30_000)
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => (options.everyMs ? setTimeout(r, options.everyMs) : setImmediate(r)))
  }
}
