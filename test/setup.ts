// Preloaded before every test file (bunfig.toml): hooks here are global to the run.
import { afterAll } from 'bun:test'
import { removeLeftovers } from './helpers/temp.ts'

afterAll(removeLeftovers)
