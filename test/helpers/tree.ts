// Real folder trees for copy/delete tests, and a way to compare two of them.
import { createHash } from 'node:crypto'
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  lstatSync,
  rmSync,
  symlinkSync,
  writeSync,
  existsSync,
} from 'node:fs'
import { join } from 'node:path'

/** Writes files: a string is the content, a number a size in bytes of patterned data. */
export function makeTree(root: string, files: Record<string, string | number | { link: string } | null>) {
  for (const [rel, spec] of Object.entries(files)) {
    const path = join(root, rel)
    if (spec === null) {
      mkdirSync(path, { recursive: true })
      continue
    }
    mkdirSync(join(path, '..'), { recursive: true })
    if (typeof spec === 'object') {
      // Throws when the link cannot be made: a spawned `ln` failed silently, and a symlink-safety
      // test then tested nothing.
      symlinkSync(spec.link, path)
      continue
    }
    if (typeof spec === 'string') {
      writeFileBytes(path, Buffer.from(spec))
      continue
    }
    writeLarge(path, spec)
  }
}

function writeFileBytes(path: string, data: Buffer) {
  const fd = openSync(path, 'wx')
  writeSync(fd, data)
  closeSync(fd)
}

/** `size` bytes of data that differs along the file (so a misplaced block is noticed). */
export function writeLarge(path: string, size: number) {
  const chunk = Buffer.alloc(4 * 1024 * 1024)
  const fd = openSync(path, 'wx')
  let written = 0
  let block = 0
  while (written < size) {
    chunk.fill(block++ % 251)
    chunk.writeUInt32BE(block, 0)
    const n = Math.min(chunk.length, size - written)
    writeSync(fd, chunk, 0, n)
    written += n
  }
  closeSync(fd)
}

/** Many small files in nested folders. */
export function manyFiles(root: string, count: number, size = 1024, perFolder = 100) {
  const data = Buffer.alloc(size, 7)
  for (let i = 0; i < count; i++) {
    const dir = join(root, `d${Math.floor(i / perFolder)}`)
    if (i % perFolder === 0) mkdirSync(dir, { recursive: true })
    writeFileBytes(join(dir, `f${i}.bin`), data)
  }
}

export type Snapshot = Record<string, { kind: string; size?: number; mtime?: number; hash?: string; link?: string }>

/** Everything about a tree a copy must keep: names, kinds, sizes, times, contents, link targets. */
export function snapshot(root: string): Snapshot {
  const out: Snapshot = {}
  const visit = (rel: string) => {
    const path = join(root, rel)
    const s = lstatSync(path)
    if (s.isSymbolicLink()) out[rel] = { kind: 'link', link: readlinkSync(path) }
    else if (s.isDirectory()) {
      if (rel) out[rel] = { kind: 'dir', mtime: Math.floor(s.mtimeMs) }
      for (const name of readdirSync(path).sort()) visit(rel ? `${rel}/${name}` : name)
    } else {
      out[rel] = {
        kind: 'file',
        size: s.size,
        mtime: Math.floor(s.mtimeMs),
        hash: createHash('sha1').update(readFileSync(path)).digest('hex'),
      }
    }
  }
  visit('')
  return out
}

/** Whether `rel` is the ASC MHL history a project copy writes at its root (`ascmhl/`), or in it. */
export const inHistory = (rel: string) => rel === 'ascmhl' || rel.startsWith('ascmhl/')

/** A tree's record (a snapshot, a listing by path) without the copy's history at its root: what it holds of its source. */
export const withoutHistory = <T>(tree: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(tree).filter(([rel]) => !inHistory(rel)))

/** The regular files of the history at `root` (`ascmhl/`) and their bytes, as a project's `files` counts them. */
export function historyFiles(root: string): { count: number; bytes: number } {
  const files = Object.values(snapshot(join(root, 'ascmhl'))).filter((e) => e.kind === 'file')
  return { count: files.length, bytes: files.reduce((n, e) => n + e.size!, 0) }
}

/** Hidden work folders a copy or delete leaves beside its target, if any. */
export function leftovers(parent: string): string[] {
  if (!existsSync(parent)) return []
  return readdirSync(parent).filter((n) => n.startsWith('.reelhouse-'))
}

export const removeAll = (...paths: string[]) => {
  for (const p of paths) rmSync(p, { recursive: true, force: true })
}
