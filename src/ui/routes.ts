// The paths the page owns, shared by the server (src/http/page.ts answers each with the page's
// HTML, so that a reload or a link opened in a new tab works) and the page's router (main.tsx).
// Plain TypeScript with no DOM or Bun: both tsconfigs check it.

/**
 * First path segments of the page's views: `/NAME` and everything under it is the page's.
 * A view under a new segment adds it here; the server then answers its paths with the page.
 * Never `api`, `ui` (the page's files) or another path the server answers.
 */
export const PAGE_SECTIONS = ['signin', 'assets', 'projects', 'tasks', 'devices', 'imports'] as const

/** Where the page's hashed files are served (Bun.build's publicPath). */
export const PAGE_ASSETS = '/ui/'

/** Whether the server answers `path` with the page: `/`, or a path in one of the sections. */
export function isPagePath(path: string): boolean {
  if (path === '/') return true
  const segment = path.slice(1).split('/', 1)[0]!
  return (PAGE_SECTIONS as readonly string[]).includes(segment)
}
