// The code Elysia composes for each route, as text: what the compiled executable and the source
// run must agree on (test/cli/compiled-handlers.test.ts compares the two).
//
// Elysia writes each route's handler as JavaScript from what it reads in the source text of our
// handlers and hooks (fn.toString()): sucrose infers which parts of the context a function uses,
// and compose decides from a regular expression over that text whether the function is async
// (/(?:return|=>)\s?\S+\(|a(?:sync|wait)/: `return f(` or `=> f(` counts, and so does `=>{f(`).
// Minified, the same functions are other text: `=> {` lost its space, and the executable awaited
// such handlers and onRequest hooks, on every request, where the source run called them (build.ts).
// Nothing fails then, it is only slower; only this text shows it.
//
// Read only when serve is started with REELHOUSE_DUMP_HANDLERS=FILE (src/cli/serve.ts), a hidden
// diagnostic for that test; it composes every route at once instead of at its first request.
import { type AnyElysia } from 'elysia'
import { createBunRouteHandler } from 'elysia/adapter/bun/compose'
import { composeErrorHandler, composeGeneralHandler } from 'elysia/compose'

/** What is composed, by name: "GET /api/videoassets/ handler", "... server", "fetch", "error", "inference". */
export type ComposedHandlers = Record<string, string>

/**
 * For each route, the handler composed from its hooks and the function the server calls with the
 * Request (onRequest hooks and the context, before the handler); then the app's general fetch and
 * its error handler, and what sucrose inferred for the app as a whole.
 *
 * Our wraps (app.wrap) are taken out while this composes: with them, Elysia hands back a function
 * calling the wraps around the composed one (`hocMap`), whose text shows nothing of it. They are
 * put back before it returns, and what the server runs is composed separately, with them.
 */
export function composedHandlers(app: AnyElysia): ComposedHandlers {
  const inner = app as unknown as { extender: { higherOrderFunctions: unknown[] }; inference: unknown }
  const wraps = inner.extender.higherOrderFunctions
  inner.extender.higherOrderFunctions = []
  try {
    const out: ComposedHandlers = {}
    for (const route of app.routes) {
      const name = `${route.method} ${route.path}`
      // A route Elysia does not compose (its handler is a value, served as it is) has no text.
      if (typeof route.compile !== 'function') continue
      out[`${name} handler`] = String(route.compile())
      out[`${name} server`] = String(createBunRouteHandler(app, route))
    }
    out.fetch = String(composeGeneralHandler(app))
    out.error = String(composeErrorHandler(app))
    out.inference = JSON.stringify(inner.inference)
    return out
  } finally {
    inner.extender.higherOrderFunctions = wraps
  }
}
