// A quiet install: `npm install` on a fresh clone runs only the install scripts we reviewed and
// prints no warning about the others, and nothing phones home. npm 11 asks about every package
// with an install script not named in package.json's allowScripts (and will stop running them);
// swagger-ui-dist pulls in @scarf/scarf, whose postinstall reports the install to scarf.sh.
import { expect, test } from 'bun:test'
import lock from '../package-lock.json' with { type: 'json' }
import pkg from '../package.json' with { type: 'json' }

const ROOT = `${import.meta.dir}/..`
const allow = (pkg as { allowScripts?: Record<string, boolean> }).allowScripts ?? {}

test('every locked package with an install script has been reviewed in allowScripts', () => {
  const withScripts = Object.entries(lock.packages as Record<string, { hasInstallScript?: boolean }>)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
  expect(withScripts.length).toBeGreaterThan(0) // bun's own postinstall at least: the check is live
  expect(withScripts.filter((name) => !(name in allow))).toEqual([])
})

test("scarf's install analytics are off both ways: its script is denied, and its own switch is off for npm versions that run it anyway", () => {
  expect(allow['@scarf/scarf']).toBe(false)
  expect((pkg as { scarfSettings?: { enabled?: boolean } }).scarfSettings?.enabled).toBe(false)
  // Bun's postinstall puts the runtime in place: the scripts we do need stay allowed.
  expect(allow.bun).toBe(true)
})

test('npm itself finds no install script left to review (on npm versions that review them)', () => {
  const run = Bun.spawnSync(['npm', 'install-scripts', 'ls', '--json'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const out = run.stdout.toString()
  // Older npm has no such command and runs every script: the checks above are what holds there.
  if (run.exitCode !== 0 && !out.includes('"allowScripts"')) return
  expect(JSON.parse(out)).toEqual({ allowScripts: [] })
})
