// The scan task, by the name its importers know: the scan runs as named phases in scan/ (walk,
// gather, decide, verify, apply, ingest; scan/index.ts says what each does and hands on).
export { ingestOwner, movesUpload } from './scan/owner.ts'
export { scanHandler } from './scan/index.ts'
export type { ScanDeps } from './scan/run.ts'
