// The path rules of each platform (src/storage/paths.ts RULES), run on Linux: how Linux, macOS
// and Windows paths are checked, cleaned and compared. The Windows and macOS rules are tested
// here only as rules: no file of those systems is looked at.
import { describe, expect, test } from 'bun:test'
import { type PathRules, RULES, rulesFor } from '../../src/storage/paths.ts'

const { linux, darwin, win32 } = RULES

/** What `clean` answers for each value: the cleaned path, or the refusal's message. */
const cleaned = (rules: PathRules, values: string[], clean: 'cleanPath' | 'cleanDir' = 'cleanPath') =>
  Object.fromEntries(
    values.map((v) => {
      try {
        return [v, rules[clean](v)]
      } catch (error) {
        return [v, `refused: ${(error as Error).message}`]
      }
    }),
  )

const devices = (...paths: string[]) => paths.map((path, i) => ({ id: i + 1, path }))

test('each platform has its rules, Linux the ones of every other Unix', () => {
  expect([rulesFor('linux'), rulesFor('darwin'), rulesFor('win32'), rulesFor('freebsd')]).toEqual([
    linux,
    darwin,
    win32,
    linux,
  ])
  expect([linux.sep, darwin.sep, win32.sep]).toEqual(['/', '/', '\\'])
  expect([linux.maxLength, darwin.maxLength, win32.maxLength]).toEqual([4096, 1024, 32767])
})

describe('Linux', () => {
  test('paths are absolute from /, . and .. resolved (/.. is /), the final slash kept', () => {
    expect(
      cleaned(linux, [
        '/mnt/media/',
        '/mnt//media/./show/../',
        '/..',
        '/mnt/a/..',
        'mnt/media',
        'C:\\Media\\',
        '/a\0b',
        '/' + 'a'.repeat(4096),
      ]),
    ).toEqual({
      '/mnt/media/': '/mnt/media/',
      '/mnt//media/./show/../': '/mnt/media/',
      '/..': '/',
      '/mnt/a/..': '/mnt',
      'mnt/media': 'refused: The path must be absolute.',
      'C:\\Media\\': 'refused: The path must be absolute.',
      '/a\0b': 'refused: The path contains a NUL character.',
      ['/' + 'a'.repeat(4096)]: 'refused: The path is longer than 4096 characters.',
    })
    expect(linux.cleanDir('/mnt/media')).toBe('/mnt/media/')
  })

  test('names compare as written: another case is another folder', () => {
    expect(linux.isInside('/volumes/media/', '/Volumes/Media/Show/')).toBe(false)
    expect(linux.isInside('/Volumes/Media/', '/Volumes/Media/Show/')).toBe(true)
    expect(linux.isInside('/Volumes/Media/', '/Volumes/Media/')).toBe(false)
    expect(linux.samePath('/a/', '/A/')).toBe(false)
    expect(linux.deviceFor(devices('/volumes/media/'), '/Volumes/Media/clip.mov')).toBeUndefined()
    expect(linux.deviceFor(devices('/mnt/', '/mnt/media/'), '/mnt/media')?.id).toBe(2)
    expect(linux.workFolder.test('/mnt/.REELHOUSE-copy-1/')).toBe(false)
    expect(linux.workFolder.test('/mnt/.reelhouse-copy-1/')).toBe(true)
  })
})

describe('macOS', () => {
  test('paths are written as on Linux, at most 1,024 characters', () => {
    expect(cleaned(darwin, ['/Volumes/Media/./Show/../', 'Volumes/Media', '/' + 'a'.repeat(1024)])).toEqual({
      '/Volumes/Media/./Show/../': '/Volumes/Media/',
      'Volumes/Media': 'refused: The path must be absolute.',
      ['/' + 'a'.repeat(1024)]: 'refused: The path is longer than 1024 characters.',
    })
  })

  test('names compare without regard to case or Unicode normalization; the path keeps its spelling', () => {
    expect(darwin.isInside('/volumes/media/', '/Volumes/Media/Show/')).toBe(true)
    expect(darwin.isInside('/volumes/media/', '/Volumes/Media/')).toBe(false)
    expect(darwin.deviceFor(devices('/volumes/media/'), '/Volumes/Media/Show/clip.mov')?.id).toBe(1)
    // The device's own folder, written without its slash.
    expect(darwin.deviceFor(devices('/Volumes/Media/'), '/volumes/MEDIA')?.id).toBe(1)
    // "é" composed (NFC, as typed) and decomposed (NFD, as HFS+ stores it): one name, two lengths.
    const nfc = '/Volumes/M\u00e9dia/'
    const nfd = '/Volumes/Me\u0301dia/'
    expect(darwin.samePath(nfc, nfd)).toBe(true)
    expect(darwin.below(nfc, `${nfd}Show/clip.mov`)).toBe('Show/clip.mov')
    expect(darwin.below('/Volumes/Media/', '/Volumes/Medias/clip.mov')).toBeUndefined()
    expect(darwin.workFolder.test('/Volumes/Media/.REELHOUSE-copy-1/')).toBe(true)
    expect(darwin.cleanPath('/Volumes/Media/Show/')).toBe('/Volumes/Media/Show/')
  })
})

describe('Windows', () => {
  test('drive letters: / read as \\, . and .. resolved down to the drive root, the letter upper case', () => {
    expect(
      cleaned(win32, [
        'C:\\Media\\Show\\',
        'c:/media/show/../x/',
        'C:\\..\\..\\x',
        'C:\\a\\\\b\\.\\c',
        'C:\\a\\b\\..',
        'd:\\',
        'C:/',
      ]),
    ).toEqual({
      'C:\\Media\\Show\\': 'C:\\Media\\Show\\',
      'c:/media/show/../x/': 'C:\\media\\x\\',
      'C:\\..\\..\\x': 'C:\\x',
      'C:\\a\\\\b\\.\\c': 'C:\\a\\b\\c',
      'C:\\a\\b\\..': 'C:\\a',
      'd:\\': 'D:\\',
      'C:/': 'C:\\',
    })
    expect(win32.cleanDir('c:/Media')).toBe('C:\\Media\\')
  })

  test('UNC shares: \\\\server\\share\\ is the root, and .. never climbs above it', () => {
    expect(
      cleaned(win32, [
        '\\\\nas\\media\\Show\\',
        '//nas/media/a/./b/',
        '\\\\nas\\media',
        '\\\\nas\\media\\a\\..\\b',
        '\\\\nas\\media\\..\\other\\',
        '\\\\nas\\media\\a\\..\\..\\',
        '\\\\nas',
        '\\\\nas\\',
      ]),
    ).toEqual({
      '\\\\nas\\media\\Show\\': '\\\\nas\\media\\Show\\',
      '//nas/media/a/./b/': '\\\\nas\\media\\a\\b\\',
      '\\\\nas\\media': '\\\\nas\\media\\',
      '\\\\nas\\media\\a\\..\\b': '\\\\nas\\media\\b',
      '\\\\nas\\media\\..\\other\\':
        'refused: .. would climb above the share \\\\nas\\media\\: a UNC path stays within its share.',
      '\\\\nas\\media\\a\\..\\..\\':
        'refused: .. would climb above the share \\\\nas\\media\\: a UNC path stays within its share.',
      '\\\\nas': 'refused: A UNC path names a server and a share: \\\\server\\share\\folder\\.',
      '\\\\nas\\': 'refused: A UNC path names a server and a share: \\\\server\\share\\folder\\.',
    })
  })

  test('refused: relative forms, device namespaces, names Windows changes or reserves, NUL, over-long', () => {
    const long = 'C:\\' + 'a\\'.repeat(16383) + 'ab'
    expect(
      cleaned(win32, [
        'C:foo',
        'c:',
        '\\Media\\',
        '/Media/',
        'Media\\Show',
        '\\\\?\\C:\\Media\\',
        '\\\\.\\PhysicalDrive0',
        '//?/C:/Media/',
        '\\??\\C:\\Media',
        'C:\\Media.\\x',
        'C:\\Media \\x',
        'C:\\NUL',
        'C:\\Media\\com1.txt',
        'C:\\Media\\clip.mov:stream',
        'C:\\a?b',
        'C:\\a\u0001b',
        'C:\\a\0b',
        long,
      ]),
    ).toEqual({
      'C:foo':
        "refused: A path like C:folder is relative to the current folder of its drive: give it from the drive's root (C:\\folder\\).",
      'c:': "refused: A path like C:folder is relative to the current folder of its drive: give it from the drive's root (C:\\folder\\).",
      '\\Media\\':
        'refused: A path starting with \\ or / lies on the current drive, whichever that is: give the drive (C:\\folder\\) or the share (\\\\server\\share\\folder\\).',
      '/Media/':
        'refused: A path starting with \\ or / lies on the current drive, whichever that is: give the drive (C:\\folder\\) or the share (\\\\server\\share\\folder\\).',
      'Media\\Show': 'refused: The path must be absolute: C:\\folder\\ or \\\\server\\share\\folder\\.',
      '\\\\?\\C:\\Media\\':
        'refused: Device paths (\\\\?\\ and \\\\.\\) are not accepted: give the path as C:\\folder\\ or \\\\server\\share\\folder\\.',
      '\\\\.\\PhysicalDrive0':
        'refused: Device paths (\\\\?\\ and \\\\.\\) are not accepted: give the path as C:\\folder\\ or \\\\server\\share\\folder\\.',
      '//?/C:/Media/':
        'refused: Device paths (\\\\?\\ and \\\\.\\) are not accepted: give the path as C:\\folder\\ or \\\\server\\share\\folder\\.',
      '\\??\\C:\\Media':
        'refused: Device paths (\\\\?\\ and \\\\.\\) are not accepted: give the path as C:\\folder\\ or \\\\server\\share\\folder\\.',
      'C:\\Media.\\x':
        'refused: The name "Media." ends with a dot or a space, which Windows drops: it would name another file than written.',
      'C:\\Media \\x':
        'refused: The name "Media " ends with a dot or a space, which Windows drops: it would name another file than written.',
      'C:\\NUL':
        'refused: "NUL" is a device name on Windows (CON, PRN, AUX, NUL, COM0-9, LPT0-9), not a file or folder.',
      'C:\\Media\\com1.txt':
        'refused: "com1.txt" is a device name on Windows (CON, PRN, AUX, NUL, COM0-9, LPT0-9), not a file or folder.',
      'C:\\Media\\clip.mov:stream':
        'refused: The name "clip.mov:stream" holds a character Windows does not allow in names (< > : " | ? * or a control character).',
      'C:\\a?b':
        'refused: The name "a?b" holds a character Windows does not allow in names (< > : " | ? * or a control character).',
      'C:\\a\u0001b':
        'refused: The name "a\\u0001b" holds a character Windows does not allow in names (< > : " | ? * or a control character).',
      'C:\\a\0b': 'refused: The path contains a NUL character.',
      [long]: 'refused: The path is longer than 32767 characters.',
    })
    // Names that only look like the refused ones are names.
    expect(win32.cleanPath('C:\\Media\\console\\com10\\nul2.mov')).toBe('C:\\Media\\console\\com10\\nul2.mov')
  })

  test('names compare without regard to case, by upper case; the path keeps its spelling', () => {
    expect(win32.isInside('C:\\Media\\', 'C:\\MEDIA\\show\\')).toBe(true)
    expect(win32.isInside('C:\\Media\\', 'C:\\Media\\')).toBe(false)
    expect(win32.isInside('C:\\Media\\', 'D:\\Media\\x')).toBe(false)
    expect(win32.below('\\\\nas\\media\\', '\\\\NAS\\Media\\Show\\a.mov')).toBe('Show\\a.mov')
    expect(win32.samePath('\\\\nas\\media\\', '\\\\NAS\\MEDIA\\')).toBe(true)
    // A share is not a folder of another share, nor of its server.
    expect(win32.isInside('\\\\nas\\media\\', '\\\\nas\\mediaold\\x')).toBe(false)
    expect(win32.deviceFor(devices('C:\\', 'C:\\Media\\', '\\\\nas\\media\\'), 'c:\\media\\clip.mov')).toEqual({
      id: 2,
      path: 'C:\\Media\\',
    })
    expect(win32.deviceFor(devices('C:\\', 'C:\\Media\\', '\\\\nas\\media\\'), '\\\\NAS\\MEDIA')).toEqual({
      id: 3,
      path: '\\\\nas\\media\\',
    })
    expect(win32.deviceFor(devices('C:\\Media\\'), 'D:\\Media\\clip.mov')).toBeUndefined()
    expect(win32.workFolder.test('C:\\Media\\.Reelhouse-delete-3\\')).toBe(true)
    // Upper case one for one, as NTFS does: "ß" has no single upper-case letter and stays itself.
    expect(win32.samePath('C:\\Straße\\', 'C:\\STRASSE\\')).toBe(false)
    expect(win32.samePath('C:\\straße\\', 'C:\\STRAßE\\')).toBe(true)
  })
})
