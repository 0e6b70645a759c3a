// Where the compiled executable keeps its own modules. Bun serves them from an embedded file
// system under /$bunfs/root/ on Linux and macOS and under B:/~BUN/root/ on Windows, and the
// threads' code are entry points of their own there (build.ts). The executable is known by
// Bun.main, the path of its entry point, and never by import.meta.url: with the bytecode build
// every module's import.meta.url is the path of its source file on the build machine (probed on
// Linux and under Wine with Bun 1.4.5), so a worker URL made from it loads the source file where
// the build ran, and no thread at all on a user's machine (under Wine: ModuleNotFound for
// work\main\src\db\checkpoint.worker.ts). On Windows Bun.main is B:/~BUN/root/<name>; an
// import.meta.url there spells the tilde %7EBUN, so each spelling is recognized.

/** Whether `path` (Bun.main, or a module's URL) lies in the executable's embedded files. */
export const isEmbedded = (path: string) => /(^|\/)(\$bunfs|[A-Z]:[\\/](~BUN|%7EBUN))[\\/]/i.test(path)

/**
 * The URL of `entry` (say 'db/checkpoint.worker.js'), one of the executable's own entry points,
 * when this process is the compiled executable (`main`, by default Bun.main, lies in its embedded
 * files); undefined when it runs from source.
 */
export function embeddedUrl(entry: string, main: string = Bun.main): string | undefined {
  if (!isEmbedded(main)) return undefined
  const root = main.replaceAll('\\', '/').replace(/[^/]*$/, '')
  return `file://${root.startsWith('/') ? '' : '/'}${root}${entry}`
}
