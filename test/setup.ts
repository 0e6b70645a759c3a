// Preloaded before every test file (bunfig.toml): hooks here are global to the run.
import { afterAll } from 'bun:test'
import { stopPostgres } from './helpers/pg.ts'
import { removeLeftovers } from './helpers/temp.ts'

afterAll(stopPostgres)
afterAll(removeLeftovers)

// A test's outcome never depends on the machine's speed: bun's default bound of 5 s per test
// failed CPU-heavy tests (password hashing, ffmpeg) on a busy 2-core machine in a full run.
// `npm test` (CI, the README) runs with --timeout 120000; setDefaultTimeout here would reach
// the first test file only (bun resets it per file), so files of CPU-heavy tests call it too.
