// npm run build → dist/reelhouse for this machine: one executable with the runtime, the code, the
// migrations (inlined by a macro) and the docs assets. Nothing is minified: Elysia composes its
// handlers from the source text of ours, which minified text changes (compile() says how).
//
// npm run build -- --all → dist/reelhouse-<os>-<arch>[.exe] for each of TARGETS, and
// dist/SHA256SUMS in the format of sha256sum (`cd dist && sha256sum -c SHA256SUMS` checks them).
// npm run build -- --target linux-arm64 [--target NAME]... → only those, with their SHA256SUMS.
// --outdir DIR puts the executables and SHA256SUMS there instead of dist/ (the tests build into
// a folder of their own, leaving a release's dist/SHA256SUMS alone). Bun cross-compiles by
// fetching the runtime of each target from the npm registry once (~/.bun/install/cache keeps it).
//
// The web page is built first (src/http/pagebuild.ts: its own Bun.build for the browser, fully
// minified, hashed and precompressed) into a temporary folder of this build (builds side by side,
// as the tests' parallel processes make them, never share one), with a generated module importing each file
// `with { type: 'file' }`; the import 'reelhouse:page' resolves to that module, so its files are
// embedded in the executable (serve run from source finds no such module and builds the page itself).
// The page is the same for every target, so it is built once.
//
// The commit the executable is built from (`reelhouse --version`) is defined at build time as
// REELHOUSE_COMMIT (src/version.ts).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { checkSignature, signAdHoc } from './src/build/macho.ts'
import { type BuiltFile, buildPage, writePage } from './src/http/pagebuild.ts'
import { gitCommit } from './src/version.ts'

/**
 * The platforms of `--all`, by the name users see (the file's suffix) and Bun's compile target.
 * bun-linux-x64 is Bun's build for CPUs from 2013 on (AVX2); linux-x64-baseline, for older ones
 * (the Celerons and Atoms of some NAS), is built only when asked for by --target.
 */
export const TARGETS = {
  'linux-x64': 'bun-linux-x64',
  'linux-arm64': 'bun-linux-arm64',
  'darwin-arm64': 'bun-darwin-arm64',
  'darwin-x64': 'bun-darwin-x64',
  'windows-x64': 'bun-windows-x64',
} as const satisfies Record<string, Bun.Build.CompileTarget>
const MORE_TARGETS = { 'linux-x64-baseline': 'bun-linux-x64-baseline' } as const satisfies Record<
  string,
  Bun.Build.CompileTarget
>
const KNOWN: Record<string, Bun.Build.CompileTarget> = { ...TARGETS, ...MORE_TARGETS }

/** The file an --all or --target build writes for a target: reelhouse-linux-arm64, reelhouse-windows-x64.exe. */
export const executableName = (target: string) => `reelhouse-${target}${target.startsWith('windows-') ? '.exe' : ''}`

/**
 * The threads' code are entrypoints of their own: a Worker loads each by URL (src/db/checkpointer.ts,
 * src/watch/watcher.ts, src/storage/verified.ts). Each built executable is checked to hold them
 * under these names.
 */
const WORKERS = ['db/checkpoint.worker.js', 'watch/chokidar.worker.js', 'storage/copy.worker.js']

/** Compiles one executable; `target` undefined: for this machine, as the bun that runs this. */
async function compile(
  outfile: string,
  pageModule: string,
  commit: string,
  target?: Bun.Build.CompileTarget,
): Promise<string> {
  const result = await Bun.build({
    entrypoints: [
      './src/executable.ts',
      './src/db/checkpoint.worker.ts',
      './src/watch/chokidar.worker.ts',
      './src/storage/copy.worker.ts',
    ],
    target: 'bun',
    plugins: [
      {
        name: 'reelhouse-page',
        setup(build) {
          build.onResolve({ filter: /^reelhouse:page$/ }, () => ({ path: pageModule }))
        },
      },
    ],
    define: { REELHOUSE_COMMIT: JSON.stringify(commit) },
    // Not minified at all: Elysia writes each route's handler from the source text of our handlers
    // and hooks (src/http/composed.ts), and minified text reads differently. Without whitespace,
    // `=> { check(r) }` and `=> (a ?? b)(x)` became `=>{check(r)}` and `=>(a??b)(x)`, which its
    // test for async functions matches: 3 of the 4 onRequest hooks were awaited on every request,
    // and 40 routes awaited their handler or a hook (in-process, 10 µs more a request for the
    // first page, 63 against 54 µs at limit=1); syntax minification alone still made the proxy
    // files' handler `return close(fd), new Response(...)`. Unminified, the bundle's functions
    // read as Bun prints them when it runs the source, and every route composes the same
    // (test/cli/compiled-handlers.test.ts). It costs 0.5 MB of a 113 MB executable, and no start
    // time we could measure (--version and serve's start, alternating, within their noise).
    minify: false,
    sourcemap: 'none',
    // The bundle's code precompiled to the runtime's bytecode (its source is still there, for
    // Elysia's composition above): `--version` took 0.13 s of CPU and now 0.03 s, a start and
    // stop of serve 0.8 s and now 0.7 s (0.51 → 0.40 s to the first request), for 7 MiB more.
    // Cross-compiled the same (the arm64 build runs under qemu in test/cli/arm64.test.ts).
    bytecode: true,
    compile: {
      ...(target ? { target } : {}),
      outfile,
      // The executable must behave the same from any folder: no bunfig.toml or .env from there.
      autoloadBunfig: false,
      autoloadDotenv: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
      // No `windows` options (icon, title, version): Bun 1.4.5 ignores them when it cross-compiles
      // (the .exe built here still says "Oven" and 1.4.5 in its properties); hideConsole would
      // hide the log of what is a console program.
    },
  })
  if (!result.success) {
    for (const log of result.logs) console.error(log)
    throw new Error(`the executable ${outfile} did not build`)
  }
  return result.outputs[0]!.path
}

/**
 * The workers and the page's files are in the executable: their names are in its embedded file
 * table, whatever the platform. The workers must sit where src/db/, src/watch/ and src/storage/ sit under its
 * root (/$bunfs/root/, B:/~BUN/root/ on Windows), where the code looks for them; the page's
 * files are imported by path, so only their names are looked for (not `index.html`, a name too
 * common to tell anything: it comes with the hashed files it loads). A target whose bundle lost
 * one would serve without a watcher thread or without a page, and this machine cannot run it to
 * find out.
 */
async function checkEmbedded(path: string, page: readonly BuiltFile[]) {
  const bytes = Buffer.from(await Bun.file(path).arrayBuffer())
  const wanted = [...WORKERS.map((w) => `root/${w}`), ...page.filter((f) => f.name !== 'index.html').map((f) => f.name)]
  const missing = wanted.filter((name) => !bytes.includes(name))
  if (missing.length) throw new Error(`${path} does not hold ${missing.join(', ')}`)
}

// ---- macOS code signatures (src/build/macho.ts) ----
/**
 * A macOS executable must carry a code signature that checks: an arm64 one does not start
 * without one, and Gatekeeper (`codesign -v`) refuses a signature that is there but wrong.
 * Bun 1.4.5 signs its darwin-arm64 output ad hoc itself, validly (flags adhoc|linker-signed,
 * every page hash matches). Its darwin-x64 output keeps Oven's signature of the bare runtime
 * (identifier `bun`, flags 0x10000 runtime), made before Bun put the program in (its __BUN
 * segment, about 11 MB, inserted before __LINKEDIT): measured, 75 of its 23,797 page hashes no
 * longer match (page 0, the load commands, among them), and the bytes before the signature past
 * its codeLimit, about the program's size (11,272,192 in one build, 11,304,960 in the next), are
 * covered by no hash. So a darwin file whose signature does not check is signed again ad hoc, as
 * the Darwin linker does (its file name as the identifier), and then every darwin file is
 * checked, by recomputing each page hash; one that still fails stops the build. Before its
 * SHA256SUMS line, which is of the final file. Not run on a Mac (none here): the signer, given
 * Bun's arm64 file and its identifier, writes Bun's signature again byte for byte (but for our
 * padding to 16 bytes).
 */
async function signForMac(path: string) {
  const bytes = new Uint8Array(await Bun.file(path).arrayBuffer())
  const built = checkSignature(bytes)
  if (!built.ok) {
    await Bun.write(path, signAdHoc(bytes, basename(path)))
    console.log(
      `re-signed ${path} ad hoc: its signature did not check (${built.mismatched} pages mismatched, ${built.uncovered} bytes uncovered)`,
    )
  }
  const final = checkSignature(new Uint8Array(await Bun.file(path).arrayBuffer()))
  if (!final.ok) throw new Error(`${path}: its code signature does not check: ${final.detail}`)
}
// ---- end of macOS code signatures ----

/** A file's SHA-256 in hex, read in pieces (each executable is about 100 MB). */
async function sha256(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256')
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk)
  return hasher.digest('hex')
}

async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: { all: { type: 'boolean' }, target: { type: 'string', multiple: true }, outdir: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  })
  const unknown = (values.target ?? []).filter((t) => !Object.hasOwn(KNOWN, t))
  if (unknown.length)
    throw new UsageError(`unknown target ${unknown.join(', ')}; the targets are ${Object.keys(KNOWN).join(', ')}`)
  const chosen = values.all
    ? [...new Set([...Object.keys(TARGETS), ...(values.target ?? [])])]
    : [...new Set(values.target ?? [])]
  const outdir = resolve(values.outdir ?? join(import.meta.dir, 'dist'))

  const commit = gitCommit(import.meta.dir)
  const page = await buildPage()
  const pageFolder = mkdtempSync(join(tmpdir(), 'reelhouse-page-'))
  try {
    await compileAll(outdir, chosen, commit, page, writePage(pageFolder, page))
  } finally {
    rmSync(pageFolder, { recursive: true, force: true })
  }
}

/** The executables of `chosen` (this machine's alone when it is empty) into outdir, with the built page. */
async function compileAll(
  outdir: string,
  chosen: string[],
  commit: string,
  page: readonly BuiltFile[],
  pageModule: string,
) {
  const sizes = page.map((f) => f.br?.length ?? f.bytes.length).reduce((a, b) => a + b, 0)
  console.log(`built the page: ${page.length} files, ${(sizes / 1024).toFixed(1)} KiB in brotli`)

  if (chosen.length === 0) {
    const path = await compile(join(outdir, 'reelhouse'), pageModule, commit)
    await checkEmbedded(path, page)
    // An Intel Mac building for itself gets the same runtime as --target darwin-x64.
    if (process.platform === 'darwin') await signForMac(path)
    console.log(`built ${path} (commit ${commit})`)
    return
  }
  mkdirSync(outdir, { recursive: true })
  // The list goes first and comes back complete at the end: a build that fails halfway has
  // replaced some executables, and an old list would no longer describe them.
  const list = join(outdir, 'SHA256SUMS')
  rmSync(list, { force: true })
  const sums: string[] = []
  for (const target of chosen) {
    const path = await compile(join(outdir, executableName(target)), pageModule, commit, KNOWN[target])
    await checkEmbedded(path, page)
    if (target.startsWith('darwin-')) await signForMac(path)
    const size = Bun.file(path).size
    console.log(`built ${path} (${(size / 2 ** 20).toFixed(1)} MiB, commit ${commit})`)
    // Two spaces: sha256sum's text mode, which `sha256sum -c` reads on every system.
    sums.push(`${await sha256(path)}  ${basename(path)}\n`)
  }
  // The sums of this run's executables only, so that every line checks a file built with the others.
  writeFileSync(list, sums.join(''))
  console.log(`wrote ${list}`)
}

class UsageError extends Error {}

if (import.meta.main) {
  await main(process.argv.slice(2)).catch((error: Error) => {
    // A wrong word (parseArgs' own errors carry a code starting ERR_PARSE_ARGS): the line and exit 2.
    const usage =
      error instanceof UsageError || String((error as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS')
    console.error(`build.ts: ${usage ? error.message : (error.stack ?? error.message)}`)
    if (usage) console.error('usage: bun build.ts [--all] [--target NAME]... [--outdir DIR]')
    process.exit(usage ? 2 : 1)
  })
}
