import pkg from '../package.json' with { type: 'json' }

export const VERSION: string = pkg.version

// build.ts defines this name as the commit the executable is built from (`define` in Bun.build
// replaces it with a string literal): the first 12 hex digits of HEAD, with "-dirty" when the
// working tree had changes, or "unknown" when git could not tell. Run from source it is not
// defined, and git is asked when the commit is wanted.
declare const REELHOUSE_COMMIT: string | undefined

/**
 * The commit of this code as `reelhouse --version` shows it: "1a2b3c4d5e6f", "1a2b3c4d5e6f-dirty"
 * or "unknown". From source, git is run in the checkout this file is in (not in the user's
 * working folder), and only when asked: every command would otherwise pay for two git calls.
 */
export function commit(env: Record<string, string | undefined> = process.env): string {
  return typeof REELHOUSE_COMMIT === 'string' ? REELHOUSE_COMMIT : gitCommit(import.meta.dir, env)
}

/**
 * What git says of the checkout at `dir`: HEAD's first 12 hex digits, "-dirty" when
 * `git status --porcelain` lists anything (a changed, staged or untracked file), or "unknown"
 * when there is no git program or no repository. build.ts defines REELHOUSE_COMMIT with it.
 * git is looked for on the PATH of `env`, and runs with it.
 */
export function gitCommit(dir: string, env: Record<string, string | undefined> = process.env): string {
  const git = (...args: string[]) => {
    try {
      const r = Bun.spawnSync(['git', ...args], { cwd: dir, env, stdin: 'ignore', stdout: 'pipe', stderr: 'ignore' })
      return r.exitCode === 0 ? r.stdout.toString() : undefined
    } catch {
      // No git program on the PATH: spawnSync throws ENOENT.
      return undefined
    }
  }
  const head = git('rev-parse', 'HEAD')?.trim()
  if (!head || !/^[0-9a-f]{40,64}$/.test(head)) return 'unknown'
  const status = git('status', '--porcelain')
  // A status that could not be read is not claimed to be clean.
  return `${head.slice(0, 12)}${status === '' ? '' : '-dirty'}`
}

/** The line of `reelhouse --version`: "reelhouse 0.1.0 (commit 1a2b3c4d5e6f)". */
export const versionLine = (env: Record<string, string | undefined> = process.env) =>
  `reelhouse ${VERSION} (commit ${commit(env)})`
