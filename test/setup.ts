// Preloaded before every test file (bunfig.toml): hooks here are global to the run.
import { afterAll, setDefaultTimeout } from 'bun:test'
import { removeLeftovers } from './helpers/temp.ts'

afterAll(removeLeftovers)

// A test's outcome never depends on the machine's speed: bun's default bound of 5 s per test
// failed CPU-heavy tests (password hashing, ffmpeg) on a busy 2-core machine in a full run. The
// bound only ends a test that hangs; the conditions tests wait for have bounds of their own.
setDefaultTimeout(120_000)
