// The commit `reelhouse --version` names (src/version.ts gitCommit), read from a repository made
// here: HEAD's first 12 hex digits, "-dirty" for a changed, staged or new file, "unknown" where
// git finds no repository. The command line's own output is tested in test/cli/commands.test.ts
// (from source) and test/cli/e2e.test.ts (compiled, with the commit built in).
import { afterAll, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gitCommit } from '../src/version.ts'
import { tempDir } from './helpers/app.ts'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** git in `dir`, with an author of its own (the machine may have none configured). */
function git(dir: string, ...args: string[]): string {
  const r = Bun.spawnSync(
    ['git', '-c', 'user.name=test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false', ...args],
    { cwd: dir, stderr: 'pipe' },
  )
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr.toString()}`)
  return r.stdout.toString().trim()
}

test.skipIf(!Bun.which('git'))(
  'HEAD of a clean tree; -dirty for a changed, a staged or a new file; unknown outside a repository',
  () => {
    const repo = tempDir('reelhouse-version-')
    dirs.push(repo)
    git(repo, 'init', '-q')
    writeFileSync(join(repo, 'a.txt'), 'one\n')
    git(repo, 'add', 'a.txt')
    git(repo, 'commit', '-q', '-m', 'one')
    const head = git(repo, 'rev-parse', 'HEAD').slice(0, 12)
    expect(gitCommit(repo)).toBe(head)

    writeFileSync(join(repo, 'a.txt'), 'two\n')
    expect(gitCommit(repo)).toBe(`${head}-dirty`)
    git(repo, 'add', 'a.txt')
    expect(gitCommit(repo)).toBe(`${head}-dirty`)
    git(repo, 'commit', '-q', '-m', 'two')
    const next = git(repo, 'rev-parse', 'HEAD').slice(0, 12)
    expect(gitCommit(repo)).toBe(next)
    writeFileSync(join(repo, 'new.txt'), 'new\n')
    expect(gitCommit(repo)).toBe(`${next}-dirty`)

    // A folder in no repository: GIT_CEILING_DIRECTORIES keeps git from finding one above it.
    const outside = tempDir('reelhouse-version-none-')
    dirs.push(outside)
    const ceiling = process.env.GIT_CEILING_DIRECTORIES
    process.env.GIT_CEILING_DIRECTORIES = join(outside, '..')
    try {
      expect(gitCommit(outside)).toBe('unknown')
    } finally {
      if (ceiling === undefined) delete process.env.GIT_CEILING_DIRECTORIES
      else process.env.GIT_CEILING_DIRECTORIES = ceiling
    }
  },
)
