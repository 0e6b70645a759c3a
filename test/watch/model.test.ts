// A model-based test of the catalogue following the disk (service.md 10, watch/reconcile.ts): a
// seeded random walk of the edits another program makes on real folders (new clips, copies of
// clips catalogued beside their originals, renames, moves (across file systems too), swaps and
// rotations through a temporary name, deletes, restores from a backup, saves under a new inode,
// folder renames, and changes made while the service is stopped), each followed by scans, and
// after each the catalogue is compared with a model of what it must say.
//
// Replay: REELHOUSE_MODEL_SEEDS=1,2,3 (comma-separated; default one fixed seed) and
// REELHOUSE_MODEL_STEPS=400 (default 200: about 9 s for both variants). A failure prints its seed,
// variant and step, every operation made so far (with the scans' results), and the expected and
// actual catalogue with the inodes; REELHOUSE_MODEL_LOG=1 prints the operations of passing runs too.
// The operations depend on the seed alone (never on inode numbers or the clock), so a run of correct
// code is the same every time; what the file system does with freed inodes may vary.
//
// THE MODEL. Every clip's bytes begin with a key naming whose content they are ("k7 v2\n", then
// random bytes), and every asset is registered with the description "model clip k7": metadata on
// the wrong file shows at once. The model tracks each file on disk (path → key, and a file id that
// stands for its inode: a rename keeps it, a write makes a new one) and, per asset, what the
// catalogue said at the last check (path, online, the file it held, the bytes it last saw). The
// expected catalogue after the scans, by content: an asset whose bytes are on disk is online at
// that path (wherever they went: identity, or the rules below for a new inode); an asset whose
// bytes are on disk nowhere is offline (is_production false) and keeps the path it had.
// A copy (cp a.mov a-copy.mov, catalogued as a clip of its own) has its original's bytes, key
// included: the model knows whose file each is by its own key, not by the bytes. Only assets
// whose files vanished are candidates for a file by content (rule 4: a copy still in place never
// is); where several would be (a tie: nothing is guessed), `followable` does not make the change.
//
// Where identity-first (reconcile.ts header, rules 1-4) and "by content" agree, that is the whole
// model; a new inode is its asset's only by rule 3 (it lies at the asset's catalogued path: saved
// in place, or restored under its old name) or rule 4 (it lies at a path no asset names and its
// bytes are the asset's catalogued fingerprint: restored under another name). Rule 2 (sightings)
// needs the watcher's look at an event, which these scans do not have (and a restart forgets):
// so a chain like "rename, then save under a new inode" made while stopped is found by no rule;
// the file would be a stranger (imported as a new asset, or nobody's at a catalogued path). The
// generator therefore only makes, between two checks, changes the documented rules can follow;
// `followable` says which, and why, and a change it refuses is not made (the step picks another).
// Documented behaviour that differs from an editor's expectation, modelled as documented (i.e.
// never generated):
// - A file at a path that an asset the catalogue has ONLINE names, whose own file is gone, is that
//   asset's (rule 3, "saved in place"), even when its bytes are another asset's (a restore of an
//   older clip under the name). Only possible when several changes happen between two scans.
// - A new file at a path only OTHER offline assets name is theirs by rule 3, not (by content) the
//   asset whose bytes it holds: content (rule 4) only ever looks at paths no asset names.
// Where the header says nothing, the model expects what an editor expects:
// - Several offline assets name one path (a name freed by a delete and given to another clip, which
//   was deleted too) and the file restored there holds the bytes of one of them: it is that one's
//   (its fingerprint says so; rule 3 alone cannot choose). Should another answer be intended
//   ("nothing is guessed", as rule 4 does), `followable` is where to stop generating this case.
//
// THE HARNESS. Two devices: seedProduction's, which is also the production's watch folder, and
// one on another file system (/dev/shm where it is one; model paths `shm/...`), where a move from
// the first is a copy and a delete (a new inode), as `mv` makes it. Every clip is made through
// POST /api/videoassets/ before any scan sees it, so a file the catalogue failed to attribute is
// imported as a new asset at its next look in the watch folder (settle time 0), and the count
// check ("as many assets as clips made") catches it; on the other device such a file is left
// alone and the model check says whose it should have been. Scans run as tasks to their end, as
// in scan.test.ts. Two variants per seed:
// - partial: after each change the scans the watcher would queue, per device, its adds first (new
//   names; as paths, or, at random, their folders) and its removals after (old names), then the
//   check;
// - full: a full scan of each device after each change, both at once (two task slots, as a timed
//   rescan runs them), then the check.
// 'stop/start' stops the core, makes 1-3 changes, then starts a new core on the same catalogue (its
// in-memory `recent` and settle gate fresh, as after a restart) and runs the start scans that
// service.ts queues (a full scan of each device, both at once): they must converge whichever
// looks first. Each run ends with one more full scan of each device, which must change nothing.
// The order in which two scans at once interleave is not the seed's: the catalogue they leave is.
import { afterEach, describe, expect, test } from 'bun:test'
import { lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { type CoreOn, createCore } from '../../src/core.ts'
import type { SqlitePort } from '../../src/db/port.ts'
import { stampOf } from '../../src/storage/paths.ts'
import { silentLog } from '../../src/util/log.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'
import { emptyFfmpegDir, otherFileSystemDir, removeScratch } from '../helpers/imports.ts'
import { runSync } from '../../src/db/port.ts'

const DEFAULT_SEED = 20250611
const DEFAULT_STEPS = 200
const SEEDS = (process.env.REELHOUSE_MODEL_SEEDS ?? String(DEFAULT_SEED))
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean)
  .map((s) => {
    const n = Number(s)
    if (!Number.isSafeInteger(n)) throw new Error(`REELHOUSE_MODEL_SEEDS: not an integer: ${s}`)
    return n
  })
const STEPS = Number(process.env.REELHOUSE_MODEL_STEPS ?? DEFAULT_STEPS)
if (!Number.isSafeInteger(STEPS) || STEPS < 1)
  throw new Error(`REELHOUSE_MODEL_STEPS: not a positive integer: ${process.env.REELHOUSE_MODEL_STEPS}`)
const VARIANTS = ['partial', 'full'] as const
type Variant = (typeof VARIANTS)[number]

/** mulberry32: small, fast, and the same sequence everywhere for one seed. */
function prng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  return {
    next,
    int,
    chance: (p: number) => next() < p,
    pick: <T>(list: readonly T[]): T => list[int(list.length)]!,
    /** One of the names by weight (weights 0 never). */
    weighted: <T extends string>(weights: Partial<Record<T, number>>): T => {
      const entries = (Object.entries(weights) as [T, number][]).filter(([, w]) => w > 0)
      let r = next() * entries.reduce((s, [, w]) => s + w, 0)
      for (const [name, w] of entries) if ((r -= w) < 0) return name
      return entries.at(-1)![0]
    },
  }
}

// ------------------------------------------------------------------------------------------------
// The model: files on disk and what the catalogue said at the last check.

/** A file: `fid` stands for its inode (a rename keeps it, a write makes a new one). */
type FileObj = { fid: number; key: string; version: number; bytes: Uint8Array }
/** What the catalogue said of an asset at the last check (the database's state, in the model's terms). */
type AssetModel = { key: string; id: number; path: string; online: boolean; fid: number; seen: Uint8Array }
/**
 * Disk paths are relative to the device root; folders hold clips and lie two levels down (Show/d3);
 * `shm/d5` is a folder on the other device (its root is `shm`).
 */
type DiskState = { files: Map<string, FileObj>; folders: Set<string> }

/** The primitive changes an operation makes, on the model and on the real disk alike. */
type Action =
  | { do: 'write'; path: string; file: FileObj }
  /** With `fid`: across file systems, a copy and a delete (the file there is a new inode, `fid`). */
  | { do: 'mv'; from: string; to: string; fid?: number }
  | { do: 'rm'; path: string }
  | { do: 'mvdir'; from: string; to: string }

type Plan = {
  text: string
  actions: Action[]
  adds: string[]
  removes: string[]
  create?: { key: string; path: string }
}

const parentOf = (path: string) => path.slice(0, path.lastIndexOf('/'))
const baseOf = (path: string) => path.slice(path.lastIndexOf('/') + 1)
const DESCRIPTION = (key: string) => `model clip ${key}`
const keyOfDescription = (d: string) => (d.startsWith('model clip ') ? d.slice('model clip '.length) : `?${d}`)
/** The model path's device: the other one (`shm/...`), or the production's. */
const SHM = 'shm'
const onShm = (path: string) => path === SHM || path.startsWith(SHM + '/')
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i])
/** storage/fingerprint.ts for files of at most 2 MiB: xxHash64 of the whole file, seeded with its size. */
const fingerprint = (bytes: Uint8Array) => Bun.hash.xxHash64(bytes, BigInt(bytes.length)).toString(16).padStart(16, '0')

function applyToState(state: DiskState, actions: readonly Action[]) {
  for (const a of actions) {
    if (a.do === 'write') {
      if (state.files.has(a.path)) throw new Error(`model: write over ${a.path}`)
      state.files.set(a.path, a.file)
      state.folders.add(parentOf(a.path))
    } else if (a.do === 'mv') {
      const f = state.files.get(a.from)
      if (!f) throw new Error(`model: mv of missing ${a.from}`)
      state.files.delete(a.from)
      state.files.set(a.to, a.fid === undefined ? f : { ...f, fid: a.fid }) // a file there is replaced (its inode is gone)
      state.folders.add(parentOf(a.to))
    } else if (a.do === 'rm') {
      if (!state.files.delete(a.path)) throw new Error(`model: rm of missing ${a.path}`)
    } else {
      const moved = [...state.files].filter(([p]) => p.startsWith(a.from + '/'))
      for (const [p] of moved) state.files.delete(p)
      for (const [p, f] of moved) state.files.set(a.to + p.slice(a.from.length), f)
      state.folders.delete(a.from)
      state.folders.add(a.to)
    }
  }
}

function applyToDisk(abs: (p: string) => string, actions: readonly Action[]) {
  for (const a of actions) {
    if (a.do === 'write') {
      mkdirSync(abs(parentOf(a.path)), { recursive: true })
      writeFileSync(abs(a.path), a.file.bytes, { flag: 'wx' })
    } else if (a.do === 'mv') {
      mkdirSync(abs(parentOf(a.to)), { recursive: true })
      if (a.fid === undefined) renameSync(abs(a.from), abs(a.to))
      else {
        // mv itself, across file systems: it copies, then deletes the original.
        const r = Bun.spawnSync(['mv', '-T', abs(a.from), abs(a.to)])
        if (r.exitCode !== 0) throw new Error(`mv ${a.from} ${a.to}: ${r.stderr.toString()}`)
      }
    } else if (a.do === 'rm') rmSync(abs(a.path))
    else renameSync(abs(a.from), abs(a.to))
  }
}

/**
 * Whether the documented rules can follow the disk state `after` from what the catalogue says
 * (`assets`), without sightings: undefined if so, else why not. Each file must be its asset's by
 * identity (rule 1), by its path (rule 3: the asset names it, and no asset the catalogue has
 * online there lost its own file, as it would take it first), or by content (rule 4: no asset
 * names the path, and the bytes are the ones the catalogue fingerprinted).
 */
function followable(after: DiskState, assets: ReadonlyMap<string, AssetModel>): string | undefined {
  const fids = new Set([...after.files.values()].map((f) => f.fid))
  /** Files that only their content can tie to their asset (rule 4). */
  const byContent: [string, FileObj][] = []
  for (const [path, f] of after.files) {
    const a = assets.get(f.key)
    if (!a) return `${path} holds ${f.key}, which no asset is`
    if (f.fid === a.fid) continue
    if (path === a.path) {
      const rival = [...assets.values()].find((b) => b !== a && b.online && b.path === path && !fids.has(b.fid))
      if (rival)
        return `${path}: ${rival.key} is online there in the catalogue and its file is gone: rule 3 would give it ${a.key}'s bytes`
      // Offline assets naming one path: the content decides (the catalogue's fingerprint of each),
      // and a copy's content is its original's.
      const others = a.online
        ? []
        : [...assets.values()].filter((b) => b !== a && !b.online && b.path === path && !fids.has(b.fid))
      if (others.length && !sameBytes(a.seen, f.bytes))
        return `${path}: bytes of ${a.key} the catalogue never fingerprinted, at a path ${others.map((b) => b.key).join(', ')} (offline) name too: the content cannot decide`
      const twin = others.find((b) => sameBytes(b.seen, f.bytes))
      if (twin)
        return `${path}: ${a.key}'s bytes, at a path ${twin.key} (offline, with the same bytes) names too: a tie, nothing would be guessed`
      continue
    }
    const namer = [...assets.values()].find((b) => b.path === path)
    if (namer)
      return `${path}: a new inode with ${a.key}'s bytes at a path ${namer.key} names (rule 3 would give it to the path's assets)`
    if (!sameBytes(a.seen, f.bytes))
      return `${path}: a new inode with bytes of ${a.key} the catalogue never fingerprinted, at a path it does not name (needs a sighting)`
    byContent.push([path, f])
  }
  // Rule 4 decides only where the content singles out one asset whose file vanished, and that
  // asset one file. An asset whose file is in place (by identity, or at its path) is no candidate.
  const inPlace = (b: AssetModel) => fids.has(b.fid) || after.files.get(b.path)?.key === b.key
  for (const [path, f] of byContent) {
    const a = assets.get(f.key)!
    const rivals = [...assets.values()].filter((b) => b !== a && sameBytes(b.seen, f.bytes) && !inPlace(b))
    if (rivals.length)
      return `${path}: ${a.key}'s bytes, which ${rivals.map((b) => b.key).join(', ')} (whose files vanished too) had as well: a tie, nothing would be guessed`
    const twins = byContent.filter(([p, g]) => p !== path && sameBytes(g.bytes, f.bytes))
    if (twins.length)
      return `${path}: ${a.key}'s bytes, which ${twins.map(([p]) => p).join(', ')} has as well: a tie, nothing would be guessed`
  }
  return undefined
}

// ------------------------------------------------------------------------------------------------
// The run.

let base: TestApp | undefined
let core: CoreOn<SqlitePort> | undefined
afterEach(async () => {
  await core?.stop()
  base?.cleanup()
  removeScratch()
  core = undefined
  base = undefined
})

type Row = {
  id: number
  description: string
  path_file: string
  is_production: number
  file_dev: number | null
  file_ino: number | null
  file_stamp: number | null
  file_hash: string | null
}

async function run(seed: number, variant: Variant, steps: number) {
  const rng = prng(seed ^ (variant === 'full' ? 0x9e3779b9 : 0))
  base = testApp(undefined, { tasks: false })
  const seeded = await seedProduction(base)
  const root: string = seeded.root
  const device: number = seeded.device.id
  const production: number = seeded.production.id
  const other = otherFileSystemDir('reelhouse-model-shm-')
  const shm = await base.post('/api/devices/', { name: 'shm', path: other.dir })
  if (shm.status !== 201) throw new Error(`device: ${shm.text}`)
  const devices = [device, shm.json.id as number]
  const ffmpegDir = emptyFfmpegDir()
  const startCore = () => {
    // settleMs 0: a file no asset claims is imported at its second look (the count check sees it).
    core = createCore(base!.db, { log: silentLog, ffmpegDir, settleMs: 0 })
    createApp(core)
    core.runner.start()
  }
  startCore()

  const state: DiskState = { files: new Map(), folders: new Set() }
  const assets = new Map<string, AssetModel>()
  /** The bytes an asset's file had when it was deleted, and where: what a restore brings back. */
  const graveyard = new Map<string, { path: string; version: number; bytes: Uint8Array }>()
  const log: string[] = []
  let step = 0
  let created = 0
  let fids = 0
  let names = 0
  let folderNames = 0

  const abs = (p: string) => (onShm(p) ? join(other.dir, p.slice(SHM.length + 1)) : join(root, p))
  /** The model path of an absolute one, or undefined where the model has none. */
  const relOf = (path: string) =>
    path.startsWith(other.dir + '/')
      ? `${SHM}/${path.slice(other.dir.length + 1)}`
      : path.startsWith(root + '/')
        ? path.slice(root.length + 1)
        : undefined
  const TOPS = ['Show', 'Other', SHM]
  for (const top of TOPS)
    for (let i = 0; i < 2; i++) {
      const folder = `${top}/d${folderNames++}`
      mkdirSync(abs(folder), { recursive: true })
      state.folders.add(folder)
    }
  /** A move as `mv` makes it: a rename on one file system, a copy and a delete (a new inode) across two. */
  const mvAction = (from: string, to: string): Action =>
    onShm(from) !== onShm(to) && other.cross ? { do: 'mv', from, to, fid: ++fids } : { do: 'mv', from, to }

  const freshName = () => `c${names++}.mov`
  const newBytes = (key: string, version: number) => {
    const head = new TextEncoder().encode(`${key} v${version}\n`)
    const body = new Uint8Array(16 + rng.int(300))
    for (let i = 0; i < body.length; i++) body[i] = rng.int(256)
    const bytes = new Uint8Array(head.length + body.length)
    bytes.set(head)
    bytes.set(body, head.length)
    return bytes
  }
  const newFile = (key: string, version: number): FileObj => ({
    fid: ++fids,
    key,
    version,
    bytes: newBytes(key, version),
  })
  const where = (key: string) => [...state.files].find(([, f]) => f.key === key)?.[0]
  const filesIn = (folder: string) => [...state.files.keys()].filter((p) => parentOf(p) === folder)
  /** Paths that only offline assets name and no file occupies: names freed by a delete or a move. */
  const freedNames = (folder?: string) =>
    [...new Set([...assets.values()].filter((a) => !a.online).map((a) => a.path))].filter(
      (p) =>
        !state.files.has(p) &&
        state.folders.has(parentOf(p)) &&
        (folder === undefined || parentOf(p) === folder) &&
        ![...assets.values()].some((a) => a.online && a.path === p),
    )
  /** A name in `folder` for a file to go to: a fresh one, or often a freed one (rename onto a deleted clip's name). */
  const targetIn = (folder: string) => {
    const freed = freedNames(folder)
    return freed.length && rng.chance(0.5) ? rng.pick(freed) : `${folder}/${freshName()}`
  }
  /**
   * A file to change: any, or half the time one at a contested path (one an offline asset names
   * too), where the rules have most to tell apart.
   */
  const someFile = () => {
    const contested = [...state.files.keys()].filter((p) => [...assets.values()].some((a) => !a.online && a.path === p))
    return contested.length && rng.chance(0.5) ? rng.pick(contested) : rng.pick([...state.files.keys()])
  }
  const tempIn = (folder: string) => `${folder}/tmp-${names++}.mov`

  // The operations. Each returns a plan (or undefined when it cannot be made now).
  const ops = {
    create: (): Plan => {
      const key = `k${created}`
      const folder = rng.chance(0.1) ? `${rng.pick(TOPS)}/d${folderNames++}` : rng.pick([...state.folders])
      const path = `${folder}/${freshName()}`
      return {
        text: `create ${key} at ${path}`,
        actions: [{ do: 'write', path, file: newFile(key, 1) }],
        adds: [path],
        removes: [],
        create: { key, path },
      }
    },
    /** cp a.mov a-copy.mov: a copy beside its original (or elsewhere), catalogued as a clip of its own. */
    copy: (): Plan | undefined => {
      if (!state.files.size) return
      const from = rng.pick([...state.files.keys()])
      const source = state.files.get(from)!
      const key = `k${created}`
      const path = `${rng.chance(0.7) ? parentOf(from) : rng.pick([...state.folders])}/${freshName()}`
      const file: FileObj = { fid: ++fids, key, version: 1, bytes: source.bytes }
      return {
        text: `copy ${from} (${source.key}) to ${path}: ${key}`,
        actions: [{ do: 'write', path, file }],
        adds: [path],
        removes: [],
        create: { key, path },
      }
    },
    rename: (): Plan | undefined => {
      if (!state.files.size) return
      const from = rng.pick([...state.files.keys()])
      const to = targetIn(parentOf(from))
      return { text: `rename ${from} -> ${to}`, actions: [mvAction(from, to)], adds: [to], removes: [from] }
    },
    move: (): Plan | undefined => {
      if (!state.files.size) return
      const from = rng.pick([...state.files.keys()])
      const others = [...state.folders].filter((f) => f !== parentOf(from))
      const folder = rng.chance(0.15) || !others.length ? `${rng.pick(TOPS)}/d${folderNames++}` : rng.pick(others)
      const same = `${folder}/${baseOf(from)}`
      const to =
        !state.files.has(same) && ![...assets.values()].some((a) => a.path === same) && rng.chance(0.5)
          ? same
          : targetIn(folder)
      const action = mvAction(from, to)
      return {
        text: `move ${from} -> ${to}${action.do === 'mv' && action.fid !== undefined ? ' (across file systems)' : ''}`,
        actions: [action],
        adds: [to],
        removes: [from],
      }
    },
    swap: (): Plan | undefined => {
      if (state.files.size < 2) return
      const [p, q] = shuffled([...state.files.keys()]).slice(0, 2) as [string, string]
      const t = tempIn(parentOf(p))
      return {
        text: `swap ${p} <-> ${q} via ${t}`,
        actions: [mvAction(p, t), mvAction(q, p), mvAction(t, q)],
        adds: [p, q],
        removes: [t],
      }
    },
    rotate: (): Plan | undefined => {
      if (state.files.size < 3) return
      const [p1, p2, p3] = shuffled([...state.files.keys()]).slice(0, 3) as [string, string, string]
      const t = tempIn(parentOf(p1))
      return {
        text: `rotate ${p2} -> ${p1}, ${p3} -> ${p2}, ${p1} -> ${p3} via ${t}`,
        actions: [mvAction(p1, t), mvAction(p2, p1), mvAction(p3, p2), mvAction(t, p3)],
        adds: [p1, p2, p3],
        removes: [t],
      }
    },
    delete: (): Plan | undefined => {
      if (!state.files.size) return
      const path = someFile()
      return {
        text: `delete ${path} (${state.files.get(path)!.key})`,
        actions: [{ do: 'rm', path }],
        adds: [],
        removes: [path],
      }
    },
    /** A deleted file's bytes written back under its old name: a new file (new inode). */
    restore: (): Plan | undefined => {
      const candidates = [...graveyard].filter(([key, g]) => !state.files.has(g.path) && where(key) === undefined)
      if (!candidates.length) return
      const [key, g] = rng.pick(candidates)
      return {
        text: `restore ${key}'s bytes at its old name ${g.path}`,
        actions: [{ do: 'write', path: g.path, file: { fid: ++fids, key, version: g.version, bytes: g.bytes } }],
        adds: [g.path],
        removes: [],
      }
    },
    /** A deleted file's bytes written back under another name (a copy back from a backup). */
    restoreElsewhere: (): Plan | undefined => {
      const candidates = [...graveyard].filter(([key]) => where(key) === undefined)
      if (!candidates.length) return
      const [key, g] = rng.pick(candidates)
      const path = `${rng.pick([...state.folders])}/${freshName()}`
      return {
        text: `restore ${key}'s bytes (deleted at ${g.path}) under a new name ${path}`,
        actions: [{ do: 'write', path, file: { fid: ++fids, key, version: g.version, bytes: g.bytes } }],
        adds: [path],
        removes: [],
      }
    },
    /** An editor's save: new bytes to a temporary name in the folder, renamed over the clip. */
    saveInPlace: (): Plan | undefined => {
      if (!state.files.size) return
      const path = someFile()
      const old = state.files.get(path)!
      const t = tempIn(parentOf(path))
      const file = newFile(old.key, old.version + 1)
      return {
        text: `save ${path} (${old.key}) anew through ${t}`,
        actions: [{ do: 'write', path: t, file }, mvAction(t, path)],
        adds: [path],
        removes: [t],
      }
    },
    renameFolder: (): Plan | undefined => {
      const full = [...state.folders].filter((f) => filesIn(f).length)
      if (!full.length) return
      const from = rng.pick(full)
      const to = `${parentOf(from)}/d${folderNames++}`
      return {
        text: `rename folder ${from}/ -> ${to}/`,
        actions: [{ do: 'mvdir', from, to }],
        adds: [to + '/'],
        removes: [from + '/'],
      }
    },
  }
  type OpName = keyof typeof ops | 'stopStart'
  function shuffled<T>(list: T[]) {
    for (let i = list.length - 1; i > 0; i--) {
      const j = rng.int(i + 1)
      ;[list[i], list[j]] = [list[j]!, list[i]!]
    }
    return list
  }
  const weights = (stopped: boolean): Partial<Record<OpName, number>> => ({
    create: stopped ? 0 : state.files.size < 8 ? 30 : state.files.size > 40 ? 3 : 12,
    copy: stopped ? 0 : 5,
    rename: 10,
    move: 10,
    swap: 6,
    rotate: 4,
    delete: 8,
    restore: 9,
    restoreElsewhere: 3,
    saveInPlace: 8,
    renameFolder: 3,
    stopStart: stopped ? 0 : 4,
  })

  /** A plan the rules can follow from the catalogue's state (see `followable`), made on the model and the disk; or undefined. */
  const tryPlan = (name: Exclude<OpName, 'stopStart'>, pending: DiskState): Plan | undefined => {
    const plan = ops[name]()
    if (!plan) return
    const after: DiskState = { files: new Map(pending.files), folders: new Set(pending.folders) }
    applyToState(after, plan.actions)
    if (!plan.create) {
      const why = followable(after, assets)
      if (why) {
        log.push(`      (not made: ${plan.text}: ${why})`)
        return
      }
    }
    return plan
  }
  const make = (plan: Plan) => {
    for (const a of plan.actions)
      if (a.do === 'rm') {
        const f = state.files.get(a.path)!
        graveyard.set(f.key, { path: a.path, version: f.version, bytes: f.bytes })
      }
    applyToState(state, plan.actions)
    applyToDisk(abs, plan.actions)
    for (const a of plan.actions) if (a.do === 'write') graveyard.delete(a.file.key)
  }
  /** A plan the rules can follow, of an operation picked by weight; none if 50 picks found none (only while stopped: a clip can always be made). */
  const nextPlan = (stopped: boolean): Plan | undefined => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const name = rng.weighted({ ...weights(stopped), stopStart: 0 }) as Exclude<OpName, 'stopStart'>
      const plan = tryPlan(name, state)
      if (plan) return plan
    }
    return stopped ? undefined : ops.create()
  }

  /** Scans run as tasks, all queued at once (two devices' scans run side by side), to their end. */
  async function scans(list: { device: number; paths: string[] | null }[]) {
    const ids = list.map(
      (s) =>
        runSync(
          base!.db,
          core!.runner.enqueue({ kind: 'scan', target: { device: s.device }, production: null, params: s }),
        ).id,
    )
    await core!.runner.idle()
    for (const [i, id] of ids.entries()) {
      const { paths, device: d } = list[i]!
      const task = base!.db.$client
        .query<{ state: string; error: string; result: string }, [number]>(
          'SELECT state, error, result FROM tasks WHERE id = ?',
        )
        .get(id)!
      if (task.state !== 'done') problems.push(`scan ${JSON.stringify(paths)} ended ${task.state}: ${task.error}`)
      log.push(
        `      scan ${paths === null ? (d === device ? 'device' : 'device shm') : paths.map((p) => relOf(p) ?? (d === device ? '/' : `${SHM}/`)).join(' ')} → ${task.result}`,
      )
    }
  }
  /** A full scan of each device, at once: the start scans, or a timed rescan. */
  const fullScans = () => scans(devices.map((d) => ({ device: d, paths: null })))
  /** One device's scan after another's: what the watcher's batches of one change ask for. */
  const watcherScans = async (list: string[]) => {
    // As the aggregator gives them: the paths themselves, or (at random) their folders.
    const folders = rng.chance(0.5)
    const paths = [...new Set(list.map((p) => (folders ? parentOf(p.endsWith('/') ? p.slice(0, -1) : p) + '/' : p)))]
    for (const [d, shmSide] of [
      [device, false],
      [devices[1]!, true],
    ] as const) {
      const mine = paths.filter((p) => onShm(p) === shmSide)
      if (mine.length) await scans([{ device: d, paths: mine.map((p) => abs(p)) }])
    }
  }

  let problems: string[] = []
  const fail = (what: string) => {
    const report = [
      `model test failed: seed=${seed} variant=${variant} step=${step} of ${steps}`,
      `replay: REELHOUSE_MODEL_SEEDS=${seed} REELHOUSE_MODEL_STEPS=${Math.max(step, 1)} node_modules/.bin/bun test test/watch/model.test.ts -t '${variant}'`,
      `device roots: ${root} and ${other.dir} (${SHM}/, ${other.cross ? 'another file system' : 'the same file system'})`,
      what,
      'operations so far (scan results and refused plans indented):',
      ...log,
    ].join('\n')
    throw new Error(report)
  }

  /** Compares the catalogue with the model and the disk; the model's "catalogue" becomes what was expected. */
  function check(when: string) {
    const rows = base!.db.$client
      .query<Row, []>(
        'SELECT id, description, path_file, is_production, file_dev, file_ino, file_stamp, file_hash FROM media_assets ORDER BY id',
      )
      .all()
    // The disk is what the model says (a check of the test itself).
    const onDisk = new Map<string, Uint8Array>()
    const walk = (dir: string) => {
      for (const e of readdirSync(abs(dir), { withFileTypes: true })) {
        const rel = dir ? `${dir}/${e.name}` : e.name
        if (e.isDirectory()) walk(rel)
        else onDisk.set(rel, readFileSync(abs(rel)))
      }
    }
    walk('')
    walk(SHM)
    for (const [p, bytes] of onDisk)
      if (!state.files.has(p) || !sameBytes(bytes, state.files.get(p)!.bytes))
        problems.push(`test model: ${p} on disk is not what the model says`)
    for (const p of state.files.keys()) if (!onDisk.has(p)) problems.push(`test model: ${p} is missing on disk`)

    const byId = new Map(rows.map((r) => [r.id, r]))
    if (rows.length !== created)
      problems.push(
        `${rows.length} assets in the catalogue, ${created} clips made (imported twice, or lost): extra ${JSON.stringify(rows.filter((r) => ![...assets.values()].some((a) => a.id === r.id)))}`,
      )
    // Invariants on what the catalogue says, against the disk alone.
    const onlineAt = new Map<string, number[]>()
    for (const r of rows) if (r.is_production) onlineAt.set(r.path_file, [...(onlineAt.get(r.path_file) ?? []), r.id])
    for (const [path, ids] of onlineAt)
      if (ids.length > 1) problems.push(`assets ${ids.join(', ')} are all online at ${path}`)
    for (const r of rows) {
      if (!r.is_production) continue
      const rel = relOf(r.path_file)
      const bytes = rel === undefined ? undefined : onDisk.get(rel)
      if (rel === undefined || !bytes) {
        problems.push(`asset ${r.id} (${r.description}) is online at ${r.path_file}, where no file is`)
        continue
      }
      // Whose file it is, by the model (the disk was checked to be what the model says): a copy's bytes are its original's.
      const whose = state.files.get(rel)?.key
      if (whose !== keyOfDescription(r.description))
        problems.push(
          `asset ${r.id} (${r.description}) is online at ${rel}, which is ${whose}'s file: metadata on the wrong file`,
        )
      const s = lstatSync(r.path_file)
      if (r.file_dev !== s.dev || r.file_ino !== s.ino || r.file_stamp !== stampOf(s))
        problems.push(
          `asset ${r.id} at ${rel} records the identity ${r.file_dev}:${r.file_ino}:${r.file_stamp}, the file there is ${s.dev}:${s.ino}:${stampOf(s)}`,
        )
      if (r.file_hash !== fingerprint(bytes))
        problems.push(
          `asset ${r.id} at ${rel} records the fingerprint ${r.file_hash}, its file's is ${fingerprint(bytes)}`,
        )
    }
    // The model: by content, every asset online where its bytes are, else offline where it was.
    const expected = new Map<string, { path: string; online: boolean; file?: FileObj }>()
    for (const a of assets.values()) {
      const path = where(a.key)
      expected.set(
        a.key,
        path === undefined ? { path: a.path, online: false } : { path, online: true, file: state.files.get(path)! },
      )
    }
    for (const a of assets.values()) {
      const r = byId.get(a.id)
      const e = expected.get(a.key)!
      if (!r) {
        problems.push(`asset ${a.id} (${a.key}) is missing from the catalogue`)
        continue
      }
      const actual = `${r.is_production ? 'online' : 'offline'} at ${relOf(r.path_file) ?? r.path_file}`
      const want = `${e.online ? 'online' : 'offline'} at ${e.path}`
      if (actual !== want || r.description !== DESCRIPTION(a.key))
        problems.push(`asset ${a.id} (${a.key}): expected ${want}, catalogue says ${actual} (${r.description})`)
      if (!r.is_production && !e.online && r.file_hash !== fingerprint(a.seen))
        problems.push(
          `asset ${a.id} (${a.key}), offline, records the fingerprint ${r.file_hash}, not that of the bytes it last had (${fingerprint(a.seen)})`,
        )
    }
    if (problems.length) {
      const table = [...assets.values()].map((a) => {
        const r = byId.get(a.id)
        const e = expected.get(a.key)!
        const said = r
          ? `${r.is_production ? 'online ' : 'offline'} ${relOf(r.path_file) ?? r.path_file} (inode ${r.file_ino}, stamp ${r.file_stamp})`
          : 'missing'
        return `  ${a.key} id ${a.id}: expected ${e.online ? 'online ' : 'offline'} ${e.path}; catalogue ${said}`
      })
      const disk = [...state.files].map(([p, f]) => {
        const s = lstatSync(abs(p))
        return `  ${p}: ${f.key}'s bytes (inode ${s.ino}, stamp ${stampOf(s)})`
      })
      fail(
        [
          `after ${when}:`,
          ...problems.map((p) => `  - ${p}`),
          'expected and actual catalogue:',
          ...table,
          'disk:',
          ...disk,
        ].join('\n'),
      )
    }
    for (const a of assets.values()) {
      const e = expected.get(a.key)!
      a.path = e.path
      a.online = e.online
      if (e.file) {
        a.fid = e.file.fid
        a.seen = e.file.bytes
      }
    }
  }

  for (step = 1; step <= steps; step++) {
    problems = []
    const name = rng.weighted(weights(false))
    if (name === 'stopStart') {
      await core!.stop()
      core = undefined
      const n = 1 + rng.int(3)
      log.push(`${step}. stop the service; while stopped:`)
      for (let i = 0; i < n; i++) {
        const plan = nextPlan(true)
        if (!plan) continue
        make(plan)
        log.push(`    ${plan.text}`)
      }
      log.push('    start a new core; its start scans, both at once:')
      startCore()
      await fullScans() // what service.ts startScan queues for each device
      check('the start scan')
      continue
    }
    const plan = tryPlan(name, state) ?? nextPlan(false)!
    make(plan)
    log.push(`${step}. ${plan.text}`)
    if (plan.create) {
      const r = await base.post('/api/videoassets/', {
        name: plan.create.key,
        path_file: abs(plan.create.path),
        production,
        description: DESCRIPTION(plan.create.key),
      })
      if (r.status !== 201) fail(`registering ${plan.create.path}: ${r.status} ${r.text}`)
      const file = state.files.get(plan.create.path)!
      assets.set(plan.create.key, {
        key: plan.create.key,
        id: r.json.id,
        path: plan.create.path,
        online: true,
        fid: file.fid,
        seen: file.bytes,
      })
      created++
    }
    if (variant === 'full') await fullScans()
    else {
      if (plan.adds.length) await watcherScans(plan.adds)
      if (plan.removes.length) await watcherScans(plan.removes)
    }
    check(variant === 'full' ? 'a full scan' : "the watcher's scans")
  }
  step = steps
  problems = []
  await fullScans()
  check('a last full scan (nothing may change)')
  // REELHOUSE_MODEL_LOG=1: the operations and scan results of a passing run too.
  if (process.env.REELHOUSE_MODEL_LOG) console.log(`seed=${seed} variant=${variant}\n${log.join('\n')}`)
  return { created, steps }
}

describe('model: the catalogue follows the disk (identity first)', () => {
  for (const seed of SEEDS)
    for (const variant of VARIANTS)
      test(
        `seed ${seed}, ${STEPS} steps, ${variant} scans`,
        async () => {
          const { created } = await run(seed, variant, STEPS)
          expect(created).toBeGreaterThan(0)
        },
        60_000 + STEPS * 500,
      )
})
