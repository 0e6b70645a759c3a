// The compiled executable's entry (build.ts). It runs the command line unconditionally: in an
// executable that Bun builds for Windows, import.meta.main is false in every module, the entry
// too (oven-sh/bun#30084), so src/main.ts's own `if (import.meta.main)` never started anything
// there and every command exited 0 without a line. `bun src/main.ts` keeps that check, which is
// what lets tests import main.ts without running it.
import { runAsProcess } from './main.ts'

runAsProcess()
