// Run by test/storage/windows-nt.test.ts inside the Windows executable under Wine
// (BUN_BE_BUN=1 wine64 reelhouse-windows-x64.exe windows-nt.wine.ts C:\…\folder): every case
// of src/storage/windows/nt.ts on real Windows calls, in one process (a Wine start costs about a
// second), printed as one JSON object for the test to compare whole. A case gives 'ok' or what
// the call returned, or the `code` of the error it threw; where Bun's own `node:fs` tells the
// same thing by path (an identity, a listing, times), both are given side by side.
//
// Not named *.test.ts: the Linux test runner must not pick it up.
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import {
  closeHandle,
  createFile,
  type Handle,
  identity,
  link,
  list,
  mkdir,
  type NtError,
  openDir,
  openFile,
  openRoot,
  read,
  remove,
  renameNoReplace,
  setTimes,
  stat,
  write,
} from '../../src/storage/windows/nt.ts'

const started = performance.now()
const base = process.argv[2]!.replace(/\\$/, '')
const at = (...names: string[]) => [base, ...names].join('\\')

/** 'ok', or what `fn` returned, or the code of what it threw (its message where it has none). */
function outcome(fn: () => unknown): unknown {
  try {
    const value = fn()
    return value === undefined ? 'ok' : value
  } catch (error) {
    return (error as NtError).code ?? String(error)
  }
}

/** Opens with `open`, closes at once: 'ok' or the error's code. */
const opens = (open: () => Handle) => outcome(() => closeHandle(open()))

/** `fn` with the handle `h`, closed after. */
function using<T>(h: Handle, fn: (h: Handle) => T): T {
  try {
    return fn(h)
  } finally {
    closeHandle(h)
  }
}

const bunIdentity = (path: string) => {
  const s = statSync(path, { bigint: true })
  return { dev: String(s.dev), ino: String(s.ino) }
}
const myIdentity = (h: Handle) => {
  const id = identity(h)
  return { dev: String(id.dev), ino: String(id.ino) }
}
const text = (h: Handle) => {
  const into = Buffer.alloc(64)
  return into.toString('utf8', 0, read(h, into, 0))
}

// The tree, made by path with Bun's node:fs.
mkdirSync(at('sub'))
writeFileSync(at('f.txt'), 'hello')
mkdirSync(at('full'))
writeFileSync(at('full', 'x.txt'), 'x')
mkdirSync(at('empty'))
writeFileSync(at('gone.txt'), 'gone')
writeFileSync(at('ro.txt'), 'read-only')
chmodSync(at('ro.txt'), 0o444)
writeFileSync(at('locked.mov'), 'data')
mkdirSync(at('pinned'))
mkdirSync(at('a'))

const root = openRoot(`${base}\\`)
const sub = openDir(root, 'sub')
const results: Record<string, unknown> = {}

/** results[name] = what `fn` gives; a throw the case did not expect is recorded there, and the next cases still run. */
function section(name: string, fn: () => unknown) {
  try {
    results[name] = fn()
  } catch (error) {
    results[name] = { threw: (error as Error).message }
  }
}

section('openRoot', () => ({
  file: opens(() => openRoot(at('f.txt'))),
  missing: opens(() => openRoot(at('missing'))),
  relative: opens(() => openRoot('media\\')),
  verbatim: opens(() => openRoot(`\\\\?\\${base}\\`)),
  forwardSlashes: opens(() => openRoot(`${base.replace(/\\/g, '/')}/sub/`)),
}))

section('identity', () => ({
  root: { mine: myIdentity(root), bun: bunIdentity(base) },
  sub: { mine: myIdentity(sub), bun: bunIdentity(at('sub')) },
  file: using(openFile(root, 'f.txt', 'read'), (h) => {
    const id = identity(h)
    return {
      mine: myIdentity(h),
      bun: bunIdentity(at('f.txt')),
      low64OfId128: String(BigInt(`0x${id.id128.slice(16)}`)),
      volumeLow32: String(id.volume & 0xffffffffn),
    }
  }),
}))

section('open', () => ({
  subOtherCase: opens(() => openDir(root, 'SUB')),
  fileOtherCase: using(openFile(root, 'F.TXT', 'read'), (h) => ({
    ino: myIdentity(h).ino === bunIdentity(at('f.txt')).ino,
    text: text(h),
  })),
  fileAsFolder: opens(() => openDir(root, 'f.txt')),
  folderAsFile: opens(() => openFile(root, 'sub', 'read')),
  missing: opens(() => openDir(root, 'missing')),
  names: Object.fromEntries(
    ['..', '.', '', 'sub\\x', 'sub/x', 'f.txt:stream', '..\\f.txt'].map((n) => [n, opens(() => openDir(root, n))]),
  ),
}))

section('error', () => {
  try {
    openDir(root, 'missing')
  } catch (error) {
    const e = error as NtError
    return { code: e.code, errno: e.errno, syscall: e.syscall, path: e.path, ntstatus: e.ntstatus, message: e.message }
  }
})

section('create', () => ({
  first: outcome(() => using(createFile(root, 'new.txt'), (h) => write(h, Buffer.from('new'), 0))),
  again: opens(() => createFile(root, 'new.txt')),
  againOtherCase: opens(() => createFile(root, 'NEW.TXT')),
  content: readFileSync(at('new.txt'), 'utf8'),
  device: opens(() => createFile(root, 'CON')),
  trailingDot: opens(() => createFile(root, 'a.')),
}))

section('mkdir', () => ({
  first: outcome(() => using(mkdir(root, 'made'), (h) => list(h).length)),
  isFolder: statSync(at('made')).isDirectory(),
  again: opens(() => mkdir(root, 'made')),
}))

section('rename', () => ({
  ontoExisting: outcome(() => renameNoReplace(root, 'new.txt', root, 'f.txt')),
  ontoExistingOtherCase: outcome(() => renameNoReplace(root, 'new.txt', root, 'F.TXT')),
  targetUntouched: readFileSync(at('f.txt'), 'utf8'),
  intoSubByHandle: outcome(() => renameNoReplace(root, 'new.txt', sub, 'moved.txt')),
  after: [existsSync(at('new.txt')), readFileSync(at('sub', 'moved.txt'), 'utf8')],
  folder: outcome(() => renameNoReplace(root, 'made', sub, 'made')),
  folderAfter: [existsSync(at('made')), statSync(at('sub', 'made')).isDirectory()],
  missing: outcome(() => renameNoReplace(root, 'missing', root, 'other')),
  toDeviceName: outcome(() => renameNoReplace(sub, 'moved.txt', root, 'NUL.txt')),
}))

section('link', () => ({
  first: outcome(() => link(root, 'f.txt', sub, 'f-link.txt')),
  again: outcome(() => link(root, 'f.txt', sub, 'f-link.txt')),
  nlink: statSync(at('f.txt')).nlink,
  sameFile: statSync(at('f.txt')).ino === statSync(at('sub', 'f-link.txt')).ino,
  folder: outcome(() => link(root, 'sub', root, 'sub-link')),
}))

section('remove', () => ({
  file: outcome(() => remove(root, 'gone.txt', false)),
  fileGone: existsSync(at('gone.txt')),
  emptyFolder: outcome(() => remove(root, 'empty', true)),
  emptyFolderGone: existsSync(at('empty')),
  fullFolder: outcome(() => remove(root, 'full', true)),
  fullFolderKept: existsSync(at('full', 'x.txt')),
  fileAsFolder: outcome(() => remove(root, 'f.txt', true)),
  folderAsFile: outcome(() => remove(root, 'sub', false)),
  readOnlyBefore: (statSync(at('ro.txt')).mode & 0o200) === 0,
  readOnly: outcome(() => remove(root, 'ro.txt', false)),
  readOnlyGone: existsSync(at('ro.txt')),
  missing: outcome(() => remove(root, 'missing', false)),
}))

const listedByBun = (folder: string) =>
  readdirSync(folder)
    .sort()
    .map((name) => {
      const s = lstatSync(`${folder}\\${name}`)
      const ino = String(lstatSync(`${folder}\\${name}`, { bigint: true }).ino)
      return {
        name,
        kind: s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other',
        ino,
        size: s.size,
        mtimeMs: s.mtimeMs,
      }
    })
const listedByHandle = (h: Handle) =>
  list(h)
    .sort((x, y) => (x.name < y.name ? -1 : 1))
    .map((e) => ({ name: e.name, kind: e.kind, ino: String(e.ino), size: e.size, mtimeMs: e.mtimeMs }))
// `many` holds enough long names for several calls of 64 KiB (400 of 120 characters, 344 bytes
// an entry); the test makes it on Linux before the start, where 400 files take milliseconds,
// not the second they take through Wine.
section('list', () => ({
  root: { mine: listedByHandle(root), bun: listedByBun(base) },
  sub: { mine: listedByHandle(sub), bun: listedByBun(at('sub')) },
  // Names against Bun's listing, ids of a few: a stat by path costs about 1.5 ms under Wine.
  many: using(openDir(root, 'many'), (h) => {
    const mine = listedByHandle(h)
    const sample = [0, 199, 399].map((i) => mine[i]!)
    return {
      count: mine.length,
      sameNames: Bun.deepEquals(
        mine.map((e) => e.name),
        readdirSync(at('many')).sort(),
      ),
      sampleIds: sample.map((e) => e.ino === String(lstatSync(at('many', e.name), { bigint: true }).ino)),
    }
  }),
  again: listedByHandle(root).length,
}))

section('stat', () => ({
  file: using(openFile(root, 'f.txt', 'read'), (h) => {
    const [m, b] = [stat(h), statSync(at('f.txt'))]
    return {
      mine: {
        size: m.size,
        isDirectory: m.isDirectory,
        isLink: m.isLink,
        mtimeMs: m.mtimeMs,
        birthtimeMs: m.birthtimeMs,
      },
      bun: {
        size: b.size,
        isDirectory: b.isDirectory(),
        isLink: false,
        mtimeMs: b.mtimeMs,
        birthtimeMs: b.birthtimeMs,
      },
    }
  }),
  folder: (() => {
    const [m, b] = [stat(sub), statSync(at('sub'))]
    return {
      mine: { isDirectory: m.isDirectory, isLink: m.isLink, mtimeMs: m.mtimeMs },
      bun: { isDirectory: b.isDirectory(), isLink: false, mtimeMs: b.mtimeMs },
    }
  })(),
}))

const ATIME = 1_700_000_000_000.25
const MTIME = 1_600_000_000_123.4567
section('setTimes', () => ({
  file: using(openFile(root, 'f.txt', 'write'), (h) => {
    setTimes(h, ATIME, MTIME)
    const s = stat(h)
    return { atimeMs: s.atimeMs, mtimeMs: s.mtimeMs }
  }),
  // Not the access time: Wine's own opens (Bun's stat by path is one) set it to the present.
  fileByBun: statSync(at('f.txt')).mtimeMs,
  folder: outcome(() => using(openDir(root, 'sub', { writeAttributes: true }), (h) => setTimes(h, ATIME, MTIME))),
  folderByBun: statSync(at('sub')).mtimeMs,
}))

section('pin', () => {
  const pinned = openDir(root, 'pinned', { pin: true })
  const held = {
    rename: outcome(() => renameNoReplace(root, 'pinned', root, 'pinned-moved')),
    remove: outcome(() => remove(root, 'pinned', true)),
    renameByPath: outcome(() => renameSync(at('pinned'), at('pinned-moved'))),
    secondPin: opens(() => openDir(root, 'pinned', { pin: true })),
  }
  closeHandle(pinned)
  const renamedOnceClosed = outcome(() => renameNoReplace(root, 'pinned', root, 'pinned-moved'))
  // Held without `pin`: others may rename it, as on Linux.
  const unpinned = using(openDir(root, 'pinned-moved'), () =>
    outcome(() => renameNoReplace(root, 'pinned-moved', root, 'pinned-again')),
  )
  return { held, renamedOnceClosed, unpinned }
})

section('locked', () => {
  // "The NLE": a handle with read access that shares reading only.
  const nle = openFile(root, 'locked.mov', 'read', { denyWrite: true, denyDelete: true })
  const held = {
    forDelete: opens(() => openFile(root, 'locked.mov', 'delete')),
    message: outcome(() => {
      try {
        closeHandle(openFile(root, 'locked.mov', 'delete'))
      } catch (error) {
        return (error as Error).message
      }
    }),
    forRead: using(openFile(root, 'locked.mov', 'read'), text),
    forWrite: opens(() => openFile(root, 'locked.mov', 'write')),
    remove: outcome(() => remove(root, 'locked.mov', false)),
    rename: outcome(() => renameNoReplace(root, 'locked.mov', root, 'locked-moved.mov')),
  }
  closeHandle(nle)
  return {
    held,
    removedOnceClosed: outcome(() => remove(root, 'locked.mov', false)),
    gone: existsSync(at('locked.mov')),
  }
})

section('followsTheFolder', () => {
  const a = openDir(root, 'a')
  renameSync(at('a'), at('a-moved'))
  const created = outcome(() => using(createFile(a, 'after.txt'), () => undefined))
  closeHandle(a)
  return { created, where: [existsSync(at('a', 'after.txt')), existsSync(at('a-moved', 'after.txt'))] }
})

closeHandle(sub)
closeHandle(root)
results.ms = Math.round(performance.now() - started)
console.log(JSON.stringify(results))
