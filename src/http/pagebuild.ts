// The web page's build (src/ui): one Bun.build for the browser, minified (the page has no handler
// compiled from its source, as the server's Elysia routes are), split into hashed files under
// /ui/, each text file precompressed in brotli and gzip. build.ts writes them beside a generated
// module that embeds them in the executable; `reelhouse serve` run from source builds them in
// memory instead, at the first request for the page and again after src/ui changes (pageLoader).
import { type FSWatcher, existsSync, mkdirSync, rmSync, watch, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { PAGE_ASSETS } from '../ui/routes.ts'
import type { Log } from '../util/log.ts'

export const UI_DIR = join(import.meta.dir, '..', 'ui')

/** One file of the page as built: its bytes and, where smaller, the same compressed. */
export type BuiltFile = { name: string; type: string; bytes: Uint8Array; br?: Uint8Array; gzip?: Uint8Array }

/** One file of the page as served: a Blob for each coding it has. */
export type PageFile = { name: string; type: string; identity: Blob; br?: Blob; gzip?: Blob }
/** The page's files by name: `index.html` and the hashed files it loads. */
export type Page = ReadonlyMap<string, PageFile>

/** Text files compress; images other than SVG and fonts already are. */
const COMPRESSIBLE = /^(text\/|application\/(javascript|json|xml)|image\/svg)/

/** Builds the page from src/ui/index.html. Throws with Bun's messages when it does not build. */
export async function buildPage(entry = join(UI_DIR, 'index.html')): Promise<BuiltFile[]> {
  const result = await Bun.build({
    entrypoints: [entry],
    target: 'browser',
    minify: true,
    splitting: true,
    sourcemap: 'none',
    publicPath: PAGE_ASSETS,
    // Every file but the HTML is named by its content's hash, so it can be cached for ever.
    naming: { entry: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]' },
  }).catch((error: unknown) => ({ success: false as const, logs: [error], outputs: [] }))
  if (!result.success) throw new Error(`the page did not build:\n${result.logs.map(String).join('\n')}`)
  return Promise.all(
    result.outputs.map(async (output) => {
      const bytes = new Uint8Array(await output.arrayBuffer())
      const name = output.path.replace(/^\.\//, '').replace(/^index-[a-z0-9]+\.html$/, 'index.html')
      const type = output.type.replace(';charset', '; charset')
      const file: BuiltFile = { name, type, bytes }
      if (COMPRESSIBLE.test(type)) {
        // Quality 11 and level 9, once at build time: the page is some tens of KB.
        const br = brotliCompressSync(bytes, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: 11,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
          },
        })
        const gzip = gzipSync(bytes, { level: 9 })
        if (br.length < bytes.length) file.br = new Uint8Array(br)
        if (gzip.length < bytes.length) file.gzip = new Uint8Array(gzip)
      }
      return file
    }),
  )
}

/** The page served from memory (a build from source). */
export function pageOf(files: readonly BuiltFile[]): Page {
  return new Map(
    files.map((f) => [
      f.name,
      {
        name: f.name,
        type: f.type,
        identity: new Blob([f.bytes]),
        ...(f.br ? { br: new Blob([f.br]) } : {}),
        ...(f.gzip ? { gzip: new Blob([f.gzip]) } : {}),
      },
    ]),
  )
}

/** The entry of the generated module, a file embedded in the executable: its path there. */
export type EmbeddedFile = { name: string; type: string; identity: string; br?: string; gzip?: string }

/**
 * Writes the built files into `dir` (emptied first) with `page.ts`, a module that imports each
 * with `{ type: 'file' }` so that `bun build --compile` embeds them; build.ts resolves the import
 * 'reelhouse:page' to it. `// @ts-nocheck`: tsc has no type for an imported .br or .html file.
 */
export function writePage(dir: string, files: readonly BuiltFile[]): string {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const imports: string[] = []
  const entries: string[] = []
  files.forEach((file, i) => {
    const entry: string[] = [`name: ${JSON.stringify(file.name)}`, `type: ${JSON.stringify(file.type)}`]
    for (const [coding, bytes, suffix] of [
      ['identity', file.bytes, ''],
      ['br', file.br, '.br'],
      ['gzip', file.gzip, '.gz'],
    ] as const) {
      if (!bytes) continue
      writeFileSync(join(dir, file.name + suffix), bytes)
      imports.push(`import f${i}_${coding} from ${JSON.stringify(`./${file.name}${suffix}`)} with { type: 'file' }`)
      entry.push(`${coding}: f${i}_${coding}`)
    }
    entries.push(`  { ${entry.join(', ')} },`)
  })
  const module = join(dir, 'page.ts')
  writeFileSync(
    module,
    `// @ts-nocheck\n// Generated by build.ts (src/http/pagebuild.ts): the web page's files, embedded in the executable.\n${imports.join('\n')}\n\nexport default [\n${entries.join('\n')}\n]\n`,
  )
  return module
}

/**
 * Where serve gets the page: the files embedded in the executable when it is one (build.ts), else
 * a build of src/ui made at the first request for the page (a serve that shows no page, as most
 * in tests, builds nothing) and made again at the first request after a file of src/ui changed
 * (fs.watch): `npm start` serves the page as it is edited, with a reload of the browser. A build
 * that fails is logged and the last good one kept, so a typo does not take the page away.
 */
export function pageLoader(log: Log, { dir = UI_DIR } = {}): { page: () => Promise<Page>; close: () => void } {
  let current: Promise<Page> | undefined
  let stale = false
  let watcher: FSWatcher | undefined
  let last: Page | undefined

  const fromSource = async (): Promise<Page> => {
    if (!watcher && existsSync(dir)) {
      watcher = watch(dir, { recursive: true }, () => {
        stale = true
      })
      watcher.unref()
    }
    const started = performance.now()
    try {
      const page = pageOf(await buildPage(join(dir, 'index.html')))
      if (last) log.info('page rebuilt', { ms: Math.round(performance.now() - started) })
      return (last = page)
    } catch (error) {
      log.error('the page did not build', { error: String(error) })
      if (last) return last
      throw error
    }
  }

  const load = async (): Promise<Page> => {
    const embedded = await embeddedPage()
    return embedded ?? fromSource()
  }

  return {
    page: () => {
      if (stale || !current) {
        stale = false
        current = (current ? fromSource() : load()).catch((error: unknown) => {
          current = undefined
          throw error
        })
      }
      return current
    },
    close: () => watcher?.close(),
  }
}

/** The page embedded in the executable (build.ts resolves 'reelhouse:page'); none when run from source. */
async function embeddedPage(): Promise<Page | undefined> {
  let files: EmbeddedFile[]
  try {
    files = (await import('reelhouse:page')).default
  } catch {
    return undefined
  }
  return new Map(
    files.map((f) => [
      f.name,
      {
        name: f.name,
        type: f.type,
        identity: Bun.file(f.identity),
        ...(f.br ? { br: Bun.file(f.br) } : {}),
        ...(f.gzip ? { gzip: Bun.file(f.gzip) } : {}),
      },
    ]),
  )
}
