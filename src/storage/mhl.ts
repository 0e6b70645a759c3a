// ASC MHL v2.0 histories: the record, kept beside a folder of media, of every file's xxHash64 each
// time the folder was hashed, so that a copy can prove it holds what the camera card held and
// any later check can say what changed. The format is the ASC's (urn:ASC:MHL:v2.0); other tools
// on set (Silverstack, ShotPut, the ASC's own ascmhl) read what is written here and write what
// is read here.
//
// A history lives in `ascmhl/` at the folder's root:
// - one manifest per generation, `NNNN_<root folder name>_<YYYY-MM-DD_HHMMSSZ>.mhl` (NNNN from
//   0001, the time in UTC), listing each file's relative path, size, modification time and hash
//   with what that generation found: "original" (first seen), "verified" (as recorded before),
//   "failed" (not as recorded);
// - the chain, `ascmhl_chain.xml`, naming every manifest with the C4 id of its bytes, so that a
//   manifest edited after it was written is noticed.
// A file's expected hash is the latest one recorded for it that is not "failed": the hash a
// failed check found is what the damaged file holds, not what it should hold (the ASC's tool
// compares with the original, which a "verified" entry always repeats).
//
// Writing never replaces a manifest: it is written under a temporary name in `ascmhl/`, synced,
// and linked to its final name (a link fails when the name is taken, where a rename would
// replace). The chain is then rewritten whole under a temporary name and renamed over the old
// one. One writer at a time per history is assumed (a task owns the folder while it works).
//
// File access here is plain node:fs by path by default: the callers hand in folders that
// Reelhouse owns (a copy it has just made, a card it is reading). A caller working in a folder
// that others can change around it (a project copy, in a production's folder on a share) reads
// and writes `ascmhl/` through historyFolderAt instead, relative to the descriptor of the folder
// it opened, with no link followed; it walks and hashes the files itself (storage/fs.ts's walk,
// hash.ts's hashFile with a descriptor) and passes what it found to newGeneration, with
// isRecorded to leave out what the history's ignore patterns name. verifyAgainst's walk and its
// hashFn are the places to swap for a check of such a folder.
import { createHash, randomBytes } from 'node:crypto'
import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { hostname as machineName } from 'node:os'
import { basename, join, resolve } from 'node:path'
import {
  DIR_FLAGS,
  E,
  O,
  cName,
  close,
  errnoName,
  isFolderHandle,
  linkat,
  listDir,
  mkdirat,
  nameText,
  openat,
  openatCreate,
  renameat,
  sysError,
  unlinkat,
} from './dirfd.ts'
import { syncFolder } from './paths.ts'
import {
  type XmlElement,
  XmlError,
  child,
  childrenNamed,
  escapeAttr,
  escapeText,
  isXmlText,
  localName,
  namespaceOf,
  parseXml,
} from '../util/xml.ts'
import { VERSION } from '../version.ts'
import { hashFile } from './hash.ts'

export const MHL_FOLDER = 'ascmhl'
export const CHAIN_FILE = 'ascmhl_chain.xml'
export const MHL_NAMESPACE = 'urn:ASC:MHL:v2.0'
export const CHAIN_NAMESPACE = 'urn:ASC:MHL:DIRECTORY:v2.0'
/** What a new history leaves out of its hashes, as the ASC's tool writes it. */
export const DEFAULT_IGNORE: readonly string[] = ['.DS_Store', 'ascmhl', 'ascmhl/']
export const TOOL_NAME = 'Reelhouse'

export type Action = 'original' | 'verified' | 'failed'
/** in-place: the folder hashed where it is; transfer: the folder as a copy made it. */
export type Process = 'in-place' | 'transfer'

const ACTIONS: readonly string[] = ['original', 'verified', 'failed']
/** The hash formats a manifest may hold for a file (the schema's HashType). */
const HASH_FORMATS: readonly string[] = ['c4', 'md5', 'sha1', 'xxh128', 'xxh3', 'xxh64']

export type MhlErrorCode =
  /** `ascmhl/` holds manifests but no chain file. */
  | 'no-chain'
  /** The chain names a manifest that is not there. */
  | 'missing-manifest'
  /** A manifest's bytes no longer have the C4 id the chain recorded. */
  | 'changed-manifest'
  /** A manifest or the chain is not well-formed XML, or not ASC MHL v2.0. */
  | 'malformed'
  /** An entry handed to newGeneration cannot be written (its path, its hash). */
  | 'invalid-entry'
  /** The manifest's name was taken meanwhile: another writer. */
  | 'exists'

export class MhlError extends Error {
  override readonly name = 'MhlError'
  constructor(
    readonly code: MhlErrorCode,
    /** The file the problem is in (the manifest, the chain), or the entry's path. */
    readonly path: string,
    detail: string,
  ) {
    super(`${detail}: ${path}`)
  }
}

/** One hash a manifest records for a file. */
export type RecordedHash = { value: string; action?: Action; hashDate?: string }

/** A file as one generation recorded it. */
export type RecordedFile = {
  size?: number
  /** As written (ISO 8601 with an offset). */
  lastModified?: string
  /** Lowercase hex. Absent when the generation hashed the file with other formats only. */
  xxh64?: RecordedHash
  /** The other hash formats recorded for it (xxh128, md5…), which are not checked here. */
  otherFormats: string[]
}

export type Generation = {
  number: number
  /** The manifest's name in `ascmhl/`. */
  file: string
  /** The C4 id the chain records for the manifest. */
  c4: string
  /** Whether the manifest's bytes still have that id (always true unless readHistory was asked to mark changes). */
  c4Ok: boolean
  creationDate: string
  hostname: string
  tool: { name: string; version?: string }
  process: string
  ignore: string[]
  /** Relative POSIX path → what this generation recorded. */
  files: Map<string, RecordedFile>
}

export type History = {
  /** The folder the history describes (resolved). */
  root: string
  /** In chain order. Empty when there is no `ascmhl/` yet. */
  generations: Generation[]
  /** Manifests in `ascmhl/` that the chain does not name (a write stopped before the chain, another tool's). */
  unlisted: string[]
}

/**
 * The history of `root`, each manifest checked against the chain's C4 id. Throws MhlError when
 * `ascmhl/` has manifests but no chain, when the chain names a manifest that is missing, when a
 * manifest or the chain is malformed, and when a manifest changed since it was written; with
 * `changed: 'mark'`, a changed manifest is read anyway and comes back with c4Ok false (to show
 * what it now says, never to trust it). A folder without `ascmhl/` has an empty history.
 */
export function readHistory(root: string, opts: { changed?: 'throw' | 'mark'; folder?: HistoryFolder } = {}): History {
  const at = resolve(root)
  const folder = opts.folder ?? historyFolder(join(at, MHL_FOLDER))
  const names = folder.names()
  if (names === undefined) return { root: at, generations: [], unlisted: [] }
  const manifests = manifestNames(names)
  const chainPath = join(folder.path, CHAIN_FILE)
  if (!names.includes(CHAIN_FILE)) {
    if (manifests.length === 0) return { root: at, generations: [], unlisted: [] }
    throw new MhlError('no-chain', chainPath, `${manifests.length} manifest(s) but no ${CHAIN_FILE}`)
  }
  const chain = parseChain(folder.read(CHAIN_FILE), chainPath)
  const generations = chain.map((link): Generation => {
    const path = join(folder.path, link.file)
    let bytes: Uint8Array
    try {
      bytes = folder.read(link.file)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new MhlError('missing-manifest', path, `the chain names generation ${link.number}, which is missing`)
      throw e
    }
    const c4Ok = c4Id(bytes) === link.c4
    if (!c4Ok && opts.changed !== 'mark')
      throw new MhlError(
        'changed-manifest',
        path,
        `generation ${link.number} changed after it was written (its C4 id is no longer the one in the chain)`,
      )
    try {
      return { number: link.number, file: link.file, c4: link.c4, c4Ok, ...parseManifest(bytes, path) }
    } catch (e) {
      if (c4Ok || !(e instanceof MhlError)) throw e
      throw new MhlError(
        'changed-manifest',
        path,
        `generation ${link.number} changed and is no longer readable (${e.message})`,
      )
    }
  })
  const named = new Set(chain.map((link) => link.file))
  return { root: at, generations, unlisted: manifests.filter((name) => !named.has(name)) }
}

/** What a file is expected to hold: path → the latest xxh64 recorded that is not "failed", or undefined when it was recorded without one. */
export function expectedHashes(history: History): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>()
  for (const generation of history.generations)
    for (const [path, file] of generation.files) {
      if (file.xxh64 && file.xxh64.action !== 'failed') out.set(path, file.xxh64.value)
      else if (!out.has(path)) out.set(path, undefined)
    }
  return out
}

/** The ignore patterns the next generation of `history` keeps: the latest generation's, else DEFAULT_IGNORE. */
export const ignoreOf = (history: History): readonly string[] => history.generations.at(-1)?.ignore ?? DEFAULT_IGNORE

/**
 * Whether a file at `path` (relative to the root, "/" between names) is content that a generation
 * with the ignore `patterns` records: not in `ascmhl/` at the root, and neither the file nor a
 * folder above it ignored. What verifyAgainst's walk leaves out, for a caller that walked the
 * folder itself.
 */
export function isRecorded(patterns: readonly string[]): (path: string) => boolean {
  const ignored = compileIgnore(patterns)
  return (path) => {
    if (path === MHL_FOLDER || path.startsWith(`${MHL_FOLDER}/`)) return false
    for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1))
      if (ignored(path.slice(0, at), true)) return false
    return !ignored(path, false)
  }
}

/** A file to record in a new generation, as it was hashed. */
export type NewEntry = {
  /** Relative to the root, with "/" between names. */
  path: string
  size: number
  lastModified: Date
  /** 16 hex digits. */
  xxh64: string
  /** When it was hashed (default: when the generation is written). */
  hashDate?: Date
}

export type Author = { name: string; email?: string; phone?: string; role?: string }

export type GenerationOptions = {
  process: Process
  author?: Author
  location?: string
  comment?: string
  /** Patterns the generation says it left out; default: the latest generation's, else DEFAULT_IGNORE. */
  ignore?: readonly string[]
  /** The creation time (default: now). */
  now?: Date
  /** Default: this machine's name. */
  hostname?: string
  /**
   * The root folder's name in the manifest's file name (default: its name now): for a history
   * written into a folder that is renamed into place afterwards (a copy made in a hidden folder).
   */
  rootName?: string
  /** Where `ascmhl/` is read and written (default: by path, in `root`). */
  folder?: HistoryFolder
}

export type WrittenGeneration = {
  number: number
  file: string
  c4: string
  /** Each entry's action, as written (sorted by path). */
  recorded: { path: string; xxh64: string; action: Action }[]
}

/**
 * Writes the next generation of `root`'s history: `entries` with their actions decided against
 * the history (original, verified, failed), then the chain naming it. The history must be
 * readable and unchanged (readHistory's errors otherwise); a generation number is never reused,
 * even one whose manifest the chain does not name. `ascmhl/` is made when missing.
 */
export function newGeneration(root: string, entries: readonly NewEntry[], opts: GenerationOptions): WrittenGeneration {
  const history = readHistory(root, { folder: opts.folder })
  const now = opts.now ?? new Date()
  const expected = expectedHashes(history)
  const seen = new Set<string>()
  const recorded = [...entries]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((entry) => {
      const problem = pathProblem(entry.path)
      if (problem) throw new MhlError('invalid-entry', entry.path, `this path cannot be recorded (${problem})`)
      if (seen.has(entry.path)) throw new MhlError('invalid-entry', entry.path, 'this path is given twice')
      seen.add(entry.path)
      if (!/^[0-9a-fA-F]{16}$/.test(entry.xxh64))
        throw new MhlError(
          'invalid-entry',
          entry.path,
          `not an xxh64 hash (16 hex digits): ${JSON.stringify(entry.xxh64)}`,
        )
      const xxh64 = entry.xxh64.toLowerCase()
      const before = expected.get(entry.path)
      const action: Action = before === undefined ? 'original' : before === xxh64 ? 'verified' : 'failed'
      return { entry, xxh64, action }
    })
  if (opts.author?.email !== undefined && !/^[^@]+@[^.]+\..+$/.test(opts.author.email))
    throw new MhlError('invalid-entry', opts.author.email, 'not an e-mail address the ASC MHL schema accepts')

  const folder = opts.folder ?? historyFolder(join(history.root, MHL_FOLDER))
  folder.make()
  const number =
    1 + Math.max(0, ...history.generations.map((g) => g.number), ...manifestNames(folder.names() ?? []).map(numberOf))
  const rootName = opts.rootName ?? (basename(history.root) || 'root')
  const file = `${String(number).padStart(4, '0')}_${rootName}_${fileStamp(now)}.mhl`
  // The chain names the manifest in XML, and the name must stay one name: checked before anything is written.
  if (!isXmlText(file) || file.includes('/') || file.includes('\\'))
    throw new MhlError('invalid-entry', history.root, 'the folder name cannot stand in XML or in a file name')
  const ignore = opts.ignore ?? ignoreOf(history)
  const bytes = Buffer.from(
    manifestXml({
      creationDate: now,
      hostname: opts.hostname ?? machineName(),
      author: opts.author,
      location: opts.location,
      comment: opts.comment,
      process: opts.process,
      ignore,
      hashes: recorded.map(({ entry, xxh64, action }) => ({
        path: entry.path,
        size: entry.size,
        lastModified: entry.lastModified,
        xxh64,
        action,
        hashDate: entry.hashDate ?? now,
      })),
    }),
  )
  const c4 = c4Id(bytes)
  folder.create(file, bytes)
  const links = [...history.generations.map(({ number, file, c4 }) => ({ number, file, c4 })), { number, file, c4 }]
  try {
    folder.replace(CHAIN_FILE, Buffer.from(chainXml(links)))
  } catch (e) {
    // A manifest the chain does not name would stay unlisted: the history is left as it was.
    try {
      folder.remove(file)
    } catch {}
    throw e
  }
  return {
    number,
    file,
    c4,
    recorded: recorded.map(({ entry, xxh64, action }) => ({ path: entry.path, xxh64, action })),
  }
}

export type VerifyResult = {
  /** Every recorded file is there and has the xxh64 expected of it (files added since do not change this; one recorded without an xxh64 does). */
  ok: boolean
  /** Recorded files found as recorded. */
  verified: string[]
  mismatched: { path: string; expected: string; actual: string }[]
  /** Recorded files not found. */
  missing: string[]
  /** Files found that no generation recorded. */
  added: string[]
  /** Recorded files whose history has no xxh64 to compare with (other tools' formats only). */
  unverifiable: string[]
  /** Every file found, hashed: what newGeneration takes to record this check. */
  files: NewEntry[]
}

/** Gives a file's xxh64 (16 hex digits): by default, hash.ts's hashFile of its path. */
export type HashFn = (absolute: string, relative: string) => string | Promise<string>

const hashByPath: HashFn = async (absolute) => (await hashFile(absolute)).xxh64

/**
 * Hashes every file under `root` (but `ascmhl/` and what the latest generation's ignore patterns
 * name; links are not followed) and compares each with its expected hash (expectedHashes). The
 * history must be readable and unchanged (readHistory's errors otherwise). `signal` stops it
 * between two files.
 */
export async function verifyAgainst(
  root: string,
  hashFn: HashFn = hashByPath,
  opts: { signal?: AbortSignal } = {},
): Promise<VerifyResult> {
  const history = readHistory(root)
  const expected = expectedHashes(history)
  const ignore = compileIgnore(ignoreOf(history))
  const out: VerifyResult = {
    ok: true,
    verified: [],
    mismatched: [],
    missing: [],
    added: [],
    unverifiable: [],
    files: [],
  }
  const found = new Set<string>()
  for (const file of walk(history.root, ignore)) {
    opts.signal?.throwIfAborted()
    const hashDate = new Date()
    const actual = (await hashFn(join(history.root, file.path), file.path)).toLowerCase()
    out.files.push({ ...file, xxh64: actual, hashDate })
    found.add(file.path)
    if (!expected.has(file.path)) out.added.push(file.path)
    else {
      const want = expected.get(file.path)
      if (want === undefined) out.unverifiable.push(file.path)
      else if (want === actual) out.verified.push(file.path)
      else out.mismatched.push({ path: file.path, expected: want, actual })
    }
  }
  for (const path of [...expected.keys()].sort()) if (!found.has(path)) out.missing.push(path)
  out.ok = out.mismatched.length === 0 && out.missing.length === 0 && out.unverifiable.length === 0
  return out
}

// ------------------------------------------------------------------ C4 ids

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'

/**
 * The C4 id of `bytes` (SMPTE ST 2114): their SHA-512 read as one big-endian number, written in
 * base 58 with the alphabet above (most significant digit first), padded on the left with "1"
 * (the alphabet's zero) to 88 digits, after "c4": 90 characters.
 */
export function c4Id(bytes: Uint8Array): string {
  let n = BigInt(`0x${createHash('sha512').update(bytes).digest('hex')}`)
  let digits = ''
  while (n > 0n) {
    digits = BASE58[Number(n % 58n)] + digits
    n /= 58n
  }
  return `c4${digits.padStart(88, '1')}`
}

// ------------------------------------------------------------------ names, paths, times

/** Manifests in `folder` by the naming rule: 4 or more digits, "_", a name, ".mhl" (not macOS's "._" shadows). */
const MANIFEST_NAME = /^(\d{4,})_.+\.mhl$/

function manifestNames(names: readonly string[]): string[] {
  return names.filter((name) => MANIFEST_NAME.test(name)).sort()
}

const numberOf = (name: string) => Number(MANIFEST_NAME.exec(name)![1])

/**
 * Why `path` cannot stand in a manifest, or undefined: it must be relative, with "/" between
 * non-empty names none of which is "." or "..", and hold only characters XML can carry.
 */
function pathProblem(path: string): string | undefined {
  if (path === '') return 'empty'
  if (path.startsWith('/')) return 'absolute'
  if (path.split('/').some((name) => name === '' || name === '.' || name === '..'))
    return 'an empty, "." or ".." name in it'
  if (path === MHL_FOLDER || path.startsWith(`${MHL_FOLDER}/`))
    return `inside ${MHL_FOLDER}/, which holds the history itself`
  if (!isXmlText(path)) return 'a character that XML cannot carry'
  return undefined
}

/** A time as the manifests write it: ISO 8601 to the second, in UTC, with its offset. */
const isoTime = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, '+00:00')
/** A time as manifest names hold it: YYYY-MM-DD_HHMMSSZ, in UTC. */
const fileStamp = (date: Date) => date.toISOString().replace(/^(\d{4}-\d\d-\d\d)T(\d\d):(\d\d):(\d\d).*$/, '$1_$2$3$4Z')

// ------------------------------------------------------------------ writing

type ManifestContent = {
  creationDate: Date
  hostname: string
  author?: Author
  location?: string
  comment?: string
  process: Process
  ignore: readonly string[]
  hashes: { path: string; size: number; lastModified: Date; xxh64: string; action: Action; hashDate: Date }[]
}

/** A manifest's XML: the elements in the schema's order; <ignore> and <hashes> left out when empty (the schema wants one child at least). */
function manifestXml(m: ManifestContent): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<hashlist version="2.0" xmlns="${MHL_NAMESPACE}">`,
    '  <creatorinfo>',
    `    <creationdate>${isoTime(m.creationDate)}</creationdate>`,
    `    <hostname>${escapeText(m.hostname)}</hostname>`,
    `    <tool version="${escapeAttr(VERSION)}">${TOOL_NAME}</tool>`,
  ]
  if (m.author) {
    const { name, ...attributes } = m.author
    const attrs = Object.entries(attributes)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => ` ${key}="${escapeAttr(value!)}"`)
      .join('')
    lines.push(`    <author${attrs}>${escapeText(name)}</author>`)
  }
  if (m.location !== undefined) lines.push(`    <location>${escapeText(m.location)}</location>`)
  if (m.comment !== undefined) lines.push(`    <comment>${escapeText(m.comment)}</comment>`)
  lines.push('  </creatorinfo>', '  <processinfo>', `    <process>${m.process}</process>`)
  if (m.ignore.length) {
    lines.push('    <ignore>')
    for (const pattern of m.ignore) lines.push(`      <pattern>${escapeText(pattern)}</pattern>`)
    lines.push('    </ignore>')
  }
  lines.push('  </processinfo>')
  if (m.hashes.length) {
    lines.push('  <hashes>')
    for (const h of m.hashes)
      lines.push(
        '    <hash>',
        `      <path size="${h.size}" lastmodificationdate="${isoTime(h.lastModified)}">${escapeText(h.path)}</path>`,
        `      <xxh64 action="${h.action}" hashdate="${isoTime(h.hashDate)}">${h.xxh64}</xxh64>`,
        '    </hash>',
      )
    lines.push('  </hashes>')
  }
  lines.push('</hashlist>', '')
  return lines.join('\n')
}

type ChainLink = { number: number; file: string; c4: string }

function chainXml(links: readonly ChainLink[]): string {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', `<ascmhldirectory xmlns="${CHAIN_NAMESPACE}">`]
  for (const link of links)
    lines.push(
      `  <hashlist sequencenr="${link.number}">`,
      `    <path>${escapeText(link.file)}</path>`,
      `    <c4>${link.c4}</c4>`,
      '  </hashlist>',
    )
  lines.push('</ascmhldirectory>', '')
  return lines.join('\n')
}

/**
 * The `ascmhl/` folder of a history, as readHistory and newGeneration read and write it: by path
 * (historyFolder, the default) or relative to an open folder (historyFolderAt). Names are of
 * files directly in it.
 */
export type HistoryFolder = {
  /** The folder's path, for messages. */
  readonly path: string
  /** The names in it; undefined when there is no such folder. */
  names(): string[] | undefined
  /** A file's bytes; a missing one throws an error with the code ENOENT. */
  read(name: string): Uint8Array
  /** Makes the folder when it is missing. */
  make(): void
  /** Puts `bytes` at `name`, complete and synced, never replacing a file there (MhlError 'exists'). */
  create(name: string, bytes: Uint8Array): void
  /** Replaces `name` with `bytes` at once, synced. */
  replace(name: string, bytes: Uint8Array): void
  remove(name: string): void
}

/** The `ascmhl/` folder at `path`, by path (node:fs), for folders Reelhouse owns. */
export function historyFolder(path: string): HistoryFolder {
  return {
    path,
    names: () => (existsSync(path) ? readdirSync(path) : undefined),
    read: (name) => readFileSync(join(path, name)),
    make: () => void mkdirSync(path, { recursive: true }),
    create: (name, bytes) => placeNew(path, join(path, name), bytes),
    replace: (name, bytes) => replaceFile(path, join(path, name), bytes),
    remove: (name) => unlinkSync(join(path, name)),
  }
}

/** A temporary name in `folder`, which no reader takes for a manifest or the chain. */
const tempIn = (folder: string) => join(folder, `.reelhouse-${randomBytes(8).toString('hex')}.tmp`)

/** Writes `bytes` to a new file at `path` (never an existing one) and syncs it to the disk. */
function writeSynced(path: string, bytes: Uint8Array) {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644)
  try {
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** File systems without hard links (exFAT, FAT, some network shares) answer link() so. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK'])

/**
 * Puts `bytes` at `path` in `folder`, complete, without ever replacing a file there: written
 * and synced under a temporary name, then linked to `path` (which fails when it is taken). Where
 * the file system has no hard links, copied to `path` with an exclusive create instead (the name
 * then shows a partial file while the copy runs, for a moment).
 */
function placeNew(folder: string, path: string, bytes: Uint8Array) {
  const temp = tempIn(folder)
  writeSynced(temp, bytes)
  try {
    try {
      linkSync(temp, path)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? ''
      if (code === 'EEXIST') throw new MhlError('exists', path, 'another manifest took this name meanwhile')
      if (!NO_LINKS.has(code)) throw e
      copyFileSync(temp, path, constants.COPYFILE_EXCL)
      const fd = openSync(path, constants.O_RDONLY)
      try {
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
    }
  } finally {
    unlinkSync(temp)
  }
  syncFolder(folder)
}

/** Replaces `path` in `folder` with `bytes` at once: written and synced under a temporary name, then renamed over it. */
function replaceFile(folder: string, path: string, bytes: Uint8Array) {
  const temp = tempIn(folder)
  writeSynced(temp, bytes)
  try {
    renameSync(temp, path)
  } catch (e) {
    try {
      unlinkSync(temp)
    } catch {}
    throw e
  }
  syncFolder(folder)
}

/**
 * The `ascmhl/` folder of the open folder `root`, reached and used relative to descriptors, no
 * link followed: `ascmhl` itself must be a folder (a link or a file in its place fails each
 * call, ENOTDIR or ELOOP), and each file read must be a regular file. Writing works as by path
 * (placeNew, replaceFile), with the calls of dirfd.ts. `path` is for messages only. The caller
 * keeps `root` open while it uses the folder, and closes it.
 */
export function historyFolderAt(root: number, path: string): HistoryFolder {
  const name = (file: string) => join(path, file)
  /** ascmhl/ opened, or undefined when there is none. */
  const open = (): number | undefined => {
    const fd = openat(root, cName(MHL_FOLDER), DIR_FLAGS)
    if (fd === -E.ENOENT) return undefined
    if (fd < 0) throw sysError(fd, 'openat', path)
    return fd
  }
  const inFolder = <T>(work: (dir: number) => T): T => {
    const dir = open()
    if (dir === undefined) throw sysError(-E.ENOENT, 'openat', path)
    try {
      return work(dir)
    } finally {
      close(dir)
    }
  }
  return {
    path,
    names() {
      const dir = open()
      if (dir === undefined) return undefined
      try {
        const listed = listDir(dir)
        if (typeof listed === 'number') throw sysError(listed, 'readdir', path)
        return listed.map((entry) => nameText(entry.name))
      } finally {
        close(dir)
      }
    },
    read: (file) => inFolder((dir) => readAt(dir, file, name(file))),
    make() {
      const made = mkdirat(root, cName(MHL_FOLDER), 0o777)
      if (made < 0 && made !== -E.EEXIST) throw sysError(made, 'mkdirat', path)
    },
    create: (file, bytes) =>
      inFolder((dir) => {
        const temp = writeSyncedAt(dir, bytes, path)
        try {
          const linked = linkat(dir, cName(temp), dir, cName(file))
          if (linked === -E.EEXIST)
            throw new MhlError('exists', name(file), 'another manifest took this name meanwhile')
          if (linked < 0 && !NO_LINKS.has(errnoName(linked))) throw sysError(linked, 'linkat', name(file))
          // No hard links here: the manifest written under its name at once (exclusive create).
          if (linked < 0)
            try {
              writeSyncedAt(dir, bytes, path, file)
            } catch (e) {
              if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
              throw new MhlError('exists', name(file), 'another manifest took this name meanwhile')
            }
        } finally {
          unlinkat(dir, cName(temp), 0)
        }
        syncFd(dir)
      }),
    replace: (file, bytes) =>
      inFolder((dir) => {
        const temp = writeSyncedAt(dir, bytes, path)
        let moved = renameat(dir, cName(temp), dir, cName(file))
        if (moved === -E.EEXIST) {
          // Where a rename never replaces (Windows: dirfd.ts), the old file is moved aside first:
          // for that moment the name is missing, never wrong; the old one is put back on failure.
          const aside = `.reelhouse-${randomBytes(8).toString('hex')}.tmp`
          moved = renameat(dir, cName(file), dir, cName(aside))
          if (moved === 0) {
            moved = renameat(dir, cName(temp), dir, cName(file))
            if (moved === 0) unlinkat(dir, cName(aside), 0)
            else renameat(dir, cName(aside), dir, cName(file))
          }
        }
        if (moved < 0) {
          unlinkat(dir, cName(temp), 0)
          throw sysError(moved, 'renameat', name(file))
        }
        syncFd(dir)
      }),
    remove: (file) =>
      inFolder((dir) => {
        const removed = unlinkat(dir, cName(file), 0)
        if (removed < 0) throw sysError(removed, 'unlinkat', name(file))
      }),
  }
}

/** The regular file `file` of the open folder `dir`, whole (`path` for messages). */
function readAt(dir: number, file: string, path: string): Uint8Array {
  const fd = openat(dir, cName(file), O.RDONLY | O.NOFOLLOW | O.NONBLOCK | O.CLOEXEC)
  if (fd < 0) throw sysError(fd, 'openat', path)
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new MhlError('malformed', path, 'not a regular file')
    // One byte more than its size, so that the end is seen in one read; a file that grew meanwhile is read on.
    let buffer = Buffer.allocUnsafe(stat.size + 1)
    let got = 0
    for (;;) {
      if (got === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(buffer.length)])
      const n = readSync(fd, buffer, got, buffer.length - got, got)
      if (n === 0) break
      got += n
    }
    return buffer.subarray(0, got)
  } finally {
    closeSync(fd)
  }
}

/**
 * Writes `bytes` to a new file in the open folder `dir` (exclusive create, never through a link)
 * and syncs it: under `file` when given, else under a new temporary name, which is returned.
 */
function writeSyncedAt(dir: number, bytes: Uint8Array, path: string, file?: string): string {
  const at = file ?? `.reelhouse-${randomBytes(8).toString('hex')}.tmp`
  const fd = openatCreate(dir, cName(at), O.WRONLY | O.CREAT | O.EXCL | O.NOFOLLOW | O.CLOEXEC, 0o644)
  if (fd < 0) throw sysError(fd, 'openat', join(path, at))
  try {
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done)
    fsyncSync(fd)
  } catch (e) {
    closeSync(fd)
    unlinkat(dir, cName(at), 0)
    throw e
  }
  closeSync(fd)
  return at
}

/**
 * Syncs an open folder's entries to the disk; where the system refuses it for folders, the write
 * still stands. A Windows folder handle is no descriptor, and NTFS journals its names itself.
 */
function syncFd(dir: number) {
  if (isFolderHandle(dir)) return
  try {
    fsyncSync(dir)
  } catch {}
}

// ------------------------------------------------------------------ reading

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The document in `bytes` (UTF-8), its root checked to be `rootName` in `namespace`. */
function parseDocument(bytes: Uint8Array, path: string, rootName: string, namespace: string): XmlElement {
  let root: XmlElement
  try {
    root = parseXml(utf8.decode(bytes))
  } catch (e) {
    if (e instanceof XmlError) throw new MhlError('malformed', path, `not well-formed XML: ${e.message}`)
    if (e instanceof TypeError) throw new MhlError('malformed', path, 'not UTF-8 text')
    throw e
  }
  if (localName(root.name) !== rootName || namespaceOf(root) !== namespace)
    throw new MhlError('malformed', path, `not an ASC MHL document: the root is not <${rootName}> in ${namespace}`)
  return root
}

function parseChain(bytes: Uint8Array, path: string): ChainLink[] {
  const root = parseDocument(bytes, path, 'ascmhldirectory', CHAIN_NAMESPACE)
  const bad = (detail: string): never => {
    throw new MhlError('malformed', path, detail)
  }
  const links = childrenNamed(root, 'hashlist').map((element): ChainLink => {
    const sequence = element.attrs.sequencenr ?? ''
    if (!/^[0-9]+$/.test(sequence) || Number(sequence) < 1) bad(`a hashlist without a sequencenr of 1 or more`)
    const number = Number(sequence)
    const file = child(element, 'path')?.text.trim() ?? ''
    // The chain names manifests in its own folder: a name with a folder in it could lead anywhere.
    if (!MANIFEST_NAME.test(file) || file.includes('/') || file.includes('\\'))
      bad(`generation ${number} names ${JSON.stringify(file)}, not a manifest in ${MHL_FOLDER}/`)
    const c4 = child(element, 'c4')?.text.trim() ?? ''
    if (!/^c4[1-9A-HJ-NP-Za-km-z]{88}$/.test(c4)) bad(`generation ${number} has no C4 id`)
    return { number, file, c4 }
  })
  links.sort((a, b) => a.number - b.number)
  for (let i = 1; i < links.length; i++) {
    if (links[i]!.number === links[i - 1]!.number) bad(`generation ${links[i]!.number} twice`)
  }
  if (new Set(links.map((l) => l.file)).size !== links.length) bad('a manifest named twice')
  return links
}

function parseManifest(bytes: Uint8Array, path: string): Omit<Generation, 'number' | 'file' | 'c4' | 'c4Ok'> {
  const root = parseDocument(bytes, path, 'hashlist', MHL_NAMESPACE)
  const bad = (detail: string): never => {
    throw new MhlError('malformed', path, detail)
  }
  if (root.attrs.version !== '2.0') bad(`version ${JSON.stringify(root.attrs.version ?? '')}, not 2.0`)
  const creator = child(root, 'creatorinfo') ?? bad('no <creatorinfo>')
  const processInfo = child(root, 'processinfo') ?? bad('no <processinfo>')
  const tool = child(creator, 'tool')
  const files = new Map<string, RecordedFile>()
  for (const hash of childrenNamed(child(root, 'hashes'), 'hash')) {
    const pathElement = child(hash, 'path') ?? bad('a <hash> without a <path>')
    const relative = pathElement.text
    const problem = pathProblem(relative)
    if (problem) bad(`the recorded path ${JSON.stringify(relative)} is not one (${problem})`)
    const size = pathElement.attrs.size
    if (size !== undefined && !/^[0-9]+$/.test(size)) bad(`the size of ${relative} is ${JSON.stringify(size)}`)
    const recorded: RecordedFile = { otherFormats: [] }
    if (size !== undefined) recorded.size = Number(size)
    if (pathElement.attrs.lastmodificationdate) recorded.lastModified = pathElement.attrs.lastmodificationdate
    for (const element of hash.children) {
      const format = localName(element.name)
      if (!HASH_FORMATS.includes(format)) continue
      const action = element.attrs.action
      if (action !== undefined && !ACTIONS.includes(action))
        bad(`the action of ${relative} is ${JSON.stringify(action)}, not original, verified or failed`)
      if (format !== 'xxh64') {
        recorded.otherFormats.push(format)
        continue
      }
      const value = element.text.trim()
      if (!/^[0-9a-fA-F]{16}$/.test(value)) bad(`the xxh64 of ${relative} is ${JSON.stringify(value)}`)
      recorded.xxh64 = { value: value.toLowerCase() }
      if (action) recorded.xxh64.action = action as Action
      if (element.attrs.hashdate) recorded.xxh64.hashDate = element.attrs.hashdate
    }
    files.set(relative, recorded)
  }
  return {
    creationDate: child(creator, 'creationdate')?.text.trim() ?? '',
    hostname: child(creator, 'hostname')?.text.trim() ?? '',
    tool: { name: tool?.text.trim() ?? '', ...(tool?.attrs.version !== undefined && { version: tool.attrs.version }) },
    process: child(processInfo, 'process')?.text.trim() ?? bad('no <process>'),
    ignore: childrenNamed(child(processInfo, 'ignore'), 'pattern').map((p) => p.text.trim()),
    files,
  }
}

// ------------------------------------------------------------------ the walk

/**
 * Ignore patterns as the ASC's tool reads them (git's wildmatch rules, the part used on set): a
 * pattern without "/" matches a file or folder of that name at any depth; one with a "/" inside
 * or at the start matches the path from the root; a final "/" matches folders only. "*" and "?"
 * stay within a name, "**" crosses folders, "[…]" is a class. A "!" pattern (an exception) is
 * not supported and matches nothing.
 */
function compileIgnore(patterns: readonly string[]): (path: string, folder: boolean) => boolean {
  const rules = patterns
    .filter((p) => p.trim() !== '' && !p.startsWith('!') && !p.startsWith('#'))
    .map((raw) => {
      const folderOnly = raw.endsWith('/')
      const body = folderOnly ? raw.slice(0, -1) : raw
      const anchored = body.includes('/')
      return { folderOnly, anchored, re: globRegExp(body.replace(/^\//, '')) }
    })
  return (path, folder) =>
    rules.some((r) => (folder || !r.folderOnly) && r.re.test(r.anchored ? path : path.slice(path.lastIndexOf('/') + 1)))
}

function globRegExp(glob: string): RegExp {
  let out = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (glob.startsWith('**/', i)) {
      out += '(?:.*/)?'
      i += 2
    } else if (glob.startsWith('/**', i) && i + 3 === glob.length) {
      out += '(?:/.*)?'
      i += 2
    } else if (c === '*') out += glob[i + 1] === '*' ? (i++, '.*') : '[^/]*'
    else if (c === '?') out += '[^/]'
    else if (c === '[' && glob.indexOf(']', i + 2) > 0) {
      const end = glob.indexOf(']', i + 2)
      const inner = glob
        .slice(i + 1, end)
        .replace(/^!/, '^')
        .replace(/\\/g, '\\\\')
      out += `[${inner}]`
      i = end
    } else out += c.replace(/[.+^${}()|\\]/g, '\\$&')
  }
  return new RegExp(`^${out}$`)
}

/** The regular files under `root`, sorted by path: `ascmhl/` at the root and ignored names left out, links not followed. */
function walk(root: string, ignored: (path: string, folder: boolean) => boolean): Omit<NewEntry, 'xxh64'>[] {
  const out: Omit<NewEntry, 'xxh64'>[] = []
  const visit = (folder: string, prefix: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = prefix + entry.name
      if (path === MHL_FOLDER) continue
      const absolute = join(folder, entry.name)
      const stat = lstatSync(absolute)
      if (stat.isDirectory()) {
        if (!ignored(path, true)) visit(absolute, `${path}/`)
      } else if (stat.isFile() && !ignored(path, false)) out.push({ path, size: stat.size, lastModified: stat.mtime })
    }
  }
  visit(root, '')
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}
