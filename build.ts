// npm run build → dist/reelhouse: one executable with the runtime, the code, the migrations
// (inlined by a macro) and the docs assets. Identifiers are not minified: Elysia compiles its
// handlers from function source, which full minification breaks (elysia issue 1711).
export {}

const result = await Bun.build({
  // The threads' code are entrypoints of their own: a Worker loads each by URL (src/db/checkpointer.ts,
  // src/watch/watcher.ts).
  entrypoints: ['./src/main.ts', './src/db/checkpoint.worker.ts', './src/watch/chokidar.worker.ts'],
  target: 'bun',
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
