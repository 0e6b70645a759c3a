// The compiled executable's module URLs as each system spells them (src/util/embedded.ts): the
// worker threads are found by this test, so a spelling it misses starts no checkpoint or
// watcher thread on that system.
import { expect, test } from 'bun:test'
import { isEmbedded } from '../../src/util/embedded.ts'

test('the executable’s own files on Linux and macOS, on Windows (either spelling of ~BUN), and not a source file', () => {
  expect([
    'file:///$bunfs/root/db/checkpointer.js',
    'file:///B:/~BUN/root/db/checkpointer.js',
    'file:///B:/%7EBUN/root/db/checkpointer.js',
    'file:///B:/%7ebun/root/db/checkpointer.js',
    'file:///work/reelhouse/src/db/checkpointer.ts',
    'file:///C:/Users/ana/reelhouse/src/db/checkpointer.ts',
    'file:///home/ana/%7EBUNNY/checkpointer.ts',
  ].map(isEmbedded)).toEqual([true, true, true, true, false, false, false])
})
