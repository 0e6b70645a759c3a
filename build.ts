// npm run build → dist/reelhouse: one executable with the runtime, the code, the migrations
// (inlined by a macro) and the docs assets. Identifiers are not minified: Elysia compiles its
// handlers from function source, which full minification breaks (elysia issue 1711).
// The web page is built first (src/http/pagebuild.ts: its own Bun.build for the browser, fully
// minified, hashed and precompressed) into dist/ui, with a generated module importing each file
// `with { type: 'file' }`; the import 'reelhouse:page' resolves to that module, so its files are
// embedded in the executable (serve run from source finds no such module and builds the page itself).
import { join } from 'node:path'
import { buildPage, writePage } from './src/http/pagebuild.ts'

const pageFiles = await buildPage()
const pageModule = writePage(join(import.meta.dir, 'dist', 'ui'), pageFiles)
const sizes = pageFiles.map((f) => f.br?.length ?? f.bytes.length).reduce((a, b) => a + b, 0)
console.log(`built the page: ${pageFiles.length} files, ${(sizes / 1024).toFixed(1)} KiB in brotli`)

const result = await Bun.build({
  // The threads' code are entrypoints of their own: a Worker loads each by URL (src/db/checkpointer.ts,
  // src/watch/watcher.ts).
  entrypoints: ['./src/main.ts', './src/db/checkpoint.worker.ts', './src/watch/chokidar.worker.ts'],
  target: 'bun',
  plugins: [{
    name: 'reelhouse-page',
    setup(build) {
      build.onResolve({ filter: /^reelhouse:page$/ }, () => ({ path: pageModule }))
    },
  }],
  minify: { whitespace: true, syntax: true, identifiers: false },
  sourcemap: 'none',
  compile: {
    outfile: './dist/reelhouse',
    // The executable must behave the same from any folder: no bunfig.toml or .env from there.
    autoloadBunfig: false,
    autoloadDotenv: false,
    autoloadTsconfig: false,
    autoloadPackageJson: false,
  },
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
console.log(`built ${result.outputs.map((o) => o.path).join(', ')}`)
