// What a camera card's move uses of src/storage/file.ts (docs/cards.md, Moving cards): a folder
// made new for the card (claimFolder: `_N` on the card's folder when its name is taken, by a file
// or a folder), moves under the file's own name or not at all (`exact`: a taken name is EEXIST,
// never `_1`, within a file system and across two, the source left whole), and the removal of the
// folders a card left empty (removeEmptyFolders: only empty ones, nothing else). Real folders.
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { claimFolder, moveFile, planMove, removeEmptyFolders } from '../../src/storage/file.ts'
import { OTHER_TMP, TEST_TMP } from '../helpers/temp.ts'
import { removeAll } from '../helpers/tree.ts'

const disk = mkdtempSync(join(TEST_TMP, 'reelhouse-card-move-'))
const other = OTHER_TMP !== undefined ? mkdtempSync(join(OTHER_TMP, 'reelhouse-card-move-')) : undefined
afterAll(() => removeAll(disk, ...(other ? [other] : [])))

let n = 0
const device = (parent = disk) => {
  const root = join(parent, `dev${n++}`) + '/'
  mkdirSync(root)
  return root
}
const put = (path: string, text: string) => {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, text)
}
const names = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : [])

test('claimFolder: the card’s folder made new, its parents made; a name taken by a folder or a file gets _1, _2 on the folder', () => {
  const root = device()
  const parent = join(root, 'A', 'video')
  expect(claimFolder(root, parent, 'A001')).toBe(join(parent, 'A001') + '/')
  expect(claimFolder(root, parent, 'A001')).toBe(join(parent, 'A001_1') + '/')
  put(join(parent, 'A001_2'), 'a file of that name')
  put(join(parent, 'B.RDM', 'x'), 'a folder with a dot')
  expect(claimFolder(root, parent, 'A001')).toBe(join(parent, 'A001_3') + '/')
  expect(claimFolder(root, parent, 'B.RDM')).toBe(join(parent, 'B.RDM_1') + '/')
  expect(names(parent)).toEqual(['A001', 'A001_1', 'A001_2', 'A001_3', 'B.RDM', 'B.RDM_1'])
  expect(() => claimFolder(root, parent, '../up')).toThrow()
})

for (const across of [false, true])
  test.skipIf(across && other === undefined)(
    `exact: a taken name fails the move (EEXIST), never _1; the source stays whole${across ? ' (across file systems: no copy left behind)' : ''}`,
    async () => {
      const src = device()
      const tgt = across ? device(other) : src
      const source = join(src, 'drop', 'A001', 'CLIP', 'C0001.MP4')
      put(source, 'clip of card two')
      const targetDir = join(tgt, 'video', 'A001', 'CLIP')
      // Taken when planned: refused at once.
      put(join(targetDir, 'C0001.MP4'), 'clip of card one')
      expect(() => planMove({ source, sourceRoot: src, targetRoot: tgt, targetDir, exact: true })).toThrow(
        /EEXIST.*keep their names/,
      )
      // Free when planned, taken before the move: the move fails, nothing renamed.
      const freeDir = join(tgt, 'video', 'A001_1', 'CLIP')
      const plan = planMove({ source, sourceRoot: src, targetRoot: tgt, targetDir: freeDir, exact: true })
      expect([plan.name, plan.exact]).toEqual(['C0001.MP4', true])
      put(join(freeDir, 'C0001.MP4'), 'someone else')
      await expect(moveFile(plan, { crossDevice: across })).rejects.toThrow(/EEXIST/)
      expect(readFileSync(source, 'utf8')).toBe('clip of card two')
      expect(names(freeDir)).toEqual(['C0001.MP4'])
      expect(readFileSync(join(freeDir, 'C0001.MP4'), 'utf8')).toBe('someone else')
      // Without exact the same plan would have taken C0001_1.MP4: a single file's rule, not a card's.
      const loose = planMove({ source, sourceRoot: src, targetRoot: tgt, targetDir: freeDir })
      expect(loose.name).toBe('C0001_1.MP4')
    },
  )

test('removeEmptyFolders: the folders given, deepest first, while empty; one that holds anything stays, and its parents', () => {
  const root = device()
  mkdirSync(join(root, 'drop', 'A001', 'PRIVATE', 'M4ROOT', 'CLIP'), { recursive: true })
  mkdirSync(join(root, 'drop', 'A001', 'PRIVATE', 'M4ROOT', 'SUB'), { recursive: true })
  put(join(root, 'drop', 'B001', 'PRIVATE', 'M4ROOT', 'CLIP', 'C0001.MP4'), 'still here')
  const removed = removeEmptyFolders(root, [
    'drop/A001/PRIVATE/M4ROOT/CLIP',
    'drop/A001/PRIVATE/M4ROOT/SUB',
    'drop/B001/PRIVATE/M4ROOT/CLIP',
    'drop/A001/PRIVATE/M4ROOT',
    'drop/B001/PRIVATE/M4ROOT',
    'drop/A001/PRIVATE',
    'drop/B001/PRIVATE',
    'drop/A001',
    'drop/B001',
    'drop/gone',
  ])
  expect(removed).toEqual([
    'drop/A001/PRIVATE/M4ROOT/CLIP',
    'drop/A001/PRIVATE/M4ROOT/SUB',
    'drop/A001/PRIVATE/M4ROOT',
    'drop/A001/PRIVATE',
    'drop/A001',
  ])
  expect(names(join(root, 'drop'))).toEqual(['B001'])
  expect(readFileSync(join(root, 'drop', 'B001', 'PRIVATE', 'M4ROOT', 'CLIP', 'C0001.MP4'), 'utf8')).toBe('still here')
})
