// The table objects every statement is built from, for the engine this process's catalogue is on.
//
// A process holds one catalogue, on SQLite or on PostgreSQL, chosen once as it starts (`serve
// --database`, a command's flag, or the test run's engine) before any statement is built. drizzle
// builds a statement from a table object of its dialect: a SQLite table renders SQLite's types
// and reads 0/1 as booleans and JSON text as values; a PostgreSQL table reads booleans, json and
// 64-bit integers as PostgreSQL answers them. The two schemas (schema.ts, schema.pg.ts) have the
// same tables, columns and row types (test/db/pg-schema.test.ts), so the code is written once
// against these names, typed as SQLite's, and builds the right statements for either.
//
// Why module bindings that change once, not a set of tables passed to every service: every module
// imports its tables by name, as it did from schema.ts, and an ES module's exported `let` is read
// live by every importer. The alternative was threading a table set through 40 files for a choice
// a process makes once. useEngine refuses a second, different choice, so no statement built for
// one engine can meet the other's tables.
//
// The constants and types of the schema (kinds, states, row shapes) come from schema.ts as they are.
import type { Engine } from './port.ts'
import * as pg from './schema.pg.ts'
import * as sqlite from './schema.ts'

export * from './schema.ts'

export let users = sqlite.users
export let userPermissions = sqlite.userPermissions
export let groups = sqlite.groups
export let groupPermissions = sqlite.groupPermissions
export let userGroups = sqlite.userGroups
export let apiKeys = sqlite.apiKeys
export let productionAccess = sqlite.productionAccess
export let sessions = sqlite.sessions
export let transcodingProfiles = sqlite.transcodingProfiles
export let devices = sqlite.devices
export let productions = sqlite.productions
export let contentTypes = sqlite.contentTypes
export let customMetadataSets = sqlite.customMetadataSets
export let customMetadata = sqlite.customMetadata
export let mediaAssets = sqlite.mediaAssets
export let dismissedFiles = sqlite.dismissedFiles
export let mediaAssetShares = sqlite.mediaAssetShares
export let projectAssets = sqlite.projectAssets
export let projectAssetLinks = sqlite.projectAssetLinks
export let shots = sqlite.shots
export let sequences = sqlite.sequences
export let sequenceShots = sqlite.sequenceShots
export let markers = sqlite.markers
export let keywordCategories = sqlite.keywordCategories
export let keywords = sqlite.keywords
export let mediaAssetKeywords = sqlite.mediaAssetKeywords
export let searchDeferred = sqlite.searchDeferred
export let importLogs = sqlite.importLogs
export let assetHoldDurations = sqlite.assetHoldDurations
export let tasks = sqlite.tasks
export let history = sqlite.history

let chosen: Engine | undefined

/** The engine the tables are for: 'sqlite' until useEngine says otherwise. */
export function engine(): Engine {
  return chosen ?? 'sqlite'
}

/**
 * Makes every table above the given engine's. Called once as the process starts, before any
 * statement is built; choosing the other engine later throws (statements already built and kept
 * would still name the first engine's tables).
 */
export function useEngine(next: Engine): void {
  if (chosen === next) return
  if (chosen !== undefined)
    throw new Error(`the catalogue's engine is ${chosen} in this process: it cannot become ${next}`)
  chosen = next
  if (next === 'sqlite') return
  const t = pg as unknown as typeof sqlite
  users = t.users
  userPermissions = t.userPermissions
  groups = t.groups
  groupPermissions = t.groupPermissions
  userGroups = t.userGroups
  apiKeys = t.apiKeys
  productionAccess = t.productionAccess
  sessions = t.sessions
  transcodingProfiles = t.transcodingProfiles
  devices = t.devices
  productions = t.productions
  contentTypes = t.contentTypes
  customMetadataSets = t.customMetadataSets
  customMetadata = t.customMetadata
  mediaAssets = t.mediaAssets
  dismissedFiles = t.dismissedFiles
  mediaAssetShares = t.mediaAssetShares
  projectAssets = t.projectAssets
  projectAssetLinks = t.projectAssetLinks
  shots = t.shots
  sequences = t.sequences
  sequenceShots = t.sequenceShots
  markers = t.markers
  keywordCategories = t.keywordCategories
  keywords = t.keywords
  mediaAssetKeywords = t.mediaAssetKeywords
  searchDeferred = t.searchDeferred
  importLogs = t.importLogs
  assetHoldDurations = t.assetHoldDurations
  tasks = t.tasks
  history = t.history
}
