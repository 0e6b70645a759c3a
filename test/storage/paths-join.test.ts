// How device paths are joined and split outside src/storage/ (the watcher, imports, productions,
// media assets), under the Linux and the Windows rules, run on Linux: the helpers at the end of
// src/storage/paths.ts and the pure functions built on them take the separator (or the rules) of
// the platform they follow. No file of another system is looked at.
import { describe, expect, test } from 'bun:test'
import {
  RULES,
  folderBelow,
  hasSep,
  lastName,
  lastSepIndex,
  parentFolder,
  platformRel,
  sepPattern,
  trimSep,
  withFinalSep,
} from '../../src/storage/paths.ts'
import { moveFolder } from '../../src/modules/assetimport/service.ts'
import { remadeProxyName } from '../../src/modules/assetimport/proxy.task.ts'
import { defaultProxyRoot } from '../../src/modules/productions/service.ts'
import { pathRangeEnd } from '../../src/modules/mediaassets/service.ts'
import { nameRules } from '../../src/watch/ingest.ts'
import { createAggregator, foldPaths } from '../../src/watch/aggregator.ts'

const { linux, win32 } = RULES

describe("the helpers, under each platform's separator", () => {
  test('lastSepIndex: "/" on Linux; "\\" and "/" on Windows; from where lastIndexOf would look', () => {
    expect(lastSepIndex('/mnt/media/a.mov', undefined, '/')).toBe(10)
    expect(lastSepIndex('/mnt/media\\a.mov', undefined, '/')).toBe(4) // a backslash is a character of a name on Linux
    expect(lastSepIndex('C:\\media\\a.mov', undefined, '\\')).toBe(8)
    expect(lastSepIndex('C:\\media/a.mov', undefined, '\\')).toBe(8)
    expect(lastSepIndex('a.mov', undefined, '\\')).toBe(-1)
    // From an index: the separator at or before it; a negative one looks at the first character only (as lastIndexOf).
    expect(lastSepIndex('/mnt/media/', 9, '/')).toBe(4)
    expect(lastSepIndex('C:\\media\\', 7, '\\')).toBe(2)
    expect(['/', '\\'].map((s) => lastSepIndex(s, -1, s as '/' | '\\'))).toEqual(['/'.lastIndexOf('/', -1), 0])
  })

  test('trimSep and withFinalSep: one final separator off, or on where there is none', () => {
    expect([trimSep('/mnt/a/', '/'), trimSep('/mnt/a', '/'), trimSep('/mnt/a\\', '/')]).toEqual([
      '/mnt/a',
      '/mnt/a',
      '/mnt/a\\',
    ])
    expect([trimSep('C:\\a\\', '\\'), trimSep('C:\\a/', '\\'), trimSep('C:\\a', '\\')]).toEqual([
      'C:\\a',
      'C:\\a',
      'C:\\a',
    ])
    expect([withFinalSep('/mnt/a', '/'), withFinalSep('/mnt/a/', '/'), withFinalSep('/mnt/a\\', '/')]).toEqual([
      '/mnt/a/',
      '/mnt/a/',
      '/mnt/a\\/',
    ])
    expect([withFinalSep('C:\\a', '\\'), withFinalSep('C:\\a\\', '\\'), withFinalSep('\\\\nas\\media', '\\')]).toEqual([
      'C:\\a\\',
      'C:\\a\\',
      '\\\\nas\\media\\',
    ])
  })

  test("platformRel: a walk's '/'-joined relative path in the platform's spelling", () => {
    expect(platformRel('Show/day 1/a.mov', '/')).toBe('Show/day 1/a.mov')
    expect(platformRel('Show/day 1/a.mov', '\\')).toBe('Show\\day 1\\a.mov')
    expect(platformRel('', '\\')).toBe('')
  })

  test('parentFolder: the folder holding a file or a folder, with the separator of the rules', () => {
    expect(
      ['/mnt/media/Show/a.mov', '/mnt/media/Show/', '/mnt/media/Show', '/a', 'a'].map((p) => parentFolder(p, '/')),
    ).toEqual(['/mnt/media/Show/', '/mnt/media/', '/mnt/media/', '/', ''])
    expect(
      ['C:\\media\\Show\\a.mov', 'C:\\media\\Show\\', 'C:\\a', '\\\\nas\\media\\Show\\', 'C:\\media/Show/'].map((p) =>
        parentFolder(p, '\\'),
      ),
    ).toEqual(['C:\\media\\Show\\', 'C:\\media\\', 'C:\\', '\\\\nas\\media\\', 'C:\\media\\'])
    // Where node's posix.dirname was used on a Windows path, the answer was '.': the fault this replaces.
    expect(parentFolder('C:\\media\\Show\\proj\\', '\\')).toBe('C:\\media\\Show\\')
  })

  test('lastName and hasSep: the last name as written, and whether a name is a path', () => {
    expect([
      lastName('/mnt/a.mov', '/'),
      lastName('/mnt/', '/'),
      lastName('Show\\a.mov', '/'),
      lastName('a.mov', '/'),
    ]).toEqual(['a.mov', '', 'Show\\a.mov', 'a.mov'])
    expect([lastName('C:\\Show\\a.mov', '\\'), lastName('Show/a.mov', '\\'), lastName('C:\\Show\\', '\\')]).toEqual([
      'a.mov',
      'a.mov',
      '',
    ])
    expect([hasSep('a.mov', '/'), hasSep('a\\b', '/'), hasSep('a/b', '/')]).toEqual([false, false, true])
    expect([hasSep('a.mov', '\\'), hasSep('a\\b', '\\'), hasSep('a/b', '\\')]).toEqual([false, true, true])
  })

  test('folderBelow: folders below a folder, each name followed by the separator', () => {
    expect(folderBelow('/mnt/media/', ['night-shift', 'video'], '/')).toBe('/mnt/media/night-shift/video/')
    expect(folderBelow('/mnt/media', ['video'], '/')).toBe('/mnt/media/video/')
    expect(folderBelow('C:\\media\\', ['night-shift', 'video'], '\\')).toBe('C:\\media\\night-shift\\video\\')
    expect(folderBelow('\\\\nas\\media', ['video'], '\\')).toBe('\\\\nas\\media\\video\\')
  })

  test('sepPattern: one separator in a regular expression', () => {
    expect(new RegExp(`^a${sepPattern('/')}b$`).test('a/b')).toBe(true)
    expect(new RegExp(`^a${sepPattern('/')}b$`).test('a\\b')).toBe(false)
    expect(['a/b', 'a\\b', 'a:b'].map((p) => new RegExp(`^a${sepPattern('\\')}b$`).test(p))).toEqual([
      true,
      true,
      false,
    ])
  })
})

describe("a production's default proxy_root", () => {
  test("the folder proxies in its storage_root, in the platform's spelling", () => {
    expect(defaultProxyRoot('/mnt/media/Show/', '/')).toBe('/mnt/media/Show/proxies/')
    expect(defaultProxyRoot('C:\\media\\Show\\', '\\')).toBe('C:\\media\\Show\\proxies\\')
    expect(defaultProxyRoot('\\\\nas\\media\\Show\\', '\\')).toBe('\\\\nas\\media\\Show\\proxies\\')
    // Cleaned by the rules, the folder is the one the record holds.
    expect(win32.cleanDir(defaultProxyRoot(win32.cleanDir('c:/media/Show'), '\\'))).toBe('C:\\media\\Show\\proxies\\')
  })
})

describe('where move_asset puts a file (moveFolder)', () => {
  const production = (storage_root: string) => ({ codename: 'night-shift', storage_root })

  test('Linux: the kind folder in the storage_root on its own device, else DEVICE/CODENAME/KIND/', () => {
    const devices = [
      { id: 1, path: '/mnt/media/' },
      { id: 2, path: '/mnt/media/nested/' },
      { id: 3, path: '/srv/archive/' },
    ]
    expect(moveFolder(devices, devices[0]!, production('/mnt/media/Show'), 'video', linux)).toBe(
      '/mnt/media/Show/video/',
    )
    expect(moveFolder(devices, devices[2]!, production('/mnt/media/Show/'), 'audio', linux)).toBe(
      '/srv/archive/night-shift/audio/',
    )
    // A device nested in another is not the outer one's.
    expect(moveFolder(devices, devices[0]!, production('/mnt/media/nested/Show/'), 'image', linux)).toBe(
      '/mnt/media/night-shift/image/',
    )
  })

  test('Windows: the same, with backslashes, on drives and shares, names compared without case', () => {
    const devices = [
      { id: 1, path: 'C:\\media\\' },
      { id: 2, path: '\\\\nas\\archive\\' },
    ]
    expect(moveFolder(devices, devices[0]!, production('C:\\media\\Show\\'), 'video', win32)).toBe(
      'C:\\media\\Show\\video\\',
    )
    expect(moveFolder(devices, devices[0]!, production('c:/Media/Show'), 'video', win32)).toBe(
      'C:\\Media\\Show\\video\\',
    )
    expect(moveFolder(devices, devices[1]!, production('C:\\media\\Show\\'), 'audio', win32)).toBe(
      '\\\\nas\\archive\\night-shift\\audio\\',
    )
    // A folder path as the rules clean it: nothing to repair.
    const folder = moveFolder(devices, devices[1]!, production('C:\\media\\Show\\'), 'image', win32)
    expect(win32.cleanDir(folder)).toBe(folder)
  })
})

describe("a remade proxy's name (remadeProxyName)", () => {
  test("Linux: the old proxy's name when it lies in the proxy folder with the extension, else the asset's id", () => {
    expect(remadeProxyName('/mnt/media/Show/proxies/clip.mp4', '/mnt/media/Show/proxies/', '.mp4', 7, '/')).toBe(
      'clip.mp4',
    )
    expect(remadeProxyName('/mnt/media/Show/proxies/clip.mov', '/mnt/media/Show/proxies/', '.mp4', 7, '/')).toBe('7')
    expect(remadeProxyName('/mnt/media/Show/proxies/old/clip.mp4', '/mnt/media/Show/proxies/', '.mp4', 7, '/')).toBe(
      '7',
    )
    expect(remadeProxyName('/mnt/media/Show/proxies/.clip.mp4', '/mnt/media/Show/proxies/', '.mp4', 7, '/')).toBe('7')
    expect(remadeProxyName('', '/mnt/media/Show/proxies/', '.mp4', 7, '/')).toBe('7')
  })

  test("Windows: the same with backslashes (a '/' stripped from the folder before: the old name was never kept)", () => {
    expect(remadeProxyName('C:\\media\\Show\\proxies\\clip.mp4', 'C:\\media\\Show\\proxies\\', '.mp4', 7, '\\')).toBe(
      'clip.mp4',
    )
    expect(
      remadeProxyName('C:\\media\\Show\\proxies\\old\\clip.mp4', 'C:\\media\\Show\\proxies\\', '.mp4', 7, '\\'),
    ).toBe('7')
    expect(remadeProxyName('C:\\media\\Show\\proxies\\.clip.mp4', 'C:\\media\\Show\\proxies\\', '.mp4', 7, '\\')).toBe(
      '7',
    )
    expect(remadeProxyName('C:\\media\\Show\\clip.mp4', 'C:\\media\\Show\\proxies\\', '.mp4', 7, '\\')).toBe('7')
  })
})

describe('the range of paths below a folder in the path index (pathRangeEnd)', () => {
  const inRange = (dir: string, path: string) => path >= dir && path < pathRangeEnd(dir)
  test('Linux: "dir/" to "dir0"', () => {
    expect(pathRangeEnd('/mnt/a/')).toBe('/mnt/a0')
    expect(
      ['/mnt/a/x.mov', '/mnt/a/b/c.mov', '/mnt/a.mov', '/mnt/ab/x.mov', '/mnt/a'].map((p) => inRange('/mnt/a/', p)),
    ).toEqual([true, true, false, false, false])
  })
  test('Windows: "dir\\" to "dir]"', () => {
    expect(pathRangeEnd('C:\\a\\')).toBe('C:\\a]')
    expect(
      ['C:\\a\\x.mov', 'C:\\a\\b\\c.mov', 'C:\\a.mov', 'C:\\ab\\x.mov', 'C:\\a', 'C:\\a]'].map((p) =>
        inRange('C:\\a\\', p),
      ),
    ).toEqual([true, true, false, false, false, false])
  })
})

describe("the watch folder's name rules, by each platform's separators", () => {
  const onLinux = nameRules(linux)
  const onWindows = nameRules(win32)

  test('clutter and work names as a whole name anywhere along the path', () => {
    expect(
      ['Show/@eaDir/x.jpg', 'Show/.reelhouse-copy-1/a.mov', 'Show\\@eaDir\\x.jpg', 'Show/@eaDir-not/x.jpg'].map(
        onLinux.excluded,
      ),
    ).toEqual([true, true, false, false])
    expect(
      [
        'Show\\@eaDir\\x.jpg',
        'Show/@eaDir/x.jpg',
        'Show\\$RECYCLE.BIN',
        'Show\\.REELHOUSE-copy-1\\a.mov',
        'Show\\@eaDir-not\\x.jpg',
      ].map(onWindows.excluded),
    ).toEqual([true, true, true, true, false])
  })

  test("skipped and kindOf read the last name by the platform's separators", () => {
    expect(onWindows.skipped('Show\\.hidden\\a.mov')).toBe('inside the hidden folder .hidden')
    expect(onWindows.skipped('Show\\._a.mov')).toBe('an AppleDouble file (._*)')
    expect(onWindows.skipped('Show\\day 1\\a.mov')).toBeUndefined()
    expect(onLinux.skipped('Show\\.hidden\\a.mov')).toBeUndefined() // one name on Linux, not hidden
    expect([
      onWindows.kindOf('Show\\a.MOV'),
      onWindows.kindOf('Show.mov\\readme'),
      onLinux.kindOf('Show.mov\\readme'),
    ]).toEqual(['video', undefined, undefined])
    expect(onLinux.kindOf('Show/a.wav')).toBe('audio')
  })
})

describe('the aggregator, with Windows paths', () => {
  test('foldPaths folds below a drive root and gives folders back with a backslash', () => {
    const paths = Array.from({ length: 4 }, (_, i) => `C:\\media\\Show\\clip${i}.mov`)
    expect(foldPaths('C:\\media\\', paths, 3, 512, win32)).toEqual(['C:\\media\\Show\\'])
    expect(foldPaths('C:\\media\\', paths.slice(0, 2), 3, 512, win32)).toEqual(paths.slice(0, 2))
    expect(foldPaths('C:\\media\\', ['C:\\media'], 3, 512, win32)).toBeNull()
    // On Linux the same paths are one name each below no root of theirs.
    expect(foldPaths('/mnt/media/', ['/mnt/media/Show/a.mov', '/mnt/media/Show/b.mov'], 1)).toEqual([
      '/mnt/media/Show/',
    ])
  })

  test("events below a share: the watcher's absolute paths, clutter left out, folders with a backslash", () => {
    const a = createAggregator({ root: () => '\\\\nas\\media\\', rules: win32 })
    a.add({ device: 1, type: 'addDir', path: '\\\\nas\\media\\Show\\day 1\\' }, 0)
    a.add({ device: 1, type: 'add', path: '\\\\nas\\media\\Show\\day 1\\a.mov' }, 0)
    a.add({ device: 1, type: 'add', path: '\\\\nas\\media\\Show\\@eaDir\\a.jpg' }, 0)
    a.add({ device: 1, type: 'add', path: '\\\\nas\\media\\Other\\b.mov' }, 0)
    expect(a.due(0)).toEqual([{ device: 1, paths: ['\\\\nas\\media\\Show\\day 1\\', '\\\\nas\\media\\Other\\b.mov'] }])
    a.add({ device: 1, type: 'unlinkDir', path: '\\\\nas\\media' }, 0) // the root itself, without its separator
    expect(a.due(10_000)).toEqual([{ device: 1, paths: null }])
  })
})
