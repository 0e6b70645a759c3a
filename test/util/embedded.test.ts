// The compiled executable's own files as each system spells them (src/util/embedded.ts): the
// worker threads are found from Bun.main, so a spelling missed here starts no checkpoint or
// watcher thread on that system, and a source path taken for the executable's would load the
// build machine's source files.
import { expect, test } from 'bun:test'
import { embeddedUrl, isEmbedded } from '../../src/util/embedded.ts'

test('the executable’s own files on Linux and macOS, on Windows (either spelling of ~BUN, either slash), and not a source file', () => {
  expect(
    [
      '/$bunfs/root/reelhouse',
      'file:///$bunfs/root/db/checkpointer.js',
      'B:/~BUN/root/reelhouse-windows-x64',
      'B:\\~BUN\\root\\reelhouse-windows-x64',
      'file:///B:/~BUN/root/db/checkpointer.js',
      'file:///B:/%7EBUN/root/db/checkpointer.js',
      'file:///B:/%7ebun/root/db/checkpointer.js',
      '/work/reelhouse/src/main.ts',
      'file:///work/reelhouse/src/db/checkpointer.ts',
      'file:///C:/Users/ana/reelhouse/src/db/checkpointer.ts',
      'C:\\Users\\ana\\~BUNNY\\main.ts',
      'file:///home/ana/%7EBUNNY/checkpointer.ts',
      '/home/ana/$bunfsx/main.ts',
    ].map(isEmbedded),
  ).toEqual([true, true, true, true, true, true, true, false, false, false, false, false, false])
})

test('a worker’s URL beside the executable’s entry on each system, and none when the source runs', () => {
  const url = (main: string) => embeddedUrl('db/checkpoint.worker.js', main)
  expect(url('/$bunfs/root/reelhouse')).toBe('file:///$bunfs/root/db/checkpoint.worker.js')
  expect(url('B:/~BUN/root/reelhouse-windows-x64')).toBe('file:///B:/~BUN/root/db/checkpoint.worker.js')
  expect(url('B:\\~BUN\\root\\reelhouse-windows-x64')).toBe('file:///B:/~BUN/root/db/checkpoint.worker.js')
  expect(url('/work/reelhouse/src/main.ts')).toBeUndefined()
  // This process runs from source: the threads load their .ts files.
  expect(embeddedUrl('db/checkpoint.worker.js')).toBeUndefined()
})
