// A hostile local process for the race tests: for a bounded time, it swaps folders (and files)
// under `root` for symbolic links to `outside`, and swaps them back, as fast as it can.
//   bun test/helpers/swapper.ts delete PARENT OUTSIDE MS   the subfolders of the hidden folder
//                                                          .reelhouse-delete-* in PARENT
//   bun test/helpers/swapper.ts copy SOURCE OUTSIDE MS     the folders and files of SOURCE (a file
//                                                          only where OUTSIDE has one of its name)
// Writes how many swaps it made on stdout.
import { existsSync, lstatSync, readdirSync, renameSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'

const [mode, root, outside, ms] = process.argv.slice(2) as ['delete' | 'copy', string, string, string]
const end = Date.now() + Number(ms)
const files = mode === 'copy'
let swaps = 0

const work = () => {
  if (mode === 'copy') return root
  const hidden = readdirSync(root).find((n) => n.startsWith('.reelhouse-delete-'))
  if (!hidden) throw new Error('not yet')
  return join(root, hidden)
}

while (Date.now() < end) {
  let dir: string
  try {
    dir = work()
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      const s = lstatSync(path)
      if (s.isDirectory() && !name.endsWith('.held')) {
        // A folder out, a link to the outside in its place; then back.
        renameSync(path, path + '.held')
        symlinkSync(outside, path)
        swaps++
        rmSync(path)
        renameSync(path + '.held', path)
      } else if (files && s.isFile()) {
        // A file for a same-named link to an outside file of the same size; then back.
        const twin = join(outside, name)
        if (!existsSync(twin)) continue
        renameSync(path, path + '.held')
        symlinkSync(twin, path)
        swaps++
        rmSync(path)
        renameSync(path + '.held', path)
      }
    }
  } catch {
    // The work folder changes under us (the task renames and removes it): try again.
  }
}
console.log(swaps)
